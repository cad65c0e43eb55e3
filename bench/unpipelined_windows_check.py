"""Does a 1-stage GEMM trip wait one round trip per ptxas load window? A what-if against the
issue-15 truth, no model change (docs/analysis.md section 8, "Unpipelined loads", the
window test).

calibration/h200/measured/unpipelined_sass/windows.csv gives, for the 59 one-stage gemm_bf16
kernels of issue15/run1-4 compiled for sm_90, the 16-byte loads a thread issues a trip
(``ldg_per_thread``) and the median of those still pending at a wait (``in_flight_median``,
the window ptxas' register reuse allows). If the window were what limits the trip, a trip
would wait n = max(1, loads / window) round trips in series instead of the model's one
(tfx.analysis.pipeline_depth.unpipelined_cycle_ns). This script re-prices each such row with
n round trips, the loaded DRAM line re-solved with the longer trip (less bandwidth drawn, a
shorter queue), in two forms:

  all   every latency of the trip (the L2 one and the DRAM one) n times;
  dram  only the DRAM part n times (hits in L2 return at the pace of the issue).

and prints the per-row errors before and after, and the median |error| of the non-spilling
rows. The oracle window is the compiled kernel's own, so a form that does not improve these
rows is refuted, whatever rule would give the window from the IR.

    python3 bench/unpipelined_windows_check.py [--form all|dram]
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis import pipeline_depth  # noqa: E402
from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

TRUTH = ROOT / "calibration" / "h200" / "measured" / "issue15"
WINDOWS = ROOT / "calibration" / "h200" / "measured" / "unpipelined_sass" / "windows.csv"
KEY = ("M", "N", "K", "BM", "BN", "BK", "WARPS")


def windowed_cycle_ns(windows: float, form: str):
    """pipeline_depth.unpipelined_cycle_ns with ``windows`` round trips in series (scalars)."""
    def cycle(lat, first_reader, loaded_bytes, transfer_ns, dram_bytes, r, active_units, compute_ns, f, d):
        port = max(transfer_ns, loaded_bytes / f.port_bytes_per_ns)
        l2_part = (windows if form == "all" else 1) * (1 - first_reader) * lat
        chain = f.overhead_ns + compute_ns
        k = chain + windows * first_reader * d.base_ns + l2_part + port
        q = windows * first_reader * d.slope_ns_per_byte_ns * active_units * r * dram_bytes
        line = (k + math.sqrt(k * k + 4 * q)) / 2                      # T = K + n p slope U r D / T
        idle = chain + windows * first_reader * (d.idle_ns or 0) + l2_part + port
        return max(line, idle)
    return cycle


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--form", choices=("all", "dram"), default="all")
    args = ap.parse_args()
    window = {}
    for w in csv.DictReader(open(WINDOWS)):
        window[tuple(w[k] for k in KEY) + (w["run"],)] = (float(w["ldg_per_thread"]), float(w["in_flight_median"]))
    predictor = Predictor("h200_sxm")
    original = pipeline_depth.unpipelined_cycle_ns
    before, after = [], []
    print(f"1-stage gemm_bf16 rows with a compiled window; form '{args.form}': error now -> with n round trips")
    for path in sorted(TRUTH.glob("run*/gemm.csv")):
        for row in read_measurements(path):
            p = row.params
            if row.family != "gemm_bf16" or p["STAGES"] != 1:
                continue
            key = tuple(str(p[k]) for k in KEY) + (path.parent.name,)
            if key not in window:
                continue
            loads, w = window[key]
            n = max(1.0, loads / w)
            errors = []
            for cycle in (original, windowed_cycle_ns(n, args.form)):
                pipeline_depth.unpipelined_cycle_ns = cycle
                ns = float(predictor.analysis(row).metrics["performance.predicted_ns"])
                errors.append(ns / 1e6 / row.measured_ms - 1)
            pipeline_depth.unpipelined_cycle_ns = original
            if not row.spills:
                before.append(abs(errors[0]))
                after.append(abs(errors[1]))
            print(f"  {row.shape:<16} {p['BM']}x{p['BN']}x{p['BK']} w{p['WARPS']} regs {row.regs:>3} "
                  f"spills {row.spills:>4}  {loads:g} loads / window {w:g} = {n:.2f}  "
                  f"{errors[0] * 100:+6.1f}% -> {errors[1] * 100:+6.1f}%")
    print(f"non-spilling rows: {len(before)}, median |error| {statistics.median(before) * 100:.1f}% -> "
          f"{statistics.median(after) * 100:.1f}%")


if __name__ == "__main__":
    main()
