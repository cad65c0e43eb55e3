"""Scalar operands: real-valued expressions of parameters (``1.0 / N``, ``log2e / sqrt(D)``).

A scalar operand of an elementwise op (or the value of ``fill``) is a number the
kernel computes once, at compile time, from its parameters and lets: kernels
write ``mul %sum_sq, 1.0 / N`` instead of the literal for one N. Arithmetic is
real (float64): ``/`` is true division here, unlike index expressions where it
floors. Names resolve to parameters and lets first, then to the constants below.
The value never changes a count; ``tfx run`` (the executor) uses it. A compare's
scalar may also name mesh coordinates and loop variables (the verifier allows it
there only): evaluated under an environment holding them, it is one value per position.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from tfx.arrays import is_array
from tfx.errors import SourceLocation, TfxError
from tfx.ir.infix import binary_text, call_text, neg_text

CONSTANTS = {
    "inf": math.inf,
    "pi": math.pi,
    "e": math.e,
    "log2e": 1.0 / math.log(2.0),   # log2(e): exp(x) = exp2(x * log2e)
    "ln2": math.log(2.0),
}

# name -> number of arguments
FUNCTIONS = {"sqrt": 1, "rsqrt": 1, "exp": 1, "exp2": 1, "log": 1, "log2": 1,
             "pow": 2, "min": 2, "max": 2}

PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


class ScalarExpr:
    """Base class; subclasses are frozen dataclasses compared structurally (locations ignored)."""

    loc: SourceLocation | None

    def names(self) -> set[str]:
        """Parameter, let or constant names used."""
        raise NotImplementedError

    def evaluate(self, env: Mapping[str, Any]):
        raise NotImplementedError


def _loc():
    return field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Num(ScalarExpr):
    """A literal, kept as written (without ``_`` separators): ``0.5``, ``-1e-6``, ``3``."""

    text: str
    loc: SourceLocation | None = _loc()

    def names(self):
        return set()

    def evaluate(self, env):
        return float(int(self.text, 0)) if _is_int_text(self.text) else float(self.text)


def _is_int_text(text: str) -> bool:
    t = text.lstrip("-")
    return t.isdigit() or t[:2].lower() == "0x"


@dataclass(frozen=True)
class Ref(ScalarExpr):
    """A parameter or let (its integer value as a real), else a named constant."""

    name: str
    loc: SourceLocation | None = _loc()

    def names(self):
        return {self.name}

    def evaluate(self, env):
        if self.name in env:
            v = env[self.name]
            return v.astype(float) if is_array(v) else float(v)
        if self.name in CONSTANTS:
            return CONSTANTS[self.name]
        raise TfxError(f"unknown name {self.name!r} in a scalar operand", where=self.loc)


@dataclass(frozen=True)
class Neg(ScalarExpr):
    operand: ScalarExpr
    loc: SourceLocation | None = _loc()

    def names(self):
        return self.operand.names()

    def evaluate(self, env):
        return -self.operand.evaluate(env)


@dataclass(frozen=True)
class Bin(ScalarExpr):
    op: str            # + - * /
    lhs: ScalarExpr
    rhs: ScalarExpr
    loc: SourceLocation | None = _loc()

    def names(self):
        return self.lhs.names() | self.rhs.names()

    def evaluate(self, env):
        a, b = self.lhs.evaluate(env), self.rhs.evaluate(env)
        if self.op == "+":
            return a + b
        if self.op == "-":
            return a - b
        if self.op == "*":
            return a * b
        if ((b == 0).any() if is_array(b) else b == 0):
            raise TfxError(f"division by zero in the scalar operand {to_text(self)}", where=self.loc)
        return a / b


@dataclass(frozen=True)
class Func(ScalarExpr):
    func: str
    args: tuple[ScalarExpr, ...]
    loc: SourceLocation | None = _loc()

    def names(self):
        return set().union(*(a.names() for a in self.args))

    def evaluate(self, env):
        import numpy as np        # (only kernels with scalar functions: their results are numpy's)
        vals = [a.evaluate(env) for a in self.args]
        x = vals[0]

        def domain(ok, what):
            if not np.all(ok):
                raise TfxError(f"{self.func} of {_show(x)} in the scalar operand {to_text(self)}: {what}",
                               where=self.loc)

        f = self.func
        if f in ("sqrt", "rsqrt"):
            domain(np.asarray(x) > 0 if f == "rsqrt" else np.asarray(x) >= 0,
                   "needs a positive argument" if f == "rsqrt" else "needs a non-negative argument")
            r = np.sqrt(x)
            return 1.0 / r if f == "rsqrt" else r
        if f in ("log", "log2"):
            domain(np.asarray(x) > 0, "needs a positive argument")
            return np.log(x) if f == "log" else np.log2(x)
        if f == "exp":
            return np.exp(x)
        if f == "exp2":
            return np.exp2(x)
        if f == "pow":
            return np.power(x, vals[1])
        if f == "min":
            return np.minimum(x, vals[1])
        if f == "max":
            return np.maximum(x, vals[1])
        raise AssertionError(f)


def _show(x) -> str:
    return "a value" if is_array(x) else repr(float(x))


def to_text(e: ScalarExpr, parent_prec: int = 0, right: bool = False) -> str:
    """Canonical text with the fewest parentheses that keep the tree."""
    if isinstance(e, Num):
        # A negative literal on the right of a binary operator reads fine (a - -1);
        # as a left operand of * or / it needs no parentheses either (-1 * a).
        return e.text
    if isinstance(e, Ref):
        return e.name
    if isinstance(e, Neg):
        return neg_text(to_text, e.operand)
    if isinstance(e, Func):
        return call_text(to_text, e.func, e.args)
    if isinstance(e, Bin):
        return binary_text(to_text, e.op, e.lhs, e.rhs, PRECEDENCE[e.op], parent_prec, right)
    raise AssertionError(type(e))


ScalarExpr.__str__ = lambda self: to_text(self)  # type: ignore[assignment]


def value(e: ScalarExpr, env: Mapping[str, Any]):
    """The operand's value under ``env`` (a float, or a float array for sweeps)."""
    return e.evaluate(env)
