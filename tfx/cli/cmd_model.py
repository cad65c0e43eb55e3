"""``tfx model``: transformer model presets and their arithmetic.

Subcommands here: ``list`` and ``show``. Further subcommands (``latency``,
``memory``, ``suggest``, ``hw-sweep``, ``compare``) live in their own modules
``tfx/cli/model_<name>.py``, listed in ``SUBCOMMAND_MODULES``; each defines
``register(subparsers)`` exactly like a top-level command module, receiving the
``tfx model`` subparsers. A listed module that does not exist yet is skipped.
"""

from __future__ import annotations

import argparse
import importlib

from tfx.cli.common import emit_json, say
from tfx.hw.units import format_count
from tfx.hw.units import format_exact_bytes
from tfx.hw.units import format_percent_change, format_significant
from tfx.model.presets import (
    ModelConfig,
    ParamCounts,
    kv_bytes_per_token,
    kv_bytes_per_token_per_layer,
    list_models,
    load_model,
    param_counts,
    weight_bytes,
)

# Order is the order ``tfx model --help`` lists them (after list and show).
SUBCOMMAND_MODULES = ["latency", "memory", "suggest", "hw_sweep", "compare", "serve"]

SHOW_DTYPES = ("bf16", "fp8", "nvfp4")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "model", help="transformer inference across devices: presets, latency, memory, suggest, hw-sweep, compare",
        description="Transformer model presets (models/*.toml or your own TOML file).")
    sub = parser.add_subparsers(dest="model_command", metavar="SUBCOMMAND",
                                parser_class=type(parser))
    parser.set_defaults(func=lambda args: _usage(parser))

    p_list = sub.add_parser("list", help="one line per bundled preset")
    p_list.add_argument("--json", action="store_true", help="print JSON")
    p_list.set_defaults(func=run_list)

    p_show = sub.add_parser("show", help="every field, parameter counts vs published, KV bytes")
    p_show.add_argument("model", metavar="NAME", help="a preset name or a path to a preset TOML")
    p_show.add_argument("--json", action="store_true", help="print JSON")
    p_show.set_defaults(func=run_show)

    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"tfx.cli.model_{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"tfx.cli.model_{name}":
                continue
            raise
        module.register(sub)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


# --------------------------------------------------------------------------- #
# Formatting helpers
# --------------------------------------------------------------------------- #

def human_count(n: int | float) -> str:
    from tfx.present.formatting import parameter_count
    return parameter_count(n)


def human_bytes(n: int | float) -> str:
    from tfx.present.formatting import nbytes
    return nbytes(n)


def attention_summary(model: ModelConfig) -> str:
    """``GQA 32q/8kv``, ``MLA 128h``, ``MHA 32h``, with ``+SWA`` for sliding windows."""
    kind = model.attention_kind
    if kind == "GQA" or kind == "MQA":
        text = f"{kind} {model.num_attention_heads}q/{model.num_kv_heads}kv"
    else:
        text = f"{kind} {model.num_attention_heads}h"
    if model.sliding_window is not None:
        text += " +SWA"
    return text


def params_summary(model: ModelConfig, counts: ParamCounts) -> str:
    if model.is_moe:
        return f"{human_count(counts.total)} ({human_count(counts.active)} active)"
    return human_count(counts.total)


def _relative(computed: int, published: int) -> float:
    return computed / published - 1.0


def published_check(model: ModelConfig, counts: ParamCounts) -> dict | None:
    """Computed counts beside the published ones, with relative differences."""
    pub = model.published_params
    if pub is None:
        return None
    out = {"source": pub.source, "note": pub.note, "tolerance": pub.tolerance,
           "total": {"published": pub.total, "computed": counts.total,
                     "relative_difference": _relative(counts.total, pub.total)}}
    if pub.active is not None:
        computed = counts.active_excluding_embedding if pub.active_excludes_embedding else counts.active
        out["active"] = {"published": pub.active, "computed": computed,
                         "excludes_embedding": pub.active_excludes_embedding,
                         "relative_difference": _relative(computed, pub.active)}
    if pub.non_embedding is not None:
        out["non_embedding"] = {"published": pub.non_embedding, "computed": counts.non_embedding,
                                "relative_difference": _relative(counts.non_embedding, pub.non_embedding)}
    return out


def layer_groups(counts: ParamCounts) -> list[dict]:
    """Runs of consecutive layers with identical parameter breakdowns."""
    groups: list[dict] = []
    for layer in counts.layers:
        key = (layer.kind, layer.attention, layer.ffn, layer.ffn_active, layer.norms)
        if groups and groups[-1]["_key"] == key:
            groups[-1]["last"] = layer.index
            continue
        groups.append({"_key": key, "first": layer.index, "last": layer.index, "kind": layer.kind,
                       "attention": layer.attention, "ffn": layer.ffn, "ffn_active": layer.ffn_active,
                       "norms": layer.norms, "total": layer.total, "active": layer.active})
    for group in groups:
        del group["_key"]
        group["count"] = group["last"] - group["first"] + 1
    return groups


# --------------------------------------------------------------------------- #
# list
# --------------------------------------------------------------------------- #

def run_list(args) -> int:
    rows = []
    for name in list_models():
        model = load_model(name)
        counts = param_counts(model)
        rows.append((model, counts))
    if args.json:
        emit_json([{"name": m.name, "total_params": c.total,
                    "active_params": c.active if m.is_moe else c.total,
                    "num_layers": m.num_layers, "hidden_size": m.hidden_size,
                    "attention": m.attention_kind, "moe": m.is_moe,
                    "sliding_window": m.sliding_window} for m, c in rows])
        return 0
    table = [("NAME", "PARAMS", "LAYERS", "HIDDEN", "ATTENTION")]
    table += [(m.name, params_summary(m, c), str(m.num_layers), str(m.hidden_size),
               attention_summary(m)) for m, c in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1]),
                 row[2].rjust(widths[2]), row[3].rjust(widths[3]), row[4]]
        say("  ".join(cells).rstrip())
    return 0


# --------------------------------------------------------------------------- #
# show
# --------------------------------------------------------------------------- #

def show_json(model: ModelConfig) -> dict:
    counts = param_counts(model)
    return {
        "model": model.to_json(),
        "attention_kind": model.attention_kind,
        "params": counts.to_json(),
        "layer_groups": layer_groups(counts),
        "published_check": published_check(model, counts),
        "kv_bytes_per_token_per_layer": {d: kv_bytes_per_token_per_layer(model, d) for d in SHOW_DTYPES},
        "kv_bytes_per_token": {d: kv_bytes_per_token(model, d) for d in SHOW_DTYPES},
        "weight_bytes": {d: weight_bytes(model, d) for d in SHOW_DTYPES},
    }


def run_show(args) -> int:
    model = load_model(args.model, option="tfx model show")
    if args.json:
        emit_json(show_json(model))
        return 0
    for line in show_lines(model):
        # a row's value continues under its column (2 + 28 + 1 = 31)
        say(line, 31 if line.startswith("  ") and len(line) > 31 and line[30] == " " else None)
    return 0


def show_lines(model: ModelConfig) -> list[str]:
    counts = param_counts(model)
    out = [f"{model.name}: {model.description}" if model.description else model.name,
           f"  source   {model.source}",
           f"  file     {model.source_path}", ""]

    def row(label: str, value) -> None:
        out.append(f"  {label:<28} {value}")

    out.append("architecture")
    row("hidden_size", format_count(model.hidden_size))
    row("num_layers", format_count(model.num_layers))
    row("vocab_size", f"{format_count(model.vocab_size)}  ({'tied' if model.tie_word_embeddings else 'untied'} lm head)")
    row("norm", f"{model.norm}{' with bias' if model.norm_bias else ''}, {model.norms_per_layer} per layer"
        + (", q/k norm" if model.qk_norm else ""))
    pos = model.position_embedding
    if model.max_position_embeddings:
        pos += f", max {format_count(model.max_position_embeddings)} positions"
    if model.rope_theta:
        pos += f", theta {format_significant(model.rope_theta, 6)}"
    row("positions", pos)
    out.append("attention")
    row("kind", attention_summary(model))
    if model.mla is not None:
        mla = model.mla
        row("q_lora_rank", format_count(mla.q_lora_rank) if mla.q_lora_rank else "none (q from hidden)")
        row("kv_lora_rank", format_count(mla.kv_lora_rank))
        row("qk_nope/qk_rope/v head dims", f"{format_count(mla.qk_nope_head_dim)}/{format_count(mla.qk_rope_head_dim)}/{format_count(mla.v_head_dim)}")
    else:
        row("heads q/kv x head_dim", f"{format_count(model.num_attention_heads)}/{format_count(model.num_kv_heads)} x {format_count(model.head_dim)}")
    biases = [n for n, on in (("qkv", model.attention_qkv_bias), ("out", model.attention_out_bias)) if on]
    row("biases", ", ".join(biases) or "none")
    if model.sliding_window is not None:
        layers = model.sliding_window_layers
        which = "all" if len(layers) == model.num_layers else f"{len(layers)} of {model.num_layers}"
        row("sliding window", f"{format_count(model.sliding_window)} tokens on {which} layers")
    out.append("ffn")
    kind = f"{'gated ' if model.ffn_gated else ''}{model.ffn_activation}, {model.ffn_matrices} matrices"
    row("kind", kind + (", biases" if model.ffn_bias else ""))
    row("intermediate_size", format_count(model.intermediate_size)
        if not model.is_moe or model.moe.first_dense_layers else f"{format_count(model.intermediate_size)} (no dense layers)")
    if model.moe is not None:
        moe = model.moe
        row("experts", f"{format_count(moe.num_experts)} routed, top-{moe.experts_per_token}, width "
            f"{format_count(moe.expert_intermediate_size)}")
        if moe.num_shared_experts:
            row("shared experts", f"{format_count(moe.num_shared_experts)}, width {format_count(moe.shared_width)}")
        if moe.first_dense_layers:
            row("dense layers", f"first {moe.first_dense_layers}")
        if moe.router_score_bias:
            row("router", "with per-expert score bias")

    out.append("")
    out.append("parameters")
    row("embedding", f"{format_count(counts.embedding)}")
    if counts.position_embedding:
        row("position embedding", f"{format_count(counts.position_embedding)}")
    for g in layer_groups(counts):
        span = f"layer {g['first']}" if g["count"] == 1 else f"layers {g['first']}-{g['last']}"
        ffn = f"{format_count(g['ffn'])}" + (f" (active {format_count(g['ffn_active'])})" if g["kind"] == "moe" else "")
        row(f"{span} ({g['kind']}) each", f"attention {format_count(g['attention'])}, ffn {ffn}, norms {format_count(g['norms'])}")
    row("lm head", f"{format_count(counts.lm_head)}" if counts.lm_head else "tied to the embedding")
    row("final norm", f"{format_count(counts.final_norm)}")
    row("total", f"{format_count(counts.total)}  ({human_count(counts.total)})")
    if model.is_moe:
        row("active per token", f"{format_count(counts.active)}  ({human_count(counts.active)}; "
            f"{human_count(counts.active_excluding_embedding)} without the input embedding)")
    row("non-embedding", f"{format_count(counts.non_embedding)}  ({human_count(counts.non_embedding)})")

    check = published_check(model, counts)
    if check is not None:
        out.append("published")
        for key in ("total", "active", "non_embedding"):
            if key in check:
                c = check[key]
                basis = ", without the input embedding" if c.get("excludes_embedding") else ""
                row(key, f"{human_count(c['published'])}  (computed {human_count(c['computed'])}{basis}, "
                    f"{format_percent_change(c['relative_difference'])})")
        row("source", check["source"])
        if check["note"]:
            row("note", check["note"])

    out.append("")
    out.append("bytes")
    for dtype in SHOW_DTYPES:
        row(f"weights {dtype}", f"{format_exact_bytes(weight_bytes(model, dtype))}  ({human_bytes(weight_bytes(model, dtype))})")
    for dtype in ("bf16", "fp8"):
        per_layer = kv_bytes_per_token_per_layer(model, dtype)
        row(f"KV per token {dtype}", f"{format_exact_bytes(per_layer, 'layer')}, {format_exact_bytes(kv_bytes_per_token(model, dtype))} "
            f"over {model.num_layers} layers")
    return out
