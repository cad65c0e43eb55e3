"""The local-memory bytes a spilling k-loop trip moves (tfx.analysis.spill_traffic).

Numbers from hw_profiles/h200_sxm.toml: local.l2_bandwidth 7360 GB/s / 132 SMs = 55.7575... B/ns
per SM (calibration/h200/measured/spill_local). Every expected number below is derived in its
docstring or comment."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tfx.analysis.analyze import analyze
import numpy as np
import pytest

from tfx.analysis.spill_traffic import in_series, kloop_trip, stored_once_share
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")


def warp(warp_m, warp_n, k):
    """The fields of mma_layout.WarpMma that kloop_trip reads."""
    return SimpleNamespace(warp_m=warp_m, warp_n=warp_n, k=k, applies=True)


def test_warpgroup_mma_moves_each_spilled_word_twice_a_trip():
    """No warp mma: 256 words = 1024 B per thread, loaded and stored once a trip by 128
    threads: 2 x 1024 x 128 = 262,144 B."""
    t = kloop_trip(1024, 128, 255, None)
    assert t.bytes_per_trip == 262_144
    assert t.ksteps == 1 and t.acc_spilled == 0


def test_warp_mma_spilled_accumulator_moves_at_every_k_step():
    """gemm_fp8 4096^3 BM=128 BN=256 BK=128 WARPS=2 (issue15 run gemm.csv: 255 regs, 1560
    spilled words = 6240 B): warps 1 x 2, each warp a 128 x 128 tile.
    accumulator 128 x 128 / 32 = 512 words a thread; one k-step's f16 operands
    (128 + 128) x 16 x 2 B / 32 threads / 4 B = 64 words; 512 + 64 - 255 = 321 accumulator
    words spilled (<= 1560); K 128 / 16 = 8 k-steps; the other 1560 - 321 = 1239 words once:
    2 x 4 B x 64 threads x (321 x 8 + 1239) = 512 x 3807 = 1,949,184 B a trip."""
    t = kloop_trip(6240, 64, 255, warp(128, 128, 128))
    assert t.acc_words == 512
    assert t.fragment_words == 64
    assert t.acc_spilled == 321
    assert t.ksteps == 8
    assert t.bytes_per_trip == 1_949_184


def test_warp_mma_with_room_for_its_accumulator_spills_only_invariants():
    """A 64 x 64 warp tile: 128 accumulator + (64 + 64) x 16 x 2 / 32 / 4 = 32 fragment words
    = 160 <= 255 registers: no accumulator word spills; 10 spilled words move twice a trip:
    2 x 40 B x 64 threads = 5,120 B, as on the warpgroup mma."""
    t = kloop_trip(40, 64, 255, warp(64, 64, 128))
    assert t.acc_spilled == 0
    assert t.bytes_per_trip == 5_120


def test_accumulator_spill_is_at_most_the_compiled_frame():
    """The 128 x 128 warp tile of above wants 321 accumulator words out, but the compiler's
    frame is 100 words: all 100 are accumulator, touched at 8 k-steps:
    2 x 4 B x 64 x (100 x 8 + 0) = 409,600 B a trip."""
    t = kloop_trip(400, 64, 255, warp(128, 128, 128))
    assert t.acc_spilled == 100
    assert t.bytes_per_trip == 409_600


def test_the_rest_of_a_spilling_trip_runs_after_its_local_traffic():
    """in_series: local 100 ns, then the busiest of tensor 30, smem 50, copy 20 ns: 150 ns;
    a trip whose copies are its longest part: 100 + 80 = 180 ns. Elementwise over a sweep."""
    assert in_series(100, 30, 50, 20) == 150
    assert in_series(100, 30, 50, 80) == 180
    got = in_series(np.array([100.0, 10.0]), np.array([30.0, 40.0]), np.array([50.0, 5.0]), np.array([20.0, 0.0]))
    assert list(got) == [150.0, 50.0]


def test_fp8_gemm_spill_trip_in_the_analysis():
    """The configuration of test_warp_mma_spilled_accumulator_moves_at_every_k_step through
    analyze: 1,949,184 B a trip at 7360 / 132 = 55.7576 B/ns (the working set, 6240 B x 64
    threads = 399,360 B per SM, exceeds the L1 that the estimated shared memory leaves; x 132
    SMs = 52.7 MB fits L2's 62.9 MB) = 1,949,184 x 132 / 7360 = 34,958.2 ns. In series with it
    the rest of the trip: its busiest engine is the warp mma, 1024 mma.sync x 6 cycles =
    6,144 cycles at 1.98 GHz x 0.907 (warp_mma.clock_fraction) = 6144 / 1.79586 = 3,421.2 ns;
    a round 34,958.2 + 3,421.2 = 38,379.4 ns. 4096 / 128 = 32 trips a CTA; 512 CTAs on 132
    SMs at 1 a SM: 3 full waves and a tail of 116, 4 rounds: 4 x 32 x 38,379.4 =
    4,912,563 ns of spill engine at least (the epilogue's per-op share adds a little).
    Measured 5.963 ms (before: 4 x 32 x 1,949,184 / 42.25 = 5.91 ms of spill alone)."""
    m = parse_file(ROOT / "kernels" / "gemm_fp8.tile")
    p = {"M": 4096, "N": 4096, "K": 4096, "BM": 128, "BN": 256, "BK": 128, "WARPS": 2, "STAGES": 4,
         "GROUP_M": 8}
    a = analyze(m, None, H200, p, resources={"regs": 255, "spills": 1560}, check=False)
    trip = [t for t in a.terms if t.name == "spill trip"]
    assert len(trip) == 1
    assert "(321 x 8 + 1,239) = 1.949 MB a trip from L2 at 55.76 GB/s" in trip[0].detail   # four digits
    # 34,958.2 + 3,421.2 = 38,379.4 ns, printed in us to two decimals by the one unit policy
    assert ("1 CTA's local traffic 34.96 us + 3.42 us of mma, shared memory and copies = 38.38 us a round"
            in trip[0].detail)
    spill = [t for t in a.terms if t.name == "spill"][0]
    local = 1_949_184 / (7360 / 132)
    mma = 1024 * 6 / (1.98 * 0.907)
    assert local == pytest.approx(34_958.2, abs=0.05) and mma == pytest.approx(3_421.2, abs=0.05)
    assert 4 * 32 * (local + mma) <= float(spill.ns) <= 4 * 32 * (local + mma) * 1.01


def test_non_spilling_trip_is_not_put_in_series():
    """The same GEMM compiled without spills has no spill engine time and no spill terms."""
    m = parse_file(ROOT / "kernels" / "gemm_fp8.tile")
    p = {"M": 4096, "N": 4096, "K": 4096, "BM": 128, "BN": 256, "BK": 128, "WARPS": 2, "STAGES": 4,
         "GROUP_M": 8}
    a = analyze(m, None, H200, p, resources={"regs": 255, "spills": 0}, check=False)
    assert not [t for t in a.terms if t.name in ("spill", "spill trip")]
    assert float(a.launches[0].engines["spill"]) == 0


def test_row_spill_under_the_registers_is_stored_once_and_loaded_once():
    """88 spilled words (352 B) a thread under 255 registers, 32 threads: 2 x 352 x 32 = 22,528
    B a CTA; over 200,000 register bytes that is a share of 22,528 / 200,000 = 0.11264, under
    the per-op share 0.15, so it is taken."""
    assert stored_once_share(0.15, 352, 32, 200_000, 255) == pytest.approx(0.11264)
    # a per-op share already under it stays: 0.05 x 200,000 = 10,000 B < 22,528
    assert stored_once_share(0.05, 352, 32, 200_000, 255) == 0.05


def test_row_spill_over_the_registers_keeps_the_per_op_share():
    """2120 spilled words under 32 registers: the frame exceeds the registers, every op's
    operands pass through local memory: the per-op share 0.974 stays."""
    assert stored_once_share(0.974, 8480, 64, 3_539_056, 32) == 0.974


def test_stored_once_share_on_arrays():
    """The two cases above side by side, elementwise."""
    got = stored_once_share(np.array([0.15, 0.974]), np.array([352, 8480]), np.array([32, 64]),
                            np.array([200_000, 3_539_056]), np.array([255, 32]))
    assert got == pytest.approx([0.11264, 0.974])


def test_row_spill_in_l1_at_the_measured_local_rate():
    """kernels/rmsnorm.tile M=4096 N=4096 BLOCK_M=2 WARPS=1 as compiled (255 registers, 88
    spilled words = 352 B a thread): 8 CTAs x 32 threads x 352 B = 90,112 B a SM fits L1, served
    at local.l1_bandwidth_per_cycle 32 B/cycle (calibration/h200/measured/spill_local) x 1.98
    GHz = 63.36 B/ns per SM."""
    m = parse_file(ROOT / "kernels" / "rmsnorm.tile")
    a = analyze(m, None, H200, {"M": 4096, "N": 4096, "BLOCK_M": 2, "WARPS": 1},
                resources={"threads": 32, "regs": 255, "spills": 88})
    detail = [t.detail for t in a.terms if t.name == "spill"][0]
    assert "working set 90.11 KB per SM (8 CTAs x 32 threads)" in detail
    assert "served from L1 at 63.36 GB/s per SM" in detail


def test_a_sweeps_warpgroup_configurations_keep_untouched():
    """A sweep of two configurations whose dot takes the warp mma in the first only (applies
    [True, False]), the second a fitting serial trip (untouched [0, 1]: wgmma_serial.fits is 0
    wherever the warp mma applies). The first: the 64 x 64 warp tile of
    test_warp_mma_with_room_for_its_accumulator_spills_only_invariants, 2 x 40 B x 64 threads =
    5,120 B; the second moves none (it was the warpgroup count 5,120 B and untouched 0 before:
    the scalar analysis of the same configuration, with no warp mma, gives 0)."""
    sweep = SimpleNamespace(warp_m=64, warp_n=64, k=128, applies=np.array([True, False]))
    t = kloop_trip(40, 64, 255, sweep, untouched=np.array([0, 1]))
    assert t.bytes_per_trip.tolist() == [5_120, 0]
    assert t.untouched.tolist() == [0, 1]
    assert kloop_trip(40, 64, 255, None, untouched=1).bytes_per_trip == 0
