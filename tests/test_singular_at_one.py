"""Counts of one in the breakdown's prose read in the singular, through tfx.hw.units.format_counted
(the one count formatter): tiny sizes used to print "the previous 1 positions", "(1 CTAs x 32
threads)", "1 tiles", "1 values", and an occupancy hint that changes nothing "1.00x slower"."""

from tfx.analysis import l2_reuse, tile_walk
from tfx.analysis.analyze import _hint_change


def test_cross_wave_formula_at_a_wave_of_one():
    """A wave of W = 1 CTA on an index that wraps every P = 1 position, runs of span 4: distinct
    = min(1, 1) = 1, raw = max(0, 1 - max(0, 1 - 1)) / 1 = 1 (100.0%); the first wave of each run
    follows none: x (1 - 1 / 4) = 0.75 -> 75.0%. Window 1,000 B vs 2,000 B of L2 on 1 partition:
    they fit."""
    info = l2_reuse.WaveReuse.of({}, cross_window=(1000, 2000, 1), cross={7: 1.0},
                                 cross_how={7: (12, ("fast", 1, 4), 1)})
    lines = l2_reuse.describe_cross(info)
    assert lines[0] == ("line 12: an index that wraps every 1 position: the previous 1 position read "
                        "max(0, min(1, 1) - max(0, 1 - 1)) / 1 = 100.0% of its tiles; x (1 - 1 / 4 positions: "
                        "the first wave of each run of 4 follows none) = 75.0%")


def test_tile_walk_fast_index_of_one_tile():
    """t % 1 over a walk of 3 tiles with rounds of W = 1: min(1, 1) = 1 distinct tile, 1 / 1 =
    100.0% from DRAM; F = 3 // 1 = 3 full rounds, rest 0; visits = 3 x 1 = 3, 3 / 3 = 100.0%."""
    idx = tile_walk.WalkIndex("fast", 1, "t % 1")
    text = tile_walk.describe(5, "A", idx, 1, 3)
    assert text == ("line 5: A follows t % 1 (wraps every 1 tile): a round of 1 consecutive tile reads "
                    "min(1, 1) = 1 distinct tile, 1 / 1 = 100.0% of its reads from DRAM; counted over the "
                    "walk's 3 full rounds: (3 x 1) / 3 = 100.0%")


def test_tile_walk_slow_index_one_value_and_a_last_tile():
    """t / 4 over a walk of 5 tiles with rounds of W = 4: d = gcd(4, 4) = 4 tiles, the mean span
    (4 + 4 - 4) / 4 = 1.00 value; rows = ceil(5 / 4) = 2; F = 5 // 4 = 1 full round and a last one
    of 5 % 4 = 1 tile; visits: the full round reads 1 value, the last tile starts a new one: 2
    values, 2 / 5 = 40.0%."""
    idx = tile_walk.WalkIndex("slow", 4, "t / 4")
    text = tile_walk.describe(5, "B", idx, 4, 5)
    assert "(advances every 4 tiles): a round of 4 consecutive tiles starts a multiple of gcd(4, 4) = 4 tiles" in text
    assert "counted over the walk's 1 full round and a last one of 1 tile: 2 values / 5 = 40.0%" in text


def test_hint_change_reads_no_faster_at_one():
    """100 ns -> 80 ns: 100 / 80 = 1.25x faster; 100 -> 125: 125 / 100 = 1.25x slower (the larger
    over the smaller, never "0.80x slower"); 100 -> 100.4: 100.4 / 100 = 1.004, rounds to 1.00:
    no faster."""
    assert _hint_change(100.0, 80.0) == "1.25x faster"
    assert _hint_change(100.0, 125.0) == "1.25x slower"
    assert _hint_change(100.0, 100.4) == "no faster"
    assert _hint_change(100.0, 100.0) == "no faster"
