"""Simulator speed: events per second and wall time of ``simulate`` (analysis excluded).

    python bench/sim_speed.py            # the targets, then the sip cases
    python bench/sim_speed.py --quick    # the targets only
    python bench/sim_speed.py --check    # also: the exact shortcuts change no result
    python bench/sim_speed.py --reference save /tmp/simref    # every bundled case's JSON, hashed
    python bench/sim_speed.py --reference check /tmp/simref   # ... and compared after a change

Targets (docs/simulator.md, "Speed"):

* event rate >= 500k events/s, measured where the event loop dominates: gemm.tile
  4096^3 on h200_sxm with ``--full`` (every SM, 199,680 events), and the sip
  decode-attention composite kernel with ``--full`` (every PE);
* wall time < 0.5 s for gemm.tile 8192^3 on h200_sxm, representative SM (1,548
  events: start-up, not the event loop, dominates its rate).

Events are tasks run on an engine plus dispatch intervals (``SimResult.n_events``).
Each case reports the median of ``--repeat`` runs of ``simulate`` as shipped (wall time,
and CPU time, which a loaded machine inflates less), with the cyclic garbage collector
paused as ``tfx simulate`` pauses it (``tfx.cli.cmd_simulate.run``: a simulation's
hundreds of thousands of acyclic event tuples would otherwise be scanned once more when
it returns, about 35 ms on gemm 4096^3; ``--collector`` keeps it running), and the
same with the exact shortcuts off (``tfx.sim.event_loop.SHORTCUTS``: identical independent
units simulated once, periodic steady states jumped over), i.e. the event loop alone.
``--check`` compares the two results event for event (timeline, totals, JSON).

``--reference save|check DIR``: ``tfx simulate --json`` (the CLI, in this process) for
every kernel of every bundled .tile file on every bundled profile, with ``--full`` and
without, plus a few parameter and knob variants (partial waves, ``--tiles``, sip's
channel hold): the SHA-256 of each output (or of the error line and exit status) is
written to DIR/reference.json (save) or compared with it (check; exit 1 on any
difference). A change to the simulator's speed must leave every digest as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tfx.analysis.analyze import analyze  # noqa: E402
from tfx.hw import load_profile  # noqa: E402
from tfx.lang import parse_file  # noqa: E402
from tfx.sim import event_loop, simulate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
G4096 = {"M": 4096, "N": 4096, "K": 4096}
G8192 = {"M": 8192, "N": 8192, "K": 8192}
# (name, file, profile, kernel, params, full, target)
TARGETS = [
    ("gemm.tile 4096^3 h200_sxm --full", "gemm.tile", "h200_sxm", None, G4096, True, "rate"),
    ("decode composite 128K sip --full", "sip_decode_attention.tile", "sip", "decode_attention_composite",
     {}, True, "rate"),
    ("gemm.tile 8192^3 h200_sxm", "gemm.tile", "h200_sxm", None, G8192, False, "wall"),
]
OTHERS = [
    ("sip_gemm 32x3072x32 sip", "sip_gemm.tile", "sip", None, {"TM": 32, "TN": 3072, "TK": 32}, False, None),
    ("sip_gemm 128^3 tiles sip", "sip_gemm.tile", "sip", None, {}, False, None),
    ("decode single-op 128K sip", "sip_decode_attention.tile", "sip", "decode_attention_single_op", {}, False, None),
    ("decode composite 128K sip", "sip_decode_attention.tile", "sip", "decode_attention_composite", {}, False, None),
    ("decode single-op 128K sip --full", "sip_decode_attention.tile", "sip", "decode_attention_single_op",
     {}, True, None),
]


def measure(a, full, repeat, shortcuts, collector=False):
    event_loop.SHORTCUTS = shortcuts
    paused = not collector and gc.isenabled()
    if paused:
        gc.disable()              # as tfx simulate runs (see the module doc)
    try:
        walls, cpus, r = [], [], None
        for _ in range(repeat):
            r = None                      # (freeing the previous result is not simulate's time)
            t, c = time.perf_counter(), time.process_time()
            r = simulate(a, full=full)
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        return r, statistics.median(walls), statistics.median(cpus)
    finally:
        event_loop.SHORTCUTS = True
        if paused:
            gc.enable()


def digest(r) -> str:
    """Every event, the event count and the whole JSON summary, hashed."""
    h = hashlib.sha256(repr(r.timeline.events).encode())
    h.update(repr((r.n_events, r.to_json(events=False))).encode())
    return h.hexdigest()


def reference_cases():
    """(name, argv of ``tfx simulate``) for every bundled kernel x profile, full and
    representative, and the variants that reach other paths of the simulator."""
    from tfx.hw.profile import list_profiles
    cases = []
    for tile in sorted((ROOT / "kernels").glob("*.tile")):
        names = [k.name for k in parse_file(str(tile)).kernels]
        for kernel in names:
            for hw in list_profiles():
                for full in (True, False):
                    argv = [f"kernels/{tile.name}", "--hw", hw, "--json"]
                    if len(names) > 1:
                        argv += ["--kernel", kernel]
                    if full:
                        argv.append("--full")
                    cases.append((f"{tile.name}:{kernel}@{hw}{' --full' if full else ''}", argv))
    gemm = "kernels/gemm.tile"
    for sets in (["M=1000", "N=3000", "K=512"], ["M=2048", "N=2048", "K=1024", "STAGES=1"],
                 ["M=4096", "N=4096", "K=4096", "BM=64", "WARPS=8", "STAGES=4"]):
        for full in (True, False):
            argv = [gemm, "--hw", "h200_sxm", "--json"] + [x for v in sets for x in ("--set", v)]
            cases.append(("gemm.tile " + " ".join(sets) + (" --full" if full else ""),
                          argv + (["--full"] if full else [])))
    cases.append(("gemm.tile --tiles 8 --full", [gemm, "--hw", "h200_sxm", "--json", "--full", "--tiles", "8"]))
    for tile in ("sip_gemm.tile", "sip_decode_attention.tile", "sip_splitk_gemm.tile"):
        cases.append((f"{tile} hold 0 --full", [f"kernels/{tile}", "--hw", "sip", "--json", "--full",
                                                "--knob", "dma.hold_channel_for_round_trip=0"]))
    return cases


def run_cli(argv) -> tuple[int, bytes]:
    """(exit status, stdout + stderr bytes) of ``tfx simulate ARGV`` run in this process."""
    from tfx.cli.main import main as cli_main
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli_main(["simulate"] + argv)
        except SystemExit as e:
            rc = e.code
    out.flush()
    return rc, out.buffer.getvalue() + err.getvalue().encode()


def reference(action: str, where: str) -> int:
    path = Path(where).resolve() / "reference.json"
    # the cases name their files relative to the repository, as the JSON prints them, so
    # two checkouts (before and after a change) compare alike
    os.chdir(ROOT)
    old = json.loads(path.read_text()) if action == "check" else None
    got, bad = {}, 0
    t = time.process_time()
    for name, argv in reference_cases():
        rc, out = run_cli(argv)
        got[name] = [rc, hashlib.sha256(out).hexdigest(), len(out)]
        if old is not None and old.get(name) != got[name]:
            bad += 1
            print(f"DIFFERS: {name}: {old.get(name)} -> {got[name]}", flush=True)
    if old is not None:
        missing = sorted(set(old) - set(got))
        bad += len(missing)
        for name in missing:
            print(f"MISSING: {name}")
        print(f"{len(got)} cases, {bad} differ ({time.process_time() - t:.0f} s CPU)")
        return 1 if bad else 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(got, indent=1, sort_keys=True))
    ok = sum(1 for v in got.values() if v[0] == 0)
    print(f"{len(got)} cases ({ok} simulated, {len(got) - ok} refused) written to {path} "
          f"({time.process_time() - t:.0f} s CPU)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the target cases only")
    ap.add_argument("--repeat", type=int, default=5, help="runs per case (the median is reported)")
    ap.add_argument("--check", action="store_true", help="compare with the shortcuts off, event for event")
    ap.add_argument("--collector", action="store_true",
                    help="keep the garbage collector running (tfx simulate pauses it)")
    ap.add_argument("--reference", nargs=2, metavar=("save|check", "DIR"),
                    help="hash every bundled case's simulate --json into DIR, or compare with it")
    args = ap.parse_args()
    if args.reference:
        if args.reference[0] not in ("save", "check"):
            ap.error("--reference: save or check")
        return reference(*args.reference)
    bad = 0
    for name, path, hw, kernel, params, full, target in TARGETS + ([] if args.quick else OTHERS):
        a = analyze(parse_file(str(ROOT / "kernels" / path)), kernel, load_profile(hw), params=params)
        simulate(a, full=full, events=False)          # warm-up (first-call costs)
        r0, wall0, _ = measure(a, full, max(1, args.repeat // 2), False, args.collector)
        n0 = r0.n_events
        d0 = digest(r0) if args.check else None
        r0 = None                         # (a large live result slows the next runs down)
        r, wall, cpu = measure(a, full, args.repeat, True, args.collector)
        rate = r.n_events / wall
        flag = ""
        if target == "rate":
            flag = "  target >= 500k events/s: " + ("met" if rate >= 500e3 else "NOT met")
        elif target == "wall":
            flag = "  target < 0.5 s: " + ("met" if wall < 0.5 else "NOT met")
        if args.check:
            ok = digest(r) == d0
            bad += not ok
            flag += "  same events: " + ("yes" if ok else "NO")
        print(f"{name:34s} events {r.n_events:>9,}  wall {wall * 1e3:8.1f} ms  {rate / 1e3:6.0f}k events/s  "
              f"(CPU {cpu * 1e3:7.1f} ms, {r.n_events / max(cpu, 1e-9) / 1e3:5.0f}k/s)  "
              f"(event loop alone {wall0 * 1e3:8.1f} ms, {n0 / wall0 / 1e3:4.0f}k/s)  "
              f"makespan {r.makespan_ns / 1e3:9.1f} us{flag}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
