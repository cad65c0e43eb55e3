"""Simulator speed: events per second and wall time of ``simulate`` (analysis excluded).

    python bench/sim_speed.py            # gemm.tile 8192^3 on h200_sxm, representative SM
    python bench/sim_speed.py --full     # every SM (slower; for scale)

Targets: >= 500k events/s and < 0.5 s for the representative case.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tfx.analysis.analyze import analyze  # noqa: E402
from tfx.hw import load_profile  # noqa: E402
from tfx.lang import parse_file  # noqa: E402
from tfx.sim import simulate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CASES = [
    ("gemm.tile 8192^3 h200_sxm", "gemm.tile", "h200_sxm", None, {"M": 8192, "N": 8192, "K": 8192}, {}),
    ("sip_gemm 32x3072x32 sip", "sip_gemm.tile", "sip", None, {"TM": 32, "TN": 3072, "TK": 32}, {}),
    ("decode single-op 128K sip", "sip_decode_attention.tile", "sip", "decode_attention_single_op", {}, {}),
    ("decode composite 128K sip", "sip_decode_attention.tile", "sip", "decode_attention_composite", {}, {}),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    first = True
    for name, path, hw, kernel, params, knobs in CASES:
        a = analyze(parse_file(str(ROOT / "kernels" / path)), kernel, load_profile(hw), params=params,
                    knobs=knobs)
        walls, r = [], None
        for _ in range(args.repeat if not args.full else 1):
            t = time.perf_counter()
            r = simulate(a, full=args.full)
            walls.append(time.perf_counter() - t)
        wall = statistics.median(walls)
        rate = r.n_events / wall
        flag = ""
        if first:
            ok = rate >= 500e3 and wall < 0.5
            flag = "  (targets >= 500k events/s, < 0.5 s: " + ("met" if ok else "NOT met") + ")"
        print(f"{name:28s} {r.mode:15s} events {r.n_events:>9,}  wall {wall * 1e3:8.1f} ms  "
              f"{rate / 1e3:8.0f}k events/s  makespan {r.makespan_ns / 1e3:10.1f} us{flag}")
        first = False
        if args.full:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
