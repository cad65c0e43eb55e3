#!/usr/bin/env python3
"""How far two timings of the same configurations agree on their rankings (calibration/h200/measured/
retest_s24: run39's and run40's configurations timed again in session 24; retest_s26: run43's in session 26), beside how far the model agrees
with the first timing. Per family and shape: the rows both timings have ok, the median |retest / first - 1|,
the Spearman rank correlation of the retest against the first timing, the regret (in the first timing) of the
retest's fastest configuration, and the model's Spearman against the first timing
(tfx.analysis.measured.spearman; the model priced as bench/accuracy.py prices it). A shape whose retest
Spearman is under the issue's 0.85 has configurations closer together than the timing repeats: no model can be
held to rank them.

Usage: python3 bench/retest_ranks.py [RUN ...]   (default: run39 run40; the retest is RUNr)"""
import statistics
import sys
from pathlib import Path

from tfx.analysis.measured import Predictor, read_measurements, spearman

BASE = Path("calibration/h200/measured")


def key(row):
    return (row.family, row.shape, tuple(sorted(row.params.items())))


def load(folder):
    rows = []
    for p in sorted(folder.glob("*.csv")):
        rows += read_measurements(p)
    return rows


def main(runs):
    predictor = Predictor("h200_sxm")
    print(f"  {'campaign':8s} {'family':18s} {'shape':26s} rows  retest|d|  retest sp  retest regret  model sp")
    for run in runs:
        first = {key(r): r for r in load(BASE / "issue15" / run)}
        folders = sorted(BASE.glob(f"retest_s*/{run}r"))     # retest_s24 (run39, run40), retest_s26 (run43)
        if not folders:
            print(f"retest_ranks: no calibration/h200/measured/retest_s*/{run}r: expected a retimed campaign",
                  file=sys.stderr)
            sys.exit(2)
        again = {key(r): r for r in load(folders[-1])}
        shapes: dict = {}
        for k in first.keys() & again.keys():
            shapes.setdefault(k[:2], []).append(k)
        for (family, shape), ks in sorted(shapes.items()):
            if len(ks) < 3:
                continue
            a = [first[k].measured_ms for k in ks]
            b = [again[k].measured_ms for k in ks]
            model = [c.predicted_ms for c in predictor.compare([first[k] for k in ks])]
            pick = min(range(len(ks)), key=lambda i: b[i])
            regret = a[pick] / min(a) - 1
            diff = statistics.median(abs(y / x - 1) for x, y in zip(a, b))
            sp, msp = spearman(a, b), spearman(a, model)
            flag = "  < 0.85" if sp is not None and sp < 0.85 else ""
            rho = lambda x, w: f"{'-':>{w}}" if x is None else f"{x:+{w}.2f}"   # None: no rank order
            print(f"  {run:8s} {family:18s} {shape:26s} {len(ks):4d}  {diff * 100:7.1f}%  {rho(sp, 9)}  "
                  f"{regret * 100:12.1f}%  {rho(msp, 8)}{flag}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["run39", "run40"])
