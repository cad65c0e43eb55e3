#!/usr/bin/env python3
"""H200: what sharing tiles across SMs does to a GEMM k-loop's draw from L2 (issue 15).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 L2SHARE_DEADLINE_S=100 python3 bench/h200/measure_l2_share.py OUTDIR

A physical fact, not held-out rows. calibration/h200/measured/l2_draw measured the draw with
tiles private to each CTA (no two CTAs read the same line): 64x128x64 on 4 warps at 3 CTAs per
SM 110.6 B/ns a SM (14.6 TB/s), 16x64x64 / 32x64x64 / 64x64x32 on 4 warps 77-87 B/ns. Real
GEMMs share each A tile with the CTAs of its row and each B tile with those of its column, and
the issue-15 gemm_bf16 rows disagree with the private rates both ways (3072^3 128x32x64 on 4
warps moves 13.8 TB/s; 6144^3 64x128x32 on 4 warps fewer than the private rate gives;
docs/analysis.md section 8, "Built and measured, not kept"). This sweep times the same kernel
(bench/h200/measure_l2_draw.py's l2_draw_kernel with the k index wrapping, below: the gemm.tile
k-loop, 128 trips, every byte from L2, each CTA a slot 0..r-1 on its SM) with the blocks shared: NB = 132 x r / SHARE
distinct blocks, so each block is read by SHARE CTAs on SHARE different SMs (SHARE = 1 is the
private case of l2_draw, 132 makes the r slots of every SM read the same r blocks).

l2_draw's own runs were not private: its blocks span all 128 trips, so its 16 MB footprint
held 5-32 blocks and each was read by 4-132 CTAs on as many SMs (ctas / nb of l2_draw.csv;
64x128x64 on 4 warps at 3 CTAs a SM: 5 blocks, 79 CTAs each); only the r CTAs of one SM read
different blocks. Here the k index wraps every KW trips (KW the largest power of two that keeps the
private case's 132 x r blocks within 12 MB, at most 128): every case of one tile and r runs
the same loop over the same bytes a trip, only the number of CTAs reading each block differs.

Columns: l2_draw's (BM ... status) plus `share` (CTAs reading each block: ctas / nb) and `kw`.
"""
import csv
import os
import sys
import time
import traceback

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_l2_draw as base  # noqa: E402  (its log, copy widths, PTX counts, residency check)

OUT = base.OUT
DEADLINE_S = float(os.environ.get("L2SHARE_DEADLINE_S", "100"))
SMS = base.SMS
TRIPS = base.TRIPS
SHARES = (1, 8, 132)
FOOTPRINT = 12 << 20


@triton.jit
def l2_share_kernel(a_ptr, b_ptr, c_ptr, slot_ptr, sm_ptr, K, lda, ldb, R, NB, KW,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    smid = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [pid], dtype=tl.int32, is_pure=False, pack=1)
    slot = tl.atomic_add(slot_ptr + smid, 1) % R
    blk = (smid * R + slot) % NB
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = (k % KW) * BK
        a = tl.load(a_ptr + (blk * BM + offs_m[:, None]).to(tl.int64) * lda + kk + offs_k[None, :])
        b = tl.load(b_ptr + (kk + offs_k[:, None]).to(tl.int64) * ldb + blk * BN + offs_n[None, :])
        acc = tl.dot(a, b, acc)
    offs_c = pid.to(tl.int64) * BM + offs_m
    tl.store(c_ptr + offs_c[:, None] * BN + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))
    tl.store(sm_ptr + pid, smid)


def kw_of(bm, bn, bk, r):
    """Trips before the k index wraps: the private case's blocks within FOOTPRINT."""
    kw = 1
    while kw < TRIPS and SMS * r * (bm + bn) * bk * 2 * kw * 2 <= FOOTPRINT:
        kw *= 2
    return kw


def compiled_gpu(p):
    import torch
    bm, bn, bk, w, st = p
    a = torch.zeros(bm, 1024, device="cuda", dtype=torch.bfloat16)
    b = torch.zeros(1024, bn, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(bm, bn, device="cuda", dtype=torch.bfloat16)
    i = torch.zeros(SMS, device="cuda", dtype=torch.int32)
    return l2_share_kernel.warmup(a, b, c, i, i, 1024, 1024, bn, 1, 1, 1, BM=bm, BN=bn, BK=bk,
                                  num_warps=w, num_stages=st, grid=(1,))


def compile_worker(p):
    t = time.time()
    try:
        k = compiled_gpu(p)
        return p, "ok", time.time() - t, base.ptx_copies(k.asm["ptx"])
    except Exception as e:
        return p, "error", time.time() - t, repr(e)[:300]

# (BM, BN, BK, WARPS, STAGES, r values): the tiles of the issue-15 rows the private rates
# price wrongly, and l2_draw's fastest private tile
PLAN = [
    (128, 32, 64, 4, 4, (1, 2)),       # 3072^3 row, B rows of 64 B
    (64, 32, 64, 4, 4, (2, 4)),        # 3072^3 row
    (64, 64, 32, 4, 3, (2, 4, 8)),     # A rows of 64 B; private 83-84 B/ns
    (64, 128, 32, 4, 4, (2, 4)),       # 6144^3 / 128x28672 rows
    (32, 64, 64, 4, 3, (4, 8)),        # private 76-78.5 B/ns
    (64, 128, 64, 4, 3, (1, 2, 3)),    # private 82-111 B/ns
    (128, 128, 64, 4, 3, (1, 2)),      # the calibrated 8192^3 tile
]
COLS = base.COLS + ["share", "kw"]


def run_shared(w, p, r, share, copies):
    import torch
    bm, bn, bk, warps, st = p
    row = dict(BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st, CACHE="", r=r, ctas=SMS * r, trips=TRIPS,
               bytes_per_trip=(bm + bn) * bk * 2, a_copy_bytes=base.copy_bytes(bm, bk, warps),
               b_copy_bytes=base.copy_bytes(bk, bn, warps), a_row_bytes=bk * 2, b_row_bytes=bn * 2,
               ptx_cp_async=copies)
    try:
        nb = max(r, SMS * r // share)
        kw = kw_of(bm, bn, bk, r)
        K = TRIPS * bk
        row.update(share=round(SMS * r / nb, 2), kw=kw)
        a = torch.randn(nb * bm, kw * bk, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(kw * bk, nb * bn, device="cuda", dtype=torch.bfloat16)
        ctas = SMS * r
        c = torch.empty(ctas * bm, bn, device="cuda", dtype=torch.bfloat16)
        slots = torch.zeros(SMS, device="cuda", dtype=torch.int32)
        sm = torch.full((ctas,), -1, device="cuda", dtype=torch.int32)

        def go():
            return l2_share_kernel[(ctas,)](a, b, c, slots, sm, K, a.stride(0), b.stride(0), r, nb, kw, BM=bm,
                                            BN=bn, BK=bk, num_warps=warps, num_stages=st)
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
        row.update(sms_used=used, max_ctas_per_sm=per_sm, nb=nb, kernel_us=round(ms * 1e3, 3),
                   ns_per_trip=round(per_trip, 2),
                   bytes_per_ns_per_sm=round(ctas / used * row["bytes_per_trip"] / per_trip, 2),
                   regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
    except Exception as e:  # one config failing must not stop the rest
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        base.log(traceback.format_exc()[-400:])
    w.writerow(row)
    base.log({k: row.get(k) for k in ("BM", "BN", "BK", "WARPS", "STAGES", "r", "share", "nb", "kw", "max_ctas_per_sm",
                                      "ns_per_trip", "bytes_per_ns_per_sm", "status")})


def main():
    import multiprocessing as mp
    import subprocess
    import torch
    os.makedirs(OUT, exist_ok=True)
    keys = sorted({p[:5] for p in PLAN})
    copies = {}
    with mp.get_context("spawn").Pool(max(1, min(len(keys), (os.cpu_count() or 4) - 2))) as pool:
        for p, st, dt, info in pool.imap_unordered(compile_worker, keys):
            copies[p] = info if st == "ok" else "compile error"
            base.log(p, st, f"{dt:.1f}s", info)
    base.log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    try:
        base.log(subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem", "--format=csv"],
                                capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        base.log("nvidia-smi:", repr(e))
    with open(os.path.join(OUT, "l2_share.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLS)
        w.writeheader()
        for bm, bn, bk, warps, st, rs in PLAN:
            p = (bm, bn, bk, warps, st)
            if copies.get(p) == "compile error":
                continue
            k = compiled_gpu(p)
            for r in rs:
                try:
                    resident = base.fits(k, warps, r)
                except Exception as e:       # the max_ctas_per_sm column still tells
                    base.log("fit check failed", p, r, repr(e)[:200])
                    resident = True
                if not resident:
                    base.log("skip: not resident", p, r)
                    continue
                for share in SHARES:
                    if time.time() - base.T0 > DEADLINE_S:
                        base.log("deadline: stopping")
                        return
                    run_shared(w, p, r, share, copies[p])
                    f.flush()
    base.log("done")


if __name__ == "__main__":
    main()
