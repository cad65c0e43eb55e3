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
    1,745.58 ns of compute, just under the 1,748.21 ns chain (+2.63 ns); but their warps issue
    the compiled binary's 867 instructions each (row_body.INSTRUCTIONS, softmax (1, 4) at N =
    8192), 4 CTAs x 4 warps / 4 schedulers = 4 warps a scheduler x 867 = 3,468 cycles / 1.98 GHz
    = 1,751.52 ns, longer still: 1,751.515 - 1,745.58 = +5.93 ns a lock-step batch."""
    a = _softmax(4096)
    line = {t.name: t for t in a.terms}["lock step"].detail
    assert "4 warps on the busiest scheduler at one a cycle: 3,468 cycles = 1.75 us" in line
    assert "against the compute issue of 4 CTAs per SM 1.75 us: +5.93 ns" in line


def test_issue_floor_sets_the_compute_phase():
    """The floor over the chain: chain 652.66 ns, floor 1,494.95 ns, 4 CTAs' issue 872.85 ns:
    excess 1,494.95 - 872.85 = 622.10 ns; with the floor under the chain the chain's excess stands
    (a floor of 0, an unknown binary, leaves the batch as it was)."""
    parts = {"vector": 88.89, "special": 129.32, "reduce": 426.36, "element chain": 8.09}
    engines = {"vector": 4 * 88.89, "special": 4 * 129.32}
    step = lockstep_chain.lock_step(parts, engines, 1494.95, 185, 16)
    assert step.chain == pytest.approx(652.66)
    assert step.excess == pytest.approx(622.11)
    assert lockstep_chain.lock_step(parts, {"vector": 88.89, "special": 129.32}, 300.0).excess == pytest.approx(434.45)
    assert lockstep_chain.lock_step(parts, engines).excess == 0


def test_issue_floor_by_hand():
    """row_body.issue_floor_ns: ceil(r x warps / 4) warps on the busiest scheduler x the warp's
    instructions, one a cycle at 1.98 GHz. 4 CTAs of 16 warps: 64 / 4 = 16 x 185 = 2,960 cycles
    = 1,494.95 ns; 3 CTAs of 2 warps: ceil(6 / 4) = 2 x 500 = 1,000 cycles = 505.05 ns; no
    count, no floor."""
    from tfx.analysis import row_body
    assert row_body.issue_floor_ns(185, 4, 16, 4, 1.98) == pytest.approx(1494.949, abs=1e-3)
    assert row_body.issue_floor_ns(500, 3, 2, 4, 1.98) == pytest.approx(505.051, abs=1e-3)
    assert row_body.issue_floor_ns(0, 3, 2, 4, 1.98) == 0


def test_compiled_instructions_of_the_row_binaries():
    """row_body.INSTRUCTIONS (calibration/h200/measured/row_sass_counts/counts.csv): softmax (1, 16)
    at N = 4096 185 a warp, rmsnorm (1, 1) at 1024 287; another kernel, an N the campaigns do not
    draw (5120), a missing parameter or another instruction set: 0 (not known); a sweep takes each
    position's own: softmax (1, 16), (1, 4) at 4096 and (3, 4): 185, 466, 0."""
    import numpy as np
    from tfx.analysis import row_body
    assert row_body.compiled_instructions("softmax", {"N": 4096, "BLOCK_M": 1, "WARPS": 16}, "sm_90") == 185
    assert row_body.compiled_instructions("rmsnorm", {"N": 1024, "BLOCK_M": 1, "WARPS": 1}, "sm_90") == 287
    assert row_body.compiled_instructions("copy", {"N": 4096, "BLOCK_M": 1, "WARPS": 16}, "sm_90") == 0
    assert row_body.compiled_instructions("softmax", {"N": 5120, "BLOCK_M": 1, "WARPS": 16}, "sm_90") == 0
    assert row_body.compiled_instructions("softmax", {"N": 4096}, "sm_90") == 0
    assert row_body.compiled_instructions("softmax", {"N": 4096, "BLOCK_M": 1, "WARPS": 16}, "sm_100") == 0
    got = row_body.compiled_instructions("softmax", {"N": np.array([4096, 4096, 4096]), "BLOCK_M": np.array([1, 1, 3]),
                                                     "WARPS": np.array([16, 4, 4])}, "sm_90")
    assert list(got) == [185, 466, 0]


def test_first_wave_waits_its_warps_issue():
    """kernels/softmax.tile M = 1024, N = 4096, BLOCK_M = 1, 16 warps, 25 registers (issue-15 run13:
    measured 10.94 us): 512 threads, 4 CTAs a SM (2,048 threads), 1,024 CTAs on 528 slots = 1.94
    waves, the first in lock step. One CTA's issue: vector 11 lane ops x 4,096 elements / 506.88 =
    88.89 ns + special (4,096 exp + 1 recip) / (16 x 1.98 = 31.68 a ns) = 129.32 ns = 218.21 ns;
    its chain with the reductions and the element chain 652.66 ns; 4 CTAs issue 872.85 ns of
    compute. Their warps: 4 x 16 = 64 / 4 schedulers = 16 a scheduler x 185 instructions = 2,960
    cycles / 1.98 GHz = 1,494.95 ns, over both: +1,494.95 - 872.85 = +622.10 ns in the first wave
    (before, the chain under the issue added nothing)."""
    a = analyze(parse_file(SOFTMAX), None, load_profile("h200_sxm"),
                {"M": 1024, "N": 4096, "BLOCK_M": 1, "WARPS": 16},
                resources={"threads": 512, "regs": 25, "spills": 0, "smem": 64})
    line = {t.name: t for t in a.terms}["lock step"].detail
    assert "the first wave's CTAs compute together" in line
    assert ("their warps issue 185 instructions each (the compiled binary), 16 warps on the busiest scheduler "
            "at one a cycle: 2,960 cycles = 1.49 us, against the compute issue of 4 CTAs per SM 872.85 ns: "
            "+622.10 ns") in line
