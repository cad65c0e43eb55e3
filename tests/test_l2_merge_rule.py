"""bench/l2_merge_rule.py: the side-by-side merge rules' shares, derived by hand (docs/analysis.md,
"A side-by-side merge rule against every stored Nsight launch")."""

from bench_script import load_bench

rule = load_bench("l2_merge_rule")


def test_group_m_order_walks_the_rows_of_a_group_first():
    # GROUP_M 8 on 4 tile rows (256 / 64): a group is the 4 rows, walked row-fastest: positions 0-3
    # are column 0's rows 0-3, position 4 is row 0 of column 1
    assert [rule.tile_of(p, 4, 64, 8) for p in range(5)] == [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1)]
    # GROUP_M 1: row-major, 64 columns a row
    assert rule.tile_of(65, 4, 64, 1) == (1, 1)


def test_pair_and_wave_shares_of_a_one_wave_launch():
    # 256x8192x8192 128x128x64 G8, one CTA an SM: 2 tile rows x 64 columns = 128 positions, one wave.
    # A and B tiles of a step are both 128 x 64 x 2 = 16,384 B.
    # The pair (positions 2c, 2c + 1) is column c's two rows: 2 A tiles + 1 B tile of its 2 x 2 copies,
    # merged 1 - 3 / 4 = 0.25. The wave: 2 A tiles + 64 B tiles of 128 x 2 copies, 1 - 66 / 256 = 0.7421875.
    # One SM's slots: one position each, nothing shared: 0.
    order = list(range(132))
    shares = rule.rule_shares(2, 64, 8, 16384, 16384, 128, order)
    assert shares["pair"] == 0.25
    assert shares["wave"] == 1 - 66 / 256
    assert shares["sm"] == 0
