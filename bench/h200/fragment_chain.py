#!/usr/bin/env python3
"""The dependent ldmatrix -> mma chain of a pipelined warp-mma Triton GEMM k-loop trip.

Usage (no GPU; Triton 3.6.0 with its ptxas and nvdisasm, e.g. a venv with triton==3.6.0):
    python3 bench/h200/fragment_chain.py OUTDIR [--warps 2,4,8] [--part i/n]   # the tile space
    python3 bench/h200/fragment_chain.py --emit OUTDIR/chain*.csv               # the table

At 2 warps, BK = 32 and 3+ stages ptxas loads every n-tile's B fragment into one register
quad (LDSM.16.MT88.4 R56) and runs that n-tile's two k-steps right after it (HMMA R16, R48,
R56, R16; HMMA R16, R44, R58, R16); the next n-tile's LDSM into R56 is issued after them
(calibration/h200/measured/stream_depth/matmul_16x128x32_w2_s5.loop.sass). A warp issues in
order, so the trip is a chain of (ldmatrix latency + mma latency) links, one per n-tile.

This script compiles the issue-15 `matmul_kernel` (bench/h200/triton_kernels.py, B [K, N] as
the gemm_bf16 rows) for sm_90 at every multi-stage (2-5) bf16 tile configuration of the space
that takes the warp mma (mma.sync: 2 warps, or BM < 64 on 4 and 8 warps) with
measure_spill_sass.py's `compile_cpu`, and walks the k-loop body (unpipelined_rounds.loop_body)
as one warp issues it: in order, each instruction waiting for the registers it reads (an LDSM's
result after the ldmatrix latency L, an HMMA's after the mma latency M; other instructions are
taken as free, and the stage barriers as already satisfied: the chain alone). Three trips are
walked (the accumulators and fragments carry over); the third trip's span is the steady trip's
chain, kept as the counts of L and M on its critical path (`ldsm`, `mma`): the chain is
ldsm x L + mma x M cycles for whatever latencies the hardware profile states. The walk uses
L = 34, M = 24 cycles to choose the critical path (hw_profiles/h200_sxm.toml
instruction_latency: ldmatrix, calibration/h200/measured/ldsm_latency, and mma_sync; a path's
counts, not these values, are stored).

    python3 bench/h200/fragment_chain.py --rewalk OUTDIR    # walk OUTDIR/sass/ again (no compile)

Columns: BM, BN, BK, WARPS, STAGES, regs, spills, hmma, ldsm_insts (LDSM in the body),
ldsm, mma (the critical path's counts), chain_cycles (at L = 34, M = 24), issue_cycles (HMMA x 6,
a sub-partition's f16 mma issue: hw_profiles warp_mma.f16_mma_cycles), mma_op (HMMA or HGMMA).
"""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

L_REF, M_REF = 34, 24           # cycles: only to pick the critical path; the counts are stored
WIDTH = {"LDSM": {".4": 4, ".2": 2, "": 1}}


def _regs(text):
    return [int(r) for r in re.findall(r"\bR(\d+)\b", text)]


def parse(line):
    """(op, destination registers, source registers) of an LDSM or HMMA, else (op, set(), set())."""
    text = re.sub(r"^@!?U?P\w+\s+", "", line)
    op = text.split()[0] if text.split() else ""
    regs = _regs(text[len(op):])
    if op.startswith("LDSM"):
        w = 4 if op.endswith(".4") else 2 if op.endswith(".2") else 1
        return "LDSM", set(range(regs[0], regs[0] + w)), set(regs[1:])
    if op.startswith("HMMA"):
        # HMMA.16816.F32.BF16 D, A, B, C: D and C 4 registers, A 4, B 2
        d, a, b, c = regs[:4]
        return "HMMA", set(range(d, d + 4)), set(range(a, a + 4)) | {b, b + 1} | set(range(c, c + 4))
    return op, set(), set(regs)


def chain(body, trips=3, lat=(L_REF, M_REF)):
    """Walk ``trips`` trips of the loop body in issue order (module docstring): the steady
    trip's span as (cycles, ldsm count, mma count) of its critical path."""
    L, M = lat
    ready = {}                       # register -> (cycle, n_ldsm, n_mma) its value is ready
    t = (0, 0, 0)                    # the issue point: (cycle, n_ldsm, n_mma) of its critical path
    marks = []
    parsed = [parse(x) for x in body]
    for _ in range(trips):
        marks.append(t)
        for op, dst, src in parsed:
            if op not in ("LDSM", "HMMA"):
                continue
            for r in src:
                if r in ready and ready[r][0] > t[0]:
                    t = ready[r]
            done = (t[0] + L, t[1] + 1, t[2]) if op == "LDSM" else (t[0] + M, t[1], t[2] + 1)
            for r in dst:
                ready[r] = done
    marks.append(t)
    a, b = marks[-2], marks[-1]
    return b[0] - a[0], b[1] - a[1], b[2] - a[2]


def space(warps_list):
    """Every multi-stage bf16 tile configuration of bench/h200/measure_accuracy.py's gemm space
    that takes the warp mma (2 warps, or BM < 64), at most 128 accumulator values a thread (256 or
    more do not fit beside the fragments in 255 registers: those compiles spill, and the table
    keeps non-spilling ones only) and within the 227 KiB of shared memory a CTA may take."""
    out = []
    for w in warps_list:
        for bm in (16, 32, 64, 128, 256):
            if w > 2 and bm >= 64:
                continue
            for bn in (32, 64, 128, 256):
                if bm * bn // (32 * w) > 128:
                    continue        # 256+ f32 accumulators a thread: spills past 255 registers
                for bk in (32, 64, 128):
                    for st in (2, 3, 4, 5):
                        if st * (bm * bk + bk * bn) * 2 > 232448:
                            continue
                        out.append((bm, bn, bk, w, st))
    return out


def main():
    import measure_spill_sass as mss
    from unpipelined_rounds import loop_body
    out = Path(sys.argv[1])
    warps = [2, 4, 8]
    if "--warps" in sys.argv:
        warps = [int(x) for x in sys.argv[sys.argv.index("--warps") + 1].split(",")]
    todo = space(warps)
    part = ""
    if "--part" in sys.argv:
        i, n = map(int, sys.argv[sys.argv.index("--part") + 1].split("/"))
        todo, part = todo[i::n], f"_{i}of{n}"
    (out / "sass").mkdir(parents=True, exist_ok=True)
    fields = ["BM", "BN", "BK", "WARPS", "STAGES", "regs", "spills", "hmma", "ldsm_insts", "ldsm", "mma",
              "chain_cycles", "issue_cycles", "mma_op"]
    path = out / f"chain_w{'_'.join(map(str, warps))}{part}.csv"
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        for bm, bn, bk, w, st in todo:
            c = ("gemm_bf16", 4096, 4096, 4096, bm, bn, bk, st, 1, "kn")
            try:
                regs, spills, sass = mss.disassemble_cpu(c, w)
            except Exception as exc:           # noqa: BLE001 (out of shared memory, ...)
                print("skip", c, repr(exc)[:120], flush=True)
                continue
            body = loop_body(sass)
            name = f"bf16_{bm}x{bn}x{bk}_w{w}_s{st}"
            (out / "sass" / f"{name}.loop.sass").write_text("\n".join(body) + "\n")
            hmma = sum(1 for x in body if parse(x)[0] == "HMMA")
            mma_op = "HGMMA" if any("HGMMA" in x for x in body) else "HMMA"
            cyc, nl, nm = chain(body) if mma_op == "HMMA" else (0, 0, 0)
            wr.writerow(dict(BM=bm, BN=bn, BK=bk, WARPS=w, STAGES=st, regs=regs, spills=spills, hmma=hmma,
                             ldsm_insts=sum(1 for x in body if parse(x)[0] == "LDSM"), ldsm=nl, mma=nm,
                             chain_cycles=cyc, issue_cycles=hmma * 6, mma_op=mma_op))
            f.flush()
            print(name, regs, spills, hmma, nl, nm, cyc, hmma * 6, mma_op, flush=True)


def rewalk(out: Path):
    """The chain columns of OUTDIR's CSVs walked again from OUTDIR/sass/ (the latencies above)."""
    for path in sorted(out.glob("chain_w*.csv")):
        rows = list(csv.DictReader(open(path)))
        for r in rows:
            body = [x for x in (out / "sass" / f"bf16_{r['BM']}x{r['BN']}x{r['BK']}_w{r['WARPS']}_s{r['STAGES']}"
                                                 ".loop.sass").read_text().splitlines() if x.strip()]
            if r["mma_op"] == "HMMA":
                r["chain_cycles"], r["ldsm"], r["mma"] = chain(body)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


def emit(paths) -> str:
    """tfx/analysis/triton_fragment_chain.py from chain CSVs: (BM, BN, BK, warps, stages) ->
    (ldmatrix latencies, mma latencies) on the trip's critical path, for the non-spilling warp-mma
    compiles whose chain is longer than their mma issue (the others' trips are priced as before)."""
    table = {}
    for path in paths:
        for r in csv.DictReader(open(path)):
            if r["mma_op"] != "HMMA" or int(r["spills"]) or int(r["chain_cycles"]) <= int(r["issue_cycles"]):
                continue
            table[tuple(int(r[k]) for k in ("BM", "BN", "BK", "WARPS", "STAGES"))] = (int(r["ldsm"]), int(r["mma"]))
    lines = ['"""The dependent ldmatrix -> mma chain of a pipelined bf16 warp-mma Triton 3.6.0 GEMM k-loop trip',
             "on sm_90 (tfx.analysis.fragment_chain): (BM, BN, BK, warps, stages) -> (ldmatrix latencies, mma",
             "latencies) on one warp's critical path a trip. Written by `python3 bench/h200/fragment_chain.py",
             "--emit CSV...` from the compiled SASS of calibration/h200/measured/fragment_chain: the",
             "configurations (B [K, N], no spills) whose chain at L = 34, M = 24 cycles outlasts their mma",
             'issue (HMMA x 6 cycles)."""', "", "CHAIN = {"]
    for key in sorted(table):
        lines.append(f"    {key!r}: {table[key]!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if "--emit" in sys.argv:
        print(emit(sys.argv[sys.argv.index("--emit") + 1:]), end="")
    elif "--rewalk" in sys.argv:
        rewalk(Path(sys.argv[sys.argv.index("--rewalk") + 1]))
    else:
        main()
