"""Does the persistent GEMM's trip wait for DRAM? The issue-15 persistent kernel
(bench/h200/measure_accuracy.py's persistent_kernel and launch, kernels/persistent_gemm.tile)
timed with its operands cold (L2 cleared by zeroing a 256 MB buffer, as do_bench and issue 15
do), with A or B alone read into L2 after the clear (torch.sum), and warm (the same launch just
before, no clear). Session 9 (pers9); output: calibration/h200/measured/persistent_warm.

The model (tfx.analysis.memory_parallelism.trip_miss) makes every trip with a DRAM byte wait
the DRAM round trip. If cold equals warm, no DRAM first touch holds the trips.

    python3 bench/h200/measure_persistent_warm.py      (from the repository root)

Prints `M,N,K,BM,BN,BK,WARPS,STAGES,NUM_SMS mode ms` per configuration and mode: the median of
25 timed launches, CUDA events around the kernel alone.
"""
import sys

import torch

sys.argv = [sys.argv[0]]                  # measure_accuracy reads sys.argv at import
sys.path.insert(0, "bench/h200")
import measure_accuracy as ma  # noqa: E402

C = [(3072, 3072, 3072, 128, 128, 64, 4, 3, 114), (3072, 3072, 3072, 128, 128, 64, 4, 3, 78),
     (3072, 3072, 3072, 256, 64, 64, 4, 3, 132), (3072, 3072, 3072, 128, 64, 32, 8, 4, 114),
     (8192, 4096, 4096, 128, 128, 128, 4, 3, 78), (8192, 4096, 4096, 64, 128, 128, 4, 3, 132),
     (4096, 4096, 4096, 128, 128, 64, 4, 3, 114)]
cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
for c in C:
    p = dict(zip("M N K BM BN BK WARPS STAGES NUM_SMS".split(), c))
    j = ("persistent_gemm.csv", "persistent_gemm", "kernels/persistent_gemm.tile", "dev", 0, "x", p)
    b = ma.make_bufs(j)

    def r():
        ma.launch(j, b)
    r()
    torch.cuda.synchronize()
    for mode in ("cold", "warm_a", "warm_b", "warm"):
        v = []
        for _ in range(25):
            if mode != "warm":
                cache.zero_()
            if mode == "warm_a":
                torch.sum(b["A"], dtype=torch.float32)
            if mode == "warm_b":
                torch.sum(b["B"], dtype=torch.float32)
            if mode == "warm":
                r()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            r()
            e.record()
            e.synchronize()
            v.append(s.elapsed_time(e))
        v.sort()
        print(",".join(map(str, c)), mode, "%.6f" % v[12], flush=True)
    del b
    torch.cuda.empty_cache()
