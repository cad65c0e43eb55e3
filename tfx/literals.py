"""Numbers typed by people (``--set BM=64``, ``--sweep 16..256:x2``, option values), read
strictly: ASCII digits only and within 64 bits.

Python's ``int()`` and ``float()`` accept any Unicode digit (``int("٣") == 3``) and
integers of any size; a command line that means something else than it shows, or a
value no 64-bit column can hold, is refused here with one line instead.
"""

from __future__ import annotations

import math
import re

INT64_MAX = 2 ** 63 - 1

_INT = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F](?:_?[0-9a-fA-F])*|[0-9](?:_?[0-9])*)", re.ASCII)
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|nan)",
                    re.ASCII | re.IGNORECASE)


def parse_int(text: str) -> int:
    """``"64"``, ``"-4"``, ``"1_048_576"``, ``"0x100"`` as an int within 64 bits.

    ValueError (with the reason) for anything else: other digits than ASCII, a float,
    a value above 2^63 - 1 in magnitude.
    """
    t = text.strip()
    if not _INT.fullmatch(t):
        raise ValueError("expected an integer")
    try:
        value = int(t, 0)
    except ValueError:  # 007: a leading zero, refused as the language refuses it
        raise ValueError("expected an integer without leading zeros") from None
    if abs(value) > INT64_MAX:
        raise ValueError("does not fit a 64-bit integer")
    return value


def parse_float(text: str) -> float:
    """A decimal number (ASCII), as a float; ValueError otherwise. ``nan``/``inf`` parse:
    the caller decides whether to take them (``require_finite``)."""
    t = text.strip()
    if not _FLOAT.fullmatch(t):
        raise ValueError("expected a number")
    return float(t)


def require_finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("expected a finite number")
    return value
