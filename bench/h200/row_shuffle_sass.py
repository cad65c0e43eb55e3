#!/usr/bin/env python3
"""The layout and the shuffles of the campaign's softmax, compiled on the CPU (Triton 3.6.0, sm_90;
no GPU): docs/analysis.md 8 (t), row_body.shuffle_issue_ns.

    python3 bench/h200/row_shuffle_sass.py [BLOCK_M,BLOCK_N,WARPS ...]

For each configuration (default: the ones 8 (t) cites) prints the TTGIR `#blocked` layout of the
loaded tile (sizePerThread, warpsPerCTA: Triton's coalescing pass) and the SASS counts of SHFL,
BAR, STS, LDS a thread. The kernel is bench/h200/triton_kernels.py's softmax_kernel (the one
bench/h200/measure_accuracy.py times)."""
import collections
import os
import re
import subprocess
import sys
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton_kernels import softmax_kernel  # noqa: E402  (the campaigns' kernel, bench/h200/measure_accuracy.py)

DEFAULT = ["8,4096,16", "4,8192,16", "2,16384,16", "16,2048,16", "1,1024,16"]


def main():
    sig = dict(X="*bf16", Y="*bf16", M="i32", N="i32", BLOCK_M="constexpr", BLOCK_N="constexpr")
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (3,): [["tt.divisibility", 16]]}
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    for cfg in sys.argv[1:] or DEFAULT:
        bm, bn, w = map(int, cfg.split(","))
        k = triton.compile(ASTSource(fn=softmax_kernel, signature=sig, attrs=attrs,
                                     constexprs=dict(BLOCK_M=bm, BLOCK_N=bn)),
                           target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=1))
        with tempfile.TemporaryDirectory() as d:
            cub = os.path.join(d, "k.cubin")
            open(cub, "wb").write(k.asm["cubin"])
            sass = subprocess.run([tool, "-sass", cub], capture_output=True, text=True).stdout
        ops = [m.group(1) for m in (re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?(\S+)", ln)
                                    for ln in sass.splitlines()) if m]
        n = collections.Counter(o.split(".")[0] for o in ops)
        lay = re.search(r"sizePerThread = \[[^\]]*\], threadsPerWarp = \[[^\]]*\], warpsPerCTA = \[[^\]]*\]",
                        k.asm["ttgir"])
        print(f"[{bm}, {bn}] on {w} warps: {lay.group(0) if lay else '?'}; SHFL {n['SHFL']} BAR {n['BAR']} "
              f"STS {n['STS']} LDS {n['LDS']}")


if __name__ == "__main__":
    main()
