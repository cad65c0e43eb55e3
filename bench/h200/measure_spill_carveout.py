#!/usr/bin/env python3
"""H200: does the shared-memory carve-out decide where a spilling k-loop's local memory lives?

Usage (on the device machine; about 60 s):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_spill_carveout.py OUTDIR
On the CPU (no GPU: compiles each configuration with Triton 3.6.0 for sm_90 and prints its
registers, spills and shared memory, the check that the configurations are the campaigns'):
    python3 bench/h200/measure_spill_carveout.py --cpu

Why (smallm14, docs/analysis.md "Spilling warp-mma k-loops and the carve-out, a finding"). Triton
3.6.0's loader (third_party/nvidia/backend/driver.c, loadBinary) calls
cuFuncSetCacheConfig(CU_FUNC_CACHE_PREFER_SHARED) for every kernel whose shared memory exceeds
49,152 B: the SM then keeps the largest shared-memory capacity, 228 KB of its 256 KB, and L1
caches local memory in the 28 KB left; a kernel at 48 KB or less keeps the driver's default.
The campaigns' bf16 64x256x32 k-loop on 2 warps spills 108 words at 3, 4 and 5 stages with the
same loop body (SASS: 72 LDL, 38 STL, 128 HMMA a thread a trip), yet runs 1.27 us a trip at 3
stages (40,960 B, run8 1024x4096x4096, 2 CTAs an SM) and 2.9-3.2 us at 4-5 (61,440 / 81,920 B;
run6 64x4096x4096 and run1 2048^3 at 4, run5 128x8192x8192 at 5). If the carve-out is the cause,
the same launch with CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 0 (the most L1 that
still runs the kernel) after Triton's load runs the 4- and 5-stage k-loops at the 3-stage pace,
and the 3-stage one at 100 (the most shared memory) at the 4-stage pace.

Each configuration is timed three ways in one process on the same buffers: as Triton loads it
(`default`), then with the preferred carve-out set to 0 (`max_l1`) and to 100 (`max_shared`)
through libcuda's cuFuncSetAttribute on the compiled kernel's function handle; do_bench's
median (L2 cleared before every timed call, as the campaigns). ns_per_trip = time / (K / BK)
(every CTA of these launches runs in one wave).

Output: spill_carveout.csv (config, setting, measured_ms, ns_per_trip, regs, spills, smem_bytes,
ctas, status), log.txt.
"""
import csv
import ctypes
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (family, M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M): campaign rows (run, measured us)
CONFIGS = [
    ("gemm_bf16", 64, 4096, 4096, 64, 256, 32, 2, 4, 1),      # run6  413.1 us, 108 spilled, 61,440 B
    ("gemm_bf16", 64, 4096, 4096, 64, 256, 32, 2, 3, 1),      # (3 stages, 40,960 B, the same loop body)
    ("gemm_bf16", 64, 4096, 4096, 64, 256, 32, 2, 5, 1),      # (5 stages, 81,920 B)
    ("gemm_bf16", 1024, 4096, 4096, 64, 256, 32, 2, 3, 8),    # run8  166.4 us, 40,960 B
    ("gemm_bf16", 2048, 2048, 2048, 64, 256, 32, 2, 4, 1),    # run1  187.4 us, 61,440 B
    ("gemm_bf16", 64, 8192, 8192, 64, 256, 32, 2, 2, 1),      # run17 628.0 us, 252 spilled, 20,480 B
    ("gemm_fp8", 64, 4096, 4096, 64, 256, 128, 2, 5, 8),      # run4  532.0 us, 676 spilled, 163,840 B
]
SETTINGS = [("default", None), ("max_l1", 0), ("max_shared", 100)]
CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9     # cuda.h, CUfunction_attribute
COLUMNS = ["family", "M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M", "setting", "measured_ms",
           "ns_per_trip", "regs", "spills", "smem_bytes", "ctas", "status"]


def job_of(c):
    fam, M, N, K, BM, BN, BK, W, S, G = c
    p = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S, GROUP_M=G,
             layout="nk" if fam == "gemm_fp8" else "kn")
    kernel = "kernels/gemm_fp8.tile" if fam == "gemm_fp8" else "kernels/gemm.tile"
    return ("gemm.csv", fam, kernel, "x", 0, f"{M}x{N}x{K}", p)


def cpu_check():
    import measure_spill_sass as sass
    for c in CONFIGS:
        fam, M, N, K, BM, BN, BK, W, S, G = c
        sass.WARPS = W
        _, regs, spills, shared = sass.compile_cpu((fam, M, N, K, BM, BN, BK, S, G, "nk" if fam == "gemm_fp8" else "kn"))
        print(f"{fam} {M}x{N}x{K} {BM}x{BN}x{BK} w{W} s{S} G{G}: {regs} registers, {spills} spilled words, "
              f"{shared} B shared ({'> 49,152: PREFER_SHARED' if shared > 49152 else '<= 49,152: default carve-out'})")


def main():
    if "--cpu" in sys.argv:
        cpu_check()
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    log = open(os.path.join(out, "log.txt"), "w")
    t0 = time.time()

    def say(*a):
        s = f"[{time.time() - t0:6.1f}s] " + " ".join(str(x) for x in a)
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()
    import torch
    import measure_accuracy as acc
    cuda = ctypes.CDLL("libcuda.so.1")
    say(f"torch {torch.__version__}; {torch.cuda.get_device_name()}")
    with open(os.path.join(out, "spill_carveout.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for c in CONFIGS:
            fam, M, N, K, BM, BN, BK, W, S, G = c
            job = job_of(c)
            try:
                bufs = acc.make_bufs(job)
                ck = acc.launch(job, bufs, warmup=True)[0][0]
                ck._init_handles()
                info = dict(regs=ck.n_regs, spills=ck.n_spills, smem_bytes=ck.metadata.shared,
                            ctas=acc.cdiv(M, BM) * acc.cdiv(N, BN))
                for name, carve in SETTINGS:
                    row = dict(zip(COLUMNS[:10], c), setting=name, status="ok", **info)
                    if carve is not None:
                        rc = cuda.cuFuncSetAttribute(ctypes.c_void_p(ck.function),
                                                     CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                                     ctypes.c_int(carve))
                        if rc != 0:
                            row["status"] = f"cuFuncSetAttribute rc={rc}"
                    ms = acc.bench(lambda: acc.launch(job, bufs))
                    row["measured_ms"] = f"{ms:.5f}"
                    row["ns_per_trip"] = f"{ms * 1e6 / (K // BK):.1f}"
                    w.writerow([row.get(k, "") for k in COLUMNS])
                    f.flush()
                    say(row)
                del bufs
                torch.cuda.empty_cache()
            except Exception as e:  # keep going: one failure must not lose the rest
                say(f"{c}: error {type(e).__name__}: {str(e)[:200]}")
                w.writerow(list(c) + ["", "", "", "", "", "", "", f"error: {type(e).__name__}"])
    say("done")


if __name__ == "__main__":
    main()
