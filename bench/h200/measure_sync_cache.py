#!/usr/bin/env python3
"""Unpipelined (1-stage) GEMMs with Triton's default load caching and with .cg, side by side.

Usage (on the device machine, an H100 or an H200):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_sync_cache.py OUTDIR
or, to check that every kernel compiles for sm_90 without a GPU (triton 3.6.0 and its ptxas):
    python3 bench/h200/measure_sync_cache.py OUTDIR --cpu

Why (docs/analysis.md section 8, "Unpipelined loads" and "The same split in gemm_bf16, by A's rows"):
`pipeline.sync_load_cycles` (11.01 ns a warp-wide 16-byte load) was measured on private tiles loaded
with `.cg` (they skip L1), while the issue-15 GEMMs' 1-stage loads are Triton's default ld.global,
which allocates in L1. The 1-stage rows whose load-path floor binds price +19..+24% (too slow) where
A's rows are 128-256 B and +2..+6% at 64 B. On an H100 with `.cg`, private 64x64xBK tiles saturate
the load path at 51.7-53.3 B/ns per SM for 64-, 128- and 256-byte rows alike (sync_rows_h100): the
row length alone does not set the rate under `.cg`. This script times the issue-15 kernel itself
(bench/h200/triton_kernels.py's matmul_kernel, its CACHE constexpr the loads' cache modifier) at
1-stage configurations of every row length and warp count, at one shape, each with both caches: if
the default caching is faster by the share the rows show, the floor's rate belongs to the caching.

Output: gemm_default.csv and gemm_cg.csv in the columns of calibration/*/measured/issue15/run*/gemm.csv
(profile: the lent device's bundled profile), log.txt. Timing: common.median_ms (do_bench's median,
L2 cleared before each run), random bf16 inputs, both caches of a configuration timed back to back.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton                       # noqa: E402
from triton_kernels import matmul_kernel   # noqa: E402  (its CACHE constexpr: the loads' cache modifier)

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
CPU = "--cpu" in sys.argv
DEADLINE_S = float(os.environ.get("SYNC_CACHE_DEADLINE_S", "240"))
M = N = K = int(os.environ.get("SYNC_CACHE_MNK", "4096"))
GROUP_M = 8
# (BM, BN, BK, WARPS): A's rows are BK x 2 B (64, 128, 256 B); the issue-15 1-stage classes of
# docs/analysis.md's table (2, 4 and 8 warps; one to ten CTAs a SM)
TILES = [(64, 32, 32, 2), (64, 32, 64, 2), (64, 32, 128, 2), (128, 32, 128, 2),
         (64, 64, 32, 4), (64, 64, 64, 4), (64, 64, 128, 4), (128, 64, 32, 4), (64, 128, 64, 4),
         (64, 32, 64, 4), (64, 64, 64, 8), (128, 128, 32, 8)]
CACHES = {"default": "", "cg": ".cg"}
COLS = ["kernel", "profile", "measured_ms", "M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M", "layout",
        "ms_graph", "regs", "spills", "smem_bytes", "family", "shape", "split", "seed", "status", "blocks_per_sm",
        "rel_err", "error"]


def cpu_check():
    """Compile every (tile, cache) for sm_90 without a GPU; print registers and whether the loads differ."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from common import launch_signature
    ints = dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1)
    for bm, bn, bk, w in TILES:
        for name, mod in CACHES.items():
            sig, consts, attrs = launch_signature(matmul_kernel, {"a_ptr": "*bf16", "b_ptr": "*bf16",
                                                                        "c_ptr": "*bf16"}, ints,
                                                  dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=GROUP_M, CACHE=mod))
            k = triton.compile(ASTSource(fn=matmul_kernel, signature=sig, constexprs=consts, attrs=attrs),
                               target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=1))
            loads = sorted({t for ln in k.asm["ptx"].splitlines() for t in ln.split() if t.startswith("ld.global")})
            print(f"{bm}x{bn}x{bk} w{w} {name}: smem {k.metadata.shared} B, ptx loads {loads}")


def main():
    import torch
    from common import Campaign, median_ms, write_rows
    run = Campaign(nvsmi_fields="name,driver_version,clocks.sm,clocks.mem,power.draw,power.limit")
    run.open(OUT, "log.txt")
    name = torch.cuda.get_device_name()
    profile = "h100_sxm" if "H100" in name else "h200_sxm"
    run.log("device:", name, "profile:", profile, "triton:", triton.__version__, "shape:", M, N, K)
    run.nvsmi()
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    ref = (a.float() @ b.float())
    rows = {k: [] for k in CACHES}
    t0 = time.time()
    for bm, bn, bk, w in TILES:
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        for cname, mod in CACHES.items():
            if time.time() - t0 > DEADLINE_S:
                run.log("deadline: stopped before", bm, bn, bk, w, cname)
                break
            args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
            kw = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=GROUP_M, CACHE=mod, num_warps=w, num_stages=1)
            row = dict(kernel="kernels/gemm.tile", profile=profile, M=M, N=N, K=K, BM=bm, BN=bn, BK=bk, WARPS=w,
                       STAGES=1, GROUP_M=GROUP_M, layout="kn", ms_graph="", family="gemm_bf16",
                       shape=f"{M}x{N}x{K}", split="sync_cache", seed=0, error="")
            try:
                k = matmul_kernel[grid](*args, **kw)
                info, err = run.resources(k, w, smem="smem_bytes", regs="regs", spills="spills")
                torch.cuda.synchronize()
                rel = float((c.float() - ref).norm() / ref.norm())
                ms = median_ms(lambda: matmul_kernel[grid](*args, **kw), warmup=5, rep=25)
                row.update(info, measured_ms=f"{ms:.6g}", rel_err=f"{rel:.3g}", status="ok" if rel < 2e-2 else "bad")
            except Exception as e:       # one configuration's failure must not end the run
                row.update(measured_ms="", status="failed", error=repr(e)[:200])
            run.log(f"{bm}x{bn}x{bk} w{w} {cname}: {row.get('measured_ms')} ms regs={row.get('regs')} "
                    f"spills={row.get('spills')} occ={row.get('blocks_per_sm')} {row['status']}")
            rows[cname].append({col: row.get(col, "") for col in COLS})
    for cname, rs in rows.items():
        write_rows(os.path.join(OUT, f"gemm_{cname}.csv"), rs)
    run.nvsmi()
    run.log("done")
    run.close()


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    cpu_check() if CPU else main()
