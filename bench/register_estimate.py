"""The register estimate against the compiled counts of the issue 15 campaigns (docs/analysis.md
section 6, "The register estimate").

For every campaign row with a compiled ``regs``: the registers a thread gets from the model's
estimate (tfx.analysis.register_estimate: what `tfx analyze`, `tfx explore` and the TUI use
without a compile) and from the estimate before session 15 (the IR's live register tiles + 32,
``ceil(rmem peak / 4) + 32``, kept here for the comparison). It prints, per family, the median
and 90th percentile of |estimate - compiled|, the signed median, and how often the CTAs an SM
from the estimate differ from those the compiled registers give (the occupancy calculator,
tfx.analysis.occupancy, equals the campaigns' measured blocks_per_sm in every row); with
``--price`` also each family's accuracy priced at the compiled registers and spills and at the
model's estimate of both (the compiled shared memory kept).

    python3 bench/register_estimate.py [--runs run1,run21] [--price]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.analyze import BASE_REGISTERS, analyze  # noqa: E402
from tfx.analysis.measured import Predictor, overall, read_measurements, summarize  # noqa: E402
from tfx.analysis.occupancy import OccupancyLimits, Resources, compute_occupancy  # noqa: E402

ISSUE15 = ROOT / "calibration" / "h200" / "measured" / "issue15"


def old_estimate(a) -> int:
    """The estimate before session 15: the IR's live register tiles a thread + 32."""
    rmem = a.peaks["rmem"].bytes if "rmem" in a.peaks else 0
    return math.ceil(rmem / 4) + BASE_REGISTERS


def _blocks(limits, threads, regs, smem) -> int:
    occ = compute_occupancy(limits, Resources(threads=threads, regs_per_thread=min(regs, 255), smem_dynamic=smem))
    return occ.blocks_per_sm if occ.feasible else 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default=None, help="comma-separated campaigns (default: all in the repo)")
    ap.add_argument("--price", action="store_true", help="also each family's accuracy at the compiled and at "
                    "the estimated registers and spills (bench/accuracy.py --estimated-regs prints it per shape)")
    args = ap.parse_args()
    runs = args.runs.split(",") if args.runs else None
    predictor = Predictor("h200_sxm")
    profile = predictor.profile("h200_sxm")
    limits = OccupancyLimits.from_profile(profile)
    rows = []
    for path in sorted(ISSUE15.glob("run*/*.csv")):
        if "retime" in path.name or (runs and path.parent.name not in runs):
            continue
        rows += [r for r in read_measurements(path) if r.regs is not None]
    stats: dict = {}
    new_rows = []
    for r in rows:
        module = predictor.module(r.kernel_path)
        a = analyze(module, None, profile, r.params, resources={"smem": r.smem_bytes}, check=False)
        threads = a.resources.threads
        blocks = _blocks(limits, threads, r.regs, r.smem_bytes or 0)
        s = stats.setdefault(r.family, {"old": [], "new": [], "old_b": 0, "new_b": 0, "n": 0})
        s["n"] += 1
        for name, regs in (("old", min(old_estimate(a), 255)), ("new", a.resources.regs_per_thread)):
            s[name].append(regs - r.regs)
            s[name + "_b"] += _blocks(limits, threads, regs, r.smem_bytes or 0) != blocks
        new_rows.append(replace(r, regs=None, spills=None))

    def q90(xs):
        xs = sorted(abs(x) for x in xs)
        return xs[int(0.9 * len(xs))]

    print(f"registers a thread, estimate - compiled, over the rows of {', '.join(runs) if runs else 'all runs'}: "
          "old (live tiles + 32) -> the model's estimate")
    for fam, s in stats.items():
        def fig(name):
            d = s[name]
            return (f"median |d| {statistics.median(abs(x) for x in d):.1f}, p90 {q90(d)}, signed "
                    f"{statistics.median(d):+.1f}, CTAs/SM differ in {s[name + '_b']} ({100 * s[name + '_b'] / s['n']:.0f}%)")
        print(f"  {fam:17s} {s['n']:5d} rows: {fig('old')}\n  {'':17s} {'':10s} -> {fig('new')}")
    if not args.price:
        return
    for name, priced in (("compiled", predictor.compare(rows)), ("model's estimate", predictor.compare(new_rows))):
        figs: dict = {}
        for g in summarize(priced, predictor):
            figs.setdefault(g.family, []).append(g)
        print(f"priced at the {name} registers:")
        for fam, f in figs.items():
            o = overall(f)
            print(f"  {fam:17s} median over shapes of median |error| {o['median_abs_error'] * 100:.1f}%, signed "
                  f"{o['median_error'] * 100:+.1f}%; min Spearman {o['min_spearman']:+.2f}; max regret "
                  f"{o['max_regret'] * 100:.1f}%")


if __name__ == "__main__":
    main()
