#!/usr/bin/env python3
"""The compiled softmax's exp phase: the exps a thread keeps in flight and the phase's in-order walk.

    pip install triton==3.6.0
    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/row_exp_phase.py [N,BLOCK_M,WARPS ...] > exp_phase.csv
    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/row_exp_phase.py --emit     # row_body.EXP_PHASE_WALK

CPU only. The binaries are bench/h200/triton_kernels.py's softmax_kernel, the one the issue-15 campaigns
time, compiled as measure_row_spill_sass.build compiles them (Triton 3.6.0, sm_90, num_stages 1; through
row_sass_sim.sass_of, reused from ROW_SASS_DIR where there). Without configurations: every one the campaigns
draw (N 1,024..32,768, BLOCK_M and WARPS 1..16) with at most 256 elements a thread (BLOCK_M x N / (32 x
WARPS): every binary beyond spills, calibration/h200/measured/row_sass_counts/counts.csv, and ptxas takes
minutes on them); a configuration whose binary spills (STL) gets no walk.

What the SASS shows (calibration/h100/measured/row_chain_r, docs/analysis.md "The exp phase's compiled
walk"): `tl.exp` compiles to FADD x - max, FMUL by log2 e, FSETP x < -126 into a predicate, a FMUL by
0.5 on that predicate, MUFU.EX2, and a FMUL squaring the result on the same predicate (ex2.approx.f32
keeps subnormal results). The next element that takes the same predicate register can only set it
after the square has read it, so after the MUFU's result: ptxas gives a thread's exps one predicate
at one to four rows a thread on most tiles, and two or three where the rows' masks leave more free.
A warp issues in order, so while it waits for one exp it issues none of the later instructions: the
exps in flight are not free chains either. The walk prices both.

Columns:
- exps_in_flight: the distinct predicate registers the exps' range checks (FSETP ... -126) write;
- deepest_run: the most exps issued before the first one's result is read (the same where the
  schedule uses every predicate);
- walk_cycles: row_sass_sim.py's in-order scheduler (one instruction a cycle, the profile's measured
  latencies fma 4, ex2 17, shfl_sync 24, smem_load 23, bar_sync 20 cycles, the SFU 8 cycles a warp's
  MUFU) walking max(WARPS / 4, 1) warps of one CTA from the FADD that feeds the first exp to the instruction that
  reads the last exp's result, every register ready at the start, plus that instruction's 4 cycles.
"""
import os
import re
import sys
from multiprocessing import Pool

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("ROW_SASS_DIR", "/tmp/row_sass")

import row_sass_sim as S  # noqa: E402

NS = (1024, 2048, 4096, 8192, 16384, 32768)
TILES = (1, 2, 4, 8, 16)


def exps_in_flight(text):
    """(distinct predicates of the exps' range checks, deepest run of exps issued before the first
    one's result is read)."""
    preds = set()
    pending = []        # destination registers of exps whose result no later instruction read yet
    deepest = 0
    for b, op, srcs, dests, _ in S.decode(text):
        if op == "MUFU.EX2":
            pending = [p for p in pending if p not in srcs]
            pending.append(dests[0])
            deepest = max(deepest, len(pending))
            continue
        pending = [p for p in pending if p not in srcs and p not in dests]
    for m in re.finditer(r"FSETP\.\w+(?:\.\w+)*\s+(P\d)\s*,[^;]*-126", text):
        preds.add(m.group(1))
    return len(preds), deepest


def walk_cycles(text, warps):
    """Cycles the CTA's warps / 4 warps of one scheduler take, in order, from the FADD that feeds the
    first exp to the instruction that reads the last exp's result (module docstring)."""
    prog = S.decode(text)
    ex = [i for i, p in enumerate(prog) if p[1] == "MUFU.EX2"]
    if not ex:
        return None
    # back from the first exp through the instructions that produce its operand, to its FADD
    start, need = ex[0], set(prog[ex[0]][2])
    for i in range(ex[0] - 1, max(ex[0] - 16, -1), -1):
        if need & set(prog[i][3]):
            need |= set(prog[i][2])
            start = i
            if prog[i][0] == "FADD":
                break
    last = prog[ex[-1]][3]
    end = next(i for i in range(ex[-1] + 1, len(prog)) if set(last) & set(prog[i][2]))
    ns = S.scheduler(prog[start:end + 1], max(warps // 4, 1), 1, 0, lone=True)
    return round(ns * S.CLK) + S.LAT["fma"]


def one(cfg):
    n, bm, w = cfg
    text = S.sass_of("softmax", n, bm, w)
    spilled = re.search(r"\bSTL\b", text) is not None
    k, deepest = exps_in_flight(text)
    return cfg, k, deepest, spilled, (None if spilled else walk_cycles(text, w))


def main(argv):
    emit = "--emit" in argv
    cfgs = [tuple(int(x) for x in a.split(",")) for a in argv if a != "--emit"]
    if not cfgs:
        cfgs = [(n, bm, w) for n in NS for bm in TILES for w in TILES if bm * n // (32 * w) <= 256]
    with Pool(2) as p:
        res = sorted(p.map(one, cfgs))
    if emit:
        items = [f'("softmax", {n}, {bm}, {w}): {c}' for (n, bm, w), _, _, _, c in res if c is not None]
        line = "   "
        for it in items:
            if len(line) + len(it) + 2 > 112:
                print(line.rstrip())
                line = "   "
            line += " " + it + ","
        print(line.rstrip())
        return 0
    print("N,BLOCK_M,WARPS,exps_in_flight,deepest_run,spills,walk_cycles")
    for (n, bm, w), k, deepest, spilled, c in res:
        print(f"{n},{bm},{w},{k},{deepest},{int(spilled)},{'' if c is None else c}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
