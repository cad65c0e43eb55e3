#!/usr/bin/env python3
"""The H100's device facts and DRAM bandwidth curve, in the formats of calibration/h200/device.txt and
bandwidth.csv, so that hw_profiles/h100_sxm.toml can cite a measurement of its own memory system.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h100/measure_memory.py OUTDIR

Writes OUTDIR/device.txt (cudaGetDeviceProperties through CuPy: SMs, registers, shared memory, L2, the
memory clock and bus width, whence the datasheet bandwidth 2 x clock x width / 8) and OUTDIR/bandwidth.csv:
per op and buffer size (64 KiB .. 4 GiB, bf16), the median of 20 CUDA-event timings after 3 warm-ups:
    copy  y.copy_(x)            bytes moved = 2 x buffer (read + write)
    add   torch.add(x, y, out=z) bytes moved = 3 x buffer (2 reads + 1 write)
    read  x.sum(dtype=float32)  bytes moved = buffer (reads only; the sum's one value aside)
Buffers at and past the L2 (50 MB on an H100 SXM5) stream from DRAM each run.
"""
import csv
import os
import sys

import cupy
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "h200"))
from common import median_event_ms  # noqa: E402  (bench/h200/common.py: the measurement scripts' shared timing)

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)


def device_line():
    p = cupy.cuda.runtime.getDeviceProperties(0)
    name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
    fields = [("device", name), ("sm", f"{p['major']}.{p['minor']}"), ("sms", p["multiProcessorCount"]),
              ("regsPerSM", p["regsPerMultiprocessor"]), ("regsPerBlock", p["regsPerBlock"]),
              ("smemPerSM", p["sharedMemPerMultiprocessor"]), ("smemPerBlockOptin", p["sharedMemPerBlockOptin"]),
              ("maxThreadsPerSM", p["maxThreadsPerMultiProcessor"]),
              ("maxBlocksPerSM", p["maxBlocksPerMultiProcessor"]), ("l2", p["l2CacheSize"]),
              ("reservedSmemPerBlock", p["reservedSharedMemPerBlock"]),
              ("memoryClockKHz", p["memoryClockRate"]), ("memoryBusWidth", p["memoryBusWidth"]),
              ("totalGlobalMem", p["totalGlobalMem"])]
    return ",".join(f"{k},{v}" for k, v in fields)


def timed(fn, reps=20, warm=3):
    """The median of ``reps`` CUDA-event timings after ``warm`` untimed calls."""
    return median_event_ms(fn, reps, warm)


def main():
    line = device_line()
    print(line)
    with open(os.path.join(OUT, "device.txt"), "w") as f:
        f.write(line + "\n")
    rows = []
    size = 64 * 1024
    while size <= 4 * 1024 ** 3:
        n = size // 2
        x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        ms = timed(lambda: y.copy_(x))
        rows.append(("copy", size, 2 * size, ms))
        z = torch.empty_like(x)
        ms = timed(lambda: torch.add(x, y, out=z))
        rows.append(("add", size, 3 * size, ms))
        del z
        ms = timed(lambda: x.sum(dtype=torch.float32))
        rows.append(("read", size, size, ms))
        for op, b, moved, t in rows[-3:]:
            print(f"{op:5s} {b:>12d} B {t:9.4f} ms {moved / t / 1e6:8.1f} GB/s")
        del x, y
        torch.cuda.empty_cache()
        size *= 4
    with open(os.path.join(OUT, "bandwidth.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["op", "bytes_per_buffer", "bytes_moved", "ms", "gbps"])
        for op, b, moved, t in rows:
            w.writerow([op, b, moved, t, moved / t / 1e6])


if __name__ == "__main__":
    main()
