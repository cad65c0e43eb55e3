#!/usr/bin/env python3
"""H200: what rmsnorm's and softmax's row CTAs wait on at two CTAs a SM (issue 15, session 12).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_ncu_rows.py OUTDIR

A physical fact for the row-kernel model, not held-out rows. rows12b (docs/analysis.md 8 (r))
found that pricing two resident row CTAs as alternating (max(2D, D + Z)) clears softmax's standing
regrets but breaks rmsnorm, whose one-row CTAs are much slower than softmax's at the same geometry
(run6 16384x16384 (1, 16): rmsnorm 346.2 us, softmax 274.2); the suspect is rmsnorm's weight-row
reads. Here Nsight Compute (default cache and clock control, the second launch of
measure_accuracy.py's kernels) records per launch: DRAM bytes read, L2 read sectors and hit rate,
the L2 sectors served across the partitions (ltcfabric, a second ncu pass: the metric may be
absent), and the warp state statistics (stall reasons per issued instruction), beside do_bench's
median without the profiler.

Session 15 (rows15): ``ROWS_NCU_CFGS="family,M,N,BLOCK_M,WARPS;..."`` replaces the six configurations
(the many-warp CTAs of few elements the model prices 9-18% fast: softmax and rmsnorm at N = 1024, 8-16
warps), and the first pass adds ``ISSUE`` (warp instructions executed, the schedulers' issue-active
share, the warps active a cycle, CTAs launched, cycles elapsed, shared loads and stores);
``ROWS_NCU_FABRIC=0`` skips the second pass. Whether a CTA's life is its instructions at the SMs'
issue slots (4 a cycle an SM), its barriers, or its loads.

Session 33: ``ROWS_NCU_LOCAL=1`` adds a third pass (``LOCAL``), where the spilled values are
served from: the local loads' and stores' L1 sectors and hits, L2's write sectors and hit rates,
and DRAM's bytes written (DRAM's bytes read and L2's read sectors are the first pass's). With X
read once and Y written once (``min_bytes`` each way), the DRAM bytes past them are the local
traffic L2 did not keep: the hit ratio docs/analysis.md section 8 ("Spilled frames at L2's
capacity") infers from times, measured. Each metric is asked only where ``ncu --query-metrics``
lists its base name (an unknown name would fail the whole pass); the ones left out are printed.

Files: ncu_rows.csv (family, M, N, BLOCK_M, WARPS, measured_ms, ncu_ms, dram_read_bytes,
l2_read_sectors, l2_read_hit_pct, ltcfabric_sectors, min_bytes (X read once, + W for rmsnorm),
and every smsp__average_warps_issue_stalled_*_per_issue_active.ratio as stall_<reason>),
ncu_raw.txt (ncu's CSV of every child), stdout.txt.
"""
import csv
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import bench_job, launch_twice, ncu_last_row  # noqa: E402

from measure_l2_groupm import METRICS, find_ncu  # noqa: E402

FABRIC = "lts__t_sectors_srcunit_ltcfabric.sum"
STALL = "smsp__average_warps_issue_stalled_"

ISSUE = ["smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
         "smsp__warps_active.avg.per_cycle_active", "sm__ctas_launched.sum", "sm__cycles_elapsed.avg",
         "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"]

# where the spilled values live (ROWS_NCU_LOCAL=1; names as Nsight Compute 2023+ spells them)
LOCAL = ["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
         "l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum",
         "l1tex__t_sectors_pipe_lsu_mem_local_op_st_lookup_hit.sum",
         "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct",
         "lts__t_sectors_op_write.sum", "lts__t_sector_op_write_hit_rate.pct", "lts__t_sector_hit_rate.pct",
         "dram__bytes_write.sum"]   # DRAM's reads and L2's read sectors are the first pass's
LOCAL_PASS = os.environ.get("ROWS_NCU_LOCAL", "0") == "1"
BYTE_UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}


def known_metrics(ncu, names):
    """The ``names`` whose base name (before .sum, .pct, .ratio) ``ncu --query-metrics`` lists;
    all of them where the query fails (the pass then reports what it could not read)."""
    try:
        listing = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120).stdout
    except Exception:
        return list(names)
    bases = {line.split()[0] for line in listing.splitlines() if line.strip() and not line.startswith(" ")}
    if not bases:
        return list(names)
    return [n for n in names if n.rsplit(".", 1)[0] in bases]


# (family, M, N, BLOCK_M, WARPS)
CONFIGS = [
    ("rmsnorm", 16384, 16384, 1, 16), ("softmax", 16384, 16384, 1, 16),
    ("rmsnorm", 8192, 8192, 2, 16), ("softmax", 8192, 8192, 2, 16),
    ("rmsnorm", 16384, 4096, 1, 4), ("softmax", 16384, 4096, 1, 4),
]


if os.environ.get("ROWS_NCU_CFGS"):
    CONFIGS = [(c.split(",")[0], *map(int, c.split(",")[1:])) for c in os.environ["ROWS_NCU_CFGS"].split(";") if c]


def job_of(cfg):
    fam, M, N, bm, w = cfg
    return ("rows.csv", fam, f"kernels/{fam}.tile", "x", 0, f"{M}x{N}", dict(M=M, N=N, BLOCK_M=bm, WARPS=w))


def run_one(cfg):
    """Child: launch the configuration twice (ncu profiles the second)."""
    launch_twice(job_of(cfg))


def raw_metrics(text):
    """{metric: (value, unit)} of the last data row of ncu's --csv --page raw output."""
    last = ncu_last_row(text)
    if last is None:
        return {}
    head, units, data = last
    out = {}
    for i, h in enumerate(head):
        try:
            out[h] = (float(data[i].replace(",", "")), units[i])
        except (ValueError, IndexError):
            pass
    return out


def ncu_run(ncu, cfg, extra):
    cmd = [ncu, "--csv", "--page", "raw"] + extra + ["-k", "regex:(rmsnorm|softmax)_kernel", "--launch-skip", "1",
                                                     "--launch-count", "1", sys.executable,
                                                     os.path.abspath(__file__), "--one", cfg[0]] + \
        [str(v) for v in cfg[1:]]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=150, cwd=HERE)


def main():
    if "--one" in sys.argv:
        a = sys.argv[sys.argv.index("--one") + 1:]
        run_one((a[0], *map(int, a[1:])))
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    import torch
    ncu = find_ncu()
    print(f"ncu: {ncu}; torch {torch.__version__}; {torch.cuda.get_device_name()}", flush=True)
    raw = open(os.path.join(out, "ncu_raw.txt"), "w")
    local_metrics = known_metrics(ncu, LOCAL) if LOCAL_PASS else []
    if LOCAL_PASS:
        print(f"local pass: {local_metrics}; not listed by ncu: {sorted(set(LOCAL) - set(local_metrics))}", flush=True)
    rows = []
    for cfg in CONFIGS:
        fam, M, N, bm, w = cfg
        row = dict(family=fam, M=M, N=N, BLOCK_M=bm, WARPS=w, status="ok",
                   min_bytes=M * N * 2 + (N * 2 if fam == "rmsnorm" else 0))
        try:
            job = job_of(cfg)
            row["measured_ms"] = f"{bench_job(job):.5f}"
            r = ncu_run(ncu, cfg, ["--metrics", ",".join(METRICS + ISSUE), "--section", "WarpStateStats"])
            raw.write(f"### {cfg} pass 1\n{r.stdout}\n{r.stderr[-2000:]}\n")
            m = raw_metrics(r.stdout)
            if "dram__bytes_read.sum" in m:
                v, u = m["gpu__time_duration.sum"]
                row["ncu_ms"] = f"{v * {'ns': 1e-6, 'nsecond': 1e-6, 'usecond': 1e-3, 'us': 1e-3, 'msecond': 1.0, 'ms': 1.0}.get(u, 1e-6):.5f}"
                v, u = m["dram__bytes_read.sum"]
                row["dram_read_bytes"] = int(v * BYTE_UNITS.get(u, 1))
                row["l2_read_sectors"] = int(m.get("lts__t_sectors_op_read.sum", (0, ""))[0])
                row["l2_read_hit_pct"] = f"{m.get('lts__t_sector_op_read_hit_rate.pct', (float('nan'), ''))[0]:.2f}"
                for k in ISSUE:
                    if k in m:
                        row[k] = f"{m[k][0]:.4g}"
                for k, (v, _) in m.items():
                    if k.startswith(STALL) and k.endswith("_per_issue_active.ratio"):
                        row["stall_" + k[len(STALL):-len("_per_issue_active.ratio")]] = f"{v:.3f}"
            else:
                row["status"] = "ncu_failed"
            if LOCAL_PASS:
                r = ncu_run(ncu, cfg, ["--metrics", ",".join(local_metrics)])
                raw.write(f"### {cfg} pass local\n{r.stdout}\n{r.stderr[-2000:]}\n")
                m = raw_metrics(r.stdout)
                for k in local_metrics:
                    if k in m:
                        v, u = m[k]
                        row["local_" + k] = f"{v * BYTE_UNITS.get(u, 1):.6g}"
            if os.environ.get("ROWS_NCU_FABRIC", "1") == "0":   # the second pass is not asked for
                rows.append(row)
                print(f"[{time.time() - t0:7.1f}s] {cfg}: {row}", flush=True)
                continue
            r = ncu_run(ncu, cfg, ["--metrics", FABRIC])
            raw.write(f"### {cfg} pass 2\n{r.stdout}\n{r.stderr[-2000:]}\n")
            m = raw_metrics(r.stdout)
            if FABRIC in m:
                row["ltcfabric_sectors"] = int(m[FABRIC][0])
        except Exception as e:  # keep going: one failure must not lose the rest
            row["status"] = f"error: {type(e).__name__}: {str(e)[:160]}"
        rows.append(row)
        print(f"[{time.time() - t0:7.1f}s] {cfg}: {row}", flush=True)
    raw.close()
    cols = ["family", "M", "N", "BLOCK_M", "WARPS", "measured_ms", "ncu_ms", "dram_read_bytes", "l2_read_sectors",
            "l2_read_hit_pct", "ltcfabric_sectors", "min_bytes", "status"] + [k for k in ISSUE if any(k in r for r in rows)]
    cols += sorted({k for r in rows for k in r if k.startswith("stall_")})
    cols += [k for k in ("local_" + m for m in LOCAL) if any(k in r for r in rows)]
    with open(os.path.join(out, "ncu_rows.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([r.get(c, "") for c in cols])


if __name__ == "__main__":
    main()
