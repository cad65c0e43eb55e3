"""16-bit dots on the warp mma (tfx.analysis.mma_layout.warp_mma, the 'warp mma' term;
docs/analysis.md, "the warp mma's own rate"). Wherever tfx.analysis.mma_layout lays a dot on
mma.sync (rows not a multiple of 64, or warps not a multiple of 4), each warp runs its tile on
its own sub-partition's tensor core: the same mechanism as the promoted fp8 dots
(tests/test_fp8_warp_mma.py), without the conversions.

H200 facts (hw_profiles/h200_sxm.toml [warp_mma], calibration/h200/measured/fp8_mma): 4
sub-partitions; 6 cycles per mma.sync m16n8k16 (4096 flop) on one sub-partition's tensor core
(2729.6 flop/cycle an SM, 0.67 of the warpgroup mma); 3.93 issue cycles an mma; the SM at
0.907 of its 1.98 GHz under warp mma: 1.98 x 0.907 = 1.79586 GHz."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.mma_layout import plan, warp_mma, warp_mma_facts
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
WGMMA = (64, 8, 16)
FACTS = warp_mma_facts(H200)
WARP_GHZ = 1.98 * 0.907            # 1.79586


def test_two_warp_bf16_tile_is_tensor_bound():
    # 64 x 64 x 64 bf16 on 2 warps: the warp mma (2 % 4 != 0); warpsPerTileV2 with repetitions
    # (64/16, 64/8) = (4, 8) puts both warps on N: each warp 64 x 32, (64/16)(32/8)(64/16) =
    # 4 x 4 x 4 = 64 mma.sync, no conversion. Tensor 64 x 6 = 384 cycles; issue 64 x 3.93 =
    # 251.52 cycles, shorter: 384 / 1.79586 = 213.8251 ns (the warpgroup rate's
    # 2 x 64 x 64 x 64 / 6001.46 flop/ns = 87.36 ns assumed all four sub-partitions)
    c = warp_mma(plan((64, 64, 64), WGMMA, 2), (64, 64, 64), 16, FACTS, 1.98)
    assert (c.warp_m, c.warp_n, c.k, c.mmas, c.converts, c.promoted) == (64, 32, 64, 64, 0, False)
    assert c.tensor_cycles == 384 and c.cycles == 384
    assert float(c.issue_cycles) == pytest.approx(251.52)
    assert float(c.warp_ns) == pytest.approx(384 / WARP_GHZ)
    assert round(float(c.warp_ns), 2) == 213.83


def test_decode_group_pads_to_sixteen_rows():
    # gqa_decode's QK^T, GROUP = 4 query rows x BLOCK_N 64 x D 128 on 2 warps (chained: every
    # warp on the larger side, N): rows padded to 16, each warp 16 x 32: (16/16)(32/8)(128/16)
    # = 1 x 4 x 8 = 32 mma x 6 = 192 cycles / 1.79586 = 106.91 ns
    p = plan((4, 64, 128), WGMMA, 2, chained=True)
    c = warp_mma(p, (4, 64, 128), 16, FACTS, 1.98)
    assert (c.warp_m, c.warp_n, c.mmas) == (16, 32, 32)
    assert round(float(c.warp_ns), 2) == 106.91


def test_other_dots_keep_the_tensor_rate():
    # a warpgroup mma (64 rows, 4 warps), a 32-bit (tf32) dot on the warp path (its m16n8k8 rate
    # is not measured) and a GPU without the facts (Ampere: its tensor rate is mma.sync's own)
    assert warp_mma(plan((64, 64, 64), WGMMA, 4), (64, 64, 64), 16, FACTS, 1.98) is None
    assert warp_mma(plan((64, 64, 64), WGMMA, 2, bits=32), (64, 64, 64), 32, FACTS, 1.98) is None
    assert warp_mma_facts(load_profile("a100_sxm")) is None


def test_arrays_match_scalars():
    # a sweep over BM and warps: 16 x 64 x 64 (4 warps: warp mma), 64 x 64 x 64 (4 warps:
    # warpgroup), 64 x 64 x 64 (2 warps: warp mma), 32 x 128 x 64 (8 warps: warp mma)
    shapes = [(16, 64, 64), (64, 64, 64), (64, 64, 64), (32, 128, 64)]
    warps = [4, 4, 2, 8]
    mm, nn, kk = (np.array(x) for x in zip(*shapes))
    w = np.array(warps)
    c = warp_mma(plan((mm, nn, kk), WGMMA, w), (mm, nn, kk), 16, FACTS, 1.98)
    assert list(c.applies) == [True, False, True, True]
    for i, (shape, wi) in enumerate(zip(shapes, warps)):
        one = warp_mma(plan(shape, WGMMA, wi), shape, 16, FACTS, 1.98)
        if one is None:
            continue
        assert c.warp_ns[i] == pytest.approx(float(one.warp_ns))
        assert c.converts[i] == 0


def _attention(smem):
    """flash_attention B1 H32 S4096 D128 at BLOCK_M 64, BLOCK_N 32 on 2 warps, 2 stages, 126
    registers (128 a thread allocated: 8,192 a CTA, 8 CTAs by registers) and ``smem`` bytes:
    {term name: [(ns, detail), ...]}."""
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200,
                dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=2, STAGES=2),
                resources=dict(threads=64, regs=126, smem=smem, spills=0))
    out: dict = {}
    for t in a.terms:
        out.setdefault(t.name, []).append((float(t.ns), t.detail))
    return out


def test_attention_on_two_warps_breakdown():
    # Both dots are chained and share the later dot's warps (mma_layout.feeds_into; the TTGIR
    # of Triton 3.6.0 has warpsPerCTA [1, 2] for both at this tile): PV 64 x 128 x 32, M = 64 <
    # N = 128, so every warp on N: each warp 64 x 64, (4)(8)(2) = 64 mma; QK^T 64 x 32 x 128
    # takes [1, 2] too: each warp 64 x 16, (4)(2)(8) = 64 mma: 384 cycles / 1.79586 = 213.83 ns
    # each. 36,864 + 1,024 reserved B of shared memory: 233,472 / 37,888 = 6 CTAs per SM, 12
    # warps: the busiest sub-partition holds 3, 3 x 213.83 = 641.48 ns a round per dot
    qk, pv = (d for _, d in _attention(36_864)["warp mma"][:2])
    assert "each warp's 64 x 16 tile over K = 128 runs 64 mma.sync m16n8k16 bf16" in qk
    assert "each warp's 64 x 64 tile over K = 32 runs 64 mma.sync m16n8k16 bf16" in pv
    assert "64 x 6 cycles = 384.0 cycles / (1.98 GHz x 0.907) = 213.83 ns" in qk
    assert "6 CTAs x 2 warps on 4 sub-partitions: the busiest holds 3, 641.48 ns a round" in qk


DOT = 384 / WARP_GHZ                  # 213.8251 ns: one warp's QK^T (or PV) a trip
# one CTA's softmax a trip (tests/test_attention_chain.py derives them for this 64 x 32 tile):
# vector 18,688 elements / 253.44 per ns, exp2 2,112 / 31.68 per ns, overhead 100 cycles
SOFTMAX = 18_688 / (128 * 1.98) + 2112 / (16 * 1.98) + 100 / 1.98


def test_resident_chains_take_each_ctas_share_of_the_subpartitions():
    """The trip waits for QK^T (softmax, then PV): the resident CTAs' chains share the tensor
    and SIMT stations (tfx.analysis.chain_overlap). A 2-warp CTA alone runs its two dots on 2
    of the 4 sub-partitions: 2 x 213.83 = 427.65 ns. Six of them do not each demand 427.65 of
    one tensor station: their 12 warps sit 3 to a sub-partition, so the round's tensor time is
    3 x 427.65 = 1,282.95 ns (the busiest engine) and each CTA's demand is its share,
    1,282.95 / 6 = 213.83 ns; saturated, 6 x 213.83 = 1.28 us on the busier station (with
    the demand alone it would be 6 x 427.65 = 2.57 us: each sub-partition charged twice). The
    SIMT station: 73.74 + 66.67 + 50.51 = 190.91 ns.
    Each dot's station time is no shorter than its operands through the shared-memory port
    (mma_path.group_ns; tests/test_operand_reads.py): QK^T's warps 1 x 2 (the later dot's,
    mma_layout.feeds_into) each read all of Q and half of K^T, (2 x 64 + 1 x 32) x 128 x 2 B =
    40,960 B at 128 B x 1.98 GHz x 0.907 = 229.87 B/ns: 178.19 ns, over its 106.91 ns share; PV
    reads V once (8,192 B: 35.64 ns, under its share). So six CTAs' chain holds 178.19 + 106.91
    = 285.10 ns of tensor station, 6 x 285.10 = 1.71 us on the busier station; the busiest
    engine is the port, 6 x (16,384 B of copies / 253.44 + 178.19 + 35.64) = 6 x 278.48 =
    1.67 us.
    Three CTAs (65,536 + 1,024 B: 233,472 / 66,560 = 3 per SM): 6 warps, the busiest
    sub-partition holds 2: a share of 2 x 213.83 / 3 = 142.55 ns a dot, QK^T's reads over it:
    178.19 + 142.55 = 320.74 ns, 3 x 320.74 = 962.21 ns on the busier station."""
    six = _attention(36_864)["serial chain"][0][1]
    reads = 40_960 / (128 * 1.98 * 0.907)
    assert f"one CTA's chain = tensor {reads + 3 * 2 * DOT / 6 / 2:.2f} ns + simt {SOFTMAX:.2f} ns" in six
    assert "one CTA's chain = tensor 285.10 ns + simt 190.91 ns" in six
    assert "1.71 us on the busier station vs the busiest engine's 1.67 us" in six
    three = _attention(65_536)["serial chain"][0][1]
    assert f"one CTA's chain = tensor {reads + 2 * DOT / 3:.2f} ns + simt 190.91 ns" in three
    assert "one CTA's chain = tensor 320.74 ns + simt 190.91 ns" in three
    assert "962.21 ns on the busier station" in three
