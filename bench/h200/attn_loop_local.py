#!/usr/bin/env python3
"""Local-memory bytes a trip of the issue-15 flash-attention loops moves (SASS, CPU only).

Reads the .sass files bench/h200/compile_attn_sass.py writes (Triton 3.6.0's
flash_fwd_kernel for sm_90a, cuobjdump -sass) and, for each loop (a backward branch), counts
its LDL / STL instructions and the bytes a thread moves through them a trip (LDL 4 B, .64
8 B, .128 16 B), beside its HGMMA, MUFU, BAR, LDGSTS and LDG counts, as CSV:

    python3 bench/h200/compile_attn_sass.py OUT c,128,128,64,4,3 ...
    python3 bench/h200/attn_loop_local.py OUT/*.sass > attn_loop_local.csv

The causal kernel has two loops (the unmasked one, which runs all but the diagonal's
trips, first; the masked one second), the full kernel one. No kernel is run.
"""
import collections
import os
import re
import sys


def instructions(path):
    out = []
    for line in open(path):
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def opcode(text):
    words = text.split()
    return words[1] if words[0].startswith("@") else words[0]


def width(op):
    return 16 if ".128" in op else 8 if ".64" in op else 4


def loops(ins):
    at = {a: i for i, (a, _) in enumerate(ins)}
    for i, (a, t) in enumerate(ins):
        m = re.search(r"BRA .*0x([0-9a-f]+)", t)
        if m and int(m.group(1), 16) < a and int(m.group(1), 16) in at:
            yield at[int(m.group(1), 16)], i


def main(paths):
    print("kernel,loop,first,last,instructions,HGMMA,LDL,LDL_bytes,STL,STL_bytes,MUFU,BAR,LDGSTS,LDG")
    for path in paths:
        ins = instructions(path)
        name = os.path.basename(path).rsplit(".", 1)[0]
        for n, (s, e) in enumerate(loops(ins), 1):
            count, ldl, stl = collections.Counter(), 0, 0
            for _, t in ins[s:e + 1]:
                op = opcode(t)
                base = op.split(".")[0]
                count[base] += 1
                if base == "LDL":
                    ldl += width(op)
                elif base == "STL":
                    stl += width(op)
            print(f"{name},{n},{ins[s][0]:#x},{ins[e][0]:#x},{e - s + 1},{count['HGMMA']},"
                  f"{count['LDL']},{ldl},{count['STL']},{stl},{count['MUFU']},{count['BAR']},"
                  f"{count['LDGSTS']},{count['LDG']}")


if __name__ == "__main__":
    main(sys.argv[1:])
