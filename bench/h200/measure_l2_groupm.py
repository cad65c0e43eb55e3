#!/usr/bin/env python3
"""H200: how much of a tiled GEMM's operand traffic DRAM serves, by launch order (issue 15).

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_l2_groupm.py OUTDIR
Session 12's second set (L2_SET=s12): the GROUP_M = 1 rows its campaigns rank first wrongly, beside
their GROUP_M = 8 twins, and two reuse-distance sweeps (grouped G1 at M = 1024 and a persistent
64x64 walk over N), so that a survival falling with reuse distance has points on both sides of L2:
    PYTHONUNBUFFERED=1 L2_SET=s12 python3 bench/h200/measure_l2_groupm.py OUTDIR
A third (L2_SET=s12b): the GROUP_M = 1 rows drift12's drift term over-counts (fp8 e4m3 with B K-major,
2-warp CTAs) beside their GROUP_M = 8 twins, and run12's one-wave regret row:
    PYTHONUNBUFFERED=1 L2_SET=s12b python3 bench/h200/measure_l2_groupm.py OUTDIR
A fourth (L2_SET=s14, bigtile14): the campaign rows whose requested tile bytes pass the profile's L2
bandwidth (11 TB/s; 65 rows of runs 1-19 at 11.0-13.8 TB/s, predicted +11% / +15% slow), each beside
its GROUP_M twin, and two L2-bound controls the model prices too fast when its L2 bandwidth is raised;
two more ncu passes a launch give the L2 sectors the SMs asked for beside those the L2 slices served
(EXTRA_METRICS: L1TEX's sectors from the crossbar, LTS's sectors from the SMs' TEX units and from
the other partition's fabric), so that coalescing (fewer sectors at the slices than the SMs asked
for) and the far partition's fills (more) are told apart:
    PYTHONUNBUFFERED=1 L2_SET=s14 python3 bench/h200/measure_l2_groupm.py OUTDIR

A physical fact for the L2-reuse model, not held-out rows. gemm11 (session 11, docs/analysis.md)
found the GROUP_M = 1 launches whose waves span several tile rows 30-35% faster in the model than
on the hardware (run12 128x28672x8192 64x256x32 w8 s5: predicted 137.9 us, measured 211.3), and
the persistent tile walk's B-streaming rows priced through a count nobody measured (persist11).
Here Nsight Compute counts, for the same configurations at GROUP_M = 1, 2, 8 (and two persistent
walks), the bytes DRAM delivers (dram__bytes_read.sum) and L2's read hit rate
(lts__t_sector_op_read_hit_rate.pct), with ncu's default cache control (L2 flushed before the
profiled launch, as do_bench clears it), beside do_bench's median time of the same launch.

The kernels are measure_accuracy.py's (matmul_kernel: Triton's grouped-launch GEMM; the persistent
kernel); each configuration runs in a child process under ncu (--one ...), profiling its second
launch (the first compiles).

Columns (l2_groupm.csv): kernel, M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M (persistent: 0),
NUM_SMS (grouped: 0), measured_ms (do_bench median, no profiler), ncu_ms (gpu__time_duration),
dram_read_bytes, l2_read_sectors, l2_read_hit_pct, min_bytes (A + B read once: 2 (MK + KN)),
dram_over_min, status, and for L2_SET=s14 one column per EXTRA_METRICS entry (empty where ncu
does not know the metric: each is its own pass, so a refusal loses only itself). ncu_raw.txt:
ncu's CSV of every child.
"""
import csv
import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import bench_job, ncu_last_row  # noqa: E402

L2_SET = os.environ.get("L2_SET", "")
L2_SETS = ("", "s12", "s12b", "s13", "s14", "s16", "s17t", "s17b", "s18", "s18t", "s19", "s23", "s25", "s26", "s26b",
           "s26c", "s27g", "s37", "s50")
if L2_SET not in L2_SETS:
    # a mistyped set must not time the default set's launches in its place
    print(f"measure_l2_groupm: L2_SET={L2_SET!r} is not a set; expected one of {', '.join(n for n in L2_SETS if n)} "
          "(or unset: the default set)", file=sys.stderr)
    sys.exit(2)
METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sectors_op_read.sum",
           "lts__t_sector_op_read_hit_rate.pct"]

# (kernel, M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M or NUM_SMS)
GROUPED = [
    (128, 28672, 8192, 64, 256, 32, 8, 5), (128, 28672, 8192, 64, 128, 64, 4, 4),
    (1024, 14336, 4096, 64, 256, 64, 8, 5), (4096, 28672, 4096, 64, 128, 32, 8, 3),
    (2048, 8192, 4096, 64, 256, 64, 4, 5), (6144, 6144, 6144, 64, 128, 32, 4, 4),
    (4096, 4096, 4096, 128, 128, 64, 4, 4), (1024, 28672, 4096, 128, 128, 64, 4, 4),
]
CONFIGS = [("gemm", *c, g) for c in GROUPED for g in (1, 2, 8)]
CONFIGS += [("persistent", 1024, 28672, 4096, 64, 256, 64, 8, 3, 132),
            ("persistent", 8192, 8192, 4096, 64, 64, 32, 4, 5, 114),
            ("persistent", 4096, 4096, 4096, 128, 128, 64, 4, 4, 132),
            ("persistent", 1024, 14336, 8192, 128, 128, 64, 8, 3, 132)]
if L2_SET == "s12":
    # (M, N, K, BM, BN, BK, WARPS, STAGES) at GROUP_M 1 and 8: run15/run14/run12 rows ranked or
    # priced wrongly (small BM at small M: each B tile read by M / BM co-resident tile rows)
    GROUPED12 = [
        (64, 28672, 4096, 16, 64, 32, 4, 5), (64, 28672, 4096, 16, 64, 128, 2, 2),
        (64, 28672, 4096, 32, 256, 128, 8, 3), (128, 28672, 14336, 32, 256, 32, 4, 5),
        (2048, 14336, 4096, 64, 256, 64, 8, 4), (2048, 14336, 4096, 128, 32, 32, 4, 3),
        (16, 14336, 4096, 16, 64, 128, 4, 3),
    ]
    CONFIGS = [("gemm", *c, g) for c in GROUPED12 for g in (1, 8)]
    # reuse distance sweep, grouped G1: a wave's B strips re-read by the next tile row after N / BN tiles
    CONFIGS += [("gemm", 1024, n, 4096, 128, 128, 64, 4, 4, 1) for n in (4096, 8192, 14336)]
    # reuse distance sweep, persistent 64x64x32 walk on 114 SMs (l2_groupm's 2.16x overcount) over N
    CONFIGS += [("persistent", 8192, n, 4096, 64, 64, 32, 4, 5, 114) for n in (2048, 4096, 6144, 12288)]
    CONFIGS += [("persistent", 4096, 8192, 8192, 128, 128, 64, 8, 3, 132),
                ("persistent", 2048, 2048, 14336, 64, 128, 64, 4, 4, 132)]
if L2_SET == "s12b":
    # drift12's request (docs/analysis.md, the GROUP_M = 1 drift term tried): the G1 rows its term
    # over-counts (fp8 with BK 64-128, 2-warp CTAs), each beside its G8 twin
    CONFIGS = [(kind, *c, g) for kind, *c in [
        ("gemm_fp8", 128, 8192, 28672, 64, 64, 64, 8, 3), ("gemm", 64, 14336, 8192, 16, 256, 64, 2, 3),
        ("gemm_fp8", 4096, 14336, 8192, 64, 256, 128, 4, 2), ("gemm_fp8", 128, 28672, 4096, 32, 128, 64, 2, 4),
        ("gemm", 128, 28672, 8192, 64, 256, 32, 8, 5)] for g in (1, 8)]
if L2_SET == "s13":
    # drift13's request (docs/analysis.md, "GROUP_M = 1: readers that drift apart"): the term
    # applies to pipelined loops only; run14's 1-stage G1 rows it would have over-counted, each
    # beside its G8 twin, decide whether a 1-stage reader that falls behind catches up on L2 hits
    CONFIGS = [(kind, *c, g) for kind, *c in [
        ("gemm", 128, 28672, 14336, 16, 256, 32, 2, 1), ("gemm_fp8", 128, 14336, 14336, 16, 64, 64, 2, 1)]
        for g in (1, 8)]
if L2_SET == "s14":
    # bigtile14: rows whose requested bytes pass 11 TB/s at their measured time (run13 fp8
    # 3072x8192x4096 128x64x128 w4 s3 G1, 12.8 TB/s, priced +28% at the L2 roofline: the regret row;
    # run4 bf16 3072^3 128x32x64 w4 s4 G1, 13.8; run17 bf16 1024x28672x8192 64x128x128 w4 s4 G8, 13.7;
    # run18 fp8 2048x4096x28672 128x32x128 w4 s4 G1, 13.3; run19 bf16 6144x4096x8192 128x32x64 w4 s2
    # G1, 12.8, and 2048x28672x4096 64x256x32 w8 s4 G8, 11.7), each beside its G1 / G8 twin; controls:
    # run13 bf16 64x14336x8192 32x32x64 w2 s4 G1, an L2-bound row of little co-reading (B read by two
    # tile rows) that a raised L2 bandwidth prices too fast
    CONFIGS = [(kind, *c, g) for kind, *c in [
        ("gemm_fp8", 3072, 8192, 4096, 128, 64, 128, 4, 3), ("gemm", 3072, 3072, 3072, 128, 32, 64, 4, 4),
        ("gemm", 1024, 28672, 8192, 64, 128, 128, 4, 4), ("gemm_fp8", 2048, 4096, 28672, 128, 32, 128, 4, 4),
        ("gemm", 6144, 4096, 8192, 128, 32, 64, 4, 2), ("gemm", 2048, 28672, 4096, 64, 256, 32, 8, 4)]
        for g in (1, 8)]
    CONFIGS += [("gemm", 64, 14336, 8192, 32, 32, 64, 2, 4, 1)]
# L2_SET=s16 (bigtile16): what binds three kinds of row the model misprices, with the warp state
# statistics (ncu's WarpStateStats section: stall reasons per issued instruction) and the issue counts
# in the first pass, and the L2 requests the SMs' TEX units send (one a 128-byte line, the short-row
# copy's mechanism, docs/analysis.md "Rows under 64 bytes") as an extra pass:
#   run21 bf16 1536x28672x4096's first-ranked 64x128x64 w2 s3 G1 (priced -30.4%) and its best
#   128x128x32 w4 s3 G1 (priced +22.5%): mma.sync issue, shared memory or L2/DRAM;
#   gemm_bk_s15's 128x128x16 w4 s6 (2 CTAs an SM, A in 32-byte rows: 16 lines a copy) beside its
#   BK = 32 twin, and the one-CTA 128x256x16 w8 s6 beside 128x256x32 w8 s4 (the short trip's
#   ~30 ns: the copies' issue, the barriers or the warpgroup mma's wait);
#   run21 persistent 6144x6144x8192 64x64x128 w4 s3 on 132 SMs (525 ns a trip measured, 678
#   priced: the loaded DRAM round trip) beside the one-tile-a-CTA kernel of the same tile.
#   PYTHONUNBUFFERED=1 L2_SET=s16 L2G_DEADLINE_S=300 python3 bench/h200/measure_l2_groupm.py OUTDIR
# L2_SET=s17t (tile17): small warp-mma tiles priced 21-28% fast where twice the CTAs share an SM, with the
# same warp state statistics and extra pass as s16: run25 bf16 64x28672x4096's first-ranked 32x64x32 w2 s5 G8
# (priced 71.2 us, measured 91.7; 896 CTAs, 7 an SM) beside the same tile at M = 32 (448 CTAs, 3.4 an SM,
# runs 1-2 priced within 1.2%: 72.9 us against 72.0 / 72.8), the shape's best 64x256x32 w8 s4 G8, and
# 128x14336x4096 64x32x32 w2 s5 G8 (run3 -21.5%, 896 CTAs) beside 64x14336x4096's (run10 -20.7%, 448):
# whether the extra CTAs' B co-reads come from DRAM (dram_read_bytes against B once, 235 / 117 MB) or
# the warps wait on something an SM of 14 warps has and one of 7 has not (stalls per issued instruction)
#   PYTHONUNBUFFERED=1 L2_SET=s17t L2G_DEADLINE_S=240 python3 bench/h200/measure_l2_groupm.py OUTDIR
# L2_SET=s17b (bigtile17): GROUP_M = 1 launches of several waves whose B re-reads the drift across waves
# (docs/analysis.md, "GROUP_M = 1 across waves") sends to DRAM, each beside its G8 twin, with s16's warp state
# and extra pass: run16 fp8 1024x14336x8192 64x64x128 w8 s3 (4 CTAs an SM, 6.79 waves; priced +0.4% -> +7.0%
# by it: 54.6% of B's shared re-reads from DRAM), run20 bf16 4096x8192x14336 64x128x32 w8 s3 (7.76 waves;
# -24.6% -> -9.3%), and run25 fp8 7168x6144x4096 128x32x128 w4 s2 (16.3 waves, priced +34% at the L2's
# 11 TB/s; the tall tiles whose DRAM bytes the term over-counts, l2_groupm_s14's 0.97 -> 1.27):
# dram_read_bytes against the model's before / after and the slices' requests against the copied bytes
#   PYTHONUNBUFFERED=1 L2_SET=s17b L2G_DEADLINE_S=240 python3 bench/h200/measure_l2_groupm.py OUTDIR
# L2_SET=s18 (bigtile18): GROUP_M = 1 launches whose co-readers of a B tile the model shares in L2 and the
# GPU evidently does not, each beside its G8 twin, with s16's warp state and extra pass: run26 fp8
# 1024x28672x8192 64x256x64 w8 s4 (2 CTAs on every SM, 6.79 waves; priced 667 us, measured 1,246: every B
# re-read from DRAM would price 1,243) and 64x128x64 w4 s5 (3 an SM, 9.05 waves; 745 against 1,370), and
# run23 bf16 2560x8192x8192 64x256x64 w4 s5 (one CTA an SM, P = 0: priced 639.5, measured 889.6): DRAM bytes
# against the lock step's (B once a wave) and B once per tile row
#   PYTHONUNBUFFERED=1 L2_SET=s18 L2G_DEADLINE_S=240 python3 bench/h200/measure_l2_groupm.py OUTDIR
# L2_SET=s18t (tile18): one small warp-mma tile, 64x32x32 on 2 warps at 5 stages, where its SM-local demand a
# CTA-trip is the same (12 LDGSTS, 16 LDSM, 6 KB copied, 8 KB read by ldmatrix) but its time is not: 6144^3 G8
# (run5, 9 CTAs an SM, 15.5 waves, mostly L2 hits: ~86 ns a CTA-trip, priced +0.5% by the copies' load path
# alone, where the copies' and the ldmatrix reads' sum would be +42%), 2048x14336x4096 G8 (L2-resident, 3.5
# waves) and 128x14336x4096 G1 (run11 -27.5%, one wave of 7 an SM, ~121 ns a CTA-trip, a third of its bytes
# from DRAM); with run9's 64x28672x4096 32x64x32 w8 s5 G8 (-21.5%) and run27's 64x14336x14336 32x256x64 w4
# s5 G1 (-24.3%, one CTA an SM): whether mio_throttle / short_scoreboard are as high where the time matches
# the copies alone (the pipe's backpressure from copies in flight, not its capacity), and the shared-memory
# wavefronts and LDGSTS requests the L1TEX pipe serves (extra passes, one metric each)
#   PYTHONUNBUFFERED=1 L2_SET=s18t L2G_DEADLINE_S=280 python3 bench/h200/measure_l2_groupm.py OUTDIR
# L2_SET=s19 (bigtile19): where the SMs' copies of a shared tile merge before the L2 slices, and what sets how
# many. l2_groupm_s14 / s16 / s17b / s18 count fewer sectors at the slices (lts__t_sectors_srcunit_tex) than
# the SMs copy: bf16 2560x8192x8192 64x256x64 w4 s5 G8 0.513 of its copies, G1 0.926; the rule "half of what the
# TPC pair (launch positions 2k, 2k + 1) copies of one tile at a step" gives 0.600 / 0.900, and fp8 G8 rows
# merge less than it (1024x28672x8192 64x256x64 0.790 against 0.600). One shape and tile bytes a step (40 KB),
# one CTA an SM, 9.70 waves: (a) GROUP_M 2 and 4 beside s18's 1 and 8 (the pair shares B from GROUP_M 2 on;
# 2, 4, 8 tile rows share B among 1, 2, 4 pairs: a pair-only merge gives the same share at 2, 4, 8, a merge
# among TPCs of a GPC grows with it); (b) the transposed tile 256x64x64 at G1 and G8 (the pair shares A, 32 KB,
# at G1 and B, 8 KB, at G8: the wide tile's G8 / G1 mirrored); (c) fp8 64x256x128 w4 s5 G8 (the same 8 KB of
# A and 32 KB of B a step, B K-major in 128-byte rows where bf16's are 512 bytes); (d) the bf16 64x256x64 G8
# control again in the same call. The slices' sectors, the SMs' received sectors and the far partition's
# fills ride the main ncu pass (one process a configuration; no warp-state section), so the set fits 120 s:
#   PYTHONUNBUFFERED=1 L2_SET=s19 L2G_DEADLINE_S=105 python3 bench/h200/measure_l2_groupm.py OUTDIR
# Session 23's set (L2_SET=s23, l2roof23 and bigbf16_23's request): do two CTAs of one SM, or a TPC pair,
# merge their copies of a shared tile before the L2 slices? (a) l2_dirty_s23's bm_sweep rows at 256x8192x8192
# (BM 128 / 64 / 32, GROUP_M 8: the 64x128x64 row moves 14.8 TB/s of tile requests, past every stored rate);
# (b) its 64x128x64 row at GROUP_M 1 and 2 (which tile the CTAs of one SM, 132 launch positions apart, share);
# (c) run34's 2560x14336x14336 best and second rows (64x256x64 w8 s3 and 64x128x64 w4 s3, GROUP_M 8) and run38's
# first pick there (64x256x32 w4 s3 G1, -24%). The slices' sectors, the SMs' received sectors and the far
# partition's fills ride the main pass (s19's metrics):
#   PYTHONUNBUFFERED=1 L2_SET=s23 L2G_DEADLINE_S=200 python3 bench/h200/measure_l2_groupm.py OUTDIR
# Session 25's set (L2_SET=s25): small-M fp8 launches whose rounds stop near 6.2 TB/s of tile requests, against
# the 11 TB/s the L2-bound large GEMMs reach (docs/analysis.md, "fp8's K-major stream on many SMs": warp8_s25,
# run40's tall tile): (a) run5's 32x14336x4096 16x64x128 w8 s5 G8 (B read by 2 CTAs, -18.9%) and its one-reader
# twin at M = 16; (b) run40's 128x28672x14336 128x32x64 w4 s4 G8 (-22.2%) and that shape's best, 64x64x64 w4 s2
# (+22.6%); (c) run41's 64x14336x8192 first pick 32x32x128 w2 s4 G1 (-9.2%) and best 64x128x64 w4 s5 G1
# (+16.6%); (d) s23's 256x8192x8192 64x128x64 w4 s4 G8 control (14.8 TB/s of requests). s19's metrics: the
# slices' sectors from the SMs, the far partition's fills, the SMs' received sectors:
#   PYTHONUNBUFFERED=1 L2_SET=s25 L2G_DEADLINE_S=150 python3 bench/h200/measure_l2_groupm.py OUTDIR
# Session 26's set (L2_SET=s26): why fp8 warp-mma tiles on 8 warps at 4 CTAs an SM run slower than on 2 (warp8_s25:
# 16x32x128 s5 with B read by 2 CTAs on 528 CTAs, 326 / 422 / 785 ns a trip on 2 / 4 / 8 warps, the model 375 / 366 /
# 668; 16x64x128 s5 554 / 580 / 871, the model 549 / 555 / 731) and what stops run40's tall 128x32x64 w4 s4 tile near
# 6.2 TB/s of tile requests: the same tiles as campaign launches (4 CTAs an SM: M = 32 with GROUP_M 8, N = 264 x BN),
# each with the warp-state section (the stall reasons a warp waits on, per issued instruction), the issue counts, the
# slices' sectors (s19's) and the L1TEX pipe's shared-memory wavefronts and LDGSTS requests (s18t's extra passes):
#   PYTHONUNBUFFERED=1 L2_SET=s26 L2G_DEADLINE_S=200 python3 bench/h200/measure_l2_groupm.py OUTDIR
# L2_SET=s26b: the same counts on the bf16 2-warp small-M tiles whose compiled loop costs 1.3-1.45x the stream loop's
# (copy_issue_wide_s24: 16x128x128 and 32x128x32 w2 s4) beside twins that cost nothing (16x256x64, 16x64x128 w2) and
# the 4-warp 16x128x128, as launches of 32 CTAs (one an SM, GROUP_M 1): run37's 16x4096x14336 first pick (-19.5%)
# and best (16x64x128 w2 s3):
#   PYTHONUNBUFFERED=1 L2_SET=s26b L2G_DEADLINE_S=200 python3 bench/h200/measure_l2_groupm.py OUTDIR
# L2_SET=s26c: run38's fp8 32x28672x8192, whose first pick under both session-26 candidates (16x64x128 w2 s3 G1, B
# read by 2 CTAs 448 launch positions apart, all 896 resident at 7 an SM) is priced -18.0% where coread8_s25 prices
# 2 readers slow: that row beside its GROUP_M 8 twin, the shape's best (16x256x128 w4 s3 G8) and main's first pick
# (16x64x128 w4 s5 G8, -13.8%), with the DRAM bytes and L2 hit rate that say whether the second reader hits:
#   PYTHONUNBUFFERED=1 L2_SET=s26c L2G_DEADLINE_S=200 python3 bench/h200/measure_l2_groupm.py OUTDIR
# L2_SET=s27g (g1big27): the large-M bf16 GROUP_M 1 first picks priced 7-24% fast (run37 2048x28672x14336 64x256x32
# w8 s4, run34 2560x14336x14336 128x64x64 w8 s3, run19 2048x28672x4096 128x128x64 w4 s3) beside their twins and the
# shapes' best rows: do they read B again from DRAM for each tile row (the walk), and how much crosses the fabric:
#   PYTHONUNBUFFERED=1 L2_SET=s27g L2G_DEADLINE_S=300 python3 bench/h200/measure_l2_groupm.py OUTDIR
# What a set measures beside its configurations, by name (a set not named in a trait has the main pass alone):
# the slices' three sector counts on the main pass (s19 on), and the warp-state section with the issue counts (s16 on).
SLICE_SETS = ("s19", "s23", "s25", "s26", "s26b", "s26c", "s27g", "s50")
WARP_STATE_SETS = ("s16", "s17t", "s17b", "s18", "s18t", "s26", "s26b", "s26c")
# s19's three on the main pass of every set from s19 on: the slices' sectors from the SMs, the far partition's
# fills, the SMs' received sectors
SLICE_METRICS = ["lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_ltcfabric.sum",
                 "l1tex__m_xbar2l1tex_read_sectors.sum"]
if L2_SET == "s27g":
    CONFIGS = [("gemm", 2048, 28672, 14336, 64, 256, 32, 8, 4, 1), ("gemm", 2048, 28672, 14336, 64, 256, 32, 8, 4, 8),
               ("gemm", 2048, 28672, 14336, 128, 128, 128, 4, 1, 1), ("gemm", 2560, 14336, 14336, 128, 64, 64, 8, 3, 1),
               ("gemm", 2560, 14336, 14336, 128, 64, 64, 8, 3, 8), ("gemm", 2048, 28672, 4096, 128, 128, 64, 4, 3, 1),
               ("gemm", 2048, 28672, 4096, 64, 256, 32, 8, 4, 8), ("gemm", 2048, 28672, 4096, 64, 256, 32, 8, 4, 1)]
elif L2_SET == "s50":
    # session 50: what sets the share of a wide tile's copies merged before the slices. The pair rule (half of the B
    # tile the TPC pair copies at a step, 0.40 of 64x256's copies from GROUP_M 2 on) is met or passed by the BK = 64
    # launches (l2_groupm_s18/s19 2560x8192x8192 64x256x64 w4 s5 G4 / G8: 0.49 / 0.45-0.49; s23's 2560x14336x14336
    # w8 s3 G8 0.41) and missed by the BK = 32 ones (s27g's 2048x28672x{4096,14336} 64x256x32 w8 s4 G8: 0.21 / 0.14):
    # the step, the warps or the trips a life (128, 224, 128 / 448)? One shape's 64x256 tile at GROUP_M 8 over BK 32 /
    # 64 / 128 (5 / 4 / 2 stages: the same 160 KB or less of shared memory) on 4 and 8 warps; BK 64 on 4 warps over K
    # 4096 / 16384 (64 / 256 trips a life); G1 twins of BK 32 and 64 on 4 warps; G2 and G4 of BK 32 on 8 warps; and
    # the 8192^3-calibrated tile, 128x128x64 w4 s4, at G8 and G1 (the pair shares B / A: 0.25 by the rule either way)
    CONFIGS = [("gemm", 2560, 8192, 8192, 64, 256, bk, w, s, 8) for bk, s in ((32, 5), (64, 4), (128, 2)) for w in (4, 8)]
    CONFIGS += [("gemm", 2560, 8192, k, 64, 256, 64, 4, 4, 8) for k in (4096, 16384)]
    CONFIGS += [("gemm", 2560, 8192, 8192, 64, 256, bk, 4, s, 1) for bk, s in ((32, 5), (64, 4))]
    CONFIGS += [("gemm", 2560, 8192, 8192, 64, 256, 32, 8, 5, g) for g in (2, 4)]
    CONFIGS += [("gemm", 2560, 8192, 8192, 128, 128, 64, 4, 4, g) for g in (8, 1)]
elif L2_SET == "s37":
    # session 37: M = 2 x BM bf16 launches of one wave whose B tiles two CTAs read (run34/50/68's first picks, priced
    # 15-24% fast: is B read from DRAM once or twice?), each beside its GROUP_M = 8 twin, and BM = 32 (one reader)
    CONFIGS = [("gemm", 32, 8192, k, 16, 128, 128, w, s, g) for k, w, s in ((4096, 2, 5), (4608, 4, 4), (6144, 4, 4))
               for g in (1, 8)]
    CONFIGS += [("gemm", 32, 8192, 4096, 32, 128, 128, 4, 4, 1), ("gemm", 32, 8192, 4096, 32, 128, 128, 4, 4, 8)]
elif L2_SET == "s26c":
    CONFIGS = [("gemm_fp8", 32, 28672, 8192, 16, 64, 128, 2, 3, 1), ("gemm_fp8", 32, 28672, 8192, 16, 64, 128, 2, 3, 8),
               ("gemm_fp8", 32, 28672, 8192, 16, 256, 128, 4, 3, 8), ("gemm_fp8", 32, 28672, 8192, 16, 64, 128, 4, 5, 8),
               ("gemm_fp8", 16, 28672, 8192, 16, 64, 128, 2, 3, 1)]
elif L2_SET == "s26b":
    CONFIGS = [("gemm", 16, 4096, 14336, 16, 128, 128, 2, 4, 1), ("gemm", 16, 4096, 14336, 16, 64, 128, 2, 3, 1),
               ("gemm", 16, 8192, 14336, 16, 256, 64, 2, 4, 1), ("gemm", 16, 4096, 14336, 16, 128, 128, 4, 4, 1),
               ("gemm", 32, 1024, 14336, 32, 32, 128, 2, 4, 1), ("gemm", 32, 4096, 14336, 32, 128, 32, 2, 4, 1),
               ("gemm", 32, 2048, 14336, 32, 64, 128, 2, 4, 1)]
elif L2_SET == "s26":
    CONFIGS = [("gemm_fp8", 32, 8448, 32768, 16, 32, 128, w, 5, 8) for w in (2, 4, 8)]
    CONFIGS += [("gemm_fp8", 32, 16896, 16384, 16, 64, 128, w, 5, 8) for w in (2, 8)]
    CONFIGS += [("gemm_fp8", 128, 28672, 14336, 128, 32, 64, 4, 4, 8), ("gemm_fp8", 128, 28672, 14336, 64, 64, 64, 4, 2, 8)]
elif L2_SET == "s25":
    CONFIGS = [("gemm_fp8", 32, 14336, 4096, 16, 64, 128, 8, 5, 8), ("gemm_fp8", 16, 14336, 4096, 16, 64, 128, 8, 5, 8),
               ("gemm_fp8", 128, 28672, 14336, 128, 32, 64, 4, 4, 8), ("gemm_fp8", 128, 28672, 14336, 64, 64, 64, 4, 2, 8),
               ("gemm_fp8", 64, 14336, 8192, 32, 32, 128, 2, 4, 1), ("gemm_fp8", 64, 14336, 8192, 64, 128, 64, 4, 5, 1),
               ("gemm", 256, 8192, 8192, 64, 128, 64, 4, 4, 8)]
elif L2_SET == "s23":
    CONFIGS = [("gemm", 256, 8192, 8192, 128, 128, 64, 4, 4, 8), ("gemm", 256, 8192, 8192, 64, 128, 64, 4, 4, 8),
               ("gemm", 256, 8192, 8192, 32, 128, 64, 4, 4, 8), ("gemm", 256, 8192, 8192, 64, 128, 64, 4, 4, 1),
               ("gemm", 256, 8192, 8192, 64, 128, 64, 4, 4, 2), ("gemm", 2560, 14336, 14336, 64, 256, 64, 8, 3, 8),
               ("gemm", 2560, 14336, 14336, 64, 128, 64, 4, 3, 8), ("gemm", 2560, 14336, 14336, 64, 256, 32, 4, 3, 1)]
elif L2_SET == "s19":
    CONFIGS = [("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5, 2), ("gemm", 2560, 8192, 8192, 256, 64, 64, 4, 5, 1),
               ("gemm", 2560, 8192, 8192, 256, 64, 64, 4, 5, 8), ("gemm_fp8", 2560, 8192, 8192, 64, 256, 128, 4, 5, 8),
               ("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5, 4), ("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5, 8)]
elif L2_SET == "s18":
    CONFIGS = [(kind, *c, g) for kind, *c in [
        ("gemm_fp8", 1024, 28672, 8192, 64, 256, 64, 8, 4), ("gemm_fp8", 1024, 28672, 8192, 64, 128, 64, 4, 5),
        ("gemm", 2560, 8192, 8192, 64, 256, 64, 4, 5)] for g in (1, 8)]
elif L2_SET == "s18t":
    CONFIGS = [("gemm", 6144, 6144, 6144, 64, 32, 32, 2, 5, 8), ("gemm", 128, 14336, 4096, 64, 32, 32, 2, 5, 1),
               ("gemm", 2048, 14336, 4096, 64, 32, 32, 2, 5, 8), ("gemm", 64, 28672, 4096, 32, 64, 32, 8, 5, 8),
               ("gemm", 64, 14336, 14336, 32, 256, 64, 4, 5, 1)]
elif L2_SET == "s17b":
    CONFIGS = [(kind, *c, g) for kind, *c in [
        ("gemm_fp8", 1024, 14336, 8192, 64, 64, 128, 8, 3), ("gemm", 4096, 8192, 14336, 64, 128, 32, 8, 3),
        ("gemm_fp8", 7168, 6144, 4096, 128, 32, 128, 4, 2)] for g in (1, 8)]
elif L2_SET == "s17t":
    CONFIGS = [("gemm", 64, 28672, 4096, 32, 64, 32, 2, 5, 8), ("gemm", 32, 28672, 4096, 32, 64, 32, 2, 4, 8),
               ("gemm", 128, 14336, 4096, 64, 32, 32, 2, 5, 8), ("gemm", 64, 14336, 4096, 64, 32, 32, 2, 5, 8),
               ("gemm", 64, 28672, 4096, 64, 256, 32, 8, 4, 8)]
elif L2_SET == "s16":
    CONFIGS = [("gemm", 1536, 28672, 4096, 64, 128, 64, 2, 3, 1), ("gemm", 1536, 28672, 4096, 128, 128, 32, 4, 3, 1),
               ("gemm", 4096, 4096, 4096, 128, 128, 16, 4, 6, 8), ("gemm", 4096, 4096, 4096, 128, 128, 32, 4, 4, 8),
               ("gemm", 4096, 4096, 4096, 128, 256, 16, 8, 6, 8), ("gemm", 4096, 4096, 4096, 128, 256, 32, 8, 4, 8),
               ("persistent", 6144, 6144, 8192, 64, 64, 128, 4, 3, 132),
               ("gemm", 6144, 6144, 8192, 64, 64, 128, 4, 3, 8)]
if L2_SET in SLICE_SETS:
    METRICS = METRICS + SLICE_METRICS
ISSUE16 = ["smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
           "smsp__warps_active.avg.per_cycle_active", "sm__cycles_elapsed.avg",
           "smsp__inst_executed_op_shared_ld.sum"] if L2_SET in WARP_STATE_SETS else []
STALL = "smsp__average_warps_issue_stalled_"
STALLS16 = ["long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier", "math_pipe_throttle",
            "wait", "not_selected", "selected", "dispatch_stall", "no_instruction", "membar", "branch_resolving",
            "drain", "sleeping", "tex_throttle", "misc"] if L2_SET in WARP_STATE_SETS else []
# s26: two extra passes of several metrics each (a pass ncu refuses loses only its own metrics)
PIPES26 = ["sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
           "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
           "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
           "l1tex__throughput.avg.pct_of_peak_sustained_active", "lts__throughput.avg.pct_of_peak_sustained_elapsed"]
L1TEX18 = ["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "l1tex__data_pipe_lsu_wavefronts.sum",
           "smsp__inst_executed_op_ldgsts.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum"]
# the extra passes (one a list entry; a comma list is one pass of several metrics): s14 the SMs' received sectors and the
# slices' (coalescing against the far partition's fills), s18t the L1TEX pipe's wavefronts and LDGSTS requests, the
# s26 sets those in one pass and the pipe loads in another, s16-s18 the slices' requests beside their sectors
EXTRA_METRICS = ([",".join(L1TEX18), ",".join(PIPES26)] if L2_SET in ("s26", "s26b", "s26c") else
                 ["l1tex__m_xbar2l1tex_read_sectors.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
                  "lts__t_sectors_srcunit_ltcfabric.sum"] if L2_SET == "s14" else
                 L1TEX18 if L2_SET == "s18t" else
                 ["lts__t_requests_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum"]
                 if L2_SET in WARP_STATE_SETS else [])
S19_COLUMNS = ["lts__t_sectors_srcunit_tex_op_read", "lts__t_sectors_srcunit_ltcfabric",
               "l1tex__m_xbar2l1tex_read_sectors"] if L2_SET in SLICE_SETS else []
COLUMNS = ["kernel", "M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M", "NUM_SMS", "measured_ms",
           "ncu_ms", "dram_read_bytes", "l2_read_sectors", "l2_read_hit_pct", "min_bytes", "dram_over_min",
           "status"] + [m.split(".")[0] for e in EXTRA_METRICS for m in e.split(",")] + [m.split(".")[0] for m in ISSUE16] + \
          ["stall_" + s for s in STALLS16] + S19_COLUMNS


def job_of(cfg):
    kind, M, N, K, BM, BN, BK, W, S, X = cfg
    p = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S)
    if kind == "persistent":
        p["NUM_SMS"] = X
        return ("persistent_gemm.csv", "persistent_gemm", "kernels/persistent_gemm.tile", "x", 0, f"{M}x{N}x{K}", p)
    p["GROUP_M"] = X
    if kind == "gemm_fp8":   # e4m3 with B K-major ([N, K]), as the issue15 campaigns measure it
        p["layout"] = "nk"
        return ("gemm.csv", "gemm_fp8", "kernels/gemm_fp8.tile", "x", 0, f"{M}x{N}x{K}", p)
    p["layout"] = "kn"
    return ("gemm.csv", "gemm_bf16", "kernels/gemm.tile", "x", 0, f"{M}x{N}x{K}", p)


def run_one(cfg):
    """Child: launch the configuration twice (ncu profiles the second)."""
    from common import launch_twice
    launch_twice(job_of(cfg))


def find_ncu():
    for c in [shutil.which("ncu")] + sorted(glob.glob("/usr/local/cuda*/bin/ncu")) + \
            sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu")):
        if c and os.path.exists(c):
            return c
    return None


def parse_ncu(text, metrics=None):
    """The metrics of the last data row of ncu's --csv --page raw output (first row names, second units)."""
    last = ncu_last_row(text)
    if last is None:
        return None
    head, units, data = last
    out = {}
    for m in (METRICS if metrics is None else metrics):
        if m in head:
            i = head.index(m)
            v = float(data[i].replace(",", ""))
            u = units[i]
            if m == "gpu__time_duration.sum":
                v *= {"ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "nsecond": 1e-6}.get(u, 1e-6)
            elif m == "dram__bytes_read.sum":
                v *= {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(u, 1)
            out[m] = v
    return out


def stall_columns(text):
    """{stall_<reason>: value} of WarpStateStats' smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio
    in ncu's --csv --page raw output (the reasons STALLS16 names; others are left in ncu_raw.txt)."""
    last = ncu_last_row(text)
    if last is None:
        return {}
    head, _, data = last
    out = {}
    for s in STALLS16:
        k = f"{STALL}{s}_per_issue_active.ratio"
        if k in head:
            try:
                out["stall_" + s] = f"{float(data[head.index(k)].replace(',', '')):.3f}"
            except ValueError:
                pass
    return out


def main():
    if "--one" in sys.argv:
        i = sys.argv.index("--one")
        a = sys.argv[i + 1:]
        run_one((a[0], *map(int, a[1:])))
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    import torch
    ncu = find_ncu()
    print(f"ncu: {ncu}; torch {torch.__version__}; {torch.cuda.get_device_name()}", flush=True)
    raw = open(os.path.join(out, "ncu_raw.txt"), "w")
    with open(os.path.join(out, "l2_groupm.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for cfg in CONFIGS:
            kind, M, N, K, BM, BN, BK, W, S, X = cfg
            row = dict(kernel=kind, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S,
                       GROUP_M=X if kind != "persistent" else 0, NUM_SMS=X if kind == "persistent" else 0,
                       min_bytes=(1 if kind == "gemm_fp8" else 2) * (M * K + K * N), status="ok")
            try:
                job = job_of(cfg)
                row["measured_ms"] = f"{bench_job(job):.5f}"
                if ncu:
                    cmd = [ncu, "--csv", "--page", "raw", "--metrics", ",".join(METRICS + ISSUE16)] + \
                        (["--section", "WarpStateStats"] if L2_SET in WARP_STATE_SETS else []) + ["-k",
                           "regex:(matmul|persistent)_kernel", "--launch-skip", "1", "--launch-count", "1",
                           sys.executable, os.path.abspath(__file__), "--one", kind] + [str(v) for v in cfg[1:]]
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=HERE)
                    raw.write(f"### {cfg}\n{r.stdout}\n{r.stderr[-2000:]}\n")
                    m = parse_ncu(r.stdout, METRICS + ISSUE16)
                    if m:
                        for k in ISSUE16:
                            if k in m:
                                row[k.split(".")[0]] = f"{m[k]:.6g}"
                        row.update(stall_columns(r.stdout))
                        row["ncu_ms"] = f"{m.get('gpu__time_duration.sum', float('nan')):.5f}"
                        row["dram_read_bytes"] = int(m.get("dram__bytes_read.sum", 0))
                        row["l2_read_sectors"] = int(m.get("lts__t_sectors_op_read.sum", 0))
                        row["l2_read_hit_pct"] = f"{m.get('lts__t_sector_op_read_hit_rate.pct', float('nan')):.2f}"
                        row["dram_over_min"] = f"{row['dram_read_bytes'] / row['min_bytes']:.3f}"
                        for c in S19_COLUMNS:
                            if c + ".sum" in m:
                                row[c] = int(m[c + ".sum"])
                    else:
                        row["status"] = "ncu_failed"
                    for extra in EXTRA_METRICS:
                        cmd_x = [ncu, "--csv", "--page", "raw", "--metrics", extra] + cmd[cmd.index("-k"):]
                        r = subprocess.run(cmd_x, capture_output=True, text=True, timeout=120, cwd=HERE)
                        raw.write(f"### {cfg} {extra}\n{r.stdout}\n{r.stderr[-2000:]}\n")
                        mx = parse_ncu(r.stdout, extra.split(","))
                        for one in extra.split(","):
                            if mx and one in mx:
                                row[one.split(".")[0]] = (f"{mx[one]:.6g}" if one.endswith("pct_of_peak_sustained_active")
                                                          or one.endswith("pct_of_peak_sustained_elapsed") else int(mx[one]))
                else:
                    row["status"] = "no_ncu"
            except Exception as e:  # keep going: one failure must not lose the rest
                row["status"] = f"error: {type(e).__name__}: {str(e)[:120]}"
            w.writerow([row.get(c, "") for c in COLUMNS])
            f.flush()
            print(f"[{time.time() - t0:6.1f}s] {cfg}: {row}", flush=True)
            if time.time() - t0 > float(os.environ.get("L2G_DEADLINE_S", "400")):
                print("deadline: stopping", flush=True)
                break
    raw.close()


if __name__ == "__main__":
    main()
