"""Why is the persistent GEMM's 64x256x64 tile on 8 warps at 5 stages slow at 5120x8192x8192?
(issue 15, run30: 1,932 us measured, 1,286 predicted; run29's 4096x8192x8192 at 4 stages,
the same tile and 114 CTAs, runs a trip 20% faster.) Session 19, persist19.

The campaign's kernel and launch (bench/h200/measure_accuracy.py: persistent_kernel,
make_bufs, launch) at 5120x8192x8192, cold L2 (a 256 MB buffer zeroed before each launch, as
do_bench does), CUDA events around the kernel alone, median of 15 launches; for each
configuration also random data vs zeros (a power limit depends on the bits that toggle) and
nvidia-smi's SM clock and power sampled every 20 ms over ~0.3 s of back-to-back launches.
Configurations: the 64x256x64 tile on 8 warps at 3, 4, 5 stages on 114 CTAs (does a stage
more make it slower?), at 5 stages on 78 and 132 CTAs, on 4 warps (one warpgroup,
m64n256) at 4 stages, BK = 32 at 5 stages (half the shared memory), and the run's two best
configurations (128x128x32 w8 s5 on 132, 128x256x32 w8 s5 on 78); then run29's 4096x8192x8192 with
the 64x256x64 w8 tile at 4 and 5 stages on 114 CTAs (random data; the M = 4096 rows use the
first M rows of the same buffers).

    PYTHONUNBUFFERED=1 python3 bench/h200/measure_persist_s19.py OUTDIR

Writes OUTDIR/persist_s19.csv (M,N,K,BM,BN,BK,WARPS,STAGES,NUM_SMS,data,ms,smi_mhz,smi_w,
regs,spills,smem) and prints each row. Stops starting new rows after PS19_DEADLINE_S (100 s).
"""
import csv
import os
import statistics
import subprocess
import sys
import threading
import time

import torch

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("PS19_DEADLINE_S", "100"))
sys.argv = [sys.argv[0]]                  # measure_accuracy reads sys.argv at import
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_accuracy as ma  # noqa: E402

M, N, K = 5120, 8192, 8192
# (BM, BN, BK, WARPS, STAGES, NUM_SMS)
C = [(64, 256, 64, 8, 5, 114), (64, 256, 64, 8, 4, 114), (64, 256, 64, 8, 3, 114),
     (128, 128, 32, 8, 5, 132), (128, 256, 32, 8, 5, 78), (64, 256, 64, 8, 5, 132),
     (64, 256, 64, 8, 5, 78), (64, 256, 32, 8, 5, 114), (64, 256, 64, 4, 4, 114)]
# run29's shape (4096x8192x8192: the 4-stage row ran 1,245 us there) at 4 and 5 stages, random data only
C29 = [(64, 256, 64, 8, 4, 114), (64, 256, 64, 8, 5, 114)]


class Smi:
    def __enter__(self):
        self.samples = []
        self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                                      "-lms", "20"], stdout=subprocess.PIPE, text=True)
        self.t0 = time.time()

        def read():
            for line in self.proc.stdout:
                try:
                    mhz, w = (float(x) for x in line.strip().split(","))
                    self.samples.append((time.time() - self.t0, mhz, w))
                except ValueError:
                    pass
        self.th = threading.Thread(target=read, daemon=True)
        self.th.start()
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=5)
        self.th.join(timeout=2)

    def medians(self):
        late = [s for s in self.samples if s[0] >= 0.08] or self.samples
        if not late:
            return None, None
        return statistics.median(s[1] for s in late), statistics.median(s[2] for s in late)


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
    runs = [((M, N, K), c, data) for c in C for data in ("randn", "zeros")]
    runs += [((4096, N, K), c, "randn") for c in C29]
    for shape, c, data in runs:
        if time.time() - T0 > DEADLINE_S:
            print("deadline: stopping", flush=True)
            f.close()
            return
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
        with Smi() as smi:
            end = time.time() + 0.3
            while time.time() < end:
                for _ in range(max(1, int(0.05 / ms * 1e3))):
                    ma.launch(j, b)
                torch.cuda.synchronize()
        mhz, watt = smi.medians()
        row = dict(p, data=data, ms=round(ms, 5), smi_mhz=mhz, smi_w=watt, regs=k.n_regs, spills=k.n_spills,
                   smem=k.metadata.shared)
        w.writerow(row)
        f.flush()
        print(row, f"t={time.time() - T0:.1f}s", flush=True)
    f.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
