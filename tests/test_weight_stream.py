"""A small-M GEMM's weight stream (docs/analysis.md, "A weight stream's round trip"): the loaded
line of stream_depth for the DRAM bytes each CTA alone reads in rows its neighbour continues
(load_trip.stream_facts), and a one-wave launch's DRAM served among its CTAs for them
(memory_parallelism.own_stream_draw).

H200 facts (hw_profiles/h200_sxm.toml [pipeline]): kloop's line 205 ns + (1582 - 205) / 4238.4 =
0.324887 ns per B/ns; stream_depth's 433 ns + (878 - 433) / 4238.4 = 0.104992 ns per B/ns; the
chain 242 / 1.98 = 122.2222 ns; the SM's L2 port 65 x 1.98 = 128.7 B/ns; DRAM 4238.4 B/ns.
"""

from pathlib import Path

import math

import pytest

from tfx.analysis import load_trip, memory_parallelism
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")
KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def _mp(kernel, params, regs, smem, threads):
    g = analyze(parse_file(str(KERNELS / kernel)), None, H200, params,
                resources={"threads": threads, "regs": regs, "smem": smem, "spills": 0})
    return g, [t for t in g.terms if t.name == "memory parallelism"][0].detail


def test_the_stream_line_mixed_by_the_share():
    """Share 1: base 433 ns, slope (878 - 433) / 4238.4 = 445 / 4238.4 = 0.104992 ns per B/ns.
    Share 0.5: 205 + 0.5 x (433 - 205) = 319 ns, 0.324887 + 0.5 x (0.104992 - 0.324887) =
    0.214940 ns per B/ns. Share 0: kloop's line unchanged (the same object)."""
    m = Machine(H200, "cta")
    d = load_trip.dram_facts(m)
    one = load_trip.stream_facts(m, d, 1)
    assert one.base_ns == pytest.approx(433)
    assert one.slope_ns_per_byte_ns == pytest.approx(0.104992, abs=1e-6)
    half = load_trip.stream_facts(m, d, 0.5)
    assert half.base_ns == pytest.approx(319)
    assert half.slope_ns_per_byte_ns == pytest.approx(0.214940, abs=1e-6)
    assert one.idle_ns == half.idle_ns == 557
    assert load_trip.stream_facts(m, d, 0) is d


def test_a_one_wave_launch_serves_the_weight_stream_among_its_ctas():
    """448 CTAs on 132 SMs draw 448 / 132 = 3.393939 a SM; the busiest SM holds 4: w = 4 /
    3.393939 = 1.178571 even shares. All bytes the stream's: draw 4 x (1 / 1.178571) = 3.393939
    (cta_share_weight gives back 1.178571). Half: 4 x (0.5 / 1.178571 + 0.5) = 4 x (0.424242 +
    0.5) = 3.696970, an effective 4 / 3.696970 = 1.081967 shares. A full wave (draw = r) keeps 1."""
    draw = 448 / 132
    assert memory_parallelism.own_stream_draw(4, draw, 1) == pytest.approx(3.393939, abs=1e-6)
    assert memory_parallelism.own_stream_draw(4, draw, 0.5) == pytest.approx(3.696970, abs=1e-6)
    assert memory_parallelism.cta_share_weight(4, memory_parallelism.own_stream_draw(4, draw, 0.5)) == \
        pytest.approx(1.081967, abs=1e-6)
    assert memory_parallelism.own_stream_draw(3, 3, 1) == 3
    assert memory_parallelism.own_stream_draw(4, None, 1) is None


def test_run22_weight_stream_round_trip_by_hand():
    """run22 gemm_bf16 16x28672x8192 at 16x64x128, 2 warps, 2 stages, GROUP_M 1 (measured 119.20
    us; 126 registers, 20,480 B: 448 CTAs, one wave, 4 on 52 SMs, 3 on 80). A trip reads B's 128 x
    64 x 2 = 16,384 B, which only this CTA reads (the launch reads B's 469.76 MB once: private) in
    128-B rows the CTA pn + 1 continues (B[k * BK, pn * BN]: a stream), and A's 16 x 128 x 2 =
    4,096 B, which all 448 CTAs read (4,096 / 448 = 9.142857 B from DRAM). Stream share f =
    16,384 / 16,393.142857 = 0.999442. Line: base 205 + 0.999442 x 228 = 432.8728 ns, slope
    0.324887 + 0.999442 x (0.104992 - 0.324887) = 0.105115 ns per B/ns. K = 122.2222 + 432.8728 +
    20,480 / 128.7 (159.1298) = 714.2248 ns; q = 0.105115 x 448 x 16,393.142857 = 771,979; one
    tile in flight: T = (714.2248 + sqrt(714.2248^2 + 4 x 771,979)) / 2 = (714.2248 +
    sqrt(510,117 + 3,087,916 = 3,598,033) = 1,896.8482) / 2 = 1,305.5365 ns (it was 1.81 us on
    kloop's line). The busiest SM's 4 CTAs draw DRAM at 1 / (0.999442 / 1.178571 + 0.000558) =
    1.178480 even shares: 32.1091 x 1.178480 = 37.8400 B/ns (was 32.11)."""
    f, s = 16384 / (16384 + 4096 / 448), 445 / 4238.4
    base, slope = 205 + f * 228, 1377 / 4238.4 + f * (s - 1377 / 4238.4)
    k = 242 / 1.98 + base + 20480 / (65 * 1.98)
    q = slope * 448 * (16384 + 4096 / 448)
    assert (k + math.sqrt(k * k + 4 * q)) / 2 == pytest.approx(1305.5365, abs=0.05)
    g, detail = _mp("gemm.tile", {"M": 16, "N": 28672, "K": 8192, "BM": 16, "BN": 64, "BK": 128,
                                  "WARPS": 2, "STAGES": 2, "GROUP_M": 1}, 126, 20480, 64)
    assert "432.87 ns + 0.1051 ns per GB/s" in detail
    assert "= 1.31 us (solved with the trip time: 448 CTAs on 132 SMs" in detail
    assert "99.9% of its DRAM bytes are a weight stream" in detail
    assert "4 / 3.3939 = 1.1786 even shares" in detail and "37.84 GB/s, not 32.11 GB/s" in detail


def test_co_read_and_k_major_weights_are_not_a_stream():
    """64x14336x14336 at 32x128x64 (2 warps, 4 stages): cdiv(64, 32) = 2 CTAs read each B tile, the
    launch reads B twice over: not private, kloop's line and the SMs' shares stay (205 ns + 0.3249).
    fp8 16x28672x8192 at 16x128x64 (4 warps, 5 stages, BT K-major): each BT byte read once
    (private), but BT[pn * BN, k * BK]'s 64-B pieces advance with the trip only (no neighbour
    continues them: tfx.analysis.strided_runs), so kloop's line stays; the one-wave launch (224
    CTAs, 2 on 92 SMs) still serves them among its CTAs: 2 / (224 / 132) = 1.1786 even shares."""
    _, co = _mp("gemm.tile", {"M": 64, "N": 14336, "K": 14336, "BM": 32, "BN": 128, "BK": 64,
                              "WARPS": 2, "STAGES": 4, "GROUP_M": 1}, 168, 61440, 64)
    assert "205.00 ns + 0.3249 ns per GB/s" in co and "weight stream" not in co
    _, kmaj = _mp("gemm_fp8.tile", {"M": 16, "N": 28672, "K": 8192, "BM": 16, "BN": 128, "BK": 64,
                                    "WARPS": 4, "STAGES": 5, "GROUP_M": 1}, 71, 36864, 128)
    assert "205.00 ns + 0.3249 ns per GB/s" in kmaj and "are a weight stream" not in kmaj
    assert "2 / 1.6970 = 1.1786 even shares" in kmaj


def _unhidden(detail):
    """The share of the write-back its rounds do not hide, as the `l2 write-back` term states it (1 - slack / the
    round's write-back, to 0.1%: launch_handoff.unhidden_write_back, tested by hand below); 1 where it states none."""
    import re
    got = re.search(r"slack over its DRAM side .*? = ([\d.]+)%\)", detail)
    return 1 if got is None else float(got.group(1)) / 100


def _predicted(kernel, params, regs, smem, threads, l2_clear):
    g = analyze(parse_file(str(KERNELS / kernel)), None, H200, params,
                resources={"threads": threads, "regs": regs, "smem": smem, "spills": 0}, l2_clear=l2_clear)
    return float(g.predicted_ns()), [t for t in g.terms if t.name == "l2 write-back"]


def test_a_weight_stream_launch_pays_the_dirty_write_back_after_an_l2_clear():
    """stream_depth's line is a per-trip fit ((t(256 trips) - t(64 trips)) / 192): no launch phase
    in it, so a launch it prices pays do_bench's dirty-L2 write-back when timed after the clear
    (analyze's l2_clear; launch.l2_dirty_write_back 8.16 us x min(DRAM bytes, L2) / L2), in the
    share of its DRAM bytes priced on that line (kloop's line holds its own launches' write-back).
    run22's 16x28672x8192 at 16x64x128 reads B's 28,672 x 8,192 x 2 = 469,762,048 B from DRAM, past
    the 60 MiB = 62,914,560 B of L2: min(469,762,048, 62,914,560) / 62,914,560 = 1; a trip's DRAM
    bytes are B's 128 x 64 x 2 = 16,384 and A's 16 x 128 x 2 = 4,096 shared by the 448 CTAs, the
    stream's share 16,384 / (16,384 + 4,096 / 448) = 0.999442: 8,160 x 0.999442 = 8,155.45 ns x the
    share its rounds, which DRAM's round trip sets, do not hide (over 90%: `_unhidden`) more than the
    same launch priced clean (a serving step). The co-read B of 64x14336x14336 at
    32x128x64 GROUP_M = 1 (read cdiv(64, 32) = 2 times, by co-readers that drift apart: kloop's
    line) and fp8's K-major BT (read once, but in pieces no neighbour continues: kloop's line) are
    not on the stream's line: no write-back, the same prediction with or without the clear."""
    run22 = ("gemm.tile", {"M": 16, "N": 28672, "K": 8192, "BM": 16, "BN": 64, "BK": 128, "WARPS": 2,
                           "STAGES": 2, "GROUP_M": 1}, 126, 20480, 64)
    clean, none = _predicted(*run22, l2_clear=False)
    cleared, term = _predicted(*run22, l2_clear=True)
    share = 16384 / (16384 + 4096 / 448)
    assert share == pytest.approx(0.999442, abs=1e-6)
    hidden = _unhidden(term[0].detail)
    assert 0.9 < hidden <= 1          # a stream DRAM's round trip binds: its rounds hide little of it
    assert not none and len(term) == 1 and term[0].ns == pytest.approx(8160 * share * hidden, rel=1e-3)
    assert cleared - clean == pytest.approx(term[0].ns, abs=1)   # predicted_ns is whole ns
    assert "x 99.9% of its DRAM bytes on the stream's clean-L2 line" in term[0].detail
    co_read = ("gemm.tile", {"M": 64, "N": 14336, "K": 14336, "BM": 32, "BN": 128, "BK": 64, "WARPS": 2,
                             "STAGES": 4, "GROUP_M": 1}, 168, 61440, 64)
    k_major = ("gemm_fp8.tile", {"M": 16, "N": 28672, "K": 8192, "BM": 16, "BN": 128, "BK": 64, "WARPS": 4,
                                 "STAGES": 5, "GROUP_M": 1}, 71, 36864, 128)
    for case in (co_read, k_major):
        a, _ = _predicted(*case, l2_clear=False)
        b, term = _predicted(*case, l2_clear=True)
        assert a == b and not term


# M = 64 over BM = 16: four row tiles co-read each B tile (calibration/h100/measured/trip_mkgrid's tile);
# 4 warps, 4 stages: (16 x 64 + 64 x 128) x 2 B = 18,432 B a stage, 73,728 B, 3 CTAs an SM
CO_READ = {"M": 64, "N": 8192, "K": 8192, "BM": 16, "BN": 128, "BK": 64, "WARPS": 4, "STAGES": 4}


def test_co_read_b_in_one_wave_is_a_stream_when_its_readers_stay_together():
    """GROUP_M = 8: 4 x 64 = 256 CTAs, one wave (3 x 132 = 396 slots); the 4 co-readers of a B
    tile are neighbouring launch positions (the group-M order) and start together, so DRAM sees
    B's rows once, continued by the neighbouring tiles: a stream. A trip's DRAM bytes: B's 64 x
    128 x 2 = 16,384 B over its 4 readers = 4,096, A's 16 x 64 x 2 = 2,048 B over its 64 readers =
    32; the stream's share 4,096 / (4,096 + 32) = 0.992248. Its line: 205 + 0.992248 x (433 -
    205) = 431.23 ns. Timed after a clear the launch reads B's 8,192 x 8,192 x 2 = 134,217,728 B,
    past the L2: the write-back 8,160 x 0.992248 = 8,096.74 ns x the share its rounds do not hide."""
    share = 4096 / (4096 + 32)
    assert 205 + share * 228 == pytest.approx(431.23, abs=0.005)
    case = ("gemm.tile", dict(CO_READ, GROUP_M=8), 128, 73728, 128)
    _, detail = _mp(*case)
    assert "205.00 ns + 0.9922 x (433.00 ns - 205.00 ns) = 431.23 ns" in detail
    clean, none = _predicted(*case, l2_clear=False)
    cleared, term = _predicted(*case, l2_clear=True)
    hidden = _unhidden(term[0].detail)
    assert not none and term[0].ns == pytest.approx(8160 * share * hidden, rel=1e-3)
    assert cleared - clean == pytest.approx(term[0].ns, abs=1)   # predicted_ns is whole ns


def test_co_read_b_whose_readers_drift_apart_stays_on_kloops_line():
    """GROUP_M = 1: the co-readers of a B tile are 64 launch positions apart, on unrelated SMs;
    256 CTAs on 132 SMs put 2 on 124 SMs and 1 on 8, so pairs run in different rate classes
    (l2_reuse.rate_classes_apart: 1 - (124^2 + 124^2 + 8^2) / 256^2 = 0.5298 > 0) and drift apart:
    the later reader re-fetches, DRAM does not see B's rows once. kloop's line (205 ns + 0.3249 ns
    per GB/s) and no write-back."""
    assert 1 - (124 ** 2 + 124 ** 2 + 8 ** 2) / 256 ** 2 == pytest.approx(0.5298, abs=1e-4)
    case = ("gemm.tile", dict(CO_READ, GROUP_M=1), 128, 73728, 128)
    _, detail = _mp(*case)
    assert "205.00 ns + 0.3249 ns per GB/s" in detail and "weight stream" not in detail
    a, _ = _predicted(*case, l2_clear=False)
    b, term = _predicted(*case, l2_clear=True)
    assert a == b and not term


def test_a_rounds_slack_hides_part_of_the_write_back():
    """launch_handoff.unhidden_write_back: the L2's 62,914,560 B drain in 8,160 ns, 62,914,560 / 8,160 = 7,710.1 B/ns.
    A round of 1,542,020 B writes back in 1,542,020 / 7,710.1 = 200.0 ns: a round 100 ns longer than its DRAM
    side hides half (1 - 100 / 200 = 0.5), one 250 ns longer all of it (1 - 250 / 200 < 0: 0), one that DRAM sets
    (the round 400 ns, its DRAM side 500) none (1); a round that reads nothing, none either (1)."""
    from tfx.analysis import launch_handoff
    m = Machine(H200, "cta")
    rate = 62_914_560 / 8_160
    assert launch_handoff.write_back_rate(m) == pytest.approx(rate)
    b = 200 * rate
    assert b == pytest.approx(1_542_020, abs=5)
    assert launch_handoff.unhidden_write_back(m, 600, 500, b) == pytest.approx(0.5)
    assert launch_handoff.unhidden_write_back(m, 750, 500, b) == 0
    assert launch_handoff.unhidden_write_back(m, 400, 500, b) == 1
    assert launch_handoff.unhidden_write_back(m, 600, 500, 0) == 1
    import numpy as np
    got = launch_handoff.unhidden_write_back(m, np.array([600.0, 750.0, 400.0]), 500.0, b)
    assert got.tolist() == pytest.approx([0.5, 0.0, 1.0])


def test_a_tensor_bound_stream_pays_the_write_back_its_slack_leaves():
    """16x8192x8192 at 128x256x64, 8 warps, 3 stages (32 CTAs, one an SM; a private stream, B read once): its
    rounds are longer than their DRAM side, so the write-back is 8,160 ns x the stream share x the share its slack
    leaves, which the term states; l2_dirty_s20 measures this launch's dirty - clean at 3.71 us (25 reps'
    medians), where the whole write-back would be 8.16 us: the term lies between them. The stream share: a trip's
    DRAM bytes B's 64 x 256 x 2 = 32,768 and A's 16 x 64 x 2 = 2,048 over its 32 readers = 64: 32,768 / 32,832 =
    0.998051."""
    g = analyze(parse_file(str(KERNELS / "gemm.tile")), None, H200,
                {"M": 16, "N": 8192, "K": 8192, "BM": 128, "BN": 256, "BK": 64, "WARPS": 8, "STAGES": 3, "GROUP_M": 8},
                resources={"threads": 256}, l2_clear=True)
    (term,) = [t for t in g.terms if t.name == "l2 write-back"]
    share = 32768 / (32768 + 2048 / 32)
    hidden = _unhidden(term.detail)
    assert hidden < 1
    assert term.ns == pytest.approx(8160 * share * hidden, rel=1e-3)
    assert 3710 < term.ns < 8160
