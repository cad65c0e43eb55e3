"""L2 reuse across waves (tfx.analysis.l2_reuse.cross_wave_share, straddle_share, wave_reuse's
``cross``/``l2_only`` fields) and the trips that then wait the L2 round trip, not DRAM's
(tfx.analysis.memory_parallelism.trip_miss).

H200 facts used: L2 capacity 62,914,560 B (60 MiB) in 2 partitions (hw_profiles/h200_sxm.toml
memory.l2): a previous wave's tiles have 62,914,560 / 2 = 31,457,280 B of room; 132 SMs.
"""

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import memory_parallelism
from tfx.analysis.analyze import analyze
from tfx.analysis.l2_reuse import (cross_value_share, cross_wave_share, describe_cross, straddle_share,
                                   wave_reuse)
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")
KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def test_straddle_share_counts_the_ctas_in_the_row_the_previous_wave_ended_in():
    """132 CTAs a wave on rows of 64: wave i starts at 132 i, (-132 i mod 64) CTAs remain in the
    row the previous wave was in. 132 = 4 mod 64, so the remainders are 0, 60, 56, ..., 4: the
    multiples of d = gcd(132, 64) = 4 below 64 (n = 16 of them), each at most 60 < 132 CTAs:
    mean (0 + 4 + ... + 60) / 16 = 4 x 120 / 16 = 30 CTAs of 132."""
    assert straddle_share(132, 64) == pytest.approx(30 / 132)


def test_straddle_share_with_a_row_longer_than_the_wave():
    """W = 4 CTAs on rows of 6: waves start at 0, 4, 8 (then 12 = 0 again): remainders 0, 2, 4,
    each capped at W = 4: min(4, .) = 0, 2, 4, mean 2 CTAs of 4 = 0.5. The formula: d = 2,
    n = 3, w = min(4 / 2, 3) = 2: (2 x 2 x 1 / 2 + (3 - 2) x 4) / 3 = 2."""
    assert straddle_share(4, 6) == pytest.approx(0.5)
    assert straddle_share(np.array([4, 132]), np.array([6, 64])) == pytest.approx([0.5, 30 / 132])


def test_a_fast_index_is_shared_where_the_wave_covers_its_period():
    """Columns of a row-major 32 x 64 grid (2048 positions), 132 CTAs a wave: the wave reads all
    64 columns, and so did the previous 132 positions: 64 / 64 = 1, times the waves that follow
    one, 1 - 132 / 2048 = 0.935546875. A 40-CTA wave on the same 64 columns: the previous 40
    positions reached the same column 64 positions back only for 40 - (64 - 40) = 16 of its 40
    CTAs: 0.4 x (1 - 40 / 2048) = 0.4 x 0.98046875 = 0.3921875."""
    assert cross_wave_share("fast", 132, 64, 2048) == pytest.approx(0.935546875)
    assert cross_wave_share("fast", 40, 64, 2048) == pytest.approx(0.3921875)
    assert cross_wave_share("fast", 20, 64, 2048) == 0          # 20 - 44 < 0: nothing shared


def test_a_slow_index_of_one_row_is_always_shared_and_a_wave_of_a_whole_run_shares_nothing():
    """One row (span 224 <= period 224): every CTA of every later wave reads the same row tile:
    1 x (1 - 132 / 224) = 92 / 224. A wave as long as the run follows no wave: 0."""
    assert cross_wave_share("slow", 132, 224, 224) == pytest.approx(92 / 224)
    assert cross_wave_share("same", 132, 1, 132) == 0


def test_a_trip_whose_tiles_all_come_from_the_previous_wave_waits_the_l2_round_trip():
    """trip_miss: 1 when any byte misses, less the share of trips whose every tile the
    previous wave left in L2: 1 - 0.25 = 0.75; none when no byte misses."""
    assert memory_parallelism.trip_miss(8448, 40960, 0.25) == 0.75
    assert memory_parallelism.trip_miss(0, 40960, 0.25) == 0.0
    assert memory_parallelism.trip_miss(np.array([0, 5, 5]), np.array([10, 10, 10]),
                                        np.array([0.5, 0.5, 0])).tolist() == [0, 0.5, 1]


def test_gemm_4096_group_8_one_cta_per_sm():
    """gemm.tile 4096^3, 128 x 128 tiles, BK 64, GROUP_M 8: a 32 x 32 grid in groups of
    8 rows x 32 columns = 256 positions; one CTA per SM: W = 132 <= 256 (inside a group).
    Within the wave: rows min(8, 132) = 8, columns min(32, cdiv(132, 8) = 17) = 17.
    A (row, advancing every position with period 8, span 256): the wave reads 8 rows, the
    previous 132 read all 8: max(0, 8 - max(0, 8 - 132)) / 8 = 1, x (1 - 132 / 256) = 124 / 256
    = 0.484375. B (column, advancing every 8 positions): straddle_share(132, 8): d = 4, n = 2,
    w = 2: (4 x 2 x 1 / 2) / 2 = 2 CTAs of 132, x 124 / 256: 2 / 132 x 0.484375 = 0.0073390.
    The previous wave's loop reads (8 + 17) tiles x 16,384 B x 64 trips = 26,214,400 B <=
    31,457,280 B of room: they stay. DRAM share of A: 8 / 132 x (1 - 0.484375) = 8 / 256 =
    0.03125 (an index that advances every position: its values' share is its CTAs'). Of B, by
    its values, not its
    CTAs (cross_value_share): wave i starts 132 i mod 8 = 4 i mod 8 into a column, so half the
    waves (1 - gcd(132, 8) / 8 = 1 - 4 / 8) share the column they start in, 1 of 17:
    0.5 / 17 x 0.484375 of the wave's columns; (17 - 0.5 x 0.484375) / 132 = 16.7578125 / 132 =
    0.126953125 (the CTA share would leave 17 / 132 x (1 - 0.0073390) = 0.1278427). Trips that
    wait only L2 (CTAs): 0.484375 x 0.0073390 = 0.0035548."""
    a = analyze(parse_file(KERNELS / "gemm.tile"), None, H200, {"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8})
    (info,) = wave_reuse(a.root, a.kernel, a.params, a.profile, 1).values()
    load_a, load_b = sorted(info)
    assert info.cross[load_a] == pytest.approx(0.484375)
    assert info.cross[load_b] == pytest.approx(2 / 132 * 0.484375)
    assert info.cross_window == (26_214_400, 31_457_280, 2)
    assert info[load_a] == pytest.approx(0.03125)
    assert info[load_b] == 16.7578125 / 132
    (l2_only,) = info.l2_only.values()
    assert l2_only == pytest.approx(0.484375 * 2 / 132 * 0.484375)
    lines = describe_cross(info)
    assert "= 48.4%" in lines[0] and "= 0.7%" in lines[1]
    assert "26.21 MB vs 31.46 MB of L2 / 2 partitions" in lines[2] and "they fit" in lines[2]


def test_the_previous_waves_tiles_evicted_when_its_loop_does_not_fit():
    """gemm.tile 4096^3, 128 x 64 tiles, BK 128, GROUP_M 1 (row-major: groups of 1 row x 64
    columns), one CTA per SM: W = 132 > 64, so the wave spans whole rows: 3 rows (cdiv(132, 64))
    and 64 columns; their loop reads (3 x 32,768 + 64 x 16,384) B x 32 trips = 36,700,160 B >
    31,457,280: evicted before the next wave, no share crosses, and the DRAM shares are the
    launch's first touches, counted over its waves exactly (tile_walk.slow_visits /
    fast_visits): 32 x 64 = 2,048 positions, 2048 // 132 = 15 full waves (1,980 positions) and a
    last one of 68; rows 15 + 1980 // 64 - (15 x gcd(132, 64) = 60) // 64 = 15 + 30 - 0 = 45,
    the last wave 2047 // 64 - 30 + 1 = 2 more: 47 / 2,048 (a wave's 3 / 132 = 2.27%, exact
    2.29%: waves starting mid-row span 3 rows, 4 when they start past 60 % 64); columns 15 x 64
    + min(68, 64) = 1,024 / 2,048 = 1 / 2 (64 / 132 = 48.5%: the last wave reads all 64 with
    68 CTAs)."""
    a = analyze(parse_file(KERNELS / "gemm.tile"), None, H200,
                {"BM": 128, "BN": 64, "BK": 128, "GROUP_M": 1})
    (info,) = wave_reuse(a.root, a.kernel, a.params, a.profile, 1).values()
    load_a, load_b = sorted(info)
    assert info.cross_window[0] == 36_700_160
    assert info.cross == {load_a: 0, load_b: 0}
    assert info[load_a] == Fraction(47, 2048) and info[load_b] == Fraction(1, 2)
    assert "they do not fit" in describe_cross(info)[-1]


def test_sweeps_agree_with_single_points():
    """Arrays of parameters (the explorer's sweeps) give the same shares as each point alone."""
    params = {"BM": np.array([128, 128]), "BN": np.array([128, 64]), "BK": np.array([64, 128]),
              "GROUP_M": np.array([8, 1])}
    a = analyze(parse_file(KERNELS / "gemm.tile"), None, H200, params)
    (info,) = wave_reuse(a.root, a.kernel, a.params, a.profile, 1).values()
    load_a, load_b = sorted(info)
    assert np.asarray(info.cross[load_a]) == pytest.approx([0.484375, 0])
    # the DRAM shares too: GROUP_M 8 the wave's (8 / 132 x (1 - 0.484375), 16.7578125 / 132,
    # the worked example above), GROUP_M 1 the launch's exact 47 / 2,048 and 1 / 2 (the test above)
    assert np.asarray(info[load_a]) == pytest.approx([8 / 132 * (1 - 0.484375), 47 / 2048])
    assert np.asarray(info[load_b]) == pytest.approx([16.7578125 / 132, 1 / 2])


def test_a_group_of_one_rows_last_wave_reads_its_own_columns():
    """128x28672x8192, 64 x 128 x 64, GROUP_M 1, 2 CTAs a SM (l2_groupm's row: Nsight Compute
    counted 869 MB from DRAM): a 2 x 224 grid of 448 positions in waves of 264. Wave 0 (0-263)
    reads rows 0 and 1 and all 224 columns; wave 1 (264-447, 184 CTAs) row 1 and 184 columns.
    The previous wave's loop, (2 x 8,192 + 224 x 16,384) B x 128 trips = 471,859,200 B >
    31,457,280, is evicted: nothing crosses, and the first touches are rows 1 + 264 // 224 -
    8 // 224 = 2, + 447 // 224 - 1 + 1 = 1: 3 of 448; columns 224 + min(184, 224) = 408 of 448
    (a wave's share, 224 / 264, counted 380.1: the last wave's columns as shared as a full
    wave's). DRAM bytes: 408 x 128 x 16,384 + 3 x 128 x 8,192 = 855,638,016 + 3,145,728 =
    858,783,744 B (the wave's share: 801.0 MB)."""
    a = analyze(parse_file(KERNELS / "gemm.tile"), None, H200,
                {"M": 128, "N": 28672, "K": 8192, "BM": 64, "BN": 128, "BK": 64, "WARPS": 4,
                 "STAGES": 4, "GROUP_M": 1})
    (info,) = wave_reuse(a.root, a.kernel, a.params, a.profile, 2).values()
    load_a, load_b = sorted(info)
    assert info.cross_window[0] == 471_859_200
    assert info[load_a] == Fraction(3, 448) and info[load_b] == Fraction(408, 448)
    assert 448 * 128 * (info[load_b] * 16384 + info[load_a] * 8192) == 858_783_744


def test_the_waves_facts_are_named_fields_not_keys():
    """wave_reuse's result maps only load op ids to their DRAM shares; the wave facts are
    WaveReuse's fields (they were keys ``__window__``, ``__cross__``, ... in the same mapping).
    gemm.tile's default launch (8192^3, 128 x 256 x 64, GROUP_M 8) has two loads, A and B."""
    a = analyze(parse_file(KERNELS / "gemm.tile"), None, H200, {})
    (info,) = wave_reuse(a.root, a.kernel, a.params, a.profile, 1).values()
    assert len(info) == 2 and not [k for k in info if str(k).startswith("__")]
    assert info.window is not None and info.cross_window[1:] == (31_457_280, 2)
    assert set(info.cross) == set(info) and info.walk is None and info.handoff is None


def test_a_slow_index_keeps_the_value_a_wave_starts_in_not_its_ctas():
    """cross_value_share against cross_wave_share for an index advancing every P positions.
    flash_prefill-like: 264 CTAs a wave on heads of 512 q-blocks (span 8,192): d = gcd(264, 512)
    = 8; a wave spans (264 + 512 - 8) / 512 = 1.5 heads on average and starts mid-head unless
    264 i = 0 mod 512, i.e. 1 - 8 / 512 = 63 / 64 of the waves share one head: 63 / 64 / 1.5 =
    0.65625 of the wave's heads, x (1 - 264 / 8192) = 0.9677734 -> 0.6351. Their new heads:
    1.5 - 63 / 64 x 0.9677734 = 0.5473 a wave, W / P = 0.515625 but for the first wave of the
    span: each head's K and V once. The CTA share (straddle_share: d = 8, n = 64, w = 33:
    (8 x 33 x 32 / 2 + 31 x 264) / (64 x 264) = 12,408 / 16,896 = 0.734375, x 0.9677734) would
    leave 1.5 x (1 - 0.7107) = 0.434 heads a wave: fewer than the heads there are. An index of
    one value (span <= period) keeps it whole: 1 x (1 - W / span); a fast one agrees with the
    CTA share."""
    first = 1 - 264 / 8192
    assert cross_value_share("slow", 264, 512, 8192, 1.5) == pytest.approx(63 / 64 / 1.5 * first)
    assert straddle_share(264, 512) == pytest.approx(12408 / 16896)
    assert 1.5 - 1.5 * cross_value_share("slow", 264, 512, 8192, 1.5) == pytest.approx(1.5 - 63 / 64 * first)
    assert cross_value_share("slow", 100, 512, 400, 1) == pytest.approx(1 - 100 / 400)
    assert cross_value_share("fast", 132, 8, 256, 8) == cross_wave_share("fast", 132, 8, 256)
    got = cross_value_share("slow", np.array([264, 132]), np.array([512, 8]), np.array([8192, 256]),
                            np.array([1.5, 17]))
    assert np.asarray(got) == pytest.approx([63 / 64 / 1.5 * first, 0.5 / 17 * 124 / 256])

