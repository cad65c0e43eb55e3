"""Is this value a numpy array? -- answered without importing numpy.

One configuration is analysed with Python ints and Fractions (exact); only sweeps
(explore's vectorized path, the explorer's charts) hand the layers numpy arrays, and
whatever built such an array imported numpy first. So while numpy is not loaded no value
can be an array, and the scalar path (``tfx analyze``, ``tfx simulate``, ``tfx --help``)
never pays numpy's import (about 0.1 s of CPU). The array branches import numpy where
they run; it is loaded by then.
"""

from __future__ import annotations

import sys
from fractions import Fraction

# The types of one configuration's values: exact ints and Fractions, floats, and the bools
# its comparisons give. No array is one of them, so ``is_array`` and the arithmetic helpers
# (tfx.ir.expr, tfx.analysis.numbers) answer for them by their type alone, without asking
# numpy: an analysis makes ~10,000 such calls a keystroke.
SCALARS = frozenset({int, bool, float, Fraction})


def loaded_numpy():
    """The numpy module when something imported it, else None."""
    return sys.modules.get("numpy")


def is_array(*values) -> bool:
    """True when any of ``values`` is a numpy array."""
    for v in values:
        if type(v) not in SCALARS:
            np = sys.modules.get("numpy")
            if np is not None and isinstance(v, np.ndarray):
                return True
    return False


def is_integer(value) -> bool:
    """An int or a numpy integer scalar, not a bool."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.integer)
