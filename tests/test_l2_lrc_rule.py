"""bench/l2_lrc_rule.py: the LRC timing rule's shares and its window, derived by hand (docs/analysis.md,
"A timing rule for the L2 Request Coalescer")."""
import math

from bench_script import load_bench

rule = load_bench("l2_lrc_rule")


def test_linear_rule_grows_with_the_stages_until_the_window_holds_every_co_reader():
    # wave 0.8, D 8 steps: 5 stages keep 4 tiles pending, 0.8 x 4 / 8 = 0.4;
    # 10 stages keep 9 > 8: every co-reader meets, the wave's 0.8
    assert rule.lin_share(0.8, 5, 8) == 0.8 * 4 / 8
    assert rule.lin_share(0.8, 10, 8) == 0.8


def test_exponential_rule_at_one_half():
    # d = 2 / ln 2 steps at 3 stages: 1 - e^(-2 ln 2 / 2) = 1 - 1/2, so the share is half the wave's 0.8
    assert math.isclose(rule.exp_share(0.8, 3, 2 / math.log(2)), 0.4)


def test_window_of_lrc_s23s_three_stage_walk():
    # persistent 5120x28672x4096 256x64x32 on 132 CTAs: the first wave is row 0's tiles 0-131, one A tile
    # (256 x 32 x 2 = 16,384 B) and 132 B tiles (64 x 32 x 2 = 4,096 B) of 132 x 20,480 copies:
    # wave = 1 - (16,384 + 132 x 4,096) / 2,703,360 = 1 - 557,056 / 2,703,360;
    # merged = 1 - 623,031,844 / 734,003,200 sectors (lrc_s23.csv); D = 2 x wave / merged
    wave = 1 - 557056 / 2703360
    merged = 1 - 623031844 / 734003200
    assert rule.R.rule_shares(20, 448, 1, 16384, 4096, 132, list(range(132)))["wave"] == wave
    launch = [r for r in rule.lrc_launches() if r[2]["STAGES"] == "3"][0]
    assert launch[3] == 623031844 * 32
    assert math.isclose(rule.window_of(wave, 3, merged), 2 * wave / merged)
    assert 10.49 < 2 * wave / merged < 10.51
