"""The tail of a launch of lock-step one-stage decode trips (tfx.analysis.decode_trip.packed_tail):
an SM's slots free together and the tail takes the first to free, r a SM; every expected number
derived by hand."""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import decode_trip, performance
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
GQA = parse_file(ROOT / "kernels" / "gqa_decode.tile")
# run13's row (calibration/h200/measured/issue15/run13/decode.csv and decode_timeline_s14):
# B2 HQ32 HKV8 SKV32768 SPLITS32 BLOCK_N128 4 warps, 141 registers and 40,960 B of shared memory
# as compiled: 65,536 / (141 -> 144 x 128) = 3 CTAs a SM, 2 x 8 x 32 = 512 CTAs on 132 x 3 = 396
# slots: one full wave and a tail of 116
RUN13 = dict(B=2, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=32, BLOCK_N=128, WARPS=4, STAGES=1)
RUN13_RES = dict(regs=141, smem=40960)


def test_the_tail_packs_r_a_sm():
    """116 tail CTAs at 3 a SM: the waves model's ceil(116 / 132) = 1 a SM on min(116, 132) = 116
    SMs becomes 3 a SM on ceil(116 / 3) = 39; 300 CTAs (ceil(300 / 132) = 3 already): 3 a SM on
    100 SMs, not 132; a tail of 2 under r = 3: both on one SM; not packed: the waves model's."""
    assert decode_trip.packed_tail(True, 116, 3, 1, 116) == (3, 39)
    assert decode_trip.packed_tail(True, 300, 3, 3, 132) == (3, 100)
    assert decode_trip.packed_tail(True, 2, 3, 1, 2) == (2, 1)
    assert decode_trip.packed_tail(False, 116, 3, 1, 116) == (1, 116)


def test_a_sweep_packs_elementwise():
    """Arrays: packed where asked, the waves model's elsewhere (the rows above)."""
    r, n = decode_trip.packed_tail(np.array([True, False, True]), np.array([116, 116, 2]), np.array([3, 3, 3]),
                                   np.array([1, 1, 1]), np.array([116, 116, 2]))
    assert list(r) == [3, 1, 2] and list(n) == [39, 116, 1]


def test_only_a_tail_after_one_full_wave_of_lockstep_trips_packs():
    """Lock-step loops and one full wave pack; a pipelined split loop beside its one-stage masked
    loop, no full wave (the CTAs start spread, decode_timeline run15: 256 CTAs at 2 a SM ran 2 on
    124 SMs, 1 on 8), two or more full waves (the SMs out of phase by then) or no decode trip loop
    do not; arrays elementwise."""
    assert decode_trip.packs([True], 1) is True
    assert decode_trip.packs([True, True], 1) is True
    assert decode_trip.packs([False, True], 1) is False
    assert decode_trip.packs([True], 0) is False
    assert decode_trip.packs([True], 2) is False
    assert decode_trip.packs([], 1) is False
    assert list(decode_trip.packs([np.array([False, True, True])], np.array([1, 1, 2]))) == [False, True, False]


def test_the_breakdown_says_how_the_tail_packed():
    """The tail wave line's clause: 3 CTAs a SM on 39 SMs; one of each in the singular."""
    assert decode_trip.describe_packed(3, 39).endswith(
        "the tail takes the first to free, 3 CTAs a SM on 39 SMs (calibration/h200/measured/decode_timeline_s14)")
    assert "the first to free, 1 CTA a SM on 1 SM (" in decode_trip.describe_packed(1, 1)


def _loop_calls(monkeypatch, params, resources):
    """(r, SMs, CTAs a SM drawing, ns) of each pricing of the KV loop (line 60) by the split launch."""
    calls, real = [], performance._loop_time

    def spy(loop, counter, m, miss, warps, r, active_units, in_composite=False, draw=None):
        t, e = real(loop, counter, m, miss, warps, r, active_units, in_composite, draw)
        if loop.line == 60:
            calls.append((r, active_units, draw, t))
        return t, e
    monkeypatch.setattr(performance, "_loop_time", spy)
    a = analyze(GQA, None, H200, params, resources=resources, check=False)
    return a, calls


def test_h200_run13_tail_runs_three_a_sm(monkeypatch):
    """run13's row: the tail's 116 CTAs run 3 a SM on 39 SMs, drawing DRAM with 116 (116 / 39 =
    2.974 a SM). Its one-stage round (decode_trip.unpipelined_round_ns; the chain of BLOCK_N 128 on
    4 warps at one stage: one warp max(the closed form 1,415, the one-stage binary's schedule
    2,272) = 2,272 cycles + its warps' port reads 792 = 3,064, each other CTA's reads and tile
    writes 792 + 512 = 1,304): (3,064 + 2 x 1,304) / 1.98 = 5,672 / 1.98 = 2,864.65 ns; K then V,
    each 242 / 1.98 = 122.22 ns of issue and wait + the pointer chase's 341 = 463.22 ns, and
    32,768 B at max(32,768 / 128.7 = 254.61 port, 32,768 / (11,000 / 39 = 282.05) = 116.18 L2
    share) = 254.61: 2,864.65 + 926.44 + 509.22 = 4,300.31 ns a trip, over the SM's DRAM
    ceiling's 3 x 65,536 / 81.18 = 2,421.9; 8 trips (1,024 keys a split / 128) = 34,402.45 ns.
    One a SM on 116 SMs it was 3,064 / 1.98 = 1,547.47 + 926.44 + 2 x max(254.61, 32,768 /
    (11,000 / 116 = 94.83) = 345.55) = 3,165.03 ns a trip, 25,320.2 ns: measured, a tail CTA
    alone on its SM ran 26.0 us, three on one 38.7."""
    a, calls = _loop_calls(monkeypatch, RUN13, RUN13_RES)
    assert len(calls) == 2                                  # the full wave, then the tail
    (r_full, n_full, _, _), (r, n, draw, ns) = calls
    assert (r_full, n_full) == (3, 132)
    assert (r, n) == (3, 39)
    assert draw == pytest.approx(116 / 39, abs=1e-12)
    assert ns == pytest.approx(8 * (5672 / 1.98 + 2 * (242 / 1.98 + 341) + 2 * 32768 / 128.7), abs=1e-6)
    assert ns == pytest.approx(34402.45, abs=0.01)
    tail = [t.detail for t in a.terms if t.name == "tail wave"][0]
    assert "116 CTAs in the last wave (0.29 of a wave)" in tail
    assert "the tail takes the first to free, 3 CTAs a SM on 39 SMs" in tail


def test_pipelined_and_later_tails_keep_the_waves_model(monkeypatch):
    """The same launch at 2 stages (the co-resident CTAs do not keep the lock step): the tail
    runs ceil(116 / 132) = 1 a SM on 116 SMs, drawing with 116 / 116 = 1; SPLITS 64 at 1 stage:
    1,024 CTAs = 2 full waves of 396 and a tail of 232, ceil(232 / 132) = 2 a SM on 132 SMs
    (232 / 132 = 1.758 drawing), as before: the SMs are out of phase after the first wave."""
    a, calls = _loop_calls(monkeypatch, {**RUN13, "STAGES": 2}, RUN13_RES)
    # (the pricings after these two are the favoured SMs' view, tfx.analysis.favoured_tail)
    assert [(c[0], c[1], c[2]) for c in calls][:2] == [(3, 132, 3), (1, 116, 1)]
    assert not any("first to free" in t.detail for t in a.terms)
    a, calls = _loop_calls(monkeypatch, {**RUN13, "SPLITS": 64}, RUN13_RES)
    (r, n, draw, _) = calls[-1]
    assert (r, n) == (2, 132) and draw == pytest.approx(232 / 132, abs=1e-12)
    assert not any("first to free" in t.detail for t in a.terms)
