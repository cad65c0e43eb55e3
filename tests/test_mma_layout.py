"""The mma's warp layout and operand transposes (tfx.analysis.mma_layout; docs/analysis.md,
"mma layout"). H200 facts: tensor instruction m64 n8 k16 (wgmma, bf16), 4096 bf16 and 8192
fp8 flop/cycle per SM, tensor efficiency 0.74, clock 1.98 GHz."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.mma_layout import (FEEDS, READS, feeds_into, instruction_n, operand_reads, path_share, plan,
                                     register_transposes)
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
WGMMA = (64, 8, 16)


def test_warpgroups_go_side_by_side_in_n():
    # 64 x 256 on 8 warps: warpsPerTileV3 starts 4 x 1; M = 64 is not > 16 x 4, so the
    # second warpgroup goes on N: 4 x 2, each warpgroup 64 x 128, nothing padded:
    # 2 x 64 x 256 x 32 = 1,048,576 flop (stacking them on M would pad to 128 rows, twice that)
    p = plan((64, 256, 32), WGMMA, 8)
    assert (p.path, p.warps_m, p.warps_n) == ("warpgroup", 4, 2)
    assert p.flops == 1_048_576


def test_warpgroups_stack_on_m_when_m_has_rows():
    # 128 x 32 on 8 warps: 128 > 16 x 4, so M doubles to 8 warps (two warpgroups of 64 rows)
    p = plan((128, 32, 32), WGMMA, 8)
    assert (p.path, p.warps_m, p.warps_n, p.m) == ("warpgroup", 8, 1, 128)


def test_small_m_takes_the_warp_mma():
    # BM = 16 is no multiple of 64: mma.sync m16n8k16. warpsPerTileV2 on 4 warps with
    # repetitions (16/16, 128/8) = (1, 16): 1 >= 16 is false, so N doubles twice: 1 x 4
    # (reps N 16 -> 8 -> 4). M stays 16 rows (the old rule padded it to 64):
    # 2 x 16 x 128 x 64 = 262,144 flop
    p = plan((16, 128, 64), WGMMA, 4)
    assert (p.path, p.warps_m, p.warps_n) == ("warp", 1, 4)
    assert p.flops == 262_144


def test_two_warps_or_shallow_fp8_k_take_the_warp_mma():
    # num_warps % 4 != 0: no warpgroup. reps (64/16, 64/8) = (4, 8): N first -> 1 x 2
    assert plan((64, 64, 32), WGMMA, 2)[:3] == ("warp", 1, 2)
    # fp8 reads 32 bytes of K per row = 32 values: BK = 16 is too shallow for wgmma, and the
    # warp mma's K is 32 deep too: 16 pads to 32 -> 2 x 64 x 64 x 32 = 262,144
    p = plan((64, 64, 16), WGMMA, 4, bits=8)
    assert p.path == "warp" and p.k == 32 and p.flops == 262_144


def test_chained_dots_keep_the_m_split():
    # attention's QK^T on 8 warps: a warpgroup mma (8 % 4 == 0, 64 % 64 == 0) with every warp
    # on M (warpsPerTileV3 for a chained dot): 8 warps x 16 rows = 128 rows for the 64
    p = plan((64, 64, 64), WGMMA, 8, chained=True)
    assert (p.path, p.warps_m, p.m) == ("warpgroup", 8, 128)


def test_only_the_dot_that_feeds_another_puts_every_warp_on_m():
    # warpsPerTileV3 asks whether a dot's forward slice holds a dot; warpsPerTileV2 looks both
    # ways. Attention at 64 x 32, D = 128 on 8 warps (the ttgir of Triton 3.6.0,
    # bench/h200/compile_attn_sass.py f,128,64,32,8,3: #mma warpsPerCTA [8, 1] for QK^T,
    # #mma1 [4, 2] for PV): QK^T feeds PV, so its 8 warps go on M, 8 x 16 = 128 rows for 64;
    # PV only reads QK^T's P: 4 x 1, M = 64 is not > 16 x 4, so the second warpgroup goes on
    # N: 4 x 2, nothing padded, 2 x 64 x 128 x 32 = 524,288 flop (stacked: 1,048,576)
    qk = plan((64, 32, 128), WGMMA, 8, chained=FEEDS)
    assert (qk.path, qk.warps_m, qk.warps_n, qk.m) == ("warpgroup", 8, 1, 128)
    pv = plan((64, 128, 32), WGMMA, 8, chained=READS)
    assert (pv.path, pv.warps_m, pv.warps_n, pv.m) == ("warpgroup", 4, 2, 64)
    assert pv.flops == 524_288
    # on the warp mma (two warps: no warpgroup) a dot that only reads another is chained too:
    # all warps on the larger side, M = 64 >= N = 32 -> 2 x 1
    assert plan((64, 32, 64), WGMMA, 2, chained=READS)[:3] == ("warp", 2, 1)


def test_a_warp_mma_dot_that_feeds_another_takes_the_readers_warps():
    """On the warp mma Triton lays the later dot (PV) out first, by its own extents, and gives
    the dot that feeds it the same warpsPerCTA: the TTGIR of Triton 3.6.0's flash forward
    (bench/h200/compile_attn_sass.py, session 57) has one #mma for both dots. D = 128, BLOCK_M =
    64 on 2 warps: PV is 64 x 128, M = 64 < N = 128, so both warps on N: [1, 2]; QK^T (64 x 64,
    K = 128) takes [1, 2] too, where its own extents (64 >= 64) would put both on M. D = 64:
    PV 64 x 64, 64 >= 64: [2, 1] for both. BLOCK_M = 32, BLOCK_N = 32, D = 64 on 4 warps: PV
    32 x 64 -> [1, 4], so QK^T's 32 x 32 gets [1, 4] (its own: [4, 1]); each warp computes
    32 rows x 32 / 4 = 8 columns, one n8 tile, nothing padded."""
    qk = plan((64, 64, 128), WGMMA, 2, chained=feeds_into(64, 128))
    assert (qk.path, qk.warps_m, qk.warps_n) == ("warp", 1, 2)
    assert plan((64, 64, 128), WGMMA, 2, chained=FEEDS)[:3] == ("warp", 2, 1)    # its own extents
    assert plan((64, 128, 64), WGMMA, 2, chained=READS)[:3] == ("warp", 1, 2)    # PV decides alike
    assert plan((64, 64, 64), WGMMA, 2, chained=feeds_into(64, 64))[:3] == ("warp", 2, 1)
    small = plan((32, 32, 64), WGMMA, 4, chained=feeds_into(32, 64))
    assert (small.warps_m, small.warps_n, small.m, small.n) == (1, 4, 32, 32)
    # the warpgroup path keeps "a dot that feeds another: every warp on M" (warpsPerTileV3)
    assert plan((64, 64, 128), WGMMA, 8, chained=feeds_into(64, 128))[:3] == ("warpgroup", 8, 1)


def test_flash_attentions_two_dots_share_one_warp_layout():
    """kernels/flash_attention.tile at D = 128, BLOCK_M = BLOCK_N = 64 on 2 warps: both dots of
    the trip (QK^T at line 55, PV at line 72) are laid out 1 x 2 over M x N, as the TTGIR has it
    (before: QK^T 2 x 1 by its own 64 x 64)."""
    module = parse_file(ROOT / "kernels" / "flash_attention.tile")
    a = analyze(module, None, load_profile("h100_sxm"),
                {"B": 4, "H": 32, "S": 4096, "D": 128, "BLOCK_M": 64, "BLOCK_N": 64, "WARPS": 2, "STAGES": 2})
    layouts = [t.detail for t in a.terms if t.name == "mma layout"]
    assert layouts[:2] == [
        "line 55: 64x64x128 on 2 warps: warp mma (mma.sync m16n8k16), warps 1 x 2 over M x N, no padding",
        "line 72: 64x128x64 on 2 warps: warp mma (mma.sync m16n8k16), warps 1 x 2 over M x N, no padding"]


# The TTGIR of Triton 3.6.0's flash forward (bench/h200/compile_attn_sass.py on the CPU, session 57):
# (D, BLOCK_M, BLOCK_N, WARPS, STAGES) -> the one #mma warpsPerCTA both dots carry. The rule: the
# later dot's (PV's) M = BLOCK_M against its N = D, every warp on the larger side (M on a tie).
TTGIR_WARP_LAYOUTS = [
    ((128, 64, 64, 2, 2), (1, 2)), ((128, 32, 32, 2, 2), (1, 2)), ((128, 64, 32, 2, 2), (1, 2)),
    ((128, 32, 64, 4, 2), (1, 4)), ((64, 64, 64, 2, 3), (2, 1)), ((64, 32, 32, 4, 3), (1, 4)),
    ((64, 32, 32, 2, 2), (1, 2)), ((64, 64, 32, 2, 2), (2, 1)), ((64, 32, 64, 2, 2), (1, 2)),
    ((64, 32, 64, 4, 2), (1, 4)),
]


@pytest.mark.parametrize("cfg, warps", TTGIR_WARP_LAYOUTS)
def test_flash_attentions_warp_layouts_are_the_compilers(cfg, warps):
    d, bm, bn, w, st = cfg
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200,
                dict(B=1, H=8, S=4096, D=d, BLOCK_M=bm, BLOCK_N=bn, WARPS=w, STAGES=st))
    layouts = [t.detail for t in a.terms if t.name == "mma layout"][:2]
    assert len(layouts) == 2
    for detail in layouts:
        assert f"warps {warps[0]} x {warps[1]} over M x N" in detail, detail


def test_instruction_n_leaves_a_column_split_to_spare_warps():
    # mmaVersionToInstrShape v3: nWarps = max(warps / max(M / 16, 1), 1), maxN = max(N / nWarps,
    # 8), the widest multiple of 8 <= min(maxN, 256) dividing N.
    # 64 x 32 on 8 warps: 8 / (64 / 16) = 2 -> maxN 16: m64n16 (the SASS: 16 HGMMA.64x16x16)
    assert instruction_n((64, 32, 128), 8) == 16
    # 64 x 128 (PV) on 8 warps: 128 / 2 = 64 (HGMMA.64x64x16); 64 x 64: 32
    assert instruction_n((64, 128, 32), 8) == 64
    assert instruction_n((64, 64, 128), 8) == 32
    # 4 warps, or 128 rows on 8 warps: nWarps = 1, the whole N (64 x 32 w4: HGMMA.64x32x16)
    assert instruction_n((64, 32, 128), 4) == 32
    assert instruction_n((128, 32, 128), 8) == 32
    # capped at 256; N = 96 on 4 warps: 96 (a multiple of 8 dividing 96)
    assert instruction_n((128, 512, 64), 4) == 256
    assert instruction_n((64, 96, 64), 4) == 96
    np.testing.assert_array_equal(instruction_n((np.array([64, 64, 128]), np.array([32, 128, 256]), 64),
                                                np.array([8, 8, 4])), [16, 64, 256])


def test_each_instruction_along_n_reads_a_again():
    # QK^T 64 x 32 x 128 on 8 warps (FEEDS): warps 8 x 1 (two warpgroups holding the same 64
    # rows, padded to 128), each issuing 32 / 16 = 2 m64n16 instructions per k-step, each reading
    # its A slab: A 2 x 128 rows x 128 x 2 B = 65,536 B; B (128 x 32) once per 64-row
    # instruction along M, 2: 16,384 B; 81,920 B an execution (one m64n32 a warpgroup would
    # read 49,152)
    r = operand_reads((64, 32, 128), WGMMA, 8, chained=FEEDS)
    assert (r.a_readers, r.b_readers) == (2, 2)
    assert r.a_bytes + r.b_bytes == 81_920
    # at 4 warps the one m64n32 instruction reads A once: 64 x 128 x 2 + 128 x 32 x 2 = 24,576
    r = operand_reads((64, 32, 128), WGMMA, 4, chained=FEEDS)
    assert (r.a_readers, r.b_readers, r.a_bytes + r.b_bytes) == (1, 1, 24_576)


def test_chained_decode_group_runs_mma_sync_at_16_rows():
    # gqa_decode's QK^T: GROUP = 4 query rows x BLOCK_N = 64 keys x D = 128 on 4 warps: 4 % 64
    # != 0, so mma.sync; chained with M < N, every warp on N (warpsPerTileV2): 16 rows, 4 x 8 =
    # 32 columns a step (64 is a multiple): 2 x 16 x 64 x 128 = 262,144 flop, not the 64-row
    # warpgroup instruction's 1,048,576
    p = plan((4, 64, 128), WGMMA, 4, chained=True)
    assert (p.path, p.warps_m, p.warps_n, p.m, p.n, p.flops) == ("warp", 1, 4, 16, 64, 262_144)


def test_plan_over_arrays_matches_scalars():
    shapes = [((64, 256, 32), 8), ((128, 32, 32), 8), ((16, 128, 64), 4), ((64, 64, 32), 2)]
    arr = plan((np.array([s[0] for s, _ in shapes]), np.array([s[1] for s, _ in shapes]),
                np.array([s[2] for s, _ in shapes])), WGMMA, np.array([w for _, w in shapes]))
    for i, (s, w) in enumerate(shapes):
        one = plan(s, WGMMA, w)
        assert (arr.path[i], arr.warps_m[i], arr.warps_n[i], arr.flops[i]) == (one.path, one.warps_m,
                                                                                one.warps_n, one.flops)


def _mma_node(kernel, params):
    a = analyze(parse_file(ROOT / "kernels" / kernel), None, H200, params, check=False)
    return a, next(n for n in a.root.walk() if n.op is not None and n.op.opcode == "mma")


def test_fp8_n_major_b_is_transposed_in_registers():
    """gemm_fp8_kn loads B[K, N] as stored (N contiguous): the 8-bit warpgroup mma cannot
    transpose it, so it goes through registers. 64 x 256 x 64, 4 warps: each thread loads
    16 fp8 (16 B) along N, so 256 / 16 = 16 lanes of a warp lie along N, each on another row
    of the K-major destination (64 B apart x 16 = 1024 B: the same bank): one warp store of
    32 bytes takes 16 cycles. 64 x 256 / 32 = 512 stores x 16 = 8192 cycles per trip."""
    params = {"M": 4096, "N": 4096, "K": 4096, "BM": 64, "BN": 256, "BK": 64, "WARPS": 4, "STAGES": 3}
    _, node = _mma_node("gemm_fp8_kn.tile", params)
    assert node.mma_k_major == (True, False)
    (t,) = register_transposes(node, WGMMA, 8, 4)
    assert (t.operand, t.conflict, t.cycles) == ("B", 16, 8192)
    # gemm_fp8.tile loads B^T[N, K] and transposes the view: K-major, nothing to do
    _, node = _mma_node("gemm_fp8.tile", params)
    assert node.mma_k_major == (True, True)
    assert register_transposes(node, WGMMA, 8, 4) == []
    # bf16 B[K, N]: wgmma transposes 16-bit operands itself
    _, node = _mma_node("gemm.tile", params)
    assert node.mma_k_major == (True, False)
    assert register_transposes(node, WGMMA, 16, 4) == []


def test_fp8_n_major_trip_is_the_unpipelined_chain():
    """The same config's k-loop: two CTAs per SM (the estimate's occupancy) each spend
    8192 / 1.98 = 4137.37 ns of shared-memory cycles per trip on the transpose, so the
    round of two is at least 8274.75 ns; the K-major kernel's round is far below
    (64 x 256 x 64 x 2 flop x 2 CTAs / (8192 x 1.98 x 0.74) = 174.8 ns of tensor work)."""
    params = {"M": 4096, "N": 4096, "K": 4096, "BM": 64, "BN": 256, "BK": 64, "WARPS": 4, "STAGES": 3}
    res = {"threads": 128, "regs": 207, "smem": 28672, "spills": 0}
    a = analyze(parse_file(ROOT / "kernels" / "gemm_fp8_kn.tile"), None, H200, params, resources=res, check=False)
    b = analyze(parse_file(ROOT / "kernels" / "gemm_fp8.tile"), None, H200, params, resources=res, check=False)
    (lt,) = a.launches
    assert lt.resident == 2
    # 64 trips per CTA: the smem engine of one full batch is at least 64 x 2 x 4137.37 ns
    assert lt.engines["smem"] >= 64 * 2 * 8192 / 1.98 - 1e-6
    assert float(a.metrics["performance.predicted_ns"]) > 5 * float(b.metrics["performance.predicted_ns"])


def test_the_instruction_shape_is_the_profiles():
    """hw_profiles/h100_sxm.toml (h200_sxm inherits it) states instruction_m / _n / _k 64, 8, 16
    (wgmma m64n8k16), a100_sxm.toml 16, 8, 16 (mma.sync m16n8k16); the Machine prices with the same
    tuple the register estimate and the operand reads lay out with."""
    from tfx.analysis.machine import Machine
    from tfx.analysis.mma_layout import instruction_shape
    assert instruction_shape(H200) == (64, 8, 16)
    assert instruction_shape(load_profile("a100_sxm")) == (16, 8, 16)
    assert Machine(load_profile("a100_sxm"), "cta").inst == (16, 8, 16)


def test_path_share_is_one_a_mask_or_none():
    """A scalar path that is the one asked for applies whole (1), one that is not applies nowhere (None);
    a sweep's paths give 1.0 / 0.0 per configuration, or None where no configuration takes the path."""
    assert path_share("warpgroup", "warpgroup") == 1
    assert path_share("warp", "warpgroup") is None
    assert path_share(np.array(["warp", "warpgroup", "warp"]), "warpgroup").tolist() == [0.0, 1.0, 0.0]
    assert path_share(np.array(["warp", "warp"]), "warpgroup") is None
