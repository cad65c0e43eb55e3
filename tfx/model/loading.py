"""Loading and validating preset files (``models/<name>.toml`` or any path) into
:class:`tfx.model.schema.ModelConfig`; unknown keys and wrong types are refused by name."""

from __future__ import annotations

import difflib
from dataclasses import replace
from pathlib import Path
from typing import Any

from tfx.errors import TfxError, parse_toml, read_text_file
from tfx.hw.units import format_count, format_significant
from tfx.model.schema import (FFN_ACTIVATIONS, NORM_KINDS, POSITION_EMBEDDINGS, MLAConfig, ModelConfig,
                              MoEConfig, PublishedParams)
from tfx.bundled import bundled_dir

# --------------------------------------------------------------------------- #
# Loading and validation
# --------------------------------------------------------------------------- #

# key -> (accepted types, required). ``int`` never accepts ``bool``.
_TOP_KEYS: dict[str, tuple[tuple[type, ...], bool]] = {
    "name": ((str,), False),
    "family": ((str,), False),
    "description": ((str,), False),
    "source": ((str,), True),
    "hidden_size": ((int,), True),
    "num_layers": ((int,), True),
    "num_attention_heads": ((int,), True),
    "num_kv_heads": ((int,), False),
    "head_dim": ((int,), False),
    "intermediate_size": ((int,), True),
    "ffn_activation": ((str,), True),
    "ffn_gated": ((bool,), True),
    "vocab_size": ((int,), True),
    "tie_word_embeddings": ((bool,), True),
    "norm": ((str,), False),
    "norm_bias": ((bool,), False),
    "norms_per_layer": ((int,), False),
    "qk_norm": ((bool,), False),
    "attention_qkv_bias": ((bool,), False),
    "attention_out_bias": ((bool,), False),
    "ffn_bias": ((bool,), False),
    "lm_head_bias": ((bool,), False),
    "position_embedding": ((str,), False),
    "max_position_embeddings": ((int,), False),
    "rope_theta": ((int, float), False),
    "sliding_window": ((int,), False),
    "sliding_window_layers": ((str, list), False),
    "moe": ((dict,), False),
    "mla": ((dict,), False),
    "published_params": ((dict,), False),
}

_MOE_KEYS = {
    "num_experts": ((int,), True),
    "experts_per_token": ((int,), True),
    "expert_intermediate_size": ((int,), True),
    "num_shared_experts": ((int,), False),
    "shared_expert_intermediate_size": ((int,), False),
    "first_dense_layers": ((int,), False),
    "router_score_bias": ((bool,), False),
}

_MLA_KEYS = {
    "kv_lora_rank": ((int,), True),
    "qk_nope_head_dim": ((int,), True),
    "qk_rope_head_dim": ((int,), True),
    "v_head_dim": ((int,), True),
    "q_lora_rank": ((int,), False),
}

_PUBLISHED_KEYS = {
    "total": ((int,), True),
    "source": ((str,), True),
    "active": ((int,), False),
    "non_embedding": ((int,), False),
    "active_excludes_embedding": ((bool,), False),
    "tolerance": ((float,), False),
    "note": ((str,), False),
}

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
               list: "an array", dict: "a table"}


def _check_table(table: dict, spec: dict, where: str, prefix: str) -> dict:
    """Refuse unknown keys, missing required keys and wrong types, by name."""
    for key, value in table.items():
        path = f"{prefix}{key}"
        if key not in spec:
            close = difflib.get_close_matches(key, spec, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TfxError(f"unknown key {key!r}{hint}", where=f"{where}:{path}")
        types, _ = spec[key]
        ok = any(isinstance(value, t) and not (t in (int, float) and isinstance(value, bool))
                 for t in types)
        if not ok:
            expected = " or ".join(_TYPE_NAMES[t] for t in types)
            raise TfxError(f"expected {expected}, got {_describe(value)}", where=f"{where}:{path}")
    for key, (_, required) in spec.items():
        if required and key not in table:
            raise TfxError(f"missing required key {key!r}", where=f"{where}:{prefix}{key}")
    return table


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return f"{type(value).__name__} {value!r}"


# Ceilings of the sizes and counts a preset states: far above every published model (the
# largest shipped presets have 16,384 hidden, 126 layers, 256 experts, a 256k vocabulary),
# low enough that weights, KV bytes and FLOPs computed from them stay exact in an int64
# and the per-layer work stays bounded (num_layers = 2**63 would loop for ever).
PRESET_CEILINGS = {
    "hidden_size": 2 ** 20, "num_layers": 2 ** 14, "num_attention_heads": 2 ** 14,
    "num_kv_heads": 2 ** 14, "head_dim": 2 ** 14, "intermediate_size": 2 ** 22,
    "vocab_size": 2 ** 24, "max_position_embeddings": 2 ** 31, "sliding_window": 2 ** 31,
    "norms_per_layer": 64,
    "moe.num_experts": 2 ** 14, "moe.experts_per_token": 2 ** 14, "moe.expert_intermediate_size": 2 ** 22,
    "moe.num_shared_experts": 2 ** 10, "moe.shared_expert_intermediate_size": 2 ** 22,
    "moe.first_dense_layers": 2 ** 14,
    "mla.kv_lora_rank": 2 ** 20, "mla.qk_nope_head_dim": 2 ** 14, "mla.qk_rope_head_dim": 2 ** 14,
    "mla.v_head_dim": 2 ** 14, "mla.q_lora_rank": 2 ** 20,
    "published_params.total": 10 ** 15, "published_params.active": 10 ** 15,
    "published_params.non_embedding": 10 ** 15,
}


def _positive(table: dict, key: str, where: str, prefix: str = "", allow_zero: bool = False) -> None:
    if key in table:
        value = table[key]
        if value < 0 or (value == 0 and not allow_zero):
            bound = ">= 0" if allow_zero else "> 0"
            raise TfxError(f"must be {bound}, got {value}", where=f"{where}:{prefix}{key}")
        ceiling = PRESET_CEILINGS.get(f"{prefix}{key}")
        if ceiling is not None and value > ceiling:
            raise TfxError(f"must be at most {format_count(ceiling)}, got {format_significant(value, 3)}", where=f"{where}:{prefix}{key}")


def _sliding_layers(spec: str | list, num_layers: int, where: str) -> tuple[int, ...]:
    path = f"{where}:sliding_window_layers"
    if isinstance(spec, str):
        if spec == "all":
            return tuple(range(num_layers))
        if spec == "even":
            return tuple(range(0, num_layers, 2))
        if spec == "odd":
            return tuple(range(1, num_layers, 2))
        raise TfxError(f"expected \"all\", \"even\", \"odd\" or an array of layer indices, got {spec!r}",
                       where=path)
    layers = []
    for item in spec:
        if isinstance(item, bool) or not isinstance(item, int):
            raise TfxError(f"layer indices must be integers, got {_describe(item)}", where=path)
        if not 0 <= item < num_layers:
            raise TfxError(f"layer {item} out of range 0..{num_layers - 1}", where=path)
        layers.append(item)
    if len(set(layers)) != len(layers):
        raise TfxError("repeated layer index", where=path)
    return tuple(sorted(layers))


def model_from_dict(data: dict, where: str, default_name: str = "") -> ModelConfig:
    """Validate a parsed preset (``where`` names the file in errors) into a ModelConfig."""
    _check_table(data, _TOP_KEYS, where, "")
    for key in ("hidden_size", "num_layers", "num_attention_heads", "num_kv_heads", "head_dim",
                "intermediate_size", "vocab_size", "max_position_embeddings", "sliding_window"):
        _positive(data, key, where)
    _positive(data, "norms_per_layer", where, allow_zero=True)
    if "rope_theta" in data and not 0 < data["rope_theta"] <= 1e15:  # nan fails both sides
        raise TfxError(f"must be > 0, got {data['rope_theta']}", where=f"{where}:rope_theta")

    def enum(key: str, allowed: tuple[str, ...], default: str) -> str:
        value = data.get(key, default)
        if value not in allowed:
            raise TfxError(f"expected one of {', '.join(allowed)}, got {value!r}", where=f"{where}:{key}")
        return value

    activation = enum("ffn_activation", FFN_ACTIVATIONS, "silu")
    norm = enum("norm", NORM_KINDS, "rmsnorm")
    position = enum("position_embedding", POSITION_EMBEDDINGS, "rope")
    if position == "learned" and "max_position_embeddings" not in data:
        raise TfxError("learned position embeddings need max_position_embeddings",
                       where=f"{where}:position_embedding")

    hidden = data["hidden_size"]
    heads = data["num_attention_heads"]
    layers = data["num_layers"]
    kv_heads = data.get("num_kv_heads", heads)
    if heads % kv_heads:
        raise TfxError(f"num_attention_heads {heads} is not a multiple of num_kv_heads {kv_heads}",
                       where=f"{where}:num_kv_heads")

    mla = None
    if "mla" in data:
        m = _check_table(data["mla"], _MLA_KEYS, where, "mla.")
        for key in _MLA_KEYS:
            _positive(m, key, where, "mla.")
        mla = MLAConfig(**m)

    if "head_dim" in data:
        head_dim = data["head_dim"]
    elif mla is not None:
        head_dim = mla.qk_head_dim
    else:
        if hidden % heads:
            raise TfxError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}; "
                           "give head_dim", where=f"{where}:head_dim")
        head_dim = hidden // heads

    moe = None
    if "moe" in data:
        m = _check_table(data["moe"], _MOE_KEYS, where, "moe.")
        for key in ("num_experts", "experts_per_token", "expert_intermediate_size",
                    "shared_expert_intermediate_size"):
            _positive(m, key, where, "moe.")
        _positive(m, "num_shared_experts", where, "moe.", allow_zero=True)
        _positive(m, "first_dense_layers", where, "moe.", allow_zero=True)
        if m["experts_per_token"] > m["num_experts"]:
            raise TfxError(f"experts_per_token {m['experts_per_token']} exceeds num_experts "
                           f"{m['num_experts']}", where=f"{where}:moe.experts_per_token")
        if m.get("first_dense_layers", 0) > layers:
            raise TfxError(f"first_dense_layers {m['first_dense_layers']} exceeds num_layers {layers}",
                           where=f"{where}:moe.first_dense_layers")
        moe = MoEConfig(**m)

    sliding = ()
    if "sliding_window_layers" in data and "sliding_window" not in data:
        raise TfxError("sliding_window_layers without sliding_window", where=f"{where}:sliding_window_layers")
    if "sliding_window" in data:
        sliding = _sliding_layers(data.get("sliding_window_layers", "all"), layers, where)

    published = None
    if "published_params" in data:
        p = _check_table(data["published_params"], _PUBLISHED_KEYS, where, "published_params.")
        for key in ("total", "active", "non_embedding"):
            _positive(p, key, where, "published_params.")
        if "tolerance" in p and not 0 < p["tolerance"] < 1:
            raise TfxError(f"must be between 0 and 1, got {p['tolerance']}",
                           where=f"{where}:published_params.tolerance")
        if "active" in p and moe is None:
            raise TfxError("an active count is only meaningful for a mixture of experts",
                           where=f"{where}:published_params.active")
        published = PublishedParams(**p)

    return ModelConfig(
        name=data.get("name", default_name),
        family=data.get("family", ""),
        source=data["source"],
        description=data.get("description", ""),
        hidden_size=hidden,
        num_layers=layers,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=data["intermediate_size"],
        ffn_activation=activation,
        ffn_gated=data["ffn_gated"],
        vocab_size=data["vocab_size"],
        tie_word_embeddings=data["tie_word_embeddings"],
        norm=norm,
        norm_bias=data.get("norm_bias", norm == "layernorm"),
        norms_per_layer=data.get("norms_per_layer", 2),
        qk_norm=data.get("qk_norm", False),
        attention_qkv_bias=data.get("attention_qkv_bias", False),
        attention_out_bias=data.get("attention_out_bias", False),
        ffn_bias=data.get("ffn_bias", False),
        lm_head_bias=data.get("lm_head_bias", False),
        position_embedding=position,
        max_position_embeddings=data.get("max_position_embeddings"),
        rope_theta=float(data["rope_theta"]) if "rope_theta" in data else None,
        sliding_window=data.get("sliding_window"),
        sliding_window_layers=sliding,
        moe=moe,
        mla=mla,
        published_params=published,
    )




def load_model_file(path: str | Path) -> ModelConfig:
    """Load and validate one preset file."""
    p = Path(path)
    where = str(path)
    text = read_text_file(p, expected="a TOML file", where=where)
    data = parse_toml(text, where)
    return replace(model_from_dict(data, where, default_name=p.stem), source_path=str(p))


def models_dir() -> Path:
    return bundled_dir("models")


def list_models() -> list[str]:
    """Names of the bundled presets, sorted."""
    return sorted(p.stem for p in models_dir().glob("*.toml"))


def load_model(name_or_path: str | Path, option: str | None = None) -> ModelConfig:
    """A bundled preset by name (``llama3.1-8b``) or any preset file by path. ``option``: the
    command-line option (``--model``) or command (``tfx model show``) that gave the name, which
    the one-line refusal of an unknown name names, as an unknown --hw names the option; a
    path's or a file's fault names the file."""
    text = str(name_or_path)
    p = Path(text)
    if text.endswith(".toml") or p.exists() or "/" in text:
        return load_model_file(p)
    bundled = models_dir() / f"{text}.toml"
    if bundled.is_file():
        return load_model_file(bundled)
    names = list_models()
    close = difflib.get_close_matches(text, names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise TfxError(f"unknown model {text!r}, expected a preset name (tfx model list) or a path to a "
                   f"preset TOML{hint}", where=option)
