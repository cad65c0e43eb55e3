"""A warp-mma k-loop trip: the warps issue the mma, then their copies, in series; the resident
CTAs in a closed queue over the sub-partitions and the SM's load path (tfx.analysis.warp_trip;
docs/analysis.md, "warp-mma trip"). H200 facts: 4 sub-partitions, 3.93 issue cycles per
mma.sync and 2.14 per fp8 -> f16 pair conversion, the SM at 0.907 of 1.98 GHz under warp mma
(hw_profiles/h200_sxm.toml [warp_mma]); a warp-wide 16-byte copy of rows of 64 B or less holds
the load path 14.0 cycles at 1.98 GHz (pipeline.short_row_copy_cycles)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import performance, warp_trip
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
FP8 = parse_file(ROOT / "kernels" / "gemm_fp8.tile")


def test_one_cta_takes_its_issue_then_its_copies():
    # 2 warps of 100 ns of mma each, 40 ns of copies, alone on the SM: the busiest
    # sub-partition holds ceil(1 x 2 / 4) = 1 warp, its queued share 1 x 100 / 1 = 100 ns, its own
    # issue ceil(2 / 4) x 100 = 100 ns, no delay beyond; one customer: 100 + 40 + 0 = 140 ns
    t = warp_trip.stations(100, 2, 1, 4, 40)
    assert (t.busiest, t.issue, t.delay, t.own_warps) == (1, 100, 0, 1)
    assert warp_trip.round_ns(t) == 140


def test_eight_warps_hold_two_warps_on_each_subpartition():
    # 8 warps of 10 ns: one CTA's warps sit 2 to a sub-partition, its own issue 2 x 10 = 20 ns;
    # 3 CTAs: the busiest holds ceil(24 / 4) = 6 warps, a CTA's share 6 x 10 / 3 = 20 ns, delay 0
    t = warp_trip.stations(10, 8, 3, 4, 5)
    assert (t.busiest, t.own_warps, t.issue, t.delay) == (6, 2, 20, 0)


def test_many_ctas_saturate_the_busier_station():
    # 4-warp CTAs of 10 ns each on the sub-partitions (busiest ceil(8 x 4 / 4) = 8 warps, a CTA's
    # share 8 x 10 / 8 = 10 ns, delay 1 x 10 - 10 = 0) and 100 ns of copies: 8 CTAs saturate
    # the load path, so the round lies between its 8 x 100 = 800 ns and that plus one CTA's
    # other station, 800 + 10 = 810 ns (the network's asymptote and its one-customer excess)
    t = warp_trip.stations(10, 4, 8, 4, 100)
    assert t.issue == 10 and t.delay == 0
    assert 800 <= warp_trip.round_ns(t) <= 810


def test_two_warp_fp8_trip_by_hand():
    # issue15 gemm_fp8 8192x8192x4096, 64x128x64 on 2 warps, 4 stages, 232 registers (4 CTAs a
    # SM): warps 1 x 2, each 64 x 64 over K = 64: (64/16)(64/8)(64/16) = 128 mma.sync and
    # 64 x 64 / 64 + 64 x 64 / 64 = 128 conversions: issue 128 x 3.93 + 128 x 2.14 = 776.96
    # cycles (> 128 x 6 = 768 of tensor) / (1.98 x 0.907 GHz) = 432.640 ns a warp.
    # Busiest sub-partition ceil(4 x 2 / 4) = 2 warps: a CTA's share 2 x 432.640 / 4 = 216.320 ns;
    # own issue 1 x 432.640, delay 432.640 - 216.320 = 216.320 ns. Copies: A 64 x 64 B + B^T
    # 128 x 64 B = 12,288 B in rows of 64 B, 12,288 / (32 x 16 B) = 24 warp-wide copies x 14.0 /
    # 1.98 = 169.697 ns. Mean value analysis (D1 = 216.320, D2 = 169.697, Z = 216.320):
    #   n=1: R = 216.320, 169.697; cycle 602.336; Q = 0.35913, 0.28173
    #   n=2: R = 216.320 x 1.35913 = 294.008, 169.697 x 1.28173 = 217.506; cycle 727.833;
    #        Q = 2 x 294.008 / 727.833 = 0.80790, 2 x 217.506 / 727.833 = 0.59768
    #   n=3: R = 391.084, 271.122; cycle 878.525; Q = 1.33548, 0.92583
    #   n=4: R = 216.320 x 2.33548 = 505.210, 169.697 x 1.92583 = 326.807; cycle 1,048.337 ns
    # (the engines' max gave the busiest sub-partition's 2 x 432.640 = 865.28 ns; measured about
    # 1,129 ns a round: 1.1245 ms over 15.52 waves of 64 trips)
    warp_ns = Fraction("776.96") / (Fraction("1.98") * Fraction("0.907"))
    copies = 24 * Fraction(14) / Fraction("1.98")
    t = warp_trip.stations(warp_ns, 2, 4, 4, copies)
    assert round(float(t.issue), 3) == 216.320 and round(float(t.delay), 3) == 216.320
    assert round(float(warp_trip.round_ns(t)), 3) == 1048.337


def test_breakdown_line_of_the_analysed_row():
    # the row above as tfx analyze prices it, where the warp's issue also carries the k-loop's own ALU
    # work (warp_mma.loop_alu_instructions 9.8 + copy_alu_instructions 2.27 per 16-byte copy a thread,
    # x alu_cycles 2): A 64 x 64 = 4,096 B and B 128 x 64 = 8,192 B over 64 threads x 16 B: 4 + 8 = 12
    # copies; (9.8 + 2.27 x 12) x 2 = 74.08 cycles; 776.96 + 74.08 = 851.04 cycles / (1.98 x 0.907 GHz)
    # = 473.890 ns a warp; a CTA's share 2 x 473.890 / 4 = 236.945 ns, its delay 473.890 - 236.945 =
    # 236.945. Mean value analysis (D1 = 236.945, D2 = 169.697, Z = 236.945):
    #   n=1: R = 236.945, 169.697; cycle 643.587; Q = 0.36816, 0.26367
    #   n=2: R = 324.179, 214.442; cycle 775.566; Q = 0.83598, 0.55299
    #   n=3: R = 435.027, 263.538; cycle 935.510; Q = 1.39505, 0.84512
    #   n=4: R = 236.945 x 2.39505 = 567.494, 169.697 x 1.84512 = 313.111; cycle 1,117.550 ns (1.12 us),
    # for the measured about 1,129 ns a round
    a = analyze(FP8, None, H200, {"M": 8192, "N": 8192, "K": 4096, "BM": 64, "BN": 128, "BK": 64,
                                  "WARPS": 2, "STAGES": 4},
                resources={"threads": 64, "regs": 232, "smem": 36864, "spills": 0})
    text = {t.name: t.detail for t in a.terms}["warp-mma trip"]
    assert "4 CTAs take turns at the sub-partitions (each 2 x 473.89 ns / 4 = 236.94 ns)" in text
    assert "the load path (each 169.70 ns)" in text
    assert "1 x 473.89 ns - 236.94 ns = 236.94 ns" in text
    assert "cycles in 1.12 us a round" in text


def test_warpgroup_trips_have_none():
    # 128x128x64 on 4 warps takes the warpgroup mma: its copies overlap the asynchronous wgmma
    a = analyze(FP8, None, H200, {"M": 4096, "N": 4096, "K": 4096, "BM": 128, "BN": 128, "BK": 64,
                                  "WARPS": 4, "STAGES": 3})
    assert "warp-mma trip" not in {t.name for t in a.terms}
    # ... at one stage too: the unpipelined trip prices its loads, the wgmma its own rounds
    a = analyze(FP8, None, H200, {"M": 4096, "N": 4096, "K": 4096, "BM": 128, "BN": 128, "BK": 64,
                                  "WARPS": 4, "STAGES": 1})
    assert "warp-mma trip" not in {t.name for t in a.terms}


def test_unpipelined_stations_by_hand():
    """2 CTAs of 2 warps on 4 sub-partitions, each warp 100 ns of mma a trip, 50 ns of loads into
    registers a CTA, one CTA's unpipelined trip 400 ns: the busiest sub-partition holds
    ceil(2 x 2 / 4) = 1 warp, each CTA's share 1 x 100 / 2 = 50 ns; the rest of its trip 400 - 50 -
    50 = 300 ns. Mean value analysis: one CTA cycles in 400 ns, queues 50 / 400 = 0.125 at each
    station; two wait 50 x 1.125 = 56.25 ns at each: 56.25 x 2 + 300 = 412.5 ns a round. Alone
    (r = 1: busiest 1, share 100) the delay is 400 - 100 - 50 = 250 and the round its own 400 ns."""
    t = warp_trip.unpipelined_stations(100, 2, 2, 4, 50, 400)
    assert (t.issue, t.copies, t.delay) == (50, 50, 300)
    assert warp_trip.round_ns(t) == pytest.approx(412.5)
    one = warp_trip.unpipelined_stations(100, 2, 1, 4, 50, 400)
    assert (one.issue, one.delay) == (100, 250) and warp_trip.round_ns(one) == pytest.approx(400)
    # a trip whose queued demands exceed its own cycle keeps no negative delay
    assert warp_trip.unpipelined_stations(100, 2, 1, 4, 500, 400).delay == 0
    arr = warp_trip.unpipelined_stations(np.array([100.0, 100.0]), 2, np.array([2, 1]), 4, 50, 400)
    assert list(warp_trip.round_ns(arr)) == pytest.approx([412.5, 400])


def test_unpipelined_gemm_queues_its_ctas():
    """gemm.tile 4096^3 bf16 64x64x32 on 2 warps, 1 stage, 130 registers: 6 CTAs a SM
    (calibration/h200/measured/issue15 run1: 987.0 us). Each warp's 64 x 32 tile over K = 32 is 32
    mma.sync x 6 cycles / (1.98 GHz x 0.907) = 106.91 ns; 12 warps on 4 sub-partitions, the busiest
    holds 3: each CTA's share 3 x 106.91 / 6 = 53.46 ns. Its loads into registers: A's 64 x 32 (rows
    of 64 B) and B's 32 x 64 (rows of 128 B), 4,096 B each over 64 threads x 16 B = 4 a thread x 2
    warps = 8 loads each: 8 x 21.8 / 1.98 + 8 x 17.07 / 1.98 = 88.08 + 68.97 = 157.05 ns. The
    unpipelined trip (its own line) is 894.17 ns, so the delay is 894.17 - 53.46 - 157.05 = 683.66 ns
    and 6 CTAs cycle (mean value analysis, closed_queue: R = 53.46 (1 + Q_issue), 157.05 (1 + Q_load);
    cycle = sum R + 683.66; Q = n R / cycle) n = 1: 894.17, Q 0.0598 / 0.1756; n = 2: 56.65 + 184.63
    -> 924.95, Q 0.1225 / 0.3992; n = 3: 60.00 + 219.75 -> 963.42, Q 0.1868 / 0.6843; n = 4: 63.44 +
    264.52 -> 1,011.62, Q 0.2509 / 1.0459; n = 5: 66.86 + 321.31 -> 1,071.84, Q 0.3119 / 1.4989;
    n = 6: 70.13 + 392.45 -> 1,146.24 ns = 1.15 us a round, where the engines' max (the loads' 6 x
    157.05 = 942.30 ns floor) gave 955 ns against the measured round of about 1,293 ns."""
    gemm = parse_file(str(Path(__file__).resolve().parents[1] / "kernels" / "gemm.tile"))
    a = analyze(gemm, None, H200, {"M": 4096, "N": 4096, "K": 4096, "BM": 64, "BN": 64, "BK": 32,
                                   "WARPS": 2, "STAGES": 1, "GROUP_M": 8},
                resources={"threads": 64, "regs": 130, "smem": 8192, "spills": 0})
    terms = {t.name: t.detail for t in a.terms}
    assert "= 894.17 ns a trip" in terms["unpipelined trip"]
    text = terms["warp-mma trip"]
    assert "6 CTAs take turns at the sub-partitions (each 3 x 106.91 ns / 6 = 53.46 ns)" in text
    assert "the load path (each 157.05 ns of loads into registers)" in text
    assert "894.17 ns - 53.46 ns - 157.05 ns = 683.66 ns its own" in text
    assert "cycles in 1.15 us a round" in text
    # the queue's 1,146.24 ns round is longer than every engine's (the busiest, the loads' floor:
    # 6 x 157.05 = 942.30 ns), so the trip's chain, not the memory roof the roofline names, sets
    # the waves: raising that rate would not shorten them. The roofline's: 4,096 CTAs x 128 trips
    # = 524,288 trips, each writing its A and B tiles into shared memory, (64 x 32 + 32 x 64) x 2 =
    # 8,192 B, and its 2 warps (2 x 1 over M x N) each reading a 32-row half of A, 2,048 B, and
    # all of B, 4,096 B: 12,288 B; 20,480 B x 524,288 = 10,737,418,240 B / 33,454.08 B/ns =
    # 320,960 ns, past the L2's requests (A and B re-read 64 times, 2 x 64 x 4096^2 x 2 B + C's
    # 33,554,432 B = 4,328,521,728 B / 16,988.4 B/ns at the SMs' ports = 254,793 ns)
    assert a.metrics["roofline.bound_by"] == "smem"
    assert a.metrics["performance.bound_by"] == "latency"
    assert terms["waves"].endswith("(bound by latency)")


def test_the_longest_loop_names_the_bound():
    # (its trips' ns, whether a chain sets its round): the longest loop decides, where it is
    # most of the batch (100 of a 150 ns batch: yes; 100 of 250: the rest of the batch is longer)
    assert performance._latency_sets_rounds({1: (100.0, True), 2: (40.0, False)}, 150.0)
    assert not performance._latency_sets_rounds({1: (100.0, True), 2: (40.0, False)}, 250.0)
    assert not performance._latency_sets_rounds({1: (100.0, False), 2: (140.0, False), 3: (90.0, True)}, 150.0)
    assert not performance._latency_sets_rounds({}, 150.0)
    assert not performance._latency_sets_rounds(None, 150.0)


def test_an_outer_loop_takes_its_longest_inner_loops_bound():
    # a persistent walk: outer loop 1 holds inner loops 2 (30 ns an execution, a chain sets its
    # rounds) and 3 (10 ns, its engines do); the outer loop's 8 trips of 45 ns = 360 ns take
    # loop 2's word, and so are the launch's longest loop
    class Loop:
        def __init__(self, id, inner=()):
            self.id, self.kind, self.inner = id, "loop", inner

        def walk(self):
            yield self
            for c in self.inner:
                yield from c.walk()
    outer = Loop(1, (Loop(2), Loop(3)))
    miss = performance.LaunchMiss(round_bounds={2: (30.0, True), 3: (10.0, False)})
    performance._note_outer_round_bound(miss, outer, 8 * 45.0)
    assert miss.round_bounds[1] == (360.0, True)
    assert performance._latency_sets_rounds(miss.round_bounds, 400.0)
    miss = performance.LaunchMiss(round_bounds={2: (30.0, False), 3: (10.0, True)})
    performance._note_outer_round_bound(miss, outer, 8 * 45.0)
    assert miss.round_bounds[1] == (360.0, False)


def test_arrays_match_scalars():
    cases = [(100, 2, 1, 40), (10, 8, 3, 5), (10, 4, 8, 100), (432.64, 2, 4, 169.7)]
    w, warps, r, c = (np.array(x, dtype=float) for x in zip(*cases))
    t = warp_trip.stations(w, warps.astype(int), r, 4, c, np.array([1, 1, 0, 1]))
    out = warp_trip.round_ns(t)
    for i, (wi, wa, ri, ci) in enumerate(cases):
        one = warp_trip.round_ns(warp_trip.stations(wi, wa, ri, 4, ci))
        assert out[i] == pytest.approx(0 if i == 2 else float(one))


def test_hand_scheduled_copies_have_none():
    # CUTLASS's TMA producer warp copies for the mma warps (tfx.analysis.codegen): no per-thread
    # copies in series with the mma, so the term does not apply and the round is the engines' max
    params = {"M": 8192, "N": 8192, "K": 4096, "BM": 64, "BN": 128, "BK": 64, "WARPS": 2, "STAGES": 4}
    res = {"threads": 64, "regs": 232, "smem": 36864, "spills": 0}
    a = analyze(FP8, None, H200, params, resources=res, codegen="cutlass")
    assert "warp-mma trip" not in {t.name for t in a.terms}
    assert "warp-mma trip" in {t.name for t in analyze(FP8, None, H200, params, resources=res).terms}


def test_a_round_past_the_engines_own_work_is_latency_bound():
    """A loop's round names latency where it is longer than the engines' own work, even when a
    chain's floor has raised one engine to it (the serial chain, the CTAs' queue at the
    sub-partitions sit in e["tensor"]): tensor work 320 ns, copies 300 ns, the chain's floor
    lifting the tensor engine to 500 ns; the round is 500 ns over 10 trips = 5,000 ns. Against the
    floored engines (500) the round is no longer, against their own work (max(320, 300) = 320) it
    is: latency, as docs/analysis.md section 7 defines the bound."""
    from types import SimpleNamespace
    from tfx.analysis.performance import _note_round_bound
    loop = SimpleNamespace(id=7)
    e = {"tensor": 500, "copy": 300}
    miss = SimpleNamespace(round_bounds={})
    _note_round_bound(miss, loop, 10, 500, e)
    assert miss.round_bounds[7] == (5000, False)
    miss = SimpleNamespace(round_bounds={})
    _note_round_bound(miss, loop, 10, 500, e, work=320)
    assert miss.round_bounds[7] == (5000, True)


def test_gemm_w4a16_waits_its_tiles_round_trip():
    """gemm_w4a16.tile at its defaults: 32 CTAs on 132 SMs, 3 stages, two tiles in flight a CTA.
    Its engines' own work a round is the load path's (1 CTA: 4,352 B / 128.7 B/ns + 16 warp-wide
    copies x 7.07 ns = 33.8 + 113.1 = 146.9 ns) and the warp mma's (32 mma.sync x 6 cycles / (1.98
    GHz x 0.907) = 106.91 ns); the round is the tiles' DRAM round trip over the two in flight, at
    least (the idle 557 ns + the trip's 122 ns of chain) / 2 = 340 ns (memory parallelism), far
    past both: the launch is latency-bound (it
    said dram, its busiest engine's name, before session 60). Its roofline is the special-function unit's: the
    cast's one I2F a weight (compute.special.int_to_float), K x N = 4096 x 4096 = 16,777,216 conversions at 16 a
    cycle on 132 SMs at 1.98 GHz (4,181.76 a ns) = 4,011.9988 ns, 4,012 in whole ns, past DRAM's (8.4 MB of
    4-bit weights at 4.8 TB/s: 1.75 us)."""
    from tfx.bundled import bundled_kernel
    a = analyze(parse_file(bundled_kernel("gemm_w4a16.tile")), None, H200)
    assert a.metrics["performance.bound_by"] == "latency"
    assert a.metrics["roofline.bound_by"] == "special"
    assert a.metrics["roofline.compute_ns.special"] == 4012
    assert a.launches[0].latency_from == "round"
    terms = {t.name: t.detail for t in a.terms}
    assert "2 tiles in flight" in terms["memory parallelism"] and terms["waves"].endswith("(bound by latency)")
