#!/usr/bin/env python3
"""H200: what a 2-stage flash-attention trip costs over a 3-stage one, by where the CTA runs, and
when each CTA of run17's causal B16 H8 S2048 D128 rows runs (issue 15, session 13, attn13b).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_attn_trip_s13.py OUTDIR

Why (docs/analysis.md section 8, attn13's finding "where the run17 attention misses come from"):
the issue-15 full-attention rows' rounds at 2 stages exceed the 3-stage ones by 121-279 ns (least
squares over S), the model adds 304-595 ns, while the one-wave microbenchmark
(../attn_stages) measured 394-693 ns. Which of the three conditions (one CTA alone, every SM in
lock step, CTAs drifted apart over many waves) the issue-15 rows follow was not measured; and the
8-warp 1-stage tiles at one CTA a SM miss by 3.8-5.7 us a CTA outside their trips.

Part A (trip.csv): measure_attn_stages.py's attn_trip_heads (the inner loop of triton_kernels.py's
flash_fwd_kernel, non-causal, K and V of head pid % 4, L2-resident after a warm launch) with each
CTA's %smid and %globaltimer at its start, before its loop, after its loop and at its end. For
tiles (D = 128) 64x64 w4, 64x128 w4, 128x64 w8, 128x128 w8 at 2 and 3 stages (and 128x128 w8 / 128x64
w8 at 1 stage) in four conditions:
  alone1  grid 1: one CTA on one SM, the GPU otherwise idle;
  alone2  grid 132 x 2, only the CTAs that land on SM 0 run trips (the others run none): two CTAs
          sharing one SM, the other SMs idle (where 2 fit);
  wave    grid 132 x r: every SM holds r CTAs, all started together (attn_stages' condition);
  drift   grid 132 x r x 8: eight waves, CTAs start as slots free (the issue-15 rows' condition);
          only CTAs started after the first wave's are kept.
Each condition runs at 2048 and 8192 keys; a trip is the difference of the median loop spans
(t_loop_exit - t_loop_entry over the kept CTAs) over the difference of trips, so whatever the
loop's entry and exit cost cancels. ns_per_trip_8192 (the long span / trips) is given too.

Part B (timeline_<cfg>.csv.gz): triton_kernels.py's flash_fwd_kernel, causal, B16 H8 S2048 D128
(run17's shape of the 13.3% regret), with the same four stamps a CTA (start, before the first
loop, after the second, after the stores) and %smid; L2 cleared before each of 3 recorded launches
(do_bench's condition). Configurations: 128x128 w8 s1, 128x64 w8 s1, 64x64 w8 s1, 64x64 w4 s2,
64x64 w4 s3, 64x128 w4 s1, 64x128 w4 s3, 128x128 w8 s3. timeline_summary.csv: do_bench medians of
the plain and the stamped kernel, makespan, per-CTA medians of prologue / loop / epilogue, the
median gap on an SM between one CTA's end and the next CTA's start.

Session 14 (attn14): TRIP_D=64 sets Part A's head size, TRIP_CFGS="BM,BN,W,S;..." its tiles, and
TRIP_DRIFT_R=occ drifts at the kernel's occupancy (up to 8 CTAs a SM) instead of at most 2; trip.csv then
carries D. Checked on the CPU (Triton 3.6.0, sm_90): attn_trip_stamped at D = 64 compiles to 82
registers (64x32 w4 s3/s4: 5 CTAs a SM), 206 (128x64 w4: 2), 110 (64x64 w4 s3: 4), 111 (128x64 w8 s4: 2).

TRIP_PARTS=A or B runs one part; TRIP_CONDS (comma-separated) picks Part A's conditions, where
alone1_cold, wave_cold and drift_cold clear the L2 (a 256 MiB write) before each recorded launch, as
do_bench does (K and V start in DRAM; 1-stage tiles are left out then); the CSV is then named
trip_<conds>.csv.

Session 15 (attn15, attn14b's request): TRIP_NCU=1 runs no timing; for each TRIP_CFGS tile a child process
(--ncu-child) launches the drift condition at 2048 and at 8192 keys under Nsight Compute (--clock-control none
--cache-control none) and trip_ncu.csv gives each metric's 8192 - 2048 difference a CTA a trip, a warp a trip
(the per-pipe warp instructions: fma, alu, xu, uniform, ...) and, for the cycle counts, the SM's cycles a round
of its co-resident trips; ncu --query-metrics decides which of NCU_METRICS are asked for (metrics.txt). The
loop's SASS per pipe on the CPU: bench/h200/attn_trip_sass.py (64x32 w4 s3 at D = 64: 203 instructions a warp a
trip, fma 92, alu 36, uniform 27, xu 18, lsu 17, tensor 9, cbu 4).

Session 15 (attn15): TRIP_CLOCK=1 adds %clock64 beside the loop's %globaltimer stamps in both kernels (0-4
registers more on the CPU compile: 64x32 w4 s3 82, 128x64 w4 s3 206 -> 208, the causal 128x128 w8 s3 at D = 64
246 -> 250), and each part's summary gets the SM clock over the CTAs' loops (trip_*.csv loop_clock_ghz: the
median over the kept CTAs of the 8192-key launch; timeline_summary.csv median_loop_clock_ghz: the middle launch's
CTAs of 2 trips or more). TRIP_TL_SHAPE="B,H,S,D", TRIP_TL_CFGS="BM,BN,W,S;..." and TRIP_TL_CAUSAL=0 set Part B's
launch (the timeline files are then named by it).

Microbenchmarks of mechanisms, not rows of the issue-15 truth. Writes trip.csv, trip_ctas.csv,
timeline_*.csv.gz, timeline_summary.csv, log.txt, env.txt.
"""
import csv
import gzip
import math
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_attn_trip_s13")
DEADLINE_S = float(os.environ.get("TRIP_DEADLINE_S", "240"))
SHORT, LONG = 2048, 8192
HEADS = 4
WAVES = 8
# (BLOCK_M, BLOCK_N, WARPS, STAGES), D = TRIP_D (128 unless the environment says)
TRIP_CFGS = [(64, 64, 4, 2), (64, 64, 4, 3), (64, 128, 4, 2), (64, 128, 4, 3), (128, 64, 8, 2), (128, 64, 8, 3),
             (128, 128, 8, 2), (128, 128, 8, 3), (128, 128, 8, 1), (128, 64, 8, 1)]
# Session 14 (attn14): TRIP_D=64 TRIP_CFGS="64,32,4,3;..." TRIP_DRIFT_R=occ times Part A at another head
# size, on other tiles, and drifts at the kernel's full occupancy (every CTA the SM holds) instead of 2
TRIP_D = int(os.environ.get("TRIP_D", "128"))
if os.environ.get("TRIP_CFGS"):
    TRIP_CFGS = [tuple(int(x) for x in c.split(",")) for c in os.environ["TRIP_CFGS"].split(";") if c]
DRIFT_FULL = os.environ.get("TRIP_DRIFT_R", "") == "occ"
MAX_R = 8 if DRIFT_FULL else 2
TL_CFGS = [(128, 128, 8, 1), (64, 64, 4, 2), (64, 128, 4, 1), (64, 64, 4, 3), (64, 128, 4, 3), (128, 64, 8, 1),
           (64, 64, 8, 1), (128, 128, 8, 3)]
TL_SHAPE = (16, 8, 2048, 128)   # B, H, S, D
TL_CAUSAL = True
# Session 15 (attn15): TRIP_TL_SHAPE="B,H,S,D", TRIP_TL_CFGS="BM,BN,W,S;..." and TRIP_TL_CAUSAL=0 set Part B's
# launch; TRIP_CLOCK=1 adds %clock64 beside the loop's two %globaltimer stamps (both parts): each CTA's SM clock
# over its loop, (clock64 after - before) / (globaltimer after - before), a column of each part's summary
if os.environ.get("TRIP_TL_SHAPE"):
    TL_SHAPE = tuple(int(x) for x in os.environ["TRIP_TL_SHAPE"].split(","))
if os.environ.get("TRIP_TL_CFGS"):
    TL_CFGS = [tuple(int(x) for x in c.split(",")) for c in os.environ["TRIP_TL_CFGS"].split(";") if c]
TL_CAUSAL = os.environ.get("TRIP_TL_CAUSAL", "1") == "1"
CLOCK = os.environ.get("TRIP_CLOCK") == "1"
REC_W = 8 if CLOCK else 6        # a CTA's record: smid, 4 stamps, trips (+ clock64 at loop entry and exit)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _stamp(pid):
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [pid], dtype=tl.int64, is_pure=False,
                                     pack=1)


@triton.jit
def _clock(pid):
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l,r", [pid], dtype=tl.int64, is_pure=False,
                                     pack=1)


@triton.jit(do_not_specialize=["HEADS", "ONLY_SM"])
def attn_trip_stamped(Q, K, V, O, REC, qk_scale, SKV, HEADS, ONLY_SM, D: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, CLOCK: tl.constexpr = False):
    # measure_attn_stages.py's attn_trip_heads with %smid and four %globaltimer stamps
    pm = tl.program_id(0)
    t0 = _stamp(pm)
    sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pm], dtype=tl.int32, is_pure=False, pack=1)
    kv = (pm % HEADS).to(tl.int64) * SKV * D
    trips = SKV // BLOCK_N
    trips = tl.where((ONLY_SM < 0) | (sm == ONLY_SM), trips, 0)
    offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    t1 = _stamp(pm)
    if CLOCK:
        c1 = _clock(pm)
    for j in range(0, trips):
        n = j * BLOCK_N + offs_n
        k = tl.load(K + kv + n[:, None] * D + offs_d[None, :])
        s = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + kv + n[:, None] * D + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    t2 = _stamp(pm)
    if CLOCK:
        c2 = _clock(pm)
    o = acc / l_i[:, None]
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], o.to(O.dtype.element_ty))
    t3 = _stamp(pm)
    base = REC + pm.to(tl.int64) * (8 if CLOCK else 6)
    if CLOCK:
        tl.store(base + 6, c1)
        tl.store(base + 7, c2)
    tl.store(base + 0, sm.to(tl.int64))
    tl.store(base + 1, t0)
    tl.store(base + 2, t1)
    tl.store(base + 3, t2)
    tl.store(base + 4, t3)
    tl.store(base + 5, trips.to(tl.int64))


@triton.jit
def flash_fwd_stamped(Q, K, V, O, LSE, REC, qk_scale, S, D: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, CLOCK: tl.constexpr = False):
    # triton_kernels.py's flash_fwd_kernel with %smid and four %globaltimer stamps
    pm = tl.program_id(0)
    bh = tl.program_id(1)
    t0 = _stamp(pm)
    sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pm], dtype=tl.int32, is_pure=False, pack=1)
    base = bh.to(tl.int64) * S * D
    offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + base + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    if CAUSAL:
        n_trips = tl.minimum(tl.cdiv((pm + 1) * BLOCK_M, BLOCK_N), tl.cdiv(S, BLOCK_N))
        n_full = (pm * BLOCK_M) // BLOCK_N
    else:
        n_trips = tl.cdiv(S, BLOCK_N)
        n_full = n_trips
    t1 = _stamp(pm)
    if CLOCK:
        c1 = _clock(pm)
    for j in range(0, n_full):
        n = j * BLOCK_N + offs_n
        k = tl.load(K + base + n[:, None] * D + offs_d[None, :])
        s = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + n[:, None] * D + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    if CAUSAL:
        for j in range(n_full, n_trips):
            n = j * BLOCK_N + offs_n
            k = tl.load(K + base + n[:, None] * D + offs_d[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where(offs_m[:, None] >= n[None, :], s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(V + base + n[:, None] * D + offs_d[None, :])
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
    t2 = _stamp(pm)
    if CLOCK:
        c2 = _clock(pm)
    o = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * D + offs_d[None, :], o.to(O.dtype.element_ty))
    tl.store(LSE + bh.to(tl.int64) * S + offs_m, m_i + tl.log2(l_i))
    t3 = _stamp(pm)
    rec = REC + (bh.to(tl.int64) * tl.num_programs(0) + pm) * (8 if CLOCK else 6)
    if CLOCK:
        tl.store(rec + 6, c1)
        tl.store(rec + 7, c2)
    tl.store(rec + 0, sm.to(tl.int64))
    tl.store(rec + 1, t0)
    tl.store(rec + 2, t1)
    tl.store(rec + 3, t2)
    tl.store(rec + 4, t3)
    tl.store(rec + 5, n_trips.to(tl.int64))


LOG2E = 1.4426950408889634


def trip_bufs(BM):
    import torch
    q = torch.randn(132 * MAX_R * WAVES * BM, TRIP_D, device="cuda", dtype=torch.bfloat16)
    kk = torch.randn(HEADS * LONG, TRIP_D, device="cuda", dtype=torch.bfloat16)
    vv = torch.randn(HEADS * LONG, TRIP_D, device="cuda", dtype=torch.bfloat16)
    return q, kk, vv, torch.empty_like(q)


def tl_bufs():
    import torch
    B, H, S, D = TL_SHAPE
    q, k, v = (torch.randn(B * H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    return q, k, v, torch.empty_like(q), torch.empty(B * H, S, device="cuda", dtype=torch.float32)


def compile_job(job):
    """Compile one kernel in a worker (fills the shared Triton cache)."""
    kind, (BM, BN, W, S) = job
    t = time.time()
    try:
        import torch
        if kind == "trip":
            q, kk, vv, o = trip_bufs(BM)
            rec = torch.zeros(8, REC_W, device="cuda", dtype=torch.int64)
            attn_trip_stamped.warmup(q, kk, vv, o, rec, 0.1, SHORT, HEADS, -1, D=TRIP_D, BLOCK_M=BM, BLOCK_N=BN,
                                     CLOCK=CLOCK, grid=(1,), num_warps=W, num_stages=S)
        else:
            from triton_kernels import flash_fwd_kernel
            q, k, v, o, lse = tl_bufs()
            rec = torch.zeros(8, REC_W, device="cuda", dtype=torch.int64)
            Bz, H, Sq, D = TL_SHAPE
            grid = (triton.cdiv(Sq, BM), Bz * H)
            flash_fwd_stamped.warmup(q, k, v, o, lse, rec, 0.1, Sq, D=D, BLOCK_M=BM, BLOCK_N=BN, CAUSAL=TL_CAUSAL,
                                     CLOCK=CLOCK, grid=grid, num_warps=W, num_stages=S)
            flash_fwd_kernel.warmup(q, k, v, o, lse, 0.1, Sq, D=D, BLOCK_M=BM, BLOCK_N=BN, CAUSAL=TL_CAUSAL,
                                    grid=grid, num_warps=W, num_stages=S)
        return job, round(time.time() - t, 1), ""
    except Exception as e:  # noqa: BLE001
        return job, round(time.time() - t, 1), repr(e)[:300]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def occupancy(k, W):
    """CTAs an SM of compiled kernel k at W warps (the driver's occupancy calculator)."""
    try:
        from cuda.bindings import driver as cud
        k._init_handles()
        err, occ = cud.cuOccupancyMaxActiveBlocksPerMultiprocessor(cud.CUfunction(k.function), 32 * W,
                                                                    k.metadata.shared)
        return int(occ)
    except Exception:  # noqa: BLE001
        return max(1, min(8, (227 * 1024) // max(1, k.metadata.shared)))


def main():
    t0 = time.time()
    os.makedirs(OUT, exist_ok=True)
    logf = open(os.path.join(OUT, "log.txt"), "w")

    def log(*a):
        s = f"[{time.time() - t0:6.1f}s] " + " ".join(str(x) for x in a)
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()

    import torch
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    want = os.environ.get("TRIP_PARTS", "AB")
    jobs = [("tl", c) for c in (TL_CFGS if "B" in want else [])] + [("trip", c) for c in (TRIP_CFGS if "A" in want else [])]
    with mp.get_context("spawn").Pool(min(len(jobs), max(1, (os.cpu_count() or 4) - 2))) as pool:
        for job, secs, err in pool.imap_unordered(compile_job, jobs):
            log("compiled", job, secs, "s", err)

    parts = os.environ.get("TRIP_PARTS", "AB")
    conds_wanted = os.environ.get("TRIP_CONDS", "alone1,alone2,wave,drift").split(",")
    # ---------------- Part B first: the run17 rows' timelines (the request's core) -------------
    from triton_kernels import flash_fwd_kernel
    Bz, H, Sq, D = TL_SHAPE
    q, k, v, o, lse = tl_bufs()
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    tl_cols = ["config", "ctas", "regs", "smem", "occupancy", "plain_us", "stamped_us", "makespan_us",
               "median_cta_us", "median_prologue_ns", "median_loop_ns", "median_epilogue_ns",
               "median_handover_ns", "median_ns_per_trip", "median_loop_clock_ghz", "status"]
    summ = []
    for BM, BN, W, S in (TL_CFGS if "B" in parts else []):
        name = (f"{'c' if TL_CAUSAL else 'f'}_b{Bz}h{H}s{Sq}d{D}_{BM}x{BN}_w{W}_s{S}" if TL_SHAPE != (16, 8, 2048, 128)
                or not TL_CAUSAL else f"c_b16h8s2048d128_{BM}x{BN}_w{W}_s{S}")
        row = dict(config=name, status="ok")
        if time.time() - t0 > DEADLINE_S:
            log("deadline: skip", name)
            break
        try:
            grid = (triton.cdiv(Sq, BM), Bz * H)
            ctas = grid[0] * grid[1]
            rec = torch.zeros(ctas, REC_W, device="cuda", dtype=torch.int64)
            scale = LOG2E / math.sqrt(D)
            kw = dict(D=D, BLOCK_M=BM, BLOCK_N=BN, CAUSAL=TL_CAUSAL, num_warps=W, num_stages=S)
            kern = flash_fwd_stamped.warmup(q, k, v, o, lse, rec, scale, Sq, **kw, CLOCK=CLOCK, grid=grid)
            kern._init_handles()
            row.update(ctas=ctas, regs=kern.n_regs, smem=kern.metadata.shared, occupancy=occupancy(kern, W))

            def plain():
                flash_fwd_kernel[grid](q, k, v, o, lse, scale, Sq, **kw)

            def inst():
                flash_fwd_stamped[grid](q, k, v, o, lse, rec, scale, Sq, **kw, CLOCK=CLOCK)
            row["plain_us"] = round(triton.testing.do_bench(plain, warmup=5, rep=40, return_mode="median") * 1e3, 2)
            row["stamped_us"] = round(triton.testing.do_bench(inst, warmup=5, rep=40, return_mode="median") * 1e3, 2)
            rows = []
            clocks = []
            for launch in range(3):
                flush.zero_()
                torch.cuda.synchronize()
                inst()
                torch.cuda.synchronize()
                r = rec.cpu().tolist()
                tmin = min(x[1] for x in r)
                for i, (smid, a, b, c, d, n, *ck) in enumerate(r):
                    rows.append((launch, i % grid[0], i // grid[0], smid, n, a - tmin, b - tmin, c - tmin, d - tmin))
                    if launch == 1 and ck and c > b and n >= 2:
                        clocks.append((ck[1] - ck[0]) / (c - b))
            with gzip.open(os.path.join(OUT, f"timeline_{name}.csv.gz"), "wt", newline="") as f:
                w = csv.writer(f)
                w.writerow(["launch", "pm", "bh", "smid", "trips", "t_start_ns", "t_loop_ns", "t_loop_end_ns",
                            "t_end_ns"])
                w.writerows(rows)
            l0 = [x for x in rows if x[0] == 1]   # the middle launch
            row["makespan_us"] = round(max(x[8] for x in l0) / 1e3, 2)
            row["median_cta_us"] = round(med([x[8] - x[5] for x in l0]) / 1e3, 3)
            row["median_prologue_ns"] = med([x[6] - x[5] for x in l0])
            row["median_loop_ns"] = med([x[7] - x[6] for x in l0])
            row["median_epilogue_ns"] = med([x[8] - x[7] for x in l0])
            row["median_ns_per_trip"] = round(med([(x[7] - x[6]) / x[4] for x in l0 if x[4] >= 8]), 1)
            by_sm = {}
            for x in l0:
                by_sm.setdefault(x[3], []).append((x[5], x[8]))
            gaps = []
            occ = row["occupancy"]
            for v_ in by_sm.values():
                v_.sort()
                ends = sorted(e for _, e in v_)
                # each CTA after the SM's first `occ` starts when some slot frees: gap to the latest end before it
                for s_, _ in v_[occ:]:
                    prev = [e for e in ends if e <= s_ + 64]
                    if prev:
                        gaps.append(s_ - max(prev))
            row["median_handover_ns"] = med(gaps)
            if clocks:
                row["median_loop_clock_ghz"] = round(med(clocks), 4)
            del rec
        except Exception as e:  # noqa: BLE001
            row["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
        summ.append(row)
        log("timeline", row)
    with open(os.path.join(OUT, "timeline_summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(tl_cols)
        for row in summ:
            w.writerow([row.get(c, "") for c in tl_cols])
    del q, k, v, o, lse
    torch.cuda.empty_cache()
    default_conds = conds_wanted == ["alone1", "alone2", "wave", "drift"]
    trip_csv = "trip.csv" if default_conds else f"trip_{'_'.join(conds_wanted)}.csv"

    # ---------------- Part A: trip times by condition -------------------------------------------
    cols = ["D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "condition", "r", "grid", "ctas_kept", "regs", "smem",
            "occupancy", "span_short_ns", "span_long_ns", "ns_per_trip", "ns_per_trip_8192", "sm0_ctas", "status"]
    if CLOCK:
        cols.insert(-1, "loop_clock_ghz")
    f = open(os.path.join(OUT, trip_csv), "w", newline="")
    wr = csv.DictWriter(f, fieldnames=cols)
    wr.writeheader()
    fc = gzip.open(os.path.join(OUT, trip_csv.replace(".csv", "_ctas.csv.gz")), "wt", newline="")
    wc = csv.writer(fc)
    wc.writerow(["BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "condition", "r", "skv", "launch", "pid", "smid", "trips",
                 "t_start_ns", "t_loop_ns", "t_loop_end_ns", "t_end_ns"])
    for BM, BN, W, S in (TRIP_CFGS if "A" in parts else []):
        if S == 1 and "cold" in ",".join(conds_wanted):
            continue
        q, kk, vv, o = trip_bufs(BM)
        scale = LOG2E / math.sqrt(TRIP_D)
        rec = torch.zeros(132 * MAX_R * WAVES, REC_W, device="cuda", dtype=torch.int64)
        try:
            kern = attn_trip_stamped.warmup(q, kk, vv, o, rec, scale, SHORT, HEADS, -1, D=TRIP_D, BLOCK_M=BM, BLOCK_N=BN,
                                            CLOCK=CLOCK, grid=(1,), num_warps=W, num_stages=S)
            occ = occupancy(kern, W)
        except Exception as e:  # noqa: BLE001
            log("failed", (BM, BN, W, S), repr(e)[:200])
            continue
        conds = [("alone1", 1, 1, -1)]
        if occ >= 2:
            conds.append(("alone2", 2, sms * 2, 0))
        conds += [("wave", r, sms * r, -1) for r in (1, 2) if r <= occ]
        r_drift = min(occ, MAX_R)
        conds += [("drift", r_drift, sms * r_drift * WAVES, -1)]
        conds += [(c + "_cold", r, g, on) for c, r, g, on in conds if c != "alone2"]
        conds = [c for c in conds if c[0] in conds_wanted]
        for cond, r, grid_n, only in conds:
            if time.time() - t0 > DEADLINE_S:
                log("deadline: stop")
                break
            row = dict(D=TRIP_D, BLOCK_M=BM, BLOCK_N=BN, WARPS=W, STAGES=S, condition=cond, r=r, grid=grid_n, regs=kern.n_regs,
                       smem=kern.metadata.shared, occupancy=occ, status="ok")
            try:
                spans = {}
                for skv in (SHORT, LONG):
                    def launch():
                        attn_trip_stamped[(grid_n,)](q, kk, vv, o, rec, scale, skv, HEADS, only, D=TRIP_D, BLOCK_M=BM,
                                                     BLOCK_N=BN, CLOCK=CLOCK, num_warps=W, num_stages=S)
                    launch()
                    torch.cuda.synchronize()
                    per = []
                    for li in range(3):
                        if cond.endswith("_cold"):   # do_bench's condition: K and V start in DRAM
                            flush.zero_()
                            torch.cuda.synchronize()
                        launch()
                        torch.cuda.synchronize()
                        r_ = rec[:grid_n].cpu().tolist()
                        tmin = min(x[1] for x in r_)
                        run = [x for x in r_ if x[5] > 0]
                        if cond == "alone2":
                            row["sm0_ctas"] = len(run)
                        if cond.startswith("drift"):   # keep CTAs started after the first wave's starts
                            starts = sorted(x[1] for x in r_)
                            cut = starts[min(len(starts) - 1, sms * r)]
                            run = [x for x in run if x[1] >= cut]
                        for pid, x in enumerate(r_):
                            if x[5] > 0 and (li == 1 or not cond.startswith("drift")):
                                wc.writerow([BM, BN, W, S, cond, r, skv, li, pid, x[0], x[5], x[1] - tmin, x[2] - tmin,
                                             x[3] - tmin, x[4] - tmin])
                        per.append(med([x[3] - x[2] for x in run]))
                        row["ctas_kept"] = len(run)
                        if CLOCK and skv == LONG and li == 1:
                            row["loop_clock_ghz"] = round(med([(x[7] - x[6]) / (x[3] - x[2]) for x in run
                                                               if x[3] > x[2]]), 4)
                    spans[skv] = med(per)
                row["span_short_ns"] = spans[SHORT]
                row["span_long_ns"] = spans[LONG]
                row["ns_per_trip"] = round((spans[LONG] - spans[SHORT]) / ((LONG - SHORT) // BN), 1)
                row["ns_per_trip_8192"] = round(spans[LONG] / (LONG // BN), 1)
            except Exception as e:  # noqa: BLE001
                row["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
            wr.writerow(row)
            f.flush()
            log("trip", row)
        del q, kk, vv, o, rec
        torch.cuda.empty_cache()
    f.close()
    fc.close()
    try:
        res = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw",
                              "--format=csv"], capture_output=True, text=True, timeout=20)
        open(os.path.join(OUT, "env.txt"), "w").write(res.stdout + f"torch {torch.__version__} triton "
                                                      f"{triton.__version__}\n")
        log(res.stdout.strip())
    except Exception as e:  # noqa: BLE001
        log("nvidia-smi failed", repr(e)[:100])
    log("total", round(time.time() - t0, 1), "s")


# ---------------- TRIP_NCU=1 (session 15, attn15): per-pipe warp instructions of a drifted trip ----------
# Each count is summed over the GPU (.sum) or averaged over the SMs (.avg); ncu --query-metrics on the device
# decides which of these it knows (the others are logged and left out, so one unknown name loses only itself).
NCU_METRICS = [
    "sm__cycles_elapsed.avg", "sm__cycles_active.avg", "smsp__cycles_active.avg",
    "sm__inst_executed.sum", "smsp__inst_issued.sum", "smsp__issue_active.sum",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_alu.sum", "sm__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_fmaheavy.sum",
    "sm__inst_executed_pipe_fmalite.sum", "sm__inst_executed_pipe_fp16.sum", "sm__inst_executed_pipe_xu.sum",
    "sm__inst_executed_pipe_uniform.sum", "sm__inst_executed_pipe_lsu.sum", "sm__inst_executed_pipe_adu.sum",
    "sm__inst_executed_pipe_cbu.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "sm__inst_executed_pipe_tensor.sum",
    "sm__pipe_alu_cycles_active.sum", "sm__pipe_fma_cycles_active.sum", "sm__pipe_fmaheavy_cycles_active.sum",
    "sm__pipe_fmalite_cycles_active.sum", "sm__pipe_xu_cycles_active.sum", "sm__pipe_shared_cycles_active.sum",
    "sm__pipe_tensor_op_gmma_cycles_active.sum", "sm__pipe_uniform_cycles_active.sum",
    "smsp__thread_inst_executed.sum",
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
] + [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
    "math_pipe_throttle", "wait", "short_scoreboard", "long_scoreboard", "barrier", "mio_throttle", "dispatch_stall",
    "not_selected", "selected", "no_instruction", "lg_throttle", "branch_resolving", "membar", "sleeping", "misc",
    "tex_throttle", "drain", "imc_miss")]
NCU_CORE = ["sm__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_alu.sum", "sm__inst_executed_pipe_xu.sum",
            "sm__inst_executed_pipe_uniform.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
            "sm__cycles_elapsed.avg", "sm__inst_executed.sum"]


def ncu_child(BM, BN, W, S):
    """Child of TRIP_NCU: the drift condition (grid sms x r x WAVES, r = the binary's CTAs an SM, at most MAX_R)
    launched at SHORT then LONG keys twice; ncu profiles the second pair (--launch-skip 2 --launch-count 2)."""
    import json
    import torch
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    q, kk, vv, o = trip_bufs(BM)
    rec = torch.zeros(132 * MAX_R * WAVES, 6, device="cuda", dtype=torch.int64)
    scale = LOG2E / math.sqrt(TRIP_D)
    kern = attn_trip_stamped.warmup(q, kk, vv, o, rec, scale, SHORT, HEADS, -1, D=TRIP_D, BLOCK_M=BM, BLOCK_N=BN,
                                    grid=(1,), num_warps=W, num_stages=S)
    r = min(occupancy(kern, W), MAX_R)
    grid_n = sms * r * WAVES
    for _ in range(2):
        for skv in (SHORT, LONG):
            attn_trip_stamped[(grid_n,)](q, kk, vv, o, rec, scale, skv, HEADS, -1, D=TRIP_D, BLOCK_M=BM,
                                         BLOCK_N=BN, num_warps=W, num_stages=S)
            torch.cuda.synchronize()
    trips = rec[:grid_n, 5].cpu().tolist()
    print("NCU_CHILD " + json.dumps(dict(r=r, grid=grid_n, sms=sms, regs=kern.n_regs, smem=kern.metadata.shared,
                                         trips_long=min(trips), trips_long_max=max(trips))), flush=True)


def ncu_rows(text):
    """The header and data rows of ncu's --csv --page raw output (row 0 names, row 1 units, then one a kernel)."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(lines))
    return (rows[0], rows[1], rows[2:]) if len(rows) >= 3 else (None, None, [])


def ncu_value(v):
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return float("nan")


def main_ncu():
    """TRIP_NCU=1: per-pipe warp instructions a trip of the drifted D = TRIP_D tiles (attn14b's request).

    For each TRIP_CFGS tile a child process runs the drift condition at SHORT and LONG keys under ncu
    (--clock-control none --cache-control none: the boost clock and the warm L2 of the timed drift rows);
    every count's LONG - SHORT difference over grid x (LONG - SHORT) / BLOCK_N trips is the count a CTA a
    trip (what the loop adds; the prologue, the epilogue and the stamps cancel), / WARPS a warp a trip.
    sm__cycles_elapsed.avg's difference over WAVES x (LONG - SHORT) / BLOCK_N is the SM's cycles a round
    of r co-resident trips. Writes trip_ncu.csv (one row a tile and metric), ncu_raw.txt, metrics.txt
    (ncu --query-metrics), log.txt."""
    import json
    from measure_l2_groupm import find_ncu
    t0 = time.time()
    os.makedirs(OUT, exist_ok=True)
    logf = open(os.path.join(OUT, "log.txt"), "w")

    def log(*a):
        s = f"[{time.time() - t0:6.1f}s] " + " ".join(str(x) for x in a)
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()

    ncu = find_ncu()
    log("ncu", ncu, "triton", triton.__version__, "D", TRIP_D, "cfgs", TRIP_CFGS, "MAX_R", MAX_R)
    if not ncu:
        log("no ncu: nothing measured")
        return
    metrics = list(NCU_METRICS)
    try:
        qm = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
        open(os.path.join(OUT, "metrics.txt"), "w").write(qm.stdout + qm.stderr[-2000:])
        known = {ln.split()[0] for ln in qm.stdout.splitlines() if ln.strip() and "__" in ln.split()[0]}
        if len(known) > 50:
            dropped = [m for m in metrics if m.split(".")[0] not in known]
            metrics = [m for m in metrics if m.split(".")[0] in known]
            log("query-metrics:", len(known), "base names; left out (unknown here):", dropped)
    except Exception as e:  # noqa: BLE001
        log("query-metrics failed", repr(e)[:200])
    raw = open(os.path.join(OUT, "ncu_raw.txt"), "w")
    cols = ["D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "r", "grid", "regs", "smem", "metric", "unit",
            "value_short", "value_long", "per_cta_trip", "per_warp_trip", "per_sm_round", "status"]
    f = open(os.path.join(OUT, "trip_ncu.csv"), "w", newline="")
    wr = csv.DictWriter(f, fieldnames=cols)
    wr.writeheader()
    for BM, BN, W, S in TRIP_CFGS:
        if time.time() - t0 > DEADLINE_S:
            log("deadline: stop")
            break
        base = dict(D=TRIP_D, BLOCK_M=BM, BLOCK_N=BN, WARPS=W, STAGES=S)
        for attempt, ms in enumerate((metrics, NCU_CORE)):
            cmd = [ncu, "--csv", "--page", "raw", "--clock-control", "none", "--cache-control", "none",
                   "--metrics", ",".join(ms), "-k", "regex:attn_trip_stamped", "--launch-skip", "2",
                   "--launch-count", "2", sys.executable, os.path.abspath(__file__), "--ncu-child",
                   str(BM), str(BN), str(W), str(S)]
            env = dict(os.environ, TRIP_NCU="child")
            try:
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=HERE, env=env)
                out_, err_ = res.stdout, res.stderr
            except subprocess.TimeoutExpired as e:
                out_, err_ = str(e.stdout or ""), "timeout"
            raw.write(f"### {base} attempt {attempt}\n{' '.join(cmd)}\n{out_}\n{err_[-3000:]}\n")
            raw.flush()
            head, units, data = ncu_rows(out_)
            child = [ln for ln in out_.splitlines() if ln.startswith("NCU_CHILD ")]
            if head and len(data) >= 2 and child:
                break
            log("ncu attempt", attempt, base, "failed:", (err_ or out_)[-400:])
        else:
            wr.writerow(dict(base, status="ncu_failed"))
            f.flush()
            continue
        info = json.loads(child[-1].split(" ", 1)[1])
        trips = (LONG - SHORT) // BN
        short, long_ = data[-2], data[-1]
        log("tile", base, info)
        for m in ms:
            if m not in head:
                continue
            i = head.index(m)
            a, b = ncu_value(short[i]), ncu_value(long_[i])
            row = dict(base, r=info["r"], grid=info["grid"], regs=info["regs"], smem=info["smem"], metric=m,
                       unit=units[i], value_short=short[i], value_long=long_[i], status="ok")
            if m.endswith(".sum"):
                row["per_cta_trip"] = round((b - a) / (info["grid"] * trips), 2)
                row["per_warp_trip"] = round((b - a) / (info["grid"] * trips * W), 3)
            elif m.startswith("sm__cycles") or m.startswith("smsp__cycles"):
                row["per_sm_round"] = round((b - a) / (WAVES * trips), 1)
            wr.writerow(row)
            log(f"  {m:64s} {short[i]:>16s} {long_[i]:>16s} {row.get('per_warp_trip', row.get('per_sm_round', ''))}")
        f.flush()
    f.close()
    raw.close()
    log("total", round(time.time() - t0, 1), "s")


if __name__ == "__main__":
    if "--ncu-child" in sys.argv:
        i = sys.argv.index("--ncu-child")
        ncu_child(*(int(x) for x in sys.argv[i + 1:i + 5]))
    elif os.environ.get("TRIP_NCU") == "1":
        main_ncu()
    else:
        main()
