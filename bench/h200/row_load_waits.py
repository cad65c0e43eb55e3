"""Which earlier load each late row-tile load of the issue-15 row kernels waits for (compile only).

docs/analysis.md 8 (y): bench/row_pair_fcfs.py reproduces the two-round 16-warp pairs when a
warp issues its second round after all of its first round's data has arrived, and overshoots the
4- and 8-warp pairs, whose late loads may wait for an early vector only. This walks the SASS of
every multi-round binary of calibration/h200/measured/row_sass_counts/load_rounds.csv (rounds > 1)
as bench/h200/row_load_rounds.py does (a warp issues in order; an instruction touching an
outstanding LDG's registers waits for its data, and so does every instruction after it) and
records, for each of the row tile's first loads, `waits`: the highest program-order index among
the loads waited for before it (-1: none). Compiles as bench/h200/measure_row_spill_sass.py does
(Triton 3.6.0, sm_90; no kernel is run).

    python3 bench/h200/row_load_waits.py $OUT/row_load_waits

writes $OUT/row_load_waits/waits.csv (family,N,BLOCK_M,WARPS,x_vectors,pattern,waits) and the
walked .sass files, then $OUT/row_load_waits.tgz of that folder.
"""
import csv
import os
import shutil
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

ROUNDS = os.path.join(HERE, "..", "..", "calibration", "h200", "measured", "row_sass_counts", "load_rounds.csv")


def load_waits(sass: str, x_vectors: int, insn, reg, width_of) -> list:
    """For each of the first ``x_vectors`` LDG in program order: the highest index among the
    loads some earlier instruction waited for (-1 where none)."""
    pending = {}                 # register -> index of the outstanding load that writes it
    waits = []
    waited = -1
    for line in sass.splitlines():
        m = insn.search(line)
        if not m:
            continue
        op, operands = m.group(1), m.group(2)
        regs = set()
        for r in reg.finditer(operands):
            base = int(r.group(1))
            regs.update(range(base, base + (2 if r.group(2) else 1)))
        hit = {pending[r] for r in regs if r in pending}
        if hit:
            waited = max([waited] + list(hit))
            for r in [r for r, i in pending.items() if i in hit]:
                del pending[r]
        if op.split(".")[0] == "LDG":
            dest = int(reg.search(operands).group(1))
            width = width_of(op)
            waits.append(waited)
            for r in range(dest, dest + width):
                pending[r] = len(waits) - 1
            if len(waits) == x_vectors:
                break
        if op.startswith("EXIT"):
            break
    return waits


def main(out_dir: str) -> int:
    import row_load_rounds as R
    import measure_row_spill_sass as M
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(M.OUT, exist_ok=True)

    def width_of(op):
        return next((w for k, w in R.WIDTH.items() if k in op), 1)

    rows = [d for d in csv.DictReader(open(ROUNDS)) if int(d["rounds"]) > 1]
    with open(os.path.join(out_dir, "waits.csv"), "w") as f:
        f.write("family,N,BLOCK_M,WARPS,x_vectors,pattern,waits\n")
        for d in rows:
            fam, n, bm, w = d["family"], int(d["N"]), int(d["BLOCK_M"]), int(d["WARPS"])
            path = os.path.join(M.OUT, f"{fam}_{n}_{bm}_{w}.sass")
            if not os.path.exists(path):
                M.build((fam, n, bm, w))
            xv = int(d["x_vectors"])
            waits = load_waits(open(path).read(), xv, R.INSN, R.REG, width_of)
            f.write(f"{fam},{n},{bm},{w},{xv},{d['pattern']},{' '.join(map(str, waits))}\n")
            f.flush()
            shutil.copy(path, os.path.join(out_dir, os.path.basename(path)))
            print(fam, n, bm, w, d["pattern"], waits, flush=True)
    with tarfile.open(out_dir.rstrip("/") + ".tgz", "w:gz") as t:
        t.add(out_dir, arcname=os.path.basename(out_dir.rstrip("/")))
    shutil.rmtree(out_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/row_load_waits"))
