"""``tfx model compare``: configurations side by side, per stage, best in each row marked."""

from __future__ import annotations

import json

from tfx.cli.common import emit_json, read_text
from tfx.cli.model_common import add_workload_args, gemm_text, profile_kind
from tfx.present import formatting as fmt
from tfx.errors import SourceLocation, TfxError, argument_error
from tfx.model.compare import compare_results
from tfx.model.latency import latency
from tfx.model.presets import load_model
from tfx.model.system import Parallelism, not_meaningful_message, validate


def register(subparsers) -> None:
    p = subparsers.add_parser("compare", help="saved results or --config strings side by side")
    p.add_argument("files", nargs="*", metavar="FILE", help="JSON saved by tfx model latency --save/--json")
    p.add_argument("--config", action="append", default=[], metavar="CONFIG",
                   help="a parallelism to evaluate, e.g. 'tp=8,cp=2' (needs --model)")
    add_workload_args(p)
    p._option_string_actions["--model"].required = False
    p.set_defaults(func=run)


SAVED = "a result saved by tfx model latency --save/--json"


def check_saved(obj, path: str) -> dict:
    """``obj`` if it holds what compare_results reads of a saved result (latency_ns; stages,
    each with a name and total_ns; memory.total; attention_ns, ffn_ns, devices where given),
    else one line at ``path:key`` saying what was expected (was a KeyError or AttributeError
    traceback for any other JSON)."""
    import math

    def number(value, key, optional=False):
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise TfxError(f"expected {SAVED}: {key} a finite number >= 0, found {json.dumps(value)[:40]}",
                           where=f"{path}:{key}")

    if not isinstance(obj, dict):
        raise TfxError(f"expected {SAVED} (a JSON object), found a JSON {type(obj).__name__}", where=path)
    for key in ("latency_ns", "stages", "memory"):
        if key not in obj:
            raise TfxError(f"expected {SAVED}: no key {key!r}", where=path)
    number(obj["latency_ns"], "latency_ns")
    for key in ("attention_ns", "ffn_ns", "devices"):
        number(obj.get(key), key, optional=True)
    if not isinstance(obj["memory"], dict):
        raise TfxError(f"expected {SAVED}: memory an object", where=f"{path}:memory")
    number(obj["memory"].get("total"), "memory.total", optional=True)
    if not isinstance(obj["stages"], list):
        raise TfxError(f"expected {SAVED}: stages a list", where=f"{path}:stages")
    for i, st in enumerate(obj["stages"]):
        if not isinstance(st, dict) or not isinstance(st.get("name"), str):
            raise TfxError(f"expected {SAVED}: each stage an object with a name", where=f"{path}:stages[{i}]")
        number(st.get("total_ns"), f"stages[{i}].total_ns")
    for key in ("workload", "knobs"):
        if not isinstance(obj.get(key) or {}, dict):
            raise TfxError(f"expected {SAVED}: {key} an object", where=f"{path}:{key}")
    return obj


def priced_line(p: dict) -> str:
    """``tp2 cp1 pp1 dp1 ep1: llama3.1-8b on h200_nvl8: decode, batch 1, context 8,192, weights
    bf16, kv bf16``: what one column priced, as tfx model latency's first line says it."""
    wl = p["workload"]
    what = ", ".join(x for x in (
        str(wl["mode"]) if "mode" in wl else "",
        f"batch {fmt.count(wl['batch'])}" if isinstance(wl.get("batch"), (int, float)) else "",
        f"context {fmt.count(wl['context'])}" if isinstance(wl.get("context"), (int, float)) else "",
        f"weights {wl['weight_dtype']}" if "weight_dtype" in wl else "",
        f"kv {wl['kv_dtype']}" if "kv_dtype" in wl else "") if x)
    return f"{p['column']}: {p['model'] or '?'} on {p['hw'] or '?'}{fmt.with_knobs(p['knobs'])}" + (f": {what}" if what else "")


def run(args) -> int:
    results = []
    for f in args.files:
        try:
            obj = json.loads(read_text(f))
        except json.JSONDecodeError as exc:
            raise TfxError(f"not JSON: {exc.msg}", where=SourceLocation(f, exc.lineno, exc.colno)) from None
        results.append(check_saved(obj, f))
    if args.config:
        if not args.model:
            raise argument_error("--config", "expected with --model")
        from tfx.cli.model_common import system, workload
        sysm, wl, model = system(args), workload(args), load_model(args.model, option="--model")
        for c in args.config:
            par = Parallelism.parse(c, "--config")
            why = validate(model, wl, par, sysm)
            if why:
                # the configuration given is what was refused: name it as every refusal names its option
                raise argument_error("--config", not_meaningful_message(par, why))
            # any other refusal (fp8 on a GPU without fp8 tensor cores, say) is not --config's: it
            # keeps its own place and notes
            results.append(latency(model, sysm, wl, par).to_json())
    if len(results) < 1:
        raise TfxError("nothing to compare: expected FILEs or --config", where="tfx model compare")
    table = compare_results(results)
    if args.json:
        emit_json(table)
        return 0
    print("\n".join(render(table, results)))
    return 0


def render(table: dict, results: list[dict], width: int | None = None, text: int | None = None) -> list[str]:
    """The text of a comparison: what each column priced, the runtime, the table of rows with the
    best of each marked. The table as it was (stage in 24, each column as wide as the longest
    label, 19 for 'tp1 cp1 pp1 dp1 ep1', 4 spaces apart) where it fits ``width`` (default
    tfx.cli.common.output_width); else the columns are numbered #1, #2, ... (each priced line
    starts with its number and label) and each is as wide as its widest value, the stage as wide
    as the longest name (llama3-70b, 4 configurations: 2 + 24 + 4 x 23 = 118 columns; narrow
    2 + 17 + 4 x (2 + 9 + 2) = 71). Prose lines wrap at ``text`` (tfx.cli.common.text_width)."""
    from tfx.cli.common import output_width, text_width
    from tfx.present.layout import wrap
    width = output_width() if width is None else width
    text = text_width() if text is None else text
    names = table["columns"]
    w = max(12, *(len(n) for n in names))
    cell_texts = [[fmt.row_value(v, row["unit"]) for v in row["values"]] for row in table["rows"]]
    numbered = 2 + 24 + len(names) * (2 + w + 2) > width
    out = []
    for i, p in enumerate(table["priced"]):
        out += wrap((f"#{i + 1} " if numbered else "") + priced_line(p), text)
    runtimes = sorted({r.get("workload", {}).get("runtime") or r.get("workload", {}).get("kernels", "?")
                       for r in results})
    gemms = sorted({gemm_text(r.get("workload", {}).get("gemm_codegen", "?"), profile_kind(str(r.get("hw", ""))))
                    for r in results})
    out += wrap("runtime " + ", ".join(str(x) for x in runtimes) + "; " + ", ".join(gemms), text)
    # A column is two spaces, its value right-aligned under its label, then the best mark (' *'):
    # labels of 19 characters ('tp1 cp1 pp1 dp1 ep1') are 4 spaces apart, not 1 (they ran into one)
    labels, stage = names, 24
    if numbered:
        labels = [f"#{i + 1}" for i in range(len(names))]
        w = max(len(c) for c in (*labels, *(c for row in cell_texts for c in row)))
        stage = max(len(x) for x in ("stage", *(row["name"] for row in table["rows"])))
    out.append((f"  {'stage':<{stage}}" + "".join(f"  {n:>{w}}  " for n in labels)).rstrip())
    for row, texts in zip(table["rows"], cell_texts):
        cells = [f"  {t:>{w}}{' *' if best else '  '}" for t, best in zip(texts, row["best"])]
        out.append((f"  {row['name']:<{stage}}" + "".join(cells)).rstrip())
    out.append("  * best in the row")
    return out
