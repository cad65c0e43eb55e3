"""``tfx model serve``: throughput per GPU, TTFT and TPOT for a request mix (tfx.model.serve);
``--suggest`` searches for the most tokens/s per GPU under ``--ttft-ms`` / ``--tpot-ms``."""

from __future__ import annotations

from tfx.cli.common import emit_json, float_arg, int_arg, say
from tfx.cli.model_common import add_parallel_args, add_workload_args, parallel_where, parallelism, system, workload
from tfx.present import formatting as fmt
from tfx.hw.units import format_plain, format_requests_per_s, format_tokens_per_s, format_whole
from tfx.model.presets import load_model
from tfx.model.serve import MODES, RequestMix, serve, suggest


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="serving: throughput per GPU, TTFT, TPOT for a request mix "
                                            "(continuous batching with chunked prefill, or disaggregated pools)")
    add_workload_args(p, hw_default="h200_nvl8")
    add_parallel_args(p)
    p.add_argument("--input", type=int_arg(1, 2 ** 24), default=2048, help="prompt tokens per request (default 2048)")
    p.add_argument("--output", type=int_arg(1, 2 ** 24), default=256, help="generated tokens per request (default 256)")
    p.add_argument("--concurrency", type=int_arg(1, 2 ** 20), default=None, help="requests in flight (default 64)")
    p.add_argument("--rate", type=float_arg(0, 1e9, lo_open=True), default=None, help="arrival rate, requests/s (instead of --concurrency)")
    p.add_argument("--serving", choices=MODES, default="chunked",
                   help="chunked: continuous batching with chunked prefill (default); disaggregated: "
                        "separate prefill and decode pools")
    p.add_argument("--chunk", type=int_arg(1, 2 ** 24), default=2048, help="prompt tokens per step with chunked prefill")
    p.add_argument("--decode-tp", type=int_arg(1, 1024), default=None, help="disaggregated: TP of the decode pool")
    p.add_argument("--suggest", action="store_true",
                   help="search TP, serving mode, chunk and concurrency for the most tokens/s per GPU")
    p.add_argument("--ttft-ms", type=float_arg(0, 1e9, lo_open=True), default=None, help="--suggest: TTFT bound, ms")
    p.add_argument("--tpot-ms", type=float_arg(0, 1e9, lo_open=True), default=None, help="--suggest: TPOT bound, ms")
    p.set_defaults(func=run)


def _mix(args) -> RequestMix:
    conc = args.concurrency if args.concurrency is not None else (None if args.rate is not None else 64)
    return RequestMix(args.input, args.output, conc, args.rate)


def _lines(r) -> list[str]:
    wl = r.workload
    dtypes = (f", weights {wl['weight_dtype']}, kv {wl['kv_dtype']}" if "weight_dtype" in wl and "kv_dtype" in wl else "")
    return [f"{r.model} on {r.hw}{fmt.with_knobs(r.knobs)}: {r.mode} serving, {r.parallelism} "
            f"({fmt.counted(r.devices, 'GPU')}), runtime {r.runtime}{dtypes}",
            f"  requests: input {fmt.count(r.mix.input)}, output {fmt.count(r.mix.output)}, "
            + (f"concurrency {fmt.count(r.mix.concurrency)}" if r.mix.rate is None else f"rate {format_plain(r.mix.rate)}/s")
            + f" -> decode batch {fmt.count(r.batch)}" + (f", {format_whole(r.prefill_tokens_per_step)} prompt tokens per step "
                                                          f"(chunk {fmt.count(r.chunk)})" if r.mode == "chunked" else ""),
            f"  throughput {format_tokens_per_s(r.output_tokens_per_s_per_gpu)} output tokens/s per GPU "
            f"({format_requests_per_s(r.requests_per_s_per_gpu)} requests/s per GPU)",
            f"  TTFT {fmt.ns(r.ttft_ns)}   TPOT {fmt.ns(r.tpot_ns)}   "
            + ("fits" if r.fits else "DOES NOT FIT") + " in memory"]


def run(args) -> int:
    model, sysm, wl = load_model(args.model, option="--model"), system(args), workload(args)
    if args.suggest:
        s = suggest(model, sysm, _mix(args), wl, args.ttft_ms, args.tpot_ms)
        if args.json:
            emit_json(s.to_json())
            return 0
        say(f"{s.feasible} of {s.candidates} configurations meet TTFT <= {args.ttft_ms} ms, "
              f"TPOT <= {args.tpot_ms} ms and fit")
        if s.best is None:
            return 0
        say("best:")
        say("\n".join(_lines(s.best)))
        say("frontier (tokens/s per GPU vs TPOT):")
        for r in s.frontier:
            say(f"  {format_tokens_per_s(r.output_tokens_per_s_per_gpu):>10} tok/s/GPU  TPOT {fmt.ns(r.tpot_ns):>10}  "
                  f"TTFT {fmt.ns(r.ttft_ns):>10}  {r.mode} {r.parallelism} batch {r.batch}")
        return 0
    par = parallelism(args)
    dpar = None
    if args.decode_tp is not None:
        from dataclasses import replace
        dpar = replace(par, tp=args.decode_tp)
    r = serve(model, sysm, _mix(args), par, wl, args.serving, args.chunk, dpar, where=parallel_where(args))
    if args.json:
        emit_json(r.to_json())
        return 0
    say("\n".join(_lines(r)))
    for note in r.notes:
        say(f"note: {note}")
    return 0
