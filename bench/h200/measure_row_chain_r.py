#!/usr/bin/env python3
"""The row kernels' compute chain against R, the rows a thread holds: per-CTA phase stamps.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 [ROW_FAMILY=rmsnorm] python3 bench/h200/measure_row_chain_r.py OUTDIR

Why: the model prices softmax's compute as one dependent chain through every element a thread
holds (``tfx.analysis.row_body.element_chain_phases``; calibration/h200/measured/row_phases,
finding 3: 40-50 cycles an element at one and two rows a thread), and the campaigns' error grows
with R (docs/analysis.md, "Rows a thread holds"): +1.5% at R = 1 to +21.7% at R = 16. The chain
R free rows would give overshoots. This measures the chain itself, phase by phase, at a fixed
number of elements a thread (128 and 64) while R goes 1 -> 16, so the rows the binaries let run
together can be read off without the memory system in the way.

The kernel is bench/h200/triton_kernels.py's softmax_kernel with four per-CTA stamps (%clock64,
scalar asm that reads a row statistic, so it waits for it and touches no tile register):

    start    after the program id
    maxed    after the row max is reduced (loads, the max fold, its shuffles and barrier)
    summed   after 1 / row sum (the sub, exp and add fold, shuffles, barrier, the reciprocal)
    stored   after the stores are issued (the normalization multiply, the cast, the stores)

Each configuration runs as a lone wave (grid = the SM count: one CTA a SM, its loads at the SM's
DRAM share) and as a full launch of up to 64 waves at the compiled occupancy (plain and stamped
kernels, do_bench medians; the stamped launch's phases and, per SM, its cycles a CTA and its CTAs
at once: the steady state the campaigns time). The full launch's stamped kernel stores each stamp as
it is taken (EARLY) and is compiled with maxnreg at the plain kernel's registers, so that it runs the
plain kernel's CTAs a SM (until session 39's second call the stamps cost up to 50 registers and 11 of
33 configurations ran fewer: calibration/h100/measured/row_chain_r/steady); the lone wave keeps the
stamps at the end, uncapped, as first measured, and runs the full launch's binary too (lone_capped_*:
the capped schedule differs from the uncapped one, so only the two of the same binary compare).
Writes OUTDIR/phases.csv (per configuration: compiled resources, SASS counts, the phase medians in
cycles over the lone wave's CTAs), OUTDIR/log.txt; with ROW_FAMILY=rmsnorm the campaigns'
rmsnorm instead (its stamps: start, 1 / rms in both middle slots, stores issued) into
OUTDIR/phases_rmsnorm.csv and OUTDIR/log_rmsnorm.txt.
"""
import csv
import os
import sys
import time
import traceback

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_chain_r")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from clock_stamps import SLOTS, clock64 as _clock, most_at_once, put_slot as _put, sass_opcodes  # noqa: E402
from clock_stamps import smid as _smid  # noqa: E402
from common import Campaign, compile_processes, results_in_budget  # noqa: E402
from triton_kernels import rmsnorm_kernel, softmax_kernel  # noqa: E402  (the campaigns' kernels)

RUN = Campaign(stamp="[{:6.1f}s] ", nvsmi_fields="name,clocks.sm,clocks.max.sm,clocks.mem,power.draw")
log = RUN.log
T0 = RUN.t0
DEADLINE_S = float(os.environ.get("CHAIN_DEADLINE_S", "280"))
# softmax (default) or rmsnorm: rmsnorm's stamps are start, after 1 / rms (the loads, the sum of squares, its
# exchange and the rsqrt; written to both middle slots: maxed_to_summed is 0) and after its stores
FAMILY = os.environ.get("ROW_FAMILY", "softmax")

# (BLOCK_M, N, WARPS): elements a thread = BLOCK_M x N / (32 x WARPS); R = BLOCK_M / (threads / t),
# t = min(threads, N / 8)
CONFIGS = (
    # 8 warps, 128 elements a thread: R = 1, 2, 4, 8, 16
    [(1, 32768, 8), (2, 16384, 8), (4, 8192, 8), (8, 4096, 8), (16, 2048, 8)]
    # 8 warps, 64 elements a thread
    + [(1, 16384, 8), (2, 8192, 8), (4, 4096, 8), (8, 2048, 8), (16, 1024, 8)]
    # 4 warps, 128 elements a thread (the last is the (16, 4) pair at N = 1024)
    + [(1, 16384, 4), (2, 8192, 4), (4, 4096, 4), (8, 2048, 4), (16, 1024, 4)]
    # 16 warps at N = 1024 (R = 2 and 4) and 2 warps at 1024 (R = 8)
    + [(8, 1024, 16), (16, 1024, 16), (8, 1024, 2)]
    # 16 warps, 64 elements a thread: R = 1 .. 8
    + [(1, 32768, 16), (2, 16384, 16), (4, 8192, 16), (8, 4096, 16)]
    # the rest of the N = 1024 tiles the campaigns rank (their steady state: the full_* columns)
    + [(8, 1024, 4), (8, 1024, 8), (4, 1024, 4), (4, 1024, 8), (2, 1024, 4), (2, 1024, 16), (1, 1024, 4),
       (1, 1024, 8), (1, 1024, 16), (2, 1024, 2), (4, 1024, 2)]
)


@triton.jit
def _stamp(T, pm, slot, dep, BLOCK_M: tl.constexpr, EARLY: tl.constexpr):
    """%clock64 once ``dep`` is ready; stored into the CTA's ``slot`` at once where EARLY (its register
    dies there: the steady-state launches), else returned for the stores at the end (as measured in the
    lone waves of the first calls)."""
    c = _clock(dep)
    if EARLY:
        _put(T, pm, slot, c, BLOCK_M)
    return c


@triton.jit
def _stamped_rows(X, T, M, N, OTHER: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  EARLY: tl.constexpr):
    """The campaigns' row-tile prologue (bench/h200/triton_kernels.py) with the start stamp and the SM id
    taken after the program id: (pm, rows, start clock, SM id, cols, mask, offsets, the tile in f32)."""
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    c_start = _stamp(T, pm, 0, rows, BLOCK_M, EARLY)
    sm = _smid(rows)
    if EARLY:
        _put(T, pm, 4, sm, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=OTHER).to(tl.float32)
    return pm, rows, c_start, sm, cols, mask, offs, x


@triton.jit
def _put_stamps(T, pm, c_start, c_first, c_second, c_stored, sm, BLOCK_M: tl.constexpr, EARLY: tl.constexpr):
    """The CTA's five slots, where not stored early: start, after the first statistic, after the second,
    stores issued, SM id."""
    if not EARLY:
        _put(T, pm, 0, c_start, BLOCK_M)
        _put(T, pm, 1, c_first, BLOCK_M)
        _put(T, pm, 2, c_second, BLOCK_M)
        _put(T, pm, 3, c_stored, BLOCK_M)
        _put(T, pm, 4, sm, BLOCK_M)


@triton.jit
def softmax_chain(X, Y, T, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EARLY: tl.constexpr):
    pm, rows, c_start, sm, cols, mask, offs, x = _stamped_rows(X, T, M, N, float("-inf"), BLOCK_M, BLOCK_N, EARLY)
    mx = tl.max(x, 1)
    c_max = _stamp(T, pm, 1, mx.to(tl.int32, bitcast=True), BLOCK_M, EARLY)
    e = tl.exp(x - mx[:, None])
    inv = 1.0 / tl.sum(e, 1)
    c_sum = _stamp(T, pm, 2, inv.to(tl.int32, bitcast=True), BLOCK_M, EARLY)
    y = e * inv[:, None]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)
    _put_stamps(T, pm, c_start, c_max, c_sum, _stamp(T, pm, 3, rows, BLOCK_M, EARLY), sm, BLOCK_M, EARLY)


@triton.jit
def rmsnorm_chain(X, W, Y, T, M, N, inv_n, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EARLY: tl.constexpr):
    pm, rows, c_start, sm, cols, mask, offs, x = _stamped_rows(X, T, M, N, 0.0, BLOCK_M, BLOCK_N, EARLY)
    inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
    c_sum = _stamp(T, pm, 1, inv.to(tl.int32, bitcast=True), BLOCK_M, EARLY)
    if EARLY:
        _put(T, pm, 2, c_sum, BLOCK_M)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * inv[:, None] * w[None, :]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)
    _put_stamps(T, pm, c_start, c_sum, c_sum, _stamp(T, pm, 3, rows, BLOCK_M, EARLY), sm, BLOCK_M, EARLY)


def steady(a):
    """The full launch's per-CTA phases (medians over its CTAs, cycles) and, per SM (its own clock), the
    cycles from its first CTA's start to its last one's stores over its CTAs and the most CTAs at once
    (medians over the SMs): the steady state the campaigns time, phase by phase."""
    out = {"full_to_maxed_clk": float(np.median(a[:, 1] - a[:, 0])),
           "full_summed_to_stored_clk": float(np.median(a[:, 3] - a[:, 2])),
           "full_cta_clk": float(np.median(a[:, 3] - a[:, 0]))}
    per_cta, conc = [], []
    for sm in np.unique(a[:, 4]):
        s = a[a[:, 4] == sm]
        per_cta.append((s[:, 3].max() - s[:, 0].min()) / len(s))
        conc.append(most_at_once(s[:, 0], s[:, 3]))
    out["full_sm_clk_per_cta"] = float(np.median(per_cta))
    out["full_concurrent_median"] = float(np.median(conc))
    return out


def kernels():
    """(the campaigns' kernel, its stamped copy) of FAMILY."""
    if FAMILY == "rmsnorm":
        return rmsnorm_kernel, rmsnorm_chain
    return softmax_kernel, softmax_chain


def args(plain, X, W, Y, T, m, n):
    """The launch arguments of FAMILY's plain kernel (plain) or its stamped one."""
    if FAMILY == "rmsnorm":
        return (X, W, Y, m, n, 1.0 / n, 1e-6) if plain else (X, W, Y, T, m, n, 1.0 / n, 1e-6)
    return (X, Y, m, n) if plain else (X, Y, T, m, n)


def sass_counts(k):
    """A few opcodes' counts in the compiled kernel (clock_stamps.sass_opcodes), and all of them."""
    ops = sass_opcodes(k)
    c = {name: sum(n for op, n in ops.items() if op.split(".")[0] == name)
         for name in ("MUFU", "SHFL", "BAR", "FMNMX", "FADD", "FMUL", "FFMA")}
    c["sass_instr"] = sum(ops.values())
    return c


def _compile_worker(job):
    bm, n, warps = job
    t = time.time()
    try:
        bf = torch.bfloat16
        e = lambda dt=bf: torch.empty(64, device="cuda", dtype=dt)  # noqa: E731
        kw = dict(BLOCK_M=bm, BLOCK_N=n, num_warps=warps, num_stages=1, grid=(1,))
        kp, ks = kernels()
        plain = kp.warmup(*args(True, e(), e(), e(), e(torch.int64), 64, n), **kw)
        plain._init_handles()
        ks.warmup(*args(False, e(), e(), e(), e(torch.int64), 64, n), **kw, EARLY=False)
        ks.warmup(*args(False, e(), e(), e(), e(torch.int64), 64, n), **kw, EARLY=True, maxnreg=plain.n_regs)
        return job, "ok", time.time() - t, ""
    except Exception as ex:
        return job, "compile_error", time.time() - t, repr(ex)[:200]


def precompile(budget_s=150):
    """The kernels of every configuration into the shared Triton cache, in parallel processes."""
    import multiprocessing as mp
    nproc = compile_processes(len(CONFIGS))
    t = time.time()
    pool = mp.get_context("spawn").Pool(nproc)
    try:
        for job, st, dt, err in results_in_budget(pool, _compile_worker, CONFIGS, budget_s, t):
            if st != "ok":
                log("  compile error", job, err)
    except Exception as ex:
        log("  precompile stopped:", repr(ex)[:200])
    finally:
        pool.terminate()
        pool.join()
    log(f"precompiled {len(CONFIGS)} configurations in {time.time() - t:.1f}s ({nproc} processes)")


def lone_waves(launch, X, full_m, lone_m, T, sms):
    """The stamps (one row a CTA) of four lone waves, one CTA a SM: ``launch(rows of X)`` five times, each
    on a fresh region of X so that L2 holds none of it, the first dropped (it pays the instruction fetch
    after the zeroing)."""
    waves = []
    for rep in range(5):
        Xl = X[(rep % 4) * lone_m:(rep % 4 + 1) * lone_m] if 4 * lone_m <= full_m else X[:lone_m]
        T.zero_()
        torch.cuda.synchronize()
        launch(Xl)
        torch.cuda.synchronize()
        if rep:
            waves.append(T[: sms * SLOTS].cpu().numpy().reshape(sms, SLOTS))
    return waves


def phase_medians(a):
    """(to maxed, maxed to summed, summed to stored, start to stored) of one launch's stamps, medians
    over its CTAs."""
    return (np.median(a[:, 1] - a[:, 0]), np.median(a[:, 2] - a[:, 1]), np.median(a[:, 3] - a[:, 2]),
            np.median(a[:, 3] - a[:, 0]))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "row_chain_r_out"
    RUN.open(out, "log.txt" if FAMILY == "softmax" else f"log_{FAMILY}.txt")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    log("family", FAMILY, "torch", torch.__version__, "triton", triton.__version__, "device",
        torch.cuda.get_device_name(0), "sms", sms)
    RUN.nvsmi()
    precompile()
    cols = ["family", "BLOCK_M", "N", "WARPS", "elements_per_thread", "R", "regs", "spills", "blocks_per_sm",
            "sass_instr", "MUFU", "SHFL", "BAR", "FMNMX", "FADD", "FMUL", "FFMA",
            "lone_ctas", "lone_sms", "to_maxed_clk", "maxed_to_summed_clk", "summed_to_stored_clk", "cta_clk",
            "maxed_to_summed_clk_p10", "maxed_to_summed_clk_p90", "full_M", "full_ms", "full_stamped_ms",
            "full_maxed_to_summed_clk", "full_to_maxed_clk", "full_summed_to_stored_clk", "full_cta_clk",
            "full_sm_clk_per_cta", "full_concurrent_median", "full_stamped_regs", "full_stamped_spills",
            "full_stamped_blocks_per_sm", "lone_capped_to_maxed_clk", "lone_capped_maxed_to_summed_clk",
            "lone_capped_summed_to_stored_clk", "status", "error"]
    f = open(os.path.join(out, f"phases_{FAMILY}.csv" if FAMILY != "softmax" else "phases.csv"), "w", newline="")
    w = csv.DictWriter(f, cols, extrasaction="ignore")
    w.writeheader()
    bf = torch.bfloat16
    g = torch.Generator(device="cuda")
    g.manual_seed(15)
    for bm, n, warps in CONFIGS:
        if time.time() - T0 > DEADLINE_S:
            log("deadline: stopping")
            break
        threads = 32 * warps
        t = min(threads, n // 8)
        row = {"family": FAMILY, "BLOCK_M": bm, "N": n, "WARPS": warps, "elements_per_thread": bm * n // threads,
               "R": bm // max(threads // t, 1)}
        try:
            # a full launch at the compiled occupancy (64 waves of 4 CTAs a SM, at least 512 MB of X as the
            # campaigns' shapes hold), and the lone wave
            full_m = max(64 * sms * 4 * bm, (2 ** 29 // (2 * n)) // bm * bm)
            while full_m * n * 2 > 2 ** 30 and full_m > bm * sms:
                full_m //= 2
            X = torch.randn(full_m, n, device="cuda", generator=g).to(bf)
            Y = torch.empty_like(X)
            T = torch.zeros(triton.cdiv(full_m, bm) * SLOTS, device="cuda", dtype=torch.int64)
            kw = dict(BLOCK_M=bm, BLOCK_N=n, num_warps=warps, num_stages=1)
            W = torch.randn(n, device="cuda", generator=g).to(bf)
            kplain, kstamp = kernels()
            grid = (triton.cdiv(full_m, bm),)
            kp = kplain[grid](*args(True, X, W, Y, T, full_m, n), **kw)
            torch.cuda.synchronize()
            # the steady-state launch: its stamps stored as they are taken and ptxas held to the plain
            # kernel's registers (a few words spilled), so it runs the campaigns' CTAs a SM
            kw_full = dict(kw, EARLY=True, maxnreg=kp.n_regs)
            kf = kstamp[grid](*args(False, X, W, Y, T, full_m, n), **kw_full)
            torch.cuda.synchronize()
            row.update(regs=kp.n_regs, spills=kp.n_spills, blocks_per_sm=RUN.occupancy(kp, threads, kp.metadata.shared))
            row.update(full_stamped_regs=kf.n_regs, full_stamped_spills=kf.n_spills,
                       full_stamped_blocks_per_sm=RUN.occupancy(kf, threads, kf.metadata.shared))
            row.update(sass_counts(kp))
            row["full_M"] = full_m
            row["full_ms"] = float(triton.testing.do_bench(
                lambda: kplain[grid](*args(True, X, W, Y, T, full_m, n), **kw),
                warmup=5, rep=40, return_mode="median"))
            row["full_stamped_ms"] = float(triton.testing.do_bench(
                lambda: kstamp[grid](*args(False, X, W, Y, T, full_m, n), **kw_full),
                warmup=5, rep=40, return_mode="median"))
            a = T.cpu().numpy().reshape(-1, SLOTS)
            row["full_maxed_to_summed_clk"] = float(np.median(a[:, 2] - a[:, 1]))
            row.update(steady(a))
            # the lone wave: one CTA a SM, the stamps at the end and no register cap (as first measured)
            lone_m = sms * bm
            waves = lone_waves(lambda Xl: kstamp[(sms,)](*args(False, Xl, W, Y, T, lone_m, n), **kw, EARLY=False),
                               X, full_m, lone_m, T, sms)
            meds = np.median(np.array([phase_medians(a) for a in waves]), axis=0)
            row.update(lone_sms=len(np.unique(waves[-1][:, 4])), lone_ctas=sms, to_maxed_clk=float(meds[0]),
                       maxed_to_summed_clk=float(meds[1]), summed_to_stored_clk=float(meds[2]), cta_clk=float(meds[3]))
            row["maxed_to_summed_clk_p10"] = float(np.median([np.percentile(a[:, 2] - a[:, 1], 10) for a in waves]))
            row["maxed_to_summed_clk_p90"] = float(np.median([np.percentile(a[:, 2] - a[:, 1], 90) for a in waves]))
            # the full launch's own binary (stamps stored early, registers capped) as a lone wave: its
            # steady-state phases over these are what sharing the SM adds
            capped = lone_waves(lambda Xl: kstamp[(sms,)](*args(False, Xl, W, Y, T, lone_m, n), **kw_full),
                                X, full_m, lone_m, T, sms)
            meds = np.median(np.array([phase_medians(a) for a in capped]), axis=0)
            row.update(lone_capped_to_maxed_clk=float(meds[0]), lone_capped_maxed_to_summed_clk=float(meds[1]),
                       lone_capped_summed_to_stored_clk=float(meds[2]))
            row["status"] = "ok"
            log(bm, n, warps, "R", row["R"], "regs", row["regs"], "sp", row["spills"], "occ", row["blocks_per_sm"],
                "phases clk", round(row["to_maxed_clk"]), round(row["maxed_to_summed_clk"]),
                round(row["summed_to_stored_clk"]), "full", f"{row['full_ms']:.4f} ms",
                "full m2s", round(row["full_maxed_to_summed_clk"]))
            del X, Y, T, W
        except Exception as e:
            row["status"] = "error"
            row["error"] = repr(e)[:200]
            log("ERROR", bm, n, warps, traceback.format_exc()[-600:])
        w.writerow(row)
        f.flush()
    RUN.nvsmi()
    log(f"done in {time.time() - T0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
