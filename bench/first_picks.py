"""First picks against the measured best, per shape of the issue 15 truth (session 23, bigbf16).

For every GEMM shape (gemm_bf16, gemm_fp8; pooled over all campaigns as ``bench/accuracy.py
--measured-only`` pools them) whose top-ranked configuration is more than ``--regret`` slower than
the measured best, prints both rows: configuration, compiled registers and shared memory,
predicted and measured time, the tile copies' bytes over the measured and over the predicted time
(``(BM + BN) x BK x element bytes`` a trip, every CTA, every trip: the rate the SMs receive if no
copy hits L1), and the breakdown's waves, tail and any non-zero term.

    python3 bench/first_picks.py                       # M >= 1024, regret > 5%
    python3 bench/first_picks.py --min-m 1 --regret 0 --family gemm_fp8
    python3 bench/first_picks.py --classes             # signed error by the pair's shared tile

``--classes``: every unspilled row of M >= ``--min-m`` with at least 4 x 132 CTAs, grouped by
family, launch order (GROUP_M 1: consecutive CTAs share the row's tile A; GROUP_M >= 2: the
column's tile B), the shared tile's bytes a trip and its share of the trip's copies: rows, the
median copies' rate over the measured time (and the most), over the predicted time, and the
median signed error.
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

ISSUE15 = ROOT / "calibration" / "h200" / "measured" / "issue15"
ELEMENT_BYTES = {"gemm_bf16": 2, "gemm_fp8": 1}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default="gemm_bf16,gemm_fp8")
    ap.add_argument("--min-m", type=int, default=1024)
    ap.add_argument("--regret", type=float, default=5.0, help="percent; shapes whose first pick is slower than this")
    ap.add_argument("--runs", default=None, help="comma-separated campaigns (default all)")
    ap.add_argument("--classes", action="store_true", help="signed error by the shared tile's bytes a trip")
    args = ap.parse_args(argv)
    families = args.family.split(",")
    runs = args.runs.split(",") if args.runs else None
    groups: dict = {}
    for path in sorted(ISSUE15.glob("run*/*.csv")):
        if "retime" in path.name or (runs and path.parent.name not in runs):
            continue
        for r in read_measurements(path):
            if r.family in families and int(r.shape.split("x")[0]) >= args.min_m:
                groups.setdefault((r.family, r.shape), []).append((path.parent.name, r))
    predictor = Predictor("h200_sxm")
    if args.classes:
        return classes(groups, predictor)
    for (family, shape), rows in sorted(groups.items()):
        done = []
        for run, r in rows:
            a = predictor.analysis(r)
            done.append((run, r, a, float(a.metrics["performance.predicted_ns"]) / 1e6))
        pick = min(done, key=lambda x: x[3])
        best = min(done, key=lambda x: x[1].measured_ms)
        regret = pick[1].measured_ms / best[1].measured_ms - 1
        if regret * 100 <= args.regret:
            continue
        print(f"\n{family} {shape}: {len(done)} rows, first pick {regret * 100:.1f}% slower than the best")
        for tag, (run, r, a, pred) in (("first pick", pick), ("measured best", best)):
            p = r.params
            copies = copies_bytes(family, shape, p)
            print(f"  {tag:13s} {run}: {p['BM']}x{p['BN']}x{p['BK']} w{p['WARPS']} s{p['STAGES']} "
                  f"G{p['GROUP_M']}, {r.regs} regs, {r.smem_bytes} B smem, "
                  f"{a.metrics['occupancy.blocks_per_sm']} CTAs/SM: predicted {pred * 1e3:.1f} us, measured "
                  f"{r.measured_ms * 1e3:.1f} us ({(pred / r.measured_ms - 1) * 100:+.1f}%); copies "
                  f"{copies / 1e9:.2f} GB: {copies / r.measured_ms / 1e9:.2f} TB/s measured, "
                  f"{copies / pred / 1e9:.2f} TB/s priced")
            for t in a.terms:
                if t.name in ("waves", "tail wave") or t.ns > 0 and t.name not in ("launch", "fill"):
                    print(f"      {t.name}: {t.detail}")


def copies_bytes(family, shape, p):
    M, N, K = (int(x) for x in shape.split("x"))
    return (math.ceil(M / p["BM"]) * math.ceil(N / p["BN"]) * math.ceil(K / p["BK"])
            * (p["BM"] + p["BN"]) * p["BK"] * ELEMENT_BYTES.get(family, 2))


def classes(groups, predictor):
    out: dict = {}
    for (family, shape), rows in groups.items():
        M, N, K = (int(x) for x in shape.split("x"))
        for run, r in rows:
            p = r.params
            if r.spills or math.ceil(M / p["BM"]) * math.ceil(N / p["BN"]) < 4 * 132:
                continue
            pred = float(predictor.analysis(r).metrics["performance.predicted_ns"]) / 1e6
            copies = copies_bytes(family, shape, p)
            grouped = p["GROUP_M"] > 1 and math.ceil(M / p["BM"]) > 1
            eb = ELEMENT_BYTES.get(family, 2)
            shared = p["BK"] * (p["BN"] if grouped else p["BM"]) * eb
            share = (p["BN"] if grouped else p["BM"]) / (p["BM"] + p["BN"])
            key = (family, "G8 B" if grouped else "G1 A", shared // 1024, round(share, 2))
            out.setdefault(key, []).append((copies / r.measured_ms / 1e9, copies / pred / 1e9,
                                            pred / r.measured_ms - 1))
    print("family, order and shared tile, its KB a trip, its share of the copies: rows, copies' rate over the "
          "measured time median (most), over the predicted, median signed error")
    for key in sorted(out, key=lambda k: (k[0], k[1], k[2], k[3])):
        v = out[key]
        if len(v) < 4:
            continue
        print(f"  {key[0]:9s} {key[1]} {key[2]:3d} KB {key[3]:.2f}: {len(v):3d} rows, "
              f"{statistics.median(x[0] for x in v):5.2f} ({max(x[0] for x in v):5.2f}) TB/s, "
              f"{statistics.median(x[1] for x in v):5.2f} TB/s, {statistics.median(x[2] for x in v) * 100:+5.1f}%")


if __name__ == "__main__":
    main()
