"""Read ncu_rows_s20 (bench/h200/measure_ncu_rows.py) on the CPU: where a one-wave row launch's time goes.

    python3 bench/h200/ncu_rows_s20_summary.py [calibration/h200/measured/ncu_rows_s20]

rows20 (docs/analysis.md 8 (z)) found the one-wave rows at one CTA a SM 0.5-2.3 us over the model and asked
whether the missing time is in the load or store phases or the wave's start. Per launch, at ncu's clock
(sm__cycles_elapsed over gpu__time_duration):

- a warp's life: the instructions a warp (smsp__inst_executed over CTAs x warps) x the summed stall
  reasons an issued instruction (every smsp__average_warps_issue_stalled_*_per_issue_active, `selected`
  included: warp-cycles resident over issue-active cycles, one instruction an issue-active cycle), the
  method of 8 (w);
- the launch's time outside its warps' lives: gpu__time_duration less that life (the front end starting
  the grid, the CTAs' launch, the flush at its end; a later CTA's start where an SM holds several);
- the life's wait on global loads (long_scoreboard), on its stores' drain before EXIT (drain), on the
  LSU's queue (lg_throttle), and the rest (issue and compute-phase stalls);
- for each lone CTA (one a SM) its twin: the launch of the same shape whose CTAs hold the same rows a
  SM (CTAs a SM x BLOCK_M equal), and the differences of the parts;
- the launch's do_bench time here against the issue-15 campaign row of the same configuration.
"""
from __future__ import annotations

import csv
import glob
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tfx.hw.units import format_count, format_frequency, format_time_ns  # noqa: E402

SMS = 132                 # H200 SXM (calibration/h200/device.txt)
PARTS = ("long_scoreboard", "drain", "lg_throttle")


def key(row) -> tuple:
    return (row["family"], int(row["M"]), int(row["N"]), int(row["BLOCK_M"]), int(row["WARPS"]))


def life(row, sms: int = SMS) -> dict:
    """One launch's warp life and the launch's time outside it, ns at ncu's clock."""
    ctas, warps = float(row["sm__ctas_launched.sum"]), int(row["WARPS"])
    ncu_ns = float(row["ncu_ms"]) * 1e6
    ghz = float(row["sm__cycles_elapsed.avg"]) / ncu_ns
    insns = float(row["smsp__inst_executed.sum"]) / (ctas * warps)
    stalls = {k[len("stall_"):]: float(v) for k, v in row.items() if k.startswith("stall_") and v not in ("", None)}
    cycles = insns * sum(stalls.values())
    out = dict(r=math.ceil(ctas / sms), ghz=ghz, insns=insns, life_ns=cycles / ghz, ncu_ns=ncu_ns,
               outside_ns=ncu_ns - cycles / ghz)
    for p in PARTS:
        out[p] = stalls.get(p, 0.0) * insns / ghz
    out["rest"] = out["life_ns"] - sum(out[p] for p in PARTS)
    return out


def twins(rows) -> list:
    """(lone, twin) row pairs: a launch at one CTA a SM and one of the same family and shape at more
    whose CTAs hold as many rows a SM (CTAs a SM x BLOCK_M equal)."""
    out = []
    for a in rows:
        la = life(a)
        if la["r"] != 1:
            continue
        for b in rows:
            lb = life(b)
            if b is a or lb["r"] == 1 or key(b)[:3] != key(a)[:3]:
                continue
            if lb["r"] * int(b["BLOCK_M"]) == int(a["BLOCK_M"]):
                out.append((a, b))
    return out


def campaign_times(root: str = ROOT) -> dict:
    """{configuration: [(run, measured ms)]} over calibration/h200/measured/issue15/run*/rows.csv."""
    out = {}
    for p in sorted(glob.glob(os.path.join(root, "calibration/h200/measured/issue15/run*/rows.csv"))):
        for r in csv.DictReader(open(p)):
            if r.get("status") == "ok":
                out.setdefault(key(r), []).append((p.split(os.sep)[-2], float(r["measured_ms"])))
    return out


def label(row) -> str:
    return f"{row['family']} {row['M']} x {row['N']} ({row['BLOCK_M']}, {row['WARPS']})"


def main(d: str) -> None:
    rows = [r for r in csv.DictReader(open(os.path.join(d, "ncu_rows.csv"))) if r.get("status") == "ok"]
    f = format_time_ns
    print("per launch: CTAs a SM, ncu's clock, instructions a warp; the warp's life = load wait + drain + LSU"
          " queue + rest; the launch's time outside the life")
    for r in rows:
        x = life(r)
        print(f"  {label(r):34s} r {x['r']}  {format_frequency(x['ghz'] * 1e9)}  {format_count(round(x['insns']))} a warp"
              f"  life {f(x['life_ns'])} = {f(x['long_scoreboard'])} + {f(x['drain'])} + {f(x['lg_throttle'])}"
              f" + {f(x['rest'])};  ncu {f(x['ncu_ns'])}, outside {f(x['outside_ns'])}")
    print("lone CTA against its twin at the same rows a SM (lone - twin):")
    for a, b in twins(rows):
        la, lb = life(a), life(b)
        print(f"  {label(a)} - ({b['BLOCK_M']}, {b['WARPS']}): ncu {f(la['ncu_ns'] - lb['ncu_ns'])}, life"
              f" {f(la['life_ns'] - lb['life_ns'])} (load wait {f(la['long_scoreboard'] - lb['long_scoreboard'])},"
              f" drain {f(la['drain'] - lb['drain'])}, LSU queue {f(la['lg_throttle'] - lb['lg_throttle'])},"
              f" rest {f(la['rest'] - lb['rest'])}), outside {f(la['outside_ns'] - lb['outside_ns'])}")
    camp = campaign_times()
    print("do_bench here against the campaign's row of the same configuration:")
    for r in rows:
        here = float(r["measured_ms"]) * 1e6
        there = camp.get(key(r), [])
        print(f"  {label(r):34s} here {f(here)}, ncu {f(float(r['ncu_ms']) * 1e6)};"
              + "".join(f" {run} {f(ms * 1e6)} ({f(ms * 1e6 - here)})" for run, ms in there))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "calibration/h200/measured/ncu_rows_s20"))
