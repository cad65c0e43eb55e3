#!/usr/bin/env python3
"""H200 load-to-use latency, unloaded and under load, for the profile's memory latencies.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_latency.py OUTDIR

One CUDA kernel (CuPy RawKernel, NVRTC): block 0's thread 0 walks a random single-cycle
pointer chain (one int64 per 128-B line, `__ldcg`: L1 bypassed, so every step is one
dependent L2 access) and times it with %globaltimer and clock64; blocks 1.. optionally
stream a float4 copy (every SM busy) until block 0 is done, so the chain runs under load.

Cases (each the median of 3 launches after one warm-up launch):
    chain working set  4 MiB (L2-resident) or 1 GiB (DRAM: 17x the 60 MiB L2)
    load               none | dram (a 2 x 1 GiB copy, DRAM-bound) | l2 (a 2 x 8 MiB copy,
                       L2-resident: the regime of a GEMM whose tiles hit L2)
Writes latency.csv (case, working set, load, steps, ns per step, cycles per step, SM clock
implied, streaming GB/s counting read + write) and log.txt.

LAT_SET=read (session 16, decode16): the DRAM chain only, under a copy (load `dram`) and under a
read-only stream (load `dram_read`: each streamer thread sums float4s of the 1 GiB source, four
loads in flight a thread, and writes one value at the end) at 8, 33, 66, 132, 264, 396 and 528
streaming blocks, so the chase's latency can be read against the bandwidth of either kind of
stream (stream GB/s counts the bytes moved: read + write for the copy, read only for the sum).
What it decides: the profile's latency-under-load points (pipeline.dram_latency_*) were measured
under a copy, half of whose DRAM traffic is writes; the split-KV decode trips only read, and
calibration/h200/measured/decode_trip's 2-stage trips grow 0-50 ns from 16 to 132 SMs at 1.6-2.8
TB/s where the copy's curve adds 90-180 ns.
"""
import csv
import os
import statistics
import sys
import time

import numpy as np

from common import Campaign, smi as nvidia_smi

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
RUN = Campaign(stamp=None)
RUN.open(OUT, "log.txt")
log = RUN.log


import cupy as cp  # noqa: E402

SRC = r"""
__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void chase(const long long* __restrict__ nxt, long long start, int steps,
                                 long long* out, unsigned long long* times, int* flag,
                                 const float4* __restrict__ src, float4* __restrict__ dst,
                                 long long n4, int max_passes, unsigned long long* moved,
                                 unsigned long long warm_ns, int read_only) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
            unsigned long long w0 = gtimer();
            while (gtimer() - w0 < warm_ns) { }
            long long i = start;
            long long c0 = clock64();
            unsigned long long g0 = gtimer();
            for (int s = 0; s < steps; ++s) {
                i = __ldcg(nxt + i);
            }
            long long c1 = clock64();
            unsigned long long g1 = gtimer();
            out[0] = i;
            times[0] = (unsigned long long)(c1 - c0);
            times[1] = g1 - g0;
            __threadfence();
            atomicExch(flag, 1);
        }
        return;
    }
    long long tid = (long long)(blockIdx.x - 1) * blockDim.x + threadIdx.x;
    long long nthreads = (long long)(gridDim.x - 1) * blockDim.x;
    unsigned long long count = 0;
    if (read_only) {
        // a read-only stream: four independent float4 loads in flight a thread, summed
        float acc = 0.f;
        for (int p = 0; p < max_passes; ++p) {
            if (*(volatile int*)flag) break;
            long long k = tid;
            for (; k + 3 * nthreads < n4; k += 4 * nthreads) {
                float4 a = __ldcg(src + k), b = __ldcg(src + k + nthreads);
                float4 c = __ldcg(src + k + 2 * nthreads), d = __ldcg(src + k + 3 * nthreads);
                acc += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w))
                     + ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));
                count += 64;
            }
        }
        if (acc == 12345.678f) dst[tid] = make_float4(acc, acc, acc, acc);
        atomicAdd(moved, count);
        return;
    }
    for (int p = 0; p < max_passes; ++p) {
        if (*(volatile int*)flag) break;
        for (long long k = tid; k < n4; k += nthreads) {
            dst[k] = src[k];
            count += 32;
        }
    }
    atomicAdd(moved, count);
}
"""

KERNEL = cp.RawKernel(SRC, "chase")
LINE = 16  # int64 per 128-B line


def chain(ws_bytes: int, seed: int = 1):
    """A random single cycle over the 128-B lines of ws_bytes; returns (device array, starts):
    eight start points spread over the cycle, so successive launches walk lines the previous
    ones did not touch (a 1 GiB chain then misses L2 on every step)."""
    n = ws_bytes // 128
    rng = np.random.default_rng(seed)
    order = rng.permutation(n).astype(np.int64)
    nxt = np.zeros(n * LINE, dtype=np.int64)
    nxt[order * LINE] = np.roll(order, -1) * LINE
    return cp.asarray(nxt), [int(order[k * n // 8] * LINE) for k in range(8)]


def smi():
    return nvidia_smi("clocks.sm,clocks.mem,power.draw,temperature.gpu")


def run_case(nxt, start, steps, load, buffers, n_sms, streamers=None):
    out = cp.zeros(1, dtype=cp.int64)
    times = cp.zeros(2, dtype=cp.uint64)
    flag = cp.zeros(1, dtype=cp.int32)
    moved = cp.zeros(1, dtype=cp.uint64)
    read_only = 1 if load == "dram_read" else 0
    if load == "none":
        src, dst, n4, grid = buffers["l2"][0], buffers["l2"][1], 0, 1
    else:
        src, dst = buffers["dram" if read_only else load]
        n4 = src.size // 4
        grid = 1 + (4 * n_sms if streamers is None else streamers)
    ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
    ev0.record()
    KERNEL((grid,), (256,), (nxt, cp.int64(start), cp.int32(steps), out, times, flag, src, dst,
                            cp.int64(n4), cp.int32(1 << 30), moved, cp.uint64(200_000), cp.int32(read_only)))
    ev1.record()
    ev1.synchronize()
    kernel_ms = cp.cuda.get_elapsed_time(ev0, ev1)
    cyc, ns = (int(x) for x in times.get())
    gbps = float(moved.get()[0]) / (kernel_ms * 1e6) if load != "none" else 0.0
    return ns / steps, cyc / steps, gbps, kernel_ms


def main():
    dev = cp.cuda.Device(0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    n_sms = props["multiProcessorCount"]
    log(f"device {props['name'].decode()} sms {n_sms} l2 {props['l2CacheSize']} cupy {cp.__version__}")
    log("nvidia-smi (sm clock, mem clock, power, temp):", smi())
    gib = 1 << 30
    buffers = {
        "dram": (cp.random.random(gib // 4, dtype=cp.float32), cp.empty(gib // 4, dtype=cp.float32)),
        "l2": (cp.random.random((8 << 20) // 4, dtype=cp.float32), cp.empty((8 << 20) // 4, dtype=cp.float32)),
    }
    path = os.path.join(OUT, "latency.csv")
    f = open(path, "w", newline="")
    w = csv.writer(f)
    w.writerow(["working_set_bytes", "load", "streamer_blocks", "steps", "ns_per_step", "cycles_per_step",
                "implied_sm_mhz", "stream_gbps", "kernel_ms", "runs"])
    if os.environ.get("LAT_SET") == "read":
        # the DRAM chain under a copy and under a read-only stream of 8 .. 528 blocks
        cases = [(1 << 30, 20_000, "none", None)]
        cases += [(1 << 30, 20_000, load, b) for b in (8, 33, 66, 132, 264, 396, 528)
                  for load in ("dram", "dram_read")]
    else:
        cases = [(ws, steps, load, None) for ws, steps in ((4 << 20, 40_000), (1 << 30, 20_000))
                 for load in ("none", "l2", "dram")]
        # latency against load: the chain's own level streamed by 1 .. 4 blocks per SM
        cases += [(4 << 20, 40_000, "l2", b) for b in (8, 33, 66, 132, 264)]
        cases += [(1 << 30, 20_000, "dram", b) for b in (8, 33, 66, 132, 264)]
    chains = {}
    for ws, steps, load, streamers in cases:
        if ws not in chains:
            t0 = time.time()
            chains.clear()
            cp.get_default_memory_pool().free_all_blocks()
            chains[ws] = chain(ws)
            log(f"chain {ws} B built in {time.time() - t0:.1f} s")
        nxt, starts = chains[ws]
        try:
            run_case(nxt, starts[0], steps, load, buffers, n_sms, streamers)    # warm-up
            res = [run_case(nxt, starts[1 + k], steps, load, buffers, n_sms, streamers) for k in range(3)]
            ns = statistics.median(r[0] for r in res)
            cyc = statistics.median(r[1] for r in res)
            gbps = statistics.median(r[2] for r in res)
            kms = statistics.median(r[3] for r in res)
            blocks = 0 if load == "none" else (4 * n_sms if streamers is None else streamers)
            w.writerow([ws, load, blocks, steps, f"{ns:.1f}", f"{cyc:.1f}", f"{cyc / ns * 1e3:.0f}",
                        f"{gbps:.0f}", f"{kms:.3f}", ";".join(f"{r[0]:.1f}" for r in res)])
            f.flush()
            log("ws", ws, "load", load, "streamer blocks", blocks, "ns/step", f"{ns:.1f}",
                "cycles/step", f"{cyc:.1f}", "stream GB/s", f"{gbps:.0f}", "kernel ms", f"{kms:.2f}")
        except Exception as exc:  # noqa: BLE001 - keep the other cases
            log("FAILED", ws, load, streamers, type(exc).__name__, exc)
    log("nvidia-smi after:", smi())
    f.close()
    dev.synchronize()


if __name__ == "__main__":
    main()
