"""``tfx model latency``: per-stage latency of one step under one parallelism."""

from __future__ import annotations

from tfx.cli.common import emit_json
from tfx.cli.model_common import (add_parallel_args, add_workload_args, gemm_text, parallel_where, parallelism,
                                  system, workload)
from tfx.errors import argument_error
from tfx.model.latency import latency
from tfx.model.presets import load_model
from tfx.present import formatting as fmt


def register(subparsers) -> None:
    p = subparsers.add_parser("latency", help="per-stage latency of a step on many devices",
                              description="Per-stage latency (compute, memory, communication, bound, formula) "
                                          "of one prefill or decode step.")
    add_workload_args(p)
    add_parallel_args(p)
    p.add_argument("--save", metavar="FILE", help="save the result as JSON (for tfx model compare)")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.save:
        from tfx.files import check_writable
        check_writable(args.save, what="the saved result")
    sysm = system(args)
    r = latency(load_model(args.model, option="--model"), sysm, workload(args), parallelism(args),
                where=parallel_where(args))
    if args.devices is not None and args.devices != r.devices:
        raise argument_error("--devices", f"{r.parallelism.label()} uses {r.devices} devices",
                             found=str(args.devices))
    data = r.to_json()
    if args.save:
        from tfx.files import write_json_atomic
        write_json_atomic(args.save, data, what="the saved result")
    if args.json:
        emit_json(data)
        return 0
    print("\n".join(render(r, sysm.kind)))
    return 0


def render(r, kind: str | None = None) -> list[str]:
    """The text of one result; ``kind`` (``gpu``/``tiled``) says what the GEMMs ran as."""
    wl = r.workload
    out = [f"{r.model} on {r.hw}{fmt.with_knobs(r.knobs)}: {wl.mode}, batch {fmt.count(wl.batch)}, context {fmt.count(wl.context)}, weights {wl.weight_dtype}, "
           f"kv {wl.kv_dtype}; {r.parallelism.label()} on {r.devices} device(s)",
           f"runtime {wl.runtime_description}; {gemm_text(wl.gemm_codegen, kind)}",
           f"latency {fmt.ns(r.latency_ns)}  (attention {fmt.ns(r.attention_ns)}, ffn {fmt.ns(r.ffn_ns)}); "
           f"{fmt.count(r.launches)} launches; {r.tokens_per_s:,.1f} tokens/s", ""]
    out.append(f"  {'stage':<24} {'total':>11} {'compute':>11} {'memory':>11} {'comm':>11} {'launch':>10}  bound")
    for s in r.stages:
        if s.total_ns == 0:
            continue
        out.append(f"  {s.name:<24} {fmt.ns(s.total_ns):>11} {fmt.ns(s.compute_ns):>11} {fmt.ns(s.memory_ns):>11} "
                   f"{fmt.ns(s.comm_ns):>11} {fmt.ns(s.launch_ns):>10}  {s.bound}")
    out.append("")
    m = r.memory
    out.append("memory per device: " + ", ".join(f"{k} {fmt.nbytes(v)}" for k, v in m.items())
               + f"; total {fmt.nbytes(sum(m.values()))} of {fmt.nbytes(r.capacity)} "
               + ("(fits)" if r.fits else "(DOES NOT FIT)"))
    out.append("")
    out.append("formulas:")
    for s in r.stages:
        if s.total_ns:
            out.append(f"  {s.name}: {s.formula}")
    for n in r.notes:
        out.append(f"note: {n}")
    return out
