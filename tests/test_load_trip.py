"""One CTA's pipelined load trip (tfx.analysis.load_trip; docs/analysis.md section 8, "load trip").

H200 facts (hw_profiles/h200_sxm.toml [pipeline], from calibration/h200/measured/kloop):
load_trip_overhead 242 cycles / 1.98 GHz = 122.22 ns; sm_load_bandwidth_per_cycle 65 B x 1.98
= 128.7 B/ns per SM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import load_trip
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")


def test_facts_from_the_profile():
    f = load_trip.facts(Machine(H200, "cta"))
    assert f.overhead_ns == pytest.approx(242 / 1.98)        # 122.2222 ns
    assert f.port_bytes_per_ns == pytest.approx(65 * 1.98)   # 128.7 B/ns


def test_floor_one_cta_and_shared_port():
    f = load_trip.LoadTrip(242 / 1.98, 128.7)
    # a 128x32x32 bf16 trip: (128 x 32 + 32 x 32) x 2 = 10240 B; alone: 122.22 + 10240 / 128.7
    # = 122.22 + 79.565 = 201.79 ns
    assert load_trip.floor_ns(10240, 1, 4, f) == pytest.approx(122.2222 + 79.5649, abs=1e-3)
    # three CTAs share the port: 3 x 79.565 = 238.69 ns > one chain
    assert load_trip.floor_ns(10240, 3, 4, f) == pytest.approx(3 * 79.5649, abs=1e-3)
    # unpipelined (1 stage) or no loads: no floor
    assert load_trip.floor_ns(10240, 1, 1, f) == 0
    assert load_trip.floor_ns(0, 1, 3, f) == 0
    arr = load_trip.floor_ns(np.array([10240, 10240, 0]), np.array([1, 3, 1]), np.array([4, 1, 3]), f)
    assert arr == pytest.approx([201.7871, 0, 0], abs=1e-3)


def test_no_facts_no_floor():
    # the tiled accelerator states no load-trip facts
    assert load_trip.facts(Machine(load_profile("sip"), "pe")) is None


def test_gemm_small_tile_alone_on_its_sm_is_bound_by_the_trip():
    """gemm.tile M = N = 512, K = 4096, BM = 256, BN = 16, BK = 128, 8 warps, 3 stages:
    2 x 32 = 64 CTAs, one per SM. A trip loads (256 x 128 + 128 x 16) x 2 = 69,632 B: its
    chain is 122.22 + 69632 / 128.7 = 663.27 ns; the 32 trips take at least 21,224.6 ns of the
    copy engine (the tensor work, 2 x 256 x 16 x 128 = 1,048,576 flop at 6001.5 flop/ns, is
    174.72 ns a trip)."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 512, "N": 512, "K": 4096, "BM": 256, "BN": 16, "BK": 128, "WARPS": 8, "STAGES": 3}
    a = analyze(m, None, H200, p, check=False)
    (lt,) = a.launches
    assert lt.positions == 64 and lt.full_waves == 0
    chain = 242 / 1.98 + 69632 / (65 * 1.98)
    assert chain == pytest.approx(663.27, abs=0.01)
    # the tail wave holds all 64 CTAs: its time is at least 32 trips of the chain
    assert float(lt.tail_ns) >= 32 * chain


def test_floor_only_in_gemm_k_loops():
    # measured on a GEMM k-loop: attention's loop holds two chained mmas (QK^T feeds PV)
    def loop_of(kernel, params=None):
        a = analyze(parse_file(ROOT / "kernels" / kernel), None, H200, params or {}, check=False)
        return [n for n in a.root.walk() if n.kind == "loop" and any(
            x.op is not None and x.op.opcode == "mma" for x in n.walk())][-1]
    assert load_trip.applies(loop_of("gemm.tile"))
    assert not load_trip.applies(loop_of("flash_attention.tile"))


def test_round_trip_chain_latency_and_bytes():
    f = load_trip.LoadTrip(242 / 1.98, 128.7)
    # 10,240 B from L2 (200 ns), 50 ns of L2 share: 122.22 + 200 + max(50, 79.565) = 401.79 ns
    assert load_trip.round_trip_ns(200, 10240, 50, f) == pytest.approx(401.787, abs=1e-3)
    # a share slower than the port: 122.22 + 700 + 300 = 1122.22 ns
    assert load_trip.round_trip_ns(700, 10240, 300, f) == pytest.approx(1122.222, abs=1e-3)


def test_two_stages_expose_the_round_trip():
    """gemm.tile M = N = 512, K = 4096, BM = 256, BN = 16, BK = 128, 8 warps, one CTA per SM:
    with 2 stages one tile is in flight, so a trip is at least the round trip: 122.22 ns of
    chain + at least the 200 ns L2 latency + 69,632 B / 128.7 B/ns = 541.04 ns, i.e. 863.26 ns
    (3 stages halve it, and the 663.27 ns chain floor binds instead)."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 512, "N": 512, "K": 4096, "BM": 256, "BN": 16, "BK": 128, "WARPS": 8}
    two = analyze(m, None, H200, dict(p, STAGES=2), check=False)
    three = analyze(m, None, H200, dict(p, STAGES=3), check=False)
    assert float(two.launches[0].tail_ns) >= 32 * (242 / 1.98 + 200 + 69632 / 128.7)
    assert float(two.metrics["performance.predicted_ns"]) > float(three.metrics["performance.predicted_ns"])



def test_loaded_dram_round_trip_is_self_consistent():
    """H200 [pipeline]: dram_round_trip_unloaded 205 ns, at the copy bandwidth 4238.4 B/ns
    1582 ns: slope (1582 - 205) / 4238.4 = 0.324887 ns per B/ns. A 10,240 B trip all from DRAM
    (miss 1) with 50 ns of share, one CTA on each of 132 SMs, 3 stages:
    K = 122.2222 + 205 + 10240 / 128.7 = 406.787 ns; q = 0.324887 x 132 x 10240 = 439,143;
    T = (406.787 + sqrt(406.787^2 + 4 x 2 x 439,143)) / 4 = (406.787 + 1917.97) / 4 = 581.19 ns,
    so the round trip (S-1) T = 1162.38 ns; the SMs then draw 132 x 10240 / 581.19 = 2325.7 B/ns
    and the loaded latency 205 + 0.324887 x 2325.7 = 960.6 ns closes the loop:
    122.2222 + 960.6 + 79.565 = 1162.4."""
    f = load_trip.LoadTrip(242 / 1.98, 128.7)
    d = load_trip.DramRoundTrip(205, (1582 - 205) / 4238.4)
    rt = load_trip.loaded_round_trip_ns(200, 1, 10240, 50, 10240, 1, 132, 3, f, d)
    assert rt == pytest.approx(1162.38, abs=0.05)
    t = rt / 2
    bw = 132 * 10240 / t
    assert rt == pytest.approx(242 / 1.98 + 205 + d.slope_ns_per_byte_ns * bw + 10240 / 128.7, rel=1e-9)
    # all hits: no DRAM part, the plain round trip with the L2 latency
    assert load_trip.loaded_round_trip_ns(200, 0, 10240, 50, 0, 1, 132, 3, f, d) == pytest.approx(
        load_trip.round_trip_ns(200, 10240, 50, f))
    h = Machine(H200, "cta")
    assert load_trip.dram_facts(h) == (205, pytest.approx((1582 - 205) / 4238.4))
