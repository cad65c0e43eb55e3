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

from tfx.model.system import Parallelism, System, Workload, load_system  # noqa: E402
from tfx.model.latency import LatencyResult, StageResult, evaluate, latency, memory  # noqa: E402
from tfx.model.search import hw_sweep, sensitivity, suggest  # noqa: E402

__all__ = [
    "Parallelism", "System", "Workload", "load_system", "LatencyResult", "StageResult", "evaluate",
    "latency", "memory", "hw_sweep", "sensitivity", "suggest",
    "DTYPE_BYTES", "Gemm", "LayerParams", "MLAConfig", "ModelConfig", "MoEConfig", "ParamCounts",
    "PublishedParams", "attention_params", "dtype_bytes", "head_gemms", "kv_bytes_per_token",
    "kv_bytes_per_token_per_layer", "kv_cache_bytes", "layer_gemms", "layer_params", "list_models",
    "load_model", "load_model_file", "mlp_params", "model_from_dict", "model_gemms", "param_counts",
    "routed_expert_load", "weight_bytes",
]
