"""Scalar operands: real-valued expressions of parameters (docs/language.md, "Scalar operands")."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.ir.bind import bind, check_shapes
from tfx.ir.nodes import Scalar, walk_ops
from tfx.lang import parse_file, parse_text, print_module

KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def kernel(body: str, params: str = "param N = 4096\n  param D = 64") -> str:
    return f"""kernel k {{
  {params}
  tensor X : f32[64, 64] @gmem in
  tensor Y : f32[64, 64] @gmem out
  mesh cta[1] as (p) capture(X, Y) {{
    %x = load X[:, :] -> rmem
    {body}
    store %y -> Y[:, :]
  }}
}}
"""


def scalar_of(module, opcode="mul") -> Scalar:
    op = next(o for o in walk_ops(module.kernels[0].body) if o.opcode == opcode)
    return next(s for s in op.operands + ((op.fill_value,) if op.fill_value else ()) if isinstance(s, Scalar))


def test_one_over_n_is_real_division_of_the_bound_parameter():
    m = parse_text(kernel("%y = mul %x, 1.0 / N"))
    s = scalar_of(m)
    k = m.kernels[0]
    # 1 / 4096 = 2^-12 = 0.000244140625 exactly in binary floating point.
    assert s.value(bind(m, k)) == 0.000244140625
    # At N = 8192: 2^-13 = 0.0001220703125 (the literal rmsnorm.tile used to hard-code).
    assert s.value(bind(m, k, {"N": 8192})) == 0.0001220703125
    # An integer literal divides as a real too: 1 / N is not floor(1 / N) = 0.
    m2 = parse_text(kernel("%y = mul %x, 1 / N"))
    assert scalar_of(m2).value(bind(m2, m2.kernels[0])) == 2.0 ** -12


def test_softmax_scale_from_constants_and_functions():
    m = parse_text(kernel("%y = mul %x, log2e / sqrt(D)"))
    # log2(e) / sqrt(64) = (1 / ln 2) / 8
    expected = 1.0 / math.log(2.0) / 8.0
    assert scalar_of(m).value(bind(m, m.kernels[0])) == pytest.approx(expected, rel=1e-15)
    # D = 128: 1.4426950408889634 / 11.313708498984761 = 0.12751743074...
    assert scalar_of(m).value(bind(m, m.kernels[0], {"D": 128})) == pytest.approx(0.1275174307, rel=1e-9)


@pytest.mark.parametrize("text", [
    "1.0 / N", "log2e / sqrt(D)", "-inf", "-(N + 1) * 0.5", "pow(2, -D) - 1e-6",
    "(N - 1) / (N + 1)", "N - (D - 1)", "--0.5", "max(1, min(N, D)) * pi / e", "rsqrt(N * D) + ln2",
    "exp(1) - exp2(0.5) + log(N) + log2(D)",
])
def test_round_trip_of_printed_scalar_operands(text):
    src = kernel(f"%y = mul %x, {text}")
    m = parse_text(src)
    printed = print_module(m)
    again = parse_text(printed)
    assert again == m
    assert print_module(again) == printed
    assert scalar_of(again).value(bind(again, again.kernels[0])) == scalar_of(m).value(bind(m, m.kernels[0]))


def test_precedence_and_parentheses():
    m = parse_text(kernel("%y = mul %x, (N - 1) / (N + 1)"))
    # (4096 - 1) / (4096 + 1) = 4095 / 4097
    assert scalar_of(m).value(bind(m, m.kernels[0])) == 4095 / 4097
    assert scalar_of(m).text == "(N - 1) / (N + 1)"
    m = parse_text(kernel("%y = mul %x, N - D - 1"))
    # left-associative: (4096 - 64) - 1 = 4031
    assert scalar_of(m).value(bind(m, m.kernels[0])) == 4031.0


def test_fill_takes_a_scalar_expression():
    src = kernel("%f = fill 1.0 / D f32[64, 64] @rmem\n    %y = mul %x, %f")
    m = parse_text(src)
    s = scalar_of(m, "fill")
    assert s.value(bind(m, m.kernels[0])) == 1 / 64
    assert "fill 1.0 / D f32[64, 64] @rmem" in print_module(m)
    m = parse_text(kernel("%f = fill -inf f32[64, 64] @rmem\n    %y = max %x, %f"))
    assert scalar_of(m, "fill").value(bind(m, m.kernels[0])) == -math.inf


@pytest.mark.parametrize("body, message", [
    ("%y = mul %x, 1.0 / Q", "unknown name 'Q' in a scalar operand"),
    ("%y = mul %x, 1.0 / p", "p is a mesh coordinate or loop variable"),
    ("%y = mul %x, X", "X is a tensor: an operand reads a window of it"),
    ("%y = mul %x, ceil(N)", "unknown function 'ceil' in a scalar operand"),
    ("%y = mul %x, pow(N)", "pow takes 2 arguments, found 1"),
])
def test_refusals_name_the_place(body, message):
    with pytest.raises(TfxError) as err:
        parse_text(kernel(body), "s.tile")
    assert message in str(err.value)
    assert str(err.value).startswith("s.tile:8:")


@pytest.mark.parametrize("text, message", [
    ("1.0 / (N - 4096)", "division by zero in the scalar operand 1.0 / (N - 4096)"),
    ("sqrt(64 - D - 1)", "sqrt of -1.0 in the scalar operand sqrt(64 - D - 1): needs a non-negative argument"),
    ("log(D - 64)", "log of 0.0 in the scalar operand log(D - 64): needs a positive argument"),
])
def test_values_are_checked_when_binding(text, message):
    m = parse_text(kernel(f"%y = mul %x, {text}"), "s.tile")
    with pytest.raises(TfxError) as err:
        check_shapes(m, m.kernels[0], bind(m, m.kernels[0]))
    assert message in str(err.value)
    assert str(err.value).startswith("s.tile:8:")


def test_shipped_kernels_compute_their_scales_from_parameters():
    """rmsnorm divides by its own N; the attention kernels scale by log2(e) / sqrt(D) of their D."""
    m = parse_file(KERNELS / "rmsnorm.tile")
    k = m.kernels[0]
    s = scalar_of(m)
    assert s.text == "1.0 / N"
    assert s.value(bind(m, k, {"N": 5120})) == 1 / 5120
    for name in ("flash_prefill.tile", "gqa_decode.tile", "sip_decode_attention.tile"):
        m = parse_file(KERNELS / name)
        for k in m.kernels:
            scales = [o for op in walk_ops(k.body) if op.result == "%s_scaled" for o in op.operands
                      if isinstance(o, Scalar)]
            # flash_prefill scales in both its stages (unmasked and masked blocks)
            assert scales and {s.text for s in scales} == {"log2e / sqrt(D)"}, (name, k.name)
            # D = 64: log2(e) / 8 = 0.18033688011...
            hw = load_profile("sip") if name.startswith("sip_") else None   # its units(cube), units(pe)
            assert scales[0].value(bind(m, k, {"D": 64}, profile=hw)) == pytest.approx(0.18033688011112042, rel=1e-12)


from hypothesis import given, settings
from hypothesis import strategies as st

_ATOMS = st.sampled_from(["N", "D", "0.5", "3", "1e-6", "0x10", "inf", "pi", "e", "log2e", "ln2", "2."])


def _exprs(depth=3):
    if depth == 0:
        return _ATOMS
    sub = _exprs(depth - 1)
    return st.one_of(
        _ATOMS,
        st.builds(lambda a, op, b: f"{a} {op} {b}", sub, st.sampled_from(["+", "-", "*", "/"]), sub),
        st.builds(lambda a: f"-{a}", sub),
        st.builds(lambda a: f"({a})", sub),
        st.builds(lambda f, a: f"{f}({a})", st.sampled_from(["sqrt", "exp", "log2", "rsqrt"]), sub),
        st.builds(lambda f, a, b: f"{f}({a}, {b})", st.sampled_from(["pow", "min", "max"]), sub, sub),
    )


@settings(max_examples=150, deadline=None)
@given(_exprs())
def test_any_scalar_expression_round_trips(text):
    """Printing keeps the tree: parse(print(parse(x))) == parse(x), and printing is a fixed point."""
    m = parse_text(kernel(f"%y = mul %x, {text}"))
    printed = print_module(m)
    again = parse_text(printed)
    assert again == m
    assert print_module(again) == printed
