#!/usr/bin/env python3
"""The weight-only GEMMs' k-loop trips compiled on the CPU (no GPU), by pipe: what a trip issues per weight.

Compiles triton_kernels.w4a16_kernel / w8a16_kernel for sm_90 with Triton 3.6.0 (the devices' version) as the
campaign's launches specialise them (pointers 16-byte aligned, M, N, K i32 divisible by 16), at every
configuration of a campaign file (kernels/gemm_w4a16.tile and gemm_w8a16.tile rows whose status is ok), and
counts the SASS of the trip loop (the backward branch whose body holds the mmas: HMMA on the warp mma, HGMMA
on the warpgroup mma) by opcode and by the pipe the Kernel Profiling Guide names (sass_loops.py). A trip
converts BN x BK weights over WARPS x 32 threads; the counts are one warp's (one SASS instruction = one warp
instruction), so a pipe's instructions over (BN x BK / (32 x WARPS)) are its instructions a weight.

    /tmp/tvenv/bin/python bench/h200/wq_loop_sass.py calibration/h100/measured/issue15/run86/wq_gemm.csv OUTDIR

Writes OUTDIR/sass_loop_counts.csv (one row a configuration) and OUTDIR/loops/loop_<name>.txt (each loop's
instructions). No kernel is run.
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_wq_loop_sass")
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from common import launch_signature  # noqa: E402
from sass_loops import parse, sass_of, trip_loop, write_loop  # noqa: E402
import triton_kernels as tk  # noqa: E402

# the opcodes (their first part) a dequantizing trip spends per weight, each a column of the CSV
OPCODES = ("I2F", "F2F", "F2FP", "PRMT", "LOP3", "SHF", "VIADD", "IADD3", "IMAD", "FMUL", "FADD", "FFMA", "HFMA2",
           "LDS", "STS", "LDSM", "LDGSTS", "HMMA", "HGMMA")
PIPES = ("alu", "fma", "fp16", "xu", "lsu", "tensor", "uniform", "cbu")


def compile_one(family, BM, BN, BK, warps, stages, group_m, M, N, K):
    if family == "gemm_w8a16":
        kernel, ptrs = tk.w8a16_kernel, {"a_ptr": "*bf16", "w_ptr": "*fp8e4nv", "s_ptr": "*bf16", "c_ptr": "*bf16"}
        consts = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=group_m)
    else:
        kernel, ptrs = tk.w4a16_kernel, {"a_ptr": "*bf16", "w_ptr": "*u8", "s_ptr": "*bf16", "c_ptr": "*bf16"}
        consts = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=group_m, GROUP=128)
    sig, consts, attrs = launch_signature(kernel, ptrs, {"M": M, "N": N, "K": K}, consts)
    return triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=consts, attrs=attrs),
                          target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=stages))


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, "loops"), exist_ok=True)
    seen, rows = set(), []
    for r in csv.DictReader(open(src)):
        if r["status"] != "ok":
            continue
        cfg = (r["family"],) + tuple(int(r[k]) for k in ("BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M"))
        if cfg in seen:
            continue
        seen.add(cfg)
        family, BM, BN, BK, warps, stages, group_m = cfg
        name = f"{family}_{BM}x{BN}x{BK}_w{warps}_s{stages}_g{group_m}"
        k = compile_one(*cfg, int(r["M"]), int(r["N"]), int(r["K"]))
        sass, regs = sass_of(k, os.path.join(out, "loops"), name)
        body = trip_loop(parse(sass), ("HMMA", "HGMMA"))
        ops, pipes = write_loop(os.path.join(out, "loops", f"loop_{name}.txt"), name, body, regs)
        os.remove(os.path.join(out, "loops", f"{name}.cubin"))
        os.remove(os.path.join(out, "loops", f"{name}.sass"))
        heads = {}
        for op, n in ops.items():
            heads[op.split(".")[0]] = heads.get(op.split(".")[0], 0) + n
        row = dict(family=family, BM=BM, BN=BN, BK=BK, WARPS=warps, STAGES=stages, GROUP_M=group_m, regs=regs,
                   smem_bytes=k.metadata.shared, weights_a_thread=BN * BK // (32 * warps), loop_instructions=len(body))
        row.update({f"pipe_{p}": pipes.get(p, 0) for p in PIPES})
        row.update({op: heads.get(op, 0) for op in OPCODES})
        rows.append(row)
        print(name, "regs", regs, "loop", len(body), "|", " ".join(f"{p}={n}" for p, n in sorted(pipes.items())),
              flush=True)
    with open(os.path.join(out, "sass_loop_counts.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
