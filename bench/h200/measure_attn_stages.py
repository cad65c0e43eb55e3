#!/usr/bin/env python3
"""H200 physical facts for the attention trip at shallow pipelines: the FlashAttention-2 inner
loop (measure_chain_overlap.py's attn_trip, the loop of bench/h200/triton_kernels.py's
flash_fwd_kernel) at num_stages 1, 2, 3 and 4 for fixed tiles, 1 and 2 CTAs per SM.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_attn_stages.py OUTDIR

What it answers (tfx.analysis.pipeline_depth, chain_overlap): at 2 stages the copies a trip
issues last are the ones the next trip waits for at its top (the SASS: DEPBAR.LE SB0, 0x0
before the QK^T's BAR.SYNC; 0x2 at 3 stages), so the round at S = 2 less the round at S = 3
is the copies' round trip less what of it the asynchronous PV mma covers. Measuring it at
tiles of 16, 32 and 64 KiB of K and V a trip says how that round trip grows with the bytes.
At S = 1 nothing is prefetched (the loads are issued at the top of the trip, into registers
or shared memory) and the round is the chain plus the whole round trip. 128 x 32 on 8 warps
vs 4 warps: two warpgroups sharing one CTA's K and V tile (a CTA barrier each trip) vs one.

Every kernel runs on 132 x r CTAs (r no more than the driver's occupancy), each SM holding r
at once; K and V of HEADS heads, CTA i reading head i % HEADS (HEADS = 1: every CTA the same
K and V, L2-resident; HEADS = 4 spreads the wave over four heads as the issue-15 rows of one
query length do). A trip's time is (t(long) - t(short)) / (trips(long) - trips(short)).
Kernels are compiled first in a process pool (the Triton cache is shared), then timed one at
a time with triton.testing.do_bench (median). Microbenchmarks of mechanisms, not rows of the
issue-15 truth.

Writes attn_stages.csv (one row per tile, stages, heads, r) and log.txt.
"""
import csv
import multiprocessing as mp
import os
import sys
import time

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_attn_stages")
DEADLINE_S = float(os.environ.get("STAGES_DEADLINE_S", "105"))
SHORT, LONG = 2048, 6144          # key lengths of the two launches (K and V: 6144 x 128 x 2 B x 2 = 3 MiB a head)

# (D, BLOCK_M, BLOCK_N, WARPS): K + V bytes a trip = 2 x BLOCK_N x D x 2
TILES = [(128, 64, 32, 4), (128, 64, 64, 4), (128, 64, 128, 4), (128, 128, 64, 8), (128, 128, 32, 8),
         (128, 128, 32, 4), (128, 128, 128, 8), (64, 128, 64, 4)]
STAGES = (1, 2, 3, 4)
HEADS_OF = {(128, 128, 32, 8, 4): (1, 4), (128, 64, 64, 4, 3): (1, 4), (128, 64, 128, 4, 2): (1, 4)}


import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def attn_trip_heads(Q, K, V, O, qk_scale, SKV, HEADS, D: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    # measure_chain_overlap.py's attn_trip (EXP = 1) with K and V of head pid % HEADS
    pm = tl.program_id(0)
    kv = (pm % HEADS).to(tl.int64) * SKV * D
    offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for j in range(0, SKV // BLOCK_N):
        n = j * BLOCK_N + offs_n
        k = tl.load(K + kv + n[:, None] * D + offs_d[None, :])
        s = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + kv + n[:, None] * D + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], o.to(O.dtype.element_ty))


def buffers(D, BM):
    import torch
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    q = torch.randn(sms * 2 * BM, D, device="cuda", dtype=torch.bfloat16)
    kk = torch.randn(4 * LONG, D, device="cuda", dtype=torch.bfloat16)
    vv = torch.randn(4 * LONG, D, device="cuda", dtype=torch.bfloat16)
    return sms, q, kk, vv, torch.empty_like(q)


def compile_one(cfg):
    """Compile one configuration in a worker (fills the shared Triton cache)."""
    D, BM, BN, W, S, heads = cfg
    t = time.time()
    try:
        sms, q, kk, vv, o = buffers(D, BM)
        attn_trip_heads.warmup(q, kk, vv, o, 0.1, SHORT, heads, D=D, BLOCK_M=BM, BLOCK_N=BN, grid=(sms,), num_warps=W,
                    num_stages=S)
        return cfg, round(time.time() - t, 1), ""
    except Exception as e:  # noqa: BLE001
        return cfg, round(time.time() - t, 1), repr(e)[:200]


def main():
    t0 = time.time()
    os.makedirs(OUT, exist_ok=True)
    logf = open(os.path.join(OUT, "log.txt"), "w")

    def log(*a):
        s = f"[{time.time() - t0:6.1f}s] " + " ".join(str(x) for x in a)
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()

    import torch
    import triton
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    cfgs = [(D, BM, BN, W, S) for (D, BM, BN, W) in TILES for S in STAGES]
    jobs = [c + (h,) for c in cfgs for h in HEADS_OF.get(c, (1,))]
    with mp.get_context("spawn").Pool(min(len(jobs), max(1, (os.cpu_count() or 4) - 2))) as pool:
        for cfg, secs, err in pool.imap_unordered(compile_one, jobs):
            log("compiled", cfg, secs, "s", err)
    kern = attn_trip_heads
    from cuda.bindings import driver as cud
    cols = ["D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "HEADS", "r", "kv_bytes_per_trip", "regs", "spills",
            "smem", "occupancy", "ns_per_round", "ms_short", "ms_long"]
    f = open(os.path.join(OUT, "attn_stages.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()

    def bench(fn):
        return triton.testing.do_bench(fn, warmup=5, rep=25, return_mode="median")

    # order: every tile at r = 1 first (the facts that matter most), then r = 2
    for r in (1, 2):
        for D, BM, BN, W, S in cfgs:
            for heads in HEADS_OF.get((D, BM, BN, W, S), (1,)):
                if time.time() - t0 > DEADLINE_S:
                    log("deadline: stop")
                    f.close()
                    return
                try:
                    sms, q, kk, vv, o = buffers(D, BM)
                    k = kern.warmup(q, kk, vv, o, 0.1, SHORT, heads, D=D, BLOCK_M=BM, BLOCK_N=BN, grid=(sms,),
                                    num_warps=W, num_stages=S)
                    k._init_handles()
                    err, occ = cud.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        cud.CUfunction(k.function), 32 * W, k.metadata.shared)
                    occ = int(occ)
                    if r > occ:
                        continue
                    scale = 1.4426950408889634 / D ** 0.5

                    def launch(skv):
                        kern[(sms * r,)](q, kk, vv, o, scale, skv, heads, D=D, BLOCK_M=BM, BLOCK_N=BN,
                                         num_warps=W, num_stages=S)
                    ts = bench(lambda: launch(SHORT))
                    tl_ = bench(lambda: launch(LONG))
                    ns = (tl_ - ts) * 1e6 / (LONG // BN - SHORT // BN)
                    row = dict(D=D, BLOCK_M=BM, BLOCK_N=BN, WARPS=W, STAGES=S, HEADS=heads, r=r,
                               kv_bytes_per_trip=2 * BN * D * 2, regs=k.n_regs, spills=k.n_spills,
                               smem=k.metadata.shared, occupancy=occ, ns_per_round=round(ns, 2),
                               ms_short=round(ts, 5), ms_long=round(tl_, 5))
                    w.writerow(row)
                    f.flush()
                    log("row", row)
                except Exception as e:  # noqa: BLE001
                    log("failed", (D, BM, BN, W, S, heads, r), repr(e)[:200])
    f.close()
    try:
        import subprocess
        res = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw",
                              "--format=csv"], capture_output=True, text=True, timeout=20)
        log(res.stdout.strip())
    except Exception as e:  # noqa: BLE001
        log("nvidia-smi failed", repr(e)[:100])
    log("total", round(time.time() - t0, 1), "s")


if __name__ == "__main__":
    main()
