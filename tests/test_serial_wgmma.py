"""The warpgroup mma ptxas serializes (tfx.analysis.mma_layout.serialized_wgmma, serial_trip_ns);
docs/analysis.md section 8, "serialized wgmma".

H200 facts (hw_profiles/h200_sxm.toml [pipeline], calibration/h200/measured/fp8_serial_trip):
wgmma_serial_trip_overhead 500 cycles = 500 / 1.98 = 252.525 ns, wgmma_serial_latency 42 cycles
= 42 / 1.98 = 21.212 ns; the SM's peak fp8 tensor rate 8192 flop/cycle x 1.98 GHz = 16,220.16
flop/ns.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tfx.analysis import mma_layout
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
SHAPE = {"M": 4096, "N": 4096, "K": 4096, "GROUP_M": 1, "STAGES": 3}
PEAK = 8192 * 1.98


def _mma(kernel, params):
    a = analyze(parse_file(ROOT / "kernels" / kernel), None, H200, {**SHAPE, **params}, check=False)
    mma = next(n for n in a.root.walk() if n.op is not None and n.op.opcode == "mma")
    return a, mma


def _serial(kernel, bm, bn, bk, warps, bits=8):
    _, mma = _mma(kernel, {"BM": bm, "BN": bn, "BK": bk, "WARPS": warps})
    return mma_layout.serialized_wgmma(mma, (64, 8, 16), bits, warps)


def test_which_dots_ptxas_serializes():
    """fp8, both operands K-major, N = 256 on 8 warps (C7515 in every CPU compile sampled):
    128x256 on 8 warps is 8 x 1 warps, a warpgroup 64 rows x 256: 1 wgmma a k-step of 32, so
    BK = 64 is 2 a trip, BK = 128 is 4; 64x256 on 8 warps is 4 x 2, a warpgroup 64 x 128: 4 at
    BK = 128; 256x256 on 8 warps: a warpgroup 128 rows, 2 a k-step, 4 at BK = 64. Not: 4 warps,
    BN = 128, bf16 (gemm.tile), B stored [K, N] (gemm_fp8_kn.tile)."""
    s = _serial("gemm_fp8.tile", 128, 256, 64, 8)
    assert s is not None and (s.instructions, s.warpgroups, s.applies) == (2, 2, 1)
    assert _serial("gemm_fp8.tile", 128, 256, 128, 8).instructions == 4
    assert _serial("gemm_fp8.tile", 64, 256, 128, 8).instructions == 4
    assert _serial("gemm_fp8.tile", 256, 256, 64, 8).instructions == 4
    assert _serial("gemm_fp8.tile", 128, 256, 64, 4) is None
    assert _serial("gemm_fp8.tile", 128, 128, 64, 8) is None
    assert _serial("gemm_fp8.tile", 256, 128, 64, 8) is None
    assert _serial("gemm.tile", 128, 256, 64, 8, bits=16) is None
    assert _serial("gemm_fp8_kn.tile", 128, 256, 64, 8) is None


def test_serial_trip_by_hand():
    """128x256x64 on 8 warps, one CTA: 252.525 + 4,194,304 / 16,220.16 = 258.586 + 2 x 21.212
    = 553.54 ns (measured on one SM: 556.56 ns); two resident CTAs share the tensor cores:
    252.525 + 2 x 258.586 + 42.424 = 812.12 ns."""
    m = Machine(H200, "cta")
    facts = mma_layout.serial_wgmma_facts(m)
    assert facts.trip_overhead_ns == pytest.approx(500 / 1.98)
    assert facts.latency_ns == pytest.approx(42 / 1.98)
    s = _serial("gemm_fp8.tile", 128, 256, 64, 8)
    peak_ns = 2 * 128 * 256 * 64 / PEAK
    assert peak_ns == pytest.approx(258.586, abs=1e-3)
    assert mma_layout.serial_trip_ns(s, peak_ns, 1, facts) == pytest.approx(553.54, abs=0.01)
    assert mma_layout.serial_trip_ns(s, peak_ns, 2, facts) == pytest.approx(812.12, abs=0.01)


def test_the_microbenchmark_rows_within_nine_percent():
    """The five serialized one-SM rows of calibration/h200/measured/fp8_serial_trip against
    500 / 1.98 + flops / 16,220.16 + instructions x 42 / 1.98 (their least-squares fit, 252.3 ns
    and 21.0 ns, rounded to whole cycles): 128x256 at BK 32, 64, 128 (1, 2, 4 wgmma a warpgroup)
    403.0 / 553.5 / 854.5 ns against 420.9 / 556.6 / 872.6 measured (-4.3%, -0.5%, -2.1%),
    64x256 at BK 64, 128 (2, 4) 424.2 / 596.0 against 392.3 / 584.8 (+8.1%, +1.9%)."""
    path = ROOT / "calibration" / "h200" / "measured" / "fp8_serial_trip" / "fp8_serial_trip.csv"
    rows = [r for r in csv.DictReader(open(path)) if r["ctas"] == "1" and r["WARPS"] == "8" and r["BN"] == "256"]
    assert len(rows) == 5
    for r in rows:
        bm, bk = int(r["BM"]), int(r["BK"])
        n = (bk // 32) * (1 if bm <= 128 else 2)
        model = 500 / 1.98 + 2 * bm * 256 * bk / PEAK + n * 42 / 1.98
        assert r["qgmma_sass"] == r["waits_gsb0_0"]          # serialized on the device too
        assert abs(model / float(r["ns_per_trip"]) - 1) < 0.09


def test_breakdown_names_the_serialized_wgmma():
    """gemm_fp8 4096^3 at 128x256x64 on 8 warps (issue15 run1, measured 0.164 ms): the term
    states the 553.5 ns floor of one CTA's trip (written by format_time_ns: 553.54 ns); at 4 warps
    there is none."""
    a, _ = _mma("gemm_fp8.tile", {"BM": 128, "BN": 256, "BK": 64, "WARPS": 8, "STAGES": 4})
    t = [x for x in a.terms if x.name == "serialized wgmma"]
    assert len(t) == 1 and "C7515" in t[0].detail and "= 553.54 ns" in t[0].detail
    # the trip overhead 500 cycles / 1.98 GHz = 252.525 ns, two decimals (format_time_ns); the SM's
    # peak 8,192 flop/cycle x 1.98 GHz = 16,220.16 flop/ns = 16.22 TFLOP/s (formula_flop_rate)
    assert "252.53 ns + 1 x 4,194,304 flop / 16.22 TFLOP/s" in t[0].detail
    a, _ = _mma("gemm_fp8.tile", {"BM": 128, "BN": 256, "BK": 64, "WARPS": 4, "STAGES": 4})
    assert not [x for x in a.terms if x.name == "serialized wgmma"]
