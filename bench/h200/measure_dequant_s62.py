#!/usr/bin/env python3
"""What holds a dequantizing k-loop back: the weight-only GEMMs' pipes (session 62, issue 15)

    PYTHONUNBUFFERED=1 python3 bench/h200/measure_dequant_s62.py OUTDIR      # bash bench/h200/run_s62.sh

The first campaign of kernels/gemm_w4a16.tile and gemm_w8a16.tile (calibration/h100/measured/issue15/run86,
an H100) measured every configuration 1.0-6.5x slower than tfx prices it (w4a16 median -70%, w8a16 -37%): tfx
prices the register cast as vector flops at the f16 rate, and Triton 3.6.0's SASS (compiled here offline, see
docs/analysis.md) spends per weight element one F2F.BF16.F16 (fp8 -> f16 -> bf16) or one I2F.S16/I2F.S8 (4-bit
code -> f32) plus PRMT, F2FP, FMUL and, on the warp mma, one LDS.U8 a byte. Which pipe saturates, and at what
rate per SM, decides the mechanism. Two parts:

1. Throughputs (CuPy, inline PTX, as measure_fp8_mma.py): 8 dependent chains a thread of one instruction,
   1-32 warps a block, one block an SM: lanes a cycle an SM of cvt.bf16.f16 (F2F.BF16.F16), cvt.rn.f32.s16
   (I2F.S16), cvt.rn.bf16x2.f32 (F2FP.BF16.F32.PACK_AB), cvt.rn.f16x2.e4m3x2 (F2FP.F16.E4M3.UNPACK_B, the
   control: 59.78 a cycle measured on the H200), prmt.b32 and mul.f32 (controls: the ALU and FMA pipes), and
   cvt.bf16.f16 with cvt.rn.f32.s16 interleaved (one pipe or two). Then each op again as one dependent chain
   on one warp (session 64): the cycles a step of the chain, each conversion's latency (plus the mov's that
   unpack and repack its register, free where ptxas renames them). run86's cycles a weight fall as the warps an
   SM rise (w4a16 about 2x from 4 warps an SM to 12-16), the mark of trips bound by their dependent chains, not
   by a pipe's rate: these latencies are what such a chain is priced with.
2. Nsight Compute on eight campaign configurations (run86's), each launch profiled once with the sections
   ComputeWorkloadAnalysis (every pipe's share of its peak), InstructionStats, WarpStateStats (stall reasons),
   Occupancy and SpeedOfLight, at the boost clock (--clock-control none), beside do_bench's median.

Writes OUTDIR/dequant_rates.csv (part 1), OUTDIR/dequant_ncu.csv (part 2: one row a launch, every raw metric
whose name names a pipe, an issue stall, executed instructions or the duration) and OUTDIR/ncu_raw.txt.
"""
import csv
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import Campaign, bench_job, launch_twice, ncu_last_row  # noqa: E402

# (family, M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M): run86's rows (H100 us / tfx us at 7cd3082)
CONFIGS = [
    ("gemm_w8a16", 16, 4096, 4096, 16, 64, 256, 4, 3, 8),        # 64 CTAs, warp mma:      24.7 / 18.1
    ("gemm_w8a16", 1024, 14336, 4096, 16, 128, 128, 8, 3, 8),    # 7168 CTAs, warp mma:  1392.2 / 615.9
    ("gemm_w8a16", 1024, 14336, 4096, 128, 128, 64, 8, 4, 8),    # 896 CTAs, wgmma:       314.5 / 178.4
    ("gemm_w8a16", 256, 4096, 14336, 64, 128, 128, 8, 5, 1),     # 128 CTAs, wgmma:       148.5 / 65.8
    ("gemm_w4a16", 16, 4096, 4096, 16, 64, 256, 8, 5, 8),        # 64 CTAs, warp mma:      42.5 / 10.9
    ("gemm_w4a16", 1024, 14336, 4096, 16, 64, 128, 4, 5, 8),     # 14336 CTAs:          2151.3 / 574.1
    ("gemm_w4a16", 1024, 14336, 4096, 64, 64, 128, 4, 3, 8),     # 3584 CTAs, wgmma:      497.3 / 288.8
    ("gemm_w4a16", 256, 4096, 14336, 32, 256, 128, 4, 4, 8),     # 128 CTAs:              400.3 / 78.1
]

SECTIONS = ["ComputeWorkloadAnalysis", "InstructionStats", "WarpStateStats", "Occupancy", "SpeedOfLight",
            "LaunchStats"]
KEEP = ("pipe", "stalled", "inst_executed", "issue_active", "gpu__time_duration", "warps_active", "cycles_elapsed",
        "cycles_active", "sm__throughput", "ipc")


def job_of(cfg):
    fam, M, N, K, BM, BN, BK, W, S, G = cfg
    p = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S, GROUP_M=G)
    return ("wq_gemm.csv", fam, f"kernels/{fam}.tile", "x", 0, f"{M}x{N}x{K}", p)


def child(cfg):
    """Launch the configuration twice (ncu profiles the second: the first compiles)."""
    launch_twice(job_of(cfg))


# ------------------------------------------------------------------------------------------------
# 1. Throughputs
# ------------------------------------------------------------------------------------------------
HEAD = r"""
__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
"""
# per step of each chain: (PTX body with %0 the chain's 32-bit register, instructions a step)
OPS = {
    "f2f_bf16_f16": ("{.reg .b16 lo, hi; mov.b32 {lo, hi}, %0; cvt.bf16.f16 lo, lo; mov.b32 %0, {lo, hi};}", 1),
    "i2f_s16": ("{.reg .b16 lo, hi; .reg .f32 f; mov.b32 {lo, hi}, %0; cvt.rn.f32.s16 f, lo; mov.b32 %0, f;}", 1),
    "f2fp_bf16_f32": ("{.reg .f32 f; mov.b32 f, %0; cvt.rn.bf16x2.f32 %0, f, f;}", 1),
    "f2fp_e4m3": ("{.reg .b16 lo, hi; mov.b32 {lo, hi}, %0; cvt.rn.f16x2.e4m3x2 %0, lo;}", 1),
    "prmt": ("prmt.b32 %0, %0, %0, 0x1032;", 1),
    "fmul": ("{.reg .f32 f; mov.b32 f, %0; mul.f32 f, f, f; mov.b32 %0, f;}", 1),
    "f2f_and_i2f": ("{.reg .b16 lo, hi, flo, fhi; .reg .f32 f; mov.b32 {lo, hi}, %0; cvt.bf16.f16 lo, lo; "
                    "cvt.rn.f32.s16 f, hi; mov.b32 {flo, fhi}, f; mov.b32 %0, {lo, fhi};}", 2),
}
# (op, warps, chains a thread): 8 independent chains for the rates, then one chain on one warp for the latency
PLAN = [(op, w, 8) for op in OPS for w in (1, 4, 8, 16, 32)] + [(op, 1, 1) for op in OPS]


def kernel_src(name, body, chains=8):
    """The kernel k_<name>_c<chains>: each thread runs ``chains`` independent chains of ``body``, 16 steps an
    outer trip (one chain: every step waits for the one before)."""
    steps = "".join(f'asm volatile("{body}" : "+r"(x[{i}]));' for i in range(chains))
    return HEAD + f"""
extern "C" __global__ void k_{name}_c{chains}(int outer, unsigned* out, unsigned long long* t, unsigned* sm) {{
    unsigned tid = threadIdx.x + 977u * blockIdx.x;
    unsigned x[8];
    for (int i = 0; i < 8; ++i) x[i] = 0x3c003c00u ^ ((tid * 2654435761u + i * 40503u) & 0x00ff00ffu);
    __syncthreads();
    long long c0 = clock64();
    for (int o = 0; o < outer; ++o) {{
        #pragma unroll
        for (int u = 0; u < 16; ++u) {{ {steps} }}
    }}
    __syncthreads();
    long long c1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = x[0] ^ x[1] ^ x[2] ^ x[3] ^ x[4] ^ x[5] ^ x[6] ^ x[7];
    if (threadIdx.x == 0) {{ t[blockIdx.x] = (unsigned long long)(c1 - c0); sm[blockIdx.x] = smid(); }}
}}
"""


def throughput_part(out_dir, n_sm, log):
    import cupy as cp
    rows = []
    kernels = {}
    for op, warps, chains in PLAN:
        body, per_step = OPS[op]
        try:
            if (op, chains) not in kernels:
                kernels[op, chains] = cp.RawKernel(kernel_src(op, body, chains), f"k_{op}_c{chains}",
                                                   options=("-arch=sm_90",))
            k = kernels[op, chains]
            threads = 32 * warps
            outer = 256
            out = cp.zeros(n_sm * threads, dtype=cp.uint32)
            t = cp.zeros(n_sm, dtype=cp.uint64)
            sm = cp.zeros(n_sm, dtype=cp.uint32)
            best = None
            for rep in range(3):
                k((n_sm,), (threads,), (cp.int32(outer), out, t, sm))
                cp.cuda.Device().synchronize()
                if rep == 0:
                    continue
                cyc = t.get().astype(float)
                sms = sm.get()
                per_sm = {}
                for b in range(n_sm):
                    per_sm.setdefault(int(sms[b]), []).append(cyc[b])
                # lanes a cycle an SM: every thread's instructions over the SM's longest block
                work = threads * outer * 16 * chains * per_step
                rate = statistics.median(len(v) * work / max(v) for v in per_sm.values())
                # one chain: a step's cycles are the chain's latency (the SM's longest block over its steps)
                step = statistics.median(max(v) / (outer * 16) for v in per_sm.values())
                r = dict(op=op, warps=warps, chains=chains, instructions_per_step=per_step,
                         lanes_per_cycle_sm=round(rate, 2),
                         cycles_per_warp_instruction_subpartition=round(32 * 4 / rate, 3) if rate else "",
                         cycles_per_chain_step=round(step, 2), sms_used=len(per_sm))
                if best is None or rate > best["lanes_per_cycle_sm"]:
                    best = r
            rows.append(best)
            log(f"{op:14s} w{warps:<2d} x{chains} chains: {best['lanes_per_cycle_sm']:7.2f} lanes/cycle/SM "
                f"({best['cycles_per_warp_instruction_subpartition']} cycles a warp instruction on a sub-partition, "
                f"{best['cycles_per_chain_step']} cycles a chain step)")
        except Exception as exc:  # noqa: BLE001
            log(op, warps, "FAILED", repr(exc)[:400])
    if rows:
        with open(os.path.join(out_dir, "dequant_rates.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


# ------------------------------------------------------------------------------------------------
# 2. Nsight Compute on the campaign's kernels
# ------------------------------------------------------------------------------------------------
def ncu_part(out_dir, log, deadline):
    from measure_l2_groupm import find_ncu
    ncu = find_ncu()
    log(f"ncu: {ncu}")
    raw = open(os.path.join(out_dir, "ncu_raw.txt"), "w")
    rows = []
    t0 = time.time()
    for cfg in CONFIGS:
        row = {"config": " ".join(map(str, cfg)), "status": "ok"}
        try:
            job = job_of(cfg)
            row["measured_ms"] = f"{bench_job(job):.5f}"
            if ncu:
                cmd = [ncu, "--csv", "--page", "raw", "--clock-control", "none"]
                for s in SECTIONS:
                    cmd += ["--section", s]
                cmd += ["-k", "regex:w[48]a16_kernel", "--launch-skip", "1", "--launch-count", "1",
                        sys.executable, os.path.abspath(__file__), "--one"] + [str(v) for v in cfg]
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=HERE)
                raw.write(f"### {cfg}\n{r.stdout}\n{r.stderr[-2000:]}\n")
                raw.flush()
                last = ncu_last_row(r.stdout)
                if last is None:
                    row["status"] = "ncu_failed"
                else:
                    head, units, data = last
                    for i, name in enumerate(head):
                        if any(k in name for k in KEEP):
                            row[name] = f"{data[i].replace(',', '')} {units[i]}".strip()
            else:
                row["status"] = "no_ncu"
        except Exception as exc:  # noqa: BLE001
            row["status"] = f"error: {type(exc).__name__}: {str(exc)[:160]}"
        rows.append(row)
        log(f"[{time.time() - t0:6.1f}s] {cfg}: {row.get('measured_ms')} ms, {row['status']}")
        if time.time() > deadline:
            log("deadline: stopping")
            break
    raw.close()
    cols = ["config", "measured_ms", "status"]
    for r in rows:
        cols += [c for c in r if c not in cols]
    with open(os.path.join(out_dir, "dequant_ncu.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([r.get(c, "") for c in cols])


def main():
    if "--one" in sys.argv:
        a = sys.argv[sys.argv.index("--one") + 1:]
        child((a[0], *map(int, a[1:])))
        return
    out = sys.argv[1]
    run = Campaign(stamp="[{:6.1f}s] ")
    run.open(out, "log.txt")
    log, t_start = run.log, run.t0
    import torch
    props = torch.cuda.get_device_properties(0)
    log(f"{props.name}, {props.multi_processor_count} SMs; torch {torch.__version__}")
    deadline = t_start + float(os.environ.get("DEQ_DEADLINE_S", "200"))
    try:
        throughput_part(out, props.multi_processor_count, log)
    except Exception as exc:  # noqa: BLE001
        log("throughput part FAILED", repr(exc)[:400])
    ncu_part(out, log, deadline)
    run.close()


if __name__ == "__main__":
    main()
