"""Where tfx's first pick spills registers, is the fastest pick that does not spill the better one? (session 61)

`tfx explore` marks the rows that spill (``†``) and names the fastest listed row that does not where its top pick
spills (docs/explore.md, "A top pick that spills"). Spilling rows are priced less surely (their median |error| is
1.4-2.7x the rest's in bench/accuracy.py), so a user may be tempted to skip a spilling first pick. This prices
every campaign shape (each campaign's shape apart, its held-out rows, every row at its compiled resources or, with
``--estimated``, at the model's estimate as tfx explore prices a configuration nobody compiled) and, per family,
over the shapes whose first pick spills and that have a row that does not, counts how often the fastest
non-spilling row ran faster than the first pick, and the mean regret (measured over the shape's best - 1) of
taking either.

    python3 bench/spill_first_policy.py                   # the H200 campaigns, compiled resources
    python3 bench/spill_first_policy.py --estimated       # the model's registers and spills, as tfx explore has them
    python3 bench/spill_first_policy.py --hw h100_sxm
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
    ap.add_argument("--estimated", action="store_true",
                    help="price and judge spilling by the model's register estimate, not the compiled counts")
    ap.add_argument("--show", type=float, default=0.05, help="list the shapes where the two regrets differ by more")
    args = ap.parse_args(argv)
    rows = campaign_rows(args.hw, "heldout")
    predictor = Predictor(args.hw)
    if args.estimated:
        compared = predictor.compare([replace(r, regs=None, spills=None) for _, r in rows])
    else:
        compared = predictor.compare([r for _, r in rows])
    from tfx.analysis.measured import figures
    from tfx.analysis.verdict import spill_first
    shapes = defaultdict(list)
    for (run, r), c in zip(rows, compared):
        shapes[(r.family, run, r.shape)].append(c)
    # each campaign's shape apart (the verdict's pooled shapes mix campaigns timed on different days)
    by_family = defaultdict(list)
    for (family, run, shape), group in sorted(shapes.items()):
        if len(group) < 3:
            continue
        g = figures(family, f"{run} {shape}", group)
        by_family[family].append(g)
        if g.unspilled_pick is not None and abs(g.unspilled_regret - g.regret) > args.show:
            print(f"  {family} {run} {shape}: the spilling first pick {g.regret:.1%} behind the best, the first "
                  f"non-spilling {g.unspilled_regret:.1%} (predicted "
                  f"{g.unspilled_pick.predicted_ms / g.top.predicted_ms - 1:.1%} slower)")
    how = "the model's estimated registers and spills" if args.estimated else "compiled registers and spills"
    print(f"\n{args.hw} campaigns, held-out rows, {how}: where the first pick spills")
    for family, figs in sorted(by_family.items()):
        f = spill_first(figs)
        if f is None:
            continue
        print(f"  {family}: {f.shapes} shapes; the fastest non-spilling pick ran faster in {f.unspilled_faster}, "
              f"slower in {f.unspilled_slower}; mean regret {f.mean_regret:.1%} (the first pick) -> "
              f"{f.mean_unspilled_regret:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
