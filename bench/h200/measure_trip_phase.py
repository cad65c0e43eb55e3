#!/usr/bin/env python3
"""Do the CTAs of one SM run their k-loop trips together or in turn? Every trip's start on the SM's clock.

Usage (on the device machine; under a minute):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_trip_phase.py OUTDIR

Why (docs/analysis.md, "The H200 answers", session 45): the campaigns' bf16 GEMM at M = 16, BN = 32, 8 warps runs 3
stages 11-13% slower than 4 at 256 CTAs (two an SM), where tfx has the shared-memory (MIO) pipe of the two CTAs bind at
both depths and the DRAM round trip of the 3-stage trip hide under it. A trip's next copies leave after its warps'
ldmatrix reads and mma; if the two CTAs of an SM get their tiles from the same round trip at the same time, one waits
the other's pipe time before its copies leave, and the 3-stage trip's round trip grows by it. That pricing (branch
cand/pages-mio) fits two CTAs an SM and fails the campaigns at more. So: how far apart in its trip does each CTA of an
SM run from the others, at two CTAs an SM and at six or seven?

The kernel is measure_partner_lag.py's (bench/h200/triton_kernels.py's matmul_kernel at GROUP_M = 1, M = 16,
K = 8192, BK = 128) with %clock64 and %globaltimer stamped at the top of every k-loop trip and %smid once. Each
configuration is timed with and without the stamps (do_bench medians: what the stamps cost) and launched twice more
with them.

Writes OUTDIR/trips.csv.gz (N, BN, WARPS, STAGES, rep, pid, smid, k, clk, ns: the SM's clock and the global timer at
trip k's top; the H100's first run, calibration/h100/measured/trip_phase, has no ns),
OUTDIR/timing.csv (N, BN, WARPS, STAGES, ctas, ms_plain, ms_stamped, regs, spills, smem_bytes, blocks_per_sm),
log.txt. bench/trip_phase.py reads them.
"""
import csv
import gzip
import os
import sys

import triton
import triton.language as tl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from clock_stamps import clock64, globaltimer, smid  # noqa: E402  (bench/h200: the stamping scripts' helpers)

M, K, BK = 16, 8192, 128
TRIPS = K // BK
# (N, BN, warps, stages): two CTAs an SM (256 of BN = 32) and one (128 of BN = 64) at 3 and 4 stages on 8 warps;
# six or seven an SM (896 of BN = 32) at 3 and 4 stages on 4 warps
CONFIGS = ((8192, 32, 8, 3), (8192, 32, 8, 4), (8192, 64, 8, 3), (8192, 64, 8, 4),
           (28672, 32, 4, 3), (28672, 32, 4, 4))
REPS = 2


@triton.jit
def stamped_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stamps, times, sms, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, TRIPS: tl.constexpr, STAMP: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * K + offs_k[None, :])
    b_ptrs = b_ptr + (offs_k[:, None] * N + offs_bn[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if STAMP:
            tl.store(stamps + pid * TRIPS + k, clock64(k))
            tl.store(times + pid * TRIPS + k, globaltimer(k))
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
        tl.store(sms + pid, smid(pid).to(tl.int64))


def main(out):
    import torch
    from common import Campaign
    run = Campaign(nvsmi_fields="name,clocks.sm,clocks.max.sm,clocks.mem,power.draw")
    run.open(out, "log.txt")
    log = run.log
    log("torch", torch.__version__, "triton", triton.__version__, "device", torch.cuda.get_device_name(0))
    run.nvsmi()
    tf = open(os.path.join(out, "timing.csv"), "w", newline="")
    tw = csv.DictWriter(tf, ["N", "BN", "WARPS", "STAGES", "ctas", "ms_plain", "ms_stamped", "regs", "spills",
                             "smem_bytes", "blocks_per_sm"])
    tw.writeheader()
    zf = gzip.open(os.path.join(out, "trips.csv.gz"), "wt", newline="")
    zw = csv.writer(zf)
    zw.writerow(["N", "BN", "WARPS", "STAGES", "rep", "pid", "smid", "k", "clk", "ns"])
    g = torch.Generator(device="cuda")
    g.manual_seed(45)
    A = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
    for n, bn, warps, stages in CONFIGS:
        try:
            B = torch.randn(K, n, device="cuda", generator=g).to(torch.bfloat16)
            C = torch.empty(M, n, device="cuda", dtype=torch.bfloat16)
            ctas = triton.cdiv(M, 16) * triton.cdiv(n, bn)
            stamps = torch.zeros(ctas * TRIPS, device="cuda", dtype=torch.int64)
            times = torch.zeros(ctas * TRIPS, device="cuda", dtype=torch.int64)
            sms = torch.zeros(ctas, device="cuda", dtype=torch.int64)

            def launch(stamp):
                return stamped_matmul[(ctas,)](A, B, C, M, n, K, stamps, times, sms, BLOCK_M=16, BLOCK_N=bn, BLOCK_K=BK,
                                               TRIPS=TRIPS, STAMP=stamp, num_warps=warps, num_stages=stages)
            k_plain = launch(False)
            torch.cuda.synchronize()
            ref = A.float() @ B.float()
            err = (C.float() - ref).abs().max().item() / ref.abs().max().item()
            launch(True)
            torch.cuda.synchronize()
            ms_plain = float(triton.testing.do_bench(lambda: launch(False), warmup=5, rep=40, return_mode="median"))
            ms_stamped = float(triton.testing.do_bench(lambda: launch(True), warmup=5, rep=40, return_mode="median"))
            row = dict(N=n, BN=bn, WARPS=warps, STAGES=stages, ctas=ctas, ms_plain=f"{ms_plain:.5f}",
                       ms_stamped=f"{ms_stamped:.5f}", regs=k_plain.n_regs, spills=k_plain.n_spills,
                       smem_bytes=k_plain.metadata.shared,
                       blocks_per_sm=run.occupancy(k_plain, 32 * warps, k_plain.metadata.shared))
            tw.writerow(row)
            tf.flush()
            log(row, f"rel_err {err:.2e}")
            for rep in range(REPS):
                stamps.zero_()
                launch(True)
                torch.cuda.synchronize()
                st = stamps.view(ctas, TRIPS).cpu().tolist()
                gt = times.view(ctas, TRIPS).cpu().tolist()
                sm = sms.cpu().tolist()
                for pid in range(ctas):
                    for k, (clk, ns) in enumerate(zip(st[pid], gt[pid])):
                        zw.writerow([n, bn, warps, stages, rep, pid, sm[pid], k, clk, ns])
            zf.flush()
            del B, C, stamps, times, sms
        except Exception as e:      # one configuration that fails leaves the others
            log("failed", n, bn, warps, stages, repr(e)[:400])
    tf.close()
    zf.close()
    run.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
