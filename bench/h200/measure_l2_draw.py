#!/usr/bin/env python3
"""H200: how many bytes a Triton GEMM k-loop draws from L2 per SM, by copy shape (issue 15).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_l2_draw.py OUTDIR
    python3 bench/h200/measure_l2_draw.py OUTDIR --cpu     # compile only, for sm_90, no GPU:
                                                           # the copies' PTX counts (triton 3.6.0)

A physical fact, not held-out rows. calibration/h200/measured/mlp_l2_stage1 found that BK = 32
k-loops top out at 41-62 B/ns per SM from L2 (a third to a half of the 128.7 B/ns of a
large-tile CTA) and 32x32x32 on 8 warps at 31-33 B/ns. Triton copies a [R, C] bf16 tile with
cp.async of min(16, R x C x 2 / threads) bytes per thread (its blocked layout's vector); a
16-byte copy is cp.async.cg (SASS LDGSTS.E.BYPASS.128, skips L1), a 4- or 8-byte one
cp.async.ca (LDGSTS.E.64: allocates in L1). So the 8-warp small tile copies 8 bytes through L1
where the 4-warp one copies 16 bypassing it. This sweep separates the candidates:

  * bytes per copy per thread (4, 8, 16) at the same rows and warps;
  (Triton 3.6.0 picks the cache itself: a 16-byte copy is .cg and a narrower one .ca whatever
  the cache_modifier, checked with --cpu, so the L1 path and the width cannot be separated);
  * the length of a tile row (64, 128, 256 B: BK or BN = 32, 64, 128 bf16);
  * warps per CTA at the same copy width (64x64x32 on 8 warps copies 16 B per thread);
  * CTAs per SM r and stages S (bytes in flight r x (S-1) x tile).

Kernel: the k-loop of kernels/gemm.tile (tl.load of A [BM, BK] and B [BK, BN] a trip,
tl.dot into f32, num_stages = S), 128 trips (K = 128 x BK). Every byte comes from L2: the
CTAs read NB distinct tile columns (A rows, B columns) whose bytes fit in 16 MB, the launch
is timed back to back with the previous launch's bytes still in L2 (no flush), and each CTA
takes a slot 0..r-1 on its SM (an atomic counter per %smid) so the r CTAs of one SM read r
different blocks: no CTA re-reads a line its SM already holds in L1 (L1 is not kept across
launches). Grid 132 x r, all resident at once (rows where r CTAs do not fit are skipped).

Columns: BM BN BK WARPS STAGES CACHE (the tl.load cache modifier, '' = Triton's default),
r, ctas, sms_used, max_ctas_per_sm, nb (distinct blocks), trips, bytes_per_trip (one CTA's
A + B tile), a_copy_bytes / b_copy_bytes (bytes per thread per cp.async, from the layout),
a_row_bytes / b_row_bytes, ptx_cp_async (the kernel's cp.async instructions by cache and
size, from its PTX), kernel_us (median of 5 timings of back-to-back launches), ns_per_trip,
bytes_per_ns_per_sm = r x bytes_per_trip / ns_per_trip, regs, spills, smem_bytes, status.
"""
import csv
import os
import re
import sys
import time
import traceback

import triton
import triton.language as tl
import device_log  # noqa: E402  (bench/h200, the script's own folder)

CPU = "--cpu" in sys.argv
OUT = [a for a in sys.argv[1:] if not a.startswith("--")][0] if len(sys.argv) > 1 else "."
T0 = time.time()
DEADLINE_S = float(os.environ.get("L2DRAW_DEADLINE_S", "100"))
SMS = 132
FOOTPRINT = 16 << 20          # distinct bytes of A and B all CTAs read: inside the L2
TRIPS = 128

# (BM, BN, BK, WARPS, STAGES, CACHE, r values)
PLAN = [
    # 64-byte rows (BK = BN = 32): 16-byte copies at 1, 2, 4 warps; 8 at 8 warps; 4 + 8 below
    (32, 32, 32, 1, 3, "", (2, 8, 16)),
    (32, 32, 32, 2, 3, "", (1, 4, 8, 16)),
    (32, 32, 32, 4, 3, "", (1, 4, 8, 12)),
    (32, 32, 32, 8, 3, "", (1, 2, 4, 6)),
    (32, 32, 32, 8, 5, "", (2, 4, 6)),
    (16, 16, 32, 8, 3, "", (2, 4, 8)),         # 4-byte copies of both
    (16, 32, 32, 8, 3, "", (2, 4, 8)),         # A 4-byte, B 8-byte copies
    (16, 32, 32, 4, 3, "", (4, 8, 12)),        # A 8, B 16
    (64, 64, 32, 8, 3, "", (1, 2, 4)),         # 16-byte copies on 8 warps
    (64, 64, 32, 4, 3, "", (2, 4, 8)),
    (128, 32, 32, 8, 4, "", (2, 4, 6)),        # A 16, B 8 (a held-out tile shape)
    # 128-byte rows (BK = 64, BN = 64)
    (32, 64, 64, 4, 3, "", (1, 4, 8)),
    (32, 64, 64, 8, 3, "", (2, 4, 6)),
    (16, 64, 64, 8, 3, "", (2, 4, 8)),         # A 8, B 16
    (16, 64, 64, 4, 3, "", (4, 8)),
    (64, 128, 64, 4, 3, "", (1, 2, 3)),
    # 256-byte rows of A (BK = 128)
    (16, 64, 128, 4, 3, "", (2, 4, 6)),
    (16, 64, 128, 8, 3, "", (2, 4, 6)),
    (32, 32, 128, 8, 3, "", (2, 4, 6)),        # B rows 64 B
    # unpipelined (S = 1): tl.load to registers, then shared memory
    (32, 32, 32, 2, 1, "", (4, 8, 16)),
    (16, 32, 32, 4, 1, "", (4, 8, 12)),
    (16, 64, 32, 8, 1, "", (2, 4, 6)),
    (16, 64, 128, 2, 1, "", (4, 8, 10)),
]


def log(*a):
    device_log.log(OUT, T0, *a)


@triton.jit
def l2_draw_kernel(a_ptr, b_ptr, c_ptr, slot_ptr, sm_ptr, K, lda, ldb, R, NB,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, CACHE: tl.constexpr):
    pid = tl.program_id(0)
    smid = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pid], dtype=tl.int32, is_pure=False, pack=1)
    # a slot 0..R-1 among the CTAs of this SM: they read different blocks, so none hits L1
    slot = tl.atomic_add(slot_ptr + smid, 1) % R
    blk = (smid * R + slot) % NB
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + (blk * BM + offs_m[:, None]).to(tl.int64) * lda + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * ldb + blk * BN + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, cache_modifier=CACHE)
        b = tl.load(b_ptrs, cache_modifier=CACHE)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * ldb
    offs_c = pid.to(tl.int64) * BM + offs_m
    tl.store(c_ptr + offs_c[:, None] * BN + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))
    tl.store(sm_ptr + pid, smid)


def copy_bytes(rows, cols, warps):
    """Bytes per thread per cp.async of a [rows, cols] bf16 tile: Triton's vector, at most 16."""
    return min(16, rows * cols * 2 // (32 * warps))


def nb_of(bm, bn, bk, r):
    return max(r, min(SMS * r, FOOTPRINT // ((bm + bn) * bk * TRIPS * 2)))


def ptx_copies(ptx):
    """'ca8:2,cg16:4': the kernel's cp.async instructions by cache and size (prologue included)."""
    found = {}
    for m in re.finditer(r"cp\.async\.(ca|cg)\.shared\.global(?:\.L2::\w+)?\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-fA-F]+|\d+)", ptx):
        key = m.group(1) + str(int(m.group(2), 0))
        found[key] = found.get(key, 0) + 1
    lds = len(re.findall(r"ld\.global", ptx))
    out = ",".join(f"{k}:{v}" for k, v in sorted(found.items()))
    return out + (f",ld.global:{lds}" if lds else "")


def compile_cpu(p):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    bm, bn, bk, w, st, cache = p
    names = l2_draw_kernel.arg_names
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "slot_ptr": "*i32", "sm_ptr": "*i32",
           "K": "i32", "lda": "i32", "ldb": "i32", "R": "i32", "NB": "i32"}
    consts = dict(BM=bm, BN=bn, BK=bk, CACHE=cache)
    attrs = {(names.index(x),): [["tt.divisibility", 16]] for x in ("a_ptr", "b_ptr", "c_ptr", "slot_ptr",
                                                                    "sm_ptr", "K", "lda", "ldb")}
    sig = {key: sig.get(key, "constexpr") for key in names}
    k = triton.compile(ASTSource(fn=l2_draw_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))
    return k


def compiled_gpu(p):
    import torch
    bm, bn, bk, w, st, cache = p
    a = torch.zeros(bm, 1024, device="cuda", dtype=torch.bfloat16)
    b = torch.zeros(1024, bn, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(bm, bn, device="cuda", dtype=torch.bfloat16)
    i = torch.zeros(SMS, device="cuda", dtype=torch.int32)
    return l2_draw_kernel.warmup(a, b, c, i, i, 1024, 1024, bn, 1, 1, BM=bm, BN=bn, BK=bk, CACHE=cache,
                                 num_warps=w, num_stages=st, grid=(1,))


def _compile_worker(p):
    t = time.time()
    try:
        k = compile_cpu(p) if CPU else compiled_gpu(p)
        return p, "ok", time.time() - t, ptx_copies(k.asm["ptx"])
    except Exception as e:
        return p, "error", time.time() - t, repr(e)[:300]


def fits(k, warps, r):
    """Whether r CTAs fit on one SM. A kernel from ``warmup`` has its registers only once its
    handles are loaded (the first device run, 2026-12-02, stopped on ``k.n_regs`` here)."""
    if getattr(k, "n_regs", None) is None:
        k._init_handles()
    regs = -(-max(k.n_regs, 1) * 32 // 256) * 256 * warps
    return r * regs <= 65536 and r * (k.metadata.shared + 1024) <= 233472 and r * 32 * warps <= 2048


COLS = ["BM", "BN", "BK", "WARPS", "STAGES", "CACHE", "r", "ctas", "sms_used", "max_ctas_per_sm", "nb", "trips",
        "bytes_per_trip", "a_copy_bytes", "b_copy_bytes", "a_row_bytes", "b_row_bytes", "ptx_cp_async",
        "kernel_us", "ns_per_trip", "bytes_per_ns_per_sm", "regs", "spills", "smem_bytes", "status"]


def run_one(w, p, r, copies):
    import torch
    bm, bn, bk, warps, st, cache = p
    row = dict(BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st, CACHE=cache, r=r, ctas=SMS * r, trips=TRIPS,
               bytes_per_trip=(bm + bn) * bk * 2, a_copy_bytes=copy_bytes(bm, bk, warps),
               b_copy_bytes=copy_bytes(bk, bn, warps), a_row_bytes=bk * 2, b_row_bytes=bn * 2, ptx_cp_async=copies)
    try:
        nb = nb_of(bm, bn, bk, r)
        K = TRIPS * bk
        a = torch.randn(nb * bm, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, nb * bn, device="cuda", dtype=torch.bfloat16)
        ctas = SMS * r
        c = torch.empty(ctas * bm, bn, device="cuda", dtype=torch.bfloat16)
        slots = torch.zeros(SMS, device="cuda", dtype=torch.int32)
        sm = torch.full((ctas,), -1, device="cuda", dtype=torch.int32)

        def go():
            return l2_draw_kernel[(ctas,)](a, b, c, slots, sm, K, a.stride(0), b.stride(0), r, nb, BM=bm, BN=bn,
                                           BK=bk, CACHE=cache, num_warps=warps, num_stages=st)
        k = go()
        torch.cuda.synchronize()
        ids = sm.tolist()
        used = len(set(ids))
        per_sm = max(ids.count(x) for x in set(ids))
        for _ in range(3):
            go()
        torch.cuda.synchronize()
        t0 = time.time()
        go()
        torch.cuda.synchronize()
        n = max(3, min(200, int(0.003 / max(time.time() - t0, 1e-6))))
        times = []
        for _ in range(5):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(n):
                go()
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1) / n)
        ms = sorted(times)[2]
        per_trip = ms * 1e6 / TRIPS
        rr = ctas / used
        row.update(sms_used=used, max_ctas_per_sm=per_sm, nb=nb, kernel_us=round(ms * 1e3, 3),
                   ns_per_trip=round(per_trip, 2), bytes_per_ns_per_sm=round(rr * row["bytes_per_trip"] / per_trip, 2),
                   regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
    except Exception as e:  # one config failing must not stop the rest
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        log(traceback.format_exc()[-400:])
    w.writerow(row)
    log({k: row.get(k) for k in ("BM", "BN", "BK", "WARPS", "STAGES", "CACHE", "r", "max_ctas_per_sm",
                                 "ns_per_trip", "bytes_per_ns_per_sm", "ptx_cp_async", "status")})


def main():
    import multiprocessing as mp
    os.makedirs(OUT, exist_ok=True)
    keys = sorted({p[:6] for p in PLAN})
    copies = {}
    nproc = max(1, min(len(keys), (os.cpu_count() or 4) - 2, 14))
    log(f"compiling {len(keys)} kernels in {nproc} processes", "(cpu, sm_90)" if CPU else "")
    with mp.get_context("spawn").Pool(nproc) as pool:
        for p, st, dt, info in pool.imap_unordered(_compile_worker, keys):
            copies[p] = info if st == "ok" else "compile error"
            log(p, st, f"{dt:.1f}s", info)
    if CPU:
        return
    import subprocess
    import torch
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    try:
        log(subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem", "--format=csv"],
                           capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    f = open(os.path.join(OUT, "l2_draw.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    for bm, bn, bk, warps, st, cache, rs in PLAN:
        p = (bm, bn, bk, warps, st, cache)
        if copies.get(p) == "compile error":
            continue
        k = compiled_gpu(p)
        for r in rs:
            if time.time() - T0 > DEADLINE_S:
                log("deadline: stopping")
                f.close()
                return
            try:
                resident = fits(k, warps, r)
            except Exception as e:       # the run's max_ctas_per_sm column still tells
                log("fit check failed", p, r, repr(e)[:200])
                resident = True
            if not resident:
                log("skip: not resident", p, r)
                continue
            run_one(w, p, r, copies[p])
            f.flush()
    f.close()
    try:
        log(subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem", "--format=csv"],
                           capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    log("done")


if __name__ == "__main__":
    main()
