"""Parameter counts of a preset (total, active per token, per layer) and the bytes of its
weights in a storage dtype, with integer arithmetic (formulas in ``docs/models.md``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from tfx.errors import TfxError
from tfx.model.schema import ModelConfig, dtype_bytes

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
    params = attention_matrix_params(model)
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

def ceil_bytes(count: int, per: Fraction) -> int:
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
    matrices = sum(layer_matrix_params(model, layer, active) for layer in range(model.num_layers))
    everything = counts.active if active else counts.total
    return ceil_bytes(matrices, per) + ceil_bytes(everything - matrices, rest_per)


def attention_matrix_params(model: ModelConfig) -> int:
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


def layer_matrix_params(model: ModelConfig, layer: int, active: bool) -> int:
    """Weight-matrix elements (no biases, norms or router) of one layer."""
    mlp = model.ffn_matrices * model.hidden_size
    if model.is_moe_layer(layer):
        moe = model.moe
        experts = moe.experts_per_token if active else moe.num_experts
        ffn = mlp * (experts * moe.expert_intermediate_size
                     + moe.num_shared_experts * moe.shared_width)
    else:
        ffn = mlp * model.intermediate_size
    return attention_matrix_params(model) + ffn
