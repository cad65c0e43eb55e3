"""Which issue-15 row kernels load their row tile in two rounds (CPU only; docs/analysis.md 8 (w)).

For every non-spilling (family, N, BLOCK_M, WARPS) of calibration/h200/measured/row_sass_counts
(the campaigns' row kernels), compile it as bench/h200/measure_row_spill_sass.py does (Triton
3.6.0, sm_90, on the CPU; its SASS lands in ROW_SASS_DIR, reused when already there) and count,
in program order (the kernels are loop-free), the LDG a thread issues before its first SHFL (the
first reduction's butterfly, which waits for loaded data) against the 16-byte vectors of X a
thread holds, BLOCK_M x N x 2 B / 16 B / threads. Fewer before the SHFL than X vectors: the
compiler issues the rest after the first row's data arrived (a late LDG reuses the registers of
a vector the sum consumed, so it waits for that vector), a second DRAM round trip in the CTA's
chain.

    PYTHONPATH=<triton 3.6.0> python3 bench/h200/row_load_rounds.py > rounds.tsv

Prints one line per kernel: family, N, BLOCK_M, WARPS, X vectors a thread, LDG before the first
SHFL, late (1 when the first is larger). Softmax's one-warp kernels start a row's butterfly before
the last row's loads by design of the warp (no cross-warp step): read their `late` as a count,
not a second round.
"""
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import measure_row_spill_sass as M  # noqa: E402

COUNTS = os.path.join(HERE, "..", "..", "calibration", "h200", "measured", "row_sass_counts", "counts.csv")
OP = re.compile(r"/\*[0-9a-f]{4}\*/\s+(@!?P\d\s+)?([A-Z][A-Z0-9.]*)")


def rounds(fam, n, bm, w):
    """(X vectors a thread, LDG before the first SHFL) of one compiled kernel."""
    path = os.path.join(M.OUT, f"{fam}_{n}_{bm}_{w}.sass")
    if not os.path.exists(path):
        os.makedirs(M.OUT, exist_ok=True)
        M.build((fam, n, bm, w))
    ops = []
    for line in open(path):
        m = OP.search(line)
        if m:
            ops.append(m.group(2).split(".")[0])
    first = next((i for i, o in enumerate(ops) if o == "SHFL"), len(ops))
    x_vectors = max(bm * n * 2 // 16 // (32 * w), 1)
    return x_vectors, sum(1 for i, o in enumerate(ops) if o == "LDG" and i < first)


def main():
    for d in csv.DictReader(open(COUNTS)):
        if int(d["LDL"]) or int(d["STL"]):
            continue
        fam, n, bm, w = d["family"], int(d["N"]), int(d["BLOCK_M"]), int(d["WARPS"])
        xv, up = rounds(fam, n, bm, w)
        print(fam, n, bm, w, xv, up, int(up < xv), sep="\t", flush=True)


if __name__ == "__main__":
    main()
