"""``tfx`` as a process (tfx.cli.process_end.entry): a command that keeps its result to
the process's end (simulate --json) ends by os._exit, so its output must be flushed first
and its exit status kept; called in-process, main() keeps nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tfx.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "sim"
ARGS = ["simulate", str(DATA / "tiny.tile"), "--hw", str(DATA / "tiny_sip.toml"), "--json"]


def _tfx(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "tfx.cli.main", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_simulate_json_as_a_process_is_whole_and_the_same_as_in_process(capsys):
    """The process's JSON (written, then os._exit) is every byte main() writes in-process:
    tiny.tile's 18 events (tests/test_sim.py) and the closing brace are there."""
    assert main(ARGS) == 0
    inproc = capsys.readouterr().out
    done = _tfx(*ARGS)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == inproc and done.stdout.endswith("  ]\n}\n")
    assert json.loads(done.stdout)["event_count"] == 18 == len(json.loads(done.stdout)["events"])


def test_python_dash_m_tfx_is_the_tfx_command():
    """`python -m tfx` runs the same entry as the `tfx` script: the same JSON as in-process,
    and a refused input's one line and exit status 2."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "tfx", *ARGS], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["event_count"] == 18
    bad = subprocess.run([sys.executable, "-m", "tfx", *ARGS, "--set", "NOPE=1"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1


def test_exit_status_of_a_refused_input_is_kept():
    """A bad --set (no such parameter) is one line and exit status 2, as from main()."""
    done = _tfx(*ARGS, "--set", "NOPE=1")
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
