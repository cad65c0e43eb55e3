"""Comparisons, select, iota and the i64 dtype: parsed, printed, verified, counted, simulated.

Every expected number is derived by hand in the test's docstring or comments.
"""

from __future__ import annotations

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.counting import Counter
from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.ir.bind import bind, check_shapes
from tfx.ir.types import DTYPES
from tfx.lang import parse_text, print_module
from tfx.sim import simulate

MASK = """kernel masked {
  param S = 256
  param BM = 64
  param BN = 32

  tensor X : f32[S, S] @gmem in
  tensor Y : f32[S, S] @gmem out

  mesh cta[S / BM, S / BN] as (pm, pn) capture(X, Y) {
    %x = load X[pm * BM : BM, pn * BN : BN] -> rmem
    %rows = iota int32[BM, BN] @rmem axis 0 from pm * BM
    %cols = iota int32[BM, BN] @rmem axis 1 from pn * BN
    %keep = ge %rows, %cols
    %y = select %keep, %x, -inf
    store %y -> Y[pm * BM : BM, pn * BN : BN]
  }
}
"""


def count(text, params=None):
    m = parse_text(text, "t.tile")
    k = m.kernel()
    return Counter(m, k, bind(m, k, params or {})).run()


def op_node(root, label):
    return next(n for n in root.walk() if n.label == label)


def test_round_trip():
    m = parse_text(MASK)
    text = print_module(m)
    assert parse_text(text) == m
    assert "%rows = iota int32[BM, BN] @rmem axis 0 from pm * BM" in text
    assert "%keep = ge %rows, %cols" in text
    assert "%y = select %keep, %x, -inf" in text


def test_mask_counts_per_op():
    """32 CTAs (256/64 x 256/32), each on a 64 x 32 = 2048-element tile.

    iota int32: writes 2048 x 4 = 8192 B of rmem per CTA, no work.
    ge on int32: 2048 compares per CTA, 32 x 2048 = 65,536 in all; reads both iotas
    (2 x 8192 = 16,384 B), writes a bool tile (2048 x 1 B).
    select f32: 2048 selections per CTA (65,536 in all), reads the bool condition (2048 B)
    and %x (8192 B) = 10,240 B; the -inf is an immediate, not read; writes 8192 B.
    """
    root = count(MASK)
    iota = op_node(root, "%rows = iota")
    assert iota.per_exec == {("traffic", "rmem", "write"): 8192}
    ge = op_node(root, "%keep = ge")
    assert ge.per_exec == {("flops", "int32", "compare"): 2048, ("traffic", "rmem", "read"): 16384,
                           ("traffic", "rmem", "write"): 2048}
    sel = op_node(root, "%y = select")
    assert sel.per_exec == {("flops", "f32", "select"): 2048, ("traffic", "rmem", "read"): 10240,
                            ("traffic", "rmem", "write"): 8192}
    assert root.total[("flops", "int32", "compare")] == 65536
    assert root.total[("flops", "f32", "select")] == 65536


def test_metrics_name_the_work_kinds():
    """compute-cost.compare.<dtype> and compute-cost.select.<dtype>, totals as above; the
    roofline prices them on the vector unit: int32 at 128 flop/cycle/SM, f32 at 256, so
    65,536 / (128 x 132 x 1.98) + 65,536 / (256 x 132 x 1.98) flop/ns
    = 1.95898 + 0.97949 = 2.93848 ns of compute, 3 ns in the roofline's whole ns (rounded up)."""
    m = parse_text(MASK, "t.tile")
    a = analyze(m, None, load_profile("h200_sxm"))
    assert a.metrics["compute-cost.compare.int32.total"] == 65536
    assert a.metrics["compute-cost.select.f32.total"] == 65536
    assert float(a.metrics["roofline.compute_ns"]) == 3


ONE_OP = """kernel one {{
  tensor X : {dt}[64, 32] @gmem in
  tensor Y : {out}[64, 32] @gmem out
  mesh cta[1] as (p) capture(X, Y) {{
    %x = load X[:, :] -> rmem
    {body}
    store %y -> Y[:, :]
  }}
}}
"""


@pytest.mark.parametrize("dt, out, body, vector_ns", [
    # int32 compare: 2048 elements at 128 / 2 = 64 lanes per cycle = 32 cycles;
    # 32 / 1.98 GHz = 16.16 ns, 17 ns in the simulator's integer ns (rounded up).
    ("int32", "bool", "%y = gt %x, 0", 17),
    # f32 compare: 2048 at 256 / 2 = 128 per cycle = 16 cycles = 8.08 ns -> 9 ns.
    ("f32", "bool", "%y = lt %x, 0.5", 9),
    # f32 compare then f32 select: 9 + 9 ns on the vector engine.
    ("f32", "f32", "%c = ne %x, 0.0\n    %y = select %c, %x, 1.0", 18),
])
def test_simulated_on_the_vector_engine(dt, out, body, vector_ns):
    m = parse_text(ONE_OP.format(dt=dt, out=out, body=body), "t.tile")
    a = analyze(m, None, load_profile("h200_sxm"))
    r = simulate(a)
    assert r.engines["vector"]["busy_ns"] == vector_ns
    assert r.engines["special"]["busy_ns"] == 0


@pytest.mark.parametrize("body, message", [
    ("%c = lt %x, %i\n    %y = select %c, %x, 0.0", "lt operand dtypes differ: f32 and int32"),
    ("%y = select %x, %x, 0.0", "select's condition must be a bool tile (from lt, le, gt, ge, eq, ne), found a f32 tile"),
    ("%y = select 1.0, %x, 0.0", "select's condition must be a bool tile (from lt, le, gt, ge, eq, ne), found the number 1.0"),
    ("%c = gt %x, 0.0\n    %y = select %c, 1.0, 0.0", "select needs a tile among its two choices"),
    ("%c = gt %x, 0.0\n    %y = select %c, %x, %i", "select choices' dtypes differ: f32 and int32"),
    ("%c = gt %x, 0.0\n    %y = select %c, %x", "select takes 3 operands (condition, if true, if false), found 2"),
    ("%j = iota int32[64, 32] @rmem axis 2\n    %y = add %x, 0.0", "iota axis 2 out of range for a rank-2 tile"),
    ("%j = iota bool[64, 32] @rmem axis 0\n    %y = add %x, 0.0", "iota counts in a number dtype"),
    ("%j = iota int32[64, 32] @rmem axis 0 from q\n    %y = add %x, 0.0", "unknown name 'q' in the start of %j"),
])
def test_refusals(body, message):
    text = f"""kernel k {{
  tensor X : f32[64, 32] @gmem in
  tensor Y : f32[64, 32] @gmem out
  mesh cta[1] as (p) capture(X, Y) {{
    %x = load X[:, :] -> rmem
    %i = iota int32[64, 32] @rmem axis 0
    {body}
    store %y -> Y[:, :]
  }}
}}
"""
    with pytest.raises(TfxError) as err:
        parse_text(text, "t.tile")
    assert message in str(err.value)
    assert str(err.value).startswith("t.tile:")


def test_select_shapes_checked_when_binding():
    text = """kernel k {
  param N = 32
  tensor X : f32[64, 32] @gmem in
  tensor Y : f32[64, 32] @gmem out
  mesh cta[1] as (p) capture(X, Y) {
    %x = load X[:, :] -> rmem
    %c = iota int32[64, N] @rmem axis 1
    %b = gt %c, 3
    %y = select %b, %x, 0.0
    store %y -> Y[:, :]
  }
}
"""
    m = parse_text(text, "t.tile")
    check_shapes(m, m.kernels[0], bind(m, m.kernels[0]))
    with pytest.raises(TfxError) as err:
        check_shapes(m, m.kernels[0], bind(m, m.kernels[0], {"N": 16}))
    assert "select shapes differ: condition [64, 16] and [64, 32]; broadcast first" in str(err.value)


def test_i64_is_an_8_byte_integer_and_indexes_a_gather():
    """i64 takes 64 bits: a 16-element i64 index tile is 128 B; gathering its 16 rows of a
    f32[1024, 8] table moves 16 x 8 x 4 = 512 B of gmem."""
    assert DTYPES["i64"].bits == 64 and DTYPES["i64"].family == "int"
    text = """kernel g {
  tensor IDX : i64[16] @gmem in
  tensor T : f32[1024, 8] @gmem in
  tensor Y : f32[16, 8] @gmem out
  mesh cta[1] as (p) capture(IDX, T, Y) {
    %idx = load IDX[:] -> rmem
    %rows = load T[gather(%idx), :] -> smem
    store %rows -> Y[:, :]
  }
}
"""
    m = parse_text(text, "t.tile")
    assert parse_text(print_module(m)) == m
    root = count(text)
    assert op_node(root, "%idx = load").per_exec == {("traffic", "gmem", "read"): 128,
                                                     ("traffic", "rmem", "write"): 128}
    assert op_node(root, "%rows = load").per_exec[("traffic", "gmem", "read")] == 512


def test_flash_prefill_masks_only_the_diagonal_blocks():
    """Defaults: S = 4096, BLOCK_M = 128, BLOCK_N = 64, B * H = 128, so 32 x 128 = 4096 CTAs.
    Query block pm runs stage 1 over pm * 128 / 64 = 2 pm unmasked blocks (mean over pm = 0..31:
    31) and stage 2 over the 2 blocks the diagonal crosses: 4096 x 2 = 8192 masked trips, each
    comparing and selecting 128 x 64 = 8192 elements: 8192 x 8192 = 67,108,864 of each kind.
    The mma work is that of 31 + 2 = 33 blocks per CTA, as before masking:
    2 mmas x 2 x 128 x 64 x 128 flop x 33 x 4096 = 566,935,683,072 bf16 flop."""
    from tfx.lang import parse_file
    from tfx.bundled import bundled_kernel
    m = parse_file(bundled_kernel("flash_prefill.tile"))
    k = m.kernel()
    root = Counter(m, k, bind(m, k)).run()
    loops = [n for n in root.walk() if n.kind == "loop"]
    assert [n.trips for n in loops] == [31, 2]
    assert root.total[("flops", "int32", "compare")] == 67108864
    assert root.total[("flops", "f32", "select")] == 67108864
    assert root.total[("flops", "bf16", "tensor")] == 2 * 2 * 128 * 64 * 128 * 33 * 4096 == 566935683072
