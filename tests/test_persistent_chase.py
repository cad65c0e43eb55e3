"""A persistent walk's DRAM round trip on the read-only pointer chase (load_trip.chase_round_trip_ns,
docs/analysis.md, "The persistent walk's round trip on the read-only chase"; session 20, persist20)."""
import math

import numpy as np
import pytest

from tfx.analysis import load_trip
from tfx.analysis.machine import Machine
from tfx.hw import load_profile

H200 = load_profile("h200_sxm")


def test_read_chase_points_from_the_profile():
    """calibration/h200/measured/latency_read_s16 (one warp chasing a 1 GiB random chain while
    66 / 132 / 264 / 396 CTAs read DRAM): 350.3 / 400.3 / 577.2 / 853.5 ns at 1.983 / 3.399 /
    4.372 / 4.527 TB/s, after the chase alone, 341 ns (pipeline.dram_latency_unloaded).
    Draws in B/ns (GB/s)."""
    c = load_trip.chase_facts(Machine(H200, "cta"))
    assert c.points == ((0.0, 341.0), (1983.0, 350.3), (3399.0, 400.3), (4372.0, 577.2), (4527.0, 853.5))


def test_chase_excess_between_and_past_the_points():
    """The excess over the idle 341 ns, linear between the points: at 1 TB/s on the first
    segment 9.3 x 1000 / 1983 = 4.690 ns; at 2.58 TB/s on the second 9.3 + (2580 - 1983) x
    50 / 1416 = 9.3 + 21.080 = 30.380 ns; at a measured point its own excess (3399 B/ns:
    400.3 - 341 = 59.3); past the last point along the last segment: 4600 B/ns gives
    853.5 - 341 + 73 x 276.3 / 155 = 512.5 + 130.13 = 642.63 ns."""
    c = load_trip.chase_facts(Machine(H200, "cta"))
    assert c.excess_ns(1000.0) == pytest.approx(4.690, abs=1e-3)
    assert c.excess_ns(2580.0) == pytest.approx(30.380, abs=1e-3)
    assert c.excess_ns(3399.0) == pytest.approx(59.3, abs=1e-9)
    assert c.excess_ns(4600.0) == pytest.approx(642.63, abs=1e-2)
    arr = c.excess_ns(np.array([1000.0, 2580.0, 4600.0]))
    assert arr == pytest.approx([4.690, 30.380, 642.63], abs=1e-2)


def test_chase_round_trip_closed_form():
    """Round numbers so the root is exact: chain 100 ns, port 100 B/ns, idle 515 ns, every trip
    waits DRAM (miss 1), 10,000 B a trip (100 ns of port, over the 80 ns transfer), all of them
    from DRAM, 100 SMs x 1 CTA, 3 stages (S - 1 = 2); the chase 300 ns idle, 310 at 1,000 B/ns,
    410 at 3,000, 610 at 4,000. K_idle = 100 + 515 + max(80, 100) = 715 ns; Lo = 100 x 1 x 10,000
    x 2 = 2,000,000 (draw = Lo / x). On the second segment Q = a + b x draw with b = 100 / 2,000 =
    0.05 ns per B/ns and a = 10 - 0.05 x 1,000 = -40 ns: c = 715 - 40 = 675,
    x = (675 + sqrt(675^2 + 4 x 0.05 x 2,000,000)) / 2 = (675 + sqrt(455,625 + 400,000)) / 2 =
    (675 + 925) / 2 = 800 ns, drawing 2,000,000 / 800 = 2,500 B/ns, inside the segment; and
    self-consistent: 715 + (-40 + 0.05 x 2,500) = 715 + 85 = 800. The first segment's root
    (b = 0.01, a = 0: (715 + sqrt(511,225 + 80,000)) / 2 = 741.95, drawing 2,696 B/ns) and the
    third's (b = 0.2, a = -490: (225 + sqrt(50,625 + 1,600,000)) / 2 = 754.9, drawing 2,649 B/ns)
    draw outside their own segments."""
    f = load_trip.LoadTrip(overhead_ns=100.0, port_bytes_per_ns=100.0)
    c = load_trip.ChaseCurve(((0.0, 300.0), (1000.0, 310.0), (3000.0, 410.0), (4000.0, 610.0)))
    x = load_trip.chase_round_trip_ns(200.0, 1.0, 10000, 80.0, 10000, 1, 100, 3, f, 515.0, c)
    assert x == pytest.approx(800.0, abs=1e-9)
    assert 715 + c.excess_ns(2000000 / x) == pytest.approx(x, abs=1e-9)
    # elementwise over arrays: the same root, and 4 stages (Lo = 3,000,000) on the third
    # segment: c = 225, x = (225 + sqrt(50,625 + 2,400,000)) / 2 = (225 + 1,565.45) / 2 = 895.2
    # drawing 3,351 B/ns; check it self-consistently
    xs = load_trip.chase_round_trip_ns(200.0, 1.0, 10000, 80.0, 10000, 1, 100, np.array([3, 4]), f, 515.0, c)
    assert xs[0] == pytest.approx(800.0, abs=1e-9)
    assert xs[1] == pytest.approx((225 + math.sqrt(225 ** 2 + 4 * 0.2 * 3000000)) / 2, rel=1e-12)
    assert 715 + c.excess_ns(3000000 / xs[1]) == pytest.approx(xs[1], rel=1e-12)


def test_chase_round_trip_of_hits_is_the_l2_round_trip():
    """miss 0 (every tile left in L2 by the previous round): no DRAM part, no queue: chain +
    L2 latency + max(transfer, port) = 100 + 200 + 100 = 400 ns."""
    f = load_trip.LoadTrip(overhead_ns=100.0, port_bytes_per_ns=100.0)
    c = load_trip.ChaseCurve(((0.0, 300.0), (1000.0, 310.0), (3000.0, 410.0), (4000.0, 610.0)))
    assert load_trip.chase_round_trip_ns(200.0, 0.0, 10000, 80.0, 0, 1, 100, 3, f, 515.0, c) == pytest.approx(400.0)


def test_run30_best_row_round_trip_on_the_h200():
    """issue15 run30 persistent 5120x8192x8192, 128x128x32 on 8 warps, 5 stages, 132 CTAs
    (measured 1,312.1 us): a trip loads (128 + 128) x 32 x 2 = 16,384 B, 4,429 B of DRAM time
    as the queue counts them (4,243 B read in 64-byte rows), its transfer 196.61 ns at the SM's
    shares; chain 242 cycles / 1.98 GHz = 122.22 ns, idle 557 ns (pipeline.dram_round_trip_idle),
    port 16,384 / 128.7 = 127.30 ns < 196.61. K_idle = 122.22 + 557 + 196.61 = 875.83 ns;
    Lo = 132 x 1 x 4,429 x 4 = 2,338,512. The second segment of the read chase (1,983 B/ns 350.3 ns,
    3,399 B/ns 400.3 ns): b = 50 / 1,416 = 0.0353107, a = 9.3 - 0.0353107 x 1,983 = -60.7212,
    c = 875.83 - 60.72 = 815.11; c^2 = 664,403, 4 b Lo = 330,297; x = (815.11 + sqrt(994,700)) / 2
    = (815.11 + 997.35) / 2 = 906.23 ns, 226.56 ns a trip (4 tiles in flight), drawing
    2,338,512 / 906.23 = 2,580.5 B/ns, inside the segment. Measured: (1,312.1 - 3) us / 19.39
    rounds / 256 trips = 263.7 ns a trip at most (the last round's shorter CTAs included); the
    loaded line priced 282.0 ns."""
    m = Machine(H200, "cta")
    f = load_trip.facts(m)
    d = load_trip.dram_facts(m)
    assert f.overhead_ns == pytest.approx(122.22, abs=0.01)
    x = load_trip.chase_round_trip_ns(m.l2_latency, 1.0, 16384, 196.61, 4429, 1, 132, 5, f, d.idle_ns,
                                      load_trip.chase_facts(m))
    assert x == pytest.approx(906.23, abs=0.02)
    assert x / 4 == pytest.approx(226.56, abs=0.01)
    assert 132 * 4429 * 4 / x == pytest.approx(2580.5, abs=0.1)


def test_walk_breakdown_names_the_chase():
    """The same row through analyze: the memory-parallelism line renders the chase's segment and
    the round trip the walk was priced on, from the one-tile idle floor (527 ns,
    pipeline.dram_round_trip_idle_one_tile: its tiles in flight queue at the load path,
    tfx.analysis.load_queue, session 21), with the walk's transfer (session 23,
    pipeline_depth.walk_transfer): 40 x 64 = 2,560 tiles on 132 CTAs, 1 - 132 / 2,560 = 0.9484375
    of them after the first round, at the port's 16,384 / 128.7 = 127.3038 ns (their DRAM bytes at
    the SM's own 81.18 B/ns, 54.56 ns, are shorter), the first round's at the share's 196.61:
    0.0515625 x 196.61 + 0.9484375 x 127.3038 = 10.1377 + 120.7397 = 130.8774 ns. K_idle =
    122.2222 + 527 + 130.8774 = 780.0996 ns, c = 780.0996 - 60.7212 = 719.3784, c^2 = 517,505.3;
    the DRAM bytes as the queue counts them unrounded, 4,428.66 (the 4,429 above):
    Lo = 132 x 1 x 4,428.66 x 4 = 2,338,332, 4 b Lo = 4 x 0.0353107 x 2,338,332 = 330,272.6;
    x = (719.3784 + sqrt(847,777.9)) / 2 = (719.3784 + 920.7486) / 2 = 820.0635 -> 820.06 ns,
    820.0635 / 4 = 205.0159 -> 205.02 ns a trip, drawing 2,338,332 / 820.06 = 2,851 B/ns (still
    the second segment); and a non-persistent GEMM keeps the loaded line (its line names the
    205 ns intercept)."""
    from tfx.analysis.analyze import analyze
    from tfx.lang import parse_file
    p = dict(M=5120, N=8192, K=8192, BM=128, BN=128, BK=32, WARPS=8, STAGES=5, NUM_SMS=132)
    a = analyze(parse_file("kernels/persistent_gemm.tile"), None, H200, p, check=False,
                resources={"threads": 256, "regs": 114, "smem": 81920, "spills": 0})
    line = next(t.detail for t in a.terms if t.name == "memory parallelism")
    assert "read-only stream" in line
    assert "350.30 ns at 1.983 TB/s and 400.30 ns at 3.399 TB/s" in line
    assert "idle 527.00 ns" in line
    assert "= 130.88 ns) = 820.06 ns" in line and "per 205.02 ns" in line
    g = analyze(parse_file("kernels/gemm.tile"), None, H200,
                dict(M=5120, N=8192, K=8192, BM=128, BN=128, BK=32, WARPS=8, STAGES=5, GROUP_M=8), check=False)
    gl = [t.detail for t in g.terms if t.name == "memory parallelism"]
    assert all("read-only" not in x for x in gl)
