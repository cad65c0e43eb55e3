#!/usr/bin/env python3
"""H200 measurement campaign for calibrating the tfx closed-form model.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure.py OUTDIR
Local logic test on a CPU (Triton interpreter, tiny sizes, no timings of value):
    python3 bench/h200/measure.py OUTDIR --cpu-test

Writes, flushing every row as it is measured so partial results survive:
    gemm_triton.csv       Triton tutorial-style tiled GEMM (bf16 in, fp32 acc, bf16 out), per config:
                          time, TFLOP/s, n_regs, n_spills, shared bytes, resident blocks/SM, rel. error
    launch.csv            launch overhead: stream back-to-back, pre-queued behind a sleep, CUDA graph,
                          round trip, and empty-kernel grid sweep
    attention.csv         SDPA flash causal prefill; GQA decode via SDPA and a split-KV Triton kernel
    decode_step.csv       Llama-3.1-8B decode step (plain torch, CUDA graph), full / GEMM-only / attention-only
    decode_kernels.csv    per-kernel breakdown of one eager decode step (torch profiler)
    copy_concurrency.csv  persistent Triton copy: achieved bandwidth vs CTAs x bytes in flight per CTA
    log.txt               everything printed, with versions and nvidia-smi readings

Timing: median of CUDA-event timings after warm-up (triton.testing.do_bench with
return_mode='median', which clears the L2 with a 256 MB memset before every timed run),
or median of CUDA-graph replays where stated. All inputs are random (never zeros).

Formulas (bf16 = 2 bytes):
    GEMM:      flops = 2*M*N*K;  min_bytes = 2*(M*K + K*N + M*N)
    prefill:   causal flops = 4*B*HQ*D * S*(S+1)/2   (QK^T and PV, only the unmasked triangle)
               full   flops = 4*B*HQ*D * S*S
               bytes = 2*(2*B*HQ*S*D + 2*B*HKV*S*D)   (Q and O, K and V, each once)
    decode:    flops = 4*B*HQ*SKV*D  (one query token)
               bytes = 2*(2*B*HKV*SKV*D + 2*B*HQ*D)  (K and V cache once, q and o)
    decode step min_bytes = all linear weights + lm head + B embedding rows + K/V cache read
                            (32 layers * 2 * B * 8 * ctx * 128 * 2)
    copy:      bytes = 2 * buffer bytes (read + write)
"""
import math
import os
import statistics
import sys
import time
import traceback

from common import Campaign, compile_processes, event_ms, median_ms, results_in_budget, sync

CPU_TEST = "--cpu-test" in sys.argv
if CPU_TEST:
    os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache")

try:
    import torch
    import torch.nn.functional as F
except Exception:  # pragma: no cover
    torch = None
try:
    import triton
    import triton.language as tl
    HAVE_TRITON = True
except Exception:  # pragma: no cover
    HAVE_TRITON = False

# the Triton CPU interpreter mishandles bf16 (numpy has none): the CPU logic test uses fp16
DT = (torch.float16 if CPU_TEST else torch.bfloat16) if torch is not None else None
GLOBAL_DEADLINE_S = 430.0          # whole script, seconds from start
SECTION_MAX_S = {"gemm": 230.0, "launch": 25.0, "attention": 45.0, "decode": 85.0, "copy": 60.0}
RUN = Campaign(GLOBAL_DEADLINE_S, SECTION_MAX_S, nvsmi_fields="name,driver_version,clocks.sm,clocks.mem,"
               "clocks.max.sm,temperature.gpu,power.draw,power.limit")
log, occupancy, nvsmi = RUN.log, RUN.occupancy, RUN.nvsmi


def bench(fn, warmup=10, rep=50):
    """Median ms per call."""
    return median_ms(fn, warmup, rep, CPU_TEST)


def rel_err(out, ref):
    o = out.float()
    r = ref.float()
    if not torch.isfinite(o).all():
        return float("nan")
    return float((o - r).norm() / r.norm().clamp_min(1e-30))


# ----------------------------------------------------------------------------------------------
# Triton kernels
# ----------------------------------------------------------------------------------------------
if HAVE_TRITON:

    from triton_kernels import matmul_kernel

    @triton.jit
    def empty_kernel(X):
        pass

    @triton.jit
    def copy_kernel(src, dst, n_iters, BLOCK: tl.constexpr):
        # persistent: CTA pid copies blocks pid, pid+nprog, ...; one BLOCK load in flight per CTA
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        offs = tl.arange(0, BLOCK)
        for i in range(pid, n_iters, nprog):
            base = i * BLOCK   # < 2**31 elements here
            x = tl.load(src + base + offs)
            tl.store(dst + base + offs, x)

    @triton.jit
    def decode_split_kernel(Q, Kc, Vc, OP, MP, LP, sm_scale, SKV, SPLIT_LEN,
                            NSPLIT: tl.constexpr, HKV: tl.constexpr, G: tl.constexpr, GP: tl.constexpr,
                            D: tl.constexpr, BLOCK_N: tl.constexpr):
        # grid (B*HKV, NSPLIT): one KV head, its G query heads (padded to GP rows), one KV chunk
        bh = tl.program_id(0)
        sp = tl.program_id(1)
        b = bh // HKV
        hk = bh % HKV
        offs_g = tl.arange(0, GP)
        offs_d = tl.arange(0, D)
        offs_n = tl.arange(0, BLOCK_N)
        gmask = offs_g < G
        hq = b * HKV * G + hk * G + offs_g           # flat (b, q-head) row
        q = tl.load(Q + hq[:, None] * D + offs_d[None, :], mask=gmask[:, None], other=0.0)
        kv_base = (b * HKV + hk).to(tl.int64) * SKV * D
        start = sp * SPLIT_LEN
        m_i = tl.full([GP], -1.0e30, tl.float32)
        l_i = tl.zeros([GP], tl.float32)
        acc = tl.zeros([GP, D], tl.float32)
        for n0 in range(start, start + SPLIT_LEN, BLOCK_N):
            n = n0 + offs_n
            kt = tl.load(Kc + kv_base + n[None, :] * D + offs_d[:, None])          # (D, BLOCK_N)
            s = tl.dot(q, kt) * sm_scale                                           # (GP, BLOCK_N)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(Vc + kv_base + n[:, None] * D + offs_d[None, :])           # (BLOCK_N, D)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
        row = hq * NSPLIT + sp
        tl.store(OP + row[:, None] * D + offs_d[None, :], acc, mask=gmask[:, None])
        tl.store(MP + row, m_i, mask=gmask)
        tl.store(LP + row, l_i, mask=gmask)

    @triton.jit
    def decode_reduce_kernel(OP, MP, LP, O, NSPLIT: tl.constexpr, D: tl.constexpr):
        r = tl.program_id(0)
        offs_s = tl.arange(0, NSPLIT)
        offs_d = tl.arange(0, D)
        m = tl.load(MP + r * NSPLIT + offs_s)
        l = tl.load(LP + r * NSPLIT + offs_s)
        mx = tl.max(m, 0)
        w = tl.exp(m - mx)
        den = tl.sum(l * w, 0)
        o = tl.load(OP + (r * NSPLIT + offs_s)[:, None] * D + offs_d[None, :])
        out = tl.sum(o * w[:, None], 0) / den
        tl.store(O + r * D + offs_d, out.to(O.dtype.element_ty))


# ----------------------------------------------------------------------------------------------
# 1. GEMM
# ----------------------------------------------------------------------------------------------
# (BM, BN, BK, WARPS, STAGES)
GEMM_CORE = [
    (128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (256, 128, 64, 8, 3), (256, 128, 64, 8, 4),
    (128, 128, 64, 4, 3), (128, 128, 64, 4, 4), (128, 128, 64, 8, 3), (128, 128, 64, 8, 4),
    (128, 128, 128, 8, 3), (128, 128, 32, 4, 4), (128, 128, 32, 4, 5), (64, 128, 64, 4, 4),
    (128, 64, 64, 4, 4), (64, 64, 64, 4, 4), (64, 64, 32, 4, 5), (64, 256, 64, 4, 4),
    (256, 64, 64, 4, 4), (256, 256, 64, 8, 3), (256, 256, 64, 4, 3), (256, 256, 128, 8, 3),
    (128, 256, 128, 8, 4), (128, 128, 64, 8, 2), (128, 256, 64, 8, 2), (128, 256, 32, 8, 5),
    (64, 128, 32, 4, 3), (128, 128, 128, 4, 2), (256, 128, 128, 8, 2), (128, 256, 64, 4, 3),
    (64, 64, 128, 4, 3), (128, 64, 128, 4, 4), (64, 64, 64, 4, 2), (256, 128, 64, 8, 5),
    (128, 256, 64, 8, 5), (128, 128, 64, 4, 5),
]
GEMM_G1 = [GEMM_CORE[i] for i in (0, 1, 2, 4, 5, 7, 9, 11, 13, 15)]
GEMM_SKINNY = [(64, 64, 64, 4, 4), (64, 128, 64, 4, 4), (64, 256, 64, 4, 4), (128, 128, 64, 4, 4),
               (128, 256, 64, 8, 3), (64, 64, 128, 4, 3), (64, 128, 128, 4, 3), (128, 128, 128, 8, 3)]


def gemm_plan(cpu=False):
    """List of ((M,N,K), (BM,BN,BK,W,S,G)) in measurement order (most important first)."""
    if cpu:
        return [((64, 96, 128), (32, 32, 32, 4, 2, 8)), ((64, 96, 128), (32, 64, 32, 4, 3, 1)),
                ((16, 64, 64), (16, 32, 16, 4, 2, 8))]
    plan = []
    for shape, g1 in [((8192, 8192, 8192), True), ((4096, 4096, 4096), True), ((8192, 8192, 1024), False),
                      ((2048, 2048, 2048), False), ((1024, 1024, 8192), False)]:
        plan += [(shape, c + (8,)) for c in GEMM_CORE]
        if g1:
            plan += [(shape, c + (1,)) for c in GEMM_G1]
    for shape in [(128, 8192, 8192), (16, 8192, 8192)]:
        plan += [(shape, c + (8,)) for c in GEMM_SKINNY]
    return plan


def _gemm_warmup(A, B, C, M, N, K, cfg):
    BM, BN, BK, W, S, G = cfg
    return matmul_kernel.warmup(A, B, C, M, N, K, K, 1, N, 1, N, 1,
                                BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=G,
                                num_warps=W, num_stages=S, grid=(1,))


def _compile_worker(cfg):
    """Runs in a spawned process: compile one config into the shared Triton cache."""
    t = time.time()
    try:
        x = torch.empty(64, dtype=DT, device="cuda")
        _gemm_warmup(x, x, x, 4096, 4096, 4096, cfg)
        return cfg, "ok", time.time() - t, ""
    except Exception as e:
        return cfg, "compile_error", time.time() - t, repr(e)[:300]


def precompile(cfgs, budget_s):
    """Compile configs in parallel processes into the shared Triton cache.
    Returns (ok: set or None if the pool could not run, failed: {cfg: reason})."""
    import multiprocessing as mp
    nproc = compile_processes(len(cfgs))
    log(f"precompiling {len(cfgs)} GEMM configs in {nproc} processes (budget {budget_s:.0f}s)")
    ok, failed, errs = set(), {}, {}
    t = time.time()
    pool = None
    try:
        ctx = mp.get_context("spawn")
        pool = ctx.Pool(nproc)
        for cfg, st, dt, err in results_in_budget(pool, _compile_worker, cfgs, budget_s, t):
            if st == "ok":
                ok.add(cfg)
            else:   # not skipped: the main process retries it and records its own error
                errs[cfg] = err
                log("  compile error in worker (main will retry)", cfg, err)
        log(f"  precompile done in {time.time() - t:.1f}s")
    except Exception as e:
        log("  precompile stopped:", repr(e)[:300], f"after {time.time() - t:.1f}s; {len(ok)} compiled")
        if ok:   # configs still compiling when the budget ran out are skipped (could hang the main process)
            for c in cfgs:
                if c not in ok and c not in errs:
                    failed[c] = "compile_timeout: not compiled within the precompile budget"
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return ok, failed


def gemm_section():
    dl = RUN.deadline("gemm")
    cols = ["impl", "run", "M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M", "status", "ms", "tflops",
            "n_regs", "n_spills", "shared_bytes", "blocks_per_sm", "grid_ctas", "flops", "min_bytes",
            "rel_err", "compile_s", "error"]
    out = RUN.csv("gemm_triton.csv", cols)
    plan = gemm_plan(CPU_TEST)
    dev = "cpu" if CPU_TEST else "cuda"
    if not CPU_TEST:
        uniq = sorted(set(cfg for _, cfg in plan))
        ok_cfgs, failed_cfgs = precompile(uniq, budget_s=max(30.0, min(120.0, dl.left() - 60)))
        log(f"precompiled ok: {len(ok_cfgs)}/{len(uniq)}; skipped (timeout): {len(failed_cfgs)}")
    else:
        failed_cfgs = {}
    from triton.runtime.autotuner import OutOfResources
    cur_shape = None
    A = B = C = ref = None
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)
    best = {}
    plan = [(sh, c, 1) for sh, c in plan]
    plan_len = len(plan)
    i_plan = 0
    while i_plan < len(plan):
        shape, cfg, run = plan[i_plan]
        i_plan += 1
        if i_plan == plan_len:   # after the grid: time the best config of each shape a second time
            plan += [(sh, b[1], 2) for sh, b in best.items()]
        M, N, K = shape
        BM, BN, BK, W, S, G = cfg
        base = dict(impl="triton_tutorial", run=run, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S, GROUP_M=G,
                    flops=2 * M * N * K, min_bytes=2 * (M * K + K * N + M * N),
                    grid_ctas=triton.cdiv(M, BM) * triton.cdiv(N, BN))
        if dl.over():
            out.row(**base, status="skipped_time_budget")
            continue
        if cfg in failed_cfgs:
            out.row(**base, status=failed_cfgs[cfg].split(":")[0], error=failed_cfgs[cfg][:300])
            continue
        try:
            if shape != cur_shape:
                A = B = C = ref = None
                if not CPU_TEST:
                    torch.cuda.empty_cache()
                A = torch.randn(M, K, device=dev, dtype=DT, generator=gen)
                B = torch.randn(K, N, device=dev, dtype=DT, generator=gen)
                C = torch.empty(M, N, device=dev, dtype=DT)
                ref = (A.float() @ B.float()) if CPU_TEST else (A @ B)
                cur_shape = shape
                log(f"GEMM shape {shape}")
                if run == 1:
                    cms = bench(lambda: torch.matmul(A, B), warmup=10, rep=50)
                    out.row(impl="cublas_torch_matmul", run=1, M=M, N=N, K=K, status="ok", ms=cms,
                            tflops=2 * M * N * K / (cms * 1e-3) / 1e12, flops=2 * M * N * K,
                            min_bytes=2 * (M * K + K * N + M * N))
                    log(f"  cuBLAS: {cms:.4f} ms {2 * M * N * K / (cms * 1e-3) / 1e12:.1f} TF/s")
            t = time.time()
            info = {}
            if not CPU_TEST:
                k = _gemm_warmup(A, B, C, M, N, K, cfg)
                info["compile_s"] = time.time() - t
                info["shared_bytes"] = k.metadata.shared
                try:
                    k._init_handles()
                except OutOfResources as e:
                    out.row(**base, **info, status="out_of_resources", error=str(e)[:200])
                    log(f"  {cfg}: out of resources ({k.metadata.shared} B smem)")
                    continue
                info["n_regs"] = k.n_regs
                info["n_spills"] = k.n_spills
                info["blocks_per_sm"] = occupancy(k, W * 32, k.metadata.shared)
            grid = (base["grid_ctas"],)

            def fn():
                matmul_kernel[grid](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                                    C.stride(0), C.stride(1), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=G,
                                    num_warps=W, num_stages=S)
            C.fill_(float("nan"))
            fn()
            sync()
            err = rel_err(C, ref)
            ms = bench(fn, warmup=10, rep=50)
            tf = 2 * M * N * K / (ms * 1e-3) / 1e12
            status = "ok" if err == err and err < 2e-2 else "wrong_result"
            out.row(**base, **info, status=status, ms=ms, tflops=tf, rel_err=err)
            log(f"  {cfg} run{run}: {ms:.4f} ms {tf:7.1f} TF/s regs={info.get('n_regs')} spills={info.get('n_spills')} "
                f"smem={info.get('shared_bytes')} occ={info.get('blocks_per_sm')} err={err:.1e}")
            if run == 1 and status == "ok" and tf > best.get(shape, (0, None))[0]:
                best[shape] = (tf, cfg, ms)
        except Exception as e:
            out.row(**base, status="error", error=repr(e)[:300])
            log(f"  {cfg}: ERROR {repr(e)[:300]}")
            if "illegal" in repr(e).lower() or "launch failure" in repr(e).lower():
                log("  CUDA context likely dead; stopping GEMM section")
                break
    out.close()
    for s, (tf, cfg, ms) in best.items():
        log(f"BEST {s}: {tf:.1f} TFLOP/s ({ms:.4f} ms) cfg(BM,BN,BK,W,S,G)={cfg}")
    A = B = C = ref = None
    if not CPU_TEST:
        torch.cuda.empty_cache()
    return out.n


# ----------------------------------------------------------------------------------------------
# 2. Launch overhead
# ----------------------------------------------------------------------------------------------
def launch_section():
    dl = RUN.deadline("launch")
    out = RUN.csv("launch.csv", ["kernel", "method", "grid", "num_warps", "n_launches", "us_per_launch",
                             "host_us_per_launch", "note"])
    x = torch.zeros(1, device="cuda", dtype=torch.float32)
    y = torch.zeros(1 << 20, device="cuda", dtype=torch.float32)

    def make(kind, grid=1, warps=4):
        if kind == "triton_empty":
            return lambda: empty_kernel[(grid,)](y, num_warps=warps)
        return lambda: x.add_(1.0)

    def ev():
        return torch.cuda.Event(enable_timing=True)

    for kind in ["triton_empty", "torch_add_1elem"]:
        fn = make(kind)
        for _ in range(50):
            fn()
        sync()
        # (a) stream, back to back: host-bound issue rate
        n = 2000
        vals, hvals = [], []
        for _ in range(5):
            s, e = ev(), ev()
            s.record()
            th = time.perf_counter()
            for _ in range(n):
                fn()
            hh = time.perf_counter() - th
            e.record()
            e.synchronize()
            vals.append(s.elapsed_time(e) * 1e3 / n)
            hvals.append(hh * 1e6 / n)
        out.row(kernel=kind, method="stream_back_to_back", grid=1, num_warps=4, n_launches=n,
                us_per_launch=statistics.median(vals), host_us_per_launch=statistics.median(hvals),
                note="GPU span / n; bounded by host issue rate")
        log(f"launch {kind} stream: {statistics.median(vals):.2f} us/launch (host {statistics.median(hvals):.2f})")
        # (b) pre-queued behind a GPU sleep: device-side launch-to-launch time
        n = 500
        vals, hvals, notes = [], [], ""
        for _ in range(3):
            s, e = ev(), ev()
            torch.cuda._sleep(int(1.98e9 * 0.04))  # ~40 ms at 1.98 GHz
            s.record()
            th = time.perf_counter()
            for _ in range(n):
                fn()
            hh = time.perf_counter() - th
            e.record()
            e.synchronize()
            vals.append(s.elapsed_time(e) * 1e3 / n)
            hvals.append(hh * 1e6 / n)
            if hh > 0.035:
                notes = "WARNING host enqueue took longer than the sleep"
        out.row(kernel=kind, method="stream_prequeued", grid=1, num_warps=4, n_launches=n,
                us_per_launch=statistics.median(vals), host_us_per_launch=statistics.median(hvals),
                note=notes or "launches queued behind a 40 ms sleep kernel; GPU-side spacing")
        log(f"launch {kind} prequeued: {statistics.median(vals):.2f} us/launch {notes}")
        # (c) CUDA graph of 100 launches, and of 1 launch
        for nl in (100, 1):
            g = torch.cuda.CUDAGraph()
            st = torch.cuda.Stream()
            st.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(st):
                fn()
            torch.cuda.current_stream().wait_stream(st)
            sync()
            with torch.cuda.graph(g):
                for _ in range(nl):
                    fn()
            for _ in range(5):
                g.replay()
            sync()
            vals = [ms * 1e3 / nl for ms in event_ms(g.replay, 50)]
            # back-to-back replays (graph launch overhead amortised)
            s, e = ev(), ev()
            s.record()
            for _ in range(50):
                g.replay()
            e.record()
            e.synchronize()
            b2b = s.elapsed_time(e) * 1e3 / (50 * nl)
            out.row(kernel=kind, method=f"cuda_graph_{nl}", grid=1, num_warps=4, n_launches=nl,
                    us_per_launch=statistics.median(vals),
                    note=f"median of single replays / {nl}; back-to-back replays give {b2b:.3f} us/launch")
            log(f"launch {kind} graph{nl}: {statistics.median(vals):.3f} us/launch (b2b {b2b:.3f})")
            del g
        # (d) round trip: launch + synchronize, host clock
        vals = []
        for _ in range(200):
            th = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            vals.append((time.perf_counter() - th) * 1e6)
        out.row(kernel=kind, method="round_trip_sync", grid=1, num_warps=4, n_launches=200,
                us_per_launch=statistics.median(vals), note="host clock: launch + cudaDeviceSynchronize")
        log(f"launch {kind} round trip: {statistics.median(vals):.2f} us")
        if dl.over():
            log("launch section over budget")
            break
    # (e) empty-kernel grid sweep inside a graph: CTA dispatch cost
    for grid, warps in [(1, 4), (132, 4), (528, 4), (1320, 4), (4224, 4), (13200, 4), (132000, 4),
                        (13200, 1), (13200, 8), (132000, 1), (132000, 8), (1320, 16), (13200, 16)]:
        if dl.over():
            break
        try:
            fn = make("triton_empty", grid, warps)
            fn()
            sync()
            nl = 20
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(nl):
                    fn()
            g.replay()
            sync()
            vals = [ms * 1e3 / nl for ms in event_ms(g.replay, 20)]
            out.row(kernel="triton_empty", method="cuda_graph_20_grid_sweep", grid=grid, num_warps=warps,
                    n_launches=nl, us_per_launch=statistics.median(vals))
            log(f"empty grid={grid} warps={warps}: {statistics.median(vals):.3f} us/launch")
            del g
        except Exception as e:
            out.row(kernel="triton_empty", method="cuda_graph_20_grid_sweep", grid=grid, num_warps=warps,
                    note="ERROR " + repr(e)[:200])
    out.close()
    return out.n


# ----------------------------------------------------------------------------------------------
# 3. Attention
# ----------------------------------------------------------------------------------------------
def splitkv_decode(q, k, v, nsplit, block_n=64, warps=4, stages=3):
    """q (B,HQ,D), k/v (B,HKV,SKV,D) contiguous -> o (B,HQ,D)."""
    B, HQ, D = q.shape
    HKV, SKV = k.shape[1], k.shape[2]
    G = HQ // HKV
    assert SKV % (nsplit * block_n) == 0
    split_len = SKV // nsplit
    op = torch.empty(B * HQ * nsplit, D, device=q.device, dtype=torch.float32)
    mp = torch.empty(B * HQ * nsplit, device=q.device, dtype=torch.float32)
    lp = torch.empty_like(mp)
    o = torch.empty(B, HQ, D, device=q.device, dtype=q.dtype)
    gp = max(16, triton.next_power_of_2(G))

    def run():
        decode_split_kernel[(B * HKV, nsplit)](q, k, v, op, mp, lp, 1.0 / math.sqrt(D), SKV, split_len,
                                               NSPLIT=nsplit, HKV=HKV, G=G, GP=gp, D=D, BLOCK_N=block_n,
                                               num_warps=warps, num_stages=stages)
        decode_reduce_kernel[(B * HQ,)](op, mp, lp, o, NSPLIT=nsplit, D=D, num_warps=4)
    return run, o


def attention_section():
    dl = RUN.deadline("attention")
    cols = ["kind", "impl", "B", "HQ", "HKV", "SQ", "SKV", "D", "causal", "status", "ms", "flops", "bytes",
            "tflops", "gbps", "nsplit", "rel_err", "error"]
    out = RUN.csv("attention.csv", cols)
    dev = "cpu" if CPU_TEST else "cuda"
    if not CPU_TEST:
        from torch.nn.attention import sdpa_kernel, SDPBackend
    H, D = 32, 128
    # prefill
    pre = [(1, 1024), (2, 1024), (4, 1024), (1, 4096), (2, 4096), (4, 4096), (1, 8192), (2, 8192), (4, 8192)]
    if CPU_TEST:
        pre = []
    for B, S in pre:
        for impl, causal in [("sdpa_flash", True), ("sdpa_default", True)] + \
                ([("sdpa_flash", False)] if B == 1 and S >= 4096 else []):
            if dl.over():
                break
            flops = 4 * B * H * D * (S * (S + 1) // 2 if causal else S * S)
            nbytes = 2 * (2 * B * H * S * D + 2 * B * H * S * D)
            base = dict(kind="prefill", impl=impl, B=B, HQ=H, HKV=H, SQ=S, SKV=S, D=D, causal=int(causal),
                        flops=flops, bytes=nbytes)
            try:
                q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=DT) for _ in range(3))
                if impl == "sdpa_flash":
                    def fn():
                        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                else:
                    def fn():
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                fn()
                ms = bench(fn, warmup=10, rep=40)
                out.row(**base, status="ok", ms=ms, tflops=flops / ms / 1e9, gbps=nbytes / ms / 1e6)
                log(f"prefill {impl} B={B} S={S} causal={causal}: {ms:.3f} ms {flops / ms / 1e9:.1f} TF/s")
            except Exception as e:
                out.row(**base, status="error", error=repr(e)[:300])
                log(f"prefill {impl} B={B} S={S}: ERROR {repr(e)[:200]}")
            q = k = v = None
    # decode (GQA)
    HQ, HKV = 32, 8
    dec = [(B, SKV) for SKV in (4096, 32768, 131072) for B in (1, 8)]
    if CPU_TEST:
        HQ, HKV, D = 8, 2, 32
        dec = [(1, 256), (2, 512)]
    for B, SKV in dec:
        if dl.over():
            break
        flops = 4 * B * HQ * SKV * D
        nbytes = 2 * (2 * B * HKV * SKV * D + 2 * B * HQ * D)
        base = dict(kind="decode", B=B, HQ=HQ, HKV=HKV, SQ=1, SKV=SKV, D=D, causal=0, flops=flops, bytes=nbytes)
        try:
            q = torch.randn(B, HQ, 1, D, device=dev, dtype=DT)
            k = torch.randn(B, HKV, SKV, D, device=dev, dtype=DT)
            v = torch.randn(B, HKV, SKV, D, device=dev, dtype=DT)
        except Exception as e:
            out.row(**base, impl="alloc", status="error", error=repr(e)[:300])
            continue
        ref = None
        impls = [] if CPU_TEST else [("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_default", None)]
        for impl, be in impls:
            try:
                if be is not None:
                    def fn():
                        with sdpa_kernel(be):
                            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                else:
                    def fn():
                        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                r = fn()
                if ref is None:
                    ref = r.reshape(B, HQ, D)
                ms = bench(fn, warmup=10, rep=40)
                out.row(**base, impl=impl, status="ok", ms=ms, tflops=flops / ms / 1e9, gbps=nbytes / ms / 1e6)
                log(f"decode {impl} B={B} SKV={SKV}: {ms:.4f} ms {nbytes / ms / 1e6:.0f} GB/s")
            except Exception as e:
                out.row(**base, impl=impl, status="error", error=repr(e)[:300])
                log(f"decode {impl} B={B} SKV={SKV}: ERROR {repr(e)[:200]}")
        if ref is None:  # CPU test or SDPA failed: float reference
            kr = k.float().repeat_interleave(HQ // HKV, dim=1)
            vr = v.float().repeat_interleave(HQ // HKV, dim=1)
            s = (q.float() @ kr.transpose(-1, -2)) / math.sqrt(D)
            ref = (torch.softmax(s, -1) @ vr).reshape(B, HQ, D)
        # split-KV Triton kernel: enough CTAs to fill 132 SMs about twice
        want = max(1, math.ceil(264 / (B * HKV)))
        nsplit = min(triton.next_power_of_2(want), SKV // 64)
        if CPU_TEST:
            nsplit = 4
        for ns in sorted({nsplit, max(1, nsplit // 4)}, reverse=True):
            try:
                run, o = splitkv_decode(q.reshape(B, HQ, D), k, v, ns)
                o.fill_(float("nan"))
                run()
                sync()
                err = rel_err(o, ref)
                ms = bench(run, warmup=10, rep=40)
                st = "ok" if err == err and err < 2e-2 else "wrong_result"
                out.row(**base, impl="triton_splitkv", status=st, ms=ms, tflops=flops / ms / 1e9,
                        gbps=nbytes / ms / 1e6, nsplit=ns, rel_err=err)
                log(f"decode triton_splitkv B={B} SKV={SKV} nsplit={ns}: {ms:.4f} ms "
                    f"{nbytes / ms / 1e6:.0f} GB/s err={err:.1e}")
            except Exception as e:
                out.row(**base, impl="triton_splitkv", nsplit=ns, status="error", error=repr(e)[:300])
                log(f"decode triton_splitkv B={B} SKV={SKV}: ERROR {repr(e)[:300]}")
        q = k = v = ref = None
        if not CPU_TEST:
            torch.cuda.empty_cache()
    out.close()
    return out.n


# ----------------------------------------------------------------------------------------------
# 4. Decode step of Llama-3.1-8B
# ----------------------------------------------------------------------------------------------
LLAMA8B = dict(hidden=4096, layers=32, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=128256)
LLAMA_TINY = dict(hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64, ffn=512, vocab=1000)


class Llama:
    def __init__(self, cfg, max_batch, ctx, dev):
        self.c = c = cfg
        h, L, hd = c["hidden"], c["layers"], c["head_dim"]
        nq, nkv, f, V = c["heads"], c["kv_heads"], c["ffn"], c["vocab"]
        self.ctx = ctx
        dt = DT

        def w(o, i):
            return torch.randn(o, i, device=dev, dtype=dt) * (1.0 / math.sqrt(i))
        self.embed = torch.randn(V, h, device=dev, dtype=dt)
        self.layers = []
        for _ in range(L):
            self.layers.append(dict(
                ln1=1 + 0.1 * torch.randn(h, device=dev, dtype=dt), ln2=1 + 0.1 * torch.randn(h, device=dev, dtype=dt),
                wq=w(nq * hd, h), wk=w(nkv * hd, h), wv=w(nkv * hd, h), wo=w(h, nq * hd),
                wg=w(f, h), wu=w(f, h), wd=w(h, f)))
        self.lnf = 1 + 0.1 * torch.randn(h, device=dev, dtype=dt)
        self.lm_head = w(V, h)
        self.kc = [torch.randn(max_batch, nkv, ctx, hd, device=dev, dtype=dt) for _ in range(L)]
        self.vc = [torch.randn(max_batch, nkv, ctx, hd, device=dev, dtype=dt) for _ in range(L)]
        inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))
        t = torch.arange(ctx, device=dev, dtype=torch.float32)
        fr = torch.outer(t, inv)
        emb = torch.cat([fr, fr], -1)
        self.cos_tab = emb.cos().to(dt)
        self.sin_tab = emb.sin().to(dt)

    def weight_bytes(self):
        n = sum(t.numel() for lay in self.layers for k_, t in lay.items())
        return 2 * (n + self.lnf.numel() + self.lm_head.numel())

    @staticmethod
    def rmsnorm(x, w, eps=1e-5):
        dt = x.dtype
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        return w * xf.to(dt)

    @staticmethod
    def rot(x):
        x1, x2 = x.chunk(2, -1)
        return torch.cat((-x2, x1), -1)

    def step(self, tokens, pos_t):
        c = self.c
        B = tokens.shape[0]
        nq, nkv, hd = c["heads"], c["kv_heads"], c["head_dim"]
        x = self.embed[tokens]                                   # (B, h)
        cos = self.cos_tab[pos_t].view(1, 1, 1, hd)
        sin = self.sin_tab[pos_t].view(1, 1, 1, hd)
        for i, lay in enumerate(self.layers):
            hn = self.rmsnorm(x, lay["ln1"])
            q = F.linear(hn, lay["wq"]).view(B, nq, 1, hd)
            k = F.linear(hn, lay["wk"]).view(B, nkv, 1, hd)
            v = F.linear(hn, lay["wv"]).view(B, nkv, 1, hd)
            q = q * cos + self.rot(q) * sin
            k = k * cos + self.rot(k) * sin
            kc = self.kc[i][:B]
            vc = self.vc[i][:B]
            kc.index_copy_(2, pos_t, k)
            vc.index_copy_(2, pos_t, v)
            a = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True)   # attends all ctx positions
            x = x + F.linear(a.reshape(B, nq * hd), lay["wo"])
            hn = self.rmsnorm(x, lay["ln2"])
            x = x + F.linear(F.silu(F.linear(hn, lay["wg"])) * F.linear(hn, lay["wu"]), lay["wd"])
        x = self.rmsnorm(x, self.lnf)
        return F.linear(x, self.lm_head)

    def gemm_only(self, hbuf, fbuf):
        for lay in self.layers:
            F.linear(hbuf, lay["wq"])
            F.linear(hbuf, lay["wk"])
            F.linear(hbuf, lay["wv"])
            F.linear(hbuf, lay["wo"])
            F.linear(hbuf, lay["wg"])
            F.linear(hbuf, lay["wu"])
            F.linear(fbuf, lay["wd"])
        return F.linear(hbuf, self.lm_head)

    def attn_only(self, qbuf, kbuf, vbuf, pos_t):
        B = qbuf.shape[0]
        for i in range(len(self.layers)):
            kc = self.kc[i][:B]
            vc = self.vc[i][:B]
            kc.index_copy_(2, pos_t, kbuf)
            vc.index_copy_(2, pos_t, vbuf)
            F.scaled_dot_product_attention(qbuf, kc, vc, enable_gqa=True)


def graph_nodes(g):
    try:
        from cuda.bindings import runtime as rt
        err, _, n = rt.cudaGraphGetNodes(rt.cudaGraph_t(g.raw_cuda_graph()), 0)
        if int(err) != 0:
            return ""
        err, nodes, n = rt.cudaGraphGetNodes(rt.cudaGraph_t(g.raw_cuda_graph()), n)
        kern = 0
        for nd in nodes:
            e2, ty = rt.cudaGraphNodeGetType(nd)
            if ty == rt.cudaGraphNodeType.cudaGraphNodeTypeKernel:
                kern += 1
        return f"{n} nodes ({kern} kernel)"
    except Exception as e:
        return "n/a: " + repr(e)[:80]


def kernel_category(name):
    n = name.lower()
    if any(s in n for s in ("gemm", "gemv", "nvjet", "cutlass", "xmma", "matmul", "splitk")):
        return "gemm"
    if any(s in n for s in ("flash", "fmha", "attention", "attn", "sdpa", "cudnn")):
        return "attention"
    return "other"


def decode_section():
    dl = RUN.deadline("decode")
    cols = ["batch", "ctx", "variant", "status", "ms", "kernels_per_step", "gemm_kernels", "graph_nodes",
            "weight_bytes", "kv_bytes", "min_bytes", "gbps_min_bytes", "share_of_full", "note"]
    out = RUN.csv("decode_step.csv", cols)
    kout = RUN.csv("decode_kernels.csv", ["batch", "category", "kernel", "count", "total_us"])
    dev = "cpu" if CPU_TEST else "cuda"
    cfg = LLAMA_TINY if CPU_TEST else LLAMA8B
    ctx = 256 if CPU_TEST else 8192
    batches = (1, 8) if not CPU_TEST else (1, 2)
    t = time.time()
    model = Llama(cfg, max(batches), ctx, dev)
    sync()
    log(f"decode: model built in {time.time() - t:.1f}s, weights {model.weight_bytes() / 1e9:.2f} GB")
    h, nq, nkv, hd = cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    wbytes = model.weight_bytes()
    for B in batches:
        if dl.over():
            out.row(batch=B, ctx=ctx, variant="all", status="skipped_time_budget")
            continue
        kvb = cfg["layers"] * 2 * B * nkv * ctx * hd * 2
        minb = wbytes + kvb + B * h * 2
        tokens = torch.randint(0, cfg["vocab"], (B,), device=dev)
        pos_t = torch.tensor([ctx - 1], device=dev, dtype=torch.long)
        hbuf = torch.randn(B, h, device=dev, dtype=DT)
        fbuf = torch.randn(B, cfg["ffn"], device=dev, dtype=DT)
        qbuf = torch.randn(B, nq, 1, hd, device=dev, dtype=DT)
        kbuf = torch.randn(B, nkv, 1, hd, device=dev, dtype=DT)
        vbuf = torch.randn(B, nkv, 1, hd, device=dev, dtype=DT)
        variants = [("full", lambda: model.step(tokens, pos_t)),
                    ("gemm_only", lambda: model.gemm_only(hbuf, fbuf)),
                    ("attn_only", lambda: model.attn_only(qbuf, kbuf, vbuf, pos_t))]
        full_ms = None
        for name, fn in variants:
            try:
                logits = fn()
                if name == "full":
                    ok = bool(torch.isfinite(logits.float()).all())
                    log(f"decode B={B}: logits finite={ok}")
                if CPU_TEST:
                    out.row(batch=B, ctx=ctx, variant=name + "_cpu", status="ok", ms=bench(fn))
                    continue
                # eager timing
                sync()
                eager_ms = statistics.median(event_ms(fn, 5))
                # kernel count from the profiler (eager step)
                nk = gk = ""
                try:
                    from torch.profiler import profile, ProfilerActivity
                    from torch.autograd import DeviceType
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        fn()
                        sync()
                    agg = {}
                    for evt in prof.events():
                        if evt.device_type == DeviceType.CUDA:
                            a = agg.setdefault(evt.name, [0, 0.0])
                            a[0] += 1
                            a[1] += evt.time_range.elapsed_us()
                    nk = sum(v_[0] for v_ in agg.values())
                    gk = sum(v_[0] for k_, v_ in agg.items() if kernel_category(k_) == "gemm")
                    if name == "full":
                        for k_, v_ in sorted(agg.items(), key=lambda kv: -kv[1][1]):
                            kout.row(batch=B, category=kernel_category(k_), kernel=k_[:160], count=v_[0],
                                     total_us=v_[1])
                except Exception as e:
                    log("profiler failed:", repr(e)[:200])
                out.row(batch=B, ctx=ctx, variant=name + "_eager", status="ok", ms=eager_ms,
                        kernels_per_step=nk, gemm_kernels=gk, weight_bytes=wbytes, kv_bytes=kvb, min_bytes=minb,
                        note="eager, events around one step, median of 5; kernel count from torch.profiler")
                log(f"decode B={B} {name} eager: {eager_ms:.3f} ms, {nk} kernels ({gk} gemm)")
                # CUDA graph
                try:
                    g = torch.cuda.CUDAGraph(keep_graph=True)
                except TypeError:
                    g = torch.cuda.CUDAGraph()
                st = torch.cuda.Stream()
                st.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(st):
                    for _ in range(2):
                        fn()
                torch.cuda.current_stream().wait_stream(st)
                sync()
                with torch.cuda.graph(g):
                    fn()
                nodes = graph_nodes(g)
                for _ in range(3):
                    g.replay()
                sync()
                ms = statistics.median(event_ms(g.replay, 20))
                if name == "full":
                    full_ms = ms
                share = ms / full_ms if full_ms else ""
                mb = minb if name == "full" else (wbytes if name == "gemm_only" else kvb)
                out.row(batch=B, ctx=ctx, variant=name + "_graph", status="ok", ms=ms, kernels_per_step=nk,
                        gemm_kernels=gk, graph_nodes=nodes, weight_bytes=wbytes, kv_bytes=kvb, min_bytes=mb,
                        gbps_min_bytes=mb / ms / 1e6, share_of_full=share,
                        note="CUDA graph of one step, median of 20 replays; min_bytes is this variant's own")
                log(f"decode B={B} {name} graph: {ms:.3f} ms ({mb / ms / 1e6:.0f} GB/s of min bytes) "
                    f"share={share} nodes={nodes}")
                del g
            except Exception as e:
                out.row(batch=B, ctx=ctx, variant=name, status="error", note=repr(e)[:300])
                log(f"decode B={B} {name}: ERROR {repr(e)[:300]}")
                traceback.print_exc()
    model = None
    out.close()
    kout.close()
    if not CPU_TEST:
        torch.cuda.empty_cache()
    return out.n


# ----------------------------------------------------------------------------------------------
# 5. Copy bandwidth vs concurrency
# ----------------------------------------------------------------------------------------------
def copy_section():
    dl = RUN.deadline("copy")
    out = RUN.csv("copy_concurrency.csv", ["n_ctas", "block_bytes", "num_warps", "bytes_in_flight", "buffer_bytes",
                                       "bytes_moved", "status", "ms", "gbps", "n_regs", "blocks_per_sm",
                                       "rel_err", "note"])
    dev = "cpu" if CPU_TEST else "cuda"
    max_bytes = (1 << 20) if CPU_TEST else (1 << 30)
    src = torch.randn(max_bytes // 4, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    ctas_list = [1, 4, 16, 66, 132, 264, 528, 1056, 2112, 4224]
    blocks = [512, 2048, 8192, 16384]   # fp32 elements -> 2, 8, 32, 64 KiB per CTA per iteration
    if CPU_TEST:
        ctas_list, blocks = [1, 3], [64, 256]
    for blk in blocks:
        for n in ctas_list:
            if dl.over():
                break
            bb = blk * 4
            iters_target = 1024
            size = min(max(n * bb * iters_target, 8 << 20), max_bytes)
            size = max((size // (n * bb)) * n * bb, n * bb) if not CPU_TEST else (size // bb) * bb
            ne = size // 4
            n_iters = ne // blk
            s_, d_ = src[:ne], dst[:ne]
            base = dict(n_ctas=n, block_bytes=bb, num_warps=4, bytes_in_flight=n * bb, buffer_bytes=size,
                        bytes_moved=2 * size)
            try:
                def fn():
                    return copy_kernel[(n,)](s_, d_, n_iters, BLOCK=blk, num_warps=4, num_stages=1)
                d_.fill_(float("nan"))
                k = fn()
                sync()
                err = float((d_ - s_).abs().max())
                nregs = getattr(k, "n_regs", "")
                occ = occupancy(k, 128, k.metadata.shared) if not CPU_TEST else ""
                ms = bench(fn, warmup=5, rep=30)
                out.row(**base, status="ok" if err == 0 else "wrong_result", ms=ms, gbps=2 * size / ms / 1e6,
                        n_regs=nregs, blocks_per_sm=occ, rel_err=err)
                log(f"copy ctas={n} block={bb}B size={size >> 20}MiB: {ms:.4f} ms {2 * size / ms / 1e6:.0f} GB/s "
                    f"regs={nregs}")
            except Exception as e:
                out.row(**base, status="error", note=repr(e)[:300])
                log(f"copy ctas={n} block={bb}: ERROR {repr(e)[:200]}")
    src = dst = None
    out.close()
    return out.n


# ----------------------------------------------------------------------------------------------
def env_report():
    log("argv:", sys.argv)
    log("date:", time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    log("python:", sys.version.split()[0])
    if torch is not None:
        log("torch:", torch.__version__, "cuda:", torch.version.cuda, "cudnn:",
            torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)
    if HAVE_TRITON:
        log("triton:", triton.__version__)
    if not CPU_TEST and torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        log("device:", p.name, "sms:", p.multi_processor_count, "cc:", f"{p.major}.{p.minor}",
            "mem GiB:", round(p.total_memory / 2**30, 1))
        nvsmi()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    RUN.open(args[0] if args else "measured_out", "log.txt")
    env_report()
    if torch is None or not HAVE_TRITON:
        log("torch/triton missing: nothing to do")
        return 1
    if not CPU_TEST and not torch.cuda.is_available():
        log("no CUDA device")
        return 1
    sections = [("gemm", gemm_section), ("launch", launch_section), ("attention", attention_section),
                ("decode", decode_section), ("copy", copy_section)]
    only = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")]
    RUN.run_sections([(name, fn) for name, fn in sections if not (only and name not in only[0].split(","))
                      and not (CPU_TEST and name == "launch")], CPU_TEST)
    RUN.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
