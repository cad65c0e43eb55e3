#!/usr/bin/env python3
"""How well a perfect model could rank each campaign shape: the Spearman of the measured times against a re-timing.

Usage: python3 bench/spearman_ceiling.py [--hw h200_sxm|h100_sxm] [--draws N] [--only FAMILIES] [--runs RUNS] [--model]

Issue 15 asks for a Spearman of at least 0.85 in every shape. A shape whose configurations lie within a few percent of
each other (a near tie) may be out of any model's reach, since the campaign's times carry their own noise. This script
asks how far: it takes each shape's measured times as the truth and times them again in simulation, each time scaled
by 1 + e, e drawn from a normal distribution whose standard deviation is the family's measured re-timing noise: run73
timed run68's gemm, attention, decode and persistent rows again on another day (calibration/h200/measured/issue15/
README.md; within-shape standard deviation of second / first - 1: decode 0.0029, attention 0.0102, persistent 0.0122,
gemm 0.0214), and families without a re-timing take the eight gemm_m480 configurations timed twice in one session
(tfx.explore.near_tie's table: sample standard deviation 0.0071). A perfect model predicts the first timing; the
simulated second timing is what it is judged against. Per shape it prints the median simulated Spearman and the share
of draws under 0.85; per family, how many shapes a perfect model would fail more often than not. Without ``--model``
nothing is priced; with it each shape's row also carries the model's own Spearman (tfx.analysis.measured, as
bench/accuracy.py prints it) and a `miss` where it is under 0.85, and the family lines count the misses and the
ceiling's range over them: whether a miss is the model's or the noise's.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import read_measurements, spearman  # noqa: E402

# second timing / first - 1 of the eight gemm_m480 configurations (calibration/h200/measured/gemm_m480.csv against
# issue15/run2/gemm_m480_retime.csv; tfx.explore.near_tie's docstring lists them)
RETIMING = (0.00480, 0.00198, 0.01052, 0.00627, 0.01258, -0.00363, 0.01406, 0.01834)
# run73 re-timed run68's rows of these files (README.md there); the row kernels were not re-timed
RETIMED_FILES = {"decode": ("gqa_decode",), "gemm": ("gemm_bf16", "gemm_fp8"), "attention":
                 ("attention_causal", "attention_full"), "persistent_gemm": ("persistent_gemm",)}
# the columns that do not name a configuration
NOT_CONFIG = {"measured_ms", "ms_split", "ms_merge", "merge_regs", "merge_spills", "merge_smem_bytes", "ms_graph",
              "regs", "spills", "smem_bytes", "status", "blocks_per_sm", "rel_err", "error", "seed", "split"}
SPEARMAN_MIN = 0.85
DEVICES = {"h200_sxm": ROOT / "calibration" / "h200", "h100_sxm": ROOT / "calibration" / "h100"}


def retiming_sd(issue15: Path) -> dict:
    """family -> the within-shape standard deviation of re-timed / first-timed - 1 (run73's re-timings of run68),
    each shape's median shift (a day's clock) taken out; {} where the device has none."""
    import csv
    out: dict = {}
    for stem, families in RETIMED_FILES.items():
        again, first = issue15 / "run73" / f"{stem}_retime.csv", issue15 / "run68" / f"{stem}.csv"
        if not again.exists() or not first.exists():
            continue

        def config(r):
            return tuple((k, v) for k, v in sorted(r.items()) if k not in NOT_CONFIG)
        before = {config(r): float(r["measured_ms"]) for r in csv.DictReader(open(first)) if r["status"] == "ok"}
        by_shape: dict = {}
        for r in csv.DictReader(open(again)):
            if r["status"] == "ok" and config(r) in before:
                by_shape.setdefault(r["shape"], []).append(float(r["measured_ms"]) / before[config(r)] - 1)
        resid = [x - statistics.median(v) for v in by_shape.values() for x in v]
        if len(resid) >= 3:
            for f in families:
                out[f] = statistics.stdev(resid)
    return out


def ceiling(times: list[float], sd: float, draws: int, rng: random.Random) -> tuple[float, float]:
    """(median Spearman, share under SPEARMAN_MIN) of ``times`` against ``draws`` simulated re-timings."""
    sims = [spearman(times, [t * (1 + rng.gauss(0, sd)) for t in times]) for _ in range(draws)]
    sims = [s for s in sims if s is not None]
    return statistics.median(sims), sum(s < SPEARMAN_MIN for s in sims) / len(sims)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hw", default="h200_sxm", choices=sorted(DEVICES))
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--only", default="")
    ap.add_argument("--runs", default="")
    ap.add_argument("--model", action="store_true", help="price the rows and print the model's Spearman beside")
    args = ap.parse_args(argv)
    only = set(filter(None, args.only.split(",")))
    runs = set(filter(None, args.runs.split(",")))
    fallback = statistics.stdev(RETIMING)
    sds = retiming_sd(DEVICES[args.hw] / "measured" / "issue15")
    groups: dict = {}
    for path in sorted((DEVICES[args.hw] / "measured" / "issue15").glob("run*/*.csv")):
        if "retime" in path.name or (runs and path.parent.name not in runs):
            continue
        for r in read_measurements(path):
            if not only or r.family in only:
                groups.setdefault((r.family, path.parent.name, r.shape), []).append(r)
    groups = {k: rows for k, rows in groups.items() if len(rows) >= 3}     # fewer rows rank nothing
    model = model_spearmans(groups, args.hw) if args.model else {}
    rng = random.Random(41)
    print("re-timing noise (standard deviation of second / first - 1): " + ", ".join(
        f"{f} {v:.4f}" for f, v in sorted(sds.items())) + f"; the others {fallback:.4f} (gemm_m480, one session); "
        f"{args.draws} simulated re-timings a shape")
    print(f"  {'family':18} {'campaign':8} {'shape':26} {'rows':>4} {'median':>7} {'P(<0.85)':>9}"
          + (f" {'model':>6}" if args.model else ""))
    per_family: dict = {}
    misses: dict = {}
    for key, rows in sorted(groups.items(), key=lambda kv: (kv[0][0], len(kv[0][1]), kv[0][1], kv[0][2])):
        family, run, shape = key
        med, below = ceiling([r.measured_ms for r in rows], sds.get(family, fallback), args.draws, rng)
        per_family.setdefault(family, []).append(below)
        line = f"  {family:18} {run:8} {shape:26} {len(rows):>4} {med:>7.2f} {below:>9.2f}"
        if args.model:
            sp = model.get(key)
            line += f" {'-' if sp is None else f'{sp:+.2f}':>6}"
            if sp is not None and sp < SPEARMAN_MIN:
                misses.setdefault(family, []).append(med)
                line += "  miss"
        print(line)
    print()
    for family, shares in sorted(per_family.items()):
        out = sum(s > 0.5 for s in shares)
        line = (f"{family}: {len(shares)} campaign shapes; a perfect model would miss 0.85 in more than half its "
                f"re-timings in {out}, in some of them in {sum(s > 0 for s in shares)}")
        if args.model:
            m = misses.get(family, [])
            reach = f", where a perfect model's median is {min(m):.2f}-{max(m):.2f}" if m else ""
            line += f"; the model misses it in {len(m)}{reach}"
        print(line)
    return 0


def model_spearmans(groups: dict, hw: str) -> dict:
    """(family, campaign, shape) -> the model's Spearman over the shape's rows (None: unranked), priced as
    bench/accuracy.py prices them (tfx.analysis.measured.Predictor on the device's profile)."""
    from tfx.analysis.measured import Predictor, figures
    predictor = Predictor(hw)
    return {(family, run, shape): figures(family, shape, predictor.compare(rows)).spearman
            for (family, run, shape), rows in groups.items()}


if __name__ == "__main__":
    sys.exit(main())
