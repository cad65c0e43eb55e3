"""The peer of a ``send`` / ``recv`` (``pe[(p + 1) % 2]``), kept as text in the IR.

A small parser for its integer offset expression, with the grammar and meaning of
index expressions (docs/language.md section 5): ``+ - * / %``, unary minus,
parentheses and the functions cdiv, min, max, log2, pow2. The offset is the
absolute coordinate of the peer along the named mesh level.
"""

from __future__ import annotations

import re

from tfx.errors import TfxError
from tfx.ir.expr import FUNCTIONS, BinOp, Call, Const, Expr, Name, Neg

_TOKEN = re.compile(r"\s*(?:(\d[\d_]*)|([A-Za-z_]\w*)|(.))")


def _tokens(text: str) -> list[str]:
    out = []
    for m in _TOKEN.finditer(text):
        tok = m.group(1) or m.group(2) or m.group(3)
        if tok and not tok.isspace():
            out.append(tok)
    return out


def parse_peer(text: str, module=None, loc=None) -> tuple[str, Expr]:
    """``"pe[(p + 1) % 2]"`` -> ("pe", expression of the offset)."""
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*\[(.*)\]\s*", text or "")

    def fail(why: str):
        msg = f"cannot read the peer {text!r}: {why}"
        return module.error(msg, loc) if module is not None else TfxError(msg, where=loc)

    if not m:
        raise fail("expected LEVEL[offset]")
    toks = _tokens(m.group(2))
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take(expected=None):
        nonlocal pos
        tok = peek()
        if tok is None or (expected is not None and tok != expected):
            raise fail(f"expected {expected or 'more'}, found {tok!r}")
        pos += 1
        return tok

    def expr(min_prec=1):
        lhs = unary()
        while peek() in ("+", "-", "*", "/", "%"):
            prec = 1 if peek() in "+-" else 2
            if prec < min_prec:
                break
            op = take()
            lhs = BinOp(op, lhs, expr(prec + 1))
        return lhs

    def unary():
        if peek() == "-":
            take()
            return Neg(unary())
        tok = take()
        if tok == "(":
            e = expr()
            take(")")
            return e
        if tok[0].isdigit():
            return Const(int(tok.replace("_", "")))
        if peek() == "(" and tok in FUNCTIONS:
            take("(")
            args = [expr()]
            while peek() == ",":
                take()
                args.append(expr())
            take(")")
            return Call(tok, tuple(args))
        if re.fullmatch(r"[A-Za-z_]\w*", tok):
            return Name(tok)
        raise fail(f"unexpected {tok!r}")

    e = expr()
    if peek() is not None:
        raise fail(f"unexpected {peek()!r}")
    return m.group(1), e
