"""``tfx simulate``: event-by-event pipeline simulation of one kernel on one profile.

    tfx simulate kernels/gemm.tile --hw h200_sxm --set M=8192 --set N=8192 --set K=8192
    tfx simulate kernels/sip_gemm.tile --hw sip --set TM=32 --set TN=3072 --set TK=32 \\
        --knob dma.hold_channel_for_round_trip=0
    tfx simulate kernels/sip_decode_attention.tile --hw sip --kernel decode_attention_composite \\
        --json --no-events
    tfx simulate kernels/gemm.tile --hw h200_sxm --trace gemm.trace.json   # open in ui.perfetto.dev

Default: one representative SM/PE with its share of DRAM bandwidth, waves
extrapolated from the analysis' launches; ``--full`` simulates every unit.
Times are integer nanoseconds. See docs/simulator.md.
"""

from __future__ import annotations

from typing import Any

from tfx.bundled import DEFAULT_PROFILE
from tfx.cli.common import check_set_domains, emit_json, int_arg, parse_assignments, parse_int_assignments
from tfx.cli.process_end import keep_until_exit
from tfx.present import formatting as fmt


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("simulate", help="simulate the pipeline of one kernel event by event",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("file", metavar="FILE", help=".tile file")
    p.add_argument("--hw", metavar="PROFILE", default=DEFAULT_PROFILE,
                   help=f"hardware profile name or path (default {DEFAULT_PROFILE}, as tfx analyze)")
    p.add_argument("--kernel", metavar="NAME", help="kernel of FILE (default: the main one)")
    p.add_argument("--set", action="append", metavar="P=V", dest="assignments",
                   help="bind parameter P to integer V (repeatable, or several as P=V,P=V)")
    p.add_argument("--knob", action="append", metavar="K=V", dest="knobs",
                   help="set or scale a profile fact: dma.hold_channel_for_round_trip=0, hbm.bandwidth=x2 (repeatable, or several as K=V,K=V)")
    from tfx.cli.cmd_analyze import add_codegen_arg
    add_codegen_arg(p, side=" (the analysis the simulation starts from and is compared with)")
    p.add_argument("--full", action="store_true", help="simulate every SM/PE instead of a representative one")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--no-events", action="store_true", help="JSON without the event list (event_count only)")
    p.add_argument("--trace", metavar="OUT.json", help="write a Chrome Trace Event file (ui.perfetto.dev)")
    p.add_argument("--max-events", type=int_arg(1, 10 ** 12), metavar="N",
                   help="work items the simulation may process (default 500,000, about 15 s); "
                        "estimated before it runs")
    p.add_argument("--tiles", type=int_arg(1, 2 ** 31 - 1), metavar="N",
                   help="simulate at most N trips of every loop and extrapolate the rest")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command, with the cyclic garbage collector paused: a simulation allocates
    hundreds of thousands of acyclic tuples and lists (its events, their JSON lines) that
    the collector would scan again and again (about 7% of ``--full --json`` on gemm
    4096^3). They are freed by reference counting when ``_run`` returns, before it resumes."""
    import gc
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if was_enabled:
            gc.enable()


def _run(args) -> int:
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    from tfx.sim import simulate

    if args.trace:
        from tfx.files import check_writable
        check_writable(args.trace, what="the trace")
    params = parse_int_assignments(args.assignments, "--set")
    knobs = parse_assignments(args.knobs, "--knob")
    module = parse_file(args.file)
    profile = load_profile(args.hw, option="--hw").with_knobs(knobs)
    params = check_set_domains(module, args.kernel, params, profile)
    # analyze() refuses a code generator the profile cannot compile for (tfx.analysis.codegen.check_profile)
    a = analyze(module, args.kernel, profile, params=params, codegen=args.codegen)
    need_events = bool(args.trace) or (args.json and not args.no_events) or not args.json
    r = simulate(a, full=args.full, tiles=args.tiles, events=need_events, max_events=args.max_events)
    if args.trace:
        r.write_trace(args.trace)
    if args.json:
        emit_json(r.to_json(events=False), small=True,
                  last_array=None if args.no_events else ("events", r.events_json_chunks()))
        keep_until_exit(r)            # (a process that ends now need not free its events)
        return 0
    print_text(r, trace=args.trace)
    return 0


def print_text(r, trace=None, width: int = 72) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=True)
    a = r.analysis
    mode = ("every unit simulated" if r.mode == "full"
            else "one representative unit, waves extrapolated")
    from tfx.present.analysis_report import inputs_line, parameters_line
    from tfx.cli.common import output_width, text_width
    from tfx.present.layout import keep, wrap
    from tfx.present.simulation import comparison_lines, comparison_times, efficiency_line
    cols = text_width()

    def say(line: str, hang: int | None = None) -> None:
        # a line past the terminal's width wraps at words (a pipe keeps it whole)
        for part in wrap(line, cols, hang):
            console.print(part, markup=False)
    # the inputs as analyze's first line names them, then how it was simulated on a line of its
    # own (both on one line took 121 columns for gemm)
    say(inputs_line(a))
    console.print(f"  {mode}; integer ns", markup=False)
    say(f"  parameters: {parameters_line(a)}")
    lines = comparison_lines(r)
    if 2 + len(lines[0]) > output_width():
        # the three times one a line where the one line does not fit (gemm's took 106 columns at 80);
        # a pipe (WIDE_OUTPUT) keeps them on one
        lines = [f"{label:<9} {text}" for label, text in comparison_times(r)] + lines[1:]
    for line in lines:
        say("  " + line)
    say("  " + efficiency_line(r), 16)
    t = Table(box=None, pad_edge=False, show_edge=False)
    t.add_column("engine")
    t.add_column("busy", justify="right")
    t.add_column("util", justify="right")
    for name, e in r.engines.items():
        if e["busy_ns"]:
            t.add_row(name, fmt.ns(e["busy_ns"]), fmt.ratio_pct(e['utilization']))
    console.print(t)
    st = r.stalls
    say("  stalls        " + "   ".join(keep(f"{k} {fmt.ns(v)}") for k, v in st.items()), 16)
    worst = r.stalls_by_op(4)
    if worst:
        say("  waited most   " + "; ".join(keep(f"{op} {fmt.ns(ns)} ({why})") for op, why, ns in worst), 16)
    for ls in r.launches:
        for b in ls.batches:
            say(f"  {ls.scope}: {b.name} x{fmt.count(b.count)}: {fmt.ns(b.makespan_ns)} "
                f"({fmt.counted(b.commands, 'command')}, {fmt.counted(b.descriptors, 'DMA descriptor')})")
    # the chart's cells: 72, fewer where '  dispatch |' + the cells + '|' (14 + cells) would pass
    # the terminal's width
    _gantt(console, r, width if cols is None else max(min(width, cols - 14), 20))
    if trace:
        console.print(f"  trace written to {trace} (open in ui.perfetto.dev)")


def _gantt(console, r, width: int) -> None:
    tl = r.timeline
    if not len(tl):
        return
    first = tl.events[0][0]
    # the first few tiles: up to the end of tile 3 of the first unit, or the first 40 events
    evs = [e for e in tl.events if e[5] == 0][:200]
    end = first
    for e in evs:
        if e[4] <= 2:
            end = max(end, e[1])
    if end <= first:
        end = max(e[1] for e in evs)
    span = max(end - first, 1)
    console.print(f"  first tiles, unit 0 ({fmt.ns(first)} .. {fmt.ns(end)}; digits = tile index mod 10):")
    for i, name in enumerate(tl.engines):
        row = [" "] * width
        used = False
        for e in evs:
            if e[2] != i or e[0] >= end:
                continue
            a = int((e[0] - first) * width / span)
            b = max(int((min(e[1], end) - first) * width / span), a + 1)
            for x in range(max(a, 0), min(b, width)):
                row[x] = str(e[4] % 10)
            used = True
        if used:
            console.print(f"  {name:>9} |{''.join(row)}|", markup=False)
