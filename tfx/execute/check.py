"""Comparing computed outputs with expected ones, against a tolerance derived from dtypes.

The tolerance of a comparison is ``rtol = 4 ε_low + n ε_high``: ε_low is the machine
epsilon of the least precise float dtype that an arithmetic op of the compared
kernel(s) rounds its result to (mma, elementwise, reduce, cast, all-reduce; outputs'
dtypes included), ε_high that of the most precise one (the accumulator), and n the
largest extent of any tensor, a bound on how many terms a sum accumulates (two orders
of summing n terms differ by up to n ε_high). A bf16 GEMM at K = 256 gets
4 x 2^-7 + 256 x 2^-23 = 0.0312805; an f32-only kernel over 1024-element rows,
4 x 2^-23 + 1024 x 2^-23. Element i passes when

    |got_i - want_i| <= rtol * (|want_i| + rms(want))

the rms term standing for the absolute error that rounding near zero makes (a
sum of terms that cancel keeps the error of its terms). Integer and bool outputs
must match exactly. NaN equals NaN; NaN against a number fails.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfx.execute.dtypes import epsilon
from tfx.ir import ops as opcat
from tfx.ir.nodes import Kernel, Module, walk_ops
from tfx.ir.types import DType

RTOL_FACTOR = 4.0
_ROUNDING_OPS = opcat.MMA | opcat.UNARY | opcat.BINARY | opcat.REDUCE | opcat.CAST | {"allreduce"}


def rounding_dtypes(module: Module, kernel: Kernel) -> set[DType]:
    info = module.info[kernel.name]
    out = {t.type.dtype for t in kernel.tensors if t.role in ("out", "inout")}
    for op in walk_ops(kernel.body):
        if op.opcode in _ROUNDING_OPS and id(op) in info.result_types:
            out.add(info.result_types[id(op)].dtype)
    return out


def derived_rtol(dtypes, terms: int = 1) -> float:
    """4 ε_low + terms ε_high over the float dtypes among ``dtypes`` (0 when none)."""
    eps = [epsilon(d) for d in dtypes if epsilon(d) > 0]
    if not eps:
        return 0.0
    return RTOL_FACTOR * max(eps) + terms * min(eps)


def accumulation_terms(*tensor_sets) -> int:
    """The largest extent of any tensor: a bound on the terms one sum accumulates."""
    return max((max(a.shape, default=1) for tensors in tensor_sets for a in tensors.values()), default=1)


@dataclass(frozen=True)
class OutputCheck:
    """One output compared: the largest errors, the tolerance and the worst element."""

    name: str
    shape: tuple[int, ...]
    max_abs: float
    max_rel: float
    rtol: float
    passed: bool
    worst_index: tuple[int, ...]
    got: float
    want: float
    allowed: float

    def to_json(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "max_abs_error": self.max_abs,
                "max_rel_error": self.max_rel, "rtol": self.rtol, "pass": self.passed,
                "worst": {"index": list(self.worst_index), "got": self.got, "want": self.want,
                          "allowed_error": self.allowed}}


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float) -> OutputCheck:
    """``got`` against ``want`` (same shape) under ``rtol``."""
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(g) & np.isinf(w) & (np.sign(g) == np.sign(w))
    with np.errstate(all="ignore"):
        err = np.abs(g - w)
        err = np.where(both_nan | same_inf, 0.0, err)
        err = np.where(np.isnan(err), np.inf, err)
        finite = np.isfinite(w)
        scale = float(np.sqrt(np.mean(np.square(w[finite])))) if finite.any() else 0.0
        allowed = rtol * (np.where(finite, np.abs(w), 0.0) + scale)
        rel = np.where(w != 0, err / np.abs(w), np.where(err == 0, 0.0, np.inf))
        excess = np.where(err <= allowed, 0.0, np.where(allowed > 0, err / allowed, np.inf))
    if g.size == 0:
        return OutputCheck(name, tuple(g.shape), 0.0, 0.0, rtol, True, (), 0.0, 0.0, 0.0)
    flat = int(np.argmax(excess)) if np.any(excess > 0) else int(np.argmax(err))
    idx = tuple(int(i) for i in np.unravel_index(flat, g.shape))
    return OutputCheck(name, tuple(g.shape), float(err.max()), float(rel.max()), rtol,
                       bool(np.all(err <= allowed)), idx, float(g[idx]), float(w[idx]), float(allowed[idx]))
