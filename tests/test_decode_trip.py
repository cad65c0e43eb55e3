"""The round trip of a streaming serial trip (tfx.analysis.decode_trip) and what one launch hands
the next through L2 (tfx.analysis.launch_handoff), with every expected number derived by hand."""

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import decode_trip, launch_handoff, memory_parallelism
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.ir.nodes import LoopRegion, MeshRegion, walk_ops
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
GQA = parse_file(ROOT / "kernels" / "gqa_decode.tile")

# Round facts: port 128 B/ns, one SM's DRAM rate 80 B/ns, loaded line 200 ns + 0.3 ns per B/ns
# drawn, idle round trip 650 ns.
ROUND = decode_trip.StreamFacts(128, 80, 200, 0.3, 650)


def test_round_trip_solved_with_the_trip_time():
    """waited 400 ns, 64,000 B a trip all from DRAM, L2 share 100 B/ns, 1 CTA on each of 100
    SMs, 2 stages. The loaded line's K holds the tile's bytes through the SM's port only, as the
    line was fitted (load_trip.loaded_round_trip_ns): K = 400 + 200 + max(0, 64,000 / 128 = 500)
    = 1,100; q = 0.3 x 100 x 1 x 64,000 = 1,920,000;
    T = (1,100 + sqrt(1,100^2 + 4 x 1,920,000)) / 2 = (1,100 + sqrt(1,210,000 + 7,680,000)) / 2
      = (1,100 + sqrt(8,890,000)) / 2 = (1,100 + 2,981.610) / 2 = 2,040.805.
    The idle floor keeps the transfer at one SM's rate, fetch = max(64,000 / 80 = 800,
    64,000 / 128 = 500, 64,000 / 100 = 640) = 800: 400 + 650 + 800 = 1,850 < 2,040.805, below;
    the round trip is T - waited = 1,640.805 ns (the loaded latency 1,140.805 ns: 200 + 0.3 x
    6,400,000 / 2,040.805 = 200 + 940.805, plus the 500 ns through the port)."""
    got = decode_trip.round_trip_ns(400, 1, 200, 64_000, 64_000, 64_000, 100, 1, 100, 2, ROUND)
    assert got == pytest.approx(1640.8052, abs=1e-3)


def test_round_trip_idle_floor_where_few_sms_draw():
    """The same trip on 1 SM: q = 0.3 x 1 x 1 x 64,000 = 19,200; T = (1,400 + sqrt(1,960,000 +
    76,800)) / 2 = (1,400 + 1,427.165) / 2 = 1,413.58 < the idle floor 400 + 650 + 800 = 1,850:
    the round trip is 1,850 - 400 = 1,450 ns."""
    got = decode_trip.round_trip_ns(400, 1, 200, 64_000, 64_000, 64_000, 100, 1, 1, 2, ROUND)
    assert got == pytest.approx(1450.0, abs=1e-9)


def test_deeper_pipeline_draws_more_and_waits_longer():
    """3 stages (S-1 = 2), K = 1,100 as in the first test: 2 T^2 - 1,100 T - 1,920,000 = 0,
    T = (1,100 + sqrt(1,210,000 + 8 x 1,920,000)) / 4 = (1,100 + sqrt(16,570,000)) / 4
      = (1,100 + 4,070.626) / 4 = 1,292.657;
    (S-1) T = 2,585.313 (above the idle floor 1,850), less the 400 ns waited: 2,185.313 ns,
    longer than the 2-stage 1,640.805."""
    got = decode_trip.round_trip_ns(400, 1, 200, 64_000, 64_000, 64_000, 100, 1, 100, 3, ROUND)
    assert got == pytest.approx(2185.3132, abs=1e-3)


def test_l2_hits_keep_the_l2_latency():
    """Half the bytes miss: K = 400 + 0.5 x 200 + 0.5 x 200 (L2) + max(0, 64,000 / 128 = 500) =
    1,100 as above but q = 0.5 x 0.3 x 100 x 64,000 = 960,000: T = (1,100 + sqrt(1,210,000 +
    3,840,000)) / 2 = (1,100 + sqrt(5,050,000)) / 2 = (1,100 + 2,247.221) / 2 = 1,673.610;
    idle floor 400 + 0.5 x 650 + 0.5 x 200 + 800 = 1,625 < 1,673.610, below:
    1,673.610 - 400 = 1,273.610 ns."""
    got = decode_trip.round_trip_ns(400, 0.5, 200, 64_000, 64_000, 64_000, 100, 1, 100, 2, ROUND)
    assert got == pytest.approx(1273.6103, abs=1e-3)


def test_tail_wave_draws_with_its_own_ctas():
    """A tail wave of 224 CTAs on 132 SMs at r = ceil(224 / 132) = 2 a SM draws DRAM with its
    224 CTAs (memory_parallelism.drawing_per_unit: 224 / 132 = 1.69697 a SM), not 2 x 132 = 264.
    The trip of the first test on 132 SMs: K = 1,100 as there; q = 0.3 x 132 x (224 / 132) x
    64,000 = 0.3 x 224 x 64,000 = 4,300,800; T = (1,100 + sqrt(1,210,000 + 17,203,200)) / 2 =
    (1,100 + sqrt(18,413,200)) / 2 = (1,100 + 4,291.060) / 2 = 2,695.530 (above the idle floor
    1,850); the round trip 2,695.530 - 400 = 2,295.530 ns. Drawing with 264 CTAs it was
    q = 0.3 x 264 x 64,000 = 5,068,800, T = (1,100 + sqrt(1,210,000 + 20,275,200)) / 2 =
    (1,100 + sqrt(21,485,200)) / 2 = (1,100 + 4,635.213) / 2 = 2,867.607: 2,467.607."""
    r_draw = memory_parallelism.drawing_per_unit(224, 2, 132)
    assert r_draw == pytest.approx(224 / 132)
    got = decode_trip.round_trip_ns(400, 1, 200, 64_000, 64_000, 64_000, 100, r_draw, 132, 2, ROUND)
    assert got == pytest.approx(2295.530, abs=1e-3)
    assert decode_trip.round_trip_ns(400, 1, 200, 64_000, 64_000, 64_000, 100, 2, 132, 2, ROUND) == pytest.approx(
        2467.607, abs=1e-3)


def test_h200_facts():
    """hw_profiles/h200_sxm.toml: port 65 B/cycle x 1.98 GHz = 128.7 B/ns; one SM's DRAM rate
    41 x 1.98 = 81.18 B/ns; the loaded line 205 ns + (1582 - 205) / 4238.4 = 0.324887 ns per
    B/ns; idle 557 ns (the median of (S-1) x T - 122.2 - bytes / 81.18 over the six 1-SM rows of
    calibration/h200/measured/mlp: 554, 613, 659, 539, 560, 504 -> (554 + 560) / 2 = 557)."""
    f = decode_trip.facts(Machine(H200, "cta"))
    assert f.port_bytes_per_ns == pytest.approx(128.7)
    assert f.sm_dram_bytes_per_ns == pytest.approx(81.18)
    assert f.base_ns == 205 and f.idle_ns == 557
    assert f.slope_ns_per_byte_ns == pytest.approx(1377 / 4238.4)


def _terms(params, name, resources=None):
    a = analyze(GQA, None, H200, params, check=False, resources=resources)
    return [t.detail for t in a.terms if t.name == name]


# The two stages' K and V tiles and Q as a compiler that allocates both stages would hold them:
# 2 x (128 x 128 x 2 B K + the same of V) + 4 x 128 x 2 B of Q = 2 x 65,536 + 1,024 = 132,096 B,
# one CTA a SM (2 x (132,096 + 1,024 reserved) = 266,240 B > the SM's 233,472 B). Triton holds one
# buffer of each (tests/test_smem_buffers.py): three CTAs a SM.
BOTH_STAGES_SMEM = {"smem": 132_096}


def test_two_stage_64k_decode_trip_on_the_h200():
    """gqa_decode B8 HQ32 HKV8 SKV32768 SPLITS16 BLOCK_N128 WARPS4 STAGES2 (Triton measured
    0.2651 ms, ~4.2 TB/s with one 64 KiB tile in flight a CTA): 1,024 CTAs, one per SM (132 KB
    of shared memory), every K and V byte from DRAM. A trip's copies leave after its chain,
    398.66 ns (tfx.analysis.trip_latency / chain_overlap). The line's K takes the tile through
    the port only: K = 398.66 + 205 + 65,536 / 128.7 (= 509.22) = 1,112.88;
    q = 0.324887 x 132 x 65,536 = 0.324887 x 8,650,752 = 2,810,515;
    T = (1,112.88 + sqrt(1,238,502 + 11,242,060)) / 2 = (1,112.88 + sqrt(12,480,562)) / 2
      = (1,112.88 + 3,532.78) / 2 = 2,322.83;
    the idle floor, with the tile at one SM's rate, fetch = max(65,536 / 81.18 = 807.29,
    65,536 / 128.7 = 509.22, 65,536 / (11,000 / 132 = 83.33) = 786.43) = 807.29:
    398.66 + 557 + 807.29 = 1,762.95 < 2,322.83, below;
    the round trip 2,322.83 - 398.66 = 1,924.17 ns (at 8,650,752 / 2,322.83 = 3,724 B/ns drawn:
    205 + 0.324887 x 3,724 = 1,415 ns of loaded latency + 509.22 through the port). Before,
    700 ns + 65,536 B at the share 32.11 B/ns = 2,741 ns: a trip of 3.14 us, the rows 60-70%
    too slow; with the tile at the DRAM ceiling in K as well (807.29 in place of 509.22),
    2,125.67 ns."""
    got = decode_trip.round_trip_ns(398.66, 1, 200, 65_536, 65_536, 65_536, 11_000 / 132, 1, 132, 2,
                                    decode_trip.facts(Machine(H200, "cta")))
    assert got == pytest.approx(1924.17, abs=0.05)


def test_two_stage_trip_waits_for_its_first_copy_group_on_the_h200():
    """The same configuration as the model prices it now, its shared memory given for both stages'
    buffers (BOTH_STAGES_SMEM: what tfx estimated before it counted Triton's one buffer, one CTA a
    SM): the copies leave after the CTA's
    whole in-order chain (Triton issues them last, decode_sass): one CTA a SM, its trip chain at
    BLOCK_N 128, 4 warps, (1,415 + 792) cycles / 1.98 GHz = 1,114.65 ns (the `trip chain`
    line). The trip waits for K (32,768 of its 65,536 B, 50%) before QK^T and for V after the
    softmax, so the round trip carries K's bytes: max(32,768 / 128.7 = 254.61 port, 32,768 /
    83.33 = 393.22 L2 share) = 393.22 ns, not the tile at the DRAM ceiling (807.29).
    Its DRAM part: the idle round trip 557 + the pointer chase's growth beside a read-only stream
    (K and V are reads alone; latency_read_s16: 341 ns unloaded, 400.3 at 3,399 B/ns, 577.2 at
    4,372, 853.5 at 4,527: +59.3, +236.2, +512.5). The 132 CTAs draw c = 132 x 65,536 = 8,650,752
    B a trip time T. On the first segment (slope 59.3 / 3,399 = 0.0174463) T = (2,064.86 +
    sqrt(2,064.86^2 + 4 x 150,924)) / 2 = 2,135.53, drawn 4,050.9 B/ns: past the segment. On the
    segment 3,399-4,372 B/ns: slope 176.9 / 973 = 0.181809 ns per B/ns, delay = 59.3 + 0.181809
    (b - 3,399) = -558.668 + 0.181809 b; T = 1,114.65 + 557 - 558.668 + 393.216 + 0.181809 c / T:
    K = 1,506.19, q = 0.181809 x 8,650,752 = 1,572,783, T = (1,506.19 + sqrt(1,506.19^2 + 4q)) / 2
    = (1,506.19 + 2,925.70) / 2 = 2,215.95 ns, drawn 8,650,752 / 2,215.95 = 3,903.9 B/ns (inside
    the segment: the fixed point), delay 151.09 ns; the round trip 2,215.95 - 1,114.65 =
    1,101.30 ns. (Beside a copy, latency.csv's +105 at 1,974, +214 at 3,086, +543 at 3,898 B/ns,
    it was 1,341.12; the GEMM k-loop's line, 205 + 0.324887 x drawn, gives 1,524.53.)"""
    f = decode_trip.facts(Machine(H200, "cta"))
    assert f.read_only and f.queue == (pytest.approx((0, 0)), pytest.approx((3399, 59.3)),
                                       pytest.approx((4372, 236.2)), pytest.approx((4527, 512.5)))
    got = decode_trip.round_trip_ns(2207 / 1.98, 1, 200, 65_536, 65_536, 65_536, 11_000 / 132, 1, 132, 2, f, 0.5)
    assert got == pytest.approx(1101.30, abs=0.01)
    # beside a copy (the profile's pipeline.dram_latency_* points) the same trip waits 1,341.12
    copy = f._replace(queue=decode_trip.latency_queue(Machine(H200, "cta"))[1], read_only=False)
    assert copy.queue == (pytest.approx((0, 0)), pytest.approx((1974, 105)), pytest.approx((3086, 214)),
                          pytest.approx((3898, 543)))
    got = decode_trip.round_trip_ns(2207 / 1.98, 1, 200, 65_536, 65_536, 65_536, 11_000 / 132, 1, 132, 2, copy, 0.5)
    assert got == pytest.approx(1341.12, abs=0.01)
    lines = _terms(dict(B=8, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=128, WARPS=4, STAGES=2),
                   "stream round trip", BOTH_STAGES_SMEM)
    assert len(lines) == 1
    # the one unit policy: times two decimals (1,114.65 ns = 1.11 us, 557 + 151.09 = 708.09 ns,
    # 1,101.30 ns = 1.10 us, 2,215.95 ns = 2.22 us), bytes and rates four significant digits
    # (65,536 B = 65.54 KB, 3,903.9 B/ns = 3.904 TB/s, 11,000 / 132 = 83.33 GB/s), a share one decimal
    # of a percent (half the tile: 0.5 -> 50.0%)
    assert "after 1.11 us" in lines[0] and "(50.0% of the 65.54 KB tile" in lines[0]
    assert "3.904 TB/s drawn 151.09 ns (a pointer chase beside a read-only stream" in lines[0]
    assert "= 708.09 ns" in lines[0]
    assert "= 393.22 ns" in lines[0] and ": 1.10 us;" in lines[0] and "= 2.22 us" in lines[0]
    assert ("through the SM's port and its L2 share, max(32.77 KB / 128.7 GB/s = 254.61 ns port, 32.77 KB / "
            "83.33 GB/s L2 share = 393.22 ns) = 393.22 ns") in lines[0]


READ_BROKEN = ({"pipeline.dram_read_latency_high_at": "3399GB/s"},
               {"pipeline.dram_read_latency_mid_at": "4400GB/s"},
               {"pipeline.dram_read_latency_saturated": "500ns"})


@pytest.mark.parametrize("knob", [{"pipeline.dram_latency_loaded_high_at": "1974GB/s", **READ_BROKEN[0]},
                                  {"pipeline.dram_latency_loaded_low_at": "3500GB/s", **READ_BROKEN[1]},
                                  {"pipeline.dram_latency_saturated": "500ns", **READ_BROKEN[2]}])
def test_latency_points_out_of_order_give_no_queue(knob):
    """The latency-under-load points must rise: beside a copy 0 < low_at (1,974) < high_at
    (3,086) < saturated_at (3,898) GB/s, delays over the unloaded 341 ns not falling (+105, +214,
    +543); beside a read-only stream 3,399 < 4,372 < 4,527 GB/s (+59.3, +236.2, +512.5).
    high_at equal to low_at (a zero-width segment: a division by 0), low_at above high_at,
    or the saturated latency 500 ns below the high (a falling segment: no fixed point) in both
    curves leave no queue, so the first group keeps the k-loop's line (finite)."""
    f = decode_trip.facts(Machine(H200.with_knobs(knob), "cta"))
    assert f is not None and f.queue is None
    assert decode_trip.queue_is_valid(decode_trip.facts(Machine(H200, "cta")).queue)
    got = decode_trip.round_trip_ns(2207 / 1.98, 1, 200, 65_536, 65_536, 65_536, 11_000 / 132, 1, 132, 2, f, 0.5)
    assert got == pytest.approx(1524.53, abs=0.01)    # test_first_group_on_the_gemm_line_where_no_queue_is_stated


@pytest.mark.parametrize("knob", READ_BROKEN)
def test_a_broken_read_only_curve_falls_back_to_the_copys(knob):
    """The read-only points out of order alone (as above): the stream keeps the copy's curve,
    (0, 0), (1,974, +105), (3,086, +214), (3,898, +543), and says so (read_only False)."""
    f = decode_trip.facts(Machine(H200.with_knobs(knob), "cta"))
    assert not f.read_only and f.queue == (pytest.approx((0, 0)), pytest.approx((1974, 105)),
                                           pytest.approx((3086, 214)), pytest.approx((3898, 543)))


def test_first_group_on_the_gemm_line_where_no_queue_is_stated():
    """Without the latency-under-load facts the first group keeps the k-loop's line, its K with
    the group's bytes through the port only (load_trip.loaded_round_trip_ns): K = 1,114.65 + 205
    + 32,768 / 128.7 (= 254.61) = 1,574.26; q = 0.324887 x 132 x 65,536 = 2,810,515;
    T = (1,574.26 + sqrt(1,574.26^2 + 4q)) / 2 = (1,574.26 + sqrt(2,478,295 + 11,242,060)) / 2
      = (1,574.26 + 3,704.10) / 2 = 2,639.18 ns;
    the idle floor keeps the group's transfer, max(254.61 port, 32,768 / 83.33 = 393.22 L2 share)
    = 393.22: 1,114.65 + 557 + 393.22 = 2,064.87 < 2,639.18, below; the round trip
    2,639.18 - 1,114.65 = 1,524.53 ns."""
    f = decode_trip.facts(Machine(H200, "cta"))._replace(queue=None)
    got = decode_trip.round_trip_ns(2207 / 1.98, 1, 200, 65_536, 65_536, 65_536, 11_000 / 132, 1, 132, 2, f, 0.5)
    assert got == pytest.approx(1524.53, abs=0.01)


def test_queue_delay_between_and_beyond_the_points():
    """Points (0, 0), (1,000, 100), (2,000, 400): 500 B/ns -> 50; 1,500 -> 250; 3,000 beyond the
    last -> 400 + 1,000 x 300 / 1,000 = 700; arrays elementwise."""
    q = ((0.0, 0.0), (1000.0, 100.0), (2000.0, 400.0))
    assert decode_trip.queue_delay_ns(500, q) == pytest.approx(50)
    assert decode_trip.queue_delay_ns(1500, q) == pytest.approx(250)
    assert decode_trip.queue_delay_ns(3000, q) == pytest.approx(700)
    assert list(decode_trip.queue_delay_ns(np.array([500.0, 3000.0]), q)) == pytest.approx([50, 700])


def test_queue_delay_scalar_is_the_arrays_float():
    """The scalar branch (no numpy: load_rounds' bisection) and np.interp give the same float: on
    the points (0 -> 0, 1,000 -> 100, 2,000 -> 400), between them (1,234.5 -> 100 + 234.5 x 0.3
    = 170.35) and beyond (2,500 -> 400 + 500 x 0.3 = 550)."""
    q = ((0.0, 0.0), (1000.0, 100.0), (2000.0, 400.0))
    xs = [0.0, 1000.0, 1234.5, 2000.0, 2500.0]
    scalars = [decode_trip.queue_delay_ns(x, q) for x in xs]
    assert scalars == list(decode_trip.queue_delay_ns(np.array(xs), q))
    assert scalars == pytest.approx([0, 100, 170.35, 400, 550], abs=1e-9)
    assert all(type(v) is float for v in scalars)


def test_first_group_fixed_point_by_hand():
    """ROUND's facts with the queue above, waited 400, all from DRAM, 1 CTA on 10 SMs, 64,000 B
    a trip, half waited first (fetch 32,000 / 128 = 250 over 32,000 / 1,000 = 32 at the L2
    share), 2 stages: c = 640,000 B. Segment 0-1,000 (slope 0.1): T = 400 + 650 + 250 + 0.1 c / T,
    K = 1,300, T = (1,300 + sqrt(1,690,000 + 256,000)) / 2 = (1,300 + 1,395.0) / 2 = 1,347.50,
    drawn 475.0 B/ns (inside): the round trip 947.50 ns (delay 47.50)."""
    q = ((0.0, 0.0), (1000.0, 100.0), (2000.0, 400.0))
    f = ROUND._replace(queue=q)
    got = decode_trip.round_trip_ns(400, 1, 200, 64_000, 64_000, 64_000, 1_000, 1, 10, 2, f, 0.5)
    want = (1300 + (1300 ** 2 + 4 * 0.1 * 640_000) ** 0.5) / 2 - 400
    assert got == pytest.approx(want, abs=1e-9) and want == pytest.approx(947.50, abs=0.01)


def test_first_group_round_trip_takes_its_bytes_through_the_port():
    """ROUND's facts, half the tile waited for first, 1 SM (the idle floor binds): K's 32,000 B
    take max(32,000 / 128 = 250 through the port, 32,000 / 100 = 320 at the L2 share) = 320 ns;
    the idle floor 400 + 650 + 320 = 1,370 ns; the line's K takes the group through the port
    only (load_trip.loaded_round_trip_ns): K = 400 + 200 + 250 = 850, q = 0.3 x 1 x 64,000 =
    19,200, T = (850 + sqrt(722,500 + 76,800)) / 2 = (850 + sqrt(799,300) = 894.04) / 2 = 872.02
    < 1,370: the round trip 1,370 - 400 = 970 ns (whole tile: 1,450). Its line (no latency
    points): the port time on the loaded line, the L2 share's 32,000 B / 100 B/ns at the idle
    floor; the trip (400 + 970) / 1 = 1,370."""
    got = decode_trip.round_trip_ns(400, 1, 200, 64_000, 64_000, 64_000, 100, 1, 1, 2, ROUND, 0.5)
    assert got == pytest.approx(970.0, abs=1e-9)
    text = decode_trip.describe(60, 400, 1, 200, 64_000, 64_000, 64_000, 100, 1, 1, 2, ROUND, 0.5)
    assert ("through the SM's port, 32 KB / 128 GB/s = 250.00 ns on the loaded line (which holds the rest "
            "of its transfer), at the idle floor max(port, 32 KB / 100 GB/s L2 share = 320.00 ns) = 320.00 ns"
            ) in text
    assert text.endswith("(400.00 ns + 970.00 ns) / 1 = 1.37 us")
    # an L2 share above the port: the port binds, 32,000 / 128 = 250: 400 + 650 + 250 - 400 = 900
    got = decode_trip.round_trip_ns(400, 1, 200, 64_000, 64_000, 64_000, 1_000, 1, 1, 2, ROUND, 0.5)
    assert got == pytest.approx(900.0, abs=1e-9)


def test_first_wait_share_of_the_decode_trip():
    """gqa_decode's KV loop loads K and V tiles of equal size (BLOCK_N x D bf16 each, 8,192 B at
    BLOCK_N 32): its scores mma reads q and K (through a reshape and a transpose), so K's share
    is 8,192 / 16,384 = 1/2, in the unmasked loop (line 60) and the masked tail (line 90). The
    merge's loop over the splits (line 145) has no mma: 1. A GEMM k-loop, whose first mma reads
    both of its loads, keeps 1."""
    a = analyze(GQA, None, H200, dict(B=1, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=32,
                                      WARPS=4, STAGES=3))
    shares = {n.line: decode_trip.first_wait_share(n) for n in a.root.walk() if n.kind == "loop"}
    assert shares == {60: pytest.approx(0.5, abs=1e-12), 90: pytest.approx(0.5, abs=1e-12), 145: 1}
    gemm = analyze(parse_file(ROOT / "kernels" / "gemm.tile"), None, H200, {})
    kloops = [n for n in gemm.root.walk() if n.kind == "loop" and any(n.load_ops())]
    assert kloops and all(decode_trip.first_wait_share(n) == 1 for n in kloops)


def test_decode_tail_wave_draws_with_its_ctas_on_the_h200():
    """gqa_decode B1 HQ32 HKV8 SKV131072 SPLITS28 BLOCK_N32 WARPS8 STAGES3: B x HKV x SPLITS =
    1 x 8 x 28 = 224 CTAs, under one wave, 2 on the busiest SM: the stream round trip draws with
    224 CTAs on 132 SMs, each trip's K and V tiles 2 x 32 x 128 x 2 = 16,384 B from DRAM, so the
    bandwidth drawn is 224 x 16,384 = 3,670,016 B per trip time T (the line's own T, rounded to
    printed to two decimals of a us and the bandwidth to four digits: within 0.6% of each other);
    2 x 132 = 264 CTAs would draw 18% more."""
    lines = _terms(dict(B=1, HQ=32, HKV=8, SKV=131072, D=128, SPLITS=28, BLOCK_N=32, WARPS=8, STAGES=3),
                   "stream round trip")
    assert len(lines) == 1
    assert "(224 CTAs on 132 SMs x 16.38 KB per trip)" in lines[0]
    drawn = float(re.search(r"(?:x|at) ([\d.]+) TB/s drawn", lines[0]).group(1)) * 1000      # B/ns
    trip = float(re.search(r"a trip takes at least \([\w. +]+\) / \d+ = ([\d.]+) us", lines[0]).group(1)) * 1000
    assert drawn == pytest.approx(3_670_016 / trip, rel=0.006)


def test_surviving_share():
    """n = ceil(waves) groups; the last floor(room x n / bytes) + 1 survive:
    135.81 MB over 3.88 waves, room 31.46 MB: n = 4, floor(31.46 x 4 / 135.81) = floor(0.927) = 0:
    1 of 4 = 0.25; under one wave: n = 1, all of it; 60 MB over 8 waves, room 30 MB:
    floor(30 x 8 / 60) + 1 = 5 of 8 = 0.625."""
    assert launch_handoff.surviving_share(135.81e6, 3.88, 31.46e6) == 0.25
    assert launch_handoff.surviving_share(135.81e6, 0.78, 31.46e6) == 1
    assert launch_handoff.surviving_share(60e6, 8, 30e6) == 0.625


def test_merge_reads_what_the_split_left_in_l2():
    """gqa_decode B1 HQ32 SKV32768 SPLITS64 BLOCK_N128 WARPS2 STAGES3: 512 CTAs at one per SM
    (139 KB of shared memory: 3.88 waves); the split launch moves K + V 2 x 8 x 32,768 x 128 x
    2 = 134,217,728 B, q 512 x 4 x 128 x 2 = 524,288 B, O_PART 2,048 x 128 x 4 = 1,048,576 B and
    ML_PART 2,048 x 2 x 4 = 16,384 B: 135,806,976 B; the L2 room 62.91 MB / 2 partitions =
    31.46 MB; floor(31.46 x 4 / 135.81) + 1 = 1 of 4 groups: 25% of the merge's partial reads
    hit L2. At SPLITS16 BLOCK_N64 the split is 128 CTAs, under one wave: all of them hit."""
    line = _terms(dict(B=1, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=64, BLOCK_N=128, WARPS=2, STAGES=3),
                  "l2 hand-off")
    assert len(line) == 1
    assert "135.81 MB" in line[0] and "3.88 waves" in line[0] and "25.0% of" in line[0]
    line = _terms(dict(B=1, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=64, WARPS=4, STAGES=3),
                  "l2 hand-off")
    assert "100.0% of" in line[0]


def test_merge_streams_one_partial_a_split():
    """The merge launch loops over the SPLITS partials, one O_PART block a trip (the measured
    Triton merge, num_stages=1), after the row statistics of all splits."""
    k = GQA.kernel("gqa_decode")
    meshes = [s for s in k.body if isinstance(s, MeshRegion)]
    merge = meshes[1]
    loops = [s for s in merge.body if isinstance(s, LoopRegion)]
    assert len(loops) == 1 and loops[0].stages is None
    loads = [op for op in walk_ops(loops[0].body) if op.opcode == "load"]
    assert {w.tensor for op in loads for w in op.operands if hasattr(w, "tensor")} == {"O_PART", "ML_PART"}


# ------------------------------------------------------------------ the trip's in-order chain
def _kv_loop(**params):
    """The unmasked KV loop (line 60) of kernels/gqa_decode.tile at ``params``."""
    base = dict(B=1, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=32, WARPS=4, STAGES=3)
    a = analyze(GQA, None, H200, {**base, **params})
    return [n for n in a.root.walk() if n.kind == "loop"][0]


def test_chain_facts_of_the_h200():
    """Measured latencies (instruction_latency: mma.sync 24, shfl 24, bar.sync 20, ex2 17, fma 4,
    ld.shared 23), warp_mma.f16_mma_cycles 6, a warp's exp2 32 lanes x 4 sub-partitions / 16
    special results a cycle = 8 cycles, the shared-memory port 128 B/cycle, 1.98 GHz."""
    f = decode_trip.chain_facts(Machine(H200, "cta"))
    assert (f.lat.mma_sync, f.lat.shfl_sync, f.lat.bar_sync, f.lat.ex2, f.lat.fma, f.lat.smem_load) == (
        24, 24, 20, 17, 4, 23)
    assert (f.mma_issue, f.sfu_issue, f.port_bytes_per_cycle, f.clock_ghz) == (6, 8, 128, 1.98)
    assert decode_trip.chain_facts(Machine(load_profile("sip"), "pe")) is None


def test_trip_chain_block_n32_four_warps_by_hand():
    """BLOCK_N 32, 4 warps (GROUP 4 rows padded to one 16-row m-tile, all warps along N):
    QK^T 16 x 32 x 128: 1 n-tile a warp, 8 k-steps, 8 + ceil(8 / 2) = 12 ldmatrix:
      23 + max(8 x 24, 8 x 6) + 12 = 227;
    PV 16 x 128 x 32: 128 / (8 x 4) = 4 n-tiles, 2 k-steps, 2 + 4 = 6 ldmatrix; P computed in
      the trip goes through shared memory between two barriers: 23 + max(48, 48) + 6 + 41 = 118;
    softmax, a thread's values (scores 16 x 32 / 128 = 4, acc 16 x 128 / 128 = 16, row vectors
      2): mul 4, reduce max 204 (a row's 2 values: 1 x 4 + 2 x (24 + 4) = 60, across the 4 warps
      2 x (20 + 23 + 1) + 2 x (24 + 4) = 144), max 2, sub 2, exp2 2 x 8 + 17 = 33, sub 4,
      exp2 4 x 8 + 17 = 49, reduce sum 204, mul 2, add 2, mul acc 16, cast 4 / 2 = 2: 524;
    overhead 30 + 2 x 20 + (16,384 B / (16 B x 128 lanes) = 8 copies) x 4 = 102;
    one warp 345 + 524 + 102 = 971 cycles; reads (12 + 6) x 512 + 2 x 3 x 128 = 9,984 B a warp,
    the port 4 x 9,984 / 128 = 312; one CTA's trip (971 + 312) / 1.98 = 647.98 ns (the SASS
    schedule + port: 1,479 cycles; measured from L2, one CTA a SM: 706 ns)."""
    loop = _kv_loop(BLOCK_N=32, WARPS=4)
    m = Machine(H200, "cta")
    c = decode_trip.trip_chain(loop, m, 4, 16384, decode_trip.chain_facts(m))
    assert (c.mma_cycles, c.softmax_cycles, c.overhead_cycles, c.warp_cycles) == (345, 524, 102, 971)
    assert (c.smem_read_bytes, c.port_cycles, c.copy_port_cycles) == (9984, 312, 128)
    assert float(c.ns) == pytest.approx(1283 / 1.98, abs=1e-9)


def test_trip_chain_counts_match_the_sass():
    """The ldmatrix bytes a warp reads equal the SASS's (calibration/h200/measured/decode_sass,
    smem_read_bytes_per_warp) for every BLOCK_N x WARPS: e.g. BLOCK_N 128, 2 warps: QK^T 8 n-tiles
    x 8 k-steps: 8 + 32 = 40 ldmatrix, PV 8 n-tiles x 8 k-steps: 8 + 32 = 40: 80 x 512 + 768 =
    41,728 B."""
    m = Machine(H200, "cta")
    f = decode_trip.chain_facts(m)
    sass = {(int(r["BLOCK_N"]), int(r["WARPS"])): int(r["smem_read_bytes_per_warp"]) for r in
            csv.DictReader(open(ROOT / "calibration/h200/measured/decode_sass/decode_sass.csv")) if r["STAGES"] == "3"}
    for (bn, w), want in sass.items():
        c = decode_trip.trip_chain(_kv_loop(BLOCK_N=bn, WARPS=w), m, w, 2 * bn * 128 * 2, f)
        assert c.smem_read_bytes == want, (bn, w)
    assert sass[(128, 2)] == 80 * 512 + 768


def test_round_of_coresident_ctas_adds_their_port_time():
    """Each other CTA's reads (312 cycles) and tile writes (16,384 / 128 = 128 cycles) pass the
    one port: at 2 CTAs a SM 647.98 + 440 / 1.98 = 870.20 ns (measured 880), at 3 1,092.42 (1,065);
    fractional r (a tail wave's mean) scales it: r = 1.5: 647.98 + 0.5 x 222.22 = 759.09."""
    m = Machine(H200, "cta")
    c = decode_trip.trip_chain(_kv_loop(BLOCK_N=32, WARPS=4), m, 4, 16384, decode_trip.chain_facts(m))
    one = 1283 / 1.98
    for r, want in ((1, one), (2, one + 440 / 1.98), (3, one + 880 / 1.98), (1.5, one + 220 / 1.98)):
        assert float(decode_trip.round_ns(c, r)) == pytest.approx(want, abs=1e-9)


def test_trip_chain_off_for_warps_along_m():
    """A scores mma whose warps lie along M (flash attention's 64-row blocks) has no chain."""
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200,
                dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2))
    loop = [n for n in a.root.walk() if n.kind == "loop"][0]
    m = Machine(H200, "cta")
    assert decode_trip.trip_chain(loop, m, 4, 16384, decode_trip.chain_facts(m)) is None


def test_coresident_trips_queue_at_the_port_while_they_wait_for_copies():
    """BLOCK_N 32, 4 warps: one CTA's chain c = 1,283 / 1.98 = 647.98 ns, a CTA-trip's port demand
    D = (312 + 128) / 1.98 = 222.22 ns; a round trip held at 600 ns. Two CTAs, 2 stages: the
    closed queue over the port with delay c - D + RT: cycle(1) = c + RT = 1,247.98, Q(1) = D /
    cycle(1), cycle(2) = D (1 + Q(1)) + c - D + RT = c + RT + D^2 / (c + RT) = 1,287.55 ns, over the
    round c + D = 870.20: the copies leave cycle(2) - RT = c + D^2 / (c + RT) = 687.55 ns into the
    trip (lock step: after the round, 870.20, a trip of 1,470.20). Three stages: the delay is
    c - D (the round trip hides behind c at 2 tiles in flight), cycle(2) = c + D^2 / c = 724.19,
    under the round, so the round binds: the copies leave 2 x 870.20 - 600 = 1,140.40 ns in,
    a trip (1,140.40 + 600) / 2 = 870.20. A tail wave's mean r = 1.5, 2 stages: halfway between
    cycle(1) and cycle(2), 1,267.77, less 600 = 667.77. One CTA and 1 stage keep the lock step."""
    m = Machine(H200, "cta")
    chain = decode_trip.trip_chain(_kv_loop(BLOCK_N=32, WARPS=4), m, 4, 16384, decode_trip.chain_facts(m))
    c, d = 1283 / 1.98, 440 / 1.98

    def rt(w):
        return 600.0

    two = c + d * d / (c + 600)
    assert two == pytest.approx(687.55, abs=0.01)
    got = decode_trip.co_resident_wait_ns(c, c + d, chain, 2, 2, rt)
    assert float(got) == pytest.approx(two, abs=1e-9)
    three = decode_trip.co_resident_wait_ns(c, c + d, chain, 2, 3, rt)
    assert float(three) == pytest.approx(2 * (c + d) - 600, abs=1e-9)
    assert float(three) == pytest.approx(1140.40, abs=0.01)
    half = decode_trip.co_resident_wait_ns(c, c + 0.5 * d, chain, 1.5, 2, rt)
    assert float(half) == pytest.approx((c + 600 + two + 600) / 2 - 600, abs=1e-9)
    assert float(half) == pytest.approx(667.77, abs=0.01)
    assert decode_trip.co_resident_wait_ns(c, 123.0, chain, 1, 2, rt) == 123.0
    assert decode_trip.co_resident_wait_ns(c, 456.0, chain, 4, 1, rt) == 456.0


def test_coresident_wait_is_the_same_in_a_sweep():
    """Arrays of r and stages give, element by element, what the scalars give."""
    import numpy as np
    m = Machine(H200, "cta")
    chain = decode_trip.trip_chain(_kv_loop(BLOCK_N=32, WARPS=4), m, 4, 16384, decode_trip.chain_facts(m))
    c = 1283 / 1.98

    def rt(w):
        return 600.0 + 0 * w

    rs, ss = np.array([1, 2, 3, 1.5, 4]), np.array([2, 2, 3, 2, 1])
    lock = c + (rs - 1) * 440 / 1.98
    arr = decode_trip.co_resident_wait_ns(c + 0 * rs, lock, chain, rs, ss, rt)
    for i in range(len(rs)):
        one = decode_trip.co_resident_wait_ns(c, float(lock[i]), chain, float(rs[i]), int(ss[i]), rt)
        assert float(arr[i]) == pytest.approx(float(one), abs=1e-9), i


def test_issue_insns_are_the_sass_counts():
    """ISSUE_INSNS is decode_sass.csv's `insns` column (the instructions one warp issues a trip in
    the measured binaries) for all 27 BLOCK_N x WARPS x STAGES, and the chain takes the count of
    its stage count: BLOCK_N 32 on 8 warps 164 at 2 stages, 176 at 3 (and at 4: the 3-stage body),
    0 where no stage count is given."""
    sass = {(int(r["BLOCK_N"]), int(r["WARPS"]), int(r["STAGES"])): int(r["insns"]) for r in
            csv.DictReader(open(ROOT / "calibration/h200/measured/decode_sass/decode_sass.csv"))}
    assert decode_trip.ISSUE_INSNS == sass
    m = Machine(H200, "cta")
    f = decode_trip.chain_facts(m)
    loop = _kv_loop(BLOCK_N=32, WARPS=8)
    got = {s: decode_trip.trip_chain(loop, m, 8, 16384, f, s).issue_cycles for s in (2, 3, 4)}
    assert got == {2: 164, 3: 176, 4: 176}
    c = decode_trip.trip_chain(loop, m, 8, 16384, f)
    assert (c.issue_cycles, c.warps, c.subpartitions) == (0, 8, 4)


# BLOCK_N 32 on 8 warps at 3 stages as the SASS has it: one warp's schedule 1,030 cycles, its
# reads 8,960 B (the port: 8 x 8,960 / 128 = 560 cycles), the tile's writes 16,384 / 128 = 128,
# 176 instructions a warp; one CTA's trip (1,030 + 560) / 1.98 = 803.03 ns.
EIGHT = decode_trip.TripChain(343, 572, 115, 1030, 8960, 560, 128, 1.98, 1590 / 1.98, 176, 8, 4)


def test_round_of_eight_warp_ctas_is_their_demand_on_the_sm():
    """r CTAs a SM of 8 warps: the chain + (r - 1) x (560 + 128) / 1.98 = 347.47 ns, or the r CTAs'
    demand on the SM, r x 688 cycles at the port + the busiest sub-partition's ceil(8 r / 4)
    warps x 176 instructions, if longer:
      r = 1: 803.03 against (688 + 2 x 176) / 1.98 = 525.25: 803.03;
      r = 2: 803.03 + 347.47 = 1,150.51 against (1,376 + 704) / 1.98 = 1,050.51: 1,150.51 (measured
        from L2, decode_trip: 1,163.0);
      r = 3: 1,497.98 against (2,064 + 1,056) / 1.98 = 1,575.76: 1,575.76 (measured 1,597.5);
      r = 4: 1,845.45 against (2,752 + 1,408) / 1.98 = 2,101.01: 2,101.01 (measured 2,079.17);
      r = 1.5 (a tail wave's mean): 803.03 + 0.5 x 347.47 = 976.77 against (1.5 x 688 + 3 x 176) /
        1.98 = 787.88: 976.77.
    Without the instruction count (0) the demand is the port's alone, under the chain."""
    c, d = 1590 / 1.98, 688 / 1.98
    want = {1: c, 2: c + d, 3: 3120 / 1.98, 4: 4160 / 1.98, 1.5: c + 0.5 * d}
    for r, w in want.items():
        assert float(decode_trip.round_ns(EIGHT, r)) == pytest.approx(w, abs=1e-9), r
    assert float(decode_trip.round_ns(EIGHT, 3)) == pytest.approx(1575.76, abs=0.01)
    assert float(decode_trip.round_ns(EIGHT, 4)) == pytest.approx(2101.01, abs=0.01)
    no_count = EIGHT._replace(issue_cycles=0)
    assert float(decode_trip.round_ns(no_count, 4)) == pytest.approx(c + 3 * d, abs=1e-9)
    # a sweep gives what the scalars give
    import numpy as np
    rs = np.array([1, 2, 3, 4, 1.5])
    arr = decode_trip.round_ns(EIGHT, rs)
    for i, r in enumerate(rs):
        assert float(arr[i]) == pytest.approx(float(decode_trip.round_ns(EIGHT, float(r))), abs=1e-9)


def test_four_warp_round_keeps_its_chain():
    """4 warps at 3 stages (BLOCK_N 32: schedule 1,167 + port 312 cycles, 200 instructions a warp):
    at 4 CTAs a SM the chain form (1,479 + 3 x 440) / 1.98 = 1,413.64 ns is over the demand
    (4 x 440 + 4 x 200) / 1.98 = 1,292.93 (one warp of each CTA a sub-partition), so it binds."""
    four = decode_trip.TripChain(345, 524, 102, 1167, 9984, 312, 128, 1.98, 1479 / 1.98, 200, 4, 4)
    assert float(decode_trip.round_ns(four, 4)) == pytest.approx(2799 / 1.98, abs=1e-9)
    assert float(decode_trip.round_ns(four, 4)) == pytest.approx(1413.64, abs=0.01)


def test_coresident_queue_demand_holds_the_warps_instructions():
    """The closed queue's demand a CTA-trip is its port time and its warps' share of a
    sub-partition's issue: BLOCK_N 32 on 4 warps with 200 instructions a warp, D = (312 + 128 +
    4 / 4 x 200) / 1.98 = 323.23 ns (222.22 without them). One CTA's chain c = 1,283 / 1.98 =
    647.98 ns, the round trip held at 600: two CTAs at 2 stages, cycle(2) = c + RT + D^2 / (c + RT)
    = 1,247.98 + 104,479.13 / 1,247.98 = 1,331.70, over the round (c + 222.22 = 870.20; the demand
    (2 x 440 + 2 x 200) / 1.98 = 646.46 under it): the copies leave 1,331.70 - 600 = 731.70 ns
    into the trip (687.55 without the instructions)."""
    m = Machine(H200, "cta")
    base = decode_trip.trip_chain(_kv_loop(BLOCK_N=32, WARPS=4), m, 4, 16384, decode_trip.chain_facts(m))
    chain = base._replace(issue_cycles=200)
    c, d = 1283 / 1.98, 640 / 1.98

    def rt(w):
        return 600.0

    got = decode_trip.co_resident_wait_ns(c, c + 440 / 1.98, chain, 2, 2, rt)
    assert float(got) == pytest.approx(c + d * d / (c + 600), abs=1e-9)
    assert float(got) == pytest.approx(731.70, abs=0.01)
    assert float(decode_trip.sm_demand_cycles(chain)) == 640


def test_a_decode_launch_pays_the_dirty_l2_write_back_only_after_an_l2_clear():
    """The decode trip's K and V are priced at DRAM's read-only rate and its chase, both measured
    from a clean L2 (latency_read_s16), so timed after do_bench's clear (analyze's l2_clear, as
    the measured rows were) its launch pays launch.l2_dirty_write_back, 8.16 us for a launch
    reading at least the L2's 62,914,560 B (tfx.analysis.launch_handoff.dirty_write_back_ns).
    gqa_decode B24 HQ32 HKV8 SKV16384 SPLITS1 (run26): its split launch reads 24 x 8 x 16,384 x
    128 x 2 B x 2 (K and V) = 1,610,612,736 B, past the L2: the `l2 write-back` term is 8.16 us,
    the one difference between the two timings; its merge launch has no decode trip and no such
    term. As a serving step (the default: no clear) the launch pays nothing."""
    p = dict(B=24, HQ=32, HKV=8, SKV=16384, D=128, SPLITS=1, BLOCK_N=64, WARPS=4, STAGES=3)
    res = {"regs": 72, "smem": 71680}
    step = analyze(GQA, None, H200, p, resources=res, check=False)
    bench = analyze(GQA, None, H200, p, resources=res, check=False, l2_clear=True)
    wb = [t for t in bench.terms if t.name == "l2 write-back"]
    assert len(wb) == 1 and wb[0].ns == pytest.approx(8160)
    assert "8.16 us (its 1.611 GB of DRAM reads pass the 62.91 MB of L2) = 8.16 us" in wb[0].detail
    assert wb[0].detail.startswith("timed after an L2 clear")
    assert not [t for t in step.terms if t.name == "l2 write-back"]
    assert float(bench.predicted_ns()) - float(step.predicted_ns()) == pytest.approx(8160, abs=1e-6)
    # the merge launch (the second) is the same in both
    assert float(bench.launches[1].total_ns) == float(step.launches[1].total_ns)
