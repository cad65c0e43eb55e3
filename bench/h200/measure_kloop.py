#!/usr/bin/env python3
"""H200: the k-loop of a Triton-tiled GEMM with its memory made simple (issue 15, small-M GEMMs).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_kloop.py OUTDIR

One Triton kernel, the k-loop of kernels/gemm.tile (tl.load of an A [BM, BK] and a B [BK, BN]
tile per trip, tl.dot into an f32 accumulator, num_stages = STAGES: Triton's software pipeline of
cp.async copies), with the addresses chosen so that each question has one answer:

  variant   CTAs  A rows read by CTA j      B columns read by CTA j   K wraps at    data lives in
  single    1     0 .. BM                   0 .. BN                   KRES_L2       L2 (after the first pass)
  shared    132   0 .. BM (all the same)    j*BN ..                   KRES_L2       L2; every SM reads the same A tile (small-M GEMMs)
  private   132   j*BM ..                   j*BN ..                   KRES_L2       L2; no two SMs read the same line
  dram      132   j*BM ..                   j*BN ..                   no wrap       DRAM (each byte read once)

ns per trip = kernel time / trips (one CTA per SM: every SM runs the same trips). With S stages,
S-1 tiles are in flight per CTA: Little's law gives the round trip one tile's load takes,
(S-1) x ns per trip, when the trip is latency-bound; bytes per trip / ns per trip is the SM's
attained bandwidth. `single` has no other SM loading: its round trip is the pipeline's own
chain (cp.async issue, wait, barrier, mma) at the unloaded latency.

Output: kloop.csv (one row per config x variant), log.txt. Timing: triton.testing.do_bench
median, L2 cleared before each timed run (the L2 variants wrap K so that all but the first
KRES_L2 / BK trips hit L2).
"""
import csv
import os
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
K_TOTAL = 16384          # elements of K each CTA walks
KRES_L2 = 512            # K wraps here for the L2 variants: A 132 x BM x 512 x 2 B <= 17 MB, B <= 35 MB
DEADLINE_S = float(os.environ.get("KLOOP_DEADLINE_S", "420"))


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


@triton.jit
def kloop_kernel(a_ptr, b_ptr, c_ptr, K, KRES, a_rows_per_cta, b_cols_per_cta, lda, ldb,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + (pid * a_rows_per_cta + offs_m[:, None]).to(tl.int64) * lda + offs_k[None, :]
    b_base = b_ptr + offs_k[:, None].to(tl.int64) * ldb + pid * b_cols_per_cta + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        # the wrap hides the offset's alignment from Triton's axis analysis: without the hint
        # A's load is 2-byte aligned, too narrow for cp.async, and is not pipelined
        kk = tl.multiple_of((k * BK) % KRES, BK)
        a = tl.load(a_base + kk)
        b = tl.load(b_base + kk.to(tl.int64) * ldb)
        acc = tl.dot(a, b, acc)
    offs_cm = pid * BM + offs_m
    tl.store(c_ptr + offs_cm[:, None] * BN + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


# (BM, BN, BK, WARPS): the small-M rows of issue15 (128x4096x4096 and friends) and two big tiles
TILES = [(128, 32, 32, 8), (128, 32, 128, 8), (64, 64, 32, 4), (64, 128, 64, 4), (16, 64, 64, 4),
         (32, 64, 128, 2), (128, 128, 64, 8), (64, 256, 32, 8)]
STAGES = [2, 3, 4, 5]
VARIANTS = ["single", "shared", "private", "dram"]


def buffers(bm, bn, variant):
    ctas = 1 if variant == "single" else SMS
    kres = K_TOTAL if variant == "dram" else KRES_L2
    a_rows = bm if variant in ("single", "shared") else bm * ctas
    a = torch.randn(a_rows, kres, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(kres, bn * ctas, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(bm * ctas, bn, device="cuda", dtype=torch.bfloat16)
    return ctas, kres, a, b, c, (0 if variant in ("single", "shared") else bm), bn


def main():
    log("device", torch.cuda.get_device_name(0), "SMs", SMS, "torch", torch.__version__, "triton", triton.__version__)
    rows = []
    f = open(os.path.join(OUT, "kloop.csv"), "w", newline="")
    cols = ["variant", "BM", "BN", "BK", "WARPS", "STAGES", "ctas", "trips", "bytes_per_trip", "kernel_us",
            "ns_per_trip", "bytes_per_ns_per_sm", "little_latency_ns", "regs", "spills", "smem_bytes", "status"]
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()
    for bm, bn, bk, warps in TILES:
        for st in STAGES:
            for variant in VARIANTS:
                if time.time() - T0 > DEADLINE_S:
                    log("deadline: stopping")
                    f.close()
                    return
                row = dict(variant=variant, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st)
                try:
                    ctas, kres, a, b, c, arows, bcols = buffers(bm, bn, variant)
                    trips = K_TOTAL // bk

                    def run():
                        return kloop_kernel[(ctas,)](a, b, c, K_TOTAL, kres, arows, bcols, a.stride(0), b.stride(0),
                                                     BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=st)
                    k = run()
                    torch.cuda.synchronize()
                    ms = triton.testing.do_bench(run, warmup=10, rep=40, return_mode="median")
                    per_trip = ms * 1e6 / trips
                    tile = (bm * bk + bk * bn) * 2
                    row.update(ctas=ctas, trips=trips, bytes_per_trip=tile, kernel_us=round(ms * 1e3, 3),
                               ns_per_trip=round(per_trip, 2), bytes_per_ns_per_sm=round(tile / per_trip, 2),
                               little_latency_ns=round((st - 1) * per_trip, 1), regs=k.n_regs,
                               spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
                    del a, b, c
                except Exception as e:  # one config failing must not stop the rest
                    row.update(status="error: " + repr(e)[:160].replace("\n", " "))
                    log(traceback.format_exc()[-400:])
                w.writerow(row)
                f.flush()
                log(row)
    f.close()
    log("done")


if __name__ == "__main__":
    main()
