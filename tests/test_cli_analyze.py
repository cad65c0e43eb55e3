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


def test_several_assignments_in_one_set_are_the_repeated_flags(capsys):
    """``--set M=2048,BM=64`` binds as ``--set M=2048 --set BM=64`` does; a later assignment
    of a name wins, as a repeated flag's does. M = 2048, BM = 64, BN = 128 (the default):
    cdiv(2048, 64) x cdiv(4096, 128) = 32 x 32 = 1,024 positions."""
    assert main(["analyze", GEMM, "--set", "M=2048,BM=64", "--json"]) == 0
    together = json.loads(capsys.readouterr().out)
    assert main(["analyze", GEMM, "--set", "M=2048", "--set", "BM=64", "--json"]) == 0
    apart = json.loads(capsys.readouterr().out)
    assert together == apart
    assert together["parameters"]["M"] == 2048 and together["parameters"]["BM"] == 64
    assert together["scopes"]["children"][0]["positions"] == 1024
    assert main(["analyze", GEMM, "--set", "BM=128,BM=64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["parameters"]["BM"] == 64


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


def test_diff_text_names_each_sides_parameters(capsys):
    """gemm.tile declares M=N=K=4096, BM=BN=128, BK=64, WARPS=4, STAGES=3, GROUP_M=8.
    --set BM=64 applies to both sides, --set-b BN=64 to B only: the sides differ, so each
    gets its own line, A with BN=128 and B with BN=64; the knob of B is named on the
    first line, each side's code generator (the default, triton) after it."""
    assert main(["diff", GEMM, GEMM, "--hw", "h200_sxm", "--set", "BM=64", "--set-b", "BN=64",
                 "--knob-b", "memory.l2.bandwidth=x2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"A: {GEMM} gemm on h200_sxm, compiled as triton"
    assert out[1] == f"B: {GEMM} gemm on h200_sxm with memory.l2.bandwidth=x2, compiled as triton"
    assert out[2] == "  parameters A: M=4096, N=4096, K=4096, BM=64, BN=128, BK=64, WARPS=4, STAGES=3, GROUP_M=8"
    assert out[3] == "  parameters B: M=4096, N=4096, K=4096, BM=64, BN=64, BK=64, WARPS=4, STAGES=3, GROUP_M=8"


def test_diff_text_names_shared_parameters_once(capsys):
    """Two profiles, the same parameters (the file's defaults with BM=64): one line."""
    assert main(["diff", GEMM, GEMM, "--hw", "h200_sxm", "--hw-b", "h100_sxm", "--set", "BM=64"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "  parameters: M=4096, N=4096, K=4096, BM=64, BN=128, BK=64, WARPS=4, STAGES=3, GROUP_M=8"


def test_explore_remembers_its_knobs(capsys):
    """--knob memory.l2.bandwidth=x2: the JSON carries it as given (path -> text) and the
    text header names it after the profile."""
    args = ["explore", GEMM, "--hw", "h200_sxm", "--knob", "memory.l2.bandwidth=x2", "--set", "M=512",
            "--set", "N=512", "--set", "K=512", "--sweep", "BM=64,128", "--top", "1"]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"] == "h200_sxm"
    assert data["knobs"] == {"memory.l2.bandwidth": "x2"}
    assert data["fixed"]["M"] == 512
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("gemm on h200_sxm with memory.l2.bandwidth=x2, compiled as triton: ")
