"""``tfx model suggest``: the Pareto frontier of parallelism configurations that fit."""

from __future__ import annotations

from tfx.cli.common import emit_json, int_arg
from tfx.cli.model_common import add_workload_args, system, workload
from tfx.present import formatting as fmt
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
    print(f"{r.model} on {r.hw}{fmt.with_knobs(r.knobs)} (<= {r.max_devices} devices, scope {r.scope}): {r.evaluated} configurations "
          f"evaluated, {r.fitting} fit {fmt.nbytes(r.capacity)} per device, in {fmt.ns(r.seconds * 1e9)}")
    print(f"runtime {workload(args).runtime_description}")
    if r.pruned:
        print("pruned: " + ", ".join(f"{k} ({v})" for k, v in r.pruned.items()))
    print(f"  {'configuration':<40} {'devices':>7} {'latency':>11} {'tok/s/dev':>10} {'memory':>11}")
    for c in r.pareto:
        print(f"  {c.parallelism.label():<40} {c.devices:>7} {fmt.ns(c.latency_ns):>11} "
              f"{c.tokens_per_s_per_device:>10.1f} {fmt.nbytes(c.memory_bytes):>11}")
    if sens:
        print(f"sensitivity from {sens['baseline']}:")
        for knob, rows in sens["knobs"].items():
            cells = [f"{x['value']}: {fmt.ns(x['latency_ns'])}{'' if x['fits'] else ' (no fit)'}"
                     for x in rows if x.get("meaningful")]
            print(f"  {knob}: " + "; ".join(cells))
    return 0
