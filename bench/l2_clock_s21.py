#!/usr/bin/env python3
"""The grouped GEMM launches of calibration/h200/measured/l2_clock_s21 (bench/h200/measure_l2_clock_s21.py:
Nsight with floating clocks, random data and zeros) next to what l2_clock_s20 timed (docs/analysis.md,
"What l2_clock_s20 and l2_clock_s21 answer").

Per launch and data:
- ncu: Nsight's time of the launch (clocks not locked, L2 flushed before the pass);
- SM, L2: the SM clock and the L2 clock over the launch (sm__ / lts__cycles_elapsed.avg.per_second);
- copies: (BM x BK + BK x BN) x bytes x K / BK trips x CTAs over Nsight's time, TB/s, and per SM cycle
  of the launch's own SM clock (B/clk/SM, 132 SMs);
- received: the SMs' received sectors x 32 B over the copies (1.000 where each SM gets what it copies);
- merged: 1 - the slices' sectors from the SMs / the received sectors;
- slices+fills: (slices' sectors x 32 B + DRAM's bytes) over Nsight's time, TB/s.
A launch whose SM clock rises on zeros while its time does not fall is not held by that clock; a merged
share that falls with a faster clock is a merge that timing sets.

Usage: python3 bench/l2_clock_s21.py [CSV]"""
import csv
import sys

SMS = 132


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "calibration/h200/measured/l2_clock_s21/l2_clock_s21.csv"
    for r in csv.DictReader(open(path)):
        M, N, K, BM, BN, BK = (int(r[k]) for k in ("M", "N", "K", "BM", "BN", "BK"))
        size = 1 if r["kernel"] == "gemm_fp8" else 2
        copies = (BM * BK + BK * BN) * size * (K // BK) * -(-M // BM) * -(-N // BN)
        head = (f"{r['kernel']:8s} {M}x{N}x{K} {BM}x{BN}x{BK} w{r['WARPS']} s{r['STAGES']} G{r['GROUP_M']:<2s} "
                f"{r['data']:5s}")
        if not r.get("ncu_ms"):
            print(head, r.get("status", ""))
            continue
        t = float(r["ncu_ms"]) * 1e-3
        sm = float(r["sm_hz"]) if r.get("sm_hz") else None
        l2 = float(r["l2_hz"]) if r.get("l2_hz") else None
        parts = [f"ncu {t * 1e6:7.1f} us", f"SM {sm / 1e6:6.0f} MHz" if sm else "SM -",
                 f"L2 {l2 / 1e6:6.0f} MHz" if l2 else "L2 -", f"copies {copies / t / 1e12:5.2f} TB/s"]
        if sm:
            parts.append(f"{copies / (SMS * t * sm):5.1f} B/clk/SM")
        rec = int(r["received_sectors"]) * 32 if r.get("received_sectors") else None
        sl = int(r["slice_sectors"]) * 32 if r.get("slice_sectors") else None
        if rec:
            parts.append(f"received {rec / copies:5.3f}")
        if rec and sl:
            parts.append(f"merged {1 - sl / rec:5.3f}")
        if sl is not None and r.get("dram_read_bytes"):
            parts.append(f"slices+fills {(sl + int(r['dram_read_bytes'])) / t / 1e12:5.2f} TB/s")
        print(head + " " + "  ".join(parts))


if __name__ == "__main__":
    main()
