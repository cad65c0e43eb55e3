#!/usr/bin/env python3
"""The shared memory Triton allocates for random flash-attention and decode configurations, compiled on the CPU
(no GPU), beside tfx's estimate: a held-out check of tfx/analysis/smem_buffers.py (session 59).

The campaigns' rows (bench/pipeline_buffers.py) are the configurations the rules were read against; these are drawn
at random over wider ranges (D 64 / 128, BLOCK_M 16-128, BLOCK_N 16-128, 1-8 warps, 1-4 stages; decode GROUP 1-16,
BLOCK_N 16-128) with a fixed seed, compiled with Triton's own compiler for sm_90 (pip install triton==3.6.0, the
version of the campaigns; `ttg.shared`, the kernel's dynamic shared memory), and each priced by tfx with no compiled
resource given, as `tfx explore` prices it.

    PYTHONPATH=<triton 3.6.0 site> python3 bench/h200/smem_compiled.py OUT.csv [--count N] [--seed S] [--kinds gemm]

``--kinds epilogue`` compiles a fixed grid instead: bf16 GEMMs at BK 16 and one stage (BM 16-256, BN 32-256, 2 / 4 /
8 warps), whose tiles are small enough that the epilogue's conversion of the accumulator through shared memory sets
the kernel's bytes (what tfx leaves out). ``--kinds gemm`` draws the GEMMs instead (bf16, fp8 with B^T K-major, fp8 with B[K, N]: BM 16-256, BN 32-256, BK
32-128, 2-8 warps, 1-5 stages; M = N = K = 4096).

Writes one row per configuration (kernel, parameters, compiled shared bytes, tfx's estimate) and prints how many
agree per kernel. A configuration Triton refuses (shared memory past the 227 KB opt-in, a layout it cannot make) is
written with status `refused` and its reason.
"""
import argparse
import csv
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_smem_compiled")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from common import launch_signature  # noqa: E402
from triton_kernels import decode_split_kernel, flash_fwd_kernel, matmul_kernel  # noqa: E402


def compile_shared(fn, sig, consts, divisible, warps, stages):
    names = fn.arg_names
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in divisible}
    signature = {k: sig.get(k, "constexpr") for k in names}
    k = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=stages))
    return k.metadata.shared


def flash(p):
    sig = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "O": "*bf16", "LSE": "*fp32", "qk_scale": "fp32", "S": "i32"}
    return compile_shared(flash_fwd_kernel, sig, dict(D=p["D"], BLOCK_M=p["BLOCK_M"], BLOCK_N=p["BLOCK_N"],
                                                       CAUSAL=p["CAUSAL"]),
                          ("Q", "K", "V", "O", "LSE", "S"), p["WARPS"], p["STAGES"])


def decode(p):
    sig = {"Q": "*bf16", "Kc": "*bf16", "Vc": "*bf16", "OP": "*fp32", "MLP": "*fp32", "qk_scale": "fp32", "SKV": "i32",
           "SPLIT_LEN": "i32", "SPLITS": "i32", "HKV": "i32", "G": "i32"}
    gp = max(16, 1 << (p["GROUP"] - 1).bit_length())          # the campaigns' GP: tl.dot's 16 rows at least
    return compile_shared(decode_split_kernel, sig, dict(GP=gp, D=p["D"], BLOCK_N=p["BLOCK_N"]),
                          ("Q", "Kc", "Vc", "OP", "MLP", "SKV", "SPLIT_LEN"), p["WARPS"], p["STAGES"])


def gemm(p, M=4096, N=4096, K=4096):
    fp8 = p["DTYPE"] != "bf16"
    sbk, sbn = (1, K) if p["DTYPE"] == "fp8" else (N, 1)       # fp8: B^T K-major; fp8_kn and bf16: B[K, N]
    ints = dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=sbk, stride_bn=sbn, stride_cm=N, stride_cn=1)
    t = "*fp8e4nv" if fp8 else "*bf16"
    sig, consts, attrs = launch_signature(matmul_kernel, {"a_ptr": t, "b_ptr": t, "c_ptr": "*bf16"}, ints,
                                          dict(BLOCK_M=p["BM"], BLOCK_N=p["BN"], BLOCK_K=p["BK"], GROUP_M=8))
    k = triton.compile(ASTSource(fn=matmul_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=p["WARPS"], num_stages=p["STAGES"]))
    return k.metadata.shared


GEMM_KERNELS = {"bf16": "gemm.tile", "fp8": "gemm_fp8.tile", "fp8_kn": "gemm_fp8_kn.tile"}


def estimate(kind, p):
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    if kind == "gemm":
        mod = parse_file(os.path.join(ROOT, "kernels", GEMM_KERNELS[p["DTYPE"]]))
        params = dict(M=4096, N=4096, K=4096, BM=p["BM"], BN=p["BN"], BK=p["BK"], WARPS=p["WARPS"],
                      STAGES=p["STAGES"], GROUP_M=8)
    elif kind == "flash":
        mod = parse_file(os.path.join(ROOT, "kernels", "flash_prefill.tile" if p["CAUSAL"] else "flash_attention.tile"))
        params = dict(D=p["D"], BLOCK_M=p["BLOCK_M"], BLOCK_N=p["BLOCK_N"], WARPS=p["WARPS"], STAGES=p["STAGES"])
    else:
        mod = parse_file(os.path.join(ROOT, "kernels", "gqa_decode.tile"))
        params = dict(HQ=8 * p["GROUP"], HKV=8, D=p["D"], BLOCK_N=p["BLOCK_N"], WARPS=p["WARPS"], STAGES=p["STAGES"])
    return int(analyze(mod, None, load_profile("h200_sxm"), params, check=False).resources.smem_dynamic)


def draws(count, seed, kinds):
    rng = random.Random(seed)
    if kinds == "epilogue":
        # not random: bf16 GEMMs at BK 16 and one stage, whose few tile bytes let the epilogue's conversion show
        for warps in (2, 4, 8):
            for bm in (16, 32, 64, 128, 256):
                for bn in (32, 64, 128, 256):
                    yield "gemm", dict(DTYPE="bf16", BM=bm, BN=bn, BK=16, WARPS=warps, STAGES=1)
        return
    if kinds == "gemm":
        for _ in range(count):
            yield "gemm", dict(DTYPE=rng.choice(["bf16", "fp8", "fp8_kn"]), BM=rng.choice([16, 32, 64, 128, 256]),
                               BN=rng.choice([32, 64, 128, 256]), BK=rng.choice([32, 64, 128]),
                               WARPS=rng.choice([2, 4, 8]), STAGES=rng.choice([1, 2, 3, 4, 5]))
        return
    for i in range(count):
        if i % 2 == 0:
            yield "flash", dict(CAUSAL=rng.choice([0, 1]), D=rng.choice([64, 128]), BLOCK_M=rng.choice([16, 32, 64, 128]),
                                BLOCK_N=rng.choice([16, 32, 64, 128]), WARPS=rng.choice([1, 2, 4, 8]),
                                STAGES=rng.choice([1, 2, 3, 4]))
        else:
            yield "decode", dict(GROUP=rng.choice([1, 2, 4, 8, 16]), D=rng.choice([64, 128]),
                                 BLOCK_N=rng.choice([16, 32, 64, 128]), WARPS=rng.choice([1, 2, 4, 8]),
                                 STAGES=rng.choice([1, 2, 3, 4]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=80)
    ap.add_argument("--seed", type=int, default=59)
    ap.add_argument("--kinds", choices=("attention", "gemm", "epilogue"), default="attention",
                    help="attention: flash and decode (the default); gemm: bf16, fp8 and fp8 K x N GEMMs; epilogue: "
                         "the grid of bf16 GEMMs at BK 16, one stage (BM 16-256 x BN 32-256 x 2-8 warps)")
    args = ap.parse_args()
    fields = ["kernel", "CAUSAL", "GROUP", "D", "BLOCK_M", "BLOCK_N", "DTYPE", "BM", "BN", "BK", "WARPS", "STAGES",
              "compiled_smem", "tfx_smem", "status"]
    tally = {}
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for kind, p in draws(args.count, args.seed, args.kinds):
            row = {"kernel": kind, **p}
            try:
                row["compiled_smem"] = {"flash": flash, "decode": decode, "gemm": gemm}[kind](p)
                row["status"] = "ok"
            except Exception as e:                      # Triton refuses the configuration
                row["status"] = "refused: " + str(e).splitlines()[0][:120]
            row["tfx_smem"] = estimate(kind, p)
            w.writerow(row)
            if row["status"] == "ok":
                kind = kind if kind != "gemm" else f"gemm {p['DTYPE']}"
                key = (kind, "equal" if row["compiled_smem"] == row["tfx_smem"] else "differ")
                tally[key] = tally.get(key, 0) + 1
                if key[1] == "differ":
                    print("differs:", kind, p, "compiled", row["compiled_smem"], "tfx", row["tfx_smem"], flush=True)
    for k, v in sorted(tally.items()):
        print(k, v)


if __name__ == "__main__":
    main()
