"""Batched mma (3-D operands, broadcast batch) and f32 mma priced on the vector unit's FMAs.

Every expected number is derived by hand in the test's docstring or comments.
"""

from __future__ import annotations

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.counting import Counter
from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.ir.bind import bind, check_shapes
from tfx.lang import parse_text, print_module
from tfx.sim import simulate

BATCHED = """kernel bmma {{
  tensor A : bf16[{a}] @gmem in
  tensor B : bf16[{b}] @gmem in
  tensor C : f32[4, 64, 16] @gmem out
  mesh cta[1] as (p) capture(A, B, C) {{
    %a = load A[{aw}] -> smem
    %b = load B[{bw}] -> smem
    %acc = zeros f32[4, 64, 16] @rmem
    %c = mma %a, %b, %acc
    store %c -> C[:, :, :]
  }}
}}
"""


def mma_node(text, params=None):
    m = parse_text(text, "t.tile")
    k = m.kernel()
    check_shapes(m, k, bind(m, k, params or {}))
    root = Counter(m, k, bind(m, k, params or {})).run()
    return next(n for n in root.walk() if n.label == "%c = mma")


@pytest.mark.parametrize("a, b, aw, bw, smem_read", [
    # both batched: a 4 x 64 x 32 x 2 B = 16,384 B, b 4 x 32 x 16 x 2 B = 4096 B
    ("4, 64, 32", "4, 32, 16", ":, :, :", ":, :, :", 16384 + 4096),
    # b shared by the 4 batch entries (2-D): read once, 32 x 16 x 2 B = 1024 B
    ("4, 64, 32", "32, 16", ":, :, :", ":, :", 16384 + 1024),
    # b with a batch axis of 1 broadcasts likewise
    ("4, 64, 32", "1, 32, 16", ":, :, :", ":, :, :", 16384 + 1024),
    # a shared (2-D, 64 x 32 x 2 B = 4096 B), b batched
    ("64, 32", "4, 32, 16", ":, :", ":, :, :", 4096 + 4096),
])
def test_batched_mma_counts(a, b, aw, bw, smem_read):
    """2 x batch x M x N x K = 2 x 4 x 64 x 16 x 32 = 262,144 flop whichever operand is shared;
    the accumulator f32[4, 64, 16] = 16,384 B is read and written in registers."""
    text = BATCHED.format(a=a, b=b, aw=aw, bw=bw)
    node = mma_node(text)
    assert node.per_exec == {("flops", "bf16", "tensor"): 262144,
                             ("traffic", "smem", "read"): smem_read,
                             ("traffic", "rmem", "read"): 16384,
                             ("traffic", "rmem", "write"): 16384}
    m = parse_text(text)
    assert parse_text(print_module(m)) == m


@pytest.mark.parametrize("a, b, message", [
    ("3, 64, 32", "4, 32, 16", "mma batch sizes do not agree: a[3, 64, 32] against acc[4, 64, 16]"),
    ("4, 64, 32", "4, 16, 16", "mma shapes do not agree: a[4, 64, 32] x b[4, 16, 16] -> acc[4, 64, 16]"),
])
def test_batched_mma_shapes_checked_when_binding(a, b, message):
    aw = ", ".join(":" for _ in a.split(","))
    bw = ", ".join(":" for _ in b.split(","))
    m = parse_text(BATCHED.format(a=a, b=b, aw=aw, bw=bw), "t.tile")
    with pytest.raises(TfxError) as err:
        check_shapes(m, m.kernels[0], bind(m, m.kernels[0]))
    assert message in str(err.value)


def test_rank_refusal_names_both_forms():
    text = BATCHED.replace("C : f32[4, 64, 16]", "C : f32[64, 16]").replace(
        "zeros f32[4, 64, 16]", "zeros f32[64, 16]").replace("C[:, :, :]", "C[:, :]")
    with pytest.raises(TfxError) as err:
        parse_text(text.format(a="4, 64, 32", b="4, 32, 16", aw=":, :, :", bw=":, :, :"), "t.tile")
    assert "mma takes 2-D tiles a[M,K], b[K,N], acc[M,N], or batched 3-D ones" in str(err.value)
    assert "found ranks 3, 3, 2" in str(err.value)


F32_SIP = """kernel f32mma {
  tensor A : f32[32, 32] @hbm in
  tensor B : f32[32, 32] @hbm in
  tensor C : f32[32, 32] @hbm out
  mesh cube[1] as (c) capture(A, B, C) {
    mesh pe[1] as (p) capture(A, B, C) {
      %a = load A[:, :] -> tcm
      %b = load B[:, :] -> tcm
      %acc = zeros f32[32, 32] @tcm
      %c = mma %a, %b, %acc
      store %c -> C[:, :]
    }
  }
}
"""


def test_f32_mma_on_sip_runs_as_vector_fmas():
    """sip states no f32 tensor path (compute.tensor.f32 unavailable): the 2 x 32^3 = 65,536
    flop (32,768 FMAs) run on the PE's vector unit at 128 flop/cycle (64 FMA lanes) and 1 GHz:
    65,536 / 128 = 512 cycles = 512 ns of vector work, none on the tensor engine.
    Roofline: 65,536 / (128 x 64 PEs x 1 GHz) = 8 ns."""
    a = analyze(parse_text(F32_SIP, "t.tile"), None, load_profile("sip"))
    assert a.metrics["compute-cost.flops.f32.total"] == 65536
    assert float(a.metrics["roofline.compute_ns"]) == 8
    r = simulate(a)
    assert r.engines["vector"]["busy_ns"] == 512
    assert r.engines["tensor"]["busy_ns"] == 0


def test_f32_mma_on_h200_runs_on_cuda_cores():
    """The H200 (as the H100) has tf32 but no f32 tensor rate: an f32 [64, 32] x [32, 16] mma,
    2 x 64 x 16 x 32 = 65,536 flop, runs at the SM's 256 flop/cycle FMA rate:
    256 cycles / 1.98 GHz = 129.29 ns, 130 ns in the simulator's integer ns.
    Roofline: 65,536 / (256 x 132 x 1.98) = 0.98 ns, 1 ns rounded up."""
    text = """kernel f {
  tensor A : f32[64, 32] @gmem in
  tensor B : f32[32, 16] @gmem in
  tensor C : f32[64, 16] @gmem out
  mesh cta[1] as (p) capture(A, B, C) {
    %a = load A[:, :] -> smem
    %b = load B[:, :] -> smem
    %acc = zeros f32[64, 16] @rmem
    %c = mma %a, %b, %acc
    store %c -> C[:, :]
  }
}
"""
    a = analyze(parse_text(text, "t.tile"), None, load_profile("h200_sxm"))
    assert float(a.metrics["roofline.compute_ns"]) == 1
    r = simulate(a)
    assert r.engines["vector"]["busy_ns"] == 130
    assert r.engines["tensor"]["busy_ns"] == 0
