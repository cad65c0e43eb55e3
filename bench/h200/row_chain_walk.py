"""The compiled row kernels' dependent chain: one warp of the CTA walked through its SASS control
bits with its loaded data present (CPU only; docs/analysis.md 8 (af)).

    pip install triton==3.6.0
    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/measure_row_spill_sass.py rmsnorm,16384,1,4 ... > counts.jsonl
    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/row_chain_walk.py counts.jsonl > walk.csv

The binaries are bench/h200/triton_kernels.py's rmsnorm_kernel and softmax_kernel (the ones the
issue-15 campaigns time), compiled by Triton 3.6.0 for GPUTarget("cuda", 90, 32), num_stages 1,
as measure_row_spill_sass.py builds them. The kernels are loop-free, so the walk is the whole body
from its first instruction to EXIT, as lone_warp_walk.walk() walks the GEMM loop: an instruction
issues when every scoreboard in its wait mask is released, then holds the issue for its stall
count (bits 41-44 of the control word); a variable-latency instruction releases its write
scoreboard after its latency (the profile's [instruction_latency]: MUFU 17, SHFL 24, LDS 23
cycles; S2R / S2UR / CS2R / LDC 20 as row_sass_sim.py; BAR 20) and its read scoreboard 4 cycles
after issue. A global load releases its scoreboard at issue: the walk prices the compute a thread
runs after its data arrived, not the data's latency (the model's copy and latency parts hold
that). Spilling binaries are left out (their local loads' latency is not a compute chain).
Output: family,N,BLOCK_M,WARPS,regs,instructions,walk_cycles,stall_sum.
"""
import ast
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lone_warp_walk import decode, opcode  # noqa: E402

SASS = os.environ.get("ROW_SASS_DIR", "/tmp/row_spill_sass")
LAT = dict(MUFU=17, SHFL=24, LDS=23, BAR=20, S2R=20, S2UR=20, CS2R=20, LDC=20, ULDC=20)
FIXED_READ = 4


def walk(ins):
    """(cycles to EXIT, stall-count sum) of one warp through ``ins`` (decode()'s list)."""
    t, rel, stalls = 0, [0] * 6, 0
    for d in ins:
        waits = [rel[b] for b in range(6) if d["wait"] >> b & 1]
        if waits:
            t = max([t] + waits)
        base = opcode(d).split(".")[0]
        lat = 0 if base in ("LDG", "STG") else LAT.get(base, 20)
        if d["wbar"] < 6:
            rel[d["wbar"]] = max(rel[d["wbar"]], t + lat)
        if d["rbar"] < 6:
            rel[d["rbar"]] = max(rel[d["rbar"]], t + FIXED_READ)
        if base == "EXIT":
            break
        t += d["stall"]
        stalls += d["stall"]
    return t, stalls


if __name__ == "__main__":
    print("family,N,BLOCK_M,WARPS,regs,instructions,walk_cycles,stall_sum")
    for line in open(sys.argv[1]):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line) if line.startswith("{\"") else ast.literal_eval(line)
        if r["spills"]:
            continue
        ins = decode(open(os.path.join(SASS, f"{r['fam']}_{r['N']}_{r['bm']}_{r['w']}.sass")).read())
        cycles, stalls = walk(ins)
        print(f"{r['fam']},{r['N']},{r['bm']},{r['w']},{r['regs']},{r['instructions']},{cycles},{stalls}")
