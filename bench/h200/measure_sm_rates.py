#!/usr/bin/env python3
"""Which SMs draw DRAM faster, from how many bytes in flight an SM, and does the rest speed up once they end?

Usage (on the device machine; about a minute):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_sm_rates.py OUTDIR

Why (docs/analysis.md, "SMs that draw DRAM faster", session 43): in the filed decode timelines 24 SMs run a DRAM-bound
CTA in about 0.65-0.79 of the others' time where each SM holds 128-192 KB of copies in flight, and none stands out at
64-96 KB. A one-wave launch of equal CTAs then ends when the slower SMs do: at the balanced time if the DRAM's rate
the fast SMs leave goes to the rest, at up to 144 / 132 of it if it does not (each of 8 GPCs an equal share, two GPCs
of 12 SMs and six of 18). The decode kernels mix their stream with a serial chain; this kernel does nothing else:
each CTA streams its own 64 MB / r of a buffer (r CTAs an SM, one wave of 132 r) as the B tiles (64 x 128 bf16, 16 KB)
of an M = 16 product through Triton's cp.async pipeline (stages - 1 tiles in flight a CTA: r (stages - 1) x 16 KB an
SM, 16-192 KB), and stamps %globaltimer after every 1/16 of its stream. So the stamps give each SM's rate through
the run: before the fast SMs end, and after.

SM_RATES_CONFIGS="1,9,4;3,5,4" runs only those (r, stages, warps). Each launch's rows are written as it ends, so a
call cut short keeps the launches that ended.

Writes OUTDIR/stamps.csv (config, r, stages, warps, rep, pid, smid, chunk, t_ns: chunk -1 is the CTA's start, 0.. the
stamps after each chunk, relative to the launch's first start), OUTDIR/summary.csv (per launch: CTAs, regs, bytes,
makespan, the DRAM rate) and log.txt (the stdout).
"""
import os
import sys
import time
from collections import Counter

import triton
import triton.language as tl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from clock_stamps import globaltimer, smid  # noqa: E402  (bench/h200: the stamping scripts' helpers)
from common import Campaign  # noqa: E402  (bench/h200: the log and the row-at-a-time CSVs)

UNITS = 132
CTA_BYTES = 64 << 20           # a CTA's stream at r = 1 (64 MB / r at r CTAs an SM)
CHUNKS = 16                    # stamps a CTA
REPS = 2
BK, BN = 64, 128               # a tile: 64 x 128 bf16 = 16 KB
# (r CTAs an SM, stages, warps): r x (stages - 1) x 16 KB in flight an SM
CONFIGS = [(1, 2, 4), (1, 3, 4), (1, 5, 4), (1, 9, 4),
           (2, 2, 4), (2, 3, 4), (2, 5, 4),
           (3, 2, 4), (3, 3, 4), (3, 4, 4), (3, 5, 4),
           (4, 2, 4), (4, 3, 4), (4, 4, 4)]


@triton.jit
def stream_kernel(x_ptr, stamps_ptr, sink_ptr, chunk_iters, CHUNKS: tl.constexpr, BK: tl.constexpr,
                  BN: tl.constexpr):
    # B-operand tiles of an M = 16 product, as the small-M GEMMs and the decode kernels stream theirs: Triton's
    # cp.async pipeline keeps stages - 1 tiles in flight; the mma is a few cycles a tile
    pid = tl.program_id(axis=0)
    rk = tl.arange(0, BK)[:, None]
    rn = tl.arange(0, BN)[None, :]
    t0 = globaltimer(pid)
    sm = smid(pid)
    base = pid.to(tl.int64) * (CHUNKS * chunk_iters * BK * BN)
    a = tl.full([16, BK], 1.0, dtype=tl.bfloat16)
    acc = tl.zeros([16, BN], dtype=tl.float32)
    row_stamps = stamps_ptr + pid * (CHUNKS + 2)
    for c in range(CHUNKS):
        for i in range(chunk_iters):
            off = tl.multiple_of(base + (c * chunk_iters + i) * (BK * BN), BK * BN)
            x = tl.load(x_ptr + off + rk * BN + rn)
            acc = tl.dot(a, x, acc)
        t = globaltimer(tl.sum(tl.sum(acc, axis=1), axis=0))
        tl.store(row_stamps + 2 + c, t)
    tl.store(row_stamps, t0)
    tl.store(row_stamps + 1, sm.to(tl.int64))
    tl.store(sink_ptr + pid * BN + tl.arange(0, BN), tl.sum(acc, axis=0))


def main(out):
    import torch
    run = Campaign()
    run.open(out, "log.txt")
    say = run.log
    say("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name(0))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    x = torch.empty(UNITS * CTA_BYTES // 2, dtype=torch.bfloat16, device="cuda")
    x.fill_(1e-3)
    configs = CONFIGS
    if os.environ.get("SM_RATES_CONFIGS"):
        configs = [tuple(int(v) for v in c.split(",")) for c in os.environ["SM_RATES_CONFIGS"].split(";")]
    stamps_csv = run.csv("stamps.csv", ["config", "r", "stages", "warps", "rep", "pid", "smid", "chunk", "t_ns"])
    summary_csv = run.csv("summary.csv", ["config", "r", "stages", "warps", "rep", "ctas", "sms", "regs", "smem",
                                          "chunk_iters", "bytes", "inflight_sm_kb", "makespan_us", "tbps", "wall_ms",
                                          "most_per_sm", "sms_used"])
    for r, stages, warps in configs:
        ctas = UNITS * r
        chunk_iters = CTA_BYTES // r // (CHUNKS * BK * BN * 2)
        stamps = torch.zeros(ctas * (CHUNKS + 2), dtype=torch.int64, device="cuda")
        sink = torch.empty(ctas * BN, dtype=torch.float32, device="cuda")
        name = f"r{r}_s{stages}_w{warps}"
        try:
            k = stream_kernel[(ctas,)](x, stamps, sink, chunk_iters, CHUNKS=CHUNKS, BK=BK, BN=BN, num_warps=warps,
                                       num_stages=stages)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 (a config that does not compile or launch is logged, not fatal)
            say(name, "failed:", repr(e)[:300])
            continue
        regs, smem = k.n_regs, k.metadata.shared
        for rep in range(REPS):
            stamps.zero_()
            torch.cuda.synchronize()
            t = time.perf_counter()
            stream_kernel[(ctas,)](x, stamps, sink, chunk_iters, CHUNKS=CHUNKS, BK=BK, BN=BN, num_warps=warps,
                                   num_stages=stages)
            torch.cuda.synchronize()
            wall = time.perf_counter() - t
            s = stamps.view(ctas, CHUNKS + 2).cpu().tolist()
            t0 = min(row[0] for row in s)
            end = max(row[-1] for row in s)
            nbytes = ctas * CHUNKS * chunk_iters * BK * BN * 2
            for pid, row in enumerate(s):
                for c in range(-1, CHUNKS):     # -1: the CTA's start (slot 0); chunk c's stamp is slot 2 + c
                    stamps_csv.row(config=name, r=r, stages=stages, warps=warps, rep=rep, pid=pid, smid=row[1],
                                   chunk=c, t_ns=row[0 if c < 0 else 2 + c] - t0)
            per_sm = Counter(row[1] for row in s)
            rec = dict(config=name, r=r, stages=stages, warps=warps, rep=rep, ctas=ctas, sms=sms, regs=regs, smem=smem,
                       chunk_iters=chunk_iters, bytes=nbytes, inflight_sm_kb=r * (stages - 1) * BK * BN * 2 // 1024,
                       makespan_us=round((end - t0) / 1e3, 2), tbps=round(nbytes / (end - t0) / 1e3, 4),
                       wall_ms=round(wall * 1e3, 3), most_per_sm=max(per_sm.values()), sms_used=len(per_sm))
            summary_csv.row(**rec)
            say(rec)
    stamps_csv.close()
    summary_csv.close()
    run.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
