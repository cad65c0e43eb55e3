#!/usr/bin/env python3
"""BN = 32 against BN = 64: the continued 64-B pieces' cost, measured and as tfx prices it.

    python3 bench/shortrun_pairs.py calibration/h200/measured/shortruns41/gemm.csv [--profile h200_sxm]

Reads a short-run set's gemm.csv (bench/h200/run_s41_shortruns.sh: tfx validate's format) and matches each BN = 32
row with its BN = 64 twin at the same (M, N, K, BK, warps, stages), and each BN = 32 row at N with a BN = 64 row at
2N (the same CTA count). Prints, per match, the two measured times and their ratio beside the ratio of tfx's
predictions (docs/analysis.md, "The H200 answers": at 256 CTAs the continued pieces cost nothing, at 896 a quarter).
A missing file is one line and exit 2.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def twins(rows: list[tuple[dict, float, float]]) -> list[tuple[str, tuple, tuple]]:
    """("same N" or "same CTAs", the BN = 32 row's (params, measured, predicted), its twin's) for every BN = 32 row
    with a BN = 64 row at the same N (and the rest alike), or at 2N."""
    by = {}
    for params, measured, predicted in rows:
        key = (params["M"], params["N"], params["K"], params["BN"], params["BK"], params["WARPS"], params["STAGES"])
        by[key] = (params, measured, predicted)
    out = []
    for (m, n, k, bn, bk, w, s), row in sorted(by.items()):
        if bn != 32:
            continue
        for label, n2 in (("same N", n), ("same CTAs", 2 * n)):
            twin = by.get((m, n2, k, 64, bk, w, s))
            if twin is not None:
                out.append((label, row, twin))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", type=Path)
    ap.add_argument("--profile", default="h200_sxm")
    args = ap.parse_args(argv)
    if not args.csv.is_file():
        print(f"{args.csv}: no such file (expected a short-run set's gemm.csv)", file=sys.stderr)
        return 2
    from tfx.analysis.measured import Predictor, read_measurements
    compared = Predictor(args.profile).compare(read_measurements(args.csv))
    rows = [(c.row.params, c.row.measured_ms, c.predicted_ms) for c in compared]
    for label, (p, m32, t32), (q, m64, t64) in twins(rows):
        # at the same CTAs the BN = 64 launch does twice the columns: compare time per column
        scale = q["N"] / p["N"]
        print(f"{p['M']}x{p['N']}x{p['K']} BK {p['BK']} w{p['WARPS']} s{p['STAGES']} ({label}, BN 64 at N {q['N']}): "
              f"measured {m32:.4f} / {m64:.4f} ms -> {m32 * scale / m64:.3f}; tfx {t32 * scale / t64:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
