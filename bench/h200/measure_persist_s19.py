"""Why is the persistent GEMM's 64x256x64 tile on 8 warps at 5 stages slow at 5120x8192x8192?
(issue 15, run30: 1,932 us measured, 1,286 predicted; run29's 4096x8192x8192 at 4 stages,
the same tile and 114 CTAs, runs a trip 20% faster.) Session 19, persist19.

The campaign's kernel and launch (bench/h200/measure_accuracy.py: persistent_kernel,
make_bufs, launch) at 5120x8192x8192, cold L2 (a 256 MB buffer zeroed before each launch, as
do_bench does), CUDA events around the kernel alone, median of 15 launches, on random data (three configurations also
on zeros: a power limit depends on the bits that toggle), with nvidia-smi's SM clock and power sampled every 20 ms over ~0.3 s of back-to-back launches.
Configurations: the 64x256x64 tile on 8 warps at 3, 4, 5 stages on 114 CTAs (does a stage
more make it slower?), at 5 stages on 78 and 132 CTAs, on 4 warps (one warpgroup,
m64n256) at 4 stages, BK = 32 at 5 stages (half the shared memory), and the run's two best
configurations (128x128x32 w8 s5 on 132, 128x256x32 w8 s5 on 78); then run29's 4096x8192x8192 with
the 64x256x64 w8 tile at 4 and 5 stages on 114 CTAs (random data; the M = 4096 rows use the
first M rows of the same buffers).

    PYTHONUNBUFFERED=1 python3 bench/h200/measure_persist_s19.py OUTDIR

Then Nsight Compute (one `--csv --page raw` process a configuration, default cache control: L2
flushed before the profiled launch, as the campaigns clear it; the child is
bench/h200/measure_l2_groupm.py --one, which launches the configuration twice and ncu profiles
the second) on run30's regret row (64x256x64 w8 s5, 114 CTAs), its best row (128x128x32 w8 s5,
132 CTAs) and run29's 4-stage row: DRAM bytes, the L2 slices' read sectors (all, from the SMs'
TEX units, from the other partition's fabric), the sectors L1TEX received through the crossbar.
ncu_persist_s19.csv (one row a configuration) and ncu_raw.txt; no ncu row starts after
PS19_NCU_DEADLINE_S (90 s).

Writes OUTDIR/persist_s19.csv (M,N,K,BM,BN,BK,WARPS,STAGES,NUM_SMS,data,ms,smi_mhz,smi_w,
regs,spills,smem) and prints each row. Stops starting new timed rows after PS19_DEADLINE_S (60 s).
"""
import csv
import os
import statistics
import subprocess
import sys
import time

import torch

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("PS19_DEADLINE_S", "60"))
NCU_DEADLINE_S = float(os.environ.get("PS19_NCU_DEADLINE_S", "90"))
sys.argv = [sys.argv[0]]                  # measure_accuracy reads sys.argv at import
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_accuracy as ma  # noqa: E402
from common import SmiSampler, ncu_last_row  # noqa: E402

M, N, K = 5120, 8192, 8192
# (BM, BN, BK, WARPS, STAGES, NUM_SMS)
C = [(64, 256, 64, 8, 5, 114), (64, 256, 64, 8, 4, 114), (64, 256, 64, 8, 3, 114),
     (128, 128, 32, 8, 5, 132), (128, 256, 32, 8, 5, 78), (64, 256, 64, 8, 5, 132),
     (64, 256, 64, 8, 5, 78), (64, 256, 32, 8, 5, 114), (64, 256, 64, 4, 4, 114)]
ZEROS = C[:1] + C[3:5]                # also timed on zeros: the regret row and the run's best two
# run29's shape (4096x8192x8192: the 4-stage row ran 1,245 us there) at 4 and 5 stages, random data only
C29 = [(64, 256, 64, 8, 4, 114), (64, 256, 64, 8, 5, 114)]


def main():
    os.makedirs(OUT, exist_ok=True)
    cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
    cols = "M N K BM BN BK WARPS STAGES NUM_SMS data ms smi_mhz smi_w regs spills smem".split()
    f = open(os.path.join(OUT, "persist_s19.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()
    bufs = {}
    for data in ("randn", "zeros"):
        p0 = dict(M=M, N=N, K=K)
        job0 = ("persistent_gemm.csv", "persistent_gemm", "kernels/persistent_gemm.tile", "dev", 0, "s19", p0)
        b = ma.make_bufs(job0)
        if data == "zeros":
            b = {k: torch.zeros_like(v) for k, v in b.items()}
        bufs[data] = b
    # the stage comparison first (run30's shape, then run29's), then the run's best two, then the rest
    first = [((M, N, K), c, data) for c in C[:3] for data in (("randn", "zeros") if c in ZEROS else ("randn",))]
    first += [((4096, N, K), c, "randn") for c in C29]
    runs = first + [((M, N, K), c, data) for c in C[3:] for data in (("randn", "zeros") if c in ZEROS else ("randn",))]
    for shape, c, data in runs:
        if time.time() - T0 > DEADLINE_S:
            print("deadline: no more timed rows", flush=True)
            break
        p = dict(zip("M N K BM BN BK WARPS STAGES NUM_SMS".split(), shape + c))
        j = ("persistent_gemm.csv", "persistent_gemm", "kernels/persistent_gemm.tile", "dev", 0, "s19", p)
        b = bufs[data]
        k = ma.launch(j, b, warmup=True)[0][0]
        k._init_handles()
        ma.launch(j, b)
        torch.cuda.synchronize()
        v = []
        for _ in range(15):
            cache.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            ma.launch(j, b)
            e.record()
            e.synchronize()
            v.append(s.elapsed_time(e))
        ms = statistics.median(v)
        with SmiSampler() as smi:
            end = time.time() + 0.3
            while time.time() < end:
                for _ in range(max(1, int(0.05 / ms * 1e3))):
                    ma.launch(j, b)
                torch.cuda.synchronize()
        mhz, watt = smi.medians(after_s=0.08)
        row = dict(p, data=data, ms=round(ms, 5), smi_mhz=mhz, smi_w=watt, regs=k.n_regs, spills=k.n_spills,
                   smem=k.metadata.shared)
        w.writerow(row)
        f.flush()
        print(row, f"t={time.time() - T0:.1f}s", flush=True)
    f.close()
    profile()
    print("done", flush=True)


NCU_METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sectors_op_read.sum",
               "lts__t_sector_op_read_hit_rate.pct", "lts__t_sectors_srcunit_tex_op_read.sum",
               "lts__t_sectors_srcunit_ltcfabric.sum", "l1tex__m_xbar2l1tex_read_sectors.sum"]
NCU = [(M, N, K) + C[0], (M, N, K) + C[3], (4096, N, K) + C29[0]]


def profile():
    import glob
    import shutil
    ncu = next((c for c in [shutil.which("ncu")] + sorted(glob.glob("/usr/local/cuda*/bin/ncu"))
                + sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu")) if c and os.path.exists(c)), None)
    print("ncu:", ncu, flush=True)
    if ncu is None:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    raw = open(os.path.join(OUT, "ncu_raw.txt"), "w")
    with open(os.path.join(OUT, "ncu_persist_s19.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow("M N K BM BN BK WARPS STAGES NUM_SMS status".split() + [x.split(".")[0] for x in NCU_METRICS])
        for cfg in NCU:
            if time.time() - T0 > NCU_DEADLINE_S:
                print("ncu deadline: stopping", flush=True)
                break
            M_, N_, K_, bm, bn, bk, warps, st, sms = cfg
            cmd = [ncu, "--csv", "--page", "raw", "--metrics", ",".join(NCU_METRICS), "-k", "regex:persistent_kernel",
                   "--launch-skip", "1", "--launch-count", "1", sys.executable, os.path.join(here, "measure_l2_groupm.py"),
                   "--one", "persistent"] + [str(v) for v in cfg]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=here)
                raw.write(f"### {cfg}\n{r.stdout}\n{r.stderr[-2000:]}\n")
                last = ncu_last_row(r.stdout)
                vals, status = [], "ok"
                if last is None:
                    status = "ncu_failed"
                else:
                    head, units, data = last
                    for mname in NCU_METRICS:
                        vals.append(f"{data[head.index(mname)]} {units[head.index(mname)]}".strip() if mname in head else "")
                w.writerow(list(cfg) + [status] + vals)
            except Exception as e:
                w.writerow(list(cfg) + ["error: " + repr(e)[:120]])
            f.flush()
            print(cfg, f"t={time.time() - T0:.1f}s", flush=True)
    raw.close()


if __name__ == "__main__":
    main()
