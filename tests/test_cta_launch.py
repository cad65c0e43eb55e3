"""tfx.analysis.cta_launch: an SM starts CTAs no faster than one every ``launch.cta_interval``,
so r short CTAs take at least r intervals. Expected numbers derived by hand from h200_sxm:

    launch.cta_interval 79.3 ns (calibration/h200/measured/cta_cost: empty CTAs of 1-16 warps)
    launch.overhead 3 us, memory.gmem.latency 700 ns (the fill)
    132 SMs; a one-warp CTA of 13 registers: 32 CTAs per SM (occupancy.max_blocks_per_sm)
"""

import pytest

from tfx.analysis import cta_launch
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

from profile_variants import without


def _machine(name="h200_sxm"):
    return Machine(load_profile(name), "cta")


def test_floor_is_r_launch_intervals():
    """32 CTAs on one SM: 32 x 79.3 = 2,537.6 ns; 4 CTAs: 317.2 ns."""
    m = _machine()
    assert cta_launch.interval_ns(m) == pytest.approx(79.3)
    assert cta_launch.floor_ns(32, m) == pytest.approx(2537.6)
    assert cta_launch.floor_ns(4, m) == pytest.approx(317.2)


def test_bound_raises_only_a_shorter_batch():
    """4 CTAs: a 100 ns batch rises to the floor 317.2 ns; a 1,000 ns batch stays."""
    m = _machine()
    assert cta_launch.bound(100.0, 4, m) == pytest.approx(317.2)
    assert cta_launch.bound(1000.0, 4, m) == pytest.approx(1000.0)
    assert cta_launch.binds(100.0, 4, m)
    assert not cta_launch.binds(1000.0, 4, m)


def test_no_interval_no_floor():
    """A Hopper profile that states no launch.cta_interval (h100_sxm less that one fact,
    tests/profile_variants.py): no floor at all; 32 CTAs of a 100 ns batch stay 100 ns (the
    bundled h100_sxm's floor would be 32 x 79.3 = 2,537.6 ns)."""
    m = Machine(without("h100_sxm", "launch.cta_interval"), "cta")
    assert cta_launch.interval_ns(m) is None
    assert cta_launch.floor_ns(32, m) == 0
    assert cta_launch.bound(100.0, 32, m) == pytest.approx(100.0)


def _softmax(params, regs):
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "kernels" / "softmax.tile"
    return analyze(parse_file(path), None, load_profile("h200_sxm"), params,
                   resources={"regs": regs, "spills": 0})


def test_one_warp_softmax_runs_at_the_launch_rate():
    """softmax.tile M = 33,792, N = 64, BLOCK_M = 1, WARPS = 1, 13 registers (the measured
    smax_w1_e2 kernel of calibration/h200/measured/cta_cost: 33,792 CTAs of 64 elements, two per
    thread): 32 CTAs per SM, 33,792 / (132 x 32) = 8 full waves, no tail. A CTA moves 128 B each
    way and its chain is one 700 ns latency plus under 250 ns of transfer and reductions, so
    every batch of 32 CTAs is set by their launches: 32 x 79.3 = 2,537.6 ns, the first wave (op
    by op about 1 us) as well. Waves 8 x 2,537.6 = 20,300.8 ns; total 3,000 + 700 + 20,300.8 =
    24,000.8 ns, rounded up to 24,001 ns (measured 24.22 us at that grid)."""
    a = _softmax({"M": 33792, "N": 64, "BLOCK_M": 1, "WARPS": 1}, 13)
    terms = {t.name: t for t in a.terms}
    assert terms["waves"].ns == pytest.approx(20300.8)
    assert a.metrics["performance.predicted_ns"] == 24001
    assert "32 x 79.30 ns = 2.54 us, bound by the CTA launch rate" in terms["overlap"].detail
    assert "(bound by the CTA launch rate)" in terms["waves"].detail


def test_a_long_batch_does_not_mention_the_launch_rate():
    """softmax.tile M = 4096, N = 4096, BLOCK_M = 2, WARPS = 16, 32 registers: 4 CTAs per SM
    (64 warps), each moving 16 KB each way: its batch is over 2 us against the floor
    4 x 79.3 = 317.2 ns, so the overlap line ends with what binds it, not the launch rate."""
    a = _softmax({"M": 4096, "N": 4096, "BLOCK_M": 2, "WARPS": 16}, 32)
    terms = {t.name: t for t in a.terms}
    assert "launch rate" not in terms["overlap"].detail
    assert "launch rate" not in terms["waves"].detail
