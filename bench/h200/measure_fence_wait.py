#!/usr/bin/env python3
"""Does the async-proxy fence before a wgmma wait for the thread's outstanding cp.async copies?

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_fence_wait.py OUTDIR

Triton 3.6 on sm_90 stores a register-transposed fp8 operand to shared memory byte by byte and
then runs ``fence.proxy.async.shared::cta`` (SASS: MEMBAR.ALL.CTA; FENCE.VIEW.ASYNC.S) and a
barrier before the wgmma that reads it, with the other operand's cp.async copies of later
stages in flight (calibration/h200/measured/fp8_mma, fp8_kn_*.sass.txt). Whether that fence
waits for those copies decides whether the k-loop keeps any load in flight across its trips.

One CUDA kernel (CuPy RawKernel, NVRTC, inline PTX), 128 threads per block; each trip:

    issue   8 cp.async.cg 16 B a thread (16 KB, one A stage) and commit     (mode bit 1)
    stores  32 st.shared.u8 a thread (4 KB: one B tile)                      (mode bit 2)
    fence   fence.proxy.async.shared::cta                                   (mode bit 4)
    bar     bar.sync 0
    drain   cp.async.wait_group 0; bar.sync 0 (whatever the fence left)

Thread 0 sums clock64 cycles per phase over TRIPS trips (median of 5 launches after a warm-up).
If the fence waits for the copies, `fence` holds the copies' round trip and `drain` is ~0;
if not, `fence` is short and `drain` holds it. Sources: `l2` (a 4 MiB buffer read once before:
every copy hits L2), `dram` (fresh 16 KB of a 2 GiB buffer each trip after a 256 MiB write that
evicts it). Grids: 1 block (one SM, unloaded) and 132 x r blocks (r per SM, all SMs loaded).
Also the SASS of the kernel (cuobjdump from Triton's bundled tools) to check the fence's form.
Writes fence_wait.csv, log.txt and fence_wait.sass.txt.
"""
import csv
import glob
import os
import statistics
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "log.txt"), "w")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


import cupy as cp  # noqa: E402

SRC = r"""
extern "C" __global__ void trip(const int4* __restrict__ A, long long a_chunks, long long start, int trips,
                                int mode, unsigned long long* out) {
    __shared__ __align__(128) int4 sA[1024];              // 16 KB: one A stage
    __shared__ __align__(128) unsigned char sB[4096];     // 4 KB: one B tile
    const unsigned sa = (unsigned)__cvta_generic_to_shared(sA);
    const unsigned sb = (unsigned)__cvta_generic_to_shared(sB);
    const int tid = threadIdx.x;
    unsigned long long t_issue = 0, t_stores = 0, t_fence = 0, t_bar = 0, t_drain = 0;
    long long base = start + (long long)blockIdx.x * 1024LL * trips;
    for (int it = 0; it < trips; ++it) {
        long long off = (base + (long long)it * 1024LL) % a_chunks;   // 1024 x 16 B = 16 KB a trip
        long long c0 = clock64();
        if (mode & 1) {
            #pragma unroll
            for (int j = 0; j < 8; ++j) {
                int e = j * 128 + tid;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(sa + e * 16), "l"(A + off + e) : "memory");
            }
            asm volatile("cp.async.commit_group;" ::: "memory");
        }
        long long c1 = clock64();
        if (mode & 2) {
            #pragma unroll
            for (int j = 0; j < 32; ++j) {
                // the transpose's pattern: 2 lanes along N write rows 16 x 128 B apart (one bank)
                unsigned addr = ((tid & 1) * 16 + (j & 15)) * 128 + (tid >> 1) * 2 + (j >> 4);
                unsigned short v = (unsigned short)(it + j);
                asm volatile("st.shared.u8 [%0], %1;" :: "r"(sb + (addr & 4095)), "h"(v) : "memory");
            }
        }
        long long c2 = clock64();
        if (mode & 4) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        long long c3 = clock64();
        asm volatile("bar.sync 0;" ::: "memory");
        long long c4 = clock64();
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        asm volatile("bar.sync 0;" ::: "memory");
        long long c5 = clock64();
        t_issue += c1 - c0; t_stores += c2 - c1; t_fence += c3 - c2; t_bar += c4 - c3; t_drain += c5 - c4;
    }
    if (tid == 0) {
        unsigned long long* o = out + blockIdx.x * 8;
        o[0] = t_issue; o[1] = t_stores; o[2] = t_fence; o[3] = t_bar; o[4] = t_drain;
        o[5] = sA[tid & 1023].x + sB[tid];
    }
}
"""

MODES = {"copies_only": 1, "stores_fence": 6, "copies_stores": 3, "copies_stores_fence": 7, "copies_fence": 5}
PHASES = ("issue", "stores", "fence", "bar", "drain")
TRIPS = 256


def smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.mem,power.draw",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as exc:  # noqa: BLE001
        return f"nvidia-smi failed: {exc}"


def dump_sass():
    """The kernel's SASS, compiled by NVRTC to PTX and by Triton's bundled ptxas (best effort)."""
    try:
        import triton
        tools = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
        from cupy.cuda import nvrtc
        prog = nvrtc.createProgram(SRC, "trip.cu", [], [])
        nvrtc.compileProgram(prog, ["-arch=compute_90"])     # str options (bytes failed: 2026-12-01 run)
        ptx = nvrtc.getPTX(prog)
        ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
        p_ptx, p_cubin = os.path.join(OUT, "trip.ptx"), os.path.join(OUT, "trip.cubin")
        open(p_ptx, "w").write(ptx.rstrip("\x00"))
        ptxas = os.path.join(tools, "ptxas")
        r = subprocess.run([ptxas, "-arch=sm_90", "-O3", p_ptx, "-o", p_cubin], capture_output=True, text=True, timeout=60)
        log("ptxas rc", r.returncode, r.stderr[-400:])
        dis = [x for x in glob.glob(os.path.join(tools, "cuobjdump*")) + glob.glob(os.path.join(tools, "nvdisasm*"))]
        for tool in dis:
            args = [tool, "-sass", p_cubin] if "cuobjdump" in tool else [tool, p_cubin]
            r = subprocess.run(args, capture_output=True, text=True, timeout=60)
            if r.returncode == 0 and r.stdout:
                open(os.path.join(OUT, "fence_wait.sass.txt"), "w").write(r.stdout)
                lines = [ln.strip() for ln in r.stdout.splitlines() if any(k in ln for k in ("MEMBAR", "FENCE", "LDGSTS", "DEPBAR", "BAR.SYNC"))]
                log("SASS (" + os.path.basename(tool) + "):", " | ".join(lines[:16]))
                return
        log("no disassembler found in", tools, os.listdir(tools) if os.path.isdir(tools) else "")
    except Exception as exc:  # noqa: BLE001
        log("SASS dump failed:", repr(exc)[:300])


def main():
    log("device:", smi())
    k = cp.RawKernel(SRC, "trip", options=("-arch=sm_90",))
    big = cp.empty(2 << 30, dtype=cp.uint8)            # 2 GiB: the DRAM source
    big[:] = 1
    small_chunks = (4 << 20) // 16                        # 4 MiB: the L2 source
    big_chunks = (2 << 30) // 16
    scratch = cp.empty(256 << 20, dtype=cp.uint8)
    A = big.view(cp.int32).reshape(-1, 4)                 # int4 rows (the kernel reads int4)
    rows = []

    def launch(blocks, mode, chunks, start):
        out = cp.zeros(blocks * 8, dtype=cp.uint64)
        k((blocks,), (128,), (A, cp.int64(chunks), cp.int64(start), cp.int32(TRIPS), cp.int32(mode), out))
        cp.cuda.Device().synchronize()
        h = out.get().reshape(blocks, 8)[:, :5]
        return [float(statistics.median(h[:, p])) / TRIPS for p in range(5)]

    for source in ("l2", "dram"):
        for blocks in (1, 132 * 2, 132 * 4):
            for name, mode in MODES.items():
                try:
                    runs = []
                    for rep in range(6):
                        if source == "l2":
                            start, chunks = 0, small_chunks
                        else:
                            scratch[:] = rep                         # evict L2 (60 MiB) before each launch
                            start, chunks = 0, big_chunks
                        r = launch(blocks, mode, chunks, start)
                        if rep:
                            runs.append(r)
                    med = [statistics.median(x[p] for x in runs) for p in range(5)]
                    rows.append([source, blocks, name, mode] + [f"{v:.1f}" for v in med] + [f"{sum(med):.1f}"])
                    log(f"{source:4s} blocks {blocks:4d} {name:20s} " +
                        " ".join(f"{p} {v:7.1f}" for p, v in zip(PHASES, med)) + f"  trip {sum(med):7.1f} cycles")
                except Exception as exc:  # noqa: BLE001
                    log(source, blocks, name, "FAILED", repr(exc)[:300])
    with open(os.path.join(OUT, "fence_wait.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["source", "blocks", "case", "mode", "issue_cycles", "stores_cycles", "fence_cycles",
                    "bar_cycles", "drain_cycles", "trip_cycles"])
        w.writerows(rows)
    dump_sass()
    log("device after:", smi())


if __name__ == "__main__":
    main()
