#!/usr/bin/env python3
"""H200: when and where each CTA of a tiled GEMM runs, by launch order (issue 15, session 12).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_cta_timeline.py OUTDIR
    PYTHONUNBUFFERED=1 CTA_SET=s12b python3 bench/h200/measure_cta_timeline.py OUTDIR   (drift12's rows)
    PYTHONUNBUFFERED=1 CTA_SET=s13 python3 bench/h200/measure_cta_timeline.py OUTDIR    (drift13's 1-stage rows)
    PYTHONUNBUFFERED=1 CTA_SET=s18 python3 bench/h200/measure_cta_timeline.py OUTDIR    (bigtile18's G1 rows)
    PYTHONUNBUFFERED=1 CTA_SET=s19 python3 bench/h200/measure_cta_timeline.py OUTDIR    (smallm19's one-wave rows)
    PYTHONUNBUFFERED=1 CTA_SET=s23 python3 bench/h200/measure_cta_timeline.py OUTDIR    (drift23's G1 rows)
    PYTHONUNBUFFERED=1 CTA_SET=s27g python3 bench/h200/measure_cta_timeline.py OUTDIR   (g1big27's G1 first picks)
On the CPU (no GPU; Triton 3.6.0 compiles both kernels of each configuration for sm_90 and prints
their registers, spilled words and shared memory side by side):
    [CTA_SET=...] python3 bench/h200/measure_cta_timeline.py --cpu

A physical fact for the L2-reuse model. groupm12 (docs/analysis.md, "Not modelled: GROUP_M = 1
and the lock step's limits") found that the readers of one B tile in a GROUP_M = 1 launch fetch
it again 0.12-0.94 of the times the lock-step model shares it, mostly where an SM holds 2-8 CTAs,
and that nothing in the repository says how far co-resident readers drift apart in time. Here
Triton's tutorial GEMM (bench/h200/triton_kernels.py matmul_kernel) is instrumented: each CTA
records its SM (%smid) and the global timer (%globaltimer, ns) at its start and after its k-loop
and store; the launch's rows say when each tile row's CTAs read their B tiles relative to the
other readers of the same tiles.

Files: one CSV per launch, timeline_<M>x<N>x<K>_<BM>x<BN>x<BK>_w<W>_s<S>_g<G>.csv with columns
pid, pid_m, pid_n, smid, t_start_ns, t_end_ns (relative to the launch's first start);
summary.csv (per launch: CTAs, SMs used, makespan, the median over B tiles of the spread of its
readers' start times, do_bench's median of the instrumented and of the plain kernel, and each
kernel's compiled registers, spilled words, shared memory, CTAs an SM (the driver's
cuOccupancyMaxActiveBlocksPerMultiprocessor, as measure_accuracy.py's blocks_per_sm) and waves);
stdout.txt.

Why both kernels' resources (cta_timeline_s13's README): the stamps and the record stores cost
registers, so the instrumented kernel can hold fewer CTAs an SM than the plain one and run waves
of its own (fp8 128x14336x14336 16x64x64 w2 s1: 0.564 ms instrumented against 0.343 plain); a
B-reader spread measured so is the instrumentation's second wave, not the plain launch's drift.
A line starting "WARNING" in the log names each launch whose two kernels differ.
"""
import csv
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (dtype, M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M); fp8: e4m3 with B K-major ([N, K]), as the
# issue15 campaigns measure it
CONFIGS = [("bf16", 128, 28672, 8192, 64, 256, 32, 8, 5, g) for g in (1, 2)]
CONFIGS += [("bf16", 2048, 8192, 4096, 64, 256, 64, 4, 5, g) for g in (1, 2)]
CONFIGS += [("bf16", 4096, 4096, 4096, 128, 128, 64, 4, 4, g) for g in (1, 2)]
CONFIGS += [("bf16", 6144, 6144, 6144, 64, 128, 32, 4, 4, g) for g in (1, 2)]
CONFIGS += [("bf16", 64, 28672, 4096, 16, 64, 32, 4, 5, g) for g in (1, 8)]
if os.environ.get("CTA_SET") == "s12b":
    # drift12's request: the G1 rows its drift term over-counts (fp8 with BK 64-128, 2-warp CTAs)
    CONFIGS = [(*c, g) for c in [("fp8", 128, 8192, 28672, 64, 64, 64, 8, 3), ("bf16", 64, 14336, 8192, 16, 256, 64, 2, 3),
                                 ("fp8", 4096, 14336, 8192, 64, 256, 128, 4, 2), ("fp8", 128, 28672, 4096, 32, 128, 64, 2, 4)]
               for g in (1, 8)]

if os.environ.get("CTA_SET") == "s13":
    # drift13's request: run14's 1-stage G1 rows (does a 1-stage reader that falls behind catch up?)
    CONFIGS = [(*c, g) for c in [("bf16", 128, 28672, 14336, 16, 256, 32, 2, 1),
                                 ("fp8", 128, 14336, 14336, 16, 64, 64, 2, 1)] for g in (1, 8)]

if os.environ.get("CTA_SET") == "s18":
    # bigtile18's request: GROUP_M = 1 launches whose B co-readers miss L2 at 1-3 CTAs an SM (run26 fp8
    # 1024x28672x8192, run23 bf16 2560x8192x8192), beside their G8 twins: how far apart in time the
    # co-readers of one B tile start and run, wave by wave
    CONFIGS = [(*c, g) for c in [("fp8", 1024, 28672, 8192, 64, 256, 64, 8, 4),
                                 ("fp8", 1024, 28672, 8192, 64, 128, 64, 4, 5),
                                 ("bf16", 2560, 8192, 8192, 64, 256, 64, 4, 5)] for g in (1, 8)]

if os.environ.get("CTA_SET") == "s19":
    # smallm19's request: one-wave small-M launches whose SMs hold uneven CTA counts (448 CTAs: 4 on
    # 52 SMs, 3 on 80; 224 CTAs: 2 on 92, 1 on 40), shallow (2 stages) and deep (4-5 stages)
    # pipelines: do the CTAs of the busiest SMs live as long as the others (DRAM shared among the
    # CTAs drawing, memory_parallelism.cta_share_weight) or r / r' times longer (the SMs' even shares)?
    CONFIGS = [("bf16", 16, 28672, 8192, 16, 64, 128, 2, 2, 1),      # run22 +15.0%: 448 CTAs
               ("bf16", 16, 28672, 8192, 16, 128, 64, 8, 5, 1),      # run22 +11.2%: 224 CTAs
               ("bf16", 16, 28672, 8192, 16, 64, 128, 4, 4, 1),      # run22 -7.3%: 1.13 waves
               ("bf16", 16, 14336, 8192, 16, 32, 128, 8, 4, 8),      # run7 -4.4%: 448 CTAs, 64-B rows
               ("bf16", 16, 14336, 8192, 16, 64, 32, 2, 5, 1),       # run1 +11.6%: 224 CTAs
               ("bf16", 16, 14336, 4096, 16, 64, 64, 2, 5, 1)]       # run3 -4.1%: 224 CTAs, K 4096

if os.environ.get("CTA_SET") == "s23":
    # drift23's request: run38's GROUP_M 1 first pick at 2560x14336x14336 (64x256x32 w4 s3, 2 CTAs an SM,
    # Nsight 9.34 GB from DRAM where the drift term re-fetches none of the shared re-reads) and run34's 128x64x32
    # w4 s2 G1 (-19% in the model), beside their G8 twins: when the co-readers of one B tile start, wave by wave
    CONFIGS = [(*c, g) for c in [("bf16", 2560, 14336, 14336, 64, 256, 32, 4, 3),
                                 ("bf16", 2560, 14336, 14336, 128, 64, 32, 4, 2)] for g in (1, 8)]

if os.environ.get("CTA_SET") == "s27g":
    # g1big27's request: run37's GROUP_M 1 first pick 2048x28672x14336 64x256x32 w8 s4 (-24%) beside its G8 twin,
    # run34's 128x64x64 w8 s3 G1 (-15%) and run19's 2048x28672x4096 128x128x64 w4 s3 G1 (-7%): do the co-readers walk
    CONFIGS = [("bf16", 2048, 28672, 14336, 64, 256, 32, 8, 4, 1), ("bf16", 2048, 28672, 14336, 64, 256, 32, 8, 4, 8),
               ("bf16", 2560, 14336, 14336, 128, 64, 64, 8, 3, 1), ("bf16", 2048, 28672, 4096, 128, 128, 64, 4, 3, 1)]


def kernels():
    import triton
    from triton_kernels import grouped_tile
    import triton.language as tl

    @triton.jit
    def matmul_timed_kernel(a_ptr, b_ptr, c_ptr, rec_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                            stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        # triton_kernels.matmul_kernel with four stores of what the CTA saw
        pid = tl.program_id(axis=0)
        t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [pid], dtype=tl.int64,
                                       is_pure=False, pack=1)
        sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pid], dtype=tl.int32,
                                       is_pure=False, pack=1)
        pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
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
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
        t1 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [pid], dtype=tl.int64,
                                       is_pure=False, pack=1)
        base = rec_ptr + pid.to(tl.int64) * 4
        tl.store(base + 0, sm.to(tl.int64))
        tl.store(base + 1, t0)
        tl.store(base + 2, t1)
        tl.store(base + 3, (pid_m * 65536 + pid_n).to(tl.int64))

    return matmul_timed_kernel


# what summary.csv records of each compiled kernel, prefixed plain_ / timed_
RESOURCES = ["regs", "spills", "smem_bytes", "ctas_per_sm", "waves"]


def resources(run, k, warps, ctas, sms):
    """The compiled kernel's registers, spilled words, shared memory, CTAs an SM and waves
    (ctas / (sms x CTAs an SM); "" where the occupancy query fails)."""
    info, err = run.resources(k, warps, smem="smem_bytes", regs="regs", spills="spills")
    if err:
        raise RuntimeError(err)
    per_sm = info.pop("blocks_per_sm")
    return dict(info, ctas_per_sm=per_sm, waves=f"{ctas / (sms * per_sm):.2f}" if per_sm else "")


def differences(plain, timed, keys=RESOURCES[:4]):
    """'regs 96 -> 140, ctas_per_sm 10 -> 6' for the resources on which the two kernels differ."""
    return ", ".join(f"{k} {plain[k]} -> {timed[k]}" for k in keys if plain[k] != timed[k])


def warning(plain, timed):
    """What the log says of a launch whose instrumented kernel differs from the plain one."""
    if plain["ctas_per_sm"] != timed["ctas_per_sm"]:
        return (f"the instrumented kernel holds {timed['ctas_per_sm']} CTAs an SM where the plain one holds "
                f"{plain['ctas_per_sm']} ({differences(plain, timed)}; waves {plain['waves']} -> {timed['waves']}): "
                f"its timeline and B-reader spreads are of its own occupancy")
    return f"the instrumented kernel's resources differ at the same CTAs an SM ({differences(plain, timed)})"


def compile_cpu(fn, cfg, extra_ptrs=()):
    """fn compiled for sm_90 without a GPU as the launch specialises it: (regs, spilled words,
    shared bytes), read with cuobjdump -res-usage as measure_spill_sass.compile_cpu does."""
    import re
    import subprocess
    import tempfile
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from common import launch_signature
    from measure_spill_sass import cuobjdump_path
    dt, M, N, K, BM, BN, BK, W, S, G = cfg
    ptr = "*fp8e4nv" if dt == "fp8" else "*bf16"
    sbk, sbn = (1, K) if dt == "fp8" else (N, 1)       # fp8's B is the [K, N] view of [N, K]
    sig, consts, attrs = launch_signature(
        fn, {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": "*bf16", **{p: "*i64" for p in extra_ptrs}},
        dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=sbk, stride_bn=sbn, stride_cm=N, stride_cn=1),
        dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=G))
    k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=W, num_stages=S))
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"])
        f.flush()
        usage = subprocess.run([cuobjdump_path(), "-res-usage", f.name], capture_output=True, text=True,
                               timeout=60).stdout
    return (int(re.search(r"REG:(\d+)", usage).group(1)), int(re.search(r"STACK:(\d+)", usage).group(1)) // 4,
            k.metadata.shared)


def cpu_check():
    """Both kernels' compiled resources per configuration, their CTAs an SM from tfx's occupancy
    (which counts as the driver's query does) and waves on the H200's SMs."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    from tfx.analysis.occupancy import OccupancyLimits, Resources, compute_occupancy
    from tfx.hw import load_profile
    from triton_kernels import matmul_kernel
    profile = load_profile("h200_sxm")
    limits, sms = OccupancyLimits.from_profile(profile), profile.units_of("sm")
    timed = kernels()

    def of(fn, cfg, **kw):
        dt, M, N, K, BM, BN, BK, W, S, G = cfg
        res = dict(zip(RESOURCES[:3], compile_cpu(fn, cfg, **kw)))
        per_sm = compute_occupancy(limits, Resources(threads=32 * W, regs_per_thread=res["regs"],
                                                     smem_dynamic=res["smem_bytes"])).blocks_per_sm
        ctas = -(-M // BM) * -(-N // BN)
        return dict(res, ctas_per_sm=per_sm, waves=f"{ctas / (sms * per_sm):.2f}")
    for cfg in CONFIGS:
        plain, inst = of(matmul_kernel, cfg), of(timed, cfg, extra_ptrs=("rec_ptr",))
        print(f"{cfg_name(cfg)}: plain {plain}, timed {inst}", flush=True)
        if differences(plain, inst):
            print(f"WARNING {cfg_name(cfg)}: {warning(plain, inst)}", flush=True)


def cfg_name(cfg):
    dt, M, N, K, BM, BN, BK, W, S, G = cfg
    return f"{'fp8_' if dt == 'fp8' else ''}{M}x{N}x{K}_{BM}x{BN}x{BK}_w{W}_s{S}_g{G}"


def main():
    if "--help" in sys.argv or "-h" in sys.argv:
        print(__doc__)
        return
    if "--cpu" in sys.argv:
        cpu_check()
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t_begin = time.time()
    import torch
    import triton
    from triton_kernels import matmul_kernel
    from common import Campaign, median_ms
    run = Campaign()                    # the occupancy query only: this script prints its own lines
    timed = kernels()
    cdiv = triton.cdiv
    print(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name()}", flush=True)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    summary = []
    for cfg in CONFIGS:
        dt, M, N, K, BM, BN, BK, W, S, G = cfg
        name = cfg_name(cfg)
        row = dict(config=name, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S, GROUP_M=G, status="ok")
        try:
            if dt == "fp8":
                a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
                b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()   # [K, N] view of [N, K]
            else:
                a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
            c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            grid_n = cdiv(M, BM) * cdiv(N, BN)
            rec = torch.zeros(grid_n, 4, device="cuda", dtype=torch.int64)
            kw = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=G, num_warps=W, num_stages=S)
            args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

            def plain():
                return matmul_kernel[(grid_n,)](*args, **kw)

            def inst():
                return timed[(grid_n,)](a, b, c, rec, *args[3:], **kw)

            res_plain, res_timed = resources(run, plain(), W, grid_n, sms), resources(run, inst(), W, grid_n, sms)
            row.update({"plain_" + k: v for k, v in res_plain.items()})
            row.update({"timed_" + k: v for k, v in res_timed.items()})
            if differences(res_plain, res_timed):
                print(f"WARNING {name}: {warning(res_plain, res_timed)}", flush=True)
            row["plain_ms"] = f"{median_ms(plain, warmup=5, rep=50):.5f}"
            row["timed_ms"] = f"{median_ms(inst, warmup=5, rep=50):.5f}"
            # the recorded launch: L2 cleared first, as do_bench does
            flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
            flush.zero_()
            torch.cuda.synchronize()
            inst()
            torch.cuda.synchronize()
            r = rec.cpu().tolist()
            t_min = min(x[1] for x in r)
            with open(os.path.join(out, f"timeline_{name}.csv"), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["pid", "pid_m", "pid_n", "smid", "t_start_ns", "t_end_ns"])
                for pid, (sm, t0, t1, mn) in enumerate(r):
                    w.writerow([pid, mn // 65536, mn % 65536, sm, t0 - t_min, t1 - t_min])
            starts = {}
            for sm, t0, t1, mn in r:
                starts.setdefault(mn % 65536, []).append(t0 - t_min)
            spreads = sorted(max(v) - min(v) for v in starts.values() if len(v) > 1)
            row.update(ctas=grid_n, sms=len({x[0] for x in r}), makespan_us=f"{(max(x[2] for x in r) - t_min) / 1e3:.1f}",
                       median_b_reader_spread_us=f"{spreads[len(spreads) // 2] / 1e3:.1f}" if spreads else "",
                       mean_cta_us=f"{sum(x[2] - x[1] for x in r) / len(r) / 1e3:.2f}")
            del a, b, c, rec, flush
            torch.cuda.empty_cache()
        except Exception as e:  # keep going: one failure must not lose the rest
            row["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
        summary.append(row)
        print(f"[{time.time() - t_begin:6.1f}s] {row}", flush=True)
    cols = ["config", "M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M", "ctas", "sms", "makespan_us",
            "mean_cta_us", "median_b_reader_spread_us", "plain_ms", "timed_ms"]
    cols += [w + k for w in ("plain_", "timed_") for k in RESOURCES] + ["status"]
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for row in summary:
            w.writerow([row.get(k, "") for k in cols])


if __name__ == "__main__":
    main()
