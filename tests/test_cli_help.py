"""`tfx --help` lists every command without importing numpy or any command module, and its
help lines are the ones the modules register."""

from __future__ import annotations

import subprocess
import sys

from tfx.cli.main import COMMAND_HELP, build_parser


def test_help_imports_no_numpy_and_no_command_module():
    code = ("import sys\nfrom tfx.cli.main import main\nrc = main(['--help'])\n"
            "bad = sorted(m for m in sys.modules if m == 'numpy' or m.startswith(('tfx.cli.cmd_', 'tfx.tui')))\n"
            "print('IMPORTED', ','.join(bad), rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "IMPORTED  0"
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("    ") and line[4] != " "]
    assert listed == list(COMMAND_HELP)


def test_listing_help_equals_each_modules_own():
    for name, line in COMMAND_HELP.items():
        parser = build_parser(name)
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        (action,) = sub._choices_actions
        assert (action.dest, action.help) == (name, line)


def test_unknown_command_is_one_line_exit_2():
    out = subprocess.run([sys.executable, "-m", "tfx.cli.main", "bogus"], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.startswith("tfx: error: COMMAND: expected one of open, ")
    assert out.stderr.endswith(", found 'bogus' (see tfx --help)\n") and out.stderr.count("\n") == 1


def test_scalar_analysis_and_simulation_import_no_numpy():
    """One configuration is analysed with Python ints and Fractions: `tfx analyze` and
    `tfx simulate --json` of gemm never import numpy (tfx.arrays answers "is this an
    array?" without it; issue 14 item 10). A sweep imports it."""
    code = ("import sys, io, contextlib\nfrom tfx.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    a = main(['analyze', 'kernels/gemm.tile', '--hw', 'h200_sxm'])\n"
            "    s = main(['simulate', 'kernels/gemm.tile', '--hw', 'h200_sxm', '--json', '--no-events'])\n"
            "print(a, s, 'numpy' in sys.modules)\n"
            "from tfx.arrays import is_array\nimport numpy\nprint(is_array(1, numpy.zeros(2)), is_array(1, 2.0))")
    root = __import__("pathlib").Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.splitlines()[-2:] == ["0 0 False", "True False"]
