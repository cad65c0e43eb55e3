"""A compiled kernel's SASS loop by opcode and by pipe, on the CPU (no GPU): what attn_trip_sass.py and
wq_loop_sass.py count.

``parse`` reads ``cuobjdump -sass`` output; ``trip_loop`` finds the loop of a k-loop kernel (the backward
branch whose body holds the most mma instructions); ``pipe_of`` names the pipe NVIDIA's Nsight Compute
Kernel Profiling Guide ("Pipelines") gives an opcode: fma = FP32 FADD/FMUL/FFMA and IMAD; alu = integer,
logic, compare, min/max, FP32 -> 16-bit conversion (F2FP); xu = MUFU transcendentals and the other
conversions (I2F, F2F, F2I); uniform = the U* datapath; lsu / cbu; tensor = HGMMA / HMMA. One SASS
instruction is one warp instruction.
"""
import collections
import os
import re
import subprocess

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
        "HGMMA": "tensor", "HMMA": "tensor", "WARPGROUP": "tensor", "S2UR": "uniform", "R2UR": "uniform"}


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


def trip_loop(ins, mma=("HGMMA",)):
    """The body (target .. branch) of the backward BRA whose body holds the most mma instructions (opcodes
    starting with one of ``mma``)."""
    best = None
    for i, (addr, op, text) in enumerate(ins):
        if op.startswith("BRA"):
            m = re.search(r"0x([0-9a-f]+)", text.split("BRA", 1)[1])
            if not m:
                continue
            target = int(m.group(1), 16)
            if target < addr:
                body = [x for x in ins if target <= x[0] <= addr]
                n = sum(1 for x in body if x[1].startswith(mma))
                if n and (best is None or n > best[0]):
                    best = (n, body)
    return best[1] if best else []


def sass_of(kernel, out_dir, name):
    """(SASS text, registers) of a ``triton.compile`` result, its cubin and SASS kept under ``out_dir``."""
    import triton
    bin_dir = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    cub = os.path.join(out_dir, f"{name}.cubin")
    with open(cub, "wb") as f:
        f.write(kernel.asm["cubin"])
    sass = subprocess.run([f"{bin_dir}/cuobjdump", "-sass", cub], capture_output=True, text=True).stdout
    with open(os.path.join(out_dir, f"{name}.sass"), "w") as f:
        f.write(sass)
    usage = subprocess.run([f"{bin_dir}/cuobjdump", "-res-usage", cub], capture_output=True, text=True).stdout
    return sass, int(re.search(r"REG:(\d+)", usage).group(1))


def loop_counts(body):
    """(Counter of opcodes, Counter of pipes) of a loop body."""
    ops = collections.Counter(op for _, op, _ in body)
    pipes = collections.Counter()
    for op, n in ops.items():
        pipes[pipe_of(op)] += n
    return ops, pipes


def write_loop(path, name, body, regs):
    """The loop's counts by pipe and by opcode, then its instructions."""
    ops, pipes = loop_counts(body)
    with open(path, "w") as f:
        f.write(f"{name}: {len(body)} instructions a warp a trip, registers {regs}\n")
        for p, n in sorted(pipes.items(), key=lambda x: -x[1]):
            f.write(f"pipe {p:8s} {n}\n")
        for op, n in sorted(ops.items(), key=lambda x: -x[1]):
            f.write(f"  {op:28s} {n:5d} {pipe_of(op)}\n")
        f.write("\n".join(t for _, _, t in body) + "\n")
    return ops, pipes
