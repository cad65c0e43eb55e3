"""``tfx validate``: your measured kernel times beside tfx's predictions.

    tfx validate MEASUREMENTS.csv [--hw h200_sxm] [--timing do_bench|clean] [--json] [--rows]
    tfx validate --ncu NCU.csv KERNEL.tile --set P=V ... [--hw ...]

The CSV (tfx.analysis.measured) has columns kernel, profile, measured_ms, one per kernel
parameter, and optionally regs, spills, smem_bytes, local_bytes as compiled. Per (family, shape) group
it prints median |error|, signed median error, Spearman rank correlation, the regret of
the configuration tfx ranks first, that of the best of its three ranked first (``top3``: what
timing those three finds), and the spilling rows apart; under each family's table, its
summary over shapes and issue 15's "done when" verdict (tfx.analysis.verdict: median |error| <=
15%, Spearman >= 0.85 in every shape, regret <= 10%, no spilling configuration ranked first where
a non-spilling one is faster), as bench/accuracy.py prints them (--json: ``families``). ``--ncu`` reads Nsight
Compute's raw CSV export (``ncu --csv --page raw``): each profiled launch is one row of
KERNEL.tile at the --set parameters, with its registers and shared memory.
"""

from __future__ import annotations

from tfx.bundled import DEFAULT_PROFILE
from tfx.cli.common import check_set_domains, emit_json, parse_int_assignments, say
from tfx.errors import TfxError, argument_error
from tfx.hw.units import format_percent_change
from tfx.present import formatting as fmt


def register(sub) -> None:
    from tfx.analysis.verdict import done_when
    p = sub.add_parser("validate", help="measured times vs predicted: error, rank correlation, regret",
                       description="Compare measured kernel times with tfx's predictions, per family and shape; "
                                   f"per family, its figures over shapes and issue 15's verdict ({done_when()}).")
    p.add_argument("file", help="a measurements CSV (kernel, profile, measured_ms, parameters, "
                                "[regs, spills, smem_bytes, local_bytes]); with --ncu, the .tile file the launches ran")
    p.add_argument("--ncu", metavar="FILE", help="Nsight Compute raw CSV (ncu --csv --page raw)")
    p.add_argument("--set", action="append", metavar="P=V", help="with --ncu: the kernel's parameters")
    p.add_argument("--hw", default=DEFAULT_PROFILE, help="profile for rows without a profile column")
    p.add_argument("--estimate", action="store_true",
                   help="ignore the compiled regs/spills/smem_bytes columns (tfx's own estimate)")
    from tfx.cli.cmd_analyze import add_codegen_arg
    add_codegen_arg(p, side=" for every row (rows on a tiled profile refuse all but the default)")
    from tfx.assignments import add_timing_arg
    add_timing_arg(p, "do_bench for a measurements CSV, as bench/h200 times its rows; clean with --ncu, "
                      "whose replays flush the caches")
    p.add_argument("--rows", action="store_true", help="also list every row")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _ncu_rows(args):
    from pathlib import Path

    from tfx.analysis.measured import MeasuredRow, read_ncu
    from tfx.lang import parse_file
    kernel_path = Path(args.file)
    module = parse_file(kernel_path)
    params = parse_int_assignments(args.set, "--set")
    names = {p.name for p in module.kernel(None).params}
    for k in params:
        if k not in names:
            raise argument_error("--set", f"{kernel_path.name} has no parameter {k!r} ({', '.join(sorted(names))})",
                                 name=k)
    from tfx.ir.bind import units_used
    if units_used(module, module.kernel(None)):   # a default sized by the machine: --hw's counts
        from tfx.hw import load_profile
        check_set_domains(module, None, params, load_profile(args.hw, option="--hw"))
    else:
        check_set_domains(module, None, params)
    rows = []
    for launch in read_ncu(args.ncu):
        rows.append(MeasuredRow(where=launch.where, kernel_path=kernel_path.resolve(), profile=None,
                                measured_ms=launch.measured_ms, params=dict(params), regs=launch.regs,
                                smem_bytes=launch.smem_bytes,
                                notes={"family": kernel_path.stem, "shape": launch.kernel_name}))
    if not rows:
        raise TfxError("no launches in the Nsight Compute export", where=args.ncu)
    return rows


def run(args) -> int:
    from tfx.analysis.measured import Predictor, format_table, overall, read_measurements, summarize
    if args.set and not args.ncu:
        raise argument_error("--set", "expected only with --ncu (a measurements CSV names its parameters in columns)")
    rows = _ncu_rows(args) if args.ncu else read_measurements(args.file)
    if not rows:
        raise TfxError("no rows with status ok", where=args.file)
    from tfx.analysis.codegen import lookup
    # the rows' timing condition: a CSV's rows as do_bench times them (after an L2 clear that
    # writes the L2), an Nsight Compute export's after its flush (a clean L2)
    timing = args.timing or ("clean" if args.ncu else "do_bench")
    predictor = Predictor(args.hw, args.codegen, default_option="--hw", l2_clear=timing == "do_bench")
    compared = predictor.compare(rows, use_measured=not args.estimate)
    figs = summarize(compared, predictor)
    from tfx.analysis.verdict import family_verdicts, format_verdict
    # issue 15's "done when" per family, as bench/accuracy.py prints it (one file: one campaign)
    verdicts = family_verdicts(figs, compared)
    # the rows on a GPU are priced as this code generator compiles them (tiled rows: their own
    # tool chain's, so a file of tiled rows names none, as its rows do)
    on_gpu = any(c.codegen is not None for c in compared)
    codegen = lookup(args.codegen).name if on_gpu else None
    if args.json:
        # every option that changes a prediction is named: --estimate prices the rows without the
        # CSV's compiled regs/spills/smem_bytes (the JSON did not say so), --ncu names the export
        emit_json({"tool": "tfx", "command": "validate", "file": args.file, "ncu": args.ncu, "hw": args.hw,
                   "codegen": codegen, "estimate": bool(args.estimate), "timing": timing,
                   "groups": [g.to_json() for g in figs], "overall": overall(figs),
                   "families": [v.to_json() for v in verdicts],
                   "rows": [{"where": str(c.row.where), "kernel": str(c.row.kernel_path), "params": c.row.params,
                             "measured_ms": c.row.measured_ms, "predicted_ms": c.predicted_ms,
                             "error": c.error, "spilling": c.spilling, "codegen": c.codegen,
                             "roofline_ms": c.roofline_ms, "faster_than_roofline": c.faster_than_roofline}
                            for c in compared]})
        return 0
    say(f"{args.file}: {fmt.counted(len(compared), 'row')}, {fmt.counted(len(figs), 'group')} "
          f"({_profiles_priced(compared, args.hw)})"
          + (fmt.compiled_as(codegen) if on_gpu else "") + fmt.timed_as(predictor.l2_clear)
          + ("; resources estimated by tfx (--estimate: the regs, spills and smem_bytes columns ignored)"
             if args.estimate else ""))
    from tfx.cli.common import text_width
    for v in verdicts:
        print(format_table(list(v.groups), text_width()))
        say("\n".join(format_verdict(v)))
    faster = [c for c in compared if c.faster_than_roofline]
    if faster:
        # a time under the least the peak rates allow is no model error: the time's unit (ms), the
        # profile (--hw, the CSV's profile column) or its rates are wrong for these rows
        first = faster[0]
        say(f"  warning: {fmt.counted(len(faster), 'row')} ran faster than {'its' if len(faster) == 1 else 'their'} roofline, "
             f"the least time the profile's peak rates allow ({first.row.where}: measured "
             f"{fmt.ns(first.row.measured_ms * 1e6)}, roofline {fmt.ns(first.roofline_ms * 1e6)}): check the "
             f"times are in ms, the profile is the GPU's that ran them, and its clock and bandwidths")
    for g in figs:
        say(f"  {g.family} {g.shape}: ranked first {_params(g.top)} ({fmt.ns(g.top.row.measured_ms * 1e6)} measured), "
              f"best measured {_params(g.best)} ({fmt.ns(g.best.row.measured_ms * 1e6)})")
    if args.rows:
        # times by the one unit policy (ns, us, ms, s), as every other surface writes them
        say(f"\n  {'row':<28} {'predicted':>12} {'measured':>12} {'error':>8}")
        for c in compared:
            say(f"  {str(c.row.where):<28} {fmt.ns(c.predicted_ms * 1e6):>12} {fmt.ns(c.row.measured_ms * 1e6):>12} "
                  f"{format_percent_change(c.error):>8}"
                  + ("  spills" if c.spilling else ""))
    return 0


def _params(c) -> str:
    from tfx.analysis.measured import shape_parameters
    skip = set()
    try:
        from tfx.lang import parse_file
        skip = set(shape_parameters(parse_file(c.row.kernel_path)))
    except TfxError:
        pass
    return c.row.label(skip) or "(defaults)"


def _profiles_priced(compared, default: str) -> str:
    """Which profiles priced the rows, for the header: the rows' own (their profile column) and ``default``
    (--hw) for those that name none; a file whose rows all name one profile was headed with --hw's
    before, as if it priced them."""
    named = sorted({c.row.profile for c in compared if c.row.profile})
    unnamed = sum(1 for c in compared if not c.row.profile)
    if not named:
        return f"profile {default} where the CSV names none"
    if not unnamed:
        return (f"profile {named[0]}, as its rows name it" if len(named) == 1
                else f"profiles {', '.join(named)}, as its rows name them")
    return f"profiles {', '.join(named)} as its rows name them, {default} for the {fmt.counted(unnamed, 'row')} naming none"
