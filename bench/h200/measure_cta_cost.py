#!/usr/bin/env python3
"""The per-CTA cost of CTAs that do little work, on an H200: launch, cross-warp reduction
(shared memory + __syncthreads), the store, and exit, as a function of warps per CTA and
CTAs per SM.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 CTA_DEADLINE_S=100 python3 bench/h200/measure_cta_cost.py OUTDIR
    python3 bench/h200/measure_cta_cost.py --cpu     # compile every kernel for sm_90, no GPU

One Triton kernel, one CTA = one contiguous block of BLOCK = WARPS x 32 x E bf16 elements
(E elements a thread: the row kernels' BLOCK_M x N / threads), in these modes (MODE):

    empty  nothing: the CTA launches and exits (the stamped variant stores its stamps)
    bar    E values a thread made from the index (no load), tl.sum over the CTA (shuffles,
           partials through shared memory, a barrier), one scalar stored by the CTA
    bar2   the same with softmax's two reductions: max, exp2, sum; one scalar stored
    copy   load the block, store it (no reduction)
    ldsum  load the block, sum of squares over the CTA, one scalar stored (no tile store)
    rms    load, sum of squares, x * rsqrt(mean + eps) stored (rmsnorm without a weight row)
    smax   load, max, exp2(x - max), sum, e / sum stored (the issue-15 softmax body)

WARPS in 1, 2, 4, 8, 16, 32. Grids: one wave of r CTAs per SM (grid 132 r, r up to the
kernel's residency) and two many-wave grids, 132 x 64 and 132 x 256 CTAs: their difference
over 132 x 192 CTAs is the steady-state time one CTA adds on one SM (launch and the ramp
cancel). The L2 is cleared before every timed launch (a 256 MB memset); each point is the
median of REPS CUDA-event timings.

The stamped variant (STAMP) of empty, rms and smax at E = 2 and 8 stores per CTA
%globaltimer at its start, after its reduction (rms, smax) and after its stores were
issued, and %smid, for one launch of 132 x 64 CTAs: lifetimes, CTAs at once per SM, the
slot's turnaround (a CTA's start after the end that freed its slot).

Writes OUTDIR/kernels.csv (compiled resources), OUTDIR/times.csv (one row per kernel and
grid), OUTDIR/ctas.csv (stamp summaries), OUTDIR/stamps.npz (raw stamps), OUTDIR/log.txt.
"""
import csv
import os
import sys
import time
import traceback

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_ctacost")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from clock_stamps import globaltimer as _timer, smid as _smid  # noqa: E402

MODES = {"empty": 0, "bar": 1, "bar2": 2, "copy": 3, "ldsum": 4, "rms": 5, "smax": 6}
WARPS = (1, 2, 4, 8, 16, 32)
SMS = 132
WAVES_R = (1, 2, 4, 8, 16, 32)
MANY = (SMS * 64, SMS * 256)
STAMP_GRID = SMS * 64
REPS = 9
SLOTS = 4   # start_ns, reduced_ns, stored_ns, smid


def plan():
    """(mode, warps, E, stamp) of every kernel, the timed ones first."""
    jobs = [("empty", w, 1, False) for w in WARPS]
    for mode, es in (("bar", (2, 8)), ("bar2", (2, 8)), ("copy", (2, 8, 32)), ("ldsum", (2, 8)),
                     ("rms", (2, 8, 32)), ("smax", (2, 8, 32))):
        jobs += [(mode, w, e, False) for e in es for w in WARPS]
    jobs += [(mode, w, e, True) for mode, es in (("empty", (1,)), ("rms", (2, 8)), ("smax", (2, 8)))
             for e in es for w in WARPS]
    return jobs


@triton.jit
def _put(T, pid, slot, v):
    r = tl.arange(0, 2)
    tl.store(T + pid.to(tl.int64) * 4 + slot + r * 0, v.to(tl.int64), mask=r == 0)


@triton.jit
def cta_kernel(X, Y, T, MODE: tl.constexpr, BLOCK: tl.constexpr, STAMP: tl.constexpr):
    pid = tl.program_id(0)
    r2 = tl.arange(0, 2)
    if STAMP:
        t_start = _timer(pid + r2 * 0)
        sm = _smid(pid + r2 * 0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if MODE == 1:
        x = (offs % 7).to(tl.float32)
        s = tl.sum(x, 0)
        tl.store(Y + pid, s.to(Y.dtype.element_ty))
    if MODE == 2:
        x = (offs % 7).to(tl.float32)
        m = tl.max(x, 0)
        s = tl.sum(tl.exp2(x - m), 0)
        tl.store(Y + pid, s.to(Y.dtype.element_ty))
    if MODE == 3:
        tl.store(Y + offs, tl.load(X + offs))
    if MODE == 4:
        x = tl.load(X + offs).to(tl.float32)
        s = tl.sum(x * x, 0)
        tl.store(Y + pid, s.to(Y.dtype.element_ty))
    if MODE == 5:
        x = tl.load(X + offs).to(tl.float32)
        inv = tl.rsqrt(tl.sum(x * x, 0) / BLOCK + 1e-6)
        if STAMP:
            t_red = _timer(inv.to(tl.int32, bitcast=True) + r2 * 0)
        tl.store(Y + offs, (x * inv).to(Y.dtype.element_ty))
    if MODE == 6:
        x = tl.load(X + offs).to(tl.float32)
        m = tl.max(x, 0)
        e = tl.exp2(x - m)
        s = tl.sum(e, 0)
        inv = 1.0 / s
        if STAMP:
            t_red = _timer(inv.to(tl.int32, bitcast=True) + r2 * 0)
        tl.store(Y + offs, (e * inv).to(Y.dtype.element_ty))
    if STAMP:
        t_st = _timer(pid + r2 * 0)
        _put(T, pid, 0, t_start)
        if MODE >= 5:
            _put(T, pid, 1, t_red)
        _put(T, pid, 2, t_st)
        _put(T, pid, 3, sm)


def name_of(job):
    mode, w, e, stamp = job
    return f"{mode}_w{w}_e{e}" + ("_stamped" if stamp else "")


def compile_cpu(job):
    """The kernel compiled for sm_90 with no GPU: (regs, spills, shared) or the error."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    mode, w, e, stamp = job
    names = cta_kernel.arg_names
    sig = {"X": "*bf16", "Y": "*bf16", "T": "*i64"}
    consts = dict(MODE=MODES[mode], BLOCK=w * 32 * e, STAMP=stamp)
    sig = {k: sig.get(k, "constexpr") for k in names}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(3)}
    k = triton.compile(ASTSource(fn=cta_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=1))
    return k.metadata.shared


def main_cpu():
    bad = 0
    for job in plan():
        try:
            smem = compile_cpu(job)
            print(name_of(job), "ok smem", smem, flush=True)
        except Exception as e:  # noqa: BLE001
            bad += 1
            print(name_of(job), "ERROR", repr(e)[:300], flush=True)
    print(len(plan()), "kernels,", bad, "failed")
    return 1 if bad else 0


# ---------------------------------------------------------------- on the GPU
def main_gpu(out):
    import numpy as np
    import torch
    from common import Campaign, compile_processes, results_in_budget

    run = Campaign(stamp="[{:6.1f}s] ", stamp_file=False)
    run.open(out, "log.txt")
    log = run.log
    deadline = float(os.environ.get("CTA_DEADLINE_S", "100"))
    props = torch.cuda.get_device_properties(0)
    log("torch", torch.__version__, "triton", triton.__version__, "device", props.name, "sms",
        props.multi_processor_count)
    run.nvsmi_fields = "clocks.sm,clocks.mem,temperature.gpu,power.draw"
    run.nvsmi()
    jobs = plan()
    import multiprocessing as mp
    nproc = compile_processes(len(jobs))
    t = time.time()
    pool = mp.get_context("spawn").Pool(nproc)
    try:
        for job, st, dt, err in results_in_budget(pool, _compile_worker, jobs, min(60.0, deadline / 2), t):
            if st != "ok":
                log("  compile error", name_of(job), err)
    except Exception as e:  # noqa: BLE001
        log("  precompile stopped:", repr(e)[:200])
    finally:
        pool.terminate()
        pool.join()
    log(f"precompiled {len(jobs)} kernels in {time.time() - t:.1f}s ({nproc} processes)")

    max_el = MANY[-1] * 32 * 32 * 32
    X = torch.zeros(max_el, device="cuda", dtype=torch.bfloat16)
    Y = torch.empty(max_el, device="cuda", dtype=torch.bfloat16)
    T = torch.zeros(STAMP_GRID * SLOTS, device="cuda", dtype=torch.int64)
    flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda", dtype=torch.int32)

    def launch(job, grid):
        mode, w, e, stamp = job
        return cta_kernel[(grid,)](X, Y, T, MODE=MODES[mode], BLOCK=w * 32 * e, STAMP=stamp, num_warps=w,
                                   num_stages=1)

    def timed(job, grid):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
        launch(job, grid)
        launch(job, grid)
        for i in range(REPS):
            flush.zero_()
            starts[i].record()
            launch(job, grid)
            ends[i].record()
        torch.cuda.synchronize()
        us = sorted(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))
        return us[len(us) // 2], us[0]

    kf = run.csv("kernels.csv", ["mode", "warps", "E", "stamp", "block", "regs", "spills", "smem_bytes",
                                 "blocks_per_sm", "error"])
    tf = run.csv("times.csv", ["mode", "warps", "E", "stamp", "block", "blocks_per_sm", "grid", "ctas_per_sm",
                               "waves", "us_median", "us_min", "bytes_moved"])
    cf = run.csv("ctas.csv", ["mode", "warps", "E", "block", "blocks_per_sm", "grid", "us_median",
                              "concurrent_per_sm_median", "life_ns_median", "life_ns_mean", "to_reduced_ns_median",
                              "reduced_to_stored_ns_median", "slot_turnaround_ns_median", "ctas_per_sm_max",
                              "span_ns"])
    raw = {}
    for job in jobs:
        if run.elapsed() > deadline:
            log("deadline: stopping before", name_of(job))
            break
        mode, w, e, stamp = job
        block = w * 32 * e
        info = dict(mode=mode, warps=w, E=e, stamp=int(stamp), block=block)
        try:
            k = launch(job, SMS)
            torch.cuda.synchronize()
            res, err = run.resources(k, w, smem="smem_bytes", regs="regs", spills="spills")
            info.update(res)
            kf.row(**info, error=err or "")
            bps = info.get("blocks_per_sm") or 1
            moved = {"copy": 4, "rms": 4, "smax": 4, "ldsum": 2}.get(mode, 0) * block   # bytes a CTA
            if not stamp:
                grids = [SMS * r for r in WAVES_R if r <= bps] + list(MANY)
                line = []
                for g in grids:
                    med, mn = timed(job, g)
                    tf.row(**info, grid=g, ctas_per_sm=min(bps, g // SMS), waves=g / (SMS * bps), us_median=med,
                           us_min=mn, bytes_moved=moved * g)
                    line.append(f"{g}:{med:.2f}")
                slope = (float(line[-1].split(":")[1]) - float(line[-2].split(":")[1])) * 1e3 / (
                    (MANY[1] - MANY[0]) / SMS)
                log(name_of(job), "regs", info.get("regs"), "bps", bps, "us", " ".join(line),
                    f"steady {slope:.1f} ns/CTA/SM")
            else:
                med, _ = timed(job, STAMP_GRID)
                T.zero_()
                launch(job, STAMP_GRID)
                torch.cuda.synchronize()
                a = T.cpu().numpy().reshape(STAMP_GRID, SLOTS)
                s = summarize(a, np)
                cf.row(mode=mode, warps=w, E=e, block=block, blocks_per_sm=bps, grid=STAMP_GRID, us_median=med, **s)
                t0 = a[:, 0].min()
                rel = a.copy()
                rel[:, 0] -= t0
                rel[:, 2] -= t0
                rel[:, 1] = np.where(a[:, 1] > 0, a[:, 1] - t0, -1)
                raw[name_of(job)] = rel.astype(np.int32)
                log(name_of(job), f"{med:.2f} us", "life", round(s["life_ns_median"]), "conc",
                    s["concurrent_per_sm_median"], "turn", s["slot_turnaround_ns_median"])
        except Exception as ex:  # noqa: BLE001
            kf.row(**info, error=repr(ex)[:200])
            log("ERROR", name_of(job), traceback.format_exc()[-500:])
    np.savez_compressed(os.path.join(out, "stamps.npz"), **raw)
    run.nvsmi()
    log(f"done in {run.elapsed():.1f}s")
    return 0


def _compile_worker(job):
    import torch
    t = time.time()
    try:
        mode, w, e, stamp = job
        x = torch.empty(64, device="cuda", dtype=torch.bfloat16)
        tt = torch.empty(64, device="cuda", dtype=torch.int64)
        cta_kernel.warmup(x, x, tt, MODE=MODES[mode], BLOCK=w * 32 * e, STAMP=stamp, num_warps=w, num_stages=1,
                          grid=(1,))
        return job, "ok", time.time() - t, ""
    except Exception as ex:  # noqa: BLE001
        return job, "compile_error", time.time() - t, repr(ex)[:300]


def summarize(a, np):
    """Per-CTA stamps [ctas, 4] (start, reduced or 0, stored, smid): lifetimes, CTAs at once
    per SM, and the turnaround of a slot: on each SM with c CTAs at once, the k-th start (k >= c,
    in start order) takes the slot freed by the (k - c + 1)-th end; start minus that end."""
    start, red, st, sm = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    life = st - start
    out = {"life_ns_median": float(np.median(life)), "life_ns_mean": float(np.mean(life)),
           "span_ns": int(st.max() - start.min())}
    if (red > 0).all():
        out["to_reduced_ns_median"] = float(np.median(red - start))
        out["reduced_to_stored_ns_median"] = float(np.median(st - red))
    conc, turns, per_sm = [], [], []
    for s in np.unique(sm):
        sel = sm == s
        ss, ee = np.sort(start[sel]), np.sort(st[sel])
        per_sm.append(int(sel.sum()))
        ev = sorted([(x, 1) for x in ss] + [(x, -1) for x in ee], key=lambda p: (p[0], p[1]))
        cur = best = 0
        for _, d in ev:
            cur += d
            best = max(best, cur)
        conc.append(best)
        for k in range(best, len(ss)):
            turns.append(int(ss[k] - ee[k - best]))
    out["concurrent_per_sm_median"] = float(np.median(conc))
    out["ctas_per_sm_max"] = int(max(per_sm))
    out["slot_turnaround_ns_median"] = float(np.median(turns)) if turns else ""
    return out


if __name__ == "__main__":
    if "--cpu" in sys.argv:
        sys.exit(main_cpu())
    sys.exit(main_gpu(sys.argv[1] if len(sys.argv) > 1 else "cta_cost_out"))
