"""KV-cache bytes of a preset: per token and layer (GQA/MHA/MQA or MLA's latent), per
token, and for a batch at a context with sliding-window layers capped."""

from __future__ import annotations

from tfx.errors import TfxError
from tfx.model.params import ceil_bytes
from tfx.model.schema import ModelConfig, dtype_bytes

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
    return ceil_bytes(elements, per)


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
