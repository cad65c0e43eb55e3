"""bench/accuracy_classes.py: the issue-15 rows grouped by the parameters of their code. The rows
are made up here; each expected median is worked out in a comment."""

from __future__ import annotations

from pathlib import Path

from tfx.analysis.measured import Compared, MeasuredRow
from tfx.errors import SourceLocation

from bench_script import load_bench


bench = load_bench("accuracy_classes")


def row(line, params, measured_ms, predicted_ms, spills=0, shape="64x64x64"):
    r = MeasuredRow(SourceLocation("m.csv", line, 1), Path("kernels/gemm.tile"), None, measured_ms,
                    dict(params), spills=spills, notes={"family": "gemm_bf16", "shape": shape, "run": "run1"})
    return Compared(r, predicted_ms, bool(spills))


def rows():
    # errors (predicted - measured) / measured: 1.1/1 - 1 = +10%, 0.8/1 - 1 = -20%,
    # 2.6/2 - 1 = +30% (class BM=64); 0.95/1 - 1 = -5% and, spilling, 1.5/1 - 1 = +50% (BM=128)
    return [row(2, {"M": 64, "BM": 64, "STAGES": 2}, 1.0, 1.1),
            row(3, {"M": 64, "BM": 64, "STAGES": 2}, 1.0, 0.8),
            row(4, {"M": 64, "BM": 64, "STAGES": 3}, 2.0, 2.6),
            row(5, {"M": 64, "BM": 128, "STAGES": 2}, 1.0, 0.95),
            row(6, {"M": 64, "BM": 128, "STAGES": 2}, 1.0, 1.5, spills=40)]


def test_class_keys_leave_out_the_shape():
    # M sizes the problem (SHAPE_PARAMS); BM and STAGES name the code, in column order
    assert bench.class_keys(rows()) == ["BM", "STAGES"]
    assert bench.class_keys(rows(), ["STAGES"]) == ["STAGES"]


def test_classes_by_median_signed_error_without_spilling_rows():
    got = bench.classes(rows(), ["BM"])
    # BM=128 without its spilling row: median of (-5%) = -5%; BM=64: median of (+10%, -20%,
    # +30%) = +10%; ordered by that median, the too-fast class first
    assert [k for k, _ in got] == [(128,), (64,)]
    assert [len(m) for _, m in got] == [1, 3]
    medians = [sorted(c.error for c in m)[len(m) // 2] for _, m in got]
    assert [round(x, 6) for x in medians] == [-0.05, 0.1]


def test_classes_with_spilling_rows():
    got = bench.classes(rows(), ["BM"], spilling=True)
    # BM=128 now holds -5% and +50%: median (-0.05 + 0.5) / 2 = +22.5%, above BM=64's +10%
    assert [k for k, _ in got] == [(64,), (128,)]
    assert [len(m) for _, m in got] == [3, 2]


def test_two_parameter_classes_and_the_line():
    got = bench.classes(rows(), ["BM", "STAGES"])
    # (64, 2): +10%, -20% -> median -5%; (128, 2): -5%; tie broken by the key's text:
    # ("128", "2") < ("64", "2"); (64, 3): +30%
    assert [k for k, _ in got] == [(128, 2), (64, 2), (64, 3)]
    line = bench.format_class(["BM", "STAGES"], (64, 2), got[1][1], width=16)
    # 2 rows, median (0.10 - 0.20) / 2 = -5.0%, median |error| (0.10 + 0.20) / 2 = 15.0%
    assert line.split()[:5] == ["BM=64", "STAGES=2", "2", "-5.0%", "15.0%"]
    assert line.endswith("run1:64x64x64:+10% run1:64x64x64:-20%")


def test_relative_errors_take_out_the_shapes_median():
    """The four non-spilling rows share one campaign shape: errors +10%, -20%, +30%, -5%, median
    (-5% + 10%) / 2 = +2.5%. Relative: +7.5%, -22.5%, +27.5%, -7.5%. By BM: BM=128 -7.5%; BM=64
    the median of (+7.5%, -22.5%, +27.5%) = +7.5%. The line prints the relative errors."""
    part = rows()
    error = bench.relative_errors(part)
    assert [round(error(c), 6) for c in part[:4]] == [0.075, -0.225, 0.275, -0.075]
    got = bench.classes(part, ["BM"], error=error)
    assert [k for k, _ in got] == [(128,), (64,)]
    assert [round(sorted(error(c) for c in m)[len(m) // 2], 6) for _, m in got] == [-0.075, 0.075]
    line = bench.format_class(["BM"], (128,), got[0][1], width=8, error=error)
    assert line.split()[:4] == ["BM=128", "1", "-7.5%", "7.5%"]
    assert line.endswith("run1:64x64x64:-8%")


def test_hw_reads_that_devices_campaigns(capsys):
    # a family no campaign holds: the one line names the folder --hw chose (the H100's), exit 2
    assert bench.main(["--only", "no_such_family", "--hw", "h100_sxm"]) == 2
    err = capsys.readouterr().err
    assert "calibration/h100/measured/issue15" in err and err.count("\n") == 1
