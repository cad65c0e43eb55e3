"""Counts and their nouns in the report's prose (session 13, polish13): singular at exactly one
(tfx.hw.units.format_counted), as every other count of the reports is written."""

from __future__ import annotations

from pathlib import Path

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent


def _analysis(kernel: str, profile: str = "h200_sxm", **params):
    return analyze(parse_file(ROOT / "kernels" / f"{kernel}.tile"), None, load_profile(profile), params)


def _details(a, name: str) -> list[str]:
    return [t.detail for t in a.terms if t.name == name]


def test_l2_across_waves_index_that_wraps_every_position():
    """gemm_w8a16 at its defaults: M = 16, BM = 16, N = 4096, BN = 128, a grid of cdiv(16, 16) x
    cdiv(4096, 128) = 1 x 32 = 32 CTAs, one wave (132 SMs x 2 resident = 264 >= 32): W = 32. A's
    tile row pm takes 1 value, so its index wraps every 1 position (it read 'every 1 positions'):
    max(0, min(32, 1) - max(0, 1 - 32)) / min(32, 1) = (1 - 0) / 1 = 100.0%; the first wave of
    each run of 32 follows none: x (1 - 32 / 32) = 0.0%."""
    line = _details(_analysis("gemm_w8a16"), "l2 across waves")[0]
    assert line == ("line 30: an index that wraps every 1 position: the previous 32 positions read "
                    "max(0, min(32, 1) - max(0, 1 - 32)) / 1 = 100.0% of its tiles; x (1 - 32 / 32 positions: "
                    "the first wave of each run of 32 follows none) = 0.0%")


def test_annotated_ir_one_trip():
    """flash_attention's last loop runs j = cdiv(S, BLOCK_N) - 1 to cdiv(S, BLOCK_N): one trip,
    annotated '// 1 trip' (it read '// 1 trips'); the loop before it, 0 to cdiv(S, BLOCK_N) - 1 at
    S = 4096, BLOCK_N = 64: 4096 / 64 - 1 = 63 trips, 2 stages."""
    from tfx.present.analysis_report import annotated_ir
    ir = annotated_ir(_analysis("flash_attention")).splitlines()
    assert any(line.endswith("carry(%m, %l, %acc) capture(K, V, bh, %q, %s_zero) {  // 1 trip") for line in ir)
    assert any(line.endswith("{  // 63 trips, 2 stages") for line in ir)


def test_occupancy_hint_one_cta_per_sm():
    """persistent_gemm (attr occupancy = 1) at 4 stages on rtx5070ti: its mma.sync loop holds 4 - 1
    = 3 buffers of the 128 x 64 A and 64 x 256 B tiles (Triton's pipeliner, tests/test_smem_buffers.py),
    3 x (128 x 64 + 64 x 256) x 2 B = 3 x 49,152 = 147,456 B of shared memory a CTA, which exceed
    the opt-in maximum of 101,376 B. One CTA may use at most 102,400 B per SM - 1,024 B reserved =
    101,376 B: the sentence's verb agrees with '1 CTA' ('1 CTA needs', it read '1 CTA need'), and
    the hint term compiles for it: '101,376 B smem: 1 CTA/SM' (it read '1 CTAs/SM'). Its 248
    registers are the register estimate (docs/analysis.md section 6) of 128x256x64 on 8 warps on a
    GPU without a warpgroup mma: mma.sync, warpsPerTileV2 2 x 4 (warp tiles 64 x 64); 128 x 256 x
    4 B / 256 threads = 512 B = 128 of accumulator + 2 x (4 + 8 copies: 16,384 and 32,768 B over
    16 B x 256) = 24 + 2 x (64 + 64) x 16 x 2 B / 128 = 64 of fragments + 32 = 248."""
    a = _analysis("persistent_gemm", "rtx5070ti", STAGES=4)
    assert a.occupancy.explanation()[1] == ("occupancy=1 is unattainable as compiled (limited by shared memory); "
                                            "1 CTA needs at most 101,376 B of shared memory per CTA (uses 147,456 B)")
    hint = _details(a, "hint")[0]
    assert hint.startswith("compiled for occupancy=1 (256 threads, 248 regs, 101,376 B smem: 1 CTA/SM) it would take ")


def test_model_device_counts(capsys):
    """llama3-8b at the default parallelism (tp1 cp1 pp1 dp1 ep1) runs on 1 x 1 x 1 x 1 = 1
    device: 'on 1 device' (it read 'on 1 device(s)'); at tp 2 on h200_nvl8, 2 devices."""
    from tfx.cli.main import main
    assert main(["model", "latency", "--model", "llama3-8b"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("; tp1 cp1 pp1 dp1 ep1 on 1 device")
    assert main(["model", "memory", "--model", "llama3-8b", "--hw", "h200_nvl8", "--tp", "2"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "  fits         yes  on 2 devices"


def test_explore_pareto_one_point(capsys, monkeypatch):
    """copy's 24 configurations (BLOCK x WARPS) all use 0 B of shared memory, so the time vs smem
    frontier holds only the fastest time: 1 point (it read '1 points')."""
    from tfx.cli.main import main
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["explore", str(ROOT / "kernels" / "copy.tile")]) == 0
    out = capsys.readouterr().out
    assert "Pareto frontier (time vs smem): 1 point" in out and "1 points" not in out


def test_load_wait_over_one_trip_a_wave():
    """flash_attention's loop at line 77 (j = cdiv(S, BLOCK_N) - 1 to cdiv(S, BLOCK_N), no stages:
    Triton prefetches nothing) makes 1 trip, so its load wait adds its wait 'over 1 trip a wave'
    (it read 'over 1 trips a wave')."""
    line = _details(_analysis("flash_attention"), "load wait")[0]
    assert line.startswith("loop at line 77: STAGES = 1, Triton prefetches nothing: ")
    assert line.endswith(" over 1 trip a wave (included in the waves above)")


def test_serve_one_chunk_step(capsys):
    """deepseek-v3's default serve: prompts of 2,048 tokens in chunks of 2,048: ceil(2048 / 2048) =
    1 chunk step a request ('1 chunk step of 2,048', it read '1 chunk step(s)')."""
    from tfx.cli.main import main
    assert main(["model", "serve", "--model", "deepseek-v3"]) == 0
    assert "note: 1 chunk step of 2,048 prompt tokens per request; " in capsys.readouterr().out


def test_model_memory_names_its_workload(capsys):
    """tfx model memory's KV cache depends on --batch and --ctx, and its JSON named neither (nor the
    dtypes). llama3-8b at batch 8, context 4,096: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 B
    = 131,072 B a token, x 8 x 4,096 tokens = 4,294,967,296 B; the text's first line names the
    workload as tfx model latency's does."""
    import json
    from tfx.cli.main import main
    args = ["model", "memory", "--model", "llama3-8b", "--batch", "8", "--ctx", "4096"]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["workload"]["batch"], data["workload"]["context"], data["workload"]["kv_dtype"]) == (8, 4096, "bf16")
    assert data["kv_cache"] == 4294967296
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("llama3-8b on h200_sxm: decode, batch 8, context 4,096, weights bf16, kv bf16; "
                      "tp1 cp1 pp1 dp1 ep1")
    assert out[2] == "  kv_cache          4.29 GB  (4,294,967,296 B)"


def test_model_serve_names_its_dtypes(capsys):
    """tfx model serve --kv-dtype fp8 priced an fp8 KV cache but neither its text nor its JSON said
    so: the JSON carries 'workload' (the dtypes, runtime, kernels and GEMM code generator; the
    request mix sets the batch and context), the first line ends 'weights bf16, kv fp8'."""
    import json
    from tfx.cli.main import main
    args = ["model", "serve", "--model", "llama3-8b", "--kv-dtype", "fp8"]
    assert main([*args, "--json"]) == 0
    wl = json.loads(capsys.readouterr().out)["workload"]
    assert (wl["weight_dtype"], wl["kv_dtype"]) == ("bf16", "fp8") and "context" not in wl
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(", runtime engine, weights bf16, kv fp8")


def test_elapsed_times_through_the_time_formatter():
    """Elapsed times of tfx's own work are written as every time is (tfx.hw.units.format_time_ns,
    as tfx model suggest and hw-sweep write theirs): tfx run's 'ran in', tfx explore's 'in' and the
    explorer's run check printed '{s:.2f} s' by hand ('0.75 s', '0.10 s'). 0.75 s = 750,000,000 ns
    -> '750.00 ms'; 0.1 s -> '100.00 ms'."""
    from tfx.execute.quick import summary
    line = summary({"kernel": "gemm", "shrunk": {"M": 64}, "pass": True, "seconds": 0.75, "outputs": []})
    assert line == "run check gemm at M=64: pass (750.00 ms)"


def test_run_names_its_distributions(capsys):
    """tfx run --dist A=uniform draws A from [-1, 1) instead of N(0, 1), which changes every number
    it prints, and neither its text nor its JSON said so: the JSON carries 'dists' as given, the
    first line writes 'seed 3 (A uniform)'. gemm at 64 x 64 x 64: A's uniform draws lie in
    [-1, 1) and bf16 keeps them there."""
    import json
    from tfx.cli.main import main
    args = ["run", str(ROOT / "kernels" / "gemm.tile"), "--set", "M=64", "--set", "N=64", "--set", "K=64",
            "--seed", "3", "--dist", "A=uniform"]
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dists"] == {"A": "uniform"}
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert ", seed 3 (A uniform): " in out[0]
    lo, hi = float(out[1].split()[5]), float(out[1].split()[7])   # A in bf16[64, 64] min LO max HI
    assert out[1].split()[0] == "A" and -1 <= lo and hi <= 1


def test_sm_dram_share_over_one_sm():
    """copy at N = 1,024, BLOCK = 1,024: cdiv(1024, 1024) = 1 CTA, so 1 SM pulls the device's
    4.238 TB/s of DRAM ('over 1 SM pulling'; it read 'over 1 SMs'), more than one SM brings:
    41 B/cycle x 1.98 GHz = 81.18 GB/s."""
    line = _details(_analysis("copy", N=1024, BLOCK=1024), "sm dram share")[0]
    assert line.startswith("4.238 TB/s of DRAM over 1 SM pulling would be 4.238 TB/s each, but one SM brings "
                           "at most 81.18 GB/s (41 B/cycle x 1.98 GHz)")


def test_mma_on_one_warp():
    """gemm at M = 256, N = 128, K = 128 with WARPS = 1: a 128x128x64 mma on 1 warp (it read 'on 1
    warps'), warps 1 x 1 over M x N; that warp's tile runs (128 / 16) x (128 / 8) x (64 / 16) = 512
    mma.sync m16n8k16; 2 CTAs on 132 SMs: 1 CTA x 1 warp on the SM's 4 sub-partitions."""
    a = _analysis("gemm", M=256, N=128, K=128, WARPS=1)
    assert _details(a, "mma layout")[0].startswith("line 28: 128x128x64 on 1 warp: warp mma (mma.sync m16n8k16), "
                                                   "warps 1 x 1 over M x N")
    warp = _details(a, "warp mma")[0]
    assert "runs 512 mma.sync m16n8k16 bf16" in warp and "; 1 CTA x 1 warp on 4 sub-partitions: " in warp


def test_persistent_one_tile_on_one_cta():
    """persistent_gemm at M = N = 128, K = 64 (BM = 128, BN = 256): cdiv(128, 128) x cdiv(128, 256) =
    1 output tile, so min(132 SMs, 1) = 1 CTA: '1 tile on 1 CTA is 1 full round: every CTA runs 1
    tile' (it read '1 tiles on 1 CTAs are 1 full round ... runs 1 tiles')."""
    line = _details(_analysis("persistent_gemm", M=128, N=128, K=64), "last round")[0]
    assert line.startswith("line 36: 1 tile on 1 CTA is 1 full round: every CTA runs 1 tile of ")


def test_occupancy_table_one_warp(capsys):
    """tfx occupancy at 32 threads a CTA: 32 / 32 threads a warp = 1 warp a CTA ('one CTA uses'
    read '1 warps')."""
    from tfx.cli.main import main
    assert main(["occupancy", "--threads", "32", "--regs", "64"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("warps "))
    assert "│ 1 warp " in row and "1 warps" not in row
