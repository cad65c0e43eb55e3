"""``tfx model hw-sweep``: hardware co-design over knobs x parallelism."""

from __future__ import annotations

from tfx.cli.common import emit_json, int_arg, say
from tfx.cli.model_common import add_workload_args, system, workload
from tfx.present import formatting as fmt
from tfx.hw.units import format_cost, format_percent_change, format_plain, format_speedup, format_whole
from tfx.model.presets import load_model
from tfx.model.search import DEFAULT_FACTORS, HW_KNOBS, hw_sweep


def factors_arg(text: str) -> tuple[float, ...]:
    """``--factors 0.5,1,2``: finite numbers > 0, each scales every knob (a factor of 0 or
    less has no meaning: it divided by zero, with a numpy warning, 'abc' was a ValueError
    traceback)."""
    import argparse
    import math

    from tfx.errors import shorten
    from tfx.literals import parse_float
    out = []
    for item in text.split(","):
        try:
            value = parse_float(item)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"expected finite numbers > 0 separated by commas, "
                                             f"found {shorten(item.strip())!r}")
        out.append(value)
    return tuple(out)


def register(subparsers) -> None:
    p = subparsers.add_parser("hw-sweep", help="hardware co-design: fastest fitting parallelism per hardware point")
    add_workload_args(p, hw_default="h200_nvl8")
    p.add_argument("--devices", type=int_arg(1, 2 ** 20), default=64)
    p.add_argument("--factors", type=factors_arg, default=DEFAULT_FACTORS,
                   help="factors applied to every knob (comma separated)")
    p.add_argument("--check", type=int_arg(0, 10 ** 6), default=0, help="re-analyse this many sampled points in full")
    p.set_defaults(func=run)


def run(args) -> int:
    factors = args.factors
    r = hw_sweep(load_model(args.model, option="--model"), system(args), workload(args), args.devices,
                 {k: factors for k in HW_KNOBS}, args.check)
    if args.json:
        emit_json(r.to_json())
        return 0
    say(f"{r.model} on {r.hw}{fmt.with_knobs(r.knobs)} (<= {fmt.count(r.max_devices)} devices): "
          f"{fmt.count(r.configs)} configurations x "
          f"{fmt.count(r.evaluations // max(r.configs, 1))} hardware points "
          f"= {fmt.count(r.evaluations)} evaluations in {fmt.ns(r.seconds * 1e9)} ({format_whole(r.evals_per_s)}/s)")
    say(f"runtime {workload(args).runtime_description}")
    say(f"baseline: {fmt.ns(r.baseline['latency_ns'])} with {r.baseline['config']} on {fmt.counted(r.baseline['devices'], 'device')}")
    say("doubling one knob (fastest fitting configuration re-chosen):")
    for k in r.ranking:
        say(f"  {k['knob']:<14} {format_speedup(k['speedup'])}  {fmt.ns(k['latency_ns'])}  {k['config']}")
    say("Pareto, latency vs cost proxy:")
    for p in r.pareto[:12]:
        f = " ".join(f"{k}={format_plain(v)}" for k, v in p["factors"].items())
        say(f"  {fmt.ns(p['latency_ns']):>11}  cost {format_cost(p['cost']):>8}  {p['config']} ({p['devices']} dev)  {f}", 30)
    for c in r.check:
        say(f"check: analytic {fmt.ns(c['analytic_ns'])} vs re-analysis {fmt.ns(c['reanalysis_ns'])} "
              f"({format_percent_change(c['relative_error'])})")
    return 0
