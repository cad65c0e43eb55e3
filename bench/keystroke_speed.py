"""ms from a what-if keystroke to every pane redrawn, per bundled kernel (`tfx open`'s budget:
well under 100 ms a keystroke).

    python3 bench/keystroke_speed.py [--keys 6] [--only gemm,flash_attention] [--size 120x40]
    python3 bench/keystroke_speed.py --against OTHER_CHECKOUT [--keys 6] [--only ...]   # paired

For each kernel of each bundled .tile (sip_* on the sip profile, the others on h200_sxm, as
tests/golden.py) the explorer runs headless (Textual's run_test, jobs inline: ``sync=True``)
with the IR, Traffic, Roofline and Hardware panes mounted. A keystroke is a parameter edit:
STAGES (else the first swept tile parameter, else the first parameter) toggled between its
default and the next value of its sweep, as ``x``/``h`` or a typed value would. Timed, in this
one process:

* analysis: the worker's job (``core.run_job`` of ``app.analysis_job``: the analysis; the
  occupancy-hint rerun the Roofline pane shows runs there only while that pane is shown, else
  when it is drawn, under others), and the pickle round trip that carries its Outcome to the app;
* active: the app applying the outcome (the status line, the diff line and the active pane, IR,
  redrawn) and Textual's paint of the screen (``pilot.pause``); answer = analysis + active, what a
  person waits for;
* others: the Traffic, Roofline and Hardware panes redrawn as each would be when shown, and the
  paint; all = answer + others.

The Timeline and Explore panes show the results of their own worker jobs (a simulation, a
sweep) that start when the pane is shown; they are not a keystroke's answer and are not timed.
Each figure is the median over ``--keys`` keystrokes after one untimed, in CPU ms of this process
(time.process_time, which a shared, loaded machine inflates less than the wall clock), with the
wall-clock time of all beside it. A person's process has the analysis in a worker process, so
there the analysis and the app's side run on two cores.

``--against DIR``: each .tile file's kernels timed by this checkout's bench and by DIR's (its own
bench/keystroke_speed.py, in a process of its own), one after the other, which first alternating
file by file, so that both see the same load; then the analysis and the answer of each side and
their ratio (this / DIR), kernel by kernel and summed over the kernels.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pickle
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")

PANES = ("ir", "traffic", "roofline", "hardware")


def profile_for(path: Path) -> str:
    return "sip" if path.name.startswith("sip_") else "h200_sxm"


def toggled(analysis) -> tuple[str, int, int]:
    """(parameter, default, other value) of the keystroke for the analysis' kernel, under the
    values it was analysed with (its parameters and lets, on its profile's counts)."""
    kernel = analysis.kernel
    env = {**analysis.units, **analysis.params}
    shapes = set(kernel.shape_parameters())
    swept = [p for p in kernel.params if p.sweep_domain is not None and p.name not in shapes]
    pick = next((p for p in swept if p.name == "STAGES"), swept[0] if swept else kernel.params[0])
    default = int(env[pick.name])
    values = [int(v) for v in pick.sweep_domain.enumerate(env)] if pick.sweep_domain is not None else []
    later = [v for v in values if v > default]
    other = later[0] if later else next((v for v in reversed(values) if v != default), default * 2)
    return pick.name, default, other


async def measure(path: Path, kernel_name: str, keys: int, size: tuple[int, int]) -> dict:
    from dataclasses import replace

    from tfx.tui import core
    from tfx.tui.app import TfxApp
    app = TfxApp(str(path), profile_for(path), kernel_name=kernel_name, sync=True, blink=False)
    app.animation_level = "none"
    rows = {k: [] for k in ("analysis", "active", "answer", "others", "cpu", "wall")}
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for key in ("2", "3", "6", "1"):           # mount the panes drawn from the analysis
            await pilot.press(key)
            await pilot.pause()
        name, default, other = toggled(app.analysis)
        for i in range(keys + 1):
            value = other if i % 2 == 0 else default
            c0, w0 = time.process_time(), time.perf_counter()
            # the worker's side, as the analysis process runs it, and the result's trip back
            job = replace(app.analysis_job(app.generation + 1), params=tuple(sorted({**app.params, name: value}.items())))
            out = pickle.loads(pickle.dumps(core.run_job(job)))
            c1 = time.process_time()
            if out.error is not None:
                raise SystemExit(f"{path.name}:{kernel_name} {name}={value}: {out.error}")
            # the app's side: apply (the active pane, IR) and its paint: the keystroke's answer
            app.params[name] = value
            app.jobs.generation["analysis"] = job.generation
            app.apply(out)
            await pilot.pause()
            c2, w2 = time.process_time(), time.perf_counter()
            # ... then every other pane, as each would be drawn when shown
            for pane in PANES:
                if pane != app.active_pane:
                    app.refresh_pane(pane)
            await pilot.pause()
            c3, w3 = time.process_time(), time.perf_counter()
            if i:                                   # the first keystroke warms caches: not counted
                rows["analysis"].append((c1 - c0) * 1e3)
                rows["active"].append((c2 - c1) * 1e3)
                rows["answer"].append((c2 - c0) * 1e3)
                rows["others"].append((c3 - c2) * 1e3)
                rows["cpu"].append((c3 - c0) * 1e3)
                rows["wall"].append((w3 - w0) * 1e3)
    return {k: statistics.median(v) for k, v in rows.items()} | {"param": f"{name} {default}<->{other}"}


def columns(text: str) -> dict[str, tuple[float, float]]:
    """kernel -> (analysis, answer) of a run's printed table (``main``'s rows)."""
    out = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and ":" in parts[0] and not line.startswith("slowest"):
            out[parts[0]] = (float(parts[-6]), float(parts[-4]))
    return out


def paired(args, against: Path) -> int:
    """``--against DIR``: this checkout's bench and DIR's, file by file, alternating which runs first."""
    import subprocess
    stems = [p.stem for p in sorted((ROOT / "kernels").glob("*.tile"))
             if not args.only or p.stem in args.only.split(",")]
    sides = {"this": ROOT, "against": against}
    got: dict[str, dict] = {"this": {}, "against": {}}
    print(f"this = {ROOT}, against = {against}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"CPU ms, median of {args.keys} keystrokes")
    print(f"{'kernel':<56} {'analysis':>17} {'ratio':>6} {'answer':>17} {'ratio':>6}")
    for i, stem in enumerate(stems):
        for side in (("this", "against") if i % 2 == 0 else ("against", "this")):
            run = subprocess.run([sys.executable, str(sides[side] / "bench" / "keystroke_speed.py"), "--only", stem,
                                  "--keys", str(args.keys), "--size", args.size],
                                 cwd=sides[side], capture_output=True, text=True, check=True)
            got[side].update(columns(run.stdout))
        for kernel in [k for k in got["this"] if k.startswith(stem + ":")]:
            (a, w), (a0, w0) = got["this"][kernel], got["against"][kernel]
            print(f"{kernel:<56} {a0:>7.1f} -> {a:>6.1f} {a / a0:>6.2f} {w0:>7.1f} -> {w:>6.1f} {w / w0:>6.2f}",
                  flush=True)
    total = {side: [sum(v[j] for v in got[side].values()) for j in (0, 1)] for side in sides}
    (a, w), (a0, w0) = total["this"], total["against"]
    print(f"{'sum over ' + str(len(got['this'])) + ' kernels':<56} {a0:>7.1f} -> {a:>6.1f} {a / a0:>6.2f} "
          f"{w0:>7.1f} -> {w:>6.1f} {w / w0:>6.2f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=6, help="timed keystrokes per kernel")
    ap.add_argument("--only", default=None, help="comma-separated .tile stems")
    ap.add_argument("--size", default="120x40")
    ap.add_argument("--against", metavar="DIR", default=None,
                    help="another checkout: its bench and this one's, file by file (paired)")
    args = ap.parse_args()
    if args.against:
        return paired(args, Path(args.against).resolve())
    size = tuple(int(x) for x in args.size.split("x"))
    from tfx.lang import parse_file
    only = set(args.only.split(",")) if args.only else None
    print(f"{'kernel':<50} {'keystroke':<17} {'analysis':>8} {'active':>6} {'answer':>6} {'others':>6} "
          f"{'all':>6} {'wall':>6}")
    worst = (0.0, "")
    for path in sorted((ROOT / "kernels").glob("*.tile")):
        if only and path.stem not in only:
            continue
        for k in parse_file(path).kernels:
            r = asyncio.run(measure(path, k.name, args.keys, size))
            label = f"{path.stem}:{k.name}"
            print(f"{label:<50} {r['param']:<17} {r['analysis']:>8.1f} {r['active']:>6.1f} {r['answer']:>6.1f} "
                  f"{r['others']:>6.1f} {r['cpu']:>6.1f} {r['wall']:>6.1f}", flush=True)
            worst = max(worst, (r["answer"], label))
    print(f"slowest answer: {worst[1]} {worst[0]:.1f} ms of CPU (median of {args.keys} keystrokes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
