#!/usr/bin/env python3
"""What decides rmsnorm's two-CTA state: per-warp clock stamps of the two CTAs of one SM.

Usage (on the device machine; one call):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_row_states.py OUTDIR
On the CPU (no GPU, no torch; Triton 3.6.0 on PYTHONPATH), the compiled resources and the SASS
landmarks of every kernel, to check the stamps before a device call:
    python3 bench/h200/measure_row_states.py --sass

The open miss (docs/analysis.md 8 (s), "rmsnorm at two CTAs a SM, still open"): the issue-15
Triton rmsnorm (bench/h200/measure_accuracy.py rmsnorm_kernel, W loaded after `tl.sum`) at two
CTAs a SM cycles either near the lock step 2 D + Z ((1, 16) and (1, 8) at N = 16384) or near the
alternation max(2 D, D + Z) ((2, 16) at 8192, (1, 4) at 16384), and row_stagger found that a
prologue the steady state never runs flips it. Here each warp records %clock (the SM's cycle
counter, one counter for both CTAs of an SM) at fixed points of the body, so the offset of the
two CTAs of one SM and each phase's wait are read off directly.

Kernels (BLOCK_N = N, num_stages 1, bf16 X, W, Y; one binary per variant and configuration):
    after     the campaign's body: x = load X; inv = rsqrt(sum(x * x) / N + eps); w = load W;
              y = x * inv * w; store Y (W after the sum)
    before    W loaded before X (row_codegen's alternating reference)
    prologue  `after` behind row_stagger's prologue at DELAY 0 (a compare and a branch that the
              CTAs past the first wave skip), which flipped the state there
    softmax   bench/h200/measure_accuracy.py's softmax on the same rows (no W; it alternates at
              (1, 16); probe 4 is on e = exp(x - max), after the first reduction)
("W in one round, loaded before the rsqrt" was written too, but ptxas compiles it to the same
SASS as `after`, and the stamped `after` issues its W loads in two rounds, 3 + 1 at (1, 16).)
Each `plain` (the body alone: its time is the state's reference) and, for one-row tiles,
`stamped`. The stamps are data-dependent: a stamp reads %clock inside an inline asm whose read
is predicated on its input's bits (setp on the value: a predicated read cannot issue before the
value arrives), on element 0 of each thread's 8-element vector (reshape + split select it: no
instructions), and only lane 0 of each warp stores it (a masked 4-byte store). The stamped
kernels are compiled with ptxas's register cap 65,536 / (2 x 32 x WARPS) so that they keep two
CTAs a SM. Probes, per warp and per vector rep (rep = one 16-byte load of each thread:
N / (8 x 32 x WARPS) reps a row):
    0 start   %clock at the start (rep 0)
    1 smid    %smid (rep 0)
    2 gstart  %globaltimer_lo at the start (rep 0; ns)
    3 x       %clock once X's vector arrived (each rep)
    4 red     %clock once x * inv exists (after the reduction's two barriers and the rsqrt; rep 0)
    5 w       %clock once W's vector arrived (each rep: the weight-load rounds)
    6 y       %clock once y's vector exists (each rep: at the stores)
Grid: 132 SMs x 2 CTAs x WAVES waves (WAVES = 40; (2, 16) at N = 8192 plain only). Files:
OUTDIR/kernels.csv (variant, stamp, config, regs, spills, blocks_per_sm, us twice:
triton.testing.do_bench medians, L2 cleared first), OUTDIR/stamps_cta.npz and stamps_raw.npz
(per stamped kernel `<variant>_1x<WARPS>_<N>.<array>`, reduce_stamps' arrays of the launch right
after the timed runs: slot = rep x WARPS + warp), OUTDIR/log.txt. What it shows:
calibration/h200/measured/row_states.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_rowstates")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# (BLOCK_M, WARPS, N): the two states' representatives (docs/analysis.md 8 (s))
CONFIGS = [(1, 16, 16384), (2, 16, 8192), (1, 4, 16384), (1, 8, 16384)]
VARIANTS = {"after": 0, "before": 2, "prologue": 3, "softmax": 4}
WAVES = 40
NPROBE = 8


@triton.jit
def _clk(v):
    # %clock once v's bits are known (the read is predicated on them)
    return tl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $1, 0x7fffffff; mov.u32 $0, 0; @p mov.u32 $0, %clock; }",
        "=r,r", [v], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _gt(v):
    return tl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $1, 0x7fffffff; mov.u32 $0, 0; @p mov.u32 $0, %globaltimer_lo; }",
        "=r,r", [v], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _smid(v):
    return tl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $1, 0x7fffffff; mov.u32 $0, 0; @p mov.u32 $0, %smid; }",
        "=r,r", [v], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _now(d):
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [d], dtype=tl.int64, is_pure=False,
                                     pack=1)


@triton.jit
def _spin(pm, S, DELAY):
    # bench/h200/measure_row_stagger.py's prologue: CTAs below S spin DELAY x pm / S ns (DELAY = 0
    # here: a compare and a branch that the CTAs past the first wave skip)
    if pm < S:
        wait = (pm.to(tl.int64) * DELAY) // S
        t0 = _now(pm)
        t = t0
        while t - t0 < wait:
            t = _now(pm + (t - t0).to(tl.int32) * 0)


@triton.jit
def _sel2(v, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # [BM, BN] -> [BM, BN // 8]: element 0 of each 8-element vector (register selection)
    a, _ = tl.split(tl.reshape(v, (BLOCK_M, BLOCK_N // 2, 2)))
    a, _ = tl.split(tl.reshape(a, (BLOCK_M, BLOCK_N // 4, 2)))
    a, _ = tl.split(tl.reshape(a, (BLOCK_M, BLOCK_N // 8, 2)))
    return a


@triton.jit
def _put(T, pm, probe, vals, ALL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
         WARPS: tl.constexpr):
    # vals [1, BN // 8] int32 (one-row tiles: X's layout puts 8 columns on a lane, 32 lanes and
    # then the warps along the row, so selected column c8 is lane c8 % 32 of warp (c8 // 32) %
    # WARPS, rep c8 // (32 x WARPS)): lane 0 of each warp stores; ALL: every rep, else rep 0
    c8 = tl.arange(0, BLOCK_N // 8)[None, :]
    keep = (c8 % 32) == 0
    if not ALL:
        keep = keep & (c8 < 32 * WARPS)
    off = (pm.to(tl.int64) * 8 + probe) * (BLOCK_N // 256) + c8 // 32
    tl.store(T + off, vals, mask=keep)


@triton.jit
def rms_states(X, W, Y, T, M, N, inv_n, eps, S, DELAY, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               WARPS: tl.constexpr, VARIANT: tl.constexpr, STAMP: tl.constexpr):
    pm = tl.program_id(0)
    if VARIANT == 3:
        _spin(pm, S, DELAY)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    if STAMP:
        tl.static_assert(BLOCK_M == 1)   # the stamps' layout (see _put)
        ix = _sel2(cols[None, :], BLOCK_M, BLOCK_N)
        _put(T, pm, 0, _clk(ix), False, BLOCK_M, BLOCK_N, WARPS)
        _put(T, pm, 1, _smid(ix), False, BLOCK_M, BLOCK_N, WARPS)
        _put(T, pm, 2, _gt(ix), False, BLOCK_M, BLOCK_N, WARPS)
    if VARIANT == 4:
        # softmax (bench/h200/measure_accuracy.py softmax_kernel): the alternating reference
        x = tl.load(X + offs, mask=mask, other=float("-inf")).to(tl.float32)
        if STAMP:
            _put(T, pm, 3, _clk(_sel2(x, BLOCK_M, BLOCK_N).to(tl.int32, bitcast=True)), True,
                 BLOCK_M, BLOCK_N, WARPS)
        e = tl.exp(x - tl.max(x, 1)[:, None])
        y = e * (1.0 / tl.sum(e, 1))[:, None]
        if STAMP:
            _put(T, pm, 4, _clk(_sel2(e, BLOCK_M, BLOCK_N).to(tl.int32, bitcast=True)), False,
                 BLOCK_M, BLOCK_N, WARPS)
            y2 = _sel2(y, BLOCK_M, BLOCK_N).to(tl.int32, bitcast=True)
            _put(T, pm, 6, _clk(y2), True, BLOCK_M, BLOCK_N, WARPS)
    else:
        if VARIANT == 2:
            w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        if STAMP:
            _put(T, pm, 3, _clk(_sel2(x, BLOCK_M, BLOCK_N).to(tl.int32, bitcast=True)), True,
                 BLOCK_M, BLOCK_N, WARPS)
        if VARIANT == 1:
            s = tl.sum(x * x, 1)
            w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
            inv = tl.rsqrt(s * inv_n + eps)
        else:
            inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
        if VARIANT == 0 or VARIANT == 3:
            w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
        xi = x * inv[:, None]
        if STAMP:
            _put(T, pm, 4, _clk(_sel2(xi, BLOCK_M, BLOCK_N).to(tl.int32, bitcast=True)), False,
                 BLOCK_M, BLOCK_N, WARPS)
            w2 = _sel2(tl.broadcast_to(w[None, :], (BLOCK_M, BLOCK_N)), BLOCK_M, BLOCK_N)
            _put(T, pm, 5, _clk(w2.to(tl.int32, bitcast=True)), True, BLOCK_M, BLOCK_N, WARPS)
        y = xi * w[None, :]
        if STAMP:
            y2 = _sel2(y, BLOCK_M, BLOCK_N).to(tl.int32, bitcast=True)
            _put(T, pm, 6, _clk(y2), True, BLOCK_M, BLOCK_N, WARPS)
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


def options(wp, st):
    """num_warps, num_stages 1 and, for the stamped kernels, ptxas's register cap that keeps the
    plain kernel's two CTAs a SM (65,536 registers / (2 x 32 x WARPS), at most 255)."""
    o = dict(num_warps=wp, num_stages=1)
    cap = 65536 // (2 * 32 * wp)
    if st and cap < 255:
        o["maxnreg"] = cap
    return o


def sass_check():
    """CPU: registers, spills and the order of the memory instructions and stamps."""
    import re
    import subprocess
    import tempfile
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    names = rms_states.arg_names
    sig = dict(X="*bf16", W="*bf16", Y="*bf16", T="*i32", M="i32", N="i32", inv_n="fp32", eps="fp32",
               S="i32", DELAY="i32")
    sig = {k: sig.get(k, "constexpr") for k in names}
    attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in ("X", "W", "Y", "T", "M", "N")}
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    only = os.environ.get("ONLY")
    for bm, wp, n in CONFIGS:
        for vname, v in VARIANTS.items():
            for st in ((0, 1) if bm == 1 else (0,)):
                if only and only != f"{vname}{st}_{bm}x{wp}":
                    continue
                k = triton.compile(ASTSource(fn=rms_states, signature=sig, attrs=attrs, constexprs=dict(
                    BLOCK_M=bm, BLOCK_N=n, WARPS=wp, VARIANT=v, STAMP=st)),
                    target=GPUTarget("cuda", 90, 32), options=options(wp, st))
                with tempfile.TemporaryDirectory() as d:
                    cub = os.path.join(d, "k.cubin")
                    open(cub, "wb").write(k.asm["cubin"])
                    usage = subprocess.run([tool, "-res-usage", cub], capture_output=True, text=True).stdout
                    sass = subprocess.run([tool, "-sass", cub], capture_output=True, text=True).stdout
                ops = []
                for line in sass.splitlines():
                    m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
                    if m:
                        ops.append(m.group(1).strip())
                regs = int(re.search(r"REG:(\d+)", usage).group(1))
                stack = int(re.search(r"STACK:(\d+)", usage).group(1))
                smem = k.metadata.shared
                marks = []
                for i, o in enumerate(ops):
                    op = re.sub(r"^@!?U?P[0-9T]+\s+", "", o).split()[0]
                    if op.split(".")[0] in ("LDG", "BAR", "MUFU", "STS", "LDS") or "CLOCK" in o or \
                            ("STG" in op and "STG.E.128" not in o and st == 0):
                        marks.append(f"{i}:{op}{'(clk)' if 'CLOCK' in o else ''}")
                ystg = [i for i, o in enumerate(ops) if "STG" in o and ".64" not in o and "STG.E " not in o]
                print(f"{vname}{st} ({bm},{wp}) N={n}: regs {regs} stack {stack} smem {smem} instr {len(ops)}"
                      f" ctas/SM(regs) {65536 // (max(regs, 1) * 32 * wp)}")
                print("   ", " ".join(marks))
                if os.environ.get("DUMP") == f"{vname}{st}_{bm}x{wp}":
                    print(sass)


RAW_SMS = 8      # SMs whose CTAs keep every stamp (stamps_raw.npz); every CTA keeps a summary


def reduce_stamps(a, wp, raw):
    """a: int32 [CTAs, 8, slots] as stored. Returns {name: array}: sm, gstart (warp 0's
    %globaltimer_lo), and the %clock stamps relative to the first CTA of the same SM (signed
    32-bit differences: one SM's counter): per CTA the min and max over warps (and reps) of
    probes start, x, red, w, y ('<probe>_min', '<probe>_max'), and for the CTAs on SMs below
    `raw` every stamp ('raw_<probe>': [CTAs, slots], rep-0 probes [CTAs, WARPS])."""
    import numpy as np
    u = a.view(np.uint32).astype(np.int64)
    sm = u[:, 1, 0]
    first = {}
    for pid in range(len(sm)):
        first.setdefault(int(sm[pid]), pid)
    base = np.array([u[first[int(s)], 0, 0] for s in sm], dtype=np.int64)
    rel = ((u - base[:, None, None] + 2 ** 31) % 2 ** 32) - 2 ** 31
    out = dict(sm=sm.astype(np.int16), gstart=u[:, 2, 0].astype(np.uint32))
    keep = sm < raw
    out["raw_pid"] = np.nonzero(keep)[0].astype(np.int32)
    for name, p, allreps in (("start", 0, False), ("x", 3, True), ("red", 4, False), ("w", 5, True),
                             ("y", 6, True)):
        v = rel[:, p, :] if allreps else rel[:, p, :wp]
        if not v.any():
            continue
        out[name + "_min"] = v.min(axis=1).astype(np.int32)
        out[name + "_max"] = v.max(axis=1).astype(np.int32)
        out["raw_" + name] = v[keep].astype(np.int32)
    return out


def main():
    import numpy as np
    import torch
    from common import Campaign, median_ms
    out = sys.argv[1]
    run = Campaign()
    run.open(out, "log.txt")
    log = run.log
    log(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name()}")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    summary, raw = {}, {}
    rows_csv = open(os.path.join(out, "kernels.csv"), "w")
    rows_csv.write("variant,stamp,BLOCK_M,WARPS,N,M,regs,spills,blocks_per_sm,us_first,us_second\n")
    for bm, wp, n in CONFIGS:
        m = sms * 2 * bm * WAVES
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        grid = (m // bm,)
        t = torch.zeros(grid[0] * NPROBE * bm * (n // 256), device="cuda", dtype=torch.int32)
        for vname, v in VARIANTS.items():
            if vname == "softmax" and wp < 8:
                continue
            for st in ((0, 1) if bm == 1 else (0,)):
                if run.elapsed() > float(os.environ.get("ROW_DEADLINE_S", "230")):
                    log(f"SKIP {vname} {st} ({bm},{wp}) {n}: deadline")
                    continue
                try:
                    kw = dict(BLOCK_M=bm, BLOCK_N=n, WARPS=wp, VARIANT=v, STAMP=st, **options(wp, st))
                    args = (x, w, y, t, m, n, 1.0 / n, 1e-6, sms * 2, 0)
                    k = rms_states[grid](*args, **kw)
                    torch.cuda.synchronize()
                    info, err = run.resources(k, wp)
                    us = 1e3 * median_ms(lambda: rms_states[grid](*args, **kw), warmup=10, rep=60)
                    us2 = 1e3 * median_ms(lambda: rms_states[grid](*args, **kw), warmup=5, rep=60)
                    rows_csv.write(f"{vname},{st},{bm},{wp},{n},{m},{info.get('n_regs')},{info.get('n_spills')},"
                                   f"{info.get('blocks_per_sm')},{us:.2f},{us2:.2f}\n")
                    rows_csv.flush()
                    log(f"{vname} stamp={st} ({bm},{wp}) N={n} M={m}: regs {info.get('n_regs')} spills "
                        f"{info.get('n_spills')} CTAs/SM {info.get('blocks_per_sm')} {us:.1f} / {us2:.1f} us "
                        f"(a wave of two CTAs a SM: {us / WAVES:.3f} us)")
                    if st:
                        t.zero_()
                        torch.cuda.synchronize()
                        rms_states[grid](*args, **kw)
                        torch.cuda.synchronize()
                        a = t.view(grid[0], NPROBE, n // 256).cpu().numpy()
                        r = reduce_stamps(a, wp, RAW_SMS)
                        key = f"{vname}_{bm}x{wp}_{n}"
                        for name, arr in r.items():
                            (raw if name.startswith("raw_") else summary)[f"{key}.{name}"] = arr
                        cyc = (r["y_max"] - r["start_min"]).astype(np.float64)
                        log(f"   stamps: CTA start..last y median {np.median(cyc):.0f} clocks; x-start "
                            f"{np.median(r['x_max'] - r['start_min']):.0f}, red-start "
                            f"{np.median(r['red_max'] - r['start_min']):.0f}")
                except Exception as e:
                    log(f"FAIL {vname} {st} ({bm},{wp}) {n}: {type(e).__name__}: {str(e)[:300]}")
        del x, w, y, t
        torch.cuda.empty_cache()
    rows_csv.close()
    np.savez_compressed(os.path.join(out, "stamps_cta.npz"), **summary)
    np.savez_compressed(os.path.join(out, "stamps_raw.npz"), **raw)
    run.nvsmi_fields = "name,clocks.sm,clocks.mem,power.draw"
    run.nvsmi()
    log(f"done in {run.elapsed():.1f} s")


if __name__ == "__main__":
    if "--sass" in sys.argv:
        sass_check()
    else:
        main()
