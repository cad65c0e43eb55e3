"""Only tfx.tui imports Textual: the core layers and the CLI entry stay free of it."""

from __future__ import annotations

import subprocess
import sys

CODE = r"""
import importlib, sys
for name in ["tfx", "tfx.lang", "tfx.ir", "tfx.hw", "tfx.analysis.analyze", "tfx.cli.main",
             "tfx.tui.core", "tfx.tui.canvas"]:
    importlib.import_module(name)
for name in ["tfx.sim", "tfx.explore", "tfx.model"]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
from tfx.cli.main import build_parser
build_parser()
bad = sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))
print(",".join(bad))
"""


def test_no_textual_outside_tui():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"textual imported: {out.stdout.strip()}"
