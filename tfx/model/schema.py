"""The schema of a transformer preset: dtypes and their bytes, and the
:class:`ModelConfig` dataclasses a preset file validates into (``tfx.model.loading``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

from tfx.errors import TfxError

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
