"""Pilot-driven behaviour tests of `tfx open` (the analysis runs inline unless stated)."""

from __future__ import annotations

import json
import math

import pytest

from tests.test_tui_support import GEMM, make_app, run, shown
from tfx.hw.units import format_time_ns


def test_digits_switch_panes_and_every_pane_renders():
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            for key, pane in zip("123456", ("ir", "traffic", "roofline", "timeline", "explore",
                                             "hardware")):
                await pilot.press(key)
                await pilot.pause()
                assert app.active_pane == pane
            assert app.shown_generation == 1
    run(go())


def test_param_edit_moves_smem_peak():
    """STAGES 3 -> 4 through the params table (enter, type, enter).

    gemm.tile keeps STAGES copies of an A tile (BM x BK) and a B tile (BK x BN) of
    bf16 in shared memory: peak = STAGES * (BM*BK + BK*BN) * 2 B
    = 4 * (128*64 + 64*128) * 2 = 131,072 B (was 3 * 32,768 = 98,304 B).
    """
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("3")
            await pilot.pause()
            table = app.query_one("#params-table")
            names = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
            table.move_cursor(row=names.index("STAGES"))
            assert app.analysis.metrics["memory.peak.smem"] == 98304
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("ctrl+a", "ctrl+k", "4", "enter")
            await app.wait_for_generation()
            await pilot.pause()
            assert app.analysis.metrics["memory.peak.smem"] == 4 * (128 * 64 + 64 * 128) * 2
            text = shown(app, "#roofline-text")
            assert "131.07 KB smem per CTA" in text
            assert table.get_row("STAGES")[1] == "4"
            assert "smem peak 98.30 KB -> 131.07 KB (+33.3%)" in app.last_diff
    run(go())


def test_knob_double_gmem_bandwidth_keeps_bytes():
    """memory.gmem.bandwidth x2 (the `x` key on its row of the Hardware pane).

    Bytes do not depend on bandwidth: gmem reads stay
    (M/BM)(N/BN)(K/BK) * (BM*BK + BK*BN) * 2 B = 32*32*64 * 16384 * 2 = 2,147,483,648 B
    = "2.15 GB" in the Traffic pane; the knob column shows 9.6e12 B/s.
    """
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("6")
            await pilot.pause()
            table = app.query_one("#facts-table")
            paths = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
            table.move_cursor(row=paths.index("memory.gmem.bandwidth"))
            await pilot.press("x")
            await app.wait_for_generation()
            await pilot.pause()
            assert app.knobs == {"memory.gmem.bandwidth": "9600000000000.0"}
            assert table.get_row("memory.gmem.bandwidth")[1] == "9.60 TB/s"
            await pilot.press("2")
            await pilot.pause()
            traffic = app.query_one("TrafficPane")
            assert traffic.cell("gemm", "gmem rd") == "2.15 GB"
            assert app.analysis.metrics["memory.traffic.gmem.total.read"] == 32 * 32 * 64 * 16384 * 2
    run(go())


def test_knob_double_sm_count_halves_compute_roofline():
    """hierarchy.sm.count x2: the compute roofline halves.

    compute_ns = ceil(bf16 flops / (4096 flop/cycle * SMs * 1.98 GHz)
                      + f32 flops / (256 flop/cycle * SMs * 1.98 GHz))
    with bf16 flops = 2*4096^3 = 137,438,953,472 and f32 flops (the cast) = 4096^2 = 16,777,216.
    At 264 SMs: 64,191.8 + 125.4 = 64,317.2 -> 64,318 ns = "64.32 us".
    """
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("6")
            await pilot.pause()
            await pilot.press("x")              # the first row is hierarchy.sm.count
            await app.wait_for_generation()
            await pilot.press("3")
            await pilot.pause()
            expect = math.ceil(2 * 4096 ** 3 / (4096 * 264 * 1.98) + 4096 ** 2 / (256 * 264 * 1.98))
            assert expect == 64318
            assert app.analysis.metrics["roofline.compute_ns"] == expect
            assert f"compute {format_time_ns(expect)}" in shown(app, "#roofline-text")
            assert "compute 128.63 us -> 64.32 us (-50.0%)" in app.last_diff
    run(go())


def test_impossible_knob_notifies_and_keeps_last_good_state():
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            before = app.analysis
            app.set_knob("memory.gmem.bandwidth", "-1")
            await pilot.pause()
            assert app.analysis is before
            assert app.knobs == {}
            notes = [n.message for n in app._notifications]
            assert any("knob memory.gmem.bandwidth=-1" in m for m in notes), notes
    run(go())


def test_reload_of_a_broken_kernel_notifies(tmp_path):
    src = tmp_path / "k.tile"
    src.write_text(open(GEMM).read())
    async def go():
        app = make_app(kernel=str(src))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            good = app.analysis
            src.write_text("kernel broken {\n  tensor A : bf16[M] @gmem in\n")
            await pilot.press("r")
            await pilot.pause()
            assert app.analysis is good
            assert any("k.tile" in n.message and "error" in n.message for n in app._notifications)
            src.write_text(open(GEMM).read().replace("param STAGES = 3", "param STAGES = 2"))
            await pilot.press("r")
            await pilot.pause()
            assert app.analysis.params["STAGES"] == 2
    run(go())


def test_stale_results_are_dropped():
    from tfx.tui import core
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            old = app.make_job()
            app.set_param("STAGES", "2")
            shown = app.analysis
            app.apply(core.run_job(old))            # an older generation arrives late
            assert app.analysis is shown
            assert app.analysis.params["STAGES"] == 2
    run(go())


def test_process_pool_path():
    """The real path: edits go to a ProcessPoolExecutor and come back tagged."""
    async def go():
        app = make_app(sync=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.wait_for_generation(1)
            gen = app.set_param("STAGES", "4")
            app.set_param("STAGES", "5")       # supersedes the previous edit
            await app.wait_for_generation(gen + 1, timeout=60)
            await pilot.pause()
            assert app._pool is not None
            assert app.analysis.params["STAGES"] == 5
            assert app.analysis.metrics["memory.peak.smem"] == 5 * 32768
    run(go())


def test_domain_toggle_and_records():
    """d cycles logical -> total -> cta ...; per-CTA gmem reads of the kernel are
    (K/BK) * (BM*BK + BK*BN) * 2 = 64 * 32768 = 2,097,152 B = "2.10 MB"."""
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("2")
            await pilot.press("d")     # total -> cta
            await pilot.pause()
            assert app.domain == "cta"
            assert app.query_one("TrafficPane").cell("gemm", "gmem rd") == "2.10 MB"
    run(go())


def test_palette_goto_scope_and_help():
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            app.goto_scope("gemm/mesh cta/loop k")
            await pilot.pause()
            assert app.query_one("IRPane").selected_id == "gemm/mesh cta/loop k"
            assert "loop k" in str(app.query_one("#ir-records").render())
            await pilot.press("f1")
            await pilot.pause()
            assert type(app.screen).__name__ == "HelpScreen"
            await pilot.press("escape")
            await pilot.press("ctrl+p")
            await pilot.pause()
            assert type(app.screen).__name__ == "CommandPalette"
    run(go())


def test_exports(tmp_path):
    async def go():
        app = make_app(export_dir=str(tmp_path))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+s", "ctrl+j")
            await pilot.pause()
    run(go())
    files = sorted(p.name for p in tmp_path.iterdir())
    assert any(f.endswith(".svg") for f in files)
    js = [p for p in tmp_path.iterdir() if p.suffix == ".json"][0]
    assert json.loads(js.read_text())["kernel"] == "gemm"


def test_save_profile_is_a_new_user_file(tmp_path, monkeypatch):
    from tfx.errors import TfxError
    from tfx.hw import load_profile
    from tfx.tui.core import save_profile
    p = load_profile("h200_sxm", knobs={"memory.gmem.bandwidth": "x2"})
    with pytest.raises(TfxError, match="shipped profile"):
        save_profile(p, "h200_sxm", tmp_path)
    path = save_profile(p, "fast_hbm", tmp_path)
    assert load_profile(str(path)).value("memory.gmem.bandwidth") == 9.6e12
    # a failed write leaves the earlier file intact
    monkeypatch.setattr("os.replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left")))
    with pytest.raises(TfxError, match="cannot save"):
        save_profile(load_profile("h200_sxm"), "fast_hbm", tmp_path)
    assert load_profile(str(path)).value("memory.gmem.bandwidth") == 9.6e12
    assert [f.name for f in tmp_path.iterdir()] == ["fast_hbm.toml"]
