#!/usr/bin/env python3
"""H200: how much of flash attention's K/V traffic DRAM serves, causal against full (issue 15).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_l2_attention.py OUTDIR

A physical fact for the L2-reuse model, not held-out rows. run15 (session 12) measured causal
B1 H16 S32768 D128 at 64x64 w4 s3 21% slower than the model, which counts 99.5% L2 hits on K and V;
the same tile on full attention at S = 32768 (run14) and on causal at S <= 16384 is priced within
10%. Causal CTAs have unequal lengths, so a wave's CTAs start at different times and read a head's
K/V blocks at different offsets: the L2 must hold every K/V block between the leading and the
trailing reader of each head in flight, not one lock-step window. Here Nsight Compute counts, for
causal and full launches of measure_accuracy.py's flash_fwd_kernel at S = 8192 .. 32768, the bytes
DRAM delivers and L2's read hit rate (default cache control, the second launch), beside do_bench's
median without the profiler.

Columns (l2_attention.csv): causal, B, H, S, D, BLOCK_M, BLOCK_N, WARPS, STAGES, measured_ms, ncu_ms,
dram_read_bytes, l2_read_sectors, l2_read_hit_pct, min_bytes (Q + K + V read once), dram_over_min,
status. ncu_raw.txt: ncu's CSV of every child.
"""
import csv
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import bench_job  # noqa: E402

from measure_l2_groupm import METRICS, find_ncu, parse_ncu  # noqa: E402

# (causal, B, H, S, D, BLOCK_M, BLOCK_N, WARPS, STAGES)
CONFIGS = [
    (1, 1, 16, 32768, 128, 64, 64, 4, 3), (1, 1, 16, 32768, 128, 128, 64, 8, 4),
    (1, 1, 16, 32768, 128, 64, 32, 4, 2), (1, 1, 16, 32768, 128, 128, 32, 4, 3),
    (0, 1, 16, 32768, 128, 64, 64, 4, 3),
    (1, 1, 16, 16384, 128, 64, 64, 4, 3), (1, 1, 16, 8192, 128, 64, 64, 4, 3),
    (1, 1, 16, 32768, 64, 64, 64, 4, 3),
]
COLUMNS = ["causal", "B", "H", "S", "D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "measured_ms", "ncu_ms",
           "dram_read_bytes", "l2_read_sectors", "l2_read_hit_pct", "min_bytes", "dram_over_min", "status"]


def job_of(cfg):
    causal, B, H, S, D, BM, BN, W, ST = cfg
    p = dict(B=B, H=H, S=S, D=D, BLOCK_M=BM, BLOCK_N=BN, WARPS=W, STAGES=ST)
    fam, tile = ("attention_causal", "kernels/flash_prefill.tile") if causal else \
        ("attention_full", "kernels/flash_attention.tile")
    return ("attention.csv", fam, tile, "x", 0, f"B{B} H{H} S{S} D{D}", p)


def run_one(cfg):
    """Child: launch the configuration twice (ncu profiles the second)."""
    from common import launch_twice
    launch_twice(job_of(cfg))


def main():
    if "--one" in sys.argv:
        a = sys.argv[sys.argv.index("--one") + 1:]
        run_one(tuple(map(int, a)))
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    import torch
    ncu = find_ncu()
    print(f"ncu: {ncu}; torch {torch.__version__}; {torch.cuda.get_device_name()}", flush=True)
    raw = open(os.path.join(out, "ncu_raw.txt"), "w")
    with open(os.path.join(out, "l2_attention.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for cfg in CONFIGS:
            causal, B, H, S, D, BM, BN, W, ST = cfg
            row = dict(causal=causal, B=B, H=H, S=S, D=D, BLOCK_M=BM, BLOCK_N=BN, WARPS=W, STAGES=ST,
                       min_bytes=3 * B * H * S * D * 2, status="ok")
            try:
                job = job_of(cfg)
                row["measured_ms"] = f"{bench_job(job):.5f}"
                if ncu:
                    cmd = [ncu, "--csv", "--page", "raw", "--metrics", ",".join(METRICS), "-k",
                           "regex:flash_fwd_kernel", "--launch-skip", "1", "--launch-count", "1",
                           sys.executable, os.path.abspath(__file__), "--one"] + [str(v) for v in cfg]
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=150, cwd=HERE)
                    raw.write(f"### {cfg}\n{r.stdout}\n{r.stderr[-2000:]}\n")
                    m = parse_ncu(r.stdout)
                    if m:
                        row["ncu_ms"] = f"{m.get('gpu__time_duration.sum', 0):.5f}"
                        row["dram_read_bytes"] = int(m.get("dram__bytes_read.sum", 0))
                        row["l2_read_sectors"] = int(m.get("lts__t_sectors_op_read.sum", 0))
                        row["l2_read_hit_pct"] = f"{m.get('lts__t_sector_op_read_hit_rate.pct', 0):.2f}"
                        row["dram_over_min"] = f"{row['dram_read_bytes'] / row['min_bytes']:.3f}"
                    else:
                        row["status"] = "ncu-failed"
                else:
                    row["status"] = "no-ncu"
            except Exception as e:  # a failed configuration is a row, not the end of the campaign
                row["status"] = f"error: {type(e).__name__}: {str(e)[:200]}"
            w.writerow([row.get(c, "") for c in COLUMNS])
            f.flush()
            print(f"[{time.time() - t0:7.1f}s] {cfg}: {row}", flush=True)
    raw.close()


if __name__ == "__main__":
    main()
