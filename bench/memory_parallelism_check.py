"""Can memory-level parallelism explain the small-M bf16 GEMM rows? Little's law, inverted.

Issue 15 asks for a memory-level-parallelism term: too few bytes in flight per SM (stages x
bytes per stage x resident CTAs) against latency x the SM's bandwidth share cannot reach DRAM
bandwidth. This script checks that hypothesis on the measured rows before any model uses it.

For every ok gemm_bf16 row with M <= 128 in calibration/h200/measured/issue15/run*/gemm.csv
and a pipelined loop (STAGES >= 2, so S-1 tiles are in flight per CTA):

    CTAs on one SM   on_sm   = min(blocks_per_sm as compiled, ceil(grid / SMs))
    one k-step       round   = measured time / (waves x K/BK)
    bytes in flight  inflight = on_sm x (S-1) x (BM + BN) x BK x 2 B
    per-SM rate      rate    = on_sm x (BM + BN) x BK x 2 B / round
    implied latency  L       = inflight / rate = (S-1) x round        (Little's law)

If the rows were bound by memory-level parallelism, L would sit at the memory latency the
machine shows at that load: between the unloaded and the most loaded DRAM latency of
calibration/h200/measured/latency.csv (dependent loads of one thread over 1 GiB while 528 other
blocks stream). It prints the rows, the median implied latency, the share of rows above the
most loaded latency,
and the Spearman correlation of L with the bytes in flight (a latency bound keeps L flat as
bytes in flight grow; a throughput bound makes L grow with them).

    python3 bench/memory_parallelism_check.py
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import spearman  # noqa: E402
from tfx.hw import load_profile  # noqa: E402

MEASURED = ROOT / "calibration" / "h200" / "measured"


def dram_latency_range():
    """(unloaded, most loaded) ns of one dependent DRAM load (1 GiB working set), from latency.csv."""
    rows = [r for r in csv.DictReader(open(MEASURED / "latency.csv"))
            if int(r["working_set_bytes"]) > 1 << 29]
    unloaded = min(float(r["ns_per_step"]) for r in rows if r["load"] == "none")
    saturated = max(float(r["ns_per_step"]) for r in rows)
    return unloaded, saturated


def main():
    sms = load_profile("h200_sxm").units_of("sm")
    unloaded, saturated = dram_latency_range()
    rows = []
    for run in sorted((MEASURED / "issue15").glob("run*/gemm.csv")):
        for r in csv.DictReader(open(run)):
            if r["family"] != "gemm_bf16" or r["status"] != "ok" or int(r["M"]) > 128:
                continue
            M, N, K, BM, BN, BK, S = (int(r[k]) for k in ("M", "N", "K", "BM", "BN", "BK", "STAGES"))
            if S < 2:
                continue
            grid = -(-M // BM) * -(-N // BN)
            per_sm = int(r["blocks_per_sm"])
            on_sm = min(per_sm, -(-grid // sms))
            waves = -(-grid // (sms * per_sm))
            round_ns = float(r["measured_ms"]) * 1e6 / (waves * (K // BK))
            tile = (BM + BN) * BK * 2
            inflight = on_sm * (S - 1) * tile
            rate = on_sm * tile / round_ns
            rows.append((run.parent.name, r["split"], r["shape"], f"{BM}x{BN}x{BK} w{r['WARPS']} s{S}",
                         on_sm, inflight, rate, inflight / rate))
    print(f"DRAM latency of one dependent load (latency.csv): {unloaded:.0f} ns unloaded, "
          f"{saturated:.0f} ns with other blocks streaming at full rate")
    print(f"  {'run':5s} {'split':8s} {'shape':16s} {'config':18s} {'CTAs/SM':>7s} {'in flight':>10s} "
          f"{'GB/s per SM':>11s} {'implied latency':>15s}")
    for run, split, shape, cfg, on_sm, inflight, rate, lat in sorted(rows, key=lambda x: (x[2], x[7])):
        print(f"  {run:5s} {split:8s} {shape:16s} {cfg:18s} {on_sm:7d} {inflight:8,d} B {rate:11.1f} {lat:12,.0f} ns")
    lats = [x[7] for x in rows]
    above = sum(lat > saturated for lat in lats)
    print(f"  {len(rows)} pipelined rows: median implied latency {statistics.median(lats):,.0f} ns; "
          f"{above} ({100 * above / len(rows):.0f}%) above the most loaded {saturated:.0f} ns; "
          f"Spearman(bytes in flight, implied latency) {spearman([x[5] for x in rows], lats):+.2f}")


if __name__ == "__main__":
    main()
