#!/usr/bin/env python3
"""H200 physical facts for the split-KV decode trip (kernels/gqa_decode.tile launch 1): how long
one trip of the KV loop takes on an SM when its K and V tiles come from L2 (the trip's own chain
and its demand on the SM, r CTAs per SM) and from DRAM (the SM's rate with one CTA per SM on a
few SMs and on all of them), at every BLOCK_N x WARPS x STAGES of the issue 15 decode rows.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_decode_trip.py OUTDIR

The kernel is measure_accuracy.py's decode_split_kernel (GROUP = 4 query rows padded to GP = 16,
D = 128, masked K and V loads, online softmax in base 2, two tl.dot a trip, V loaded after the
softmax), one CTA per program id, each streaming TOKENS tokens of K and V:
  source=l2    every CTA reads the same TOKENS tokens (8192 x 256 B x 2 = 4 MiB: L2-resident),
               launched on 132 x r CTAs, so each SM holds r of them (r at most the driver's
               occupancy for the compiled kernel, at most 4);
  source=dram  every CTA reads its own TOKENS tokens from a buffer far larger than L2, on
               `ctas` = 16 or 132 CTAs (one per SM) and 264 (two per SM, where they fit; with
               TRIP_DRAM_MAX_R=4 also 396 and 528, three and four per SM).
A time per trip comes from two loop lengths: (t(long) - t(short)) / (trips(long) - trips(short)),
which removes the launch, the prologue, the epilogue and the first misses after the L2 clear.
Columns: source, BLOCK_N, WARPS, STAGES, ctas, r (CTAs per SM), tile_bytes (K + V a trip),
ns_per_trip (of one CTA), bytes_per_ns_per_sm (r x tile_bytes / ns_per_trip), regs, spills,
smem, occupancy, ms_short, ms_long. Times: triton.testing.do_bench median (L2 cleared first).
"""
import csv
import os
import subprocess
import sys
import time

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_decode_trip")
LOG = open(os.path.join(OUT, "log.txt"), "w")
T0 = time.time()
DEADLINE_S = float(os.environ.get("TRIP_DEADLINE_S", "115"))
# TRIP_CONFIGS="64,8,1;128,4,1" picks the BLOCK_N,WARPS,STAGES to run (default: all 27);
# TRIP_DRAM_MAX_R=4 adds DRAM rows at 3 and 4 CTAs a SM (132 x r CTAs, where they fit; default 2)
CONFIGS_ENV = os.environ.get("TRIP_CONFIGS", "")
DRAM_MAX_R = int(os.environ.get("TRIP_DRAM_MAX_R", "2"))


def pick_configs(text):
    """[(BLOCK_N, WARPS, STAGES)] from TRIP_CONFIGS, else every one of the campaigns' 27."""
    if not text.strip():
        return [(bn, w, s) for s in (3, 2, 1) for bn in (64, 128, 32) for w in (4, 2, 8)]
    return [tuple(int(x) for x in c.split(",")) for c in text.split(";") if c.strip()]


def dram_runs(occ, sms, max_r):
    """(source, ctas, r) of the DRAM rows: 16 and one a SM, then r a SM up to min(occupancy, max_r)."""
    return [("dram", 16, 1), ("dram", sms, 1)] + [("dram", r * sms, r) for r in range(2, min(occ or 1, max_r) + 1)]


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

SMS = torch.cuda.get_device_properties(0).multi_processor_count
DEV = "cuda"
G, GP, D = 4, 16, 128
LOG2E = 1.4426950408889634


@triton.jit
def decode_trip(Q, Kc, Vc, OP, qk_scale, TOKENS, SHARED: tl.constexpr, G: tl.constexpr, GP: tl.constexpr,
                D: tl.constexpr, BLOCK_N: tl.constexpr):
    # measure_accuracy.py's decode_split_kernel, one CTA per program id over TOKENS tokens
    pid = tl.program_id(0)
    offs_g = tl.arange(0, GP)
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, BLOCK_N)
    gmask = offs_g < G
    q = tl.load(Q + (pid * G + offs_g)[:, None] * D + offs_d[None, :], mask=gmask[:, None], other=0.0)
    kv_base = pid.to(tl.int64) * TOKENS * D * (1 - SHARED)
    m_i = tl.full([GP], float("-inf"), tl.float32)
    l_i = tl.zeros([GP], tl.float32)
    acc = tl.zeros([GP, D], tl.float32)
    for j in range(0, TOKENS // BLOCK_N):
        n = j * BLOCK_N + offs_n
        nmask = n < TOKENS
        k = tl.load(Kc + kv_base + n[:, None] * D + offs_d[None, :], mask=nmask[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(nmask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(Vc + kv_base + n[:, None] * D + offs_d[None, :], mask=nmask[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    row = pid * G + offs_g
    tl.store(OP + row[:, None] * D + offs_d[None, :], acc, mask=gmask[:, None])
    tl.store(OP + row, m_i + l_i, mask=gmask)


def occupancy(kernel, threads, smem):
    try:
        from cuda.bindings import driver as cud
        err, n = cud.cuOccupancyMaxActiveBlocksPerMultiprocessor(cud.CUfunction(kernel.function), threads, smem)
        return int(n) if int(err) == 0 else None
    except Exception as e:  # noqa: BLE001
        log("occupancy query unavailable:", repr(e)[:200])
        return None


def bench(fn):
    return triton.testing.do_bench(fn, warmup=5, rep=25, return_mode="median")


def main():
    log("device", torch.cuda.get_device_name(0), "sms", SMS, "torch", torch.__version__, "triton", triton.__version__)
    rows = []
    max_ctas = max(2, DRAM_MAX_R) * SMS
    q = torch.randn(max_ctas * G, D, device=DEV, dtype=torch.bfloat16)
    o = torch.empty(max_ctas * G, D, device=DEV, dtype=torch.float32)
    l2_long, l2_short = 8192, 2048
    dr_long, dr_short = 16384, 4096
    k_l2 = torch.randn(l2_long, D, device=DEV, dtype=torch.bfloat16)
    v_l2 = torch.randn(l2_long, D, device=DEV, dtype=torch.bfloat16)
    k_dr = torch.randn(max_ctas * dr_long, D, device=DEV, dtype=torch.bfloat16)
    v_dr = torch.randn(max_ctas * dr_long, D, device=DEV, dtype=torch.bfloat16)
    scale = LOG2E / D ** 0.5
    configs = pick_configs(CONFIGS_ENV)
    for bn, w, s in configs:
        if time.time() - T0 > DEADLINE_S:
            log("deadline: stopping before", bn, w, s)
            break
        try:
            k = decode_trip.warmup(q, k_l2, v_l2, o, scale, l2_short, SHARED=1, G=G, GP=GP, D=D, BLOCK_N=bn,
                                   grid=(SMS,), num_warps=w, num_stages=s)
            k._init_handles()
            decode_trip.warmup(q, k_dr, v_dr, o, scale, dr_short, SHARED=0, G=G, GP=GP, D=D, BLOCK_N=bn,
                               grid=(SMS,), num_warps=w, num_stages=s)
        except Exception as e:  # noqa: BLE001
            log("compile failed", bn, w, s, repr(e)[:200])
            continue
        occ = occupancy(k, 32 * w, k.metadata.shared)
        runs = [("l2", SMS * r, r) for r in range(1, min(occ or 1, 4) + 1)]
        runs += dram_runs(occ, SMS, DRAM_MAX_R)
        for source, ctas, r in runs:
            shared = 1 if source == "l2" else 0
            kk, vv = (k_l2, v_l2) if shared else (k_dr, v_dr)
            short, long = (l2_short, l2_long) if shared else (dr_short, dr_long)

            def launch(tokens, ctas=ctas, shared=shared, kk=kk, vv=vv):
                decode_trip[(ctas,)](q, kk, vv, o, scale, tokens, SHARED=shared, G=G, GP=GP, D=D, BLOCK_N=bn,
                                     num_warps=w, num_stages=s)
            ts = bench(lambda: launch(short))
            tl_ = bench(lambda: launch(long))
            ns = (tl_ - ts) * 1e6 / ((long - short) // bn)
            tile = 2 * bn * D * 2
            row = {"source": source, "BLOCK_N": bn, "WARPS": w, "STAGES": s, "ctas": ctas, "r": r,
                   "tile_bytes": tile, "ns_per_trip": round(ns, 2), "bytes_per_ns_per_sm": round(r * tile / ns, 2),
                   "regs": k.n_regs, "spills": k.n_spills, "smem": k.metadata.shared, "occupancy": occ,
                   "ms_short": round(ts, 5), "ms_long": round(tl_, 5)}
            rows.append(row)
            log(row)
        with open(os.path.join(OUT, "decode_trip.csv"), "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw",
                            "--format=csv"], capture_output=True, text=True, timeout=20)
        log(r.stdout.strip())
    except Exception as e:  # noqa: BLE001
        log("nvidia-smi failed", repr(e)[:100])
    log("rows", len(rows), "total", round(time.time() - T0, 1), "s")


if __name__ == "__main__":
    main()
