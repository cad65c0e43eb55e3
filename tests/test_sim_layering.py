"""The simulator uses the analysis through public names only (issue 14 item 8)."""

from __future__ import annotations

import ast
from pathlib import Path

SIM = Path(__file__).resolve().parent.parent / "tfx" / "sim"


def private_imports_from_other_packages(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tfx.") \
                and not node.module.startswith("tfx.sim"):
            found += [f"{path.name}:{node.lineno}: {node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_")]
    return found


def test_sim_imports_no_private_name_of_another_package():
    found = [x for p in sorted(SIM.glob("*.py")) for x in private_imports_from_other_packages(p)]
    assert found == []


def test_the_check_sees_a_private_import(tmp_path):
    """The check itself: a file importing performance's old private name is reported."""
    probe = tmp_path / "probe.py"
    probe.write_text("from tfx.analysis.performance import Machine, _op_demand\n")
    assert private_imports_from_other_packages(probe) == ["probe.py:1: tfx.analysis.performance._op_demand"]
