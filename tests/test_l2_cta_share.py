"""A launch of one wave or less shares the L2 among its CTAs, not its SMs (performance._loop_time's
``l2_draw``, memory_parallelism.describe_l2_cta_share; calibration/h200/measured/l2_dirty_s23,
bm_sweep_dirty.csv)."""

import pytest

from tfx.analysis import memory_parallelism
from tfx.analysis.machine import Machine
from tfx.analysis.performance import Demand, _transfer_terms
from tfx.hw import load_profile

H200 = load_profile("h200_sxm")


def test_busiest_sm_draws_its_ctas_share_of_l2():
    """128x14336x4096 128x64x64 w4 s4 G1: 224 CTAs, 2 a SM, on 132 SMs (2 on 92, 1 on 40); a trip
    copies 128 x 64 x 2 + 64 x 64 x 2 = 24,576 B. The SMs' even share of the L2 is 11,000 / 132 =
    83.333 B/ns, so the busiest SM's 2 CTAs take 2 x 24,576 / 83.333 = 589.824 ns a trip: 264
    CTAs' bytes at the device's rate. The CTAs drawing are 224 / 132 = 1.697 an SM, so the busiest
    SM draws 2 / 1.697 = 1.178571 even shares, 98.214 B/ns (= 2 x 11,000 / 224): 2 x 24,576 /
    98.214 = 500.462 ns (= 224 x 24,576 / 11,000). A whole wave (draw = r) and no draw keep the
    even share; the DRAM term (no DRAM bytes here) is 0 either way."""
    m = Machine(H200, "cta")
    d = Demand(l2=24576)
    dram, l2 = _transfer_terms(d, m, 2, 132)
    assert (dram, l2) == (0, pytest.approx(2 * 24576 * 132 / 11000, rel=1e-12))      # 589.824
    _, l2 = _transfer_terms(d, m, 2, 132, l2_draw=224 / 132)
    assert l2 == pytest.approx(224 * 24576 / 11000, rel=1e-12)                         # 500.462
    _, l2 = _transfer_terms(d, m, 2, 132, l2_draw=2)
    assert l2 == pytest.approx(2 * 24576 * 132 / 11000, rel=1e-12)


def test_the_clause_shows_the_ctas_share():
    """The tail wave's clause: 2 x 11 TB/s / 224 = 98.21 GB/s against the even 11,000 / 132 = 83.33
    GB/s; a full wave's 264 CTAs on 132 SMs (2 each) and 132 lone CTAs (1 each) draw the even share:
    no clause."""
    m = Machine(H200, "cta")
    assert memory_parallelism.describe_l2_cta_share(m, 2, 224, 132) == (
        "; the L2 serves the 224 CTAs drawing, not the 132 SMs: the busiest SM's 2 CTAs draw "
        "2 x 11 TB/s / 224 = 98.21 GB/s, not 83.33 GB/s (calibration/h200/measured/l2_dirty_s23)")
    assert memory_parallelism.describe_l2_cta_share(m, 2, 264, 132) == ""
    assert memory_parallelism.describe_l2_cta_share(m, 1, 132, 132) == ""
