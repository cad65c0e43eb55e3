"""``tfx hw``: list the bundled hardware profiles and show one profile's facts.

    tfx hw list [--json]
    tfx hw show NAME|PATH [--knob PATH=VALUE]... [--json]

``show`` lists every entry in file order (bases first): numeric facts with
their value in human units, canonical unit, origin and source, and the
settings (scopes, parents, meshes, aliases) that tie them together.
"""

from __future__ import annotations

import argparse
import sys

from tfx.cli.common import emit_json, output_width, parse_assignments
from tfx.errors import TfxError
from tfx.hw import Fact, list_profiles, load_profile
from tfx.hw.units import format_count
from tfx.ir.expr import units_name
from tfx.present import formatting as fmt

# Table width when stdout is not a terminal (pipes, tests): wide enough that
# sources are not wrapped into many short lines.
PIPE_WIDTH = 160


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "hw", help="list and show hardware profiles",
        description="List the bundled hardware profiles, or show one profile's facts "
                    "with their provenance.")
    sub = parser.add_subparsers(dest="hw_command", metavar="SUBCOMMAND")

    list_parser = sub.add_parser("list", help="one line per bundled profile: name, kind, description")
    list_parser.add_argument("--json", action="store_true", help="print JSON instead of text")

    show = sub.add_parser("show", help="every fact of one profile with unit, origin and source")
    show.add_argument("profile", metavar="NAME|PATH", help="bundled profile name or a .toml path")
    show.add_argument("--knob", action="append", metavar="PATH=VALUE", default=[],
                      help="change a fact first: absolute (1.2e12, 3.2TB/s) or factor "
                           "(x2, /2); repeatable, or several as K=V,K=V")
    show.add_argument("--json", action="store_true", help="print JSON instead of a table")

    parser.set_defaults(func=run, hw_parser=parser)


def run(args: argparse.Namespace) -> int:
    if args.hw_command == "list":
        return _list(args)
    if args.hw_command == "show":
        return _show(args)
    args.hw_parser.print_usage(sys.stderr)
    print("tfx hw: error: expected a subcommand: list or show", file=sys.stderr)
    return 2


def _console():
    from rich.console import Console
    from tfx.cli.common import console_width
    return Console(file=sys.stdout, width=console_width(PIPE_WIDTH), highlight=False, soft_wrap=False)


def _list(args: argparse.Namespace) -> int:
    from tfx.hw.user_profiles import list_user_profiles
    rows = []
    for name in list_profiles():
        profile = load_profile(name)
        rows.append({"name": name, "kind": profile.kind, "description": profile.description,
                     "origin": "shipped"})
    for name in list_user_profiles():      # saved from tfx open (w); --hw NAME loads them
        if name in {r["name"] for r in rows}:
            continue
        try:
            profile = load_profile(name)
        except TfxError as err:
            rows.append({"name": name, "kind": "?", "description": f"unreadable: {err.headline()}",
                         "origin": "saved"})
            continue
        rows.append({"name": name, "kind": profile.kind, "description": profile.description,
                     "origin": "saved"})
    if args.json:
        emit_json(rows)
        return 0
    import textwrap
    width = max((len(r["name"]) for r in rows), default=0)
    # a description past the output's width wraps at words under its own column (sip's took 115
    # columns at 80); a pipe (WIDE_OUTPUT) keeps each profile on one line
    indent = " " * (width + 2 + 5 + 2)
    room = max(output_width() - len(indent), 20)
    for row in rows:
        lines = textwrap.wrap(row["description"], room, break_on_hyphens=False, break_long_words=False) or [""]
        print(f"{row['name']:<{width}}  {row['kind']:<5}  {lines[0]}".rstrip())
        for more in lines[1:]:
            print(indent + more)
    return 0


def _show(args: argparse.Namespace) -> int:
    knobs = parse_assignments(args.knob, "--knob")
    # an unknown name is refused as the command's positional (``tfx hw show: error: unknown
    # hardware profile 'nope' (known: ...)``), as --hw names itself; a path names its file
    profile = load_profile(args.profile, knobs=knobs, option="tfx hw show")
    from tfx.hw.attainable import attainable_bandwidth
    attainable = attainable_bandwidth(profile) if profile.kind == "gpu" else None
    # what a kernel's units(LEVEL) reads on this profile: units a device, not a parent
    units = {level: profile.units_of(level) for level in profile.hierarchy_levels()}
    if args.json:
        out = profile.to_json()
        if attainable is not None:
            out["attainable_bandwidth"] = attainable.to_json()
        out["units"] = {units_name(level): n for level, n in units.items()}
        emit_json(out)
        return 0

    from rich.table import Table
    from rich.text import Text

    console = _console()
    console.print(Text(f"{profile.name}  ({profile.kind})", style="bold"))
    console.print(Text(profile.description))
    console.print(Text(f"file: {profile.source_path}", style="dim"))
    console.print(Text("units a device (a kernel's units(LEVEL)): "
                       + ", ".join(f"{level} {format_count(n)}" for level, n in units.items())))
    if attainable is not None:
        console.print(Text(attainable.statement()))
    for path, text in profile.knobs.items():
        console.print(Text(f"knob: {path}={text}", style="yellow"))

    rows = []
    for path, entry in profile.entries():
        if path in ("kind", "description"):  # already in the header above the table
            continue
        if isinstance(entry, Fact):
            rows.append((_fact_cells(path, entry), None))
        else:
            value = ", ".join(entry) if isinstance(entry, tuple) else str(entry)
            rows.append(((path, value, "", "", ""), "dim"))
    from tfx.cli.common import text_width
    width = text_width()
    if width is not None and 2 + max(len(r[0]) for r, _ in rows) + 2 + max(len(r[1]) for r, _ in rows) + 30 > width:
        # too narrow for the table beside a 30-column source (80: 'memory.gmem.bandwidth_strided_sectors'
        # is 37 and the values reach 17): a fact a line, 'path  value  unit  origin', its source
        # below it, 4 in, wrapped at words
        from tfx.present.layout import wrap
        for (path, value, unit, origin, source), style in rows:
            head = "  ".join(x for x in (path, value, unit, origin) if x)
            for part in wrap(head, width):
                console.print(Text(part, style=style or ""))
            if source:
                for part in wrap("    " + source, width, 4):
                    console.print(Text(part, style="dim"))
        return 0
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("fact", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    table.add_column("origin", no_wrap=True)
    table.add_column("source", overflow="fold", min_width=30)
    for cells, style in rows:
        # Cells are Text, not markup strings: sources such as "[DS] 4.8 TB/s" contain brackets.
        table.add_row(*(Text(cell) for cell in cells), style=style)
    console.print(table)
    return 0


def _fact_cells(path: str, fact: Fact) -> tuple:
    if not fact.available:
        return (path, "unavailable", fact.unit or "", "", fact.unavailable)
    origin = fact.origin if fact.knob is None else f"{fact.origin} (knob)"
    return (path, fmt.fact_value(fact), fact.unit, origin, fact.source)


__all__ = ["register", "run"]
