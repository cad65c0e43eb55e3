#!/usr/bin/env python3
"""What the L2 slices serve against what the SMs copy, in the measured l2_groupm sets that count the
slices' sectors (calibration/h200/measured/l2_groupm_s14, _s16, _s17b, _s18, _s19; docs/analysis.md,
"The L2 slices' data ceiling", the source of hw_profiles/h200_sxm.toml memory.l2.slice_bandwidth,
and "Which copies merge before the slices (session 20)").

Per grouped GEMM launch:
- copies: the bytes the SMs' k-loops copy, (BM x BK + BK x BN) x bytes x K / BK trips x CTAs;
- merged: 1 - the slices' sectors from the SMs (lts__t_sectors_srcunit_tex_op_read x 32 B) / copies;
- pair: the rule "half of the tile the TPC pair (launch positions 2k, 2k + 1) copies at a step":
  A's share / 2 at GROUP_M 1 (a row-major pair shares the row's tile), B's / 2 at GROUP_M >= 2 (a
  group-M pair shares the column's);
- slices + fills: (slice sectors x 32 B + Nsight's dram__bytes_read) / do_bench's time, and / ncu's
  time (ncu locks the clocks: its times run up to 14% longer);
- copies: the SMs' copies over do_bench's time (what each SM receives, l1tex__m_xbar2l1tex_read_sectors
  x 32 B, equals them in every launch that counts it);
- far: the sectors the slices serve the other L2 partition (lts__t_sectors_srcunit_ltcfabric x 32 B)
  over the copies, where the set counts them (s14, s19), else "-";
- with --timeline DIR, the merged share a TPC pair in step gives (bench/cta_timeline_pairs.py)
  is printed by that script, not here.

Usage: python3 bench/l2_slices.py [CSV ...]"""
import csv
import glob
import sys


def launches(paths):
    for path in paths:
        for r in csv.DictReader(open(path)):
            if r.get("status") != "ok" or not r.get("lts__t_sectors_srcunit_tex_op_read") or r["kernel"] == "persistent":
                continue
            yield path, r


def main():
    paths = sys.argv[1:] or sorted(glob.glob("calibration/h200/measured/l2_groupm_s1[46789]*/l2_groupm.csv"))
    for path, r in launches(paths):
        M, N, K, BM, BN, BK, G = (int(r[k]) for k in ("M", "N", "K", "BM", "BN", "BK", "GROUP_M"))
        size = 1 if r["kernel"] == "gemm_fp8" else 2
        a, b = BM * BK * size, BN * BK * size
        copies = (a + b) * (K // BK) * -(-M // BM) * (N // BN)
        tex = float(r["lts__t_sectors_srcunit_tex_op_read"]) * 32
        dram = float(r["dram_read_bytes"])
        pair = (a if G == 1 else b) / (2 * (a + b))
        t_bench, t_ncu = float(r["measured_ms"]) * 1e-3, float(r["ncu_ms"]) * 1e-3
        fabric = r.get("lts__t_sectors_srcunit_ltcfabric")
        far = f"{float(fabric) * 32 / copies:.3f}" if fabric else "    -"
        print(f"{r['kernel']:8s} {M}x{N}x{K} {BM}x{BN}x{BK} w{r['WARPS']} s{r['STAGES']} G{G:<2d} "
              f"merged {1 - tex / copies:.3f} pair {pair:.3f}  slices+fills {(tex + dram) / t_bench / 1e12:5.2f} TB/s "
              f"(ncu {(tex + dram) / t_ncu / 1e12:5.2f})  DRAM {dram / t_bench / 1e12:4.2f} TB/s  "
              f"copies {copies / t_bench / 1e12:5.2f} TB/s  far {far}")


if __name__ == "__main__":
    main()
