"""One fact on each mma op: where its operands come from (tfx.analysis.mma_path.mark_operands,
``mma_from_smem``), set once as the scope tree is built and read by the wgmma RS/SS form
(``a_in_registers``), the fragment chain and the load rounds (``fed_from_smem``). Each
expectation is read off the kernel text by hand."""

from __future__ import annotations

from pathlib import Path

from tfx.analysis import mma_path, performance
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file, parse_text

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")


def dots(path_or_text, params=None):
    """The mma op nodes of the analysis of a bundled kernel (a path) or a kernel text, by label."""
    module = parse_file(ROOT / "kernels" / path_or_text) if path_or_text.endswith(".tile") else \
        parse_text(path_or_text, "test.tile")
    a = analyze(module, None, H200, params or {})
    return {c.label: c for c in a.root.mma_ops()}


def test_a_gemm_reads_both_operands_from_shared_memory():
    # kernels/gemm.tile: %a = load A -> smem, %b = load B -> smem, %acc = mma %a, %b, %acc
    (dot,) = dots("gemm.tile").values()
    assert dot.mma_from_smem == (True, True)
    assert mma_path.fed_from_smem(dot) and not mma_path.a_in_registers(dot)


def test_a_register_cast_feeds_b_from_registers():
    # kernels/gemm_w8a16.tile: %w_fp8 = copy %w_packed -> rmem; %w_bf16 = cast %w_fp8 to bf16;
    # mma %a, %w_bf16: A loaded, B computed in the trip (copy to registers, then cast)
    (dot,) = dots("gemm_w8a16.tile").values()
    assert dot.mma_from_smem == (True, False)
    assert not mma_path.fed_from_smem(dot)
    # gemm_w4a16: B = mul(cast(copy), broadcast scale): computed too
    (dot,) = dots("gemm_w4a16.tile").values()
    assert dot.mma_from_smem == (True, False)


def test_attention_scores_from_shared_memory_and_p_from_registers():
    # kernels/flash_attention.tile, both loops (the unmasked one and the diagonal tail): QK^T
    # (%s = mma %q, %k_t) reads Q (loaded before the loop) and K^T (a view of the loaded K); PV
    # (%acc = mma %p_bf16, %v) reads P, computed in the trip from the scores (exp2, cast), and V loaded
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, H200)
    mmas = list(a.root.mma_ops())
    assert [c.label for c in mmas] == ["%s = mma", "%acc = mma"] * 2
    for qk, pv in (mmas[:2], mmas[2:]):
        assert qk.mma_from_smem == (True, True) and not mma_path.a_in_registers(qk)
        assert pv.mma_from_smem == (False, True) and mma_path.a_in_registers(pv)
        assert not mma_path.fed_from_smem(pv)


TWO_LOOPS = """
kernel two {
  param M = 64
  param K = 256
  tensor A : bf16[M, K] @gmem in
  tensor B : bf16[K, M] @gmem in
  tensor C : f32[M, M] @gmem out
  mesh cta[1] as (p) capture(A, B, C) {
    %acc = zeros f32[M, M] @rmem
    loop k = 0 to K / 64 stages 3 carry(%acc) capture(A, B) {
      %a = load A[0 : M, k * 64 : 64] -> smem
      %b = load B[k * 64 : 64, 0 : M] -> smem
      %acc = mma %a, %b, %acc
    }
    %a2 = load A[0 : M, 0 : 64] -> smem
    %b2 = load B[0 : 64, 0 : M] -> smem
    %s = mul %a2, %a2
    %acc2 = mma %s, %b2, %acc
    store %acc2 -> C[0 : M, 0 : M]
  }
}
"""


def test_each_mma_is_marked_by_its_innermost_region():
    # the k-loop's dot: both loaded in its trip; the dot after the loop, in the mesh body: A is
    # %s = mul of a loaded tile (computed), B loaded. The mesh body's walk passes the loop's dot
    # too, which its loop marked first (innermost region first)
    got = dots(TWO_LOOPS)
    assert got["%acc = mma"].mma_from_smem == (True, True)
    assert got["%acc2 = mma"].mma_from_smem == (False, True)


def test_the_load_rounds_and_the_fragment_chain_read_the_one_fact():
    # gemm.tile 16x128x64 on 2 warps at 1 stage: 9 dependent rounds (the census,
    # tfx/analysis/triton_load_rounds.py); gemm_w8a16 at the same tile feeds B from a register cast,
    # a k-loop neither census compiled: one round, no chain
    params = dict(M=32, N=8192, K=8192, BM=16, BN=128, BK=64, WARPS=2, STAGES=1, GROUP_M=1)
    for kernel, rounds in (("gemm.tile", True), ("gemm_w8a16.tile", False)):
        a = analyze(parse_file(ROOT / "kernels" / kernel), None, H200, params)
        line = next(t.detail for t in a.terms if t.name == "unpipelined trip")
        assert ("9 dependent rounds" in line) is rounds


def test_the_fragment_chain_is_computed_once_a_loop(monkeypatch):
    # gemm.tile's one k-loop on a launch with a full wave and a tail (32x4096x8192, 16x128x32 on
    # 2 warps: 64 CTAs < 132 SMs, so the tail batch is timed as well as the full one) and the
    # breakdown line: one computation of the chain, which the trip and its breakdown both read
    calls = []
    real = performance._fragment_chain_of
    monkeypatch.setattr(performance, "_fragment_chain_of", lambda *a: calls.append(a[0].id) or real(*a))
    a = analyze(parse_file(ROOT / "kernels" / "gemm.tile"), None, H200,
                dict(M=32, N=4096, K=8192, BM=16, BN=128, BK=32, WARPS=2, STAGES=5, GROUP_M=1),
                resources={"threads": 64, "regs": 96, "spills": 0})
    assert len(calls) == 1
    # ... and the breakdown shows that chain: 8 x 34 + 8 x 24 = 464 cycles (tests/test_fragment_chain.py)
    assert "8 ldmatrix x 34 + 8 mma x 24 cycles = 464 cycles" in {t.name: t.detail for t in a.terms}["warp-mma trip"]
