"""An mma's operands read from shared memory by each warp (warpgroup) that uses them
(tfx.analysis.mma_layout.operand_reads, counted by tfx.analysis.counting's
Counter.shared_operand_reads; docs/analysis.md sections 3 and 8, "operand reads").

H200 facts used: tensor instruction m64 n8 k16 (wgmma), a warp mma table (sm_90), shared
memory 128 B/cycle per SM at 1.98 GHz (253.44 B/ns), 132 SMs."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from tfx.analysis.analyze import analyze
from tfx.analysis.mma_layout import operand_reads, plan, warp_mma, warp_mma_facts
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
WGMMA = (64, 8, 16)
GEMM = ROOT / "kernels" / "gemm.tile"


def test_warps_side_by_side_reread_the_strips_they_share():
    # 32x32x128 on 8 warps: warpsPerTileV2, repetitions (32/16, 32/8) = (2, 4): N (1 x 2, reps
    # (2, 2)), M on the tie (2 x 2, (1, 2)), N (2 x 4, (1, 1)). Each warp holds 16 rows x 8
    # columns: A's 32 x 128 is read by the 4 warps along N, B's 128 x 32 by the 2 along M:
    # A 4 x 32 x 128 x 2 B = 32,768, B 2 x 32 x 128 x 2 B = 16,384: 49,152 B, 3x the 16,384 once
    r = operand_reads((32, 32, 128), WGMMA, 8)
    assert (r.path, r.warps_m, r.warps_n, r.a_readers, r.b_readers) == ("warp", 2, 4, 4, 2)
    assert (r.a_bytes, r.b_bytes) == (32_768, 16_384)


def test_duplicated_warps_reload_their_rows():
    # 16x32x128 on 8 warps: repetitions (1, 4): N (1 x 2), N (1 x 4), then the tie 1 >= 1 puts
    # the last doubling on M with repM left at 1 ("too many warps for this mma"): 2 x 4 over a
    # 16-row tile, so warps 4..7 wrap onto warps 0..3's rows (Triton's loadArg: warpM = warpId_M
    # mod (16 / 16) = 0) and load them again: rows as read 2 x 16 = 32. A: 4 x 32 x 128 x 2 =
    # 32,768 B = every one of the 8 warps reading all 16 x 128 x 2 = 4,096 B of A; B: each of the
    # 32 columns by 2 warps, 2 x 32 x 128 x 2 = 16,384 B
    r = operand_reads((16, 32, 128), WGMMA, 8)
    assert (r.warps_m, r.warps_n, r.rows) == (2, 4, 32)
    assert r.a_bytes == 8 * 16 * 128 * 2 == 32_768
    assert r.b_bytes == 16_384


def test_duplicated_warps_issue_their_mma_too():
    # every warp runs its own mma.sync (the lowering has no predicate for a duplicate): the warp
    # mma counts (16 rows / 16) x (8 columns / 8) x (128 / 16) = 8 mma.sync for each of the 8 warps,
    # 8 x 6 cycles = 48 cycles a warp, and the flops are padded to 2 x 32 x 32 x 128 = 262,144
    p = plan((16, 32, 128), WGMMA, 8)
    w = warp_mma(p, (16, 32, 128), 16, warp_mma_facts(H200), 1.98)
    assert (w.warp_m, w.warp_n, w.mmas, w.tensor_cycles) == (16, 8, 8, 48)
    assert p.flops == 262_144


def test_warpgroup_instructions_each_read_their_operands():
    # 128x256x64 on 8 warps: warpsPerTileV3 4 x 1, 128 > 16 x 4 so M doubles: 8 x 1, two
    # warpgroups of 64 rows, each m64n256k16 instruction reading A's 64-row slab and all of B:
    # A 1 x 128 x 64 x 2 = 16,384 B, B 2 x 256 x 64 x 2 = 65,536 B: 81,920 B (49,152 once)
    r = operand_reads((128, 256, 64), WGMMA, 8)
    assert (r.path, r.a_readers, r.b_readers, r.a_bytes + r.b_bytes) == ("warpgroup", 1, 2, 81_920)
    # 64x256x32 on 8 warps: 64 is not > 16 x 4, the second warpgroup goes on N (4 x 2): A's 64
    # rows read by both, each B column by one: (2 x 64 + 1 x 256) x 32 x 2 = 24,576 B
    r = operand_reads((64, 256, 32), WGMMA, 8)
    assert (r.warps_m, r.warps_n, r.a_bytes + r.b_bytes) == (4, 2, 24_576)
    # 128x128x64 on 4 warps: one warpgroup issues two m64 instructions a k-step, each reading
    # B: (128 + 2 x 128) x 64 x 2 = 49,152 B
    r = operand_reads((128, 128, 64), WGMMA, 4)
    assert (r.b_readers, r.a_bytes + r.b_bytes) == (2, 49_152)


def test_the_sass_census_of_every_warp_mma_compile():
    """calibration/h200/measured/fragment_chain/chain.csv: the k-loop SASS of all 344 bf16
    warp-mma compiles (Triton 3.6.0, sm_90), every ldmatrix an LDSM.16.M88.4 or .MT88.4
    (32 lanes x 16 B = 512 B). A CTA's warps load warps x ldsm_insts x 512 B a trip: that is
    the counted reads for every configuration."""
    rows = list(csv.DictReader(open(ROOT / "calibration/h200/measured/fragment_chain/chain.csv")))
    assert len(rows) == 344
    for row in rows:
        bm, bn, bk, w = (int(row[k]) for k in ("BM", "BN", "BK", "WARPS"))
        r = operand_reads((bm, bn, bk), WGMMA, w)
        assert r.a_bytes + r.b_bytes == w * int(row["ldsm_insts"]) * 512, row


def test_arrays_match_scalars():
    shapes = [((32, 32, 128), 8), ((16, 32, 128), 8), ((128, 256, 64), 8), ((64, 256, 32), 8),
              ((128, 32, 32), 2)]
    arr = operand_reads(tuple(np.array([s[i] for s, _ in shapes]) for i in range(3)), WGMMA,
                        np.array([w for _, w in shapes]))
    for i, (s, w) in enumerate(shapes):
        one = operand_reads(s, WGMMA, w)
        assert (arr.a_bytes[i], arr.b_bytes[i]) == (one.a_bytes, one.b_bytes)


PARAMS = dict(M=128, N=14336, K=4096, BM=32, BN=32, BK=128, WARPS=8, STAGES=2, GROUP_M=8)


def test_every_surface_reads_the_one_count():
    """issue15 run11 gemm_bf16 128x14336x4096, 32x32x128 on 8 warps, 2 stages (measured 150.8 us).
    4 x 448 = 1,792 CTAs x 32 trips = 57,344 mma executions x 49,152 B = 2,818,572,288 B read
    (A and B once: 939,524,096). The copies write 16,384 B a trip: 939,524,096 B. The smem
    roofline: (2,818,572,288 + 939,524,096) B / (128 B x 132 SMs x 1.98 GHz = 33,454.08 B/ns)
    = 112,335.6 -> 112,336 ns (it was 56,168: A and B once), now the bound."""
    a = analyze(parse_file(GEMM), None, H200, PARAMS)
    assert a.metrics["memory.traffic.smem.total.read"] == 2_818_572_288
    assert a.metrics["memory.traffic.smem.total.write"] == 939_524_096
    assert a.metrics["roofline.memory_ns.smem"] == 112_336
    assert a.metrics["roofline.bound_by"] == "smem"
    mma = next(n for n in a.root.walk() if n.op is not None and n.op.opcode == "mma")
    assert mma.per_exec[("traffic", "smem", "read")] == 49_152
    # the scope records the annotated IR and JSON show
    assert a.scope_records(mma)["memory.traffic.smem.read"] == 2_818_572_288
    j = a.to_json()
    loop = j["scopes"]["children"][0]["children"][1]
    assert loop["records"]["total"]["memory.traffic.smem.read"] == 2_818_572_288
    line = next(t.detail for t in a.terms if t.name == "operand reads")
    assert "(4 x 32 + 2 x 32) x 128 x 2 B = 49,152 B an execution, 3.00x the 16,384 B read once" in line
    # the warps read at the SM's clock under warp mma: 128 B x 1.98 GHz x 0.907 = 229.87 B/ns,
    # 49,152 / 229.87 = 213.83 ns a CTA; 5 CTAs a SM: 1,069.15 ns = 1.07 us a round. The 5: the
    # register estimate (tfx.analysis.register_estimate) of this mma.sync tile on 256 threads is 32 x
    # 32 x 4 B / 256 = 4 of accumulator + 2 x (2 + 2 copies of 8,192 B / (16 B x 256)) = 8 of copy
    # addresses + 2 x (32 / 2 + 32 / 4) x 16 x 2 B / 128 = 12 of fragments + 24 (a pipelined one-tile
    # GEMM k-loop's measured base) = 48; a warp takes ceil(48 x 32 / 256) x 256 = 1,536 of its
    # sub-partition's 16,384: 10 warps, 40 an SM, 5 CTAs of 8 (the compiled 40 registers give 6; the
    # base of 32 gave 56 and 4, the live tiles + 32 = 36 registers before session 15 gave 6). Written by
    # the unit policy (tfx.hw.units): the rate inside the formula to 4 significant digits, 229.87 ->
    # 229.9 GB/s (formula_rate); times by format_time_ns (was '229.87 GB/s', written by hand)
    assert "= 229.9 GB/s) = 213.83 ns" in line and "x 5 CTAs a SM = 1.07 us a round" in line


def test_a_sweep_counts_what_each_configuration_counts():
    warps = np.array([2, 4, 8])
    swept = analyze(parse_file(GEMM), None, H200, {**PARAMS, "WARPS": warps}, check=False)
    for i, w in enumerate(warps):
        one = analyze(parse_file(GEMM), None, H200, {**PARAMS, "WARPS": int(w)})
        assert swept.metrics["memory.traffic.smem.total.read"][i] == one.metrics["memory.traffic.smem.total.read"]
    # 2 warps: warps 1 x 2, (2 x 32 + 1 x 32) x 128 x 2 = 24,576 B an execution x 57,344
    assert swept.metrics["memory.traffic.smem.total.read"][0] == 24_576 * 57_344


def test_gpus_whose_layout_is_not_reproduced_keep_one_read():
    # the A100 profile (no warpgroup instruction) and the B200 (tcgen05: one mma for the CTA,
    # no warp mma table) count A and B once: 16,384 B an execution x 57,344
    for name in ("a100_sxm", "b200"):
        a = analyze(parse_file(GEMM), None, load_profile(name), PARAMS, check=False)
        assert a.metrics["memory.traffic.smem.total.read"] == 16_384 * 57_344, name
