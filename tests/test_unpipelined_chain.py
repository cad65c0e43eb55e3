"""An unpipelined serial trip is its load wait, then its chains (tfx.analysis.unpipelined_chain).

By hand, from hw_profiles/h200_sxm.toml (the constants of tests/test_attention_chain.py): clock
1.98 GHz; the load-trip chain 242 cycles = 122.22 ns; L2 latency 200 ns, DRAM 700; the SM's L2
share 11,000 / 132 = 83.333 B/ns, its port 65 x 1.98 = 128.7 B/ns.
"""

from pathlib import Path

import pytest

from tfx.analysis import unpipelined_chain
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
PROFILE = load_profile("h200_sxm")


def test_the_floor_is_dropped_only_for_a_serial_chain():
    """A trip whose chain stations are priced (not None) has no one-CTA floor; any other trip
    (a GEMM k-loop: stations None) keeps it."""
    assert unpipelined_chain.floor_ns(2170.0, None) == 2170.0
    assert unpipelined_chain.floor_ns(2170.0, object()) == 0
    import numpy as np
    assert list(unpipelined_chain.floor_ns(np.array([1.0, 2.0]), object())) == [0, 0]


def test_one_stage_round_of_one_cta_is_the_wait_and_the_chain():
    """flash_attention B1 H32 S8192 D128 at 128 x 64, 8 warps, 1 stage, 148 registers: 1 CTA a
    SM (256 x 148 = 37,888 of 65,536 registers). Its chain alone is the one derived in
    tests/test_attention_chain.py for the same tile: 724.13 (tensor) + 541.41 (simt) - 137.63
    (delay less the two warpgroups' overlap) = 1127.92 ns. The wait: the load-trip chain 122.22
    ns + the latency (3 of a wave's 132 CTAs start a head; the one it starts in is the previous
    wave's whenever it starts mid-head, 1 - gcd(132, 64) / 64 = 15/16 of the waves, x 1916/2048:
    (3 - 15/16 x 1916/2048) / 132 = 1.6083% miss (tfx.analysis.l2_reuse.cross_value_share),
    0.016083 x 700 + 0.983917 x 200 = 208.04 ns) + K and V, 32,768 B, for the 1 - 132/2048 =
    93.5547% of CTAs that drift apart at the port (254.61 ns) and the first wave's at the L2
    share (393.22 ns): 263.54 ns; 593.80 ns. A round is 1127.92 + 593.80 = 1721.72 ns, which
    the one-CTA sum of latency and every engine in series (over 2 us: both tiles' transfer again
    at the L2 share, the shared-memory port, both warpgroups' mma and softmax end to end) no
    longer floors: the load wait adds exactly the wait over the chain, 15 full waves x 127
    trips x 593.80 ns, and the last key block's loop (1 trip) the same wait once."""
    a = analyze(parse_file(str(KERNELS / "flash_attention.tile")), None, PROFILE,
                dict(B=1, H=32, S=8192, D=128, BLOCK_M=128, BLOCK_N=64, WARPS=8, STAGES=1),
                resources=dict(threads=256, regs=148, smem=98304, spills=0))
    miss = (3 - 15 / 16 * 1916 / 2048) / 132
    latency = miss * 700 + (1 - miss) * 200
    assert latency == pytest.approx(208.04, abs=1e-2)
    drifted = 1 - 132 / 2048
    transfer = (1 - drifted) * 32_768 / (11_000 / 132) + drifted * 32_768 / (65 * 1.98)
    wait = 242 / 1.98 + latency + transfer
    assert wait == pytest.approx(593.80, abs=1e-2)
    waits = [t for t in a.terms if t.name == "load wait"]
    assert [t.ns for t in waits] == pytest.approx([15 * 127 * wait, 15 * 1 * wait], rel=1e-4)
    assert "is not a floor" in waits[0].detail and "1.72 us a trip" in waits[0].detail
    # 1 CTA a SM: the line's verbs and pronouns in the singular (it read 'the 1 resident CTAs
    # wait for their loads together ... then run their chains (... a round of the 1)')
    assert "each round the 1 resident CTA waits for its loads, latency 208.04 ns + " in waits[0].detail
    assert "then runs its chain (1.13 us a round): 1.72 us " in waits[0].detail
