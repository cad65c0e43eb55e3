#!/usr/bin/env python3
"""Read what measure_dequant_s62.py wrote (PENDING order 5): the conversions' rates and latencies, and each
campaign configuration's pipes and stalls, against what a weight costs.

    python3 bench/h200/read_dequant_s62.py calibration/<device>/measured/dequant_s62

Prints (1) per op the best lanes a cycle a SM over the warps tried (8 chains a thread) beside [PG]'s 16 for
"all other type conversions" (the XU), and the cycles a step of one dependent chain on one warp (its latency);
(2) per Nsight Compute launch the cycles a weight a SM (its duration x SMs x clock / the weights it converts:
M / BM x N x K), the pipes busiest against their peak and the warp stalls that hold the most; (3) the floor each
measured rate gives a weight (the SASS counts of calibration/h100/measured/wq_sass_s63: one XU conversion a weight
in both kernels) against the campaign's cycles a weight. The reading decides docs/analysis.md's "Dequantizing
casts hold the XU": whether the XU's own rate, the MIO queue or the chains' latency binds.
"""
from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

DOCUMENTED_XU = 16.0           # [PG]: "all other type conversions", results a cycle a SM
XU_PER_WEIGHT = 1.0            # wq_sass_s63: one I2F (w4a16) or F2F.BF16.F16 (w8a16) a weight
CONVERSIONS = {"gemm_w4a16": "i2f_s16", "gemm_w8a16": "f2f_bf16_f16"}


def number(cell: str) -> float | None:
    """The value of a cell written as '<value> <unit>' (or a bare number); None where empty or not a number."""
    text = (cell or "").strip().split(" ")[0].replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def read_rates(path: Path) -> tuple[dict, dict]:
    """(op -> best lanes a cycle a SM over its many-chain rows, op -> cycles a step of its one-chain row)."""
    best, latency = {}, {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            op, rate = row["op"], number(row.get("lanes_per_cycle_sm", ""))
            if row.get("chains", "8") == "1":
                step = number(row.get("cycles_per_chain_step", ""))
                if step is not None:
                    latency[op] = step
            elif rate is not None and rate > best.get(op, 0.0):
                best[op] = rate
    return best, latency


def weights(config: str) -> tuple[str, int]:
    """(family, the weights a launch converts) of an ncu row's config: every CTA row of M / BM converts N x K."""
    fam, M, N, K, BM = config.split()[:5]
    return fam, math.ceil(int(M) / int(BM)) * int(N) * int(K)


def launch_rows(path: Path, sms: int, clock_ghz: float) -> list[dict]:
    """Per launch: its config, cycles a weight a SM (from measured_ms), its busiest pipes and top stalls."""
    out = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            fam, w = weights(row["config"])
            ms = number(row.get("measured_ms", ""))
            pipes = sorted(((number(v), k) for k, v in row.items()
                            if "pipe" in k and "pct_of_peak" in k and number(v) is not None), reverse=True)
            stalls = sorted(((number(v), k) for k, v in row.items()
                             if "stalled" in k and "ratio" in k and number(v) is not None), reverse=True)
            out.append(dict(config=row["config"], family=fam, status=row.get("status", ""),
                            cycles_per_weight=None if ms is None else ms * 1e-3 * clock_ghz * 1e9 * sms / w,
                            pipes=pipes[:4], stalls=stalls[:4]))
    return out


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__.split("\n\n")[1])
        return 2
    folder = Path(args[0])
    sms = int(args[1]) if len(args) > 1 else 132
    clock = float(args[2]) if len(args) > 2 else 1.98
    best, latency = read_rates(folder / "dequant_rates.csv")
    print(f"rates (8 chains a thread, the best over 1-32 warps) and latencies (one chain on one warp), "
          f"{sms} SMs at {clock} GHz:")
    for op in sorted(set(best) | set(latency)):
        rate = best.get(op)
        xu = f" ({rate / DOCUMENTED_XU:.2f}x [PG]'s 16)" if rate is not None and op in CONVERSIONS.values() else ""
        print(f"  {op:14s} {'-' if rate is None else f'{rate:7.2f}'} lanes a cycle a SM{xu}; "
              f"{'-' if op not in latency else f'{latency[op]:.1f}'} cycles a chain step")
    ncu = folder / "dequant_ncu.csv"
    if ncu.exists():
        print("launches (cycles a weight a SM; the pipes' share of peak; the stalls, warps a cycle):")
        for r in launch_rows(ncu, sms, clock):
            cw = r["cycles_per_weight"]
            op = CONVERSIONS.get(r["family"])
            floor = XU_PER_WEIGHT / best[op] if op in best else None
            print(f"  {r['config']}: {'-' if cw is None else f'{cw:.3f}'} cycles a weight"
                  + ("" if floor is None or cw is None else f", the XU at its measured rate {floor:.3f} ({cw / floor:.2f}x)")
                  + f" [{r['status']}]")
            for v, k in r["pipes"]:
                print(f"      {k} {v:.1f}%")
            for v, k in r["stalls"]:
                print(f"      {k} {v:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
