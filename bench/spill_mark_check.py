"""How often tfx's spill mark (the estimate's spilled registers, `tfx explore`'s ``†``) agrees with the compiler
(session 61).

`tfx explore` prices configurations nobody compiled: it marks a row that spills by the model's register estimate
(tfx.analysis.register_estimate: ``occupancy.spilled_registers``). This prices every campaign row (held-out and tune)
with its compiled registers and spills dropped, as tfx explore would, and counts per family the rows the estimate
says spill against those ptxas compiled with spills: both, the estimate alone (a false mark), the compiler alone (a
missed mark), neither.

    python3 bench/spill_mark_check.py                 # the H200 campaigns
    python3 bench/spill_mark_check.py --hw h100_sxm
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from accuracy import DEVICE_CALIBRATION, campaign_rows  # noqa: E402
from tfx.analysis.measured import Predictor  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hw", choices=sorted(DEVICE_CALIBRATION), default="h200_sxm")
    args = ap.parse_args(argv)
    rows = [r for _, r in campaign_rows(args.hw, "all") if r.spills is not None]
    predictor = Predictor(args.hw)
    counts = defaultdict(lambda: [0, 0, 0, 0])     # both, estimate only, compiler only, neither
    for r in rows:
        a = predictor.analysis(replace(r, regs=None, spills=None))
        estimated = float(a.metrics.get("occupancy.spilled_registers", 0)) > 0
        compiled = r.spills > 0
        counts[r.family][(not estimated) * 2 + (not compiled) if estimated or compiled else 3] += 1
    print(f"{args.hw} campaigns: rows the estimate marks spilling (tfx explore's †) against the compiled spills")
    print(f"  {'family':<18} {'rows':>6} {'both':>6} {'estimate only':>14} {'compiler only':>14} {'neither':>8} "
          f"{'agree':>6}")
    for family, (both, est, comp, neither) in sorted(counts.items()):
        n = both + est + comp + neither
        print(f"  {family:<18} {n:>6} {both:>6} {est:>14} {comp:>14} {neither:>8} {(both + neither) / n:>6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
