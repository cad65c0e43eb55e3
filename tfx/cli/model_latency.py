"""``tfx model latency``: per-stage latency of one step under one parallelism."""

from __future__ import annotations

from tfx.cli.common import WIDE_OUTPUT, emit_json, output_width, text_width
from tfx.cli.model_common import (add_parallel_args, add_workload_args, gemm_text, parallel_where, parallelism,
                                  system, workload)
from tfx.errors import argument_error
from tfx.model.latency import latency
from tfx.model.presets import load_model
from tfx.present import formatting as fmt
from tfx.hw.units import format_tokens_per_s


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
    print("\n".join(render(r, sysm.kind, output_width(), text_width())))
    return 0


def stage_table(r, width: int = WIDE_OUTPUT) -> list[str]:
    """The stage table: as it was (stage in 24, the times in 11, launch in 10) where that fits
    ``width``; else each column as wide as its widest cell, two spaces apart (llama3-8b decode:
    2 + 24 + 4 x 12 + 11 + 2 + 7 = 94 columns wide, 2 + 10 + 11 + 10 + 11 + 9 + 11 + 2 + 7 = 73
    narrow); where that still does not fit, without the table's indent of 2 (llama3-8b prefill at
    tp 8: the stage 'tp_allreduce_attn' in 17 and the five times in 9, 8, 9, 8, 9: 2 + 17 + 5 x 2
    + 43 + 2 + 7 = 81 -> 79), then one space apart; and where even that does not fit, the stage
    column is what the times leave, a longer name on a line of its own above its times
    (deepseek-v3 prefill at tp 8: 'tp_allreduce_attn[dense]', 24)."""
    header = ("stage", "total", "compute", "memory", "comm", "launch", "bound")
    rows = [(s.name, fmt.ns(s.total_ns), fmt.ns(s.compute_ns), fmt.ns(s.memory_ns), fmt.ns(s.comm_ns),
             fmt.ns(s.launch_ns), s.bound) for s in r.stages if s.total_ns != 0]
    wide = [f"  {c[0]:<24} {c[1]:>11} {c[2]:>11} {c[3]:>11} {c[4]:>11} {c[5]:>10}  {c[6]}" for c in (header, *rows)]
    if max(map(len, wide)) <= width:
        return wide
    w = [max(len(c[i]) for c in (header, *rows)) for i in range(len(header))]
    indent, gap = "  ", "  "
    if 2 + sum(w) + 6 * 2 > width:
        indent = ""
        gap = "  " if sum(w) + 6 * 2 <= width else " "
        if gap == " " and sum(w) + 7 > width:
            w[0] = max(width - (sum(w[1:]) + 7), len(header[0]))
    out = []
    for c in (header, *rows):
        if len(c[0]) > w[0]:
            out.append(c[0])
            c = ("", *c[1:])
        out.append((f"{indent}{c[0]:<{w[0]}}" + "".join(f"{gap}{c[i]:>{w[i]}}" for i in range(1, 6))
                    + f"  {c[6]}").rstrip())
    return out


def render(r, kind: str | None = None, width: int = WIDE_OUTPUT, text: int | None = None) -> list[str]:
    """The text of one result; ``kind`` (``gpu``/``tiled``) says what the GEMMs ran as; the stage
    table fits ``width`` columns (tfx.cli.common.output_width: the terminal's, a pipe's WIDE_OUTPUT);
    the other lines wrap at words past ``text`` (tfx.cli.common.text_width; None: each whole),
    a formula or note continuing 4 in (llama3-8b prefill at tp 8: q_proj's formula, 280 columns)."""
    from tfx.present.layout import wrap_all
    wl = r.workload
    head = [f"{r.model} on {r.hw}{fmt.with_knobs(r.knobs)}: {wl.mode}, batch {fmt.count(wl.batch)}, context {fmt.count(wl.context)}, weights {wl.weight_dtype}, "
           f"kv {wl.kv_dtype}; {r.parallelism.label()} on {fmt.counted(r.devices, 'device')}",
           f"runtime {wl.runtime_description}; {gemm_text(wl.gemm_codegen, kind)}",
           f"latency {fmt.ns(r.latency_ns)}  (attention {fmt.ns(r.attention_ns)}, ffn {fmt.ns(r.ffn_ns)}); "
           f"{fmt.count(r.launches)} launches; {format_tokens_per_s(r.tokens_per_s)} tokens/s"]
    out = wrap_all(head, text) + [""]
    out += stage_table(r, width)
    out.append("")
    m = r.memory
    out += wrap_all(["memory per device: " + ", ".join(f"{k} {fmt.nbytes(v)}" for k, v in m.items())
                     + f"; total {fmt.nbytes(sum(m.values()))} of {fmt.nbytes(r.capacity)} "
                     + ("(fits)" if r.fits else "(DOES NOT FIT)")], text)
    out.append("")
    out.append("formulas:")
    out += wrap_all((f"  {s.name}: {s.formula}" for s in r.stages if s.total_ns), text, 6)
    out += wrap_all((f"note: {n}" for n in r.notes), text, 4)
    return out
