#!/usr/bin/env python3
"""What a row kernel's second load costs, and how much the same configuration moves with its code.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_row_codegen.py OUTDIR

Two physical questions the row model (tfx.analysis.row_body) cannot answer from
calibration/h200/measured/row_phases:

1. The weight row of rmsnorm. The measured Triton rmsnorm (bench/h200/measure_accuracy.py) loads
   W after `tl.sum`, behind the reduction's barrier, so its 2 B x N of W (from L2: every CTA reads
   the same row) wait their own round trip in every CTA's chain; kernels/rmsnorm.tile loads it
   with X. Variants of one kernel, the same configuration, the same bytes:
       w_after     the measured kernel (W after the reduction)
       w_before    W loaded before X (its round trip overlaps X's)
       no_w        y = x * inv: no W at all (2 B x N less from L2 per CTA)
       w_after_ra  w_after with y = (x * w) * inv: the same instructions reassociated (how far a
                   reordering alone moves the time: the codegen spread, not a mechanism)
   and softmax (no second load; one more pass) on the same rows for reference.
2. The spread of the same configuration: each kernel is timed twice, at the start and at the end
   of the run (run-to-run), beside the reassociated variant (code-to-code).

Shape M x N = 6144 x 16384 bf16 (no shape of the issue 15 truth: those are 4096x16384, 8192x8192,
16384x2048, 4096x4096 for rmsnorm and 8192x16384, 16384x1024, 4096x8192, 4096x4096 for softmax),
BLOCK_N = N, num_stages 1, (BLOCK_M, WARPS) in (1,4) (1,8) (1,16) (2,8) (2,16) (4,16): none of them
spills at this N (calibration/h200/measured/row_phases: 62-251 registers at 4096x16384).

Writes OUTDIR/kernels.csv (family, variant, BLOCK_M, WARPS, regs, spills, smem_bytes, blocks_per_sm,
ms_first, ms_second: triton.testing.do_bench medians, L2 cleared before each timed call) and
OUTDIR/log.txt.
"""
import os
import sys
import time

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_rowcodegen")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from common import Campaign, median_ms  # noqa: E402

M, N = 6144, 16384
CONFIGS = [(1, 4), (1, 8), (1, 16), (2, 8), (2, 16), (4, 16)]
RMS_VARIANTS = {"w_after": 0, "w_before": 1, "no_w": 2, "w_after_ra": 3}
DEADLINE_S = float(os.environ.get("ROW_DEADLINE_S", "135"))


@triton.jit
def rmsnorm_variant(X, W, Y, M, N, inv_n, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    VARIANT: tl.constexpr):
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    if VARIANT == 1:
        w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
        y = x * inv[:, None] * w[None, :]
    elif VARIANT == 2:
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
        y = x * inv[:, None]
    elif VARIANT == 3:
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
        w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
        y = (x * w[None, :]) * inv[:, None]
    else:
        # bench/h200/measure_accuracy.py's rmsnorm_kernel, line for line
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
        w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
        y = x * inv[:, None] * w[None, :]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def softmax_plain(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # bench/h200/measure_accuracy.py's softmax_kernel
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 1)[:, None])
    y = e * (1.0 / tl.sum(e, 1))[:, None]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


def call(fam, variant, bm, w, X, W, Y, warm=False):
    """One launch of a job (``warm``: compile only and return the compiled kernel)."""
    grid = (triton.cdiv(M, bm),)
    kw = dict(BLOCK_M=bm, BLOCK_N=N, num_warps=w, num_stages=1)
    if fam == "rmsnorm":
        kern, args = rmsnorm_variant, (X, W, Y, M, N, 1.0 / N, 1e-6)
        kw["VARIANT"] = RMS_VARIANTS[variant]
    else:
        kern, args = softmax_plain, (X, Y, M, N)
    if warm:
        return kern.warmup(*args, **kw, grid=grid)
    return kern[grid](*args, **kw)


def _compile_worker(job):
    """Compile one job into the shared Triton cache (a spawned process: its own CUDA context;
    M and N are passed as the measured run passes them, so the specialization matches)."""
    t = time.time()
    X = torch.empty(16, 16, device="cuda", dtype=torch.bfloat16)
    W = torch.empty(16, device="cuda", dtype=torch.bfloat16)
    call(*job, X, W, torch.empty_like(X), warm=True)
    return job, time.time() - t


def precompile(run, jobs, budget_s):
    import multiprocessing as mp
    from common import compile_processes, results_in_budget
    t = time.time()
    ctx = mp.get_context("spawn")
    with ctx.Pool(compile_processes(len(jobs))) as pool:
        try:
            for _ in results_in_budget(pool, _compile_worker, jobs, budget_s, t):
                pass
            run.log(f"precompiled {len(jobs)} kernels in {time.time() - t:.1f}s")
        except Exception as e:  # noqa: BLE001
            run.log("precompile stopped:", repr(e)[:200])


def main():
    out = sys.argv[1]
    run = Campaign(global_deadline_s=DEADLINE_S,
                   nvsmi_fields="name,driver_version,clocks.current.sm,clocks.current.memory,power.draw")
    run.open(out, "log.txt")
    run.log("torch", torch.__version__, "triton", triton.__version__, "device", torch.cuda.get_device_name(0))
    run.nvsmi()
    jobs = [(fam, variant, bm, w) for bm, w in CONFIGS
            for fam, variant in [("rmsnorm", v) for v in RMS_VARIANTS] + [("softmax", "plain")]]
    precompile(run, jobs, budget_s=DEADLINE_S * 0.4)
    gen = torch.Generator(device="cuda").manual_seed(15)
    X = torch.randn(M, N, device="cuda", dtype=torch.bfloat16, generator=gen)
    W = torch.randn(N, device="cuda", dtype=torch.bfloat16, generator=gen)
    Y = torch.empty_like(X)
    table = run.csv("kernels.csv", ["family", "variant", "M", "N", "BLOCK_M", "WARPS", "regs", "spills",
                                    "smem_bytes", "blocks_per_sm", "ms_first", "ms_second", "error"])
    rows = []
    for job in jobs:
        if run.elapsed() > DEADLINE_S * 0.75:
            run.log("first pass stopped at the budget")
            break
        fam, variant, bm, w = job
        row = dict(family=fam, variant=variant, M=M, N=N, BLOCK_M=bm, WARPS=w)
        fn = (lambda job=job: call(*job, X, W, Y))
        try:
            k = call(*job, X, W, Y, warm=True)
            info, err = run.resources(k, w, smem="smem_bytes", regs="regs", spills="spills")
            row.update(info)
            if err:
                row["error"] = err
            else:
                row["ms_first"] = median_ms(fn, warmup=5, rep=25)
        except Exception as e:  # noqa: BLE001
            row["error"] = repr(e)[:200]
        rows.append((row, fn))
        run.log(fam, variant, bm, w, "regs", row.get("regs"), "spills", row.get("spills"),
                "ms", row.get("ms_first"), row.get("error", ""))
    run.nvsmi()
    # the same kernels again at the end: the run-to-run spread beside the code-to-code one
    for row, fn in rows:
        if "ms_first" in row and run.elapsed() < DEADLINE_S:
            row["ms_second"] = median_ms(fn, warmup=5, rep=25)
        table.row(**row)
        run.log(row["family"], row["variant"], row["BLOCK_M"], row["WARPS"], "second", row.get("ms_second"))
    table.close()
    run.nvsmi()
    run.log(f"done in {run.elapsed():.1f}s")
    run.close()


if __name__ == "__main__":
    main()
