"""Configurations per second of ``tfx explore`` on gemm.tile's declared space (1,555,200
configurations: M, N, K x 6, BM, BN x 5, BK x 4, WARPS x 3, STAGES x 6, GROUP_M x 4) on h200_sxm,
in-process on one core. Prints configs, seconds and configs/s per run, and the process's CPU
seconds (time.process_time), which a shared, loaded machine disturbs less than the wall clock.

    python bench/explore_speed.py [--runs 3] [--hw h200_sxm]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: numpy's elementwise work is single-threaded

from tfx.explore import explore  # noqa: E402
from tfx.hw import load_profile  # noqa: E402
from tfx.lang import parse_file  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--hw", default="h200_sxm")
    args = ap.parse_args()
    module = parse_file(ROOT / "kernels" / "gemm.tile")
    profile = load_profile(args.hw)
    best = best_cpu = 0.0
    for i in range(args.runs):
        cpu = time.process_time()
        r = explore(module, None, profile, top=10)
        cpu = time.process_time() - cpu
        rate = r.configs / r.seconds
        best, best_cpu = max(best, rate), max(best_cpu, r.configs / cpu)
        print(f"run {i + 1}: configs {r.configs:,}  seconds {r.seconds:.3f}  configs/s {rate:,.0f}  "
              f"cpu seconds {cpu:.3f}  (feasible {r.feasible:,}, pareto {len(r.pareto)}, chunks {r.chunks})")
    print(f"best: {best:,.0f} configs/s, {best_cpu:,.0f} configs per cpu second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
