"""The shared memory Triton allocates a pipelined GEMM k-loop against tfx's estimate (no GPU: the campaigns'
compiled smem_bytes). Per path (warp mma: WARPS not a multiple of 4 or BM not of 64; warpgroup mma), STAGES,
the compiled bytes and tfx's estimate in tiles of (BM + BN) x BK x element bytes, and how many distinct
configurations (gemm_bf16, gemm_fp8 of calibration/h200/measured/issue15, priced at 4096^3).

Session 57: on the warp mma 660 configurations at 2-5 stages allocate exactly S - 1 tiles, on the warpgroup mma
419 exactly S; tfx's estimate (memory.peak_live: S copies of each load of a pipelined loop) was S on both. Session 58
landed the S - 1 rule (tfx/analysis/smem_buffers.py): the estimate column now matches at 2-5 stages on both paths,
and at one stage on the warp mma (fp8's operands staged in turn: smem_buffers.one_at_a_time).

Session 59: the attention and decode kernels beside them (every configuration of the campaigns' attention_causal,
attention_full and gqa_decode rows, and of calibration/h200/measured/attn_warp_s56, _s57 and calibration/h100/measured/
attn_warp_s58), the estimate against the compiled bytes: a one-stage loop holding one dot's operands at a time, P
crossing the warps through shared memory, decode's Q at the mma's 16 rows (tfx/analysis/smem_buffers.py).

    python3 bench/pipeline_buffers.py
"""
import csv, glob, collections
from tfx.analysis.analyze import analyze
from tfx.analysis.measured import Predictor
pr = Predictor("h200_sxm"); prof = pr.profile("h200_sxm")
mods = {"gemm_bf16": pr.module("kernels/gemm.tile"), "gemm_fp8": pr.module("kernels/gemm_fp8.tile")}
seen = {}
for path in sorted(glob.glob("calibration/h200/measured/issue15/run*/gemm.csv")):
    for r in csv.DictReader(open(path)):
        if r["family"] in mods and r["status"] == "ok" and r["smem_bytes"]:
            k = (r["family"], int(r["BM"]), int(r["BN"]), int(r["BK"]), int(r["WARPS"]), int(r["STAGES"]))
            seen[k] = int(r["smem_bytes"])
stats = collections.Counter(); ex = collections.defaultdict(list)
for (fam, bm, bn, bk, w, st), smem in sorted(seen.items()):
    a = analyze(mods[fam], None, prof, dict(M=4096, N=4096, K=4096, BM=bm, BN=bn, BK=bk, WARPS=w, STAGES=st, GROUP_M=8), check=False)
    est = int(a.resources.smem_dynamic) if hasattr(a.resources, "smem_dynamic") else None
    warp = (w % 4 != 0) or (bm % 64 != 0)
    tile = (bm * bk + bk * bn) * (1 if fam == "gemm_fp8" else 2)
    key = ("warp" if warp else "wgmma", "match" if est == smem else f"compiled = {smem / tile:.2f} tiles, est {est / tile:.2f}")
    stats[(key[0], st, round(smem / tile, 2), round(est / tile, 2))] += 1
for k, v in sorted(stats.items()):
    print(k, v)

# the attention and decode kernels: per family, configurations whose estimate equals the compiled bytes
from dataclasses import replace
from tfx.analysis.measured import read_measurements
CONFIG = ("D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "SPLITS", "HQ", "HKV")
paths = sorted(glob.glob("calibration/h200/measured/issue15/run*/attention.csv")
               + glob.glob("calibration/h200/measured/issue15/run*/decode.csv")
               + glob.glob("calibration/h*/measured/attn_warp_s5*/attention.csv"))
configs = {}
for path in paths:
    for r in read_measurements(path):
        if r.smem_bytes is not None:
            configs.setdefault((r.family,) + tuple(r.params.get(k) for k in CONFIG), r)
tally = collections.Counter()
for key, r in sorted(configs.items(), key=str):
    a = pr.analysis(replace(r, regs=None, spills=None, smem_bytes=None), use_measured=False)
    est = int(a.resources.smem_dynamic)
    tally[(r.family, "match" if est == r.smem_bytes else "differ")] += 1
    if est != r.smem_bytes:
        print("differs:", dict(zip(("family",) + CONFIG, key)), "compiled", r.smem_bytes, "estimate", est)
for k, v in sorted(tally.items()):
    print(k, v)
