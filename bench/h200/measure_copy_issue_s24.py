#!/usr/bin/env python3
"""H200: what a Triton GEMM's K masks and stepped pointers cost a small-M k-loop trip (issue 15, session 24).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 ISSUE_DEADLINE_S=150 python3 bench/h200/measure_copy_issue_s24.py OUTDIR
    PYTHONUNBUFFERED=1 ISSUE_SET=wide ISSUE_DEADLINE_S=400 python3 bench/h200/measure_copy_issue_s24.py OUTDIR
    PYTHONUNBUFFERED=1 ISSUE_SET=shallow ISSUE_DEADLINE_S=140 python3 bench/h200/measure_copy_issue_s24.py OUTDIR
    PYTHONUNBUFFERED=1 ISSUE_SET=shallow8 ISSUE_DEADLINE_S=140 python3 bench/h200/measure_copy_issue_s24.py OUTDIR
    PYTHONUNBUFFERED=1 ISSUE_SET=deep8 ISSUE_DEADLINE_S=120 python3 bench/h200/measure_copy_issue_s24.py OUTDIR
    PYTHONUNBUFFERED=1 ISSUE_SET=deep ISSUE_DEADLINE_S=120 python3 bench/h200/measure_copy_issue_s24.py OUTDIR
    PYTHONUNBUFFERED=1 ISSUE_SET=coread8 ISSUE_DEADLINE_S=120 python3 bench/h200/measure_copy_issue_s24.py OUTDIR
    PYTHONUNBUFFERED=1 ISSUE_SET=coread ISSUE_DEADLINE_S=120 python3 bench/h200/measure_copy_issue_s24.py OUTDIR
    PYTHONUNBUFFERED=1 ISSUE_SET=warp8 ISSUE_DEADLINE_S=120 python3 bench/h200/measure_copy_issue_s24.py OUTDIR

Why: stream_depth_s24 times measure_stream_depth.py's k-loop (no masks, offsets recomputed from the
trip index) at 16x128x128 on 2 warps, 4 stages, 32 CTAs at 497.5 ns a trip, where the model's warp-mma
trip gives 500.3, yet the campaigns' Triton GEMM (bench/h200/triton_kernels.py matmul_kernel: K masked,
pointers stepped each trip) at that tile and grid (held-out run37 16x4096x14336, 112 trips) takes
85.66 us against 8.0 + 112 x 0.4975 = 63.7 us that trip would give. The two loops' SASS (sm_90,
Triton 3.6) differ by 61 integer instructions a trip (ISETP, SEL, PLOP3: the masks), 274 against 213
per thread. This times four loops that differ only there, on the same tiles and grids:
  depth    measure_stream_depth.py's loop (no mask, offsets from the trip index)
  masked   the same with the GEMM's K masks (`offs_k < K - k * BK` on A and B)
  stepped  the same without masks, pointers stepped each trip (`ptrs += BK * stride`)
  matmul   triton_kernels.matmul_kernel itself (masks and stepped pointers), M = 16, GROUP_M 1
Each at 64 and 256 trips (K = trips x BK); ns_per_trip = (t(256) - t(64)) / 192. Tiles (BN, BK)
128x128, 256x64, 64x128, 128x64, 32x128 (BM 16), 2/4/8 warps, 3 and 4 stages, one CTA on each of 32
and 132 SMs, B [K, N] row-major read by one CTA. Timing: triton.testing.do_bench median (L2 cleared
before each call). Output: copy_issue.csv, log.txt.
"""
import csv
import os
import sys
import time
import traceback

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton_kernels import matmul_kernel  # noqa: E402
import device_log  # noqa: E402  (bench/h200, the script's own folder)

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("ISSUE_DEADLINE_S", "150"))
TRIP_COUNTS = (64, 256)
# The sets, one a device call: (BM, BN, BK) tiles, warps, stages, CTAs and variants; fp8 (e4m3, B stored [N, K],
# K contiguous: gemm_fp8.tile's layout, else bf16 with B [K, N]); readers / groups (B tiles read by n CTAs of
# the launch, M = n x BM, at GROUP_M g; the rows then carry `readers` and `GROUP_M`).
_SMALL_BF16 = [(16, 64, 32), (16, 128, 32), (16, 256, 32), (32, 64, 32), (64, 128, 32), (16, 64, 64),
               (16, 128, 64), (16, 256, 64), (64, 64, 64), (16, 64, 128), (16, 128, 128)]
_SMALL_FP8 = [(16, 64, 64), (16, 128, 64), (16, 256, 64), (32, 64, 64), (64, 128, 64), (128, 32, 64),
              (16, 64, 128), (16, 128, 128), (16, 256, 128), (64, 64, 128), (32, 128, 128)]
SETS = {
    # the first call's (session 24): the stream loop and its masked / stepped variants against the GEMM
    "first": dict(tiles=[(16, 128, 128), (16, 256, 64), (16, 64, 128), (16, 128, 64), (16, 32, 128)],
                  warps=[2, 4, 8], stages=[3, 4], ctas=[32, 132], variants=["depth", "masked", "stepped", "matmul"]),
    # wide (session 24's third call): the stream loop against the campaigns' GEMM over the small-M tiles the
    # campaigns draw, so that what the compiled loop costs can be read against its tile and warps (the SASS
    # of each compiles on the CPU: bench/h200/kloop_sass.py's way)
    "wide": dict(tiles=[(bm, bn, bk) for bm in (16, 32, 64) for bn, bk in ((32, 128), (64, 64), (64, 128), (128, 32),
                                                                           (128, 64), (128, 128), (256, 32), (256, 64))],
                 warps=[2, 4, 8], stages=[3, 4], ctas=[32, 64], variants=["depth", "matmul"]),
    # shallow (session 25's first call): the campaigns' GEMM at one and two stages (one tile in flight, or none
    # prefetched) beside three, over small-M tiles whose trips are short (BK 32 bf16: 64-byte A rows) and
    # longer: the one-tile round trip on many SMs (docs/analysis.md, "One tile in flight")
    "shallow": dict(tiles=_SMALL_BF16, warps=[2, 4, 8], stages=[1, 2, 3], ctas=[32, 64, 132]),
    # shallow8 (second call): the same for the campaigns' fp8 GEMM: does its k-loop wait the same one-tile
    # round trip, and what do its K-major pieces add?
    "shallow8": dict(tiles=_SMALL_FP8, warps=[2, 4, 8], stages=[1, 2, 3], ctas=[32, 64, 132], fp8=True),
    # deep8 / deep (third and fourth calls): at 3-5 stages on 132-528 CTAs (1-4 an SM), where the weight
    # stream nears DRAM's rate (docs/analysis.md, "fp8's K-major stream on many SMs")
    "deep8": dict(tiles=[t for t in _SMALL_FP8 if t not in ((128, 32, 64), (32, 128, 128))], warps=[2, 4, 8],
                  stages=[3, 4, 5], ctas=[132, 264, 528], fp8=True),
    "deep": dict(tiles=[(16, 64, 32), (16, 128, 32), (16, 256, 32), (16, 64, 64), (16, 128, 64), (16, 256, 64),
                        (64, 64, 64), (16, 64, 128), (16, 128, 128)],
                 warps=[2, 4, 8], stages=[3, 4, 5], ctas=[132, 264, 528]),
    # coread8 / coread (sixth call): B tiles read by 1, 2 or 4 CTAs, their co-readers adjacent (GROUP_M 8) or a
    # row of tiles apart (GROUP_M 1): what a co-read weight stream waits (stream_depth_s15's pair / quad were
    # bf16 with the stream loop)
    "coread8": dict(tiles=[(16, 64, 64), (16, 128, 64), (16, 256, 64), (16, 64, 128), (16, 128, 128), (32, 64, 128)],
                    warps=[4], stages=[2, 3, 4], ctas=[132, 264], fp8=True, readers=[1, 2, 4], groups=[1, 8]),
    "coread": dict(tiles=[(16, 64, 32), (16, 128, 32), (16, 64, 64), (16, 128, 64), (16, 256, 64), (32, 64, 64)],
                   warps=[4], stages=[2, 3, 4], ctas=[132, 264], readers=[1, 2, 4], groups=[1, 8]),
    # warp8 (seventh call): fp8 warp-mma tiles (BM 16-32: mma.sync with the operands promoted to f16) at 2 and 4
    # CTAs an SM, B read by 1 or 2 CTAs: the regime of run5's 32x14336x4096 16x64x128 w8 s5 G8, priced -18.9%
    "warp8": dict(tiles=[(16, 64, 128), (16, 32, 128), (16, 128, 128), (16, 64, 64), (32, 64, 128)], warps=[2, 4, 8],
                  stages=[3, 5], ctas=[264, 528], fp8=True, readers=[1, 2], groups=[8]),
}
SET = os.environ.get("ISSUE_SET") or "first"
if SET not in SETS:
    print(f"ISSUE_SET={SET}: expected one of {', '.join(SETS)}", file=sys.stderr)
    sys.exit(2)
_cfg = SETS[SET]
TILES, WARPS, STAGES, CTAS = _cfg["tiles"], _cfg["warps"], _cfg["stages"], _cfg["ctas"]
VARIANTS = _cfg.get("variants", ["matmul"])
FP8 = _cfg.get("fp8", False)
READERS, GROUPS = _cfg.get("readers", [1]), _cfg.get("groups", [1])
COREAD = "readers" in _cfg             # rows carry `readers` and `GROUP_M`
TILE_MAJOR = SET not in ("first", "wide")   # session 25's sets run every grid of a tile before the next tile
ELT = 1 if FP8 else 2


def log(*a):
    device_log.log(OUT, T0, *a)


@triton.jit
def depth_kernel(a_ptr, b_ptr, c_ptr, trips, K, lda, ldb, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 MASKED: tl.constexpr, STEPPED: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = pid * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * lda + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, trips):
        kk = k * BK
        if STEPPED:
            pa, pb = a_ptrs, b_ptrs
        else:
            pa, pb = a_ptrs + kk, b_ptrs + kk * ldb
        if MASKED:
            a = tl.load(pa, mask=offs_k[None, :] < K - kk, other=0.0)
            b = tl.load(pb, mask=offs_k[:, None] < K - kk, other=0.0)
        else:
            a = tl.load(pa)
            b = tl.load(pb)
        acc = tl.dot(a, b, acc)
        if STEPPED:
            a_ptrs += BK
            b_ptrs += BK * ldb
    tl.store(c_ptr + pid * BM * BN + offs_m[:, None] * BN + tl.arange(0, BN)[None, :], acc.to(tl.bfloat16))


def make(bm, bn, bk, ctas, readers=1):
    # readers CTAs read each B tile: M = readers x BM rows of tiles, ctas / readers tiles along N
    k, n = max(TRIP_COUNTS) * bk, ctas // readers * bn
    bm = bm * readers
    if FP8:   # B^T stored [N, K] (K contiguous), as measure_accuracy's fp8 rows
        a = torch.randn((bm, k), device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn((n, k), device="cuda").to(torch.float8_e4m3fn)
        return a, b, torch.empty((bm, n), device="cuda", dtype=torch.bfloat16)
    a = torch.randn((bm, k), device="cuda").to(torch.bfloat16)
    b = torch.randn((k, n), device="cuda").to(torch.bfloat16)
    c = torch.empty((bm, n), device="cuda", dtype=torch.bfloat16)
    return a, b, c


def launch(variant, bm, bn, bk, w, st, ctas, bufs, trips, readers=1, group_m=1):
    a, b, c = bufs
    K = trips * bk
    if variant == "matmul":
        # measure_accuracy.launch's arguments: A [M, K] with lda = the buffer's row, B [K, N] (fp8: [N, K])
        sbk, sbn = (1, b.stride(0)) if FP8 else (b.stride(0), 1)
        return matmul_kernel[(ctas,)](a, b, c, bm * readers, ctas // readers * bn, K, a.stride(0), 1, sbk, sbn,
                                      c.stride(0), 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m,
                                      num_warps=w, num_stages=st)
    return depth_kernel[(ctas,)](a, b, c, trips, K, a.stride(0), b.stride(0), BM=bm, BN=bn, BK=bk,
                                 MASKED=variant == "masked", STEPPED=variant == "stepped", num_warps=w,
                                 num_stages=st)


COLS = ["variant", "BM", "BN", "BK", "WARPS", "STAGES", "ctas", "trip_bytes", "us_64_trips", "us_256_trips",
        "ns_per_trip", "regs", "spills", "smem_bytes", "status"] + (["dtype"] if FP8 else []) + \
    (["readers", "GROUP_M"] if COREAD else [])


def main():
    os.makedirs(OUT, exist_ok=True)
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    f = open(os.path.join(OUT, "copy_issue.csv"), "w", newline="")
    wr = csv.DictWriter(f, fieldnames=COLS)
    wr.writeheader()
    plan = [(ctas, bm, bn, bk, w, st, v, 1, 1) for ctas in CTAS for bm, bn, bk in TILES for w in WARPS
            for st in STAGES for v in VARIANTS]
    if TILE_MAJOR:   # every grid of a tile before the next tile: a deadline cuts tiles, not grids
        # (n, g): n CTAs read each B tile, GROUP_M g (one row of tiles: GROUP_M changes nothing)
        plan = [(ctas, bm, bn, bk, w, st, v, n, g) for bm, bn, bk in TILES for w in WARPS for st in STAGES
                for ctas in CTAS for v in VARIANTS for n in READERS for g in GROUPS if n > 1 or g == min(GROUPS)]
    if FP8:
        # B [N, K]: the kernel's first offset, n x K, is 32-bit; past 2^31 it wraps and the launch faults
        # (and the context with it: deep8's first call lost 187 rows so), so such grids are not run
        wraps = [x for x in plan if x[0] * x[2] * max(TRIP_COUNTS) * x[3] >= 2 ** 31]
        plan = [x for x in plan if x not in wraps]
        if wraps:
            log(f"{len(wraps)} runs left out: CTAs x BN x K >= 2^31 (32-bit offsets)")
    log(f"{len(plan)} runs planned")
    bufs_key, bufs = None, None
    for i, (ctas, bm, bn, bk, w, st, v, n_readers, group_m) in enumerate(plan):
        if time.time() - T0 > DEADLINE_S:
            log(f"deadline: stopping after {i} of {len(plan)} runs")
            break
        row = dict(variant=v, BM=bm, BN=bn, BK=bk, WARPS=w, STAGES=st, ctas=ctas, trip_bytes=(bm * bk + bk * bn) * ELT)
        if FP8:
            row["dtype"] = "fp8e4m3"
        if COREAD:
            row.update(readers=n_readers, GROUP_M=group_m)
        try:
            if bufs_key != (bm, bn, bk, ctas, n_readers):
                bufs, bufs_key = None, None
                torch.cuda.empty_cache()
                bufs, bufs_key = make(bm, bn, bk, ctas, n_readers), (bm, bn, bk, ctas, n_readers)
            k = launch(v, bm, bn, bk, w, st, ctas, bufs, TRIP_COUNTS[0], n_readers, group_m)
            torch.cuda.synchronize()
            us = [triton.testing.do_bench(lambda: launch(v, bm, bn, bk, w, st, ctas, bufs, n, n_readers, group_m),
                                          warmup=3, rep=12, return_mode="median") * 1e3 for n in TRIP_COUNTS]
            row.update(us_64_trips=round(us[0], 3), us_256_trips=round(us[1], 3),
                       ns_per_trip=round((us[1] - us[0]) * 1e3 / (TRIP_COUNTS[1] - TRIP_COUNTS[0]), 2),
                       regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
        except Exception as e:
            row.update(status="error: " + repr(e)[:160].replace("\n", " "))
            log(traceback.format_exc()[-300:])
        wr.writerow(row)
        f.flush()
        if row["status"] == "ok" and i % 8 == 0:
            log(row)
    f.close()
    log("done")


if __name__ == "__main__":
    main()
