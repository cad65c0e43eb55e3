"""`tfx analyze` and `tfx diff` through the CLI entry point."""

import json

from tfx.cli.main import main
from tfx.bundled import bundled_kernel

GEMM = str(bundled_kernel("gemm.tile"))


def test_analyze_json_has_the_metrics_the_issue_names(capsys):
    assert main(["analyze", GEMM, "--hw", "h200_sxm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    m = data["metrics"]
    # 2 B * (4096*4096*32 + 4096*4096*32) = 2,147,483,648 (see test_analysis_counting).
    assert m["memory.traffic.gmem.total.read"] == 2_147_483_648
    for key in ("compute-cost.flops.bf16.total", "memory.footprint.A.logical", "memory.peak.smem",
                "roofline.compute_ns", "roofline.memory_ns", "roofline.ideal_ns", "roofline.bound_by",
                "occupancy.blocks_per_sm", "occupancy.limiter", "performance.waves",
                "performance.predicted_ns", "memory.traffic.gmem.thread.read"):
        assert key in m, key
    assert data["scopes"]["children"][0]["kind"] == "mesh"


def test_analyze_text_annotates_every_op_line(capsys):
    assert main(["analyze", GEMM]) == 0
    out = capsys.readouterr().out
    assert "%a = load A[pm * BM : BM, k * BK : BK] -> smem" in out
    # 1024 CTAs * 64 trips = 65,536 executions of each load.
    assert "x65,536" in out


def test_unknown_set_name_is_refused_with_exit_2(capsys):
    assert main(["analyze", GEMM, "--set", "BQ=3"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("--set BQ: error: kernel gemm has no parameter 'BQ'")


def test_missing_file_is_one_line_and_exit_2(capsys):
    assert main(["analyze", "nope.tile"]) == 2
    assert capsys.readouterr().err.strip() == "nope.tile: error: no such file"


def test_absurd_knob_is_refused_by_name(capsys):
    assert main(["analyze", GEMM, "--knob", "memory.gmem.bandwidth=-1"]) == 2
    assert "memory.gmem.bandwidth" in capsys.readouterr().err.splitlines()[0]


def test_diff_of_two_profiles_lists_largest_change_first(capsys):
    """Doubling the gmem bandwidth knob: the DRAM roofline term halves (x0.5)."""
    assert main(["diff", GEMM, GEMM, "--knob-b", "memory.gmem.bandwidth=x2", "--set", "BM=64",
                 "--set", "BN=64", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["changes"]
    assert rows, "a bandwidth change must move some metric"
    names = [r["metric"] for r in rows]
    assert "performance.predicted_ns" in names
    assert "memory.traffic.gmem.total.read" not in names   # bytes do not depend on bandwidth


def test_diff_of_identical_runs_reports_nothing(capsys):
    assert main(["diff", GEMM, GEMM]) == 0
    assert "no metric changed" in capsys.readouterr().out


FP4_MMA = """kernel f4 {
  tensor A : fp4e2m1[128, 128] @gmem in
  tensor B : fp4e2m1[128, 128] @gmem in
  mesh cta[1] as (c) capture(A, B) {
    %a = load A[0 : 128, 0 : 128] -> smem
    %b = load B[0 : 128, 0 : 128] -> smem
    %acc = zeros f32[128, 128] @rmem
    %c = mma %a, %b, %acc
  }
}
"""


def test_work_without_a_stated_rate_is_refused_by_name(tmp_path, capsys):
    """Hopper has no fp4 tensor cores: the analysis names the missing fact instead of pricing
    the mma at zero."""
    path = tmp_path / "f4.tile"
    path.write_text(FP4_MMA)
    assert main(["analyze", str(path), "--hw", "h100_sxm"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("h100_sxm:compute.tensor.fp4e2m1: error:")
    assert "not priced at zero" in first
