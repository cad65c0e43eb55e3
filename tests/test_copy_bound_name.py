"""The copy engine's bound is named by the term that set its time (performance._bound_name reads
performance._transfer_terms, the two terms whose longer is _transfer_ns): one DRAM rate for the
label and the time."""

import pytest

from tfx.analysis.machine import Machine
from tfx.analysis.performance import Demand, _bound_name, _transfer_ns
from tfx.hw import load_profile

H200 = load_profile("h200_sxm")


def test_whole_line_bytes_name_dram():
    """132 SMs pull: an SM's DRAM share is 4.8 TB/s x 0.883 / 132 = 4,238.4 / 132 = 32.109 B/ns
    (under its own ceiling, 41 B/cycle x 1.98 GHz = 81.18 B/ns), its L2 share 11,000 / 132 =
    83.333 B/ns. 1,000 useful DRAM bytes read as 3,000 bytes of whole lines take 3,000 / 32.109 =
    93.431 ns, the 5,000 L2 bytes 5,000 / 83.333 = 60.000 ns: the copy takes 93.431 ns, set by
    DRAM. The label read the useful bytes (1,000 / 32.109 = 31.144 ns < 60.000) and said l2."""
    m = Machine(H200, "cta")
    d = Demand(dram=1000, dram_lines=3000, l2=5000)
    assert _transfer_ns(d, m, 1, 132) == pytest.approx(3000 * 132 / 4238.4, rel=1e-12)   # 93.431
    assert _bound_name("copy", d, m, 1, 132) == "dram"


def test_the_sm_ceiling_names_dram():
    """8 SMs pull: the share 4,238.4 / 8 = 529.8 B/ns is over one SM's ceiling, so the DRAM rate
    is 41 x 1.98 = 81.18 B/ns; L2's share is 11,000 / 8 = 1,375 B/ns. 1,000 DRAM bytes take
    1,000 / 81.18 = 12.318 ns, 10,000 L2 bytes 10,000 / 1,375 = 7.273 ns: DRAM sets the copy's
    time. The label read the uncapped share (1,000 / 529.8 = 1.888 ns < 7.273) and said l2."""
    m = Machine(H200, "cta")
    d = Demand(dram=1000, l2=10000)
    assert _transfer_ns(d, m, 1, 8) == pytest.approx(1000 / 81.18, rel=1e-12)   # 12.318
    assert _bound_name("copy", d, m, 1, 8) == "dram"


def test_l2_named_where_it_sets_the_time():
    """The same 8 SMs with 20,000 L2 bytes: 20,000 / 1,375 = 14.545 ns > 12.318 ns of DRAM: l2;
    r = 2 positions double both terms (24.636 against 29.091 ns) and keep the label."""
    m = Machine(H200, "cta")
    d = Demand(dram=1000, l2=20000)
    assert _transfer_ns(d, m, 2, 8) == pytest.approx(2 * 20000 / 1375, rel=1e-12)   # 29.091
    assert _bound_name("copy", d, m, 2, 8) == "l2"
