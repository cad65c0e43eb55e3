"""A lone warp's compiled k-loop a trip (tfx.analysis.lone_walk, bench/h200/lone_warp_walk.py; docs/analysis.md,
"A lone warp's compiled loop"), derived by hand. H200 facts: ldmatrix 34 cycles (calibration/h200/measured/
ldsm_latency), the SM's shared-memory port 128 B/cycle, an LDGSTS's address registers released 11 cycles after its
issue (calibration/h200/measured/lone_warp_s27, Nsight's samples of 16x128x128 w2 s4), the SM at 0.907 of 1.98 GHz
under warp mma."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import lone_walk, warp_trip
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "h200"))
import lone_warp_walk as census  # noqa: E402

H200 = load_profile("h200_sxm")
GEMM = parse_file(ROOT / "kernels" / "gemm.tile")
GHZ = Fraction("1.98") * Fraction("0.907")            # 1.79586 GHz


def test_the_control_bits_of_two_compiled_instructions():
    # 16x128x128 w2 s4's first HMMA, high word 0x042fec000004184c: bits 41.. = 0x042fec00 >> 9 = 0x217f6:
    # stall 0x6, yield (0x217f6 >> 4) & 1 = 1, write barrier (>> 5) & 7 = 7 (none), read barrier (>> 8) & 7 = 7,
    # wait mask (>> 11) & 0x3f = 0x42 & 0x3f = 0b000010 (barrier 1)
    text = ("        /*33a0*/                   HMMA.16816.F32.BF16 R76, R84.reuse, R80, R76 ;   /* 0x00000050544c723c */\n"
            "                                                                                    /* 0x042fec000004184c */\n"
            "        /*33b0*/                   LDSM.16.M88.4 R24, [R134+UR11+0x18000] ;         /* 0x0180000b8618783b */\n"
            "                                                                                    /* 0x000f680008000200 */\n")
    hmma, ldsm = census.decode(text)
    assert (hmma["stall"], hmma["yld"], hmma["wbar"], hmma["rbar"], hmma["wait"]) == (6, 1, 7, 7, 0b000010)
    # 0x000f6800 >> 9 = 0x7b4: stall 4, yield 1, write barrier 5, read barrier 7, waits on none
    assert (ldsm["stall"], ldsm["yld"], ldsm["wbar"], ldsm["rbar"], ldsm["wait"]) == (4, 1, 5, 7, 0)


BODY = [dict(stall=1, yld=1, wbar=0, rbar=7, wait=0, text="LDSM.16.M88.4 R4, [R2]"),
        dict(stall=6, yld=1, wbar=7, rbar=7, wait=0b000001, text="HMMA.16816.F32.BF16 R8, R4, R6, R8"),
        dict(stall=2, yld=1, wbar=7, rbar=1, wait=0, text="LDGSTS.E.BYPASS.128 [R3], desc[UR4][R10.64]"),
        dict(stall=1, yld=1, wbar=7, rbar=7, wait=0b000010, text="IADD3 R10, P0, R10, R12, RZ")]


def test_the_walk_by_hand():
    # LDSM at 0 (its fragment at 34), 1 cycle; the HMMA waits to 34, 6 cycles: 40; the LDGSTS at 40 (its
    # registers free at 40 + 11 = 51), 2 cycles: 42; the IADD3 waits to 51, 1 cycle: 52. The next trip's LDSM
    # issues at 52 and every barrier of the trip before is past: a steady trip of 52 cycles, of which 10 are
    # stall counts, 33 the fragment's wait (1 -> 34) and 9 the copy's registers (42 -> 51)
    w = census.walk(BODY, 2, rread=11)
    assert (w["cycles"], w["stall"], w["LDSM"], w["LDGSTS"]) == (52, 10, 33, 9)
    # released 4 cycles after issue: the IADD3 waits 42 -> 44, a trip of 45
    assert census.walk(BODY, 2, rread=4)["cycles"] == 45


def test_the_queued_walk_by_hand():
    # the CTA's 2 warps each read 512 B at the port (128 B a cycle): 2 x 4 = 8 cycles from 0, the fragment 8 +
    # 34 - 4 = 38 after the LDSM; the HMMA at 38, 44; the LDGSTS at 44 (free at 55), 46; the IADD3 at 55, 56.
    # The next LDSM at 56 finds the port free since 8: the same trip, 56 cycles
    assert census.walk(BODY, 2, rread=11, queued=True)["cycles"] == 56
    # on 4 warps: 4 x 4 = 16 cycles at the port, the fragment at 16 + 30 = 46: 46 + 6 + 2 = 54 -> 46 + 6 + 11 = 63,
    # + 1 = 64
    assert census.walk(BODY, 4, rread=11, queued=True)["cycles"] == 64


def test_the_table_and_its_lookup():
    table = {(16, 128, 128, 2, 4): 1052, (16, 64, 128, 2, 3): 463}
    assert lone_walk.cycles((16, 128, 128), 2, 4, table=table) == 1052
    assert lone_walk.cycles((16, 128, 128), 2, 5, table=table) == 0            # not listed: none
    assert lone_walk.cycles((16, 128, 128), 2, 4, bits=8, table=table) == 0     # fp8: not these compiles
    assert lone_walk.cycles((16, 128, 128), 2, 4, b_k_major=True, table=table) == 0
    got = lone_walk.cycles((np.array([16, 16, 32]), np.array([128, 64, 64]), np.array([128, 128, 128])),
                           np.array([2, 2, 2]), np.array([4, 3, 4]), table=table)
    assert list(got) == [1052, 463, 0]


def test_the_emitted_table_is_the_walk_of_the_stored_loops():
    # tfx/analysis/triton_lone_walk.py against the queued walk (release 11) of calibration/h200/measured/
    # lone_warp_s27's compiled loops, for the tiles of s26b
    from tfx.analysis.triton_lone_walk import WALK
    sass = census.sass_dir(ROOT / "calibration" / "h200" / "measured" / "lone_warp_s27")
    for k in [(16, 128, 128, 2, 4), (16, 64, 128, 2, 3), (16, 256, 64, 2, 4), (32, 64, 128, 2, 4)]:
        body = census.read_ctrl(sass / f"{census.name(k)}.ctrl.txt")
        assert WALK[k] == round(census.walk(body, k[3], 11, queued=True)["cycles"])
        # the walk is at least the compiled stall counts, which are at least 6 cycles an HMMA
        hmma = sum(1 for d in body if census.opcode(d).startswith("HMMA"))
        assert WALK[k] >= sum(d["stall"] for d in body) >= 6 * hmma


def test_the_walk_is_a_floor_of_a_lone_warps_round():
    # one 2-warp CTA: 384 cycles of mma issue a warp / 1.79586 GHz = 213.827 ns, copies 286.43 ns: a round of
    # 500.257 ns; a walk of 1,052 cycles / 1.79586 = 585.792 ns is the round
    issue = float(Fraction(384) / GHZ)
    walk = float(Fraction(1052) / GHZ)
    t = warp_trip.stations(issue, 2, 1, 4, 286.43, 1, 0, walk)
    assert warp_trip.round_ns(t) == pytest.approx(walk)
    assert round(warp_trip.round_ns(t), 3) == 585.792
    # a shorter walk changes nothing: 500.257
    short = warp_trip.stations(issue, 2, 1, 4, 286.43, 1, 0, 400.0)
    assert warp_trip.round_ns(short) == pytest.approx(issue + 286.43)
    # three 2-warp CTAs put 2 warps on the busiest sub-partition: no warp is alone, no floor
    three = warp_trip.stations(issue, 2, 3, 4, 286.43, 1, 0, walk)
    assert three.walk == 0
    # arrays: alone (1 CTA) and not (3 CTAs)
    arr = warp_trip.stations(issue, 2, np.array([1, 3]), 4, 286.43, 1, 0, np.array([walk, walk]))
    assert list(arr.walk) == [walk, 0]


def test_run37s_first_pick_by_hand():
    # issue15 run37 16x4096x14336 16x128x128 w2 s4 (168 registers), measured 85.66 us: 32 CTAs, one an SM, each
    # warp alone on its sub-partition; mma issue 64 x 6 = 384 cycles = 213.83 ns, copies 36,864 B / 128.7 B/ns =
    # 286.43 ns: the closed queue 500.26 ns a round, under the walk's WALK cycles / 1.796 GHz
    from tfx.analysis.triton_lone_walk import WALK
    cyc = WALK[(16, 128, 128, 2, 4)]
    a = analyze(GEMM, None, H200, dict(M=16, N=4096, K=14336, BM=16, BN=128, BK=128, WARPS=2, STAGES=4, GROUP_M=8),
                resources={"threads": 64, "regs": 168, "spills": 0})
    text = {t.name: t.detail for t in a.terms}["warp-mma trip"]
    ns = float(Fraction(cyc) / GHZ)
    assert "cycles in 500.26 ns, at least the lone warps' compiled loop" in text
    assert f"{cyc:,} cycles / 1.796 GHz = {ns:,.2f} ns a trip, the round at least that" in text
    # 112 trips of at least that round in the launch's one wave
    assert {t.name: t.ns for t in a.terms}["tail wave"] >= 112 * ns
    # the 4-stage twin on 8 warps (two a sub-partition) keeps its round: no clause
    b = analyze(GEMM, None, H200, dict(M=16, N=4096, K=14336, BM=16, BN=128, BK=128, WARPS=8, STAGES=4, GROUP_M=8),
                resources={"threads": 256, "regs": 80, "spills": 0})
    assert "lone_walk" not in {t.name: t.detail for t in b.terms}["warp-mma trip"]
