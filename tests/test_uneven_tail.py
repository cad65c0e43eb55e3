"""The tail of a grid whose CTAs run different trip counts (tfx.analysis.uneven_tail;
docs/analysis.md section 8, "Uneven CTAs"). Every expected number is derived by hand below."""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import uneven_tail
from tfx.analysis.analyze import analyze, bind
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")


def _spread(first, last, count, mean, loop_id="L"):
    return uneven_tail.LoopSpread(loop_id, 1, "pm", count, first, last, mean)


def test_formula_by_hand():
    """One loop of 0, 2, 4, 6 trips over pm = 0..3 (mean 3), 300 ns of it in the mean CTA of
    500 ns: a trip's round 300 / 3 = 100 ns, slope 2 trips = 200 ns per pm,
    Var = 200^2 x (4^2 - 1) / 12 = 50,000 ns^2; the last CTA 500 + 100 x (6 - 3) = 800 ns;
    residual (500^2 + 50,000) / (2 x 500) = 300 ns; 40 CTAs on 8 slots: W/P = 5 x 500 = 2,500 ns;
    makespan 2,500 + 800 - 300 = 3,000 ns."""
    t = uneven_tail.tail((_spread(0, 6, 4, 3),), {"L": 300}, 500, 40, 8)
    assert t.var_ns2 == pytest.approx(50_000)
    assert t.last_ns == pytest.approx(800)
    assert t.residual_ns == pytest.approx(300)
    assert t.work_ns == pytest.approx(2_500)
    assert t.makespan_ns == pytest.approx(3_000)
    assert uneven_tail.applies(t, 40, 8)
    assert not uneven_tail.applies(t, 8, 8)          # one wave: the CTAs start together


def test_equal_ctas_keep_the_waves():
    """Trips 5 at every pm: slope 0, Var 0: the formula does not apply (a wave starts together)."""
    t = uneven_tail.tail((_spread(5, 5, 4, 5),), {"L": 500}, 500, 40, 8)
    assert t.var_ns2 == 0
    assert not uneven_tail.applies(t, 40, 8)
    assert uneven_tail.tail((), {}, 500, 40, 8) is None


def test_arrays_elementwise():
    """The same two cases as arrays: makespan 3,000 and 2,500 + 500 - 250 = 2,750 ns (Var 0:
    residual 500 / 2); applies only where Var > 0."""
    t = uneven_tail.tail((_spread(np.array([0, 5]), np.array([6, 5]), np.array([4, 4]), np.array([3.0, 5.0])),),
                         {"L": np.array([300.0, 500.0])}, np.array([500.0, 500.0]), np.array([40, 40]), np.array([8, 8]))
    assert t.makespan_ns == pytest.approx([3_000, 2_750])
    assert list(uneven_tail.applies(t, np.array([40, 40]), np.array([8, 8]))) == [True, False]


def _list_schedule(durations, slots):
    """Graham's list scheduling: each CTA in launch order on the slot that frees first."""
    free = [0.0] * slots
    end = 0.0
    for d in durations:
        start = heapq.heappop(free)
        heapq.heappush(free, start + d)
        end = max(end, start + d)
    return end


def test_against_list_scheduling():
    """Causal B1 H16 S16384 at 128 x 32 (4 (pm + 1) key blocks for pm = 0..127, 16 heads, the
    query blocks of a head launched in ascending order), 1137 ns a trip (two CTAs a SM, the
    measured attention trip, calibration/h200/measured/chain/attn_trip.csv), 264 slots:
    W = 16 x 4 x 128 x 129 / 2 x 1137 = 600,772,608 ns, W/P = 2,275,653.8 ns;
    E[d] = 258 x 1137 = 293,346 ns; slope 4 x 1137 = 4,548 ns a pm: Var = 4,548^2 x 16,383 / 12
    = 28,239,246,036 ns^2; d_last = 512 x 1137 = 582,144 ns; residual (293,346^2 + Var) /
    (2 x 293,346) = 194,806 ns: makespan 2,662,991.8 ns. The event-by-event list schedule is
    within 1.5% of it (2.64 ms); the waves of the mean CTA, 8 x 293,346 = 2,346,768 ns, are 11% short."""
    trips = [4 * (pm + 1) for _ in range(16) for pm in range(128)]
    simulated = _list_schedule([t * 1137 for t in trips], 264)
    t = uneven_tail.tail((_spread(4, 512, 128, 258),), {"L": 258 * 1137}, 258 * 1137, 2048, 264)
    assert t.work_ns == pytest.approx(2_275_653.818, abs=1e-2)
    assert t.var_ns2 == pytest.approx(28_239_246_036)
    assert t.last_ns == pytest.approx(582_144)
    assert t.residual_ns == pytest.approx(194_806)
    assert t.makespan_ns == pytest.approx(2_662_991.818, abs=1e-2)
    assert simulated == pytest.approx(t.makespan_ns, rel=0.015)
    assert 8 * 258 * 1137 < 0.9 * simulated


def test_flash_prefill_spreads():
    """flash_prefill.tile at S = 4096, BLOCK_M = 128, BLOCK_N = 32: stage 1 runs pm x 128 / 32
    = 0 .. 124 blocks over the 32 query blocks (mean 62), stage 2 the 4 blocks the diagonal
    crosses at every pm; flash_attention.tile (non-causal) varies nowhere."""
    a = analyze(parse_file(ROOT / "kernels" / "flash_prefill.tile"), None, H200,
                dict(B=1, H=32, S=4096, D=128, BLOCK_M=128, BLOCK_N=32, WARPS=8, STAGES=3))
    mesh = [n for n in a.root.walk() if n.kind == "mesh"][0]
    env = dict(B=1, H=32, S=4096, D=128, BLOCK_M=128, BLOCK_N=32, WARPS=8, STAGES=3)
    s1, s2 = uneven_tail.spreads(mesh, env)
    assert (s1.var, s1.count, s1.first, s1.last, s1.mean) == ("pm", 32, 0, 124, 62)
    assert (s2.first, s2.last, s2.mean) == (4, 4, 4)
    full = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200,
                   dict(B=1, H=32, S=4096, D=128, BLOCK_M=128, BLOCK_N=32, WARPS=8, STAGES=3))
    mesh = [n for n in full.root.walk() if n.kind == "mesh"][0]
    assert uneven_tail.spreads(mesh, env) == ()


def test_prediction_adds_the_term():
    """The breakdown's ``uneven tail`` term is what the launch adds over its waves: the formula's
    makespan less the waves of the mean CTA, in the total."""
    params = dict(B=1, H=32, S=4096, D=128, BLOCK_M=128, BLOCK_N=32, WARPS=8, STAGES=3)
    a = analyze(parse_file(ROOT / "kernels" / "flash_prefill.tile"), None, H200, params)
    terms = {t.name: t.ns for t in a.launches[0].terms}
    assert terms["uneven tail"] > 0
    total = terms["launch"] + terms["fill"] + terms["waves"] + terms["tail wave"] + terms["uneven tail"]
    assert float(a.metrics["performance.predicted_ns"]) == pytest.approx(float(total), abs=1)   # predicted_ns: whole ns, rounded up


def test_one_wave_the_longest_cta():
    """One wave or less: every CTA starts together, the longest ends the launch. Trips 0, 2, 4, 6
    over pm (mean 3), 300 ns of loop in the mean CTA of 500 ns: 100 ns a trip; the ends are
    100 x (0 - 3) = -300 and 100 x (6 - 3) = +300 ns from the mean: 500 + 300 = 800 ns. Trips
    falling with pm (6 -> 0): the first end is the longest, 800 ns again; equal trips: 500 ns."""
    assert uneven_tail.longest_ns((_spread(0, 6, 4, 3),), {"L": 300}, 500) == pytest.approx(800)
    assert uneven_tail.longest_ns((_spread(6, 0, 4, 3),), {"L": 300}, 500) == pytest.approx(800)
    assert uneven_tail.longest_ns((_spread(5, 5, 4, 5),), {"L": 500}, 500) == pytest.approx(500)
    assert uneven_tail.longest_ns((), {}, 500) == 500


def test_persistent_loops_keep_the_waves():
    """A persistent GEMM's tile loop (``loop t = sm to TILES step CTAS``: one CTA does one tile
    more than another) holds a k-loop: not one serial chain, so no spread is taken (its CTAs speed
    up as the others end, which the formula does not follow)."""
    module = parse_file(ROOT / "kernels" / "persistent_gemm.tile")
    params = dict(M=2048, N=2048, K=8192, NUM_SMS=78)
    a = analyze(module, None, H200, params)
    mesh = [n for n in a.root.walk() if n.kind == "mesh"][0]
    env = bind(module, module.kernel(None), params)
    assert uneven_tail.spreads(mesh, env) is None
    assert "uneven tail" not in {t.name for t in a.launches[0].terms}
