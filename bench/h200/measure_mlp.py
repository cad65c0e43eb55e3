#!/usr/bin/env python3
"""H200: memory-level parallelism of a Triton GEMM k-loop (issue 15: small-M GEMMs, B=1 decode).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_mlp.py OUTDIR

Physical facts, not held-out rows: how fast one SM's pipelined tile loads run when only some
SMs pull, how many bytes it keeps in flight, and what co-resident CTAs on one SM add. One
Triton kernel, the k-loop of kernels/gemm.tile (the kernel of bench/h200/measure_kloop.py:
tl.load of an A [BM, BK] and a B [BK, BN] tile a trip, tl.dot into f32, num_stages = STAGES, so
S-1 tiles are in flight per CTA; STAGES = 1 is the unpipelined loop), K_TOTAL of K per CTA. Each
CTA records the SM it ran on (%smid), so every row states how many SMs pulled and how many
CTAs shared one SM.

  experiment  variant  CTAs                A rows of CTA j   B columns of CTA j   data from
  sms         dram     1, 8, 16, 33, 66,   j*BM ..           j*BN ..              DRAM, every byte once
                       132 (one per SM)
  smallm      smallm   33, 132             0 .. BM (shared)  j*BN ..              A from L2 after its first
                                                                                  touch, B from DRAM: the
                                                                                  small-M GEMM pattern
  resident    private  132 x r, r = 1, 2,  j*BM ..           j*BN ..              L2 (K wraps at 512)
              dram     4, 8, 14            j*BM ..           j*BN ..              DRAM

ns per trip = kernel time / trips; with r CTAs on an SM the SM moves r x bytes_per_trip a trip:
bytes_per_ns_per_sm. little_in_flight_bytes = r x (S-1) x bytes_per_trip (what Little's law
keeps in flight per SM); implied_round_trip_ns = (S-1) x ns_per_trip (the round trip a
latency-bound trip would imply); dram_tb_s = DRAM bytes of all CTAs / kernel time.

Output: mlp.csv (one row per run), log.txt. Timing: triton.testing.do_bench median (L2 cleared
before each timed run).
"""
import csv
import os
import subprocess
import sys
import time
import traceback

import torch
import triton
import device_log  # noqa: E402  (bench/h200, the script's own folder)
from mlp_kernel import kloop_kernel  # noqa: E402  (the k-loop, importable without torch: mlp_load_rounds.py)

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("MLP_DEADLINE_S", "330"))
KRES_L2 = int(os.environ.get("MLP_KRES", "512"))   # K wraps here for the L2 variant


def log(*a):
    device_log.log(OUT, T0, *a)


# (BM, BN, BK, WARPS) -> tile bytes (BM + BN) x BK x 2
SMS_TILES = [(16, 64, 64, 4), (64, 128, 64, 4), (128, 32, 128, 8), (16, 256, 64, 4)]
SMS_STAGES = [1, 2, 3, 4, 5]
SMS_CTAS = [1, 8, 16, 33, 66, 132]
SMALLM_TILES = [(16, 64, 64, 4), (128, 32, 128, 8), (64, 64, 32, 4)]
SMALLM_STAGES = [2, 3, 5]
SMALLM_CTAS = [33, 132]
RES_TILES = [(16, 32, 32, 4), (32, 32, 32, 2), (64, 32, 64, 4)]
RES_STAGES = [2, 3, 5]
RES_R = [1, 2, 4, 8, 14]
# Overrides for a follow-up run without editing the script: MLP_PARTS=resident (which experiments),
# MLP_RES_STAGES=1, MLP_RES_TILES="128x128x64x8;64x64x128x4" (BMxBNxBKxWARPS), MLP_RES_R=1,2,3,4,
# MLP_RES_VARIANTS=private (which of private, dram), MLP_KRES=128 (the private K wrap), MLP_CACHE=.cg.
PARTS = set(os.environ.get("MLP_PARTS", "sms,smallm,resident").split(","))
if "MLP_RES_STAGES" in os.environ:
    RES_STAGES = [int(x) for x in os.environ["MLP_RES_STAGES"].split(",")]
if "MLP_RES_TILES" in os.environ:
    RES_TILES = [tuple(int(v) for v in t.split("x")) for t in os.environ["MLP_RES_TILES"].split(";")]
if "MLP_RES_R" in os.environ:
    RES_R = [int(x) for x in os.environ["MLP_RES_R"].split(",")]
RES_VARIANTS = tuple(os.environ.get("MLP_RES_VARIANTS", "private,dram").split(","))
if "sms" not in PARTS:
    SMS_TILES = []
if "smallm" not in PARTS:
    SMALLM_TILES = []
if "resident" not in PARTS:
    RES_TILES = []


def kernels():
    ks = set()
    for t in SMS_TILES:
        for s in SMS_STAGES:
            ks.add(t + (s,))
    for t in SMALLM_TILES:
        for s in SMALLM_STAGES:
            ks.add(t + (s,))
    for t in RES_TILES:
        for s in RES_STAGES:
            ks.add(t + (s,))
    return sorted(ks)


RECORD = [True]          # %smid recorded (False if the inline asm does not compile)


def compiled(key, record=None):
    """The compiled kernel of key (BM, BN, BK, WARPS, STAGES), from Triton's cache after precompile."""
    bm, bn, bk, warps, st = key
    a = torch.zeros(bm, 1024, device="cuda", dtype=torch.bfloat16)
    b = torch.zeros(1024, bn, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(bm, bn, device="cuda", dtype=torch.bfloat16)
    sm = torch.empty(1, device="cuda", dtype=torch.int32)
    return kloop_kernel.warmup(a, b, c, sm, 1024, 1024, 0, 0, a.stride(0), b.stride(0), BM=bm, BN=bn, BK=bk,
                               RECORD_SM=RECORD[0] if record is None else record, num_warps=warps, num_stages=st,
                               grid=(1,))


def _compile_worker(job):
    key, record = job
    t = time.time()
    try:
        compiled(key, record)
        return key, "ok", time.time() - t, ""
    except Exception as e:
        return key, "error", time.time() - t, repr(e)[:300]


def fits(key, r):
    """Whether r CTAs of this kernel can be resident on one SM (registers, shared memory, threads)."""
    k = compiled(key)
    threads = 32 * key[3]
    regs = -(-max(k.n_regs, 1) * 32 // 256) * 256 * key[3]     # per CTA, allocated per warp in units of 256
    return (r * regs <= 65536 and r * (k.metadata.shared + 1024) <= 233472 and r * threads <= 2048 and r <= 32)


def precompile(keys, budget_s=120):
    import multiprocessing as mp
    nproc = max(1, min(len(keys), (os.cpu_count() or 4) - 2, 14))
    log(f"precompiling {len(keys)} kernels in {nproc} processes")
    t = time.time()
    pool = mp.get_context("spawn").Pool(nproc)
    try:
        it = pool.imap_unordered(_compile_worker, [(k, RECORD[0]) for k in keys], chunksize=1)
        for _ in range(len(keys)):
            key, st, dt, err = it.next(timeout=max(1, budget_s - (time.time() - t)))
            if st != "ok":
                log("  compile error", key, err)
        log(f"  precompile done in {time.time() - t:.1f}s")
    except Exception as e:
        log("  precompile stopped:", repr(e)[:200])
    finally:
        pool.terminate()
        pool.join()


COLS = ["experiment", "variant", "BM", "BN", "BK", "WARPS", "STAGES", "ctas", "sms_used", "max_ctas_per_sm",
        "trips", "bytes_per_trip", "dram_bytes_per_trip", "kernel_us", "ns_per_trip", "bytes_per_ns_per_sm",
        "little_in_flight_bytes", "implied_round_trip_ns", "dram_tb_s", "regs", "spills", "smem_bytes", "status"]


def run_one(w, experiment, variant, tile, st, ctas, k_total):
    bm, bn, bk, warps = tile
    row = dict(experiment=experiment, variant=variant, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st, ctas=ctas)
    try:
        kres = KRES_L2 if variant == "private" else k_total
        a_rows = bm if variant == "smallm" else bm * ctas
        a = torch.randn(a_rows, kres, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(kres, bn * ctas, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(bm * ctas, bn, device="cuda", dtype=torch.bfloat16)
        sm = torch.full((ctas,), -1, device="cuda", dtype=torch.int32)
        arows = 0 if variant == "smallm" else bm

        def go():
            return kloop_kernel[(ctas,)](a, b, c, sm, k_total, kres, arows, bn, a.stride(0), b.stride(0),
                                         BM=bm, BN=bn, BK=bk, RECORD_SM=RECORD[0], num_warps=warps, num_stages=st)
        k = go()
        torch.cuda.synchronize()
        ids = sm.tolist()
        if RECORD[0]:
            used = len(set(ids))
            per_sm = max(ids.count(x) for x in set(ids))
        else:                       # not recorded: assume the scheduler spreads the CTAs
            used, per_sm = min(ctas, 132), -(-ctas // 132)
        ms = triton.testing.do_bench(go, warmup=5, rep=25, return_mode="median")
        trips = k_total // bk
        tile_b = (bm + bn) * bk * 2
        dram_b = {"dram": tile_b, "smallm": bn * bk * 2, "private": 0}[variant]
        per_trip = ms * 1e6 / trips
        r = ctas / used
        row.update(sms_used=used, max_ctas_per_sm=per_sm, trips=trips, bytes_per_trip=tile_b,
                   dram_bytes_per_trip=dram_b, kernel_us=round(ms * 1e3, 3), ns_per_trip=round(per_trip, 2),
                   bytes_per_ns_per_sm=round(r * tile_b / per_trip, 2),
                   little_in_flight_bytes=int(r * max(st - 1, 1) * tile_b),
                   implied_round_trip_ns=round(max(st - 1, 1) * per_trip, 1),
                   dram_tb_s=round(ctas * trips * dram_b / (ms * 1e9), 3) if variant != "private" else "",
                   regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared, status="ok")
        del a, b, c
    except Exception as e:  # one config failing must not stop the rest
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        log(traceback.format_exc()[-400:])
    w.writerow(row)
    log({k: row.get(k) for k in ("experiment", "variant", "BM", "BN", "BK", "WARPS", "STAGES", "ctas", "sms_used",
                                 "max_ctas_per_sm", "ns_per_trip", "bytes_per_ns_per_sm", "dram_tb_s", "status")})


def main():
    os.makedirs(OUT, exist_ok=True)
    log("device", torch.cuda.get_device_name(0), "SMs", torch.cuda.get_device_properties(0).multi_processor_count,
        "torch", torch.__version__, "triton", triton.__version__)
    try:
        log(subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.limit,driver_version",
                            "--format=csv"], capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    try:
        compiled((16, 64, 64, 4, 2) if "sms" in PARTS or "smallm" in PARTS else RES_TILES[0] + (RES_STAGES[0],))
    except Exception as e:
        RECORD[0] = False
        log("%smid not recorded (inline asm failed):", repr(e)[:300])
    precompile(kernels())
    f = open(os.path.join(OUT, "mlp.csv"), "w", newline="")
    w = csv.DictWriter(f, fieldnames=COLS)
    w.writeheader()
    plan = []
    for tile in SMS_TILES:
        for st in SMS_STAGES:
            for n in SMS_CTAS:
                plan.append(("sms", "dram", tile, st, n, 16384 if n > 1 else 8192, 1))
    for tile in SMALLM_TILES:
        for st in SMALLM_STAGES:
            for n in SMALLM_CTAS:
                plan.append(("smallm", "smallm", tile, st, n, 16384, 1))
    for tile in RES_TILES:
        for st in RES_STAGES:
            for r in RES_R:
                for variant in RES_VARIANTS:
                    plan.append(("resident", variant, tile, st, 132 * r, 8192, r))
    log(f"{len(plan)} runs planned")
    for i, (exp, variant, tile, st, n, kt, r) in enumerate(plan):
        if time.time() - T0 > DEADLINE_S:
            log(f"deadline: stopping after {i} of {len(plan)} runs")
            break
        try:
            if r > 1 and not fits(tile + (st,), r):
                log("skip: not resident", exp, variant, tile, st, r)
                continue
        except Exception as e:
            log("fit check failed", tile, st, repr(e)[:200])
        run_one(w, exp, variant, tile, st, n, kt)
        f.flush()
    f.close()
    try:
        log(subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.limit",
                            "--format=csv"], capture_output=True, text=True, timeout=20).stdout.strip())
    except Exception as e:
        log("nvidia-smi:", repr(e))
    log("done")


if __name__ == "__main__":
    main()
