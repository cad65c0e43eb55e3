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


def test_tui_imports_no_cli():
    """The explorer builds on the core layers, never on the CLI (issue 14 item 6): no module
    of tfx/tui imports tfx.cli, at the top or inside a function (read from the source)."""
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent / "tfx" / "tui"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names
                      if n == "tfx.cli" or n.startswith("tfx.cli.")]
    assert found == []
