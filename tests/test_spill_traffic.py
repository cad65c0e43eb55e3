"""The local-memory bytes a spilling k-loop trip moves (tfx.analysis.spill_traffic).

Numbers from hw_profiles/h200_sxm.toml: local.l2_bandwidth 5577 GB/s / 132 SMs = 42.25 B/ns
per SM. Every expected number below is derived in its docstring or comment."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tfx.analysis.analyze import analyze
from tfx.analysis.spill_traffic import kloop_trip
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


def test_fp8_gemm_spill_trip_in_the_analysis():
    """The configuration of test_warp_mma_spilled_accumulator_moves_at_every_k_step through
    analyze: 1,949,184 B a trip at 42.25 B/ns (the working set, 6240 B x 64 threads = 399,360 B
    per SM, exceeds the L1 that the estimated shared memory leaves, 114.69 KB; x 132 SMs =
    52.7 MB fits L2's 62.9 MB) = 46,134.6 ns; 4096 / 128 = 32 trips a CTA;
    512 CTAs on 132 SMs at 1 a SM: 3 full waves and a tail of 116, 4 rounds:
    4 x 32 x 46,134.6 = 5,905,229 ns of spill at least (the epilogue's per-op share adds a
    little). The spill trips bound the k-loop: measured 5.963 ms."""
    m = parse_file(ROOT / "kernels" / "gemm_fp8.tile")
    p = {"M": 4096, "N": 4096, "K": 4096, "BM": 128, "BN": 256, "BK": 128, "WARPS": 2, "STAGES": 4,
         "GROUP_M": 8}
    a = analyze(m, None, H200, p, resources={"regs": 255, "spills": 1560}, check=False)
    trip = [t for t in a.terms if t.name == "spill trip"]
    assert len(trip) == 1
    assert "(321 x 8 + 1,239) = 1,949,184 B a trip from L2 at 42.2 GB/s" in trip[0].detail
    spill = [t for t in a.terms if t.name == "spill"][0]
    per_trip = 1_949_184 / (5577 / 132)
    assert 4 * 32 * per_trip <= float(spill.ns) <= 4 * 32 * per_trip * 1.01
