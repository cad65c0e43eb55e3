"""The explorer keeps every edit through every failure (issue 13 items 15, 20, 22, 23) and
its long work goes through the one job runner (issue 14 item 6), driven through the real app."""

from __future__ import annotations

import json
import os
import shutil
import signal

import pytest

from tests.test_tui_support import GEMM, make_app, run
from tfx.hw.profile import profiles_dir


def notes(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


# ---------------------------------------------------------------- 15: exports whatever --hw is

def test_exports_are_safe_when_hw_is_a_path(tmp_path):
    """--hw given as a file path (in a folder whose name has a space): the export names keep
    only the profile's file name, a second export does not overwrite the first, and an
    unwritable export folder is a toast while the knob edit stays."""
    folder = tmp_path / "my profiles"
    folder.mkdir()
    prof = folder / "my h200.toml"
    shutil.copy(profiles_dir() / "h200_sxm.toml", prof)
    out = tmp_path / "out"
    out.mkdir()

    async def go():
        app = make_app(profile=str(prof), export_dir=str(out))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+j", "ctrl+j", "ctrl+s")
            await pilot.pause()
            assert sorted(p.name for p in out.iterdir()) == [
                "tfx-gemm-my_h200-2.json", "tfx-gemm-my_h200-ir.svg", "tfx-gemm-my_h200.json"]
            await pilot.press("6", "x")                  # hierarchy.sm.count 132 -> 264
            await pilot.pause()
            app.export_dir = tmp_path / "no such folder"
            await pilot.press("ctrl+j")
            await pilot.pause()
            assert any(n.startswith("export failed:") and "no such directory" in n for n in notes(app))
            assert app.knobs == {"hierarchy.sm.count": "264"}
            assert app.is_running
    run(go())
    data = json.loads((out / "tfx-gemm-my_h200.json").read_text())
    assert data["kernel"] == "gemm"


# ---------------------------------------------------------------- 20: bad start-up input exits 2

@pytest.mark.parametrize("kw, line", [
    ({"profile": "nosuchhw"}, "error: unknown hardware profile 'nosuchhw'"),
    ({"knobs": {"hbm.bandwdth": "x2"}}, "hbm.bandwdth"),
    ({"kernel_name": "nosuchkernel"}, "nosuchkernel"),
])
def test_first_analysis_failing_exits_2_with_one_line(kw, line):
    async def go():
        app = make_app(**kw)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
        return app
    app = run(go())
    assert app.return_code == 2
    assert line in app.first_error and "\n" not in app.first_error


def test_tfx_open_on_a_malformed_kernel_exits_2(tmp_path, capsys, monkeypatch):
    """The CLI path: tfx open refuses the kernel before the app starts (session 10: it used to
    start the screen and its workers, then fail the first analysis), with the refusal of every
    command: file:line:col, the echoed line and its caret; returns 2, the app never runs."""
    from tfx.cli.main import main
    from tfx.tui.app import TfxApp
    bad = tmp_path / "bad.tile"
    bad.write_text("kernel k {\n  %a = frobnicate\n}\n")
    started = []
    monkeypatch.setattr(TfxApp, "run", lambda self, **kw: started.append(self))
    assert main(["open", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert not started
    assert err[0].startswith(f"{bad}:2:") and "error:" in err[0]
    assert len(err) == 3 and err[1].strip() == "%a = frobnicate" and err[2].strip() == "^"


def test_a_later_failure_keeps_the_last_good_state():
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            app.set_knob("hierarchy.sm.count", "264")
            await pilot.pause()
            app.set_knob("memory.gmem.bandwidth", "-3")      # refused by the profile layer
            await pilot.pause()
            assert app.is_running and app.first_error is None
            assert app.knobs == {"hierarchy.sm.count": "264"}
            assert app.analysis.profile.fact("hierarchy.sm.count").value == 264
    run(go())


# ---------------------------------------------------------------- 22: knobs on edits and switches

def test_knob_back_to_its_original_value_is_no_knob():
    """x then h on hierarchy.sm.count: 132 -> 264 -> 132, the profile's own value, so the knob
    (its * in the table and the '1 knob' of the status line) goes away."""
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("6", "x")
            await pilot.pause()
            assert app.knobs == {"hierarchy.sm.count": "264"}
            assert "1 knob" in str(app.query_one("#status").render())
            await pilot.press("h")
            await pilot.pause()
            assert app.knobs == {}
            assert "knob" not in str(app.query_one("#status").render())
            table = app.query_one("#facts-table")
            assert table.get_row("hierarchy.sm.count")[1:3] == ["132", ""]
    run(go())


def test_profile_switch_keeps_the_knobs_the_new_profile_has_and_names_the_rest():
    """h200_sxm -> h100_sxm with two knobs: hierarchy.sm.count exists on both (kept, 264);
    memory.gmem.bandwidth_measured exists only on the H200 profile (dropped, and the toast says
    so; memory.gmem.efficiency is on every GPU profile since the one attainable-bandwidth rule)."""
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            app.set_knob("hierarchy.sm.count", "264")
            app.set_knob("memory.gmem.bandwidth_measured", "4TB/s")
            await pilot.pause()
            app.switch_profile("h100_sxm")
            await pilot.pause()
            assert app.profile_name == "h100_sxm"
            assert app.knobs == {"hierarchy.sm.count": "264"}
            assert app.analysis.profile.fact("hierarchy.sm.count").value == 264
            assert any("kept 1 knob; dropped memory.gmem.bandwidth_measured=4TB/s" in n for n in notes(app))
    run(go())


# ---------------------------------------------------------------- 23: saved profiles by name

def test_profile_saved_with_w_is_listed_and_usable_by_name(capsys):
    """w on the Hardware pane after x on hierarchy.sm.count saves 'big_h200' (264 SMs) to the
    user's profile folder; tfx hw list lists it and --hw big_h200 loads it by name."""
    from tfx.cli.main import main
    from tfx.hw import load_profile
    from tfx.hw.user_profiles import user_profiles_dir

    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("6", "x")
            await pilot.pause()
            await pilot.press("w")
            await pilot.pause()
            inp = app.screen.query_one("Input")
            inp.value = "big_h200"
            await pilot.press("enter")
            await pilot.pause()
    run(go())
    assert (user_profiles_dir() / "big_h200.toml").is_file()
    assert main(["hw", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"name": "big_h200", "origin": "saved"}.items() <= next(r for r in rows if r["name"] == "big_h200").items()
    assert load_profile("big_h200").value("hierarchy.sm.count") == 264
    assert main(["analyze", GEMM, "--hw", "big_h200", "--json"]) == 0


# ---------------------------------------------------------------- the job runner

def test_a_killed_worker_is_replaced_and_the_edit_still_lands():
    async def go():
        app = make_app(sync=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.wait_for_generation(1, timeout=60)
            for pid in list(app._pool._processes):
                os.kill(pid, signal.SIGKILL)
            gen = app.set_param("STAGES", "4")
            await app.wait_for_generation(gen, timeout=60)
            await pilot.pause()
            assert app.analysis.params["STAGES"] == 4
            gen = app.set_param("STAGES", "2")          # and the next one, in a fresh pool
            await app.wait_for_generation(gen, timeout=60)
            assert app.analysis.params["STAGES"] == 2
    run(go())


def test_the_timeline_simulates_in_its_worker():
    async def go():
        app = make_app(sync=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.wait_for_generation(1, timeout=60)
            await pilot.press("4")
            await app.wait_for_timeline(timeout=60)
            await pilot.pause()
            assert app.sim_result is not None and app.sim_events
            assert str(app.query_one("#timeline-status").render()).startswith("tfx.sim: makespan")
            gen = app.set_param("STAGES", "2")            # a new analysis: a new simulation
            await app.wait_for_generation(gen, timeout=60)
            await app.wait_for_timeline(timeout=60)
            assert app.sim_outcome.generation == gen
    run(go())
