"""The explorer shows the numbers every other surface shows (session 10, audit10).

* Timeline pane: it simulated every configuration at 16 trips per loop and extrapolated the
  rest, where `tfx simulate` (and its JSON) simulates every trip: gemm 4096^3 with
  hbm.bandwidth=x2 read 217.31 us in the pane and 214.50 us from the command. Now the pane
  runs the command's simulation (capped only above tfx.tui.core.FULL_SIM_EVENTS work items,
  and then says so).
"""

from __future__ import annotations

import json

from tests.test_tui_support import make_app, run, shown


def test_the_timeline_pane_simulates_what_tfx_simulate_does(capsys):
    """gemm.tile M=N=K=4096 (K / BK = 4096 / 64 = 64 trips a CTA) on h200_sxm with
    hbm.bandwidth=x2: the pane's makespan is `tfx simulate --json`'s, and its caption says every
    trip was simulated (64 > 16: the old cap cut this loop)."""
    from tfx.cli.main import main
    assert main(["simulate", "kernels/gemm.tile", "--set", "M=4096", "--knob", "hbm.bandwidth=x2", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["tiles_cap"] is None

    async def go():
        app = make_app(params={"M": 4096}, knobs={"hbm.bandwidth": "x2"})
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            await pilot.press("4")
            await app.wait_for_timeline()
            await pilot.pause()
            assert app.sim_result.tiles is None
            assert app.sim_result.makespan_ns == cli["makespan_ns"]
            text = " ".join(str(app.query_one("#timeline-status").render()).split())
            assert "every trip simulated, as tfx simulate" in text
    run(go())


def test_a_large_simulation_is_capped_and_says_so():
    """Above FULL_SIM_EVENTS the pane simulates CAPPED_TILES trips of every loop: with a budget
    of 0 work items any kernel's estimate is above it, so gemm.tile is capped at 16 trips."""
    from tfx.tui import core
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    a = analyze(parse_file("kernels/gemm.tile"), None, load_profile("h200_sxm"), {})
    assert core.simulation_tiles(a) is None
    old = core.FULL_SIM_EVENTS
    try:
        core.FULL_SIM_EVENTS = 0
        assert core.simulation_tiles(a) == core.CAPPED_TILES == 16
    finally:
        core.FULL_SIM_EVENTS = old


def test_the_header_writes_ctas_per_sm_as_every_surface():
    """gemm.tile's defaults on h200_sxm: 98,304 B of shared memory + 1,024 reserved per CTA,
    233,472 // 99,328 = 2 CTAs/SM, 2 x 4 = 8 of 64 warps = 12.5%. The header said '2 CTA/SM'
    where `tfx analyze` and the Roofline pane say '2 CTAs/SM'."""
    from tfx.present import formatting as fmt
    assert fmt.ctas_per_sm(1) == "1 CTA/SM" and fmt.ctas_per_sm(2) == "2 CTAs/SM"

    async def go():
        app = make_app()
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            assert "2 CTAs/SM (12.5%)" in shown(app, "#status")
    run(go())


def test_explore_tables_write_shared_memory_as_an_allocation(capsys, monkeypatch):
    """The smem/CTA column is an allocation: exact bytes with the unit (tfx.present.formatting:
    '98,304 B'), in `tfx explore` (it printed a bare 147,456) and in the Explore pane (it
    printed 147.46 KB). The best gemm 4096^3 tile, 128 x 256 x 32 in 4 stages:
    (128 + 256) x 32 x 2 B x 4 = 98,304 B, measured the fastest of the 16 tiles of
    calibration/h200/measured/explore_top_s15 (196.2 us; for a while 128 x 256 x 16 in 6 stages
    ranked first, measured 16% slower, then 256 x 128 x 64 in 3, 7.5% slower). Piped text, as
    a pipe gets it (pytest-xdist's workers set COLUMNS=80, where gemm's table is drawn without
    rules: cmd_explore.fit_table)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    from tfx.cli.main import main
    assert main(["explore", "kernels/gemm.tile", "--top", "1"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "│ 128 │ 256 │ 32 │" in line)
    assert "98,304 B" in row

    async def go():
        app = make_app()
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            await pilot.press("5")
            await app.wait_for_explore()
            await pilot.pause()
            from tfx.tui.widgets.explore import TopTable
            table = app.query_one(TopTable)
            cells = [str(c) for c in table.get_row_at(0)]
            assert cells[1:4] == ["128", "256", "32"] and "98,304 B" in cells
    run(go())


def test_the_header_names_the_bound_of_the_predicted_time(capsys):
    """rmsnorm.tile's defaults (M = N = 8192, BLOCK_M 4, 8 warps) on h200_sxm: the roofline is
    DRAM's, the predicted time is set by the latency (one CTA a SM). `tfx simulate` writes
    'predicted 118.80 us (bound by latency)   roofline ... (bound by dram)'; the explorer's header
    wrote 'predicted 118.80 us  dram-bound'. It names the predicted time's bound now."""
    from tfx.cli.main import main
    assert main(["simulate", "kernels/rmsnorm.tile", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["analysis"]
    assert (cli["performance.bound_by"], cli["roofline.bound_by"]) == ("latency", "dram")

    async def go():
        app = make_app(kernel="kernels/rmsnorm.tile")
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            status = shown(app, "#status")
            assert "latency-bound" in status and "dram-bound" not in status
    run(go())
