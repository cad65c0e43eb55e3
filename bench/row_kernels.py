"""Row kernels (rmsnorm, softmax) on the issue 15 truth, one line per configuration: where the
ranking goes wrong and what the configurations that trade places have in common.

For each shape: the configurations sorted by measured time (mean of the runs that measured
them), with the predicted time and its error, both ranks, the CTAs an SM holds (the model's
occupancy from the compiled registers), the elements of a row tile each thread holds
(BLOCK_M x N / threads: the per-thread serial work of the folds and the register pressure),
the compiled registers and spilled words, the warps an SM holds (CTAs on it, at most ceil(CTAs / SMs) under
a wave, x warps: what sets the pace of local traffic in DRAM, tfx.analysis.local_parallelism) and
the launch's waves; then the configuration
ranked first against the measured best (the regret bench/accuracy.py reports). All splits
unless --split says (bench/accuracy.py judges the held-out rows).

    python3 bench/row_kernels.py [--only rmsnorm,softmax] [--shape 4096x16384] [--split all|heldout|tune]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

TRUTH = ROOT / "calibration" / "h200" / "measured" / "issue15"
SMS = 132   # the H200's SMs (h200_sxm)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="rmsnorm,softmax")
    ap.add_argument("--shape", default=None)
    ap.add_argument("--split", default="all", choices=("all", "heldout", "tune"))
    args = ap.parse_args()
    families = args.only.split(",")
    configs: dict = {}
    for path in sorted(TRUTH.glob("run*/rows.csv")):
        for r in read_measurements(path):
            if r.family not in families or (args.shape and r.shape != args.shape):
                continue
            if args.split != "all" and r.notes.get("split") != args.split:
                continue
            key = (r.family, r.shape, r.params["BLOCK_M"], r.params["WARPS"])
            configs.setdefault(key, []).append(r)
    predictor = Predictor("h200_sxm")
    shapes: dict = {}
    for key, rows in configs.items():
        r = rows[0]
        a = predictor.analysis(r)
        measured = statistics.mean(x.measured_ms for x in rows) * 1e3
        predicted = float(a.metrics["performance.predicted_ns"]) / 1e3
        m_rows, n = (int(v) for v in r.shape.split("x"))
        threads = 32 * r.params["WARPS"]
        shapes.setdefault(key[:2], []).append(dict(
            bm=r.params["BLOCK_M"], w=r.params["WARPS"], measured=measured, predicted=predicted,
            resident=int(a.metrics["occupancy.blocks_per_sm"]), per_thread=r.params["BLOCK_M"] * n // threads,
            regs=r.regs, spills=r.spills or 0, waves=float(a.metrics["performance.waves"]),
            warps_on_sm=min(int(a.metrics["occupancy.blocks_per_sm"]),
                            math.ceil(math.ceil(m_rows / r.params["BLOCK_M"]) / SMS)) * r.params["WARPS"]))
    for (family, shape), rows in shapes.items():
        by_pred = sorted(rows, key=lambda x: x["predicted"])
        for i, x in enumerate(by_pred):
            x["prank"] = i + 1
        rows.sort(key=lambda x: x["measured"])
        print(f"\n{family} {shape}")
        print(f"  {'BLOCK_M':>7} {'WARPS':>5} {'measured':>10} {'predicted':>10} {'error':>7} {'rank m/p':>8} "
              f"{'CTAs/SM':>7} {'el/thread':>9} {'regs':>4} {'spills':>6} {'warps/SM':>8} {'waves':>6}")
        for i, x in enumerate(rows):
            err = (x["predicted"] - x["measured"]) / x["measured"] * 100
            print(f"  {x['bm']:>7} {x['w']:>5} {x['measured']:>8.1f}us {x['predicted']:>8.1f}us {err:>+6.1f}% "
                  f"{i + 1:>3}/{x['prank']:<4} {x['resident']:>7} {x['per_thread']:>9} {x['regs']:>4} "
                  f"{x['spills']:>6} {x['warps_on_sm']:>8} {x['waves']:>6.2f}")
        first, best = by_pred[0], rows[0]
        print(f"  ranked first BLOCK_M={first['bm']} WARPS={first['w']} measures {first['measured']:.1f} us; "
              f"the best BLOCK_M={best['bm']} WARPS={best['w']} {best['measured']:.1f} us: regret "
              f"{(first['measured'] / best['measured'] - 1) * 100:.1f}%")


if __name__ == "__main__":
    main()
