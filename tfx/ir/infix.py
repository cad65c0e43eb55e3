"""Infix text with the fewest parentheses that keep an expression tree.

Integer index expressions (:mod:`tfx.ir.expr`) and real scalar operands
(:mod:`tfx.ir.scalar`) are different trees printed by one rule: every binary operator is
left-associative, a unary minus binds tighter than any of them, and an operand is
parenthesized only where it would otherwise read as a different tree. Each module walks
its own node types and hands the operator cases to these functions with its ``to_text``.
"""

from __future__ import annotations

from typing import Callable, Iterable

# A unary minus binds tighter than every binary operator (+ - at 1, * / % at 2).
NEG_PRECEDENCE = 3


def binary_text(to_text: Callable, op: str, lhs, rhs, prec: int, parent_prec: int, right: bool) -> str:
    """``lhs op rhs`` for an operator of precedence ``prec`` under a parent of ``parent_prec``."""
    text = f"{to_text(lhs, prec)} {op} {to_text(rhs, prec, right=True)}"
    # Left-associative: a right operand of equal precedence needs parentheses.
    if prec < parent_prec or (right and prec == parent_prec):
        return f"({text})"
    return text


def neg_text(to_text: Callable, operand) -> str:
    return "-" + to_text(operand, NEG_PRECEDENCE)


def call_text(to_text: Callable, func: str, args: Iterable, open_: str = "(", close: str = ")") -> str:
    """``func(a, b)``; with ``[`` ``]`` an indexed read ``tensor[i, j]``."""
    return f"{func}{open_}" + ", ".join(to_text(a) for a in args) + close
