"""Pilot-driven behaviour tests of `tfx open` (the analysis runs inline unless stated)."""

from __future__ import annotations

import json
import math

import pytest

from tests.test_tui_support import GEMM, cursor_to, make_app, run, shown
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
            cursor_to(table, "STAGES")
            assert app.analysis.metrics["memory.peak.smem"] == 98304
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("ctrl+a", "ctrl+k", "4", "enter")
            await app.wait_for_generation()
            await pilot.pause()
            assert app.analysis.metrics["memory.peak.smem"] == 4 * (128 * 64 + 64 * 128) * 2
            text = shown(app, "#roofline-text")
            assert "131,072 B smem per CTA" in text       # an allocation: exact bytes (policy)
            assert table.get_row("STAGES")[1] == "4"
            assert "smem peak 98.30 KB -> 131.07 KB (+33.3%)" in app.last_diff
    run(go())


def test_knob_double_gmem_bandwidth_keeps_bytes():
    """memory.gmem.bandwidth x2 (the `x` key on its row of the Hardware pane).

    Bytes do not depend on bandwidth: gmem reads stay
    (M/BM)(N/BN)(K/BK) * (BM*BK + BK*BN) * 2 B = 32*32*64 * 16384 * 2 = 2,147,483,648 B
    = "2.15 GB" in the Traffic pane. The value column shows 2 x 4.80 TB/s = 9.60 TB/s and
    the knob column the factor, x2.
    """
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("6")
            await pilot.pause()
            table = app.query_one("#facts-table")
            cursor_to(table, "memory.gmem.bandwidth")
            await pilot.press("x")
            await app.wait_for_generation()
            await pilot.pause()
            assert app.knobs == {"memory.gmem.bandwidth": "9600000000000.0"}
            assert table.get_row("memory.gmem.bandwidth")[1:3] == ["9.60 TB/s", "x2"]
            await pilot.press("2")
            await pilot.pause()
            traffic = app.query_one("TrafficPane")
            assert traffic.cell("gemm", "gmem rd") == "2.15 GB"
            assert app.analysis.metrics["memory.traffic.gmem.total.read"] == 32 * 32 * 64 * 16384 * 2
    run(go())


async def double_sm_count(app, pilot) -> None:
    """hierarchy.sm.count x2 from the hardware pane (its first row), back on the roofline pane."""
    await pilot.press("6")
    await pilot.pause()
    await pilot.press("x")
    await app.wait_for_generation()
    await pilot.press("3")
    await pilot.pause()


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
            await double_sm_count(app, pilot)
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
            # -1 in the fact's canonical unit, B/s, named (tfx.hw.schema._got)
            assert "--knob memory.gmem.bandwidth: error: bandwidth must be a number > 0, got -1 B/s" in notes, notes
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
    from tfx.hw.user_profiles import save_user_profile as save_profile
    p = load_profile("h200_sxm", knobs={"memory.gmem.bandwidth": "x2"})
    with pytest.raises(TfxError, match="shipped profile"):
        save_profile(p, "h200_sxm", tmp_path)
    path = save_profile(p, "fast_hbm", tmp_path)
    assert load_profile(str(path)).value("memory.gmem.bandwidth") == 9.6e12
    # a failed write leaves the earlier file intact
    monkeypatch.setattr("os.replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left")))
    with pytest.raises(TfxError, match="cannot write the profile: No space left"):
        save_profile(load_profile("h200_sxm"), "fast_hbm", tmp_path)
    assert load_profile(str(path)).value("memory.gmem.bandwidth") == 9.6e12
    assert [f.name for f in tmp_path.iterdir()] == ["fast_hbm.toml"]


def _gemm_smem_infeasible(optin: int = 232448) -> int:
    """Tile configurations of gemm.tile whose shared memory per CTA, B buffers of a bf16 A tile
    (BM x BK) and B tile (BK x BN) = 2 * B * BK * (BM + BN) bytes, exceed the H200's opt-in limit
    of 227 KiB = 232,448 B. Triton's pipeliner gives a loop of STAGES S >= 2 S - 1 buffers where
    its mma takes the warp mma (WARPS 2, or BM 16 / 32: not a warpgroup's 64 rows) and S on the
    warpgroup mma (tfx.analysis.smem_buffers); one stage holds 1. GROUP_M (4 values) does not
    change it, so each such (BM, BN, BK, WARPS, STAGES) counts 4 times."""
    tiles = (16, 32, 64, 128, 256)
    n = 0
    for bm in tiles:
        for bn in tiles:
            for bk in (16, 32, 64, 128):
                for warps in (2, 4, 8):
                    for st in range(1, 7):
                        warpgroup = warps % 4 == 0 and bm % 64 == 0
                        buffers = st if warpgroup or st < 2 else st - 1
                        n += 2 * buffers * bk * (bm + bn) > optin
    return 4 * n


def test_explore_sweeps_the_tile_parameters_at_the_current_shape():
    """Pane 5 sweeps gemm's tile parameters over their declared domains with the shape fixed:
    5 (BM) x 5 (BN) x 4 (BK) x 3 (WARPS) x 6 (STAGES) x 4 (GROUP_M) = 7,200 configurations."""
    async def go():
        app = make_app(params={"M": 8192})
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("5")
            await pilot.pause()
            await app.wait_for_explore()
            out = app.explore_outcome
            assert out.error is None
            assert out.job.sweep == ("BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M")
            assert out.job.fixed == (("M", 8192), ("N", 4096), ("K", 4096))
            assert out.configs == 5 * 5 * 4 * 3 * 6 * 4 == 7200
            bad = _gemm_smem_infeasible()
            assert out.infeasible == {"smem per CTA > opt-in limit": bad}
            assert out.feasible == 7200 - bad
            times = [e["predicted_ns"] for e in out.top]
            assert len(times) == 10 and times == sorted(times)
            # the frontier: no feasible point is at least as good on both axes and better on one
            pts = [tuple(p) for p in out.points.tolist()]
            assert len(pts) == out.points_total
            for e in out.pareto:
                t, s = e["predicted_ns"], e["smem_per_cta"]
                assert (t, s) in set(pts)
                assert not any(x <= t and y <= s and (x, y) != (t, s) for x, y in pts)
            table = app.query_one("#topk")
            assert table.row_count == len(app.query_one("ExplorePane").rows)
            sweep_list = app.query_one("#sweep-list")
            assert sweep_list.checked == {"BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M"}
    run(go())


def test_explore_enter_loads_a_row_as_a_parameter_edit():
    """Enter on the fastest row: its six parameters become parameter edits (marked in the
    Roofline pane), every pane reanalyses, the diff line says what moved, and the sweep is
    not rerun (only swept parameters moved)."""
    from tfx.present.formatting import ns as fmt_ns

    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("5")
            await pilot.pause()
            await app.wait_for_explore()
            out = app.explore_outcome
            best = out.top[0]
            before = app.analysis.metrics["performance.predicted_ns"]
            gen = app.generation
            await pilot.press("enter")
            await app.wait_for_generation()
            await pilot.pause()
            assert app.generation == gen + 1
            assert {k: app.params[k] for k in best["params"]} == best["params"]
            # the scalar analysis of the loaded point agrees with the sweep's value for it
            assert app.analysis.metrics["performance.predicted_ns"] == best["predicted_ns"]
            assert (f"predicted {fmt_ns(before)} -> {fmt_ns(best['predicted_ns'])}"
                    in app.last_diff)
            assert app.explore_outcome is out            # same space: no new sweep
            # you are here (*), after the near-tie mark (≈) when the fastest rows tie and the unchecked mark (?):
            # gemm.tile's default sweep ranks GROUP_M 16 first, a value the campaigns never timed (they timed 1, 8)
            tie = "≈" if out.near_tie.tied else ""
            assert best["params"]["GROUP_M"] == 16 and best["unmeasured"] == ["GROUP_M"]
            assert str(app.query_one("#topk").get_row_at(0)[0]) == f"1{tie}?*"
            await pilot.press("3")
            await pilot.pause()
            params = app.query_one("#params-table")
            for name, value in best["params"].items():
                assert params.get_row(name)[1:] == [str(value), "*"]
    run(go())


def test_explore_toggle_a_parameter_reruns_the_sweep():
    """s focuses the parameter list; space on BM (the 4th entry after M, N, K) stops
    sweeping it: BM is fixed at 128 and the space shrinks 5-fold to 1,440."""
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("5")
            await pilot.pause()
            await app.wait_for_explore()
            await pilot.press("s", "down", "down", "down", "space")
            await pilot.pause()
            await app.wait_for_explore()
            out = app.explore_outcome
            assert "BM" not in out.job.sweep
            assert ("BM", 128) in out.job.fixed
            assert out.configs == 7200 // 5 == 1440
            await pilot.press("space")                  # and back
            await pilot.pause()
            await app.wait_for_explore()
            assert app.explore_outcome.configs == 7200
    run(go())


def test_explore_stale_sweeps_are_dropped_and_refusals_shown(monkeypatch):
    from tfx.tui import core

    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("5")
            await pilot.pause()
            await app.wait_for_explore()
            shown = app.explore_outcome
            old = core.ExploreOutcome(job=core.ExploreJob("x", "", None, "h200_sxm"), configs=1)
            app._explore_done(old)                      # a sweep of inputs since changed
            assert app.explore_outcome is shown
            # a space over the pane's limit is refused with its size, not swept
            monkeypatch.setattr(core, "EXPLORE_LIMIT", 5000)
            await pilot.press("s", "down", "down", "down", "space", "space")   # BM off, on
            await pilot.pause()
            await app.wait_for_explore()
            assert app.explore_outcome.error == ("7,200 configurations: more than the 5,000 this "
                                                 "pane sweeps; untick a parameter (or use tfx explore)")
            assert shown_text(app).startswith("7,200 configurations: more than")
            assert app.query_one("#topk").row_count == 0
    run(go())


def shown_text(app) -> str:
    return " ".join(str(app.query_one("#explore-status").render()).split())


def test_explore_in_the_process_pool():
    async def go():
        app = make_app(sync=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.wait_for_generation(1)
            await pilot.press("5")
            await pilot.pause()
            await app.wait_for_explore(timeout=60)
            assert app.explore_outcome.configs == 7200
            await pilot.pause()
            assert "7,200 configurations" in shown_text(app)
    run(go())


def test_knob_edit_updates_cells_in_place():
    """A knob edit rewrites the changed cells of the Hardware table; its rows are not rebuilt."""
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("6")
            await pilot.pause()
            table = app.query_one("#facts-table")
            rows = dict(table.rows)
            await pilot.press("x")                 # hierarchy.sm.count 132 -> 264
            await app.wait_for_generation()
            await pilot.pause()
            row = table.get_row("hierarchy.sm.count")
            assert row[1:3] == ["264", "x2"]          # value, knob (a factor of the profile's 132)
            assert all(table.rows[k] is r for k, r in rows.items())
    run(go())


def test_secondary_panes_mount_when_first_shown():
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            assert [p for p in ("ir", "traffic", "roofline", "timeline", "explore", "hardware")
                    if app.pane_widget(p) is not None] == ["ir"]
            await pilot.press("4")
            await pilot.pause()
            assert app.pane_widget("timeline") is not None
            assert app.pane_widget("explore") is None
    run(go())


def test_a_machine_sized_parameter_follows_the_sm_knob_in_the_params_table():
    """persistent_gemm's NUM_SMS = units(sm): h200_sxm's 132, marked "hw" (the machine's, not
    set); hierarchy.sm.count x2 (the hardware pane's first row) makes it 2 x 132 = 264."""
    from tfx.bundled import bundled_kernel

    async def go():
        app = make_app(kernel=str(bundled_kernel("persistent_gemm.tile")))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("3")
            await pilot.pause()
            table = app.query_one("#params-table")
            assert table.get_row("NUM_SMS")[1:] == ["132", "hw"]
            assert table.get_row("STAGES")[2] == ""
            await double_sm_count(app, pilot)
            assert table.get_row("NUM_SMS")[1:] == ["264", "hw"]
            assert app.analysis.params["CTAS"] == 264       # min(264, 2,048 tiles)
    run(go())


def test_explore_marks_a_spilling_top_pick_as_tfx_explore_does():
    """flash_prefill at B200 H16 S1024 D128 (tests/test_explore_spilling.py derives it: its top pick,
    128x64 on 4 warps, needs 224 + 32 = 256 registers a thread against 255, and spills one word; the next,
    128x32 on 8 warps, 120): the Explore pane's first row reads 1† and its status carries the same line
    tfx explore prints under its table, naming #2."""
    from tfx.bundled import bundled_kernel
    from tfx.explore import explore
    from tfx.hw import load_profile
    from tfx.lang import parse_file

    shape = {"B": 200, "H": 16, "S": 1024, "D": 128}
    path = str(bundled_kernel("flash_prefill.tile"))
    r = explore(parse_file(path), None, load_profile("h200_sxm"), fixed=shape)
    assert r.top[0]["spilled_registers"] == 1 and r.best_unspilled[0] == 2

    async def go():
        app = make_app(kernel=path, params=dict(shape))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("5")
            await pilot.pause()
            await app.wait_for_explore()
            out = app.explore_outcome
            assert out.error is None and out.spilling_summary == r.spilling_summary
            assert str(app.query_one("#topk").get_row_at(0)[0]).startswith("1†")
            assert "#2" in r.spilling_summary and r.spilling_summary.split(";")[0] in shown(app, "#explore-status")
    run(go())
