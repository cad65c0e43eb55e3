"""The arithmetic helpers answer one configuration's values by their type (tfx.arrays.SCALARS:
int, bool, float, Fraction) before they ask numpy, and answer as asking numpy did: the same
value of the same type for scalars, elementwise for arrays, and a numpy scalar (no array, not
one of those types) through the general path."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tfx.analysis.numbers import ceil_int, nbytes, ratio
from tfx.arrays import is_array
from tfx.errors import TfxError
from tfx.ir.expr import cdiv, emax, emin, floordiv


def test_is_array_by_type_first():
    assert not is_array(1, True, 2.5, Fraction(1, 3))
    assert is_array(1, np.zeros(2))
    # a numpy scalar is not an array, though it is no Python scalar either
    assert not is_array(np.float64(1.0), np.int64(3))


def test_ratio_of_two_ints_is_exact_without_a_fraction_where_it_divides():
    # 6 / 3 = 2, an int; 6 / 4 = 3/2; the sign lands on the numerator: -6 / 4 = 6 / -4 = -3/2
    assert ratio(6, 3) == 2 and type(ratio(6, 3)) is int
    assert ratio(-6, 3) == -2 and type(ratio(-6, 3)) is int
    assert ratio(6, 4) == Fraction(3, 2) and type(ratio(6, 4)) is Fraction
    assert ratio(-6, 4) == ratio(6, -4) == Fraction(-3, 2)
    assert ratio(0, 5) == 0 and type(ratio(0, 5)) is int
    with pytest.raises(ZeroDivisionError, match="ratio by zero"):
        ratio(7, 0)


def test_ratio_of_fractions_floats_numpy_scalars_and_arrays():
    # (3/2) / 3 = 1/2; 3 / (3/2) = 2, an int again
    assert ratio(Fraction(3, 2), 3) == Fraction(1, 2)
    assert ratio(3, Fraction(3, 2)) == 2 and type(ratio(3, Fraction(3, 2))) is int
    assert ratio(3.0, 2) == 1.5 and type(ratio(3.0, 2)) is float
    # a numpy int is neither an array nor a Python int: exactly 6 / 4 = 3/2 still
    assert ratio(np.int64(6), 4) == Fraction(3, 2)
    # [6, 3] / 4 = [1.5, 0.75], float64 elementwise
    assert ratio(np.array([6, 3]), 4).tolist() == [1.5, 0.75]


def test_emax_emin_floordiv_cdiv_keep_a_scalar_s_type():
    assert emax(Fraction(1, 2), 0) == Fraction(1, 2) and type(emax(Fraction(1, 2), 0)) is Fraction
    assert emin(3, 2.5) == 2.5
    assert emax(np.array([1, 5]), 3).tolist() == [3, 5]
    assert emin(np.array([1, 5]), 3).tolist() == [1, 3]
    # 7 // 2 = 3; ceil(7 / 2) = 4; ceil([7, 8] / 2) = [4, 4]
    assert floordiv(7, 2) == 3 and cdiv(7, 2) == 4
    assert cdiv(np.array([7, 8]), 2).tolist() == [4, 4]
    with pytest.raises(TfxError, match="division by zero"):
        floordiv(7, 0)


def test_nbytes_and_ceil_int_by_type():
    # 10 values of 4 bits = 40 bits = 5 bytes; 3 of 4 bits = 12 bits -> 2 bytes; 3/2 of 8 bits = 3/2 bytes
    assert nbytes(4, 10) == 5 and nbytes(4, 3) == 2
    assert nbytes(8, Fraction(3, 2)) == Fraction(3, 2)
    assert nbytes(4, np.array([10, 3])).tolist() == [5.0, 2.0]
    assert ceil_int(Fraction(7, 2)) == 4 and type(ceil_int(7)) is int
    assert ceil_int(np.array([0.5, 2.0])).tolist() == [1.0, 2.0]
