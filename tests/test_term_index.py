"""docs/analysis.md's index of the predicted time's terms against the code that emits them.

Section 8 opens with a table: every term name `tfx analyze` can print in its breakdown, what it
prices, and the paragraph (its bold title) that explains it. The names come from the source, read
statically (every ``Term("name", ...)`` in tfx/, both names of a ``Term("a" if c else "b", ...)``,
and the ``(name, ns, detail)`` tuples tfx.analysis.mma_path's loop notes hand to the breakdown),
so a term on a path no example takes is still counted; the bundled kernels are then analysed on a
GPU and on the tiled accelerator to check that nothing they print is missing from the table.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tfx.analysis.analyze import analyze
from tfx.bundled import bundled_dir
from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "analysis.md"
INDEX_TITLE = "**The breakdown's terms, and where each is explained.**"
# the functions whose (name, ns, detail) tuples become breakdown terms (performance.py's
# `for name, ns, detail in mma_path.breakdown_terms(...)`)
TUPLE_SOURCES = {("mma_path.py", "breakdown_terms"), ("mma_path.py", "wait_terms")}


def _names(node) -> list[str]:
    """The string constants a term's name expression can take."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _names(node.body) + _names(node.orelse)
    return []


def emitted_names() -> dict[str, set[str]]:
    """Term name -> the source files that emit it."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tfx").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                f = node.func
                if (f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)) == "Term":
                    for name in _names(node.args[0]):
                        out.setdefault(name, set()).add(path.name)
            if isinstance(node, ast.FunctionDef) and (path.name, node.name) in TUPLE_SOURCES:
                for t in ast.walk(node):
                    if isinstance(t, ast.Tuple) and len(t.elts) == 3:
                        for name in _names(t.elts[0]):
                            out.setdefault(name, set()).add(path.name)
    return out


def index_rows() -> dict[str, str]:
    """Term name -> its 'explained in' cell, from the table after INDEX_TITLE."""
    text = DOC.read_text()
    start = text.index(INDEX_TITLE)
    rows = {}
    for line in text[start:].splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        m = re.match(r"\| `([^`]+)` \|[^|]*\|[^|]*\| (.+) \|$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def test_the_index_names_every_term_the_code_emits_and_no_other():
    emitted, indexed = emitted_names(), index_rows()
    # the source holds at least the terms every GEMM breakdown prints
    assert {"launch", "fill", "waves", "tail wave", "memory parallelism"} <= emitted.keys()
    missing = sorted(set(emitted) - set(indexed))
    stale = sorted(set(indexed) - set(emitted))
    assert not missing, f"terms the code emits that docs/analysis.md's index lacks: {missing}"
    assert not stale, f"index rows no code emits: {stale}"


def test_every_paragraph_the_index_names_is_in_the_doc():
    """Each bold title in an 'explained in' cell opens a paragraph (bold or italic) or is a heading of docs/analysis.md
    outside the table."""
    text = DOC.read_text()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("| `"))
    headings = {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")}
    for name, where in index_rows().items():
        titles = re.findall(r"\*\*([^*]+)\*\*", where)
        assert titles, f"{name}: no bold title in {where!r}"
        for title in titles:
            assert f"*{title}" in body or any(h.startswith(title) for h in headings), \
                f"{name}: no paragraph titled {title!r}"


@pytest.mark.parametrize("profile", ["h200_sxm", "sip"])
def test_every_term_a_bundled_kernel_prints_is_indexed(profile):
    indexed = index_rows()
    hw = load_profile(profile)
    seen = set()
    for path in sorted(bundled_dir("kernels").glob("*.tile")):
        module = parse_file(path)
        for kernel in module.kernels:
            try:
                a = analyze(module, kernel.name, hw, check=False)
            except TfxError:             # a kernel of the other machine's hierarchy: refused, as it should be
                continue
            seen |= {t.name for t in a.terms}
    assert seen, "no kernel analysed"
    assert not seen - set(indexed), f"printed but not indexed on {profile}: {sorted(seen - set(indexed))}"
