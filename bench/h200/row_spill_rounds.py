"""How many times a thread of a spilling Triton row kernel waits for its local loads, from the
SASS that bench/h200/measure_row_spill_sass.py writes (one ``FAMILY_N_BLOCKM_WARPS.sass`` a
configuration, compiled for sm_90 on the CPU; the kernels are loop-free, so the static
instruction stream is what each thread executes).

A warp issues in order. Replaying one thread's instruction stream with every local load
(LDL) answering after ``L`` cycles, every other result after 4 (the fma latency of
hw_profiles/h200_sxm.toml) and global loads after a fixed 1,400, the time grows with ``L`` by
the number of local round trips the thread waits one after another: ``waits = (T(L2) -
T(L1)) / (L2 - L1)``. Loads issued before the first use of any of them overlap in one wait; a
use that must wait for a load issued after the previous wait starts a new one. With one or two
warps a SM nothing hides those waits, so a CTA lasts at least ``waits`` local round trips.

    python3 bench/h200/row_spill_rounds.py /tmp/row_spill_sass/*.sass > rounds.csv

Columns: family, N, BLOCK_M, WARPS, instructions, LDL / STL bytes a thread, waits, local
bytes a wait (LDL + STL bytes / waits)."""
import os
import re
import sys

LINE = re.compile(r"/\*[0-9a-f]{4,6}\*/\s+(.*?);")
REG = re.compile(r"\bR(\d+)\b")


def instructions(path):
    """(opcode, registers) of each SASS instruction, predicates dropped."""
    out = []
    for line in open(path):
        m = LINE.search(line)
        if not m:
            continue
        ins = re.sub(r"^@!?U?P\w+\s+", "", m.group(1).strip())
        op = ins.split()[0]
        out.append((op, [int(r) for r in REG.findall(ins[len(op):])]))
    return out


def width(op):
    """Registers an instruction writes (.64: 2, .128: 4)."""
    return 4 if ".128" in op else 2 if ".64" in op else 1


def replay(instrs, local_latency, global_latency=1400, alu_latency=4):
    """Cycles one thread takes: in-order issue, one instruction a cycle, each waiting for its
    source registers."""
    ready = {}
    t = 0.0
    for op, regs in instrs:
        if op.startswith(("STL", "STG", "STS", "BAR", "BRA", "EXIT", "RET", "NOP")):
            dst, srcs = [], regs
        else:
            dst, srcs = regs[:1], regs[1:]
        t = max([ready.get(r, 0.0) for r in srcs] + [t]) + 1
        if dst:
            lat = (local_latency if op.startswith("LDL") else global_latency if op.startswith("LDG")
                   else alu_latency)
            for k in range(width(op)):
                ready[dst[0] + k] = t + lat
    return t


def local_bytes(instrs, kind):
    """Bytes a thread moves with LDL or STL (width from the suffix, else 4 B)."""
    total = 0
    for op, _ in instrs:
        if op.startswith(kind):
            total += 16 if ".128" in op else 8 if ".64" in op else 2 if (".U16" in op or ".S16" in op) else \
                1 if (".U8" in op or ".S8" in op) else 4
    return total


def main(paths):
    print("family,N,BLOCK_M,WARPS,instructions,LDL_bytes,STL_bytes,waits,local_bytes_per_wait")
    for path in sorted(paths):
        fam, n, bm, w = os.path.basename(path)[:-5].split("_")
        ins = instructions(path)
        waits = (replay(ins, 600) - replay(ins, 200)) / 400
        ldl, stl = local_bytes(ins, "LDL"), local_bytes(ins, "STL")
        per = (ldl + stl) / waits if waits else 0.0
        print(f"{fam},{n},{bm},{w},{len(ins)},{ldl},{stl},{waits:.0f},{per:.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
