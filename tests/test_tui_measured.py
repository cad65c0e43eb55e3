"""`tfx open --measured FILE`: measured times beside the prediction of the configuration on
screen, read by tfx.analysis.measured (the `tfx validate` CSV)."""

from __future__ import annotations

from tests.test_tui_support import GEMM, make_app, run


def _csv(tmp_path) -> str:
    p = tmp_path / "measured.csv"
    p.write_text("kernel,profile,measured_ms,STAGES\n"
                 f"{GEMM},h200_sxm,0.25,3\n"
                 f"{GEMM},h200_sxm,0.24,4\n"
                 f"{GEMM},h100_sxm,0.40,3\n")
    return str(p)


def test_measured_beside_predicted(tmp_path):
    """At the defaults (STAGES 3) on h200_sxm the first row applies: measured 0.25 ms =
    250.00 us against the predicted 216.26 us, an error of 216.263 / 250 - 1 = -13.5%; the
    STAGES 4 row is 'another parameter' there and the h100_sxm row is not counted. At STAGES 4
    the second row applies (240.00 us); at STAGES 5 none does."""
    from tfx.analysis.measured import read_measurements
    rows = read_measurements(_csv(tmp_path))

    async def go():
        app = make_app(measured=rows)
        async with app.run_test(size=(120, 40)) as pilot:
            status = str(app.query_one("#status").render())
            assert "measured 250.00 us (-13.5%)" in status
            await pilot.press("3")
            await pilot.pause()
            text = " ".join(str(app.query_one("#roofline-text").render()).split())
            assert "Measured measured 250.00 us, predicted 216.26 us (-13.5%; " in text
            assert ":2:1)" in text
            app.set_param("STAGES", "4")
            await pilot.pause()
            assert "measured 240.00 us" in str(app.query_one("#status").render())
            app.set_param("STAGES", "5")
            await pilot.pause()
            assert "not measured here" in str(app.query_one("#status").render())
            text = " ".join(str(app.query_one("#roofline-text").render()).split())
            assert "not measured at these parameters (2 rows at others)" in text
    run(go())


def test_bad_measurements_file_is_one_line_before_the_screen(tmp_path, capsys):
    from tfx.cli.main import main
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,measured_ms\nkernels/nosuch.tile,abc\n")
    assert main(["open", GEMM, "--measured", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[0].startswith(str(bad))
