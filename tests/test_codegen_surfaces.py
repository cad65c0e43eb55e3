"""The code generator (tfx.analysis.codegen) on every surface: tfx explore, diff, simulate and
validate take --codegen as tfx analyze does and price as it compiles, their JSON and text name
it; tfx open takes it and the explorer's g switches it for every pane; a tiled profile refuses
every named code generator but the default in one line (exit 2) everywhere.

The fp8 tile 128x256x64 on 8 warps is the case the two code generators price apart
(tests/test_codegen.py derives each term: Triton's 48 short-row copies and its serialized fp8
wgmma are not CUTLASS's), so a surface that dropped the option would show Triton's time."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from tests.test_guard_defects import one_line, run
from tfx.analysis.analyze import analyze
from tfx.cli.main import main
from tfx.explore import explore
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
FP8 = ROOT / "kernels" / "gemm_fp8.tile"
SIP_GEMM = ROOT / "kernels" / "sip_gemm.tile"
FP8_TILE = dict(M=4096, N=4096, K=4096, BM=128, BN=256, BK=64, WARPS=8, STAGES=3, GROUP_M=8)
SETS = [a for k, v in FP8_TILE.items() for a in ("--set", f"{k}={v}")]
# the one refusal (tfx.analysis.codegen.check_profile), by hand from its message
REFUSAL = ("a code generator other than triton prices GPU instructions (TMA copies, wgmma) and sip is "
           "a tiled profile, found 'cutlass'")


@pytest.fixture(scope="module")
def priced():
    """The fp8 tile's predicted ns as each code generator compiles it (analyze, the reference)."""
    module, h200 = parse_file(FP8), load_profile("h200_sxm")
    return {cg: float(analyze(module, None, h200, FP8_TILE, codegen=cg).metrics["performance.predicted_ns"])
            for cg in ("triton", "cutlass")}


def test_the_fp8_tile_is_priced_apart(priced):
    """Under cutlass the tile loses Triton's short-row copies and serialized wgmma: faster."""
    assert priced["cutlass"] < priced["triton"]


@pytest.mark.parametrize("argv", [
    ("analyze",), ("explore",), ("simulate",), ("diff", SIP_GEMM),
])
def test_a_tiled_profile_refuses_a_code_generator_everywhere(capsys, argv):
    line = one_line(capsys, argv[0], SIP_GEMM, *argv[1:], "--hw", "sip", "--codegen", "cutlass")
    assert line == "--codegen: error: " + REFUSAL


def test_diff_side_b_and_validate_refuse_on_sip(capsys, tmp_path):
    """--codegen-b names its own option; a validate row on sip names its row (file:line:col)."""
    assert one_line(capsys, "diff", SIP_GEMM, SIP_GEMM, "--hw", "sip", "--codegen-b", "cutlass") == (
        "--codegen-b: error: " + REFUSAL)
    rows = tmp_path / "sip.csv"
    rows.write_text(f"kernel,profile,measured_ms\n{SIP_GEMM},sip,1.0\n")
    assert one_line(capsys, "validate", rows, "--codegen", "cutlass") == (
        f"{rows}:2:1: error: sip_gemm.tile: {REFUSAL}")
    # the default is the tiled profile's own pricing: it runs, and its JSON names no code generator
    rc, out, _ = run(capsys, "validate", rows, "--json")
    data = json.loads(out)
    assert rc == 0 and data["rows"][0]["codegen"] is None
    # the file names none either (a file of tiled rows only), as its text does (no "compiled as")
    assert data["codegen"] is None
    rc, out, _ = run(capsys, "validate", rows)
    assert rc == 0 and "triton" not in out and "cutlass" not in out
    # triton spelled out is the default: accepted on the tiled profile and named nowhere
    rc, out, _ = run(capsys, "validate", rows, "--json", "--codegen", "triton")
    assert rc == 0 and json.loads(out)["codegen"] is None


def test_open_refuses_before_the_screen(capsys):
    assert one_line(capsys, "open", SIP_GEMM, "--hw", "sip", "--codegen", "cutlass") == "--codegen: error: " + REFUSAL


def test_tiled_analysis_names_no_code_generator(capsys):
    rc, out, _ = run(capsys, "analyze", SIP_GEMM, "--hw", "sip", "--json")
    assert rc == 0 and json.loads(out)["codegen"] is None
    rc, out, _ = run(capsys, "analyze", SIP_GEMM, "--hw", "sip")
    assert out.splitlines()[0] == f"kernel sip_gemm ({SIP_GEMM}) on sip"


def test_explore_ranks_as_the_code_generator_compiles(priced, capsys):
    """A sweep of BN (128, 256) and WARPS (4, 8) around the fp8 tile: every configuration of the
    top table is priced as the scalar analysis prices it under the same code generator, and the
    fp8 tile itself (BN=256, WARPS=8) is at its own code generator's time."""
    module, h200 = parse_file(FP8), load_profile("h200_sxm")
    fixed = {k: v for k, v in FP8_TILE.items() if k not in ("BN", "WARPS")}
    for cg in ("triton", "cutlass"):
        r = explore(module, None, h200, sweeps={"BN": [128, 256], "WARPS": [4, 8]}, fixed=fixed, top=4,
                    codegen=cg)
        assert r.codegen == cg and r.to_json()["codegen"] == cg
        assert len(r.top) == 4
        for e in r.top:
            a = analyze(module, None, h200, {**fixed, **e["params"]}, codegen=cg)
            assert e["predicted_ns"] == float(a.metrics["performance.predicted_ns"])
        tile = next(e for e in r.top if e["params"] == {"BN": 256, "WARPS": 8})
        assert tile["predicted_ns"] == priced[cg]
    sets = [a for k, v in fixed.items() for a in ("--set", f"{k}={v}")]
    assert main(["explore", str(FP8), *sets, "--sweep", "BN=128,256", "--sweep", "WARPS=4,8",
                 "--codegen", "cutlass"]) == 0
    assert capsys.readouterr().out.startswith("gemm_fp8 on h200_sxm, compiled as cutlass: 4 configurations")



def test_explore_csv_names_the_code_generator(tmp_path, capsys):
    """--csv: each of the 2 configurations (BN 128, 256) names cutlass in its last column; on the
    tiled profile the column is empty (no code generator applies)."""
    fixed = {k: v for k, v in FP8_TILE.items() if k != "BN"}
    sets = [a for k, v in fixed.items() for a in ("--set", f"{k}={v}")]
    out = tmp_path / "cg.csv"
    assert main(["explore", str(FP8), *sets, "--sweep", "BN=128,256", "--codegen", "cutlass",
                 "--csv", str(out)]) == 0
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["codegen"] for r in rows] == ["cutlass", "cutlass"]
    assert main(["explore", str(SIP_GEMM), "--hw", "sip", "--csv", str(out)]) == 0
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {r["codegen"] for r in rows} == {""}


def test_explore_sensitivity_follows(priced):
    """--sensitivity reprices around the best configuration under the same code generator: its
    baseline is the top configuration's time."""
    r = explore(parse_file(FP8), None, load_profile("h200_sxm"), sweeps={"BN": [256]}, top=1,
                fixed={k: v for k, v in FP8_TILE.items() if k != "BN"}, sensitivity=True, codegen="cutlass")
    assert r.sensitivity["baseline"]["predicted_ns"] == r.top[0]["predicted_ns"] == priced["cutlass"]


def test_diff_prices_each_side(priced, capsys):
    """--codegen-b cutlass: A is Triton's, B CUTLASS's; the header names both; the predicted
    time's ratio is theirs."""
    assert main(["diff", str(FP8), str(FP8), *SETS, "--codegen-b", "cutlass", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["a"]["codegen"], data["b"]["codegen"]) == ("triton", "cutlass")
    change = next(c for c in data["changes"] if c["metric"] == "performance.predicted_ns")
    assert (change["old"], change["new"]) == (priced["triton"], priced["cutlass"])
    assert main(["diff", str(FP8), str(FP8), *SETS, "--codegen", "cutlass"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [f"A: {FP8} gemm_fp8 on h200_sxm, compiled as cutlass",
                       f"B: {FP8} gemm_fp8 on h200_sxm, compiled as cutlass"]
    assert "no metric changed" in out


def test_diff_refuses_a_code_generator_for_a_saved_report(capsys, tmp_path):
    saved = tmp_path / "a.json"
    assert main(["analyze", str(FP8), "--json"]) == 0
    saved.write_text(capsys.readouterr().out)
    assert one_line(capsys, "diff", saved, FP8, "--codegen", "cutlass") == (
        f"--codegen: error: expected with a .tile side; the saved report {saved} names its own code "
        "generator, found 'cutlass'")


def test_simulate_starts_from_the_code_generators_analysis(priced, capsys):
    assert main(["simulate", str(FP8), *SETS, "--codegen", "cutlass", "--json", "--no-events",
                 "--tiles", "4"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["codegen"] == "cutlass"
    assert data["analysis"]["performance.predicted_ns"] == priced["cutlass"]
    assert main(["simulate", str(FP8), *SETS, "--codegen", "cutlass", "--tiles", "4"]) == 0
    # analyze's first line, then how it was simulated on its own line
    assert capsys.readouterr().out.splitlines()[:2] == [
        f"kernel gemm_fp8 ({FP8}) on h200_sxm, compiled as cutlass",
        "  one representative unit, waves extrapolated; integer ns"]


def test_validate_predicts_as_the_code_generator_compiles(priced, capsys, tmp_path):
    """One measured row of the fp8 tile, 0.2 ms: its prediction is the code generator's."""
    rows = tmp_path / "fp8.csv"
    with open(rows, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["kernel", "profile", "measured_ms", *FP8_TILE])
        w.writerow([str(FP8), "h200_sxm", "0.2", *FP8_TILE.values()])
    for cg in ("triton", "cutlass"):
        assert main(["validate", str(rows), "--codegen", cg, "--json", "--estimate"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["codegen"] == cg and data["rows"][0]["codegen"] == cg
        assert data["rows"][0]["predicted_ms"] == priced[cg] / 1e6
        assert main(["validate", str(rows), "--codegen", cg, "--estimate"]) == 0
        assert capsys.readouterr().out.splitlines()[0].endswith(
            f"(profile h200_sxm, as its rows name it), compiled as {cg}, timed after an L2 clear; resources "
            "estimated by tfx (--estimate: the regs, spills and smem_bytes columns ignored)")


# ---------------------------------------------------------------- the explorer

def test_explorer_g_reprices_every_pane(priced):
    from tests.test_tui_support import make_app, shown

    async def go():
        app = make_app(kernel=str(FP8), params=FP8_TILE)
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_generation()
            assert shown(app, "#status").startswith("gemm_fp8 on h200_sxm, compiled as triton predicted")
            assert float(app.analysis.metrics["performance.predicted_ns"]) == priced["triton"]
            await pilot.press("p")                 # pin Triton's analysis
            await pilot.press("g")
            await app.wait_for_generation()
            await pilot.pause()
            assert app.analysis.codegen == "cutlass"
            app.finish_hint()                      # the Roofline pane's occupancy rerun follows too
            # the fp8 tile runs 1 CTA/SM of 8 warps; the hint (2) needs 65,536 registers / (2 x 256
            # threads) = 128 a thread, so the rerun happens, and it prices cutlass too
            assert app.outcome.hint_note == "rerun with 128 registers/thread (no spill assumed)"
            assert app.outcome.hinted is not None and app.outcome.hinted.codegen == "cutlass"
            assert float(app.analysis.metrics["performance.predicted_ns"]) == priced["cutlass"]
            assert shown(app, "#status").startswith("gemm_fp8 on h200_sxm, compiled as cutlass predicted")
            assert shown(app, "#diff").startswith("A/B vs pin [codegen triton -> cutlass]: predicted")
            app.action_pane("explore")
            await pilot.pause()
            await app.wait_for_explore()
            out = app.explore_outcome
            assert out.job.codegen == "cutlass" and out.codegen == "cutlass"
            assert out.near_tie.summary() in shown(app, "#explore-status")
            assert ", compiled as cutlass" in shown(app, "#explore-status")     # the sweep's own result names it
            # no campaign timed cutlass: no advice borrowed from Triton's (tfx.explore.top_picks)
            assert out.top_picks is None and "time at least" not in shown(app, "#explore-status")
            from tests.test_tui_support import first_column
            tied = sum(e["near_tie"] for e in out.top)
            assert tied == (min(out.near_tie.configs, len(out.top)) if out.near_tie.tied else 0)
            assert [c.endswith("≈") for c in first_column(app.query_one("#topk"))][:len(out.top)] == (
                [True] * tied + [False] * (len(out.top) - tied))
            await pilot.press("g")                 # cutlass -> triton: the pin has no edit left
            await app.wait_for_generation()
            await pilot.pause()
            assert app.analysis.codegen == "triton"
            assert shown(app, "#diff").startswith("A/B vs pin: no edit since the pin")
    asyncio.run(go())


def test_explorer_on_a_tiled_profile_refuses_g():
    from tests.test_tui_support import make_app

    async def go():
        app = make_app(kernel=str(SIP_GEMM), profile="sip")
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_generation()
            generation = app.generation
            await pilot.press("g")
            await pilot.pause()
            assert app.codegen is None and app.generation == generation      # nothing reran
            assert [n.message for n in app._notifications] == ["codegen: error: " + REFUSAL]
    asyncio.run(go())


def test_switching_to_a_tiled_profile_drops_the_code_generator():
    """gemm compiled as cutlass on h200_sxm, switched to sip: the code generator is dropped with
    the switch (sip compiles its own kernels) and the job runs without it; gemm's cta mesh is
    not sip's, so that analysis fails and the last good state, cutlass on h200_sxm, returns."""
    from tests.test_tui_support import make_app

    async def go():
        app = make_app(profile="h200_sxm", codegen="cutlass")
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_generation()
            assert app.analysis.codegen == "cutlass"
            jobs = []
            submit = app.jobs.submit
            app.jobs.submit = lambda lane, fn, job, *rest: (jobs.append(job), submit(lane, fn, job, *rest))[1]
            app.switch_profile("sip")
            assert [(j.profile, j.codegen) for j in jobs] == [("sip", None)]
            await app.wait_for_generation()
            await pilot.pause()
            messages = [n.message for n in app._notifications]
            assert ("code generator cutlass dropped: sip is a tiled profile (its own tool chain compiles)"
                    in messages)
            assert (app.profile_name, app.codegen, app.analysis.codegen) == ("h200_sxm", "cutlass", "cutlass")
    asyncio.run(go())
