#!/usr/bin/env python3
"""Do the CTAs of one SM run their k-loop trips together or in turn? Every trip's start on the SM's clock.

Usage (on the device machine; under a minute):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_trip_phase.py OUTDIR
    PYTHONUNBUFFERED=1 TRIP_SET=grid python3 bench/h200/measure_trip_phase.py OUTDIR   (the grid: ctas.csv)
    PYTHONUNBUFFERED=1 TRIP_SET=kgrid python3 bench/h200/measure_trip_phase.py OUTDIR  (four tiles over K)
    PYTHONUNBUFFERED=1 TRIP_SET=fgrid python3 bench/h200/measure_trip_phase.py OUTDIR  (BN 32 / 64 over N)
    PYTHONUNBUFFERED=1 TRIP_SET=sgrid python3 bench/h200/measure_trip_phase.py OUTDIR  (BN 32 / 64 over the stages)
    PYTHONUNBUFFERED=1 TRIP_SET=mkgrid python3 bench/h200/measure_trip_phase.py OUTDIR (kgrid's tiles at M = 64)
    PYTHONUNBUFFERED=1 TRIP_SET=g1grid [TRIP_ORDER=g1] [TRIP_M=64] python3 bench/h200/measure_trip_phase.py OUTDIR
        (a B tile's co-readers neighbouring pids, or with TRIP_ORDER=g1 GROUP_M = 1's order; M = 128 unless TRIP_M)

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
trip k's top), or with TRIP_SET=grid or kgrid OUTDIR/ctas.csv (N, K, BN, BK, WARPS, STAGES, pid, smid, first_ns,
last_ns, steady_mean_ns, steady_median_ns: each CTA's trips past the first PROLOGUE on the global timer),
OUTDIR/timing.csv (M, N, K, BN, BK, WARPS, STAGES, ctas, ms_plain, ms_stamped, regs, spills, smem_bytes, blocks_per_sm),
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
# (N, BN, warps, stages): two CTAs an SM (256 of BN = 32) and one (128 of BN = 64) at 3 and 4 stages on 8 warps;
# six or seven an SM (896 of BN = 32) at 3 and 4 stages on 4 warps
CONFIGS = ((8192, 32, BK, 8, 3, K), (8192, 32, BK, 8, 4, K), (8192, 64, BK, 8, 3, K), (8192, 64, BK, 8, 4, K),
           (28672, 32, BK, 4, 3, K), (28672, 32, BK, 4, 4, K))
REPS = 2
GRID = os.environ.get("TRIP_SET") in ("grid", "kgrid")
if os.environ.get("TRIP_SET") == "kgrid":
    # the same figures over K (2048 .. 28672): the small-M campaigns' error rises with K (+1.0% at 4096, +4.8% at
    # 28672: docs/analysis.md, "The H200's trip stamps"); does the loop, the start and end, or the ends' spread move?
    CONFIGS = tuple((n, bn, bk, 4, st, k) for n, bn, bk, st in ((8192, 64, 128, 4), (8192, 128, 64, 4),
                                                                (8192, 32, 128, 4), (28672, 128, 128, 3))
                    for k in (2048, 4096, 8192, 16384, 28672))
    REPS = 1
elif os.environ.get("TRIP_SET") == "fgrid":
    # the continued pieces' cost per trip against the B bytes the launch keeps in flight, (S - 1) x BK x N x 2 B: BN 32
    # against BN 64 at N = 8192 .. 24576 (256 .. 768 CTAs of BN 32, one wave) at 3 and 4 stages, BK 128, 4 warps
    # (docs/analysis.md, "The H200's trip stamps": near 1 up to 6.3 MB, 1.22-1.46 from 7.3 MB on the H200)
    CONFIGS = tuple((n, bn, 128, 4, st, K) for n in (8192, 12288, 16384, 20480, 24576) for bn in (32, 64)
                    for st in (3, 4))
    REPS = 1
    GRID = True
elif os.environ.get("TRIP_SET") == "mkgrid":
    # the small-M campaigns' error rises with K most where several CTAs co-read each B tile (M > BM: on the H100 -1.7%
    # at K <= 6144 to +9.4% at 6656-10752, where the rows of one row tile move +5.9 to +8.5%; docs/analysis.md, "Against
    # the loop to the last CTA"): kgrid's two N = 8192 tiles at M = 64 (four row tiles of BLOCK_M 16, the co-readers
    # neighbouring pids) over K = 2048 .. 28672, to set beside kgrid's M = 16
    M = 64
    CONFIGS = tuple((8192, bn, bk, 4, 4, k) for bn, bk in ((64, 128), (128, 64)) for k in (2048, 4096, 8192, 16384, 28672))
    REPS = 1
    GRID = True
elif os.environ.get("TRIP_SET") == "g1grid":
    # co-readers together or apart (session 47): the campaigns' GROUP_M = 1 launches at M > BM run 6.5% (median of 8
    # same-config pairs) to 15% slower than their GROUP_M = 8 twins (128x4096x4096 16x128x128 w2 s4: 36.6 against
    # 31.7 us), which tfx's drift term does not price; at M = 128 (eight row tiles of BLOCK_M 16) the campaign pair's
    # tile at K = 4096 and 16384 and a 4-warp BN 128 BK 64 one, with TRIP_ORDER=g1 (Triton's GROUP_M = 1 order: a B
    # tile's co-readers cdiv(N, BN) launch positions apart) or unset (the co-readers neighbouring pids); TRIP_M sets
    # another M (32, 64: two and four co-readers)
    M = int(os.environ.get("TRIP_M", "128"))
    CONFIGS = ((4096, 128, 128, 2, 4, 4096), (4096, 128, 128, 2, 4, 16384), (4096, 128, 64, 4, 4, 8192))
    REPS = 1
    GRID = True
elif os.environ.get("TRIP_SET") == "sgrid":
    # which launches' SMs pull ahead at two CTAs an SM (docs/analysis.md, "The CTAs' spread in k, and the SMs that run
    # ahead": the H100's 256 BN 32 CTAs have 19-20 SMs ahead from K = 16384 at 4 stages and cost 1.12-1.13 x BN 64):
    # BN 32 (256 CTAs) and BN 64 (128) at N = 8192, K = 16384, BK 128, 2 .. 6 stages on 4 and 8 warps
    CONFIGS = tuple((8192, bn, 128, w, st, 16384) for bn in (32, 64) for w in (4, 8) for st in (2, 3, 4, 5, 6))
    REPS = 1
    GRID = True
elif GRID:
    # the loop apart from the launch's start and end, over the small-M tiles: BN 32 / 64 / 128 at BK 64 and 128, 3 and 4
    # stages, 4 warps, at N = 8192 (256 / 128 / 64 CTAs) and 28672 (896 / 448 / 224): each CTA's steady mean trip
    # (ctas.csv), one stamped launch each, no trip-by-trip file
    CONFIGS = tuple((n, bn, bk, 4, st, K) for n in (8192, 28672) for bn in (32, 64, 128) for bk in (64, 128)
                    for st in (3, 4))
    REPS = 1
APART = os.environ.get("TRIP_ORDER") == "g1"   # the GROUP_M = 1 order (the g1grid set's twin run)
PROLOGUE = 4        # trips left out at a CTA's start in ctas.csv's steady figures (bench/trip_phase.py's)


@triton.jit
def stamped_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stamps, times, sms, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, TRIPS: tl.constexpr, STAMP: tl.constexpr, APART: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    if APART:     # Triton's GROUP_M = 1 order: a B tile's co-readers cdiv(N, BN) positions apart
        num_pid_n = tl.cdiv(N, BLOCK_N)
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    else:         # the co-readers of a B tile neighbouring pids
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
    tw = csv.DictWriter(tf, ["M", "N", "K", "BN", "BK", "WARPS", "STAGES", "ctas", "ms_plain", "ms_stamped", "regs",
                             "spills", "smem_bytes", "blocks_per_sm"])
    tw.writeheader()
    if GRID:
        zf = open(os.path.join(out, "ctas.csv"), "w", newline="")
        zw = csv.writer(zf)
        zw.writerow(["N", "K", "BN", "BK", "WARPS", "STAGES", "pid", "smid", "first_ns", "last_ns", "steady_mean_ns",
                     "steady_median_ns"])
    else:
        zf = gzip.open(os.path.join(out, "trips.csv.gz"), "wt", newline="")
        zw = csv.writer(zf)
        zw.writerow(["N", "BN", "WARPS", "STAGES", "rep", "pid", "smid", "k", "clk", "ns"])
    g = torch.Generator(device="cuda")
    g.manual_seed(45)
    for n, bn, bk, warps, stages, kk in CONFIGS:
        trips = kk // bk
        try:
            A = torch.randn(M, kk, device="cuda", generator=g).to(torch.bfloat16)
            B = torch.randn(kk, n, device="cuda", generator=g).to(torch.bfloat16)
            C = torch.empty(M, n, device="cuda", dtype=torch.bfloat16)
            ctas = triton.cdiv(M, 16) * triton.cdiv(n, bn)
            stamps = torch.zeros(ctas * trips, device="cuda", dtype=torch.int64)
            times = torch.zeros(ctas * trips, device="cuda", dtype=torch.int64)
            sms = torch.zeros(ctas, device="cuda", dtype=torch.int64)

            def launch(stamp):
                return stamped_matmul[(ctas,)](A, B, C, M, n, kk, stamps, times, sms, BLOCK_M=16, BLOCK_N=bn,
                                               BLOCK_K=bk, TRIPS=trips, STAMP=stamp, APART=APART, num_warps=warps,
                                               num_stages=stages)
            k_plain = launch(False)
            torch.cuda.synchronize()
            ref = A.float() @ B.float()
            err = (C.float() - ref).abs().max().item() / ref.abs().max().item()
            launch(True)
            torch.cuda.synchronize()
            ms_plain = float(triton.testing.do_bench(lambda: launch(False), warmup=5, rep=40, return_mode="median"))
            ms_stamped = float(triton.testing.do_bench(lambda: launch(True), warmup=5, rep=40, return_mode="median"))
            row = dict(M=M, N=n, K=kk, BN=bn, BK=bk, WARPS=warps, STAGES=stages, ctas=ctas, ms_plain=f"{ms_plain:.5f}",
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
                st = stamps.view(ctas, trips).cpu().tolist()
                gt = times.view(ctas, trips).cpu().tolist()
                sm = sms.cpu().tolist()
                for pid in range(ctas):
                    if GRID:
                        steady = gt[pid][PROLOGUE:]
                        steps = sorted(b - a for a, b in zip(steady, steady[1:]))
                        zw.writerow([n, kk, bn, bk, warps, stages, pid, sm[pid], gt[pid][0], gt[pid][-1],
                                     f"{(steady[-1] - steady[0]) / (len(steady) - 1):.1f}", steps[len(steps) // 2]])
                        continue
                    for k, (clk, ns) in enumerate(zip(st[pid], gt[pid])):
                        zw.writerow([n, bn, warps, stages, rep, pid, sm[pid], k, clk, ns])
            zf.flush()
            del A, B, C, stamps, times, sms
        except Exception as e:      # one configuration that fails leaves the others
            log("failed", n, kk, bn, bk, warps, stages, repr(e)[:400])
    tf.close()
    zf.close()
    run.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
