"""Where the compiler puts a row kernel's memory instructions: the issue-15 Triton rmsnorm
(bench/h200/measure_accuracy.py) and its `stamped` variant (bench/h200/measure_row_phases.py:
the same body plus scalar %globaltimer/%clock64 stamps), compiled for sm_90 on the CPU with
Triton 3.6.0. No kernel is run.

    pip install triton==3.6.0   # in a venv; no GPU and no torch needed
    python3 bench/h200/row_schedule_sass.py 16384,1,8 16384,2,16 ... > rows.csv

Per (N, BLOCK_M, WARPS, variant) one CSV row: registers and spilled words (cuobjdump
-res-usage REG, STACK / 4), SASS instructions, and the instruction index (0-based, in program
order; the kernels are loop-free) of the first and last X load (LDG before the first SHFL), the
two reduction barriers (BAR), the rsqrt (first MUFU), the first and last weight-row load (LDG
after the second BAR) and the first and last store (STG of Y: as many as X loads, in X's layout;
the stamped variant's stamp stores follow), with the weight-row loads issued before the rsqrt.
calibration/h200/measured/row_schedule holds its output and what it shows."""
import csv
import os
import re
import subprocess
import sys
import tempfile
from multiprocessing import Pool


def _kernels():
    import triton
    import triton.language as tl

    from clock_stamps import clock64 as _clock, globaltimer as _timer, put_slot as _put, smid as _smid
    from triton_kernels import rmsnorm_kernel   # the campaigns' kernel (bench/h200/measure_accuracy.py)

    @triton.jit
    def rmsnorm_stamped(X, W, Y, T, M, N, inv_n, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        pm = tl.program_id(0)
        rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
        t_start = _timer(rows)
        c_start = _clock(rows)
        sm = _smid(rows)
        cols = tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None].to(tl.int64) * N + cols[None, :]
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
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

    return {"plain": rmsnorm_kernel, "stamped": rmsnorm_stamped}


COLUMNS = ["N", "BLOCK_M", "WARPS", "variant", "regs", "spills", "instructions", "x_ldg_first",
           "x_ldg_last", "bar_first", "bar_second", "mufu", "w_ldg_first", "w_ldg_last",
           "w_ldg_before_mufu", "w_ldg", "stg_first", "stg_last", "stg"]


def opcodes(sass):
    """The SASS opcodes in program order (predicate guards dropped, modifiers kept)."""
    out = []
    for line in sass.splitlines():
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*)", line)
        if not m:
            continue
        text = re.sub(r"^@!?U?P[0-9T]+\s+", "", m.group(1).strip())
        if text:
            out.append(text.split()[0])
    return out


def positions(ops, bm):
    """The schedule's landmarks (see the module docstring)."""
    def idx(prefix):
        return [i for i, o in enumerate(ops) if o.split(".")[0] == prefix]
    ldg, stg, bar, mufu, shfl = idx("LDG"), idx("STG"), idx("BAR"), idx("MUFU"), idx("SHFL")
    x_ldg = [i for i in ldg if i < shfl[0]]
    w_ldg = [i for i in ldg if i > bar[1]]
    y_stg = stg[:len(x_ldg)]      # Y is stored in X's layout: one STG per X load; the stamps follow
    return dict(instructions=len(ops), x_ldg_first=x_ldg[0], x_ldg_last=x_ldg[-1], bar_first=bar[0],
                bar_second=bar[1], mufu=mufu[0], w_ldg_first=w_ldg[0] if w_ldg else "",
                w_ldg_last=w_ldg[-1] if w_ldg else "", w_ldg_before_mufu=sum(i < mufu[0] for i in w_ldg),
                w_ldg=len(w_ldg), stg_first=y_stg[0], stg_last=y_stg[-1], stg=len(y_stg))


def build(job):
    N, bm, w, variant = job
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    kern = _kernels()[variant]
    names = kern.arg_names
    sig = dict(X="*bf16", W="*bf16", Y="*bf16", T="*i64", M="i32", N="i32", inv_n="fp32", eps="fp32")
    sig = {k: sig.get(k, "constexpr") for k in names}
    attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in ("X", "W", "Y", "T", "M", "N") if k in names}
    k = triton.compile(ASTSource(fn=kern, signature=sig, constexprs=dict(BLOCK_M=bm, BLOCK_N=N), attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=1))
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    with tempfile.TemporaryDirectory() as d:
        cub = os.path.join(d, "k.cubin")
        open(cub, "wb").write(k.asm["cubin"])
        usage = subprocess.run([tool, "-res-usage", cub], capture_output=True, text=True).stdout
        sass = subprocess.run([tool, "-sass", cub], capture_output=True, text=True).stdout
    row = dict(N=N, BLOCK_M=bm, WARPS=w, variant=variant,
               regs=int(re.search(r"REG:(\d+)", usage).group(1)),
               spills=int(re.search(r"STACK:(\d+)", usage).group(1)) // 4)
    row.update(positions(opcodes(sass), bm))
    return row


if __name__ == "__main__":
    jobs = [tuple(int(x) for x in a.split(",")) + (v,) for a in sys.argv[1:] for v in ("plain", "stamped")]
    out = csv.DictWriter(sys.stdout, COLUMNS)
    out.writeheader()
    with Pool(2) as p:
        for r in p.imap(build, jobs):
            out.writerow(r)
            sys.stdout.flush()
