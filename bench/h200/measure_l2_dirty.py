"""What do_bench's L2 clear leaves for the timed kernel (session 10, smallm10).

triton.testing.do_bench (and issue 15's campaigns, bench/h200/measure_accuracy.py) clears the L2
before every timed run by zeroing a 256 MB buffer: the L2 (60 MiB, write-back) is left full of
dirty lines, and the timed kernel's first misses evict them, so DRAM writes them back while the
kernel reads. calibration/h200/measured/stream_depth's launch-free trips leave 5-14.6 us of each
64-trip kernel outside the trips (t(64 trips) - 64 x ns per trip), growing with the bytes read
and levelling off past ~60 MB; tfx prices 3.0 us of launch and 0.7 us of fill.

This times issue-15 gemm_bf16 launches (measure_accuracy's matmul_kernel, its make_bufs and
launch, B [K, N]) with CUDA events around the kernel alone, median of 25, in three modes:
  zero   cache.zero_() before each run (as do_bench: dirty lines)
  read   cache.zero_() then torch.sum of another 256 MB buffer (the sum evicts the dirty lines
         and leaves clean ones; the operands are as cold as in `zero`)
  none   nothing between runs (back to back)
and one configuration at three K (a kernel's fixed part: 2 t(K/2) - t(K)).

    python3 bench/h200/measure_l2_dirty.py      (from the repository root)

Prints `M,N,K,BM,BN,BK,WARPS,STAGES,GROUP_M mode ms` per configuration and mode.
"""
import sys
import time

import torch

sys.argv = [sys.argv[0]]                  # measure_accuracy reads sys.argv at import
sys.path.insert(0, "bench/h200")
import measure_accuracy as ma  # noqa: E402

T0 = time.time()
C = [
    # issue15 run11 16x28672x8192 (model +25..28% slow) and one row it prices within 12%
    (16, 28672, 8192, 16, 128, 32, 4, 3, 8), (16, 28672, 8192, 16, 32, 64, 4, 2, 8),
    (16, 28672, 8192, 16, 256, 128, 4, 1, 1), (16, 28672, 8192, 16, 64, 128, 4, 2, 8),
    # the same tile at K 4096 and 2048: the fixed part of the kernel
    (16, 28672, 4096, 16, 128, 32, 4, 3, 8), (16, 28672, 2048, 16, 128, 32, 4, 3, 8),
    # issue15 run11 128x14336x4096 (model -16..-28% fast), one of them at K 2048
    (128, 14336, 4096, 64, 32, 32, 2, 5, 1), (128, 14336, 2048, 64, 32, 32, 2, 5, 1),
    (128, 14336, 4096, 32, 32, 128, 2, 3, 1), (128, 14336, 4096, 128, 32, 32, 2, 5, 1),
    (128, 14336, 4096, 16, 256, 128, 4, 1, 1),
    # run10 16x14336x14336 (+28%), run1 16x14336x4096 (short), run5 16x4096x4096 (33 MB < L2)
    (16, 14336, 14336, 16, 128, 32, 8, 4, 1), (16, 14336, 4096, 16, 64, 64, 2, 5, 1),
    (16, 4096, 4096, 16, 32, 64, 8, 5, 1),
    # a compute-bound square: the write-back should hide under its mma
    (4096, 4096, 4096, 128, 128, 64, 4, 3, 8),
]
cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
other = torch.ones(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
for c in C:
    if time.time() - T0 > 85:
        print("deadline: stopping", flush=True)
        break
    p = dict(zip("M N K BM BN BK WARPS STAGES GROUP_M".split(), c))
    j = ("gemm.csv", "gemm_bf16", "kernels/gemm.tile", "dev", 0, "x", p)
    b = ma.make_bufs(j)

    def r():
        ma.launch(j, b)
    r()
    torch.cuda.synchronize()
    for mode in ("zero", "read", "none"):
        v = []
        for _ in range(25):
            if mode != "none":
                cache.zero_()
            if mode == "read":
                torch.sum(other, dtype=torch.float32)
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
print("done in %.1f s" % (time.time() - T0), flush=True)
