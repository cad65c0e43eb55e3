#!/usr/bin/env python3
"""How many global loads a thread of an unpipelined (1-stage) Triton k-loop keeps in flight.

Usage (no GPU; Triton 3.6.0 with its ptxas and nvdisasm, e.g. pip install triton==3.6.0):
    python3 bench/h200/unpipelined_sass_windows.py OUTDIR

At STAGES = 1 Triton loads each tile into registers (LDG.E.128 / .64) and stores it to shared
memory (STS); the compiler reuses a few destination registers, so a thread's loads are not
all in flight at once: an STS (or any instruction) that reads a pending load's registers waits
for it. This script compiles every 1-stage gemm_bf16 row of calibration/h200/measured/issue15
for sm_90 with bench/h200/measure_spill_sass.py's `compile_cpu` (the JIT's specialization given
by hand; REG checked against the measured `regs`), disassembles it and walks the SASS in issue
order: an LDG's destination registers (4 for .128, 2 for .64, 1 for .E) are pending until an
instruction reads or overwrites one; at that instruction the loads still pending (issued
before it, including the one waited for) are the loads in flight at a wait. It writes
OUTDIR/windows.csv (one row per configuration, with the measured time of its issue-15 row) and
OUTDIR/sass/*.sass.

Columns: `ldg_per_thread` = the trip's tile bytes / (threads x 16 B) (Triton's vector; the
16-byte loads dominate these tiles), `waits` the number of waits, `in_flight_median` /
`in_flight_max` the pending loads at them; `ns_per_trip` = (measured - 3 us launch) / (waves x
trips), `ctas_per_sm` the CTAs on the busiest SM (ceil(CTAs / 132), at most the compiled
occupancy), and `implied_round_trip_ns` = ns_per_trip x in_flight_median / ldg_per_thread: the
round trip each window of loads would take if the trip were that many windows in series.
"""
from __future__ import annotations

import csv
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

LDG_REGS = {"128": 4, "64": 2}


def pending_windows(sass: str) -> tuple[int, list[int]]:
    """(LDGs, loads pending at each wait) of a kernel's SASS, walked in issue order."""
    pending: list[tuple[int, set[int]]] = []
    waits: list[int] = []
    n = 0
    for line in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;", line)
        if not m:
            continue
        body = re.sub(r"^@!?U?P\w+\s+", "", m.group(2))
        op = body.split()[0] if body.split() else ""
        regs = [int(r) for r in re.findall(r"\bR(\d+)\b", body[len(op):])]
        if op.startswith("LDG"):
            width = next((LDG_REGS[w] for w in LDG_REGS if f".{w}" in op), 1)
            srcs, dst = set(regs[1:]), regs[0] if regs else -1
        else:
            srcs, dst = set(regs), None
        hit = [p for p in pending if p[1] & srcs]
        if hit:
            waits.append(len(pending))
            last = max(h[0] for h in hit)
            pending = [p for p in pending if p[0] > last]
        if dst is not None:
            pending.append((n, set(range(dst, dst + width))))
            n += 1
    return n, waits


def rows_of_one_stage():
    from tfx.analysis.measured import read_measurements
    seen = {}
    for run in ("run1", "run2", "run3", "run4"):
        for r in read_measurements(ROOT / f"calibration/h200/measured/issue15/{run}/gemm.csv"):
            p = r.params
            if r.family != "gemm_bf16" or p.get("STAGES") != 1:
                continue
            key = tuple(p[k] for k in ("M", "N", "K", "BM", "BN", "BK", "WARPS"))
            seen.setdefault(key, (r, run))
    return seen


def main():
    out = Path(sys.argv[1])
    (out / "sass").mkdir(parents=True, exist_ok=True)
    import measure_spill_sass as mss
    nvdisasm = mss.cuobjdump_path().replace("cuobjdump", "nvdisasm")
    fields = ["M", "N", "K", "BM", "BN", "BK", "WARPS", "regs_measured", "regs_compiled", "ldg", "ldg_per_thread",
              "waits", "in_flight_median", "in_flight_max", "measured_us", "trips", "ctas_per_sm", "ns_per_trip",
              "implied_round_trip_ns", "run"]
    with open(out / "windows.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for key, (row, run) in sorted(rows_of_one_stage().items()):
            M, N, K, bm, bn, bk, warps = key
            mss.WARPS = warps
            c = ("gemm_bf16", M, N, K, bm, bn, bk, 1, 1, "kn")
            _, regs, _, _ = mss.compile_cpu(c)
            cub = os.path.join("/tmp", mss.name_of(c) + ".cubin")
            sass = subprocess.run([nvdisasm, cub], capture_output=True, text=True, timeout=120).stdout
            name = f"gemm_bf16_{M}x{N}x{K}_{bm}x{bn}x{bk}_w{warps}_s1"
            (out / "sass" / f"{name}.sass").write_text(sass)
            n, waits = pending_windows(sass)
            threads = 32 * warps
            per_thread = (bm * bk + bk * bn) * 2 / (threads * 16)
            ctas = math.ceil(M / bm) * math.ceil(N / bn)
            occ = int(row.notes.get("blocks_per_sm") or 1)
            on_sm = min(occ, math.ceil(ctas / 132))
            waves = max(1.0, ctas / (132 * occ))
            trips = K / bk
            ns = (row.measured_ms * 1e6 - 3000) / (waves * trips)
            med = statistics.median(waits) if waits else 0
            w.writerow(dict(M=M, N=N, K=K, BM=bm, BN=bn, BK=bk, WARPS=warps, regs_measured=row.regs,
                            regs_compiled=regs, ldg=n, ldg_per_thread=f"{per_thread:g}", waits=len(waits),
                            in_flight_median=f"{med:g}", in_flight_max=max(waits) if waits else 0,
                            measured_us=f"{row.measured_ms * 1e3:.1f}", trips=f"{trips:g}", ctas_per_sm=on_sm,
                            ns_per_trip=f"{ns:.1f}",
                            implied_round_trip_ns=f"{ns * med / per_thread:.0f}" if med else "", run=run))
            f.flush()
            print(name, regs, n, len(waits), med, flush=True)


if __name__ == "__main__":
    main()
