#!/usr/bin/env python3
"""H200: does the SM clock the 700 W limit leaves decide the grouped GEMMs that neither the L2
slices nor the SMs' copies bound? (issue 15, large-M gemm_bf16 / gemm_fp8 first picks; session 20,
bigtile20; docs/analysis.md, "Which copies merge before the slices: what l2_groupm_s19 answers").

Usage (on the device machine, from the repository root):
    PYTHONUNBUFFERED=1 L2C20_DEADLINE_S=100 python3 bench/h200/measure_l2_clock_s20.py OUTDIR

The question. calibration/h200/measured/l2_groupm_s19 times the campaigns' grouped GEMM
(measure_accuracy.py's matmul_kernel) at 2560x8192x8192, w4 s5, one CTA an SM: 64x256x64 at
GROUP_M 2 / 4 / 8 copy 10.15 / 11.87 / 12.89 TB/s, 256x64x64 at G1 / G8 10.99 / 10.29, fp8
64x256x128 G8 12.58, while the slices serve 8.5-8.8 TB/s (with their fills) in all but G2
(10.40, at the slices' 10.71 TB/s ceiling); other launches copy 13.6-13.8 TB/s (l2_groupm_s14
3072^3 128x32x64 w4 s4 G1, s17b fp8 7168x6144x4096 128x32x128 w4 s2 G1). So what stops the tall
tiles and G4 short of 13.8? A power-limited SM clock (random data: the tensor datapath's
switching, calibration/h200/measured/gemm_clock_s15) would show as a lower nvidia-smi clock on
random data and a faster launch on zeros; a copy or slice limit would not move with the data.

What it times (the campaigns' kernel and timing; nothing is fitted to): each launch below on
random normal data (measure_accuracy.make_bufs) and on zeros (the same buffers zeroed):
  * ms: the median of 15 launches, L2 cleared (a 256 MiB write) before each, CUDA events;
  * smi_mhz, smi_w: nvidia-smi's SM clock and power every 20 ms (common.SmiSampler) over ~0.3 s
    of back-to-back launches, the median of the samples after the first 80 ms;
  * regs, spills, smem of the compiled kernel.
Writes OUTDIR/l2_clock_s20.csv (kernel,M,N,K,BM,BN,BK,WARPS,STAGES,GROUP_M,data,ms,smi_mhz,smi_w,
regs,spills,smem) and prints each row; stops starting new rows after L2C20_DEADLINE_S (100 s).
"""
import csv
import os
import statistics
import sys
import time

import torch

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("L2C20_DEADLINE_S", "100"))
sys.argv = [sys.argv[0]]                  # measure_accuracy reads sys.argv at import
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_accuracy as ma  # noqa: E402
from common import SmiSampler  # noqa: E402

# (kernel, M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M): l2_groupm_s19's six, s18's G1 twin, and
# the two launches that copied the most (13.81 and 13.67 TB/s)
LAUNCHES = [("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5, 8), ("gemm", 2560, 8192, 8192, 256, 64, 64, 4, 5, 1),
            ("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5, 4), ("gemm", 2560, 8192, 8192, 256, 64, 64, 4, 5, 8),
            ("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5, 2), ("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5, 1),
            ("gemm_fp8", 2560, 8192, 8192, 64, 256, 128, 4, 5, 8), ("gemm", 3072, 3072, 3072, 128, 32, 64, 4, 4, 1),
            ("gemm_fp8", 7168, 6144, 4096, 128, 32, 128, 4, 2, 1)]
COLS = "kernel M N K BM BN BK WARPS STAGES GROUP_M data ms smi_mhz smi_w regs spills smem".split()


def job_of(c):
    kind, M, N, K, BM, BN, BK, W, S, G = c
    p = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S, GROUP_M=G,
             layout="nk" if kind == "gemm_fp8" else "kn")
    fam = "gemm_fp8" if kind == "gemm_fp8" else "gemm_bf16"
    tile = "kernels/gemm_fp8.tile" if kind == "gemm_fp8" else "kernels/gemm.tile"
    return ("gemm.csv", fam, tile, "dev", 0, f"{M}x{N}x{K}", p)


def zeroed(b):
    out = {}
    for k, v in b.items():
        z = v.clone()
        z.view(torch.uint8).zero_()
        out[k] = z
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
    f = open(os.path.join(OUT, "l2_clock_s20.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    bufs = {}
    for c in LAUNCHES:
        if time.time() - T0 > DEADLINE_S:
            print("deadline: no more timed rows", flush=True)
            break
        j = job_of(c)
        key = (c[0], c[1], c[2], c[3])
        if key not in bufs:
            bufs.clear()
            torch.cuda.empty_cache()
            b = ma.make_bufs(j)
            bufs[key] = {"randn": b, "zeros": zeroed(b)}
        k = ma.launch(j, bufs[key]["randn"], warmup=True)[0][0]
        k._init_handles()
        for data in ("randn", "zeros"):
            b = bufs[key][data]
            ma.launch(j, b)
            torch.cuda.synchronize()
            v = []
            for _ in range(15):
                cache.zero_()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                ma.launch(j, b)
                e.record()
                e.synchronize()
                v.append(s.elapsed_time(e))
            ms = statistics.median(v)
            with SmiSampler() as smi:
                end = time.time() + 0.3
                while time.time() < end:
                    for _ in range(max(1, int(0.05 / ms * 1e3))):
                        ma.launch(j, b)
                    torch.cuda.synchronize()
            mhz, watt = smi.medians(after_s=0.08)
            row = dict(zip(COLS[:10], c), data=data, ms=round(ms, 5), smi_mhz=mhz, smi_w=watt,
                       regs=k.n_regs, spills=k.n_spills, smem=k.metadata.shared)
            w.writerow(row)
            f.flush()
            print(row, f"t={time.time() - T0:.1f}s", flush=True)
    f.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
