#!/usr/bin/env python3
"""Warp instructions by opcode in the main loop of compiled kernels' SASS (cuobjdump -sass output).

The main loop is the backward branch whose body holds the most tensor instructions (HMMA, mma.sync; HGMMA, wgmma);
one SASS instruction is one warp instruction, so the counts are what one warp issues a trip. Predicated
instructions count (a warp issues them whatever the predicate).

    python3 bench/h200/sass_loop_counts.py DIR/*.sass > counts.csv

(the .sass files of bench/h200/compile_attn_sass.py, compiled on the CPU with Triton 3.6.0). Prints one CSV row a
file: the file's name, the loop's instructions, and the counts of HMMA, HGMMA, LDSM, MUFU, SHFL, FMUL, FADD, FFMA,
FMNMX, F2FP, LDGSTS, BAR and the rest.
"""
import collections
import csv
import os
import re
import sys

OPS = ("HMMA", "HGMMA", "LDSM", "MUFU", "SHFL", "FMUL", "FADD", "FFMA", "FMNMX", "F2FP", "LDGSTS", "BAR")
LINE = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);")


def instructions(path):
    out = []
    for line in open(path):
        m = LINE.match(line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0].split(".")[0]


def main_loop(ins):
    """The instructions of the backward branch's body with the most tensor instructions, or []."""
    best, most = [], -1
    for addr, text in ins:
        m = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", text)
        if not m or int(m.group(1), 16) >= addr:
            continue
        body = [t for a, t in ins if int(m.group(1), 16) <= a <= addr]
        mma = sum(opcode(t) in ("HMMA", "HGMMA") for t in body)
        if mma > most:
            best, most = body, mma
    return best


def main():
    w = csv.writer(sys.stdout)
    w.writerow(["kernel", "loop_instructions", *(o.lower() for o in OPS), "other"])
    for path in sys.argv[1:]:
        counts = collections.Counter(opcode(t) for t in main_loop(instructions(path)))
        total = sum(counts.values())
        w.writerow([os.path.basename(path).removesuffix(".sass"), total, *(counts[o] for o in OPS),
                    total - sum(counts[o] for o in OPS)])


if __name__ == "__main__":
    main()
