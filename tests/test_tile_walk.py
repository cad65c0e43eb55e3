"""L2 reuse of a persistent kernel's tile walk (tfx.analysis.tile_walk; docs/analysis.md,
"L2 reuse of a tile walk"): kernels/persistent_gemm.tile's CTAs walk t = sm + i x CTAS, so a
round is CTAS consecutive tiles of the row-major TILES_M x TILES_N grid; A follows
t / TILES_N (its row), B t % TILES_N (its column).

H200 facts used: 132 SMs; L2 62,914,560 B (60 MiB) in 2 partitions, so the previous round's
tiles have 31,457,280 B of room (hw_profiles/h200_sxm.toml memory.l2).
"""

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import tile_walk
from tfx.analysis.analyze import analyze
from tfx.analysis.l2_reuse import wave_reuse
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")
KERNELS = Path(__file__).resolve().parent.parent / "kernels"
PERSISTENT = parse_file(KERNELS / "persistent_gemm.tile")

# issue15/run8's 1024x28672x4096 row (measured 822.4 us, 8 warps; 824.7 us on 4 warps)
WIDE = {"M": 1024, "N": 28672, "K": 4096, "BM": 64, "BN": 256, "BK": 64, "WARPS": 8, "STAGES": 3,
        "NUM_SMS": 132}


def _walk(params):
    a = analyze(PERSISTENT, None, H200, params)
    (info,) = wave_reuse(a.root, a.kernel, a.params, a.profile, 1).values()
    rounds, W, walked = info.walk
    ops = {tensor: op for op, (_, tensor, _) in walked.items()}
    return a, info, rounds, W, walked, ops


def test_slow_index_rows_a_round_spans_on_average():
    """132 consecutive tiles on rows of 112: round i starts 132 i mod 112 = 20 i mod 112 tiles
    into a row, the multiples of gcd(132, 112) = 4 below 112 (28 of them, equally often), and
    spans ceil((o + 132) / 112) rows: 3 rows for o = 96, 100, 104, 108, 2 for the other 24:
    (4 x 3 + 24 x 2) / 28 = 60 / 28 = 2.142857; the closed form (132 + 112 - 4) / 112 =
    240 / 112, the same. A grid of only 2 rows (224 tiles) caps it at 2. 114 tiles on rows of
    224: gcd 2, (114 + 224 - 2) / 224 = 336 / 224 = 1.5."""
    assert tile_walk.slow_distinct(132, 112, 1792) == pytest.approx(240 / 112)
    brute = sum(math.ceil((o + 132) / 112) for o in range(0, 112, 4)) / 28
    assert brute == pytest.approx(240 / 112)
    assert tile_walk.slow_distinct(132, 112, 224) == 2
    assert tile_walk.slow_distinct(114, 224, 1792) == pytest.approx(1.5)
    assert np.asarray(tile_walk.slow_distinct(np.array([132, 114]), np.array([112, 224]),
                                              np.array([1792, 1792]))) == pytest.approx([240 / 112, 1.5])


def _waves(total, W):
    """The launch's waves as (first, last) positions: W consecutive positions each."""
    return [(s, min(s + W, total) - 1) for s in range(0, total, W)]


def test_visits_count_each_waves_values_exactly():
    """A 2 x 224 grid (448 positions) in waves of 264 (128x28672x8192, 64 x 128, 2 CTAs on 132
    SMs): the row index advances every 224 positions. Wave 0 (0-263) spans rows 0 and 1, wave
    1 (264-447) row 1 only: 3 (wave, row) pairs; the closed form: F = 448 // 264 = 1, d =
    gcd(264, 224) = 8, 1 + 264 // 224 - 8 // 224 = 1 + 1 - 0 = 2, the last wave 447 // 224 -
    264 // 224 + 1 = 1 - 1 + 1 = 1: 3. Its column (period 224): 1 x min(264, 224) + min(184,
    224) = 408 (the lock-step wave's 224 / 264 over 448 positions counted 380.1). The walk of
    1,792 tiles in rounds of 132 on rows of 112: 29 rows, 1,532 columns (the test below).
    Every count against the waves enumerated: rows floor(last / P) - floor(first / P) + 1,
    columns min(size, P)."""
    assert tile_walk.slow_visits(448, 264, 224) == 3
    assert tile_walk.fast_visits(448, 264, 224) == 408
    assert tile_walk.slow_visits(1792, 132, 112) == 29
    assert tile_walk.fast_visits(1792, 132, 112) == 1532
    for total, W, P in [(448, 264, 224), (1792, 132, 112), (1024, 132, 32), (4608, 528, 48),
                        (896, 132, 56), (256, 132, 4), (14336, 528, 224), (100, 7, 10)]:
        waves = _waves(total, W)
        assert tile_walk.slow_visits(total, W, P) == sum(b // P - a // P + 1 for a, b in waves)
        assert tile_walk.fast_visits(total, W, P) == sum(min(b - a + 1, P) for a, b in waves)
    got = tile_walk.slow_visits(np.array([448, 1792]), np.array([264, 132]), np.array([224, 112]))
    assert list(np.asarray(got)) == [3, 29]


def test_the_walks_indices_are_read_from_the_windows():
    """A[t / TILES_N * BM : BM, k * BK : BK]: slow, period TILES_N = 28672 / 256 = 112;
    B[k * BK : BK, t % TILES_N * BN : BN]: fast, period 112; the round is the mesh's 132 CTAs
    over TILES = 16 x 112 = 1,792 tiles."""
    _, _, rounds, W, walked, ops = _walk(WIDE)
    assert (rounds.loop_var, rounds.var, W, rounds.tiles) == ("t", "sm", 132, 1792)
    index_a, index_b = walked[ops["A"]][2], walked[ops["B"]][2]
    assert (index_a.kind, index_a.period, index_a.text) == ("slow", 112, "t / TILES_N")
    assert (index_b.kind, index_b.period, index_b.text) == ("fast", 112, "t % TILES_N")


def test_wide_gemm_streams_b_from_dram_each_round():
    """1024x28672x4096, 64 x 256 x 64, 132 CTAs (the issue-15 row predicted 547 us with every
    load taken as one tile all CTAs share, a 98.0% hit ratio; measured 822-825 us).
    Within a round: A 240/112 = 2.142857 rows of 132 reads; B min(132, 112) = 112 columns of
    132. Across rounds: B's column recurs 112 tiles later, but the round's loop reads 112 x
    32,768 B (64 x 256 x 2) x 64 trips = 234,881,024 B of B and 2.142857 x 8,192 B x 64 =
    1,123,474.3 B of A = 236,004,498.3 B > 31,457,280 B: evicted, so every round's first touches
    go to DRAM, counted over the walk's 1,792 tiles exactly: 1792 // 132 = 13 full rounds and a
    last one of 1792 - 1716 = 76 tiles. A: 13 + 1716 // 112 - (13 x 4) // 112 = 13 + 15 - 0 =
    28 rows in the full rounds, the last (tiles 1716-1791) 1791 // 112 - 15 + 1 = 1 more: 29 /
    1,792 = 1.618% (a round's mean 240 / 112 / 132 = 1.623%); B: 13 x 112 + min(76, 112) =
    1,532 / 1,792 = 85.49% (112 / 132 = 84.85%), B's DRAM bytes 1,532 x 32,768 B x 64 =
    3,212,836,864 B (3.21 GB; Nsight Compute measured 3.23 GB for A and B, l2_groupm). The
    round's window at 3 stages: (112 x 32,768 + 2.142857 x 8,192) x 3 = 11,062,710.9 B <=
    62,914,560: the within-round hits hold."""
    a, info, _, _, _, ops = _walk(WIDE)
    assert info[ops["A"]] == Fraction(29, 1792)
    assert info[ops["B"]] == Fraction(1532, 1792)
    assert info.cross == {ops["A"]: 0, ops["B"]: 0}
    assert info.cross_window[0] == pytest.approx(112 * 32768 * 64 + 240 / 112 * 8192 * 64)
    assert info.window[0] == pytest.approx((112 * 32768 + 240 / 112 * 8192) * 3)
    # the breakdown shows the arithmetic
    lines = [t.detail for t in a.terms if t.name == "l2 tile walk"]
    assert lines[0].startswith("line 36: CTA sm walks t = sm + i x 132")
    assert "(132 + 112 - 4) / 112 = 2.14 values on average" in lines[1] and "= 1.6% of its reads" in lines[1]
    assert "min(132, 112) = 112 distinct tiles, 112 / 132 = 84.8% of its reads from DRAM" in lines[2]
    assert "13 full rounds and a last one of 76 tiles: (13 x 112 + 76) / 1,792 = 85.5%" in lines[2]
    assert "13 full rounds and a last one of 76 tiles: 29 values / 1,792 = 1.6%" in lines[1]


def test_a_narrow_gemm_keeps_b_across_rounds():
    """8192x512x512, 128 x 128 x 64: a 64 x 4 grid of 256 tiles, 132 CTAs. B's column (period 4)
    repeats within the round: 4 distinct of 132; the previous 132 tiles read all 4 columns:
    max(0, min(132, 4) - max(0, 4 - 132)) / 4 = 1, x (1 - 132 / 256) = 0.484375. A's row:
    (132 + 4 - 4) / 4 = 33 rows, the one a round starts in shared only where it starts
    mid-row, and 132 = 0 mod 4 never does: straddle_share(132, 4) = 0. The round's loop reads
    (4 + 33) x 16,384 B x 8 trips = 4,849,664 B <= 31,457,280: kept. B's DRAM share:
    4 / 132 x (1 - 0.484375) = 4 / 132 x 66 / 128 = 1 / 64 (B's 256 reads of a 4-column
    footprint: each byte once); A's 33 / 132 = 1 / 4 (each row once)."""
    _, info, _, _, _, ops = _walk({"M": 8192, "N": 512, "K": 512, "BM": 128, "BN": 128, "BK": 64,
                                   "WARPS": 8, "STAGES": 3, "NUM_SMS": 132})
    assert info.cross[ops["B"]] == pytest.approx(0.484375)
    assert info.cross[ops["A"]] == 0
    assert info.cross_window[0] == pytest.approx((4 + 33) * 16384 * 8)
    assert info[ops["B"]] == pytest.approx(1 / 64)
    assert info[ops["A"]] == pytest.approx(1 / 4)


def test_a_mesh_kernel_has_no_walk():
    """gemm.tile's loads name its mesh coordinates: no tile walk (``WaveReuse.walk`` None)."""
    a = analyze(parse_file(KERNELS / "gemm.tile"), None, H200, {"BM": 128, "BN": 128, "BK": 64})
    (info,) = wave_reuse(a.root, a.kernel, a.params, a.profile, 1).values()
    assert info.walk is None
    assert not [t for t in a.terms if t.name == "l2 tile walk"]


def test_a_walk_whose_rounds_fit_reads_each_tile_once():
    """l2_groupm_s12's 8192x2048x4096, 64 x 64 x 32, 114 CTAs (Nsight Compute: 0.084 GB from DRAM,
    A's 67.1 MB and B's 16.8 MB each once): TILES = 128 x 32 = 4,096, 128 trips of 4,096-B tiles.
    A (t / 32): d = gcd(114, 32) = 2, (114 + 32 - 2) / 32 = 4.5 rows a round; B (t % 32): 32
    columns, each read by 114 / 32 CTAs. The round's loop reads (4.5 + 32) x 4,096 B x 128 =
    19,136,512 B <= 31,457,280: the previous round's tiles stay. B: every round reads all 32
    columns, all kept: 32 / 114 x (1 - 1 x (1 - 114 / 4096)) = 32 / 4096, each column once. A:
    1 - 2 / 32 of the rounds start mid-row and share it (cross_value_share): (4.5 - 0.9375 x
    (1 - 114 / 4096)) / 114 = (4.5 - 0.9114) / 114 = 0.0314793 (each row once: 1 / 32 =
    0.03125, but for the first round). DRAM bytes 4,096 x 128 x 4,096 x (0.0314793 + 0.0078125)
    = 84.38 MB (the CTA share, straddle_share(114, 32) = 240 / 1,824, counted A's rows 0.0344 a
    read: 90.7 MB)."""
    _, info, _, _, _, ops = _walk({"M": 8192, "N": 2048, "K": 4096, "BM": 64, "BN": 64, "BK": 32,
                                   "WARPS": 4, "STAGES": 5, "NUM_SMS": 114})
    first = 1 - 114 / 4096
    assert info.cross_window[0] == pytest.approx(36.5 * 4096 * 128)
    assert info[ops["B"]] == pytest.approx(32 / 4096)
    assert info[ops["A"]] == pytest.approx((4.5 - 0.9375 * first) / 114)
    assert 4096 * 128 * 4096 * (info[ops["A"]] + info[ops["B"]]) == pytest.approx(84.38e6, rel=1e-3)

