"""The table of ``tfx`` commands: each command's module and its one-line help.

The composition root of the two front ends: the CLI's commands live in ``tfx.cli``, the
explorer's ``open`` in ``tfx.tui``, and neither package imports the other
(tests/test_import_hygiene.py). ``tfx.cli.main`` builds its parser from this table and
imports a command's module only when that command runs; ``tfx --help`` lists the
commands from the help lines here without importing any of them (each module's
``register`` states the same line: tests/test_cli_help.py).
"""

from __future__ import annotations

# name -> (module defining ``register(subparsers)``, the line ``tfx --help`` shows);
# in the order ``tfx --help`` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "open": ("tfx.tui.open_command", "explore a kernel in the terminal (TUI)"),
    "check": ("tfx.cli.cmd_check", "parse, verify and shape-check .tile files"),
    "run": ("tfx.cli.cmd_run", "execute a kernel on random data and check its outputs"),
    "analyze": ("tfx.cli.cmd_analyze", "work, traffic, footprint, occupancy, roofline and predicted time"),
    "diff": ("tfx.cli.cmd_diff", "compare two analyses metric by metric"),
    "occupancy": ("tfx.cli.cmd_occupancy",
                  "CTAs per SM, the limiting resource, and the budget an occupancy hint needs"),
    "simulate": ("tfx.cli.cmd_simulate", "simulate the pipeline of one kernel event by event"),
    "explore": ("tfx.cli.cmd_explore",
                "sweep parameters and hardware knobs: top-k, Pareto frontier, knob sensitivity"),
    "hw": ("tfx.cli.cmd_hw", "list and show hardware profiles"),
    "model": ("tfx.cli.cmd_model",
              "transformer inference across devices: presets, latency, memory, suggest, hw-sweep, compare"),
    "validate": ("tfx.cli.cmd_validate", "measured times vs predicted: error, rank correlation, regret"),
}
