#!/usr/bin/env python3
"""H200 attention-kernel campaign: Triton kernels written to the schedules of
kernels/flash_prefill.tile and kernels/gqa_decode.tile, swept over the tiles' own parameters.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_attention.py OUTDIR
Local logic test on a CPU (Triton interpreter, fp16, tiny sizes, timings of no value):
    python3 bench/h200/measure_attention.py OUTDIR --cpu-test
Options: --only=prefill,decode   run only these sections.

Writes, flushing every row as it is measured so partial results survive:
    attention_triton_prefill.csv  causal FlashAttention-2 forward (flash_fwd_kernel), per
                                  (B, H, S, D, BLOCK_M, BLOCK_N, WARPS, STAGES) + sdpa_default reference rows
    attention_triton_decode.csv   GQA split-KV decode (decode_split_kernel + decode_merge_kernel), per
                                  (B, HQ, HKV, SKV, D, SPLITS, BLOCK_N, WARPS, STAGES) + sdpa_default rows
    attention_triton_log.txt      everything printed, with versions and nvidia-smi readings

Kernels (the tile's parameter names are the CSV columns):
  flash_fwd_kernel   grid (cdiv(S, BLOCK_M), B*H) as (pm, bh), num_warps=WARPS, num_stages=STAGES.
                     Q tile loaded once; K/V streamed in BLOCK_N blocks; online softmax in base 2
                     (scale log2(e)/sqrt(D) folded into the scores); f32 accumulation; bf16 O and f32
                     LSE (base 2: m + log2 l, in the scaled log2 domain) written. Causal: program pm runs
                     key blocks j < min(cdiv((pm+1)*BLOCK_M, BLOCK_N), cdiv(S, BLOCK_N)) (the tile's trip
                     count); the blocks wholly below the diagonal run in a first, unmasked loop, the
                     blocks that straddle it in a second loop with the causal select (both loops
                     pipelined STAGES deep). Layout [B, H, S, D] contiguous.
  decode_split_kernel grid (B*HKV, SPLITS) as (bh, sp): the GROUP = HQ/HKV query heads of one KV head
                     (padded to GP = max(16, next_pow2(GROUP)) rows for tl.dot) over one KV slice of
                     SPLIT_LEN = cdiv(cdiv(SKV, SPLITS), BLOCK_N) * BLOCK_N tokens, BLOCK_N per step,
                     online softmax in base 2; writes unnormalised f32 O_PART[(bh*SPLITS+sp)*GROUP+g, D]
                     and ML_PART[row, 2] = (m, l).
  decode_merge_kernel grid (B*HKV,) as (bh), 4 warps: m* = max_s m_s, w_s = 2^(m_s - m*),
                     O = sum_s w_s O_s / sum_s w_s l_s; the partials are read once (split loop).

Timing: median of CUDA-event timings after warm-up (triton.testing.do_bench(..., return_mode="median"),
which clears the L2 with a 256 MB memset before every timed call). Inputs random normal.

Formulas (bf16 = 2 bytes):
  prefill flops_causal   = 4*B*H*D * S*(S+1)/2          (QK^T and PV over the unmasked triangle)
          flops_computed = 4*B*H*D * BLOCK_M*BLOCK_N * sum_pm min(cdiv((pm+1)*BLOCK_M, BLOCK_N), cdiv(S, BLOCK_N))
                           (the diagonal blocks computed in full)
          min_bytes      = 2*4*B*H*S*D + 4*B*H*S        (Q, K, V, O once, LSE)
          kv_bytes_streamed = 2*2*B*H*D*BLOCK_N * sum_pm trips(pm)  (K and V as the CTAs load them)
  decode  flops     = 4*B*HQ*SKV*D
          min_bytes = 2*(2*B*HKV*SKV*D + 2*B*HQ*D)      (K and V cache once, q and o)
          partial_bytes = 4*B*HQ*SPLITS*(D+2)           (O_PART + ML_PART, written by split, read by merge)
          gbps_total = min_bytes / ms_total; gbps_split = (K+V+q bytes + partial_bytes) / ms_split
"""
import math
import os
import sys
import time

from common import Campaign, compile_processes, median_ms, results_in_budget, sync

CPU_TEST = "--cpu-test" in sys.argv
if CPU_TEST:
    os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_attn")

try:
    import torch
    import torch.nn.functional as F
except Exception:  # pragma: no cover
    torch = None
try:
    import triton
    import triton.language as tl  # noqa: F401  (as before: triton without its language is no triton)
    HAVE_TRITON = True
except Exception:  # pragma: no cover
    HAVE_TRITON = False

# the Triton CPU interpreter mishandles bf16 (numpy has none): the CPU logic test uses fp16
DT = (torch.float16 if CPU_TEST else torch.bfloat16) if torch is not None else None
LOG2E = 1.4426950408889634
GLOBAL_DEADLINE_S = 340.0          # whole script, seconds from start
SECTION_MAX_S = {"precompile": 110.0, "prefill": 150.0, "decode": 130.0}
RUN = Campaign(GLOBAL_DEADLINE_S, SECTION_MAX_S, nvsmi_fields="name,driver_version,clocks.sm,clocks.mem,"
               "clocks.max.sm,temperature.gpu,power.draw,power.limit")
log, nvsmi, resources = RUN.log, RUN.nvsmi, RUN.resources


def bench(fn, warmup=10, rep=40):
    """Median ms per call (warmup/rep are milliseconds of running, as in do_bench)."""
    return median_ms(fn, warmup, rep, CPU_TEST)


def errs(out, ref):
    """(max abs error, relative Frobenius error); nan if out has non-finite values."""
    o = out.float()
    r = ref.float()
    if not bool(torch.isfinite(o).all()):
        return float("nan"), float("nan")
    return float((o - r).abs().max()), float((o - r).norm() / r.norm().clamp_min(1e-30))


def is_ctx_dead(e):
    s = repr(e).lower()
    return "illegal" in s or "launch failure" in s or "unspecified launch" in s


# ----------------------------------------------------------------------------------------------
# Triton kernels (bench/h200/triton_kernels.py; flash_fwd_kernel runs with CAUSAL=True here)
# ----------------------------------------------------------------------------------------------
if HAVE_TRITON:
    from triton_kernels import decode_merge_kernel, decode_split_kernel, flash_fwd_kernel


# ----------------------------------------------------------------------------------------------
# launch helpers (also used by the precompile workers)
# ----------------------------------------------------------------------------------------------
def gp_of(G):
    return max(16, triton.next_power_of_2(G))


def prefill_launch(q, k, v, o, lse, cfg, warmup=False):
    B, H, S, D = q.shape
    BM, BN, W, ST = cfg
    grid = (triton.cdiv(S, BM), B * H)
    args = (q, k, v, o, lse, LOG2E / math.sqrt(D), S)
    kw = dict(D=D, BLOCK_M=BM, BLOCK_N=BN, CAUSAL=True, num_warps=W, num_stages=ST)
    if warmup:
        return flash_fwd_kernel.warmup(*args, **kw, grid=grid)
    return flash_fwd_kernel[grid](*args, **kw)


class DecodeBufs:
    def __init__(self, q, k, v, splits, block_n):
        B, HQ, D = q.shape
        self.B, self.HQ, self.D = B, HQ, D
        self.HKV, self.SKV = k.shape[1], k.shape[2]
        self.G = HQ // self.HKV
        self.GP = gp_of(self.G)
        self.splits = splits
        self.block_n = block_n
        self.split_len = triton.cdiv(triton.cdiv(self.SKV, splits), block_n) * block_n
        rows = B * self.HKV * splits * self.G
        self.op = torch.empty(rows, D, device=q.device, dtype=torch.float32)
        self.mlp = torch.empty(rows, 2, device=q.device, dtype=torch.float32)
        self.o = torch.empty(B, HQ, D, device=q.device, dtype=q.dtype)
        self.q, self.k, self.v = q, k, v

    def split(self, W, ST, warmup=False):
        grid = (self.B * self.HKV, self.splits)
        args = (self.q, self.k, self.v, self.op, self.mlp, LOG2E / math.sqrt(self.D), self.SKV, self.split_len,
                self.splits, self.HKV, self.G)
        kw = dict(GP=self.GP, D=self.D, BLOCK_N=self.block_n, num_warps=W, num_stages=ST)
        if warmup:
            return decode_split_kernel.warmup(*args, **kw, grid=grid)
        return decode_split_kernel[grid](*args, **kw)

    def merge(self, warmup=False):
        grid = (self.B * self.HKV,)
        args = (self.op, self.mlp, self.o, self.G)
        kw = dict(SPLITS=self.splits, GP=self.GP, D=self.D, num_warps=4, num_stages=1)
        if warmup:
            return decode_merge_kernel.warmup(*args, **kw, grid=grid)
        return decode_merge_kernel[grid](*args, **kw)


def _compile_worker(job):
    """Runs in a spawned process: compile one kernel config into the shared Triton cache."""
    t = time.time()
    try:
        kind = job[0]
        if kind == "prefill":
            _, D, cfg = job
            x = torch.empty(2 * 128 * D, dtype=DT, device="cuda").view(1, 1, 256, D)
            lse = torch.empty(256, dtype=torch.float32, device="cuda")
            prefill_launch(x, x, x, x, lse, cfg, warmup=True)
        else:
            _, G, D, BN, W, ST, splits = job
            q = torch.empty(1, DC_HKV * G, D, dtype=DT, device="cuda")
            kv = torch.empty(1, DC_HKV, 4096, D, dtype=DT, device="cuda")
            bufs = DecodeBufs(q, kv, kv, splits, BN)
            if kind == "decode_split":
                bufs.split(W, ST, warmup=True)
            else:
                bufs.merge(warmup=True)
        return job, "ok", time.time() - t, ""
    except Exception as e:
        return job, "compile_error", time.time() - t, repr(e)[:300]


def precompile(jobs, budget_s):
    """Compile jobs in parallel processes into the shared Triton cache (what is not done in
    the budget is compiled later, on demand, by the main process)."""
    import multiprocessing as mp
    nproc = compile_processes(len(jobs))
    log(f"precompiling {len(jobs)} kernel configs in {nproc} processes (budget {budget_s:.0f}s)")
    n_ok, n_err = 0, 0
    t = time.time()
    pool = None
    try:
        ctx = mp.get_context("spawn")
        pool = ctx.Pool(nproc)
        for job, st, dt, err in results_in_budget(pool, _compile_worker, jobs, budget_s, t):
            if st == "ok":
                n_ok += 1
            else:
                n_err += 1
                log("  compile error in worker (main will retry):", job, err)
        log(f"  precompile done in {time.time() - t:.1f}s: {n_ok} ok, {n_err} errors")
    except Exception as e:
        log("  precompile stopped:", repr(e)[:300], f"after {time.time() - t:.1f}s; {n_ok} compiled")
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()


# ----------------------------------------------------------------------------------------------
# 1. Prefill
# ----------------------------------------------------------------------------------------------
PF_BM, PF_BN, PF_W, PF_ST = (64, 128), (32, 64, 128), (4, 8), (1, 2, 3, 4)
PF_ALL = [(bm, bn, w, st) for bm in PF_BM for bn in PF_BN for w in PF_W for st in PF_ST]
PF_FIXED = [(128, 64, 8, 2), (64, 64, 4, 3), (128, 128, 8, 3)]     # the tile's defaults first
PF_ANCHOR = (1, 4096, 128)                                           # (B, S, D): all 48 tile configs
PF_OTHER = [(1, 8192, 128), (4, 8192, 128), (4, 4096, 128), (1, 1024, 128), (4, 1024, 128),
            (1, 8192, 64), (4, 8192, 64), (1, 4096, 64), (4, 4096, 64), (1, 1024, 64), (4, 1024, 64)]
PF_SUBSET = 7
PF_H = 32


def prefill_trips(S, BM, BN):
    return [min(triton.cdiv((pm + 1) * BM, BN), triton.cdiv(S, BN)) for pm in range(triton.cdiv(S, BM))]


def prefill_ref(q, k, v):
    if CPU_TEST:
        B, H, S, D = q.shape
        s = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(D)
        s = s.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
        return (torch.softmax(s, -1) @ v.float()).to(q.dtype)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def lse_ref(q, k):
    """Base-2 log-sum-exp of the scaled causal scores, f32; None when too large to form."""
    B, H, S, D = q.shape
    if B * H * S * S * 4 > (2_200_000_000 if not CPU_TEST else 1 << 26):
        return None
    s = (q.float() @ k.float().transpose(-1, -2)) * (1.0 / math.sqrt(D))
    s.masked_fill_(torch.ones(S, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    r = torch.logsumexp(s, -1) * LOG2E
    del s
    return r.reshape(-1)


def prefill_section(plan_cpu=None):
    dl = RUN.deadline("prefill")
    cols = ["impl", "B", "H", "S", "D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "status", "ms",
            "tflops_causal", "tflops_computed", "flops_causal", "flops_computed", "min_bytes", "kv_bytes_streamed",
            "grid_ctas", "n_regs", "n_spills", "shared_bytes", "blocks_per_sm", "max_abs_err", "rel_err",
            "lse_max_abs_err", "compile_s", "error"]
    out = RUN.csv("attention_triton_prefill.csv", cols)
    dev = "cpu" if CPU_TEST else "cuda"
    H = PF_H
    if CPU_TEST:
        H = 2
        shapes = [((1, 64, 32), [(16, 16, 4, 1), (32, 16, 4, 2), (16, 32, 4, 1)]),
                  ((2, 64, 16), None)]
    else:
        shapes = [(PF_ANCHOR, PF_ALL)] + [(sh, None) for sh in PF_OTHER]
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    anchor_res = []     # (tflops, cfg)
    best = {}
    dead = False
    for (B, S, D), cfgs in shapes:
        if dead:
            break
        if cfgs is None:   # subset: top anchor configs + the fixed ones
            ranked = [c for _, c in sorted(anchor_res, key=lambda x: -x[0])]
            cfgs = []
            for c in ranked[:4] + (PF_FIXED if not CPU_TEST else []) + ranked[4:]:
                if c not in cfgs:
                    cfgs.append(c)
            cfgs = cfgs[:PF_SUBSET] if not CPU_TEST else cfgs[:2]
            if not cfgs:
                cfgs = PF_FIXED
        fl_causal = 4 * B * H * D * (S * (S + 1) // 2)
        min_bytes = 2 * 4 * B * H * S * D + 4 * B * H * S
        shape_base = dict(B=B, H=H, S=S, D=D, flops_causal=fl_causal, min_bytes=min_bytes)
        if dl.over():
            for c in cfgs:
                out.row(impl="triton_flash_fwd", **shape_base, BLOCK_M=c[0], BLOCK_N=c[1], WARPS=c[2], STAGES=c[3],
                        status="skipped_time_budget")
            continue
        try:
            q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=DT, generator=gen) for _ in range(3))
            o = torch.empty_like(q)
            lse = torch.empty(B * H * S, device=dev, dtype=torch.float32)
            ref = prefill_ref(q, k, v)
            lref = lse_ref(q, k)
            sync()
        except Exception as e:
            out.row(impl="alloc", **shape_base, status="error", error=repr(e)[:300])
            log(f"prefill shape B={B} S={S} D={D}: alloc/ref ERROR {repr(e)[:200]}")
            continue
        log(f"prefill shape B={B} H={H} S={S} D={D}: {len(cfgs)} configs")
        if not CPU_TEST:
            try:
                fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)   # noqa: E731
                ms = bench(fn)
                out.row(impl="sdpa_default", **shape_base, status="ok", ms=ms, tflops_causal=fl_causal / ms / 1e9)
                log(f"  sdpa_default: {ms:.4f} ms {fl_causal / ms / 1e9:.1f} TF/s (causal)")
            except Exception as e:
                out.row(impl="sdpa_default", **shape_base, status="error", error=repr(e)[:300])
        for cfg in cfgs:
            BM, BN, W, ST = cfg
            trips = prefill_trips(S, BM, BN)
            fl_comp = 4 * B * H * D * BM * BN * sum(trips)
            base = dict(impl="triton_flash_fwd", **shape_base, BLOCK_M=BM, BLOCK_N=BN, WARPS=W, STAGES=ST,
                        flops_computed=fl_comp, kv_bytes_streamed=2 * 2 * B * H * D * BN * sum(trips),
                        grid_ctas=len(trips) * B * H)
            if dl.over():
                out.row(**base, status="skipped_time_budget")
                continue
            try:
                info = {}
                if not CPU_TEST:
                    t = time.time()
                    kc = prefill_launch(q, k, v, o, lse, cfg, warmup=True)
                    info["compile_s"] = time.time() - t
                    rinfo, oor = resources(kc, W)
                    info.update(rinfo)
                    if oor:
                        out.row(**base, **info, status="out_of_resources", error=oor)
                        log(f"  {cfg}: out of resources ({info.get('shared_bytes')} B smem)")
                        continue

                def fn():
                    prefill_launch(q, k, v, o, lse, cfg)
                o.fill_(float("nan"))
                lse.fill_(float("nan"))
                fn()
                sync()
                mae, rel = errs(o, ref)
                lerr = float((lse - lref).abs().max()) if lref is not None else \
                    (float("nan") if not bool(torch.isfinite(lse).all()) else "")
                ms = bench(fn)
                tfc, tfx = fl_causal / ms / 1e9, fl_comp / ms / 1e9
                # bf16 outputs of |x| up to ~5 differ by whole ulps (0.03): judge by the relative error
                good = rel == rel and rel < 2e-2 and (lerr == "" or lerr < 0.05)
                status = "ok" if good else "wrong_result"
                out.row(**base, **info, status=status, ms=ms, tflops_causal=tfc, tflops_computed=tfx,
                        max_abs_err=mae, rel_err=rel, lse_max_abs_err=lerr)
                log(f"  {cfg}: {ms:.4f} ms {tfc:6.1f} TF/s causal ({tfx:6.1f} computed) regs={info.get('n_regs')} "
                    f"spills={info.get('n_spills')} smem={info.get('shared_bytes')} occ={info.get('blocks_per_sm')} "
                    f"err={mae:.1e} lse_err={lerr} {status}")
                if status == "ok":
                    if (B, S, D) == (PF_ANCHOR if not CPU_TEST else (1, 64, 32)):
                        anchor_res.append((tfc, cfg))
                    if tfc > best.get((B, S, D), (0, None))[0]:
                        best[(B, S, D)] = (tfc, cfg, ms)
            except Exception as e:
                out.row(**base, status="error", error=repr(e)[:300])
                log(f"  {cfg}: ERROR {repr(e)[:300]}")
                if is_ctx_dead(e):
                    log("  CUDA context likely dead; stopping prefill section")
                    dead = True
                    break
        q = k = v = o = lse = ref = lref = None
        if not CPU_TEST:
            torch.cuda.empty_cache()
    out.close()
    for s, (tf, cfg, ms) in best.items():
        log(f"BEST prefill (B,S,D)={s}: {tf:.1f} TFLOP/s causal ({ms:.4f} ms) cfg(BM,BN,W,ST)={cfg}")
    return out.n


# ----------------------------------------------------------------------------------------------
# 2. Decode
# ----------------------------------------------------------------------------------------------
DC_DEFAULT = (64, 4, 3)             # (BLOCK_N, WARPS, STAGES)
DC_BN, DC_W, DC_ST = (32, 64, 128), (2, 4, 8), (1, 2, 3)
DC_SPLITS = (1, 4, 16, 64)
DC_HKV, DC_D = 8, 128
DC_ANCHOR = (8, 32, 32768)          # (B, HQ, SKV)
DC_SHAPES = [(B, HQ, SKV) for SKV in (131072, 32768, 4096) for B in (1, 8, 32) for HQ in (32, 64)]
DC_DETAIL = [(1, 32, 131072), (32, 64, 4096)]


def decode_plan():
    """[(shape, [(SPLITS, BN, W, ST) or 'BEST_SPLITS' markers])] in measurement order."""
    if CPU_TEST:
        return [((1, 4, 256), [(4, 32, 4, 3), (1, 16, 4, 3), (16, 32, 2, 1)]),
                ((2, 8, 200), [(4, 32, 4, 3), (16, 64, 4, 3)])]
    plan = [(DC_ANCHOR, [(16, bn, w, st) for bn in DC_BN for w in DC_W for st in DC_ST])]
    for sh in DC_SHAPES:
        plan.append((sh, [(s,) + DC_DEFAULT for s in DC_SPLITS]))
    for sh in DC_DETAIL:
        cf = [("BEST",) + (bn, w, 3) for bn in DC_BN for w in DC_W] + [("BEST", 64, 4, st) for st in (1, 2)]
        plan.append((sh, cf))
    return plan


def decode_section():
    dl = RUN.deadline("decode")
    cols = ["impl", "B", "HQ", "HKV", "SKV", "D", "SPLITS", "BLOCK_N", "WARPS", "STAGES", "GROUP", "GP", "SPLIT_LEN",
            "status", "ms_total", "ms_split", "ms_merge", "gbps_total", "gbps_split", "tflops_total", "flops",
            "min_bytes", "partial_bytes", "grid_split", "grid_merge", "merge_warps", "n_regs", "n_spills",
            "shared_bytes", "blocks_per_sm", "merge_n_regs", "merge_n_spills", "merge_shared_bytes",
            "max_abs_err", "rel_err", "compile_s", "error"]
    out = RUN.csv("attention_triton_decode.csv", cols)
    dev = "cpu" if CPU_TEST else "cuda"
    HKV, D = (DC_HKV, DC_D) if not CPU_TEST else (2, 32)
    gen = torch.Generator(device=dev)
    gen.manual_seed(2)
    best_splits = {}    # shape -> (gbps, splits)
    done = set()
    dead = False
    for (B, HQ, SKV), cfgs in decode_plan():
        if dead:
            break
        G = HQ // HKV
        flops = 4 * B * HQ * SKV * D
        min_bytes = 2 * (2 * B * HKV * SKV * D + 2 * B * HQ * D)
        shape_base = dict(B=B, HQ=HQ, HKV=HKV, SKV=SKV, D=D, GROUP=G, flops=flops, min_bytes=min_bytes)
        cfgs = [((best_splits.get((B, HQ, SKV), (0, 16))[1],) + c[1:]) if c[0] == "BEST" else c for c in cfgs]
        cfgs = [c for c in cfgs if ((B, HQ, SKV) + c) not in done]
        if not cfgs:
            continue
        if dl.over():
            for c in cfgs:
                out.row(impl="triton_splitkv", **shape_base, SPLITS=c[0], BLOCK_N=c[1], WARPS=c[2], STAGES=c[3],
                        status="skipped_time_budget")
            continue
        try:
            q = torch.randn(B, HQ, D, device=dev, dtype=DT, generator=gen)
            kc = torch.randn(B, HKV, SKV, D, device=dev, dtype=DT, generator=gen)
            vc = torch.randn(B, HKV, SKV, D, device=dev, dtype=DT, generator=gen)
            if CPU_TEST:
                kr = kc.float().repeat_interleave(G, dim=1)
                vr = vc.float().repeat_interleave(G, dim=1)
                s = (q.float().unsqueeze(2) @ kr.transpose(-1, -2)) / math.sqrt(D)
                ref = (torch.softmax(s, -1) @ vr).reshape(B, HQ, D)
            else:
                ref = F.scaled_dot_product_attention(q.unsqueeze(2), kc, vc, enable_gqa=True).reshape(B, HQ, D)
            sync()
        except Exception as e:
            out.row(impl="alloc", **shape_base, status="error", error=repr(e)[:300])
            log(f"decode shape B={B} HQ={HQ} SKV={SKV}: alloc/ref ERROR {repr(e)[:200]}")
            q = kc = vc = ref = None
            if not CPU_TEST:
                torch.cuda.empty_cache()
            continue
        log(f"decode shape B={B} HQ={HQ} HKV={HKV} SKV={SKV} D={D}: {len(cfgs)} configs")
        if not CPU_TEST and (B, HQ, SKV) not in {x[:3] for x in done}:
            try:
                fn = lambda: F.scaled_dot_product_attention(q.unsqueeze(2), kc, vc, enable_gqa=True)  # noqa: E731
                ms = bench(fn)
                out.row(impl="sdpa_default", **shape_base, status="ok", ms_total=ms, gbps_total=min_bytes / ms / 1e6,
                        tflops_total=flops / ms / 1e9)
                log(f"  sdpa_default: {ms:.4f} ms {min_bytes / ms / 1e6:.0f} GB/s")
            except Exception as e:
                out.row(impl="sdpa_default", **shape_base, status="error", error=repr(e)[:300])
        for cfg in cfgs:
            splits, BN, W, ST = cfg
            done.add((B, HQ, SKV) + cfg)
            if dl.over():
                out.row(impl="triton_splitkv", **shape_base, SPLITS=splits, BLOCK_N=BN, WARPS=W, STAGES=ST,
                        status="skipped_time_budget")
                continue
            try:
                bufs = DecodeBufs(q, kc, vc, splits, BN)
                pbytes = 4 * B * HQ * splits * (D + 2)
                base = dict(impl="triton_splitkv", **shape_base, SPLITS=splits, BLOCK_N=BN, WARPS=W, STAGES=ST,
                            GP=bufs.GP, SPLIT_LEN=bufs.split_len, partial_bytes=pbytes, grid_split=B * HKV * splits,
                            grid_merge=B * HKV, merge_warps=4)
                info = {}
                if not CPU_TEST:
                    t = time.time()
                    ks = bufs.split(W, ST, warmup=True)
                    km = bufs.merge(warmup=True)
                    info["compile_s"] = time.time() - t
                    rinfo, oor = resources(ks, W)
                    info.update(rinfo)
                    minfo, moor = resources(km, 4)
                    info.update({"merge_" + k_: v_ for k_, v_ in minfo.items() if k_ != "blocks_per_sm"})
                    if oor or moor:
                        out.row(**base, **info, status="out_of_resources", error=oor or moor)
                        log(f"  {cfg}: out of resources")
                        continue
                bufs.o.fill_(float("nan"))
                bufs.op.fill_(float("nan"))
                bufs.split(W, ST)
                bufs.merge()
                sync()
                mae, rel = errs(bufs.o, ref)

                def both():
                    bufs.split(W, ST)
                    bufs.merge()
                ms_split = bench(lambda: bufs.split(W, ST))
                ms_merge = bench(lambda: bufs.merge())
                ms_total = bench(both)
                good = mae == mae and rel < 2e-2
                status = "ok" if good else "wrong_result"
                gbps = min_bytes / ms_total / 1e6
                split_bytes = 2 * 2 * B * HKV * SKV * D + 2 * B * HQ * D + pbytes
                out.row(**base, **info, status=status, ms_total=ms_total, ms_split=ms_split, ms_merge=ms_merge,
                        gbps_total=gbps, gbps_split=split_bytes / ms_split / 1e6, tflops_total=flops / ms_total / 1e9,
                        max_abs_err=mae, rel_err=rel)
                log(f"  {cfg}: total {ms_total:.4f} ms (split {ms_split:.4f}, merge {ms_merge:.4f}) {gbps:.0f} GB/s "
                    f"regs={info.get('n_regs')} spills={info.get('n_spills')} smem={info.get('shared_bytes')} "
                    f"occ={info.get('blocks_per_sm')} err={rel:.1e} {status}")
                if status == "ok" and (BN, W, ST) == DC_DEFAULT and gbps > best_splits.get((B, HQ, SKV), (0, 0))[0]:
                    best_splits[(B, HQ, SKV)] = (gbps, splits)
                bufs = None
            except Exception as e:
                out.row(impl="triton_splitkv", **shape_base, SPLITS=splits, BLOCK_N=BN, WARPS=W, STAGES=ST,
                        status="error", error=repr(e)[:300])
                log(f"  {cfg}: ERROR {repr(e)[:300]}")
                if is_ctx_dead(e):
                    log("  CUDA context likely dead; stopping decode section")
                    dead = True
                    break
        q = kc = vc = ref = None
        if not CPU_TEST:
            torch.cuda.empty_cache()
    out.close()
    for s, (g, sp) in best_splits.items():
        log(f"BEST decode SPLITS (B,HQ,SKV)={s}: {sp} ({g:.0f} GB/s, default tile)")
    return out.n


def compile_jobs():
    jobs = [("prefill", PF_ANCHOR[2], c) for c in PF_ALL]
    for bn in DC_BN:
        for w in DC_W:
            for st in DC_ST:
                jobs.append(("decode_split", 4, DC_D, bn, w, st, 16))
    for s in DC_SPLITS:
        jobs.append(("decode_merge", 4, DC_D, 64, 4, 1, s))
    jobs += [("prefill", 64, c) for c in PF_ALL]      # D=64: only a subset is used (chosen after the anchor)
    return jobs


# ----------------------------------------------------------------------------------------------
def env_report():
    log("argv:", sys.argv)
    log("date:", time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    log("python:", sys.version.split()[0])
    if torch is not None:
        log("torch:", torch.__version__, "cuda:", torch.version.cuda)
    if HAVE_TRITON:
        log("triton:", triton.__version__)
    if not CPU_TEST and torch is not None and torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        log("device:", p.name, "sms:", p.multi_processor_count, "cc:", f"{p.major}.{p.minor}",
            "mem GiB:", round(p.total_memory / 2**30, 1))
        nvsmi()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    RUN.open(args[0] if args else "measured_attention_out", "attention_triton_log.txt")
    env_report()
    if torch is None or not HAVE_TRITON:
        log("torch/triton missing: nothing to do")
        return 1
    if not CPU_TEST and not torch.cuda.is_available():
        log("no CUDA device")
        return 1
    only = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")]
    only = only[0].split(",") if only else None
    if not CPU_TEST and "--no-precompile" not in sys.argv:
        torch.cuda.init()
        precompile(compile_jobs(), SECTION_MAX_S["precompile"])
    RUN.run_sections([(name, fn) for name, fn in [("prefill", prefill_section), ("decode", decode_section)]
                      if not (only and name not in only)], CPU_TEST)
    RUN.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
