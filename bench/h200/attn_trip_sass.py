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
import collections
import os
import re
import subprocess
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
from measure_attn_trip_s13 import attn_trip_stamped  # noqa: E402

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
# the pipe of each opcode (its first dot-separated part), per the Kernel Profiling Guide's pipeline list
PIPE = {"FFMA": "fma", "FMUL": "fma", "FADD": "fma", "IMAD": "fma", "IMUL": "fma", "FSWZADD": "fma",
        "HFMA2": "fp16", "HADD2": "fp16", "HMUL2": "fp16",
        "FMNMX": "alu", "FSEL": "alu", "FSETP": "alu", "ISETP": "alu", "IADD3": "alu", "LOP3": "alu",
        "SHF": "alu", "LEA": "alu", "SEL": "alu", "MOV": "alu", "PRMT": "alu", "F2FP": "alu", "PLOP3": "alu",
        "IABS": "alu", "IMNMX": "alu", "FCHK": "alu", "VIADD": "alu", "P2R": "alu", "R2P": "alu",
        "MUFU": "xu", "F2I": "xu", "I2F": "xu", "F2F": "xu", "FRND": "xu", "POPC": "xu", "FLO": "xu", "BREV": "xu",
        "SHFL": "lsu", "LDS": "lsu", "STS": "lsu", "LDSM": "lsu", "LDG": "lsu", "STG": "lsu", "LDGSTS": "lsu",
        "LDL": "lsu", "STL": "lsu", "LDGDEPBAR": "lsu", "S2R": "lsu",
        "BAR": "cbu", "BRA": "cbu", "BSSY": "cbu", "BSYNC": "cbu", "WARPSYNC": "cbu", "EXIT": "cbu",
        "DEPBAR": "cbu", "SYNCS": "lsu", "NOP": "none",
        "HGMMA": "tensor", "WARPGROUP": "tensor", "S2UR": "uniform", "R2UR": "uniform"}


def pipe_of(op):
    head = op.split(".")[0]
    if head in PIPE:
        return PIPE[head]
    if head.startswith("U"):
        return "uniform"
    return "other"


def parse(sass):
    """[(address, opcode, text)] of the first kernel in cuobjdump -sass output."""
    ins = []
    for ln in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)(.*?);", ln)
        if m:
            ins.append((int(m.group(1), 16), m.group(3), ln.strip()))
    return ins


def trip_loop(ins):
    """The body (target .. branch) of the backward BRA whose body holds the most HGMMAs."""
    best = None
    for i, (addr, op, text) in enumerate(ins):
        if op.startswith("BRA"):
            m = re.search(r"0x([0-9a-f]+)", text.split("BRA", 1)[1])
            if not m:
                continue
            target = int(m.group(1), 16)
            if target < addr:
                body = [x for x in ins if target <= x[0] <= addr]
                n = sum(1 for x in body if x[1].startswith("HGMMA"))
                if n and (best is None or n > best[0]):
                    best = (n, body)
    return best[1] if best else []


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
    cub = os.path.join(OUT, f"{name}.cubin")
    open(cub, "wb").write(k.asm["cubin"])
    sass = subprocess.run([f"{BIN}/cuobjdump", "-sass", cub], capture_output=True, text=True).stdout
    open(os.path.join(OUT, f"{name}.sass"), "w").write(sass)
    usage = subprocess.run([f"{BIN}/cuobjdump", "-res-usage", cub], capture_output=True, text=True).stdout
    regs = int(re.search(r"REG:(\d+)", usage).group(1))
    body = trip_loop(parse(sass))
    ops = collections.Counter(op for _, op, _ in body)
    pipes = collections.Counter()
    for op, n in ops.items():
        pipes[pipe_of(op)] += n
    with open(os.path.join(OUT, f"loop_{name}.txt"), "w") as f:
        f.write(f"{name}: {len(body)} instructions a warp a trip, registers {regs}\n")
        for p, n in sorted(pipes.items(), key=lambda x: -x[1]):
            f.write(f"pipe {p:8s} {n}\n")
        for op, n in sorted(ops.items(), key=lambda x: -x[1]):
            f.write(f"  {op:28s} {n:5d} {pipe_of(op)}\n")
        f.write("\n".join(t for _, _, t in body) + "\n")
    print(name, "regs", regs, "loop", len(body), "|", " ".join(f"{p}={n}" for p, n in sorted(pipes.items())),
          flush=True)


os.makedirs(OUT, exist_ok=True)
for spec in SPECS:
    compile_one(*(int(x) for x in spec.split(",")))
