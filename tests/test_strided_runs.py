"""DRAM reads in short runs that no neighbouring CTA continues keep DRAM busy (tfx.analysis.strided_runs).

H200 facts (hw_profiles/h200_sxm.toml [memory.gmem], calibration/h200/measured/b_runs):
copy bandwidth 4800 GB/s x 0.883 = 4,238.4 B/ns; bandwidth_strided_runs 2.12 TB/s (2,120 B/ns,
K-major 64-B pieces on 132 SMs), bandwidth_strided_sectors 1.88 TB/s (1,880 B/ns, 32-B pieces),
bandwidth_short_runs 3.2 TB/s (3,200 B/ns, runs under 128 B whose neighbours continue them).
"""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import strided_runs
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.ir.nodes import Window, walk_ops
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")
KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def _loads(name):
    kernel = parse_file(str(KERNELS / name)).kernel()
    windows = {o.tensor: o for op in walk_ops(kernel.body) if op.opcode == "load"
               for o in op.operands if isinstance(o, Window)}
    return kernel, windows


def test_which_reads_advance_with_the_trip_only():
    """gemm_fp8.tile: A[pm * BM : BM, k * BK : BK] and BT[pn * BN : BN, k * BK : BK] move their
    contiguous axis with k (the staged loop) only; gemm.tile's B[k * BK : BK, pn * BN : BN] moves
    it with the CTA's pn (CTA pn + 1 continues the run); persistent_gemm.tile's
    B[k * BK : BK, t % TILES_N * BN : BN] with the outer tile loop t (not staged)."""
    kernel, w = _loads("gemm_fp8.tile")
    staged, other = strided_runs.index_names(kernel)
    assert staged == {"k"} and other == {"pm", "pn"}
    assert strided_runs.advances_with_trip_only(w["BT"], staged, other)
    assert strided_runs.advances_with_trip_only(w["A"], staged, other)
    kernel, w = _loads("gemm.tile")
    assert not strided_runs.advances_with_trip_only(w["B"], *strided_runs.index_names(kernel))
    kernel, w = _loads("persistent_gemm.tile")
    staged, other = strided_runs.index_names(kernel)
    assert staged == {"k"} and other == {"sm", "t"}
    assert not strided_runs.advances_with_trip_only(w["B"], staged, other)
    assert strided_runs.advances_with_trip_only(w["A"], staged, other)


def test_the_rate_of_isolated_runs_by_length():
    """Under 64 B: 1.88e12 B/s; 64-127 B: 2.12e12; 128 B and longer: no such fact (None)."""
    m = Machine(H200, "cta")
    assert strided_runs.rate_bytes_per_s(m, 32) == pytest.approx(1.88e12)
    assert strided_runs.rate_bytes_per_s(m, 64) == pytest.approx(2.12e12)
    assert strided_runs.rate_bytes_per_s(m, 127) == pytest.approx(2.12e12)
    assert strided_runs.rate_bytes_per_s(m, 128) is None
    arr = strided_runs.rate_bytes_per_s(m, np.array([32, 64, 256]))
    assert arr[0] == pytest.approx(1.88e12) and arr[1] == pytest.approx(2.12e12) and np.isnan(arr[2])


def test_the_factor_of_an_fp8_bt_tile():
    """BT[pn * 128 : 128, k * 64 : 64] of BT[14336, 4096] fp8: 128 runs of 64 x 8 / 8 = 64 B, advancing
    with k only: 4,238.4 / 2,120 = 1.99925x the time of whole lines. At BK = 32: 32-B runs,
    4,238.4 / 1,880 = 2.25447x. At BK = 128: 128-B runs, the short factor passed in (1)."""
    m = Machine(H200, "cta")
    kernel, w = _loads("gemm_fp8.tile")
    staged, other = strided_runs.index_names(kernel)
    env = {"BN": 128, "BK": 64, "BM": 64}
    assert strided_runs.factor(m, w["BT"], (14336, 4096), env, 8, staged, other, 1) == pytest.approx(1.99925, abs=1e-5)
    env["BK"] = 32
    assert strided_runs.factor(m, w["BT"], (14336, 4096), env, 8, staged, other, 1) == pytest.approx(2.25447, abs=1e-5)
    env["BK"] = 128
    assert strided_runs.factor(m, w["BT"], (14336, 4096), env, 8, staged, other, 1) == 1
    # gemm.tile's B [64, 32] bf16 (64-B runs) keeps the neighbour-continued factor passed in
    kernel, wb = _loads("gemm.tile")
    assert strided_runs.factor(m, wb["B"], (4096, 28672), {"BK": 64, "BN": 32}, 16,
                               *strided_runs.index_names(kernel), 1.3245) == 1.3245


def test_the_loaded_round_trip_counts_busy_bytes():
    """issue15 run4 gemm_fp8 64x4096x4096, BM=32 BN=64 BK=64, 4 warps, 5 stages, GROUP_M 8 (measured
    23.17 us): 2 x 64 = 128 CTAs, one per SM. A trip reads A [32, 64] (2,048 B, shared by the 64
    CTAs of its row: 32 B from DRAM) and BT [64, 64] (4,096 B, shared by the 2 CTAs of its column:
    2,048 B from DRAM): 2,080 DRAM bytes in 64-B runs advancing with k only, so the queue counts
    2,080 x 4,238.4 / 2,120 = 4,158.43 B of whole-line DRAM time (the transfer keeps the short-run
    rate: 2,080 x 4,238.4 / 3,200 = 2,754.96 B / (4,238.4 / 128 = 33.1125 B/ns) = 83.20 ns).
    The loaded line holds the trip's bytes through the SM's port only (it was fitted with bytes /
    port subtracted; the 83.20 ns at the DRAM share is in its queueing):
    K = 242 / 1.98 = 122.22 chain + 205 + 6,144 / 128.7 = 47.74 = 374.96 ns;
    slope = (1,582 - 205) / 4,238.4 = 0.324887 ns per B/ns; q = 0.324887 x 128 x 1 x 4,158.43 =
    172,930.4; T = (374.96 + sqrt(374.96^2 + 4 x 4 x 172,930.4)) / (2 x 4) = (374.96 +
    sqrt(140,595.86 + 2,766,886.64 = 2,907,482.50) = 1,705.13) / 8 = 260.01 ns, a round trip of
    4 x 260.01 = 1,040.05 ns (with the bytes themselves, 2,080: q = 86,497.85, T = (374.96 +
    sqrt(140,595.86 + 1,383,965.57) = 1,234.73) / 8 = 201.21 ns a trip, where the hardware takes
    (23.17 - 3.7) / 64 = 304 ns). The drawn bandwidth: 128 x 4,158.43 / 260.01 = 2,047 B/ns,
    205 + 0.324887 x 2,047.13 = 870.09 ns, + 47.74 = 917.83 ns; over the idle branch, which keeps
    the transfer: 557 + max(83.20, 47.74) = 640.20 ns (122.22 + 640.20 = 762.42 ns a round trip)."""
    p = {"M": 64, "N": 4096, "K": 4096, "BM": 32, "BN": 64, "BK": 64, "WARPS": 4, "STAGES": 5, "GROUP_M": 8}
    g = analyze(parse_file(str(KERNELS / "gemm_fp8.tile")), None, H200, p,
                resources={"threads": 128, "regs": 67, "spills": 0, "smem": 24576})
    mp = [t for t in g.terms if t.name == "memory parallelism"]
    assert len(mp) == 1
    d = mp[0].detail
    # printed by the one unit policy (bytes and rates four significant digits, times two decimals):
    # 2.08 KB, 6.144 KB, 2,047.13 B/ns = 2.047 TB/s, 870.09 ns, 1,040.05 ns = 1.04 us, 4.158 KB, 260.01 ns
    assert "2.08 KB of the trip's 6.144 KB come from DRAM" in d
    assert "0.3249 ns per GB/s x 2.047 TB/s drawn = 870.09 ns" in d
    assert "= 1.04 us" in d and "128 SMs x 1 CTA x 4.158 KB of whole-line DRAM time per 260.01 ns" in d
    assert "keep DRAM busy as at 2.12 TB/s (64-127 B)" in d
    assert "counts its 2.08 KB of DRAM bytes as 4.158 KB of whole lines" in d
    assert "2.08 KB take the time of 2.755 KB of whole lines" in d


def test_runs_of_whole_lines_queue_their_bytes():
    """The same grid at BK = 128 (128-B runs: whole lines): no busy clause, the queue counts the
    DRAM bytes themselves (A 32 x 128 / 64 = 64 B + BT 64 x 128 / 2 = 4,096 B = 4,160 B)."""
    p = {"M": 64, "N": 4096, "K": 4096, "BM": 32, "BN": 64, "BK": 128, "WARPS": 4, "STAGES": 5, "GROUP_M": 8}
    g = analyze(parse_file(str(KERNELS / "gemm_fp8.tile")), None, H200, p)
    d = [t for t in g.terms if t.name == "memory parallelism"][0].detail
    assert "4.16 KB of the trip's" in d and "keep DRAM busy" not in d and "of whole-line DRAM time" not in d
    assert "x 4.16 KB per" in d
