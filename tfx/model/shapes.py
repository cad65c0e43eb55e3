"""The GEMM shapes of one forward step of a preset (per layer and the lm head), which the
latency model prices with the kernel analysis."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tfx.errors import TfxError
from tfx.model.schema import ModelConfig

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
