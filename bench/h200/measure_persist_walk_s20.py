"""Do the co-readers of a persistent walk's B tile drift apart, and by how much per round?
(issue 15, session 20, persist20.)

calibration/h200/measured/persist_s19 (Nsight Compute) finds the persistent walk's 64x256x64 w8
tile on 114 CTAs reading 1.32-1.45x the DRAM bytes the lock-step walk counts (5120x8192x8192 s5:
4.61 GB against 3.19; 4096x8192x8192 s4: 3.29 against 2.50), where the 128x128x32 w8 s5 walk on
132 CTAs reads exactly the lock step's 2.78 GB. Both read all of B (134 MB) every round; a round's
co-readers of one B column are CTAs TILES_N apart (4 at 114 CTAs / 32 columns, 2 at 132 / 64).
The lock step keeps a column's later readers in L2 only while they lag the first by less than
the L2's room over the round's bytes (~31 MB / 139 MB = 0.23 of a tile). This script records when
each tile starts and ends, on which SM, so the lag of a column's co-readers can be read per round.

The campaign's kernel (bench/h200/triton_kernels.py persistent_kernel) with three stamps per tile:
%smid, %globaltimer at the tile's start (before its k-loop) and after its store. Plain and timed
kernels are both timed (do_bench, cold L2) so the instrumentation's cost shows. Each launch writes
walk_<cfg>.csv (tile, cta, round, pid_m, pid_n, smid, t_start_ns, t_end_ns, from the launch's first
start) and one summary row (summary.csv): per-round co-reader start spread of a B column (median
and 90th percentile over the round's columns, in us and in tiles), CTA rate spread, makespan.
Then Nsight Compute's DRAM bytes and L2 slice sectors (measure_persist_s19.profile) for the
64x256x64 w8 s5 walk on 132 and 78 CTAs and the 128x128x32 w8 s5 walk on 114 CTAs (5120x8192x8192).

    PYTHONUNBUFFERED=1 python3 bench/h200/measure_persist_walk_s20.py OUTDIR

Stops starting timed launches after PW20_DEADLINE_S (50 s) and ncu rows after PW20_NCU_DEADLINE_S (100 s).
"""
import csv
import os
import statistics
import sys
import time

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("PW20_DEADLINE_S", "50"))
NCU_DEADLINE_S = float(os.environ.get("PW20_NCU_DEADLINE_S", "100"))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (M, N, K, BM, BN, BK, WARPS, STAGES, NUM_SMS)
CONFIGS = [(5120, 8192, 8192, 64, 256, 64, 8, 5, 114), (5120, 8192, 8192, 128, 128, 32, 8, 5, 132),
           (5120, 8192, 8192, 64, 256, 64, 8, 5, 132), (5120, 8192, 8192, 64, 256, 64, 8, 4, 114),
           (5120, 8192, 8192, 128, 128, 32, 8, 5, 114), (4096, 8192, 8192, 64, 256, 64, 8, 4, 114),
           (1536, 8192, 8192, 64, 256, 64, 8, 4, 114), (5120, 8192, 8192, 64, 256, 64, 8, 5, 78)]
NCU = [(5120, 8192, 8192, 64, 256, 64, 8, 5, 132), (5120, 8192, 8192, 128, 128, 32, 8, 5, 114),
       (5120, 8192, 8192, 64, 256, 64, 8, 5, 78)]


def kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def persistent_timed_kernel(a_ptr, b_ptr, c_ptr, rec_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                                stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
        # triton_kernels.persistent_kernel with three stamps per tile
        start = tl.program_id(0)
        ctas = tl.num_programs(0)
        sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [start], dtype=tl.int32,
                                       is_pure=False, pack=1)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
        offs_k = tl.arange(0, BLOCK_K)
        for t in range(start, tiles, ctas):
            t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [t], dtype=tl.int64,
                                           is_pure=False, pack=1)
            pid_m = t // num_pid_n
            pid_n = t % num_pid_n
            offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
            offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(0, tl.cdiv(K, BLOCK_K)):
                a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
                b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_K * stride_ak
                b_ptrs += BLOCK_K * stride_bk
            offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
            t1 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [t], dtype=tl.int64,
                                           is_pure=False, pack=1)
            base = rec_ptr + t.to(tl.int64) * 4
            tl.store(base + 0, sm.to(tl.int64))
            tl.store(base + 1, t0)
            tl.store(base + 2, t1)
            tl.store(base + 3, start.to(tl.int64))

    return persistent_timed_kernel


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def summarize(cfg, recs):
    """Per-round spread of a B column's co-readers' start times, the CTAs' rates."""
    M, N, K, BM, BN, BK, W, S, P = cfg
    tn = -(-N // BN)
    tiles = -(-M // BM) * tn
    ctas = min(P, tiles)
    t_min = min(r[1] for r in recs)
    tile_ns = statistics.median(r[2] - r[1] for r in recs)
    rounds = -(-tiles // ctas)
    spread_med, spread_p90 = [], []
    for i in range(rounds):
        cols = {}
        for t in range(i * ctas, min((i + 1) * ctas, tiles)):
            cols.setdefault(t % tn, []).append(recs[t][1] - t_min)
        sp = [max(v) - min(v) for v in cols.values() if len(v) > 1]
        spread_med.append(pct(sp, 0.5))
        spread_p90.append(pct(sp, 0.9))
    per_cta = {}
    for r in recs:
        per_cta.setdefault(r[3], []).append(r[2] - r[1])
    full = [statistics.mean(v) for v in per_cta.values()]
    ends = [max(r[2] for r in recs if r[3] == c) - t_min for c in per_cta]
    pick = sorted({0, 1, 2, 5, 10, 15, 20, rounds - 2, rounds - 1} & set(range(rounds)))
    return dict(tiles=tiles, ctas=ctas, rounds=rounds, sms=len({r[0] for r in recs}),
                tile_us=f"{tile_ns / 1e3:.2f}", makespan_us=f"{(max(r[2] for r in recs) - t_min) / 1e3:.1f}",
                cta_tile_us_min=f"{min(full) / 1e3:.2f}", cta_tile_us_max=f"{max(full) / 1e3:.2f}",
                cta_tile_cv=f"{statistics.pstdev(full) / statistics.mean(full):.4f}",
                cta_end_spread_us=f"{(max(ends) - min(ends)) / 1e3:.1f}",
                spread_med_tiles=";".join(f"{i}:{spread_med[i] / tile_ns:.3f}" for i in pick),
                spread_p90_tiles=";".join(f"{i}:{spread_p90[i] / tile_ns:.3f}" for i in pick))


def main():
    import torch
    import triton
    from common import median_ms
    from triton_kernels import persistent_kernel
    os.makedirs(OUT, exist_ok=True)
    timed = kernels()
    cdiv = triton.cdiv
    print(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name()}", flush=True)
    cols = ["config", "plain_ms", "timed_ms", "tiles", "ctas", "rounds", "sms", "tile_us", "makespan_us",
            "cta_tile_us_min", "cta_tile_us_max", "cta_tile_cv", "cta_end_spread_us", "spread_med_tiles",
            "spread_p90_tiles", "status"]
    sf = open(os.path.join(OUT, "summary.csv"), "w", newline="")
    sw = csv.DictWriter(sf, fieldnames=cols)
    sw.writeheader()
    bufs = {}
    for cfg in CONFIGS:
        if time.time() - T0 > DEADLINE_S:
            print("deadline: no more launches", flush=True)
            break
        M, N, K, BM, BN, BK, W, S, P = cfg
        name = f"{M}x{N}x{K}_{BM}x{BN}x{BK}_w{W}_s{S}_p{P}"
        row = dict(config=name, status="ok")
        try:
            if (M, N, K) not in bufs:
                bufs.clear()
                torch.cuda.empty_cache()
                g = torch.Generator(device="cuda")
                g.manual_seed(2020)
                bufs[(M, N, K)] = (torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16),
                                   torch.randn(K, N, device="cuda", generator=g).to(torch.bfloat16),
                                   torch.empty(M, N, device="cuda", dtype=torch.bfloat16))
            a, b, c = bufs[(M, N, K)]
            tiles = cdiv(M, BM) * cdiv(N, BN)
            grid = (min(P, tiles),)
            rec = torch.zeros(tiles, 4, device="cuda", dtype=torch.int64)
            args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
            kw = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, NUM_SMS=P, num_warps=W, num_stages=S)

            def plain():
                return persistent_kernel[grid](*args, **kw)

            def inst():
                return timed[grid](a, b, c, rec, *args[3:], **kw)

            row["plain_ms"] = f"{median_ms(plain, warmup=5, rep=30):.5f}"
            row["timed_ms"] = f"{median_ms(inst, warmup=5, rep=30):.5f}"
            flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
            flush.zero_()
            torch.cuda.synchronize()
            inst()
            torch.cuda.synchronize()
            r = rec.cpu().tolist()
            del flush
            t_min = min(x[1] for x in r)
            tn = cdiv(N, BN)
            with open(os.path.join(OUT, f"walk_{name}.csv"), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["tile", "cta", "round", "pid_m", "pid_n", "smid", "t_start_ns", "t_end_ns"])
                for t, (sm, t0, t1, cta) in enumerate(r):
                    w.writerow([t, cta, t // grid[0], t // tn, t % tn, sm, t0 - t_min, t1 - t_min])
            row.update(summarize(cfg, r))
        except Exception as e:  # keep going: one failure must not lose the rest
            row["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
        sw.writerow({k: row.get(k, "") for k in cols})
        sf.flush()
        print(f"[{time.time() - T0:6.1f}s] {row}", flush=True)
    sf.close()
    bufs.clear()
    torch.cuda.empty_cache()
    # Nsight Compute on three more walks (measure_persist_s19.profile: one ncu process a row)
    sys.argv = [sys.argv[0], OUT]
    import measure_persist_s19 as ps
    ps.OUT, ps.NCU, ps.T0, ps.NCU_DEADLINE_S = OUT, NCU, T0, NCU_DEADLINE_S
    ps.profile()
    print("done", flush=True)


if __name__ == "__main__":
    main()
