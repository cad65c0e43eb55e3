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


def _imports_of(package: str, forbidden: str) -> list[str]:
    """``file:line name`` of every place a module of ``tfx/<package>`` imports ``forbidden``
    (a module or any below it), at the top or inside a function, or names it in a string
    (an ``importlib.import_module`` by name is still an import), read from the source."""
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent / "tfx" / package
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [w.strip("`'\",.:()") for w in node.value.split()]
            else:
                names = []
            found += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names
                      if n == forbidden or n.startswith(forbidden + ".")]
    return found


def test_tui_imports_no_cli():
    """The explorer builds on the core layers, never on the CLI (issue 14 item 6): no module
    of tfx/tui imports tfx.cli."""
    assert _imports_of("tui", "tfx.cli") == []


def test_cli_imports_no_tui():
    """Nor the CLI the explorer: ``tfx open`` lives in tfx/tui/open_command.py and the
    command table (tfx/command_table.py, above both) names it; no module of tfx/cli
    imports tfx.tui or names it for importlib."""
    assert _imports_of("cli", "tfx.tui") == []


def test_the_scan_finds_an_import():
    """The scan is not vacuous: the command table (outside both packages) does name the
    explorer's module, and the scan of tfx/cli sees tfx.cli's own modules."""
    table = (__import__("pathlib").Path(__file__).resolve().parent.parent / "tfx" / "command_table.py")
    assert '"tfx.tui.open_command"' in table.read_text(encoding="utf-8")
    assert any(hit.startswith("main.py:") for hit in _imports_of("cli", "tfx.command_table"))
    assert any(" tfx.cli.common" in hit for hit in _imports_of("cli", "tfx.cli.common"))
