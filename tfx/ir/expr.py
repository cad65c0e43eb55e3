"""Integer expressions over kernel parameters, mesh coordinates and loop variables.

Expressions are symbolic in the IR and evaluated against an environment whose
values are Python ints or numpy integer arrays: the same walk over the IR
evaluates one configuration or a million (design-space sweeps rely on this).
``/`` is floor division, as everywhere in tile languages' index arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from tfx.arrays import SCALARS as _SCALARS, is_array as _is_array
from tfx.errors import SourceLocation, TfxError
from tfx.ir.infix import binary_text, call_text, neg_text


class Expr:
    """Base class. Subclasses are frozen dataclasses compared structurally."""

    loc: SourceLocation | None

    def free_names(self) -> set[str]:
        raise NotImplementedError

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def is_const(self) -> bool:
        return not self.free_names()


@dataclass(frozen=True)
class Const(Expr):
    value: int
    loc: SourceLocation | None = field(default=None, compare=False, repr=False)

    def free_names(self) -> set[str]:
        return set()

    def evaluate(self, env):
        return self.value


@dataclass(frozen=True)
class Name(Expr):
    name: str
    loc: SourceLocation | None = field(default=None, compare=False, repr=False)

    def free_names(self) -> set[str]:
        return {self.name}

    def evaluate(self, env):
        try:
            return env[self.name]
        except KeyError:
            level = units_level(self.name)
            if level is not None:   # bound without a profile (tfx.ir.bind refuses it by name first)
                raise TfxError(f"{self.name} is a count of the hardware profile: it needs a profile "
                               "(--hw PROFILE)", where=self.loc) from None
            raise TfxError(f"unknown name {self.name!r} in expression", where=self.loc) from None


# ``units(LEVEL)``: how many units of the hardware profile's hierarchy level LEVEL one device
# has (Profile.units_of: ``units(sm)`` 132 on an H200, ``units(pe)`` 8 x 8 on sip). It parses
# to a Name spelled ``units(LEVEL)``, which no identifier can be: every walk over expressions
# (free names, printing, substitution, sweeps) treats it as the constant it is, and
# tfx.ir.bind puts its value in the environment from the profile the kernel is bound against,
# so a kernel sized by the machine follows a what-if knob (hierarchy.sm.count).
UNITS_FUNCTION = "units"


def units_name(level: str) -> str:
    return f"{UNITS_FUNCTION}({level})"


def units_level(name: str) -> str | None:
    """LEVEL of a name spelled ``units(LEVEL)``; None for any other name."""
    if name.startswith(UNITS_FUNCTION + "(") and name.endswith(")"):
        return name[len(UNITS_FUNCTION) + 1:-1]
    return None


# Binary operators: precedence for printing and their evaluation.
BINARY_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}


def floordiv(a, b):
    if type(b) not in _SCALARS and _is_array(b):
        import numpy as np
        return a // np.maximum(b, 1)
    if b == 0:
        raise TfxError("division by zero in an index expression")
    return a // b


def cdiv(a, b):
    """Ceiling division on non-negative integers (ints or arrays)."""
    return -floordiv(-a, b)


def emin(a, b):
    if (type(a) in _SCALARS and type(b) in _SCALARS) or not _is_array(a, b):
        return min(a, b)
    import numpy as np
    return np.minimum(a, b)


def emax(a, b):
    if (type(a) in _SCALARS and type(b) in _SCALARS) or not _is_array(a, b):
        return max(a, b)
    import numpy as np
    return np.maximum(a, b)


def where(cond, a, b):
    """``a if cond else b``, elementwise for arrays."""
    if _is_array(cond, a, b):
        import numpy as np
        return np.where(cond, a, b)
    return a if cond else b


@dataclass(frozen=True)
class BinOp(Expr):
    op: str
    lhs: Expr
    rhs: Expr
    loc: SourceLocation | None = field(default=None, compare=False, repr=False)

    def free_names(self) -> set[str]:
        return self.lhs.free_names() | self.rhs.free_names()

    def evaluate(self, env):
        a = self.lhs.evaluate(env)
        b = self.rhs.evaluate(env)
        if self.op == "+":
            return a + b
        if self.op == "-":
            return a - b
        if self.op == "*":
            return a * b
        if self.op == "/":
            try:
                return floordiv(a, b)
            except TfxError:
                raise TfxError("division by zero in an index expression", where=self.loc) from None
        if self.op == "%":
            if not _is_array(b) and b == 0:
                raise TfxError("modulo by zero in an index expression", where=self.loc)
            return a % b
        raise AssertionError(self.op)


@dataclass(frozen=True)
class Neg(Expr):
    operand: Expr
    loc: SourceLocation | None = field(default=None, compare=False, repr=False)

    def free_names(self) -> set[str]:
        return self.operand.free_names()

    def evaluate(self, env):
        return -self.operand.evaluate(env)


FUNCTIONS = {"cdiv": 2, "min": 2, "max": 2, "log2": 1, "pow2": 1}


@dataclass(frozen=True)
class Call(Expr):
    func: str
    args: tuple[Expr, ...]
    loc: SourceLocation | None = field(default=None, compare=False, repr=False)

    def free_names(self) -> set[str]:
        return set().union(*(a.free_names() for a in self.args))

    def evaluate(self, env):
        vals = [a.evaluate(env) for a in self.args]
        if self.func == "cdiv":
            if not _is_array(vals[1]) and vals[1] == 0:
                raise TfxError("cdiv by zero", where=self.loc)
            return cdiv(vals[0], vals[1])
        if self.func == "min":
            return emin(vals[0], vals[1])
        if self.func == "max":
            return emax(vals[0], vals[1])
        if self.func == "log2":
            v = vals[0]
            if _is_array(v):
                import numpy as np
                return np.floor(np.log2(np.maximum(v, 1))).astype(np.int64)
            return max(int(v), 1).bit_length() - 1
        if self.func == "pow2":
            v = vals[0]
            # Results must fit the int64 that sweeps evaluate in; numpy refuses negative powers.
            bad = bool(((v < 0) | (v > 62)).any()) if _is_array(v) else not 0 <= v <= 62
            if bad:
                shown = v if not _is_array(v) else "a value"
                raise TfxError(f"pow2 of {shown}: the exponent must be in 0..62", where=self.loc)
            return 2 ** v
        raise AssertionError(self.func)


@dataclass(frozen=True)
class Read(Expr):
    """An element of an integer tensor read at run time: ``PAGE_TABLE[b, j]`` in a window's
    offset (paged KV caches, MoE routing). Its value is data, unknown to the analysis; the
    read itself costs the element's bytes. ``free_names`` are its indices' names (the
    tensor is a tensor, not an integer name)."""

    tensor: str
    indices: tuple[Expr, ...]
    loc: SourceLocation | None = field(default=None, compare=False, repr=False)

    def free_names(self) -> set[str]:
        return set().union(*(a.free_names() for a in self.indices))

    def evaluate(self, env):
        raise TfxError(f"{to_text(self)} is read at run time: its value is data, not known before "
                       "the kernel runs", where=self.loc)


def reads_in(e: Expr) -> list:
    """The runtime reads (``Read`` nodes) in ``e``, outermost first."""
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Read):
            out.append(x)
            stack.extend(x.indices)
        elif isinstance(x, BinOp):
            stack += [x.rhs, x.lhs]
        elif isinstance(x, Neg):
            stack.append(x.operand)
        elif isinstance(x, Call):
            stack.extend(reversed(x.args))
    return out


def to_text(e: Expr, parent_prec: int = 0, right: bool = False) -> str:
    """Canonical text with the fewest parentheses that keep the tree."""
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Name):
        return e.name
    if isinstance(e, Neg):
        return neg_text(to_text, e.operand)
    if isinstance(e, Call):
        return call_text(to_text, e.func, e.args)
    if isinstance(e, Read):
        return call_text(to_text, e.tensor, e.indices, "[", "]")
    if isinstance(e, BinOp):
        return binary_text(to_text, e.op, e.lhs, e.rhs, BINARY_PRECEDENCE[e.op], parent_prec, right)
    raise AssertionError(type(e))


Expr.__str__ = lambda self: to_text(self)  # type: ignore[assignment]


def substitute(e: Expr, mapping: Mapping[str, Expr]) -> Expr:
    if isinstance(e, Name):
        return mapping.get(e.name, e)
    if isinstance(e, BinOp):
        return BinOp(e.op, substitute(e.lhs, mapping), substitute(e.rhs, mapping), e.loc)
    if isinstance(e, Neg):
        return Neg(substitute(e.operand, mapping), e.loc)
    if isinstance(e, Call):
        return Call(e.func, tuple(substitute(a, mapping) for a in e.args), e.loc)
    if isinstance(e, Read):
        return Read(e.tensor, tuple(substitute(a, mapping) for a in e.indices), e.loc)
    return e


def linear_coefficients(e: Expr, var: str, env: Mapping[str, Any], var_range=None, mask=None):
    """If ``e`` is affine in ``var`` (``a*var + b`` with a, b free of var), return (a, b).

    ``a`` and ``b`` are evaluated in ``env`` (which must not bind ``var``).
    Division of an affine form by a var-free divisor counts as affine only
    when both coefficients divide exactly; ``cdiv`` when the slope divides
    exactly. With ``var_range = (first, last)``, ``min``/``max`` of two affine
    forms is the form that wins at both ends (hence everywhere between).
    Returns None when not affine.

    For array environments (sweeps) pass ``mask=[]``: where a condition holds
    only for some elements, the affine form is returned anyway and the
    condition (a bool array) is appended to ``mask``; the caller uses the form
    only where every appended condition holds. Without ``mask`` an array that
    fails anywhere gives None.
    """
    def need(cond) -> bool:
        """True when the form may be used: cond holds, everywhere or (with a mask) recorded."""
        if _is_array(cond):
            if bool(cond.all()):
                return True
            if mask is None:
                return False
            mask.append(cond)
            return True
        return bool(cond)

    def rec(x):
        return linear_coefficients(x, var, env, var_range, mask)

    if reads_in(e):
        return None   # a value read at run time: no closed form

    if var not in e.free_names():
        return 0, e.evaluate(env)
    if isinstance(e, Name):
        return 1, 0
    if isinstance(e, Neg):
        inner = rec(e.operand)
        return None if inner is None else (-inner[0], -inner[1])
    if isinstance(e, BinOp):
        if e.op in "+-":
            l, r = rec(e.lhs), rec(e.rhs)
            if l is None or r is None:
                return None
            s = 1 if e.op == "+" else -1
            return l[0] + s * r[0], l[1] + s * r[1]
        if e.op == "*":
            if var not in e.lhs.free_names():
                k, r = e.lhs.evaluate(env), rec(e.rhs)
                return None if r is None else (k * r[0], k * r[1])
            if var not in e.rhs.free_names():
                k, l = e.rhs.evaluate(env), rec(e.lhs)
                return None if l is None else (k * l[0], k * l[1])
            return None
        if e.op == "/" and var not in e.rhs.free_names():
            d = e.rhs.evaluate(env)
            l = rec(e.lhs)
            if l is None:
                return None
            a, b = l
            if not need((a % d == 0) & (b % d == 0)):
                return None
            return a // d, b // d
    if isinstance(e, Call) and e.func == "cdiv" and var not in e.args[1].free_names():
        d = e.args[1].evaluate(env)
        l = rec(e.args[0])
        if l is None:
            return None
        a, b = l
        if not need(a % d == 0):
            return None
        return a // d, cdiv(b, d)
    if isinstance(e, Call) and e.func in ("min", "max") and var_range is not None:
        l, r = rec(e.args[0]), rec(e.args[1])
        if l is None or r is None:
            return None
        first, last = var_range
        lf, ll = l[0] * first + l[1], l[0] * last + l[1]
        rf, rl = r[0] * first + r[1], r[0] * last + r[1]
        left_wins = (lf <= rf) & (ll <= rl) if e.func == "min" else (lf >= rf) & (ll >= rl)
        right_wins = (rf <= lf) & (rl <= ll) if e.func == "min" else (rf >= lf) & (rl >= ll)
        if _is_array(left_wins, right_wins):
            if not need(left_wins | right_wins):
                return None
            import numpy as np
            return np.where(left_wins, l[0], r[0]), np.where(left_wins, l[1], r[1])
        if left_wins:
            return l
        if right_wins:
            return r
        return None
    return None
