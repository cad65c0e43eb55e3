#!/usr/bin/env python3
"""H200: the SM and L2 clocks INSIDE the grouped GEMM launches of l2_clock_s20, on random data and
zeros, with the slices' and the SMs' sectors (issue 15, large-M gemm_bf16 / gemm_fp8; session 21,
bigtile21; docs/analysis.md, "What l2_clock_s20 and l2_clock_s21 answer").

Usage (on the device machine, from the repository root):
    PYTHONUNBUFFERED=1 L2C21_DEADLINE_S=80 python3 bench/h200/measure_l2_clock_s21.py OUTDIR

The question. l2_clock_s20 timed the launches below on random data and on zeros: zeros raise
nvidia-smi's SM clock (sampled over back-to-back launches, not the timed ones) by 20-49%, yet the
wide tiles run the same (0.99-1.02x) and the tall tiles and fp8 G8 run 12-18% SLOWER. Two readings:
(a) the smi clock is not the clock of a do_bench launch (0.5-0.9 ms, about the power limit's 0.56 ms
response time), and something data-dependent at the L2 slows zeros; (b) the clock is, and a faster SM
clock lowers the share of copies that merge before the slices (requests for one sector meeting while
one is pending: a matter of timing), so the slices serve more. Nsight with --clock-control none
(clocks float as under do_bench; caches flushed before the pass, as do_bench clears L2) reads,
per launch and data: the SM clock (sm__cycles_elapsed.avg.per_second) and the L2 clock
(lts__cycles_elapsed.avg.per_second) over the launch itself, the slices' sectors from the SMs
(lts__t_sectors_srcunit_tex_op_read), the SMs' received sectors (l1tex__m_xbar2l1tex_read_sectors),
DRAM's bytes and the time. (a) shows as the same SM clock on both data; (b) as a higher SM clock
and a lower merged share (1 - slices / received) on zeros.

Writes OUTDIR/l2_clock_s21.csv (kernel,M,N,K,BM,BN,BK,WARPS,STAGES,GROUP_M,data,ncu_ms,sm_hz,l2_hz,
dram_read_bytes,slice_sectors,received_sectors,status), OUTDIR/ncu_raw.txt; one ncu child process per
launch and data (profiling its second launch); none started after L2C21_DEADLINE_S (80 s).
"""
import csv
import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import ncu_last_row  # noqa: E402

METRICS = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "lts__cycles_elapsed.avg.per_second",
           "dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum", "l1tex__m_xbar2l1tex_read_sectors.sum"]
# (kernel, M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M): l2_clock_s20's tall G1 / G8 (zeros 1.14 / 1.12x),
# the wide G8 (zeros 0.99x) and fp8 64x256x128 G8 (zeros 1.18x)
LAUNCHES = [("gemm", 2560, 8192, 8192, 256, 64, 64, 4, 5, 1), ("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5, 8),
            ("gemm_fp8", 2560, 8192, 8192, 64, 256, 128, 4, 5, 8), ("gemm", 2560, 8192, 8192, 256, 64, 64, 4, 5, 8)]
COLS = ("kernel M N K BM BN BK WARPS STAGES GROUP_M data ncu_ms sm_hz l2_hz dram_read_bytes slice_sectors "
        "received_sectors status").split()


def job_of(c):
    kind, M, N, K, BM, BN, BK, W, S, G = c
    p = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S, GROUP_M=G,
             layout="nk" if kind == "gemm_fp8" else "kn")
    fam = "gemm_fp8" if kind == "gemm_fp8" else "gemm_bf16"
    tile = "kernels/gemm_fp8.tile" if kind == "gemm_fp8" else "kernels/gemm.tile"
    return ("gemm.csv", fam, tile, "dev", 0, f"{M}x{N}x{K}", p)


def run_one(c, data):
    """Child: the launch twice on random data or zeros (ncu profiles the second)."""
    import measure_accuracy as ma
    import torch
    job = job_of(c)
    b = ma.make_bufs(job)
    if data == "zeros":
        for v in b.values():
            v.view(torch.uint8).zero_()
    for _ in range(2):
        ma.launch(job, b)
    torch.cuda.synchronize()


def find_ncu():
    for c in [shutil.which("ncu")] + sorted(glob.glob("/usr/local/cuda*/bin/ncu")) + \
            sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu")):
        if c and os.path.exists(c):
            return c
    return None


def parse(text):
    """{metric: (value, unit)} of the last data row of ncu's --csv --page raw output."""
    last = ncu_last_row(text)
    if last is None:
        return {}
    head, units, data = last
    out = {}
    for m in METRICS:
        if m in head:
            i = head.index(m)
            try:
                out[m] = (float(data[i].replace(",", "")), units[i])
            except ValueError:
                pass
    return out


def scaled(v, unit, table):
    return v * table.get(unit, 1)


def main():
    if "--one" in sys.argv:
        a = sys.argv[sys.argv.index("--one") + 1:]
        run_one((a[0], *map(int, a[1:10])), a[10])
        return
    t0 = time.time()
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    deadline = float(os.environ.get("L2C21_DEADLINE_S", "80"))
    ncu = find_ncu()
    print(f"ncu: {ncu}", flush=True)
    raw = open(os.path.join(out, "ncu_raw.txt"), "w")
    f = open(os.path.join(out, "l2_clock_s21.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    for c in LAUNCHES:
        for data in ("randn", "zeros"):
            if time.time() - t0 > deadline:
                print("deadline: no more launches", flush=True)
                break
            row = dict(zip(COLS[:10], c), data=data, status="ok")
            try:
                if not ncu:
                    row["status"] = "no_ncu"
                else:
                    cmd = [ncu, "--csv", "--page", "raw", "--clock-control", "none", "--cache-control", "all",
                           "--metrics", ",".join(METRICS), "-k", "regex:matmul_kernel", "--launch-skip", "1",
                           "--launch-count", "1", sys.executable, os.path.abspath(__file__), "--one",
                           *[str(v) for v in c], data]
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=HERE)
                    raw.write(f"### {c} {data}\n{r.stdout}\n{r.stderr[-2000:]}\n")
                    raw.flush()
                    m = parse(r.stdout)
                    if not m:
                        row["status"] = "ncu_failed"
                    t = m.get("gpu__time_duration.sum")
                    if t:
                        row["ncu_ms"] = f"{scaled(*t, {'nsecond': 1e-6, 'ns': 1e-6, 'usecond': 1e-3, 'us': 1e-3, 'msecond': 1, 'ms': 1}):.5f}"
                    hz = {"cycle/second": 1, "cycle/nsecond": 1e9, "cycle/usecond": 1e6, "Ghz": 1e9, "GHz": 1e9,
                          "Mhz": 1e6, "MHz": 1e6, "hz": 1, "Hz": 1}
                    for key, col in (("sm__cycles_elapsed.avg.per_second", "sm_hz"),
                                     ("lts__cycles_elapsed.avg.per_second", "l2_hz")):
                        if key in m:
                            row[col] = f"{scaled(*m[key], hz):.6g}"
                    if "dram__bytes_read.sum" in m:
                        row["dram_read_bytes"] = int(scaled(*m["dram__bytes_read.sum"], {
                            "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}))
                    for key, col in (("lts__t_sectors_srcunit_tex_op_read.sum", "slice_sectors"),
                                     ("l1tex__m_xbar2l1tex_read_sectors.sum", "received_sectors")):
                        if key in m:
                            row[col] = int(m[key][0])
            except Exception as e:   # one failure must not lose the rest
                row["status"] = f"error: {type(e).__name__}: {str(e)[:120]}"
            w.writerow(row)
            f.flush()
            print(row, f"t={time.time() - t0:.1f}s", flush=True)
    f.close()
    raw.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
