"""Transformer models: presets (``models/*.toml``) and their exact arithmetic.

See ``docs/models.md`` for the preset format and every formula.
"""

from tfx.model.presets import (
    DTYPE_BYTES,
    Gemm,
    LayerParams,
    MLAConfig,
    ModelConfig,
    MoEConfig,
    ParamCounts,
    PublishedParams,
    attention_params,
    dtype_bytes,
    head_gemms,
    kv_bytes_per_token,
    kv_bytes_per_token_per_layer,
    kv_cache_bytes,
    layer_gemms,
    layer_params,
    list_models,
    load_model,
    load_model_file,
    mlp_params,
    model_from_dict,
    model_gemms,
    param_counts,
    routed_expert_load,
    weight_bytes,
)

__all__ = [
    "DTYPE_BYTES", "Gemm", "LayerParams", "MLAConfig", "ModelConfig", "MoEConfig", "ParamCounts",
    "PublishedParams", "attention_params", "dtype_bytes", "head_gemms", "kv_bytes_per_token",
    "kv_bytes_per_token_per_layer", "kv_cache_bytes", "layer_gemms", "layer_params", "list_models",
    "load_model", "load_model_file", "mlp_params", "model_from_dict", "model_gemms", "param_counts",
    "routed_expert_load", "weight_bytes",
]
