"""The dependent rounds in which the issue-15 row kernels load their row tile (CPU only; docs/analysis.md 8 (x)).

For every non-spilling (family, N, BLOCK_M, WARPS) of calibration/h200/measured/row_sass_counts
(the campaigns' row kernels: every configuration bench/h200/measure_accuracy.py can draw), compile
it as bench/h200/measure_row_spill_sass.py does (Triton 3.6.0, sm_90, on the CPU; its SASS lands in
ROW_SASS_DIR, reused when already there) and walk its SASS in program order (the kernels are
loop-free; a warp issues in order). An LDG's destination registers are outstanding until an
instruction reads or writes one of them: that instruction waits for the load's data (the
scoreboard), and so does every instruction after it. So an LDG's round is 1 + the highest round
among the loads some earlier instruction waited for (1 when none was waited for). The row tile's
loads are the first X vectors a thread issues, BLOCK_M x N x 2 B / 16 B / threads (at least one):
their highest round is the tile's rounds; `late` counts those in a round after the first.

    PYTHONPATH=<triton 3.6.0> python3 bench/h200/row_load_rounds.py > load_rounds.csv

(calibration/h200/measured/row_sass_counts/load_rounds.csv). Session 17's first version counted
the LDG before the first SHFL; it found the late loads issued after the first butterfly ((8, 16)
at N = 4096) but not the second round that ptxas issues before it, after the first round's data
has been converted ((8, 8) at N = 4096: 8 loads, their bf16 -> f32 unpacking, then 8 more).
"""
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import measure_row_spill_sass as M  # noqa: E402

COUNTS = os.path.join(HERE, "..", "..", "calibration", "h200", "measured", "row_sass_counts", "counts.csv")
INSN = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*(.*?);")
REG = re.compile(r"\bR(\d+)(\.64)?\b")
WIDTH = {".128": 4, ".64": 2}


def waited_before(sass: str, x_vectors: int) -> list:
    """Per each of the first ``x_vectors`` LDG of one compiled kernel, in program order: the set of
    earlier LDG (their program-order indices) that some instruction before it waited for. An LDG's
    destination registers are outstanding until an instruction reads or writes one of them."""
    pending = {}                 # register -> index of the outstanding load that writes it
    waited = set()               # loads waited for so far
    out = []
    for line in sass.splitlines():
        m = INSN.search(line)
        if not m:
            continue
        op, operands = m.group(1), m.group(2)
        regs = set()
        for r in REG.finditer(operands):
            base = int(r.group(1))
            regs.update(range(base, base + (2 if r.group(2) else 1)))
        hit = {pending[r] for r in regs if r in pending}
        if hit:
            waited |= hit
            for r in [r for r, i in pending.items() if i in hit]:
                del pending[r]
        if op.split(".")[0] == "LDG":
            dest = int(REG.search(operands).group(1))
            width = next((w for k, w in WIDTH.items() if k in op), 1)
            out.append(frozenset(waited))
            for r in range(dest, dest + width):
                pending[r] = len(out) - 1
            if len(out) == x_vectors:
                break
        if op.startswith("EXIT"):
            break
    return out


def load_rounds(sass: str, x_vectors: int) -> list:
    """The round of each of the first ``x_vectors`` LDG of one compiled kernel, in program order:
    1 + the highest round among the loads waited for before it (1 when none)."""
    rounds = []
    for waited in waited_before(sass, x_vectors):
        rounds.append(1 + max((rounds[i] for i in waited), default=0))
    return rounds


def x_vectors(n, bm, w) -> int:
    """The row tile's 16-byte loads a thread issues: BLOCK_M x N bf16 over 32 x WARPS threads (at least one)."""
    return max(bm * n * 2 // 16 // (32 * w), 1)


def sass_path(fam, n, bm, w) -> str:
    """The compiled kernel's SASS file in ROW_SASS_DIR (measure_row_spill_sass.OUT), built when missing."""
    path = os.path.join(M.OUT, f"{fam}_{n}_{bm}_{w}.sass")
    if not os.path.exists(path):
        os.makedirs(M.OUT, exist_ok=True)
        M.build((fam, n, bm, w))
    return path


def kernel_rounds(fam, n, bm, w):
    """(X vectors a thread, the rounds of each) of one compiled kernel."""
    xv = x_vectors(n, bm, w)
    return xv, load_rounds(open(sass_path(fam, n, bm, w)).read(), xv)


def main():
    print("family,N,BLOCK_M,WARPS,x_vectors,rounds,late,pattern")
    for d in csv.DictReader(open(COUNTS)):
        if int(d["LDL"]) or int(d["STL"]):
            continue
        fam, n, bm, w = d["family"], int(d["N"]), int(d["BLOCK_M"]), int(d["WARPS"])
        xv, rounds = kernel_rounds(fam, n, bm, w)
        print(fam, n, bm, w, xv, max(rounds), sum(1 for r in rounds if r > 1), "".join(map(str, rounds)),
              sep=",", flush=True)


if __name__ == "__main__":
    main()
