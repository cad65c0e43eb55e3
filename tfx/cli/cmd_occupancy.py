"""``tfx occupancy``: how many CTAs fit on an SM, what limits them, what a hint needs.

Three inputs, one model (``tfx.analysis.occupancy``):

* one configuration: ``--threads T --regs R --smem S [--static-smem B]``;
* a CSV of configurations (``--csv FILE``, ``-`` for stdin), answered as CSV with
  ``blocks_per_sm`` and ``limiter`` columns added, through the vectorized path;
* compiler output: ``--ptxas FILE`` (``ptxas -v``) or ``--res-usage FILE``
  (``cuobjdump -res-usage``), a row per function.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from typing import Any

from tfx.analysis.occupancy import (
    LIMITER_NAMES, LIMITERS, Occupancy, OccupancyLimits, Resources, blocks_per_sm_array,
    compute_occupancy,
)
from tfx.cli.common import emit_json, int_arg, parse_assignments, read_text
from tfx.errors import TfxError, argument_error
from tfx.hw.units import format_count, format_counted, format_exact_bytes, format_significant
from tfx.bundled import DEFAULT_PROFILE
from tfx.present import formatting as fmt

CSV_REQUIRED = ("threads", "regs", "smem")
CSV_OPTIONAL = ("static_smem",)
CSV_ADDED = ("blocks_per_sm", "limiter")
# Block sizes shown for compiler output when --threads is not given.
DEFAULT_BLOCK_SIZES = (128, 256, 512, 1024)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "occupancy",
        help="CTAs per SM, the limiting resource, and the budget an occupancy hint needs",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--hw", default=DEFAULT_PROFILE, metavar="PROFILE",
                   help=f"hardware profile name or .toml path (default {DEFAULT_PROFILE})")
    p.add_argument("--knob", action="append", metavar="PATH=VALUE",
                   help="override a profile fact, e.g. occupancy.max_blocks_per_sm=16 (repeatable, or several as K=V,K=V)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--csv", metavar="FILE",
                        help="CSV with columns threads,regs,smem[,static_smem]; - for stdin")
    source.add_argument("--ptxas", metavar="FILE", help="ptxas -v output")
    source.add_argument("--res-usage", metavar="FILE", help="cuobjdump -res-usage output")
    p.add_argument("--threads", type=int_arg(1, 2 ** 31 - 1), metavar="T", help="threads per CTA")
    p.add_argument("--regs", type=int_arg(0, 2 ** 20), metavar="R", help="registers per thread")
    p.add_argument("--smem", type=int_arg(0, 2 ** 40), default=0, metavar="S",
                   help="dynamic shared memory per CTA in bytes (default 0)")
    p.add_argument("--static-smem", type=int_arg(0, 2 ** 40), default=0, metavar="B",
                   help="static shared memory per CTA in bytes (default 0)")
    p.add_argument("--occupancy", type=int_arg(1, 2 ** 20), metavar="N",
                   help="occupancy hint: CTAs per SM the kernel should reach")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: the hw layer is optional while it is being built, and
    # `tfx --help` should not pay for loading it.
    from tfx.hw import load_profile

    profile = load_profile(args.hw, knobs=parse_assignments(args.knob, "--knob") or None, option="--hw")
    if getattr(profile, "kind", "gpu") != "gpu":
        raise TfxError(f"occupancy needs a GPU profile; {profile.name} is {profile.kind!r}",
                       where=args.hw)
    limits = OccupancyLimits.from_profile(profile)
    if args.occupancy is not None and args.occupancy < 1:
        raise argument_error("--occupancy", "expected a whole number >= 1", found=str(args.occupancy))
    if args.csv is not None:
        return _run_csv(args, limits)
    if args.ptxas is not None or args.res_usage is not None:
        return _run_compiler_output(args, profile, limits)
    return _run_one(args, profile, limits)


# --------------------------------------------------------------------------- one configuration

def _run_one(args: argparse.Namespace, profile: Any, limits: OccupancyLimits) -> int:
    missing = [flag for flag, value in (("--threads", args.threads), ("--regs", args.regs))
               if value is None]
    if missing:
        raise TfxError(f"{' and '.join(missing)} required (or --csv, --ptxas, --res-usage)", where="tfx occupancy")
    res = _cli_resources(args.threads, args.regs, args.smem, args.static_smem)
    occ = compute_occupancy(limits, res, hint=args.occupancy)
    if args.json:
        emit_json({"profile": profile.name, "knobs": dict(profile.knobs), **occ.to_json()})
        return 0
    _print_one(_shown(profile), occ)
    return 0


def _shown(profile: Any) -> str:
    """The profile as the text header names it, with every knob applied (``h200_sxm with
    occupancy.max_blocks_per_sm=16``): the result remembers its inputs."""
    from tfx.present.formatting import with_knobs
    return profile.name + with_knobs(profile.knobs)


def _cli_resources(threads: int, regs: int, smem: int, static_smem: int) -> Resources:
    for flag, value, lowest in (("--threads", threads, 1), ("--regs", regs, 0),
                                ("--smem", smem, 0), ("--static-smem", static_smem, 0)):
        if value < lowest:
            raise argument_error(flag, f"expected a whole number >= {lowest}", found=str(value))
    return Resources(threads, regs, smem, static_smem, origin="cli")


def _print_one(profile_name: str, occ: Occupancy) -> None:
    from rich.table import Table

    res, lim = occ.resources, occ.limits
    console = _console()
    console.print(
        f"[bold]{profile_name}[/]: {format_counted(res.threads, 'thread')}, "
        f"{format_counted(res.regs_per_thread, 'register')}/thread, "
        f"{format_exact_bytes(res.smem_per_cta)} shared memory per CTA"
        + (f" ({format_exact_bytes(res.smem_static)} static + {format_exact_bytes(res.smem_dynamic)} dynamic)"
           if res.smem_static else ""))
    style = "bold red" if not occ.feasible else "bold"
    console.print(f"[{style}]{occ.summary()}[/]")
    if not occ.feasible:
        if occ.hint_budget is not None:
            console.print(occ.hint_budget.sentence)
        return

    uses = {
        "threads": fmt.counted(res.threads, "thread"),
        "warps": fmt.counted(occ.warps_per_cta, "warp"),
        "blocks": "1 CTA",
        "registers": f"{format_count(res.regs_per_thread)}/thread = {format_count(occ.regs_per_warp_alloc)}/warp",
        "shared memory": f"{format_exact_bytes(res.smem_per_cta)} + {format_count(lim.reserved_smem_per_block)} "
                         f"reserved = {format_exact_bytes(occ.smem_per_cta_alloc)}",
    }
    capacity = {
        "threads": format_count(lim.max_threads_per_sm),
        "warps": format_count(lim.warps_per_sm),
        "blocks": format_count(lim.max_blocks_per_sm),
        "registers": format_count(lim.regs_per_sm),
        "shared memory": format_exact_bytes(lim.smem_per_sm),
    }
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("limit")
    table.add_column("CTAs/SM", justify="right")
    table.add_column("SM has", justify="right")
    table.add_column("one CTA uses")
    table.add_column("one more CTA needs")
    for name in LIMITERS:
        count = occ.limit_blocks[name]
        binding = name in occ.limiters
        step = occ.next_cta.get(name)
        if name == "blocks":
            need = "over the hardware maximum" if step and step.budget is None else "-"
        elif step is None:
            need = "-"
        else:
            need = step.sentence
        table.add_row(name, "unlimited" if count is None else str(count), capacity[name],
                      uses[name] if count is not None else "nothing", need,
                      style="bold yellow" if binding else None)
    console.print(table)
    if occ.hint is not None:
        if occ.hint_met:
            console.print(f"[green]occupancy={occ.hint} is met[/]")
        else:
            console.print(f"[bold red]{occ.hint_budget.sentence}[/]")
            b = occ.hint_budget
            parts = [f"max registers/thread {_or_none(b.max_regs_per_thread)}",
                     f"max shared memory/CTA {_or_none(b.max_smem_per_cta, format_exact_bytes)}",
                     f"max threads/CTA {_or_none(b.max_threads_per_cta)}"]
            console.print(f"  budget for {format_counted(occ.hint, 'CTA/SM', 'CTAs/SM')} (each with the rest unchanged): "
                          + "; ".join(parts))


def _or_none(value: int | None, shown=format_count) -> str:
    """A budget as ``shown`` writes it (a count, or whole bytes), or 'none fits'."""
    return "none fits" if value is None else shown(value)


def _console():
    from rich.console import Console

    # Piped output keeps full rows rather than wrapping at rich's default 80 columns; $COLUMNS
    # (or a terminal) sets the width
    from tfx.cli.common import console_width
    return Console(width=console_width(160), highlight=False)


# --------------------------------------------------------------------------- CSV

def _read_input(path: str) -> str:
    if path in ("-", "/dev/stdin"):
        return sys.stdin.read()
    return read_text(path)


def _run_csv(args: argparse.Namespace, limits: OccupancyLimits) -> int:
    import numpy as np

    name = "<stdin>" if args.csv == "-" else args.csv
    reader = csv.reader(io.StringIO(_read_input(args.csv)))
    header = next(reader, None)
    if header is None:
        raise TfxError("empty CSV: expected a header with columns threads,regs,smem", where=name)
    header = [h.strip() for h in header]
    index = {h: i for i, h in enumerate(header)}
    missing = [c for c in CSV_REQUIRED if c not in index]
    if missing:
        raise TfxError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                       f"(have: {', '.join(header)})", where=f"{name}:1")
    clash = [c for c in CSV_ADDED if c in index]
    if clash:
        raise TfxError(f"column {clash[0]} is already present; tfx adds it", where=f"{name}:1")

    rows: list[list[str]] = []
    lines: list[int] = []
    for row in reader:
        if not row or (len(row) == 1 and not row[0].strip()):
            continue  # blank line
        if len(row) != len(header):
            raise TfxError(f"{len(row)} fields, the header has {len(header)}",
                           where=f"{name}:{reader.line_num}")
        rows.append(row)
        lines.append(reader.line_num)

    columns = [c for c in CSV_REQUIRED + CSV_OPTIONAL if c in index]
    values = {c: _int_column(rows, lines, index[c], c, name) for c in columns}
    static = values.get("static_smem", 0)
    for column, lowest in (("threads", 1), ("regs", 0), ("smem", 0), ("static_smem", 0)):
        if column in values and len(rows):
            bad = np.flatnonzero(values[column] < lowest)
            if bad.size:
                i = int(bad[0])
                raise TfxError(f"column {column}: {rows[i][index[column]].strip()} "
                               f"must be >= {lowest}", where=f"{name}:{lines[i]}")
    blocks, codes = blocks_per_sm_array(limits, values["threads"], values["regs"],
                                        values["smem"], static)
    limiter_names = [LIMITER_NAMES[c] for c in codes.tolist()]
    blocks_list = blocks.tolist()
    if args.json:
        out = [dict(zip(header, row)) | {"blocks_per_sm": b, "limiter": lname}
               for row, b, lname in zip(rows, blocks_list, limiter_names)]
        if args.occupancy is not None:
            for item in out:
                item["hint_met"] = item["blocks_per_sm"] >= args.occupancy
        emit_json(out)
        return 0
    writer = csv.writer(sys.stdout, lineterminator="\n")
    extra = ["hint_met"] if args.occupancy is not None else []
    writer.writerow(header + list(CSV_ADDED) + extra)
    if args.occupancy is None:
        writer.writerows(row + [b, lname] for row, b, lname in zip(rows, blocks_list, limiter_names))
    else:
        writer.writerows(row + [b, lname, str(b >= args.occupancy).lower()]
                         for row, b, lname in zip(rows, blocks_list, limiter_names))
    return 0


# Largest value of each CSV column: an int32 thread count, a register file, 1 TiB of shared
# memory; far above any GPU, and every product the calculator forms stays inside an int64.
CSV_CEILINGS = {"threads": 2 ** 31 - 1, "regs": 2 ** 20, "smem": 2 ** 40, "static_smem": 2 ** 40}


def _int_column(rows: list[list[str]], lines: list[int], col: int, column: str, name: str):
    """One column as int64; the first cell that is not a whole number (ASCII digits, at most
    CSV_CEILINGS[column]) is named by line."""
    import numpy as np

    from tfx.errors import shorten
    from tfx.literals import parse_int

    cells = [row[col] for row in rows]
    ceiling = CSV_CEILINGS.get(column, 2 ** 62)
    if "".join(cells).isascii():  # fast path: int() would also take other scripts' digits
        try:
            values = np.array([int(c) for c in cells], dtype=np.int64)
            if not len(values) or int(values.max()) <= ceiling:
                return values
        except (ValueError, OverflowError):
            pass
    for cell, line in zip(cells, lines):  # slow path, only to find the culprit
        try:
            value = parse_int(cell)
        except ValueError as exc:
            raise TfxError(f"column {column}: {shorten(cell.strip())!r} is not a whole number ({exc})",
                           where=f"{name}:{line}") from None
        if value > ceiling:
            raise TfxError(f"column {column}: {format_significant(value, 3)} is above {format_count(ceiling)}", where=f"{name}:{line}")
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------- compiler output

def _run_compiler_output(args: argparse.Namespace, profile: Any, limits: OccupancyLimits) -> int:
    from tfx.analysis.compiler_resources import parse_ptxas_v, parse_res_usage

    path = args.ptxas if args.ptxas is not None else args.res_usage
    name = "<stdin>" if path == "-" else path
    parse = parse_ptxas_v if args.ptxas is not None else parse_res_usage
    kernels = parse(_read_input(path), name)
    if args.threads is not None:
        _cli_resources(args.threads, 0, args.smem, 0)  # validates the flags
    sizes = (args.threads,) if args.threads is not None else DEFAULT_BLOCK_SIZES
    results = [(k, {t: compute_occupancy(limits, k.resources(t, args.smem), hint=args.occupancy)
                    for t in sizes}) for k in kernels]
    if args.json:
        emit_json({"profile": profile.name, "knobs": dict(profile.knobs), "dynamic_smem": args.smem, "functions": [
            {"function": k.to_json(),
             "occupancy": {str(t): o.to_json() for t, o in by_size.items()}}
            for k, by_size in results]})
        return 0
    _print_kernels(_shown(profile), path, results, args)
    return 0


def _print_kernels(profile_name: str, path: str, results: list, args: argparse.Namespace) -> None:
    from rich.table import Table

    console = _console()
    dyn = f", {format_exact_bytes(args.smem)} dynamic shared memory" if args.smem else ""
    console.print(f"[bold]{profile_name}[/]: {format_counted(len(results), 'function')} from {path}{dyn}")
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column, justify in (("function", "left"), ("arch", "left"), ("regs", "right"),
                            ("smem", "right"), ("stack", "right"), ("spills st/ld", "right")):
        table.add_column(column, justify=justify)
    single = args.threads is not None
    if single:
        table.add_column(f"CTAs/SM @{args.threads}", justify="right")
        table.add_column("limiter")
        table.add_column("occupancy", justify="right")
        if args.occupancy is not None:
            table.add_column(f"occupancy={args.occupancy}")
    else:
        for t in DEFAULT_BLOCK_SIZES:
            table.add_column(f"@{t}", justify="right")
    for k, by_size in results:
        cells = [k.display_name, k.arch or "?", str(k.registers), format_count(k.smem_static),
                 format_count(k.stack_frame), f"{format_count(k.spill_stores)}/{format_count(k.spill_loads)}"]
        if single:
            o = by_size[args.threads]
            cells += [str(o.blocks_per_sm), _limiter_text(o), fmt.percent(o.occupancy_pct)]
            if args.occupancy is not None:
                cells.append("met" if o.hint_met else _budget_cell(o))
        else:
            cells += [f"{o.blocks_per_sm} {_short(o)}" for o in by_size.values()]
        table.add_row(*cells)
    console.print(table)
    if not single:
        console.print("CTAs per SM at each block size, with the limiter: "
                      "t threads, w warps, b blocks, r registers, s shared memory, x does not fit")


def _budget_cell(o: Occupancy) -> str:
    """What the blocking limits need for the hint, tersely: the table has one line per function."""
    b = o.hint_budget
    if not b.reachable:
        return "unattainable on this GPU"
    needs = []
    if "threads" in b.blockers or "warps" in b.blockers:
        needs.append(f"<= {_or_none(b.max_threads_per_cta)} threads")
    if "registers" in b.blockers:
        needs.append(f"<= {_or_none(b.max_regs_per_thread)} regs")
    if "shared memory" in b.blockers:
        needs.append(f"<= {_or_none(b.max_smem_per_cta, format_exact_bytes)} smem")
    return "needs " + ", ".join(needs)


def _limiter_text(o: Occupancy) -> str:
    return o.reason if not o.feasible else " + ".join(o.limiters)


_SHORT = {"threads": "t", "warps": "w", "blocks": "b", "registers": "r",
          "shared memory": "s", "infeasible": "x"}


def _short(o: Occupancy) -> str:
    return _SHORT[o.limiter]
