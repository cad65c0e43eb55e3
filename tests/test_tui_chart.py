"""The Roofline pane's log-log chart: its numbers (from the analysis's own roofline terms)
and its drawing (ticks, marks), headless; then in the real app."""

from __future__ import annotations

import math

import pytest

from tests.test_tui_support import GEMM, make_app, run
from tfx.tui import core
from tfx.tui.canvas import log_span, loglog_rows, tick_label, ticks


def _gemm(profile: str = "h200_sxm"):
    return core.run_job(core.Job(1, GEMM, None, None, profile)).analysis


def test_gemm_chart_numbers():
    """gemm.tile, M = N = K = 4096 on h200_sxm.

    flops: the mma's 2 * 4096^3 = 137,438,953,472 bf16 plus the epilogue's 4096^2 = 16,777,216
    f32 = 137,455,730,688. Bytes at the binding level (smem: each trip's wgmma operand reads,
    (128 + 2 x 128) x 64 x 2 = 49,152 B, and its copies' writes, (128*64 + 64*128) * 2 B = 32,768
    B, over 64 trips x 1024 CTAs = 65,536 trips): 5,368,709,120 B, at 128 B x 132 SMs x 1.98 GHz =
    33,454.08 B/ns 160,479.4 ns, kept in whole ns (160,480), so the roof reads 3.345408e13 to
    within 1 part in 10^5. The l2 roof: every gmem request, each CTA's 64 steps of a BM x BK and a
    BK x BN bf16 tile, 32,768 B, over 1024 CTAs = 2^31 B, plus C's writes, 4096^2 * 2 B =
    33,554,432 B: 2,181,038,080 B at the SMs' L2 ports (132 x 65 B/cycle x 1.98 GHz = 16,988.4
    B/ns) 128,383.96 -> 128,384 ns: 1.69884e13 B/s to within 1 part in 10^5.
    Kernel point: x = 137,455,730,688 / 5,368,709,120 = 25.6031 flop/byte;
    y = flops / the prediction, 137,455,730,688 / 216,263 ns (as the pane prints 216.26 us).
    Scope "loop k" does the mma, the operand reads and the copies only: 2^37 / 5,368,709,120 = 25.6
    flop/byte.
    """
    a = _gemm()
    c = core.roofline_chart(a)
    roofs = dict(c.roofs)
    assert c.level == "smem"
    assert roofs["smem"] == pytest.approx(3.345408e13, rel=1e-5)
    assert roofs["l2"] == pytest.approx(1.69884e13, rel=1e-5)
    # the dram roof: the footprint A + B + C = 100,663,296 B over its term, 100,663,296 / 4,800
    # B/ns = 20,971.5 -> 20,972 ns: 4.8e12 B/s to within 1 part in 10^4
    assert roofs["dram"] == pytest.approx(4.8e12, rel=1e-4)
    assert c.kernel[0] == pytest.approx(137_455_730_688 / 5_368_709_120)
    assert c.kernel[0] == pytest.approx(25.6031, abs=1e-4)
    predicted = float(a.metrics["performance.predicted_ns"])
    assert c.kernel[1] == pytest.approx(137_455_730_688 / predicted * 1e9)
    assert round(predicted / 1e3, 2) == 216.26
    loop_k = dict((label, (x, y)) for label, x, y in c.scopes)["loop k"]
    assert loop_k[0] == pytest.approx(2**37 / 5_368_709_120)
    # the flat roof is the flops over the roofline's compute term
    assert c.peak == pytest.approx(137_455_730_688 / float(a.metrics["roofline.compute_ns"]) * 1e9)


def test_no_chart_without_flops():
    """copy.tile moves bytes and does no arithmetic: nothing to put on a log-scale x axis."""
    from tfx.bundled import bundled_kernel
    a = core.run_job(core.Job(1, str(bundled_kernel("copy.tile")), None, None, "h200_sxm")).analysis
    assert core.roofline_chart(a) is None


def test_ticks_and_labels():
    # 10 .. 1000 holds three decades: 10, 100, 1k
    assert ticks((1.0, 3.0)) == [10.0, 100.0, 1000.0]
    # 15 .. 150 holds one decade (100): 1, 2 and 5 times each decade are added
    assert ticks((math.log10(15), math.log10(150))) == [20.0, 50.0, 100.0]
    assert [tick_label(v) for v in (2e14, 1e15, 0.01, 0.5, 20.0, 1000.0)] == \
        ["200T", "1P", "0.01", "0.5", "20", "1k"]
    # a span narrower than a decade is widened to one decade around its middle
    lo, hi = log_span(100.0, 100.0, 1.0)
    assert (lo, hi) == (1.5, 2.5)


def test_loglog_rows_put_marks_and_labels_where_the_values_are():
    """A 10 x 2 cell canvas (20 x 8 dots) over x, y in [1, 100]: x = 10 is dot column
    round((1 - 0) / 2 * 19) = 10 (cell 5); y = 10 is dot row 7 - round(1 / 2 * 7) = 3 (line 0);
    y = 1 is dot row 7 (line 1); the tick labels sit on those lines and columns."""
    rows, axis = loglog_rows(10, 2, (0.0, 2.0), (0.0, 2.0), [], [(10.0, 10.0, "●", 9)])
    assert rows[0].text[5] == "●" and rows[0].layers[5] == 9
    assert [r.label for r in rows] == ["10", "1"]
    assert axis.split() == ["1", "10", "100"]


def test_the_roofline_pane_draws_the_chart():
    async def go():
        app = make_app()
        async with app.run_test(size=(100, 40)) as pilot:
            await app.wait_for_generation()
            await pilot.press("3")
            await pilot.pause()
            text = str(app.query_one("#roofline-chart").render())
            assert text.startswith("Roofline chart")
            # the legend names each roof at its rate: the L2's at the SMs' ports, 16.99 TB/s
            assert "flop/byte at smem" in text and "● kernel" in text and "l2 17 TB/s" in text
            await pilot.press("down", "down", "down", "down", "down", "down", "down", "x")  # STAGES 3 -> 6
            await app.wait_for_generation()
            await pilot.pause()
            assert app.analysis.params["STAGES"] == 6
            assert "● kernel" in str(app.query_one("#roofline-chart").render())
    run(go())
