#!/usr/bin/env python3
"""When does a continued 64-B piece cost DRAM time? The campaigns' bf16 GEMM at BN = 32 with half its CTAs held back
at the start, so that the two CTAs reading one 128-B line of B run a known time apart.

Usage (on the device machine; under a minute):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_partner_lag.py OUTDIR

Why (docs/analysis.md, "The short-run factor at the small-M held-out misses"): at BN = 32 each CTA reads B [K, N] in
64-B row pieces and its neighbour (pid_n + 1) reads the other half of each 128-B line. On an H100 that costs nothing
at 128 CTAs and about a quarter of the DRAM time at 896 (calibration/h100/measured/shortruns41). Two mechanisms
would do that, and they part on the lag between the two halves:
  - the DRAM page: the second half is cheap while the page the first opened is still open, a window of a few hundred
    ns under load: a lag of 1-2 us would cost the whole factor;
  - the L2: the line the first half brought is still in the L2 when the partner asks, a window of the L2's room over
    the DRAM rate (about 30 MB / 4 TB/s = 8 us): lags under that cost nothing.

The kernel is bench/h200/triton_kernels.py's matmul_kernel (M = 16, K = 8192, GROUP_M = 1: CTA pid reads B columns
pid x 32 ..) with a spin on %clock64 before its k-loop in the CTAs picked by MODE:
  split:    pid_n odd (one CTA of every pair held: the pair's halves LAG_US apart),
  together: (pid_n // 2) odd (both CTAs of a pair held: the same number of CTAs held the same time, the pair's halves
            together).
split / together at one lag is the cost of the lag alone. BN = 64 rows (no continued pieces) at the same hold give
the timeline's own cost. LAG_US in 0, 1, 2, 4, 8, 16; N = 4096 (128 CTAs), 8192 (256) and 28672 (896).
PARTNER_LAG_SET=s44: N = 28672 only, lags 0, 2, 16 us, at 2, 3, 6 and 8 stages (the CTAs an SM 9 / 6 / 3 / 2).
PARTNER_LAG_SET=s45: N = 8192 and 28672, lags 0 and 16 us, BK = 128 at 8 and 4 warps, 3 and 4 stages.

The natural lag: each (N, BN, BK) launched three more times with no hold, every CTA writing its %globaltimer at its
start and after its store, and its %smid (timeline.csv): how far apart the two CTAs of a pair run by themselves.

Writes OUTDIR/lag.csv (N, BN, BK, WARPS, STAGES, mode, lag_us, ms, regs, spills, smem_bytes, blocks_per_sm),
OUTDIR/timeline.csv (N, BN, BK, WARPS, STAGES, rep, pid, smid, start_ns, end_ns), log.txt.
Timing: triton.testing.do_bench median after an L2 clear.
"""
import csv
import os
import sys

import triton
import triton.language as tl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from clock_stamps import clock64, globaltimer, smid  # noqa: E402  (bench/h200: the stamping scripts' helpers)

M, K = 16, 8192
NS = (4096, 8192, 28672)
LAGS_US = (0, 1, 2, 4, 8, 16)
CONFIGS = ((128, 4, 4),)      # (BK, warps, stages): run_s41_shortruns.sh's first
if os.environ.get("PARTNER_LAG_SET") == "s44":
    # session 44: at 896 CTAs, the stages move the CTAs an SM (9 / 6 / 3 / 2 at BN = 32) at about the same bytes in
    # flight an SM: does the pairs' natural gap, and the lag's cost, follow the CTAs an SM?
    NS, LAGS_US = (28672,), (0, 2, 16)
    CONFIGS = ((128, 4, 2), (128, 4, 3), (128, 4, 6), (128, 4, 8))
elif os.environ.get("PARTNER_LAG_SET") == "s45":
    # session 45: run27's 16x8192x8192 at BN = 32, BK = 128, 8 warps measured 14% slower at 3 stages than at 4 (256
    # CTAs); does BN = 64 part the same way (then not the continued pieces), and do the pairs on SMs of different
    # CTA counts drift apart (the timeline's lives by the CTAs an SM)? 256 and 896 CTAs, 4 and 8 warps
    NS, LAGS_US = (8192, 28672), (0, 16)
    CONFIGS = ((128, 8, 3), (128, 8, 4), (128, 4, 3), (128, 4, 4))


@triton.jit
def lagged_matmul(a_ptr, b_ptr, c_ptr, M, N, K, hold_cycles, stamps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, MODE: tl.constexpr, STAMP: tl.constexpr):
    # triton_kernels.matmul_kernel at GROUP_M = 1 (pid_m = pid % num_pid_m with one row block), B [K, N]
    pid = tl.program_id(axis=0)
    if STAMP:
        tl.store(stamps + pid * 3, globaltimer(pid))
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    held = (pid_n % 2) == 1 if MODE == 0 else ((pid_n // 2) % 2) == 1
    if held:
        t0 = clock64(pid)
        t = t0
        while t - t0 < hold_cycles:
            t = clock64(pid)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * K + offs_k[None, :])
    b_ptrs = b_ptr + (offs_k[:, None] * N + offs_bn[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_cm[:, None] * N + offs_cn[None, :], c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
    if STAMP:
        tl.store(stamps + pid * 3 + 1, globaltimer(pid))
        tl.store(stamps + pid * 3 + 2, smid(pid).to(tl.int64))


def main(out):
    import torch
    from common import Campaign
    run = Campaign(nvsmi_fields="name,clocks.sm,clocks.max.sm,clocks.mem,power.draw")
    run.open(out, "log.txt")
    log = run.log
    name = torch.cuda.get_device_name(0)
    log("torch", torch.__version__, "triton", triton.__version__, "device", name)
    run.nvsmi()
    ghz = 1.98      # the H100's and H200's top SM clock (nvidia-smi clocks.max.sm, in the log): a hold of lag_us
    log("SM clock used for the hold", ghz, "GHz")   # runs at least lag_us, longer if the clock sags
    cols = ["N", "BN", "BK", "WARPS", "STAGES", "mode", "lag_us", "ms", "regs", "spills", "smem_bytes",
            "blocks_per_sm", "ctas"]
    f = open(os.path.join(out, "lag.csv"), "w", newline="")
    w = csv.DictWriter(f, cols)
    w.writeheader()
    tf = open(os.path.join(out, "timeline.csv"), "w", newline="")
    tw = csv.DictWriter(tf, ["N", "BN", "BK", "WARPS", "STAGES", "rep", "pid", "smid", "start_ns", "end_ns"])
    tw.writeheader()
    stamps = torch.zeros(3 * 2048, device="cuda", dtype=torch.int64)
    g = torch.Generator(device="cuda")
    g.manual_seed(42)
    A = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
    for n in NS:
        B = torch.randn(K, n, device="cuda", generator=g).to(torch.bfloat16)
        C = torch.empty(M, n, device="cuda", dtype=torch.bfloat16)
        ref = (A.float() @ B.float())
        for bk, warps, stages in CONFIGS:
            for bn in (32, 64):
                grid = (triton.cdiv(M, 16) * triton.cdiv(n, bn),)
                for mode_name, mode in (("split", 0), ("together", 1)):
                    for lag in LAGS_US:
                        hold = int(lag * 1000 * ghz)
                        fn = (lambda: lagged_matmul[grid](A, B, C, M, n, K, hold, stamps, BLOCK_M=16, BLOCK_N=bn,
                                                          BLOCK_K=bk, MODE=mode, STAMP=False, num_warps=warps,
                                                          num_stages=stages))
                        try:
                            k = fn()
                            torch.cuda.synchronize()
                            err = (C.float() - ref).abs().max().item() / ref.abs().max().item()
                            ms = float(triton.testing.do_bench(fn, warmup=5, rep=40, return_mode="median"))
                            row = dict(N=n, BN=bn, BK=bk, WARPS=warps, STAGES=stages, mode=mode_name, lag_us=lag,
                                       ms=f"{ms:.5f}", regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared,
                                       blocks_per_sm=run.occupancy(k, 32 * warps, k.metadata.shared), ctas=grid[0])
                            w.writerow(row)
                            f.flush()
                            log(row, f"rel_err {err:.2e}")
                        except Exception as e:      # one launch that fails leaves the others
                            log("failed", n, bn, bk, warps, stages, mode_name, lag, repr(e)[:300])
                # the natural lag: every CTA's start and end (%globaltimer) and SM, no hold, three launches
                for rep in range(3):
                    lagged_matmul[grid](A, B, C, M, n, K, 0, stamps, BLOCK_M=16, BLOCK_N=bn, BLOCK_K=bk, MODE=0,
                                        STAMP=True, num_warps=warps, num_stages=stages)
                    torch.cuda.synchronize()
                    st = stamps[:3 * grid[0]].view(-1, 3).cpu().tolist()
                    t0 = min(x[0] for x in st)
                    for pid, (a, b, sm) in enumerate(st):
                        tw.writerow(dict(N=n, BN=bn, BK=bk, WARPS=warps, STAGES=stages, rep=rep, pid=pid, smid=sm,
                                         start_ns=a - t0, end_ns=b - t0))
                    tf.flush()
        del B, C
    f.close()
    tf.close()
    run.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
