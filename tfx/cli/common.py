"""Argument helpers shared by commands: --hw, --set, --knob, --json output."""

from __future__ import annotations

import json
import sys
from typing import Any

from tfx.errors import TfxError, read_text_file


def parse_assignments(items: list[str] | None, flag: str) -> dict[str, str]:
    """``["A=1", "B=x2"]`` -> ``{"A": "1", "B": "x2"}``; refuses malformed items by name."""
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise TfxError(f"{flag} {item!r}: expected NAME=VALUE")
        name, value = item.split("=", 1)
        name, value = name.strip(), value.strip()
        if not name or not value:
            raise TfxError(f"{flag} {item!r}: expected NAME=VALUE")
        out[name] = value
    return out


def parse_int_assignments(items: list[str] | None, flag: str) -> dict[str, int]:
    out = {}
    for name, value in parse_assignments(items, flag).items():
        try:
            out[name] = int(value.replace("_", ""), 0)
        except ValueError:
            raise TfxError(f"{flag} {name}={value}: expected an integer") from None
    return out


def read_text(path: str) -> str:
    return read_text_file(path)


def emit_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False, default=_json_default)
    sys.stdout.write("\n")


def _json_default(value: Any) -> Any:
    try:
        import numpy as np
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return float(value)
        if isinstance(value, np.ndarray):
            return value.tolist()
    except ImportError:  # pragma: no cover
        pass
    if hasattr(value, "to_json"):
        return value.to_json()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
