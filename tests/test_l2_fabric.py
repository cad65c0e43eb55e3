"""The far L2 partitions' fills across the fabric (tfx.analysis.l2_reuse.far_fill_share, side_block;
tfx.analysis.performance.l2_fabric_ns, the ``l2 fabric`` term; docs/analysis.md, "The L2 fabric's
far fills").

H200 facts used: memory.l2.partitions 2 (each keeps its own copy of a line its SMs read);
memory.l2.fabric_bandwidth 2.35 TB/s = 2,350 B/ns (hw_profiles/h200_sxm.toml: a lower bound, half
of SDPA's 17.18 GB decode read in 3.65886 ms; Nsight's lts__t_sectors_srcunit_ltcfabric x 32 B over
do_bench's time reach 2.04-2.23 TB/s in calibration/h200/measured/l2_groupm_s14-s26c's launches
bound off the SM clock).
"""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.l2_reuse import far_fill_share, side_block, walk_side_block, wave_reuse
from tfx.analysis.tile_walk import WalkIndex
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")
H100 = load_profile("h100_sxm")
FP8 = parse_file(Path(__file__).resolve().parent.parent / "kernels" / "gemm_fp8.tile")
RUN38 = dict(M=32, N=28672, K=8192, BM=16, BN=64, BK=128, WARPS=2, STAGES=3, GROUP_M=1)
COORDS = ["pm", "pn"]


def test_one_reader_fills_the_far_side_half_the_time_two_far_apart_three_quarters():
    """Two partitions; a line's home is the one at its DRAM channel. One reader (a DRAM byte for
    each copy, miss 1): its side is the home's with chance 1/2, so 1/2 a DRAM byte crosses
    (l2_groupm_s26b's one-reader launches: 0.50-0.52). Two readers far apart (miss 1/2, one to a
    run): the far side holds a reader unless both sit at home, 1 - (1/2)^2 = 3/4 (s25's
    64x14336x8192 G1: 0.75). Two readers on one run (block 2): t = 1 / (1/2 x 2) = 1 draw, 1/2
    (s26c's G8 twin: 0.51). Four readers far apart: 1 - 1/16 = 15/16. No DRAM byte: 0. Four
    partitions (a hypothetical), two draws: (4 - 1)(1 - (3/4)^2) = 3 x 7/16 = 21/16."""
    assert far_fill_share(1, 1, 2) == 0.5
    assert far_fill_share(0.5, 1, 2) == 0.75
    assert far_fill_share(0.5, 2, 2) == 0.5
    assert far_fill_share(0.25, 1, 2) == 0.9375
    assert far_fill_share(0, 1, 2) == 0
    assert far_fill_share(0.5, 1, 4) == 1.3125
    assert far_fill_share(np.array([1, 0.5, 0.5]), np.array([1, 1, 2]), 2) == pytest.approx([0.5, 0.75, 0.5])


def test_the_co_readers_a_run_of_four_positions_holds():
    """40 tile rows x 32 columns. GROUP_M = 1: the row's tile (A) is read by 32 consecutive
    positions, 4 to a run; the column's (B) by positions 32 apart, ceil(4 / 32) = 1 to a run; at 2
    columns a row, ceil(4 / 2) = 2. GROUP_M = 8: B by 8 consecutive positions, 4 to a run; A by
    positions 8 apart, 1; GROUP_M = 2: A ceil(4 / 2) = 2, B 2. A tile of its own: 1; one every CTA
    reads: 4. A walk's t / 32: 4, t % 32: 1, t % 2: 2."""
    assert side_block(["pm"], COORDS, 40, 32, 1) == 4
    assert side_block(["pn"], COORDS, 40, 32, 1) == 1
    assert side_block(["pn"], COORDS, 40, 2, 1) == 2
    assert side_block(["pn"], COORDS, 40, 32, 8) == 4
    assert side_block(["pm"], COORDS, 40, 32, 8) == 1
    assert side_block(["pm"], COORDS, 40, 32, 2) == 2
    assert side_block(["pn"], COORDS, 40, 32, 2) == 2
    assert side_block(["pm", "pn"], COORDS, 40, 32, 1) == 1
    assert side_block([], COORDS, 40, 32, 1) == 4
    assert walk_side_block(WalkIndex("slow", 32, "t / 32")) == 4
    assert walk_side_block(WalkIndex("fast", 32, "t % 32")) == 1
    assert walk_side_block(WalkIndex("fast", 2, "t % 2")) == 2


def test_run38s_group_m_1_pick_waits_on_the_fabric():
    """run38's fp8 32x28672x8192 16x64x128 w2 s3 G1 (l2_groupm_s26c: 91.9 us measured, 6,310,076
    far sectors = 201.9 MB, 0.86 of its 235.4 MB from DRAM). B, 28,672 x 8,192 B = 234,881,024 B,
    is read by the 2 tile rows 448 positions apart (one to a run), once from DRAM: miss 1/2, far
    share 3/4: 176,160,768 B. A, 32 x 8,192 = 262,144 B, is read by 448 consecutive positions (4
    to a run) once from DRAM: t = 448 / 4 = 112 draws, far share 1 - 2^-112, 262,144 B to the byte.
    The far fills: 176,160,768 + 262,144 = 176,422,912 B / 2,350 B/ns = 75,073.58 ns, past the waves'
    and the slices' floor: the term is the difference. The GROUP_M 8 twin's pair sits on one TPC
    (block 2): 1/2 of B, 117,440,512 + 262,144 B = 117,702,656 B / 2,350 = 50,086.24 ns, under its
    waves: no term. The H100 profile states no fabric rate: no term."""
    a = analyze(FP8, None, H200, RUN38, check=False)
    terms = {t.name: t for t in a.terms}
    fabric_ns = 176_422_912 / 2_350
    assert fabric_ns == pytest.approx(75_073.58, abs=0.01)
    before = sum(float(t.ns) for n, t in terms.items() if n in ("waves", "tail wave", "l2 slices"))
    assert float(terms["l2 fabric"].ns) == pytest.approx(fabric_ns - before, rel=1e-6)
    assert "176.4 MB / 2.35 TB/s = 75.07 us" in terms["l2 fabric"].detail
    total = sum(float(t.ns) for t in a.terms)
    assert float(a.metrics["performance.predicted_ns"]) == pytest.approx(total, abs=1)
    (info,) = wave_reuse(a.root, a.kernel, a.params, H200, 7).values()
    assert sorted(info.side_block.values()) == [1, 4]
    assert 117_702_656 / 2_350 == pytest.approx(50_086.24, abs=0.01)
    g8 = analyze(FP8, None, H200, dict(RUN38, GROUP_M=8), check=False)
    assert not [t for t in g8.terms if t.name == "l2 fabric"]
    h100 = analyze(FP8, None, H100, RUN38, check=False)
    assert not [t for t in h100.terms if t.name == "l2 fabric"]
