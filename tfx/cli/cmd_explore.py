"""``tfx explore``: sweep tile parameters and hardware knobs; top-k, Pareto frontier, sensitivity.

    tfx explore kernels/gemm.tile --hw h200_sxm --set M=8192 --set N=8192 --set K=4096
    tfx explore kernels/gemm.tile --hw h200_sxm --sweep BM=64,128,256 --sweep STAGES=2..6
    tfx explore kernels/gemm.tile --hw h200_sxm --knob-sweep hbm.bandwidth=x0.5,x1,x2 --sensitivity
    tfx explore kernels/gemm.tile --hw h200_sxm --json > sweep.json
    tfx explore kernels/gemm.tile --hw h200_sxm --csv sweep.csv
    tfx explore kernels/gemm.tile --hw h200_sxm --scheduler tcp://10.0.0.5:8786

Without ``--sweep`` every parameter with a declared domain (``param BM = 128 in {...}``)
is swept, except those fixed with ``--set``. Values: ``64,128,256``, ``2..6``,
``2..6:2``, ``16..256:x2``; a bare ``--sweep NUM_SMS`` is its declared sweep. See docs/explore.md.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from tfx.bundled import DEFAULT_PROFILE
from tfx.cli.common import WIDE_OUTPUT, check_set_domains, emit_json, int_arg, parse_assignments, parse_int_assignments
from tfx.hw.units import format_counted_verb
from tfx.hw.units import format_count, format_percent_change, format_plain, format_whole
from tfx.present import formatting as fmt
from tfx.errors import argument_error

# --chunk's bounds. Every chunk is one vectorized analysis of its sub-grid, whose fixed cost (about
# 0.1-0.15 s) outweighs its configurations below MIN_CHUNK: gemm.tile's default sweep (7,200
# configurations) takes 1.2 s in one chunk, 2.2 s in chunks of 1,024, 16 s in chunks of 64 and about
# 17 minutes in chunks of 1, for the same answer. So a smaller chunk bounds no memory worth bounding
# (explore's API keeps any size: the tests cut chunks of 5-97 to check the merge).
MIN_CHUNK = 1024
MAX_CHUNK = 2 ** 24


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "explore",
        help="sweep parameters and hardware knobs: top-k, Pareto frontier, knob sensitivity",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("file", metavar="FILE", help=".tile file")
    p.add_argument("--hw", default=DEFAULT_PROFILE, metavar="PROFILE",
                   help=f"hardware profile name or .toml path (default {DEFAULT_PROFILE}, as tfx analyze)")
    p.add_argument("--kernel", metavar="NAME", help="kernel of FILE (default: the main one)")
    p.add_argument("--set", action="append", metavar="P=V", dest="assignments",
                   help="fix parameter P to V (repeatable, or several as P=V,P=V)")
    p.add_argument("--knob", action="append", metavar="PATH=VALUE",
                   help="a fixed what-if change to the profile (repeatable, or several as K=V,K=V)")
    p.add_argument("--sweep", action="append", metavar="P=VALUES",
                   help="sweep parameter P: 64,128,256 or 2..6 or 2..6:2 or 16..256:x2, or P alone for "
                        "its declared sweep (repeatable)")
    p.add_argument("--knob-sweep", action="append", metavar="PATH=V1,V2",
                   help="sweep a knob: hbm.bandwidth=x0.5,x1,x2 (repeatable)")
    p.add_argument("--objective", metavar="A,B", default=None,
                   help="Pareto objectives, minimized: time,smem,regs,traffic,cost "
                        "(default time,smem; time,cost with --knob-sweep)")
    p.add_argument("--top", type=int_arg(0, 10 ** 6), default=10, metavar="K", help="configurations in the top table (default 10)")
    p.add_argument("--all-params", action="store_true",
                   help="also sweep the problem's shape parameters (by default they stay at their values)")
    from tfx.cli.cmd_analyze import add_codegen_arg
    add_codegen_arg(p, side=" (every configuration ranked as it compiles them)")
    p.add_argument("--sensitivity", action="store_true",
                   help="halve and double every numeric knob around the best configuration")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", metavar="OUT", help="write every configuration to OUT as CSV (- for stdout)")
    p.add_argument("--scheduler", metavar="ADDR", help="dask.distributed scheduler address (default: in-process)")
    p.add_argument("--chunk", type=int_arg(MIN_CHUNK, MAX_CHUNK), default=None, metavar="N",
                   help=f"configurations per chunk, {format_count(MIN_CHUNK)}..{format_count(MAX_CHUNK)} (default "
                        "262,144): a chunk bounds the sweep's memory and costs one vectorized analysis (about 0.1 s), "
                        "so smaller ones only add that")
    p.set_defaults(func=run)


class _Progress:
    """A rich progress bar on stderr that appears only once a sweep has run for a second."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self.bar = None
        self.task = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or done >= total and self.bar is None:
            return
        if self.bar is None:
            if time.perf_counter() - self.t0 < 1.0:
                return
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeRemainingColumn)
            self.bar = Progress(TextColumn("exploring"), BarColumn(), MofNCompleteColumn(),
                                TimeRemainingColumn(), console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("explore", total=total)
        self.bar.update(self.task, completed=done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run(args) -> int:
    if args.csv not in (None, "-"):
        from tfx.files import check_writable
        check_writable(args.csv, what="the CSV")
    from tfx.explore import explore, parse_knob_sweeps, parse_sweeps
    from tfx.explore.space import DEFAULT_CHUNK
    from tfx.hw import load_profile
    from tfx.lang import parse_file

    fixed = parse_int_assignments(args.assignments, "--set")
    sweeps = parse_sweeps(args.sweep) if args.sweep else None
    knob_sweeps = parse_knob_sweeps(args.knob_sweep) or None
    objectives = None
    if args.objective:
        objectives = tuple(o.strip() for o in args.objective.split(",") if o.strip())
    if args.top < 0:
        raise argument_error("--top", "expected a count >= 0", found=str(args.top))
    chunk = args.chunk or DEFAULT_CHUNK
    profile = load_profile(args.hw, knobs=parse_assignments(args.knob, "--knob") or None, option="--hw")
    module = parse_file(args.file)
    check_set_domains(module, args.kernel, fixed, profile)
    if not args.all_params:
        # The problem's shape is the question, not an answer: keep shape parameters at their
        # values unless --sweep names them (or --all-params sweeps every declared domain).
        from tfx.ir.bind import bind
        kernel = module.kernel(args.kernel)
        defaults = bind(module, kernel, fixed, profile=profile)
        for name in sorted(kernel.shape_parameters()):
            if name not in fixed and not (sweeps and name in sweeps):
                fixed[name] = int(defaults[name])
    progress = _Progress(enabled=not args.json and sys.stderr.isatty())
    try:
        result = explore(module, args.kernel, profile, sweeps, knob_sweeps, objectives, args.top,
                         fixed=fixed, sensitivity=args.sensitivity, scheduler=args.scheduler,
                         chunk_size=chunk, keep_columns=args.csv is not None, progress=progress,
                         codegen=args.codegen)
    finally:
        progress.close()
    if args.json:
        emit_json(result.to_json())
        return 0
    if args.csv is not None:
        _write_csv(result, args.csv)
        if args.csv == "-":
            return 0
    _print_text(result)
    return 0


def _write_csv(result, path: str) -> None:
    import numpy as np

    space = result.space
    n = result.configs
    params, knob = space.decode_many(np.arange(n))
    cols = result.columns
    # the values as the JSON rows name them (the on-chip column by the profile's own name,
    # registers and CTAs an SM only on a GPU)
    from tfx.explore.explore import value_columns
    named = value_columns(result.onchip_key, result.occupancy)
    header = ["index", *space.names, *space.knob_paths, "feasible", "reason",
              *(key for key, _ in named), "codegen"]
    names = [col for _, col in named]
    combos = space.knob_combos
    reasons = [""] + list(result.reasons)
    if path == "-":
        _write_csv_rows(sys.stdout, header, names, n, params, knob, space, combos, reasons, cols, result.codegen)
        return
    from tfx.files import atomic_open
    with atomic_open(path, what="the CSV", newline="") as buf:
        _write_csv_rows(buf, header, names, n, params, knob, space, combos, reasons, cols, result.codegen)
    print(f"wrote {fmt.count(n)} configurations to {path}", file=sys.stderr)


def _write_csv_rows(buf, header, names, n, params, knob, space, combos, reasons, cols, codegen) -> None:
    # every row names the code generator it was ranked as (empty on a tiled profile: none applies)
    import csv
    w = csv.writer(buf)
    w.writerow(header)
    values = [cols[c] for c in names]
    for i in range(n):
        code = int(cols["code"][i])
        row = [i, *(int(params[p][i]) for p in space.names),
               *(combos[int(knob[i])][k] for k in space.knob_paths),
               int(code == 0), reasons[code], *(_num(v[i]) for v in values), codegen or ""]
        w.writerow(row)


def _num(x):
    x = float(x)
    return int(x) if x.is_integer() else repr(x)


def config_table(r, title: str | None, rows):
    """The table of configurations ``rows`` (the top, the Pareto frontier) of explore result ``r``:
    its swept parameters and knobs, then time, smem/CTA, regs, CTAs/SM (and cost under knob sweeps);
    on a tiled profile its unit's on-chip memory (``tcm/PE``) and no registers or CTAs an SM.
    ``tfx explore`` passes no title and prints it on a line of its own (``_print_text``)."""
    from rich.table import Table
    t = Table(title=title, title_justify="left")
    t.add_column("#", justify="right")
    for n in r.space.names:
        t.add_column(n, justify="right")
    for p in r.space.knob_paths:
        t.add_column(p, justify="right")
    # '999.99 us', '196,608 B': never wrapped; a narrow terminal squeezes the headers before them
    t.add_column("time", justify="right", no_wrap=True)
    t.add_column(r.onchip_label, justify="right", no_wrap=True)
    if r.occupancy:           # a tiled profile's unit runs one position: no registers, no CTAs an SM
        t.add_column("regs", justify="right")
        t.add_column("CTAs/SM", justify="right")
    if r.space.knob_paths:
        t.add_column("cost", justify="right")
    for i, e in enumerate(rows, 1):
        # ≈: a top row within the re-timing noise of the best (the near-tie line says it); ?: values no
        # campaign timed (the line under the table)
        cells = [fmt.rank_cell(i, e), *(str(e["params"][n]) for n in r.space.names),
                 *(e["knobs"][p] for p in r.space.knob_paths),
                 fmt.ns(e["predicted_ns"]), fmt.allocation(e[r.onchip_key]),
                 *((str(e["regs_per_thread"]), str(e["blocks_per_sm"])) if r.occupancy else ())]
        if r.space.knob_paths:
            cells.append(format_plain(e['cost']))
        t.add_row(*cells)
    return t


def fit_table(t, width: int):
    """``t`` as it is where its columns fit ``width``; else without its outer edges and vertical
    rules, two characters between columns instead of three (gemm's 11 columns: 58 characters of
    cells take 92 with the rules, 80 without; at 80 the last, CTAs/SM, was cropped whole). What
    still does not fit squeezes the headers ('GROU…') before the times and sizes."""
    from rich import box
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table
    # Each column's widest cell from its text (the cells are plain strings): rich measures every
    # cell of every column, here and again when it prints, about two thirds of the 14 s a 6,588-row
    # `--top 65536` table took. A table of one row of the widest cells measures as the whole does.
    longest = [max((str(x) for x in c.cells), key=cell_len, default="") for c in t.columns]
    widest = [max(cell_len(str(c.header)), cell_len(cell)) for c, cell in zip(t.columns, longest)]
    proxy = Table(box=t.box, show_edge=t.show_edge, padding=t.padding, collapse_padding=t.collapse_padding,
                  pad_edge=t.pad_edge, show_header=t.show_header)
    for c in t.columns:
        proxy.add_column(c.header, justify=c.justify, no_wrap=c.no_wrap)
    proxy.add_row(*longest)
    natural = Console(width=10_000).measure(proxy).maximum
    if natural > width:
        t.box, t.show_edge, t.collapse_padding = box.SIMPLE_HEAD, False, True
    else:
        # it fits: the widths are known, so rich need not measure the cells again to print them
        for c, w in zip(t.columns, widest):
            c.width, c.no_wrap = w, True
    return t


def _print_text(r) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal and "COLUMNS" not in __import__("os").environ:
        # piped or redirected: rich assumes 80 columns and squeezed a table of six swept
        # parameters until the time column read '212.… us'; a file has no width to fit
        console = Console(width=WIDE_OUTPUT)
    def title_line(title):
        # a title of its own, wrapped at words to the terminal (tfx.present.layout.wrap); as the
        # table's title rich wrapped it at the table's width: copy's 63-column table broke 'Pareto
        # frontier (time vs smem): 1 point (+1 configuration tied with them)' at 80 columns
        for part in wrap(title, text_width()):
            console.print(part, markup=False, soft_wrap=True)

    swept = ", ".join(f"{n}[{len(v)}]" for n, v in zip(r.space.names, r.space.values)) or "none"
    knobs = ", ".join(f"{p}[{len(v)}]" for p, v in zip(r.space.knob_paths, r.space.knob_values))
    from tfx.present.formatting import with_knobs
    from tfx.cli.common import text_width
    from tfx.present.layout import wrap
    console.print(f"[bold]{r.kernel}[/bold] on {r.profile}{with_knobs(r.knobs)}{fmt.compiled_as(r.codegen)}: "
                  f"{fmt.count(r.configs)} configurations "
                  f"(params {swept}{'; knobs ' + knobs if knobs else ''}) in {fmt.ns(r.seconds * 1e9)} "
                  f"({format_whole(r.configs_per_second)}/s, {r.scheduler})")
    if r.fixed:
        console.print("fixed: " + ", ".join(f"{k}={v}" for k, v in r.fixed.items()))
    console.print(f"feasible {fmt.count(r.feasible)}; infeasible {fmt.count(r.configs - r.feasible)}")
    for reason, n in sorted(r.infeasible.items(), key=lambda kv: -kv[1]):
        console.print(f"  {fmt.count(n):>10}  {reason}")
    cur = r.current
    if cur is not None:
        # the configuration tfx analyze prices with the same --set and --knob, in its words
        # (tfx.present.analysis_report.headline_of: the explorer's header reads the same)
        if cur.get("error"):
            title_line(f"current configuration: {cur['error']}")
        else:
            from tfx.present.analysis_report import headline_of
            h = headline_of(cur)
            occ = f", {h['occupancy']}" + (f" limited by {h['limiter']}" if h["limiter"] else "") \
                if h["occupancy"] != "n/a" else ""
            title_line(f"current configuration: predicted {h['predicted']} (bound by {h['bound']}){occ}")

    def table(title, rows):
        title_line(title)
        console.print(fit_table(config_table(r, None, rows), console.width))

    if r.top:
        table(f"top {len(r.top)} by predicted time", r.top)
    if r.near_tie is not None:
        # wrapped at words to the terminal (a pipe gets WIDE_OUTPUT columns: one line there)
        console.print(r.near_tie.summary(len(r.top)), markup=False)
    if r.top_picks is not None:
        console.print(r.top_picks.sentence(), markup=False)
    if r.unmeasured or r.marked:
        console.print(fmt.unmeasured_sentence(r.unmeasured, r.marked, r.best_checked), markup=False)
    if r.spilling_summary:
        console.print(r.spilling_summary, markup=False)
    if r.pareto:
        # Configurations with equal objectives are all on the frontier; show one row per point.
        seen, rows, dup = set(), [], 0
        for e in r.pareto:
            key = tuple(e["objectives"].values())
            if key in seen:
                dup += 1
                continue
            seen.add(key)
            rows.append(e)
        # the on-chip objective by the profile's own name where it is not a CTA's shared memory (tcm/PE)
        names = [r.onchip_label if o == "smem" and not r.occupancy else o for o in r.objectives]
        title = f"Pareto frontier ({' vs '.join(names)}): {fmt.counted(len(rows), 'point')}"
        if dup:
            title += f" (+{fmt.counted(dup, 'configuration')} tied with them)"
        table(title, rows[:40])
        if len(rows) > 40:
            console.print(f"... {fmt.counted(len(rows) - 40, 'more point')} (--json lists them all)")
    if not r.feasible:
        console.print("[red]no feasible configuration[/red]")
    if r.sensitivity:
        s = r.sensitivity
        b = s["baseline"]
        where = ", ".join(f"{k}={v}" for k, v in b["params"].items())
        title_line(f"sensitivity around {where or 'the defaults'} ({fmt.ns(b['predicted_ns'])}): "
                   "each knob halved and doubled")
        t = Table()
        for c in ("rank", "knob", "value", "/2", "x2"):
            t.add_column(c, justify="right" if c not in ("knob",) else "left")
        flat = 0
        for i, e in enumerate(s["ranking"], 1):
            h, d = e["halved"], e["doubled"]
            if h["change"] == 0 and d["change"] == 0 and "infeasible" not in h and "infeasible" not in d:
                flat += 1
                continue
            t.add_row(str(i), e["knob"], fmt.format_quantity(e["value"], e["unit"]), _pct(h), _pct(d))
        console.print(t)
        if flat:
            unchanged = f"{format_counted_verb(flat, 'knob', 'change')} nothing"
            title_line(f"{unchanged}; {len(s['skipped'])} refused a factor ({', '.join(s['skipped'])})"
                       if s["skipped"] else unchanged)


def _pct(e) -> str:
    if "infeasible" in e:
        return f"{format_percent_change(e['change'])} (infeasible: {e['infeasible']})"
    return format_percent_change(e['change'])
