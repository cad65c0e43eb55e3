#!/usr/bin/env python3
"""How much of a spilled frame L2 keeps near its capacity: the hit ratio the issue-15 row
kernels' measured times imply, by the machine's working set of spilled frames.

The model places a launch's spilled values in L2 when the machine's frames fit L2's capacity and
in DRAM when they do not (tfx.analysis.performance.local_memory): a cliff at one L2. For each
rmsnorm and softmax row that spills past L1 and whose spill is at least half the prediction,
this prices the row twice, with L2 as large as a thousand L2s (every frame in L2) and as small as
one byte (every frame in DRAM), and reads the share h of the spilled traffic served from L2 that
puts the measured time between them: measured = h x t_L2 + (1 - h) x t_DRAM, h = (t_DRAM -
measured) / (t_DRAM - t_L2) (rows whose two prices differ by under 20% are left out). Other
errors of the model move h as well (the rows of one working set spread by about +-0.3), so read
the medians by working set: under the cliff they would be 1, past it 0.

    python3 bench/spill_l2_boundary.py [--rows]
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

from spill_machine_warps import launch_spread  # noqa: E402  (bench/, this script's folder)
from tfx.analysis.analyze import analyze  # noqa: E402
from tfx.analysis.machine import Machine  # noqa: E402
from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

WORKING_SET = re.compile(r"working set ([\d.]+) (KB|MB|GB) per SM")
UNITS = {"KB": 1e3, "MB": 1e6, "GB": 1e9}
BINS = (0.4, 0.6, 0.8, 1.0, 1.2, 1.5, 2.0, 3.0, 4.0)


def rows(hw: str = "h200_sxm"):
    """(machine working set / L2, implied h, warps a SM, label) per kept row."""
    predictor = Predictor(hw)
    profile = predictor.profile(hw)
    machine = Machine(profile, "cta")
    l2, units = profile.memory_levels()[machine.l2].capacity, machine.units
    everything = profile.with_knobs({"memory.l2.capacity": f"{int(l2 * 1000)}B"})
    nothing = profile.with_knobs({"memory.l2.capacity": "1B"})
    out = []
    for path in sorted((ROOT / "calibration" / "h200" / "measured" / "issue15").glob("run*/rows.csv")):
        for row in read_measurements(path):
            if not row.spills:
                continue
            a = predictor.analysis(row)
            spill = [t for t in a.terms if t.name == "spill"]
            if not spill or "served from L1" in spill[0].detail:
                continue
            if float(spill[0].ns) < 0.5 * float(a.metrics["performance.predicted_ns"]):
                continue
            match = WORKING_SET.search(spill[0].detail)
            per_sm = float(match.group(1)) * UNITS[match.group(2)]
            on_sm, spread, _ = launch_spread(row, a, units)
            frames = per_sm * units / spread
            module = predictor.module(row.kernel_path)
            priced = [float(analyze(module, None, p, row.params, resources=row.resources() or None, check=False,
                                    l2_clear=True).metrics["performance.predicted_ns"]) for p in (everything, nothing)]
            if priced[1] - priced[0] < 0.2 * priced[1]:
                continue
            h = (priced[1] - row.measured_ms * 1e6) / (priced[1] - priced[0])
            label = f"{path.parent.name} {row.family} {row.shape} ({row.params['BLOCK_M']}, {row.params['WARPS']})"
            out.append((frames / l2, h, on_sm * row.params["WARPS"], label))
    return sorted(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", action="store_true", help="print every row, not only the medians")
    args = ap.parse_args(argv)
    got = rows()
    if args.rows:
        for ratio, h, warps, label in got:
            print(f"  {ratio:5.2f} L2  h {h:+.2f}  {warps:2d} warps a SM  {label}")
    groups = defaultdict(list)
    for ratio, h, _, _ in got:
        top = next((b for b in BINS if ratio < b), None)
        groups[top].append(h)
    print("machine's spilled frames / L2 capacity: the hit ratio the measured times imply (median, rows)")
    low = 0.0
    for top in BINS + (None,):
        v = groups.get(top)
        span = f"{low:.1f}-{top:.1f}" if top is not None else f"{low:.1f}-"
        if v:
            print(f"  {span:>8s}  h {statistics.median(v):+.2f}  ({len(v)} rows; the model: {'1' if top is not None and top <= 1.0 else '0'})")
        low = top if top is not None else low
    return 0


if __name__ == "__main__":
    sys.exit(main())
