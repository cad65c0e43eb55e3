"""One CTA's pipelined trip alone where its k-loop steps its pointers (tfx.analysis.load_trip:
the floor takes pipeline.stepped_trip_overhead and stepped_load_bandwidth_per_cycle, measured on
that loop in calibration/h200/measured/kloop_step; the round trips keep load_trip_overhead, with
which the DRAM and L2 round-trip facts were fitted). Numbers by hand.

H200: stepped chain 95 cycles / 1.98 GHz = 47.9798 ns, port 69.7 x 1.98 = 138.006 B/ns; kloop's
chain 242 / 1.98 = 122.2222 ns, port 65 x 1.98 = 128.7 B/ns.
"""

import pytest

from tfx.analysis import load_trip
from tfx.analysis.machine import Machine
from tfx.hw import load_profile

H200 = load_profile("h200_sxm")


def test_facts_carry_the_stepped_chain_for_triton_only():
    f = load_trip.facts(Machine(H200, "cta"))
    assert f.stepped_overhead_ns == pytest.approx(47.9798, abs=1e-4)
    assert f.stepped_port_bytes_per_ns == pytest.approx(138.006, abs=1e-3)
    assert f.overhead_ns == pytest.approx(122.2222, abs=1e-4)
    # TMA copies (cutlass) issue no per-thread copies: kloop's chain, as before
    tma = load_trip.facts(Machine(H200, "cta", "cutlass"))
    assert tma.stepped_overhead_ns is None


def test_floor_of_one_cta_is_the_stepped_trip():
    """32,768 B a trip: one CTA 47.9798 + 32,768 / 138.006 = 47.9798 + 237.4390 = 285.4188 ns (was
    122.2222 + 254.6076 = 376.8298); two CTAs share the port at 2 x 32,768 / 128.7 = 509.2152 ns;
    the copies' round trip keeps kloop's chain: 122.2222 + 200 + 254.6076 = 576.8298 ns."""
    f = load_trip.facts(Machine(H200, "cta"))
    assert load_trip.floor_ns(32_768, 1, 3, f) == pytest.approx(285.4188, abs=1e-3)
    assert load_trip.floor_ns(32_768, 2, 3, f) == pytest.approx(509.2152, abs=1e-3)
    assert load_trip.round_trip_ns(200, 32_768, 0, f) == pytest.approx(576.8298, abs=1e-3)
    tma = load_trip.facts(Machine(H200, "cta", "cutlass"))
    assert load_trip.floor_ns(32_768, 1, 3, tma) == pytest.approx(376.8298, abs=1e-3)
