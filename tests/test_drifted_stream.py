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
    83.333 B/ns) 24.576 ns + the loop's K and V, 4 x 65,536 = 262,144 B, a read-only stream at
    the SM's share of DRAM's read-only rate, 4,800 x 0.9404 / 132 = 4,513.92 / 132 = 34.19636
    B/ns: 7,665.844 ns, + the stores (the partial 8 x 128 x 4 = 4,096 + m and l 2 x 32 = 4,160 B)
    at the copy's share 4,238.4 / 132 = 32.10909 B/ns: 129.558 ns; 7,819.98 ns.
    Life: the q load's latency 700 + the loop's first tiles' latency 700 + 4 trips x the stream
    round trip's trip (its copies leave after the trip chain: one warp's in-order 1,267 cycles are
    under the compiled binary's own schedule, 1,325 (decode_sass.csv), + the port's 1,072 = 2,397
    cycles / 1.98 GHz = 1,210.61 ns; the first-waited K half, 32,768 B, at max(32,768 / 128.7
    port, 32,768 / 83.33 L2 share) = 393.22 ns; the DRAM part the idle 557 ns + the growth of a
    pointer chase beside a read-only stream (latency_read_s16, over the unloaded 341: +59.3 at
    3,399 B/ns, +236.2 at 4,372, +512.5 at 4,527), with 132 x 65,536 = 8,650,752 B drawn a trip
    and two trips in flight, 2 T^2 - K T - slope x 8,650,752 = 0:
    on the first segment (slope 59.3 / 3,399 = 0.0174463, delay 0.0174463 b) K = 1,210.61 + 557 +
    393.216 = 2,160.82, T = (2,160.82 + sqrt(2,160.82^2 + 8 x 150,924)) / 4 = 1,146.24 ns, drawn
    7,547 B/ns: past it; on the second (slope 176.9 / 973 = 0.181809, delay = -558.668 + 0.181809
    b) K = 1,602.15, T = (1,602.15 + sqrt(1,602.15^2 + 8 x 1,572,783)) / 4 = 1,373.59, drawn 6,298:
    past it; on the last (slope 276.3 / 155 = 1.782581, delay = 236.2 + 1.782581 (b - 4,372) =
    -7,557.243 + 1.782581 b), K = 1,210.61 + 557 - 7,557.243 + 393.216 = -5,396.42, q = 1.782581
    x 8,650,752 = 15,420,663, T = (-5,396.42 + sqrt(5,396.42^2 + 8 x 15,420,663)) / 4 =
    (-5,396.42 + 12,348.55) / 4 = 1,738.03 ns at 4,977 B/ns drawn, beyond the last point: on its
    segment) = 700 + 700 + 4 x 1,738.03 = 8,352.13 ns.
    (Beside a copy's stream the chase's last segment gave 1,634.46 ns a trip, a life of 7,937.8
    under the copy-rate throughput 8,318.30: the read-only rate takes 498 ns off the throughput
    and the read-only chase, steeper past 4,372 B/ns, puts the life above it.)
    Lock step (the first wave, its CTAs start together): 700 + 700 + the pipeline's first tile and
    the 4 trips, 5 x 65,536 / 34.19636 = 5 x 1,916.461 = 9,582.305, + the stores' 129.558 =
    11,111.86 ns. Drifted batch max(7,819.98, 8,352.13) = 8,352.13 (the life binds); the waves
    11,111.86 + 14 x 8,352.13 = 11,111.86 + 116,929.80 = 128,041.66 ns (lock step: 15 x
    11,111.86 = 166,677.9)."""
    split, terms = _decode(dict(B=32, HQ=64, HKV=8, SKV=4096, D=128, SPLITS=8, BLOCK_N=128, WARPS=8, STAGES=3),
                           {"regs": 80, "smem": 139_264, "spills": 0})
    assert (split.positions, split.resident, split.full_waves) == (2048, 1, 15)
    read_share, copy_share = 4800 * 0.9404 / 132, 4238.4 / 132
    assert float(split.engines["copy"]) == pytest.approx(
        2048 / (11_000 / 132) + 262_144 / read_share + 4_160 / copy_share, abs=0.01)
    assert float(split.engines["copy"]) == pytest.approx(7819.98, abs=0.01)
    stream = terms["stream round trip"].detail
    # 1,738.03 ns, printed by the one unit policy to two decimals of a us (the exact trip is held
    # by the waves below: one CTA's life 8,352.13 = 700 + 700 + 4 x it)
    assert "= 1.74 us (included" in stream and "4.977 TB/s drawn" in stream
    line = terms["drifted waves"].detail
    assert "throughput 7.82 us" in line and "one CTA's life 8.35 us" in line and "not 11.11 us" in line
    assert float(split.batch_ns) == pytest.approx(1400 + 5 * 65_536 / read_share + 4_160 / copy_share, abs=0.01)
    assert float(split.batch_ns) == pytest.approx(11111.86, abs=0.01)
    assert float(terms["waves"].ns) == pytest.approx(11111.86 + 14 * 8352.13, abs=0.1)


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
