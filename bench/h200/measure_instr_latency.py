#!/usr/bin/env python3
"""H200 dependent-instruction latencies (cycles) for the chain of one attention/decode trip.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_instr_latency.py OUTDIR

One CUDA kernel per instruction (CuPy RawKernel, NVRTC, inline PTX): one block runs a chain of
STEPS instructions where each reads the previous one's result, timed with clock64 (SM cycles)
and %globaltimer (ns) around the chain; the per-step value is (chain - empty loop) / STEPS.
Every chain is unrolled by 32 inside a runtime loop so the loop's own compare/branch is
< 1 cycle per step and is removed by the empty-loop baseline anyway.
Cases:
    fma         fma.rn.f32 x = x*a + b                                  (1 warp)
    ex2         ex2.approx.f32 x = 2^x  (what Triton's exp2 lowers to)  (1 warp)
    ex2_ftz     ex2.approx.ftz.f32                                      (1 warp)
    shfl_bfly   shfl.sync.bfly.b32 x = shfl_xor(x, 1)                   (1 warp)
    lds         ld.shared.u32 pointer chase i = smem[i]                 (1 warp)
    bar_sync4   bar.sync 0 back to back, 4 warps (128 threads)          (4 warps)
    mma_acc     mma.sync.m16n8k16 bf16->f32, D feeds the next C          (1 warp)
    mma_acc_x4  the same with 4 independent accumulators (issue-rate bound: 4 mma per step)
    mma_operand D -> cvt.rn.bf16x2.f32 -> next A operand (softmax P feeding PV) (1 warp)
Each case: median of 5 launches after one warm-up. Writes instr_latency.csv and log.txt.
"""
import csv
import os
import statistics
import sys

from common import Campaign, smi as nvidia_smi

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
RUN = Campaign(stamp=None)
RUN.open(OUT, "log.txt")
log = RUN.log


import cupy as cp  # noqa: E402

HEAD = r"""
__device__ __forceinline__ unsigned long long gt() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
#define MMA(d0,d1,d2,d3,a0,a1,a2,a3,b0,b1) asm volatile( \
  "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
  : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
"""

# body: code run once per step; setup: declarations; sink: value written out
CASES = {
    "empty": ("float x = seed;", "asm volatile(\"\" : \"+f\"(x));", "x", 32),
    "fma": ("float x = seed; float a = 0.999f, b = 0.001f;",
            "asm volatile(\"fma.rn.f32 %0, %0, %1, %2;\" : \"+f\"(x) : \"f\"(a), \"f\"(b));", "x", 32),
    "ex2": ("float x = seed * 1e-3f;",
            "asm volatile(\"ex2.approx.f32 %0, %0;\" : \"+f\"(x));", "x", 32),
    "ex2_ftz": ("float x = seed * 1e-3f;",
                "asm volatile(\"ex2.approx.ftz.f32 %0, %0;\" : \"+f\"(x));", "x", 32),
    "shfl_bfly": ("unsigned x = (unsigned)threadIdx.x;",
                  "asm volatile(\"shfl.sync.bfly.b32 %0, %0, 1, 0x1f, 0xffffffff;\" : \"+r\"(x));", "(float)x", 32),
    "lds": ("__shared__ unsigned sm[1024]; for (int k = threadIdx.x; k < 1024; k += blockDim.x) sm[k] = (unsigned)(((k + 33) % 1024) * 4);"
            " __syncthreads(); unsigned base = (unsigned)__cvta_generic_to_shared(sm); unsigned x = (unsigned)(threadIdx.x * 4) + (unsigned)(seed - 1.0f);",
            "asm volatile(\"ld.shared.u32 %0, [%1];\" : \"=r\"(x) : \"r\"(base + x));", "(float)x", 32),
    "bar_sync4": ("float x = seed;", "asm volatile(\"bar.sync 0;\" ::: \"memory\");", "x", 128),
    "mma_acc": ("float d0 = seed, d1 = 0, d2 = 0, d3 = 0; unsigned a = 0x3f803f80u, b = 0x3c003c00u;",
                "MMA(d0,d1,d2,d3,a,a,a,a,b,b);", "d0+d1+d2+d3", 32),
    "mma_acc_x4": ("float d[16]; for (int k = 0; k < 16; ++k) d[k] = seed; unsigned a = 0x3f803f80u, b = 0x3c003c00u;",
                   "MMA(d[0],d[1],d[2],d[3],a,a,a,a,b,b); MMA(d[4],d[5],d[6],d[7],a,a,a,a,b,b);"
                   " MMA(d[8],d[9],d[10],d[11],a,a,a,a,b,b); MMA(d[12],d[13],d[14],d[15],a,a,a,a,b,b);",
                   "d[0]+d[4]+d[8]+d[12]", 32),
    "mma_operand": ("float d0 = seed, d1 = 0, d2 = 0, d3 = 0; unsigned a0 = 0x3f803f80u, a1 = a0, b = 0x3c003c00u;"
                    " float z0 = 0, z1 = 0, z2 = 0, z3 = 0;",
                    "z0 = 0; z1 = 0; z2 = 0; z3 = 0; MMA(z0,z1,z2,z3,a0,a1,a0,a1,b,b);"
                    " asm volatile(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(a0) : \"f\"(z1), \"f\"(z0));"
                    " asm volatile(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(a1) : \"f\"(z3), \"f\"(z2));",
                    "z0+z1+(float)a0", 32),
}


def kernel_src(name, setup, body, sink):
    return HEAD + f"""
extern "C" __global__ void k_{name}(float seed, int outer, float* out, unsigned long long* t) {{
    {setup}
    __syncthreads();
    long long c0 = clock64(); unsigned long long g0 = gt();
    for (int o = 0; o < outer; ++o) {{
        #pragma unroll
        for (int u = 0; u < 32; ++u) {{ {body} }}
    }}
    long long c1 = clock64(); unsigned long long g1 = gt();
    out[threadIdx.x] = {sink};
    if (threadIdx.x == 0) {{ t[0] = (unsigned long long)(c1 - c0); t[1] = g1 - g0; }}
}}
"""


def smi():
    return nvidia_smi("name,clocks.sm,clocks.max.sm,power.draw")


def main():
    log("device:", smi())
    outer = 256  # 8192 steps per chain
    steps = outer * 32
    rows = []
    for name, (setup, body, sink, threads) in CASES.items():
        try:
            k = cp.RawKernel(kernel_src(name, setup, body, sink), f"k_{name}", options=("-arch=sm_90",))
            out = cp.zeros(128, dtype=cp.float32)
            t = cp.zeros(2, dtype=cp.uint64)
            cyc, ns = [], []
            for rep in range(6):
                k((1,), (threads,), (cp.float32(1.0), cp.int32(outer), out, t))
                cp.cuda.Device().synchronize()
                if rep:
                    h = t.get()
                    cyc.append(int(h[0]))
                    ns.append(int(h[1]))
            rows.append((name, threads, steps, statistics.median(cyc), statistics.median(ns), cyc))
            log(name, "cycles", cyc, "ns", ns)
        except Exception as exc:  # noqa: BLE001
            log(name, "FAILED", repr(exc)[:400])
    base = {r[0]: r for r in rows}.get("empty")
    base_cyc = base[3] if base else 0
    with open(os.path.join(OUT, "instr_latency.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "threads", "steps", "chain_cycles", "chain_ns", "empty_loop_cycles",
                    "cycles_per_step", "implied_sm_mhz", "runs_cycles"])
        for name, threads, st, cyc, ns, runs in rows:
            per = (cyc - base_cyc) / st if name != "empty" else cyc / st
            mhz = cyc / ns * 1e3 if ns else 0
            w.writerow([name, threads, st, cyc, ns, base_cyc, f"{per:.2f}", f"{mhz:.0f}",
                        ";".join(str(c) for c in runs)])
            log(f"{name:12s} {per:7.2f} cycles/step  ({mhz:.0f} MHz)")
    log("device after:", smi())


if __name__ == "__main__":
    main()
