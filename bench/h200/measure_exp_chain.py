#!/usr/bin/env python3
"""The latency of the exp the campaigns' Triton kernels run, as one dependent chain (cycles a step).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_exp_chain.py OUTDIR

Why (calibration/h100/measured/row_chain_r, docs/analysis.md "The exp phase's compiled walk"): the in-order walk of
the compiled softmax's exp phase at the profile's latencies (MUFU.EX2 17 cycles, from an ex2.approx chain in CUDA:
calibration/h200/measured/latency) is 0.61-0.71 of the measured phase; with 30 cycles for the exp it lands within
+-7%. This measures, with the code Triton 3.6.0 emits, one warp running STEPS dependent steps (fully unrolled,
%clock64 before and after, median of 5 launches after a warm-up):

    exp      x = exp(-x)                  tl.exp: FMUL by -log2 e, FSETP, FMUL by 0.5 on it, MUFU.EX2, FMUL square
    exp2     x = exp2(-x)                 tl.exp2
    ex2ftz   x = ex2.approx.ftz.f32(-x)   inline asm: the MUFU alone (and the negation)
    fma      x = x * 0.999 + 0.001        FFMA: the fixed-latency baseline

and the SASS of each step (instruction counts), so cycles a step split into the instructions of its chain.
Writes exp_chain.csv and log.txt.
"""
import statistics
import sys

import torch
import triton
import triton.language as tl

from clock_stamps import clock64 as _clock, sass_opcodes
from common import Campaign, write_rows

STEPS = 256
OUT = sys.argv[1] if len(sys.argv) > 1 else "exp_chain_out"
RUN = Campaign(stamp="[{:6.1f}s] ", nvsmi_fields="name,clocks.sm,clocks.max.sm")
log = RUN.log


@triton.jit
def chain(X, Y, T, STEPS: tl.constexpr, MODE: tl.constexpr):
    lane = tl.arange(0, 32)
    x = tl.load(X + lane)
    c0 = _clock(x)
    for _ in tl.static_range(STEPS):
        if MODE == 0:
            x = tl.exp(-x)
        elif MODE == 1:
            x = tl.exp2(-x)
        elif MODE == 2:
            x = tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [-x], dtype=tl.float32,
                                          is_pure=True, pack=1)
        else:
            x = x * 0.999 + 0.001
    c1 = _clock(x)
    tl.store(Y + lane, x)
    tl.store(T + lane * 0, c1 - c0, mask=lane == 0)


MODES = ("exp", "exp2", "ex2ftz", "fma")


def main():
    RUN.open(OUT, "log.txt")
    log("torch", torch.__version__, "triton", triton.__version__, "device", torch.cuda.get_device_name(0))
    RUN.nvsmi()
    X = torch.full((32,), 0.5, device="cuda")
    Y = torch.empty(32, device="cuda")
    T = torch.zeros(32, device="cuda", dtype=torch.int64)
    rows = []
    for mode, name in enumerate(MODES):
        k = chain[(1,)](X, Y, T, STEPS=STEPS, MODE=mode, num_warps=1)
        torch.cuda.synchronize()
        runs = []
        for _ in range(5):
            chain[(1,)](X, Y, T, STEPS=STEPS, MODE=mode, num_warps=1)
            torch.cuda.synchronize()
            runs.append(int(T[0].item()))
        ops = sass_opcodes(k)
        per_step = {o: round(c / STEPS, 2) for o, c in ops.items() if c >= STEPS // 2}
        row = {"mode": name, "steps": STEPS, "cycles": statistics.median(runs),
               "cycles_per_step": round(statistics.median(runs) / STEPS, 2), "value": float(Y[0].item()),
               "sass_per_step": " ".join(f"{o}:{c}" for o, c in sorted(per_step.items()))}
        rows.append(row)
        log(name, row["cycles_per_step"], "cycles a step;", row["sass_per_step"], "; x =", row["value"])
    write_rows(f"{OUT}/exp_chain.csv", rows)
    log(f"done in {RUN.elapsed():.0f}s")


if __name__ == "__main__":
    main()
