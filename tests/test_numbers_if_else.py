"""tfx.analysis.numbers.if_else: ``a if cond else b``, per configuration only where the
condition is an array, so a scalar condition never changes a branch's shape."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tfx.analysis.numbers import if_else


def test_scalar_condition_picks_one_branch_exactly():
    # one configuration: the branch itself comes back, an exact Fraction stays one
    assert if_else(True, Fraction(3, 2), 7) == Fraction(3, 2)
    assert isinstance(if_else(True, Fraction(3, 2), 7), Fraction)
    assert if_else(False, Fraction(3, 2), 7) == 7
    assert type(if_else(2 > 1, 5, 0)) is int


def test_scalar_condition_keeps_the_chosen_branchs_shape():
    # a scalar condition with an array on one side: the chosen side whole, not the two
    # broadcast together (numpy's where(False, [1, 2, 3], 0) would be [0, 0, 0], shape (3,))
    a = np.array([1, 2, 3])
    assert if_else(False, a, 0) == 0
    assert not isinstance(if_else(False, a, 0), np.ndarray)
    assert if_else(True, a, 0) is a
    # two arrays of shapes (2, 1) and (1, 3): the chosen one's shape, not the (2, 3) of both
    col, row = np.array([[1], [2]]), np.array([[7, 8, 9]])
    assert if_else(True, col, row).shape == (2, 1)
    assert if_else(False, col, row).shape == (1, 3)


def test_array_condition_picks_per_configuration():
    # three configurations, the condition true in the first and the last:
    # [10, 2, 30] from a = [10, 20, 30] and b = 2 broadcast
    cond = np.array([True, False, True])
    got = if_else(cond, np.array([10, 20, 30]), 2)
    assert got.tolist() == [10, 2, 30]
    # a numpy bool scalar is no array: it picks like a Python bool
    assert if_else(np.bool_(False), 4, 9) == 9


def test_where_applies_keeps_a_round_only_where_its_term_applies():
    """Two scalars: the value or 0. An array of applies over a scalar value: per configuration
    (applies 1, 0, 2 over 5.0: 5, 0, 5). A scalar applies over an array broadcasts: 1 keeps the
    array, 0 gives an array of zeros (not a scalar), so a sweep keeps its shape."""
    from tfx.analysis.numbers import where_applies
    assert where_applies(1, 7.5) == 7.5 and where_applies(0, 7.5) == 0
    assert where_applies(np.array([1, 0, 2]), 5.0).tolist() == [5.0, 0.0, 5.0]
    assert where_applies(1, np.array([3.0, 4.0])).tolist() == [3.0, 4.0]
    assert where_applies(0, np.array([3.0, 4.0])).tolist() == [0.0, 0.0]
