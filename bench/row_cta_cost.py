"""The row model against the per-CTA cost microbenchmark (calibration/h200/measured/cta_cost).

bench/h200/measure_cta_cost.py timed one-block-per-CTA kernels (softmax's and rmsnorm's body
without a weight row, and a copy) at E = 2, 8, 32 elements a thread on 1-32 warps, over two
many-wave grids (132 x 64 and 132 x 256 CTAs). The difference of the two times over the 192
extra CTAs per SM is what one CTA adds on one SM in the steady state (the launch overhead
and the first wave cancel). Here each timed kernel is predicted as the shipped .tile kernel of
the same block (softmax.tile and rmsnorm.tile with M = grid, N = block, BLOCK_M = 1; copy.tile
with BLOCK = block) with its compiled registers, and the two steady costs are printed side by
side, per family, warps and elements a thread, with the CTAs an SM holds.

    python3 bench/row_cta_cost.py [--only softmax,rmsnorm,copy]

rmsnorm.tile also loads a weight row (an L2 hit for all but the first CTAs), which the
measured kernel does not; copy.tile's BLOCK range (512..16384) leaves out the smallest and
largest copy blocks.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

DATA = ROOT / "calibration" / "h200" / "measured" / "cta_cost"
FAMILY = {"smax": "softmax", "rms": "rmsnorm", "copy": "copy"}
SMS = 132


def rows_text(times, kernels) -> str:
    """The timed kernels of the many-wave grids as a measurements CSV (tfx validate's columns)."""
    out = ["kernel,profile,measured_ms,M,N,BLOCK_M,BLOCK,WARPS,regs,spills,smem_bytes,family,shape,status"]
    grids = sorted({int(r["grid"]) for r in times})[-2:]
    for r in times:
        fam = FAMILY.get(r["mode"])
        if fam is None or int(r["grid"]) not in grids or r["stamp"] != "0":
            continue
        k = kernels[(r["mode"], r["warps"], r["E"])]
        g, w, block = int(r["grid"]), int(r["warps"]), int(r["block"])
        ms = float(r["us_median"]) / 1e3
        shape = f"w{w}e{r['E']}"
        res = f"{k['regs']},0,{k['smem_bytes']}"
        if fam == "copy":
            if not 512 <= block <= 16384:
                continue
            out.append(f"kernels/copy.tile,h200_sxm,{ms},,{g * block},,{block},{w},{res},copy_{g},{shape},ok")
        else:
            out.append(f"kernels/{fam}.tile,h200_sxm,{ms},{g},{block},1,,{w},{res},{fam}_{g},{shape},ok")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="softmax,rmsnorm,copy")
    args = ap.parse_args()
    only = args.only.split(",")
    with open(DATA / "times.csv") as f:
        times = list(csv.DictReader(f))
    with open(DATA / "kernels.csv") as f:
        kernels = {(r["mode"], r["warps"], r["E"]): r for r in csv.DictReader(f) if r["stamp"] == "0"}
    bps = {(r["mode"], r["warps"], r["E"]): r["blocks_per_sm"] for r in kernels.values()}
    rows = read_measurements(DATA / "rows.csv", text=rows_text(times, kernels))
    by = {}
    for c in Predictor("h200_sxm").compare(rows):
        fam, grid = c.row.family.split("_")
        by[(fam, c.row.shape, int(grid))] = (c.row.measured_ms * 1e6, c.predicted_ms * 1e6)
    grids = sorted({g for _, _, g in by})
    extra = (grids[1] - grids[0]) / SMS       # CTAs per SM between the two grids
    mode_of = {v: k for k, v in FAMILY.items()}
    for fam in only:
        errs = []
        print(f"\n{fam}: ns one CTA adds on one SM, steady state ((t({grids[1]}) - t({grids[0]})) / {extra:.0f})")
        print(f"  {'warps':>5} {'E':>3} {'CTAs/SM':>7} {'measured':>9} {'predicted':>9} {'error':>7}")
        keys = sorted({(int(s[1:].split('e')[0]), int(s.split('e')[1])) for f, s, _ in by if f == fam},
                      key=lambda x: (x[1], x[0]))
        for w, e in keys:
            shape = f"w{w}e{e}"
            lo, hi = by.get((fam, shape, grids[0])), by.get((fam, shape, grids[1]))
            if lo is None or hi is None:
                continue
            meas = (hi[0] - lo[0]) / extra
            pred = (hi[1] - lo[1]) / extra
            err = pred / meas - 1
            errs.append(abs(err))
            print(f"  {w:>5} {e:>3} {bps[(mode_of[fam], str(w), str(e))]:>7} {meas:>8.1f}  {pred:>8.1f}  {err * 100:>+6.1f}%")
        if errs:
            print(f"  => median |error| {statistics.median(errs) * 100:.1f}%, max {max(errs) * 100:.1f}%")


if __name__ == "__main__":
    main()
