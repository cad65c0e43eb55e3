"""The device-wide L2 rate each measured gemm_bf16 configuration reached (issue 15 truth):
the bytes of tile requests the model puts through L2 (its roofline's L2 time x
``memory.l2.bandwidth``) over the measured time. Rows above the profile's 11 TB/s are rows the
model's L2 limit prices too slow; the per-warps summary shows which CTAs reach past it.

Non-spilling rows of all four runs only (spilling rows move local traffic the count leaves out).

    python3 bench/gemm_l2_rates.py [--top 20] [--family gemm_bf16]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

TRUTH = ROOT / "calibration" / "h200" / "measured" / "issue15"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=20, help="how many of the fastest-drawing rows to list")
    ap.add_argument("--family", default="gemm_bf16")
    args = ap.parse_args()
    predictor = Predictor("h200_sxm")
    l2_gbps = predictor.profile("h200_sxm").memory_levels()["l2"].bandwidth / 1e9   # B/ns
    rows = []
    for path in sorted(TRUTH.glob("run*/gemm*.csv")):
        if "retime" in path.name:
            continue
        for r in read_measurements(path):
            if r.family != args.family or (r.spills or 0) > 0:
                continue
            a = predictor.analysis(r)
            l2_bytes = a.metrics["roofline.memory_ns.l2"] * l2_gbps
            rate_tbs = l2_bytes / (r.measured_ms * 1e6) / 1000
            p = r.params
            error = a.metrics["performance.predicted_ns"] / 1e6 / r.measured_ms - 1
            rows.append((rate_tbs, path.parent.name, r.shape,
                         f"{p['BM']}x{p['BN']}x{p['BK']} w{p['WARPS']} s{p['STAGES']}",
                         r.notes.get("blocks_per_sm"), error, a.metrics["roofline.bound_by"], p["WARPS"]))
    rows.sort(reverse=True)
    print(f"{args.family}: non-spilling rows by the L2 rate their tile requests reached "
          f"(profile {l2_gbps / 1000:.1f} TB/s)")
    for rate, run, shape, cfg, r, err, bound, _ in rows[:args.top]:
        print(f"  {rate:6.2f} TB/s  {run}  {shape:<17} {cfg:<19} {r} CTAs/SM  error {err * 100:+6.1f}%  "
              f"roofline bound by {bound}")
    by_warps = defaultdict(list)
    for rate, *_, bound, warps in rows:
        if bound == "l2":
            by_warps[warps].append(rate)
    print("  rows whose roofline is bound by L2, per warps a CTA:")
    for warps, rates in sorted(by_warps.items()):
        over = sum(x > l2_gbps / 1000 for x in rates)
        print(f"    {warps} warps: {len(rates)} rows, median {statistics.median(rates):.2f} TB/s, "
              f"max {max(rates):.2f}, {over} above the profile")


if __name__ == "__main__":
    main()
