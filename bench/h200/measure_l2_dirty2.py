"""The L2 state a timed kernel starts from, second run (session 10, smallm10).

measure_l2_dirty.py found the issue-15 16-row GEMMs 22-28% faster when a 256 MB read follows
do_bench's clear (zero a 256 MB buffer) than after the clear alone, in one process on the same
buffers, and the 16x28672x8192 16x128x32 row 164 us where issue15/run11 measured 139. This run
orders the clear, the read and an idle wait five ways and prints each mode's 25 timings as
min / quartiles / max, so that the dirty lines (the clear last), a clean L2 (a read last) and
a busy GPU without memory traffic (a sleep last) are told apart, and a bimodal state shows:
  zero      cache.zero_()                 (do_bench: the L2 full of dirty lines)
  sum       torch.sum(other)              (the L2 full of clean lines, no clear)
  zero_sum  cache.zero_(); torch.sum      (measure_l2_dirty's `read`)
  sum_zero  torch.sum; cache.zero_()      (dirty lines again, after the same read)
  sleep     cache.zero_(); torch.cuda._sleep (dirty lines, then ~100 us of an idle busy GPU)

    python3 bench/h200/measure_l2_dirty2.py      (from the repository root)
"""
import sys
import time

import torch

sys.argv = [sys.argv[0]]                  # measure_accuracy reads sys.argv at import
sys.path.insert(0, "bench/h200")
import measure_accuracy as ma  # noqa: E402

T0 = time.time()
C = [(16, 28672, 8192, 16, 128, 32, 4, 3, 8), (16, 14336, 14336, 16, 128, 32, 8, 4, 1),
     (16, 28672, 8192, 16, 64, 128, 4, 2, 8), (128, 14336, 4096, 64, 32, 32, 2, 5, 1),
     (4096, 4096, 4096, 128, 128, 64, 4, 3, 8)]
cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
other = torch.ones(64 * 1024 * 1024, dtype=torch.float32, device="cuda")
print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
for c in C:
    if time.time() - T0 > 80:
        print("deadline: stopping", flush=True)
        break
    p = dict(zip("M N K BM BN BK WARPS STAGES GROUP_M".split(), c))
    j = ("gemm.csv", "gemm_bf16", "kernels/gemm.tile", "dev", 0, "x", p)
    b = ma.make_bufs(j)

    def r():
        ma.launch(j, b)
    r()
    torch.cuda.synchronize()
    for mode in ("zero", "sum", "zero_sum", "sum_zero", "sleep", "zero"):
        v = []
        for _ in range(25):
            if mode in ("zero", "zero_sum", "sleep"):
                cache.zero_()
            if mode in ("sum", "zero_sum", "sum_zero"):
                torch.sum(other)
            if mode == "sum_zero":
                cache.zero_()
            if mode == "sleep":
                torch.cuda._sleep(200_000)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            r()
            e.record()
            e.synchronize()
            v.append(s.elapsed_time(e) * 1e3)
        v.sort()
        print(",".join(map(str, c)), mode, "min %.1f q1 %.1f med %.1f q3 %.1f max %.1f us" % (
            v[0], v[6], v[12], v[18], v[24]), flush=True)
    del b
    torch.cuda.empty_cache()
print("done in %.1f s" % (time.time() - T0), flush=True)
