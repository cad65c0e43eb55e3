#!/usr/bin/env python3
"""Registers Triton 3.6.0 compiles the flash forward to, causal beside full, over a grid of tiles and stages (compiled
on the CPU for sm_90, no GPU; session 59).

Why: priced with estimated resources (`bench/accuracy.py --measured-only --estimated-regs`) the causal campaigns miss
more Spearman clauses than with the compiled counts (6 against 1), and the compiled counts show why: at BLOCK_N 128 and
3 stages or more the causal kernel compiles 245-255 registers where the full one compiles 145-207 (tfx's estimate is
the same for both). What the pipeliner carries across stages in the causal diagonal loop is only the trip's i32
key offset (1-3 copies), so the growth is ptxas' allocation of the two pipelined loops, its cause not found. A grid for the model that would
price it:

    PYTHONPATH=<triton 3.6.0 site> python3 bench/h200/attn_regs_compiled.py OUT.csv

Columns: D, BLOCK_M, BLOCK_N, WARPS, STAGES, full_regs, causal_regs (cuobjdump -res-usage REG).
"""
import csv
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_attn_sass")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton_kernels import flash_fwd_kernel  # noqa: E402

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")


def compiled_regs(D, bm, bn, w, st, causal, scratch):
    names = flash_fwd_kernel.arg_names
    sig = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "O": "*bf16", "LSE": "*fp32", "qk_scale": "fp32", "S": "i32"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(5)}
    attrs[(names.index("S"),)] = [["tt.divisibility", 16]]
    sig = {k: sig.get(k, "constexpr") for k in names}
    k = triton.compile(ASTSource(fn=flash_fwd_kernel, signature=sig,
                                 constexprs=dict(D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal), attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))
    with open(scratch, "wb") as f:
        f.write(k.asm["cubin"])
    usage = subprocess.run([f"{BIN}/cuobjdump", "-res-usage", scratch], capture_output=True, text=True).stdout
    return int(re.search(r"REG:(\d+)", usage).group(1))


def main():
    out = sys.argv[1]
    scratch = out + ".cubin"
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "full_regs", "causal_regs"])
        for D in (64, 128):
            for bm in (64, 128):
                for bn in (32, 64, 128):
                    for warps in (4, 8):
                        for st in (1, 2, 3, 4):
                            row = [D, bm, bn, warps, st] + [compiled_regs(D, bm, bn, warps, st, c, scratch) for c in (0, 1)]
                            w.writerow(row)
                            print(*row, flush=True)
    os.remove(scratch)


if __name__ == "__main__":
    main()
