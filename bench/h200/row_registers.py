#!/usr/bin/env python3
"""What a row kernel keeps in registers besides its row (no GPU: compiled on the CPU).

The register estimate of a loop-free row body (tfx.analysis.register_estimate, docs/analysis.md
section 6) counts the tiles held whole (tfx.analysis.memory.row_held_bytes: the f32 row used again
after its reduction, the loaded weight row) plus a base for everything else: the rows' addresses
and masks, the reductions' partial values, the program and thread indices. This measures that base
where the row is negligible: rmsnorm and softmax as the issue-15 campaigns compile them
(bench/h200/triton_kernels.py rmsnorm_kernel / softmax_kernel, Triton 3.6.0, sm_90, bf16, BLOCK_N =
N) at rows of 1-4 f32 values a thread (BLOCK_M x N / threads), where REG - the held values is the
base, and at larger rows for the held tiles' comparison. Reads cuobjdump's REG and the spill
stores (STL) of each binary. Writes OUTDIR/row_registers.csv.

    python3 bench/h200/row_registers.py OUTDIR
"""
import os
import re
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_row_registers")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from common import launch_signature, write_rows  # noqa: E402
from triton_kernels import rmsnorm_kernel, softmax_kernel  # noqa: E402

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
# (BLOCK_M, N, WARPS): rows of 1-4 values a thread (the base), then 8-128 (the held tiles)
CONFIGS = [(1, 1024, 16), (1, 2048, 16), (2, 1024, 16), (4, 1024, 16), (1, 1024, 8), (1, 2048, 8),
           (2, 1024, 8), (1, 1024, 4), (1, 4096, 16), (2, 2048, 16), (1, 4096, 8), (4, 2048, 16),
           (1, 8192, 16), (1, 4096, 4), (8, 1024, 16), (2, 4096, 8), (1, 8192, 4), (4, 4096, 4),
           (1, 16384, 4), (8, 4096, 8), (1, 16384, 2), (4, 8192, 4)]


def compile_one(fam, bm, n, w, M=65536):
    fn = rmsnorm_kernel if fam == "rmsnorm" else softmax_kernel
    ptrs = {"X": "*bf16", "Y": "*bf16"} | ({"W": "*bf16"} if fam == "rmsnorm" else {})
    sig, consts, attrs = launch_signature(fn, ptrs, dict(M=M, N=n), dict(BLOCK_M=bm, BLOCK_N=n))
    if fam == "rmsnorm":
        sig["inv_n"], sig["eps"] = "fp32", "fp32"
    k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=1))
    cub = os.path.join(OUT, f"{fam}_{bm}x{n}_w{w}.cubin")
    with open(cub, "wb") as f:
        f.write(k.asm["cubin"])
    usage = subprocess.run([f"{BIN}/cuobjdump", "-res-usage", cub], capture_output=True, text=True).stdout
    sass = subprocess.run([f"{BIN}/cuobjdump", "-sass", cub], capture_output=True, text=True).stdout
    os.remove(cub)
    return int(re.search(r"REG:(\d+)", usage).group(1)), len(re.findall(r"\bSTL\b", sass))


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    for fam in ("rmsnorm", "softmax"):
        for bm, n, w in CONFIGS:
            regs, stl = compile_one(fam, bm, n, w)
            row_values = bm * n // (32 * w)          # f32 values of the row a thread holds
            weight = n * 2 // (4 * 32 * w) if fam == "rmsnorm" else 0   # the weight row, bf16, spread
            rows.append(dict(family=fam, BLOCK_M=bm, N=n, WARPS=w, regs=regs, stl=stl, row_values=row_values,
                             weight_registers=weight, base=regs - row_values - weight))
            print(rows[-1], flush=True)
    write_rows(os.path.join(OUT, "row_registers.csv"), rows)


if __name__ == "__main__":
    main()
