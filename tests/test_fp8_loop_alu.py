"""The fp8 warp-mma k-loop's own ALU work (tfx.analysis.mma_layout.warp_mma, trip_copies_per_thread;
tfx.analysis.mma_path.trip_loaded; docs/analysis.md, "What the 8-warp round issues").

H200 facts (hw_profiles/h200_sxm.toml [warp_mma]): 3.93 issue cycles per mma.sync, 2.14 per fp8 -> f16
pair conversion, and the loop's ALU work, 9.8 instructions a warp a trip plus 2.27 per 16-byte copy a
thread makes (calibration/h200/measured/l2_groupm_s26: Nsight's ALU-pipe instructions less the
conversions, against the LDGSTS a warp, over five launches), at 2 cycles a warp instruction (16 ALU
lanes a sub-partition); the SM at 0.907 of 1.98 GHz under warp mma.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.mma_layout import plan, trip_copies_per_thread, warp_mma, warp_mma_facts
from tfx.analysis.mma_path import trip_loaded
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
WGMMA = (64, 8, 16)
FACTS = warp_mma_facts(H200)
SHAPE = (16, 32, 128)        # warp8_s25's 16x32x128 fp8 tile


def test_the_profile_states_the_loop_facts():
    assert (FACTS.loop_alu, FACTS.copy_alu, FACTS.alu_cycles) == (9.8, 2.27, 2)


def test_copies_a_thread_round_up_each_operand_tile():
    # fp8: A 16 x 128 = 2,048 B, B 32 x 128 = 4,096 B. 8 warps (256 threads x 16 B = 4,096 B a round):
    # A ceil(0.5) = 1, B 1 -> 2 (Nsight: 2.03 LDGSTS a warp a trip); 2 warps (1,024 B a round): 2 + 4 = 6
    # (Nsight 6.09); B alone on 2 warps: 4; 16-bit operands hold twice the bytes: 4 + 8 = 12
    assert trip_copies_per_thread(SHAPE, 8, (True, True), 256) == 2
    assert trip_copies_per_thread(SHAPE, 8, (True, True), 64) == 6
    assert trip_copies_per_thread(SHAPE, 8, (False, True), 64) == 4
    assert trip_copies_per_thread(SHAPE, 16, (True, True), 64) == 12


def test_the_eight_warp_warp_adds_the_loops_alu_work_to_its_issue():
    # 16 x 32 x 128 on 8 warps: warps 2 x 4 (16 rows padded to 32), each warp 16 x 8: (16/16)(8/8)(128/16)
    # = 8 mma.sync and 16 x 128 / 64 + 8 x 128 / 64 = 32 + 16 = 48 conversions. Issue
    # 8 x 3.93 + 48 x 2.14 = 31.44 + 102.72 = 134.16 cycles, plus (9.8 + 2.27 x 2) x 2 = 14.34 x 2 = 28.68:
    # 162.84 cycles (> 8 x 6 = 48 of tensor) / (1.98 x 0.907 GHz) = 90.675 ns a warp
    c = warp_mma(plan(SHAPE, WGMMA, 8, bits=8), SHAPE, 8, FACTS, 1.98, (True, True))
    assert (c.mmas, c.converts, c.copies) == (8, 48, 2)
    assert c.loop_cycles == Fraction("28.68")
    assert c.issue_cycles == Fraction("162.84")
    assert float(c.warp_ns) == pytest.approx(162.84 / (1.98 * 0.907))


def test_nothing_is_added_outside_a_loop_or_to_a_16_bit_dot():
    # the same dot without operands its trip loads: 134.16 cycles; a bf16 dot converts nothing and its
    # tensor core binds (8 x 6 = 48 cycles against 8 x 3.93 = 31.44 of issue): no loop term
    alone = warp_mma(plan(SHAPE, WGMMA, 8, bits=8), SHAPE, 8, FACTS, 1.98)
    assert alone.loop_cycles == 0 and alone.issue_cycles == Fraction("134.16")
    bf16 = warp_mma(plan(SHAPE, WGMMA, 8, bits=16), SHAPE, 16, FACTS, 1.98, (True, True))
    assert bf16.loop_cycles == 0 and bf16.issue_cycles == Fraction("31.44")


def test_which_operands_a_trip_loads_is_read_off_the_kernel_text():
    # kernels/gemm_fp8.tile: in the k-loop, %a = load A -> smem, %b = load B -> smem, then the dot of the two:
    # both loaded by the trip. kernels/flash_attention.tile: Q is loaded once before the key loop and
    # each trip loads K and V; QK^T reads Q (not the trip's) and K (the trip's), PV reads the computed P
    # and V (the trip's): (False, True) for both
    (gemm,) = analyze(parse_file(ROOT / "kernels" / "gemm_fp8.tile"), None, H200, {}).root.mma_ops()
    assert trip_loaded(gemm) == (True, True)
    attn = list(analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200, {}).root.mma_ops())
    assert attn and all(trip_loaded(d) == (False, True) for d in attn)


def test_the_launch_breakdown_states_the_term():
    # warp8_s25's tile as a launch of 528 CTAs (M = 32, N = 8448, K = 32768, GROUP_M 8), 4 CTAs an SM:
    # 8 warps on the busiest sub-partition, 8 x 90.675 = 725.40 ns a round
    a = analyze(parse_file(ROOT / "kernels" / "gemm_fp8.tile"), None, H200,
                {"M": 32, "N": 8448, "K": 32768, "BM": 16, "BN": 32, "BK": 128, "WARPS": 8, "STAGES": 5,
                 "GROUP_M": 8})
    text = {t.name: t.detail for t in a.terms}["fp8 warp mma"]
    assert "8 x 3.93 + 48 x 2.14 + the loop's ALU work (9.8 + 2.27 x 2 copies a thread) x 2 = 162.8 issue" in text
    assert "the busiest holds 8, 725.40 ns a round" in text
