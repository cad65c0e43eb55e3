#!/usr/bin/env python3
"""How many load round trips an unpipelined (1-stage) Triton GEMM k-loop trip waits in series.

Usage (no GPU; Triton 3.6.0 with its ptxas and nvdisasm, e.g. /tmp/gspill2_venv):
    python3 bench/h200/unpipelined_rounds.py OUTDIR [--runs run1,...,run7]   # the measured rows
    python3 bench/h200/unpipelined_rounds.py OUTDIR --grid                   # the whole tile space

At STAGES = 1 Triton's PTX loads a whole tile into registers (ld.global.v4 ...) and then stores
it to shared memory (st.shared), but ptxas re-schedules the pair: it sinks each load next to its
store and reuses a few destination registers, so a thread's loads are issued in groups, each
group waited for (its STS reads the registers) before the next group is issued. The trip is then
several dependent round trips in series, not one.

This script compiles every 1-stage gemm configuration of calibration/h200/measured/issue15 for
sm_90 with bench/h200/measure_spill_sass.py's `compile_cpu` (REG checked against the measured
`regs`), disassembles the k-loop body (the span of the backward branch that holds the HMMA/HGMMA)
and walks it in issue order: a load's round is 1 + the highest round among the loads already
waited for when it issues (an instruction waits for a pending load when it reads or overwrites
one of its destination registers). `rounds` = the highest round: the dependent round trips a
thread waits a trip. OUTDIR/rounds.csv has one row per configuration; OUTDIR/sass/ the loops.

Columns: family, M..GROUP_M, layout (as measured), regs_measured, regs_compiled, spills_compiled,
ldg (LDG instructions in the loop), rounds, loads_by_round (LDGs of each round, '/'-joined),
mma (HMMA or HGMMA), measured_ms, run.
"""
from __future__ import annotations

import csv
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

INSN = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
WIDTH = {"128": 4, "64": 2}


def loop_body(sass: str) -> list[str]:
    """The instructions of the k-loop: the backward branch whose span holds the mma."""
    lines = [(int(m.group(1), 16), m.group(2)) for m in map(INSN.match, sass.splitlines()) if m]
    labels = {}
    for i, line in enumerate(sass.splitlines()):
        lab = re.match(r"\.(L_x_\d+):", line.strip())
        if lab:
            nxt = next((INSN.match(x) for x in sass.splitlines()[i + 1:] if INSN.match(x)), None)
            if nxt:
                labels[lab.group(1)] = int(nxt.group(1), 16)
    best = []
    for at, text in lines:
        b = re.search(r"BRA\s+`?\(?\.?(L_x_\d+)", text)
        if b and labels.get(b.group(1), at + 1) <= at:
            body = [t for a, t in lines if labels[b.group(1)] <= a <= at]
            if any("MMA" in t for t in body) and len(body) > len(best):
                best = body
    return best


def rounds_of(body: list[str]) -> list[int]:
    """The round of each LDG of the loop body, in issue order."""
    pending: list[tuple[int, set[int]]] = []   # (round, destination registers)
    waited = 0
    out = []
    for text in body:
        text = re.sub(r"^@!?U?P\w+\s+", "", text)
        op = text.split()[0] if text.split() else ""
        regs = [int(r) for r in re.findall(r"\bR(\d+)\b", text[len(op):])]
        if op.startswith("LDG"):
            width = next((WIDTH[w] for w in WIDTH if f".{w}" in op), 1)
            dst = set(range(regs[0], regs[0] + width)) if regs else set()
            srcs = set(regs[1:])
        else:
            dst, srcs = set(), set(regs)
        touched = srcs | dst
        hit = [p for p in pending if p[1] & touched]
        if hit:
            waited = max(waited, max(h[0] for h in hit))
            pending = [p for p in pending if not (p[1] & touched)]
        if op.startswith("LDG"):
            out.append(waited + 1)
            pending.append((waited + 1, dst))
    return out


def configs(runs):
    from tfx.analysis.measured import read_measurements
    seen = {}
    for run in runs:
        for r in read_measurements(ROOT / f"calibration/h200/measured/issue15/{run}/gemm.csv"):
            p = r.params
            if p.get("STAGES") != 1:
                continue
            lay = r.notes.get("layout") or ("nk" if r.family == "gemm_fp8" else "kn")
            key = (r.family, *(p[k] for k in ("M", "N", "K", "BM", "BN", "BK", "WARPS", "GROUP_M")), lay)
            seen.setdefault(key, (r, run))
    return seen


def grid():
    """Every 1-stage tile configuration of bench/h200/measure_accuracy.py's gemm space (BM 16-256,
    BN 32-256, BK 32-128 (bf16) / 64-128 (fp8), 2/4/8 warps, at most 512 accumulator values a
    thread), at 4096^3: the k-loop does not depend on the shape (K, N and the strides are
    multiples of 16 in every issue-15 shape, the specialization Triton compiles for)."""
    out = {}
    for fam, lay, bks in (("gemm_bf16", "kn", (32, 64, 128)), ("gemm_fp8", "nk", (64, 128)),
                          ("gemm_fp8_kn", "kn", (64, 128))):
        for bm in (16, 32, 64, 128, 256):
            for bn in (32, 64, 128, 256):
                for bk in bks:
                    for w in (2, 4, 8):
                        if bm * bn // (32 * w) <= 512:
                            out[(fam, 4096, 4096, 4096, bm, bn, bk, w, 1, lay)] = (None, "")
    return out


def main():
    out = Path(sys.argv[1])
    runs = ["run%d" % i for i in range(1, 8)]
    if "--runs" in sys.argv:
        runs = sys.argv[sys.argv.index("--runs") + 1].split(",")
    (out / "sass").mkdir(parents=True, exist_ok=True)
    import measure_spill_sass as mss
    fields = ["family", "M", "N", "K", "BM", "BN", "BK", "WARPS", "GROUP_M", "layout", "regs_measured",
              "regs_compiled", "spills_measured", "spills_compiled", "ldg", "rounds", "loads_by_round", "mma",
              "measured_ms", "run"]
    name_csv = "rounds.csv" if "--family" not in sys.argv else f"rounds_{sys.argv[sys.argv.index('--family') + 1]}.csv"
    with open(out / name_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        todo = grid() if "--grid" in sys.argv else configs(runs)
        if "--family" in sys.argv:      # one family a process (the compiles are independent)
            todo = {k: v for k, v in todo.items() if k[0] == sys.argv[sys.argv.index("--family") + 1]}
        for key, (row, run) in sorted(todo.items()):
            fam, M, N, K, bm, bn, bk, warps, g, lay = key
            mss.WARPS = warps
            c = (fam, M, N, K, bm, bn, bk, 1, g, lay)
            _, regs, spills, _ = mss.compile_cpu(c)
            cub = os.path.join("/tmp", mss.name_of(c) + ".cubin")
            sass = mss.nvdisasm(cub)
            body = loop_body(sass)
            name = f"{fam}_{M}x{N}x{K}_{bm}x{bn}x{bk}_w{warps}_g{g}_{lay}"
            (out / "sass" / f"{name}.loop.sass").write_text("\n".join(body) + "\n")
            rs = rounds_of(body)
            n = max(rs) if rs else 0
            by = [rs.count(i) for i in range(1, n + 1)]
            mma = "HGMMA" if any("HGMMA" in t for t in body) else "HMMA"
            w.writerow(dict(family=fam, M=M, N=N, K=K, BM=bm, BN=bn, BK=bk, WARPS=warps, GROUP_M=g, layout=lay,
                            regs_measured=row.regs if row else "", regs_compiled=regs,
                            spills_measured=row.spills if row else "", spills_compiled=spills, ldg=len(rs),
                            rounds=n, loads_by_round="/".join(map(str, by)), mma=mma,
                            measured_ms=f"{row.measured_ms:.6g}" if row else "", run=run))
            f.flush()
            print(name, regs, row.regs if row else "-", len(rs), n, "/".join(map(str, by)), mma, flush=True)


if __name__ == "__main__" and "--emit" not in sys.argv:
    main()


def emit(paths) -> str:
    """tfx/analysis/triton_load_rounds.py from rounds CSVs: (bits, B K-major, BM, BN, BK, warps)
    -> rounds, for the configurations whose compiled frame is smaller than their registers
    (spills_compiled < regs_compiled): the non-spilling ones and the 255-register ones that spill
    a few long-lived words (32x256x128 bf16 on 2 warps: 40 words, the B tile's row pointers, each
    reloaded from local memory just before the LDG it addresses; its 72 loads a thread leave in 13
    dependent groups as in a non-spilling compile). The compiles whose frame reaches their
    registers (the 32-register ones, 924-6310 words, which wait on their local loads between
    groups: 15-60 "rounds"; the 4-8-warp ones at 255 registers with 256-744 words) take one round:
    their trip is tfx.analysis.spill_traffic's."""
    table = {}
    for path in paths:
        for r in csv.DictReader(open(path)):
            if int(r["spills_compiled"]) >= int(r["regs_compiled"]) or not int(r["rounds"]):
                continue
            key = (8 if r["family"].startswith("gemm_fp8") else 16, r["layout"] == "nk",
                   int(r["BM"]), int(r["BN"]), int(r["BK"]), int(r["WARPS"]))
            table[key] = int(r["rounds"])
    lines = ['"""The dependent load rounds of an unpipelined (1-stage) Triton 3.6.0 GEMM k-loop trip on sm_90,',
             "by tile configuration (tfx.analysis.load_rounds): (operand bits, B K-major, BM, BN, BK, warps) ->",
             "rounds. Written by `python3 bench/h200/unpipelined_rounds.py --emit CSV...` from the compiled SASS",
             "of calibration/h200/measured/unpipelined_rounds (configurations whose compiled spill frame is",
             'smaller than their registers)."""', "",
             "ROUNDS = {"]
    for key in sorted(table):
        lines.append(f"    {key!r}: {table[key]},")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__" and "--emit" in sys.argv:
    print(emit(sys.argv[sys.argv.index("--emit") + 1:]), end="")
