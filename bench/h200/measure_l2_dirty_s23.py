"""Which launches pay do_bench's dirty L2, and how much of it kloop's line holds (session 23).

    mkdir -p /tmp/ld23 && PYTHONUNBUFFERED=1 L2D23_DEADLINE_S=150 timeout 200 \
        python3 bench/h200/measure_l2_dirty_s23.py /tmp/ld23 > /tmp/ld23/stdout.txt 2>&1

Why (docs/analysis.md, "The write-back for the kloop line's launches, tried and not landed"): the
weight stream's launches pay `launch.l2_dirty_write_back` (8.16 us) explicitly, the launches priced
on kloop's DRAM line (`pipeline.dram_round_trip_unloaded`, fitted on kloop.csv's `dram` rows, timed
by do_bench after its clear) carry it only as a share of those rows' trips. Two questions, each
timed in one process on the same buffers, right after do_bench's clear (a 256 MB zero fill, the L2
full of dirty lines: `dirty`, after a 256 MB read so the GPU is busy before it) and after the same
clear followed by a 256 MB read (`clean`), the modes alternating rep by rep (l2_dirty_s20's method):

  kloop     the 32 `dram` rows of bench/h200/measure_kloop.py (8 tiles x 2-5 stages, 132 CTAs, every
            byte from DRAM once): how much of each row is the write-back, so that the line can be
            fitted on clean rows and the write-back priced once a launch for every class;
  bm_sweep  gemm.tile launches at one shape whose BM alone varies, cdiv(M, BM) = 1, 2, 4, 8 (B read
            once, twice, four and eight times): does a launch that re-reads its B pay the write-back
            as a stream does (l2_dirty_s20: 128x28672x14336 64x256x32 6.75 us, 128x4096x28672
            32x128x128 0.84 us, 4096^3 1.66 us)?

Then `attn_retime`: run34's causal B2 H64 S8192 D128 shape (its 12 configurations) timed again
with measure_accuracy's bench(), three passes in turn, because its 128x64 w4 s2 row (5.36 ms) is
13.7% slower than the same launch in attention_triton_prefill.csv (attnspill22).

Output: OUTDIR/kloop_dirty.csv, OUTDIR/bm_sweep_dirty.csv (config, ctas, mode, min, q1, med, q3,
max us), OUTDIR/attn_retime.csv, stdout.
"""
import csv
import os
import sys
import tempfile
import time

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
sys.argv = [sys.argv[0], tempfile.mkdtemp()]   # measure_kloop opens its log in argv[1] at import
sys.path.insert(0, "bench/h200")
import measure_kloop as mk  # noqa: E402
sys.argv = [sys.argv[0]]                      # measure_accuracy reads sys.argv at import
import measure_accuracy as ma  # noqa: E402

T0 = time.time()
DEADLINE_S = float(os.environ.get("L2D23_DEADLINE_S", "150"))
REPS = 25

# M N K BM BN BK WARPS STAGES GROUP_M: each group varies BM alone
BM_SWEEP = [
    # run11's shape: its first pick 64x32x32 w2 s5 (B read twice, 111.9 us) beside 128x32x32 w2 s5 (a stream)
    (128, 14336, 4096, 128, 32, 32, 2, 5, 1), (128, 14336, 4096, 64, 32, 32, 2, 5, 1),
    (128, 14336, 4096, 32, 32, 32, 2, 5, 1), (128, 14336, 4096, 16, 32, 32, 2, 5, 1),
    (128, 14336, 4096, 128, 64, 64, 4, 4, 1), (128, 14336, 4096, 64, 64, 64, 4, 4, 1),
    (128, 14336, 4096, 32, 64, 64, 4, 4, 1), (128, 14336, 4096, 16, 64, 64, 4, 4, 1),
    # a longer K, 32-64 CTAs a BM
    (128, 4096, 28672, 128, 128, 64, 8, 4, 1), (128, 4096, 28672, 64, 128, 64, 4, 4, 1),
    (128, 4096, 28672, 32, 128, 64, 4, 4, 1), (128, 4096, 28672, 16, 128, 64, 4, 4, 1),
    # M past one tile: cdiv(M, BM) = 2, 4, 8
    (256, 8192, 8192, 128, 128, 64, 4, 4, 8), (256, 8192, 8192, 64, 128, 64, 4, 4, 8),
    (256, 8192, 8192, 32, 128, 64, 4, 4, 8),
    (64, 28672, 8192, 64, 64, 128, 4, 3, 1), (64, 28672, 8192, 32, 64, 128, 4, 3, 1),
    (64, 28672, 8192, 16, 64, 128, 4, 3, 1),
    # compute-bound launches: many re-reads, long
    (1024, 8192, 8192, 128, 128, 64, 4, 4, 8), (2048, 2048, 16384, 128, 128, 64, 4, 4, 8),
]


def timed(launch, reps=REPS):
    """{mode: sorted times in us} for one launch, modes alternating rep by rep."""
    cache = timed.cache
    other = timed.other
    times = {"dirty": [], "clean": []}
    for _ in range(reps):
        for mode in ("dirty", "clean"):
            if mode == "dirty":
                torch.sum(other)
                cache.zero_()
            else:
                cache.zero_()
                torch.sum(other)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            launch()
            e.record()
            e.synchronize()
            times[mode].append(s.elapsed_time(e) * 1e3)
    for v in times.values():
        v.sort()
    return times


def quart(v):
    n = len(v)
    return (v[0], v[n // 4], v[n // 2], v[(3 * n) // 4], v[-1])


def write(path, head, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(rows)


def out_rows(name, ctas, times, extra=()):
    rows = []
    for mode, v in times.items():
        q = quart(v)
        rows.append([name, ctas, mode] + list(extra) + ["%.2f" % x for x in q])
        print("[%6.1fs] %s ctas %d %s min %.2f q1 %.2f med %.2f q3 %.2f max %.2f us" % (
            (time.time() - T0, name, ctas, mode) + q), flush=True)
    print("   dirty - clean (medians) %.2f us" % (quart(times["dirty"])[2] - quart(times["clean"])[2]), flush=True)
    return rows


def kloop_part():
    rows = []
    head = ["config", "ctas", "mode", "trips", "bytes_per_trip", "min_us", "q1_us", "med_us", "q3_us", "max_us"]
    for bm, bn, bk, warps in mk.TILES:
        for st in mk.STAGES:
            if time.time() - T0 > DEADLINE_S * 0.4:
                print("kloop: deadline share reached", flush=True)
                return
            name = f"dram_{bm}x{bn}x{bk}_w{warps}_s{st}"
            try:
                ctas, kres, a, b, c, arows, bcols = mk.buffers(bm, bn, "dram")
                trips = mk.K_TOTAL // bk

                def run():
                    mk.kloop_kernel[(ctas,)](a, b, c, mk.K_TOTAL, kres, arows, bcols, a.stride(0), b.stride(0),
                                             BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=st)
                run()
                torch.cuda.synchronize()
                rows += out_rows(name, ctas, timed(run), (trips, (bm * bk + bk * bn) * 2))
                del a, b, c
                torch.cuda.empty_cache()
            except Exception as err:  # keep the rows already timed
                print("error", name, repr(err)[:200], flush=True)
            write(os.path.join(OUT, "kloop_dirty.csv"), head, rows)


def bm_sweep_part():
    rows = []
    head = ["config", "ctas", "mode", "m_blocks", "min_us", "q1_us", "med_us", "q3_us", "max_us"]
    for c in BM_SWEEP:
        if time.time() - T0 > DEADLINE_S * 0.75:
            print("bm_sweep: deadline share reached", flush=True)
            return
        p = dict(zip("M N K BM BN BK WARPS STAGES GROUP_M".split(), c))
        name = "{M}x{N}x{K}_{BM}x{BN}x{BK}_w{WARPS}_s{STAGES}_g{GROUP_M}".format(**p)
        mb = ma.cdiv(p["M"], p["BM"])
        ctas = mb * ma.cdiv(p["N"], p["BN"])
        try:
            j = ("gemm.csv", "gemm_bf16", "kernels/gemm.tile", "dev", 0, name, p)
            b = ma.make_bufs(j)
            ma.launch(j, b)
            torch.cuda.synchronize()
            rows += out_rows(name, ctas, timed(lambda: ma.launch(j, b)), (mb,))
            del b
            torch.cuda.empty_cache()
        except Exception as err:
            print("error", name, repr(err)[:200], flush=True)
        write(os.path.join(OUT, "bm_sweep_dirty.csv"), head, rows)


def attn_part():
    src = "calibration/h200/measured/issue15/run34/attention.csv"
    jobs = []
    with open(src) as f:
        for r in csv.DictReader(f):
            if r["shape"] != "B2 H64 S8192 D128":
                continue
            p = {k: int(r[k]) for k in ("B", "H", "S", "D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES")}
            jobs.append((("attention.csv", r["family"], r["kernel"], "dev", 0, r["shape"], p), r["measured_ms"]))
    rows = []
    head = ["BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "pass", "ms", "run34_ms"]
    bufs = ma.make_bufs(jobs[0][0])
    for j, _ in jobs:
        ma.launch(j, bufs)
    torch.cuda.synchronize()
    for rep in range(3):
        for j, old in jobs:
            if time.time() - T0 > DEADLINE_S:
                print("attn: deadline", flush=True)
                write(os.path.join(OUT, "attn_retime.csv"), head, rows)
                return
            p = j[6]
            ms = ma.bench(lambda: ma.launch(j, bufs))
            rows.append([p["BLOCK_M"], p["BLOCK_N"], p["WARPS"], p["STAGES"], rep, "%.5f" % ms, old])
            print("[%6.1fs] attn %dx%d w%d s%d pass %d %.4f ms (run34 %s)" % (
                time.time() - T0, p["BLOCK_M"], p["BLOCK_N"], p["WARPS"], p["STAGES"], rep, ms, old), flush=True)
        write(os.path.join(OUT, "attn_retime.csv"), head, rows)


def main():
    os.makedirs(OUT, exist_ok=True)
    timed.cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
    timed.other = torch.ones(64 * 1024 * 1024, dtype=torch.float32, device="cuda")
    print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
    for part in (kloop_part, bm_sweep_part, attn_part):
        try:
            part()
        except Exception as err:  # one part failing must not lose the others
            print("error in", part.__name__, repr(err)[:300], flush=True)
    print("done in %.1f s" % (time.time() - T0), flush=True)


if __name__ == "__main__":
    main()
