"""Which earlier loads each late row-tile load of the issue-15 row kernels waits for (CPU only).

The same compiles and program-order walk as bench/h200/row_load_rounds.py (Triton 3.6.0, sm_90;
SASS in ROW_SASS_DIR, built when missing): a thread issues in order, and an instruction that reads
or writes a register an outstanding LDG writes waits for that load's data. For every row-tile load
(the first BLOCK_M x N x 2 / 16 / threads LDGs) this lists the loads waited for before it issued:
`waits` is, per tile load in program order, the highest index (0-based, program order) among the
tile loads some earlier instruction waited for, '-' when none (a first-round load).

    PYTHONPATH=<triton 3.6.0> python3 bench/h200/row_late_waits.py > late_waits.csv
"""
import csv
import os
import sys
from multiprocessing import Pool

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from row_load_rounds import COUNTS, sass_path, waited_before, x_vectors  # noqa: E402


def late_waits(sass: str, x_vectors: int) -> list:
    """Per tile load in program order: the highest tile-load index waited for before it, or None
    (row_load_rounds.waited_before's walk)."""
    return [max(w) if w else None for w in waited_before(sass, x_vectors)]


def one(cfg):
    fam, n, bm, w = cfg
    xv = x_vectors(n, bm, w)
    ws = late_waits(open(sass_path(fam, n, bm, w)).read(), xv)
    return fam, n, bm, w, xv, " ".join("-" if x is None else str(x) for x in ws)


def main():
    cfgs = []
    for d in csv.DictReader(open(COUNTS)):
        if int(d["LDL"]) or int(d["STL"]):
            continue
        cfgs.append((d["family"], int(d["N"]), int(d["BLOCK_M"]), int(d["WARPS"])))
    print("family,N,BLOCK_M,WARPS,x_vectors,waits")
    with Pool(2) as p:
        for row in p.imap(one, cfgs):
            print(*row, sep=",", flush=True)


if __name__ == "__main__":
    main()
