#!/usr/bin/env python3
"""H200: DRAM streaming of a GEMM B operand by contiguous run length and layout (issue 15, fp8 M = 128).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_b_runs.py OUTDIR

The physical fact behind the gemm_fp8 128x14336x4096 finding (docs/analysis.md, "Not modelled:
fp8 at M = 128"): whether a k-loop that streams B from DRAM as many short contiguous pieces
(fp8 B^T [N, K], K-major: each trip reads BN rows of BK bytes, K bytes apart) gets the same
bandwidth and round trip as one that reads few long pieces (B [K, N] row-major: BK rows of
BN x elt bytes) at equal bytes per trip.

One Triton kernel, the k-loop of kernels/gemm.tile with a small M (bench/h200/measure_mlp.py's
`smallm` pattern): every CTA reads the same A [16, K] (from L2 after its first touch) and its
own BN columns of B from DRAM, tl.dot into f32, num_stages = STAGES, 4 warps, 64 trips a CTA.

  layout   B in memory   piece (contiguous bytes a tile row)   row stride
  fp8_nk   [N, K] fp8    BK                                     K bytes
  bf16_nk  [N, K] bf16   2 BK                                   2K bytes
  fp8_kn   [K, N] fp8    BN                                     N bytes
  bf16_kn  [K, N] bf16   2 BN                                   2N bytes

Each layout at pieces 32, 64, 128, 256 B and B bytes per trip 8 KiB and 16 KiB (so BN x BK
follows from piece and trip bytes), stages 2-4, on 1, 16 and 132 CTAs (one per SM: %smid is
recorded). fp8_nk at piece 64 and 8 KiB is the held-out rows' B tile (BN 128, BK 64, rows 4 KiB
apart). Variant `l2`: the same kernel with its k index wrapping every 16 trips (132 x 16 x 8 KiB
= 17 MB, L2-resident after the first 16 of 64 trips): the issue and L2 side of the same trip,
so dram minus l2 is what DRAM adds. Note fp8_kn's operand B needs a transpose in shared memory
for the fp8 mma on sm_90 (its issue side differs, docs/analysis.md "fp8 kn"): compare it with
its own l2 row.

Columns: ns_per_trip = kernel time / 64; dram_tb_s = B bytes of all CTAs / kernel time (A is
16 x BK x elt a trip from L2); implied_round_trip_ns = (STAGES - 1) x ns_per_trip (Little's law
with S - 1 tiles in flight); bytes_per_ns_per_sm = B bytes a trip / ns_per_trip.
Output: b_runs.csv, log.txt. Timing: triton.testing.do_bench median (L2 cleared before each run).
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
DEADLINE_S = float(os.environ.get("BRUNS_DEADLINE_S", "100"))
TRIPS = 64
L2_WRAP = 16
BM = 16
WARPS = 4


def log(*a):
    device_log.log(OUT, T0, *a)


@triton.jit
def bstream_kernel(a_ptr, b_ptr, c_ptr, sm_ptr, WRAP, lda, ldb, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, TRIPS: tl.constexpr, K_MAJOR: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = pid * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + offs_m[:, None] * lda + offs_k[None, :]
    if K_MAJOR:
        b_base = b_ptr + offs_n[:, None] * ldb + offs_k[None, :]      # [BN, BK], rows ldb apart
    else:
        b_base = b_ptr + offs_k[:, None] * ldb + offs_n[None, :]      # [BK, BN], rows ldb apart
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, TRIPS):
        kk = tl.multiple_of((k % WRAP) * BK, BK)
        a = tl.load(a_base + kk)
        if K_MAJOR:
            b = tl.trans(tl.load(b_base + kk))
        else:
            b = tl.load(b_base + kk * ldb)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + pid * BM * BN + offs_m[:, None] * BN + tl.arange(0, BN)[None, :], acc)
    smid = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pid], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(sm_ptr + pid, smid)


LAYOUTS = {"fp8_nk": (torch.float8_e4m3fn, 1, True), "bf16_nk": (torch.bfloat16, 2, True),
           "fp8_kn": (torch.float8_e4m3fn, 1, False), "bf16_kn": (torch.bfloat16, 2, False)}
PIECES = [32, 64, 128, 256]
TRIP_BYTES = [8192, 16384]
STAGES = [2, 3, 4]
CTAS = [1, 16, 132]


def tile(layout, piece, trip_bytes):
    """(BN, BK) of a B tile of trip_bytes whose rows are piece bytes long."""
    _, elt, kmajor = LAYOUTS[layout]
    if kmajor:
        return trip_bytes // piece, piece // elt
    return piece // elt, trip_bytes // piece


def shapes(layout, bn, bk, ctas):
    """(A, B) element shapes: K = TRIPS x BK, N = ctas x BN."""
    k, n = TRIPS * bk, ctas * bn
    return (BM, k), ((n, k) if LAYOUTS[layout][2] else (k, n))


def make(layout, bn, bk, ctas):
    dt = LAYOUTS[layout][0]
    ash, bsh = shapes(layout, bn, bk, ctas)
    a = torch.randn(ash, device="cuda").to(dt)
    b = torch.randn(bsh, device="cuda").to(dt)
    c = torch.empty(ctas * BM * bn, device="cuda", dtype=torch.float32)
    sm = torch.full((ctas,), -1, device="cuda", dtype=torch.int32)
    return a, b, c, sm


def launch(layout, bn, bk, st, ctas, bufs, wrap, warm=False):
    a, b, c, sm = bufs
    args = (a, b, c, sm, wrap, a.stride(0), b.stride(0))
    kw = dict(BM=BM, BN=bn, BK=bk, TRIPS=TRIPS, K_MAJOR=LAYOUTS[layout][2], num_warps=WARPS, num_stages=st)
    if warm:
        return bstream_kernel.warmup(*args, grid=(ctas,), **kw)
    return bstream_kernel[(ctas,)](*args, **kw)


def configs():
    for layout in LAYOUTS:
        for tb in TRIP_BYTES:
            for p in PIECES:
                bn, bk = tile(layout, p, tb)
                for st in STAGES:
                    yield layout, p, tb, bn, bk, st


def _compile_worker(cfg):
    layout, p, tb, bn, bk, st = cfg
    t = time.time()
    try:
        launch(layout, bn, bk, st, 16, make(layout, bn, bk, 16), 64, warm=True)
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


COLS = ["layout", "variant", "piece_bytes", "row_stride_bytes", "trip_bytes", "BM", "BN", "BK", "WARPS", "STAGES",
        "ctas", "sms_used", "trips", "kernel_us", "ns_per_trip", "bytes_per_ns_per_sm", "implied_round_trip_ns",
        "dram_tb_s", "regs", "spills", "smem_bytes", "status"]


def run_one(w, cfg, ctas, variant):
    layout, p, tb, bn, bk, st = cfg
    elt = LAYOUTS[layout][1]
    row = dict(layout=layout, variant=variant, piece_bytes=p, trip_bytes=tb, BM=BM, BN=bn, BK=bk, WARPS=WARPS,
               STAGES=st, ctas=ctas, trips=TRIPS)
    try:
        bufs = make(layout, bn, bk, ctas)
        row["row_stride_bytes"] = bufs[1].stride(0) * elt
        wrap = L2_WRAP if variant == "l2" else TRIPS
        k = launch(layout, bn, bk, st, ctas, bufs, wrap)
        torch.cuda.synchronize()
        ids = bufs[3].tolist()
        ms = triton.testing.do_bench(lambda: launch(layout, bn, bk, st, ctas, bufs, wrap), warmup=3, rep=12,
                                     return_mode="median")
        per_trip = ms * 1e6 / TRIPS
        row.update(sms_used=len(set(ids)), kernel_us=round(ms * 1e3, 3), ns_per_trip=round(per_trip, 2),
                   bytes_per_ns_per_sm=round(tb / per_trip, 2),
                   implied_round_trip_ns=round((st - 1) * per_trip, 1),
                   dram_tb_s=round(ctas * TRIPS * tb / (ms * 1e9), 3) if variant == "dram" else "",
                   regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
        del bufs
    except Exception as e:
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        log(traceback.format_exc()[-400:])
    w.writerow(row)
    log({k: row.get(k) for k in ("layout", "variant", "piece_bytes", "trip_bytes", "BN", "BK", "STAGES", "ctas",
                                 "sms_used", "ns_per_trip", "dram_tb_s", "implied_round_trip_ns", "status")})


def main():
    os.makedirs(OUT, exist_ok=True)
    log("device", torch.cuda.get_device_name(0), "SMs", torch.cuda.get_device_properties(0).multi_processor_count,
        "torch", torch.__version__, "triton", triton.__version__)
    smi = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.limit,driver_version", "--format=csv"]
    try:
        log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    cfgs = list(configs())
    bad = precompile(cfgs)
    f = open(os.path.join(OUT, "b_runs.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    # the held-out-like rows first (132 CTAs, DRAM), then 1 and 16 CTAs, then the L2 rows
    plan = [(c, 132, "dram") for c in cfgs] + [(c, 1, "dram") for c in cfgs] + [(c, 16, "dram") for c in cfgs]
    plan += [(c, n, "l2") for c in cfgs if c[2] == 8192 for n in (132, 1)]
    log(f"{len(plan)} runs planned")
    for i, (cfg, n, variant) in enumerate(plan):
        if time.time() - T0 > DEADLINE_S:
            log(f"deadline: stopping after {i} of {len(plan)} runs")
            break
        if cfg in bad:
            continue
        run_one(w, cfg, n, variant)
        f.flush()
    f.close()
    try:
        log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    log("done")


if __name__ == "__main__":
    main()
