#!/usr/bin/env python3
"""The model against every launch-free k-loop set of session 25 in one table (CPU only, ~10 s).

Each set is a calibration/h200/measured/<set>/copy_issue.csv of the campaigns' own GEMM (matmul_kernel) timed
as ns a trip, (t(256 trips) - t(64 trips)) / 192; bench/few_sm_trips.py prices every row the same way from two
predictions of kernels/gemm.tile or gemm_fp8.tile. This prints, per set, the rows and the median signed and
|error|, then the same split by the set's axis (stages, CTAs or readers), so that a change to the small-M
model can be read against all of them at once, beside bench/accuracy.py's campaigns:

    python3 bench/trip_sets.py            # every set
    python3 bench/trip_sets.py deep8_s25  # one or more by name
"""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from few_sm_trips import priced_rows  # noqa: E402

MEASURED = ROOT / "calibration" / "h200" / "measured"
# (set, the axis its rows are split by): the column the set varies on purpose
SETS = [("shallow_s25", "STAGES"), ("shallow8_s25", "STAGES"), ("deep_s25", "ctas"), ("deep8_s25", "ctas"),
        ("coread_s25", "readers"), ("coread8_s25", "readers"), ("warp8_s25", "WARPS")]


def median_pct(values) -> str:
    return f"{statistics.median(values) * 100:+6.1f}% / {statistics.median(abs(v) for v in values) * 100:5.1f}%"


def main(argv):
    names = [a for a in argv if not a.startswith("-")]
    unknown = [n for n in names if n not in dict(SETS)]
    if unknown:
        print(f"unknown set {unknown[0]!r}: expected one of {', '.join(n for n, _ in SETS)}", file=sys.stderr)
        sys.exit(2)
    print(f"{'set':14s} {'rows':>5s}  median signed / |error|   by axis")
    for name, axis in SETS:
        if names and name not in names:
            continue
        path = MEASURED / name / "copy_issue.csv"
        if not path.exists():
            print(f"{name:14s} (missing: {path.relative_to(ROOT)})")
            continue
        errors, by_axis = [], defaultdict(list)
        for r, measured, model in priced_rows(list(csv.DictReader(open(path))), "matmul"):
            err = model / measured - 1
            errors.append(err)
            by_axis[int(r[axis])].append(err)
        if not errors:
            print(f"{name:14s} (no rows)")
            continue
        split = "; ".join(f"{axis} {k}: {statistics.median(v) * 100:+.1f}%" for k, v in sorted(by_axis.items()))
        print(f"{name:14s} {len(errors):5d}  {median_pct(errors)}   {split}")


if __name__ == "__main__":
    main(sys.argv[1:])
