"""Issue 18: tfx's multi-GPU pricing against bench/h200/measure_multigpu.py's measurements.

    python bench/model_multigpu.py [DIR]      # DIR defaults to calibration/h200/measured/multigpu

Reads DIR/collectives.csv and DIR/tp_steps.csv (the columns are described in
bench/h200/measure_multigpu.py) and prints, for every measured row, what tfx predicts on
h200_nvl8 and the error (predicted / measured - 1):

* collectives: the model level's own formulas over the node's NVLink link (bandwidth and
  latency from the profile): ring all-reduce 2(n-1)/n x bytes / bw + 2(n-1) x latency;
  all-gather, reduce-scatter and all-to-all (n-1)/n x bytes / bw + (n-1) x latency
  (``tfx.model.latency.allreduce_ns`` / ``gather_ns``). Target: within 15% at every size.
* TP steps: ``tfx.model.latency`` of the same model, mode, batch, context and TP degree under
  the ``pytorch-graph`` runtime (the measured program is plain PyTorch ops replayed as one CUDA
  graph), restricted to the per-layer stages (the measured stack has no embedding or lm head)
  and scaled from the model's depth to the stack's: sum(stage time) x layers / model layers.
  Target: median |error| <= 10%.

A row the script could not measure (status oom or skipped) is listed, not compared. A file
with a missing column or a malformed number is refused with file:line.
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "calibration" / "h200" / "measured" / "multigpu"
HW = "h200_nvl8"
COLLECTIVE_COLS = ("collective", "gpus", "bytes", "median_us")
STEP_COLS = ("model", "gpus", "mode", "batch", "ctx", "layers", "status", "median_us")
#: Stages that are not part of a decoder layer (the measured stack has none of them).
OUTSIDE_LAYERS = ("embedding", "final_norm", "lm_head", "gemm_memset", "logits_gather", "pp_sendrecv")


class BadInput(Exception):
    pass


def _read(path: Path, cols) -> list[dict]:
    try:
        f = open(path, newline="")
    except OSError as exc:
        raise BadInput(f"{path}: cannot read ({exc.strerror})") from None
    with f:
        reader = csv.DictReader(f)
        missing = [c for c in cols if c not in (reader.fieldnames or [])]
        if missing:
            raise BadInput(f"{path}:1: missing column(s) {', '.join(missing)}")
        return [dict(row, _line=i) for i, row in enumerate(reader, start=2)]


def _num(row: dict, key: str, path: Path, kind=float):
    text = row.get(key) or ""
    try:
        value = kind(text)
    except ValueError:
        raise BadInput(f"{path}:{row['_line']}: {key} {text!r} is not a number") from None
    if not value > 0:
        raise BadInput(f"{path}:{row['_line']}: {key} must be > 0, got {text!r}")
    return value


def predict_collective(name: str, gpus: int, nbytes: float, system) -> float:
    """Predicted ns of one collective call over the node's NVLink."""
    from tfx.model.latency import allreduce_ns, gather_ns
    link = system.intra
    f = allreduce_ns if name == "all_reduce" else gather_ns
    if name not in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        raise BadInput(f"unknown collective {name!r}")
    return float(f(nbytes, gpus, link.bandwidth, link.latency_ns))


def predict_stack(model: str, gpus: int, mode: str, batch: int, ctx: int, layers: int, system) -> float:
    """Predicted ns of ``layers`` TP-sharded decoder layers, one step, pytorch-graph runtime."""
    from tfx.model.latency import latency
    from tfx.model.system import Parallelism, Workload
    r = latency(model, system, Workload(mode, ctx, batch, kernels="eager"), Parallelism(tp=gpus))
    from tfx.model.loading import load_model
    depth = load_model(model).num_layers
    per_layer = sum(s.total_ns for s in r.stages if s.name.split("[")[0] not in OUTSIDE_LAYERS)
    return per_layer * layers / depth


def collective_rows(directory: Path, system) -> list[tuple]:
    path = directory / "collectives.csv"
    out = []
    for row in _read(path, COLLECTIVE_COLS):
        gpus, nbytes = _num(row, "gpus", path, int), _num(row, "bytes", path, int)
        measured = _num(row, "median_us", path) * 1e3
        try:
            pred = predict_collective(row["collective"], gpus, nbytes, system)
        except BadInput as exc:
            raise BadInput(f"{path}:{row['_line']}: {exc}") from None
        out.append((row["collective"], gpus, nbytes, measured, pred))
    return out


def step_rows(directory: Path, system) -> list[tuple]:
    path = directory / "tp_steps.csv"
    out = []
    for row in _read(path, STEP_COLS):
        key = (row["model"], _num(row, "gpus", path, int), row["mode"], _num(row, "batch", path, int),
               _num(row, "ctx", path, int), _num(row, "layers", path, int))
        if row["status"] != "ok":
            out.append((*key, row["status"], None, None))
            continue
        out.append((*key, "ok", _num(row, "median_us", path) * 1e3, predict_stack(*key, system)))
    return out


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def report(directory: Path) -> list[str]:
    from tfx.model.system import load_system
    system = load_system(HW)
    lines = [f"measured: {directory}; predicted: {HW} (NVLink {system.intra.bandwidth / 1e9:g} GB/s each way, "
             f"{system.intra.latency_ns:g} ns)", "", "collectives (time per call)",
             f"  {'collective':<15} {'gpus':>4} {'bytes':>9} {'measured':>12} {'tfx':>12} {'error':>8}"]
    worst: dict[str, float] = {}
    for name, gpus, nbytes, meas, pred in collective_rows(directory, system):
        e = pred / meas - 1
        worst[name] = max(worst.get(name, 0.0), abs(e))
        lines.append(f"  {name:<15} {gpus:>4} {_bytes(nbytes):>9} {meas / 1e3:>9.2f} us {pred / 1e3:>9.2f} us "
                     f"{e * 100:>+7.1f}%")
    for name, w in worst.items():
        lines.append(f"  {name}: worst |error| {w * 100:.1f}% ({'within' if w <= 0.15 else 'outside'} the 15% target)")
    lines += ["", "TP decoder-layer stacks (one step, CUDA-graph replay; runtime pytorch-graph)",
              f"  {'model':<13} {'gpus':>4} {'mode':<7} {'batch':>5} {'ctx':>6} {'layers':>6} {'measured':>12} "
              f"{'tfx':>12} {'error':>8}"]
    errs = []
    for model, gpus, mode, batch, ctx, layers, status, meas, pred in step_rows(directory, system):
        head = f"  {model:<13} {gpus:>4} {mode:<7} {batch:>5} {ctx:>6} {layers:>6}"
        if status != "ok":
            lines.append(f"{head} {status:>12}")
            continue
        e = pred / meas - 1
        errs.append(e)
        lines.append(f"{head} {meas / 1e3:>9.1f} us {pred / 1e3:>9.1f} us {e * 100:>+7.1f}%")
    if errs:
        med = statistics.median(abs(e) for e in errs)
        lines.append(f"  {len(errs)} steps: median |error| {med * 100:.1f}%, worst {max(abs(e) for e in errs) * 100:.1f}% "
                     f"({'within' if med <= 0.10 else 'outside'} the 10% target)")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    directory = Path(argv[0]) if argv else DEFAULT_DIR
    try:
        print("\n".join(report(directory)))
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
