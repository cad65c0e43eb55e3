"""How co-resident CTAs' serial chains share an SM (tfx.analysis.chain_overlap; docs/analysis.md
section 8, "serial chains") and what a warpgroup mma holds the tensor cores for
(tfx.analysis.mma_path.group_ns). Every expected number is derived by hand below; the H200
facts: clock 1.98 GHz, bf16 tensor 4096 x 1.98 x 0.74 = 6001.4592 flop/ns per SM, shared
memory 128 B/cycle = 253.44 B/ns, instruction_latency.wgmma_rs_group 50 cycles."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import chain_overlap, mma_path
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

from profile_variants import without

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
TENSOR = 4096 * 1.98 * 0.74
SMEM = 128 * 1.98


def test_one_cta_runs_its_chain_alone():
    """n = 1: R = D, so the cycle is tensor + simt + delay = 100 + 50 + 20."""
    assert chain_overlap.cycle_ns(100, 50, 20, 1) == pytest.approx(170)


def test_two_ctas_by_hand():
    """n = 1: cycle 170, Q_tensor = 100 / 170, Q_simt = 50 / 170. n = 2: R_tensor =
    100 (1 + 10/17) = 2700/17, R_simt = 50 (1 + 5/17) = 1100/17, cycle = 3800/17 + 20 =
    4140/17 = 243.53 ns: less than 2 x 170 in turn, more than 2 x 100 on the busier station."""
    got = chain_overlap.cycle_ns(100, 50, 20, 2)
    assert got == pytest.approx(4140 / 17, rel=1e-12)
    assert 2 * 100 < got < 2 * 170


def test_many_ctas_saturate_the_busier_station():
    """64 CTAs of 100 ns tensor and 50 ns SIMT: the tensor station is busy all the time, so a
    round is at least 64 x 100 = 6400 ns, and the SIMT queue adds at most one SIMT visit."""
    got = chain_overlap.cycle_ns(100, 50, 0, 64)
    assert 6400 <= got <= 6400 + 50


def test_arrays_elementwise():
    got = chain_overlap.cycle_ns(np.array([100.0, 100.0]), 50.0, 20.0, np.array([1, 2]))
    assert list(got) == pytest.approx([170, 4140 / 17])


def test_two_phase_measurement_is_the_formula():
    """calibration/h200/measured/chain: a 64x64x64 warpgroup mma alone runs at 76.574 ns a trip
    (mma_rate.csv K=64 N=64 r=1); the exp2 pass over its 64 x 64 scores saturates the SIMT
    station at 8 CTAs: 1628.609 / 8 = 203.576 ns a CTA (two_phase.csv E=1 r=8). By hand:
      n=1: 280.150; Q = 0.27333, 0.72667
      n=2: R = 76.574 x 1.27333 = 97.504, 203.576 x 1.72667 = 351.509: 449.01
      n=3: Q = 2 x 97.504 / 449.01 = 0.43430, 1.56570: R = 109.830, 522.318: 632.15
      n=4: Q = 0.52121, 2.47878: R = 116.485, 708.197: 824.68
    against 290.5, 453.2, 655.3 and 850.2 ns measured (within 4%), where the chains in turn
    would take 2 x, 3 x and 4 x 290.5."""
    measured = {int(r["r"]): float(r["ns_per_round"]) for r in
                csv.DictReader(open(ROOT / "calibration/h200/measured/chain/two_phase.csv")) if r["E"] == "1"}
    mma = {(int(r["K"]), int(r["N"]), int(r["r"])): float(r["ns_per_round"]) for r in
           csv.DictReader(open(ROOT / "calibration/h200/measured/chain/mma_rate.csv"))}
    tensor, simt = mma[(64, 64, 1)], measured[8] / 8
    assert (tensor, simt) == pytest.approx((76.574, 203.576), abs=1e-3)
    by_hand = {1: 280.150, 2: 449.01, 3: 632.15, 4: 824.68}
    for r, want in by_hand.items():
        got = chain_overlap.cycle_ns(tensor, simt, 0, r)
        assert got == pytest.approx(want, abs=0.02)
        assert got == pytest.approx(measured[r], rel=0.04)
        if r > 1:
            assert measured[r] < 0.8 * r * measured[1]      # nowhere near in turn


def _loop(params):
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200, params)
    return [n for n in a.root.walk() if n.kind == "loop"][0]


def _loops(params):
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200, params)
    return [n for n in a.root.walk() if n.kind == "loop"]


def _mmas(loop):
    return [c for c in loop.walk() if c.kind == "op" and c.op is not None and c.op.opcode == "mma"]


def test_ss_mma_waits_for_its_operands_at_n32():
    """QK^T 64 x 32 x 128 on 4 warps: 8 wgmma m64n32k16, each reading A 64 x 16 x 2 = 2048 B and
    B 32 x 16 x 2 = 1024 B from shared memory, at the port's 128 B a cycle of the SM clock
    under the mmas (warp_mma.clock_fraction 0.907 of 1.98 GHz: 128 x 1.98 x 0.907 = 229.870
    B/ns): 24,576 B / 229.870 = 106.913 ns, over its 2 x 64 x 32 x 128 / 6001.46 = 87.360 ns
    of flops. Measured: that very dot (K = 128, N = 32) alone on one CTA a SM takes 106.824 ns a
    round (calibration/h200/measured/chain_s12/mma_rate.csv; 0.60 of the 4096 flop/cycle peak,
    as the older measured/chain/mma_rate.csv's 106.605), within 0.1%; at the profile's 1.98
    GHz the port would give 24,576 / 253.44 = 96.970 ns, 9.2% fast."""
    loop = _loop(dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2))
    qk, pv = _mmas(loop)
    m = Machine(H200, "cta")
    flops = 2 * 64 * 32 * 128 / TENSOR
    assert not mma_path.a_in_registers(qk)
    got = mma_path.group_ns(qk, loop, m, 4, flops)
    assert got == pytest.approx(24_576 / (SMEM * 0.907), rel=1e-12)
    assert got == pytest.approx(106.913, abs=1e-3)
    measured = {(int(r["K"]), int(r["N"]), int(r["r"])): float(r["ns_per_round"]) for r in
                csv.DictReader(open(ROOT / "calibration/h200/measured/chain_s12/mma_rate.csv"))}
    assert measured[(128, 32, 1)] == pytest.approx(106.824, abs=1e-3)
    assert got == pytest.approx(measured[(128, 32, 1)], rel=0.001)


def test_ss_mma_at_n16_reads_a_per_instruction():
    """m64n16k16 (Triton's instruction for a 64 x 32 QK^T on 8 warps, mma_layout.instruction_n):
    A 2048 B + B 16 x 16 x 2 = 512 B = 2,560 B an instruction for its 2 x 64 x 16 x 16 = 32,768
    flop, 11.137 ns at 229.870 B/ns: 32,768 / 11.137 = 2,942.3 flop/ns a SM. Measured
    (calibration/h200/measured/chain_s12/mma_rate.csv, K = 64 and 128, r = 1, 2, 4): 2,921.6 -
    2,974.3 flop/ns. The 8-warp QK^T issues 2 warpgroups x 2 x 8 of them a trip: 32 x 2,560 =
    81,920 B, 356.375 ns (its flops, 2 x 128 x 32 x 128 / 6001.46 = 174.72 ns, are shorter)."""
    loop = _loop(dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=8, STAGES=3))
    qk, pv = _mmas(loop)
    got = mma_path.group_ns(qk, loop, Machine(H200, "cta"), 8, 2 * 128 * 32 * 128 / TENSOR)
    assert got == pytest.approx(81_920 / (SMEM * 0.907), rel=1e-12)
    assert got == pytest.approx(356.375, abs=1e-3)
    per = got / 32
    assert per == pytest.approx(11.137, abs=1e-3)
    assert 32_768 / per == pytest.approx(2942.3, abs=0.1)
    rows = [float(r["flop_per_ns_per_sm"]) for r in
            csv.DictReader(open(ROOT / "calibration/h200/measured/chain_s12/mma_rate.csv")) if r["N"] == "16"]
    assert len(rows) == 6 and min(rows) == pytest.approx(2921.6) and max(rows) == pytest.approx(2974.3)
    assert min(rows) < 32_768 / per < max(rows)


def test_rs_mma_pays_its_group_cost():
    """PV 64 x 128 x 32: P is computed in the trip (registers, RS): its flops 87.360 ns plus
    instruction_latency.wgmma_rs_group = 50 cycles = 25.253 ns = 112.613 ns; its B operand,
    2 x 16 x 128 x 2 = 8192 B / 253.44 = 32.3 ns, comes faster."""
    loop = _loop(dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2))
    qk, pv = _mmas(loop)
    m = Machine(H200, "cta")
    flops = 2 * 64 * 128 * 32 / TENSOR
    assert mma_path.a_in_registers(pv)
    assert mma_path.group_ns(pv, loop, m, 4, flops) == pytest.approx(flops + 50 / 1.98, rel=1e-12)
    assert flops + 50 / 1.98 == pytest.approx(112.613, abs=1e-3)


def test_no_group_facts_no_group_cost():
    """Without instruction_latency.wgmma_rs_group (h100_sxm less that one fact,
    tests/profile_variants.py) an mma holds the tensor cores for its flops alone: 87.0 ns stays
    87.0 (with it, 87.0 + 50 / 1.98 = 112.25)."""
    h100 = without("h100_sxm", "instruction_latency.wgmma_rs_group")
    assert h100.get("instruction_latency.wgmma_rs_group", None) is None
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, h100,
                dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2))
    loop = [n for n in a.root.walk() if n.kind == "loop"][0]
    qk, pv = _mmas(loop)
    assert mma_path.group_ns(pv, loop, Machine(h100, "cta"), 4, 87.0) == 87.0
    assert mma_path.group_ns(pv, loop, Machine(load_profile("h100_sxm"), "cta"), 4, 87.0) == \
        pytest.approx(87.0 + 50 / 1.98, rel=1e-12)


def test_replication_of_64_rows_on_two_warpgroups():
    """Triton puts every warp of a chained dot on M (warpsPerTileV3); a warpgroup mma covers 64
    rows per warpgroup, so 64 rows on 8 warps (two warpgroups) are held, and their softmax run,
    twice: 128 / 64 = 2. 128 rows on 8 warps and 64 rows on 4 warps: once."""
    m = Machine(H200, "cta")
    for bm, warps, copies in ((64, 8, 2), (128, 8, 1), (64, 4, 1)):
        loop = _loop(dict(B=1, H=32, S=4096, D=128, BLOCK_M=bm, BLOCK_N=64, WARPS=warps, STAGES=2))
        assert chain_overlap.replication(loop, m, warps) == copies


def test_warpgroups_of_a_cta_overlap_their_chains():
    """8 warps on a warpgroup mma with every warp on M: two warpgroups, each its own 64 rows of a
    128-row tile (or both the same 64 rows: replication 2); 4 warps: one. Two warpgroups that
    start the trip together overlap 1/2 x min(tensor, simt) of the CTA's chain (the second's mma
    under the first's softmax): with tensor 724.13 and simt 541.41 ns (the 128 x 64, D = 128
    tile of tests/test_attention_chain.py), 270.71 ns."""
    m = Machine(H200, "cta")
    for bm, warps, groups in ((128, 8, 2), (64, 8, 2), (64, 4, 1), (128, 4, 1)):
        loop = _loop(dict(B=1, H=32, S=4096, D=128, BLOCK_M=bm, BLOCK_N=64, WARPS=warps, STAGES=2))
        assert mma_path.warpgroups(loop, m, warps) == groups
    tensor, simt = 724.13, 541.41
    assert (2 - 1) / 2 * min(tensor, simt) == pytest.approx(270.705)


def test_a_lone_warp_is_one_warp_a_subpartition():
    """The H200's SM has 4 sub-partitions (warp_mma.subpartitions): one 4-warp CTA puts one warp on
    each (ceil(1 x 4 / 4) = 1, a lone warp); two such CTAs, or one of 8 warps, put two on each
    (ceil(2 x 4 / 4) = ceil(1 x 8 / 4) = 2)."""
    m = Machine(H200, "cta")
    assert chain_overlap.lone_warp(m, 4, 1)
    assert not chain_overlap.lone_warp(m, 4, 2)
    assert not chain_overlap.lone_warp(m, 8, 1)
    assert list(chain_overlap.lone_warp(m, np.array([4, 4, 8]), np.array([1, 3, 1]))) == [True, False, False]


def test_a_lone_warp_runs_its_exp2s_beside_its_issue():
    """H200: exp2 at 16 results a cycle a SM, FP32 at 256 flop = 128 lanes a cycle, so a MUFU's
    issue slot is 16 / 128 = 1/8 of its time on the special-function unit. A trip of 74 ns of
    FP32 instructions and 67 ns of exp2 (D = 128, 64 x 32 on 4 warps), none before the exp2s:
    issue 74 + 67 / 8 = 82.375 ns, the unit 67: 82.375, where the sum is 141. 58 and 67 ns
    (D = 64, 64 x 32): issue 58 + 8.375 = 66.375 < 67, so the unit's 67. With 16 of the 58 ns
    before every exp2 (the scaling and the row max): 16 + max(42 + 8.375, 67) = 83."""
    m = Machine(H200, "cta")
    assert chain_overlap.lone_simt_ns(m, 74.0, 67.0) == pytest.approx(82.375, rel=1e-12)
    assert chain_overlap.lone_simt_ns(m, 58.0, 67.0) == pytest.approx(67.0, rel=1e-12)
    assert chain_overlap.lone_simt_ns(m, 58.0, 67.0, 16.0) == pytest.approx(83.0, rel=1e-12)
    got = chain_overlap.lone_simt_ns(m, np.array([74.0, 58.0]), np.array([67.0, 67.0]))
    assert list(got) == pytest.approx([82.375, 67.0])


def test_the_work_every_exp2_waits_for():
    """kernels/flash_attention.tile: both exp2s (the scores' and the rescale factor's) read the
    row max, a reduction of the scaled scores; so the scaling and the max come before any exp2
    (the mma that makes the scores ends the walk). In the masked loop the key positions, their
    comparison and the select come before the max too. The shift s - m, the row sum, the
    rescale and the cast do not."""
    loop, masked = _loops(dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=3))
    assert [c.op.result for c in chain_overlap.before_exp2_ops(loop)] == ["%s_scaled", "%m_block"]
    assert [c.op.result for c in chain_overlap.before_exp2_ops(masked)] == [
        "%s_scaled", "%k_pos", "%in_sequence", "%s_masked", "%m_block"]


def test_the_simt_station_of_a_lone_warp_and_of_shared_subpartitions():
    """The 64 x 32, D = 128 tile on 4 warps with a trip of 74 ns FP32 and 67 ns exp2, 5 ns (say)
    in each of the two ops every exp2 waits for (the scaling and the row max, 10 ns): alone on
    its SM (one warp a sub-partition) the SIMT station is 10 + max(74 - 10 + 67 / 8, 67) =
    82.375 ns + the trip's bookkeeping (pipeline.iteration_overhead 100 cycles / 1.98 GHz =
    50.505 ns) = 132.880 ns; with a second CTA on the SM (two warps a sub-partition) the sum
    74 + 67 + 50.505 = 191.505 ns."""
    m = Machine(H200, "cta")
    loop = _loop(dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=3))
    one = {"tensor": 0.0, "vector": 74.0, "special": 67.0, "smem": 0.0}
    alone = chain_overlap.stations(loop, m, 4, one, lambda c: 0.0, 0.0, simt_ns=lambda c: 5.0, resident=1)
    shared = chain_overlap.stations(loop, m, 4, one, lambda c: 0.0, 0.0, simt_ns=lambda c: 5.0, resident=2)
    assert alone.lone and not shared.lone
    assert float(alone.simt) == pytest.approx(82.375 + 100 / 1.98, rel=1e-9)
    assert float(shared.simt) == pytest.approx(141 + 100 / 1.98, rel=1e-9)


def test_a_lone_64x32_trip_at_d64_by_hand():
    """flash_attention B1 H16 S8192 D64, 64 x 32 on 4 warps, alone on its SM (shared memory for
    one CTA; calibration/h200/measured/attn_clock_s15 alone1: 379.0 ns a trip, attn_trip_s14:
    371.8). The trip's FP32 elements: the scaling 64 x 32 = 2,048, the row max 2,048, the shift
    2,048, the row sum 2,048, the cast 2,048, the rescale of the 64 x 64 accumulator 4,096 and
    four row ops of 64: 14,592 / 128 lanes = 114 cycles = 57.576 ns at 1.98 GHz; exp2 2,048 + 64
    = 2,112 / 16 = 132 cycles = 66.667 ns; before every exp2 the scaling and the max, 4,096 / 128
    = 32 cycles = 16.162 ns. Alone: 16.162 + max(57.576 - 16.162 + 66.667 / 8 = 49.747, 66.667)
    + 50.505 = (32 + 132 + 100) / 1.98 = 133.333 ns, where the sum is 174.747 ns; with tensor
    122.39 and delay 125.00 the chain alone is 380.72 ns (422.14 with the sum, +11%)."""
    from tfx.analysis import performance
    got = []
    orig = performance.chain_overlap.stations

    def spy(*a, **k):
        s = orig(*a, **k)
        got.append(s)
        return s
    performance.chain_overlap.stations = spy
    try:
        analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200,
                dict(B=1, H=16, S=8192, D=64, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=3),
                resources={"threads": 128, "regs": 82, "smem": 200000})
    finally:
        performance.chain_overlap.stations = orig
    st = got[0]
    assert bool(st.lone)
    assert float(st.simt) == pytest.approx((32 + 132 + 100) / 1.98, rel=1e-6)


def test_warpgroups_overlap_the_compute_the_prefetch_waits_for():
    """Two warpgroups: the copies leave after the later one's compute, its QK^T under the first
    one's softmax: (2 - 1)/2 x min(QK^T, the rest). flash_attention 128 x 64 on 8 warps at D =
    128: QK^T 349.44 ns, softmax 228.28 + 262.63 = 490.91 ns of an 840.35 ns sum: 174.72 ns.
    One warpgroup (4 warps) overlaps nothing; arrays elementwise (the softmax the shorter:
    min(300, 200) / 2 = 100)."""
    assert chain_overlap.prefetch_overlap_ns(840.35, 349.44, 2) == pytest.approx(174.72, abs=1e-9)
    assert chain_overlap.prefetch_overlap_ns(840.35, 349.44, 1) == 0
    got = chain_overlap.prefetch_overlap_ns(np.array([840.35, 500.0]), np.array([349.44, 300.0]), np.array([2, 2]))
    assert got == pytest.approx([174.72, 100.0], abs=1e-9)


def test_the_prefetch_of_two_warpgroups_leaves_after_the_later_one():
    """flash_attention B4 H32 S4096 D64 at 128 x 128 on 8 warps, 2 stages (161 registers, 80 KiB
    as run6 measured): the copies wait for QK^T, 2 x 128 x 128 x 64 = 2,097,152 flop / 6001.4592
    flop/ns = 349.44 ns, and the softmax: FP32 elements five ops on 128 x 128 (scale, max, shift,
    sum, cast) 81,920 + the accumulator's rescale 128 x 64 = 8,192 + four row ops 4 x 128 = 512,
    90,624 / 253.44 = 357.58 ns; exp2 128 x 128 + 128 = 16,512 / 31.68 = 521.21 ns: 1,228.23 ns in
    all, less the warpgroups' overlap 1/2 x min(349.44, 878.79) = 174.72 ns: 1,053.51 ns, longer
    than the rest of the chain before the copies. Since session 19 (attn19) the 2-stage prefetch's
    copies are no longer in flight than the wait the chain prices (pipeline_depth): PV 349.44 +
    the RS group 25.25 = 374.69 ns and the 2-stage delay, here at most the first wave's round trip
    at the L2 share less PV, 122.22 + 215.73 + 32,768 / 83.33 - 374.69 = 356.49 ns: the floor
    1,053.51 + 374.69 + 356.49 = 1,784.69 ns at most, ~1,590 with the drifted CTAs' 153.95, under
    the round's throughput sum (1.63 us): no prefetch wait, where the streamed round trip (L2
    share, no PV) made it 1,053.51 + ~590 = ~1.64 us and bound."""
    qk = 2 * 128 * 128 * 64 / (4096 * 1.98 * 0.74)
    softmax = (5 * 16_384 + 8192 + 4 * 128) / (128 * 1.98) + (16_384 + 128) / (16 * 1.98)
    assert qk == pytest.approx(349.44, abs=1e-2) and softmax == pytest.approx(878.79, abs=1e-2)
    assert qk + softmax - min(qk, softmax) / 2 == pytest.approx(1053.51, abs=1e-2)
    a = analyze(parse_file(str(Path(__file__).resolve().parent.parent / "kernels" / "flash_attention.tile")), None,
                load_profile("h200_sxm"), dict(B=4, H=32, S=4096, D=64, BLOCK_M=128, BLOCK_N=128, WARPS=8, STAGES=2),
                resources=dict(threads=256, regs=161, smem=81920, spills=0))
    assert not any(t.name == "prefetch wait" for t in a.terms)
    pv = qk + 50 / 1.98
    first = 242 / 1.98 + 215.73 + 32_768 / (11_000 / 132) - pv
    assert pv == pytest.approx(374.69, abs=1e-2) and first == pytest.approx(356.49, abs=1e-1)
    assert qk + softmax - min(qk, softmax) / 2 + pv + 32_768 / (107.5 * 1.98) < 1630


def test_a_station_of_two_servers_by_hand():
    """Demands tensor 100, simt 200, delay 50, each station 2 servers (a 2-warp CTA on 2 of the 4
    sub-partitions): mu(j) = min(j, 2) / (2 D), so one customer alone takes 2 D and two share
    the whole station.
    n = 1: R_t = 2 x 100 = 200, R_s = 2 x 200 = 400, cycle 650; X = 1/650; p_t(1|1) = 200/650 =
    4/13, p_t(0|1) = 9/13; p_s(1|1) = 400/650 = 8/13, p_s(0|1) = 5/13.
    n = 2: R_t = 1 x 200 x 9/13 + 2 x 100 x 4/13 = 2600/13 = 200, R_s = 400 x 5/13 + 2 x 200 x
    8/13 = 5200/13 = 400: cycle 650 again, two CTAs of two warps never wait for each other (their
    four warps fill the four sub-partitions); one server a station gives 492.86 (below), the price
    of a CTA that could use all four.
    n = 3: X(2) = 2/650 = 1/325; p_t(1|2) = 200/325 x 9/13 = 72/169, p_t(2|2) = 100/325 x 4/13 =
    16/169, so p_t(0|2) = 1 - 88/169 = 81/169; p_s(1|2) = 400/325 x 5/13 = 80/169, p_s(2|2) =
    200/325 x 8/13 = 64/169, p_s(0|2) = 25/169.
    R_t(3) = 200 x 81/169 + 2 x 100 x 72/169 + 3 x 100 x 16/169 = (16,200 + 14,400 + 4,800) / 169
    = 35,400 / 169 = 209.467; R_s(3) = 400 x 25/169 + 2 x 200 x 80/169 + 3 x 200 x 64/169 =
    (10,000 + 32,000 + 38,400) / 169 = 80,400 / 169 = 475.740; cycle = 115,800 / 169 + 50 = 735.207 ns."""
    from tfx.analysis import closed_queue
    assert chain_overlap.cycle_ns(100, 200, 50, 1, 2) == pytest.approx(650, rel=1e-12)
    assert chain_overlap.cycle_ns(100, 200, 50, 2, 2) == pytest.approx(650, rel=1e-12)
    assert chain_overlap.cycle_ns(100, 200, 50, 3, 2) == pytest.approx(115_800 / 169 + 50, rel=1e-12)
    # one server a station is the plain mean value analysis: n = 2, R_t = 100 (1 + 100/350) = 900/7,
    # R_s = 200 (1 + 200/350) = 2200/7, cycle = 3100/7 + 50 = 492.857
    assert closed_queue.cycle_ns_servers(2, (100, 200), (1, 1), 50) == pytest.approx(3100 / 7 + 50, rel=1e-12)
    assert chain_overlap.cycle_ns(100, 200, 50, 2) == pytest.approx(3100 / 7 + 50, rel=1e-12)
    # arrays elementwise: resident 1, 2, 3 and servers 2 / 1 / 2
    got = closed_queue.cycle_ns_servers(np.array([1, 2, 3]), (100, 200), (np.array([2, 1, 2]),) * 2, 50)
    np.testing.assert_allclose(got, [650, 3100 / 7 + 50, 115_800 / 169 + 50], rtol=1e-12)


@pytest.mark.parametrize("warps, servers, held", [(1, 4, 1), (2, 2, 2), (4, 1, 4), (8, 1, 4)])
def test_the_sub_partitions_a_cta_holds(warps, servers, held):
    """The H200's SM has 4 sub-partitions (warp_mma.subpartitions): a CTA of W warps issues from
    min(W, 4) of them, so each station of its chain is 4 / min(W, 4) servers."""
    m = Machine(H200, "cta")
    assert chain_overlap.subpartition_servers(m, warps) == servers
    assert m.warp_mma.subpartitions == 4 and min(warps, 4) == held


def test_a_two_warp_flash_forward_prices_its_chain_on_two_servers():
    """flash_attention at BLOCK_M 64, BLOCK_N 64, D 64 on 2 warps (the warp mma, 4 CTAs a SM by its
    240 estimated registers): the serial chain's round is the closed queue of 2 servers a station
    (each CTA holds 2 of the 4 sub-partitions), longer than the one-server queue of the same
    demands, and the text says why."""
    from tfx.analysis import closed_queue
    fa = parse_file(ROOT / "kernels" / "flash_attention.tile")
    a = analyze(fa, None, H200, dict(B=8, H=16, S=2048, D=64, BLOCK_M=64, BLOCK_N=64, WARPS=2, STAGES=2), check=False)
    (detail,) = [t.detail for t in a.terms if t.name == "serial chain" and "line 49" in t.detail]
    assert ("each station 2 servers: a CTA's warps issue from 2 of the SM's 4 sub-partitions, so one alone in a "
            "phase takes 2 x its demand") in detail
    assert a.occupancy.blocks_per_sm == 4
    # at 4 warps (BLOCK_M 64: one warpgroup) a CTA holds every sub-partition: the plain queue
    b = analyze(fa, None, H200, dict(B=8, H=16, S=2048, D=64, BLOCK_M=64, BLOCK_N=64, WARPS=4, STAGES=2), check=False)
    (plain,) = [t.detail for t in b.terms if t.name == "serial chain" and "line 49" in t.detail]
    assert "R_s(n) = D_s (1 + Q_s(n-1))" in plain and "servers" not in plain
    assert closed_queue.cycle_ns_servers(4, (242.83, 279.80), (2, 2), 44.19) > closed_queue.cycle_ns(4, (242.83, 279.80), 44.19)


def test_a_sweep_of_warps_prices_each_as_its_scalar():
    """WARPS 2 / 4 in one sweep (servers 2 / 1): each configuration's predicted time is its scalar
    analysis' (the one-server shortcut applies only where every configuration has one server)."""
    fa = parse_file(ROOT / "kernels" / "flash_attention.tile")
    base = dict(B=8, H=16, S=2048, D=64, BLOCK_M=64, BLOCK_N=64, STAGES=2)
    swept = analyze(fa, None, H200, {**base, "WARPS": np.array([2, 4])}, check=False)
    scalars = [float(analyze(fa, None, H200, {**base, "WARPS": w}, check=False).metrics["performance.predicted_ns"])
               for w in (2, 4)]
    np.testing.assert_allclose(np.asarray(swept.metrics["performance.predicted_ns"], dtype=float), scalars, rtol=1e-9)
