#!/usr/bin/env python3
"""H200: the tensor rate of one SM against how many SMs run warpgroup mmas, and the trip of a
2- and 3-stage k-loop of large tiles from L2 on 78 and 132 SMs (issue 15, persistent GEMM).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 TCLOCK_DEADLINE_S=100 python3 bench/h200/measure_tensor_clock.py OUTDIR
    python3 bench/h200/measure_tensor_clock.py OUTDIR --cpu     # compile only (sm_90, no GPU)

Two physical facts, no GEMM configuration of the accuracy campaigns is timed:

1. ``tensor``: N CTAs, one per SM (N = 132, 114, 78, 66, 33, 1), each loads one A [BM, BK] and
   one B [BK, BN] bf16 tile (random data) and then runs ``acc = tl.dot(a, b, acc)`` ITERS times
   (Triton: the warpgroup mma, both operands from shared memory, no load in the loop).
   %clock64 and %globaltimer around the loop in every CTA, %smid; kernel time by CUDA events.
   Columns: flop_per_ns_per_sm (the CTA's flops / its globaltimer span, median over CTAs),
   clock_ghz (clock64 cycles / globaltimer ns, median over CTAs), flop_per_cycle_per_sm.
   The question: does one SM's tensor rate rise when fewer SMs draw power (the persistent
   GEMM's NUM_SMS = 78 and 114 against 132)?

2. ``trip``: the k-loop of kernels/gemm.tile (bench/h200/measure_kloop.py's kernel, K wrapping
   at 512 so that every byte after the first pass comes from L2; every CTA reads the same A
   rows and its own B columns) at large tiles, 2 and 3 stages, on N = 78 and 132 CTAs (one per
   SM): ns per trip = kernel time / trips. The question: what one trip of a shallow pipeline of
   a large tile costs when nothing comes from DRAM.

Writes tensor_clock.csv, kloop_big.csv, log.txt.
"""
import csv
import os
import statistics
import sys
import time
import traceback

import triton
import triton.language as tl
from clock_stamps import clock64 as _clock, globaltimer as _timer, smid as _smid  # noqa: E402

from common import median_event_ms  # noqa: E402  (bench/h200/common.py)

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
CPU = "--cpu" in sys.argv
DEADLINE_S = float(os.environ.get("TCLOCK_DEADLINE_S", "100"))
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "log.txt" if not CPU else "cpu_log.txt"), "w")

# (BM, BN, BK, WARPS) of the tensor part: a 2-warpgroup m64n256 tile and a 1-warpgroup m64n128 one
MMA_TILES = [(128, 256, 64, 8), (128, 128, 64, 4), (256, 128, 64, 8)]
MMA_SMS = [132, 114, 78, 66, 33, 1]
MMA_KERNEL_NS = 4e6          # each kernel ~4 ms of mma
# (BM, BN, BK, WARPS, STAGES) of the trip part
TRIP_TILES = [(256, 128, 128, 8, 2), (128, 128, 128, 8, 2), (128, 128, 128, 8, 3), (128, 128, 128, 4, 3),
              (256, 128, 64, 8, 2), (256, 128, 64, 8, 3), (128, 256, 32, 8, 2), (128, 256, 32, 8, 5),
              (128, 128, 64, 8, 2), (128, 128, 64, 8, 3), (64, 256, 128, 4, 2), (256, 64, 128, 8, 2),
              (64, 64, 128, 4, 2), (128, 64, 32, 4, 2)]
TRIP_SMS = [78, 132]
# TCLOCK_TRIP_SET=s29 (session 29): the 2-stage 128x256 tiles the model prices 15-34% over the
# copy-behind-mma sum (docs/analysis.md 8: what would decide it is a 2-stage row of 128x256x64 and
# 128x256x128), with their deeper pipelines and two tiles of the table above re-timed as controls;
# TCLOCK_PARTS=trip skips the tensor part.
if os.environ.get("TCLOCK_TRIP_SET") == "s29":
    TRIP_TILES = [(128, 256, 64, 8, 2), (128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (128, 256, 128, 8, 2),
                  (128, 256, 32, 8, 2), (256, 128, 64, 8, 2), (128, 128, 64, 8, 2), (256, 128, 128, 8, 2)]
PARTS = os.environ.get("TCLOCK_PARTS", "tensor,trip").split(",")
K_TOTAL = 16384
KRES_L2 = 512


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


@triton.jit
def mma_loop(a_ptr, b_ptr, c_ptr, t_ptr, ITERS, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a = tl.load(a_ptr + offs_m[:, None] * BK + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * BN + offs_n[None, :])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    first = tl.sum(a.to(tl.float32), 1)
    dep = first.to(tl.int32, bitcast=True)
    g0 = _timer(dep)
    c0 = _clock(dep)
    for i in range(ITERS):
        acc = tl.dot(a, b, acc)
    s = tl.sum(acc, 1)
    dep1 = s.to(tl.int32, bitcast=True)
    g1 = _timer(dep1)
    c1 = _clock(dep1)
    sm = _smid(dep1)
    tl.store(c_ptr + pid * BM + offs_m, s)
    r = tl.arange(0, BM)
    one = r == 0
    tl.store(t_ptr + pid * 8 + 0 + r * 0, g0, mask=one)
    tl.store(t_ptr + pid * 8 + 1 + r * 0, g1, mask=one)
    tl.store(t_ptr + pid * 8 + 2 + r * 0, c0, mask=one)
    tl.store(t_ptr + pid * 8 + 3 + r * 0, c1, mask=one)
    tl.store(t_ptr + pid * 8 + 4 + r * 0, sm.to(tl.int64), mask=one)


@triton.jit
def kloop_kernel(a_ptr, b_ptr, c_ptr, K, KRES, b_cols_per_cta, lda, ldb,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # bench/h200/measure_kloop.py's k-loop, the `shared` pattern: every CTA the same A rows
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + offs_m[:, None].to(tl.int64) * lda + offs_k[None, :]
    b_base = b_ptr + offs_k[:, None].to(tl.int64) * ldb + pid * b_cols_per_cta + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = tl.multiple_of((k * BK) % KRES, BK)
        a = tl.load(a_base + kk)
        b = tl.load(b_base + kk.to(tl.int64) * ldb)
        acc = tl.dot(a, b, acc)
    offs_cm = pid * BM + offs_m
    tl.store(c_ptr + offs_cm[:, None] * BN + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


def compile_cpu(kind, p):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    if kind == "tensor":
        bm, bn, bk, w = p
        fn, st = mma_loop, 1
        sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*fp32", "t_ptr": "*i64", "ITERS": "i32"}
        consts = dict(BM=bm, BN=bn, BK=bk)
        div = ("a_ptr", "b_ptr", "c_ptr", "t_ptr")
    else:
        bm, bn, bk, w, st = p
        fn = kloop_kernel
        sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "K": "i32", "KRES": "i32",
               "b_cols_per_cta": "i32", "lda": "i32", "ldb": "i32"}
        consts = dict(BM=bm, BN=bn, BK=bk)
        div = ("a_ptr", "b_ptr", "c_ptr", "K", "KRES", "b_cols_per_cta", "lda", "ldb")
    names = fn.arg_names
    attrs = {(names.index(x),): [["tt.divisibility", 16]] for x in div}
    sig = {key: sig.get(key, "constexpr") for key in names}
    return triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs),
                          target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))


def compiled_gpu(kind, p):
    import torch
    if kind == "tensor":
        bm, bn, bk, w = p
        a = torch.zeros(bm, bk, device="cuda", dtype=torch.bfloat16)
        b = torch.zeros(bk, bn, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(bm, device="cuda", dtype=torch.float32)
        t = torch.zeros(8, device="cuda", dtype=torch.int64)
        return mma_loop.warmup(a, b, c, t, 16, BM=bm, BN=bn, BK=bk, num_warps=w, num_stages=1, grid=(1,))
    bm, bn, bk, w, st = p
    a = torch.zeros(bm, KRES_L2, device="cuda", dtype=torch.bfloat16)
    b = torch.zeros(KRES_L2, bn, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(bm, bn, device="cuda", dtype=torch.bfloat16)
    return kloop_kernel.warmup(a, b, c, K_TOTAL, KRES_L2, 0, KRES_L2, bn, BM=bm, BN=bn, BK=bk,
                               num_warps=w, num_stages=st, grid=(1,))


def _compile_worker(job):
    kind, p = job
    t = time.time()
    try:
        k = compile_cpu(kind, p) if CPU else compiled_gpu(kind, p)
        if CPU:
            import subprocess
            import tempfile
            cub = os.path.join(tempfile.gettempdir(), f"tclock_{kind}_{'_'.join(map(str, p))}.cubin")
            open(cub, "wb").write(k.asm["cubin"])
            tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
            sass = subprocess.run([tool, "-sass", cub], capture_output=True, text=True).stdout
            name = f"{kind}_{'x'.join(map(str, p))}.sass"
            open(os.path.join(OUT, name), "w").write(sass)
        return job, "ok", time.time() - t, k.metadata.shared
    except Exception as e:
        return job, "error", time.time() - t, repr(e)[:300]


def timed(fn, n=5):
    """The median CUDA-event ms of n calls after one warm-up (common.median_event_ms)."""
    return median_event_ms(fn, n)


def tensor_part(w):
    import torch
    for bm, bn, bk, warps in MMA_TILES:
        flops = 2 * bm * bn * bk
        iters = int(MMA_KERNEL_NS * 6000 / flops)
        a = torch.randn(bm, bk, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(bk, bn, device="cuda", dtype=torch.bfloat16)
        for n in MMA_SMS:
            if time.time() - T0 > DEADLINE_S:
                log("deadline: stopping the tensor part")
                return
            row = dict(BM=bm, BN=bn, BK=bk, WARPS=warps, ctas=n, iters=iters)
            try:
                c = torch.empty(n * bm, device="cuda", dtype=torch.float32)
                t = torch.zeros(n * 8, device="cuda", dtype=torch.int64)

                def go():
                    mma_loop[(n,)](a, b, c, t, iters, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=1)
                ms = timed(go)
                stamps = t.view(n, 8).cpu().tolist()
                spans = [s[1] - s[0] for s in stamps]
                cycles = [s[3] - s[2] for s in stamps]
                sms = {s[4] for s in stamps}
                span = statistics.median(spans)
                ghz = statistics.median([cy / sp for cy, sp in zip(cycles, spans) if sp > 0])
                row.update(sms_used=len(sms), kernel_ms=round(ms, 4), loop_ns_median=span,
                           loop_ns_max=max(spans), clock_ghz=round(ghz, 4),
                           flop_per_ns_per_sm=round(iters * flops / span, 1),
                           flop_per_cycle_per_sm=round(iters * flops / statistics.median(cycles), 1),
                           status="ok")
            except Exception as e:
                row.update(status="error: " + repr(e)[:160].replace("\n", " "))
                log(traceback.format_exc()[-400:])
            w.writerow(row)
            log(row)


def trip_part(w):
    import torch
    for bm, bn, bk, warps, st in TRIP_TILES:
        for n in TRIP_SMS:
            if time.time() - T0 > DEADLINE_S:
                log("deadline: stopping the trip part")
                return
            row = dict(BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st, ctas=n)
            try:
                a = torch.randn(bm, KRES_L2, device="cuda", dtype=torch.bfloat16)
                b = torch.randn(KRES_L2, bn * n, device="cuda", dtype=torch.bfloat16)
                c = torch.empty(bm * n, bn, device="cuda", dtype=torch.bfloat16)
                trips = K_TOTAL // bk

                def go():
                    kloop_kernel[(n,)](a, b, c, K_TOTAL, KRES_L2, bn, a.stride(0), b.stride(0), BM=bm, BN=bn,
                                       BK=bk, num_warps=warps, num_stages=st)
                ms = timed(go)
                tile = (bm * bk + bk * bn) * 2
                per_trip = ms * 1e6 / trips
                row.update(trips=trips, bytes_per_trip=tile, kernel_us=round(ms * 1e3, 3),
                           ns_per_trip=round(per_trip, 2), bytes_per_ns_per_sm=round(tile / per_trip, 2),
                           flop_per_ns_per_sm=round(2 * bm * bn * bk / per_trip, 1), status="ok")
            except Exception as e:
                row.update(status="error: " + repr(e)[:160].replace("\n", " "))
                log(traceback.format_exc()[-400:])
            w.writerow(row)
            log(row)


def main():
    import multiprocessing as mp
    jobs = [("tensor", p) for p in MMA_TILES if "tensor" in PARTS] + [("trip", p) for p in TRIP_TILES]
    nproc = max(1, min(len(jobs), (os.cpu_count() or 4) - 2, 14))
    log(f"compiling {len(jobs)} kernels in {nproc} processes", "(cpu, sm_90)" if CPU else "")
    with mp.get_context("spawn").Pool(nproc) as pool:
        for job, st, dt, info in pool.imap_unordered(_compile_worker, jobs):
            log(job, st, f"{dt:.1f}s", "shared", info)
    if CPU:
        return
    import subprocess
    import torch
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    smi = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,power.limit", "--format=csv"]
    log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    with open(os.path.join(OUT, "tensor_clock.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["BM", "BN", "BK", "WARPS", "ctas", "iters", "sms_used", "kernel_ms",
                                          "loop_ns_median", "loop_ns_max", "clock_ghz", "flop_per_ns_per_sm",
                                          "flop_per_cycle_per_sm", "status"])
        w.writeheader()
        if "tensor" in PARTS:
            tensor_part(w)
    log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    with open(os.path.join(OUT, "kloop_big.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["BM", "BN", "BK", "WARPS", "STAGES", "ctas", "trips", "bytes_per_trip",
                                          "kernel_us", "ns_per_trip", "bytes_per_ns_per_sm", "flop_per_ns_per_sm",
                                          "status"])
        w.writeheader()
        trip_part(w)
    log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    log("done")


if __name__ == "__main__":
    main()
