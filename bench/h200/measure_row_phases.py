#!/usr/bin/env python3
"""Where a row kernel's time goes on an H200: per-CTA phase stamps, compiled spills, SASS local traffic.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_row_phases.py OUTDIR

The kernels are bench/h200/measure_accuracy.py's Triton rmsnorm and softmax (imported from it, the
ones measured in calibration/h200/measured/issue15), at M x N = 4096 x 16384, BLOCK_M 1/2 x WARPS
1/4/8/16 plus spilling configurations. Each configuration runs in three variants:

    plain     the measured kernel itself
    stamped   the same body with per-CTA stamps: %globaltimer and %clock64 at the start (after the
              program id), after the row statistic is reduced (the asm reads the statistic, so it
              waits for it), after the stores are issued; and %smid. Scalar-sized asm: the tile's
              registers are not touched.
    loadstamp stamped plus a 'loads done' stamp: an elementwise asm over the loaded tile reads
              %globaltimer_lo once per element after that element's load returned, max over the
              row; this adds a tile of int32 values, so its registers/time are recorded separately
              (it perturbs the kernel; compare with `stamped`).

Writes OUTDIR/kernels.csv (one row per configuration and variant: compiled resources, SASS
instruction counts, kernel time), OUTDIR/ctas.csv (per configuration and variant: summaries of the
per-CTA stamps), OUTDIR/stamps.npz (raw per-CTA stamps, ns relative to the first CTA start) and
OUTDIR/log.txt. Timing: triton.testing.do_bench median (CUDA events, L2 cleared before each run).
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_rowphases")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import measure_accuracy as acc  # noqa: E402  (the measured kernels)
from clock_stamps import clock64 as _clock, globaltimer as _timer, most_at_once, put_slot as _put  # noqa: E402
from clock_stamps import smid as _smid  # noqa: E402
from common import Campaign, compile_processes, results_in_budget  # noqa: E402

RUN = Campaign(stamp="[{:6.1f}s] ", stamp_file=False)   # the log file's lines without the stamp
log = RUN.log
T0 = RUN.t0
DEADLINE_S = float(os.environ.get("ROW_DEADLINE_S", "300"))
M, N = 4096, 16384
BASE = [(bm, w) for bm in (1, 2) for w in (1, 4, 8, 16)]
# spilling configurations of issue15/rows.csv at 4096x16384 (regs 32, 700-2300 spills) and a
# mildly spilling one (1, 2: 255 regs, 130 spills)
SPILLING = [(1, 2), (2, 2), (4, 2), (4, 4), (8, 8), (8, 16), (16, 16)]
CONFIGS = BASE + SPILLING
VARIANTS = ("plain", "stamped", "loadstamp")
FAMILIES = ("rmsnorm", "softmax")
SLOTS = 8   # int64 per CTA: start_gt, load_gt, reduced_gt, stored_gt, smid, start_clk, reduced_clk, stored_clk
OUT = None


@triton.jit
def _timer_lo(dep):
    return tl.inline_asm_elementwise("mov.u32 $0, %globaltimer_lo;", "=r,r", [dep], dtype=tl.int32,
                                     is_pure=False, pack=1)


@triton.jit
def rmsnorm_stamped(X, W, Y, T, M, N, inv_n, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    LOADSTAMP: tl.constexpr):
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    t_start = _timer(rows)
    c_start = _clock(rows)
    sm = _smid(rows)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    if LOADSTAMP:
        t_load = tl.max(_timer_lo(x.to(tl.int32, bitcast=True)), 1)
        _put(T, pm, 1, t_load, BLOCK_M)
    inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
    inv_bits = inv.to(tl.int32, bitcast=True)
    t_red = _timer(inv_bits)
    c_red = _clock(inv_bits)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * inv[:, None] * w[None, :]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)
    t_st = _timer(rows)
    c_st = _clock(rows)
    _put(T, pm, 0, t_start, BLOCK_M)
    _put(T, pm, 2, t_red, BLOCK_M)
    _put(T, pm, 3, t_st, BLOCK_M)
    _put(T, pm, 4, sm, BLOCK_M)
    _put(T, pm, 5, c_start, BLOCK_M)
    _put(T, pm, 6, c_red, BLOCK_M)
    _put(T, pm, 7, c_st, BLOCK_M)


@triton.jit
def softmax_stamped(X, Y, T, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, LOADSTAMP: tl.constexpr):
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    t_start = _timer(rows)
    c_start = _clock(rows)
    sm = _smid(rows)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=float("-inf")).to(tl.float32)
    if LOADSTAMP:
        t_load = tl.max(_timer_lo(x.to(tl.int32, bitcast=True)), 1)
        _put(T, pm, 1, t_load, BLOCK_M)
    e = tl.exp(x - tl.max(x, 1)[:, None])
    inv = 1.0 / tl.sum(e, 1)
    inv_bits = inv.to(tl.int32, bitcast=True)
    t_red = _timer(inv_bits)
    c_red = _clock(inv_bits)
    y = e * inv[:, None]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)
    t_st = _timer(rows)
    c_st = _clock(rows)
    _put(T, pm, 0, t_start, BLOCK_M)
    _put(T, pm, 2, t_red, BLOCK_M)
    _put(T, pm, 3, t_st, BLOCK_M)
    _put(T, pm, 4, sm, BLOCK_M)
    _put(T, pm, 5, c_start, BLOCK_M)
    _put(T, pm, 6, c_red, BLOCK_M)
    _put(T, pm, 7, c_st, BLOCK_M)


def launch(fam, bm, w, variant, bufs, warmup=False):
    grid = (triton.cdiv(M, bm),)
    kw = dict(BLOCK_M=bm, BLOCK_N=triton.next_power_of_2(N), num_warps=w, num_stages=1)
    if variant == "plain":
        kern = acc.rmsnorm_kernel if fam == "rmsnorm" else acc.softmax_kernel
        args = ((bufs["X"], bufs["W"], bufs["Y"], M, N, 1.0 / N, 1e-6) if fam == "rmsnorm"
                else (bufs["X"], bufs["Y"], M, N))
    else:
        kern = rmsnorm_stamped if fam == "rmsnorm" else softmax_stamped
        args = ((bufs["X"], bufs["W"], bufs["Y"], bufs["T"], M, N, 1.0 / N, 1e-6) if fam == "rmsnorm"
                else (bufs["X"], bufs["Y"], bufs["T"], M, N))
        kw["LOADSTAMP"] = variant == "loadstamp"
    if warmup:
        return kern.warmup(*args, **kw, grid=grid)
    return kern[grid](*args, **kw)


def make_bufs(tiny=False):
    bf = torch.bfloat16
    if tiny:
        e = lambda dt=bf: torch.empty(64, device="cuda", dtype=dt)  # noqa: E731
        return {"X": e(), "W": e(), "Y": e(), "T": e(torch.int64)}
    g = torch.Generator(device="cuda")
    g.manual_seed(15)
    return {"X": torch.randn(M, N, device="cuda", generator=g).to(bf),
            "W": torch.randn(N, device="cuda", generator=g).to(bf),
            "Y": torch.empty(M * N, device="cuda", dtype=bf),
            "T": torch.zeros(M * SLOTS, device="cuda", dtype=torch.int64)}


def _compile_worker(job):
    t = time.time()
    try:
        launch(*job, make_bufs(tiny=True), warmup=True)
        return job, "ok", time.time() - t, ""
    except Exception as e:
        return job, "compile_error", time.time() - t, repr(e)[:300]


def precompile(jobs, budget_s):
    import multiprocessing as mp
    nproc = compile_processes(len(jobs))
    log(f"precompiling {len(jobs)} kernels in {nproc} processes (budget {budget_s:.0f}s)")
    t = time.time()
    pool = mp.get_context("spawn").Pool(nproc)
    try:
        for job, st, dt, err in results_in_budget(pool, _compile_worker, jobs, budget_s, t):
            if st != "ok":
                log("  compile error", job, err)
        log(f"  precompile done in {time.time() - t:.1f}s")
    except Exception as e:
        log("  precompile stopped:", repr(e)[:200])
    finally:
        pool.terminate()
        pool.join()


_SASS_TOOL = [None]


def sass_of(k):
    """The kernel's SASS text: triton's asm['sass'] if it has one, else cuobjdump/nvdisasm on the cubin."""
    err = ""
    cands = []
    try:
        import triton.backends.nvidia as nv
        bindir = os.path.join(os.path.dirname(nv.__file__), "bin")
        cands += [os.path.join(bindir, "cuobjdump"), os.path.join(bindir, "nvdisasm")]
    except Exception:
        pass
    cands += [shutil.which("cuobjdump") or "", shutil.which("nvdisasm") or "", "/usr/local/cuda/bin/cuobjdump"]
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(k.asm["cubin"])
        path = f.name
    for tool in cands:
        if tool and os.path.exists(tool):
            cmd = [tool, "-sass", path] if tool.endswith("cuobjdump") else [tool, "-c", path]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            if r.returncode == 0 and r.stdout:
                return r.stdout, os.path.basename(tool)
    try:
        s = k.asm["sass"]          # triton's AsmDict disassembles on first access
        if s:
            return s, "asm['sass']"
    except Exception as e:
        err = repr(e)[:120]
    return None, "no disassembler: " + err


_OPC = re.compile(r"^\s*(?:/\*[0-9a-f]{4,}\*/)?\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)[^;\n]*;", re.M)


def sass_counts(text):
    """Instruction counts: LDL/STL/LDG/STG by width, and all instructions."""
    c = {"sass_instr": 0, "LDL": 0, "STL": 0, "LDG": 0, "STG": 0, "LDL_bytes": 0, "STL_bytes": 0,
         "LDG_bytes": 0, "STG_bytes": 0, "BAR": 0, "SHFL": 0, "MUFU": 0}
    ops = {}
    for op, mods in _OPC.findall(text):
        ops[op + mods] = ops.get(op + mods, 0) + 1
        c["sass_instr"] += 1
        if op in c:
            c[op] += 1
        if op in ("LDL", "STL", "LDG", "STG"):
            width = 4
            for mtoken, b in ((".128", 16), (".64", 8), (".U16", 2), (".S16", 2), (".U8", 1)):
                if mtoken in mods:
                    width = b
                    break
            c[op + "_bytes"] += width     # bytes per thread
    return c, ops


def occupancy(k, threads, smem):
    try:
        from cuda.bindings import driver as cud
        err, n = cud.cuOccupancyMaxActiveBlocksPerMultiprocessor(cud.CUfunction(k.function), threads, smem)
        return int(n) if int(err) == 0 else ""
    except Exception:
        return ""


def summarize(T, bm, variant):
    """Per-configuration summaries of the per-CTA stamps (ns, cycles)."""
    ctas = triton.cdiv(M, bm)
    a = T[: ctas * SLOTS].reshape(ctas, SLOTS).astype(np.int64)
    t0 = a[:, 0].min()
    start, red, st = a[:, 0] - t0, a[:, 2] - t0, a[:, 3] - t0
    out = {"ctas": ctas, "span_ns": int(st.max()), "sms_used": len(np.unique(a[:, 4]))}
    out["cta_ns_mean"] = float(np.mean(st - start))
    out["to_reduced_ns_mean"] = float(np.mean(red - start))
    out["reduced_to_stored_ns_mean"] = float(np.mean(st - red))
    out["cta_clk_mean"] = float(np.mean(a[:, 7] - a[:, 5]))
    out["to_reduced_clk_mean"] = float(np.mean(a[:, 6] - a[:, 5]))
    out["reduced_to_stored_clk_mean"] = float(np.mean(a[:, 7] - a[:, 6]))
    if variant == "loadstamp":
        lo = a[:, 1] & 0xFFFFFFFF
        full = (a[:, 0] & ~0xFFFFFFFF) | lo
        full = np.where(full < a[:, 0], full + (1 << 32), full)
        out["to_loaded_ns_mean"] = float(np.mean(full - a[:, 0]))
        out["loaded_to_reduced_ns_mean"] = float(np.mean(a[:, 2] - full))
    # per SM: CTAs at once (max overlap of [start, stored]) and the gap from one CTA's stores
    # issued to the next CTA's start on that SM (store drain + CTA launch)
    conc, gaps, per_sm = [], [], []
    for s in np.unique(a[:, 4]):
        sel = a[:, 4] == s
        per_sm.append(int(sel.sum()))
        conc.append(most_at_once(start[sel], st[sel]))
        order = np.argsort(start[sel])
        s_sorted, e_sorted = start[sel][order], st[sel][order]
        if len(s_sorted) > 1:
            gaps.extend((s_sorted[1:] - e_sorted[:-1]).tolist())
    out["ctas_per_sm_max"] = int(max(per_sm))
    out["ctas_per_sm_min"] = int(min(per_sm))
    out["concurrent_ctas_per_sm_max"] = int(max(conc))
    out["concurrent_ctas_per_sm_median"] = float(np.median(conc))
    out["sm_gap_ns_median"] = float(np.median(gaps)) if gaps else ""
    return out, (a - np.array([t0, 0, t0, t0, 0, 0, 0, 0])).astype(np.int64)


def main():
    global OUT
    OUT = sys.argv[1] if len(sys.argv) > 1 else "row_phases_out"
    RUN.open(OUT, "log.txt")
    log("torch", torch.__version__, "triton", triton.__version__, "device", torch.cuda.get_device_name(0),
        "sms", torch.cuda.get_device_properties(0).multi_processor_count)
    acc.RUN.log_file = RUN.log_file
    acc.nvsmi()
    jobs = [(f, bm, w, v) for f in FAMILIES for (bm, w) in CONFIGS for v in VARIANTS]
    precompile(jobs, budget_s=min(150, DEADLINE_S / 2))
    bufs = make_bufs()
    kcols = ["family", "M", "N", "BLOCK_M", "WARPS", "variant", "status", "ms", "regs", "spills",
             "smem_bytes", "blocks_per_sm", "sass_tool", "sass_instr", "LDL", "STL", "LDL_bytes", "STL_bytes",
             "LDG", "STG", "LDG_bytes", "STG_bytes", "BAR", "SHFL", "MUFU", "error"]
    ccols = ["family", "BLOCK_M", "WARPS", "variant", "ctas", "span_ns", "sms_used", "ctas_per_sm_max",
             "ctas_per_sm_min", "concurrent_ctas_per_sm_max", "concurrent_ctas_per_sm_median", "cta_ns_mean",
             "to_loaded_ns_mean", "loaded_to_reduced_ns_mean", "to_reduced_ns_mean", "reduced_to_stored_ns_mean",
             "cta_clk_mean", "to_reduced_clk_mean", "reduced_to_stored_clk_mean", "sm_gap_ns_median"]
    kf, cf = open(os.path.join(OUT, "kernels.csv"), "w", newline=""), open(os.path.join(OUT, "ctas.csv"), "w", newline="")
    kw_, cw = csv.DictWriter(kf, kcols, extrasaction="ignore"), csv.DictWriter(cf, ccols, extrasaction="ignore")
    kw_.writeheader()
    cw.writeheader()
    raw, histograms = {}, {}
    # plain first for every configuration (the times), then the stamped variants
    for variant in VARIANTS:
        for fam in FAMILIES:
            for bm, w in CONFIGS:
                if time.time() - T0 > DEADLINE_S:
                    log("deadline: stopping")
                    break
                row = {"family": fam, "M": M, "N": N, "BLOCK_M": bm, "WARPS": w, "variant": variant}
                try:
                    k = launch(fam, bm, w, variant, bufs, warmup=True)
                    k._init_handles()
                    row.update(regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared,
                               blocks_per_sm=occupancy(k, 32 * w, k.metadata.shared))
                    text, tool = sass_of(k)
                    row["sass_tool"] = tool
                    if text:
                        counts, ops = sass_counts(text)
                        row.update(counts)
                        histograms[f"{fam}_bm{bm}_w{w}_{variant}"] = ops
                    fn = lambda: launch(fam, bm, w, variant, bufs)  # noqa: E731
                    fn()
                    torch.cuda.synchronize()
                    row["ms"] = float(triton.testing.do_bench(fn, warmup=5, rep=25, return_mode="median"))
                    row["status"] = "ok"
                    if variant != "plain":
                        bufs["T"].zero_()
                        fn()
                        torch.cuda.synchronize()
                        s, a = summarize(bufs["T"].cpu().numpy(), bm, variant)
                        s.update(family=fam, BLOCK_M=bm, WARPS=w, variant=variant)
                        cw.writerow(s)
                        cf.flush()
                        raw[f"{fam}_bm{bm}_w{w}_{variant}"] = a
                        log(fam, bm, w, variant, f"{row['ms']:.4f} ms", "regs", row["regs"], "spills", row["spills"],
                            "cta_ns", round(s["cta_ns_mean"]), "conc", s["concurrent_ctas_per_sm_median"])
                    else:
                        log(fam, bm, w, variant, f"{row['ms']:.4f} ms", "regs", row["regs"], "spills",
                            row["spills"], "LDL", row.get("LDL"), "STL", row.get("STL"), tool)
                except Exception as e:
                    row["status"] = "error"
                    row["error"] = repr(e)[:200]
                    log("ERROR", fam, bm, w, variant, traceback.format_exc()[-600:])
                kw_.writerow(row)
                kf.flush()
    np.savez_compressed(os.path.join(OUT, "stamps.npz"), **raw)
    with open(os.path.join(OUT, "sass_ops.json"), "w") as f:
        json.dump(histograms, f, indent=0, sort_keys=True)
    acc.nvsmi()
    log(f"done in {time.time() - T0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
