#!/usr/bin/env python3
"""H200: how deep a small-M bf16 k-loop's pipeline pays off, by warps, at 64 and 132 SMs (issue 15, smallm8).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 DEPTH_DEADLINE_S=100 python3 bench/h200/measure_stream_depth.py OUTDIR

Why: the held-out small-M GEMMs at 4-5 stages run slower than the model's Little's law with S-1
tiles in flight (issue15 run6 16x8192x8192 and run7 32x4096x8192 at 16x128x32 on 2 warps, 5
stages, 64 CTAs: ~340 ns a trip measured, 262 and 205 ns predicted), while 2-3-stage rows of the
same shapes run as predicted or faster. Two questions, one kernel: (1) does a trip still shorten
from 4 to 5 and 6 stages, and does it depend on the CTA's warps (how many threads issue the
copies); (2) does a B tile that two CTAs read at the same k-step (`pair`, the M = 2 x BM grid:
half the DRAM bytes, the other half L2 hits merged with the first reader's miss) shorten the
trip as the model's lower DRAM draw says, or not.

The kernel is measure_b_runs.py's small-M k-loop (bf16, B [K, N] row-major, A [16, K] shared by
all CTAs from L2, tl.dot into f32) with the trip count a runtime argument, so each row's
ns_per_trip = (t(256 trips) - t(64 trips)) / 192: no launch or prologue in it. Tiles 16x128x32
(9 KiB a trip) and 16x128x64 (18 KiB), 2/4/8 warps, 2-6 stages; variants `own` (each CTA its own
B columns) at 64 and 132 CTAs and `pair` at 64 CTAs (CTA i reads B columns of tile i mod 32).
%smid is recorded (sms_used). Timing: triton.testing.do_bench median, L2 cleared before each run.
Output: stream_depth.csv, log.txt.

DEPTH_SET=s15 (session 15, smallm15; docs/analysis.md "A shared B tile is priced as saving time
it does not"): the same kernel at the campaigns' grids, to tell what the loaded DRAM round trip
follows. Tiles 16x128x32 and 16x128x64 on 4 warps, 2-4 stages (the round-trip-bound depths), B
read by 1, 2 or 4 CTAs at one step (`own`, `pair`, `quad`: CTA i reads B tile i mod ctas / readers,
so readers share a tile's DRAM bytes and request its bytes each) on 132, 264 and 528 CTAs (1, 2, 4
an SM, one wave). At equal CTAs the three variants request the same bytes from L2 and draw 1, 1/2,
1/4 of the DRAM bytes: equal trips say the round trip follows the requested bytes, trips that
shorten with the readers say it follows DRAM's; across 132-528 CTAs each variant gives the trip
against the bytes drawn. `us_64_trips - 64 x ns_per_trip` is what each launch spends outside its
trips (the per-launch cost the model lacks, 5-14.6 us in the 2026-12-02 rows). 16x128x64 at 4
stages holds 73,728 B of shared memory, 3 CTAs an SM: its 528-CTA rows are 1.33 waves.
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
DEADLINE_S = float(os.environ.get("DEPTH_DEADLINE_S", "100"))
BM = 16
TRIP_COUNTS = (64, 256)
TILES = [(128, 32), (128, 64)]
WARPS = [2, 4, 8]
STAGES = [2, 3, 4, 5, 6]
VARIANTS = [("own", 64), ("pair", 64), ("own", 132)]
READERS = {"own": 1, "pair": 2, "quad": 4}
if os.environ.get("DEPTH_SET") == "s15":
    TILES = [(128, 32), (128, 64)]
    WARPS = [4]
    STAGES = [2, 3, 4]
    VARIANTS = [(v, n) for n in (132, 264, 528) for v in ("own", "pair", "quad")]
# DEPTH_SET=s16 (session 16, smallm16; docs/analysis.md "The loaded round trip on the pointer
# chase's measured queueing curve ... tried, not kept"): what a launch spends outside its trips.
# s15's `us_64_trips - 64 x ns_per_trip` (5.3-15.7 us) grows with the bytes the launch reads from
# DRAM as the write-back of the L2's dirty lines would (do_bench's clear zeroes 256 MB and leaves the
# L2 dirty; the launch's reads evict those lines). Each row is timed as s15 did (do_bench) and with
# CUDA events around the launch alone in two L2 states, the GPU kept busy before it in both:
# `dirty` (the clear, then torch.cuda._sleep: the dirty lines stay) and `clean` (the clear, then a
# read of another 256 MB buffer: its clean lines replace them), at 16, 64 and 256 trips. The clean
# rows' t(n) - n x ns a trip is the launch, ramp and tail without the write-back; dirty - clean is
# the write-back at each byte count and draw.
S16 = os.environ.get("DEPTH_SET") == "s16"
if S16:
    TRIP_COUNTS = (16, 64, 256)
    TILES = [(128, 32), (128, 64)]
    WARPS = [4]
    STAGES = [2, 4]
    VARIANTS = [(v, n) for n in (132, 528) for v in ("own", "quad")]
    MODE_REPS = int(os.environ.get("DEPTH_MODE_REPS", "21"))
# DEPTH_SET=s17 (session 17, smallm17; docs/analysis.md, smallm17's finding): the clean-L2 round trip
# against the bytes in flight an SM at equal DRAM draw. s16 timed the launch with the L2 dirty and
# clean: a trip past the dirty phase takes the same time in both, and the dirty phase (the first
# L2-capacity of a launch's misses, each evicting one of the clear's dirty lines) costs 1-9 us. Its
# clean trips' implied DRAM part at 0.4-2.3 TB/s (406-537 ns) sits between the read-only pointer
# chase (341 ns, flat to 2 TB/s: latency_read_s16) and the idle floor a tile load was fitted at
# (557 ns, mlp): the rows here give that part at 1 and 2 CTAs an SM, 2-6 stages and 9-34 KB tiles
# (16x128x32, 16x128x64, 16x256x64; B read by 1, 2 or 4 CTAs a step), so that the same draw is
# reached with 1x-10x the bytes in flight an SM. Timed as s16 (do_bench, dirty, clean).
S17 = os.environ.get("DEPTH_SET") == "s17"
if S17:
    S16 = True
    TRIP_COUNTS = (16, 64, 256)
    TILES = [(128, 32), (128, 64), (256, 64)]
    WARPS = [4]
    STAGES = [2, 3, 4, 5, 6]
    VARIANTS = [(v, n) for n in (132, 264) for v in ("own", "pair", "quad")]
    MODE_REPS = int(os.environ.get("DEPTH_MODE_REPS", "21"))

# DEPTH_SET=s24 (session 24, issue 15's few-SM weight streams; docs/analysis.md "The warp-mma trip's
# copies at the SM's DRAM ceiling, tried and not landed"): held-out run37's and run35's 16x128x128 w2 s4
# (36 KB a trip, 32 and 64 CTAs) run ~650 ns a trip where the model's warp-mma trip gives 500 ns,
# while run32's 2-warp rows are right. This set times the tall-K tiles a small-M GEMM picks (9-68 KB a
# trip) on 2, 4 and 8 warps, 2-5 stages, one CTA on each of 32, 64 and 132 SMs (B read by one CTA), so
# that a trip's time can be read against the bytes a CTA requests, the warps that issue the copies and
# the SMs drawing on DRAM. Timed as the first set (do_bench; `own` only).
if os.environ.get("DEPTH_SET") == "s24":
    TILES = [(128, 128), (64, 128), (32, 128), (256, 64), (128, 64), (256, 128)]
    WARPS = [2, 4, 8]
    STAGES = [2, 3, 4, 5]
    VARIANTS = [("own", n) for n in (32, 64, 132)]


def log(*a):
    device_log.log(OUT, T0, *a)


@triton.jit
def depth_kernel(a_ptr, b_ptr, c_ptr, sm_ptr, trips, tiles_n, lda, ldb, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = (pid % tiles_n) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + offs_m[:, None] * lda + offs_k[None, :]
    b_base = b_ptr + offs_k[:, None] * ldb + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, trips):
        kk = k * BK
        a = tl.load(a_base + kk)
        b = tl.load(b_base + kk * ldb)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + pid * BM * BN + offs_m[:, None] * BN + tl.arange(0, BN)[None, :], acc)
    smid = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pid], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(sm_ptr + pid, smid)


def make(bn, bk, ctas, tiles_n):
    k, n = max(TRIP_COUNTS) * bk, tiles_n * bn
    a = torch.randn((BM, k), device="cuda").to(torch.bfloat16)
    b = torch.randn((k, n), device="cuda").to(torch.bfloat16)
    c = torch.empty(ctas * BM * bn, device="cuda", dtype=torch.float32)
    sm = torch.full((ctas,), -1, device="cuda", dtype=torch.int32)
    return a, b, c, sm


def launch(bn, bk, w, st, ctas, tiles_n, bufs, trips, warm=False):
    a, b, c, sm = bufs
    args = (a, b, c, sm, trips, tiles_n, a.stride(0), b.stride(0))
    kw = dict(BM=BM, BN=bn, BK=bk, num_warps=w, num_stages=st)
    if warm:
        return depth_kernel.warmup(*args, grid=(ctas,), **kw)
    return depth_kernel[(ctas,)](*args, **kw)


def configs():
    for bn, bk in TILES:
        for w in WARPS:
            for st in STAGES:
                yield bn, bk, w, st


def _compile_worker(cfg):
    bn, bk, w, st = cfg
    t = time.time()
    try:
        launch(bn, bk, w, st, 16, 16, make(bn, bk, 16, 16), 64, warm=True)
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


COLS = ["variant", "BM", "BN", "BK", "WARPS", "STAGES", "ctas", "b_tiles", "sms_used", "trip_bytes",
        "dram_bytes_per_trip", "us_64_trips", "us_256_trips", "ns_per_trip", "implied_round_trip_ns",
        "l2_to_sm_tb_s", "dram_tb_s", "regs", "spills", "smem_bytes", "status"]
if S16:
    COLS = COLS[:-1] + ["us_16_trips"] + [f"us_{n}_{mode}" for mode in ("dirty", "clean") for n in TRIP_COUNTS] + ["status"]

_SCRATCH = {}


def timed_modes(fn):
    """{'dirty': [us at each trip count], 'clean': [...]}: CUDA events around ``fn(trips)`` alone,
    median of MODE_REPS, after do_bench's clear (zero a 256 MB buffer) and then either 100 us of
    torch.cuda._sleep (the L2 left dirty) or a read of another 256 MB buffer (the L2 left clean);
    nothing synchronizes inside a mode's loop, so the GPU is busy up to the start event."""
    if not _SCRATCH:
        _SCRATCH["cache"] = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
        _SCRATCH["other"] = torch.ones(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    cache, other = _SCRATCH["cache"], _SCRATCH["other"]
    out = {}
    for mode in ("dirty", "clean"):
        us = []
        for trips in TRIP_COUNTS:
            fn(trips)
            torch.cuda.synchronize()
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(MODE_REPS)]
            sink = []
            for start, end in ev:
                cache.zero_()
                if mode == "dirty":
                    torch.cuda._sleep(200_000)       # ~100 us at 1.98 GHz
                else:
                    sink.append(other.sum())
                start.record()
                fn(trips)
                end.record()
            torch.cuda.synchronize()
            ts = sorted(s.elapsed_time(e) * 1e3 for s, e in ev)
            us.append(round(ts[len(ts) // 2], 3))
        out[mode] = us
    return out


def run_one(w, cfg, variant, ctas):
    bn, bk, warps, st = cfg
    tiles_n = ctas // READERS[variant]
    trip = (BM * bk + bk * bn) * 2
    row = dict(variant=variant, BM=BM, BN=bn, BK=bk, WARPS=warps, STAGES=st, ctas=ctas, b_tiles=tiles_n,
               trip_bytes=trip, dram_bytes_per_trip=round(bk * bn * 2 * tiles_n / ctas))
    try:
        bufs = make(bn, bk, ctas, tiles_n)
        k = launch(bn, bk, warps, st, ctas, tiles_n, bufs, TRIP_COUNTS[0])
        torch.cuda.synchronize()
        ids = bufs[3].tolist()
        us = []
        for trips in TRIP_COUNTS:
            ms = triton.testing.do_bench(lambda: launch(bn, bk, warps, st, ctas, tiles_n, bufs, trips), warmup=3,
                                         rep=12, return_mode="median")
            us.append(ms * 1e3)
        if S16:
            modes = timed_modes(lambda n: launch(bn, bk, warps, st, ctas, tiles_n, bufs, n))
            for mode, vals in modes.items():
                row.update({f"us_{n}_{mode}": v for n, v in zip(TRIP_COUNTS, vals)})
            row["us_16_trips"] = round(us[0], 3)
            us = us[1:]
        per_trip = (us[1] - us[0]) * 1e3 / (256 - 64)
        row.update(sms_used=len(set(ids)), us_64_trips=round(us[0], 3), us_256_trips=round(us[1], 3),
                   ns_per_trip=round(per_trip, 2), implied_round_trip_ns=round((st - 1) * per_trip, 1),
                   l2_to_sm_tb_s=round(ctas * trip / per_trip / 1e3, 3),
                   dram_tb_s=round(tiles_n * bk * bn * 2 / per_trip / 1e3, 3),
                   regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
        del bufs
    except Exception as e:
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        log(traceback.format_exc()[-400:])
    w.writerow(row)
    log({k: row.get(k) for k in ("variant", "BN", "BK", "WARPS", "STAGES", "ctas", "sms_used", "ns_per_trip",
                                 "implied_round_trip_ns", "dram_tb_s", "status")})


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
    f = open(os.path.join(OUT, "stream_depth.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    # the held-out-like 64-CTA rows first (own, then pair), then 132 CTAs
    plan = [(c, v, n) for v, n in VARIANTS for c in cfgs]
    log(f"{len(plan)} runs planned")
    for i, (cfg, variant, n) in enumerate(plan):
        if time.time() - T0 > DEADLINE_S:
            log(f"deadline: stopping after {i} of {len(plan)} runs")
            break
        if cfg in bad:
            continue
        run_one(w, cfg, variant, n)
        f.flush()
    f.close()
    try:
        log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    log("done")


if __name__ == "__main__":
    main()
