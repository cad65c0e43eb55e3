"""Counts of one in the singular, through the one formatter (tfx.hw.units.format_counted), where
reviews found them built by hand: the cross-wave formula's "the previous 1 positions", the tile
walk's "1 tiles" and "1 values", an occupancy hint that changes nothing read "1.00x slower", the
GROUP_M = 1 drift line's rate classes and the persistent walk's last round of one tile
(session 13); persistent_rounds' own ``_s``, occupancy's summary and sentences, cta_launch /
row_body / lockstep_chain's 'CTAs' (session 14); and explore's titles wrapped at the terminal,
not at the table's width. Every expected line is written from the inputs by hand."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from test_occupancy import H200

from tfx.analysis import cta_launch, l2_reuse, lockstep_chain, row_body, tile_walk
from tfx.analysis.analyze import _hint_change
from tfx.analysis.l2_reuse import describe_drift
from tfx.analysis.occupancy import Resources, compute_occupancy, hint_budget, requirement
from tfx.analysis.persistent_rounds import Rounds, detail
from tfx.bundled import bundled_kernel
from tfx.cli.main import main
from tfx.hw.units import format_time_ns


def _classes(W, units):
    facts = SimpleNamespace(W=W, units=units, P=0.5, loop_bytes=1e9, room=3.1e7, stagger=0, waves=1)
    rate = SimpleNamespace(b=2, lone_ns=1.0, shared_ns=2.0, delta=0.5, share=0.3)
    line = describe_drift(facts, rate, format_time_ns)
    return line.split("drift apart; ", 1)[1].split(":", 1)[0]


def test_rate_classes_agree_in_number():
    """133 CTAs on 132 SMs: q = 133 // 132 = 1, rem = 133 - 132 = 1 -> one SM holds 2, 131 hold
    1; 264 on 132: q = 2, rem 0; 132 on 132: q = 1, rem 0; one CTA: q = 0, rem = 1."""
    assert _classes(133, 132) == "1 SM holds 2 CTAs, 131 hold 1"
    assert _classes(264, 132) == "every SM holds 2 CTAs"
    assert _classes(132, 132) == "every SM holds 1 CTA"
    assert _classes(1, 132) == "1 SM holds 1 CTA"
    assert _classes(224, 132) == "92 SMs hold 2 CTAs, 40 hold 1"   # 224 - 132 = 92


def test_a_last_round_of_one_tile():
    """7 tiles on 3 CTAs: 2 full rounds (7 // 3) and a last round of 7 mod 3 = 1 tile."""
    rounds = Rounds(loop_id="t", line=12, var="sm", ctas=3, fewest=2, mean=7 / 3, extra=1)
    text = detail(rounds, 100.0, 100.0, lambda ns: f"{ns:.0f} ns")
    assert "7 tiles on 3 CTAs are 2 full rounds and a last round of 1 tile (7 mod 3)" in text
    assert "(only 1 pulling)" in text


def ns(x: float) -> str:
    return f"{x:g} ns"


# an H200's limits (tests/test_occupancy.py) with one CTA per SM at most
ONE_CTA = dataclasses.replace(H200, max_blocks_per_sm=1)


def test_one_tile_on_one_cta_is_one_full_round():
    """1 tile on 1 CTA: fewest = 1 // 1 = 1 full round, extra = 1 mod 1 = 0; the CTA runs 1 tile
    of 100 ns (was '1 tile on 1 CTA is 1 full round' only through persistent_rounds' own _s)."""
    rounds = Rounds(loop_id="t", line=3, var="sm", ctas=1, fewest=1, mean=1.0, extra=0)
    assert detail(rounds, 100.0, 100.0, ns) == (
        "line 3: 1 tile on 1 CTA is 1 full round: every CTA runs 1 tile of 100 ns")


def test_occupancy_at_one_cta_per_sm():
    """32 threads, 32 registers, no shared memory on an SM holding at most 1 CTA: threads allow
    2048 / 32 = 64, warps 64 / 1 = 64, registers 65536 / (32 x 32 = 1024) = 64, shared memory
    233472 / 1024 reserved = 228, blocks 1: 1 CTA of 1 warp, 1 / 64 = 1.5625% -> 1.6%."""
    occ = compute_occupancy(ONE_CTA, Resources(32, 32, 0))
    assert occ.summary() == "1 CTA/SM (1 of 64 warps, 1.6%), limited by blocks"
    assert occ.next_cta["blocks"].sentence == (
        "2 CTAs exceed the hardware maximum of 1 CTA per SM, whatever their size")
    assert hint_budget(ONE_CTA, Resources(32, 32, 0), 2).sentence == (
        "occupancy=2 is unattainable on this GPU: an SM holds at most 1 CTA")


def test_one_warp_per_cta_is_singular():
    """64 CTAs on 64 warp slots: 64 // 64 = 1 warp (32 threads) each; the kernel's 64 threads
    are 64 / 32 = 2 warps. 1 CTA on 64 warps: '1 CTA needs' (the verb agrees)."""
    res = Resources(64, 32, 0)
    assert requirement(ONE_CTA, res, "warps", 64).sentence == (
        "64 CTAs need at most 1 warp (32 threads) per CTA; this kernel uses 2 (64 threads)")
    assert requirement(ONE_CTA, Resources(32, 32, 0), "warps", 1).sentence == (
        "1 CTA needs at most 64 warps (2,048 threads) per CTA; this kernel uses 1 (32 threads)")


def test_cta_launch_floor_of_one_cta():
    """1 CTA at a launch every 80 ns: 1 x 80 = 80 ns, and the verb agrees ('1 CTA takes')."""
    m = SimpleNamespace(kind="gpu", profile={"launch.cta_interval": 80.0})
    assert cta_launch.describe(1, m, ns) == (
        "the SM starts a CTA at most every 80 ns: 1 CTA takes at least 1 x 80 ns = 80 ns, "
        "bound by the CTA launch rate")
    assert cta_launch.describe(3, m, ns).startswith(
        "the SM starts a CTA at most every 80 ns: 3 CTAs take at least 3 x 80 ns = 240 ns")


def test_lock_step_of_one_cta():
    """chain = 10 + 2 + 3 = 15 ns against the issue of 1 CTA 10 ns: +5 ns."""
    step = lockstep_chain.LockStep(issue_one=10, element_excess=2, reduce=3, chain=15, issue=10, excess=5)
    assert lockstep_chain.describe(step, 1, "softmax", ns) == (
        "softmax's CTAs compute together: one CTA's chain, issue 10 ns + element chain beyond it 2 ns + "
        "reductions 3 ns = 15 ns, against the compute issue of 1 CTA per SM 10 ns: +5 ns a lock-step batch")


def test_row_batch_of_one_cta():
    """max(throughput 100, chain 30 + 20 = 50, queue 100) = 100 ns; the throughput is not below
    the chain, so the throughput bounds it."""
    bt = row_body.BodyTime(ns=100, throughput=100, bound="memory", chain=50, latency=30,
                           chain_parts={"copy": 20}, queued=100)
    assert row_body.describe(bt, 1, ns) == (
        "1 CTA resident per SM, overlapping: batch = max(throughput 100 ns (memory over 1 CTA), one CTA's "
        "chain 50 ns = latency 30 ns + copy 20 ns, queue of 1 CTA 100 ns at the memory pipe) = 100 ns, "
        "bound by the throughput")


def test_explore_titles_wrap_at_the_terminal_not_the_table(capsys, monkeypatch):
    """copy.tile sweeps BLOCK and WARPS only: its table is about 63 columns wide, and rich wrapped
    the Pareto title at that width although the terminal has 80: 'Pareto frontier (time vs smem):
    1 point (+1 configuration' / 'tied with them)'. Now the title is a line of its own, whole
    where it fits 80 (its text is at most 73 characters: 'Pareto frontier (time vs smem): '
    (32) + '1 point' .. '99 points' + ' (+N configurations tied with them)'), no line passes 80,
    and no line ends in the table's padding."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["explore", str(bundled_kernel("copy.tile")), "--top", "2"]) == 0
    lines = capsys.readouterr().out.split("\n")
    title = next(x for x in lines if x.startswith("Pareto frontier"))
    assert title.endswith(("point", "points", "tied with them)")), title
    assert max(len(x) for x in lines) <= 80
    assert title == title.rstrip()


def test_an_over_capacity_peak_is_written_in_exact_bytes():
    """gemm.tile at 256x256x128, 2 stages: a stage holds A 256 x 128 x 2 B + B 128 x 256 x 2 B =
    131,072 B, two stages 262,144 B of shared memory against the H200's opt-in 232,448 B a CTA;
    as allocations, exact bytes. A GPU thread's registers are not checked this way: the register
    estimate and its spill warning speak for them (rmsnorm's defaults hold 1,024.06 B of live
    tiles a thread, over 255 x 4 B = 1,020 B, but the estimate holds 161 registers and the
    compiler 182: no warning)."""
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    h200 = load_profile("h200_sxm")
    a = analyze(parse_file(str(bundled_kernel("gemm.tile"))), None, h200, dict(BM=256, BN=256, BK=128, STAGES=2))
    assert "peak smem 262,144 B exceeds its capacity 232,448 B (reached in gemm/mesh cta/loop k)" in a.warnings
    assert not [w for w in a.warnings if w.startswith("peak rmem")]
    a = analyze(parse_file(str(bundled_kernel("rmsnorm.tile"))), None, h200, {})
    assert not [w for w in a.warnings if "exceeds its capacity" in w or "spill" in w]


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
