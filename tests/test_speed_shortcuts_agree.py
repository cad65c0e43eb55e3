"""What the analysis' speed-ups of session 14 (bench/explore_speed.py, bench/analyze_speed.py)
keep equal: each shortcut answers as the long way did."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tfx.analysis.analyze import analyze
from tfx.explore.evaluate import grouped_near_times
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
# run12's regret row, GROUP_M = 1: its readers drift apart at STAGES >= 2 (the lone CTA and the
# second pricing run, l2_reuse.drift_refetch); at STAGES = 1 its trip is the unpipelined cycle
SHAPE = {"M": 128, "N": 28672, "K": 8192, "BM": 64, "BN": 256, "BK": 32, "WARPS": 8, "GROUP_M": 1}


def _scalar_ns(module, profile, **params):
    return analyze(module, None, profile, {**SHAPE, **params}, check=False).metrics["performance.predicted_ns"]


def test_a_sweep_solves_the_unpipelined_cycle_on_its_one_stage_slice_only_and_prices_as_one_at_a_time():
    """performance._unpipelined_cycle_where: the cycle solved where STAGES = 1 only; every element
    of a sweep is the scalar analysis' number, along one axis (the slice) and along two (the mask)."""
    module = parse_file(ROOT / "kernels" / "gemm.tile")
    profile = load_profile("h200_sxm")
    stages = np.array([1, 2, 3, 4, 5, 1])
    bk = np.array([32, 32, 32, 32, 32, 64])
    swept = analyze(module, None, profile, {**SHAPE, "STAGES": stages, "BK": bk}, check=False).metrics
    want = [_scalar_ns(module, profile, STAGES=int(s), BK=int(k)) for s, k in zip(stages, bk)]
    assert want[0] != want[-1]       # the two one-stage elements differ: each must land in its place
    assert np.asarray(swept["performance.predicted_ns"]).tolist() == want
    # STAGES varying along both axes of a 2 x 2 grid, BK along the columns
    stages2 = np.array([[1, 5], [4, 1]])
    bk = np.array([[32, 64]])
    swept2 = analyze(module, None, profile, {**SHAPE, "STAGES": stages2, "BK": bk}, check=False).metrics
    got = np.broadcast_to(np.asarray(swept2["performance.predicted_ns"]), (2, 2))
    for i in range(2):
        for j in range(2):
            assert got[i, j] == _scalar_ns(module, profile, STAGES=int(stages2[i, j]), BK=int(bk[0, j]))


def test_the_groups_of_a_chunk_near_times_by_one_integer_a_row():
    """evaluate.grouped_near_times: rows (2, 1), (1, 5), (1, 2) in lexicographic order, each with
    near_times of its own times (band 1.83%, the re-timing noise): (1, 2) has 7 alone; (1, 5) has
    20 and 30, 30 > 20 x 1.0183 = 20.37 so it is kept as the fastest outside: [20, 30]; (2, 1) has
    105, 100, 101, 110: 101 <= 101.83 inside, 105 the fastest outside: [100, 101, 105]."""
    keys = np.array([[2, 1], [1, 5], [2, 1], [1, 5], [1, 2], [2, 1], [2, 1]])
    t = np.array([105.0, 20.0, 100.0, 30.0, 7.0, 101.0, 110.0])
    got = grouped_near_times(keys, t)
    assert [k for k, _ in got] == [(1, 2), (1, 5), (2, 1)]
    assert [v.tolist() for _, v in got] == [[7.0], [20.0, 30.0], [100.0, 101.0, 105.0]]
