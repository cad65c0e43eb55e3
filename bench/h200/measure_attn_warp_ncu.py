#!/usr/bin/env python3
"""Where Triton's flash-attention warps wait, on the warp mma and on the warpgroup mma (session 56).

Launches bench/h200/triton_kernels.py's flash_fwd_kernel (the issue-15 attention rows' kernel) once per
configuration, as measure_accuracy.py launches it, for Nsight Compute to profile:

    ncu --csv --page raw --metrics <METRICS> python3 bench/h200/measure_attn_warp_ncu.py D,BM,BN,WARPS,STAGES ...

at B4 H32 S4096 full attention (bench/h200/run_s56b.sh runs it, METRICS there: the warp states per issue slot,
the issue-slot and pipe utilisation, the SM clock). No timing: the campaign's times are attn_warp_s56's.
"""
import math
import sys

import torch

from triton_kernels import flash_fwd_kernel

LOG2E = 1.4426950408889634


def main():
    B, H, S = 4, 32, 4096
    for spec in sys.argv[1:]:
        D, bm, bn, w, st = (int(x) for x in spec.split(","))
        q, k, v = (torch.randn(B * H * S * D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty(B * H * S, device="cuda", dtype=torch.float32)
        grid = (math.ceil(S / bm), B * H)
        flash_fwd_kernel[grid](q, k, v, o, lse, LOG2E / math.sqrt(D), S, D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=False,
                               num_warps=w, num_stages=st)
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
