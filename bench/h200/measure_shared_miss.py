#!/usr/bin/env python3
"""H200: the DRAM wait of a pipelined k-loop trip whose DRAM lines other SMs read too (issue 15,
persistent GEMM).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_shared_miss.py OUTDIR
    python3 bench/h200/measure_shared_miss.py OUTDIR --cpu     # compile only (sm_90, no GPU)

The physical fact: how long a trip of the GEMM k-loop (kernels/gemm.tile's: a tl.load of an
A [BM, BK] and a B [BK, BN] tile a trip, tl.dot into f32, num_stages = STAGES) waits when its A
tile is a first touch from DRAM that A_GROUP CTAs (on A_GROUP SMs) request at the same k-step,
while its B tile comes from L2. A persistent GEMM's tile walk has this pattern (a round of CTAS
consecutive row-major tiles: a row of TILES_N CTAs shares each A slice, B stays in L2 after the
first round when it fits); the model prices its DRAM round trip with the idle 557 ns that one
SM streaming its own tiles from DRAM waits (calibration/h200/measured/mlp). This measures the
trip against the sharing degree, with everything else fixed:

  variant   A rows of CTA j           A's K    B columns of CTA j     B's K    A from    B from
  l2        (j // 24) x BM            wraps    (j mod 24) x BN        wraps    L2        L2
  dram24    (j // 24) x BM            streams  (j mod 24) x BN        wraps    DRAM, 24 readers   L2
  dram4     (j // 4) x BM             streams  (j mod 24) x BN        wraps    DRAM, 4 readers    L2
  dram1     j x BM                    streams  (j mod 24) x BN        wraps    DRAM, own          L2
  dramab    (j // 24) x BM            streams  j x BN                 streams  DRAM, 24 readers   DRAM, own

132 CTAs, one per SM (each records %smid); K = 16,384 per CTA; "wraps" = K mod 512 (L2-resident
after the first 8 trips). Timing: triton.testing.do_bench median (it clears the L2 before each
timed run, so every streamed line is a first touch). ns per trip = kernel time / trips;
implied_round_trip_ns = (S-1) x ns per trip (the round trip a latency-bound trip implies).

Output: shared_miss.csv (one row per run), log.txt.
"""
import csv
import os
import subprocess
import sys
import time
import traceback

import triton
import triton.language as tl

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
CPU = "--cpu" in sys.argv
DEADLINE_S = float(os.environ.get("SMISS_DEADLINE_S", "95"))
K_TOTAL = 16384
KRES = 512
CTAS = 132
B_COLS = 24
TILES = [(128, 128, 64, 4), (128, 64, 32, 8), (256, 64, 64, 4)]     # BM, BN, BK, WARPS
STAGES = [2, 3, 4]
VARIANTS = {"l2": (24, True, True), "dram24": (24, False, True), "dram4": (4, False, True),
            "dram1": (1, False, True), "dramab": (24, False, False)}   # A group, A wraps, B wraps
os.makedirs(OUT, exist_ok=True)


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    with open(os.path.join(OUT, "log.txt" if not CPU else "cpu_log.txt"), "a") as f:
        f.write(line + "\n")


@triton.jit(do_not_specialize=["K", "KRES_A", "KRES_B", "A_GROUP", "B_COLS"])
def shared_kernel(a_ptr, b_ptr, c_ptr, sm_ptr, K, KRES_A, KRES_B, A_GROUP, B_COLS, lda, ldb,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    arow = (pid // A_GROUP) * BM
    bcol = (pid % B_COLS) * BN
    a_base = a_ptr + (arow + offs_m[:, None]).to(tl.int64) * lda + offs_k[None, :]
    b_base = b_ptr + offs_k[:, None].to(tl.int64) * ldb + bcol + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        # the hint keeps the tiles 16-byte aligned for cp.async (measure_kloop.py)
        ka = tl.multiple_of((k * BK) % KRES_A, BK)
        kb = tl.multiple_of((k * BK) % KRES_B, BK)
        a = tl.load(a_base + ka)
        b = tl.load(b_base + kb.to(tl.int64) * ldb)
        acc = tl.dot(a, b, acc)
    offs_cm = pid.to(tl.int64) * BM + offs_m
    tl.store(c_ptr + offs_cm[:, None] * BN + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))
    smid = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pid], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(sm_ptr + pid, smid)


def compile_cpu(p):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    bm, bn, bk, w, st = p
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "sm_ptr": "*i32", "K": "i32", "KRES_A": "i32",
           "KRES_B": "i32", "A_GROUP": "i32", "B_COLS": "i32", "lda": "i32", "ldb": "i32"}
    names = shared_kernel.arg_names
    attrs = {(names.index(x),): [["tt.divisibility", 16]] for x in ("a_ptr", "b_ptr", "c_ptr", "sm_ptr", "lda", "ldb")}
    sig = {key: sig.get(key, "constexpr") for key in names}
    return triton.compile(ASTSource(fn=shared_kernel, signature=sig, constexprs=dict(BM=bm, BN=bn, BK=bk), attrs=attrs),
                          target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))


def compiled_gpu(p):
    import torch
    bm, bn, bk, w, st = p
    a = torch.zeros(bm, KRES, device="cuda", dtype=torch.bfloat16)
    b = torch.zeros(KRES, bn, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(bm, bn, device="cuda", dtype=torch.bfloat16)
    sm = torch.empty(1, device="cuda", dtype=torch.int32)
    return shared_kernel.warmup(a, b, c, sm, K_TOTAL, KRES, KRES, 24, B_COLS, a.stride(0), b.stride(0),
                                BM=bm, BN=bn, BK=bk, num_warps=w, num_stages=st, grid=(1,))


def _compile_worker(p):
    t = time.time()
    try:
        k = compile_cpu(p) if CPU else compiled_gpu(p)
        return p, "ok", time.time() - t, k.metadata.shared
    except Exception as e:
        return p, "error", time.time() - t, repr(e)[:300]


COLS = ["variant", "BM", "BN", "BK", "WARPS", "STAGES", "ctas", "a_group", "sms_used", "max_ctas_per_sm", "trips",
        "bytes_per_trip", "a_dram_bytes_per_cta_trip", "b_dram_bytes_per_cta_trip", "kernel_us", "ns_per_trip",
        "implied_round_trip_ns", "dram_tb_s", "regs", "smem_bytes", "status"]


def run_one(w, variant, p):
    import torch
    bm, bn, bk, warps, st = p
    group, a_wraps, b_wraps = VARIANTS[variant]
    row = dict(variant=variant, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st, ctas=CTAS, a_group=group)
    try:
        ka = KRES if a_wraps else K_TOTAL
        kb = KRES if b_wraps else K_TOTAL
        bcols = B_COLS if b_wraps else CTAS
        a = torch.randn(-(-CTAS // group) * bm, ka, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(kb, bcols * bn, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(CTAS * bm, bn, device="cuda", dtype=torch.bfloat16)
        sm = torch.full((CTAS,), -1, device="cuda", dtype=torch.int32)

        def go():
            return shared_kernel[(CTAS,)](a, b, c, sm, K_TOTAL, ka, kb, group, bcols, a.stride(0), b.stride(0),
                                          BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=st)
        k = go()
        torch.cuda.synchronize()
        ids = sm.tolist()
        ms = triton.testing.do_bench(go, warmup=5, rep=25, return_mode="median")
        trips = K_TOTAL // bk
        a_dram = 0 if a_wraps else bm * bk * 2 / group
        b_dram = 0 if b_wraps else bn * bk * 2
        per_trip = ms * 1e6 / trips
        row.update(sms_used=len(set(ids)), max_ctas_per_sm=max(ids.count(x) for x in set(ids)), trips=trips,
                   bytes_per_trip=(bm + bn) * bk * 2, a_dram_bytes_per_cta_trip=a_dram, b_dram_bytes_per_cta_trip=b_dram,
                   kernel_us=round(ms * 1e3, 3), ns_per_trip=round(per_trip, 2),
                   implied_round_trip_ns=round(max(st - 1, 1) * per_trip, 1),
                   dram_tb_s=round(CTAS * trips * (a_dram + b_dram) / (ms * 1e9), 3),
                   regs=k.n_regs, smem_bytes=k.metadata.shared, status="ok")
        del a, b, c
    except Exception as e:  # one config failing must not stop the rest
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        log(traceback.format_exc()[-400:])
    w.writerow(row)
    log({k: row.get(k) for k in ("variant", "BM", "BN", "BK", "WARPS", "STAGES", "sms_used", "max_ctas_per_sm",
                                 "ns_per_trip", "implied_round_trip_ns", "dram_tb_s", "status")})


def main():
    import multiprocessing as mp
    keys = [t + (s,) for t in TILES for s in STAGES]
    nproc = max(1, min(len(keys), (os.cpu_count() or 4) - 2, 14))
    log(f"compiling {len(keys)} kernels in {nproc} processes", "(cpu, sm_90)" if CPU else "")
    with mp.get_context("spawn").Pool(nproc) as pool:
        for p, st, dt, info in pool.imap_unordered(_compile_worker, keys):
            log(p, st, f"{dt:.1f}s", "shared", info)
    if CPU:
        return
    import torch
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    smi = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,power.limit", "--format=csv"]
    try:
        log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    # the sharing degree is the experiment: the 128x128x64 3-stage trip of the persistent rows first
    plan = [(v, p) for p in keys for v in VARIANTS]
    plan.sort(key=lambda vp: (vp[1] != (128, 128, 64, 4, 3), vp[1][4] != 3))
    with open(os.path.join(OUT, "shared_miss.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLS)
        w.writeheader()
        for i, (v, p) in enumerate(plan):
            if time.time() - T0 > DEADLINE_S:
                log(f"deadline: stopping after {i} of {len(plan)} runs")
                break
            run_one(w, v, p)
            f.flush()
    try:
        log(subprocess.run(smi, capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    log("done")


if __name__ == "__main__":
    main()
