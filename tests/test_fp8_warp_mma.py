"""fp8 dots on the warp mma (tfx.analysis.mma_layout.warp_mma, promoted; docs/analysis.md,
"fp8 on the warp mma"). H200 facts (hw_profiles/h200_sxm.toml [warp_mma], measured in
calibration/h200/measured/fp8_mma): 4 sub-partitions, 6 cycles per mma.sync m16n8k16 f16 on one
sub-partition's tensor core, 3.93 issue cycles per mma and 2.14 per fp8 -> f16 pair conversion,
the SM at 0.907 of its 1.98 GHz under warp mma."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.analysis.mma_layout import busiest_subpartition_warps, plan, warp_mma, warp_mma_facts
from tfx.analysis.performance import Demand, engine_ns
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
WGMMA = (64, 8, 16)
FACTS = warp_mma_facts(H200)


def test_h200_states_the_measured_facts():
    assert FACTS is not None
    assert (FACTS.subpartitions, FACTS.mma_cycles, FACTS.issue_cycles, FACTS.convert_cycles,
            FACTS.clock_fraction, FACTS.promotes_fp8) == (4, 6, 3.93, 2.14, 0.907, True)


def test_two_warp_64x64_tile_is_issue_bound():
    # 64 x 64 x 128 on 2 warps: the warp mma (2 % 4 != 0), warpsPerTileV2 with repetitions
    # (64/16, 64/8) = (4, 8): N doubles -> 1 x 2, each warp 64 x 32. Per warp:
    # (64/16)(32/8)(128/16) = 4 x 4 x 8 = 128 mma.sync; conversions 64 x 128 / 64 = 128 (A)
    # + 32 x 128 / 64 = 64 (B) = 192 (Triton 3.6's SASS: 128 HMMA.16816.F32 and 192
    # F2FP.F16.E4M3.UNPACK_B per trip). Tensor 128 x 6 = 768 cycles; issue
    # 128 x 3.93 + 192 x 2.14 = 503.04 + 410.88 = 913.92 cycles, the longer;
    # 913.92 / (1.98 x 0.907 = 1.79586 GHz) = 508.904 ns
    p = plan((64, 64, 128), WGMMA, 2, bits=8)
    c = warp_mma(p, (64, 64, 128), 8, FACTS, 1.98)
    assert (c.warp_m, c.warp_n, c.k, c.mmas, c.converts) == (64, 32, 128, 128, 192)
    assert c.tensor_cycles == 768
    assert c.issue_cycles == Fraction("913.92") and c.cycles == Fraction("913.92")
    assert float(c.warp_ns) == pytest.approx(913.92 / (1.98 * 0.907))
    assert round(float(c.warp_ns), 2) == 508.90


def test_sixteen_row_tile_converts_six_pairs_per_mma():
    # 16 x 32 x 64 on 4 warps (BM = 16: the warp mma): repetitions (1, 4), N doubles twice ->
    # 1 x 4, each warp 16 x 8: (16/16)(8/8)(64/16) = 4 mma; conversions 16 x 64 / 64 = 16
    # + 8 x 64 / 64 = 8 = 24 (Triton's PTX: 4 mma.sync, 24 cvt.rn.f16x2.e4m3x2). Tensor
    # 4 x 6 = 24 cycles, issue 4 x 3.93 + 24 x 2.14 = 15.72 + 51.36 = 67.08 cycles
    p = plan((16, 32, 64), WGMMA, 4, bits=8)
    c = warp_mma(p, (16, 32, 64), 8, FACTS, 1.98)
    assert (c.warp_m, c.warp_n, c.mmas, c.converts) == (16, 8, 4, 24)
    assert c.tensor_cycles == 24 and c.cycles == Fraction("67.08")


def test_large_warp_tile_is_tensor_bound():
    # 256 x 64 x 64 on 2 warps: repetitions (16, 8): M doubles -> 2 x 1, each warp 128 x 64:
    # (128/16)(64/8)(64/16) = 8 x 8 x 4 = 256 mma, conversions 128 x 64 / 64 + 64 x 64 / 64
    # = 128 + 64 = 192. Tensor 256 x 6 = 1536 cycles; issue 256 x 3.93 + 192 x 2.14 =
    # 1006.08 + 410.88 = 1416.96: the tensor core binds
    p = plan((256, 64, 64), WGMMA, 2, bits=8)
    c = warp_mma(p, (256, 64, 64), 8, FACTS, 1.98)
    assert (c.warp_m, c.warp_n, c.mmas, c.converts) == (128, 64, 256, 192)
    assert c.issue_cycles == Fraction("1416.96") and c.cycles == 1536


def test_warpgroup_dots_keep_the_tensor_rate_and_bf16_converts_nothing():
    # 64 x 64 x 128 on 4 warps is a warpgroup mma (fp8 read from shared memory, no conversion)
    assert warp_mma(plan((64, 64, 128), WGMMA, 4, bits=8), (64, 64, 128), 8, FACTS, 1.98) is None
    # bf16 on the warp mma runs as it is: no conversion, not promoted (tests/test_warp_mma.py)
    c = warp_mma(plan((64, 64, 64), WGMMA, 2), (64, 64, 64), 16, FACTS, 1.98)
    assert (c.converts, c.promoted) == (0, False)
    # a GPU without the facts (Ampere's profile: no warpgroup mma, no promotion stated)
    assert warp_mma_facts(load_profile("a100_sxm")) is None


def test_busiest_subpartition():
    # warps go to 4 sub-partitions: 3 CTAs x 2 warps = 6 -> the busiest holds ceil(6/4) = 2
    # (measured: 0.75 of the SM's warp-mma rate); 2 x 2 = 4 -> 1; one 2-warp CTA -> 1
    assert busiest_subpartition_warps(2, 3, 4) == 2
    assert busiest_subpartition_warps(2, 2, 4) == 1
    assert busiest_subpartition_warps(2, 1, 4) == 1
    assert busiest_subpartition_warps(8, 1, 4) == 2


def test_round_takes_the_busiest_subpartition():
    # one warp's 100 ns of promoted warp mma, 2 warps a CTA: a CTA's share of the SM is
    # 100 x 2/4 = 50 ns. Three CTAs: the average 3 x 50 = 150 ns, but the busiest sub-partition
    # holds 2 warps: 150 + (2 - 6/4) x 100 = 200 ns. Two CTAs fill the 4 sub-partitions once:
    # 100 ns. One CTA alone: its two warps run side by side, 100 ns (not its 50 ns share).
    m = Machine(H200, "cta")
    d = Demand(tensor=50, warp_tensor=100)
    assert engine_ns(d, m, 3, 132, warps=2)["tensor"] == 200
    assert engine_ns(d, m, 2, 132, warps=2)["tensor"] == 100
    assert engine_ns(d, m, 1, 132, warps=2)["tensor"] == 100
    # without the warps (the simulator's pricing) the share stands
    assert engine_ns(d, m, 3, 132)["tensor"] == 150


def test_arrays_match_scalars():
    shapes = [(64, 64, 128), (16, 32, 64), (64, 64, 128), (256, 64, 64)]
    warps = [2, 4, 4, 2]
    mm, nn, kk = (np.array(x) for x in zip(*shapes))
    w = np.array(warps)
    p = plan((mm, nn, kk), WGMMA, w, bits=8)
    c = warp_mma(p, (mm, nn, kk), 8, FACTS, 1.98)
    assert list(c.applies) == [True, True, False, True]
    for i, (shape, wi) in enumerate(zip(shapes, warps)):
        one = warp_mma(plan(shape, WGMMA, wi, bits=8), shape, 8, FACTS, 1.98)
        if one is None:
            continue
        assert c.warp_ns[i] == pytest.approx(float(one.warp_ns))


def test_breakdown_explains_the_promoted_mma():
    # gemm_fp8 8192 x 8192 x 4096, 64 x 64 x 128 on 2 warps, 5 stages, 64 KiB of shared memory:
    # 3 CTAs per SM, 6 warps. Each warp's issue: 128 x 3.93 + 192 x 2.14 = 913.92 cycles, plus the
    # k-loop's own ALU work (warp_mma.loop_alu_instructions 9.8 + copy_alu_instructions 2.27 per 16-byte
    # copy a thread makes a trip, x alu_cycles 2): A's 64 x 128 and B's 64 x 128 fp8 tiles, 8,192 B each,
    # over 64 threads x 16 B = 8 copies each, 16 a thread: (9.8 + 2.27 x 16) x 2 = 46.12 x 2 = 92.24;
    # 913.92 + 92.24 = 1,006.16 cycles / (1.98 GHz x 0.907 = 1.79586) = 560.27 ns; the busiest
    # sub-partition holds 2: 1,120.54 ns a round (format_time_ns: 1.12 us)
    m = parse_file(ROOT / "kernels" / "gemm_fp8.tile")
    a = analyze(m, None, H200, {"M": 8192, "N": 8192, "K": 4096, "BM": 64, "BN": 64, "BK": 128,
                                "WARPS": 2, "STAGES": 5, "GROUP_M": 1},
                resources={"threads": 64, "regs": 159, "smem": 65536, "spills": 0})
    terms = {t.name: t.detail for t in a.terms}
    assert "warp mma (mma.sync m16n8k16)" in terms["mma layout"]
    text = terms["fp8 warp mma"]
    assert "128 mma.sync m16n8k16 f16 and 192 fp8 -> f16 pair conversions" in text
    assert ("128 x 3.93 + 192 x 2.14 + the loop's ALU work (9.8 + 2.27 x 16 copies a thread) x 2 = 1,006.2 issue"
            in text)
    assert "= 560.27 ns" in text and "the busiest holds 2, 1.12 us a round" in text
