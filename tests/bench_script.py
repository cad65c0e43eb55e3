"""Load a script under bench/ as a module, for the tests of its pure functions (bench/ is not a
package: scripts there run as ``python3 bench/NAME.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_bench(relpath: str):
    """The module of bench/<relpath>.py (``"accuracy"``, ``"h200/spill_sass_waits"``), executed once
    per call under its file's name."""
    path = ROOT / "bench" / f"{relpath}.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
