#!/usr/bin/env python3
"""The grouped GEMM launches of calibration/h200/measured/l2_clock_s20 (bench/h200/measure_l2_clock_s20.py)
on random data and zeros: their time, nvidia-smi's SM clock, the SMs' copies over the time and what
each SM receives a cycle of that clock (docs/analysis.md, "Which copies merge before the slices: what
l2_groupm_s19 answers").

Per launch and data:
- copies: (BM x BK + BK x BN) x bytes x K / BK trips x CTAs, the bytes the SMs' k-loops copy (every
  SM receives all of them: l2_groupm_s19's l1tex__m_xbar2l1tex_read_sectors);
- TB/s: copies / the time; B/clk/SM: copies / (132 SMs x the time x nvidia-smi's SM clock);
- TFLOP/s: 2 M N K / the time;
- zeros/randn: the time on zeros over the time on random data (a launch the power-limited clock
  holds runs faster on zeros, whose bits do not toggle; one a copy or slice rate holds does not).

Usage: python3 bench/l2_clock.py [CSV]"""
import csv
import sys

SMS = 132


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "calibration/h200/measured/l2_clock_s20/l2_clock_s20.csv"
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows:
        key = tuple(r[k] for k in ("kernel", "M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M"))
        by.setdefault(key, {})[r["data"]] = r
    for key, d in by.items():
        kind, M, N, K, BM, BN, BK, W, S, G = key
        M, N, K, BM, BN, BK = (int(x) for x in (M, N, K, BM, BN, BK))
        size = 1 if kind == "gemm_fp8" else 2
        copies = (BM * BK + BK * BN) * size * (K // BK) * -(-M // BM) * -(-N // BN)
        parts = []
        for data in ("randn", "zeros"):
            r = d.get(data)
            if r is None or not r.get("ms"):
                parts.append(f"{data} -")
                continue
            t = float(r["ms"]) * 1e-3
            mhz = float(r["smi_mhz"]) if r.get("smi_mhz") else None
            per_clk = f"{copies / (SMS * t * mhz * 1e6):5.1f}" if mhz else "    -"
            parts.append(f"{data} {t * 1e6:8.1f} us {mhz or 0:6.0f} MHz copies {copies / t / 1e12:5.2f} TB/s "
                         f"{per_clk} B/clk/SM {2 * M * N * K / t / 1e12:5.0f} TFLOP/s")
        ratio = (f"zeros/randn {float(d['zeros']['ms']) / float(d['randn']['ms']):.3f}"
                 if "zeros" in d and "randn" in d else "")
        print(f"{kind:8s} {M}x{N}x{K} {BM}x{BN}x{BK} w{W} s{S} G{G:<2s} " + " | ".join(parts) + f"  {ratio}")


if __name__ == "__main__":
    main()
