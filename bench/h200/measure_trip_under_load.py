#!/usr/bin/env python3
"""H200: a k-loop's tile round trip from DRAM while the other SMs stream DRAM reads, beside the
pointer chase's delay at the same stream rate (issue 15, session 12: the queue against the line).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_trip_under_load.py OUTDIR
    python3 bench/h200/measure_trip_under_load.py OUTDIR --cpu   # no GPU: compile the k-loops for
                                                                  # sm_90, check the plan and the rows

Why. The model prices a pipelined k-loop's DRAM round trip with a line fitted on 132-SM rows,
L = 205 ns + 0.3249 ns per GB/s the SMs draw (pipeline.dram_round_trip_unloaded, above the idle
557 ns: tfx/analysis/load_trip.py). dram12 (docs/analysis.md section 8, "The DRAM part of the
round trip as the pointer chase measures it") tried in its place idle 557 + the pointer chase's
growth under load (calibration/h200/measured/latency.csv: +4 .. +543 ns at 0.16 .. 3.90 TB/s):
it fixed persistent_gemm but left a few us a launch uncovered on small-M launches. Which of the
two describes the tile's round trip under load was never measured: the line was fitted where
the k-loop itself drew all the bandwidth, the chase measured one dependent 128-B line.

What. On n = 1, 2, 4, 8 SMs (one CTA each) the stepped k-loop of bench/h200/measure_kloop_step.py
(matmul_kernel's pointer steps and K mask; every byte from DRAM: each CTA reads its own A rows and
B columns, and each launch a fresh region of a pool over 3x the L2) runs 2-5 stages of 8-40 KB
tiles, while the other 132 - n SMs run one streamer block each that reads DRAM (a 2 GiB buffer,
__ldcg 16 B a thread, U loads in flight a thread, W warps; the block asks for the SM's whole shared
memory, so no k-loop CTA shares its SM) for a fixed time. The streamer levels (W, U) put from
about 0.1 to over 4 TB/s on DRAM; each row records the rate the streamer blocks measured
(bytes / their globaltimer window) and checks that every timed k-loop launch ran inside that
window (CTA 0 stamps %globaltimer at its start and end) and on SMs no streamer block held.
Beside it, at each (n, level), the pointer chase of bench/h200/measure_latency.py (one thread,
a random cycle over the 128-B lines of 1 GiB, __ldcg) runs on a free SM under the same streamers:
chase_ns - the unloaded chase_ns is the delay at that rate.

Rows (trip_under_load.csv): n SMs, tile, stages, level, trips, ns_per_trip (CTA 0's globaltimer
span / trips, median of the timed launches; launch gaps excluded), event_ns_per_trip (CUDA events
over the launches / launches / trips), round_trip_ns = (S-1) x ns_per_trip (what Little's law
implies with S-1 tiles in flight), the k-loop's own DRAM rate, the streamer's rate, the chase's
ns a step and its delay over the unloaded chase, and the placement checks. chase.csv: the chase
alone per (n, level). log.txt, env.txt.
"""
import csv
import math
import os
import statistics
import subprocess
import sys
import time
import traceback

CPU = "--cpu" in sys.argv
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OUT = ARGS[0] if ARGS else "."
T0 = time.time()
DEADLINE_S = float(os.environ.get("TRIP_DEADLINE_S", "230"))
SMS_DEFAULT = 132
L2_BYTES = 60 * 1024 * 1024
POOL_L2 = 3                      # each launch reads fresh bytes of a pool over POOL_L2 x L2
TRIPS = int(os.environ.get("TRIP_TRIPS", "256"))
REPS, LAUNCHES = 3, 3            # timed: REPS x LAUNCHES launches after one warm-up launch
SLEEP_NS = 300_000               # the k-loop's stream waits this long for the streamers to settle
CHASE_STEPS = 2000
CHASE_WS = 1 << 30
STREAM_BYTES = 2 << 30

# (BM, BN, BK, WARPS): tile bytes (BM + BN) x BK x 2 = 8, 10, 24, 32, 40 KB (measure_kloop.py's)
TILES = [(64, 64, 32, 4), (16, 64, 64, 4), (64, 128, 64, 4), (128, 128, 64, 8), (128, 32, 128, 8)]
STAGES = [2, 3, 4, 5]
NSMS = [8, 1, 4, 2]
# streamer levels: (warps a block, 16-byte loads in flight a thread); 0 = no streamer
LEVELS = [(0, 0), (1, 2), (2, 4), (4, 4), (4, 8), (8, 8), (16, 8), (32, 8)]
if "TRIP_NSMS" in os.environ:
    NSMS = [int(x) for x in os.environ["TRIP_NSMS"].split(",")]
if "TRIP_STAGES" in os.environ:
    STAGES = [int(x) for x in os.environ["TRIP_STAGES"].split(",")]


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "log.txt"), "a") as f:
        f.write(line + "\n")


# ---------------------------------------------------------------- plan and rows (pure: --cpu checks them)

def tile_bytes(bm, bn, bk):
    return (bm + bn) * bk * 2


def pool(bm, bn, bk, n):
    """(K, rotations): K = TRIPS x BK, and how many disjoint launch regions the pool holds so
    that the bytes read since a region was last read exceed POOL_L2 x L2 (each launch reads
    n x (BM + BN) x K x 2 bytes)."""
    k = TRIPS * bk
    per_launch = n * (bm + bn) * k * 2
    return k, max(2, math.ceil(POOL_L2 * L2_BYTES / per_launch) + 1)


def plan():
    """(n, tile, stages) in the order they run: n outermost so that a deadline keeps whole SM
    counts; the streamer levels run inside each."""
    return [(n, t, s) for n in NSMS for s in STAGES for t in TILES]


def row_of(n, tile, st, level, smem, regs, spans_ns, event_ms, launches, stream, chase, chase_idle, kloop_sms,
           overlap, inside):
    """One CSV row from the raw timings. ``spans_ns``: CTA 0's globaltimer span of each timed
    launch; ``event_ms``: CUDA-event ms over each rep of ``launches`` launches; ``stream``:
    (bytes, window ns) of the streamers or None; ``chase``: ns a step under the same level."""
    bm, bn, bk, warps = tile
    ns_trip = statistics.median(spans_ns) / TRIPS
    ev_trip = statistics.median(event_ms) * 1e6 / launches / TRIPS
    tb = tile_bytes(bm, bn, bk)
    row = dict(n_sms=n, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st, tile_bytes=tb, stream_warps=level[0],
               stream_loads=level[1], trips=TRIPS, ns_per_trip=round(ns_trip, 2), event_ns_per_trip=round(ev_trip, 2),
               round_trip_ns=round(max(st - 1, 1) * ns_trip, 1),
               kloop_tb_s=round(n * tb / ns_trip / 1e3, 4),
               stream_tb_s=round(stream[0] / stream[1] / 1e3, 4) if stream else 0.0,
               chase_ns=round(chase, 1) if chase is not None else "",
               chase_delay_ns=round(chase - chase_idle, 1) if chase is not None and chase_idle is not None else "",
               kloop_sms_used=kloop_sms, sm_overlap=overlap, inside_window=inside, regs=regs, smem_bytes=smem,
               status="ok")
    return row


COLS = ["n_sms", "BM", "BN", "BK", "WARPS", "STAGES", "tile_bytes", "stream_warps", "stream_loads", "trips",
        "ns_per_trip", "event_ns_per_trip", "round_trip_ns", "kloop_tb_s", "stream_tb_s", "chase_ns",
        "chase_delay_ns", "kloop_sms_used", "sm_overlap", "inside_window", "regs", "smem_bytes", "status"]
CHASE_COLS = ["n_sms", "stream_warps", "stream_loads", "streamer_blocks", "steps", "chase_ns", "chase_runs",
              "stream_tb_s", "inside_window"]


# ---------------------------------------------------------------- the k-loop (Triton)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def trip_kernel(a_ptr, b_ptr, c_ptr, sm_ptr, t_ptr, K, a_row0, b_col0, stride_am, stride_ak, stride_bk, stride_bn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # measure_kloop_step.py's kloop_step_kernel (triton_kernels.py matmul_kernel's loop): CTA j
    # reads A rows a_row0 + j*BM.. and B columns b_col0 + j*BN.., K of each; it records its SM
    # and CTA 0 its %globaltimer at the start and the end
    pid = tl.program_id(0)
    t_start = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [pid], dtype=tl.int64,
                                        is_pure=False, pack=1)
    offs_am = a_row0 + pid * BM + tl.arange(0, BM)
    offs_bn = b_col0 + pid * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + (offs_am[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None].to(tl.int64) * stride_bk + offs_bn[None, :] * stride_bn)
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
    smid = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pid], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(sm_ptr + pid, smid)
    t_end = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [pid], dtype=tl.int64,
                                      is_pure=False, pack=1)
    if pid == 0:
        tl.store(t_ptr, t_start)
        tl.store(t_ptr + 1, t_end)


def compile_cpu(key):
    """Compile for sm_90 without a GPU: (shared bytes, registers unknown here)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    bm, bn, bk, warps, st = key
    names = trip_kernel.arg_names
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "sm_ptr": "*i32", "t_ptr": "*i64", "K": "i32",
           "a_row0": "i32", "b_col0": "i32", "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32",
           "stride_bn": "i32"}
    consts = dict(BM=bm, BN=bn, BK=bk, stride_ak=1, stride_bn=1)
    sig = {k: sig.get(k, "constexpr") for k in names}
    sig["stride_ak"] = sig["stride_bn"] = "constexpr"
    attrs = {(names.index(x),): [["tt.divisibility", 16]] for x in ("a_ptr", "b_ptr", "c_ptr", "sm_ptr", "t_ptr",
                                                                    "K", "stride_am", "stride_bk")}
    k = triton.compile(ASTSource(fn=trip_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=st))
    return k.metadata.shared, k.asm["ptx"]


# ---------------------------------------------------------------- the streamers and the chase (CuPy)

STREAM_SRC = r"""
__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned smid() {
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

// one block a SM (it asks for the SM's whole shared memory): each thread keeps U 16-byte reads
// in flight (__ldcg: L2 and DRAM, not L1) over a read-only buffer until dur_ns have passed
extern "C" __global__ void stream_reads(const float4* __restrict__ src, long long n4, unsigned long long dur_ns,
                                        unsigned long long* moved, unsigned long long* window, int* sms,
                                        float* sink) {
    extern __shared__ float pad[];
    unsigned long long t0 = gtimer();
    long long base = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    long long i = base;
    float acc = 0.f;
    unsigned long long count = 0;
    unsigned long long t = t0;
    while (t - t0 < dur_ns) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcg(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
        count += 16 * U;
        i += U * stride;
        if (i + U * stride > n4) i = base;
        t = gtimer();
    }
    if (acc == 1234.5f) sink[0] = acc + pad[threadIdx.x];   // keeps the reads; never true
    atomicAdd(moved, count);
    if (threadIdx.x == 0) {
        atomicMin(window, t0);
        atomicMax(window + 1, t);
        sms[blockIdx.x] = (int)smid();
    }
}

// measure_latency.py's chase without its own streamer: thread 0 walks a random cycle over the
// 128-B lines (one dependent __ldcg a step) after warm_ns, and stamps %globaltimer
extern "C" __global__ void chase(const long long* __restrict__ nxt, long long start, int steps, long long* out,
                                 unsigned long long* times, unsigned long long warm_ns) {
    if (threadIdx.x == 0) {
        unsigned long long w0 = gtimer();
        while (gtimer() - w0 < warm_ns) { }
        long long i = start;
        unsigned long long g0 = gtimer();
        for (int s = 0; s < steps; ++s) i = __ldcg(nxt + i);
        unsigned long long g1 = gtimer();
        out[0] = i;
        times[0] = g1 - g0;
        times[1] = g0;
        times[2] = g1;
    }
}
"""


def inside(spans, window):
    """Whether every (start, end) globaltimer span lies inside the streamers' (first start, last end)."""
    return all(window[0] <= s and e <= window[1] for s, e in spans)


def main_cpu():
    """No GPU: compile every k-loop for sm_90, check each fits one SM beside nothing, and build
    rows from made-up timings so that the row logic runs."""
    os.makedirs(OUT, exist_ok=True)
    log("cpu check: triton", triton.__version__)
    bad = 0
    for tile in TILES:
        for st in STAGES:
            try:
                smem, ptx = compile_cpu(tile + (st,))
                cp_async = ptx.count("cp.async.cg.shared.global")
                log("compiled", tile, st, "smem", smem, "cp.async.cg", cp_async, "globaltimer",
                    ptx.count("%globaltimer"), "smid", ptx.count("%smid"))
                if smem > 232448 or cp_async == 0:
                    bad += 1
                    log("  NOT OK: smem over the SM's or loads not pipelined")
            except Exception as e:
                bad += 1
                log("compile error", tile, st, repr(e)[:400])
    for n in NSMS:
        for tile in TILES:
            k, rot = pool(tile[0], tile[1], tile[2], n)
            per = n * (tile[0] + tile[1]) * k * 2
            assert (rot - 1) * per >= POOL_L2 * L2_BYTES, (n, tile)
            log("pool", n, tile, "K", k, "rotations", rot, "MB a launch", round(per / 1e6, 1))
    # a row from invented timings: 256 trips of 1,000 ns a trip (CTA 0's span 256,000 ns), 3
    # reps of 3 launches of 0.26 ms: event 260,000 / 256 = 1,015.6 ns a trip
    r = row_of(8, (128, 128, 64, 8), 3, (8, 8), 131072, 168, [256000, 255000, 257000], [0.78, 0.78, 0.79], 3,
               (2.0e9, 1.0e6), 900.0, 340.0, 8, 0, True)
    assert r["ns_per_trip"] == 1000.0 and r["round_trip_ns"] == 2000.0, r
    assert r["event_ns_per_trip"] == round(0.78e6 / 3 / 256, 2), r
    assert r["stream_tb_s"] == 2.0 and r["chase_delay_ns"] == 560.0, r
    assert r["kloop_tb_s"] == round(8 * 32768 / 1000 / 1e3, 4), r
    assert set(r) == set(COLS)
    assert inside([(5, 9), (10, 20)], (5, 20)) and not inside([(4, 9)], (5, 20))
    log("plan", len(plan()), "k-loop configurations x", len(LEVELS), "levels")
    log("cpu check done;", "FAILED" if bad else "ok")
    return 1 if bad else 0


# ---------------------------------------------------------------- the device run

def main():
    import numpy as np
    import torch
    import cupy as cp

    os.makedirs(OUT, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    log("device", torch.cuda.get_device_name(0), "SMs", sms, "torch", torch.__version__, "triton",
        triton.__version__, "cupy", cp.__version__)
    try:
        smem_optin = int(cp.cuda.runtime.getDeviceProperties(0)["sharedMemPerBlockOptin"])
    except Exception:  # noqa: BLE001 - the H200's 227 KB
        smem_optin = 232448
    log("shared memory a block (opt-in)", smem_optin)
    streamers = {}
    for w, u in LEVELS:
        if u and u not in streamers:
            streamers[u] = cp.RawKernel(f"#define U {u}\n" + STREAM_SRC, "stream_reads")
            streamers[u].max_dynamic_shared_size_bytes = smem_optin
    chase_fn = cp.RawKernel("#define U 1\n" + STREAM_SRC, "chase")
    src = cp.ones(STREAM_BYTES // 4, dtype=cp.float32)
    n4 = src.size // 4
    moved = cp.zeros(1, dtype=cp.uint64)
    window = cp.zeros(2, dtype=cp.uint64)
    stream_sms = cp.full(sms, -1, dtype=cp.int32)
    sink = cp.zeros(1, dtype=cp.float32)
    s_stream = cp.cuda.Stream(non_blocking=True)
    k_stream = torch.cuda.Stream()

    # the chase's 1 GiB random cycle (measure_latency.py's chain)
    t = time.time()
    nlines = CHASE_WS // 128
    rng = np.random.default_rng(1)
    order = rng.permutation(nlines).astype(np.int64)
    nxt_h = np.zeros(nlines * 16, dtype=np.int64)
    nxt_h[order * 16] = np.roll(order, -1) * 16
    nxt = cp.asarray(nxt_h)
    starts = [int(order[k * nlines // 16] * 16) for k in range(16)]
    del nxt_h, order
    log(f"chain built in {time.time() - t:.1f} s")
    chase_out = cp.zeros(1, dtype=cp.int64)
    chase_t = cp.zeros(3, dtype=cp.uint64)
    sleep_cycles = int(SLEEP_NS * 1.98)

    def start_streamers(level, n, dur_ns):
        w, u = level
        moved.fill(0)
        window[0] = np.uint64(2 ** 64 - 1)
        window[1] = 0
        stream_sms.fill(-1)
        cp.cuda.Device().synchronize()
        with s_stream:
            streamers[u]((sms - n,), (32 * w,), (src, cp.int64(n4), cp.uint64(dur_ns), moved, window, stream_sms, sink),
                         shared_mem=smem_optin)

    def streamer_result():
        s_stream.synchronize()
        win = [int(x) for x in window.get()]
        return (int(moved.get()[0]), max(win[1] - win[0], 1)), win, set(int(x) for x in stream_sms.get() if x >= 0)

    def run_chase(k):
        chase_fn((1,), (32,), (nxt, cp.int64(starts[k % 16]), cp.int32(CHASE_STEPS), chase_out, chase_t,
                               cp.uint64(SLEEP_NS)))
        tt = [int(x) for x in chase_t.get()]
        return tt[0] / CHASE_STEPS, (tt[1], tt[2])

    # ---- the chase per (n, level): three chases on a free SM under the streamers
    fc = open(os.path.join(OUT, "chase.csv"), "w", newline="")
    wc = csv.DictWriter(fc, fieldnames=CHASE_COLS)
    wc.writeheader()
    chase_ns = {}
    chase_stream = cp.cuda.Stream(non_blocking=True)
    k_run = 0
    for n in NSMS:
        for level in LEVELS:
            try:
                if level[0]:
                    start_streamers(level, n, 12_000_000)
                res = []
                with chase_stream:
                    for _ in range(3):
                        res.append(run_chase(k_run))
                        k_run += 1
                stream, win, _ = streamer_result() if level[0] else (None, None, None)
                ns = statistics.median(r[0] for r in res)
                chase_ns[(n, level)] = ns
                ins = inside([r[1] for r in res], win) if win else ""
                wc.writerow(dict(n_sms=n, stream_warps=level[0], stream_loads=level[1],
                                 streamer_blocks=(sms - n) if level[0] else 0, steps=CHASE_STEPS, chase_ns=round(ns, 1),
                                 chase_runs=";".join(f"{r[0]:.1f}" for r in res),
                                 stream_tb_s=round(stream[0] / stream[1] / 1e3, 4) if stream else 0.0,
                                 inside_window=ins))
                fc.flush()
                log("chase n", n, "level", level, "ns/step", round(ns, 1), "stream TB/s",
                    round(stream[0] / stream[1] / 1e3, 3) if stream else 0, "inside", ins)
            except Exception:
                log("chase FAILED", n, level, traceback.format_exc()[-600:])
    fc.close()

    # ---- the k-loops
    f = open(os.path.join(OUT, "trip_under_load.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    rot_counter = [0]
    for n, tile, st in plan():
        if time.time() - T0 > DEADLINE_S:
            log("deadline: stopping")
            break
        bm, bn, bk, warps = tile
        try:
            k, rot = pool(bm, bn, bk, n)
            a = torch.ones(rot * n * bm, k, device="cuda", dtype=torch.bfloat16)
            b = torch.ones(k, rot * n * bn, device="cuda", dtype=torch.bfloat16)
            c = torch.empty(n * bm, bn, device="cuda", dtype=torch.bfloat16)
            smt = torch.full((n,), -1, device="cuda", dtype=torch.int32)
            tt = torch.zeros(2, device="cuda", dtype=torch.int64)

            def go():
                j = rot_counter[0] % rot
                rot_counter[0] += 1
                return trip_kernel[(n,)](a, b, c, smt, tt, k, j * n * bm, j * n * bn, a.stride(0), 1, b.stride(0), 1,
                                         BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=st)
            kern = go()
            torch.cuda.synchronize()
            one_ms = None
            for level in LEVELS:
                if time.time() - T0 > DEADLINE_S:
                    break
                spans, ev = [], []
                launch_ns = one_ms * 1e6 if one_ms else TRIPS * 3000
                # the streamers outlast the timed launches (checked: inside_window) even where the
                # load slows the trips 4x
                dur = int(SLEEP_NS + (1 + REPS * LAUNCHES) * launch_ns * 4 + 2_000_000)
                if level[0]:
                    start_streamers(level, n, dur)
                with torch.cuda.stream(k_stream):
                    if level[0]:
                        torch.cuda._sleep(sleep_cycles)
                    go()                                       # warm-up, under the load
                    for _ in range(REPS):
                        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        e0.record()
                        for _ in range(LAUNCHES):
                            go()
                        e1.record()
                        e1.synchronize()
                        ev.append(e0.elapsed_time(e1))
                        spans.append(tuple(int(x) for x in tt.tolist()))   # the last launch of the rep
                k_stream.synchronize()
                stream, win, ssms = streamer_result() if level[0] else (None, None, set())
                ids = set(smt.tolist())
                row = row_of(n, tile, st, level, kern.metadata.shared, kern.n_regs, [e - s for s, e in spans], ev,
                             LAUNCHES, stream, chase_ns.get((n, level)), chase_ns.get((n, (0, 0))), len(ids),
                             len(ids & ssms), inside(spans, win) if win else "")
                if not level[0]:
                    one_ms = statistics.median(ev) / LAUNCHES
                w.writerow(row)
                f.flush()
                log({x: row[x] for x in ("n_sms", "BM", "BN", "BK", "STAGES", "stream_warps", "stream_loads",
                                         "ns_per_trip", "event_ns_per_trip", "round_trip_ns", "stream_tb_s",
                                         "chase_delay_ns", "kloop_sms_used", "sm_overlap", "inside_window")})
            del a, b, c
            torch.cuda.empty_cache()
        except Exception as e:
            w.writerow(dict(n_sms=n, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st,
                            status="error: " + repr(e)[:160].replace("\n", " ")))
            log(traceback.format_exc()[-600:])
    f.close()
    log("done")


def smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit",
                               "--format=csv"], capture_output=True, text=True, timeout=20).stdout
    except Exception as e:  # noqa: BLE001
        return repr(e)


if __name__ == "__main__":
    if CPU:
        sys.exit(main_cpu())
    before = smi()
    main()
    with open(os.path.join(OUT, "env.txt"), "w") as fe:
        fe.write(before + "at the end:\n" + smi())
