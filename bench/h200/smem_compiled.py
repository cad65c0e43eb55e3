#!/usr/bin/env python3
"""The shared memory Triton allocates for random flash-attention and decode configurations, compiled on the CPU
(no GPU), beside tfx's estimate: a held-out check of tfx/analysis/smem_buffers.py (session 59).

The campaigns' rows (bench/pipeline_buffers.py) are the configurations the rules were read against; these are drawn
at random over wider ranges (D 64 / 128, BLOCK_M 16-128, BLOCK_N 16-128, 1-8 warps, 1-4 stages; decode GROUP 1-16,
BLOCK_N 16-128) with a fixed seed, compiled with Triton's own compiler for sm_90 (pip install triton==3.6.0, the
version of the campaigns; `ttg.shared`, the kernel's dynamic shared memory), and each priced by tfx with no compiled
resource given, as `tfx explore` prices it.

    PYTHONPATH=<triton 3.6.0 site> python3 bench/h200/smem_compiled.py OUT.csv [--count N] [--seed S]

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
from triton_kernels import decode_split_kernel, flash_fwd_kernel  # noqa: E402


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


def estimate(kind, p):
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    if kind == "flash":
        mod = parse_file(os.path.join(ROOT, "kernels", "flash_prefill.tile" if p["CAUSAL"] else "flash_attention.tile"))
        params = dict(D=p["D"], BLOCK_M=p["BLOCK_M"], BLOCK_N=p["BLOCK_N"], WARPS=p["WARPS"], STAGES=p["STAGES"])
    else:
        mod = parse_file(os.path.join(ROOT, "kernels", "gqa_decode.tile"))
        params = dict(HQ=8 * p["GROUP"], HKV=8, D=p["D"], BLOCK_N=p["BLOCK_N"], WARPS=p["WARPS"], STAGES=p["STAGES"])
    return int(analyze(mod, None, load_profile("h200_sxm"), params, check=False).resources.smem_dynamic)


def draws(count, seed):
    rng = random.Random(seed)
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
    args = ap.parse_args()
    fields = ["kernel", "CAUSAL", "GROUP", "D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "compiled_smem", "tfx_smem",
              "status"]
    tally = {}
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for kind, p in draws(args.count, args.seed):
            row = {"kernel": kind, **p}
            try:
                row["compiled_smem"] = flash(p) if kind == "flash" else decode(p)
                row["status"] = "ok"
            except Exception as e:                      # Triton refuses the configuration
                row["status"] = "refused: " + str(e).splitlines()[0][:120]
            row["tfx_smem"] = estimate(kind, p)
            w.writerow(row)
            if row["status"] == "ok":
                key = (kind, "equal" if row["compiled_smem"] == row["tfx_smem"] else "differ")
                tally[key] = tally.get(key, 0) + 1
                if key[1] == "differ":
                    print("differs:", kind, p, "compiled", row["compiled_smem"], "tfx", row["tfx_smem"], flush=True)
    for k, v in sorted(tally.items()):
        print(k, v)


if __name__ == "__main__":
    main()
