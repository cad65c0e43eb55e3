#!/usr/bin/env python3
"""Which L2 ceiling binds: the SMs' requests or the slices' sectors? (session 61, issue 15)

    PYTHONUNBUFFERED=1 python3 bench/h200/measure_lrc_s61.py OUTDIR      # bash bench/h200/run_s61.sh

docs/analysis.md ("The 64x256 GROUP_M = 8 tiles past the request rate", session 60): the 64x256 G8 launches
deliver 12.1-13.1 TB/s of copies to the SMs while the slices serve 7.6-8.8 TB/s, 45-49% of the copies merged
before them by the L2 Request Coalescer (lrc_s23); the model prices every request at 11 TB/s, read from the
8192^3 G8 references (which merge 0.25). Pricing the slices' sectors instead at 11 x 0.75 = 8.25 TB/s made the
row kernels slow (rmsnorm: its weight row re-read by every CTA, requests at 1 / 0.75 the time): "what neither
form has is a rate for the unmerged requests that holds for a stream with no co-reader and a grouped tile alike".
This counts, per launch, what the SMs asked for, what the LRC merged, what the slices served and filled from
DRAM, with the launch's time under ncu at the boost clock (--clock-control none) beside do_bench's median of the
same launch without the profiler:

  row kernels (their weight row re-read by every CTA, or none for softmax) at the sizes the campaigns price
  L2-bound, the two 8192^3 G8 references of memory.l2.bandwidth, the 64x256x64 G8 / G1 twins at 2560x8192x8192
  (l2_groupm_s18's), and 128x256x64 G1 (+12.2% in the campaigns, the other slow class).

Each launch is profiled once (the second launch of a child process: the first compiles); ncu's cache control
flushes the L2 before each replay pass, as do_bench clears it. Writes OUTDIR/lrc_s61.csv (one row a launch:
its parameters, do_bench ms, ncu ms and one column per metric, empty where ncu does not know it),
OUTDIR/ncu_raw.txt (ncu's CSV of every child) and prints a line a launch.
"""
import csv
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import bench_job, ncu_last_row  # noqa: E402

# (kind, params): rows = (family, M, N, BLOCK_M, WARPS); gemm = (M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M)
CONFIGS = [
    ("rows", ("rmsnorm", 16384, 8192, 1, 8)),
    ("rows", ("rmsnorm", 32768, 4096, 2, 4)),
    ("rows", ("rmsnorm", 65536, 2048, 4, 4)),
    ("rows", ("rmsnorm", 131072, 1024, 8, 4)),
    ("rows", ("softmax", 16384, 8192, 1, 8)),
    ("rows", ("softmax", 65536, 2048, 4, 4)),
    ("gemm", (2560, 8192, 8192, 64, 256, 64, 4, 5, 8)),
    ("gemm", (2560, 8192, 8192, 64, 256, 64, 4, 5, 1)),
    ("gemm", (2560, 8192, 8192, 64, 256, 32, 8, 3, 8)),
    ("gemm", (8192, 8192, 8192, 64, 64, 64, 4, 4, 8)),
    ("gemm", (8192, 8192, 8192, 128, 128, 64, 4, 3, 8)),
    ("gemm", (2560, 8192, 8192, 128, 256, 64, 8, 3, 1)),
]

METRICS = [
    "gpu__time_duration.sum",
    "l1tex__m_xbar2l1tex_read_sectors.sum",                 # sectors the SMs received
    "lts__t_sectors_srcunit_tex_op_read.sum",               # sectors the slices served the SMs
    "lts__t_requests_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_ltcfabric.sum",                 # far-partition fills
    "lts__t_sector_op_read_hit_rate.pct",
    "dram__bytes_read.sum",
    "lrc__request_sectors_op_read_coalescable.sum",
    "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum",
    "lrc__lts2lrc_sectors_op_read.sum",
    "lrc__lrc2xbar_sectors_op_read.sum",
    "lrc__lrc2xbar_cycles_active.sum",
    "lrc__lrc2xbar_cycles_stalled.sum",
    "lrc__cycles_elapsed.sum",
    "lts__cycles_active.avg",
    "lts__cycles_elapsed.avg",
    "lts__t_sectors.sum",
]


def job_of(kind, params):
    if kind == "rows":
        import measure_ncu_rows as rows
        return rows.job_of(params)
    import measure_l2_groupm as g
    return g.job_of(("gemm", *params))


def child(kind, params):
    """Launch the configuration twice (ncu profiles the second), as the two scripts' own children do."""
    if kind == "rows":
        import measure_ncu_rows as rows
        rows.run_one(params)
    else:
        import measure_l2_groupm as g
        g.run_one(("gemm", *params))


def main():
    if "--one" in sys.argv:
        a = sys.argv[sys.argv.index("--one") + 1:]
        kind = a[0]
        params = (a[1], *map(int, a[2:])) if kind == "rows" else tuple(map(int, a[1:]))
        child(kind, params)
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    import torch
    from measure_l2_groupm import find_ncu
    ncu = find_ncu()
    print(f"ncu: {ncu}; torch {torch.__version__}; {torch.cuda.get_device_name()}", flush=True)
    from measure_ncu_rows import known_metrics   # an unknown name would fail the whole pass
    metrics = known_metrics(ncu, METRICS) if ncu else []
    unknown = [m for m in METRICS if m not in metrics]
    print("metrics ncu does not know (left out):", unknown, flush=True)
    cols = ["kind", "params", "measured_ms", "status"] + [m for m in METRICS]
    raw = open(os.path.join(out, "ncu_raw.txt"), "w")
    with open(os.path.join(out, "lrc_s61.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for kind, params in CONFIGS:
            row = {"kind": kind, "params": " ".join(map(str, params)), "status": "ok"}
            try:
                job = job_of(kind, params)
                row["measured_ms"] = f"{bench_job(job):.5f}"
                if ncu:
                    cmd = [ncu, "--csv", "--page", "raw", "--clock-control", "none", "--metrics", ",".join(metrics),
                           "-k", "regex:(matmul|rmsnorm|softmax)_kernel", "--launch-skip", "1", "--launch-count", "1",
                           sys.executable, os.path.abspath(__file__), "--one", kind] + [str(v) for v in params]
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=HERE)
                    raw.write(f"### {kind} {params}\n{r.stdout}\n{r.stderr[-2000:]}\n")
                    last = ncu_last_row(r.stdout)
                    if last is None:
                        row["status"] = "ncu_failed"
                    else:
                        head, units, data = last
                        for m in metrics:
                            if m in head:
                                i = head.index(m)
                                row[m] = f"{data[i].replace(',', '')} {units[i]}".strip()
                else:
                    row["status"] = "no_ncu"
            except Exception as e:   # one failure must not lose the rest
                row["status"] = f"error: {type(e).__name__}: {str(e)[:120]}"
            w.writerow([row.get(c, "") for c in cols])
            f.flush()
            print(f"[{time.time() - t0:6.1f}s] {kind} {params}: {row.get('measured_ms')} ms, {row['status']}", flush=True)
            if time.time() - t0 > float(os.environ.get("LRC_DEADLINE_S", "240")):
                print("deadline: stopping", flush=True)
                break
    raw.close()


if __name__ == "__main__":
    main()
