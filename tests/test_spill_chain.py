"""A 32-register spilling k-loop's chain of local round trips (tfx.analysis.spill_chain).

Facts (hw_profiles/h200_sxm.toml, calibration/h200/measured/ldl_chase): local.l2_latency 130.0 ns
and local.dram_latency 357.3 ns, memory.l2.capacity 62,914,560 B. The census constants
(calibration/h200/measured/spill_chain/chain.csv, 13 kernels): WAITS_PER_MMA = 2.102, the median
of waits_per_HMMA (sorted 1.684 1.695 1.756 1.855 1.865 1.996 [2.102] 2.137 2.166 2.168 2.214
2.25 2.3, the 7th of 13); FAR_WAIT_SHARE = 0.576, the median of far_wait_share (sorted 0.532
0.536 0.556 0.568 0.570 0.574 [0.576] 0.585 0.595 0.655 0.676 0.712 0.745). Every expected
number is derived in its docstring."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import spill_chain
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
L2 = 62_914_560
CHAIN = ROOT / "calibration/h200/measured/spill_chain/chain.csv"
CHASE = ROOT / "calibration/h200/measured/ldl_chase/ldl_chase.csv"


def test_census_constants_are_the_medians_of_the_stored_sass_census():
    """The module's constants are what the stored census gives (13 kernels, all at 32
    registers, REG and STACK / 4 equal to the measured regs and spills)."""
    rows = list(csv.DictReader(open(CHAIN)))
    assert len(rows) == 13
    assert all(r["n_regs"] == r["regs_measured"] == "32" for r in rows)
    assert all(r["n_spills"] == r["spills_measured"] for r in rows)
    assert statistics.median(float(r["waits_per_HMMA"]) for r in rows) == spill_chain.WAITS_PER_MMA
    assert statistics.median(float(r["far_wait_share"]) for r in rows) == spill_chain.FAR_WAIT_SHARE


def test_profile_latencies_are_the_chase_s():
    """local.l2_latency: the 1024-word frames at 1 CTA a SM (34.6 MB), 129.98 ns -> 130.0;
    local.dram_latency: the median of the 16 rows past L2 (frames of 69 MB and more),
    (356.70 + 357.82) / 2 = 357.26 -> 357.3."""
    rows = list(csv.DictReader(open(CHASE)))
    l2 = [float(r["ns_per_step"]) for r in rows if r["frame_words"] == "1024" and r["ctas_per_sm"] == "1"]
    past = [float(r["ns_per_step"]) for r in rows if float(r["machine_frames_B"]) > L2]
    assert l2 == [129.98] and len(past) == 16
    assert statistics.median(past) == pytest.approx(357.26)
    assert H200.get("local.l2_latency") == pytest.approx(130.0)
    assert H200.get("local.dram_latency") == pytest.approx(357.3)


def test_applies_only_at_32_registers_with_spills():
    assert spill_chain.applies(32, 6640)
    assert not spill_chain.applies(32, 0)
    assert not spill_chain.applies(255, 6640)
    assert list(spill_chain.applies(np.array([32, 255, 32]), np.array([4, 4, 0]))) == [True, False, False]


def test_frames_in_l2_wait_the_l2_round_trip():
    """128x4096x4096 128x128x64 on 2 warps (warps 1 x 2, a 128 x 64 warp tile, K 64):
    (128/16) x (64/8) x (64/16) = 8 x 8 x 4 = 256 mma.sync a trip; 2.102 x 256 = 538.112 waits.
    32 CTAs x 64 threads x 1660 words x 4 B = 13,598,720 B of frames <= L2: 130.0 ns a wait:
    538.112 x 130.0 = 69,954.56 ns a trip."""
    c = spill_chain.trip_chain(256, 32, 6640, 13_598_720, L2, 130.0, 357.3)
    assert c.waits == pytest.approx(538.112)
    assert not c.past_l2
    assert c.latency_ns == pytest.approx(130.0)
    assert c.ns == pytest.approx(69_954.56)


def test_frames_past_l2_wait_their_far_share_past_it():
    """2560^3 256x128x64 (3368 words) at 2 CTAs a SM on 132 SMs: 13,472 B x 64 x 264 =
    227,622,912 B of frames > L2: a wait 0.576 x 357.3 + 0.424 x 130.0 = 205.8048 + 55.12 =
    260.9248 ns; 512 mma (a 128 x 128 warp tile over K 64: 8 x 16 x 4) x 2.102 = 1076.224
    waits: 1076.224 x 260.9248 = 280,813.53 ns a trip."""
    ws = 13_472 * 64 * 264
    assert ws == 227_622_912
    c = spill_chain.trip_chain(512, 32, 13_472, ws, L2, 130.0, 357.3)
    assert c.past_l2
    assert c.latency_ns == pytest.approx(260.9248)
    assert c.ns == pytest.approx(280_813.53, abs=0.01)


def test_the_cliff_is_at_l2_s_capacity():
    """One byte under L2 the wait is L2's, one over it the far share's (the chase: 130 ns at
    34.6 MB, 315-336 at 69 MB)."""
    assert spill_chain.wait_ns(L2, L2, 130.0, 357.3) == 130.0
    assert spill_chain.wait_ns(L2 + 1, L2, 130.0, 357.3) == pytest.approx(260.9248)
    both = spill_chain.wait_ns(np.array([L2, L2 + 1.0]), L2, 130.0, 357.3)
    assert list(np.round(both, 4)) == [130.0, 260.9248]


def test_not_at_32_registers_no_floor():
    assert spill_chain.trip_chain(256, 255, 6640, 1e6, L2, 130.0, 357.3).ns == 0


def test_analyze_prices_the_32_register_gemm_at_its_chain():
    """issue15 run1 gemm_bf16 128x4096x4096 BM=128 BN=128 BK=64 WARPS=2 STAGES=1 (compiled 32
    registers, 1660 spilled words; measured 4.338 ms; 1.59 ms before this floor). 32 CTAs,
    one a SM; 4096 / 64 = 64 trips, each at least the chain of the test above, 69,954.56 ns:
    64 x 69,954.56 = 4,477,091.8 ns; the prediction is that plus the launch, the fill and the
    epilogue, within 1% of it."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 128, "N": 4096, "K": 4096, "BM": 128, "BN": 128, "BK": 64, "WARPS": 2, "STAGES": 1, "GROUP_M": 8}
    a = analyze(m, None, H200, p, resources={"regs": 32, "spills": 1660}, check=False)
    chain = [t for t in a.terms if t.name == "spill chain"]
    assert len(chain) == 1
    assert "2.102 waits an mma x 256 mma a trip = 538 round trips of 130.00 ns from L2" in chain[0].detail
    assert "a trip takes at least 69.95 us" in chain[0].detail   # 69,954.56 ns, two decimals of a us
    ns = float(a.metrics["performance.predicted_ns"])
    assert 64 * 69_954.56 <= ns <= 64 * 69_954.56 * 1.01


def test_analyze_without_the_facts_keeps_the_bandwidth_price():
    """A profile without local.l2_latency (h100_sxm less that one fact,
    tests/profile_variants.py) has no chain line; h100_sxm itself, which states it (the GH100's
    130.0 ns), has one."""
    from profile_variants import without
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 128, "N": 4096, "K": 4096, "BM": 128, "BN": 128, "BK": 64, "WARPS": 2, "STAGES": 1, "GROUP_M": 8}
    a = analyze(m, None, without("h100_sxm", "local.l2_latency"), p, resources={"regs": 32, "spills": 1660},
                check=False)
    assert not [t for t in a.terms if t.name == "spill chain"]
    a = analyze(m, None, load_profile("h100_sxm"), p, resources={"regs": 32, "spills": 1660}, check=False)
    assert len([t for t in a.terms if t.name == "spill chain"]) == 1


def _chain_line(spills):
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 2560, "N": 2560, "K": 2560, "BM": 128, "BN": 256, "BK": 32, "WARPS": 2, "STAGES": 1, "GROUP_M": 8}
    a = analyze(m, None, H200, p, resources={"regs": 32, "spills": spills}, check=False)
    chain = [t for t in a.terms if t.name == "spill chain"]
    assert len(chain) == 1
    return chain[0].detail


def test_the_frames_are_the_grid_s_ctas_not_the_machine_s_slots():
    """2560^3 BM=128 BN=256: (2560/128) x (2560/256) = 20 x 10 = 200 CTAs; at up to 9 a SM
    (shared memory), cdiv(200, 132) = 2 a SM, but 2 x 132 = 264 slots hold only the 200 CTAs
    there are. 2040 words: 8,160 B x 64 threads x 200 = 104,448,000 B = 104.4 MB (264 would
    make it 137.9 MB). A warp's 128 x 128 tile over K 32: (128/16) x (128/8) x (32/16) = 256
    mma a trip, 2.102 x 256 = 538.112 waits of 0.576 x 357.3 + 0.424 x 130.0 = 260.9248 ns."""
    assert 8_160 * 64 * 200 == 104_448_000
    d = _chain_line(2040)
    # the one unit policy: bytes to four significant digits (62,914,560 B = 62.91 MB), times
    # to two decimals (260.9248 = 260.92 ns)
    assert "(104.4 MB of spilled frames past L2's 62.91 MB)" in d
    assert "538 round trips of 0.576 x 357.30 ns past L2 + 0.424 x 130.00 ns from L2 = 260.92 ns" in d


def test_frames_that_fit_l2_only_by_the_grid_s_count_wait_l2_s_round_trip():
    """The same GEMM at 1024 spilled words: 4,096 B x 64 x 200 = 52,428,800 B <= L2's
    62,914,560 B, where 264 slots' worth (69,206,016 B) would be past it: each of the
    538.112 waits is L2's 130.0 ns, 538.112 x 130.0 = 69,954.56 ns a trip (not 260.9 ns a
    wait)."""
    assert 4_096 * 64 * 200 == 52_428_800 <= L2 < 4_096 * 64 * 264 == 69_206_016
    d = _chain_line(1024)
    # 52,428,800 B = 52.43 MB, 62,914,560 B = 62.91 MB; 69,954.56 ns = 69.95 us
    assert "538 round trips of 130.00 ns from L2 (52.43 MB of spilled frames within L2's 62.91 MB)" in d
    assert "a trip takes at least 69.95 us" in d
