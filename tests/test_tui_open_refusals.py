"""`tfx open` refuses bad input before its screen starts (session 10, audit10).

The explorer used to start its screen (alternate screen, the tab bar, 'tfx open: loading...'),
run the first analysis and only then leave with the refusal: a malformed kernel, an unknown
--kernel, --hw or --knob fact flashed a screen before the one line. tfx.tui.open_command now
checks them (in a forked child, while Textual is imported) before the first frame. Each case
runs the real console entry on a pseudo-terminal, as a person would: the output must be the
one refusal line and not a single escape sequence, exit 2.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GEMM = str(ROOT / "kernels" / "gemm.tile")


def _on_a_terminal(argv: list[str], timeout: float = 60.0) -> tuple[int, str]:
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), "COLUMNS": "80", "LINES": "24"}
    proc = subprocess.Popen([sys.executable, "-m", "tfx.cli.main", *argv], stdin=slave, stdout=slave,
                            stderr=slave, env=env, cwd=ROOT, close_fds=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:          # the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        rc = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return rc, out.decode("utf-8", "replace")


@pytest.mark.parametrize("argv, line", [
    (["open", GEMM, "--hw", "h999"], "--hw: error: unknown hardware profile 'h999'"),
    (["open", GEMM, "--kernel", "nope"], "gemm.tile: error: no kernel named 'nope' (this file has: gemm)"),
    (["open", GEMM, "--knob", "nosuch=x2"], "--knob nosuch: error: unknown fact in profile h200_sxm"),
    (["open", GEMM, "--knob", "hbm.bandwidth=0"], "--knob hbm.bandwidth: error: bandwidth must be a number > 0"),
])
def test_refused_before_the_screen_starts(argv, line):
    rc, out = _on_a_terminal(argv)
    assert rc == 2
    assert "\x1b" not in out                    # no screen: not one escape sequence was written
    lines = [x for x in out.replace("\r", "").split("\n") if x.strip()]
    assert len(lines) == 1 and line in lines[0]


def test_a_kernel_that_does_not_parse_is_refused_at_its_line_and_column(tmp_path):
    """'kernel k(' : the parser expects '{' after the kernel's name, line 1 column 9."""
    bad = tmp_path / "bad.tile"
    bad.write_text("kernel k(\n")
    rc, out = _on_a_terminal(["open", str(bad)])
    assert rc == 2 and "\x1b" not in out
    lines = [x for x in out.replace("\r", "").split("\n") if x.strip()]
    assert lines[0] == f"{bad}:1:9: error: expected '{{', found '('"
    assert len(lines) == 3 and lines[2].strip() == "^"       # the echoed line and its caret
