"""``tfx model memory``: memory per device of one configuration against capacity."""

from __future__ import annotations

from tfx.cli.common import emit_json, say
from tfx.cli.model_common import add_parallel_args, add_workload_args, parallel_where, parallelism, system, workload
from tfx.present import formatting as fmt
from tfx.model.latency import memory
from tfx.model.presets import load_model


def register(subparsers) -> None:
    p = subparsers.add_parser("memory", help="memory per device: weights, KV cache, activations, workspace")
    add_workload_args(p)
    add_parallel_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    model, sysm, par, wl = load_model(args.model, option="--model"), system(args), parallelism(args), workload(args)
    m = memory(model, sysm, wl, par, where=parallel_where(args))
    if args.json:
        # what was priced, as every result names it: model, profile, the knobs applied and the
        # workload (batch, context and dtypes size the KV cache and activations; the JSON had
        # none of them)
        emit_json({"model": model.name, "hw": sysm.name, "knobs": dict(sysm.profile.knobs),
                   "workload": wl.to_json(), **m})
        return 0
    say(f"{model.name} on {sysm.name}{fmt.with_knobs(sysm.profile.knobs)}: {wl.mode}, batch {fmt.count(wl.batch)}, "
        f"context {fmt.count(wl.context)}, weights {wl.weight_dtype}, kv {wl.kv_dtype}; {par.label()}")
    for k in ("weights", "kv_cache", "activations", "workspace", "total", "capacity"):
        print(f"  {k:<12} {fmt.nbytes(m[k]):>12}  ({fmt.format_exact_bytes(m[k])})")
    print(f"  {'fits':<12} {'yes' if m['fits'] else 'NO'}  on {fmt.counted(m['devices'], 'device')}")
    return 0
