"""Pilot-driven behaviour of ``tfx open --model`` (jobs run inline unless stated).

Llama 3.1 70B (models/llama3.1-70b.toml): h = 8192, 80 layers, 64 query heads,
8 KV heads, head_dim d = 128, FFN width I = 28672 (gated: 3 matrices),
vocabulary V = 128256 (untied), bf16 weights and KV (2 B).
"""

from __future__ import annotations

import pytest

from tests.test_tui_deployment_support import make_app, notes, run
from tests.test_tui_support import cursor_to, first_column
from tfx.present import formatting as fmt
from tfx.tui.deployment import core
from tfx.tui.deployment.app import TABS


def _cell(app, table_id: str, row: str, col: int) -> str:
    return str(app.query_one(f"#{table_id}").get_row(row)[col])


def test_digits_switch_tabs_in_order_and_every_tab_renders():
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(80, 24)) as pilot:
            assert TABS == ("layout", "suggest", "memory", "stages", "compare", "hardware", "serve")
            for key, tab in zip("1234567", TABS):
                await pilot.press(key)
                await pilot.pause()
                assert app.active_tab == tab
            assert app.shown["latency"] == 1
            assert app.shown["sweep"] == 1          # the hardware tab ran its sweep when shown
            await app.wait_for("serve")
            assert app.shown["serve"] == 1          # the serve tab ran the serving view when shown
            assert app.focused is app.query_one("#knobs")
    run(go())


def test_tp_1_to_2_halves_the_sharded_weights_and_the_kv_cache():
    """TP 1 -> 2 with the x key on the TP row (the panel starts there).

    Weights per device, bf16 (2 B), pp = 1 (embedding and lm head both on the device):
      per layer, TP 1: attention 2 h Hq d + 2 h G d = 2*8192*64*128 + 2*8192*8*128 = 150,994,944
                       FFN 3 h I = 3*8192*28672 = 704,643,072; norms 2 h = 16,384
      TP 1: 80 * ((150,994,944 + 704,643,072) * 2 + 16,384 * 2) + (2 * 8192 * 128256 + 8192) * 2
          = 136,904,704,000 + 4,202,708,992 = 141,107,412,992 B = 141.11 GB
      TP 2: the matrices halve (32 q heads, 4 KV heads, 14336 FFN columns, 64128 vocabulary rows),
            the norms do not: 80 * (427,819,008 * 2 + 32,768) + (1,050,673,152 + 8192) * 2
          = 68,453,662,720 + 2,101,362,688 = 70,555,025,408 B = 70.56 GB
    KV cache per device: layers x ctx x 2 (K, V) x KV heads per rank x d x 2 B
      TP 1: 80 * 8192 * 2 * 8 * 128 * 2 = 2,684,354,560 B = 2.68 GB; TP 2 (4 heads): 1,342,177,280 B = 1.34 GB
    """
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("3")
            await pilot.pause()
            assert app.query_one("#knobs").field == "tp"
            assert _cell(app, "memory-table", "weights", 1) == "141.11 GB"
            assert _cell(app, "memory-table", "kv_cache", 1) == "2.68 GB"
            assert app.result.memory["weights"] == 141_107_412_992
            await pilot.press("x")
            await app.wait_for()
            await pilot.pause()
            assert app.knobs.tp == 2 and app.result.devices == 2
            assert app.result.memory["weights"] == 70_555_025_408
            assert _cell(app, "memory-table", "weights", 1) == "70.56 GB"
            assert _cell(app, "memory-table", "kv_cache", 1) == "1.34 GB"
            assert _cell(app, "knobs", "tp", 1) == "2"
            old, new = 141_107_412_992, 70_555_025_408
            assert app.last_diff.startswith("TP 1 -> 2: latency ")
            assert "mem/dev 145.94 GB -> 74.05 GB (-49.3%)" in app.last_diff   # 135.92 GiB, 68.96 GiB in decimal GB
            del old, new
    run(go())


def test_typing_a_knob_value_and_the_kv_line():
    """Enter on the ctx row, type 32k: the KV cache grows 4x (8192 -> 32768 tokens).

    At TP 8 each rank holds 1 KV head: 80 * 32768 * 2 * 1 * 128 * 2 = 1,342,177,280 B = 1.34 GB.
    """
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(80, 24)) as pilot:
            app.query_one("#knobs").select("ctx")
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("ctrl+a", "ctrl+k", *"32k", "enter")
            await app.wait_for()
            await pilot.pause()
            assert app.knobs.ctx == 32768
            assert app.result.memory["kv_cache"] == 80 * 32768 * 2 * 1 * 128 * 2
            assert _cell(app, "memory-table", "kv_cache", 1) == "1.34 GB"
            assert any("KV cache: 1 seq x 32,768 tokens x 80 layers x 2 (K, V) x 1 kv head x 128 x 2 B"
                       " = 1,342,177,280 B" in line for line in app.memory_notes)
    run(go())


def test_suggest_button_loads_the_fastest_pareto_configuration():
    async def go():
        app = make_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("2")
            await pilot.pause()
            await pilot.click("#suggest-both")
            await app.wait_for("suggest")
            await app.wait_for()
            await pilot.pause()
            s = app.suggestion.result
            assert s.scope == "both" and s.pareto
            best = s.pareto[0]
            assert best.latency_ns == min(c.latency_ns for c in s.pareto)
            assert app.knobs.parallelism() == best.parallelism
            assert app.result.parallelism == best.parallelism
            assert abs(app.result.latency_ns - best.latency_ns) < 1e-6 * best.latency_ns
            table = app.query_one("#pareto-table")
            assert table.row_count == len(s.pareto)
            assert str(table.get_row_at(0)[0]) == core.short_config(best.parallelism.label())
            assert _cell(app, "knobs", "tp", 1) == str(best.parallelism.tp)
            assert any("loaded" in n for n in notes(app))
    run(go())


def test_suggest_keys_attention_scope_and_enter_loads_a_row():
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("2", "a")
            await app.wait_for("suggest")
            await pilot.pause()
            s = app.suggestion.result
            assert s.scope == "attn" and all(c.parallelism.ep == 1 for c in s.pareto)
            assert len(s.pareto) >= 2
            table = app.query_one("#pareto-table")
            table.focus()
            table.move_cursor(row=len(s.pareto) - 1)
            await pilot.press("enter")
            await app.wait_for()
            assert app.knobs.parallelism() == s.pareto[-1].parallelism
    run(go())


def test_suggest_keys_do_nothing_off_their_tab():
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("b")          # tab 1: b is not bound there
            await pilot.pause()
            assert app.generation["suggest"] == 0
    run(go())


def test_invalid_parallelism_notifies_and_keeps_the_last_good_knobs():
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            good = app.result
            app.query_one("#knobs").select("ep")
            await pilot.press("x")                  # ep 2 on a dense model
            await pilot.pause()
            assert app.result is good
            assert app.knobs.ep == 1
            assert _cell(app, "knobs", "ep", 1) == "1"
            assert any("ep > 1 on a dense model" in n for n in notes(app)), notes(app)
            app.set_knob("tp", "abc")               # not a number: refused before any job
            await pilot.pause()
            assert any("TP=abc: expected an integer" in n for n in notes(app))
            assert app.knobs.tp == 8 and app.is_running
    run(go())


def test_a_configuration_that_does_not_fit_is_shown_with_a_warning():
    async def go():
        app = make_app()                  # 70B at TP 1: 145.94 GB (135.92 GiB) > 141 GB
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await pilot.pause()
            assert not app.result.fits
            assert any("does not fit" in n and "145.94 GB per device > 141.00 GB" in n for n in notes(app))
            assert "DOES NOT FIT" in str(app.query_one("#memory-caption").render())
    run(go())


def test_stale_results_are_dropped():
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(80, 24)) as pilot:
            old = core.Job("latency", app.generation["latency"], app.knobs)
            app.set_knob("tp", "4")
            shown = app.result
            app.apply(core.run_job(old))        # an older generation arrives late
            assert app.result is shown and app.result.parallelism.tp == 4
    run(go())


def test_process_pool_path():
    """The real path: edits go to a ProcessPoolExecutor and come back tagged."""
    async def go():
        app = make_app(config="tp=8", sync=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.wait_for("latency", 1)
            gen = app.set_knob("tp", "4")
            app.set_knob("tp", "2")             # supersedes the previous edit
            await app.wait_for("latency", gen + 1)
            await pilot.pause()
            assert app._pool is not None
            assert app.result.parallelism.tp == 2
            assert app.result.memory["weights"] == 70_555_025_408
            await pilot.press("2", "b")
            await app.wait_for("suggest")
            await app.wait_for()
            assert app.knobs.parallelism() == app.suggestion.result.pareto[0].parallelism
    run(go())


def test_save_and_compare_marks_the_best_of_each_row():
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(120, 40)) as pilot:
            app.save_current("eight")
            app.set_knob("tp", "4")
            await pilot.pause()
            await pilot.press("s")
            await pilot.pause()
            await pilot.press("ctrl+a", "ctrl+k", *"four", "enter")
            await pilot.pause()
            await pilot.press("5")
            await pilot.pause()
            assert [s.name for s in app.saved] == ["eight", "four"]
            table = app.query_one("#compare-table")
            lat = [s.data["latency_ns"] for s in app.saved]
            dev = table.get_row("devices")
            assert [str(c) for c in dev[1:]] == ["8", "4 *"]
            row = table.get_row("latency")
            best = lat.index(min(lat))
            assert str(row[1 + best]).endswith(" *") and not str(row[2 - best]).endswith(" *")
            assert str(row[1 + best]) == fmt.ns(min(lat)) + " *"
            # load the first column back, then delete it
            table.focus()
            table.move_cursor(column=1)
            await pilot.press("l")
            await pilot.pause()
            assert app.knobs.tp == 8
            await pilot.press("d")
            await pilot.pause()
            assert [s.name for s in app.saved] == ["four"]
    run(go())


def test_stage_formula_follows_the_selected_row():
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("4")
            await pilot.pause()
            table = app.query_one("#stages-table")
            table.focus()
            names = first_column(table)
            assert names[0] == "embedding" and "tp_allreduce_attn" in names
            cursor_to(table, "tp_allreduce_attn")
            await pilot.pause()
            stage = core.stage_by_name(app.result, "tp_allreduce_attn")
            text = str(app.query_one("#formula").render())
            assert text.startswith("tp_allreduce_attn (comm-bound): ")
            assert stage.formula[:40] in text.replace("\n", " ")
    run(go())


def test_hardware_tab_sweeps_and_ranks_bandwidth_first():
    """Llama 3.1 70B decode: HBM bandwidth is the knob that matters (docs/model-latency.md)."""
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("6")
            await app.wait_for("sweep")
            await pilot.pause()
            rank = app.query_one("#rank-table")
            assert str(rank.get_row_at(0)[0]) == "HBM bandwidth"
            assert app.query_one("#cost-table").row_count == len(app.sweep_out.result.pareto)
            gen = app.generation["sweep"]
            await pilot.press("1", "6")          # nothing changed: no new sweep
            await pilot.pause()
            assert app.generation["sweep"] == gen
            await pilot.press("r")               # r reruns it
            await pilot.pause()
            assert app.generation["sweep"] == gen + 1
    run(go())


def test_undo_and_zoom():
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("h")               # tp 8 -> 4
            await pilot.pause()
            assert app.knobs.tp == 4
            await pilot.press("u")
            await pilot.pause()
            assert app.knobs.tp == 8 and app.result.parallelism.tp == 8
            await pilot.press("z")
            await pilot.pause()
            assert not app.query_one("#knobs").display
            await pilot.press("x")               # still nudges the highlighted knob
            await pilot.pause()
            assert app.knobs.tp == 16
            await pilot.press("k")
            await pilot.pause()
            assert app.query_one("#knobs").display and app.focused is app.query_one("#knobs")
    run(go())


def test_help_palette_and_json_export(tmp_path):
    import json
    async def go():
        app = make_app(config="tp=8", export_dir=str(tmp_path))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f1")
            await pilot.pause()
            assert type(app.screen).__name__ == "ModelHelpScreen"
            await pilot.press("escape")
            await pilot.press("ctrl+j")
            await pilot.pause()
            await pilot.press("ctrl+p")
            await pilot.pause()
            assert type(app.screen).__name__ == "CommandPalette"
    run(go())
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name == "tfx-llama3.1-70b-tp8.json"
    data = json.loads(files[0].read_text())
    assert data["parallelism"]["tp"] == 8 and "stages" in data   # what tfx model compare reads


@pytest.mark.parametrize("argv, message", [
    (["open", "--model", "no-such-model"], "no-such-model"),
    (["open", "--ctx", "4096"], "--ctx: error: expected with --model (the model screen)"),
    (["open", "--model", "llama3.1-8b", "--set", "BM=64"], "are for kernels"),
    (["open", "--model", "llama3.1-8b", "--batch", "0"], "--batch: error: expected a whole number in 1..16,777,216, found '0'"),
])
def test_cli_refuses_before_the_screen_starts(argv, message, capsys):
    from tfx.cli.main import main
    assert main(argv) == 2
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------- issue 13 item 21

def test_typed_text_reaches_the_knob_prompt_not_the_bindings():
    """Typing `nosuchmodel` on the knobs panel: `n` is no binding on the Layout tab, so it
    opens the model knob's prompt with `n` typed and the rest follows into the prompt; `s`
    (save) does not fire, nothing is saved, and the refusal names the text typed."""
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(80, 24)) as pilot:
            app.query_one("#knobs").select("model")
            await pilot.press(*"nosuchmodel")
            await pilot.pause()
            assert type(app.screen).__name__ == "PromptScreen"
            assert app.screen.query_one("Input").value == "nosuchmodel"
            await pilot.press("enter")
            await pilot.pause()
            assert app.saved == [] and app.knobs.model == "llama3.1-70b"
            assert any("model=nosuchmodel: unknown" in n for n in notes(app))
            # a value for an integer knob: 9k = 9 x 1024 = 9216 context tokens
            app.query_one("#knobs").select("ctx")
            await pilot.press("9", "k", "enter")
            await pilot.pause()
            assert app.knobs.ctx == 9216
    run(go())


def test_compare_labels_stay_whole_at_80x24_and_left_moves_a_column_after_z():
    """Three saved configurations at 80x24: the row labels column is fixed, so scrolling to
    the last column keeps `latency` whole; after z hides the knobs panel, left moves the
    column cursor (it used to switch tabs)."""
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=(80, 24)) as pilot:
            app.save_current("eight")
            app.set_knob("tp", "4")
            await pilot.pause()
            app.save_current("four")
            app.set_knob("tp", "2")
            await pilot.pause()
            app.save_current("two")
            await pilot.press("5")
            await pilot.pause()
            table = app.query_one("#compare-table")
            assert table.fixed_columns == 1
            await pilot.press("z")
            await pilot.pause()
            assert app.focused is table
            table.move_cursor(column=3)
            await pilot.press("left")
            await pilot.pause()
            assert app.active_tab == "compare" and table.cursor_column == 2
    run(go())
