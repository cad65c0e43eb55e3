"""The favoured SMs' early tail (tfx.analysis.favoured_tail): every expected number derived by
hand from the H200 profile's facts (24 favoured SMs, the others' rate 0.768 of theirs) and the
measured timelines (calibration/h200/measured/decode_timeline_s20)."""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import favoured_tail, performance
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
GQA = parse_file(ROOT / "kernels" / "gqa_decode.tile")
# run26's pick (calibration/h200/measured/issue15/run26/decode.csv, decode_timeline_s20):
# B4 HQ32 HKV8 SKV131072 SPLITS16 BLOCK_N64 8 warps 3 stages, 73 registers and 71,680 B of
# shared memory as compiled: 3 CTAs a SM (3 x 71,680 = 215,040 B of the 232,448), 4 x 8 x 16 =
# 512 CTAs on 132 x 3 = 396 slots: one full wave and a tail of 116
RUN26 = dict(B=4, HQ=32, HKV=8, SKV=131072, D=128, SPLITS=16, BLOCK_N=64, WARPS=8, STAGES=3)
RUN26_RES = dict(regs=73, smem=71680)
# run30's B48 HQ32 SKV8192 SPLITS2 BLOCK_N32 8 warps 3 stages (64 registers, 37,888 B): 4 a SM
# (the 8-warp CTA's 256 threads x 64 registers = 16,384 of the 65,536), 48 x 8 x 2 = 768 CTAs on
# 528 slots: one full wave and a tail of 240, a trip bound by the SM's own demand
RUN30 = dict(B=48, HQ=32, HKV=8, SKV=8192, D=128, SPLITS=2, BLOCK_N=32, WARPS=8, STAGES=3)
RUN30_RES = dict(regs=64, smem=37888)


def test_the_h200_states_its_favoured_sms():
    """24 SMs; kappa = 1 / 0.768 = 1.30208 (the median 1.303 of the 17 launches, rounded in the
    profile to the others' 0.768)."""
    f = favoured_tail.facts(Machine(H200, "sm"))
    assert f.units == 24
    assert f.share == pytest.approx(1 / 0.768, abs=1e-12)
    assert f.share == pytest.approx(1.30208, abs=1e-5)


def test_the_view_is_107_sms():
    """n a + (N - n) b = R with a = kappa b: a = R / U, U = (132 - 24 + 1.30208 x 24) / 1.30208
    = (108 + 31.25) / 1.30208 = 139.25 / 1.30208 = 106.94 -> 107 SMs; with an equal share per GPC
    (kappa = 18 / 12 = 1.5) it would be (108 + 36) / 1.5 = 96, with kappa 1 (no favoured SMs) 132."""
    f = favoured_tail.Favoured(24, 1 / 0.768)
    assert favoured_tail.view_units(132, f) == 107
    assert favoured_tail.view_units(132, favoured_tail.Favoured(24, 1.5)) == 96
    assert favoured_tail.view_units(132, favoured_tail.Favoured(24, 1.0)) == 132


def test_runs_ahead_only_where_the_share_binds():
    """A wave bound by its share is 107 / 132 = 0.8106 of t_1 on the view; the favoured SMs run
    ahead where the view saves at least half of that, (1 - 107 / 132) x t_1 / 2 = 0.09470 x t_1:
    t_1 = 370.5 us, t_f = 300.6 (saves 69.9 >= 35.09: run26's pick) yes; t_1 = 271.7, t_f =
    271.4 (saves 0.3: run30's 8-warp trip at 4 a SM, bound by its own demand) no; a sweep
    elementwise."""
    assert favoured_tail.runs_ahead(300.6, 370.5, 107, 132)
    assert not favoured_tail.runs_ahead(271.4, 271.7, 107, 132)
    assert (1 - 107 / 132) * 370.5 / 2 == pytest.approx(35.09, abs=0.01)
    got = favoured_tail.runs_ahead(np.array([300.6, 271.4]), np.array([370.5, 271.7]), 107, 132)
    assert list(got) == [True, False]


def test_the_favoured_sms_take_their_slots():
    """min(r, ceil(t / 24)): 116 tail CTAs at 3 a SM -> min(3, 5) = 3 (decode_timeline_s20: 3
    each on all 24); 232 at 6 -> min(6, 10) = 6 (s17: 6 each); 100 at 7 -> min(7, 5) = 5."""
    f = favoured_tail.Favoured(24, 1.3)
    assert favoured_tail.tail_per_sm(116, 3, f) == 3
    assert favoured_tail.tail_per_sm(232, 6, f) == 6
    assert favoured_tail.tail_per_sm(100, 7, f) == 5
    assert list(favoured_tail.tail_per_sm(np.array([116, 100]), np.array([3, 7]), f)) == [3, 5]


def test_the_tail_runs_at_the_share_then_alone():
    """Starts at t_f = 300, the others end their first wave at t_1 = 370: 70 of the 300 the whole
    tail takes at the favoured share, 70 / 300 = 0.2333 of it; the rest, 0.7667 x 270 (its own
    rate) = 207: ends 300 + 70 + 207 = 577. A tail shorter than the lead (p_share 50) ends at
    t_f + 50 = 350 whatever its own rate; t_f after t_1 (no lead): t_f + p_own = 400 + 270."""
    assert favoured_tail.end_ns(300, 370, 300, 270) == pytest.approx(577, abs=1e-9)
    assert favoured_tail.end_ns(300, 370, 50, 270) == pytest.approx(350, abs=1e-9)
    assert favoured_tail.end_ns(400, 370, 300, 270) == pytest.approx(670, abs=1e-9)
    got = favoured_tail.end_ns(np.array([300.0, 300.0]), np.array([370.0, 370.0]), np.array([300.0, 50.0]),
                               np.array([270.0, 270.0]))
    assert list(got) == pytest.approx([577, 350])


def _loop_calls(monkeypatch, params, resources):
    """(r, SMs, CTAs a SM drawing) of each pricing of the KV loop (line 60) by the split launch."""
    calls, real = [], performance._loop_time

    def spy(loop, counter, m, miss, warps, r, active_units, in_composite=False, draw=None):
        t, e = real(loop, counter, m, miss, warps, r, active_units, in_composite, draw)
        if loop.line == 60:
            calls.append((r, active_units, draw))
        return t, e
    monkeypatch.setattr(performance, "_loop_time", spy)
    a = analyze(GQA, None, H200, params, resources=resources, check=False)
    return a, calls


def test_h200_run26_pick_ends_with_its_favoured_sms(monkeypatch):
    """run26's pick: the full wave (3 a SM on 132), the tail (116 CTAs, 1 a SM on 116), then the
    favoured SMs' first wave on the 107 SMs' view (3 a SM, all drawing), their tail of
    min(3, ceil(116 / 24)) = 3 CTAs at the view's share and at their own rate (3 a SM on 24 SMs,
    drawing with the tail's 116: min(116 / 24, 3) = 3). The term is what their end adds past the
    waves and the tail, positive here (measured: the launch ends at 588 us with the favoured
    SMs, its others' tail by 522)."""
    a, calls = _loop_calls(monkeypatch, RUN26, RUN26_RES)
    assert calls == [(3, 132, 3), (1, 116, 1), (3, 107, 3), (3, 107, 3), (3, 24, 3)]
    fav = [t for t in a.terms if t.name == "favoured tail"]
    assert len(fav) == 1 and fav[0].ns > 0
    assert fav[0].detail.startswith("24 SMs draw 1.30208x another SM's DRAM share (a share of the device's rate "
                                    "on 107 SMs)")
    assert "take 3 tail CTAs each" in fav[0].detail
    assert fav[0].detail.endswith("(calibration/h200/measured/decode_timeline_s20)")


def test_no_favoured_tail_where_it_does_not_apply():
    """The one-stage twin (SPLITS16 BLOCK_N128 8 warps 1 stage, 100 registers, 40,960 B: 2 a SM,
    264 slots and a tail of 248) packs as lock-step trips do (decode_trip.packed_tail); run30's
    8-warp row is bound by its SM's demand (runs_ahead no); SPLITS 32 of run26's tile is 1,024
    CTAs = 2 full waves and a tail of 232: none takes the term."""
    one_stage = {**RUN26, "BLOCK_N": 128, "STAGES": 1}
    for params, res in ((one_stage, dict(regs=100, smem=40960)), (RUN30, RUN30_RES),
                        ({**RUN26, "SPLITS": 32}, RUN26_RES)):
        a = analyze(GQA, None, H200, params, resources=res, check=False)
        assert not [t for t in a.terms if t.name == "favoured tail"]
