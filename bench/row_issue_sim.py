#!/usr/bin/env python3
"""In-order issue simulation of one SM running r lock-step CTAs of a compiled row kernel (CPU only;
docs/analysis.md 8 (z)). A finding tool, not a model term: it asks whether the one-wave row launches
the model prices fast lose their time in the compute phase.

    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/measure_row_spill_sass.py softmax,2048,8,16 ...  # Triton 3.6.0 venv
    python3 bench/row_issue_sim.py /tmp/row_sass/softmax_2048_8_16.sass R WARPS

What it simulates, from the SASS's control bits (sm_90: the second 64-bit word of each instruction:
stall count bits 41-44, write scoreboard 46-48, read scoreboard 49-51, wait mask 52-57; 7 = none):
four schedulers (warp g on scheduler g mod 4), each issuing one warp instruction a cycle from its
ready warps in loose round robin; a warp's next instruction waits its stall count and the
scoreboards its wait mask names; a variable-latency instruction releases its write scoreboard after
its latency: LDS and SHFL 23 cycles (the profile's smem_load), MUFU 17 (ex2), S2R / LDC 20, the row
tile's LDGs (those before the first SHFL) 0 (their data is there when the compute phase starts: the
load phase is priced apart), the later LDGs (rmsnorm's weight row, an L2 hit) L2LAT (argument 4,
520 cycles); a read scoreboard 4 cycles; BAR.SYNC holds a warp until every warp of its CTA has
arrived, then 20 cycles; MUFU takes its scheduler's 4 SFU lanes 8 cycles a warp instruction, SHFL
the SM's shuffle unit one cycle. It prints the cycles until every warp has exited (prologue, compute
and the store instructions' issue), and ns at 1.98 GHz.

Measured against (session 20): the 59 one-wave non-spilling rows of the issue-15 campaigns with a
lock-step line, graph time - (predicted - launch): simulated - priced compute phase -2.0..+1.7 us,
correlation 0.36 with the rows' excess (softmax 1024 x 2048 (8, 16) at one CTA a SM +0.39 us where the
row is +2.26 us, its (1, 8) at eight CTAs a SM +0.45 where the row is +0.09)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tfx.hw.units import format_counted, format_time_ns  # noqa: E402

STALL, WB, RB, WAIT = (41, 0xF), (46, 7), (49, 7), (52, 0x3F)
INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s+/\* (0x[0-9a-f]{16}) \*/")
HIGH = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")


def field(word, spec):
    shift, mask = spec
    return (word >> shift) & mask


def parse(path):
    """(text, control word) of each instruction of a cuobjdump -sass listing (two lines a
    128-bit instruction: the text with the low word, then the high word)."""
    lines = open(path).read().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = INSTR.search(lines[i])
        if m:
            out.append((m.group(2).strip(), int(HIGH.search(lines[i + 1]).group(1), 16)))
            i += 2
        else:
            i += 1
    return out


def latency(op, late_ldg, l2_latency):
    if op.startswith("LDG"):
        return l2_latency if late_ldg else 0
    if op.startswith(("LDS", "SHFL")):
        return 23
    if op.startswith("MUFU"):
        return 17
    if op.startswith(("S2R", "LDC", "S2UR", "CS2R")):
        return 20
    if op.startswith(("STS", "STG", "BAR")):
        return 4
    return 6


def program(path):
    prog, seen_shfl = [], False
    for text, hi in parse(path):
        pred = None
        if text.startswith("@"):
            pred, text = text.split(" ", 1)
        op = text.split()[0]
        seen_shfl = seen_shfl or op.startswith("SHFL")
        prog.append(dict(op=op, pred=pred, stall=field(hi, STALL), wb=field(hi, WB), rb=field(hi, RB),
                         wait=field(hi, WAIT), late=op.startswith("LDG") and seen_shfl))
    return prog


def simulate(path, r, warps, l2_latency=520):
    """Cycles until the r CTAs of ``warps`` warps on one SM have all exited."""
    prog = program(path)
    n = r * warps
    pc, ready, done, atbar = [0] * n, [0] * n, [False] * n, [False] * n
    sb = [[0] * 6 for _ in range(n)]
    arrived: dict = {}
    mufu_free, shfl_free, last = [0] * 4, 0, [0] * 4
    t = 0
    while not all(done):
        for s in range(4):
            cands = sorted((g for g in range(s, n, 4) if not done[g] and not atbar[g] and ready[g] <= t),
                           key=lambda g: (g - last[s] - 1) % n)
            for g in cands:
                ins = prog[pc[g]]
                if any(sb[g][k] > t for k in range(6) if ins["wait"] >> k & 1):
                    continue
                op = ins["op"]
                if (op.startswith("MUFU") and mufu_free[s] > t) or (op.startswith("SHFL") and shfl_free > t):
                    continue
                if op.startswith("MUFU"):
                    mufu_free[s] = t + 8
                if op.startswith("SHFL"):
                    shfl_free = t + 1
                if ins["wb"] != 7:
                    sb[g][ins["wb"]] = t + latency(op, ins["late"], l2_latency)
                if ins["rb"] != 7:
                    sb[g][ins["rb"]] = t + 4
                ready[g] = t + max(ins["stall"], 1)
                pc[g] += 1
                last[s] = g
                if op == "EXIT" and ins["pred"] is None:
                    done[g] = True
                elif op.startswith("BAR"):
                    cta = g // warps
                    atbar[g] = True
                    arrived.setdefault(cta, []).append(g)
                    if len(arrived[cta]) == warps:
                        for h in arrived[cta]:
                            atbar[h] = False
                            ready[h] = max(ready[h], t + 20)
                        arrived[cta] = []
                elif pc[g] >= len(prog):
                    done[g] = True
                break
        t += 1
        if t > 10 ** 6:
            raise RuntimeError("no warp can issue: a barrier the simulation does not release")
    return t


if __name__ == "__main__":
    path, r, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    cycles = simulate(path, r, w, int(sys.argv[4]) if len(sys.argv) > 4 else 520)
    print(f"{path}, {format_counted(r, 'CTA')} of {format_counted(w, 'warp')}: {format_counted(cycles, 'cycle')} = "
          f"{format_time_ns(cycles / 1.98)} at 1.98 GHz")
