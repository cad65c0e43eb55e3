#!/usr/bin/env python3
"""The loop body of measure_attn_trip_s13.py's attn_trip_stamped, compiled on the CPU (no GPU), by opcode.

Compiles attn_trip_stamped for sm_90a with Triton 3.6.0 (the device's version) as its launches specialise it
(pointers 16-byte aligned, SKV i32 divisible by 16, HEADS and ONLY_SM not specialised), then counts the
SASS instructions of the trip loop (the backward branch whose body holds the HGMMAs) by opcode and by the
pipe NVIDIA's Nsight Compute Kernel Profiling Guide names for it ("Pipelines": fma = FP32 FADD/FMUL/FFMA and
IMAD; alu = integer, logic, compare, min/max, FP32 -> 16-bit conversion; xu = MUFU transcendentals and other
conversions; uniform = the U* datapath; lsu/adu/cbu; tensor = HGMMA). What the TRIP_NCU=1 mode of
measure_attn_trip_s13.py measures per warp a trip is these counts (one SASS instruction = one warp instruction).

    PYTHONPATH=/tmp/sm13_triton python3 bench/h200/attn_trip_sass.py OUTDIR 64,64,32,4,3 64,64,64,4,3 ...

Each spec: D, BLOCK_M, BLOCK_N, WARPS, STAGES. Writes <name>.sass and loop_<name>.txt under OUTDIR and
prints one line a kernel. No kernel is run.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_attn_trip_sass")
OUT = sys.argv[1]
SPECS = sys.argv[2:]
sys.argv = sys.argv[:1]   # measure_attn_trip_s13 reads sys.argv[1] as its own OUTDIR at import
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from common import launch_signature  # noqa: E402
from sass_loops import parse, sass_of, trip_loop, write_loop  # noqa: E402
from measure_attn_trip_s13 import attn_trip_stamped  # noqa: E402


def compile_one(D, bm, bn, w, st):
    ptrs = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "O": "*bf16", "REC": "*i64"}
    sig, consts, attrs = launch_signature(attn_trip_stamped, ptrs, {"SKV": 2048},
                                          dict(D=D, BLOCK_M=bm, BLOCK_N=bn))
    sig["qk_scale"] = "fp32"
    sig["HEADS"] = "i32"
    sig["ONLY_SM"] = "i32"
    k = triton.compile(ASTSource(fn=attn_trip_stamped, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))
    name = f"trip_d{D}_{bm}x{bn}_w{w}_s{st}"
    sass, regs = sass_of(k, OUT, name)
    body = trip_loop(parse(sass))
    _, pipes = write_loop(os.path.join(OUT, f"loop_{name}.txt"), name, body, regs)
    print(name, "regs", regs, "loop", len(body), "|", " ".join(f"{p}={n}" for p, n in sorted(pipes.items())),
          flush=True)


os.makedirs(OUT, exist_ok=True)
for spec in SPECS:
    compile_one(*(int(x) for x in spec.split(",")))
