#!/usr/bin/env python3
"""Does a row kernel's first wave set its steady state? The issue-15 rmsnorm and softmax at N = 16384
with the first wave's CTAs started apart on purpose.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_row_stagger.py OUTDIR

The measured kernels (bench/h200/measure_accuracy.py's Triton rmsnorm and softmax, the code of
calibration/h200/measured/issue15) run in two variants:

    plain    the measured kernel itself
    stagger  the same body behind a prologue: a CTA whose program id p is below S (a runtime
             argument) first spins on %globaltimer for p x DELAY / S ns (DELAY a runtime
             argument). With S = the CTAs of the first full wave (132 SMs x the CTAs a SM holds)
             its CTAs start spread evenly over [0, DELAY] instead of together; every later CTA
             starts when a slot frees, as in the plain kernel. One binary serves every DELAY
             (DELAY = 0: no spin), so any difference between delays is the schedule's, not the
             code's.

If a configuration's time falls (beyond the DELAY added once to the launch) when its first wave is
spread, the lock step the first wave starts in persists through the launch (no restoring force),
and which end of the two-CTA cycle a code runs at (docs/analysis.md section 8, (j)) is an initial
condition; if it does not move, the state is the code's own.

Writes OUTDIR/stagger.csv (kernel, M, N, BLOCK_M, WARPS, regs, spills, ctas_per_sm, variant,
delay_ns, ms) and OUTDIR/log.txt. Timing: triton.testing.do_bench median (CUDA events, the L2
cleared before each run), warmup 5 ms, rep 25 ms.
"""
import csv
import os
import sys
import time
import traceback

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_rowstagger")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _now(dep):
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [dep], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def _spin(pm, S, DELAY):
    if pm < S:
        wait = (pm.to(tl.int64) * DELAY) // S
        t0 = _now(pm)
        t = t0
        while t - t0 < wait:
            t = _now(pm + (t - t0).to(tl.int32) * 0)


@triton.jit
def rmsnorm_kernel(X, W, Y, M, N, inv_n, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * inv[:, None] * w[None, :]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_stagger(X, W, Y, M, N, inv_n, eps, S, DELAY, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0)
    _spin(pm, S, DELAY)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * inv[:, None] * w[None, :]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def softmax_kernel(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 1)[:, None])
    y = e * (1.0 / tl.sum(e, 1))[:, None]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def softmax_stagger(X, Y, M, N, S, DELAY, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0)
    _spin(pm, S, DELAY)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 1)[:, None])
    y = e * (1.0 / tl.sum(e, 1))[:, None]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


# (kernel, M, N, BLOCK_M, WARPS): the non-spilling N = 16384 configurations of the issue-15 truth
CONFIGS = [("rmsnorm", 16384, 16384, bm, w) for bm, w in ((2, 16), (1, 4), (1, 8), (1, 16), (2, 8))] + \
          [("softmax", 16384, 16384, bm, w) for bm, w in ((1, 16), (1, 8), (1, 4), (2, 16), (2, 8))]
DELAYS = (0, 1000, 2000, 4000)


def ctas_per_sm(regs, warps, props):
    per_thread = -(-max(regs, 1) // 8) * 8
    by_regs = props.regs_per_multiprocessor // (per_thread * 32 * warps)
    return max(0, min(by_regs, 64 // warps, 32))


def main(out):
    import torch
    os.makedirs(out, exist_ok=True)
    log = open(os.path.join(out, "log.txt"), "w")

    def say(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()

    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    say(f"{props.name} sms={sms} torch {torch.__version__} triton {triton.__version__}")
    t_start = time.time()
    rows = []
    bf = torch.bfloat16
    for fam, M, N, bm, warps in CONFIGS:
        if time.time() - t_start > 95:
            say("deadline: stopping before", fam, M, N, bm, warps)
            break
        try:
            X = torch.randn(M, N, device="cuda", dtype=bf)
            Y = torch.empty_like(X)
            grid = (triton.cdiv(M, bm),)
            if fam == "rmsnorm":
                Wt = torch.randn(N, device="cuda", dtype=bf)
                plain = lambda: rmsnorm_kernel[grid](X, Wt, Y, M, N, 1.0 / N, 1e-6, BLOCK_M=bm, BLOCK_N=N,
                                                      num_warps=warps, num_stages=1)
                stag = lambda S, D: rmsnorm_stagger[grid](X, Wt, Y, M, N, 1.0 / N, 1e-6, S, D, BLOCK_M=bm,
                                                           BLOCK_N=N, num_warps=warps, num_stages=1)
                kp = rmsnorm_kernel.warmup(X, Wt, Y, M, N, 1.0 / N, 1e-6, BLOCK_M=bm, BLOCK_N=N,
                                           num_warps=warps, num_stages=1, grid=grid)
                ks = rmsnorm_stagger.warmup(X, Wt, Y, M, N, 1.0 / N, 1e-6, 1, 0, BLOCK_M=bm, BLOCK_N=N,
                                            num_warps=warps, num_stages=1, grid=grid)
            else:
                plain = lambda: softmax_kernel[grid](X, Y, M, N, BLOCK_M=bm, BLOCK_N=N, num_warps=warps,
                                                      num_stages=1)
                stag = lambda S, D: softmax_stagger[grid](X, Y, M, N, S, D, BLOCK_M=bm, BLOCK_N=N,
                                                           num_warps=warps, num_stages=1)
                kp = softmax_kernel.warmup(X, Y, M, N, BLOCK_M=bm, BLOCK_N=N, num_warps=warps,
                                           num_stages=1, grid=grid)
                ks = softmax_stagger.warmup(X, Y, M, N, 1, 0, BLOCK_M=bm, BLOCK_N=N, num_warps=warps,
                                            num_stages=1, grid=grid)
            for variant, k in (("plain", kp), ("stagger", ks)):
                k._init_handles()
            r_p = ctas_per_sm(kp.n_regs, warps, props)
            r_s = ctas_per_sm(ks.n_regs, warps, props)
            S = sms * max(r_s, 1)
            ms = float(triton.testing.do_bench(plain, warmup=5, rep=25, return_mode="median"))
            rows.append((fam, M, N, bm, warps, kp.n_regs, kp.n_spills, r_p, "plain", "", f"{ms:.5f}"))
            say(f"{fam} {M}x{N} ({bm},{warps}) plain regs {kp.n_regs} spills {kp.n_spills} r {r_p}: {ms * 1e3:.1f} us")
            for D in DELAYS:
                ms = float(triton.testing.do_bench(lambda: stag(S, D), warmup=5, rep=25, return_mode="median"))
                rows.append((fam, M, N, bm, warps, ks.n_regs, ks.n_spills, r_s, "stagger", D, f"{ms:.5f}"))
                say(f"{fam} {M}x{N} ({bm},{warps}) stagger regs {ks.n_regs} spills {ks.n_spills} r {r_s} "
                    f"S {S} delay {D} ns: {ms * 1e3:.1f} us")
        except Exception:  # noqa: BLE001
            say(traceback.format_exc())
    with open(os.path.join(out, "stagger.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "M", "N", "BLOCK_M", "WARPS", "regs", "spills", "ctas_per_sm", "variant",
                    "delay_ns", "ms"])
        w.writerows(rows)
    say(f"done in {time.time() - t_start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "row_stagger_out")
