#!/usr/bin/env python3
"""H200 facts behind fp8 dots on the warp-mma path (issue 15, gemm_fp8 at 2 warps or BM < 64).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_fp8_mma.py OUTDIR

Two parts, both physical facts, no GEMM configuration is timed:

1. What Triton emits. Triton (AccelerateMatmul.cpp, decomposeMixedModeDotOp) promotes the
   operands of an fp8 dot to fp16 on sm_90 when the dot does not take the warpgroup mma
   ("promote operands for sm >= 90 when mma is not v3"). The script compiles the fp8 GEMM
   k-loop of bench/h200/measure_accuracy.py at three tiles (2 warps, 4 warps with BM = 16: the
   warp mma; 4 warps BM = 64: the warpgroup mma) and counts, in its PTX and SASS (Triton's own
   cuobjdump), the mma instructions by type and the fp8 -> f16 conversions; the SASS of each
   is written beside the CSV.

2. Throughputs (CuPy RawKernel, NVRTC, inline PTX). Each warp runs `outer` x 16 steps of
   independent instructions; clock64 and %globaltimer around the loop per block, %smid per
   block; per-SM rate = the work of the blocks an SM held / the longest of their cycle counts.
   Cases:
     mma_f16     mma.sync.m16n8k16 f32.f16.f16.f32, 8 independent accumulators per warp
     mma_bf16    the same in bf16
     mma_e4m3    mma.sync.m16n8k32 f32.e4m3.e4m3.f32 (sm_89+ PTX; what Triton does not emit on sm_90)
     cvt         cvt.rn.f16x2.e4m3x2 (fp8 pair -> f16 pair, Triton's FpToFp on sm_90), 8 chains
     mix_R       per step 8 mma_f16 + R cvt (Triton's warp loop: per k16 step a wm x wn warp tile
                 runs (wm/16)(wn/8) mmas and 4 (wm/16) + 2 (wn/8) conversions per thread: R = 12 is a
                 64 x 32 warp tile, R = 48 a 16 x 8 one)
   at 1-32 warps per block and 1-4 blocks per SM (132 x b blocks).
3. Triton's warp-mma k-step (LDSM -> F2FP -> HMMA, the counts of part 1's SASS) for one warp tile
   of (16 RM) x (8 RN) at 2, 4 and 8 warps per block, one block per SM: cycles per 32-deep k step
   per warp on its sub-partition (fp8_warp_tile.csv). FP8_PART=tiles runs this part alone;
   FP8_PART=kn compiles part 1 with B stored N-major (gemm_fp8_kn) at three tiles instead.
Writes fp8_mma.csv (one row per case), triton_fp8_dot.csv and the SASS files, log.txt.
"""
import csv
import os
import re
import statistics
import subprocess
import sys

from common import Campaign, smi as nvidia_smi

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
RUN = Campaign(stamp="[{:6.1f}s] ", stamp_file=False)   # the log file's lines without the stamp
RUN.open(OUT, "log.txt")
log = RUN.log


def smi():
    return nvidia_smi("name,clocks.sm,clocks.max.sm,power.draw,driver_version")


# ------------------------------------------------------------------------------------------------
# 1. What Triton emits for an fp8 dot
# ------------------------------------------------------------------------------------------------
def triton_part(kn=False):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def fp8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        # the k-loop of measure_accuracy.py's matmul_kernel (B given as [K, N] strides over B^T [N, K])
        pid = tl.program_id(axis=0)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = acc.to(c_ptr.dtype.element_ty)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :], c)

    log("triton", triton.__version__, "torch", torch.__version__)
    M = N = K = 1024
    A = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    # K-major B: B^T stored [N, K] (strides of B: 1, K); N-major (gemm_fp8_kn): B stored [K, N]
    BT = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
    sbk, sbn = (N, 1) if kn else (1, K)
    C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    cuobjdump = None
    for cand in [os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump"), "cuobjdump"]:
        if os.path.sep not in cand or os.path.exists(cand):
            cuobjdump = cand
            break
    rows = []
    tiles = ((64, 64, 128, 2, 5), (16, 32, 64, 4, 2), (64, 64, 128, 4, 4))
    if kn:
        tiles = ((128, 32, 128, 4, 2), (128, 64, 64, 4, 4), (64, 32, 128, 2, 2))
    for bm, bn, bk, warps, stages in tiles:
        name = f"fp8{'_kn' if kn else ''}_{bm}x{bn}x{bk}_w{warps}_s{stages}"
        try:
            k = fp8_matmul.warmup(A, BT, C, M, N, K, K, 1, sbk, sbn, N, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                  num_warps=warps, num_stages=stages, grid=(1,))
            k._init_handles()
            ptx = k.asm["ptx"]
            ttgir = k.asm.get("ttgir", "")
            with open(os.path.join(OUT, name + ".ttgir"), "w") as f:
                f.write(ttgir)
            sass = ""
            cub = os.path.join(OUT, name + ".cubin")
            with open(cub, "wb") as f:
                f.write(k.asm["cubin"])
            try:
                sass = subprocess.run([cuobjdump, "-sass", cub], capture_output=True, text=True, timeout=60).stdout
            except Exception as exc:  # noqa: BLE001
                log(name, "cuobjdump failed", repr(exc)[:200])
            os.remove(cub)
            with open(os.path.join(OUT, name + ".sass"), "w") as f:
                f.write(sass)
            counts = {
                "ptx_mma_sync_f16": len(re.findall(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16", ptx)),
                "ptx_mma_sync_e4m3": len(re.findall(r"mma\.sync\.aligned\.m16n8k32[^\n]*e4m3", ptx)),
                "ptx_wgmma": len(re.findall(r"wgmma\.mma_async", ptx)),
                "ptx_cvt_f16x2_e4m3x2": len(re.findall(r"cvt\.rn\.f16x2\.e4m3x2", ptx)),
                "ptx_ldmatrix": len(re.findall(r"ldmatrix", ptx)),
                "sass_hmma": len(re.findall(r"\bHMMA\.", sass)),
                "sass_hmma_16816_f32": len(re.findall(r"HMMA\.16816\.F32\b", sass)),
                "sass_qmma_or_e4m3": len(re.findall(r"QMMA|E4M3", sass)),
                "sass_hgmma": len(re.findall(r"HGMMA|QGMMA", sass)),
                "sass_f2fp": len(re.findall(r"\bF2FP\.", sass)),
                "sass_ldsm": len(re.findall(r"\bLDSM\b", sass)),
                "sass_instructions": len(re.findall(r"/\*[0-9a-f]{4}\*/", sass)),
                "ttgir_fp_to_fp": ttgir.count("tt.fp_to_fp"),
                "ttgir_mma_v2": ttgir.count("versionMajor = 2"),
                "ttgir_mma_v3": ttgir.count("versionMajor = 3"),
                "regs": k.n_regs, "spills": k.n_spills, "shared": k.metadata.shared,
            }
            # the k-loop: between the last backward branch's target and that branch
            lines = [ln for ln in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)]
            loop = []
            for i, ln in enumerate(lines):
                mb = re.search(r"BRA (0x[0-9a-f]+)", ln)
                at = int(re.match(r"\s+/\*([0-9a-f]{4})\*/", ln).group(1), 16)
                if mb and int(mb.group(1), 16) < at:
                    target = int(mb.group(1), 16)
                    loop = [x for x in lines[:i + 1] if int(re.match(r"\s+/\*([0-9a-f]{4})\*/", x).group(1), 16) >= target]
            mnem = {}
            for ln in loop:
                mm = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", ln)
                if mm:
                    mnem[mm.group(1)] = mnem.get(mm.group(1), 0) + 1
            log(name, "loop body", len(loop), "instructions:", dict(sorted(mnem.items(), key=lambda kv: -kv[1])))
            f2fp_kinds = sorted(set(re.findall(r"F2FP\.[A-Z0-9_.]+", sass)))
            hmma_kinds = sorted(set(re.findall(r"H[G]?MMA\.[A-Z0-9_.]+", sass)))
            log(name, counts, "F2FP kinds", f2fp_kinds, "MMA kinds", hmma_kinds)
            rows.append(dict(kernel=name, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=stages, **counts,
                             f2fp_kinds=" ".join(f2fp_kinds), mma_kinds=" ".join(hmma_kinds)))
        except Exception as exc:  # noqa: BLE001
            log(name, "FAILED", repr(exc)[:600])
    if rows:
        with open(os.path.join(OUT, "triton_fp8_dot.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


# ------------------------------------------------------------------------------------------------
# 2. Throughputs
# ------------------------------------------------------------------------------------------------
HEAD = r"""
__device__ __forceinline__ unsigned long long gt() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
#define MMA_F16(d, a, b) asm volatile( \
  "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
  : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define MMA_BF16(d, a, b) asm volatile( \
  "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
  : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define MMA_E4M3(d, a, b) asm volatile( \
  "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
  : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define CVT(x) asm volatile("{.reg .b16 lo, hi; mov.b32 {lo, hi}, %0; cvt.rn.f16x2.e4m3x2 %0, lo;}" : "+r"(x))
"""

SETUP = r"""
    unsigned tid = threadIdx.x + 977u * blockIdx.x;
    float d[8][4];
    for (int i = 0; i < 8; ++i) for (int j = 0; j < 4; ++j) d[i][j] = 0.f;
    unsigned a[4], b[2], x[8];
    for (int i = 0; i < 4; ++i) a[i] = 0x3c003800u ^ ((tid * 2654435761u + i * 40503u) & 0x03ff03ffu);
    for (int i = 0; i < 2; ++i) b[i] = 0x3a003c00u ^ ((tid * 2246822519u + i * 7919u) & 0x03ff03ffu);
    for (int i = 0; i < 8; ++i) x[i] = 0x38303830u ^ ((tid * 3266489917u + i * 668265263u) & 0x07070707u);
"""
SINK = "d[0][0]+d[1][1]+d[2][2]+d[3][3]+d[4][0]+d[5][1]+d[6][2]+d[7][3]+(float)(x[0]^x[1]^x[2]^x[3]^x[4]^x[5]^x[6]^x[7])"

# per step: (body, mma flop, conversions (cvt instructions per thread))
CASES = {
    "mma_f16": ("".join(f"MMA_F16(d[{i}], a, b);" for i in range(8)), 8 * 4096, 0),
    "mma_bf16": ("".join(f"MMA_BF16(d[{i}], a, b);" for i in range(8)), 8 * 4096, 0),
    "mma_e4m3": ("".join(f"MMA_E4M3(d[{i}], a, b);" for i in range(8)), 8 * 8192, 0),
    "cvt": ("".join(f"CVT(x[{i}]);" for i in range(8)), 0, 8),
    "mix_4": ("".join(f"MMA_F16(d[{i}], a, b);" for i in range(8)) + "".join(f"CVT(x[{i}]);" for i in range(4)),
              8 * 4096, 4),
    "mix_12": ("".join(f"MMA_F16(d[{i}], a, b);" for i in range(8)) + "".join(f"CVT(x[{i % 8}]);" for i in range(12)),
               8 * 4096, 12),
    "mix_48": ("".join(f"MMA_F16(d[{i}], a, b);" for i in range(8)) + "".join(f"CVT(x[{i % 8}]);" for i in range(48)),
               8 * 4096, 48),
}

# (case, warps per block, blocks per SM)
PLAN = (
    [("mma_f16", w, 1) for w in (1, 2, 4, 8, 16)] + [("mma_f16", 2, b) for b in (2, 3, 4)] + [("mma_f16", 4, 2)]
    + [("mma_bf16", w, 1) for w in (1, 4, 8)]
    + [("mma_e4m3", w, 1) for w in (1, 2, 4, 8)]
    + [("cvt", w, 1) for w in (1, 2, 4, 8, 16, 32)]
    + [(m, w, 1) for m in ("mix_4", "mix_12", "mix_48") for w in (2, 4, 8)]
)


def kernel_src(name, body, sink):
    return HEAD + f"""
extern "C" __global__ void k_{name}(int outer, float* out, unsigned long long* t, unsigned* sm) {{
    {SETUP}
    __syncthreads();
    long long c0 = clock64(); unsigned long long g0 = gt();
    for (int o = 0; o < outer; ++o) {{
        #pragma unroll
        for (int u = 0; u < 16; ++u) {{ {body} }}
    }}
    __syncthreads();
    long long c1 = clock64(); unsigned long long g1 = gt();
    out[blockIdx.x * blockDim.x + threadIdx.x] = {sink};
    if (threadIdx.x == 0) {{ t[2 * blockIdx.x] = (unsigned long long)(c1 - c0); t[2 * blockIdx.x + 1] = g1 - g0;
                             sm[blockIdx.x] = smid(); }}
}}
"""


def throughput_part(n_sm):
    import cupy as cp
    kernels = {}
    rows = []
    for case, warps, bps in PLAN:
        body, flop, cvts = CASES[case]
        try:
            if case not in kernels:
                kernels[case] = cp.RawKernel(kernel_src(case, body, SINK), f"k_{case}", options=("-arch=sm_90",))
            k = kernels[case]
            blocks = n_sm * bps
            threads = 32 * warps
            # about 2 ms of work per launch at the expected rates
            outer = 512 if case != "cvt" else 256
            out = cp.zeros(blocks * threads, dtype=cp.float32)
            t = cp.zeros(2 * blocks, dtype=cp.uint64)
            sm = cp.zeros(blocks, dtype=cp.uint32)
            best = None
            for rep in range(4):
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record()
                k((blocks,), (threads,), (cp.int32(outer), out, t, sm))
                e1.record()
                e1.synchronize()
                if rep == 0:
                    continue
                ms = cp.cuda.get_elapsed_time(e0, e1)
                tt = t.get().reshape(-1, 2)
                sms = sm.get()
                per_sm = {}
                for bi in range(blocks):
                    per_sm.setdefault(int(sms[bi]), []).append((int(tt[bi, 0]), int(tt[bi, 1])))
                steps = outer * 16
                rates, cvt_rates, mhz, held = [], [], [], []
                for s, lst in per_sm.items():
                    cyc = max(c for c, _ in lst)
                    ns = max(g for _, g in lst)
                    held.append(len(lst))
                    rates.append(len(lst) * warps * steps * flop / cyc)
                    cvt_rates.append(len(lst) * warps * 32 * steps * cvts / cyc)
                    mhz.append(cyc / ns * 1e3 if ns else 0)
                r = dict(case=case, warps=warps, blocks_per_sm=bps, blocks=blocks, outer=outer,
                         steps=steps, flop_per_warp_step=flop, cvt_per_thread_step=cvts,
                         sms_used=len(per_sm), blocks_per_sm_min=min(held), blocks_per_sm_max=max(held),
                         mma_flop_per_cycle_sm=statistics.median(rates),
                         cvt_per_cycle_sm=statistics.median(cvt_rates),
                         sm_mhz=statistics.median(mhz), kernel_ms=ms)
                if best is None or ms < best["kernel_ms"]:
                    best = r
            rows.append(best)
            log(f"{case:9s} w{warps:<2d} b{bps} sms={best['sms_used']} held {best['blocks_per_sm_min']}-"
                f"{best['blocks_per_sm_max']}: {best['mma_flop_per_cycle_sm']:8.1f} mma flop/cycle/SM "
                f"{best['cvt_per_cycle_sm']:6.2f} cvt/cycle/SM at {best['sm_mhz']:.0f} MHz, {best['kernel_ms']:.3f} ms")
        except Exception as exc:  # noqa: BLE001
            log(case, warps, bps, "FAILED", repr(exc)[:600])
    if rows:
        with open(os.path.join(OUT, "fp8_mma.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})


# ------------------------------------------------------------------------------------------------
# 3. Triton's warp-mma k-step for an fp8 dot, one warp tile at a time
# ------------------------------------------------------------------------------------------------
# Per 32-deep k step a warp with an (RM x 16) x (RN x 8) tile runs what Triton 3.6 emits on sm_90
# (part 1's SASS: LDSM.16.M88.4 -> F2FP.F16.E4M3.UNPACK_B -> HMMA.16816.F32): RM ldmatrix.x4 of
# A (16 rows x 32 fp8) and ceil(RN / 2) of B (two 8-column slices), 8 conversions per A slice and
# 4 per B slice (each converts one 16-bit half: 2 fp8), 2 RM RN mma.sync m16n8k16 f16.
TILE_HEAD = r"""
#define LDSM4(r, addr) asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" \
  : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory")
#define CVT2(o0, o1, raw) asm volatile("{.reg .b16 lo, hi; mov.b32 {lo, hi}, %2; cvt.rn.f16x2.e4m3x2 %0, lo; cvt.rn.f16x2.e4m3x2 %1, hi;}" \
  : "=r"(o0), "=r"(o1) : "r"(raw))
"""


def tile_src(rm, rn):
    nb = (rn + 1) // 2
    body = []
    for i in range(rm):
        body.append(f"LDSM4(ar[{i}], base + (({i} * 512 + o * 64) & 4095));")
    for j in range(nb):
        body.append(f"LDSM4(br[{j}], base + 8192 + (({j} * 512 + o * 64) & 4095));")
    for i in range(rm):
        for h in range(4):
            body.append(f"CVT2(af[{i}][{2 * h}], af[{i}][{2 * h + 1}], ar[{i}][{h}]);")
    for j in range(rn):
        for h in range(2):
            body.append(f"CVT2(bf[{j}][{2 * h}], bf[{j}][{2 * h + 1}], br[{j // 2}][{2 * (j % 2) + h}]);")
    for kk in range(2):
        for i in range(rm):
            for j in range(rn):
                body.append(f"MMA_F16(d[{i}][{j}], (&af[{i}][{4 * kk}]), (&bf[{j}][{2 * kk}]));")
    return HEAD + TILE_HEAD + f"""
extern "C" __global__ void k_tile(int outer, float* out, unsigned long long* t, unsigned* sm) {{
    __shared__ __align__(16) unsigned char buf[16384];
    for (int k = threadIdx.x; k < 16384; k += blockDim.x) buf[k] = (unsigned char)(0x30 + (k * 7) % 13);
    unsigned base = (unsigned)__cvta_generic_to_shared(buf) + (threadIdx.x & 31) * 16;
    float d[{rm}][{rn}][4];
    for (int i = 0; i < {rm}; ++i) for (int j = 0; j < {rn}; ++j) for (int q = 0; q < 4; ++q) d[i][j][q] = 0.f;
    unsigned ar[{rm}][4], br[{nb}][4], af[{rm}][8], bf[{rn}][4];
    __syncthreads();
    long long c0 = clock64(); unsigned long long g0 = gt();
    #pragma unroll 4
    for (int o = 0; o < outer; ++o) {{
        {" ".join(body)}
    }}
    __syncthreads();
    long long c1 = clock64(); unsigned long long g1 = gt();
    float s = 0.f;
    for (int i = 0; i < {rm}; ++i) for (int j = 0; j < {rn}; ++j) s += d[i][j][0] + d[i][j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0) {{ t[2 * blockIdx.x] = (unsigned long long)(c1 - c0); t[2 * blockIdx.x + 1] = g1 - g0;
                             sm[blockIdx.x] = smid(); }}
}}
"""


TILES = [(1, 1), (1, 2), (2, 2), (1, 4), (2, 4), (4, 2), (4, 4), (2, 8)]


def tile_part(n_sm):
    import cupy as cp
    rows = []
    for rm, rn in TILES:
        nb = (rn + 1) // 2
        counts = dict(ldsm=rm + nb, f2fp=8 * rm + 4 * rn, hmma=2 * rm * rn)
        try:
            k = cp.RawKernel(tile_src(rm, rn), "k_tile", options=("-arch=sm_90",))
        except Exception as exc:  # noqa: BLE001
            log("tile", rm, rn, "FAILED to compile", repr(exc)[:400])
            continue
        for warps in (2, 4, 8):
            try:
                blocks, threads, outer = n_sm, 32 * warps, 4096
                out = cp.zeros(blocks * threads, dtype=cp.float32)
                t = cp.zeros(2 * blocks, dtype=cp.uint64)
                sm = cp.zeros(blocks, dtype=cp.uint32)
                cyc_best = None
                for rep in range(4):
                    k((blocks,), (threads,), (cp.int32(outer), out, t, sm))
                    cp.cuda.Device().synchronize()
                    if rep:
                        tt = t.get().reshape(-1, 2)
                        cyc = float(statistics.median(tt[:, 0]))
                        mhz = float(statistics.median(tt[:, 0] / tt[:, 1] * 1e3))
                        if cyc_best is None or cyc < cyc_best[0]:
                            cyc_best = (cyc, mhz)
                cyc, mhz = cyc_best
                # warps of one block spread over the 4 sub-partitions: ceil(warps / 4) per SMSP
                per_smsp = -(-warps // 4)
                step = cyc / outer / per_smsp
                r = dict(rm=rm, rn=rn, warp_tile=f"{16 * rm}x{8 * rn}", warps=warps, **counts,
                         cycles_per_kstep_per_warp=step,
                         mma_flop_per_cycle_sm=warps * outer * counts["hmma"] * 4096 / cyc, sm_mhz=mhz)
                rows.append(r)
                log(f"tile {16 * rm:>3}x{8 * rn:<3} w{warps}: {counts} {step:7.2f} cycles per k32 step per warp "
                    f"(= {step / counts['hmma']:.2f} per HMMA), {r['mma_flop_per_cycle_sm']:.0f} flop/cycle/SM, {mhz:.0f} MHz")
            except Exception as exc:  # noqa: BLE001
                log("tile", rm, rn, warps, "FAILED", repr(exc)[:400])
    if rows:
        with open(os.path.join(OUT, "fp8_warp_tile.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})


def main():
    log("device:", smi())
    try:
        import cupy as cp
        n_sm = cp.cuda.Device().attributes["MultiProcessorCount"]
    except Exception as exc:  # noqa: BLE001
        log("cupy failed", repr(exc)[:300])
        n_sm = 132
    log("SMs", n_sm)
    if os.environ.get("FP8_PART", "all") == "kn":
        triton_part(kn=True)
        return
    if os.environ.get("FP8_PART", "all") == "tiles":
        tile_part(n_sm)
        log("device after:", smi())
        return
    throughput_part(n_sm)
    tile_part(n_sm)
    log("device between:", smi())
    triton_part()
    log("device after:", smi())


if __name__ == "__main__":
    main()
