"""The L2 slices' data ceiling (tfx.analysis.performance.l2_slices_ns, the ``l2 slices`` term) and the
copies a TPC pair merges before the slices (tfx.analysis.l2_reuse.pair_merged_share,
walk_pair_merged_share; docs/analysis.md, "The L2 slices' data ceiling").

H200 facts used: memory.l2.slice_bandwidth 10.71 TB/s = 10,710 B/ns (hw_profiles/h200_sxm.toml:
the sectors the slices serve plus DRAM's fills, median of the 9 grouped launches of
calibration/h200/measured/l2_groupm_s14-s18 that reach 10.0-10.8 TB/s; bench/l2_slices.py).
run23's 2560x8192x8192 64x256x64 w4 s5 compiled to 226 registers and 204,800 B of shared memory:
one CTA an SM.
"""

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.l2_reuse import pair_merged_share, walk_pair_merged_share, wave_reuse
from tfx.analysis.tile_walk import WalkIndex
from tfx.hw import load_profile
from tfx.lang import parse_file

from profile_variants import without

H200 = load_profile("h200_sxm")
# a Hopper profile without the slice rate: h100_sxm less memory.l2.slice_bandwidth
H100_NO_SLICES = without("h100_sxm", "memory.l2.slice_bandwidth")
GEMM = parse_file(Path(__file__).resolve().parent.parent / "kernels" / "gemm.tile")
RUN23 = dict(M=2560, N=8192, K=8192, BM=64, BN=256, BK=64, WARPS=4, STAGES=5, GROUP_M=1)
RUN23_RES = dict(regs=226, smem=204800)
COORDS = ["pm", "pn"]


def test_a_row_major_pair_shares_the_rows_tile_and_a_group_m_pair_the_columns():
    """Positions 2k and 2k + 1 sit on one TPC. GROUP_M = 1 (32 column tiles a row, even): the pair
    sits in one row and copies the same A tile: 1/2 of A's copies merge, none of B's. GROUP_M = 8
    (40 tile rows): the rows advance fastest, the pair copies the same B tile: 1/2 of B's, none of
    A's. A load of neither coordinate: every CTA copies it, 1/2; of both: never shared, 0."""
    assert pair_merged_share(["pm"], COORDS, 40, 32, 1) == Fraction(1, 2)
    assert pair_merged_share(["pn"], COORDS, 40, 32, 1) == 0
    assert pair_merged_share(["pn"], COORDS, 40, 32, 8) == Fraction(1, 2)
    assert pair_merged_share(["pm"], COORDS, 40, 32, 8) == 0
    assert pair_merged_share([], COORDS, 40, 32, 8) == Fraction(1, 2)
    assert pair_merged_share(["pm", "pn"], COORDS, 40, 32, 1) == 0


def test_odd_counts_straddle_and_one_row_groups_are_row_major():
    """A row of 7 tiles at GROUP_M = 1: the pairs (0, 1), (2, 3), (4, 5) share, (6, 7') straddles into
    the next row, and the next row's pairs start at an odd column: a pair straddles every 7
    positions, so 1 - 1/7 of the pairs share: 1/2 x 6/7 = 3/7 = 1/2 - 1/(2 x 7). GROUP_M = 3: 1/2 -
    1/6 = 1/3 of B. GROUP_M = 8 over one tile row (M = BM): a group of one row is row-major, the pair
    shares A. A row of one tile: no pair in a row, 0."""
    assert pair_merged_share(["pm"], COORDS, 40, 7, 1) == Fraction(3, 7)
    assert pair_merged_share(["pn"], COORDS, 40, 32, 3) == Fraction(1, 3)
    assert pair_merged_share(["pm"], COORDS, 1, 32, 8) == Fraction(1, 2)
    assert pair_merged_share(["pn"], COORDS, 1, 32, 8) == 0
    assert pair_merged_share(["pm"], COORDS, 40, 1, 1) == 0


def test_pair_merged_share_of_arrays_is_elementwise():
    """GROUP_M 1, 8, 3 at 40 rows x 32 columns: B 0, 1/2, 1/3; A 1/2, 0, 0."""
    G = np.array([1, 8, 3])
    assert pair_merged_share(["pn"], COORDS, 40, 32, G) == pytest.approx([0, 0.5, 1 / 3])
    assert pair_merged_share(["pm"], COORDS, 40, 32, G) == pytest.approx([0.5, 0, 0])


def test_a_persistent_walks_pair_shares_its_slow_index():
    """CTAs 2j, 2j + 1 take tiles t (even) and t + 1: t / 32 is the same for both (32 even): 1/2; t / 7
    differs where t + 1 is a multiple of 7, once in 7: 1/2 - 1/14 = 3/7; t % 32 differs: 0, unless
    the period is 1 (every tile the same): 1/2; a tile of its own each t: 0."""
    assert walk_pair_merged_share(WalkIndex("slow", 32, "t / 32")) == Fraction(1, 2)
    assert walk_pair_merged_share(WalkIndex("slow", 7, "t / 7")) == Fraction(3, 7)
    assert walk_pair_merged_share(WalkIndex("fast", 32, "t % 32")) == 0
    assert walk_pair_merged_share(WalkIndex("fast", 1, "t % 1")) == Fraction(1, 2)
    assert walk_pair_merged_share(WalkIndex("each", None, "t")) == 0


def test_a_walks_pair_merges_the_measured_share():
    """memory.l2.walk_pair_merged_share (0.23: Nsight's merged copies over the pair's shared A on
    thirteen walks, median 0.232): t / 32 gives 0.23; t / 7 gives 0.23 - 0.23 / 7 = 0.23 x 6/7 =
    1.38 / 7 = 0.197143; t % 32 still 0; and a walk of kernels/persistent_gemm.tile on the H200
    profile carries it on its A load (B, t % TILES_N, 0)."""
    share = Fraction(23, 100)
    assert walk_pair_merged_share(WalkIndex("slow", 32, "t / 32"), share) == Fraction(23, 100)
    assert walk_pair_merged_share(WalkIndex("slow", 7, "t / 7"), share) == Fraction(69, 350)
    assert float(Fraction(69, 350)) == pytest.approx(0.197143, abs=1e-6)
    assert walk_pair_merged_share(WalkIndex("fast", 32, "t % 32"), share) == 0
    assert H200.get("memory.l2.walk_pair_merged_share") == pytest.approx(0.23)
    from tfx.lang import parse_file
    walk = parse_file("kernels/persistent_gemm.tile")
    p = dict(M=5120, N=28672, K=4096, BM=256, BN=64, BK=32, WARPS=4, STAGES=5, NUM_SMS=132)
    a = analyze(walk, None, H200, p, resources={"threads": 128, "regs": 209, "smem": 102400, "spills": 0},
                check=False)
    (info,) = wave_reuse(a.root, a.kernel, a.params, H200, 1).values()
    assert sorted(float(v) for v in info.pair_merged.values()) == pytest.approx([0, 0.23])


def test_the_gemms_loads_carry_their_pairs_share():
    """kernels/gemm.tile: A[pm * BM, k * BK] reads the row coordinate, B[k * BK, pn * BN] the column's.
    At GROUP_M = 1 the A load merges 1/2, B 0; at GROUP_M = 8 A 0, B 1/2."""
    for group, a_share, b_share in ((1, Fraction(1, 2), 0), (8, 0, Fraction(1, 2))):
        a = analyze(GEMM, None, H200, dict(RUN23, GROUP_M=group), resources=RUN23_RES, check=False)
        (info,) = wave_reuse(a.root, a.kernel, a.params, H200, 1).values()
        shares = {op: info.pair_merged[op] for op in info.pair_merged}
        assert sorted(shares.values()) == sorted([a_share, b_share])
        (a_op,) = [op for op in shares if "%a" in op]
        assert shares[a_op] == a_share


def test_the_slices_floor_of_run23s_group_m_1_row():
    """run23 2560x8192x8192 64x256x64 w4 s5 G1 (one CTA an SM, 1,280 CTAs, 128 trips): the SMs copy
    1,280 x 128 x (64 x 64 + 64 x 256) x 2 B = 1,280 x 128 x 40,960 = 6,710,886,400 B; the TPC pair
    merges half of A's 8,192 B a trip: 1,280 x 128 x 4,096 = 671,088,640 B; C's stores 2,560 x 8,192
    x 2 B = 41,943,040 B; the fills are the launch's DRAM reads (the L2-reuse model's, an input here:
    (reads + writes) x (1 - hit) - writes, 1.393 GB). The slices move 6,710,886,400 - 671,088,640 +
    fills + 41,943,040 B at 10,710 B/ns: 697.9 us, past the waves (9 full waves and the tail,
    635.8 us): the term is the difference, and the prediction grows by it."""
    a = analyze(GEMM, None, H200, RUN23, resources=RUN23_RES, check=False)
    reads = a.metrics["memory.traffic.gmem.total.read"]
    writes = a.metrics["memory.traffic.gmem.total.write"]
    assert reads == 6_710_886_400 and writes == 41_943_040
    hit = float(a.metrics["performance.l2_hit_ratio"])
    fills = (reads + writes) * (1 - hit) - writes
    moved = 6_710_886_400 - 671_088_640 + fills + 41_943_040
    slices_ns = moved / 10_710
    terms = {t.name: t for t in a.terms}
    waves = float(terms["waves"].ns) + float(terms["tail wave"].ns)
    assert float(terms["l2 slices"].ns) == pytest.approx(slices_ns - waves, rel=1e-9)
    assert 1.3e9 < fills < 1.5e9 and 690_000 < slices_ns < 705_000
    assert "less 671.1 MB a TPC pair merges (10.0%)" in terms["l2 slices"].detail
    assert "/ 10.71 TB/s" in terms["l2 slices"].detail
    total = sum(float(t.ns) for t in a.terms)
    assert float(a.metrics["performance.predicted_ns"]) == pytest.approx(total, abs=1)   # whole ns


def test_its_group_m_8_twin_and_a_profile_without_the_rate_have_no_floor():
    """GROUP_M = 8: the pair merges half of B's 32,768 B a trip, 0.4 of the copies: 0.6 x 6.71 GB
    + 0.77 GB of fills + 0.04 GB = 4.84 GB / 10,710 B/ns = 452 us, under the waves' 636: no term.
    A profile that states no slice rate (h100_sxm less memory.l2.slice_bandwidth,
    tests/profile_variants.py): no term, whatever the bytes; h100_sxm, which states it, has one."""
    g8 = analyze(GEMM, None, H200, dict(RUN23, GROUP_M=8), resources=RUN23_RES, check=False)
    assert not [t for t in g8.terms if t.name == "l2 slices"]
    h100 = analyze(GEMM, None, H100_NO_SLICES, RUN23, resources=RUN23_RES, check=False)
    assert not [t for t in h100.terms if t.name == "l2 slices"]
    # h100_sxm itself states the GH100's slice rate and floors the same launch
    h100 = analyze(GEMM, None, load_profile("h100_sxm"), RUN23, resources=RUN23_RES, check=False)
    assert len([t for t in h100.terms if t.name == "l2 slices"]) == 1


def test_the_slices_bytes_are_derived_from_the_reads_and_dram():
    """``Demand.l2_slices`` is ``global_loads - l2_merged + dram``: 100 B read, 30 B of them merged by
    the TPC pair, 50 B to or from DRAM: 100 - 30 + 50 = 120 B. It follows the fields it derives from:
    adding twice a demand of 10 B read, 0 merged, 4 B of DRAM gives 120 + 2 x (10 + 4) = 148 B."""
    from tfx.analysis.performance import Demand
    d = Demand(global_loads=100, l2_merged=30, dram=50)
    assert d.l2_slices == 120
    d.add(Demand(global_loads=10, dram=4), 2)
    assert d.l2_slices == 148


def test_a_row_kernels_summed_transfer_holds_its_slices_bytes_and_its_launch_the_floor_under_the_waves():
    """rmsnorm 4096 x 16384 (BLOCK_M 1, 4 warps, 251 registers: run29's best row). One CTA reads its
    X row, 16,384 x 2 = 32,768 B from DRAM, and the weight row W, 32,768 B that every one of the 4,096
    CTAs reads: 32,768 / 4,096 = 8 B of it from DRAM; it stores its Y row, 32,768 B. row_body's summed
    transfer of the three ops: global reads 32,768 + 32,768 = 65,536 B, DRAM 32,768 + 8 + 32,768 =
    65,544 B, no pair merge: the slices move 65,536 + 65,544 = 131,080 B a CTA, the ops' own sum. The
    launch: 4,096 x 131,080 = 536,903,680 B / 10,710 B/ns = 50,131.06 ns, under the waves (the DRAM
    alone moves 4,096 x 65,544 = 268.5 MB at 4.24 TB/s, 63 us): no ``l2 slices`` term. A row kernel
    streams each byte through one slice for its read, once more for its fill and once for its store,
    at 10.71 TB/s against DRAM's 4.24, and its L2-hit reads (the weight row, N x 2 B a CTA) are at
    most its tile's reads R: slices 4 R / 10.71 against DRAM 2 R / 4.24, 0.79 of its DRAM time at
    most (0.59 without the weight row), so its floor never binds."""
    from tfx.analysis.performance import Demand, l2_slices_ns
    from tfx.analysis.row_body import _summed
    from tfx.analysis.machine import Machine
    x = Demand(dram=32_768, l2=32_768, global_loads=32_768)
    w = Demand(dram=8, l2=32_768, global_loads=32_768)
    y = Demand(dram=32_768, l2=32_768)
    total = _summed([(x, 1), (w, 1), (y, 1)], lambda d: True)
    assert (total.global_loads, total.dram, total.l2_slices) == (65_536, 65_544, 131_080)
    m = Machine(H200, "cta")
    assert float(l2_slices_ns(total, 4096, m)) == pytest.approx(536_903_680 / 10_710, rel=1e-12)
    assert 536_903_680 / 10_710 == pytest.approx(50_131.06, abs=0.01)
    kernel = parse_file(Path(__file__).resolve().parent.parent / "kernels" / "rmsnorm.tile")
    a = analyze(kernel, None, H200, dict(M=4096, N=16384, BLOCK_M=1, WARPS=4), resources=dict(regs=251),
                check=False)
    assert not [t for t in a.terms if t.name == "l2 slices"]
    assert float(a.metrics["performance.predicted_ns"]) > 63_000
