"""The timing condition ``l2_clear`` (tfx.analysis.launch_handoff.L2_CLEAR_CONDITION): a launch
timed right after a harness clears the L2 by writing a buffer (triton.testing.do_bench zero-fills
256 MB) starts from an L2 of dirty lines, and its first L2 of misses write them back. The write-back
belongs to the measurement, not to the kernel: analyze prices it only when asked (the measured-row
Predictor and bench/accuracy.py, whose rows do_bench timed; ``tfx analyze --timing do_bench``),
never in a serving step (tfx.model), and only for launches whose DRAM stream is priced at rates
measured from a clean L2 (``LaunchMiss.pays_write_back``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tfx.analysis import launch_handoff
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.analysis.measured import Predictor
from tfx.bundled import bundled_dir
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")


def test_the_write_back_is_the_measured_fact_in_proportion_to_the_l2():
    """launch.l2_dirty_write_back 8.16 us (stream_depth_s16/s17: the same launch after do_bench's
    clear minus after a 256 MB read, median of the 95 launches reading at least the L2's
    60 MiB = 62,914,560 B). A launch reading 31,457,280 B (half the L2) pays 8,160 x 31,457,280 /
    62,914,560 = 4,080 ns; one reading 125,829,120 B (twice the L2) min(125,829,120, 62,914,560) /
    62,914,560 = 1 of it, 8,160 ns; a profile without the fact (A100) none."""
    m = Machine(H200, "cta")
    assert launch_handoff.dirty_write_back_ns(m, 31_457_280) == pytest.approx(4080)
    assert launch_handoff.dirty_write_back_ns(m, 125_829_120) == pytest.approx(8160)
    assert list(launch_handoff.dirty_write_back_ns(m, np.array([31_457_280, 125_829_120]))) == pytest.approx(
        [4080, 8160])
    assert launch_handoff.dirty_write_back_ns(Machine(load_profile("a100_sxm"), "cta"), 125_829_120) == 0
    # the one unit policy: 8,160 ns = 8.16 us, 31,457,280 B = 31.46 MB, 62,914,560 B = 62.91 MB
    assert launch_handoff.describe_dirty_write_back(m, 31_457_280, 4080) == (
        "timed after an L2 clear (do_bench's clear leaves the L2 dirty): the launch's first L2 of misses write "
        "those lines back, 8.16 us x 31.46 MB / 62.91 MB of L2 = 4.08 us (calibration/h200/measured/"
        "stream_depth_s16, _s17: dirty - clean)")


def _copy(n, **kw):
    return analyze(parse_file(bundled_dir("kernels") / "copy.tile"), None, H200, {"N": n}, **kw)


def test_only_a_launch_that_pays_under_the_condition_pays(monkeypatch):
    """copy.tile at N = 7,864,320 bf16 moves 7,864,320 x 2 B read + the same written =
    31,457,280 B of DRAM. Its stream is priced at the copy's rate, measured by do_bench's own
    rows (calibration/h200/bandwidth.csv): it does not pay, condition or not. A launch marked as
    priced from a clean L2 (here forced) pays 4,080 ns (8,160 x 31,457,280 / 62,914,560) after
    the clear, and nothing without it: the condition is the measurement's, not the kernel's."""
    clean, cleared = _copy(7_864_320), _copy(7_864_320, l2_clear=True)
    assert float(cleared.predicted_ns()) == float(clean.predicted_ns())
    assert not [t for t in cleared.terms if t.name == "l2 write-back"]
    import tfx.analysis.performance as performance
    real = performance.LaunchMiss.of.__func__

    def paying(cls, ratios, **fields):
        miss = real(cls, ratios, **fields)
        miss.pays_write_back["forced"] = True
        return miss
    monkeypatch.setattr(performance.LaunchMiss, "of", classmethod(paying))
    clean, cleared = _copy(7_864_320), _copy(7_864_320, l2_clear=True)
    assert float(cleared.predicted_ns()) - float(clean.predicted_ns()) == pytest.approx(4080, abs=1e-6)
    wb = [t for t in cleared.terms if t.name == "l2 write-back"]
    assert len(wb) == 1 and wb[0].ns == pytest.approx(4080) and "= 4.08 us" in wb[0].detail
    assert not [t for t in clean.terms if t.name == "l2 write-back"]


def test_the_condition_is_named_where_it_applies():
    """analyze's default is a serving step's (no clear): the header and the JSON say nothing; under
    the condition the header reads ', timed after an L2 clear' and the JSON has "timing":
    "after_l2_clear". The measured-row Predictor prices do_bench's condition unless told."""
    from tfx.present.analysis_report import inputs_line
    a, b = _copy(1 << 20), _copy(1 << 20, l2_clear=True)
    assert not a.l2_clear and b.l2_clear
    assert inputs_line(a).endswith("compiled as triton") and inputs_line(b).endswith(
        "compiled as triton, timed after an L2 clear")
    assert "timing" not in a.to_json() and json.loads(json.dumps(b.to_json()))["timing"] == "after_l2_clear"
    assert Predictor().l2_clear and not Predictor(l2_clear=False).l2_clear


def test_the_cli_names_the_timing(capsys, tmp_path):
    """tfx analyze prices a clean L2 unless --timing do_bench; tfx validate prices a CSV's rows as
    do_bench timed them (its header says so) and --timing clean drops it."""
    from tfx.cli.main import main
    copy = str(bundled_dir("kernels") / "copy.tile")
    assert main(["analyze", copy, "--json"]) == 0
    assert "timing" not in json.loads(capsys.readouterr().out)
    assert main(["analyze", copy, "--json", "--timing", "do_bench"]) == 0
    assert json.loads(capsys.readouterr().out)["timing"] == "after_l2_clear"
    rows = tmp_path / "m.csv"
    rows.write_text(f"kernel,measured_ms,N\n{copy},0.2,268435456\n{copy},0.1,134217728\n{copy},0.05,67108864\n")
    assert main(["validate", str(rows), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["timing"] == "do_bench"
    assert main(["validate", str(rows), "--json", "--timing", "clean"]) == 0
    assert json.loads(capsys.readouterr().out)["timing"] == "clean"
    assert main(["validate", str(rows)]) == 0
    assert "compiled as triton, timed after an L2 clear" in capsys.readouterr().out


def test_measured_beside_predicted_in_the_explorer_is_priced_as_the_rows_were_timed():
    """tfx open --measured shows a row (timed by do_bench, after an L2 clear) beside the shown
    analysis, which prices a serving step's clean L2: the view adds what the clear's timing adds,
    the analysis's performance.l2_clear_write_back_ns. gqa_decode at its defaults (B8 HKV8
    SKV32768: its split launch reads 8 x 8 x 32,768 x 128 x 2 B x 2 = 1,073,741,824 B, past the
    62,914,560 B L2) pays the whole 8,160 ns; the same analysis under the condition already holds
    it and the view adds nothing. tfx validate's Predictor prices the same row the same."""
    from pathlib import Path

    from tfx.analysis.measured import MeasuredRow
    from tfx.errors import SourceLocation
    from tfx.tui import core
    path = bundled_dir("kernels") / "gqa_decode.tile"
    module = parse_file(path)
    clean = analyze(module, None, H200, {})
    cleared = analyze(module, None, H200, {}, l2_clear=True)
    assert clean.metrics["performance.l2_clear_write_back_ns"] == pytest.approx(8160)
    row = MeasuredRow(SourceLocation("m.csv", 2, 1), Path(path), "h200_sxm", 0.3, {})
    view = core.measured_view([row], str(path), "h200_sxm", clean)
    assert view.cleared_ns == pytest.approx(8160)
    assert view.predicted_ns == pytest.approx(float(clean.predicted_ns()) + 8160)
    assert view.predicted_ns == pytest.approx(float(cleared.predicted_ns()), abs=1)
    assert "timed after an L2 clear (+ 8.16 us l2 write-back)" in core.measured_line(view)
    again = core.measured_view([row], str(path), "h200_sxm", cleared)
    assert again.cleared_ns == 0 and again.predicted_ns == float(cleared.predicted_ns())
    assert Predictor().compare([row])[0].predicted_ms == pytest.approx(float(cleared.predicted_ns()) / 1e6)


def test_the_explorer_flags_a_measurement_under_the_roofline():
    """tfx open --measured, gemm.tile at its defaults on h200_sxm: the roofline is the shared
    memory's 160,480 ns (65,536 trips x 81,920 B / 33,454.08 B/ns, tests/test_present.py). A row
    measured 0.150 ms = 150,000 ns is under it and its line says so, as tfx validate warns; at
    0.300 ms it does not."""
    from pathlib import Path

    from tfx.analysis.measured import MeasuredRow
    from tfx.errors import SourceLocation
    from tfx.tui import core
    path = bundled_dir("kernels") / "gemm.tile"
    a = analyze(parse_file(path), None, H200, {})
    fast = MeasuredRow(SourceLocation("m.csv", 2, 1), Path(path), "h200_sxm", 0.150, {})
    view = core.measured_view([fast], str(path), "h200_sxm", a)
    assert view.roofline_ns == 160_480 and view.faster_than_roofline
    assert core.measured_line(view).endswith(
        "; m.csv:2:1); faster than the roofline 160.48 us: check the row's unit and profile")
    slow = MeasuredRow(SourceLocation("m.csv", 3, 1), Path(path), "h200_sxm", 0.300, {})
    assert "roofline" not in core.measured_line(core.measured_view([slow], str(path), "h200_sxm", a))
