#!/usr/bin/env python3
"""Is rmsnorm's two-CTA state a property of its code or of its pairs' phase? A prologue sweep.

Usage (on the device machine; one call, about a minute):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_row_prologue.py OUTDIR
On the CPU (Triton 3.6.0, no GPU): registers, instructions and the prologue's IMADs (ptxas puts
the chain on the uniform datapath: K dependent UIMADs) before the first X load of every kernel:
    python3 bench/h200/measure_row_prologue.py --sass

calibration/h200/measured/row_states/s14 (docs/analysis.md 8 (s), "The stamps, measured"): the
campaign's rmsnorm body (W loaded after `tl.sum`) runs at (1, 16) and (1, 8), N = 16384, two CTAs
a SM, in the lock step (5.59 and 5.42 us a wave of two CTAs a SM), and the same body behind
row_stagger's never-taken prologue (44 instructions more before the X loads) alternates (4.31,
4.29); at (1, 4) the other way. Here every CTA runs a chain of K dependent IMADs on its program
id before its body (`mad.lo.u32 t, t, t, pm` K times; the result times a runtime zero is added
to the program id, so ptxas keeps the chain and the body is the campaign's), K = 0 (the
campaign's binary), 1, 2, 4, 8, 16, 32, 64: a delay of about 4.5 K cycles at the start of every
CTA and K instructions. If the state (the launch's time a wave of two CTAs a SM against 2 D =
4.08 us and 2 D + Z = 5.37 us) moves monotonically with K, a pre-read delay is a term a model can
take from the IR; if it flips back and forth, the state is the pairs' phase, which no model of
the IR has.

Kernels: bench/h200/measure_accuracy.py's rmsnorm_kernel with the prologue; bf16 X, W, Y; BLOCK_N
= N = 16384; (BLOCK_M, WARPS) = (1, 16), (1, 8), (1, 4); M = 132 SMs x 2 CTAs x 40 waves = 10,560
rows; num_stages 1. Each timed twice (triton.testing.do_bench medians, L2 cleared first).
Output: OUTDIR/kernels.csv (K, BLOCK_M, WARPS, N, M, regs, spills, blocks_per_sm, us_first,
us_second, ns a wave of two CTAs a SM), OUTDIR/log.txt.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_rowprologue")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

CONFIGS = [(1, 16, 16384), (1, 8, 16384), (1, 4, 16384)]
KS = [0, 1, 2, 4, 8, 16, 32, 64]
WAVES = 40


def chain_asm(k):
    """PTX of k dependent IMADs on $1 (the program id), result in $0."""
    body = " ".join("mad.lo.u32 t, t, t, $1;" for _ in range(k))
    return "{ .reg .u32 t; mov.u32 t, $1; " + body + " mov.u32 $0, t; }"


@triton.jit
def rms_prologue(X, W, Y, M, N, inv_n, eps, ZERO, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 K: tl.constexpr, ASM: tl.constexpr):
    pm = tl.program_id(0)
    if K > 0:
        c = tl.inline_asm_elementwise(ASM, "=r,r", [pm], dtype=tl.int32, is_pure=True, pack=1)
        pm = pm + c * ZERO
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * inv[:, None] * w[None, :]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


def sass_check():
    """CPU: registers, instructions and the IMADs before the first LDG of each kernel."""
    import re
    import subprocess
    import tempfile
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    names = rms_prologue.arg_names
    sig = dict(X="*bf16", W="*bf16", Y="*bf16", M="i32", N="i32", inv_n="fp32", eps="fp32", ZERO="i32")
    sig = {k: sig.get(k, "constexpr") for k in names}
    attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in ("X", "W", "Y", "M", "N")}
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    for bm, wp, n in CONFIGS:
        for k in KS:
            c = triton.compile(ASTSource(fn=rms_prologue, signature=sig, attrs=attrs, constexprs=dict(
                BLOCK_M=bm, BLOCK_N=n, K=k, ASM=chain_asm(k))),
                target=GPUTarget("cuda", 90, 32), options=dict(num_warps=wp, num_stages=1))
            with tempfile.TemporaryDirectory() as d:
                cub = os.path.join(d, "k.cubin")
                open(cub, "wb").write(c.asm["cubin"])
                usage = subprocess.run([tool, "-res-usage", cub], capture_output=True, text=True).stdout
                sass = subprocess.run([tool, "-sass", cub], capture_output=True, text=True).stdout
            ops = [m.group(1).strip() for m in (re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?);", ln)
                                                 for ln in sass.splitlines()) if m]
            first = next(i for i, o in enumerate(ops) if "LDG" in o)
            imad = sum(1 for o in ops[:first] if o.split()[0] == "UIMAD")
            regs = int(re.search(r"REG:(\d+)", usage).group(1))
            stack = int(re.search(r"STACK:(\d+)", usage).group(1))
            print(f"K={k:2d} ({bm},{wp}) N={n}: regs {regs} stack {stack} instr {len(ops)} first LDG at {first}"
                  f" UIMADs before it {imad}")


def main():
    import torch
    from common import Campaign, median_ms
    out = sys.argv[1]
    run = Campaign()
    run.open(out, "log.txt")
    log = run.log
    log(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name()}")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    f = open(os.path.join(out, "kernels.csv"), "w")
    f.write("K,BLOCK_M,WARPS,N,M,regs,spills,blocks_per_sm,us_first,us_second,ns_a_wave\n")
    for bm, wp, n in CONFIGS:
        m = sms * 2 * bm * WAVES
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        grid = (m // bm,)
        for k in KS:
            if run.elapsed() > float(os.environ.get("ROW_DEADLINE_S", "200")):
                log(f"SKIP K={k} ({bm},{wp}): deadline")
                continue
            try:
                kw = dict(BLOCK_M=bm, BLOCK_N=n, K=k, ASM=chain_asm(k), num_warps=wp, num_stages=1)
                args = (x, w, y, m, n, 1.0 / n, 1e-6, 0)
                kern = rms_prologue[grid](*args, **kw)
                torch.cuda.synchronize()
                info, err = run.resources(kern, wp)
                us = 1e3 * median_ms(lambda: rms_prologue[grid](*args, **kw), warmup=10, rep=60)
                us2 = 1e3 * median_ms(lambda: rms_prologue[grid](*args, **kw), warmup=5, rep=60)
                f.write(f"{k},{bm},{wp},{n},{m},{info.get('n_regs')},{info.get('n_spills')},"
                        f"{info.get('blocks_per_sm')},{us:.2f},{us2:.2f},{1e3 * us / WAVES:.0f}\n")
                f.flush()
                log(f"K={k} ({bm},{wp}) N={n}: regs {info.get('n_regs')} spills {info.get('n_spills')} CTAs/SM "
                    f"{info.get('blocks_per_sm')} {us:.1f} / {us2:.1f} us ({1e3 * us / WAVES:.0f} ns a wave of two"
                    f" CTAs a SM; 2 D = 4,082, 2 D + Z = 5,372)")
            except Exception as e:  # noqa: BLE001
                log(f"FAIL K={k} ({bm},{wp}): {type(e).__name__}: {str(e)[:300]}")
        del x, w, y
        torch.cuda.empty_cache()
    f.close()
    run.nvsmi_fields = "name,clocks.sm,clocks.mem,power.draw"
    run.nvsmi()
    log(f"done in {run.elapsed():.1f} s")


if __name__ == "__main__":
    if "--sass" in sys.argv:
        sass_check()
    else:
        main()
