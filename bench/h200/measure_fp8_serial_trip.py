#!/usr/bin/env python3
"""H200: the trip of an fp8 warpgroup-mma k-loop whose wgmma ptxas serializes, against one it pipelines.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_fp8_serial_trip.py OUTDIR

The physical fact behind the gemm_fp8 BN = 256, 8-warp rows (docs/analysis.md, "serialized
wgmma"): Triton 3.6.0's ttgir pipelines every fp8 tl.dot (warp_group_dot isAsync, one wgmma
group in flight: warp_group_dot_wait pendings = 1), but for gemm_fp8 (A and B^T K-major) with
BN = 256 on 8 warps ptxas reports C7515 ("wgmma.mma_async instructions are serialized due to non
wgmma instructions defining accumulator registers of a wgmma between start and end of the
pipeline stage") and its SASS waits for each QGMMA to finish before issuing the next
(WARPGROUP.DEPBAR.LE gsb0, 0x0 after every QGMMA), where other tiles issue a trip's QGMMAs back
to back and wait with gsb0, 0x1 (CPU compile for sm_90, bench/h200/measure_spill_sass.py's
compile_cpu). How much a serialized trip costs is measured here.

One Triton kernel, the k-loop of kernels/gemm_fp8.tile (A [BM, K] and BT [BN, K] fp8, K-major,
tl.dot of A and BT^T into f32), every CTA reading the same tiles with the k index wrapping every
WRAP = 4 trips (L2-resident: the trip's bytes come from L2, not DRAM). Pairs of configurations of
equal flops a trip: serialized (BN = 256 on 8 warps) and pipelined (BM and BN swapped, or 4 warps).
Each on 1 CTA (one SM) and on 132 CTAs (one per SM, %smid recorded), at two trip counts (64 and
320): ns_per_trip = (t320 - t64) / 256, so launch, fill and epilogue cancel. `serialized` is read
from the compiled SASS where the runtime can disassemble it (QGMMA count and gsb0, 0x0 waits).
Output: fp8_serial_trip.csv, log.txt. Timing: triton.testing.do_bench median.
"""
import csv
import os
import re
import subprocess
import sys
import time
import traceback

import torch
import triton
import triton.language as tl
import device_log  # noqa: E402  (bench/h200, the script's own folder)

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("FP8SER_DEADLINE_S", "100"))
WRAP = 4
TRIPS = (64, 320)

# (BM, BN, BK, warps, stages): serialized by ptxas (BN 256 on 8 warps) and their pipelined peers
CONFIGS = [
    (128, 256, 64, 8, 3), (256, 128, 64, 8, 3),
    (128, 256, 128, 8, 3), (256, 128, 128, 8, 3),
    (128, 256, 32, 8, 4), (256, 128, 32, 8, 4),
    (64, 256, 64, 8, 3), (128, 128, 64, 8, 3), (64, 256, 64, 4, 3),
    (64, 256, 128, 8, 3), (128, 128, 128, 8, 3), (64, 256, 128, 4, 3),
    (128, 128, 64, 4, 3),
]
CTAS = [1, 132]


def log(*a):
    device_log.log(OUT, T0, *a)


@triton.jit
def kloop_kernel(a_ptr, b_ptr, c_ptr, sm_ptr, trips, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 WRAP_T: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_base = b_ptr + offs_n[:, None] * K + offs_k[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, trips):
        kk = tl.multiple_of((k % WRAP_T) * BK, BK)
        a = tl.load(a_base + kk)
        b = tl.load(b_base + kk)
        acc = tl.dot(a, tl.trans(b), acc)
    c = acc.to(tl.bfloat16)
    tl.store(c_ptr + pid * BM * BN + offs_m[:, None] * BN + offs_n[None, :], c)
    smid = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pid], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(sm_ptr + pid, smid)


def make(bm, bn, bk, ctas):
    k = WRAP * bk
    a = torch.randn((bm, k), device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn((bn, k), device="cuda").to(torch.float8_e4m3fn)
    c = torch.empty(ctas * bm * bn, device="cuda", dtype=torch.bfloat16)
    sm = torch.full((ctas,), -1, device="cuda", dtype=torch.int32)
    return a, b, c, sm


def launch(cfg, ctas, bufs, trips, warm=False):
    bm, bn, bk, w, st = cfg
    a, b, c, sm = bufs
    args = (a, b, c, sm, trips, a.shape[1])
    kw = dict(BM=bm, BN=bn, BK=bk, WRAP_T=WRAP, num_warps=w, num_stages=st)
    if warm:
        return kloop_kernel.warmup(*args, grid=(ctas,), **kw)
    return kloop_kernel[(ctas,)](*args, **kw)


def _compile_worker(cfg):
    t = time.time()
    try:
        launch(cfg, 1, make(*cfg[:3], 1), TRIPS[0], warm=True)
        return cfg, "ok", time.time() - t, ""
    except Exception as e:
        return cfg, "error", time.time() - t, repr(e)[:300]


def precompile(cfgs, budget_s=60):
    import multiprocessing as mp
    nproc = max(1, min(len(cfgs), (os.cpu_count() or 4) - 2, 14))
    log(f"precompiling {len(cfgs)} kernels in {nproc} processes")
    t = time.time()
    pool = mp.get_context("spawn").Pool(nproc)
    bad = set()
    try:
        it = pool.imap_unordered(_compile_worker, cfgs, chunksize=1)
        for _ in range(len(cfgs)):
            cfg, st, dt, err = it.next(timeout=max(1, budget_s - (time.time() - t)))
            if st != "ok":
                bad.add(cfg)
                log("  compile error", cfg, err)
        log(f"  precompile done in {time.time() - t:.1f}s")
    except Exception as e:
        log("  precompile stopped:", repr(e)[:200])
    finally:
        pool.terminate()
        pool.join()
    return bad


def sass_counts(k):
    """(QGMMA instructions, WARPGROUP.DEPBAR.LE gsb0, 0x0 waits) in the kernel's SASS, or ('', '')."""
    try:
        sass = k.asm["sass"]
    except Exception:
        return "", ""
    return len(re.findall(r"QGMMA\.", sass)), len(re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x0", sass))


COLS = ["BM", "BN", "BK", "WARPS", "STAGES", "flop_per_trip", "ctas", "sms_used", "us_short", "us_long",
        "ns_per_trip", "flop_per_ns_per_sm", "regs", "spills", "smem_bytes", "qgmma_sass", "waits_gsb0_0",
        "status"]


def run_one(w, cfg, ctas):
    bm, bn, bk, wp, st = cfg
    row = dict(BM=bm, BN=bn, BK=bk, WARPS=wp, STAGES=st, flop_per_trip=2 * bm * bn * bk, ctas=ctas)
    try:
        bufs = make(bm, bn, bk, ctas)
        k = launch(cfg, ctas, bufs, TRIPS[0])
        torch.cuda.synchronize()
        ids = bufs[3].tolist()
        t = [triton.testing.do_bench(lambda: launch(cfg, ctas, bufs, n), warmup=3, rep=15, return_mode="median")
             for n in TRIPS]
        per_trip = (t[1] - t[0]) * 1e6 / (TRIPS[1] - TRIPS[0])
        q, waits = sass_counts(k)
        row.update(sms_used=len(set(ids)), us_short=round(t[0] * 1e3, 3), us_long=round(t[1] * 1e3, 3),
                   ns_per_trip=round(per_trip, 2), flop_per_ns_per_sm=round(2 * bm * bn * bk / per_trip, 1),
                   regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared, qgmma_sass=q,
                   waits_gsb0_0=waits, status="ok")
    except Exception as e:
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        log(traceback.format_exc()[-400:])
    w.writerow(row)
    log({k: row.get(k) for k in ("BM", "BN", "BK", "WARPS", "STAGES", "ctas", "sms_used", "ns_per_trip",
                                 "regs", "qgmma_sass", "waits_gsb0_0", "status")})


def main():
    os.makedirs(OUT, exist_ok=True)
    log("device", torch.cuda.get_device_name(0), "SMs", torch.cuda.get_device_properties(0).multi_processor_count,
        "torch", torch.__version__, "triton", triton.__version__)
    smi = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.limit,driver_version", "--format=csv"]
    try:
        log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    bad = precompile(CONFIGS)
    f = open(os.path.join(OUT, "fp8_serial_trip.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    plan = [(c, n) for n in CTAS for c in CONFIGS]
    for i, (cfg, n) in enumerate(plan):
        if time.time() - T0 > DEADLINE_S:
            log(f"deadline: stopping after {i} of {len(plan)} runs")
            break
        if cfg in bad:
            continue
        run_one(w, cfg, n)
        f.flush()
    f.close()
    try:
        log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    log("done")


if __name__ == "__main__":
    main()
