#!/usr/bin/env python3
"""H200 physical facts for the attention trip's serial chain: how fast a warpgroup mma runs per
N, and how the chains of co-resident CTAs overlap on one SM (tfx.analysis.mma_path).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_chain_overlap.py OUTDIR

Every kernel is launched on 132 x r CTAs (r CTAs on each of the 132 SMs; r never above the
occupancy the driver reports for the compiled kernel), so each SM holds exactly r of them at
once. A time per trip comes from two loop lengths: (t(long) - t(short)) / (trips(long) -
trips(short)), which removes the launch, the prologue and the epilogue.

Parts (one CSV each):
  mma_rate.csv  a 64-row warpgroup mma alone, ``acc = dot(a, b, acc)`` with a [64, K] and
                b [K, N] bf16 loop-invariant (4 warps), N = 32..256, K = 64 / 128: flop per ns
                per SM and the fraction of 4096 flop/cycle x the SM clock; the PTX of the
                mma (SS: both operands from shared memory, RS: A from registers).
  two_phase.csv a synthetic two-phase chain, ``s = dot(a, b, s * c)`` (its warps wait for
                it) then E rounds of ``s = exp2(s * c2 - 1)`` (MUFU + FP32) on the 64 x 64
                scores, at r = 1..8: ns per round of the r CTAs. r = 1 is one chain; the
                ratio k(r) = round(r) / round(1) says how the co-resident chains overlap
                (k = r: in turn; k -> r x max(T, N) / (T + N): fully overlapped).
  attn_trip.csv the FlashAttention-2 inner loop as measure_accuracy.py compiles it
                (non-causal, K and V of one head shared by every CTA, so L2-resident) for a
                few tiles at D = 64 and 128 and r = 1..r_max: ns per round; EXP = 0 replaces
                exp2 by a subtraction (what the special-function work costs in the chain).
  attn_loads.csv the same trip with and without its copies (K, V loaded once before the loop;
                QK^T's accumulator m_i x a runtime 0 so the invariant dot is not hoisted), and
                sass.txt, the SASS of each such kernel with its opcode histogram (cuobjdump).
  log.txt       everything printed.
  mma_waited.csv one warpgroup mma group a trip that the next trip waits for (s = dot(a, b, s * c)),
                A from registers (RS, as attention's PV) or from shared memory (SS), 1-4 CTAs per SM.
CHAIN_PARTS=mma_rate,two_phase,attn_trip,attn_loads,mma_waited picks the parts (default: all).
Times: triton.testing.do_bench median.
"""
import csv
import os
import subprocess
import sys
import time

from common import Campaign

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_chain")
RUN = Campaign(stamp=None)
RUN.open(OUT, "log.txt")
log = RUN.log
T0 = RUN.t0
DEADLINE_S = float(os.environ.get("CHAIN_DEADLINE_S", "360"))


import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

SMS = torch.cuda.get_device_properties(0).multi_processor_count
DEV = "cuda"


def occupancy(kernel, threads, smem):
    try:
        from cuda.bindings import driver as cud
        err, n = cud.cuOccupancyMaxActiveBlocksPerMultiprocessor(cud.CUfunction(kernel.function), threads, smem)
        return int(n) if int(err) == 0 else None
    except Exception as e:  # noqa: BLE001
        log("occupancy query unavailable:", repr(e)[:200])
        return None


def bench(fn):
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median")


def write(name, rows):
    if not rows:
        return
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def wgmma_line(k):
    try:
        for line in k.asm["ptx"].splitlines():
            if "wgmma.mma_async" in line:
                return line.strip()[:160]
    except Exception:  # noqa: BLE001
        pass
    return ""


@triton.jit
def mma_loop(A, B, O, iters, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    pid = tl.program_id(0)
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    acc = tl.zeros([M, N], tl.float32)
    for i in range(iters):
        acc = tl.dot(a, b, acc)
    tl.store(O + pid * M * N + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def two_phase(A, B, O, iters, c, c2, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, E: tl.constexpr):
    pid = tl.program_id(0)
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    s = tl.zeros([M, N], tl.float32)
    for i in range(iters):
        s = tl.dot(a, b, s * c)
        for e in tl.static_range(E):
            s = tl.exp2(s * c2 - 1.0)
    tl.store(O + pid * M * N + rm[:, None] * N + rn[None, :], s)


@triton.jit
def attn_trip(Q, K, V, O, qk_scale, SKV, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              EXP: tl.constexpr):
    # measure_accuracy.py's flash_fwd_kernel (non-causal), every CTA on the same K and V
    pm = tl.program_id(0)
    offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for j in range(0, SKV // BLOCK_N):
        n = j * BLOCK_N + offs_n
        k = tl.load(K + n[:, None] * D + offs_d[None, :])
        s = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        if EXP:
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
        else:
            alpha = m_i - m_new + 1.0
            p = s - m_new[:, None]
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + n[:, None] * D + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], o.to(O.dtype.element_ty))


@triton.jit
def attn_trip_noload(Q, K, V, O, qk_scale, zero, SKV, D: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    # attn_trip with K and V loaded once before the loop (no copies in the trip); QK^T's
    # accumulator is m_i * zero (a runtime 0) so the compiler cannot hoist the invariant dot
    pm = tl.program_id(0)
    offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    k = tl.load(K + offs_n[:, None] * D + offs_d[None, :])
    v = tl.load(V + offs_n[:, None] * D + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], tl.float32) - 1e30
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for j in range(0, SKV // BLOCK_N):
        s = tl.dot(q, tl.trans(k), tl.broadcast_to(m_i[:, None] * zero, (BLOCK_M, BLOCK_N))) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], o.to(O.dtype.element_ty))


@triton.jit
def waited_group(A, B, O, iters, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, RS: tl.constexpr):
    # one warpgroup mma group a trip whose result the next trip reads (s * c): the trip waits
    # for it, as attention's trips do; RS: A scaled in registers first (the compiler keeps a
    # computed A operand in registers: wgmma's RS form, attention's PV), else A from shared
    pid = tl.program_id(0)
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    if RS:
        a = (a.to(tl.float32) * (c + 1.0)).to(tl.bfloat16)
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    s = tl.zeros([M, N], tl.float32)
    for i in range(iters):
        s = tl.dot(a, b, s * c)
    tl.store(O + pid * M * N + rm[:, None] * N + rn[None, :], s)


def part_rs(rows):
    """Waited warpgroup mma groups, A from registers (RS) or shared memory (SS), 1-4 CTAs per SM."""
    ghz = 1.98
    for K, N in ((32, 128), (64, 128), (128, 128), (64, 64), (128, 32)):
        a = torch.randn(64, K, device=DEV, dtype=torch.bfloat16) * 0.01
        b = torch.randn(K, N, device=DEV, dtype=torch.bfloat16) * 0.01
        o = torch.empty(SMS * 8 * 64 * N, device=DEV, dtype=torch.float32)
        for rs in (1, 0):
            try:
                k = waited_group.warmup(a, b, o, 16, 0.0, M=64, N=N, K=K, RS=rs, grid=(SMS,), num_warps=4,
                                        num_stages=1)
                k._init_handles()
            except Exception as e:  # noqa: BLE001
                log("rs compile failed", K, N, rs, repr(e)[:200])
                continue
            occ = occupancy(k, 128, k.metadata.shared)
            for r in (1, 2, 4):
                if occ is not None and r > occ:
                    continue

                def launch(it, r=r):
                    waited_group[(SMS * r,)](a, b, o, it, 0.0, M=64, N=N, K=K, RS=rs, num_warps=4, num_stages=1)
                ns, ts, tl_ = per_trip(launch, 512, 2560)
                flop = 2 * 64 * N * K * r
                row = {"K": K, "N": N, "RS": rs, "r": r, "regs": k.n_regs, "occupancy": occ,
                       "ns_per_round": round(ns, 3), "fraction_of_4096_at_1.98GHz": round(flop / ns / (4096 * ghz), 4),
                       "wgmma": wgmma_line(k)}
                rows.append(row)
                log("rs", row)


def sass_counts(k, tag):
    """Opcode histogram of the compiled kernel's SASS (cuobjdump), written to sass.txt."""
    import collections
    import re
    import tempfile
    try:
        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
            f.write(k.asm["cubin"])
            path = f.name
        out = subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True, timeout=60).stdout
    except Exception as e:  # noqa: BLE001
        log("sass failed", tag, repr(e)[:200])
        return
    ops = collections.Counter()
    for line in out.splitlines():
        mm = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if mm:
            ops[mm.group(2).split(".")[0]] += 1
    with open(os.path.join(OUT, "sass.txt"), "a") as f:
        f.write(f"== {tag}: {sum(ops.values())} instructions\n")
        f.write(" ".join(f"{o}:{n}" for o, n in ops.most_common()) + "\n")
        f.write(out + "\n")


def part_attn2(rows):
    """The FlashAttention-2 trip with and without its copies (attn_trip vs attn_trip_noload)."""
    short, long = 4096, 12288
    for D, BM, BN, W, S in [(128, 64, 32, 4, 3), (128, 128, 32, 4, 3), (64, 64, 64, 4, 3), (64, 64, 32, 4, 3),
                            (128, 64, 64, 4, 3)]:
        q = torch.randn(SMS * 8 * BM, D, device=DEV, dtype=torch.bfloat16)
        kk = torch.randn(long, D, device=DEV, dtype=torch.bfloat16)
        vv = torch.randn(long, D, device=DEV, dtype=torch.bfloat16)
        o = torch.empty_like(q)
        scale = 1.4426950408889634 / D ** 0.5
        for loads in (1, 0):
            if time.time() - T0 > DEADLINE_S:
                log("deadline: stopping attn2")
                return
            try:
                if loads:
                    k = attn_trip.warmup(q, kk, vv, o, scale, short, D=D, BLOCK_M=BM, BLOCK_N=BN, EXP=1,
                                         grid=(SMS,), num_warps=W, num_stages=S)
                else:
                    k = attn_trip_noload.warmup(q, kk, vv, o, scale, 0.0, short, D=D, BLOCK_M=BM, BLOCK_N=BN,
                                                grid=(SMS,), num_warps=W, num_stages=S)
                k._init_handles()
            except Exception as e:  # noqa: BLE001
                log("attn2 compile failed", D, BM, BN, W, S, loads, repr(e)[:300])
                continue
            sass_counts(k, f"D{D} {BM}x{BN} w{W} s{S} loads{loads}")
            occ = occupancy(k, 32 * W, k.metadata.shared)
            for r in range(1, min(occ or 1, 4) + 1):
                if loads:
                    def launch(skv, r=r):
                        attn_trip[(SMS * r,)](q, kk, vv, o, scale, skv, D=D, BLOCK_M=BM, BLOCK_N=BN, EXP=1,
                                              num_warps=W, num_stages=S)
                else:
                    def launch(skv, r=r):
                        attn_trip_noload[(SMS * r,)](q, kk, vv, o, scale, 0.0, skv, D=D, BLOCK_M=BM, BLOCK_N=BN,
                                                     num_warps=W, num_stages=S)
                ns_trip, ts, tl_ = per_trip(launch, short, long, short // BN, long // BN)
                row = {"D": D, "BLOCK_M": BM, "BLOCK_N": BN, "WARPS": W, "STAGES": S, "LOADS": loads, "r": r,
                       "regs": k.n_regs, "spills": k.n_spills, "smem": k.metadata.shared, "occupancy": occ,
                       "ns_per_round": round(ns_trip, 3), "ms_short": round(ts, 5), "ms_long": round(tl_, 5)}
                rows.append(row)
                log("attn2", row)


def per_trip(launch, short, long, trips_short=None, trips_long=None):
    """ns per trip from two launches whose loops run ``short`` and ``long`` (their trip counts
    where the argument is not one)."""
    t_s = bench(lambda: launch(short))
    t_l = bench(lambda: launch(long))
    n_s = short if trips_short is None else trips_short
    n_l = long if trips_long is None else trips_long
    return (t_l - t_s) * 1e6 / (n_l - n_s), t_s, t_l


def part_mma_rate(rows):
    ghz = 1.98
    for K in (64, 128):
        for N in MMA_N:
            a = torch.randn(64, K, device=DEV, dtype=torch.bfloat16) * 0.01
            b = torch.randn(K, N, device=DEV, dtype=torch.bfloat16) * 0.01
            o = torch.empty(SMS * 8 * 64 * N, device=DEV, dtype=torch.float32)
            try:
                k = mma_loop.warmup(a, b, o, 16, M=64, N=N, K=K, grid=(SMS,), num_warps=4, num_stages=1)
                k._init_handles()
            except Exception as e:  # noqa: BLE001
                log("mma_rate compile failed", K, N, repr(e)[:200])
                continue
            occ = occupancy(k, 128, k.metadata.shared)
            line = wgmma_line(k)
            for r in (1, 2, 4):
                if occ is not None and r > occ:
                    continue

                def launch(it, r=r):
                    mma_loop[(SMS * r,)](a, b, o, it, M=64, N=N, K=K, num_warps=4, num_stages=1)
                ns, ts, tl_ = per_trip(launch, 1024, 5120)
                flop = 2 * 64 * N * K * r          # one trip of the r CTAs of one SM
                row = {"K": K, "N": N, "r": r, "regs": k.n_regs, "smem": k.metadata.shared, "occupancy": occ,
                       "ns_per_round": round(ns, 3), "flop_per_ns_per_sm": round(flop / ns, 1),
                       "fraction_of_4096_at_1.98GHz": round(flop / ns / (4096 * ghz), 4),
                       "ms_short": round(ts, 5), "ms_long": round(tl_, 5), "wgmma": line}
                rows.append(row)
                log("mma_rate", row)


def part_two_phase(rows):
    M = N = K = 64
    a = torch.randn(M, K, device=DEV, dtype=torch.bfloat16) * 0.01
    b = torch.randn(K, N, device=DEV, dtype=torch.bfloat16) * 0.01
    o = torch.empty(SMS * 16 * M * N, device=DEV, dtype=torch.float32)
    for E in (0, 1, 2, 4):
        for warps in (4,):
            try:
                k = two_phase.warmup(a, b, o, 16, 0.0, 0.5, M=M, N=N, K=K, E=E, grid=(SMS,), num_warps=warps,
                                     num_stages=1)
                k._init_handles()
            except Exception as e:  # noqa: BLE001
                log("two_phase compile failed", E, repr(e)[:200])
                continue
            occ = occupancy(k, 32 * warps, k.metadata.shared)
            for r in (1, 2, 3, 4, 6, 8):
                if occ is not None and r > occ:
                    continue

                def launch(it, r=r):
                    two_phase[(SMS * r,)](a, b, o, it, 0.0, 0.5, M=M, N=N, K=K, E=E, num_warps=warps, num_stages=1)
                ns, ts, tl_ = per_trip(launch, 512, 2560)
                row = {"E": E, "warps": warps, "r": r, "regs": k.n_regs, "smem": k.metadata.shared,
                       "occupancy": occ, "ns_per_round": round(ns, 3), "ms_short": round(ts, 5),
                       "ms_long": round(tl_, 5), "wgmma": wgmma_line(k)}
                rows.append(row)
                log("two_phase", row)


ATTN_TILES = [  # (D, BLOCK_M, BLOCK_N, WARPS, STAGES, EXP)
    (64, 64, 32, 4, 3, 1), (64, 64, 64, 4, 3, 1), (64, 128, 32, 4, 3, 1), (64, 128, 64, 4, 3, 1),
    (64, 128, 64, 8, 3, 1), (64, 64, 64, 4, 3, 0),
    (128, 64, 32, 4, 3, 1), (128, 64, 64, 4, 3, 1), (128, 128, 32, 4, 3, 1), (128, 128, 32, 8, 3, 1),
    (128, 128, 64, 8, 3, 1), (128, 64, 32, 4, 2, 1), (128, 64, 32, 4, 3, 0),
]
# Overrides (defaults: the lists above, as measured in calibration/h200/measured/chain):
# CHAIN_MMA_N=16,32 the N of part_mma_rate's m64nNk16 (SS) loops; CHAIN_ATTN_TILES=
# "128,64,32,8,3,1;128,64,32,4,3,1" the (D, BLOCK_M, BLOCK_N, WARPS, STAGES, EXP) of part_attn.
MMA_N = tuple(int(n) for n in os.environ.get("CHAIN_MMA_N", "32,64,128,256").split(","))
if os.environ.get("CHAIN_ATTN_TILES"):
    ATTN_TILES = [tuple(int(x) for x in t.split(",")) for t in os.environ["CHAIN_ATTN_TILES"].split(";") if t]


def part_attn(rows):
    short, long = 4096, 12288
    for D, BM, BN, W, S, EXP in ATTN_TILES:
        if time.time() - T0 > DEADLINE_S:
            log("deadline: stopping attn_trip")
            return
        q = torch.randn(SMS * 8 * BM, D, device=DEV, dtype=torch.bfloat16)
        kk = torch.randn(long, D, device=DEV, dtype=torch.bfloat16)
        vv = torch.randn(long, D, device=DEV, dtype=torch.bfloat16)
        o = torch.empty_like(q)
        scale = 1.4426950408889634 / D ** 0.5
        try:
            k = attn_trip.warmup(q, kk, vv, o, scale, short, D=D, BLOCK_M=BM, BLOCK_N=BN, EXP=EXP, grid=(SMS,),
                                 num_warps=W, num_stages=S)
            k._init_handles()
        except Exception as e:  # noqa: BLE001
            log("attn compile failed", D, BM, BN, W, S, repr(e)[:200])
            continue
        occ = occupancy(k, 32 * W, k.metadata.shared)
        for r in range(1, min(occ or 1, 5) + 1):
            def launch(skv, r=r):
                attn_trip[(SMS * r,)](q, kk, vv, o, scale, skv, D=D, BLOCK_M=BM, BLOCK_N=BN, EXP=EXP, num_warps=W,
                                      num_stages=S)
            ns_trip, ts, tl_ = per_trip(launch, short, long, short // BN, long // BN)
            row = {"D": D, "BLOCK_M": BM, "BLOCK_N": BN, "WARPS": W, "STAGES": S, "EXP": EXP, "r": r,
                   "regs": k.n_regs, "spills": k.n_spills, "smem": k.metadata.shared, "occupancy": occ,
                   "ns_per_round": round(ns_trip, 3), "ms_short": round(ts, 5), "ms_long": round(tl_, 5),
                   "wgmma": wgmma_line(k)}
            rows.append(row)
            log("attn_trip", row)


def main():
    log("device", torch.cuda.get_device_name(0), "sms", SMS, "torch", torch.__version__, "triton", triton.__version__)
    parts = (("mma_rate.csv", part_mma_rate), ("two_phase.csv", part_two_phase), ("attn_trip.csv", part_attn),
             ("attn_loads.csv", part_attn2), ("mma_waited.csv", part_rs))
    only = os.environ.get("CHAIN_PARTS")
    for name, part in parts:
        if only and name.split(".")[0] not in only.split(","):
            continue
        rows = []
        t = time.time()
        try:
            part(rows)
        except Exception as e:  # noqa: BLE001
            import traceback
            log(name, "failed:", repr(e)[:300])
            log(traceback.format_exc()[-1500:])
        write(name, rows)
        log(name, "rows", len(rows), "in", round(time.time() - t, 1), "s")
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw",
                            "--format=csv"], capture_output=True, text=True, timeout=20)
        log(r.stdout.strip())
    except Exception as e:  # noqa: BLE001
        log("nvidia-smi failed", repr(e)[:100])
    log("total", round(time.time() - T0, 1), "s")


if __name__ == "__main__":
    main()
