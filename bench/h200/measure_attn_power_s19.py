#!/usr/bin/env python3
"""H200: do the issue-15 flash-attention launches run at a power-limited clock, and does it differ by
configuration and by launch length? (issue 15, session 19, attn19)

Usage (on the device machine, from the repository root):
    PYTHONUNBUFFERED=1 APOWER_DEADLINE_S=95 python3 bench/h200/measure_attn_power_s19.py OUTDIR

Why: the 3-stage 4-warp tiles at 2-4 CTAs a SM (64 x 64 w4 s3, 128 x 32 w8 s3/s4 at D = 128) are
priced 6-12% fast on launches of 30-60 waves and within 2-5% on launches of 5-15 waves of the
same per-CTA work (full B8 H32 S4096 D128 64 x 64 w4 s3: 5,050.9 us, -9.3%; B1 H32 S4096: 565.0 us,
+4.1%), while 1-CTA-a-SM tiles (128 x 64 w8 s4) hold on both (docs/analysis.md, attn18's finding:
"what the long launches add is on the SM, not in L2"); a campaign row re-timed 18% faster
(run15's causal S32768 64 x 64 w4 s3: 11.63 -> 9.55 ms, measured/l2_attention) points at the
clock. A power limit binds harder the longer a launch runs without the gaps do_bench leaves
(its L2 clear between runs), and depends on the bits that toggle: the same launch on zeros draws
less power than on random data, a fixed clock runs both alike.

What it times: bench/h200/triton_kernels.py's flash_fwd_kernel (the campaigns' kernel) at D = 128,
full attention B8 H32 S4096 and B1 H32 S4096 (the same CTAs, 8x the launch; APOWER_CAUSAL=1 adds causal
B1 H16 S32768),
for 64x64 w4 s3, 64x64 w4 s2, 128x64 w8 s4, 128x32 w8 s3, each on random normal Q, K, V and on
zeros:
  * plain_ms: the campaigns' do_bench median (25 ms of runs, L2 cleared before each; at least
    ten runs for launches over 2.5 ms, as measure_accuracy.py's bench());
  * steady_ms, smi_sm_mhz, smi_power_w: the launch back to back for ~400 ms (no L2 clear), CUDA
    events over the whole stretch / launches, nvidia-smi sampled every 20 ms (clocks.sm,
    power.draw; medians of the samples after the first 100 ms).
Writes attn_power.csv and log.txt. A row that fails is written with its status; no row starts after
APOWER_DEADLINE_S seconds.
"""
import csv
import math
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import SmiSampler  # noqa: E402
T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("APOWER_DEADLINE_S", "95"))
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "log.txt"), "w")
LOG2E = 1.4426950408889634

SHAPES = [("full", 8, 32, 4096), ("full", 1, 32, 4096)]
if os.environ.get("APOWER_CAUSAL"):
    SHAPES.append(("causal", 1, 16, 32768))
CFGS = [(64, 64, 4, 3), (64, 64, 4, 2), (128, 64, 8, 4), (128, 32, 8, 3)]
D = 128


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


def main():
    import torch
    import triton
    from triton_kernels import flash_fwd_kernel
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    rows = []
    fields = ["causal", "B", "H", "S", "D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "data", "plain_ms", "steady_ms",
              "launches", "smi_sm_mhz", "smi_power_w", "smi_samples", "status"]
    for kind, B, H, S in SHAPES:
        gen = torch.Generator(device="cuda")
        gen.manual_seed(19)
        shape = (B * H, S, D)
        rnd = {n: torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen).to(torch.bfloat16)
               for n in "qkv"}
        zer = {n: torch.zeros(shape, device="cuda", dtype=torch.bfloat16) for n in "qkv"}
        o = torch.empty(shape, device="cuda", dtype=torch.bfloat16)
        lse = torch.empty((B * H, S), device="cuda", dtype=torch.float32)
        for bm, bn, w, st in CFGS:
            for data, bufs in (("random", rnd), ("zeros", zer)):
                row = dict(causal=int(kind == "causal"), B=B, H=H, S=S, D=D, BLOCK_M=bm, BLOCK_N=bn, WARPS=w,
                           STAGES=st, data=data, status="ok")
                if time.time() - T0 > DEADLINE_S:
                    row["status"] = "skipped (deadline)"
                    rows.append(row)
                    continue
                try:
                    grid = (math.ceil(S / bm), B * H)

                    def fn():
                        flash_fwd_kernel[grid](bufs["q"], bufs["k"], bufs["v"], o, lse, LOG2E / math.sqrt(D), S,
                                               D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=kind == "causal",
                                               num_warps=w, num_stages=st)
                    fn()
                    torch.cuda.synchronize()
                    ms = triton.testing.do_bench(fn, warmup=5, rep=25)
                    if ms > 2.5:
                        ms = triton.testing.do_bench(fn, warmup=5, rep=10 * ms)
                    row["plain_ms"] = round(ms, 5)
                    n = max(int(400 / ms), 3)
                    with SmiSampler() as smi:
                        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        e0.record()
                        for _ in range(n):
                            fn()
                        e1.record()
                        torch.cuda.synchronize()
                    row["steady_ms"] = round(e0.elapsed_time(e1) / n, 5)
                    row["launches"] = n
                    late = smi.late(after_s=0.1)
                    row["smi_samples"] = len(late)
                    if late:
                        row["smi_sm_mhz"] = statistics.median(s[1] for s in late)
                        row["smi_power_w"] = statistics.median(s[2] for s in late)
                except Exception as e:
                    row["status"] = f"error {type(e).__name__}: {str(e)[:120]}"
                    log(traceback.format_exc())
                log(row)
                rows.append(row)
        del rnd, zer, o, lse
        torch.cuda.empty_cache()
    with open(os.path.join(OUT, "attn_power.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        for r in rows:
            wr.writerow(r)
    log("total", round(time.time() - T0, 1), "s")


if __name__ == "__main__":
    main()
