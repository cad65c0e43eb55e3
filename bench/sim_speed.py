"""Simulator speed: events per second and wall time of ``simulate`` (analysis excluded).

    python bench/sim_speed.py            # the targets, then the sip cases
    python bench/sim_speed.py --quick    # the targets only
    python bench/sim_speed.py --check    # also: the exact shortcuts change no result

Targets (docs/simulator.md, "Speed"):

* event rate >= 500k events/s, measured where the event loop dominates: gemm.tile
  4096^3 on h200_sxm with ``--full`` (every SM, 199,680 events), and the sip
  decode-attention composite kernel with ``--full`` (every PE);
* wall time < 0.5 s for gemm.tile 8192^3 on h200_sxm, representative SM (1,548
  events: start-up, not the event loop, dominates its rate).

Events are tasks run on an engine plus dispatch intervals (``SimResult.n_events``).
Each case reports the median of ``--repeat`` runs of ``simulate`` as shipped (wall time,
and CPU time, which a loaded machine inflates less), and the
same with the exact shortcuts off (``tfx.sim.event_loop.SHORTCUTS``: identical independent
units simulated once, periodic steady states jumped over), i.e. the event loop alone.
``--check`` compares the two results event for event (timeline, totals, JSON).
"""

from __future__ import annotations

import argparse
import hashlib
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


def measure(a, full, repeat, shortcuts):
    event_loop.SHORTCUTS = shortcuts
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


def digest(r) -> str:
    """Every event, the event count and the whole JSON summary, hashed."""
    h = hashlib.sha256(repr(r.timeline.events).encode())
    h.update(repr((r.n_events, r.to_json(events=False))).encode())
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the target cases only")
    ap.add_argument("--repeat", type=int, default=5, help="runs per case (the median is reported)")
    ap.add_argument("--check", action="store_true", help="compare with the shortcuts off, event for event")
    args = ap.parse_args()
    bad = 0
    for name, path, hw, kernel, params, full, target in TARGETS + ([] if args.quick else OTHERS):
        a = analyze(parse_file(str(ROOT / "kernels" / path)), kernel, load_profile(hw), params=params)
        simulate(a, full=full, events=False)          # warm-up (first-call costs)
        r0, wall0, _ = measure(a, full, max(1, args.repeat // 2), False)
        n0 = r0.n_events
        d0 = digest(r0) if args.check else None
        r0 = None                         # (a large live result slows the next runs down)
        r, wall, cpu = measure(a, full, args.repeat, True)
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
