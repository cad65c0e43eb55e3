"""The tensor cores' clock under the power limit rises as a launch keeps fewer SMs busy
(tfx.analysis.machine.Machine.tensor_clock_factor; calibration/h200/measured/gemm_clock_s15;
docs/analysis.md section 8, "The power-limited tensor clock"). Every number by hand.

H200 facts (hw_profiles/h200_sxm.toml): compute.tensor.efficiency 0.74 (every SM busy),
power_clock_exponent 3, unthrottled_efficiency 0.916; 132 SMs. The factor is
min((132 / busy)^(1/3), 0.916 / 0.74 = 1.237838):
  78 SMs: (1.692308)^(1/3) = 1.191680; 114 SMs: (1.157895)^(1/3) = 1.050082;
  33 SMs: 4^(1/3) = 1.587401 -> capped 1.237838; 132 SMs: 1.
"""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

from profile_variants import without

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
# a Hopper profile that states neither power fact: h100_sxm less both (tests/profile_variants.py)
NO_POWER_CLOCK = without("h100_sxm", "compute.tensor.power_clock_exponent",
                         "compute.tensor.unthrottled_efficiency")


def _machine(ctas):
    """The H200 as a launch of ``ctas`` CTAs sees it: min(ctas, 132) SMs busy."""
    return Machine(H200, "cta", positions=ctas)


def test_factor_by_busy_sms():
    assert _machine(132).tensor_clock_factor() == 1
    # 512 CTAs keep min(512, 132) = 132 SMs busy, as a Machine told of no launch does: 1
    assert _machine(512).busy_units == 132 and _machine(512).tensor_clock_factor() == 1
    assert Machine(H200, "cta").busy_units == 132
    assert _machine(78).tensor_clock_factor() == pytest.approx(1.191680, abs=1e-6)
    assert _machine(114).tensor_clock_factor() == pytest.approx(1.050082, abs=1e-6)
    assert _machine(33).tensor_clock_factor() == pytest.approx(1.237838, abs=1e-6)
    arr = _machine(np.array([132, 78, 33])).tensor_clock_factor()
    assert arr == pytest.approx([1.0, 1.191680, 1.237838], abs=1e-6)


def test_efficiency_carries_the_factor_for_every_dtype():
    """bf16 0.74 x 1.191680 = 0.881843 at 78 SMs; fp8 e4m3 0.700 x 1.191680 = 0.834176."""
    m = _machine(78)
    assert m.tensor_efficiency("bf16") == pytest.approx(0.881843, abs=1e-6)
    assert m.tensor_efficiency("fp8e4m3") == pytest.approx(0.834176, abs=1e-6)
    assert _machine(132).tensor_efficiency("bf16") == pytest.approx(0.74)


def test_a_profile_without_the_facts_keeps_its_efficiency():
    """A profile that states neither power fact (h100_sxm less compute.tensor.power_clock_exponent
    and unthrottled_efficiency): 78 busy SMs of 132 keep its efficiency as stated, 0.742.

    h100_sxm itself states both (the GH100's 3 and 0.916) over its own efficiency 0.742: the cap
    0.916 / 0.742 = 1.234501; 78 SMs: (132 / 78)^(1/3) = 1.191680, under it (bf16 0.742 x 1.191680
    = 0.884227); 33 SMs: 1.587401, capped at 1.234501."""
    m = Machine(NO_POWER_CLOCK, "cta", positions=78)
    assert m.tensor_clock_factor() == 1
    assert m.tensor_efficiency("bf16") == pytest.approx(0.742)
    h100 = load_profile("h100_sxm")
    at78 = Machine(h100, "cta", positions=78)
    assert at78.tensor_clock_factor() == pytest.approx(1.191680, abs=1e-6)
    assert at78.tensor_efficiency("bf16") == pytest.approx(0.884227, abs=1e-6)
    assert Machine(h100, "cta", positions=33).tensor_clock_factor() == pytest.approx(1.234501, abs=1e-6)


def test_persistent_tensor_trip_on_78_sms():
    """persistent_gemm at 128x256x64 on 8 warps, 5 stages, NUM_SMS = 78 (78 busy SMs): a tile's
    mma 2 x 128 x 256 x 64 = 4,194,304 flop / (8,110.08 x 0.881843) = 586.4633 ns a trip (at 132
    SMs' 0.74: 698.8807); K = 16,384 against 8,192 adds 128 trips a tile; M = N = 1,024 gives 32
    tiles on 32 CTAs (32 busy SMs: capped, 8,110.08 x 0.916 = 7,428.8333 flop/ns, 564.5979 ns), so
    with NUM_SMS = 78 the busy SMs are min(32, 132) = 32 and each of the 32 CTAs runs one tile,
    each trip its mma, the loop's 100 cycles of bookkeeping (100 / 1.98 = 50.5051 ns) issued
    while the warpgroup mma runs (performance._mma_left_running): 128 x max(564.5979, 50.5051)
    = 72,268.53 ns more."""
    g = parse_file(str(ROOT / "kernels" / "persistent_gemm.tile"))

    def t(k):
        p = dict(M=1024, N=1024, K=k, BM=128, BN=256, BK=64, WARPS=8, STAGES=5, NUM_SMS=78)
        return float(analyze(g, None, H200, p).metrics["performance.predicted_ns"])
    assert t(16384) - t(8192) == pytest.approx(128 * max(4_194_304 / (4096 * 1.98 * 0.916), 100 / 1.98), rel=1e-3)


def test_the_breakdown_writes_the_factor_it_prices():
    """Machine.describe_tensor_clock, the 'power clock' line: at 78 busy SMs (132 / 78)^(1/3) =
    1.692308^(1/3) = 1.19168 (six significant digits, tfx.hw.units.format_plain) under the cap
    0.916 / 0.74 = 1.237838 -> 1.23784; at 33, 4^(1/3) = 1.587401 -> 1.5874, capped at 1.23784;
    a launch that keeps every SM busy, and a profile without the facts, write nothing."""
    at78 = _machine(78).describe_tensor_clock()
    assert at78.startswith("78 of 132 SMs busy: ")
    assert "(132 / 78)^(1/3) = 1.19168 (compute.tensor.power_clock_exponent 3), under the cap " \
           "0.916 / 0.74 = 1.23784 " in at78
    assert at78.endswith("each mma's sustained efficiency x 1.19168")
    at33 = _machine(33).describe_tensor_clock()
    assert "(132 / 33)^(1/3) = 1.5874 (compute.tensor.power_clock_exponent 3), capped at 0.916 / 0.74 = 1.23784 " in at33
    assert at33.endswith("x 1.23784")
    assert _machine(132).describe_tensor_clock() is None
    assert Machine(NO_POWER_CLOCK, "cta", positions=78).describe_tensor_clock() is None


def _terms(kernel, **params):
    g = parse_file(str(ROOT / "kernels" / kernel))
    return {t.name: t.detail for t in analyze(g, None, H200, params).terms}


def test_the_fp8_tensor_rate_names_the_profile_fraction_and_the_clock_apart():
    """gemm_fp8 at M = 256, N = 1,024 on 128x128 tiles: 2 x 8 = 16 CTAs, 16 busy SMs, capped:
    8,192 flop/cycle x 1.98 GHz = 16,220.16 flop/ns x 0.700 (efficiency_fp8e4m3, the profile's
    value) x 1.237838 = 14,054.5 flop/ns, written 14.05 TFLOP/s (the line read 'x 0.867 sustained
    (compute.tensor.efficiency_fp8e4m3)', the product, as if the profile stated it)."""
    t = _terms("gemm_fp8.tile", M=256, N=1024)
    assert ("x 0.700 sustained (compute.tensor.efficiency_fp8e4m3) x 1.23784 (the power clock, below) "
            "= 14.05 TFLOP/s") in t["tensor rate"]
    assert t["power clock"].startswith("16 of 132 SMs busy: ")


def test_no_power_clock_line_where_no_mma_runs_at_the_tensor_efficiency():
    """gemm_w4a16's defaults: 32 CTAs, but its 16-row mma runs on the warp mma (mma.sync at its
    own clock fraction 0.907, tfx.analysis.mma_layout.warp_mma), which the factor does not touch:
    no line; persistent_gemm at NUM_SMS = 78 (warpgroup mma) has it."""
    assert "power clock" not in _terms("gemm_w4a16.tile")
    assert _terms("persistent_gemm.tile", NUM_SMS=78)["power clock"].startswith("78 of 132 SMs busy: ")


def test_the_simulator_prices_the_tensor_at_the_launchs_busy_sms():
    """tfx simulate lowers a launch with the Machine the analysis prices it with: persistent_gemm
    at NUM_SMS = 78 (78 CTAs) keeps min(78, 132) = 78 SMs busy, bf16 at 0.74 x 1.191680 =
    0.881843 (it lowered at 0.74: a Machine told of no launch)."""
    from tfx.sim.lower import Lowering
    g = parse_file(str(ROOT / "kernels" / "persistent_gemm.tile"))
    a = analyze(g, None, H200, dict(NUM_SMS=78))
    mesh = next(c for c in a.root.children if c.kind == "mesh")
    lw = Lowering(a, mesh, 78)
    assert lw.m.busy_units == 78
    assert lw.m.tensor_efficiency("bf16") == pytest.approx(0.881843, abs=1e-6)
