"""Compare explore's vectorized closed form with the scalar analyze, configuration by
configuration, over a kernel's whole declared domain (or a seeded sample of it).

tests/test_explore.py checks 20 sampled configurations per shipped kernel on every run; this
script checks as many as you ask for, to hunt a mismatch the sample misses.

    python bench/vectorized_vs_scalar.py [KERNEL.tile ...] [--samples 1000] [--seed 0] [--show 5]

With no kernel, every kernels/*.tile. --samples 0 checks every configuration. Prints, per
kernel, the configurations explored, how many were checked and how many differ (first few
with the metric, scalar value, vectorized value). Exit 1 when any differ.
"""

from __future__ import annotations

import argparse
import glob
import math
import sys
import time
from pathlib import Path

import numpy as np

from tfx.analysis.analyze import analyze
from tfx.explore import explore
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent


def _close(a, b) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


def check(path: str, samples: int, seed: int, show: int) -> int:
    module = parse_file(path)
    kernel = module.kernel(None)
    profile = load_profile("sip" if "sip" in Path(path).stem else "h200_sxm")
    sweeps = {p.name: p.sweep_domain.enumerate({}) for p in kernel.params if p.sweep_domain is not None}
    start = time.perf_counter()
    r = explore(module, kernel, profile, sweeps=sweeps, keep_metrics=True, chunk_size=997)
    rng = np.random.default_rng(seed)
    picks = range(r.configs) if samples <= 0 or samples >= r.configs else \
        sorted(rng.choice(r.configs, samples, replace=False).tolist())
    differing = 0
    for i in picks:
        params, _ = r.space.decode(int(i))
        a = analyze(module, kernel, profile, params=params, check=False)
        diffs = [(k, v, r.columns[f"metric:{k}"][i]) for k, v in a.metrics.items()
                 if f"metric:{k}" in r.columns and not _close(v, r.columns[f"metric:{k}"][i])]
        if not _close(a.metrics["performance.predicted_ns"], r.columns["time"][i]):
            diffs.append(("time", a.metrics["performance.predicted_ns"], r.columns["time"][i]))
        if diffs:
            differing += 1
            if differing <= show:
                print(f"  differs at {params}: {diffs[:4]}")
    print(f"{Path(path).stem}: {r.configs} configurations, {len(picks)} checked, "
          f"{differing} differ ({time.perf_counter() - start:.1f} s)", flush=True)
    return differing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args()
    paths = args.kernels or sorted(glob.glob(str(ROOT / "kernels" / "*.tile")))
    bad = sum(check(p, args.samples, args.seed, args.show) for p in paths)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
