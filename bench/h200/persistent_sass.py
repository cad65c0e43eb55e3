#!/usr/bin/env python3
"""SASS of the persistent GEMM's k-loop against the one-tile-per-CTA GEMM's (issue 15, persistent_gemm
BM=BN=BK=128 at 3 stages, rows 17-21% too fast). Results: calibration/h200/measured/persistent_sass/.

Usage (no GPU needed; pip install triton==3.6.0, the version of the issue-15 runs, which ships
ptxas and cuobjdump for sm_90):
    python3 bench/h200/persistent_sass.py OUTDIR

Compiles bench/h200/triton_kernels.py's persistent_kernel (the one bench/h200/measure_accuracy.py
times) and its matmul_kernel at 4096^3, B [K, N], with
the JIT's specialization given by hand as bench/h200/measure_spill_sass.py does (pointers and
multiples of 16: tt.divisibility 16; unit strides: the constant 1). No kernel is run or timed.
For each kernel it prints cuobjdump -res-usage's REG and STACK, Triton's shared bytes, and the
opcode counts of every loop (a backward branch's span): the innermost holds the HGMMAs (one trip
= one BK-deep k-tile), the outer one of the persistent kernel is its tile walk. Writes
persistent_sass.csv and each kernel's SASS (*.sass) under OUTDIR.
"""
import collections
import os
import re
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_persistent_sass")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from common import launch_signature, write_rows  # noqa: E402
from triton_kernels import matmul_kernel, persistent_kernel  # noqa: E402


# (kernel, BM, BN, BK, WARPS, STAGES, measured regs of issue15/run*/: persistent_gemm.csv or gemm.csv)
CONFIGS = [
    ("persistent", 128, 128, 128, 4, 3, 255),
    ("persistent", 128, 128, 128, 8, 3, 162),
    ("gemm", 128, 128, 128, 4, 3, 234),
    ("persistent", 64, 128, 128, 4, 3, 191),
    ("persistent", 128, 128, 64, 4, 4, 217),
]
OPS = ["LDGSTS", "HGMMA", "BAR", "DEPBAR", "STS", "LDS", "STG", "F2FP"]


def tool(name):
    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
    return path if os.path.exists(path) else name


def compile_one(kind, bm, bn, bk, warps, stages, M=4096, N=4096, K=4096):
    fn = persistent_kernel if kind == "persistent" else matmul_kernel
    ints = dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1)
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    consts.update(NUM_SMS=78) if kind == "persistent" else consts.update(GROUP_M=8)
    sig, consts, attrs = launch_signature(fn, {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16"}, ints, consts)
    k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=stages))
    name = f"{kind}_{bm}x{bn}x{bk}_w{warps}_s{stages}"
    cub = os.path.join(OUT, name + ".cubin")
    with open(cub, "wb") as f:
        f.write(k.asm["cubin"])
    sass = subprocess.run([tool("cuobjdump"), "-sass", cub], capture_output=True, text=True, timeout=120).stdout
    with open(os.path.join(OUT, name + ".sass"), "w") as f:
        f.write(sass)
    usage = subprocess.run([tool("cuobjdump"), "-res-usage", cub], capture_output=True, text=True, timeout=60).stdout
    os.remove(cub)
    regs = int(re.search(r"REG:(\d+)", usage).group(1))
    stack = int(re.search(r"STACK:(\d+)", usage).group(1))
    return name, sass, regs, stack, k.metadata.shared


def loops(sass):
    """(start, end, opcode counts) of every backward branch's span, outermost first."""
    ins = []
    for line in sass.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2)))
    index = {a: i for i, (a, _) in enumerate(ins)}
    spans = []
    for i, (a, text) in enumerate(ins):
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < a and int(m.group(1), 16) in index:
            s = index[int(m.group(1), 16)]
            ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0].split(".")[0]
                                      for _, t in ins[s:i + 1])
            spans.append((s, i, ops))
    return sorted(spans, key=lambda x: x[0] - x[1])


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    for kind, bm, bn, bk, warps, stages, regs_measured in CONFIGS:
        name, sass, regs, stack, shared = compile_one(kind, bm, bn, bk, warps, stages)
        spans = loops(sass)
        inner = next(s for s in reversed(spans) if s[2]["HGMMA"])
        outer = spans[0] if kind == "persistent" and spans[0] is not inner else None
        row = dict(kernel=name, regs=regs, regs_measured=regs_measured, stack=stack, shared=shared,
                   kloop_instructions=inner[1] - inner[0] + 1,
                   **{f"kloop_{op}": inner[2].get(op, 0) for op in OPS},
                   tile_loop_instructions=(outer[1] - outer[0] + 1) if outer else "",
                   **{f"tile_loop_{op}": (outer[2].get(op, 0) if outer else "") for op in OPS})
        rows.append(row)
        print(row, flush=True)
    write_rows(os.path.join(OUT, "persistent_sass.csv"), rows)


if __name__ == "__main__":
    main()
