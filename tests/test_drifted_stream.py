"""Streaming CTAs after the first wave (tfx.analysis.drifted_stream), every expected number derived
by hand."""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import drifted_stream
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
GQA = parse_file(ROOT / "kernels" / "gqa_decode.tile")


def test_drifted_batch_is_the_longer_of_throughput_and_life():
    """Lock step 11,000 ns, throughput 8,000, life 7,000: drifted max(8,000, 7,000) = 8,000;
    with a life of 9,000 the life binds: 9,000; where no streaming loop applies, the lock step."""
    assert drifted_stream.Drift(11_000, 8_000, 7_000, True).drifted == 8_000
    assert drifted_stream.Drift(11_000, 8_000, 9_000, True).drifted == 9_000
    assert drifted_stream.Drift(11_000, 8_000, 7_000, False).drifted == 11_000


def test_drifted_batch_elementwise():
    """The same three cases as arrays: [8,000, 9,000, 11,000]."""
    d = drifted_stream.Drift(np.array([11_000.0] * 3), np.array([8_000.0] * 3),
                             np.array([7_000.0, 9_000.0, 7_000.0]), np.array([True, True, False]))
    assert list(d.drifted) == [8_000, 9_000, 11_000]


def test_loop_life():
    """First tiles' latency 700, 4 trips each max(chain round 1,181.31, pipeline 1,596.10):
    700 + 4 x 1,596.10 = 7,084.40; with a chain of 2,000 the chain binds: 700 + 8,000 = 8,700."""
    assert drifted_stream.loop_life_ns(700, 4, 1181.31, 1596.10) == pytest.approx(7084.40, abs=1e-9)
    assert drifted_stream.loop_life_ns(700, 4, 2000, 1596.10) == pytest.approx(8700, abs=1e-9)


def test_waves_first_in_lock_step_then_drifted():
    """15 full waves of 2,048 CTAs on 132 slots: the first 11,000 in lock step, 14 drifted at
    8,000: 11,000 + 112,000 = 123,000. On no more CTAs than slots nothing drifts: one wave,
    11,000; no full wave: 0."""
    d = drifted_stream.Drift(11_000, 8_000, 7_000, True)
    assert drifted_stream.waves_ns(15, 11_000, d, 2048, 132) == 123_000
    assert drifted_stream.waves_ns(1, 11_000, d, 132, 132) == 11_000
    assert drifted_stream.waves_ns(0, 11_000, d, 100, 132) == 0
    got = drifted_stream.waves_ns(np.array([15, 1]), 11_000, d, np.array([2048, 132]), 132)
    assert list(got) == [123_000, 11_000]


def _decode(params, resources):
    a = analyze(GQA, None, H200, params, resources=resources, check=False)
    split = a.launches[0]
    return split, {t.name: t for t in split.terms}


def test_few_trip_decode_on_the_h200_by_hand():
    """gqa_decode B32 HQ64 HKV8 SKV4096 SPLITS8 BLOCK_N128 WARPS8 STAGES3 as compiled (80
    registers, 139,264 B of shared memory: one CTA a SM), measured (issue15 run3) split launch
    144.9 us: 256 x 8 = 2,048 CTAs on 132 slots, 15 full waves and 68 CTAs; SPLIT_LEN = 512,
    4 trips of one 128 x 128 bf16 K and V tile each (65,536 B).
    Throughput of a batch (one CTA): the q tile (8 x 128 x 2 = 2,048 B from L2 at 11,000 / 132 =
    83.333 B/ns) 24.576 ns + (4 x 65,536 + the partial 8 x 128 x 4 = 4,096 + m and l 2 x 32) =
    266,304 B at the SM's DRAM share 4,238.4 / 132 = 32.1091 B/ns = 8,293.73 ns: 8,318.30 ns.
    Life: the q load's latency 700 + the loop's first tiles' latency 700 + 4 trips x the stream
    round trip's trip (its copies leave after the trip chain: one warp's in-order 1,267 cycles are
    under the compiled binary's own schedule, 1,325 (decode_sass.csv), + the port's 1,072 = 2,397
    cycles / 1.98 GHz = 1,210.61 ns; the first-waited K half,
    32,768 B, at max(32,768 / 128.7 port, 32,768 / 83.33 L2 share) = 393.22 ns; the DRAM part the
    idle 557 ns + the pointer chase's growth, past its last measured point (3,898 B/ns, +543) on
    the last segment's slope 329 / 812 = 0.405172, delay = -1,036.362 + 0.405172 b, with 132 x
    65,536 = 8,650,752 B drawn a trip: K = 1,210.61 + 557 - 1,036.362 + 393.216 = 1,124.46,
    2 T^2 - K T - 0.405172 x 8,650,752 = 0, T = (1,124.46 + sqrt(1,124.46^2 + 8 x 3,505,046)) / 4
    = 1,634.46 ns at 5,293 B/ns drawn, beyond the last point: on its segment) = 700 + 700 + 4 x
    1,634.46 = 7,937.8 ns.
    Drifted batch max(8,318.30, 7,937.8) = 8,318.30; the waves 11,734.77 (the first in lock step)
    + 14 x 8,318.30 = 128,191.0 ns (lock step: 15 x 11,734.77 = 176,021.5)."""
    split, terms = _decode(dict(B=32, HQ=64, HKV=8, SKV=4096, D=128, SPLITS=8, BLOCK_N=128, WARPS=8, STAGES=3),
                           {"regs": 80, "smem": 139_264, "spills": 0})
    assert (split.positions, split.resident, split.full_waves) == (2048, 1, 15)
    assert float(split.engines["copy"]) == pytest.approx(2048 / (11_000 / 132) + 266_304 / (4238.4 / 132), abs=0.01)
    stream = terms["stream round trip"].detail
    # 1,634.46 ns, printed by the one unit policy to two decimals of a us (the exact trip is held
    # by the waves below: 8,318.30 a drifted batch and one CTA's life 7.94 us = 700 + 700 + 4 x it)
    assert "= 1.63 us (included" in stream
    line = terms["drifted waves"].detail
    assert "throughput 8.32 us" in line and "one CTA's life 7.94 us" in line and "not 11.73 us" in line
    assert float(terms["waves"].ns) == pytest.approx(float(split.batch_ns) + 14 * 8318.30, abs=0.05)
    assert float(split.batch_ns) == pytest.approx(11734.77, abs=0.01)


def test_one_wave_keeps_the_lock_step():
    """B1 HQ32 SKV32768 SPLITS2 BLOCK_N128 WARPS4 STAGES3: 8 x 2 = 16 CTAs, under one wave:
    nothing drifts, no line."""
    _, terms = _decode(dict(B=1, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=2, BLOCK_N=128, WARPS=4, STAGES=3), None)
    assert "drifted waves" not in terms


def test_unpipelined_decode_keeps_the_lock_step():
    """STAGES 1: each trip waits its own load (the unpipelined wait), no prologue to overlap:
    B32 SPLITS32 BLOCK_N128 WARPS4 over 8,192 CTAs stays in lock step (no line)."""
    _, terms = _decode(dict(B=32, HQ=64, HKV=8, SKV=4096, D=128, SPLITS=32, BLOCK_N=128, WARPS=4, STAGES=1), None)
    assert "drifted waves" not in terms
