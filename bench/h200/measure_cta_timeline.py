#!/usr/bin/env python3
"""H200: when and where each CTA of a tiled GEMM runs, by launch order (issue 15, session 12).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_cta_timeline.py OUTDIR
    PYTHONUNBUFFERED=1 CTA_SET=s12b python3 bench/h200/measure_cta_timeline.py OUTDIR   (drift12's rows)
    PYTHONUNBUFFERED=1 CTA_SET=s13 python3 bench/h200/measure_cta_timeline.py OUTDIR    (drift13's 1-stage rows)

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
readers' start times, do_bench's median of the instrumented and of the plain kernel); stdout.txt.
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

def kernels():
    import triton
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
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
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


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t_begin = time.time()
    import torch
    import triton
    from triton_kernels import matmul_kernel
    from common import median_ms
    timed = kernels()
    cdiv = triton.cdiv
    print(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name()}", flush=True)
    summary = []
    for cfg in CONFIGS:
        dt, M, N, K, BM, BN, BK, W, S, G = cfg
        name = f"{'fp8_' if dt == 'fp8' else ''}{M}x{N}x{K}_{BM}x{BN}x{BK}_w{W}_s{S}_g{G}"
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
                matmul_kernel[(grid_n,)](*args, **kw)

            def inst():
                timed[(grid_n,)](a, b, c, rec, *args[3:], **kw)

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
            "mean_cta_us", "median_b_reader_spread_us", "plain_ms", "timed_ms", "status"]
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for row in summary:
            w.writerow([row.get(k, "") for k in cols])


if __name__ == "__main__":
    main()
