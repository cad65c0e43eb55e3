"""Declared parameter domains are enforced on every surface a person types a value into
(issue 13 item 16): ``tfx open --set`` and the explorer's parameter edit dialog refuse a
value outside the domain with the same line ``tfx analyze --set`` prints."""

from __future__ import annotations

from tests.test_tui_support import GEMM, cursor_to, make_app, run
from tfx.cli.main import main

# kernels/gemm.tile declares ``param BM = 128 in 16..512 step x2 sweep {16, ..., 256}`` and
# ``param STAGES = 3 in 1..8 sweep 1..6``: 100 is not a power of two from 16 (16, 32, 64, 128,
# 256, 512), 2 lies in STAGES' range.
BM_REFUSAL = "BM=100 is outside its declared domain 16..512 step x2"


def test_open_set_outside_the_domain_is_one_line_and_exit_2(capsys):
    rc = main(["open", GEMM, "--hw", "h200_sxm", "--set", "BM=100"])
    _, err = capsys.readouterr()
    assert rc == 2
    assert err.strip().splitlines() == [f"--set BM: error: {BM_REFUSAL}"]


def test_edit_dialog_shows_the_domain_and_refuses_outside_it():
    async def go():
        app = make_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("3")                          # roofline tab, parameters table
            await pilot.pause()
            table = app.query_one("#params-table")

            async def edit(name: str, text: str) -> list[str]:
                table.focus()
                cursor_to(table, name)
                await pilot.press("enter")
                await pilot.pause()
                labels = [str(w.render()) for w in app.screen.query("Label")]
                await pilot.press(*text, "enter")
                await pilot.pause()
                return labels

            labels = await edit("STAGES", "2")
            assert "declared domain 1..8, sweep 1..6" in labels
            assert app.params == {"STAGES": 2}
            labels = await edit("BM", "100")
            assert "declared domain 16..512 step x2, sweep {16, 32, 64, 128, 256}" in labels
            assert any(n.message == BM_REFUSAL and n.severity == "error" for n in app._notifications)
            assert app.params == {"STAGES": 2}              # BM keeps 128, STAGES keeps its edit
            assert app.analysis.params["BM"] == 128
            assert app.analysis.params["STAGES"] == 2
    run(go())


def test_edit_dialog_shows_a_sweep_that_counts_the_machine():
    """persistent_gemm's NUM_SMS sweep {units(sm) / 4, units(sm) / 2, units(sm) * 3 / 4, units(sm)} on
    h200_sxm's 132 SMs: {33, 66, 99, 132} (132 / 4 = 33, 132 / 2 = 66, 396 / 4 = 99); the dialog
    raised "units(sm) is a count of the hardware profile" instead, the analysis' params holding
    no count. Bound without a profile the hint shows the sweep as written."""
    from tfx.ir.bind import domain_hint
    from tfx.lang import parse_file

    async def go():
        app = make_app(kernel="kernels/persistent_gemm.tile")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("3")
            await pilot.pause()
            table = app.query_one("#params-table")
            table.focus()
            cursor_to(table, "NUM_SMS")
            await pilot.press("enter")
            await pilot.pause()
            labels = [str(w.render()) for w in app.screen.query("Label")]
            assert "declared domain 1..4096, sweep {33, 66, 99, 132}" in labels
            await pilot.press("escape")
    run(go())
    k = parse_file("kernels/persistent_gemm.tile").kernel()
    assert domain_hint(k, "NUM_SMS", {"NUM_SMS": 8}) == (
        "declared domain 1..4096, sweep {units(sm) / 4, units(sm) / 2, units(sm) * 3 / 4, units(sm)}")
