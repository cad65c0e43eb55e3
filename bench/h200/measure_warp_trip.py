#!/usr/bin/env python3
"""H200: the round of r co-resident warp-mma k-loop CTAs from L2 (tfx.analysis.warp_trip).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 WTRIP_DEADLINE_S=100 python3 bench/h200/measure_warp_trip.py OUTDIR

The physical claim behind the 'warp-mma trip' term (docs/analysis.md, section 8): on the warp
mma (mma.sync: 2-warp CTAs, BM < 64) the warps issue the mma themselves and then the next stage's
cp.async copies, so a CTA's trip is its issue time then its copies on the SM's shared load path,
in series, and r resident CTAs take turns at both (a closed queue). Its prediction for the
gemm_fp8 k-loop of 64x128x64 on 2 warps: 602, 728, 1,008, 1,048 ns a round at r = 1..4 CTAs a SM,
where the engines' max (the busiest sub-partition's warps, the load path's copies) gives 433,
433, 865, 865 ns.

One Triton kernel, the k-loop of kernels/gemm_fp8.tile (A [BM, K] and BT [BN, K] fp8, K-major,
tl.dot of A and BT^T into f32, Triton 3.6.0: the warp mma at 2 warps or BM < 64, its operands
promoted to f16), each CTA reading its own tiles (block pid % 264) with the k index wrapping
every WRAP = 4 trips, so every byte comes from L2 (264 blocks of at most 96 KiB: under 26 MB).
Grids of 132 x r CTAs for r = 1.. the occupancy (one wave: %smid recorded, `max_per_sm` the most
CTAs any SM held), two trip counts (64 and 320): ns_per_round = (t320 - t64) / 256 (launch,
fill and epilogue cancel). Output: warp_trip.csv, log.txt. Timing: triton.testing.do_bench median.
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
import device_log  # noqa: E402  (bench/h200, the script's own folder)

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("WTRIP_DEADLINE_S", "100"))
WRAP = 4
TRIPS = (64, 320)
BLOCKS = 264
SMS = 132

# (BM, BN, BK, warps, stages, max CTAs a SM to try): the held-out warp-mma classes
CONFIGS = [
    (64, 128, 64, 2, 4, 4),     # 8192x8192x4096 -17.2% before the term
    (64, 64, 64, 2, 4, 6),      # -17.0%
    (256, 32, 64, 2, 4, 4),     # -28.3%
    (64, 32, 64, 2, 4, 10),     # the load path saturates at 10 (+1.8% before, +7.9% after)
    (16, 64, 128, 8, 5, 5),     # run5 32x14336x4096's first pick, -31.3%
]


def log(*a):
    device_log.log(OUT, T0, *a)


@triton.jit
def kloop_kernel(a_ptr, b_ptr, c_ptr, sm_ptr, trips, K, NB, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr, WRAP_T: tl.constexpr):
    pid = tl.program_id(0)
    blk = pid % NB
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + blk * BM * K + offs_m[:, None] * K + offs_k[None, :]
    b_base = b_ptr + blk * BN * K + offs_n[:, None] * K + offs_k[None, :]
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
    a = torch.randn((BLOCKS * bm, k), device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn((BLOCKS * bn, k), device="cuda").to(torch.float8_e4m3fn)
    c = torch.empty(ctas * bm * bn, device="cuda", dtype=torch.bfloat16)
    sm = torch.full((ctas,), -1, device="cuda", dtype=torch.int32)
    return a, b, c, sm


def launch(cfg, ctas, bufs, trips, warm=False):
    bm, bn, bk, w, st = cfg[:5]
    a, b, c, sm = bufs
    args = (a, b, c, sm, trips, a.shape[1], BLOCKS)
    kw = dict(BM=bm, BN=bn, BK=bk, WRAP_T=WRAP, num_warps=w, num_stages=st)
    if warm:
        return kloop_kernel.warmup(*args, grid=(ctas,), **kw)
    return kloop_kernel[(ctas,)](*args, **kw)


COLS = ["BM", "BN", "BK", "WARPS", "STAGES", "r", "ctas", "sms_used", "max_per_sm", "us_short", "us_long",
        "ns_per_round", "regs", "spills", "smem_bytes", "status"]


def run_one(w, cfg, r):
    bm, bn, bk, wp, st = cfg[:5]
    ctas = SMS * r
    row = dict(BM=bm, BN=bn, BK=bk, WARPS=wp, STAGES=st, r=r, ctas=ctas)
    try:
        bufs = make(bm, bn, bk, ctas)
        k = launch(cfg, ctas, bufs, TRIPS[0])
        torch.cuda.synchronize()
        ids = bufs[3].tolist()
        per = {}
        for s in ids:
            per[s] = per.get(s, 0) + 1
        t = [triton.testing.do_bench(lambda: launch(cfg, ctas, bufs, n), warmup=3, rep=15, return_mode="median")
             for n in TRIPS]
        row.update(sms_used=len(per), max_per_sm=max(per.values()), us_short=round(t[0] * 1e3, 3),
                   us_long=round(t[1] * 1e3, 3), ns_per_round=round((t[1] - t[0]) * 1e6 / (TRIPS[1] - TRIPS[0]), 2),
                   regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
    except Exception as e:
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        log(traceback.format_exc()[-400:])
    w.writerow(row)
    log({k: row.get(k) for k in ("BM", "BN", "BK", "WARPS", "STAGES", "r", "sms_used", "max_per_sm",
                                 "ns_per_round", "regs", "status")})


def main():
    os.makedirs(OUT, exist_ok=True)
    log("device", torch.cuda.get_device_name(0), "SMs", torch.cuda.get_device_properties(0).multi_processor_count,
        "torch", torch.__version__, "triton", triton.__version__)
    smi = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.limit,driver_version", "--format=csv"]
    try:
        log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    f = open(os.path.join(OUT, "warp_trip.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    plan = [(c, r) for c in CONFIGS for r in range(1, c[5] + 1)]
    for i, (cfg, r) in enumerate(plan):
        if time.time() - T0 > DEADLINE_S:
            log(f"deadline: stopping after {i} of {len(plan)} runs")
            break
        run_one(w, cfg, r)
        f.flush()
    f.close()
    log("done")


if __name__ == "__main__":
    main()
