"""A call that returns a value: a carried accumulator flows through a called kernel.

Every expected number is derived by hand in the test's docstring or comments.
"""

from __future__ import annotations

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.counting import Counter
from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.ir.bind import bind, check_shapes
from tfx.ir.nodes import walk_ops
from tfx.lang import parse_text, print_module
from tfx.sim import simulate

STEP = """// One k-step of a tile GEMM: ACC + A @ B, returned to the caller.
kernel k_step {
  param BM = 64
  param BN = 64
  param BK = 32

  tensor A : bf16[BM, BK] @smem in
  tensor B : bf16[BK, BN] @smem in
  tensor ACC : f32[BM, BN] @rmem in

  %out = mma A[:, :], B[:, :], ACC[:, :]
  return %out
}
"""

GEMM = STEP + """
kernel gemm {
  param M = 256
  param N = 256
  param K = 256
  param TM = 64

  tensor X : bf16[M, K] @gmem in
  tensor W : bf16[K, N] @gmem in
  tensor Y : f32[M, N] @gmem out

  mesh cta[M / TM, N / 64] as (pm, pn) capture(X, W, Y) {
    %acc = zeros f32[TM, 64] @rmem
    loop k = 0 to K / 32 carry(%acc) capture(X, W, pm, pn) {
      %x = load X[pm * TM : TM, k * 32 : 32] -> smem
      %w = load W[k * 32 : 32, pn * 64 : 64] -> smem
      %acc = call k_step(%x, %w, %acc) with (BM = TM)
    }
    store %acc -> Y[pm * TM : TM, pn * 64 : 64]
  }
}
"""


def test_round_trip_and_result_type():
    """The call's value has k_step's returned type with BM bound to the caller's TM and BN
    at its default 64: f32[TM, 64] @rmem, so it can replace the carried %acc."""
    m = parse_text(GEMM, "g.tile")
    assert parse_text(print_module(m)) == m
    assert "%acc = call k_step(%x, %w, %acc) with (BM = TM)" in print_module(m)
    assert "  return %out" in print_module(m)
    call = next(op for op in walk_ops(m.kernel("gemm").body) if op.opcode == "call")
    ty = m.info["gemm"].result_types[id(call)]
    assert (str(ty.dtype), ty.level) == ("f32", "rmem")
    env = bind(m, m.kernel("gemm"), {"TM": 32})
    assert [int(d.evaluate(env)) for d in ty.shape] == [32, 64]
    check_shapes(m, m.kernel("gemm"), env)


def test_counts_through_the_call():
    """16 CTAs (256/64 x 256/64) x 8 k-steps = 128 calls, each a 64 x 64 x 32 mma:
    2 x 64 x 64 x 32 = 262,144 flop, 128 x that = 33,554,432. Per call the mma reads A and B
    in smem (64 x 32 x 2 + 32 x 64 x 2 = 8192 B) and reads and writes the f32 accumulator in
    registers (64 x 64 x 4 = 16,384 B each way); the return is free."""
    m = parse_text(GEMM, "g.tile")
    k = m.kernel("gemm")
    root = Counter(m, k, bind(m, k)).run()
    call = next(n for n in root.walk() if n.kind == "call")
    assert call.total == {("flops", "bf16", "tensor"): 33554432,
                          ("traffic", "smem", "read"): 128 * 8192,
                          ("traffic", "rmem", "read"): 128 * 16384,
                          ("traffic", "rmem", "write"): 128 * 16384}
    ret = next(n for n in root.walk() if n.label == "return")
    assert ret.per_exec == {}


def test_simulated_without_a_command_for_return():
    """One CTA's stream: zeros, 8 x (two loads and the called mma), the store: 1 + 24 + 1 = 26
    commands; return is an alias like a view."""
    m = parse_text(GEMM, "g.tile")
    r = simulate(analyze(m, "gemm", load_profile("h200_sxm")))
    assert r.commands == 26


@pytest.mark.parametrize("text, message", [
    (STEP.replace("  return %out\n", "") + """
kernel c {
  tensor A : bf16[64, 32] @smem in
  tensor B : bf16[32, 64] @smem in
  tensor C : f32[64, 64] @rmem in
  %r = call k_step(A[:, :], B[:, :], C[:, :])
}
""", "k_step returns no value (its last statement is not 'return %v')"),
    (STEP.replace("  return %out\n", "  return %out\n  %z = zeros f32[1] @rmem\n"),
     "'return' must be the kernel's last statement"),
    ("""kernel k {
  tensor X : f32[4] @gmem in
  mesh cta[1] as (p) capture(X) {
    %x = load X[:] -> rmem
    return %x
  }
}
""", "'return' belongs at the kernel's top level"),
    ("""kernel k {
  tensor X : f32[4] @gmem in
  %r = call k(X[:])
  return %r
}
""", "a kernel cannot call itself"),
    ("""kernel a {
  tensor X : f32[4] @rmem in
  %r = call b(X[:])
  return %r
}
kernel b {
  tensor X : f32[4] @rmem in
  %r = call a(X[:])
  return %r
}
""", "call cycle through kernel"),
    (GEMM.replace("%out = mma A[:, :], B[:, :], ACC[:, :]\n  return %out",
                  "%out = mma A[:, :], B[:, :], ACC[:, :]\n  %o16 = cast %out to bf16\n  return %o16"),
     "carried value %acc changes type from f32[TM, 64] @rmem to bf16"),
])
def test_refusals(text, message):
    with pytest.raises(TfxError) as err:
        parse_text(text, "c.tile")
    assert message in str(err.value)
    assert str(err.value).startswith("c.tile:")
