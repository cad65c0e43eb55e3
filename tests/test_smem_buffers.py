"""The shared-memory tile buffers of a pipelined loop as Triton allocates them (tfx.analysis.smem_buffers):
S - 1 where every mma of the loop takes the warp mma (mma.sync), S where one takes the warpgroup mma.

Each expected estimate below is the loop's tiles counted by hand; the compiled shared memory quoted
beside it is the campaigns' (calibration/h200/measured/issue15/run*/gemm.csv `smem_bytes`,
attention_triton_decode.csv), which the rule was read from in Triton's pipeliner source, not fitted to."""

import json

import numpy as np
import pytest

from tfx.analysis import codegen, smem_buffers
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.bundled import bundled_dir

H200 = load_profile("h200_sxm")
GEMM = parse_file(bundled_dir("kernels") / "gemm.tile")


def _gemm(profile=H200, codegen_name=None, **params):
    base = dict(M=4096, N=4096, K=4096, BM=64, BN=64, BK=64, WARPS=2, STAGES=3, GROUP_M=8)
    return analyze(GEMM, None, profile, {**base, **params}, check=False, codegen=codegen_name)


@pytest.mark.parametrize("params, smem", [
    # 2 warps (the warp mma): 2 buffers of (64 x 64 + 64 x 64) x 2 B = 16,384 B at 3 stages = 32,768 B
    # (compiled: 32,768 B, run2 / run16 / run27)
    (dict(WARPS=2, STAGES=3), 2 * (64 * 64 + 64 * 64) * 2),
    # 4 warps, BM 64 (the warpgroup mma): 3 x 16,384 = 49,152 B (compiled 49,152 B, run17 / run28 / run33)
    (dict(WARPS=4, STAGES=3), 3 * (64 * 64 + 64 * 64) * 2),
    # BM 32 on 4 warps (not a warpgroup's 64 rows: the warp mma): 2 x (32 x 64 + 64 x 64) x 2 = 2 x 12,288
    # = 24,576 B (compiled 24,576 B, run11 / run16 / run36)
    (dict(BM=32, WARPS=4, STAGES=3), 2 * (32 * 64 + 64 * 64) * 2),
    # 64 x 128 x 32 on 2 warps at 4 stages: 3 x (64 x 32 + 32 x 128) x 2 = 3 x 12,288 = 36,864 B
    # (compiled 36,864 B, run1 / run13 / run17)
    (dict(BN=128, BK=32, WARPS=2, STAGES=4), 3 * (64 * 32 + 32 * 128) * 2),
    # one stage is not pipelined: its one tile, 16,384 B (compiled 16,384 B, run21 / run34 / run37)
    (dict(WARPS=2, STAGES=1), (64 * 64 + 64 * 64) * 2),
])
def test_the_gemm_k_loop_on_the_h200(params, smem):
    a = _gemm(**params)
    assert a.resources.smem_dynamic == smem
    assert a.peaks["smem"].bytes == smem


def test_the_loop_buffers_in_json_and_in_the_text():
    """64 x 64 x 64 on 2 warps at 3 stages: the k-loop (gemm.tile line 25) holds 3 - 1 = 2 buffers;
    the JSON names them, the text says why beside the occupancy; at 4 warps (the warpgroup mma) the
    loop keeps its 3 and the text has no such line."""
    from tfx.present.analysis_report import estimated_smem_line, summary
    a = _gemm(WARPS=2)
    assert json.loads(json.dumps(a.to_json()))["pipeline_buffers"] == [{"line": 25, "stages": 3, "buffers": 2}]
    line = estimated_smem_line(a)
    assert line.startswith("shared memory, estimated: the loop at line 25 holds 2 buffers of each tile it "
                           "loads, not its 3 stages")
    assert line in summary(a)
    b = _gemm(WARPS=4)
    assert b.to_json()["pipeline_buffers"] == [{"line": 25, "stages": 3, "buffers": 3}]
    assert estimated_smem_line(b) is None
    # smem given on the command line: the line would explain an estimate nobody used
    c = analyze(GEMM, None, H200, dict(BM=64, BN=64, WARPS=2), check=False, resources={"smem": 40_000})
    assert c.resources.smem_dynamic == 40_000 and estimated_smem_line(c) is None


def test_a_sweep_decides_per_configuration():
    """WARPS 2 / 4 / 2 at STAGES 3 / 3 / 2, 64 x 64 x 64: 2 x 16,384 = 32,768; 3 x 16,384 = 49,152;
    1 x 16,384 = 16,384 B, each as its scalar analysis."""
    a = analyze(GEMM, None, H200, dict(BM=64, BN=64, WARPS=np.array([2, 4, 2]), STAGES=np.array([3, 3, 2])),
                check=False)
    assert list(np.asarray(a.peaks["smem"].bytes)) == [32_768, 49_152, 16_384]
    assert [int(_gemm(WARPS=w, STAGES=s).peaks["smem"].bytes) for w, s in ((2, 3), (4, 3), (2, 2))] == \
        [32_768, 49_152, 16_384]


def test_cutlass_allocates_every_stage():
    """CUTLASS's mainloops hold Stages buffers (MmaMultistage's kStages, the TMA pipeline's
    Stages): 64 x 64 x 64 on 2 warps at 3 stages keeps 3 x 16,384 = 49,152 B."""
    assert not codegen.CUTLASS.warp_mma_stage_buffers_less_one
    assert _gemm(codegen_name="cutlass").resources.smem_dynamic == 49_152
    assert "the S - 1 shared-memory buffers of a pipelined warp-mma loop" in codegen.describe(codegen.CUTLASS)


def test_every_mma_of_the_a100_takes_the_warp_mma():
    """sm_80 has no warpgroup instruction: Triton's pipeliner gives each load S - 1 buffers (the extra
    one is MMAv3's alone), so 64 x 64 x 64 on 4 warps at 3 stages holds 2 x 16,384 = 32,768 B."""
    a = _gemm(load_profile("a100_sxm"), WARPS=4)
    assert a.resources.smem_dynamic == 32_768


def test_the_two_stage_decode_row_holds_one_kv_tile():
    """gqa_decode B8 HQ32 HKV8 SKV32768 D128 SPLITS16 BLOCK_N128 WARPS4 STAGES2: the 4-row GROUP is
    the warp mma, so 1 buffer of K and V (2 x 128 x 128 x 2 B = 65,536 B) + Q at the instruction's 16
    rows (16 x 128 x 2 = 4,096 B, not 4 x 128 x 2 = 1,024) + P crossing the 4 warps that split PV's
    N = D (16 x 128 x 2 = 4,096 B) = 73,728 B, as compiled (attention_triton_decode.csv, and Triton
    3.6.0's TTGIR: local_alloc 16 x 128 for Q, 1 x 128 x 128 for K and V, 16 x 128 for P); 3 CTAs a
    SM (3 x (73,728 + 1,024 reserved) = 224,256 <= 233,472 < 4 x 74,752 = 299,008), 3 measured.
    Two buffers gave 132,096 B and one CTA a SM."""
    gqa = parse_file(bundled_dir("kernels") / "gqa_decode.tile")
    a = analyze(gqa, None, H200, dict(B=8, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=128, WARPS=4,
                                      STAGES=2), check=False)
    assert a.resources.smem_dynamic == 2 * 128 * 128 * 2 + 16 * 128 * 2 + 16 * 128 * 2 == 73_728
    assert a.occupancy.blocks_per_sm == 3
    out = a.to_json()
    assert out["padded_operands"] == [{"name": "%q", "line": 53, "rows": 4, "padded_rows": 16, "bytes": 4096}]
    assert [lb["exchange_bytes"] for lb in out["pipeline_buffers"]] == [16 * 128 * 2, 16 * 128 * 2]


@pytest.mark.parametrize("block_n, warps, stages, smem", [
    # the campaigns' compiled bytes (calibration/h200/measured/issue15 decode.csv, GROUP 4 and 8 alike:
    # the Triton kernel pads both to 16 rows); D 128, Q 16 x 128 x 2 = 4,096 B, P 16 x BLOCK_N x 2 B.
    # one stage: K and V in turn, max(K, V) = 32 x 128 x 2 = 8,192 + Q 4,096 + P 1,024 = 13,312
    (32, 4, 1, 32 * 128 * 2 + 4096 + 16 * 32 * 2),
    # two stages: one buffer of each, 16,384 + 4,096 + 1,024 = 21,504
    (32, 4, 2, 2 * 32 * 128 * 2 + 4096 + 16 * 32 * 2),
    # three stages: two of each, 32,768 + 4,096 + 1,024 = 37,888
    (32, 2, 3, 2 * 2 * 32 * 128 * 2 + 4096 + 16 * 32 * 2),
    # BLOCK_N 64 on 8 warps at one stage: 16,384 + 4,096 + 2,048 = 22,528
    (64, 8, 1, 64 * 128 * 2 + 4096 + 16 * 64 * 2),
    # BLOCK_N 128, two stages: 65,536 + 4,096 + 4,096 = 73,728; three: 131,072 + 8,192 = 139,264
    (128, 2, 3, 2 * 2 * 128 * 128 * 2 + 4096 + 16 * 128 * 2),
])
@pytest.mark.parametrize("hq", [32, 64])
def test_the_decode_kernel_as_compiled(block_n, warps, stages, smem, hq):
    gqa = parse_file(bundled_dir("kernels") / "gqa_decode.tile")
    a = analyze(gqa, None, H200, dict(B=8, HQ=hq, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=block_n,
                                      WARPS=warps, STAGES=stages), check=False)
    assert a.resources.smem_dynamic == smem


def test_the_flash_forward_at_one_stage_holds_q_and_the_larger_of_k_and_v():
    """128 x 128 on D 128, 4 warps (the warpgroup mma), one stage: Q 128 x 128 x 2 = 32,768 B and one
    buffer, K's for QK^T then V's for PV (32,768 B each): 65,536 B, as compiled (campaign rows of
    attention_causal / _full; Q + K + V would be 98,304). At 64 x 32 on D 64, 8 warps: 8,192 + 4,096 =
    12,288 B (compiled 12,288). The text names it (the loop of the IR's stages, line 49)."""
    fa = parse_file(bundled_dir("kernels") / "flash_attention.tile")
    a = analyze(fa, None, H200, dict(BLOCK_M=128, BLOCK_N=128, D=128, WARPS=4, STAGES=1), check=False)
    assert a.resources.smem_dynamic == 128 * 128 * 2 + 128 * 128 * 2 == 65_536
    b = analyze(fa, None, H200, dict(BLOCK_M=64, BLOCK_N=32, D=64, WARPS=8, STAGES=1), check=False)
    assert b.resources.smem_dynamic == 64 * 64 * 2 + 32 * 64 * 2 == 12_288
    from tfx.present.analysis_report import estimated_smem_line
    assert ("the loop at line 49 (one stage) holds each mma's shared operands in turn (%q, %k_t then %v) in "
            "one buffer, the largest") in estimated_smem_line(a)


@pytest.mark.parametrize("bm, bn, d, warps, exchanged", [
    # PV's N = D 128 over BLOCK_M 64 on 2 warps: warps on N, P (64 x 64 x 2 = 8,192 B) crosses them
    (64, 64, 128, 2, 64 * 64 * 2),
    # BLOCK_M 32 on 4 warps (the warp mma), D 64: warps on N, 32 x 128 x 2 = 8,192 B
    (32, 128, 64, 4, 32 * 128 * 2),
    # BLOCK_M 64 = D 64 on 2 warps: a tie goes to M, each warp holds whole rows of P: nothing
    (64, 64, 64, 2, 0),
    # the warpgroup mma (64 rows, 4 warps): the dot that feeds PV puts every warp on M: nothing
    (64, 64, 128, 4, 0),
    # one warp holds all of P: nothing
    (32, 32, 128, 1, 0),
])
def test_p_crosses_warps_through_shared_memory_where_they_split_its_columns(bm, bn, d, warps, exchanged):
    """The compiled shared memory of calibration/h200/measured/attn_warp_s56 / _s57 over the loop's
    buffers and Q: 64 x 64 D128 w2 s2 57,344 = 16,384 (Q) + 32,768 (1 buffer of K and V) + 8,192;
    32 x 128 D64 w4 s2 45,056 = 4,096 + 32,768 + 8,192; 64 x 64 D64 w2 s2 24,576 = 8,192 + 16,384."""
    fa = parse_file(bundled_dir("kernels") / "flash_attention.tile")
    a = analyze(fa, None, H200, dict(BLOCK_M=bm, BLOCK_N=bn, D=d, WARPS=warps, STAGES=2), check=False)
    buffers = 1 if warps < 4 or bm % 64 else 2
    assert a.resources.smem_dynamic == bm * d * 2 + buffers * 2 * bn * d * 2 + exchanged
    assert a.to_json()["pipeline_buffers"][0].get("exchange_bytes", 0) == exchanged


@pytest.mark.parametrize("warps, smem", [
    # 2 warps: Q 64 x 128 x 2 = 16,384 B + 1 buffer of K and V (64 x 128 x 2 each: 32,768 B) + P
    # crossing the 2 warps on N (64 x 64 x 2 = 8,192 B) = 57,344 B (the TTGIR allocates K and V
    # 1 x 64 x 128 and P 64 x 64; compiled 57,344, attn_warp_s56)
    (2, 64 * 128 * 2 + 1 * 2 * 64 * 128 * 2 + 64 * 64 * 2),
    # 4 warps (BLOCK_M 64: the warpgroup mma): Q 16,384 + 2 x 32,768 = 81,920 B (the TTGIR: 2 x 64 x 128)
    (4, 64 * 128 * 2 + 2 * 2 * 64 * 128 * 2),
])
def test_the_flash_forward_at_two_stages(warps, smem):
    fa = parse_file(bundled_dir("kernels") / "flash_attention.tile")
    a = analyze(fa, None, H200, dict(BLOCK_M=64, BLOCK_N=64, D=128, WARPS=warps, STAGES=2), check=False)
    assert a.resources.smem_dynamic == smem
    # the text names the pipelined loop (flash_attention.tile line 49) where it holds fewer than 2
    from tfx.present.analysis_report import estimated_smem_line
    line = estimated_smem_line(a)
    if warps == 2:
        assert "the loop at line 49 holds 1 buffer of each tile it loads, not its 2 stages" in line
    else:
        assert line is None


def test_a_tiled_accelerator_keeps_the_irs_count():
    """No code generator's allocation is known off a GPU: no loop is listed."""
    sip = load_profile("sip")
    mod = parse_file(bundled_dir("kernels") / "sip_gemm.tile")
    assert analyze(mod, None, sip, {}, check=False).loop_buffers == []
    assert smem_buffers.by_region([]) == {}


FP8 = parse_file(bundled_dir("kernels") / "gemm_fp8.tile")


@pytest.mark.parametrize("params, smem", [
    # 32 x 64 x 128 on 2 warps, one stage: A 32 x 128 x 1 B = 4,096, B^T 64 x 128 x 1 B = 8,192, staged in
    # turn through one buffer: max = 8,192 B (Triton's TTGIR: local_alloc A, local_load, local_alloc B,
    # local_load, each fp_to_fp; shared 8,192)
    (dict(BM=32, BN=64, BK=128, WARPS=2, STAGES=1), max(32 * 128, 64 * 128)),
    # 256 x 32 x 64 on 2 warps: A 256 x 64 = 16,384, B^T 32 x 64 = 2,048: 16,384 B (compiled 16,384)
    (dict(BM=256, BN=32, BK=64, WARPS=2, STAGES=1), max(256 * 64, 32 * 64)),
    # 16 x 32 x 64 on 4 warps (16 rows: the warp mma): 1,024 and 2,048: 2,048 B (compiled 2,048)
    (dict(BM=16, BN=32, BK=64, WARPS=4, STAGES=1), max(16 * 64, 32 * 64)),
    # 128 x 128 x 64 on 4 warps is the warpgroup mma (no promotion): both, 8,192 + 8,192 = 16,384 B
    (dict(BM=128, BN=128, BK=64, WARPS=4, STAGES=1), 128 * 64 + 128 * 64),
    # pipelined (3 stages, warp mma): 2 buffers of both, 2 x (4,096 + 8,192) = 24,576 B
    (dict(BM=32, BN=64, BK=128, WARPS=2, STAGES=3), 2 * (32 * 128 + 64 * 128)),
])
def test_one_stage_fp8_warp_mma_stages_its_operands_in_turn(params, smem):
    a = analyze(FP8, None, H200, {**dict(M=4096, N=4096, K=4096, GROUP_M=8), **params}, check=False)
    assert a.resources.smem_dynamic == smem
    staged = params["STAGES"] == 1 and (params["WARPS"] % 4 or params["BM"] % 64)
    assert a.to_json()["pipeline_buffers"][0].get("operands_one_at_a_time", False) == bool(staged)
    from tfx.present.analysis_report import estimated_smem_line
    line = estimated_smem_line(a) or ""
    # gemm_fp8.tile's k-loop (line 28) and its mma's operands %a and %b (%b a view of %bt)
    assert ("the loop at line 28 passes its fp8 operands %a, %b through one buffer in turn, the larger"
            in line) == bool(staged)


def test_bf16_keeps_both_operands_at_one_stage():
    """bf16 needs no promotion: its one-stage loop allocates A and B together (TTGIR: both
    local_allocs before either load; 24,576 B): (32 x 128 + 128 x 64) x 2 B = 24,576."""
    assert _gemm(BM=32, BN=64, BK=128, WARPS=2, STAGES=1).resources.smem_dynamic == (32 * 128 + 128 * 64) * 2


def test_a_sweep_stages_per_configuration():
    """STAGES 1 / 1 / 2 at WARPS 2 / 4 / 2 (32 x 64 x 128 fp8; BM 32 is the warp mma at either
    warp count): 8,192; 8,192; one buffer of both at 2 stages, 4,096 + 8,192 = 12,288 B."""
    a = analyze(FP8, None, H200, dict(BM=32, BN=64, BK=128, WARPS=np.array([2, 4, 2]), STAGES=np.array([1, 1, 2])),
                check=False)
    assert list(np.asarray(a.peaks["smem"].bytes)) == [8_192, 8_192, 12_288]


def test_a_decode_sweep_allocates_as_each_configuration():
    """gqa_decode at D 128, HKV 8, six configurations in one sweep, each as its scalar analysis:
    HQ 32 (GROUP 4, stored at 16 rows) W2 S1 BLOCK_N 32: max(K, V) 32 x 128 x 2 = 8,192 + Q 16 x 128 x 2
    = 4,096 + P 16 x 32 x 2 = 1,024 -> 13,312; HQ 64 W4 S2 BLOCK_N 64: one buffer of K and V 32,768 +
    4,096 + 2,048 -> 38,912; HQ 8 (GROUP 1) W8 S3 BLOCK_N 128: two buffers 131,072 + 4,096 + 4,096 ->
    139,264; HQ 128 (GROUP 16) W2 S1 BLOCK_N 64: 16,384 + 4,096 + 2,048 -> 22,528; HQ 32 on 1 warp S2
    BLOCK_N 32: P stays in the one warp, 16,384 + 4,096 -> 20,480; HQ 64 W8 S3 BLOCK_N 32: 32,768 +
    4,096 + 1,024 -> 37,888."""
    gqa = parse_file(bundled_dir("kernels") / "gqa_decode.tile")
    grid = dict(HQ=np.array([32, 64, 8, 128, 32, 64]), WARPS=np.array([2, 4, 8, 2, 1, 8]),
                STAGES=np.array([1, 2, 3, 1, 2, 3]), BLOCK_N=np.array([32, 64, 128, 64, 32, 32]))
    expected = [8_192 + 4_096 + 1_024, 32_768 + 4_096 + 2_048, 131_072 + 4_096 + 4_096,
                16_384 + 4_096 + 2_048, 16_384 + 4_096, 32_768 + 4_096 + 1_024]
    a = analyze(gqa, None, H200, grid, check=False)
    assert list(np.asarray(a.peaks["smem"].bytes)) == expected
    for i, smem in enumerate(expected):
        one = analyze(gqa, None, H200, {k: int(v[i]) for k, v in grid.items()}, check=False)
        assert one.peaks["smem"].bytes == smem


FP8_KN = parse_file(bundled_dir("kernels") / "gemm_fp8_kn.tile")


@pytest.mark.parametrize("params, smem", [
    # the warpgroup mma reads fp8 only K-major: B[K, N] is transposed in registers and its load not
    # pipelined, one buffer; A keeps the loop's S (compiled, gemm_fp8_kn of run1-run3):
    # 64 x 256 x 64 on 4 warps at 3 stages: 3 x 64 x 64 + 64 x 256 = 12,288 + 16,384 = 28,672 B
    (dict(BM=64, BN=256, BK=64, WARPS=4, STAGES=3), 3 * 64 * 64 + 64 * 256),
    # 128 x 256 x 64 on 8 warps at 4 stages: 4 x 8,192 + 16,384 = 49,152 B
    (dict(BM=128, BN=256, BK=64, WARPS=8, STAGES=4), 4 * 128 * 64 + 64 * 256),
    # 256 x 64 x 128 on 8 warps at 3 stages: 3 x 32,768 + 8,192 = 106,496 B
    (dict(BM=256, BN=64, BK=128, WARPS=8, STAGES=3), 3 * 256 * 128 + 128 * 64),
    # on 2 warps (the warp mma reads the bytes as stored): S - 1 = 3 buffers of both, 3 x (2,048 +
    # 4,096) = 18,432 B (64 x 32 x 64 at 4 stages, compiled 18,432)
    (dict(BM=64, BN=32, BK=64, WARPS=2, STAGES=4), 3 * (64 * 64 + 64 * 32)),
])
def test_an_fp8_operand_transposed_in_registers_holds_one_buffer(params, smem):
    a = analyze(FP8_KN, None, H200, {**dict(M=4096, N=4096, K=4096, GROUP_M=8), **params}, check=False)
    assert a.resources.smem_dynamic == smem
    one = a.to_json()["pipeline_buffers"][0].get("unpipelined_operands", {})
    assert one == ({} if params["WARPS"] == 2 else {"%b": True})


def test_a_sweep_leaves_the_transposed_operand_out_per_configuration():
    """WARPS 4 / 2 at 64 x 64 x 64, 3 stages: the warpgroup mma, 3 x 4,096 + 4,096 = 16,384 B; the warp
    mma, 2 x (4,096 + 4,096) = 16,384 B too; at 4 stages 4 x 4,096 + 4,096 = 20,480 and 3 x 8,192 =
    24,576 B."""
    a = analyze(FP8_KN, None, H200, dict(BM=64, BN=64, BK=64, WARPS=np.array([4, 2, 4, 2]),
                                         STAGES=np.array([3, 3, 4, 4])), check=False)
    assert list(np.asarray(a.peaks["smem"].bytes)) == [16_384, 16_384, 20_480, 24_576]
