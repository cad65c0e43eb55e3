"""Transformer model presets and their exact arithmetic.

A preset is a TOML file (``models/<name>.toml``, or any path a user gives) that
describes one decoder-only transformer the way its published ``config.json``
does. ``load_model`` validates it into a :class:`ModelConfig`; the functions
below derive, with integer arithmetic only:

* parameter counts, total and active per token (:func:`param_counts`), with a
  per-layer breakdown into attention, FFN and norm parameters;
* weight bytes for a storage dtype (:func:`weight_bytes`);
* KV-cache bytes per token (:func:`kv_bytes_per_token_per_layer`,
  :func:`kv_cache_bytes`);
* the GEMM shapes of one forward step (:func:`layer_gemms`, :func:`head_gemms`)
  for the latency model to price with the kernel analysis.

The formulas are written out in ``docs/models.md``.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from tfx.errors import TfxError, read_text_file, toml_decode_error
from tfx.resources import bundled_dir

# --------------------------------------------------------------------------- #
# Data types
# --------------------------------------------------------------------------- #

#: Bytes per stored element. Block-scaled 4-bit formats add their scale bytes:
#: NVFP4 stores one FP8 (E4M3) scale per 16 elements, MXFP4 one E8M0 scale per
#: 32 elements. ``fp4``/``int4`` are the raw 4-bit payload with no scales.
DTYPE_BYTES: dict[str, Fraction] = {
    "fp32": Fraction(4),
    "bf16": Fraction(2),
    "fp16": Fraction(2),
    "fp8": Fraction(1),
    "int8": Fraction(1),
    "fp4": Fraction(1, 2),
    "int4": Fraction(1, 2),
    "nvfp4": Fraction(1, 2) + Fraction(1, 16),
    "mxfp4": Fraction(1, 2) + Fraction(1, 32),
}


def dtype_bytes(dtype: str) -> Fraction:
    """Bytes per element of ``dtype`` (scale overhead included); TfxError if unknown."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise TfxError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}") from None


# --------------------------------------------------------------------------- #
# The configuration
# --------------------------------------------------------------------------- #

FFN_ACTIVATIONS = ("silu", "gelu", "gelu_tanh", "relu")
NORM_KINDS = ("rmsnorm", "layernorm")
POSITION_EMBEDDINGS = ("rope", "learned")


@dataclass(frozen=True)
class MoEConfig:
    """Mixture of experts. Layers not listed as dense have an MoE FFN."""

    num_experts: int                     # routed experts per MoE layer
    experts_per_token: int               # top-k
    expert_intermediate_size: int        # FFN width of one routed expert
    num_shared_experts: int = 0          # always-active experts (DeepSeek)
    shared_expert_intermediate_size: int | None = None  # default: expert width
    first_dense_layers: int = 0          # the first N layers use the dense FFN
    router_score_bias: bool = False      # per-expert routing bias (DeepSeek-V3)

    @property
    def shared_width(self) -> int:
        return self.shared_expert_intermediate_size or self.expert_intermediate_size


@dataclass(frozen=True)
class MLAConfig:
    """DeepSeek multi-head latent attention (the latent is what is cached)."""

    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None       # None: q is projected directly from hidden

    @property
    def qk_head_dim(self) -> int:
        return self.qk_nope_head_dim + self.qk_rope_head_dim


@dataclass(frozen=True)
class PublishedParams:
    """The publisher's own parameter figure, to check the arithmetic against."""

    total: int
    source: str
    active: int | None = None
    non_embedding: int | None = None
    active_excludes_embedding: bool = False  # the publisher left the input embedding out of "active"
    tolerance: float = 0.01                  # relative; widened only with a note saying why
    note: str = ""


@dataclass(frozen=True)
class ModelConfig:
    name: str
    family: str
    source: str
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    ffn_activation: str
    ffn_gated: bool
    vocab_size: int
    tie_word_embeddings: bool
    norm: str = "rmsnorm"
    norm_bias: bool = False
    norms_per_layer: int = 2
    qk_norm: bool = False
    attention_qkv_bias: bool = False
    attention_out_bias: bool = False
    ffn_bias: bool = False
    lm_head_bias: bool = False
    position_embedding: str = "rope"
    max_position_embeddings: int | None = None
    rope_theta: float | None = None
    sliding_window: int | None = None
    sliding_window_layers: tuple[int, ...] = ()
    description: str = ""
    moe: MoEConfig | None = None
    mla: MLAConfig | None = None
    published_params: PublishedParams | None = None
    source_path: str = ""

    # -- derived facts ---------------------------------------------------- #

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    @property
    def ffn_matrices(self) -> int:
        """3 for gated FFNs (gate, up, down), 2 otherwise (up, down)."""
        return 3 if self.ffn_gated else 2

    @property
    def attention_kind(self) -> str:
        """``MLA``, ``MHA``, ``MQA`` or ``GQA``."""
        if self.mla is not None:
            return "MLA"
        if self.num_kv_heads == self.num_attention_heads:
            return "MHA"
        if self.num_kv_heads == 1:
            return "MQA"
        return "GQA"

    def is_moe_layer(self, layer: int) -> bool:
        return self.moe is not None and layer >= self.moe.first_dense_layers

    def is_sliding_layer(self, layer: int) -> bool:
        return self.sliding_window is not None and layer in self.sliding_window_layers

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (MoEConfig, MLAConfig, PublishedParams)):
                value = {g.name: getattr(value, g.name) for g in fields(value)}
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out


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


def _positive(table: dict, key: str, where: str, prefix: str = "", allow_zero: bool = False) -> None:
    if key in table:
        value = table[key]
        if value < 0 or (value == 0 and not allow_zero):
            bound = ">= 0" if allow_zero else "> 0"
            raise TfxError(f"must be {bound}, got {value}", where=f"{where}:{prefix}{key}")


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
    if "rope_theta" in data and data["rope_theta"] <= 0:
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
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_decode_error(exc, where, text) from None
    return replace(model_from_dict(data, where, default_name=p.stem), source_path=str(p))


def models_dir() -> Path:
    return bundled_dir("models")


def list_models() -> list[str]:
    """Names of the bundled presets, sorted."""
    return sorted(p.stem for p in models_dir().glob("*.toml"))


def load_model(name_or_path: str | Path) -> ModelConfig:
    """A bundled preset by name (``llama3.1-8b``) or any preset file by path."""
    text = str(name_or_path)
    p = Path(text)
    if text.endswith(".toml") or p.exists() or "/" in text:
        return load_model_file(p)
    bundled = models_dir() / f"{text}.toml"
    if bundled.is_file():
        return load_model_file(bundled)
    names = list_models()
    close = difflib.get_close_matches(text, names, n=3, cutoff=0.5)
    notes = (f"did you mean {', '.join(close)}?",) if close else ("`tfx model list` shows the presets",)
    raise TfxError(f"unknown model {text!r}", notes=notes)


# --------------------------------------------------------------------------- #
# Parameter counts
# --------------------------------------------------------------------------- #

@dataclass(frozen=True)
class LayerParams:
    """Parameters of one decoder layer, split the way the latency model needs them."""

    index: int
    kind: str              # "dense" or "moe"
    attention: int         # projections, their biases, q/k norms, MLA latent norms
    ffn: int               # all of the FFN: dense MLP, or routed + shared experts + router
    ffn_active: int        # the part of ``ffn`` one token uses
    norms: int             # the per-layer hidden-size norms

    @property
    def total(self) -> int:
        return self.attention + self.ffn + self.norms

    @property
    def active(self) -> int:
        return self.attention + self.ffn_active + self.norms

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.kind, "attention": self.attention,
                "ffn": self.ffn, "ffn_active": self.ffn_active, "norms": self.norms,
                "total": self.total, "active": self.active}


@dataclass(frozen=True)
class ParamCounts:
    embedding: int             # token embedding table
    position_embedding: int    # learned position table (0 for RoPE)
    lm_head: int               # 0 when tied to the embedding (plus its bias if any)
    final_norm: int
    layers: tuple[LayerParams, ...] = field(repr=False)

    @property
    def layers_total(self) -> int:
        return sum(layer.total for layer in self.layers)

    @property
    def layers_active(self) -> int:
        return sum(layer.active for layer in self.layers)

    @property
    def total(self) -> int:
        return (self.embedding + self.position_embedding + self.lm_head + self.final_norm
                + self.layers_total)

    @property
    def active(self) -> int:
        """Parameters one token uses, counting the whole embedding table and lm head."""
        return (self.embedding + self.position_embedding + self.lm_head + self.final_norm
                + self.layers_active)

    @property
    def active_excluding_embedding(self) -> int:
        """``active`` without the input embedding tables (a lookup, not a GEMM)."""
        return self.active - self.embedding - self.position_embedding

    @property
    def non_embedding(self) -> int:
        """Total without the embedding tables and an untied lm head (Qwen's convention)."""
        return self.total - self.embedding - self.position_embedding - self.lm_head

    @property
    def attention(self) -> int:
        return sum(layer.attention for layer in self.layers)

    @property
    def ffn(self) -> int:
        return sum(layer.ffn for layer in self.layers)

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "active": self.active,
                "active_excluding_embedding": self.active_excluding_embedding,
                "non_embedding": self.non_embedding, "embedding": self.embedding,
                "position_embedding": self.position_embedding, "lm_head": self.lm_head,
                "final_norm": self.final_norm, "attention": self.attention, "ffn": self.ffn,
                "layer_norms": sum(layer.norms for layer in self.layers)}


def _norm_params(model: ModelConfig, width: int) -> int:
    return width * (2 if model.norm_bias else 1)


def attention_params(model: ModelConfig) -> int:
    """Parameters of one layer's attention block (identical in every layer):
    the projection matrices plus their biases, q/k norms and MLA latent norms."""
    params = _attention_matrix_params(model)
    if model.mla is not None:
        if model.mla.q_lora_rank:
            params += _norm_params(model, model.mla.q_lora_rank)
        params += _norm_params(model, model.mla.kv_lora_rank)
    else:
        if model.attention_qkv_bias:
            params += (model.num_attention_heads + 2 * model.num_kv_heads) * model.head_dim
        if model.qk_norm:
            params += 2 * _norm_params(model, model.head_dim)
    if model.attention_out_bias:
        params += model.hidden_size
    return params


def mlp_params(model: ModelConfig, intermediate: int) -> int:
    """One MLP (a dense FFN or one expert) of width ``intermediate``."""
    h = model.hidden_size
    params = model.ffn_matrices * h * intermediate
    if model.ffn_bias:
        params += (model.ffn_matrices - 1) * intermediate + h
    return params


def router_params(model: ModelConfig) -> int:
    moe = model.moe
    assert moe is not None
    return model.hidden_size * moe.num_experts + (moe.num_experts if moe.router_score_bias else 0)


def layer_params(model: ModelConfig, layer: int) -> LayerParams:
    if not 0 <= layer < model.num_layers:
        raise TfxError(f"layer {layer} out of range 0..{model.num_layers - 1}", where=model.name)
    attention = attention_params(model)
    norms = model.norms_per_layer * _norm_params(model, model.hidden_size)
    if model.is_moe_layer(layer):
        moe = model.moe
        expert = mlp_params(model, moe.expert_intermediate_size)
        shared = moe.num_shared_experts * mlp_params(model, moe.shared_width)
        router = router_params(model)
        ffn = moe.num_experts * expert + shared + router
        ffn_active = moe.experts_per_token * expert + shared + router
        return LayerParams(layer, "moe", attention, ffn, ffn_active, norms)
    ffn = mlp_params(model, model.intermediate_size)
    return LayerParams(layer, "dense", attention, ffn, ffn, norms)


def param_counts(model: ModelConfig) -> ParamCounts:
    h = model.hidden_size
    embedding = model.vocab_size * h
    position = model.max_position_embeddings * h if model.position_embedding == "learned" else 0
    lm_head = 0 if model.tie_word_embeddings else model.vocab_size * h
    if model.lm_head_bias:
        lm_head += model.vocab_size
    return ParamCounts(
        embedding=embedding,
        position_embedding=position,
        lm_head=lm_head,
        final_norm=_norm_params(model, h),
        layers=tuple(layer_params(model, i) for i in range(model.num_layers)),
    )


# --------------------------------------------------------------------------- #
# Bytes
# --------------------------------------------------------------------------- #

def _ceil_bytes(count: int, per: Fraction) -> int:
    return math.ceil(count * per)


def weight_bytes(model: ModelConfig, dtype: str = "bf16", rest_dtype: str | None = None,
                 active: bool = False) -> int:
    """Bytes of the weights with the layers' matrices in ``dtype``.

    The embedding table(s), lm head, norms, biases and router are stored in
    ``rest_dtype`` (default: ``dtype`` too), as quantized checkpoints usually keep
    them in bf16. ``active=True`` counts only what one token uses.
    """
    per = dtype_bytes(dtype)
    rest_per = dtype_bytes(rest_dtype) if rest_dtype is not None else per
    counts = param_counts(model)
    matrices = sum(_layer_matrix_params(model, layer, active) for layer in range(model.num_layers))
    everything = counts.active if active else counts.total
    return _ceil_bytes(matrices, per) + _ceil_bytes(everything - matrices, rest_per)


def _attention_matrix_params(model: ModelConfig) -> int:
    """Elements of one layer's attention projection matrices (no biases or norms)."""
    h = model.hidden_size
    heads = model.num_attention_heads
    if model.mla is not None:
        mla = model.mla
        if mla.q_lora_rank:
            q = h * mla.q_lora_rank + mla.q_lora_rank * heads * mla.qk_head_dim
        else:
            q = h * heads * mla.qk_head_dim
        kv_a = h * (mla.kv_lora_rank + mla.qk_rope_head_dim)
        kv_b = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
        return q + kv_a + kv_b + heads * mla.v_head_dim * h
    q_width = heads * model.head_dim
    kv_width = model.num_kv_heads * model.head_dim
    return 2 * h * q_width + 2 * h * kv_width


def _layer_matrix_params(model: ModelConfig, layer: int, active: bool) -> int:
    """Weight-matrix elements (no biases, norms or router) of one layer."""
    mlp = model.ffn_matrices * model.hidden_size
    if model.is_moe_layer(layer):
        moe = model.moe
        experts = moe.experts_per_token if active else moe.num_experts
        ffn = mlp * (experts * moe.expert_intermediate_size
                     + moe.num_shared_experts * moe.shared_width)
    else:
        ffn = mlp * model.intermediate_size
    return _attention_matrix_params(model) + ffn


def kv_bytes_per_token_per_layer(model: ModelConfig, dtype: str = "bf16") -> int:
    """KV-cache bytes one token adds to one layer.

    GQA/MHA/MQA: 2 (K and V) x kv_heads x head_dim x bytes.
    MLA: (kv_lora_rank + qk_rope_head_dim) x bytes (the compressed latent and the
    shared rotary key are cached; K and V are re-expanded from them).
    """
    per = dtype_bytes(dtype)
    if model.mla is not None:
        elements = model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
    else:
        elements = 2 * model.num_kv_heads * model.head_dim
    return _ceil_bytes(elements, per)


def kv_bytes_per_token(model: ModelConfig, dtype: str = "bf16") -> int:
    """KV bytes one token adds across all layers (ignoring sliding-window caps)."""
    return model.num_layers * kv_bytes_per_token_per_layer(model, dtype)


def kv_cache_bytes(model: ModelConfig, context: int, dtype: str = "bf16", batch: int = 1) -> int:
    """KV-cache bytes for ``batch`` sequences of ``context`` tokens.

    Sliding-window layers hold at most ``sliding_window`` tokens.
    """
    if context < 0 or batch < 0:
        raise TfxError(f"context and batch must be >= 0, got {context}, {batch}")
    per_layer = kv_bytes_per_token_per_layer(model, dtype)
    tokens = sum(min(context, model.sliding_window) if model.is_sliding_layer(i) else context
                 for i in range(model.num_layers))
    return batch * tokens * per_layer


# --------------------------------------------------------------------------- #
# GEMM shapes
# --------------------------------------------------------------------------- #

@dataclass(frozen=True)
class Gemm:
    """One weight GEMM of a forward step: (M x K) activations times (K x N) weights.

    ``count`` instances run, each with its own weights (routed experts that
    receive tokens) or its own operands (attention heads); M is per instance.
    """

    name: str
    stage: str          # "attention", "ffn", "moe", "router", "attention_scores", "lm_head"
    m: int
    n: int
    k: int
    count: int = 1

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.count

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "stage": self.stage, "m": self.m, "n": self.n, "k": self.k,
                "count": self.count, "flops": self.flops}


def routed_expert_load(model: ModelConfig, tokens: int) -> tuple[int, int]:
    """(experts that receive tokens, tokens per such expert) under balanced routing.

    ``tokens x experts_per_token`` assignments are spread evenly over
    ``min(num_experts, assignments)`` experts; M is rounded up.
    """
    moe = model.moe
    assert moe is not None
    assignments = tokens * moe.experts_per_token
    used = min(moe.num_experts, assignments)
    return used, (math.ceil(assignments / used) if used else 0)


def layer_gemms(model: ModelConfig, tokens: int, layer: int = 0,
                context: int | None = None) -> list[Gemm]:
    """The GEMMs of layer ``layer`` for a step over ``tokens`` tokens (M = tokens).

    Weight GEMMs only, unless ``context`` (the attended-to length, cached plus
    new) is given: then the per-head score (Q·Kᵀ) and value (P·V) GEMMs follow,
    with sliding-window layers attending to at most ``sliding_window`` tokens.
    MLA is given in its unabsorbed form (K and V expanded from the latent).
    """
    if tokens < 1:
        raise TfxError(f"tokens must be >= 1, got {tokens}")
    if not 0 <= layer < model.num_layers:
        raise TfxError(f"layer {layer} out of range 0..{model.num_layers - 1}", where=model.name)
    h, t = model.hidden_size, tokens
    heads = model.num_attention_heads
    out: list[Gemm] = []
    if model.mla is not None:
        mla = model.mla
        if mla.q_lora_rank:
            out.append(Gemm("q_a_proj", "attention", t, mla.q_lora_rank, h))
            out.append(Gemm("q_b_proj", "attention", t, heads * mla.qk_head_dim, mla.q_lora_rank))
        else:
            out.append(Gemm("q_proj", "attention", t, heads * mla.qk_head_dim, h))
        out.append(Gemm("kv_a_proj", "attention", t, mla.kv_lora_rank + mla.qk_rope_head_dim, h))
        out.append(Gemm("kv_b_proj", "attention", t, heads * (mla.qk_nope_head_dim + mla.v_head_dim),
                        mla.kv_lora_rank))
        out.append(Gemm("o_proj", "attention", t, h, heads * mla.v_head_dim))
        qk_dim, v_dim = mla.qk_head_dim, mla.v_head_dim
    else:
        d, kv = model.head_dim, model.num_kv_heads
        out.append(Gemm("q_proj", "attention", t, heads * d, h))
        out.append(Gemm("k_proj", "attention", t, kv * d, h))
        out.append(Gemm("v_proj", "attention", t, kv * d, h))
        out.append(Gemm("o_proj", "attention", t, h, heads * d))
        qk_dim = v_dim = d
    if context is not None:
        if context < tokens:
            raise TfxError(f"context {context} is shorter than the {tokens} new tokens")
        span = min(context, model.sliding_window) if model.is_sliding_layer(layer) else context
        out.append(Gemm("attn_scores", "attention_scores", t, span, qk_dim, count=heads))
        out.append(Gemm("attn_values", "attention_scores", t, v_dim, span, count=heads))

    def mlp(prefix: str, stage: str, m: int, width: int, count: int = 1):
        names = ("gate_proj", "up_proj") if model.ffn_gated else ("up_proj",)
        for name in names:
            out.append(Gemm(f"{prefix}{name}", stage, m, width, h, count))
        out.append(Gemm(f"{prefix}down_proj", stage, m, h, width, count))

    if model.is_moe_layer(layer):
        moe = model.moe
        out.append(Gemm("router", "router", t, moe.num_experts, h))
        if moe.num_shared_experts:
            mlp("shared_expert.", "moe", t, moe.shared_width, moe.num_shared_experts)
        used, per_expert = routed_expert_load(model, t)
        mlp("expert.", "moe", per_expert, moe.expert_intermediate_size, used)
    else:
        mlp("", "ffn", t, model.intermediate_size)
    return out


def head_gemms(model: ModelConfig, tokens: int) -> list[Gemm]:
    """The lm-head GEMM (vocabulary logits) for ``tokens`` tokens."""
    if tokens < 1:
        raise TfxError(f"tokens must be >= 1, got {tokens}")
    return [Gemm("lm_head", "lm_head", tokens, model.vocab_size, model.hidden_size)]


def model_gemms(model: ModelConfig, tokens: int, context: int | None = None) -> list[tuple[int, list[Gemm]]]:
    """``[(layer, gemms)]`` for every layer, then ``(-1, head_gemms)`` for the lm head."""
    out = [(i, layer_gemms(model, tokens, i, context)) for i in range(model.num_layers)]
    out.append((-1, head_gemms(model, tokens)))
    return out
