"""The simulator lowers its loads with the L2 miss ratios the prediction was priced with
(tfx.sim.run._wave_miss reads ``LaunchTime.reuse``), not a second wave_reuse of its own: where
GROUP_M = 1 co-readers drift apart (docs/analysis.md, "GROUP_M = 1: readers that drift apart")
the prediction raises the column tile's DRAM share v to v + share x (1 - v), and a simulation
that recomputed the lock-step ratios disagreed with `tfx analyze` on the same launch.

H200 facts: 132 SMs; run12's regret row (128x28672x8192, 64x256x32, 8 warps, 5 stages,
GROUP_M 1) at 114 registers and 102,400 B of shared memory holds 2 CTAs an SM.
"""

from pathlib import Path

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.l2_reuse import wave_reuse
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.sim.run import _wave_miss

H200 = load_profile("h200_sxm")
GEMM = parse_file(Path(__file__).resolve().parent.parent / "kernels" / "gemm.tile")
REGRET = dict(M=128, N=28672, K=8192, BM=64, BN=256, BK=32, WARPS=8, STAGES=5, GROUP_M=1)
REGRET_RES = dict(regs=114, smem=102400)


def test_the_simulator_reads_the_drifted_ratios_the_launch_was_priced_with():
    a = analyze(GEMM, None, H200, REGRET, resources=REGRET_RES, check=False)
    (lt,) = a.launches
    assert lt.drift is not None and 0 < float(lt.drift.share) < 1
    lock_step = wave_reuse(a.root, a.kernel, a.params, H200, {lt.scope: 2})[lt.scope]
    sim = _wave_miss(a)[lt.scope]
    assert sim is lt.reuse
    share = float(lt.drift.share)
    moved = 0
    for op, v in lock_step.items():
        if op in lock_step.drift.ops:
            # the column tile's shared re-reads: v + share x (1 - v)
            assert float(sim[op]) == pytest.approx(float(v) + share * (1 - float(v)))
            moved += float(v) < 1
        else:
            assert float(sim[op]) == pytest.approx(float(v))
    assert moved >= 1


def test_a_launch_without_drift_simulates_its_lock_step_ratios():
    """GROUP_M = 2 co-readers share a dispatch pair: no drift, the ratios wave_reuse gives."""
    a = analyze(GEMM, None, H200, dict(REGRET, GROUP_M=2), resources=REGRET_RES, check=False)
    (lt,) = a.launches
    assert lt.drift is None
    lock_step = wave_reuse(a.root, a.kernel, a.params, H200, {lt.scope: 2})[lt.scope]
    sim = _wave_miss(a)[lt.scope]
    assert dict(sim.items()) == pytest.approx(dict(lock_step.items()))
