"""``tfx`` entry point: builds the argument parser from the command modules.

Each command's module (``tfx.command_table``: ``tfx/cli/cmd_<name>.py``, and
``tfx/tui/open_command.py`` for ``open``) defines ``register(subparsers)``, which adds its
parser and sets ``func``. A module that is missing is skipped, so the CLI works while
layers are still being built.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tfx import __version__
from tfx.command_table import COMMANDS
from tfx.errors import TfxError

# The commands, their modules and help lines: tfx.command_table (the explorer's ``open``
# lives in tfx.tui, which this package never imports by name).
COMMAND_HELP = {name: line for name, (_, line) in COMMANDS.items()}
COMMAND_MODULES = list(COMMAND_HELP)


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; print one line, not usage + error, in the
    form of every refused input (tfx.cli.common.usage_error_line)."""

    def error(self, message: str):  # pragma: no cover - exercised via CLI tests
        from tfx.cli.common import usage_error_line
        self.exit(2, usage_error_line(self.prog, message) + "\n")


def build_parser(only: str | None = None, listing: bool = False) -> argparse.ArgumentParser:
    """The parser of every command, or of ``only`` one: a command's module (and what it
    imports) loads only when that command runs, so ``tfx open`` starts fast.
    ``listing``: the commands by name and help line only, no module imported (``tfx
    --help``, ``tfx`` alone, an unknown command)."""
    parser = _Parser(
        prog="tfx",
        description="tfx: a terminal explorer for the performance of tile kernels.",
    )
    parser.add_argument("--version", action="version", version=f"tfx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        if only is not None and name != only:
            continue
        if listing:
            sub.add_parser(name, help=COMMAND_HELP[name], add_help=False)
            continue
        module_name = COMMANDS[name][0]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        module.register(sub)
    parser.command_parsers = sub.choices       # name -> parser: whose error an extra argument is
    return parser


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the subcommand ``args`` chose under ``parser`` (``tfx model hw-sweep``, ``tfx
    hw show``): an extra argument is that one's to refuse, not ``tfx model``'s."""
    while True:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, sub.dest, None) if sub is not None else None
        if chosen not in getattr(sub, "choices", {}):
            return parser
        parser = sub.choices[chosen]


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else list(argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    only = first if first in COMMAND_MODULES and "-h" not in args_list[:1] else None
    parser = build_parser(only, listing=only is None)
    try:
        args, extra = parser.parse_known_args(args_list)
        if extra:    # refused by the (sub)command's parser, so the line points at that command's help
            _innermost(parser.command_parsers.get(args.command, parser), args).error(
                f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # a usage error (one line already printed), --help, --version
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        if args.command is None:
            parser.print_help()
            return 0
        parser.error(f"unknown command {args.command}")
    try:
        rc = args.func(args)
    except TfxError as err:
        print(err.render(), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `tfx ... | head`
        return 0
    except KeyboardInterrupt:
        return 130
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    from tfx.cli.process_end import entry
    entry()
