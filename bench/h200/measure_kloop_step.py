#!/usr/bin/env python3
"""H200: is the load-trip floor's k-loop representative? Modulo addresses against stepped pointers.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_kloop_step.py OUTDIR

The load-trip floor (tfx/analysis/load_trip.py, pipeline.load_trip_overhead and
pipeline.sm_load_bandwidth_per_cycle) comes from bench/h200/measure_kloop.py, whose k-loop
re-derives its addresses every trip as ``a_base + (k * BK) % KRES``. The GEMM kernels the model
is judged on (bench/h200/triton_kernels.py matmul_kernel) step their pointers instead
(``a_ptrs += BLOCK_K * stride_ak``) and mask K (``offs_k < K - k * BLOCK_K``). l2_draw, which
steps, ran under the floor where kloop's single CTA is above it (docs/analysis.md section 8,
"below the load-trip floor"). This run times both loops in one process on the same buffers,
the same addresses and the same trips, so the ratio step / modulo is measured, not inferred:

  kernel   the loop body
  mod      measure_kloop.py's kloop_kernel: kk = multiple_of((k * BK) % KRES, BK); load a_base + kk, b_base + kk * ldb
  step     matmul_kernel's: load a_ptrs, b_ptrs masked by K - k * BK; a_ptrs += BK * stride_ak; b_ptrs += BK * stride_bk

  variant       CTAs  CTA j reads                          K (trips = K / BK)           kernels
  single_wrap   1     A rows 0..BM, B cols 0..BN           16384, wrapping at 512       mod (measure_kloop's `single`)
  single        1     A rows 0..BM, B cols 0..BN           16384, no wrap (KRES = K)    mod, step
  shared_wrap   132   A rows 0..BM, B cols j*BN            16384, wrapping at 512       mod (measure_kloop's `shared`)
  shared        132   A rows 0..BM, B cols (j % NB)*BN     K_LIN, no wrap               mod, step
  private_wrap  132   A rows j*BM, B cols j*BN             16384, wrapping at 512       mod (measure_kloop's `private`)
  private       132   A rows (j % NB)*BM, B cols (j % NB)*BN  K_LIN, no wrap            mod, step

A stepped pointer cannot wrap, so the no-wrap variants keep every byte in L2 by their size:
single's A and B are (BM + BN) x 16384 x 2 B <= 10.5 MB; the 132-CTA ones read NB = 16 distinct
blocks (NB is a multiple of 16 so that every launch shares one compiled kernel) of K_LIN, the
largest power of two <= 16384 with 16 x (BM + BN) x K_LIN x 2 B <= 24 MB. Timing: back-to-back
launches with the previous launch's bytes still in L2 (no flush, as measure_l2_draw.py), median
of 5 timings of n launches; ns_per_trip = kernel time / trips (launch gap and prologue included:
the same in both kernels of a pair).

Output: kloop_step.csv (one row per tile x stages x variant x kernel), log.txt, env.txt.
"""
import csv
import os
import subprocess
import sys
import time
import traceback

import torch
import triton
import triton.language as tl

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "log.txt"), "w")
SMS = torch.cuda.get_device_properties(0).multi_processor_count
K_TOTAL = 16384          # as measure_kloop.py
KRES_L2 = 512            # as measure_kloop.py
NB = 16                  # distinct blocks the no-wrap 132-CTA variants read
NB_ALL = 144             # >= 132 and a multiple of 16: pid % NB_ALL = pid (every CTA its own block)
FOOTPRINT = 24_000_000   # bytes the no-wrap 132-CTA variants keep in L2
DEADLINE_S = float(os.environ.get("KLOOP_DEADLINE_S", "85"))


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


@triton.jit
def kloop_mod_kernel(a_ptr, b_ptr, c_ptr, K, KRES, a_rows_per_cta, b_cols_per_cta, lda, ldb, nb,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # measure_kloop.py's kloop_kernel; CTA j reads block j % nb (nb >= ctas: block j, as there)
    pid = tl.program_id(0)
    blk = pid % nb
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + (blk * a_rows_per_cta + offs_m[:, None]).to(tl.int64) * lda + offs_k[None, :]
    b_base = b_ptr + offs_k[:, None].to(tl.int64) * ldb + blk * b_cols_per_cta + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = tl.multiple_of((k * BK) % KRES, BK)
        a = tl.load(a_base + kk)
        b = tl.load(b_base + kk.to(tl.int64) * ldb)
        acc = tl.dot(a, b, acc)
    offs_cm = pid * BM + offs_m
    tl.store(c_ptr + offs_cm[:, None] * BN + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def kloop_step_kernel(a_ptr, b_ptr, c_ptr, K, a_rows_per_cta, b_cols_per_cta, stride_am, stride_ak,
                      stride_bk, stride_bn, nb, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # triton_kernels.py matmul_kernel's address arithmetic and loop, line for line
    pid = tl.program_id(0)
    blk = pid % nb
    offs_am = blk * a_rows_per_cta + tl.arange(0, BM)
    offs_bn = blk * b_cols_per_cta + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    offs_cm = pid * BM + tl.arange(0, BM)
    offs_cn = tl.arange(0, BN)
    tl.store(c_ptr + offs_cm[:, None] * BN + offs_cn[None, :], acc.to(c_ptr.dtype.element_ty))


# measure_kloop.py's tiles (BM, BN, BK, WARPS)
TILES = [(128, 32, 32, 8), (128, 32, 128, 8), (64, 64, 32, 4), (64, 128, 64, 4), (16, 64, 64, 4),
         (32, 64, 128, 2), (128, 128, 64, 8), (64, 256, 32, 8)]
STAGES = [4, 3, 5]       # the floor was fitted over 3-5 stages; 4 first so a deadline keeps the middle


def k_lin(bm, bn):
    k = K_TOTAL
    while NB * (bm + bn) * k * 2 > FOOTPRINT:
        k //= 2
    return k


def buffers(bm, bn, variant):
    """(ctas, K, KRES, nb, a, b, c, a_rows_per_cta, b_cols_per_cta) of one variant."""
    ctas = 1 if variant.startswith("single") else SMS
    wrap = variant.endswith("_wrap")
    if variant.startswith("single"):
        k, nb, arows, bcols, na, nbb = K_TOTAL, NB_ALL, 0, 0, 1, 1
    elif wrap:
        k, nb = K_TOTAL, NB_ALL
        arows, bcols = (0, bn) if variant.startswith("shared") else (bm, bn)
        na, nbb = (1, ctas) if variant.startswith("shared") else (ctas, ctas)
    else:
        k, nb = k_lin(bm, bn), NB
        arows, bcols = (0, bn) if variant.startswith("shared") else (bm, bn)
        na, nbb = (1, NB) if variant.startswith("shared") else (NB, NB)
    extent = KRES_L2 if wrap else k
    a = torch.randn(na * bm, extent, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(extent, nbb * bn, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(ctas * bm, bn, device="cuda", dtype=torch.bfloat16)
    return ctas, k, (KRES_L2 if wrap else k), nb, a, b, c, arows, bcols


def timed(go):
    k = go()
    torch.cuda.synchronize()
    for _ in range(3):
        go()
    torch.cuda.synchronize()
    t0 = time.time()
    go()
    torch.cuda.synchronize()
    n = max(3, min(200, int(0.003 / max(time.time() - t0, 1e-6))))
    times = []
    for _ in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(n):
            go()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) / n)
    return k, sorted(times)[2]


def main():
    log("device", torch.cuda.get_device_name(0), "SMs", SMS, "torch", torch.__version__, "triton", triton.__version__)
    env = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.current.sm,clocks.current.memory,"
                          "power.limit", "--format=csv"], capture_output=True, text=True).stdout
    cols = ["variant", "kernel", "BM", "BN", "BK", "WARPS", "STAGES", "ctas", "nb", "K", "KRES", "trips",
            "bytes_per_trip", "kernel_us", "ns_per_trip", "regs", "spills", "smem_bytes", "status"]
    f = open(os.path.join(OUT, "kloop_step.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()
    plan = [("single_wrap", "mod"), ("single", "mod"), ("single", "step"), ("shared_wrap", "mod"),
            ("shared", "mod"), ("shared", "step"), ("private_wrap", "mod"), ("private", "mod"), ("private", "step")]
    for st in STAGES:
        for bm, bn, bk, warps in TILES:
            for variant, kern in plan:
                if time.time() - T0 > DEADLINE_S:
                    log("deadline: stopping")
                    f.close()
                    return env
                row = dict(variant=variant, kernel=kern, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st)
                try:
                    ctas, kt, kres, nb, a, b, c, arows, bcols = buffers(bm, bn, variant)
                    trips = kt // bk
                    if kern == "mod":
                        def go():
                            return kloop_mod_kernel[(ctas,)](a, b, c, kt, kres, arows, bcols, a.stride(0), b.stride(0),
                                                             nb, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=st)
                    else:
                        def go():
                            return kloop_step_kernel[(ctas,)](a, b, c, kt, arows, bcols, a.stride(0), 1, b.stride(0), 1,
                                                              nb, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=st)
                    k, ms = timed(go)
                    row.update(ctas=ctas, nb=nb, K=kt, KRES=kres, trips=trips, bytes_per_trip=(bm * bk + bk * bn) * 2,
                               kernel_us=round(ms * 1e3, 3), ns_per_trip=round(ms * 1e6 / trips, 2), regs=k.n_regs,
                               spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
                    del a, b, c
                except Exception as e:  # one config failing must not stop the rest
                    row.update(status="error: " + repr(e)[:160].replace("\n", " "))
                    log(traceback.format_exc()[-400:])
                w.writerow(row)
                f.flush()
                log({x: row.get(x) for x in ("variant", "kernel", "BM", "BN", "BK", "WARPS", "STAGES", "ns_per_trip",
                                             "smem_bytes", "status")})
    f.close()
    log("done")
    return env


if __name__ == "__main__":
    env_before = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.current.sm,"
                                 "clocks.current.memory,power.limit", "--format=csv"], capture_output=True, text=True).stdout
    env_after = main()
    clocks = subprocess.run(["nvidia-smi", "--query-gpu=clocks.current.sm,clocks.current.memory", "--format=csv"],
                            capture_output=True, text=True).stdout
    with open(os.path.join(OUT, "env.txt"), "w") as fe:
        fe.write(env_before + "at the end:\n" + clocks)
