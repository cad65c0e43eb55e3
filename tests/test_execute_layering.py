"""tfx/execute sees the IR only: it imports tfx.ir, tfx.errors and itself, never the
language front end, the analysis or the UI (issue 16: it depends on ir and hw only)."""

from __future__ import annotations

import ast
from pathlib import Path

EXECUTE = Path(__file__).resolve().parent.parent / "tfx" / "execute"
ALLOWED = ("tfx.ir", "tfx.hw", "tfx.errors", "tfx.execute")


def foreign_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        found += [f"{path.name}:{node.lineno}: {n}" for n in names
                  if (n == "tfx" or n.startswith("tfx.")) and not n.startswith(ALLOWED)]
    return found


def test_execute_imports_only_the_ir():
    assert [x for p in sorted(EXECUTE.glob("*.py")) for x in foreign_imports(p)] == []


def test_the_check_sees_a_lang_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tfx.lang import parse_file\n")
    assert foreign_imports(probe) == ["probe.py:2: tfx.lang"]
