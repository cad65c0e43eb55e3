"""A persistent walk's tiles after its first round drift apart: their trips' L2 bytes travel at
the SM's port, not its share of the L2 (tfx.analysis.pipeline_depth.walk_transfer,
docs/analysis.md, "The walk's tiles drift apart after its first round"; session 23, persist23;
calibration/h200/measured/persist_walk_s20). Every expected number is worked by hand in the
docstrings."""
from fractions import Fraction

import pytest

from tfx.analysis import pipeline_depth
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.analysis.persistent_rounds import Rounds
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")


def test_drifted_share_is_the_tiles_after_the_first_round():
    """3072^3 in 128 x 128 tiles: 24 x 24 = 576 tiles on 114 CTAs; the first round is 114 of
    them, so 1 - 114 / 576 = 462 / 576 = 0.80208 of the tiles start after it. A walk of no more
    tiles than CTAs has one round and none drifted."""
    r = Rounds("loop", 36, "sm", 114, 5, Fraction(576, 114), 6, "t", 576)
    assert pipeline_depth.walk_drifted_share(r) == pytest.approx(462 / 576, rel=1e-12)
    one = Rounds("loop", 36, "sm", 132, 1, 1, 0, "t", 132)
    assert pipeline_depth.walk_drifted_share(one) == 0


def test_transfer_mixes_the_lock_step_round_and_the_drifted_ones():
    """The same walk's trip, 128 x 64 + 64 x 128 bf16 = 32,768 B from L2 (1,387 B of them
    from DRAM, at one SM's own 81.18 B/ns: 17.08 ns). The SM's port: 65 B/cycle x 1.98 GHz =
    128.7 B/ns, 32,768 / 128.7 = 254.6076 ns; its share of the L2 with 114 SMs pulling:
    11,000 / 114 = 96.4912 B/ns, 32,768 / 96.4912 = 339.5956 ns. The first round's tiles (114 /
    576) take max(339.5956, 254.6076) = 339.5956, the others (462 / 576) max(17.08, 254.6076) =
    254.6076: 0.19792 x 339.5956 + 0.80208 x 254.6076 = 67.2116 + 204.2165 = 271.4281 ns."""
    m = Machine(H200, "cta")
    share = 32768 * 114 / 11000
    dram = 1387 / 81.18
    w = pipeline_depth.walk_transfer(m, 32768, share, dram, Fraction(462, 576), (114, 576))
    port = 32768 / (65 * 1.98)
    assert float(w.port_ns) == pytest.approx(port, rel=1e-9)
    assert float(w.ns) == pytest.approx(114 / 576 * share + 462 / 576 * port, rel=1e-9)
    assert float(w.ns) == pytest.approx(271.4281, abs=1e-3)
    # a walk of one round is one wave in lock step: the share, as before
    assert float(pipeline_depth.walk_transfer(m, 32768, share, dram, 0).ns) == pytest.approx(share, rel=1e-12)
    # where the DRAM bytes alone take longer than the port, the drifted tiles wait for them
    assert float(pipeline_depth.walk_transfer(m, 32768, share, 400.0, 1).ns) == pytest.approx(400.0)


def test_breakdown_shows_the_mix():
    """The 3072^3 walk above (128 x 128 x 64, 4 warps, 3 stages, 114 CTAs, as issue15/run4
    measured it): its memory-parallelism line writes the transfer with its values."""
    module = parse_file("kernels/persistent_gemm.tile")
    p = dict(M=3072, N=3072, K=3072, BM=128, BN=128, BK=64, WARPS=4, STAGES=3, NUM_SMS=114)
    a = analyze(module, None, H200, p, resources={"threads": 128, "regs": 213, "spills": 0}, l2_clear=True)
    line = next(t.detail for t in a.terms if t.name == "memory parallelism")
    assert ("(the transfer, 0.198 x max(339.60 ns at the L2 share, 254.61 ns through the port) for the walk's "
            "tiles in lock step (114 CTAs' first round of 576 tiles) + 0.802 x max(17.08 ns of DRAM at the SM's "
            "own rate, 254.61 ns) for those after it, whose CTAs have drifted apart = 271.43 ns)") in line
