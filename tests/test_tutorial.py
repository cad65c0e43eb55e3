"""docs/tutorial.md runs: every ``$ tfx`` block is executed with the installed ``tfx`` script
and the lines it shows must be lines of the real output, in order (``...`` elides)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from test_readme_sample import in_order, sample_blocks

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = sample_blocks((ROOT / "docs" / "tutorial.md").read_text())


def test_the_tutorial_covers_the_first_hour():
    """check, analyze, a knob, explore, simulate, diff and model each appear."""
    commands = {shlex.split(c)[1] for c, _ in BLOCKS}
    assert {"check", "analyze", "explore", "simulate", "diff", "model"} <= commands
    assert any("--knob" in c for c, _ in BLOCKS)


@pytest.mark.parametrize("command,shown", BLOCKS, ids=[c for c, _ in BLOCKS])
def test_tutorial_command_output(command, shown):
    tfx = shutil.which("tfx")
    assert tfx, "the tfx script is not installed (pip install -e .)"
    argv = shlex.split(command)
    run = subprocess.run([tfx, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "COLUMNS": "80"})
    assert run.returncode == 0, run.stderr
    missing = in_order(shown, run.stdout.splitlines())
    assert missing is None, f"tutorial line not in `{command}`'s output: {missing!r}"
