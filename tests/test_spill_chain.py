"""A 32-register spilling k-loop's chain of local round trips (tfx.analysis.spill_chain).

Facts (hw_profiles/h200_sxm.toml): local.l2_latency 146.3 ns and pipeline.dram_latency_unloaded
341 ns (calibration/h200/measured/latency.csv), memory.l2.capacity 62,914,560 B. The census
constant WAITS_PER_MMA = 2.102 is the median of calibration/h200/measured/spill_chain/chain.csv's
13 waits_per_HMMA (sorted: 1.684 1.695 1.756 1.855 1.865 1.996 [2.102] 2.137 2.166 2.168 2.214
2.25 2.3; the 7th of 13). Every expected number is derived in its docstring."""

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


def test_census_constant_is_the_median_of_the_stored_sass_census():
    """The module's constant is what the stored census gives (13 kernels, all at 32 registers,
    REG and STACK / 4 equal to the measured regs and spills)."""
    rows = list(csv.DictReader(open(ROOT / "calibration/h200/measured/spill_chain/chain.csv")))
    assert len(rows) == 13
    assert all(r["n_regs"] == r["regs_measured"] == "32" for r in rows)
    assert all(r["n_spills"] == r["spills_measured"] for r in rows)
    assert statistics.median(float(r["waits_per_HMMA"]) for r in rows) == spill_chain.WAITS_PER_MMA


def test_applies_only_at_32_registers_with_spills():
    assert spill_chain.applies(32, 6640)
    assert not spill_chain.applies(32, 0)
    assert not spill_chain.applies(255, 6640)
    assert list(spill_chain.applies(np.array([32, 255, 32]), np.array([4, 4, 0]))) == [True, False, False]


def test_frames_in_l2_wait_the_l2_round_trip():
    """128x4096x4096 128x128x64 on 2 warps (warps 1 x 2, a 128 x 64 warp tile, K 64):
    (128/16) x (64/8) x (64/16) = 8 x 8 x 4 = 256 mma.sync a trip; 2.102 x 256 = 538.112 waits.
    32 CTAs x 64 threads x 1660 words x 4 B = 13,598,720 B of frames < L2: hit 1, 146.3 ns a
    wait: 538.112 x 146.3 = 78,725.7856 ns a trip."""
    c = spill_chain.trip_chain(256, 32, 6640, 13_598_720, L2, 146.3, 341.0)
    assert c.waits == pytest.approx(538.112)
    assert c.l2_hit == 1.0
    assert c.latency_ns == pytest.approx(146.3)
    assert c.ns == pytest.approx(78_725.7856)


def test_frames_past_l2_mix_in_the_dram_round_trip():
    """2560^3 256x128x64 (3368 words) at 2 CTAs a SM on 132 SMs: 13,472 B x 64 x 264 =
    227,622,912 B of frames; L2 holds 62,914,560 / 227,622,912 = 0.2763982 (227,622,912 x
    0.2764 = 62,914,973 is just over L2); a wait 0.2763982 x 146.3 + 0.7236018 x 341 =
    40.4371 + 246.7482 = 287.1853 ns; 512 mma (a 128 x 128
    warp tile over K 64: 8 x 16 x 4) x 2.102 = 1076.224 waits: 1076.224 x 287.1853 = 309,075.7 ns a trip."""
    ws = 13_472 * 64 * 264
    assert ws == 227_622_912
    c = spill_chain.trip_chain(512, 32, 13_472, ws, L2, 146.3, 341.0)
    hit = L2 / ws
    assert c.l2_hit == pytest.approx(0.2763982, abs=1e-7)
    assert c.latency_ns == pytest.approx(hit * 146.3 + (1 - hit) * 341.0)
    assert c.latency_ns == pytest.approx(287.1853, abs=1e-4)
    assert c.ns == pytest.approx(1076.224 * 287.1853, rel=1e-6)


def test_not_at_32_registers_no_floor():
    assert spill_chain.trip_chain(256, 255, 6640, 1e6, L2, 146.3, 341.0).ns == 0


def test_analyze_prices_the_32_register_gemm_at_its_chain():
    """issue15 run1 gemm_bf16 128x4096x4096 BM=128 BN=128 BK=64 WARPS=2 STAGES=1 (compiled 32
    registers, 1660 spilled words; measured 4.338 ms; 1.59 ms before this floor). 32 CTAs,
    one a SM; 4096 / 64 = 64 trips, each at least the chain of the test above, 78,725.79 ns:
    64 x 78,725.79 = 5,038,450 ns; the prediction is that plus the launch, the fill and the
    epilogue, within 1% of it."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 128, "N": 4096, "K": 4096, "BM": 128, "BN": 128, "BK": 64, "WARPS": 2, "STAGES": 1, "GROUP_M": 8}
    a = analyze(m, None, H200, p, resources={"regs": 32, "spills": 1660}, check=False)
    chain = [t for t in a.terms if t.name == "spill chain"]
    assert len(chain) == 1
    assert "2.102 waits an mma x 256 mma a trip = 538 round trips" in chain[0].detail
    assert "a trip takes at least 78,725.8 ns" in chain[0].detail
    ns = float(a.metrics["performance.predicted_ns"])
    assert 64 * 78_725.7856 <= ns <= 64 * 78_725.7856 * 1.01


def test_analyze_without_the_fact_keeps_the_bandwidth_price():
    """A profile without local.l2_latency (the H100's) has no chain line."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 128, "N": 4096, "K": 4096, "BM": 128, "BN": 128, "BK": 64, "WARPS": 2, "STAGES": 1, "GROUP_M": 8}
    a = analyze(m, None, load_profile("h100_sxm"), p, resources={"regs": 32, "spills": 1660}, check=False)
    assert not [t for t in a.terms if t.name == "spill chain"]
