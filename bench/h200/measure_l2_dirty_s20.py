"""Which GEMM launches pay the dirty L2 that do_bench's clear leaves (session 20, smallm20).

    mkdir -p /tmp/ld20 && PYTHONUNBUFFERED=1 L2D20_DEADLINE_S=90 timeout 120 \
        python3 bench/h200/measure_l2_dirty_s20.py /tmp/ld20 > /tmp/ld20/stdout.txt 2>&1

Why: launch.l2_dirty_write_back (8.16 us, decode20) was measured on stream_depth_s16/s17's
launch-free small-M streams, all on 132+ CTAs that the DRAM round trip binds. smallm19's weight
stream line (433 ns + 105 ns per TB/s) was fitted per trip, so a launch priced on it should pay the
write-back; priced so, the 32-CTA launches the tensor cores or one SM's DRAM ceiling bind come out
+8 us slow (Triton calibration 16x8192x8192 128x256x64 w8 s3, run32 128x4096x28672 128x128x128 w8
s3), and the kloop-line launches beside them pay nothing by decode20's rule. This times each
launch, in one process on the same buffers, right after do_bench's clear (a 256 MB zero fill, the
L2 full of dirty lines: mode `dirty`, after a 256 MB read so the GPU is busy before it) and after
the same clear followed by a 256 MB read (a clean L2: mode `clean`), the two modes alternating
rep by rep, 25 reps each (l2_dirty2's `sum_zero` and `zero_sum`). dirty - clean per launch: does
a 32-CTA tensor-bound or SM-ceiling-bound launch pay the 8 us as the 132-CTA streams do, and do
the launches whose B several CTAs read (kloop's line) pay it too?

Output: OUTDIR/l2_dirty_s20.csv (config, ctas, mode, min, q1, med, q3, max us), stdout.
"""
import csv
import os
import sys
import time

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
sys.argv = [sys.argv[0]]                  # measure_accuracy reads sys.argv at import
sys.path.insert(0, "bench/h200")
import measure_accuracy as ma  # noqa: E402

T0 = time.time()
DEADLINE_S = float(os.environ.get("L2D20_DEADLINE_S", "90"))
REPS = 25
# M N K BM BN BK WARPS STAGES GROUP_M, and why each is here
C = [
    (16, 8192, 8192, 128, 256, 64, 8, 3, 8),      # Triton calibration, 32 CTAs, tensor-bound (wasted rows)
    (16, 8192, 8192, 64, 256, 64, 4, 4, 8),       # Triton calibration, 32 CTAs, one SM's DRAM ceiling
    (16, 8192, 8192, 64, 64, 128, 4, 3, 8),       # Triton calibration, 128 CTAs, the stream's round trip
    (16, 8192, 8192, 128, 128, 128, 8, 3, 8),     # Triton calibration, 64 CTAs
    (128, 4096, 28672, 128, 128, 128, 8, 3, 1),   # run32 best row, 32 CTAs, B read once (a stream)
    (128, 4096, 28672, 32, 128, 128, 2, 5, 8),    # run32 neighbour, 128 CTAs, B read 4 times (kloop's line)
    (16, 28672, 8192, 16, 64, 128, 2, 2, 1),      # run22, 448 CTAs one wave, a stream
    (16, 28672, 8192, 16, 128, 64, 8, 5, 1),      # run22, 224 CTAs one wave, a stream
    (128, 28672, 14336, 128, 64, 64, 8, 5, 1),    # run31, 448 CTAs, a stream
    (128, 28672, 14336, 64, 256, 32, 8, 3, 8),    # run31 best row, 224 CTAs, B read twice (kloop's line)
    (4096, 4096, 4096, 128, 128, 64, 4, 3, 8),    # a large square GEMM (kloop's line)
]


def main():
    os.makedirs(OUT, exist_ok=True)
    cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
    other = torch.ones(64 * 1024 * 1024, dtype=torch.float32, device="cuda")
    print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
    rows = []
    for c in C:
        if time.time() - T0 > DEADLINE_S:
            print("deadline: stopping", flush=True)
            break
        p = dict(zip("M N K BM BN BK WARPS STAGES GROUP_M".split(), c))
        name = "{M}x{N}x{K}_{BM}x{BN}x{BK}_w{WARPS}_s{STAGES}_g{GROUP_M}".format(**p)
        ctas = ma.cdiv(p["M"], p["BM"]) * ma.cdiv(p["N"], p["BN"])
        try:
            j = ("gemm.csv", "gemm_bf16", "kernels/gemm.tile", "dev", 0, name, p)
            b = ma.make_bufs(j)
            ma.launch(j, b)
            torch.cuda.synchronize()
            times = {"dirty": [], "clean": []}
            for _ in range(REPS):
                for mode in ("dirty", "clean"):
                    if mode == "dirty":
                        torch.sum(other)
                        cache.zero_()
                    else:
                        cache.zero_()
                        torch.sum(other)
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    ma.launch(j, b)
                    e.record()
                    e.synchronize()
                    times[mode].append(s.elapsed_time(e) * 1e3)
            for mode, v in times.items():
                v.sort()
                q = (v[0], v[6], v[12], v[18], v[24])
                rows.append([name, ctas, mode] + ["%.2f" % x for x in q])
                print("[%6.1fs] %s ctas %d %s min %.2f q1 %.2f med %.2f q3 %.2f max %.2f us" % (
                    (time.time() - T0, name, ctas, mode) + q), flush=True)
            print("   dirty - clean (medians) %.2f us" % (times["dirty"][12] - times["clean"][12]), flush=True)
            del b
            torch.cuda.empty_cache()
        except Exception as err:  # keep the rows already timed
            print("error", name, repr(err), flush=True)
        with open(os.path.join(OUT, "l2_dirty_s20.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["config", "ctas", "mode", "min_us", "q1_us", "med_us", "q3_us", "max_us"])
            w.writerows(rows)
    print("done in %.1f s" % (time.time() - T0), flush=True)


if __name__ == "__main__":
    main()
