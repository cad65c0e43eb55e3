"""The two-round row binaries' pair cycle at two CTAs a SM, from their compiled SASS (CPU only;
docs/analysis.md 8 (ai)).

    pip install triton==3.6.0
    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/row_pair_cycles.py > pair_cycles.csv
    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/row_pair_cycles.py stagger > stagger_cycles.csv

The configurations are every non-spilling (family, N, BLOCK_M, WARPS) of the issue-15 campaigns that
the model holds at two CTAs a SM (their measured registers: 60-251) and whose row tile loads in two
dependent rounds (tfx.analysis.row_body.LOAD_ROUNDS): rmsnorm (16, 4) (16, 16) at 1024, (8, 8) (8, 16)
at 2048, (2, 8) at 8192, (1, 4) (1, 8) (1, 16) at 16384, softmax (8, 8) at 2048. Each is compiled as
measure_row_spill_sass.py builds the campaigns' binaries (Triton 3.6.0, sm_90, num_stages 1) and run
through row_sass_sim.py's `slots` simulation (session 25's, unchanged): one of the SM's four
schedulers holding WARPS / 4 warps of each of the two CTA slots, issuing the compiled SASS in order
(one instruction a cycle, the profile's measured latencies: fma 4, ex2 17, shfl_sync 24, smem_load 23,
bar_sync 20 cycles; a barrier per CTA), each LDG and STG of the row tile standing for four 512-B
requests (one a scheduler) served first come first served at one SM's DRAM share (4,238.4 / 132 =
32.109 B/ns) with the data 700 ns after service (the profile's loaded DRAM latency), rmsnorm's
weight-row loads L2 hits after 200 ns (the profile's L2 latency), a slot refilled as its CTA's warps
exit. Output: family,N,BLOCK_M,WARPS,regs,cycle_ns (the steady cycle of the two slots),
over_2d (that over 2 D, D = one CTA's X and Y bytes at the share).

`stagger`: the same for measure_row_stagger.py's kernels (the campaigns' rmsnorm behind a prologue
that later CTAs skip: a compare and a branch), (1, 4), (1, 8), (1, 16) at N = 16384: the binaries
whose measured state flipped (calibration/h200/measured/row_stagger); prints their load rounds too.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import measure_row_spill_sass as M  # noqa: E402
import row_sass_sim as S  # noqa: E402
from row_load_rounds import load_rounds  # noqa: E402

PAIRS = [("rmsnorm", 1024, 16, 4), ("rmsnorm", 1024, 16, 16), ("rmsnorm", 2048, 8, 8),
         ("rmsnorm", 2048, 8, 16), ("rmsnorm", 8192, 2, 8), ("rmsnorm", 16384, 1, 4),
         ("rmsnorm", 16384, 1, 8), ("rmsnorm", 16384, 1, 16), ("softmax", 2048, 8, 8)]


def cycle(sass, n, bm, w):
    """(steady ns of the two slots, that over 2 D)."""
    c = S.scheduler(S.decode(sass), max(w // 4, 1), 2, S.x_vectors(n, bm, w))
    return c, c / (2 * 2 * bm * n * 2 / S.B)


def stagger_sass(bm, w):
    """measure_row_stagger.py's rms kernel for sm_90 on the CPU (its source without torch)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    src = open(os.path.join(HERE, "measure_row_stagger.py")).read()
    body = src[src.index("@triton.jit"):src.index("M=N=16384")]
    path = os.path.join(M.OUT, "row_stagger_kernels.py")
    os.makedirs(M.OUT, exist_ok=True)
    open(path, "w").write("import triton,triton.language as tl\n" + body)
    sys.path.insert(0, M.OUT)
    import row_stagger_kernels as K
    names = K.rms.arg_names
    sig = dict(X='*bf16', W='*bf16', Y='*bf16', M='i32', N='i32', inv_n='fp32', eps='fp32', S='i32', DELAY='i32')
    sig = {k: sig.get(k, 'constexpr') for k in names}
    attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in ('X', 'W', 'Y', 'M', 'N')}
    k = triton.compile(ASTSource(fn=K.rms, signature=sig, constexprs=dict(BLOCK_M=bm, BLOCK_N=16384), attrs=attrs),
                       target=GPUTarget('cuda', 90, 32), options=dict(num_warps=w, num_stages=1))
    tool = os.path.join(os.path.dirname(triton.__file__), 'backends', 'nvidia', 'bin', 'cuobjdump')
    cub = os.path.join(M.OUT, f"stagger_16384_{bm}_{w}.cubin")
    open(cub, 'wb').write(k.asm['cubin'])
    regs = int(re.search(r'REG:(\d+)', subprocess.run([tool, '-res-usage', cub], capture_output=True, text=True).stdout).group(1))
    return subprocess.run([tool, '-sass', cub], capture_output=True, text=True).stdout, regs


if __name__ == "__main__":
    os.makedirs(M.OUT, exist_ok=True)
    if sys.argv[1:] == ["stagger"]:
        print("kernel,N,BLOCK_M,WARPS,regs,rounds,cycle_ns,over_2d")
        for w in (4, 8, 16):
            for kind in ("plain", "stagger"):
                if kind == "plain":
                    r = M.build(("rmsnorm", 16384, 1, w))
                    sass, regs = open(os.path.join(M.OUT, f"rmsnorm_16384_1_{w}.sass")).read(), r["regs"]
                else:
                    sass, regs = stagger_sass(1, w)
                xv = S.x_vectors(16384, 1, w)
                c, o = cycle(sass, 16384, 1, w)
                rounds = "".join(str(x) for x in load_rounds(sass, xv))
                print(f"{kind},16384,1,{w},{regs},{rounds},{c:.1f},{o:.4f}", flush=True)
    else:
        print("family,N,BLOCK_M,WARPS,regs,cycle_ns,over_2d")
        for fam, n, bm, w in PAIRS:
            r = M.build((fam, n, bm, w))
            c, o = cycle(open(os.path.join(M.OUT, f"{fam}_{n}_{bm}_{w}.sass")).read(), n, bm, w)
            print(f"{fam},{n},{bm},{w},{r['regs']},{c:.1f},{o:.4f}", flush=True)
