"""Transformer model presets and their exact arithmetic: the public face of five modules.

A preset is a TOML file (``models/<name>.toml``, or any path a user gives) that
describes one decoder-only transformer the way its published ``config.json``
does. Each concern lives in its own module; this one re-exports their public
names so ``from tfx.model.presets import load_model`` keeps working:

* ``tfx.model.schema``: dtypes and their bytes, :class:`ModelConfig` and its parts;
* ``tfx.model.loading``: validating a preset file (:func:`load_model`, :func:`list_models`);
* ``tfx.model.params``: parameter counts, total and active per token
  (:func:`param_counts`), and weight bytes for a storage dtype (:func:`weight_bytes`);
* ``tfx.model.kv``: KV-cache bytes (:func:`kv_bytes_per_token_per_layer`, :func:`kv_cache_bytes`);
* ``tfx.model.shapes``: the GEMM shapes of one forward step (:func:`layer_gemms`,
  :func:`head_gemms`) for the latency model to price with the kernel analysis.

The formulas are written out in ``docs/models.md``.
"""

from __future__ import annotations

from tfx.model.kv import kv_bytes_per_token, kv_bytes_per_token_per_layer, kv_cache_bytes
from tfx.model.loading import list_models, load_model, load_model_file, model_from_dict, models_dir
from tfx.model.params import (LayerParams, ParamCounts, attention_matrix_params, attention_params,
                              layer_matrix_params, layer_params, mlp_params, param_counts, router_params,
                              weight_bytes)
from tfx.model.schema import (DTYPE_BYTES, FFN_ACTIVATIONS, NORM_KINDS, POSITION_EMBEDDINGS, MLAConfig,
                              ModelConfig, MoEConfig, PublishedParams, dtype_bytes)
from tfx.model.shapes import Gemm, head_gemms, layer_gemms, model_gemms, routed_expert_load

__all__ = [
    "DTYPE_BYTES", "FFN_ACTIVATIONS", "NORM_KINDS", "POSITION_EMBEDDINGS", "MLAConfig", "ModelConfig",
    "MoEConfig", "PublishedParams", "dtype_bytes", "list_models", "load_model", "load_model_file",
    "model_from_dict", "models_dir", "LayerParams", "ParamCounts", "attention_matrix_params",
    "attention_params", "layer_matrix_params", "layer_params", "mlp_params", "param_counts",
    "router_params", "weight_bytes", "kv_bytes_per_token", "kv_bytes_per_token_per_layer",
    "kv_cache_bytes", "Gemm", "head_gemms", "layer_gemms", "model_gemms", "routed_expert_load",
]
