"""A persistent walk's tiles in flight queued at the SM's load path (tfx.analysis.load_queue,
docs/analysis.md, "The walk's tiles in flight queue at the load path"; session 21, persist21).
Every expected number is worked by hand in the docstrings (mean value analysis with a
deterministic server's residual: R(n) = D (1 + Q(n-1) - U(n-1) / 2), U = X D)."""
from fractions import Fraction

import numpy as np
import pytest

from tfx.analysis import closed_queue, load_queue, load_trip
from tfx.analysis.machine import Machine
from tfx.hw import load_profile

H200 = load_profile("h200_sxm")


def test_deterministic_residual_by_hand():
    """D = 100 ns at the station, a delay of 200 ns, 3 customers.
    n = 1: R = 100, cycle 300, X = 1/300, Q = 1/3, U = 1/3.
    n = 2: R = 100 x (1 + 1/3 - 1/6) = 100 x 7/6 = 350/3, cycle 950/3, X = 6/950, Q = X R = 14/19,
    U = 600/950 = 12/19.
    n = 3: R = 100 x (1 + 14/19 - 6/19) = 2700/19, cycle 2700/19 + 200 = 6500/19 = 342.105 ns.
    The exponential server (no residual) queues more: n = 2 R = 100 x 4/3, cycle 1000/3, Q = 0.8;
    n = 3 R = 180, cycle 380."""
    assert closed_queue.cycle_ns(3, [100.0], 200.0, deterministic=True) == pytest.approx(6500 / 19, rel=1e-12)
    assert closed_queue.cycle_ns(3, [100.0], 200.0) == pytest.approx(380.0, rel=1e-12)
    # one customer: the station and the delay in series, either way
    assert closed_queue.cycle_ns(1, [100.0], 200.0, deterministic=True) == pytest.approx(300.0)


def test_round_is_the_cycle_over_the_tiles_in_flight():
    """One CTA, 4 stages: 3 tiles in flight, each 100 ns of copies on the load path and an issue
    chain of 300 ns (delay 200): the cycle above, 6500/19 ns, is 3 trips: 6500/57 = 114.035 ns a
    round, where the floors give max(1 x 100, 300 / 3) = 100 ns (the knee, +14.0%)."""
    q = load_queue.LoadQueue(100.0, 300.0, 1, 4)
    assert load_queue.customers(q) == 3
    assert load_queue.delay_ns(q) == pytest.approx(200.0)
    assert load_queue.round_ns(q) == pytest.approx(6500 / 57, rel=1e-12)


def test_one_tile_in_flight_is_the_issue_chain():
    """2 stages, one CTA: one tile in flight finds the path free: the round is its issue chain,
    300 ns. Two CTAs at 2 stages: 2 tiles, n = 2 as above, cycle 950/3 = 316.67 ns, which is the
    round (one trip a CTA), against the floors' max(2 x 100, 300) = 300."""
    assert load_queue.round_ns(load_queue.LoadQueue(100.0, 300.0, 1, 2)) == pytest.approx(300.0)
    assert load_queue.round_ns(load_queue.LoadQueue(100.0, 300.0, 2, 2)) == pytest.approx(950 / 3, rel=1e-12)


def test_path_bound_when_the_chain_is_short():
    """Copies 100 ns, issue chain 100 ns (delay 0), 1 CTA at 5 stages (4 tiles): with no delay
    every customer is always at the station: n = 1 R = 100, X = 1/100, Q = 1, U = 1;
    n = 2 R = 100 x (1 + 1 - 1/2) = 150, X = 2/150, Q = 2, U = 4/3; n = 3 R = 100 x (1 + 2 - 2/3)
    = 233.33, X = 3/233.33, Q = 3, U = 9/7; n = 4 R = 100 x (1 + 3 - 9/14) = 335.71, so the cycle
    is 335.71 ns and the round 83.93 ns, under the path's 100: the residual approximation dips
    below the station's own floor where the delay vanishes, so the model keeps the floors' max
    beside it (performance._loop_time: max(engines, issue chain / (S-1), queue round))."""
    r = load_queue.round_ns(load_queue.LoadQueue(100.0, 100.0, 1, 5))
    assert r == pytest.approx((100 * (1 + 3 - Fraction(9, 14))) / 4, rel=1e-12)


def test_arrays_elementwise():
    """The first two cases above as one sweep over stages and CTAs."""
    q = load_queue.LoadQueue(np.array([100.0, 100.0, 100.0]), np.array([300.0, 300.0, 300.0]),
                             np.array([1, 1, 2]), np.array([4, 2, 2]))
    assert load_queue.round_ns(q) == pytest.approx([6500 / 57, 300.0, 950 / 3], rel=1e-12)


def test_idle_one_tile_from_the_profile():
    """pipeline.dram_round_trip_idle_one_tile: mlp's 2-stage one-SM rows, ns a trip - 122.2 ns of
    chain - bytes / 81.18 B/ns: 577.4, 515.4, 539.2, 485.5 ns, median (515.4 + 539.2) / 2 = 527.3,
    stated 527 ns; the 3-5-stage floor stays 557 (pipeline.dram_round_trip_idle)."""
    d = load_trip.dram_facts(Machine(H200, "cta"))
    assert d.idle_one_tile_ns == 527 and d.idle_ns == 557
    assert 825.75 - 122.22 - 10240 / 81.18 == pytest.approx(577.4, abs=0.05)
    assert 940.38 - 122.22 - 24576 / 81.18 == pytest.approx(515.4, abs=0.05)


def test_applies_to_a_walk_priced_on_the_chase_only():
    """A walk on a profile with the chase and the one-tile floor: yes; not a walk, no chase, or no
    floor: no (the engines' max alone)."""
    assert load_queue.applies_to(True, object(), 527)
    assert not load_queue.applies_to(False, object(), 527)
    assert not load_queue.applies_to(True, None, 527)
    assert not load_queue.applies_to(True, object(), None)


def _analyze(path, params, res=None):
    from tfx.analysis.analyze import analyze
    from tfx.lang import parse_file
    return analyze(parse_file(path), None, H200, params, check=False, resources=res)


def test_run30_best_row_through_analyze():
    """issue15 run30 persistent 5120x8192x8192, 128x128x32 w8 s5 on 132 CTAs (measured 1,312.1 us):
    copies on the load path 8,192 B / 128.7 B/ns + 16 short-row copies x 7.07 ns = 63.65 + 113.13 =
    176.78 ns; the walk's round trip on the chase from the one-tile floor with its drifted tiles'
    transfer, 820.0635 ns (tests/test_persistent_chase.py); delay 820.0635 - 176.78 = 643.2835 ns;
    4 tiles: n = 1: R = 176.78, cycle 820.06, Q = U = 176.78 / 820.06 = 0.2156;
    n = 2: R = 176.78 x (1 + 0.2156 - 0.1078) = 195.83, cycle 839.12, X = 2 / 839.12, Q = 0.4668,
    U = 0.4213; n = 3: R = 176.78 x (1 + 0.4668 - 0.2107) = 222.05, cycle 865.34, Q = 0.7698,
    U = 0.6129; n = 4: R = 176.78 x (1 + 0.7698 - 0.3064) = 258.70, cycle 258.70 + 643.28 =
    901.98 ns: 4 trips of 225.50 ns (901.98 / 4 = 225.495), over the floors' max(176.78,
    820.06 / 4 = 205.02)."""
    a = _analyze("kernels/persistent_gemm.tile",
                 dict(M=5120, N=8192, K=8192, BM=128, BN=128, BK=32, WARPS=8, STAGES=5, NUM_SMS=132),
                 {"threads": 256, "regs": 114, "smem": 81920, "spills": 0})
    line = next(t.detail for t in a.terms if t.name == "load queue")
    assert "1 CTA x 4 tiles in flight = 4 tiles, each 176.78 ns of copies" in line
    assert "820.06 ns - 176.78 ns = 643.28 ns" in line
    assert "cycles in 901.98 ns = 4 trips of 225.50 ns" in line
    assert "max(1 x 176.78 ns, 820.06 ns / 4) = 205.02 ns" in line


def test_run33_regret_row_through_analyze():
    """issue15 run33 persistent 5120x28672x4096, 256x64x32 w4 s5 on 132 CTAs (measured 2,926 us, the
    start model's first rank at 2,362 us): copies 4,096 B / 128.7 + 32 short-row copies x 7.07 =
    31.83 + 226.26 = 258.09 ns. Its round trip (idle 527) with the walk's transfer: 20 x 448 =
    8,960 tiles on 132 CTAs, 0.01473 of them in the first round at the L2 share's 20,480 B /
    (11,000 / 132 B/ns) = 245.76 ns, 0.98527 after it at the port's 20,480 / 128.7 = 159.13:
    3.62 + 156.79 = 160.41 ns; K_idle = 122.22 + 527 + 160.41 = 809.63, c = 809.63 - 60.72 =
    748.91, c^2 = 560,862, 4 b Lo = 4 x 0.0353107 x 132 x 4,414 x 4 = 329,180: x = (748.91 +
    sqrt(890,042)) / 2 = (748.91 + 943.42) / 2 = 846.16 ns; delay 846.16 - 258.09 = 588.07; 4 tiles:
    n = 1 R = 258.09, cycle 846.16, Q = U = 0.3050; n = 2 R = 258.09 x (1 + 0.3050 - 0.1525) =
    297.45, cycle 885.52, Q = 0.6718, U = 0.5829; n = 3 R = 258.09 x (1 + 0.6718 - 0.2915) = 356.25,
    cycle 944.33, Q = 1.1318, U = 0.8199; n = 4 R = 258.09 x (1 + 1.1318 - 0.4100) = 444.38, cycle
    1,032.46 ns: 258.11 ns a trip where the floors give the path's 258.09 (the session-21 round,
    before the walk's drift: 272.51)."""
    a = _analyze("kernels/persistent_gemm.tile",
                 dict(M=5120, N=28672, K=4096, BM=256, BN=64, BK=32, WARPS=4, STAGES=5, NUM_SMS=132),
                 {"threads": 128, "regs": 209, "smem": 102400, "spills": 0})
    line = next(t.detail for t in a.terms if t.name == "load queue")
    assert "each 258.09 ns of copies" in line and "846.16 ns - 258.09 ns = 588.08 ns" in line
    assert "cycles in 1.03 us = 4 trips of 258.11 ns" in line


def test_a_one_tile_a_cta_gemm_keeps_its_loaded_line():
    """kernels/gemm.tile at the same tile (GROUP_M 8): its round trip is the loaded line fitted on
    k-loops that hold the queue, so no load-queue line and no one-tile floor in its breakdown."""
    g = _analyze("kernels/gemm.tile",
                 dict(M=5120, N=8192, K=8192, BM=128, BN=128, BK=32, WARPS=8, STAGES=5, GROUP_M=8))
    assert not [t for t in g.terms if t.name == "load queue"]
    assert all("idle 527" not in t.detail for t in g.terms if t.name == "memory parallelism")
