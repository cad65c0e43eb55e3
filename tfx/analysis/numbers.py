"""Arithmetic that works on one configuration (exact Python ints and Fractions)
and on many at once (numpy arrays), plus the precision lattice.

Scalar analyses stay exact: M = 2**40 costs what M = 4096 costs and loses no
digit. Vectorized sweeps use float64/int64 arrays; the explore layer checks
that both paths agree.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

from tfx.arrays import SCALARS, is_array, loaded_numpy
from tfx.ir.expr import cdiv, emax, emin, where  # re-exported helpers

__all__ = ["ratio", "nbytes", "to_plain", "is_array", "ceil_int", "decimal_value", "ns_at_rate", "cdiv", "emin", "emax", "where",
           "if_else",
           "PRECISIONS", "combine_precision", "Number"]

Number = Any  # int | Fraction | float | np.ndarray


def ratio(a: Number, b: Number) -> Number:
    """a / b, exactly for scalars (an int when it divides), elementwise for arrays."""
    if type(a) is int and type(b) is int:     # most calls: no Fraction is built where b divides a
        if b == 0:
            raise ZeroDivisionError("ratio by zero")
        return a // b if a % b == 0 else Fraction(a, b)
    if (type(a) not in SCALARS or type(b) not in SCALARS) and is_array(a, b):
        import numpy as np
        return np.asarray(a, dtype=np.float64) / np.maximum(np.asarray(b, dtype=np.float64), 1e-300)
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    if b == 0:
        raise ZeroDivisionError("ratio by zero")
    q = Fraction(a) / Fraction(b)
    return q.numerator if q.denominator == 1 else q


def if_else(cond: Number, a: Number, b: Number) -> Number:
    """``a if cond else b``, per configuration where ``cond`` is an array (numpy's where, the
    branches broadcast against it). A scalar ``cond`` picks one branch whole: a scalar stays
    a scalar and an array keeps its own shape, where ``where`` would broadcast the two
    branches together whenever either is an array."""
    if type(cond) in SCALARS or not is_array(cond):
        return a if cond else b
    import numpy as np
    return np.where(cond, a, b)


def where_applies(applies: Number, value: Number) -> Number:
    """``value`` where a term ``applies`` (> 0), else 0: per configuration where either is an array (the
    two broadcast together), ``value if applies else 0`` for two scalars. A trip's round that holds only
    where its mma path is taken (tfx.analysis.warp_trip, converting_trip)."""
    if is_array(value, applies):
        import numpy as np
        return np.where(np.asarray(applies) > 0, value, 0)
    return value if applies else 0


def nbytes(bits_per_element: int, elements: Number) -> Number:
    """Bytes for ``elements`` values of ``bits_per_element`` bits: bit-packed, rounded up to a byte.

    A mean element count (a Fraction, from windows clipped at a tensor's edge)
    is converted exactly, without rounding: it is an average over executions.
    """
    if type(elements) not in SCALARS and is_array(elements):
        import numpy as np
        return np.ceil(np.asarray(elements, dtype=np.float64) * bits_per_element / 8)
    if isinstance(elements, int):
        return -(-(elements * bits_per_element) // 8)
    return ratio(elements * bits_per_element, 8)


def decimal_value(x: Number) -> Number:
    """A profile's float as the decimal it was written as, exactly.

    Facts are parsed to floats (``4.8 TB/s`` -> 4.8e12); the shortest text that reads
    back as the same float is the number the profile states, so Fraction of that text
    is exact where Fraction(x) would carry the float's binary error.
    """
    if isinstance(x, float) and math.isfinite(x):
        return _decimal_of_float(x)
    return x


@functools.lru_cache(maxsize=256)
def _decimal_of_float(x: float) -> Number:
    q = Fraction(repr(x))     # a profile has a few dozen rates: parse each once
    return q.numerator if q.denominator == 1 else q


def ns_at_rate(amount: Number, per_second: Number) -> Number:
    """Nanoseconds to process ``amount`` at ``per_second``: ``amount * 10**9 / rate``.

    Exact (an int or a Fraction) for one configuration, so its ceiling is an exact lower
    bound in whole ns however large the operands; float64 elementwise for sweeps.
    """
    if is_array(amount, per_second) or isinstance(amount, float):
        return amount / (per_second / 1e9)
    return ratio(amount * 10**9, decimal_value(per_second))


def ceil_log2(x: Number) -> Number:
    """ceil(log2(x)) for x >= 1 (values below 1 count as 1: 0 steps); arrays elementwise.
    The steps of a butterfly or tree over x lanes."""
    if is_array(x):
        import numpy as np
        return np.ceil(np.log2(np.maximum(x, 1)))
    return math.ceil(math.log2(max(x, 1)))


def ceil_int(x: Number) -> Number:
    """Integer ceiling (for times in ns)."""
    if type(x) not in SCALARS and is_array(x):
        import numpy as np
        return np.ceil(x)
    if isinstance(x, int):
        return x
    return math.ceil(x)


def to_plain(x: Number) -> Any:
    """JSON-friendly: ints stay ints, integral Fractions become ints, others floats."""
    np = loaded_numpy()           # (no numpy value exists before numpy is imported)
    if np is not None:
        if isinstance(x, np.ndarray):
            return x.tolist()
        if isinstance(x, (np.integer,)):
            return int(x)
        if isinstance(x, (np.floating,)):
            v = float(x)
            return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if isinstance(x, Fraction):
        return x.numerator if x.denominator == 1 else float(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 2**53:
        return int(x)
    return x


# Precision of a quantity: how the number relates to the truth.
#   exact     - the closed form is the count
#   upper     - an upper bound (a trip count replaced by its stated bound, an unclipped window)
#   lower     - a lower bound
#   estimate  - from a stated expected value of a runtime quantity
#   unknown   - bounds point in different directions
PRECISIONS = ("exact", "upper", "lower", "estimate", "unknown")


def combine_precision(*ps: str) -> str:
    """Conservative combination: exact with X is X; upper with lower is unknown."""
    out = "exact"
    for p in ps:
        if p == "exact" or p == out:
            continue
        if out == "exact":
            out = p
        elif {out, p} == {"upper", "lower"} or "unknown" in (out, p):
            out = "unknown"
        elif "estimate" in (out, p):
            out = "estimate"
    return out


def floor_sum(n, m, a, b):
    """sum_{i=0}^{n-1} floor((a*i + b) / m) for n >= 0, m >= 1, any integers a, b.

    Euclid-like reduction in O(log m) steps (the classic floor-sum algorithm), so a
    trip count like cdiv(TILES - sm, CTAS) sums over every position in closed form.
    Works elementwise on numpy int arrays (iterating until every element is done).
    """
    if not is_array(n, m, a, b):
        ans = 0
        if a < 0:
            a2 = a % m
            ans -= n * (n - 1) // 2 * ((a2 - a) // m)
            a = a2
        if b < 0:
            b2 = b % m
            ans -= n * ((b2 - b) // m)
            b = b2
        while True:
            if a >= m:
                ans += n * (n - 1) // 2 * (a // m)
                a %= m
            if b >= m:
                ans += n * (b // m)
                b %= m
            y_max = a * n + b
            if y_max < m:
                return ans
            n, b, m, a = y_max // m, y_max % m, a, m
    import numpy as np
    n, m, a, b = (np.array(x, dtype=np.int64) for x in np.broadcast_arrays(n, m, a, b))
    ans = np.zeros_like(n)
    a2 = a % m
    ans -= np.where(a < 0, n * (n - 1) // 2 * ((a2 - a) // m), 0)
    a = np.where(a < 0, a2, a)
    b2 = b % m
    ans -= np.where(b < 0, n * ((b2 - b) // m), 0)
    b = np.where(b < 0, b2, b)
    active = np.ones(n.shape, dtype=bool)
    while active.any():
        ans += np.where(active, n * (n - 1) // 2 * (a // np.maximum(m, 1)), 0)
        a = np.where(active, a % np.maximum(m, 1), a)
        ans += np.where(active, n * (b // np.maximum(m, 1)), 0)
        b = np.where(active, b % np.maximum(m, 1), b)
        y_max = a * n + b
        active = active & (y_max >= m)
        n, b, m, a = (np.where(active, y_max // np.maximum(m, 1), n), np.where(active, y_max % np.maximum(m, 1), b),
                      np.where(active, a, m), np.where(active, m, a))
    return ans
