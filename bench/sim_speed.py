"""Simulator speed: events per second and wall time of ``simulate`` (analysis excluded).

    python bench/sim_speed.py            # the two targets, then the sip cases
    python bench/sim_speed.py --quick    # the two targets only

Targets (docs/simulator.md, "Speed"):

* event rate >= 500k events/s, measured where the event loop dominates: gemm.tile
  4096^3 on h200_sxm with ``--full`` (every SM, 199,680 events), and the sip
  decode-attention composite kernel with ``--full`` (every PE);
* wall time < 0.5 s for gemm.tile 8192^3 on h200_sxm, representative SM (1,548
  events: start-up, not the event loop, dominates its rate).

Events are tasks run on an engine plus dispatch intervals (``SimResult.n_events``).
Each case reports the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tfx.analysis.analyze import analyze  # noqa: E402
from tfx.hw import load_profile  # noqa: E402
from tfx.lang import parse_file  # noqa: E402
from tfx.sim import simulate  # noqa: E402

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


def measure(path, hw, kernel, params, full, repeat):
    a = analyze(parse_file(str(ROOT / "kernels" / path)), kernel, load_profile(hw), params=params)
    best, r = None, None
    for _ in range(repeat):
        t = time.perf_counter()
        r = simulate(a, full=full)
        w = time.perf_counter() - t
        best = w if best is None else min(best, w)
    return r, best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the target cases only")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ok_all = True
    for name, path, hw, kernel, params, full, target in TARGETS + ([] if args.quick else OTHERS):
        r, wall = measure(path, hw, kernel, params, full, args.repeat)
        rate = r.n_events / wall
        flag = ""
        if target == "rate":
            ok = rate >= 500e3
            flag = "  target >= 500k events/s: " + ("met" if ok else "NOT met")
            ok_all &= ok
        elif target == "wall":
            ok = wall < 0.5
            flag = "  target < 0.5 s: " + ("met" if ok else "NOT met")
            ok_all &= ok
        print(f"{name:34s} events {r.n_events:>9,}  wall {wall * 1e3:8.1f} ms  "
              f"{rate / 1e3:6.0f}k events/s  makespan {r.makespan_ns / 1e3:9.1f} us{flag}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
