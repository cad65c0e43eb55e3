"""A compare's scalar operand may name mesh coordinates and loop variables: the bound a mask
compares against, one value per position (docs/language.md section 7). Elsewhere a scalar
stays a compile-time number. Expected values are derived by hand in the docstrings."""

from __future__ import annotations

import numpy as np
import pytest

from tfx.analysis.counting import Counter
from tfx.errors import TfxError
from tfx.execute import execute
from tfx.ir.bind import bind
from tfx.lang import parse_text, print_module

# Row p keeps its first 2p + 1 columns.
ROWS = """kernel rows {
  param N = 8

  tensor O : f32[4, N] @gmem out

  mesh cta[4] as (p) capture(O) {
    %i = iota int32[1, N] @rmem axis 1
    %keep = lt %i, p * 2 + 1
    %v = cast %keep to f32
    store %v -> O[p : 1, :]
  }
}
"""


def test_the_bound_is_one_value_per_position():
    """Row p: columns 0..7 compared with 2p + 1: 1, 3, 5, 7 ones in rows 0..3."""
    m = parse_text(ROWS, "rows.tile")
    out = execute(m, m.kernel(None)).tensors["O"]
    want = np.array([[1 if c < 2 * p + 1 else 0 for c in range(8)] for p in range(4)], dtype=np.float32)
    assert np.array_equal(out, want)


def test_the_bound_prints_back_and_round_trips():
    m = parse_text(ROWS, "rows.tile")
    assert print_module(m) == ROWS
    assert parse_text(print_module(m)) == m


def test_a_coordinate_shadows_a_constant_of_its_name():
    """A coordinate named e (not Euler's e = 2.718...): row e keeps columns below e, so
    rows 0..3 hold 0, 1, 2, 3 ones."""
    m = parse_text(ROWS.replace("as (p)", "as (e)").replace("p * 2 + 1", "e")
                   .replace("O[p : 1, :]", "O[e : 1, :]"), "rows.tile")
    out = execute(m, m.kernel(None)).tensors["O"]
    assert out.sum(axis=1).tolist() == [0, 1, 2, 3]


def test_the_bound_varies_the_compare_with_its_loop():
    """Inside loop j (4 trips) a compare against j cannot be hoisted: its logical work is
    4 x 8 = 32 comparisons per position; against N it could be: 8 (it does not vary)."""
    text = """kernel k {
  param N = 8
  tensor O : f32[1, N] @gmem out
  mesh cta[1] as (p) capture(O) {
    %i = iota int32[1, N] @rmem axis 1
    loop j = 0 to 4 capture(%i) {
      %a = lt %i, j
      %b = lt %i, N
    }
    %z = zeros f32[1, N] @rmem
    store %z -> O[0 : 1, :]
  }
}
"""
    m = parse_text(text, "k.tile")
    k = m.kernel(None)
    root = Counter(m, k, bind(m, k)).run()
    ops = {n.op.result: n for n in root.walk() if n.kind == "op" and n.op.result in ("%a", "%b")}
    assert ops["%a"].logical == 4 and ops["%b"].logical == 1
    assert ops["%a"].execs == ops["%b"].execs == 4


@pytest.mark.parametrize("body, where, message", [
    # outside a compare a scalar is compile-time: `    %y = mul %x, 1.0 / p`, p at column 24
    ("    %x = iota f32[1, 8] @rmem axis 1\n    %y = mul %x, 1.0 / p\n", "t.tile:5:24",
     "p is a mesh coordinate or loop variable: scalar operands are compile-time numbers of "
     "parameters, lets and constants (a compare's may name coordinates)"),
    # a loop that does not capture p: `      %y = lt %x, p` inside it, p at column 19
    ("    %x = iota f32[1, 8] @rmem axis 1\n    loop j = 0 to 2 capture(%x) {\n      %y = lt %x, p\n    }\n",
     "t.tile:6:19", "region is not isolated: p is used here but the loop j at line 5 does not capture it "
     "(defined at line 3)"),
])
def test_refusals_name_the_place(body, where, message):
    text = "kernel t {\n  tensor O : f32[1, 8] @gmem out\n  mesh cta[2] as (p) capture(O) {\n" + body + "  }\n}\n"
    with pytest.raises(TfxError) as err:
        parse_text(text, "t.tile")
    assert err.value.headline() == f"{where}: error: {message}"
