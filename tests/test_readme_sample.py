"""The README's sample output stays current: each ``$ tfx ...`` block in README.md is run with
the installed ``tfx`` script and every line it shows (``...`` marks elided lines) must be a
line of the real output, in the same order."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def sample_blocks(text: str) -> list[tuple[str, list[str]]]:
    """(command, shown lines) of every fenced block that starts with ``$ tfx``."""
    out = []
    for block in re.findall(r"```\n(\$ tfx[^\n]*)\n(.*?)```", text, re.S):
        command, body = block
        out.append((command[2:], body.rstrip("\n").split("\n")))
    return out


def in_order(shown: list[str], actual: list[str]) -> str | None:
    """None when every shown line (but ``...``) is an actual line, in order; else the first
    line that is not."""
    i = 0
    for line in shown:
        if line.strip() == "...":
            continue
        while i < len(actual) and actual[i].rstrip() != line.rstrip():
            i += 1
        if i == len(actual):
            return line
        i += 1
    return None


def test_in_order_finds_a_line_out_of_place():
    assert in_order(["a", "...", "c"], ["a", "b", "c"]) is None
    assert in_order(["c", "a"], ["a", "b", "c"]) == "a"
    assert in_order(["x"], ["a"]) == "x"


BLOCKS = sample_blocks((ROOT / "README.md").read_text())


def test_the_readme_has_a_sample():
    assert BLOCKS and BLOCKS[0][0].startswith("tfx analyze kernels/gemm.tile")


@pytest.mark.parametrize("command,shown", BLOCKS, ids=[c for c, _ in BLOCKS])
def test_readme_sample_output_is_current(command, shown):
    tfx = shutil.which("tfx")
    assert tfx, "the tfx script is not installed (pip install -e .)"
    argv = shlex.split(command)
    run = subprocess.run([tfx, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    missing = in_order(shown, run.stdout.splitlines())
    assert missing is None, f"README line not in `{command}`'s output: {missing!r}"
