#!/usr/bin/env python3
"""Is the roofline a bound? Every issue 15 campaign row priced by its own compiled resources:
how many ran faster than the roofline tfx prints for them (`roofline.ideal_ns`), per family, and
the worst (roofline / measured). A roofline is the least time any schedule needs at the device's
peak rates, so the count should be 0; session 60 found 159 H200 rows (gemm_bf16 82, gemm_fp8 71,
persistent 6, up to 1.26x) under an L2 roof at the L2's sustained 11 TB/s (the H100's: 47 of
4,604 under its 9.17 TB/s, up to 1.39x), and none under the SMs' L2 read ports (docs/analysis.md section 7, tfx.analysis.roofline.l2_request_peak).

    python3 bench/roofline_bound_check.py [--hw h200_sxm|h100_sxm]

About 3 minutes on one core for the H200's ~30,000 rows."""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import Predictor, read_measurements   # noqa: E402

WHERE = {"h200_sxm": ROOT / "calibration/h200/measured/issue15", "h100_sxm": ROOT / "calibration/h100/measured/issue15"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hw", default="h200_sxm", choices=sorted(WHERE))
    args = ap.parse_args()
    predictor = Predictor(args.hw)
    rows, beat, worst = collections.Counter(), collections.Counter(), {}
    for path in sorted(WHERE[args.hw].glob("run*/*.csv")):
        if "retime" in path.name:
            continue
        # Compared.faster_than_roofline: the rule tfx validate warns by
        for c in predictor.compare(read_measurements(path)):
            rows[c.row.family] += 1
            if c.faster_than_roofline:
                beat[c.row.family] += 1
                over = c.roofline_ms / c.row.measured_ms
                if over > worst.get(c.row.family, (0,))[0]:
                    worst[c.row.family] = (over, path.parent.name, c.row)
    for family, (over, run, r) in worst.items():
        # the worst row's bound, priced once more (one a family)
        bound = predictor.analysis(r).metrics["roofline.bound_by"]
        worst[family] = (over, f"{run} {r.notes.get('shape')} {' '.join(f'{k}={v}' for k, v in r.params.items())} "
                               f"(roofline bound by {bound})")
    print(f"rows measured faster than their roofline ({args.hw}, {WHERE[args.hw].relative_to(ROOT)})")
    print(f"  {'family':18s} {'rows':>6s} {'faster':>7s}  worst roofline / measured")
    for family in sorted(rows):
        w = worst.get(family)
        print(f"  {family:18s} {rows[family]:6d} {beat[family]:7d}  " + (f"{w[0]:.3f} {w[1]}" if w else "-"))
    print(f"  => {sum(beat.values())} of {sum(rows.values())} rows faster than the roofline")


if __name__ == "__main__":
    main()
