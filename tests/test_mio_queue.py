"""Co-resident warp-mma CTAs wait at the SM's shared-memory (MIO) pipe behind each other's
requests (tfx.analysis.warp_trip.mio_round_ns; docs/analysis.md, "The MIO pipe's queue"):
T = (T0 + b + sqrt((T0 - b)^2 + 2 (n - 1) s^2 / w)) / 2, b = n s, the root of
T = T0 + (n - 1) / n x s / (2 w) x rho / (1 - rho), rho = b / T (M/D/1 waits, the other CTAs'
share). H200 facts: shared memory 128 B a cycle at 1.98 GHz, 0.907 of it under warp mma
(ldmatrix reads), the L2 11 TB/s over 132 SMs (hw_profiles/h200_sxm.toml)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import warp_trip
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent


def test_a_lone_cta_waits_for_none():
    # n = 1: q = 2 x 0 x s^2 / w = 0, so T = (T0 + b + |T0 - b|) / 2 = max(T0, b): the engines'
    # round (400) or, where the pipe is longer, the pipe's own 50 x 1 ... here max(400, 50) = 400
    assert warp_trip.mio_round_ns(400, 50, 1, 2) == 400
    # ... and max(40, 50) = 50 (the smem engine, which the round already has as a floor)
    assert warp_trip.mio_round_ns(40, 50, 1, 2) == 50


def test_seven_ctas_by_hand():
    # T0 = 400 ns, s = 50 ns a CTA on the pipe, n = 7 CTAs of 2 warps: b = 7 x 50 = 350 ns,
    # q = 2 x 6 x 50^2 / 2 = 15,000, (T0 - b)^2 = 2,500, sqrt(17,500) = 132.28757;
    # T = (400 + 350 + 132.28757) / 2 = 441.14378 ns
    t = warp_trip.mio_round_ns(400, 50, 7, 2)
    assert t == pytest.approx(441.14378, abs=1e-5)
    # the queue's own equation: rho = 350 / 441.14378 = 0.79339, rho / (1 - rho) = 3.84004,
    # 400 + 6 / 7 x 50 / (2 x 2) x 3.84004 = 400 + 10.71429 x 3.84004 = 441.14378
    rho = 350 / t
    assert 400 + 6 / 7 * 50 / 4 * rho / (1 - rho) == pytest.approx(t, rel=1e-12)


def test_more_warps_share_the_same_wait():
    # the same 7 CTAs on 8 warps: q = 2 x 6 x 2,500 / 8 = 3,750; sqrt(2,500 + 3,750) = 79.05694;
    # T = (750 + 79.05694) / 2 = 414.52847 ns (a warp's requests are a quarter of the 2-warp
    # CTA's: each waits the same, so a quarter of the wait)
    assert warp_trip.mio_round_ns(400, 50, 7, 8) == pytest.approx(414.52847, abs=1e-5)


def test_no_warp_mma_no_round_and_arrays_elementwise():
    # where the dot does not take the warp mma the round is 0, as warp_trip.round_ns's
    assert warp_trip.mio_round_ns(400, 50, 7, 2, applies=0) == 0
    # arrays: n = 1 -> 400 (above), n = 7 -> 441.14378 (above); applies 0 -> 0
    got = warp_trip.mio_round_ns(np.array([400.0, 400.0, 400.0]), 50, np.array([1, 7, 7]), 2,
                                 np.array([1, 1, 0]))
    assert got == pytest.approx([400, 441.14378, 0], abs=1e-5)


def test_run25_first_pick_breakdown_by_hand():
    # issue15 run25 bf16 64x28672x4096's first pick, 32x64x32 on 2 warps, 5 stages, 95 registers,
    # 24,576 B of shared memory: 896 CTAs, 7 on the busiest SM. One CTA's pipe a trip: its copies
    # written, A 32 x 32 + B 32 x 64 bf16 = 6,144 B at 128 B x 1.98 GHz = 253.44 B/ns, 24.24242 ns,
    # and its ldmatrix reads, (2 x 32 + 1 x 64) x 32 x 2 B = 8,192 B at 253.44 x 0.907 =
    # 229.87008 B/ns, 35.63752 ns: s = 59.87995 ns. At the SM's even L2 share the round before the
    # waits would be 7 x 6,144 B / (11,000 GB/s / 132 = 83.333 B/ns) = 516.096 ns. b = 7 x 59.87995
    # = 419.15962; q = 2 x 6 x 59.87995^2 / 2 = 21,513.648; (516.096 - 419.15962)^2 = 9,396.661;
    # sqrt(30,910.309) = 175.81328; T = (516.096 + 419.15962 + 175.81328) / 2 = 555.53445 ns.
    # The launch is one wave (896 of 7 x 132 = 924 slots), so the L2 serves its 896 CTAs, not the
    # 132 SMs (tests/test_l2_cta_share.py): the busiest SM's 7 CTAs draw 7 / (896 / 132) of the
    # even share, and the round is 896 x 6,144 B / 11,000 B/ns = 500.45673 ns;
    # (500.45673 - 419.15962)^2 = 6,609.219; sqrt(21,513.648 + 6,609.219 = 28,122.867) = 167.69874;
    # T = (500.45673 + 419.15962 + 167.69874) / 2 = 543.65754 ns, the pipe busy 419.15962 /
    # 543.65754 = 77.1%
    s = 6144 / (128 * 1.98) + 8192 / (128 * 1.98 * 0.907)
    assert s == pytest.approx(59.87995, abs=1e-5)
    t = warp_trip.mio_round_ns(7 * 6144 / (11000 / 132), s, 7, 2)
    assert t == pytest.approx(555.53445, abs=1e-5)
    t = warp_trip.mio_round_ns(896 * 6144 / 11000, s, 7, 2)
    assert t == pytest.approx(543.65754, abs=1e-5)
    mod = parse_file(ROOT / "kernels" / "gemm.tile")
    a = analyze(mod, None, load_profile("h200_sxm"),
                dict(M=64, N=28672, K=4096, BM=32, BN=64, BK=32, WARPS=2, STAGES=5, GROUP_M=8),
                resources={"regs": 95, "spills": 0, "smem": 24576}, check=False)
    line = {t.name: t.detail for t in a.terms}["mio queue"]
    assert "7 CTAs x 59.88 ns = 419.16 ns of pipe a round, busy 77.1%" in line
    assert "the round 500.46 ns + 6 / 7 x 59.88 ns / (2 x 2 warps) x 77.1% / (1 - 77.1%) = 543.66 ns" in line


def test_one_cta_an_sm_has_no_mio_line():
    # run7 32x4096x8192 16x128x32 on 2 warps, 5 stages (tests/test_fragment_chain.py): 64 CTAs,
    # one a SM: nothing waits, no line
    mod = parse_file(ROOT / "kernels" / "gemm.tile")
    a = analyze(mod, None, load_profile("h200_sxm"),
                dict(M=32, N=4096, K=8192, BM=16, BN=128, BK=32, WARPS=2, STAGES=5, GROUP_M=8),
                resources={"regs": 96, "spills": 0}, check=False)
    assert "mio queue" not in {t.name for t in a.terms}
    assert "warp-mma trip" in {t.name for t in a.terms}
    assert math.isfinite(float(a.metrics["performance.predicted_ns"]))
