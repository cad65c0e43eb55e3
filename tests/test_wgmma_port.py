"""The shared-memory port under a GEMM k-loop's warpgroup mma (tfx.analysis.wgmma_port;
docs/analysis.md section 8, "the port under the warpgroup mma"). Every expected number is
derived by hand.

H200 facts (hw_profiles/h200_sxm.toml): bf16 4096 flop/cycle x 1.98 GHz x 0.74 (the sustained
rate) = 6,001.4592 flop/ns; the shared-memory port 128 B/cycle x 1.98 GHz = 253.44 B/ns;
pipeline.wgmma_trip_busy 0.914; compute.tensor.power_clock_exponent 3; the clock's cap
compute.tensor.unthrottled_efficiency / efficiency = 0.916 / 0.74 = 1.237838.

A trip's shared-memory bytes (an SS warpgroup mma reads A's 64 x 16 and B's N x 16 bf16 for
every m64nNk16 instruction; the copies write the tile once):
  256x128x64 on 8 warps: two warpgroups, each two 64-row slabs of m64n128k16 x 4 k-steps =
    16 instructions x (2,048 + 4,096) B = 98,304 B read + (256 + 128) x 64 x 2 = 49,152 B
    copied = 147,456 B = 1,152 port cycles against 2 x 256 x 128 x 64 / 4096 = 1,024 tensor
    cycles;
  128x256x64 on 8 warps: two warpgroups, one slab of m64n256k16 x 4 k-steps each = 8 x
    (2,048 + 8,192) = 81,920 B + 49,152 B = 131,072 B = 1,024 port cycles = its tensor cycles.
"""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import wgmma_port
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

from profile_variants import without

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "kernels" / "gemm.tile"
H200 = load_profile("h200_sxm")
RATE = 4096 * 1.98 * 0.74               # 6,001.4592 flop/ns
PORT = 128 * 1.98                       # 253.44 B/ns


def test_the_ratio_is_port_cycles_over_tensor_cycles_by_the_busy_share():
    """256x128x64: tensor 4,194,304 / 6,001.4592 = 698.8807 ns, port 147,456 / 253.44 = 581.8182
    ns; rho = 581.8182 x 0.914 / (698.8807 x 0.74) = 1,152 / (1,024 / 0.914) = 1,152 x 0.914 /
    1,024 = 1.02825 (clock-free: the same on cycles). 128x256x64: 131,072 B: 1,024 x 0.914 /
    1,024 = 0.914. Arrays elementwise; no tensor work: 0."""
    t = 4_194_304 / RATE
    assert t == pytest.approx(698.8807, abs=1e-3)
    assert wgmma_port.ratio(t, 147_456 / PORT, 0.74, 0.914) == pytest.approx(1.02825)
    assert wgmma_port.ratio(t, 131_072 / PORT, 0.74, 0.914) == pytest.approx(0.914)
    assert wgmma_port.ratio(0, 100.0, 0.74, 0.914) == 0
    arr = wgmma_port.ratio(np.array([t, t, 0.0]), np.array([147_456 / PORT, 131_072 / PORT, 5.0]), 0.74, 0.914)
    assert arr == pytest.approx([1.02825, 0.914, 0.0])


def test_a_port_bound_trip_is_rho_over_the_clock_rise():
    """256x128x64, every SM busy: rho 1.02825, the clock rises by 1.02825^(1/3) = 1.0093294
    (under the cap 1.237838): 698.8807 x 1.02825 / 1.0093294 = 711.9817 ns a trip (the smem
    engine's 581.8182 ns replaced). 128x128x64 on 8 warps: 49,152 B read (two warpgroups x 4
    k-steps x (2,048 + 4,096)) + 32,768 B copied = 81,920 B = 640 cycles against 512: rho = 640
    x 0.914 / 512 = 1.1425, rise 1.1425^(1/3) = 1.0454070, tensor 2,097,152 / 6,001.4592 =
    349.4403 ns: 349.4403 x 1.1425 / 1.0454070 = 381.8949 ns. 128x256x64 (rho 0.914): the smem
    engine stays 131,072 / 253.44 = 517.1717 ns."""
    m = Machine(H200, "cta")
    assert wgmma_port.clock_rise(m, 1.02825) == pytest.approx(1.0093294, abs=1e-6)
    assert wgmma_port.trip_ns(m, 4_194_304 / RATE, 147_456 / PORT, 0.74) == pytest.approx(711.9817, abs=1e-3)
    assert wgmma_port.trip_ns(m, 2_097_152 / RATE, 81_920 / PORT, 0.74) == pytest.approx(381.8949, abs=1e-3)
    assert wgmma_port.trip_ns(m, 4_194_304 / RATE, 131_072 / PORT, 0.74) == pytest.approx(517.1717, abs=1e-3)


def test_the_clock_rise_stops_at_the_unthrottled_clock():
    """rho 8 (a smem engine of 8 x 0.74 x 698.8807 / 0.914 = 4,526.6671 ns at clock.core): 8^(1/3)
    = 2 is past the cap 0.916 / 0.74 = 1.2378378, so the rise is 1.2378378 and the stretched trip
    698.8807 x 8 / 1.2378378 = 4,516.7836 ns; that is below the port at clock.core (the busy share
    0.914 against the cap's 0.916 would run the port 0.916 / 0.914 faster than clock.core), so the
    engine keeps its 4,526.6671 ns."""
    m = Machine(H200, "cta")
    assert wgmma_port.clock_rise(m, 8.0) == pytest.approx(1.2378378, abs=1e-6)
    smem = 8 * 0.74 * (4_194_304 / RATE) / 0.914
    assert smem == pytest.approx(4526.6671, abs=1e-3)
    assert wgmma_port.trip_ns(m, 4_194_304 / RATE, smem, 0.74) == pytest.approx(4526.6671, abs=1e-3)
    # one step under the cap: rho 1.5, rise 1.5^(1/3) = 1.1447142: 698.8807 x 1.5 = 1,048.3211, / 1.1447142 =
    # 915.7928 ns, above the engine's 1.5 x 0.74 x 698.8807 / 0.914 = 848.7500
    smem = 1.5 * 0.74 * (4_194_304 / RATE) / 0.914
    assert wgmma_port.trip_ns(m, 4_194_304 / RATE, smem, 0.74) == pytest.approx(915.7928, abs=1e-3)


def test_without_the_fact_there_is_no_term():
    """A Hopper profile without pipeline.wgmma_trip_busy (h100_sxm less that one fact,
    tests/profile_variants.py): the smem engine is left as it is, 900 ns stays 900 ns."""
    m = Machine(without("h100_sxm", "pipeline.wgmma_trip_busy"), "cta")
    assert wgmma_port.busy(m) is None
    assert wgmma_port.trip_ns(m, 698.88, 900.0, 0.74) == 900.0


def _gemm(bm, bn, knobs=None):
    p = {"M": 4096, "N": 4096, "K": 4096, "BM": bm, "BN": bn, "BK": 64, "WARPS": 8, "STAGES": 4, "GROUP_M": 8}
    prof = H200.with_knobs(knobs) if knobs else H200
    return analyze(parse_file(str(GEMM)), None, prof, p)


def test_the_256x128_tile_pays_its_port_and_the_128x256_does_not():
    """4096^3 at 4 stages: the 256x128x64 tile's trip carries the port line (rho = 1,152 x 0.914 /
    1,024 = 1.02825, written to four decimals 1.0282 (the float below the half), 711.98
    ns a trip, above the tensor's 698.88) and is priced longer than with the term off (busy 0.5:
    rho = 1,152 x 0.5 / 1,024 = 0.5625, no term); the 128x256x64 tile has no port line and is
    priced the same either way."""
    tall = _gemm(256, 128)
    line = [t.detail for t in tall.terms if t.name == "port under mma"]
    assert len(line) == 1 and "1.0282x" in line[0] and "711.98 ns a trip" in line[0]
    off = _gemm(256, 128, {"pipeline.wgmma_trip_busy": 0.5})
    assert not [t for t in off.terms if t.name == "port under mma"]
    assert float(tall.metrics["performance.predicted_ns"]) > float(off.metrics["performance.predicted_ns"])
    wide = _gemm(128, 256)
    assert not [t for t in wide.terms if t.name == "port under mma"]
    assert float(wide.metrics["performance.predicted_ns"]) == pytest.approx(
        float(_gemm(128, 256, {"pipeline.wgmma_trip_busy": 0.5}).metrics["performance.predicted_ns"]))
    assert float(tall.metrics["performance.predicted_ns"]) > float(wide.metrics["performance.predicted_ns"])
