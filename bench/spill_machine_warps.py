#!/usr/bin/env python3
"""What the machine's spilled traffic moves, by the warps it holds: the evidence for
docs/analysis.md section 8's "The machine's warps, under one wave" (tfx.analysis.local_parallelism).

Reads the issue-15 campaigns (calibration/<device>/measured/issue15/run*/) and keeps the rmsnorm
and softmax rows whose spilled values the model places in DRAM and whose spill is most of the
predicted time (over 85%). For each, the local rate the measured time implies for the busiest SM:
its local bytes (the spill line's time x its rate: the same bytes whatever rate a model gives)
over the measured time less the prediction's other parts. The machine's rate is that x SMs /
spread (local_parallelism.spread: how many times its even share of the machine's warps the
busiest SM holds), and its warps a SM of all SMs are the busiest SM's / spread.

Prints, for the launches of one wave (CTAs at most the slots), the machine's rate by its warps a
SM of all SMs (rows) and the busiest SM's spread (columns): under the fixed share a SM the model
read before, the machine's rate would fall as 1 / spread along a row; it does not, it follows
the warps. Median over rows; the count in brackets. Launches of more than one wave, whose CTAs
reuse the frames the wave before them left in L2, are left out.

    python3 bench/spill_machine_warps.py [--hw h200_sxm|h100_sxm]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis import local_parallelism  # noqa: E402
from tfx.analysis.machine import Machine  # noqa: E402
from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

DEVICES = {"h200_sxm": "h200", "h100_sxm": "h100"}
RATE = re.compile(r"served from DRAM at ([\d.]+) (GB|TB)/s per SM")
SPILL_SHARE = 0.85


def launch_spread(row, analysis, units):
    """(CTAs the busiest SM holds, its spread, whether the launch is one wave) of a measured row
    kernel's launch of cdiv(M, BLOCK_M) CTAs (local_parallelism.spread)."""
    ctas = -(-row.params["M"] // row.params["BLOCK_M"])
    resident = int(analysis.metrics["occupancy.blocks_per_sm"])
    on_sm = min(resident, -(-ctas // units))
    return on_sm, float(local_parallelism.spread(units, on_sm, ctas, units * resident)), ctas <= units * resident


def rows_of(hw: str):
    """(warps a SM of all, machine B/ns, spread, one wave) per kept row."""
    predictor = Predictor(hw)
    units = Machine(predictor.profile(hw), "cta").units
    out = []
    for path in sorted((ROOT / "calibration" / DEVICES[hw] / "measured" / "issue15").glob("run*/*.csv")):
        if "retime" in path.name:
            continue
        for row in read_measurements(path):
            if row.family not in ("rmsnorm", "softmax") or not row.spills:
                continue
            a = predictor.analysis(row)
            spill = [t for t in a.terms if t.name == "spill"]
            match = RATE.search(spill[0].detail) if spill else None
            if match is None:
                continue
            rate = float(match.group(1)) * (1000 if match.group(2) == "TB" else 1)
            predicted, spill_ns = float(a.metrics["performance.predicted_ns"]), float(spill[0].ns)
            if spill_ns < SPILL_SHARE * predicted:
                continue
            left = row.measured_ms * 1e6 - (predicted - spill_ns)
            if left <= 0:
                continue
            on_sm, spread, one_wave = launch_spread(row, a, units)
            busiest = spill_ns * rate / left
            warps = on_sm * row.params["WARPS"]
            out.append((warps / spread, busiest * units / spread, spread, one_wave))
    return out


WARP_BUCKETS = ((3, "2"), (6, "4"), (10, "8"), (14, "12"), (24, "16"), (48, "32"), (float("inf"), "64"))
SPREAD_BUCKETS = ((1 + 1e-9, "1"), (1.1, "1-1.1"), (1.5, "1.1-1.5"), (2.5, "1.5-2.5"), (float("inf"), "over 2.5"))


def bucket(value, buckets):
    return next(label for top, label in buckets if value < top or top == float("inf"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hw", default="h200_sxm", choices=sorted(DEVICES))
    args = ap.parse_args(argv)
    cells = defaultdict(list)
    for n, machine, spread, one_wave in rows_of(args.hw):
        if one_wave:
            cells[(bucket(n, WARP_BUCKETS), bucket(spread, SPREAD_BUCKETS))].append(machine)
    print(f"{args.hw}: rmsnorm and softmax launches of one wave spilling to DRAM (spill over {SPILL_SHARE:.0%} "
          f"of the prediction): the machine's rate in TB/s (rows)")
    spreads = [label for _, label in SPREAD_BUCKETS]
    print(f"  {'warps a SM of all':>18s}" + "".join(f"  {'spread ' + label:>13s}" for label in spreads))
    for _, wl in WARP_BUCKETS:
        line = f"  {'~' + wl:>18s}"
        for sl in spreads:
            v = cells.get((wl, sl))
            line += f"  {statistics.median(v) / 1000:6.2f} ({len(v):3d})" if v else f"  {'':>13s}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
