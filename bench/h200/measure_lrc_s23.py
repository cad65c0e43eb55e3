"""Does the L2 Request Coalescer (LRC) account for the copies that never reach the L2 slices? (session 23,
merge23's request.)

    PYTHONUNBUFFERED=1 python3 bench/h200/measure_lrc_s23.py OUTDIR

l2_groupm_s23 and 55 stored Nsight launches show the slices serving 8-48% fewer sectors than the SMs
receive, and no rule of which CTAs sit side by side (pair, SM, TPC, GPC, wave; bench/l2_merge_rule.py)
reproduces the shares: the same walk merges 0.372 at 5 stages and 0.166 at 3. Nsight Compute's Kernel
Profiling Guide names an L2 Request Coalescer (unit `lrc`) on GH100 that merges read requests before the
L2. This lists the `lrc__` metrics this ncu knows (ncu --query-metrics), then profiles, beside the slices'
and the crossbar's sectors, every `lrc__` counter with a .sum rollup, on launches whose merged shares
differ by their timing only:

  persistent 5120x28672x4096 256x64x32 w4 on 132 CTAs at 3, 4, 5 stages (persist_ncu_s21: 0.166 at 3, 0.372 at 5)
  256x8192x8192 64x128x64 w4 G8 at 4 stages (2 CTAs an SM, l2_groupm_s23: 0.380) and 5 stages (1 CTA an SM)

Writes OUTDIR/lrc_metrics.txt (the query), OUTDIR/lrc_s23.csv (config, metric, value, unit), ncu_raw.txt.
"""
import csv
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import ncu_last_row  # noqa: E402
import measure_l2_groupm as g  # noqa: E402

T0 = time.time()
CONFIGS = [("persistent", 5120, 28672, 4096, 256, 64, 32, 4, 3, 132),
           ("persistent", 5120, 28672, 4096, 256, 64, 32, 4, 4, 132),
           ("persistent", 5120, 28672, 4096, 256, 64, 32, 4, 5, 132),
           ("gemm", 256, 8192, 8192, 64, 128, 64, 4, 4, 8),
           ("gemm", 256, 8192, 8192, 64, 128, 64, 4, 5, 8)]
BASE = ["gpu__time_duration.sum", "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_requests_srcunit_tex_op_read.sum",
        "l1tex__m_xbar2l1tex_read_sectors.sum", "lts__t_sectors_srcunit_ltcfabric.sum", "dram__bytes_read.sum"]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ncu = g.find_ncu()
    print("ncu:", ncu, flush=True)
    if ncu is None:
        return
    q = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
    open(os.path.join(out, "lrc_metrics.txt"), "w").write(q.stdout + q.stderr[-2000:])
    names = sorted({ln.split()[0] for ln in q.stdout.splitlines() if ln.strip().startswith("lrc__")})
    print("lrc metrics:", names, flush=True)
    metrics = BASE + [n + ".sum" for n in names]
    raw = open(os.path.join(out, "ncu_raw.txt"), "w")
    with open(os.path.join(out, "lrc_s23.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["config", "metric", "value", "unit"])
        for cfg in CONFIGS:
            if time.time() - T0 > float(os.environ.get("LRC_DEADLINE_S", "200")):
                print("deadline: stopping", flush=True)
                break
            cmd = [ncu, "--csv", "--page", "raw", "--metrics", ",".join(metrics), "-k",
                   "regex:(matmul|persistent)_kernel", "--launch-skip", "1", "--launch-count", "1",
                   sys.executable, os.path.join(HERE, "measure_l2_groupm.py"), "--one", cfg[0]] + [str(v) for v in cfg[1:]]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=150, cwd=HERE)
            raw.write(f"### {cfg}\n{r.stdout}\n{r.stderr[-3000:]}\n")
            last = ncu_last_row(r.stdout)
            name = "_".join(str(v) for v in cfg)
            if last is None:
                w.writerow([name, "status", "ncu_failed", ""])
            else:
                head, units, data = last
                for m in metrics:
                    if m in head:
                        w.writerow([name, m, data[head.index(m)], units[head.index(m)]])
            f.flush()
            print(f"[{time.time() - T0:6.1f}s] {cfg} done", flush=True)
    raw.close()


if __name__ == "__main__":
    main()
