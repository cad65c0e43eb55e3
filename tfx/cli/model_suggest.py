"""``tfx model suggest``: the Pareto frontier of parallelism configurations that fit."""

from __future__ import annotations

from tfx.cli.common import emit_json, int_arg, say
from tfx.cli.model_common import add_workload_args, system, workload
from tfx.present import formatting as fmt
from tfx.hw.units import format_tokens_per_s
from tfx.model.presets import load_model
from tfx.model.search import sensitivity, suggest
from tfx.model.system import Parallelism


def register(subparsers) -> None:
    p = subparsers.add_parser("suggest", help="parallelism configurations that fit; Pareto frontier")
    add_workload_args(p, hw_default="h200_nvl8")
    p.add_argument("--devices", type=int_arg(1, 2 ** 20), default=8, help="at most this many devices")
    p.add_argument("--scope", choices=("attn", "ffn", "both"), default="both")
    p.add_argument("--top", type=int_arg(0, 10 ** 6), default=0, help="show at most this many frontier points")
    p.add_argument("--sensitivity", metavar="CONFIG", default=None,
                   help="also sweep each knob alone from this baseline, e.g. 'tp=8,cp=2'")
    p.set_defaults(func=run)


def run(args) -> int:
    model = load_model(args.model, option="--model")
    sysm = system(args)
    r = suggest(model, sysm, workload(args), args.devices, args.scope, args.top)
    sens = None
    if args.sensitivity:
        sens = sensitivity(model, sysm, workload(args), Parallelism.parse(args.sensitivity, "--sensitivity"), args.devices)
    if args.json:
        data = r.to_json()
        if sens is not None:
            data["sensitivity"] = sens
        emit_json(data)
        return 0
    say(f"{r.model} on {r.hw}{fmt.with_knobs(r.knobs)} (<= {fmt.counted(r.max_devices, 'device')}, scope {r.scope}): "
        f"{fmt.counted(r.evaluated, 'configuration')} evaluated, {fmt.count(r.fitting)} fit {fmt.nbytes(r.capacity)} "
        f"per device, in {fmt.ns(r.seconds * 1e9)}")
    say(f"runtime {workload(args).runtime_description}")
    if r.pruned:
        say("pruned: " + ", ".join(f"{k} ({v})" for k, v in r.pruned.items()))
    # the configuration in 40 where the row fits (2 + 40 + 1 + 7 + 1 + 11 + 1 + 10 + 1 + 11 = 85
    # columns), else as wide as its longest label ('tp4 cp2 pp1 dp1 ep1 ring=kv', 27: 72)
    from tfx.cli.common import output_width
    cw = 40 if 85 <= output_width() else max(len("configuration"), *(len(c.parallelism.label()) for c in r.pareto))
    say(f"  {'configuration':<{cw}} {'devices':>7} {'latency':>11} {'tok/s/dev':>10} {'memory':>11}")
    for c in r.pareto:
        say(f"  {c.parallelism.label():<{cw}} {c.devices:>7} {fmt.ns(c.latency_ns):>11} "
            f"{format_tokens_per_s(c.tokens_per_s_per_device):>10} {fmt.nbytes(c.memory_bytes):>11}")
    if sens:
        say(f"sensitivity from {sens['baseline']}:")
        for knob, rows in sens["knobs"].items():
            cells = [f"{x['value']}: {fmt.ns(x['latency_ns'])}{'' if x['fits'] else ' (no fit)'}"
                     for x in rows if x.get("meaningful")]
            say(f"  {knob}: " + "; ".join(cells))
    return 0
