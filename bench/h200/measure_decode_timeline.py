#!/usr/bin/env python3
"""H200: when and on which SM each CTA of a split-KV decode launch runs (issue 15, session 14, decode14).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_decode_timeline.py OUTDIR
    PYTHONUNBUFFERED=1 DECODE_TL_SET=s20 DECODE_TL_REPS=3 python3 bench/h200/measure_decode_timeline.py OUTDIR

A physical fact for the one-stage decode trip (docs/analysis.md, "The unpipelined streaming trip",
still missing): launches of about 1.3 waves at 3 CTAs a SM (run13 B2 HQ32 SKV32768 SPLITS32
BLOCK_N128 4 warps 1 stage, ms_split 96.9 us; run17 B32 HQ64 SKV4096 SPLITS2, 177.5 us) run ~19 us
past the first wave at the DRAM share plus a one-CTA-a-SM tail; a tail of 116 CTAs that the
dispatcher packs 3 to an SM as the first wave's slots free together would explain it. And a
single wave at 2 CTAs a SM (run15 B1 HQ32 SKV65536 SPLITS32 BLOCK_N128 8 warps 1 stage: 256 CTAs,
80.2 us) reaches ~3.5 TB/s where many waves reach 4.0 (run18 B64 SKV8192 SPLITS2, the control).
Here bench/h200/triton_kernels.py's decode_split_kernel (the campaigns' kernel) records, per CTA,
its SM (%smid), the global timer (%globaltimer, ns) at its start, after its KV loop and at its
end: how many CTAs each SM runs in the tail, when the tail CTAs start, and each CTA's trip time.

Checked on the CPU (Triton 3.6.0, GPUTarget("cuda", 90, 32), no GPU): the plain kernel compiles
to the campaigns' registers (141, 141, 100, 100, 80) and the timed one to 143, 143, 98, 98, 80
with no stack: the same CTAs a SM (3, 3, 2, 2, 1).

Files: one CSV per launch, timeline_<name>.csv with columns bh, sp, smid, t_start_ns,
t_loop_ns, t_end_ns (relative to the launch's first start); summary.csv (per launch: CTAs, SMs
used, makespan, the largest number of CTAs one SM ran after the first wave's slots, the median
CTA time, do_bench's median of the instrumented and of the plain split kernel); stdout.txt.
"""
import csv
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (name, B, HQ, HKV, SKV, D, SPLITS, BLOCK_N, WARPS, STAGES): issue15 rows
CONFIGS = [
    ("run13_b2_skv32768_sp32_n128_w4_s1", 2, 32, 8, 32768, 128, 32, 128, 4, 1),     # 512 CTAs, 3 a SM: 1.29 waves
    ("run17_b32_skv4096_sp2_n128_w4_s1", 32, 64, 8, 4096, 128, 2, 128, 4, 1),       # 512 CTAs, 3 a SM: 1.29 waves
    ("run15_b1_skv65536_sp32_n128_w8_s1", 1, 32, 8, 65536, 128, 32, 128, 8, 1),     # 256 CTAs, one wave at 2 a SM
    ("run18_b64_skv8192_sp2_n128_w8_s1", 64, 32, 8, 8192, 128, 2, 128, 8, 1),       # 1,024 CTAs, 3.88 waves (control)
    ("run13_b2_skv32768_sp32_n128_w8_s3", 2, 32, 8, 32768, 128, 32, 128, 8, 3),     # the same launch pipelined
]
# DECODE_TL_SET=s17 (session 17, decode17): pipelined launches of the near ties. BLOCK_N 32 on 4 warps at 3
# stages (6 CTAs a SM) one wave (256 CTAs) against 1.29 waves (1,024: run24 64 trips, run12 32 trips), and the
# 8-warp 2-stage row (512 CTAs at 4 a SM) against its 4-warp twin (512 at 7 a SM): where the 1.29-wave tail
# CTAs land (late_max_per_sm: packed like the one-stage tail, or spread) and whether the first wave ends in phase.
CONFIGS_S17 = [
    ("run24_b16_skv16384_sp2_n32_w4_s3", 16, 32, 8, 16384, 128, 2, 32, 4, 3),      # 256 CTAs, one wave
    ("run24_b16_skv16384_sp8_n32_w4_s3", 16, 32, 8, 16384, 128, 8, 32, 4, 3),      # 1,024 CTAs, 1.29 waves
    ("run12_b16_hq64_skv8192_sp8_n32_w4_s3", 16, 64, 8, 8192, 128, 8, 32, 4, 3),   # 1,024 CTAs, 32 trips
    ("run24_b16_skv16384_sp4_n32_w8_s2", 16, 32, 8, 16384, 128, 4, 32, 8, 2),      # 512 CTAs, 4 a SM
    ("run24_b16_skv16384_sp4_n32_w4_s2", 16, 32, 8, 16384, 128, 4, 32, 4, 2),      # 512 CTAs, 7 a SM
]
# DECODE_TL_SET=s20 (session 20, decode20): the 1.29-wave pipelined launches that tfx prices 6-14% fast at
# DRAM's read-only rate (run26 B4 SKV131072 at 3 a SM, run18 B64 SKV8192's pick) beside the one it prices
# right (run17 B32 HQ64 SKV4096 SPLITS2 BLOCK_N64 2 warps 3 stages, also 512 CTAs at 3 a SM: packing its tail
# as the one-stage tail made it +10.6%), the one-stage row of run26's shape and run24's packed launch again:
# how many tail CTAs each SM takes, and whether the SMs that end their first wave early (and take a packed
# group) are the same SMs launch after launch (DECODE_TL_REPS recorded launches, each after a clear).
CONFIGS_S20 = [
    ("run26_b4_skv131072_sp16_n64_w8_s3", 4, 32, 8, 131072, 128, 16, 64, 8, 3),    # 512 CTAs, 3 a SM, -13.6%
    ("run26_b4_skv131072_sp16_n128_w8_s2", 4, 32, 8, 131072, 128, 16, 128, 8, 2),  # 512 CTAs, 3 a SM, -6.2%
    ("run26_b4_skv131072_sp16_n128_w8_s1", 4, 32, 8, 131072, 128, 16, 128, 8, 1),  # one stage, -1.5% (control)
    ("run18_b64_skv8192_sp1_n128_w4_s2", 64, 32, 8, 8192, 128, 1, 128, 4, 2),      # 512 CTAs, 3 a SM, -5.5%
    ("run17_b32_hq64_skv4096_sp2_n64_w2_s3", 32, 64, 8, 4096, 128, 2, 64, 2, 3),   # 512 CTAs, 3 a SM, -2.1%
    ("run24_b16_skv16384_sp8_n32_w4_s3", 16, 32, 8, 16384, 128, 8, 32, 4, 3),      # decode_timeline_s17's, again
]
# DECODE_TL_SET=s42 (session 42, docs/analysis.md "Decode's one-wave long splits, by class"): the held-out SKV65536
# miss's one-wave SPLITS 1 launches (352 CTAs, 2-3 a SM) that tfx prices 3-6% fast, beside the many-wave SPLITS 16
# and 32 rows of the same shape it prices within 1.5%: whether the one long wave's CTAs end together (each at its
# even DRAM share, as tfx prices them) or spread (by SM, by slot).
CONFIGS_S42 = [
    ("run79_b44_skv65536_sp1_n64_w8_s3", 44, 32, 8, 65536, 128, 1, 64, 8, 3),     # 352 CTAs, 3 a SM, -5.6%
    ("run79_b44_skv65536_sp1_n64_w8_s2", 44, 32, 8, 65536, 128, 1, 64, 8, 2),     # 352 CTAs, 4 a SM, -3.4%
    ("run79_b44_skv65536_sp1_n32_w4_s3", 44, 32, 8, 65536, 128, 1, 32, 4, 3),     # 352 CTAs, 6 a SM, -2.8%
    ("run69_b39_skv65536_sp1_n128_w8_s2", 39, 32, 8, 65536, 128, 1, 128, 8, 2),   # 312 CTAs, 3 a SM, -4.9%
    ("run79_b44_skv65536_sp16_n64_w2_s3", 44, 32, 8, 65536, 128, 16, 64, 2, 3),   # 5,632 CTAs, 14 waves, +1.4%
    ("run79_b44_skv65536_sp32_n128_w4_s2", 44, 32, 8, 65536, 128, 32, 128, 4, 2), # 11,264 CTAs, 28 waves, +0.9%
]
# DECODE_TL_SET=s44 (session 44, docs/analysis.md "The H200 answers"): in the H200's and H100's s42 launches the SMs
# 0-1, 16-17, 48-49, 124-125, 128-131 (six TPCs) end 4-12% after the median, and in a pure DRAM stream
# (calibration/h200/measured/sm_rates) no SM does. One wave of equal CTAs at 1, 2 and 3 an SM, 16,384 keys each (256
# trips of 64 keys), on 8, 4 and 2 warps: whether the six TPCs are slow alone on their SM (their place) or only beside
# co-resident CTAs (the SM's shared issue and port), and on how many warps.
CONFIGS_S44 = [
    (f"r{r}_n{n}_w{w}_s3", 33, 16 * hkv // 4, hkv, 16384 * sp, 128, sp, n, w, 3)
    for (n, w) in ((64, 8), (32, 4), (64, 2))
    for r, hkv, sp in ((1, 4, 1), (2, 8, 1), (3, 4, 3))
]
# DECODE_TL_SET=s58 (session 58): 512-CTA launches at 3 a SM (B1, SPLITS 64, BLOCK_N 64 on 4 warps, 3 stages: the
# tile whose compiled 71,680 B seat 3 CTAs a SM) that tfx prices too slow where the splits are short (run12 B1 HQ64
# SKV16384: 4 trips, +18.5%; the SDPA table's B1 SKV131072 row, +15% against a sibling kernel) and about right
# where long (run11 SKV32768 8 trips +5.1%): tfx runs 396 CTAs in lock step, then the other 116 alone on their SMs
# at one CTA's stream rate. Whether the tail CTAs start as one group after the first wave, or as slots free.
CONFIGS_S58 = [
    ("run12_b1_hq64_skv16384_sp64_n64_w4_s3", 1, 64, 8, 16384, 128, 64, 64, 4, 3),    # 512 CTAs, 4 trips, +18.5%
    ("run11_b1_hq64_skv32768_sp64_n64_w4_s3", 1, 64, 8, 32768, 128, 64, 64, 4, 3),    # 512 CTAs, 8 trips, +5.1%
    ("sdpa_b1_skv131072_sp64_n64_w4_s3", 1, 32, 8, 131072, 128, 64, 64, 4, 3),        # 512 CTAs, 32 trips
    ("run1_b1_skv131072_sp8_n64_w4_s3", 1, 32, 8, 131072, 128, 8, 64, 4, 3),          # 64 CTAs, +1.8% (control)
]
CONFIGS = {"s17": CONFIGS_S17, "s20": CONFIGS_S20, "s42": CONFIGS_S42,
           "s44": CONFIGS_S44, "s58": CONFIGS_S58}.get(os.environ.get("DECODE_TL_SET"), CONFIGS)
REPS = int(os.environ.get("DECODE_TL_REPS", "1"))
GP = 16


def kernels():
    import triton
    import triton.language as tl

    @triton.jit(do_not_specialize=["SPLITS", "HKV", "G"])
    def decode_split_timed(Q, Kc, Vc, OP, MLP, REC, qk_scale, SKV, SPLIT_LEN, SPLITS, HKV, G,
                           GP: tl.constexpr, D: tl.constexpr, BLOCK_N: tl.constexpr):
        # triton_kernels.decode_split_kernel with three timer reads and the SM stored a CTA
        bh = tl.program_id(0)
        sp = tl.program_id(1)
        t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [bh], dtype=tl.int64,
                                       is_pure=False, pack=1)
        sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [bh], dtype=tl.int32,
                                       is_pure=False, pack=1)
        offs_g = tl.arange(0, GP)
        offs_d = tl.arange(0, D)
        offs_n = tl.arange(0, BLOCK_N)
        gmask = offs_g < G
        q = tl.load(Q + (bh * G + offs_g)[:, None] * D + offs_d[None, :], mask=gmask[:, None], other=0.0)
        kv_base = bh.to(tl.int64) * SKV * D
        start = sp * SPLIT_LEN
        n_trips = tl.minimum(SPLIT_LEN // BLOCK_N, tl.cdiv(tl.maximum(SKV - start, 0), BLOCK_N))
        m_i = tl.full([GP], float("-inf"), tl.float32)
        l_i = tl.zeros([GP], tl.float32)
        acc = tl.zeros([GP, D], tl.float32)
        for j in range(0, n_trips):
            n = start + j * BLOCK_N + offs_n
            nmask = n < SKV
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
        t1 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [bh], dtype=tl.int64,
                                       is_pure=False, pack=1)
        row = (bh * SPLITS + sp) * G + offs_g
        tl.store(OP + row[:, None] * D + offs_d[None, :], acc, mask=gmask[:, None])
        tl.store(MLP + row * 2, m_i, mask=gmask)
        tl.store(MLP + row * 2 + 1, l_i, mask=gmask)
        t2 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [bh], dtype=tl.int64,
                                       is_pure=False, pack=1)
        base = REC + (bh.to(tl.int64) * SPLITS + sp) * 4
        tl.store(base + 0, sm.to(tl.int64))
        tl.store(base + 1, t0)
        tl.store(base + 2, t1)
        tl.store(base + 3, t2)

    return decode_split_timed


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t_begin = time.time()
    import torch
    import triton
    from triton_kernels import decode_split_kernel
    from common import median_ms
    timed = kernels()
    print(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name()}", flush=True)
    summary = []
    for name, B, HQ, HKV, SKV, D, SPLITS, BN, W, S in CONFIGS:
        row = dict(config=name, B=B, HQ=HQ, HKV=HKV, SKV=SKV, D=D, SPLITS=SPLITS, BLOCK_N=BN, WARPS=W, STAGES=S,
                   status="ok")
        try:
            G = HQ // HKV
            split_len = triton.cdiv(triton.cdiv(SKV, SPLITS), BN) * BN
            q = torch.randn(B * HQ, D, device="cuda", dtype=torch.bfloat16)
            kc = torch.randn(B * HKV * SKV, D, device="cuda", dtype=torch.bfloat16)
            vc = torch.randn(B * HKV * SKV, D, device="cuda", dtype=torch.bfloat16)
            op = torch.empty(B * HKV * SPLITS * G, D, device="cuda", dtype=torch.float32)
            mlp = torch.empty(B * HKV * SPLITS * G, 2, device="cuda", dtype=torch.float32)
            rec = torch.zeros(B * HKV * SPLITS, 4, device="cuda", dtype=torch.int64)
            grid = (B * HKV, SPLITS)
            scale = 1.4426950408889634 / D ** 0.5
            kw = dict(GP=GP, D=D, BLOCK_N=BN, num_warps=W, num_stages=S)

            def plain():
                decode_split_kernel[grid](q, kc, vc, op, mlp, scale, SKV, split_len, SPLITS, HKV, G, **kw)

            def inst():
                timed[grid](q, kc, vc, op, mlp, rec, scale, SKV, split_len, SPLITS, HKV, G, **kw)

            row["plain_ms"] = f"{median_ms(plain, warmup=5, rep=50):.5f}"
            row["timed_ms"] = f"{median_ms(inst, warmup=5, rep=50):.5f}"
            # the recorded launch(es): L2 cleared first, as do_bench does
            flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
            spans, lates = [], []
            for rep in range(REPS):
                flush.zero_()
                torch.cuda.synchronize()
                k = timed[grid](q, kc, vc, op, mlp, rec, scale, SKV, split_len, SPLITS, HKV, G, **kw)
                torch.cuda.synchronize()
                if rep == 0:
                    try:      # the instrumented kernel as compiled: its CTAs a SM follow from these
                        row["regs_timed"], row["smem_timed"] = k.n_regs, k.metadata.shared
                    except Exception:
                        pass
                r = rec.cpu().tolist()
                t_min = min(x[1] for x in r)
                suffix = f"_r{rep}" if REPS > 1 else ""
                with open(os.path.join(out, f"timeline_{name}{suffix}.csv"), "w", newline="") as f:
                    w = csv.writer(f)
                    w.writerow(["bh", "sp", "smid", "t_start_ns", "t_loop_ns", "t_end_ns"])
                    for i, (sm, t0, t1, t2) in enumerate(r):
                        w.writerow([i // SPLITS, i % SPLITS, sm, t0 - t_min, t1 - t_min, t2 - t_min])
                # the tail: CTAs that start after the first 10% of the makespan, counted per SM
                span = max(x[3] for x in r) - t_min
                late = {}
                for sm, t0, t1, t2 in r:
                    if t0 - t_min > 0.1 * span:
                        late[sm] = late.get(sm, 0) + 1
                spans.append(f"{span / 1e3:.1f}")
                lates.append(str(max(late.values()) if late else 0))
                if rep == 0:
                    times = sorted(x[3] - x[1] for x in r)
                    row.update(ctas=len(r), sms=len({x[0] for x in r}), makespan_us=f"{span / 1e3:.1f}",
                               late_ctas=sum(late.values()), late_sms=len(late),
                               late_max_per_sm=max(late.values()) if late else 0,
                               median_cta_us=f"{times[len(times) // 2] / 1e3:.2f}")
            row["makespans_us"], row["late_max_per_sm_reps"] = ";".join(spans), ";".join(lates)
            del q, kc, vc, op, mlp, rec, flush
            torch.cuda.empty_cache()
        except Exception as e:  # keep going: one failure must not lose the rest
            row["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
        summary.append(row)
        print(f"[{time.time() - t_begin:6.1f}s] {row}", flush=True)
    cols = ["config", "B", "HQ", "HKV", "SKV", "D", "SPLITS", "BLOCK_N", "WARPS", "STAGES", "ctas", "sms",
            "makespan_us", "late_ctas", "late_sms", "late_max_per_sm", "median_cta_us", "plain_ms", "timed_ms",
            "regs_timed", "smem_timed", "makespans_us", "late_max_per_sm_reps", "status"]
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for row in summary:
            w.writerow([row.get(k, "") for k in cols])


if __name__ == "__main__":
    main()
