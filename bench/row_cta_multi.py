"""The row model against the multi-row CTA microbenchmark (calibration/h200/measured/row_cta).

bench/h200/measure_row_cta.py timed the issue-15 row kernels' bodies (copy, rmsnorm with the
weight row loaded after the reduction, softmax) at BLOCK_M = 1..16 rows a CTA, 1..16 warps and
N = 1024..16384 (at most 128 values a thread), on one-wave grids and two many-wave grids (132 x
4r and 132 x 32r CTAs, r the residency). The difference of the two many-wave times over the 28r
extra CTAs per SM is what one CTA adds on one SM in the steady state; times r, the cycle of
one slot. Here each kernel is predicted as the shipped .tile kernel of the same tile
(rmsnorm.tile / softmax.tile with M = grid x BLOCK_M, copy.tile with BLOCK = BLOCK_M x N) with
its compiled registers, and the steady costs are printed side by side with the DRAM time of a
CTA's bytes at the SM's share (bytes / (4,238 B/ns / 132)).

    python3 bench/row_cta_multi.py [--only softmax,rmsnorm,copy] [--grid many|wave]
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

DATA = ROOT / "calibration" / "h200" / "measured" / "row_cta"
FAMILY = {"smax": "softmax", "rms": "rmsnorm", "copy": "copy"}
SMS = 132
SM_SHARE_B_PER_NS = 4238.4 / SMS     # the copy bandwidth (cta_cost README) at one SM's share


def cta_bytes(mode, n, bm):
    return 4 * bm * n + (2 * n if mode == "rms" else 0)


def rows_text(times):
    """The timed kernels as a measurements CSV (tfx validate's columns), family = fam_key_grid."""
    out = ["kernel,profile,measured_ms,M,N,BLOCK_M,BLOCK,WARPS,regs,spills,smem_bytes,family,shape,status"]
    for r in times:
        fam = FAMILY[r["mode"]]
        g, n, bm, w = int(r["grid"]), int(r["N"]), int(r["BLOCK_M"]), int(r["warps"])
        ms = float(r["us_median"]) / 1e3
        res = f"{r['regs']},{r['spills'] or 0},0"
        shape = f"n{n}bm{bm}w{w}"
        if fam == "copy":
            if not 512 <= bm * n <= 16384:
                continue
            out.append(f"kernels/copy.tile,h200_sxm,{ms},,{g * bm * n},,{bm * n},{w},{res},copy_{g},{shape},ok")
        else:
            out.append(f"kernels/{fam}.tile,h200_sxm,{ms},{g * bm},{n},{bm},,{w},{res},{fam}_{g},{shape},ok")
    return "\n".join(out) + "\n"


def load():
    with open(DATA / "times.csv") as f:
        times = list(csv.DictReader(f))
    rows = read_measurements(DATA / "rows.csv", text=rows_text(times))
    by = {}
    for c in Predictor("h200_sxm").compare(rows):
        fam, grid = c.row.family.split("_")
        by[(fam, c.row.shape, int(grid))] = (c.row.measured_ms * 1e6, c.predicted_ms * 1e6)
    meta = {}
    for r in times:
        meta[(FAMILY[r["mode"]], f"n{r['N']}bm{r['BLOCK_M']}w{r['warps']}")] = r
    return by, meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="softmax,rmsnorm,copy")
    ap.add_argument("--grid", choices=("many", "wave"), default="many",
                    help="many: the steady slot cycle; wave: the one-wave launch of 132 CTAs (lock step)")
    args = ap.parse_args()
    by, meta = load()
    if args.grid == "wave":
        one_wave(by, meta, args.only.split(","))
        return
    for fam in args.only.split(","):
        errs = []
        print(f"\n{fam}: the slot cycle, r x (t(132 x 32r) - t(132 x 4r)) / 28r ns; DRAM = a CTA's bytes at the SM's share")
        print(f"  {'N':>5} {'BM':>3} {'warps':>5} {'vals':>4} {'regs':>4} {'r':>2} {'DRAM':>7} {'measured':>9} "
              f"{'/DRAM':>6} {'predicted':>9} {'error':>7}")
        keys = sorted({k for (f, k) in meta if f == fam},
                      key=lambda s: tuple(int(x) for x in s[1:].replace("bm", " ").replace("w", " ").split()))
        for key in keys:
            m = meta[(fam, key)]
            r = int(m["blocks_per_sm"])
            lo, hi = by.get((fam, key, SMS * 4 * r)), by.get((fam, key, SMS * 32 * r))
            if lo is None or hi is None:
                continue
            meas = (hi[0] - lo[0]) / 28
            pred = (hi[1] - lo[1]) / 28
            dram = cta_bytes(m["mode"], int(m["N"]), int(m["BLOCK_M"])) * r / SM_SHARE_B_PER_NS
            err = pred / meas - 1
            errs.append(abs(err))
            print(f"  {m['N']:>5} {m['BLOCK_M']:>3} {m['warps']:>5} {m['values_per_thread']:>4} {m['regs']:>4} {r:>2} "
                  f"{dram:>7.0f} {meas:>9.0f} {meas / dram:>6.2f} {pred:>9.0f} {err * 100:>+6.1f}%")
        if errs:
            print(f"  => median |error| {statistics.median(errs) * 100:.1f}%, max {max(errs) * 100:.1f}%")


def one_wave(by, meta, families):
    """The one-wave grids (132 CTAs, one a SM, starting together): whole-launch time measured and
    predicted, per configuration, with the values a thread holds (the compute chain's length)."""
    for fam in families:
        errs = []
        print(f"\n{fam}: one wave of {SMS} CTAs (one a SM, in lock step), launch us")
        print(f"  {'N':>5} {'BM':>3} {'warps':>5} {'vals':>4} {'regs':>4} {'measured':>9} {'predicted':>9} {'error':>7}")
        keys = sorted({k for (f, k) in meta if f == fam},
                      key=lambda s: tuple(int(x) for x in s[1:].replace("bm", " ").replace("w", " ").split()))
        for key in keys:
            m = meta[(fam, key)]
            got = by.get((fam, key, SMS))
            if got is None:
                continue
            err = got[1] / got[0] - 1
            errs.append(err)
            print(f"  {m['N']:>5} {m['BLOCK_M']:>3} {m['warps']:>5} {m['values_per_thread']:>4} {m['regs']:>4} "
                  f"{got[0] / 1e3:>9.2f} {got[1] / 1e3:>9.2f} {err * 100:>+6.1f}%")
        if errs:
            print(f"  => median |error| {statistics.median(abs(e) for e in errs) * 100:.1f}%, "
                  f"signed {statistics.median(errs) * 100:+.1f}%, max {max(abs(e) for e in errs) * 100:.1f}%")


if __name__ == "__main__":
    main()
