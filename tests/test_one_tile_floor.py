"""One tile in flight waits no queue of its own (tfx.analysis.load_trip.one_tile_floor).

The idle DRAM round trip floors a k-loop's loaded round trip where the SMs draw too little for
the loaded line to reach it. hw_profiles/h200_sxm.toml states it twice, both from mlp's one-SM
k-loops (calibration/h200/measured/mlp): pipeline.dram_round_trip_idle 557 ns from the 3-5-stage
rows, whose S-1 tiles queue at the SM's DRAM intake behind one another, and
pipeline.dram_round_trip_idle_one_tile 527 ns from the 2-stage rows, one tile in flight, no such
queue. A loop of 1 or 2 stages keeps at most one tile in flight, so it takes the second.

Numbers below: chain pipeline.load_trip_overhead 242 cycles / 1.98 GHz = 122.2222 ns; the SM's
L2 port 65 B x 1.98 = 128.7 B/ns; one SM's DRAM ceiling 41 B x 1.98 = 81.18 B/ns; kloop's line
205 ns + (1,582 - 205) / 4,238.4 = 0.3248867 ns per B/ns drawn.
"""

import numpy as np
import pytest

from tfx.analysis import load_trip
from tfx.analysis.machine import Machine
from tfx.hw import load_profile

H200 = load_profile("h200_sxm")


def _facts():
    m = Machine(H200, "cta")
    return load_trip.facts(m), load_trip.dram_facts(m)


def test_one_and_two_stages_take_the_floor_measured_with_one_tile_in_flight():
    _, d = _facts()
    assert (d.idle_ns, d.idle_one_tile_ns) == (557, 527)
    assert load_trip.one_tile_floor(d, 1).idle_ns == 527
    assert load_trip.one_tile_floor(d, 2).idle_ns == 527
    assert load_trip.one_tile_floor(d, 3) is d
    assert load_trip.one_tile_floor(d, np.array([1, 2, 3, 5])).idle_ns == pytest.approx([527, 527, 557, 557])
    # a profile that states no one-tile floor keeps its one floor at every depth
    plain = d._replace(idle_one_tile_ns=None)
    assert load_trip.one_tile_floor(plain, 2) is plain


def test_the_floor_binds_a_low_draw_two_stage_trip_at_527_not_557():
    """One CTA a SM on 16 SMs, a trip of 8,192 B all from DRAM (miss 1), the idle floor's transfer
    at one SM's ceiling 8,192 / 81.18 = 100.9116 ns.
    The line: K = 122.2222 + 205 + 8,192 / 128.7 (= 63.6519) = 390.8741 ns,
    q = 0.3248867 x 16 x 8,192 = 42,583.56.
    2 stages (S - 1 = 1): T = (390.8741 + sqrt(390.8741^2 + 4 x 42,583.56)) / 2
      = (390.8741 + sqrt(152,782.58 + 170,334.22 = 323,116.80) (= 568.4337)) / 2 = 479.6539 ns,
    under the one-tile floor 122.2222 + 527 + max(100.9116, 63.6519) = 750.1338 ns, which binds
    (with the 3-5-stage floor it was 122.2222 + 557 + 100.9116 = 780.1338).
    3 stages (S - 1 = 2): (S-1) T = (390.8741 + sqrt(152,782.58 + 8 x 42,583.56 = 493,451.06)
    (= 702.4607)) / 2 = 546.6674 ns, under the 3-5-stage floor 780.1338, which binds."""
    f, d = _facts()
    transfer = 8192 / 81.18
    two = load_trip.loaded_round_trip_ns(200, 1, 8192, transfer, 8192, 1, 16, 2, f, d)
    assert two == pytest.approx(750.1338, abs=1e-3)
    three = load_trip.loaded_round_trip_ns(200, 1, 8192, transfer, 8192, 1, 16, 3, f, d)
    assert three == pytest.approx(780.1338, abs=1e-3)
    # the line alone, where no floor is stated
    k, q, floor = load_trip.loaded_line(200, 1, 8192, transfer, 8192, 1, 16, f, d._replace(idle_ns=None))
    assert floor is None and k == pytest.approx(390.8741, abs=1e-3) and q == pytest.approx(42583.56, abs=0.01)
    # the priced trip keeps the floor it was solved on, for the breakdown
    t = load_trip.loaded_trip(200, 1, 8192, transfer, 8192, 1, 16, 2, f, d)
    assert t.ns == pytest.approx(750.1338, abs=1e-3) and t.idle_ns == 527
    assert load_trip.loaded_trip(200, 1, 8192, transfer, 8192, 1, 16, 4, f, d).idle_ns == 557


def test_the_breakdown_names_the_one_tile_floor():
    """The memory-parallelism line of the 2-stage trip above renders the floor it was priced on:
    idle with one tile in flight 527 ns + max(100.91, 63.65) = 627.91 ns; 122.22 + 627.91 = 750.13."""
    from tfx.analysis import memory_parallelism
    f, d = _facts()
    t = load_trip.loaded_trip(200, 1, 8192, 8192 / 81.18, 8192, 1, 16, 2, f, d)
    text = memory_parallelism.describe_round_trip(8192, t, f, d)
    assert "idle with one tile in flight 527.00 ns + max(100.91 ns, 63.65 ns) = 627.91 ns) = 750.13 ns" in text
    assert "1 tile in flight: a round takes at least 750.13 ns" in text
