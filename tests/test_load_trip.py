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
    chain (the stepped k-loop's, kloop_step: 95 cycles and 69.7 B/cycle) is 47.98 + 69632 /
    138.006 = 552.54 ns; the 32 trips take at least 17,681.3 ns of the copy engine (the tensor work, 2 x 256 x 16 x 128 = 1,048,576 flop at 6001.5 flop/ns, is
    174.72 ns a trip)."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 512, "N": 512, "K": 4096, "BM": 256, "BN": 16, "BK": 128, "WARPS": 8, "STAGES": 3}
    a = analyze(m, None, H200, p, check=False)
    (lt,) = a.launches
    assert lt.positions == 64 and lt.full_waves == 0
    chain = 95 / 1.98 + 69632 / (69.7 * 1.98)
    assert chain == pytest.approx(552.54, abs=0.01)
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
    # ... and the idle floor with one tile in flight, a walk's (tfx.analysis.load_queue): 527 ns
    assert load_trip.dram_facts(h) == (205, pytest.approx((1582 - 205) / 4238.4), 557, 527)


def test_streaming_round_trip_on_a_decode_config():
    """gqa_decode B1 HKV8 SPLITS8 BLOCK_N64 D128 STAGES1: 1 x 8 x 8 = 64 CTAs, one per SM
    (U = 64, r = 1), each trip loading a K and a V tile of 64 x 128 bf16 = 2 x 16,384 =
    32,768 B, all from DRAM (miss 1). Round facts so the root is exact: port 128 B/ns,
    unloaded DRAM round trip 512 ns, slope 0.3125 ns per B/ns, no chain before the issue.
    K = 512 + 32,768 / 128 = 512 + 256 = 768 ns (the transfer 100 ns < 256 ns of port);
    q = 1 x 0.3125 x 64 x 1 x 32,768 = 655,360; S - 1 = 1:
    T = (768 + sqrt(768^2 + 4 x 655,360)) / 2 = (768 + sqrt(589,824 + 2,621,440)) / 2
      = (768 + sqrt(3,211,264)) / 2 = (768 + 1,792) / 2 = 1,280 ns.
    Self-consistent: 64 CTAs x 32,768 B / 1,280 ns = 1,638.4 B/ns drawn, so the DRAM part is
    512 + 0.3125 x 1,638.4 = 1,024 ns and 1,024 + 256 = 1,280 ns. The GEMM's measured chain
    (999 ns here) is replaced by the chain passed (0): with it the answer would differ."""
    f = load_trip.LoadTrip(overhead_ns=999.0, port_bytes_per_ns=128.0)
    d = load_trip.DramRoundTrip(base_ns=512.0, slope_ns_per_byte_ns=0.3125)
    t = load_trip.streaming_round_trip_ns(0.0, 200.0, 1.0, 32768, 100.0, 32768, 1, 64, 1, f, d)
    assert t == 1280.0
    drawn = 64 * 32768 / t
    assert drawn == 1638.4
    assert 512.0 + 0.3125 * drawn + 32768 / 128.0 == 1280.0


def test_unpipelined_decode_waits_the_loaded_round_trip():
    """gqa_decode B8 HQ32 HKV8 SKV8192 SPLITS4 BLOCK_N64 WARPS4: at STAGES 1 each trip waits
    its loads' round trip, which on the H200 grows with the bandwidth all SMs draw (the
    loaded round trip), so the kernel is slower than at STAGES 2, where the round trip hides
    behind the previous trip (issue 15 truth: 0.0999 ms at STAGES 1, 0.0832 ms at STAGES 2)."""
    m = parse_file(ROOT / "kernels" / "gqa_decode.tile")
    p = {"B": 8, "HQ": 32, "HKV": 8, "SKV": 8192, "SPLITS": 4, "BLOCK_N": 64, "WARPS": 4}
    one, two = (float(analyze(m, None, H200, dict(p, STAGES=s), check=False).metrics["performance.predicted_ns"])
                for s in (1, 2))
    assert one > two


# ---------------------------------------------------------------------------------- narrow copies
# pipeline.narrow_copy_cycles = 16.5 cycles / 1.98 GHz = 8.3333 ns a warp-wide copy narrower than
# 16 B a thread (calibration/h200/measured/mlp_l2_stage1: 798.4 ns / (6 x 16) = 8.32 ns).

def test_narrow_copy_fact_from_the_profile():
    f = load_trip.facts(Machine(H200, "cta"))
    assert f.narrow_copy_ns == pytest.approx(16.5 / 1.98)     # 8.3333 ns


def test_copy_width_is_tritons_vector():
    # 32x32 bf16 = 1024 elements: 256 threads -> 1024 // 256 = 4 elements = 8 B
    assert load_trip.copy_width_bytes(2048, 256, 2) == 8
    # 128 threads -> 8 elements = 16 B; 64 threads -> 16 elements = 32 B, capped at 16
    assert load_trip.copy_width_bytes(2048, 128, 2) == 16
    assert load_trip.copy_width_bytes(2048, 64, 2) == 16
    # 16x32 bf16 = 512 elements on 256 threads: 2 elements = 4 B
    assert load_trip.copy_width_bytes(1024, 256, 2) == 4
    # 16x16 bf16 = 256 elements on 256 threads: one element each, 2 B
    assert load_trip.copy_width_bytes(512, 256, 2) == 2
    # fp8 64x32 = 2048 elements on 256 threads: 8 elements = 8 B
    assert load_trip.copy_width_bytes(2048, 256, 1) == 8


def test_narrow_copies_count_warp_wide_instructions():
    # 32x32 bf16 on 8 warps: 8 B a thread, 2048 / (256 x 8) = 1 copy a thread, once per warp: 8
    assert load_trip.narrow_copies(2048, 256, 2) == (2048, 8)
    # the same tile on 4 warps copies 16 B a thread: nothing narrow
    assert load_trip.narrow_copies(2048, 128, 2) == (0, 0)
    # 128x32 bf16 (8192 B) on 8 warps: 4096 elements // 256 = 16 elements, capped at 8 = 16 B
    assert load_trip.narrow_copies(8192, 256, 2) == (0, 0)
    # 16x32 bf16 on 8 warps: 4 B a thread, 1024 / (256 x 4) = 1 a thread -> 8
    assert load_trip.narrow_copies(1024, 256, 2) == (1024, 8)
    # 16x16 bf16 on 8 warps: 2 B a thread is no cp.async (4, 8 or 16 B): not counted
    assert load_trip.narrow_copies(512, 256, 2) == (0, 0)
    b, n = load_trip.narrow_copies(np.array([2048, 2048, 512]), np.array([256, 128, 256]), 2)
    assert list(b) == [2048, 0, 0] and list(n) == [8, 0, 0]


def test_port_time_of_narrow_and_wide_copies():
    f = load_trip.LoadTrip(242 / 1.98, 128.7, 16.5 / 1.98)
    # 32x32x32 on 8 warps: A and B 8 B a thread, 8 + 8 = 16 copies x 8.3333 = 133.333 ns
    assert load_trip.port_ns(4096, 4096, 16, f) == pytest.approx(133.3333, abs=1e-3)
    # 16x32x32 on 4 warps: A 16x32 (1024 B, 512 elements // 128 = 4 = 8 B) narrow, 1 copy a
    # thread x 4 warps = 4; B 32x32 (2048 B) at 16 B: 2048 / 128.7 + 4 x 8.3333 = 15.913 + 33.333
    assert load_trip.port_ns(3072, 1024, 4, f) == pytest.approx(15.9129 + 33.3333, abs=1e-3)
    # without the fact: bytes through the port
    assert load_trip.port_ns(4096, 4096, 16, load_trip.LoadTrip(1, 128.7)) == pytest.approx(4096 / 128.7)


def test_floor_with_narrow_copies_is_the_measured_round():
    """mlp_l2_stage1: 6 CTAs of 32x32x32 on 8 warps per SM, 3 stages: 798.4 ns a round.
    6 x 16 x 8.3333 = 800.0 ns > one CTA's chain 122.22 + 4096 / 128.7 = 154.05 ns."""
    f = load_trip.LoadTrip(242 / 1.98, 128.7, 16.5 / 1.98)
    copies = load_trip.TripCopies(4096, 16, 0)
    assert load_trip.floor_ns(4096, 6, 3, f, copies) == pytest.approx(800.0, abs=1e-3)
    # alone, the chain holds: max(154.05, 133.33)
    assert load_trip.floor_ns(4096, 1, 3, f, copies) == pytest.approx(122.2222 + 31.8260, abs=1e-3)


def test_gemm_eight_warp_small_tile_pays_its_narrow_copies():
    """gemm.tile M = 128, N = K = 4096, 32x32x32 on 8 warps, 4 stages: 4 x 128 = 512 CTAs, 8
    resident per SM (one partial wave: the busiest SM holds ceil(512 / 132) = 4). Each trip's
    A and B tiles are 2048 B at 8 B a thread: 16 warp-wide narrow copies, so a round of 4 CTAs
    takes at least 4 x 16 x 8.3333 = 533.33 ns and the 4096 / 32 = 128 trips 68,266.7 ns. On 4
    warps the same tiles copy 16 B a thread, but their rows are 32 x 2 = 64 B: 2048 / (128 x 16)
    = 1 copy a thread x 4 warps = 4 a tile, 8 short-row copies x 14.0 / 1.98 = 7.0707 ns =
    56.566 ns a CTA, 4 x 56.566 = 226.26 ns a round (the port's 4 x 4096 / 128.7 = 127.3 ns
    before)."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 128, "N": 4096, "K": 4096, "BM": 32, "BN": 32, "BK": 32, "WARPS": 8, "STAGES": 4}
    a = analyze(m, None, H200, p, resources={"regs": 32, "spills": 0}, check=False)
    assert a.metrics["performance.predicted_ns"] >= 4 * 16 * (16.5 / 1.98) * 128
    text = " ".join(t.detail for t in a.terms if t.name == "load trip")
    assert "16 warp-wide copies of 4.096 KB" in text and "= 533.33 ns" in text   # one unit policy
    b = analyze(m, None, H200, {**p, "WARPS": 4}, resources={"regs": 47, "spills": 0}, check=False)
    text4 = " ".join(t.detail for t in b.terms if t.name == "load trip")
    assert "8 warp-wide 16-byte copies of 4.096 KB in rows of at most 64 B x 7.07 ns" in text4
    assert "= 226.26 ns" in text4 and "narrower than 16 B" not in text4


# ---------------------------------------------------------------------------------- unpipelined loads
# pipeline.sync_load_cycles 21.8 / 1.98 = 11.0101 ns a warp-wide 16-byte load, sync_narrow_load_cycles
# 15.4 / 1.98 = 7.7778 ns a 4-8-byte one (calibration/h200/measured/mlp_l2_stage1, 1 stage).

def test_sync_load_facts_from_the_profile():
    f = load_trip.facts(Machine(H200, "cta"))
    assert f.sync_load_ns == pytest.approx(21.8 / 1.98)           # 11.0101 ns
    assert f.sync_narrow_load_ns == pytest.approx(15.4 / 1.98)    # 7.7778 ns


def test_trip_copies_by_width():
    # 32x32 bf16 on 2 warps: 2048 B / (64 threads x 16 B) = 2 loads a thread, x 2 warps = 4 wide
    assert load_trip.trip_copies(2048, 64, 2) == (0, 0, 4, 0, 0, 0)
    # on 8 warps: 8 B a thread, 8 narrow, no wide
    assert load_trip.trip_copies(2048, 256, 2) == (2048, 8, 0, 0, 0, 0)
    both = load_trip.trip_copies(1024, 128, 2) + load_trip.trip_copies(2048, 128, 2)
    # 16x32x32 on 4 warps: A 8 B a thread (4 narrow), B 16 B (2048 / (128 x 16) = 1 a thread x 4)
    assert both == (1024, 4, 4, 0, 0, 0)
    arr = load_trip.trip_copies(np.array([2048, 2048]), np.array([64, 256]), 2)
    assert list(arr.wide_instructions) == [4, 0] and list(arr.narrow_instructions) == [0, 8]


def test_unpipelined_floor_is_the_measured_round():
    """mlp_l2_stage1, 1 stage, 16x32x32 on 4 warps at 8 CTAs per SM, measured 599.0 ns a round:
    8 x (4 x 7.7778 + 4 x 11.0101) = 8 x 75.152 = 601.21 ns. Pipelined (3 stages) the same
    trip takes the cp.async floor instead."""
    f = load_trip.LoadTrip(242 / 1.98, 128.7, 16.5 / 1.98, 21.8 / 1.98, 15.4 / 1.98)
    copies = load_trip.TripCopies(1024, 4, 4)
    assert load_trip.floor_ns(3072, 8, 1, f, copies) == pytest.approx(8 * (4 * 7.7778 + 4 * 11.0101), abs=1e-2)
    # 3 stages: 8 x (2048 / 128.7 + 4 x 8.3333) = 8 x 49.2463 = 393.97 ns
    assert load_trip.floor_ns(3072, 8, 3, f, copies) == pytest.approx(393.97, abs=1e-2)
    # without the facts an unpipelined loop has no floor
    assert load_trip.floor_ns(3072, 8, 1, load_trip.LoadTrip(1, 128.7), copies) == 0
    arr = load_trip.floor_ns(np.array([3072, 3072, 0]), 8, np.array([1, 3, 1]), f, copies)
    assert arr == pytest.approx([601.21, 393.97, 0], abs=1e-2)


def test_gemm_unpipelined_small_tiles_share_the_load_path():
    """gemm.tile M = 128, N = 14336, K = 4096, 32x32x32 on 2 warps, 1 stage: 4 x 448 = 1792 CTAs,
    16 resident a SM, ceil(1792 / 132) = 14 on the busiest; 8 warp-wide 16-byte loads a trip
    (A and B 2048 B / (64 threads x 16 B) = 2 a thread x 2 warps each): a round takes at least
    14 x 8 x 11.0101 = 1,233.1 ns, the 128 trips 157,838 ns."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 128, "N": 14336, "K": 4096, "BM": 32, "BN": 32, "BK": 32, "WARPS": 2, "STAGES": 1}
    a = analyze(m, None, H200, p, resources={"regs": 64, "spills": 0}, check=False)
    assert a.metrics["performance.predicted_ns"] >= 14 * 8 * (21.8 / 1.98) * 128
    text = " ".join(t.detail for t in a.terms if t.name == "unpipelined trip")
    # both tiles' rows are 32 x 2 = 64 B: every load at the 64-byte rows' price
    assert "8 x 11.01 ns (16 B a thread, rows of 64 B or less) + 0 x 8.62 ns" in text
    assert "at least 1.23 us" in text   # 1,233.1 ns


# pipeline.sync_line_load_cycles: a warp-wide 16-byte load of rows longer than 64 B fills 4 whole lines
# (calibration/h200/measured/sync_rows: 64x64x128 on 4 warps at 4 CTAs, 2,206.75 ns a round / (4 x 64
# loads) = 8.6201 ns = 17.068 cycles at 1.98 GHz -> 17.07; on the H100, calibration/h100/measured/sync_rows,
# 2,514.0 / 256 = 9.8203 ns = 19.444 cycles -> 19.44).

def test_sync_line_load_fact_from_the_profiles():
    assert load_trip.facts(Machine(H200, "cta")).sync_line_load_ns == pytest.approx(17.07 / 1.98)   # 8.6212 ns
    h100 = load_trip.facts(Machine(load_profile("h100_sxm"), "cta"))
    assert h100.sync_line_load_ns == pytest.approx(19.44 / 1.98)                                   # 9.8182 ns
    assert h100.sync_load_ns == pytest.approx(21.8 / 1.98)       # 64-byte rows: the H200's, both parts


def test_sync_loads_priced_by_their_rows():
    """16 warp-wide 16-byte loads, 8 of them of 64-byte rows (8 half lines each) and 8 of whole lines:
    8 x 11.0101 + 8 x 8.6212 = 88.081 + 68.970 = 157.05 ns; with 4 narrow loads 4 x 7.7778 = 31.111 more,
    188.16 ns. A profile without the whole-line fact prices all 16 at 11.0101: 176.16 ns."""
    f = load_trip.LoadTrip(242 / 1.98, 128.7, None, 21.8 / 1.98, 15.4 / 1.98, sync_line_load_ns=17.07 / 1.98)
    assert load_trip.sync_load_ns(load_trip.TripCopies(0, 0, 16, 4096, 8, 64), f) == pytest.approx(157.05, abs=1e-2)
    assert load_trip.sync_load_ns(load_trip.TripCopies(1024, 4, 16, 4096, 8, 64), f) == \
        pytest.approx(188.16, abs=1e-2)
    old = f._replace(sync_line_load_ns=None)
    assert load_trip.sync_load_ns(load_trip.TripCopies(0, 0, 16, 4096, 8, 64), old) == pytest.approx(176.16, abs=1e-2)


def test_gemm_unpipelined_whole_line_rows():
    """gemm.tile 4096^3, 64x64x128 on 4 warps, 1 stage, 96 registers (calibration/h200/measured/sync_cache:
    552.2 us, 5 CTAs a SM): A's rows 128 x 2 = 256 B, B's 64 x 2 = 128 B, each tile 16,384 B / (128
    threads x 16 B) = 8 loads a thread x 4 warps = 32, 64 a trip, all whole lines: 64 x 8.6212 = 551.76 ns a
    trip (64 x 11.0101 = 704.65 before the fact), 5 CTAs a round at least 5 x 551.76 = 2,758.8 ns."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 4096, "N": 4096, "K": 4096, "BM": 64, "BN": 64, "BK": 128, "WARPS": 4, "STAGES": 1, "GROUP_M": 8}
    a = analyze(m, None, H200, p, resources={"regs": 96, "spills": 0}, check=False)
    text = " ".join(t.detail for t in a.terms if t.name == "unpipelined trip")
    assert "0 x 11.01 ns (16 B a thread, rows of 64 B or less) + 64 x 8.62 ns (16 B a thread, whole lines)" in text
    assert "= 551.76 ns a trip" in text and "at least 2.76 us" in text


# ---------------------------------------------------------------------------------- short rows
# pipeline.short_row_copy_cycles = 14.0 cycles / 1.98 GHz = 7.0707 ns a warp-wide 16-byte copy of
# a tile whose rows are at most 64 B (calibration/h200/measured/l2_draw: 32x32x32 on 1 warp at 16
# CTAs per SM, 903.6 ns a round / (16 x 8 copies) = 7.06 ns = 13.97 cycles).

def test_short_row_fact_from_the_profile():
    f = load_trip.facts(Machine(H200, "cta"))
    assert f.short_row_copy_ns == pytest.approx(14.0 / 1.98)     # 7.0707 ns


def test_trip_copies_by_row_length():
    # 32x32 bf16 on 2 warps, rows of 32 x 2 = 64 B: the 4 wide copies are also short-row copies,
    # each 512 B over 512 / 64 = 8 rows, a line each: 32 lines
    assert load_trip.trip_copies(2048, 64, 2, 64) == (0, 0, 4, 2048, 4, 32)
    # 32x64 bf16 (rows of 128 B) on 2 warps: 4096 / (64 x 16) = 4 a thread x 2 warps = 8 wide, none short
    assert load_trip.trip_copies(4096, 64, 2, 128) == (0, 0, 8, 0, 0, 0)
    # a narrow copy of short rows stays narrow (8 B a thread on 8 warps), counted once
    assert load_trip.trip_copies(2048, 256, 2, 64) == (2048, 8, 0, 0, 0, 0)
    arr = load_trip.trip_copies(np.array([2048, 4096]), 64, 2, np.array([64, 128]))
    assert list(arr.short_instructions) == [4, 0] and list(arr.short_bytes) == [2048, 0]
    assert list(arr.short_lines) == [32, 0]


def test_trip_copies_of_32_byte_rows_touch_twice_the_lines():
    """128x16 bf16 (BK = 16, rows of 16 x 2 = 32 B) on 4 warps: 4,096 / (128 x 16) = 2 copies a
    thread x 4 warps = 8 warp-wide copies, each 512 B over 512 / 32 = 16 rows, a line each:
    128 lines, twice the 8 x 8 = 64 of the same copies of 64-byte rows."""
    assert load_trip.trip_copies(4096, 128, 2, 32) == (0, 0, 8, 4096, 8, 128)
    assert load_trip.trip_copies(4096, 128, 2, 64) == (0, 0, 8, 4096, 8, 64)
    arr = load_trip.trip_copies(np.array([4096, 4096]), 128, 2, np.array([32, 64]))
    assert list(arr.short_lines) == [128, 64]


def test_short_row_line_price():
    """A line of a short-row copy: 7.0707 ns / 8 lines = 0.88384 ns; 8 copies of 32-byte rows
    (128 lines) take 128 x 0.88384 = 113.131 ns, 16 copies of 64-byte ones the same 113.131."""
    f = load_trip.LoadTrip(242 / 1.98, 128.7, None, None, None, 14.0 / 1.98)
    assert load_trip.short_line_ns(f) == pytest.approx(14.0 / 1.98 / 8)
    assert load_trip.port_ns(4096, 0, 0, f, 4096, 128) == pytest.approx(113.131, abs=1e-3)
    assert load_trip.copies_port_ns(8192, load_trip.TripCopies(0, 0, 16, 8192, 16, 128), f) == \
        pytest.approx(113.131, abs=1e-3)


def test_gemm_bk16_round_on_the_load_path():
    """gemm.tile 4096^3, 128x128x16 on 4 warps, 6 stages, 174 registers (calibration/h200/measured/
    gemm_bk_s15, 307.55 us): 2 CTAs an SM. A's 128 x 16 bf16 rows are 32 B: 8 warp-wide copies of
    16 rows, 128 lines x 0.88384 ns = 113.131 ns; B's 16 x 128 rows are 256 B: 4,096 / 128.7 =
    31.826 ns; a round 2 x (31.826 + 113.131) = 289.91 ns (at 64-byte rows' 7.0707 ns a copy it
    was 2 x (31.826 + 56.566) = 176.78)."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 4096, "N": 4096, "K": 4096, "BM": 128, "BN": 128, "BK": 16, "WARPS": 4, "STAGES": 6, "GROUP_M": 8}
    a = analyze(m, None, H200, p, resources={"regs": 174, "spills": 0, "smem": 49152}, check=False)
    text = " ".join(t.detail for t in a.terms if t.name == "load trip")
    assert ("2 x (4.096 KB / 128.7 GB/s + 8 warp-wide 16-byte copies of 4.096 KB in rows under 64 B, "
            "128 lines (one a row) x 0.88 ns") in text
    assert "= 289.91 ns" in text
    # 256 trips of at least 289.91 ns a round: the 3 full waves take at least 3 x 74,217 ns
    assert a.metrics["performance.predicted_ns"] >= 3 * 256 * 289.91


def test_short_row_round_is_the_measured_one():
    """l2_draw: 32x32x32 on 1 warp, 3 stages, 16 CTAs per SM, 903.6 ns a round. A and B are
    2048 B in 64-byte rows on 32 threads: 2048 / (32 x 16) = 4 copies each, 8 a CTA:
    16 x 8 x 7.0707 = 905.05 ns (the byte rate gave 16 x 4096 / 128.7 = 509.2 ns). The mixed
    16x32x32 on 4 warps at 12 CTAs (measured 780.7 ns): A 1024 B at 8 B a thread, 4 narrow copies
    x 8.3333; B 2048 B in 64-byte rows at 16 B, 4 short-row copies x 7.0707:
    12 x (33.333 + 28.283) = 739.39 ns (the byte rate for B gave 12 x (15.913 + 33.333) = 590.96)."""
    f = load_trip.LoadTrip(242 / 1.98, 128.7, 16.5 / 1.98, None, None, 14.0 / 1.98)
    one_warp = load_trip.TripCopies(0, 0, 8, 4096, 8, 64)      # 8 lines a copy of 64-byte rows
    assert load_trip.floor_ns(4096, 16, 3, f, one_warp) == pytest.approx(905.05, abs=1e-2)
    mixed = load_trip.TripCopies(1024, 4, 4, 2048, 4, 32)
    assert load_trip.floor_ns(3072, 12, 3, f, mixed) == pytest.approx(739.39, abs=1e-2)
    # without the fact the short rows ride the port: 12 x (2048 / 128.7 + 4 x 8.3333)
    no_fact = load_trip.LoadTrip(242 / 1.98, 128.7, 16.5 / 1.98)
    assert load_trip.floor_ns(3072, 12, 3, no_fact, mixed) == pytest.approx(590.96, abs=1e-2)


def test_gemm_short_rows_of_one_operand():
    """gemm.tile 3072^3, 128x32x64 on 4 warps, 4 stages (the issue-15 run4 row, 72 registers,
    81,920 B of shared memory: 2 CTAs per SM). A's rows are BK x 2 = 128 B: 16,384 B at the
    port; B's are BN x 2 = 64 B: 4096 B / (128 x 16) = 2 copies a thread x 4 warps = 8
    short-row copies: 2 x (16,384 / 128.7 + 8 x 7.0707) = 2 x (127.30 + 56.57) = 367.7 ns."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 3072, "N": 3072, "K": 3072, "BM": 128, "BN": 32, "BK": 64, "WARPS": 4, "STAGES": 4, "GROUP_M": 1}
    a = analyze(m, None, H200, p, resources={"regs": 72, "spills": 0, "smem": 81920}, check=False)
    text = " ".join(t.detail for t in a.terms if t.name == "load trip")
    # bytes and rates to four significant digits (16.38 KB, 4.096 KB, 128.7 GB/s), times two decimals
    assert "2 x (16.38 KB / 128.7 GB/s + 8 warp-wide 16-byte copies of 4.096 KB in rows of at most 64 B" in text
    assert "= 367.7" in text
