#!/usr/bin/env python3
"""Multi-row CTAs of the row kernels on an H200: how the rows of one CTA and the CTAs of one
SM overlap their DRAM streams with the reduction, the compute and the stores.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 ROWCTA_DEADLINE_S=100 python3 bench/h200/measure_row_cta.py OUTDIR
    python3 bench/h200/measure_row_cta.py --cpu     # compile a few kernels for sm_90, no GPU
    python3 bench/h200/measure_row_cta.py --sass MODE:N:BLOCK_M:WARPS ...   # their SASS, no GPU

One Triton kernel with the issue-15 row kernels' body (bench/h200/measure_accuracy.py's
rmsnorm_kernel / softmax_kernel: a CTA holds BLOCK_M whole rows of N bf16 elements in
registers, masks included), in three modes (MODE):

    copy   load the BLOCK_M x N tile, store it
    rms    load, sum of squares per row, rsqrt, the weight row W (N elements) loaded AFTER
           the reduction, x * inv * w stored (the measured rmsnorm)
    smax   load, row max, exp(x - max), row sum, e / sum stored (the measured softmax)

Configurations: N in 1024..16384 (powers of two), BLOCK_M in 1, 2, 4, 8, 16, WARPS in 1, 2,
4, 8, 16, with BLOCK_M x N / (32 WARPS) <= 128 values a thread (the spilling ones are a
separate mechanism, tfx.analysis.row_body). Grids, r = the kernel's residency
(cuOccupancyMaxActiveBlocksPerMultiprocessor): 132 CTAs (one per SM), 132 r (one full
wave), 132 x 4r and 132 x 32r (many waves; their difference over 132 x 28r CTAs is the
steady time one CTA adds on one SM, the launch and the ramp cancelled). The L2 is cleared
before every timed launch (a 256 MB memset); each point is the median of REPS CUDA-event
timings. X is zero-filled.

The stamped variant (rms and smax) stores per CTA %globaltimer at its start, after its row
statistics (the reduction of all its rows) and after its stores were issued, and %smid, for
one launch of 132 x 4r CTAs (right after its timed launches, L2 cleared first).

Writes OUTDIR/kernels.csv, OUTDIR/times.csv, OUTDIR/ctas.csv, OUTDIR/stamps.npz, OUTDIR/log.txt.
"""
import os
import sys
import time
import traceback

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_rowcta")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from clock_stamps import globaltimer as _timer, smid as _smid  # noqa: E402

MODES = {"copy": 0, "rms": 1, "smax": 2}
NS = (1024, 2048, 4096, 8192, 16384)
BMS = (1, 2, 4, 8, 16)
WARPS = (1, 2, 4, 8, 16)
MAX_VALUES = 128
SMS = 132
REPS = 7
SLOTS = 4   # start_ns, reduced_ns, stored_ns, smid
RAW_CAP = 4224


def plan():
    """(mode, N, BLOCK_M, warps, stamp) of every kernel: timed ones first, by mode, then stamped."""
    cfgs = [(n, bm, w) for n in NS for bm in BMS for w in WARPS if bm * n // (32 * w) <= MAX_VALUES]
    jobs = [(m, n, bm, w, False) for m in MODES for (n, bm, w) in cfgs]
    jobs += [(m, n, bm, w, True) for m in ("rms", "smax") for (n, bm, w) in cfgs]
    return jobs


@triton.jit
def _put(T, pid, slot, v):
    r = tl.arange(0, 2)
    tl.store(T + pid.to(tl.int64) * 4 + slot + r * 0, v.to(tl.int64), mask=r == 0)


@triton.jit(do_not_specialize=["M"])
def row_cta_kernel(X, W, Y, T, M, N, inv_n, eps, MODE: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, STAMP: tl.constexpr):
    pm = tl.program_id(0)
    r2 = tl.arange(0, 2)
    if STAMP:
        t_start = _timer(pm + r2 * 0)
        sm = _smid(pm + r2 * 0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    if MODE == 0:
        tl.store(Y + offs, tl.load(X + offs, mask=mask, other=0.0), mask=mask)
    if MODE == 1:
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
        if STAMP:
            t_red = _timer(tl.sum(inv, 0).to(tl.int32, bitcast=True) + r2 * 0)
        w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
        y = x * inv[:, None] * w[None, :]
        tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)
    if MODE == 2:
        x = tl.load(X + offs, mask=mask, other=float("-inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, 1)[:, None])
        inv = 1.0 / tl.sum(e, 1)
        if STAMP:
            t_red = _timer(tl.sum(inv, 0).to(tl.int32, bitcast=True) + r2 * 0)
        y = e * inv[:, None]
        tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)
    if STAMP:
        t_st = _timer(pm + r2 * 0)
        _put(T, pm, 0, t_start)
        if MODE >= 1:
            _put(T, pm, 1, t_red)
        _put(T, pm, 2, t_st)
        _put(T, pm, 3, sm)


def name_of(job):
    mode, n, bm, w, stamp = job
    return f"{mode}_n{n}_bm{bm}_w{w}" + ("_stamped" if stamp else "")


def compile_cpu(job):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    mode, n, bm, w, stamp = job
    names = row_cta_kernel.arg_names
    sig = {"X": "*bf16", "W": "*bf16", "Y": "*bf16", "T": "*i64", "M": "i32", "N": "i32", "inv_n": "fp32",
           "eps": "fp32"}
    consts = dict(MODE=MODES[mode], BLOCK_M=bm, BLOCK_N=n, STAMP=stamp)
    sig = {k: sig.get(k, "constexpr") for k in names}
    # the pointers and N divisible by 16, as the launch specializes them (M is not specialized)
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 5)}
    k = triton.compile(ASTSource(fn=row_cta_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=1))
    return k


MEMORY_OPS = ("LDG", "STG", "BAR", "LDS", "STS", "SHFL")


def sass_summary(job):
    """The compiled kernel's global and shared memory instructions, barriers and shuffles in
    program order, runs of one opcode folded ("LDG.E.128x4"): where the weight row's load
    sits against the reduction's barriers, and how wide it is."""
    import re
    import subprocess
    import tempfile
    k = compile_cpu(job)
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"])
        f.flush()
        text = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True).stdout
    runs = []
    for line in text.splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", line)
        if m and m.group(1).split(".")[0] in MEMORY_OPS:
            if runs and runs[-1][0] == m.group(1):
                runs[-1][1] += 1
            else:
                runs.append([m.group(1), 1])
    return " ".join(f"{op}x{n}" for op, n in runs)


def main_sass(specs):
    for spec in specs:
        mode, n, bm, w = spec.split(":")
        print(spec, sass_summary((mode, int(n), int(bm), int(w), False)), flush=True)
    return 0


def main_cpu():
    jobs = plan()
    print(len(jobs), "kernels planned")
    bad = 0
    for job in [j for j in jobs if j[1] == 16384][:4] + [j for j in jobs if j[4]][:3]:
        try:
            print(name_of(job), "ok smem", compile_cpu(job).metadata.shared, flush=True)
        except Exception as e:  # noqa: BLE001
            bad += 1
            print(name_of(job), "ERROR", repr(e)[:300], flush=True)
    return 1 if bad else 0


# ---------------------------------------------------------------- on the GPU
def main_gpu(out):
    import numpy as np
    import torch
    from common import Campaign, compile_processes, results_in_budget

    run = Campaign(stamp="[{:6.1f}s] ", stamp_file=False)
    run.open(out, "log.txt")
    log = run.log
    deadline = float(os.environ.get("ROWCTA_DEADLINE_S", "100"))
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
        for job, st, dt, err in results_in_budget(pool, _compile_worker, jobs, min(45.0, deadline / 2), t):
            if st != "ok":
                log("  compile error", name_of(job), err)
    except Exception as e:  # noqa: BLE001
        log("  precompile stopped:", repr(e)[:200])
    finally:
        pool.terminate()
        pool.join()
    log(f"precompiled {len(jobs)} kernels in {time.time() - t:.1f}s ({nproc} processes)")

    # grid 132 x 32r CTAs of BLOCK_M x N = 32 WARPS x values elements; r x WARPS <= 64 warps an SM
    max_el = SMS * 32 * 64 * 32 * MAX_VALUES
    X = torch.zeros(max_el, device="cuda", dtype=torch.bfloat16)
    Y = torch.empty(max_el, device="cuda", dtype=torch.bfloat16)
    Wt = torch.ones(16384, device="cuda", dtype=torch.bfloat16)
    T = torch.zeros(SMS * 4 * 64 * SLOTS, device="cuda", dtype=torch.int64)
    flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda", dtype=torch.int32)

    def launch(job, grid):
        mode, n, bm, w, stamp = job
        return row_cta_kernel[(grid,)](X, Wt, Y, T, grid * bm, n, 1.0 / n, 1e-6, MODE=MODES[mode], BLOCK_M=bm,
                                       BLOCK_N=n, STAMP=stamp, num_warps=w, num_stages=1)

    def timed(job, grid):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
        launch(job, grid)
        for i in range(REPS):
            flush.zero_()
            starts[i].record()
            launch(job, grid)
            ends[i].record()
        torch.cuda.synchronize()
        us = sorted(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))
        return us[len(us) // 2], us[0]

    kf = run.csv("kernels.csv", ["mode", "N", "BLOCK_M", "warps", "stamp", "values_per_thread", "regs", "spills",
                                 "smem_bytes", "blocks_per_sm", "error"])
    tf = run.csv("times.csv", ["mode", "N", "BLOCK_M", "warps", "values_per_thread", "regs", "spills",
                               "blocks_per_sm", "grid", "ctas_per_sm", "us_median", "us_min", "bytes_moved"])
    cf = run.csv("ctas.csv", ["mode", "N", "BLOCK_M", "warps", "blocks_per_sm", "grid", "us_median",
                              "concurrent_per_sm_median", "life_ns_median", "life_ns_mean", "to_reduced_ns_median",
                              "reduced_to_stored_ns_median", "slot_turnaround_ns_median", "ctas_per_sm_max",
                              "span_ns"])
    raw = {}
    for job in jobs:
        if run.elapsed() > deadline:
            log("deadline: stopping before", name_of(job))
            break
        mode, n, bm, w, stamp = job
        vals = bm * n // (32 * w)
        info = dict(mode=mode, N=n, BLOCK_M=bm, warps=w, values_per_thread=vals)
        try:
            k = launch(job, SMS)
            torch.cuda.synchronize()
            res, err = run.resources(k, w, smem="smem_bytes", regs="regs", spills="spills")
            kf.row(**info, stamp=int(stamp), **res, error=err or "")
            bps = int(res.get("blocks_per_sm") or 1)
            cta_bytes = 4 * bm * n + (2 * n if mode == "rms" else 0)
            if not stamp:
                grids = sorted({SMS, SMS * bps, SMS * 4 * bps, SMS * 32 * bps})
                line = []
                meds = {}
                for g in grids:
                    med, mn = timed(job, g)
                    meds[g] = med
                    tf.row(**info, regs=res.get("regs"), spills=res.get("spills"), blocks_per_sm=bps, grid=g,
                           ctas_per_sm=min(bps, g // SMS), us_median=med, us_min=mn, bytes_moved=cta_bytes * g)
                    line.append(f"{g}:{med:.2f}")
                slope = (meds[SMS * 32 * bps] - meds[SMS * 4 * bps]) * 1e3 / (28 * bps)
                dram = cta_bytes / (4.238e12 / SMS) * 1e9
                log(name_of(job), "regs", res.get("regs"), "sp", res.get("spills"), "bps", bps, "us", " ".join(line),
                    f"steady {slope:.1f} ns/CTA/SM, bytes {dram:.0f} ns, slot {slope * bps:.0f}")
            else:
                g = SMS * 4 * bps
                med, _ = timed(job, g)
                T.zero_()
                flush.zero_()
                launch(job, g)
                torch.cuda.synchronize()
                a = T[: g * SLOTS].cpu().numpy().reshape(g, SLOTS)
                s = summarize(a, np)
                cf.row(mode=mode, N=n, BLOCK_M=bm, warps=w, blocks_per_sm=bps, grid=g, us_median=med, **s)
                t0 = a[:, 0].min()
                rel = a.copy()
                rel[:, 0] -= t0
                rel[:, 2] -= t0
                rel[:, 1] = np.where(a[:, 1] > 0, a[:, 1] - t0, -1)
                raw[name_of(job)] = rel[:RAW_CAP].astype(np.int32)
                log(name_of(job), f"{med:.2f} us", "life", round(s["life_ns_median"]), "red",
                    s.get("to_reduced_ns_median"), "conc", s["concurrent_per_sm_median"], "turn",
                    s["slot_turnaround_ns_median"])
        except Exception:  # noqa: BLE001
            log("ERROR", name_of(job), traceback.format_exc()[-500:])
    np.savez_compressed(os.path.join(out, "stamps.npz"), **raw)
    run.nvsmi()
    log(f"done in {run.elapsed():.1f}s")
    return 0


def _compile_worker(job):
    import torch
    t = time.time()
    try:
        mode, n, bm, w, stamp = job
        x = torch.empty(64, device="cuda", dtype=torch.bfloat16)
        tt = torch.empty(64, device="cuda", dtype=torch.int64)
        row_cta_kernel.warmup(x, x, x, tt, 64, n, 1.0, 1e-6, MODE=MODES[mode], BLOCK_M=bm, BLOCK_N=n, STAMP=stamp,
                              num_warps=w, num_stages=1, grid=(1,))
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
    if "--sass" in sys.argv:
        sys.exit(main_sass(sys.argv[sys.argv.index("--sass") + 1:]))
    sys.exit(main_gpu(sys.argv[1] if len(sys.argv) > 1 else "row_cta_out"))
