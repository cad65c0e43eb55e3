#!/usr/bin/env python3
"""SASS of the load-trip calibration kernel's k-loop against the GEMM kernels' (issue 15,
persistent_gemm rows below the load-trip floor). Results: calibration/h200/measured/kloop_sass/.

Usage (no GPU needed; pip install triton==3.6.0, the version of the issue-15 runs, which ships
ptxas and cuobjdump for sm_90):
    python3 bench/h200/kloop_sass.py OUTDIR

`pipeline.load_trip_overhead` and `sm_load_bandwidth_per_cycle` come from bench/h200/
measure_kloop.py's kernel run as one CTA alone on the GPU (calibration/h200/measured/kloop).
Its k-loop re-derives its addresses every trip from a wrapped offset (`(k * BK) % KRES`),
where the issue-15 kernels step their pointers (`ptrs += BK * stride`) and mask K. This compiles
that kernel (copied below: its module needs a GPU to import) at the eight tiles it measured, and
bench/h200/measure_accuracy.py's persistent_kernel and bench/h200/triton_kernels.py's
matmul_kernel at the same tiles (bench/h200/persistent_sass.py's compile, 4096^3, B [K, N]),
all at 4 stages, and counts the instructions of the innermost loop holding the HGMMAs (one trip,
per thread) by opcode. No kernel is run or timed. Writes OUTDIR/kloop_sass.csv.
"""
import os
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_kloop_sass")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import persistent_sass  # noqa: E402  (compile_one, loops, tool)
from common import write_rows  # noqa: E402


@triton.jit
def kloop_kernel(a_ptr, b_ptr, c_ptr, K, KRES, a_rows_per_cta, b_cols_per_cta, lda, ldb,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # bench/h200/measure_kloop.py's kloop_kernel, unchanged
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + (pid * a_rows_per_cta + offs_m[:, None]).to(tl.int64) * lda + offs_k[None, :]
    b_base = b_ptr + offs_k[:, None].to(tl.int64) * ldb + pid * b_cols_per_cta + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = tl.multiple_of((k * BK) % KRES, BK)
        a = tl.load(a_base + kk)
        b = tl.load(b_base + kk.to(tl.int64) * ldb)
        acc = tl.dot(a, b, acc)
    offs_cm = pid * BM + offs_m
    tl.store(c_ptr + offs_cm[:, None] * BN + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


# measure_kloop.py's TILES (BM, BN, BK, WARPS)
TILES = [(128, 32, 32, 8), (128, 32, 128, 8), (64, 64, 32, 4), (64, 128, 64, 4), (16, 64, 64, 4),
         (32, 64, 128, 2), (128, 128, 64, 8), (64, 256, 32, 8)]
STAGES = 4
OPS = ["LDGSTS", "HGMMA", "IMAD", "IADD3", "UIADD3", "ISETP", "SEL", "BAR", "DEPBAR"]


def compile_kloop(bm, bn, bk, warps, stages):
    names = kloop_kernel.arg_names
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(3)}
    for n in ("K", "KRES", "a_rows_per_cta", "b_cols_per_cta", "lda", "ldb"):
        sig[n] = "i32"
        if n != "KRES":      # the run's values are multiples of 16 (16384, BM, BN, 512, N)
            attrs[(names.index(n),)] = [["tt.divisibility", 16]]
    sig = {key: sig.get(key, "constexpr") for key in names}
    k = triton.compile(ASTSource(fn=kloop_kernel, signature=sig, constexprs=dict(BM=bm, BN=bn, BK=bk),
                                 attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=stages))
    cub = os.path.join(OUT, f"kloop_{bm}x{bn}x{bk}_w{warps}_s{stages}.cubin")
    with open(cub, "wb") as f:
        f.write(k.asm["cubin"])
    sass = subprocess.run([persistent_sass.tool("cuobjdump"), "-sass", cub], capture_output=True, text=True,
                          timeout=120).stdout
    os.remove(cub)
    return sass


def trip(sass):
    """(instructions, opcode counts) of the innermost loop holding HGMMAs, or of the innermost
    loop when none does (warp-mma tiles)."""
    spans = persistent_sass.loops(sass)
    inner = next((s for s in reversed(spans) if s[2]["HGMMA"]), spans[-1])
    return inner[1] - inner[0] + 1, inner[2]


def main():
    os.makedirs(OUT, exist_ok=True)
    persistent_sass.OUT = OUT
    rows = []
    for bm, bn, bk, warps in TILES:
        for kind in ("kloop", "persistent", "gemm"):
            if kind == "kloop":
                sass = compile_kloop(bm, bn, bk, warps, STAGES)
            else:
                sass = persistent_sass.compile_one(kind, bm, bn, bk, warps, STAGES)[1]
            n, ops = trip(sass)
            row = dict(kernel=kind, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=STAGES, trip_instructions=n,
                       **{op: ops.get(op, 0) for op in OPS})
            rows.append(row)
            print(row, flush=True)
    write_rows(os.path.join(OUT, "kloop_sass.csv"), rows)


if __name__ == "__main__":
    main()
