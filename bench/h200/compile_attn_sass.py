#!/usr/bin/env python3
"""Which issue-15 flash-attention configurations ptxas serializes (compiled on the CPU, no GPU).

Compiles bench/h200/triton_kernels.py's flash_fwd_kernel (the kernel of the issue-15
attention rows, as bench/h200/measure_accuracy.py launches it) for sm_90a with Triton's own
ptxas (pip install triton==3.6.0, the version of the runs), then for each configuration prints
cuobjdump's registers and spilled words, the SASS's HGMMA, WARPGROUP.DEPBAR and
WARPGROUP.ARRIVE counts (a serialized kernel has one DEPBAR per HGMMA) and ptxas -v's
"Potential Performance Loss" line (C7511 / C7512) for the same PTX.

    python3 bench/h200/compile_attn_sass.py OUTDIR c,128,128,128,4,3 f,64,128,128,4,2 ...

Each spec: c (causal) or f (full), D, BLOCK_M, BLOCK_N, WARPS, STAGES. Writes each kernel's
.cubin, .ptx, .ttgir and .sass under OUTDIR. No kernel is run.
"""
import os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_attn_sass")
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton_kernels import flash_fwd_kernel
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")

def compile_one(S, D, bm, bn, w, st, causal):
    names = flash_fwd_kernel.arg_names
    sig = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "O": "*bf16", "LSE": "*fp32", "qk_scale": "fp32", "S": "i32"}
    consts = dict(D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal)
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(5)}
    attrs[(names.index("S"),)] = [["tt.divisibility", 16]]
    sig = {k: sig.get(k, "constexpr") for k in names}
    k = triton.compile(ASTSource(fn=flash_fwd_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))
    name = f"{'c' if causal else 'f'}_d{D}_{bm}x{bn}_w{w}_s{st}"
    cub = f"{OUT}/{name}.cubin"
    open(cub, "wb").write(k.asm["cubin"])
    open(f"{OUT}/{name}.ptx", "w").write(k.asm["ptx"])
    open(f"{OUT}/{name}.ttgir", "w").write(k.asm["ttgir"])
    sass = subprocess.run([f"{BIN}/cuobjdump", "-sass", cub], capture_output=True, text=True).stdout
    open(f"{OUT}/{name}.sass", "w").write(sass)
    usage = subprocess.run([f"{BIN}/cuobjdump", "-res-usage", cub], capture_output=True, text=True).stdout
    regs = int(re.search(r"REG:(\d+)", usage).group(1)); stack = int(re.search(r"STACK:(\d+)", usage).group(1))
    pv = subprocess.run([f"{BIN}/ptxas", "-v", "-arch=sm_90a", f"{OUT}/{name}.ptx", "-o", "/dev/null"], capture_output=True, text=True)
    warn = [l for l in (pv.stdout + pv.stderr).splitlines() if "erial" in l or "arning" in l]
    nw = sass.count("HGMMA"); ndep = sass.count("WARPGROUP.DEPBAR"); narr = sass.count("WARPGROUP.ARRIVE")
    print(name, "regs", regs, "spills", stack // 4, "HGMMA", nw, "DEPBAR", ndep, "ARRIVE", narr, "|", " / ".join(warn)[:300], flush=True)

for spec in sys.argv[2:]:
    c, D, bm, bn, w, st = spec.split(",")
    compile_one(4096, int(D), int(bm), int(bn), int(w), int(st), c == "c")
