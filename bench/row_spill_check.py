"""The local traffic of the spilling issue-15 row kernels: what their SASS moves against what
tfx charges (tfx.analysis.row_spill), one line a kernel of
calibration/h200/measured/row_spill_sass whose spilled words reach its registers.

Columns: the family, N, BLOCK_M, WARPS, registers, spilled words, elements a thread; the SASS's
LDL + STL bytes a thread; the model's estimate row_spill.frame_traffic(registers, the kernel's
reduce ops) x 4 B x spilled words (FRAME_TRAFFIC below 128 registers, 2 x reductions from there:
the four streamed spills); their ratio
(the compiled code's loads and stores over the frame); then the summary per family and per
elements a thread, which the frame alone does not give (docs/analysis.md section 8 (k)).

    python3 bench/row_spill_check.py
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis import row_spill  # noqa: E402
from tfx.ir.nodes import walk_ops  # noqa: E402
from tfx.lang import parse_file  # noqa: E402

SASS = ROOT / "calibration" / "h200" / "measured" / "row_spill_sass" / "row_spill_sass.csv"


def reductions(family):
    """The reduce ops of kernels/<family>.tile's body, as the model counts them (rmsnorm's row
    sum: 1; softmax's row max and row sum: 2)."""
    kernel = parse_file(ROOT / "kernels" / f"{family}.tile").kernels[0]
    return sum(1 for op in walk_ops(kernel.body) if op.opcode == "reduce")


def main():
    rows = []
    with open(SASS, newline="") as f:
        for r in csv.DictReader(f):
            regs, words = int(r["regs"]), int(r["spills"])
            if not row_spill.applies(words * row_spill.WORD, regs):
                continue
            sass = int(r["LDL_bytes"]) + int(r["STL_bytes"])
            estimate = row_spill.frame_traffic(regs, reductions(r["family"])) * row_spill.WORD * words
            rows.append((r["family"], int(r["N"]), int(r["BLOCK_M"]), int(r["WARPS"]), regs, words,
                         int(r["elements_per_thread"]), sass, estimate))
    print(f"{'family':8s} {'N':>6s} {'BM':>3s} {'W':>3s} {'regs':>4s} {'words':>6s} {'el/thr':>6s} "
          f"{'SASS B':>8s} {'frame x':>8s} {'est/SASS':>8s}")
    for fam, n, bm, w, regs, words, el, sass, est in sorted(rows):
        print(f"{fam:8s} {n:6d} {bm:3d} {w:3d} {regs:4d} {words:6d} {el:6d} {sass:8,d} {est:8,.0f} {est / sass:8.2f}")
    groups = defaultdict(list)
    for fam, n, bm, w, regs, words, el, sass, est in rows:
        groups[(fam, el)].append(sass / (row_spill.WORD * words))
    print(f"\n{len(rows)} kernels; SASS bytes over the frame, median {statistics.median(sass / (row_spill.WORD * words) for *_, words, _, sass, _ in rows):.3f} "
          f"(FRAME_TRAFFIC {row_spill.FRAME_TRAFFIC})")
    for (fam, el), v in sorted(groups.items()):
        print(f"  {fam:8s} {el:5d} elements a thread: {len(v):2d} kernels, ratio {min(v):.2f}-{max(v):.2f}, median {statistics.median(v):.2f}")


if __name__ == "__main__":
    main()
