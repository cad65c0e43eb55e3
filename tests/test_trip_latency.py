"""A serial trip's dependent path at measured instruction latencies (tfx.analysis.trip_latency;
docs/analysis.md section 8, "dependent path").

H200 facts (hw_profiles/h200_sxm.toml [instruction_latency], measured by
bench/h200/measure_instr_latency.py into calibration/h200/measured/latency/instr_latency.csv):
mma_sync 24, shfl_sync 24, bar_sync 20, ex2 17, fma 4, smem_load 23 cycles; clock 1.98 GHz."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import trip_latency
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
LAT = trip_latency.Latencies(mma_sync=24, shfl_sync=24, bar_sync=20, ex2=17, fma=4, smem_load=23)


def test_profile_facts_are_the_measured_chains_rounded():
    rows = {r["case"]: float(r["cycles_per_step"]) for r in csv.DictReader(
        open(ROOT / "calibration/h200/measured/latency/instr_latency.csv"))}
    f = trip_latency.facts(Machine(H200, "cta"))
    # csv: mma_acc 24.13, shfl_bfly 24.02, bar_sync4 20.10, ex2 17.19, fma 4.15, lds 23.02
    assert f == LAT
    assert (round(rows["mma_acc"]), round(rows["shfl_bfly"]), round(rows["bar_sync4"]), round(rows["ex2"]),
            round(rows["fma"]), round(rows["lds"])) == tuple(LAT)
    # four independent accumulators pipeline under one latency: 24.95 cycles for 4 mmas
    assert rows["mma_acc_x4"] < 1.1 * rows["mma_acc"]


def test_no_facts_no_path():
    assert trip_latency.facts(Machine(load_profile("sip"), "pe")) is None


def test_reduce_cycles_by_hand():
    # 128 columns over 2 warps: a thread holds 2 x cdiv(128, 8 x 2) = 16 values of a row:
    # 15 x 4 = 60 serial; 2 shuffles x (24 + 4) = 56; across warps 2 x (20 + 23) + log2(2) x 4 = 90
    assert trip_latency.reduce_cycles(128, 2, LAT) == 60 + 56 + 90 == 206
    # 64 columns on 1 warp: 2 x 8 = 16 values: 60 + 56, nothing across warps
    assert trip_latency.reduce_cycles(64, 1, LAT) == 116
    # 32 columns over 4 warps: 2 x cdiv(32, 32) = 2 values: 4 + 56 + 2 x 43 + 2 x 4 = 154
    got = trip_latency.reduce_cycles(np.array([128, 64, 32]), np.array([2, 1, 4]), LAT)
    assert list(got) == [206, 116, 154]


def _path_term(params):
    a = analyze(parse_file(ROOT / "kernels" / "gqa_decode.tile"), None, H200, params, check=False)
    return [t for t in a.terms if t.name == "dependent path"]


def test_decode_trip_path_by_hand():
    """gqa_decode B=1, HQ=32, HKV=8 (GROUP 4), D=128, BLOCK_N=128, 2 warps (1 x 2 over M x N,
    mma.sync): QK^T 128 / 16 = 8 k-steps x 24 = 192 cycles of the mma clock (the latency was
    timed while the SM ran at 0.907 of clock.core) = 192 / 0.907 = 211.69 core cycles = 106.91 ns
    of latency, under its
    throughput: each warp's 16 x 64 tile runs (64/8) x 8 = 64 mma.sync x 6 cycles = 384 cycles
    at the warp-mma clock 1.98 x 0.907 = 1.79586 GHz = 213.83 ns (tfx.analysis.mma_layout.warp_mma);
    mul 4 cycles = 2.02 ns; reduce max 206 cycles (test above) = 104.04 ns; max, sub 2.02 ns
    each; exp2 of 4 x 128 = 512 elements at 16 a cycle = 32 cycles = 16.16 ns (its throughput,
    over 17 cycles of latency); cast 2.02 ns; PV 8 k-steps x 24 / 0.907 + P through shared memory
    20 + 23 = 254.69 cycles = 128.63 ns of latency, under its 64 mma.sync = 213.83 ns. The row sum
    and the rescales are off the path. Sum: 2 x 384 / 1.79586 + (4 + 206 + 4 + 4 + 32 + 4) / 1.98
    = 427.65 + 128.28 = 555.93 ns."""
    p = {"B": 1, "HQ": 32, "HKV": 8, "SKV": 131072, "D": 128, "SPLITS": 8, "BLOCK_N": 128,
         "WARPS": 2, "STAGES": 3}
    (t,) = _path_term(p)
    assert t.ns == 0
    assert "mma line 66: 8 k-steps x 24 / 0.907 (the mma clock) (213.83 ns)" in t.detail
    assert "reduce max line 68 over 128 columns (104.04 ns)" in t.detail
    assert "exp2 line 75 (16.16 ns)" in t.detail
    assert "P through shared memory 20 + 23 (213.83 ns)" in t.detail
    assert "= 555.93 ns" in t.detail
    assert "reduce sum" not in t.detail


def test_warp_mma_latency_counts_at_the_mma_clock():
    """gqa_decode at its defaults (BLOCK_N 64, 4 warps: each warp's 16 x 16 tile runs only 2 x
    8 = 16 mma.sync x 6 cycles = 96 cycles of work, 53.46 ns at 1.79586 GHz), so QK^T's step is
    its latency: 8 k-steps x 24 cycles, timed by clock64 while the SM ran at the sustained-mma
    clock (warp_mma.clock_fraction 0.907 of 1.98 GHz): 192 / (1.98 x 0.907) = 106.91 ns, not the
    192 / 1.98 = 96.97 ns a core-clock count would give."""
    a = analyze(parse_file(ROOT / "kernels" / "gqa_decode.tile"), None, H200, {}, check=False)
    (t,) = [t for t in a.terms if t.name == "dependent path"]
    assert 192 / (1.98 * 0.907) == pytest.approx(106.91, abs=5e-3)
    assert "mma line 66: 8 k-steps x 24 / 0.907 (the mma clock) (106.91 ns)" in t.detail


def test_attention_warpgroup_path_by_hand():
    """flash_attention B1 H32 S4096 D128 at 64 x 32 on 4 warps (the warpgroup path): each step
    the longer of its work and its latency; a warpgroup mma's latency is its tensor time
    (mma_path.group_ns) plus the measured wait, instruction_latency.wgmma_wait = 88 cycles =
    44.444 ns:
      QK^T: 8 wgmma m64n32k16 reading 3072 B each from shared memory at the port's 128 B a
        cycle of the mma clock (warp_mma.clock_fraction: 128 x 1.98 x 0.907 = 229.870 B/ns),
        24,576 / 229.870 = 106.913 ns (over its 87.360 ns of flops) + 44.444 = 151.357 ns
      mul (2048 values, 8.081 ns) + reduce max over 32 columns (84 cycles = 42.424 ns) + row
        max (one fma, 2.020 ns) + sub (8.081) + exp2 (2048 / 31.68 = 64.646) + cast (8.081)
      PV from registers: 87.360 + 50 cycles (25.253) + 44.444 = 157.057 ns
    = 441.747 ns; of it latency no engine serves (exposed_ns): 44.444 x 2 + (42.424 - 8.081)
    + (2.020 - 64 / 253.44) = 125.000 ns."""
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200,
                dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2),
                resources=dict(threads=128, regs=126, smem=49152, spills=0))
    path = [t for t in a.terms if t.name == "dependent path"][0]
    vec, wait = 2048 / 253.44, 88 / 1.98
    expected = ((24_576 / (253.44 * 0.907) + wait) + vec + 84 / 1.98 + 4 / 1.98 + vec + 2048 / 31.68 + vec
                + (2 * 64 * 128 * 32 / (4096 * 1.98 * 0.74) + 50 / 1.98 + wait))
    assert expected == pytest.approx(441.747, abs=1e-3)
    assert f"= {expected:.2f} ns" in path.detail
    assert "mma line 55: warpgroup mma + its wait 88" in path.detail


def test_warpgroup_loop_without_the_wait_fact_keeps_its_throughput():
    """A profile that states no instruction_latency.wgmma_wait (the warpgroup mma's wait
    unmeasured: h200_sxm less that one fact, tests/profile_variants.py): no path there (a path
    without its longest step would be none), the loop keeps its throughput chain. h200_sxm
    itself prices the path of the same launch."""
    from profile_variants import without
    profile = without("h200_sxm", "instruction_latency.wgmma_wait")
    assert profile.get("instruction_latency.wgmma_wait", None) is None
    kernel = parse_file(ROOT / "kernels" / "flash_attention.tile")
    a = analyze(kernel, None, profile, {}, check=False)
    assert not [t for t in a.terms if t.name == "dependent path"]
    assert [t for t in analyze(kernel, None, H200, {}, check=False).terms if t.name == "dependent path"]

