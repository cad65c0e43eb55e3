"""tfx.analysis.lockstep_chain: the CTAs of a lock-step wave (a launch of one wave or less, the
first full wave of a longer one) compute together, and their compute phase lasts at least one
CTA's compute chain (issue, element chain, reductions), however few CTAs share the SM.

The chain's parts are derived by hand in tests/test_row_body.py
(test_softmax_element_chain_sets_the_compute_of_its_chain) for kernels/softmax.tile at N = 8192,
BLOCK_M = 1, WARPS = 4 (128 threads, 64 f32 elements a thread): issue vector 177.78 + special
258.62 = 436.40 ns (436.395), element chain beyond each phase's issue 210.10 + 743.43 = 953.54
ns, reductions 358.28 ns. h200_sxm:
DRAM 4,238.4 B/ns over 132 SMs = 32.109 B/ns a SM, latency 700 ns, launch 3 us.
"""

from pathlib import Path

import pytest

from tfx.analysis import lockstep_chain
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

SOFTMAX = Path(__file__).resolve().parent.parent / "kernels" / "softmax.tile"


def _softmax(m):
    return analyze(parse_file(SOFTMAX), None, load_profile("h200_sxm"),
                   {"M": m, "N": 8192, "BLOCK_M": 1, "WARPS": 4},
                   resources={"threads": 128, "regs": 128, "spills": 0, "smem": 0})


def test_one_cta_chain_outlasts_its_issue():
    """One CTA per SM: chain 436.40 + 953.54 + 358.28 = 1,748.22 ns against the issue of one
    CTA, 436.40 ns: the op-by-op sum lacks 1,311.82 ns."""
    step = lockstep_chain.lock_step(
        {"vector": 177.78, "special": 258.62, "copy": 1020.5, "reduce": 358.28, "element chain": 953.54},
        {"vector": 177.78, "special": 258.62, "copy": 1020.5})
    assert step.chain == pytest.approx(1748.22)
    assert step.issue == pytest.approx(436.40)
    assert step.excess == pytest.approx(1311.82)


def test_many_ctas_issue_covers_the_chain():
    """Five CTAs per SM issue 5 x 436.40 = 2,182.00 ns of compute, over one CTA's 1,748.22 ns
    chain: the op-by-op sum stands (excess 0). The copy engine is not compute."""
    step = lockstep_chain.lock_step(
        {"vector": 177.78, "special": 258.62, "reduce": 358.28, "element chain": 953.54},
        {"vector": 5 * 177.78, "special": 5 * 258.62, "copy": 9999.0})
    assert step.issue == pytest.approx(2182.00)
    assert step.excess == 0


def test_one_wave_softmax_adds_its_chain():
    """M = 132: 132 CTAs, one per SM, one wave (the tail of a launch with no full wave), in lock
    step. Op by op: the load max(16,384 B / 32.109 = 510.26, 700) = 700, compute issue 436.395,
    the store 510.26 ns = 1,646.66 ns; plus the chain's 436.395 + 953.535 + 358.282 - 436.395 =
    1,311.82 ns = 2,958.47 ns. 3,000 + 700 + 2,958.47 = 6,658.47, up to 6,659 ns."""
    a = _softmax(132)
    assert a.metrics["performance.predicted_ns"] == 6659
    line = {t.name: t for t in a.terms}["lock step"].detail
    assert "the wave's CTAs compute together" in line
    assert "= 1.75 us, against the compute issue of 1 CTA per SM 436.40 ns: +1.31 us" in line


def test_first_wave_of_a_long_launch():
    """M = 4096: 4 CTAs per SM, 7.76 waves; the first full wave's 4 CTAs issue 4 x 436.395 =
    1,745.58 ns of compute, just under the 1,748.21 ns chain: +2.63 ns a lock-step batch."""
    a = _softmax(4096)
    line = {t.name: t for t in a.terms}["lock step"].detail
    assert "against the compute issue of 4 CTAs per SM 1.75 us: +2.63 ns" in line
