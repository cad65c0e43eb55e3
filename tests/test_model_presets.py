"""Model presets: every preset loads, its arithmetic matches the published
parameter counts, hand-derived counts are exact, bad user files are refused
by key, and ``tfx model list/show`` work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tfx.cli.main import main
from tfx.errors import SourceLocation, TfxError
from tfx.model import (
    head_gemms,
    kv_bytes_per_token_per_layer,
    kv_cache_bytes,
    layer_gemms,
    list_models,
    load_model,
    param_counts,
    routed_expert_load,
    weight_bytes,
)
from tfx.bundled import bundled_dir

# --------------------------------------------------------------------------- #
# The published figures, restated here so that an edit to a preset's
# [published_params] must be made twice.  (name: total, active, source)
# "active" for DeepSeek and DBRX is compared without the input embedding
# (the preset says so with active_excludes_embedding = true).
# --------------------------------------------------------------------------- #
B = 1_000_000_000
PUBLISHED = {
    "llama2-7b": (6.74 * B, None, "HF safetensors count for meta-llama/Llama-2-7b-hf: 6.74B"),
    "llama2-13b": (13 * B, None, "Llama 2 paper (arXiv:2307.09288) Table 1: 13B"),
    "llama2-70b": (69 * B, None, "HF safetensors count for meta-llama/Llama-2-70b-hf: 69B"),
    "llama3-8b": (8.03 * B, None, "HF safetensors count for meta-llama/Meta-Llama-3-8B: 8.03B"),
    "llama3-70b": (70.6 * B, None, "HF safetensors count for meta-llama/Meta-Llama-3-70B: 70.6B"),
    "llama3.1-8b": (8.03 * B, None, "HF safetensors count for meta-llama/Llama-3.1-8B: 8.03B"),
    "llama3.1-70b": (70.6 * B, None, "HF safetensors count for meta-llama/Llama-3.1-70B: 70.6B"),
    "llama3.1-405b": (405 * B, None, "Llama 3 Herd of Models (arXiv:2407.21783): 405B"),
    "llama3.2-1b": (1.23 * B, None, "Llama 3.2 model card: 1.23B"),
    "llama3.2-3b": (3.21 * B, None, "Llama 3.2 model card: 3.21B"),
    "llama3.3-70b": (70 * B, None, "Llama 3.3 model card: 70B"),
    "qwen2.5-0.5b": (0.49 * B, None, "Qwen2.5-0.5B model card: 0.49B (0.36B non-embedding)"),
    "qwen2.5-7b": (7.61 * B, None, "Qwen2.5-7B model card: 7.61B (6.53B non-embedding)"),
    "qwen2.5-14b": (14.7 * B, None, "Qwen2.5-14B model card: 14.7B (13.1B non-embedding)"),
    "qwen2.5-32b": (32.5 * B, None, "Qwen2.5-32B model card: 32.5B (31.0B non-embedding)"),
    "qwen2.5-72b": (72.7 * B, None, "Qwen2.5-72B model card: 72.7B (70.0B non-embedding)"),
    "qwen3-1.7b": (1.7 * B, None, "Qwen3-1.7B model card: 1.7B (1.4B non-embedding)"),
    "qwen3-4b": (4.0 * B, None, "Qwen3-4B model card: 4.0B (3.6B non-embedding)"),
    "qwen3-8b": (8.2 * B, None, "Qwen3-8B model card: 8.2B (6.95B non-embedding)"),
    "qwen3-14b": (14.8 * B, None, "Qwen3-14B model card: 14.8B (13.2B non-embedding)"),
    "qwen3-32b": (32.8 * B, None, "Qwen3-32B model card: 32.8B (31.2B non-embedding)"),
    "qwen3-30b-a3b": (30.5 * B, 3.3 * B, "Qwen3-30B-A3B model card: 30.5B, 3.3B activated"),
    "qwen3-235b-a22b": (235 * B, 22 * B, "Qwen3-235B-A22B model card: 235B, 22B activated"),
    "mistral-7b": (7.3 * B, None, "Mistral AI 'Mistral 7B' announcement: 7.3B"),
    "mistral-nemo-12b": (12.2 * B, None, "HF safetensors count for Mistral-Nemo-Base-2407: 12.2B"),
    "mixtral-8x7b": (46.7 * B, 12.9 * B, "Mistral AI 'Mixtral of experts': 46.7B total, 12.9B per token"),
    "mixtral-8x22b": (141 * B, 39 * B, "Mistral AI 'Cheaper, Better, Faster, Stronger': 141B, 39B active"),
    "gemma2-2b": (2_614_636_800, None, "Gemma 2 report Table 2: 590,118,912 + 2,024,517,888"),
    "gemma2-9b": (9_242_164_736, None, "Gemma 2 report Table 2: 917,962,752 + 8,324,201,984"),
    "gemma2-27b": (27_227_636_224, None, "Gemma 2 report Table 2: 1,180,155,904 + 26,047,480,320"),
    "phi3-mini": (3.8 * B, None, "Phi-3 report (arXiv:2404.14219): 3.8B"),
    "phi3-medium": (14 * B, None, "Phi-3 report (arXiv:2404.14219): 14B"),
    "phi2-2.7b": (2.78 * B, None, "HF safetensors count for microsoft/phi-2: 2.78B"),
    "deepseek-v2-lite": (15.7 * B, 2.4 * B, "DeepSeek-V2 paper (arXiv:2405.04434): 15.7B, 2.4B activated"),
    "deepseek-v2": (236 * B, 21 * B, "DeepSeek-V2 paper (arXiv:2405.04434): 236B, 21B activated"),
    "deepseek-v3": (671 * B, 37 * B, "DeepSeek-V3 report (arXiv:2412.19437): 671B, 37B activated"),
    "grok-1": (314 * B, None, "xAI 'Open Release of Grok-1': 314B"),
    "dbrx": (132 * B, 36 * B, "Databricks 'Introducing DBRX': 132B total, 36B active"),
    "gpt2-124m": (124_000_000, None, "nanoGPT README: gpt2 124M"),
    "gpt2-1.5b": (1_558_000_000, None, "nanoGPT README: gpt2-xl 1558M"),
}

REQUIRED_PRESETS = [
    "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3.1-8b",
    "llama3.1-70b", "llama3.1-405b", "qwen2.5-7b", "qwen2.5-72b", "qwen3-1.7b", "qwen3-8b",
    "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "mistral-7b", "mixtral-8x7b",
    "mixtral-8x22b", "gemma2-9b", "gemma2-27b", "phi3-mini", "phi3-medium", "deepseek-v3", "grok-1",
]

ALL = list_models()


def test_presets_present():
    assert set(REQUIRED_PRESETS) <= set(ALL)
    assert len(ALL) > 30
    assert set(ALL) == set(PUBLISHED), "every preset has a published figure restated above"


@pytest.mark.parametrize("name", ALL)
def test_preset_loads_and_declares_its_source(name):
    model = load_model(name)
    assert model.name == name
    assert model.source and model.published_params is not None and model.published_params.source
    assert name == name.lower()


@pytest.mark.parametrize("name", ALL)
def test_total_matches_published(name):
    model = load_model(name)
    pub = model.published_params
    total, active, _source = PUBLISHED[name]
    assert pub.total == round(total)
    assert pub.active == (round(active) if active is not None else None)
    # The check is 1%; a preset may widen it only for a figure published to two
    # significant figures, and must say why.
    assert pub.tolerance == 0.01 or (pub.tolerance <= 0.025 and pub.note)
    counts = param_counts(model)
    assert counts.total == pytest.approx(pub.total, rel=pub.tolerance)
    if pub.non_embedding is not None:
        assert counts.non_embedding == pytest.approx(pub.non_embedding, rel=0.01)


@pytest.mark.parametrize("name", [n for n in ALL if PUBLISHED[n][1] is not None])
def test_active_matches_published(name):
    model = load_model(name)
    pub = model.published_params
    counts = param_counts(model)
    computed = counts.active_excluding_embedding if pub.active_excludes_embedding else counts.active
    assert computed == pytest.approx(pub.active, rel=pub.tolerance)
    assert counts.active < counts.total


def test_widened_tolerances_are_the_known_few():
    widened = {n for n in ALL if load_model(n).published_params.tolerance != 0.01}
    assert widened == {"qwen3-1.7b", "qwen3-30b-a3b", "deepseek-v2-lite", "deepseek-v3"}


# --------------------------------------------------------------------------- #
# Hand-derived counts
# --------------------------------------------------------------------------- #

def test_llama31_8b_hand_derived():
    """Llama 3.1 8B, from config.json (hidden 4096, 32 layers, 32 heads x 128,
    8 KV heads, FFN 14336 gated SiLU, vocab 128256, untied, RMSNorm without bias):

    embedding     128256 x 4096                             =   525,336,576
    per layer:
      q_proj      4096 x 4096                               =    16,777,216
      k_proj      4096 x 1024  (8 KV heads x 128)           =     4,194,304
      v_proj      4096 x 1024                               =     4,194,304
      o_proj      4096 x 4096                               =    16,777,216
        attention                                           =    41,943,040
      gate/up/down 3 x 4096 x 14336                         =   176,160,768
      2 RMSNorms  2 x 4096                                  =         8,192
        layer                                               =   218,112,000
    32 layers     32 x 218,112,000                          = 6,979,584,000
    final norm    4096                                      =         4,096
    lm head       128256 x 4096 (untied)                    =   525,336,576
    total                                                   = 8,030,261,248
    """
    model = load_model("llama3.1-8b")
    counts = param_counts(model)
    layer = counts.layers[0]
    assert counts.embedding == 128256 * 4096 == 525_336_576
    assert layer.attention == 41_943_040
    assert layer.ffn == 176_160_768
    assert layer.norms == 8_192
    assert layer.total == 218_112_000
    assert counts.lm_head == 525_336_576
    assert counts.final_norm == 4_096
    assert counts.total == 8_030_261_248
    assert counts.active == counts.total
    assert counts.non_embedding == 8_030_261_248 - 2 * 525_336_576


def test_mixtral_8x7b_hand_derived():
    """Mixtral 8x7B: Mistral 7B's attention with 8 experts (top-2) of FFN 14336.

    embedding and lm head  2 x 32000 x 4096                 =   262,144,000
    per layer:
      attention  2 x 4096^2 + 2 x 4096 x 1024               =    41,943,040
      one expert 3 x 4096 x 14336                           =   176,160,768
      8 experts                                             = 1,409,286,144
      router     4096 x 8                                   =        32,768
      2 norms                                               =         8,192
        layer                                               = 1,451,270,144
    total  32 x 1,451,270,144 + 262,144,000 + 4,096         = 46,702,792,704
    active per token: 2 experts instead of 8
      layer  41,943,040 + 2 x 176,160,768 + 32,768 + 8,192  =   394,305,536
      total  32 x 394,305,536 + 262,144,000 + 4,096          = 12,879,925,248
    """
    counts = param_counts(load_model("mixtral-8x7b"))
    assert counts.layers[0].total == 1_451_270_144
    assert counts.layers[0].active == 394_305_536
    assert counts.total == 46_702_792_704
    assert counts.active == 12_879_925_248


def test_deepseek_v3_hand_derived():
    """DeepSeek-V3 main model, *excluding* the multi-token-prediction module
    (config num_nextn_predict_layers = 1; it adds ~11.6B and its own embedding
    and head copies in the checkpoint, hence the 685B on the model page).

    MLA attention, per layer (128 heads; q_lora 1536, kv_lora 512, nope 128, rope 64, v 128):
      q_a_proj         7168 x 1536                          =    11,010,048
      q_a_layernorm    1536                                 =         1,536
      q_b_proj         1536 x 128 x (128 + 64)              =    37,748,736
      kv_a_proj        7168 x (512 + 64)                    =     4,128,768
      kv_a_layernorm   512                                  =           512
      kv_b_proj        512 x 128 x (128 + 128)              =    16,777,216
      o_proj           128 x 128 x 7168                     =   117,440,512
        attention                                           =   187,107,328
    2 RMSNorms         2 x 7168                             =        14,336
    dense FFN (layers 0-2)  3 x 7168 x 18432                =   396,361,728
    MoE FFN (layers 3-60):
      one expert       3 x 7168 x 2048                      =    44,040,192
      256 routed + 1 shared                                 = 11,318,329,344
      router           7168 x 256 + 256 score-bias          =     1,835,264
        MoE FFN                                             = 11,320,164,608
    dense layer  187,107,328 + 14,336 + 396,361,728         =   583,483,392
    MoE layer    187,107,328 + 14,336 + 11,320,164,608      = 11,507,286,272
    embedding and lm head  2 x 129280 x 7168                = 1,853,358,080
    total  3 x 583,483,392 + 58 x 11,507,286,272
           + 1,853,358,080 + 7,168 (final norm)             = 671,026,419,200

    Active per token: 8 routed + 1 shared expert + router:
      MoE layer active  187,107,328 + 14,336 + 9 x 44,040,192 + 1,835,264 = 585,318,656
      total  3 x 583,483,392 + 58 x 585,318,656 + 1,853,358,080 + 7,168   = 37,552,297,472
      without the input embedding (926,679,040)                          = 36,625,618,432
    DeepSeek publishes 37B; both readings are within 1.5% of it.
    """
    model = load_model("deepseek-v3")
    counts = param_counts(model)
    dense, moe = counts.layers[0], counts.layers[3]
    assert [layer.kind for layer in counts.layers[:4]] == ["dense", "dense", "dense", "moe"]
    assert dense.attention == moe.attention == 187_107_328
    assert dense.ffn == 396_361_728 and dense.total == 583_483_392
    assert moe.ffn == 11_320_164_608 and moe.total == 11_507_286_272
    assert moe.active == 585_318_656
    assert counts.total == 671_026_419_200
    assert counts.active == 37_552_297_472
    assert counts.active_excluding_embedding == 36_625_618_432


def test_gpt2_small_exact():
    """GPT-2 small: the canonical 124,439,808 (learned positions, biases, LayerNorm, tied)."""
    counts = param_counts(load_model("gpt2-124m"))
    assert counts.position_embedding == 1024 * 768
    assert counts.layers[0].total == 7_087_872
    assert counts.total == 124_439_808


def test_gemma2_non_embedding_matches_report_exactly():
    """The Gemma 2 report's non-embedding counts (Table 2) are exact integers."""
    for name, expected in (("gemma2-2b", 2_024_517_888), ("gemma2-9b", 8_324_201_984),
                           ("gemma2-27b", 26_047_480_320)):
        assert param_counts(load_model(name)).non_embedding == expected


# --------------------------------------------------------------------------- #
# Bytes
# --------------------------------------------------------------------------- #

def test_kv_bytes_per_token_per_layer():
    # GQA: 2 (K, V) x 8 KV heads x 128 head_dim x 2 bytes
    assert kv_bytes_per_token_per_layer(load_model("llama3.1-70b"), "bf16") == 2 * 8 * 128 * 2 == 4096
    # MLA: (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes
    assert kv_bytes_per_token_per_layer(load_model("deepseek-v3"), "bf16") == (512 + 64) * 2 == 1152
    assert kv_bytes_per_token_per_layer(load_model("deepseek-v3"), "fp8") == 576


def test_kv_cache_caps_sliding_layers():
    model = load_model("gemma2-9b")   # even layers: 4096-token window; odd layers: global
    per_layer = 2 * 8 * 256 * 2
    assert kv_cache_bytes(model, 8192, "bf16") == (21 * 4096 + 21 * 8192) * per_layer
    assert kv_cache_bytes(model, 1000, "bf16", batch=3) == 3 * 42 * 1000 * per_layer


def test_weight_bytes():
    model = load_model("llama3.1-8b")
    total = 8_030_261_248
    assert weight_bytes(model, "bf16") == 2 * total
    assert weight_bytes(model, "fp8") == total
    assert weight_bytes(model, "fp4") == total // 2
    # NVFP4 layer matrices (0.5 B + one FP8 scale per 16), the rest in bf16.
    matrices = 32 * (41_943_040 + 176_160_768)
    rest = total - matrices
    assert weight_bytes(model, "nvfp4", rest_dtype="bf16") == matrices * 9 // 16 + 2 * rest
    mixtral = load_model("mixtral-8x7b")
    assert weight_bytes(mixtral, "bf16", active=True) == 2 * 12_879_925_248
    with pytest.raises(TfxError, match="unknown dtype"):
        weight_bytes(model, "fp7")


# --------------------------------------------------------------------------- #
# GEMM shapes
# --------------------------------------------------------------------------- #

def _shapes(gemms):
    return {g.name: (g.m, g.n, g.k, g.count) for g in gemms}


def test_llama_layer_gemms():
    model = load_model("llama3.1-8b")
    shapes = _shapes(layer_gemms(model, 16))
    assert shapes == {
        "q_proj": (16, 4096, 4096, 1), "k_proj": (16, 1024, 4096, 1), "v_proj": (16, 1024, 4096, 1),
        "o_proj": (16, 4096, 4096, 1), "gate_proj": (16, 14336, 4096, 1),
        "up_proj": (16, 14336, 4096, 1), "down_proj": (16, 4096, 14336, 1),
    }
    assert _shapes(head_gemms(model, 16)) == {"lm_head": (16, 128256, 4096, 1)}
    with_scores = _shapes(layer_gemms(model, 1, context=1000))
    assert with_scores["attn_scores"] == (1, 1000, 128, 32)
    assert with_scores["attn_values"] == (1, 128, 1000, 32)


def test_weight_gemms_cover_every_matrix():
    """For bias-free presets, the weight GEMMs of all layers (with enough tokens to
    reach every expert) plus embedding, norms and head add up to the total."""
    for name in ALL:
        model = load_model(name)
        if model.attention_qkv_bias or model.ffn_bias or model.attention_out_bias:
            continue
        counts = param_counts(model)
        tokens = model.moe.num_experts if model.is_moe else 1
        elements = 0
        for i in range(model.num_layers):
            for g in layer_gemms(model, tokens, i):
                elements += g.n * g.k * g.count
        elements += sum(g.n * g.k for g in head_gemms(model, 1)) if not model.tie_word_embeddings else 0
        norms = sum(layer.norms for layer in counts.layers) + counts.final_norm
        extra = 0  # norms inside attention (q/k norm, MLA latent norms) and router score biases
        for layer in counts.layers:
            attention_matrices = sum(g.n * g.k for g in layer_gemms(model, 1, layer.index)
                                     if g.stage == "attention")
            extra += layer.attention - attention_matrices
            if layer.kind == "moe" and model.moe.router_score_bias:
                extra += model.moe.num_experts
        assert elements + counts.embedding + counts.position_embedding + norms + extra == counts.total, name


def test_deepseek_v3_gemms():
    model = load_model("deepseek-v3")
    dense = _shapes(layer_gemms(model, 4, 0))
    assert dense["q_a_proj"] == (4, 1536, 7168, 1)
    assert dense["q_b_proj"] == (4, 128 * 192, 1536, 1)
    assert dense["kv_a_proj"] == (4, 576, 7168, 1)
    assert dense["kv_b_proj"] == (4, 128 * 256, 512, 1)
    assert dense["o_proj"] == (4, 7168, 128 * 128, 1)
    assert dense["gate_proj"] == (4, 18432, 7168, 1)
    moe = _shapes(layer_gemms(model, 4, 3))
    assert moe["router"] == (4, 256, 7168, 1)
    assert moe["shared_expert.gate_proj"] == (4, 2048, 7168, 1)
    # 4 tokens x top-8 = 32 assignments over 32 experts, one token each
    assert moe["expert.down_proj"] == (1, 7168, 2048, 32)
    assert routed_expert_load(model, 1024) == (256, 32)
    assert routed_expert_load(model, 33) == (256, 2)   # 264 assignments -> ceil(264/256)


def test_gemm_arguments_refused():
    model = load_model("llama3.1-8b")
    with pytest.raises(TfxError, match="tokens"):
        layer_gemms(model, 0)
    with pytest.raises(TfxError, match="out of range"):
        layer_gemms(model, 1, layer=32)


# --------------------------------------------------------------------------- #
# User files and refusals
# --------------------------------------------------------------------------- #

def test_user_toml_loads_like_a_preset(tmp_path):
    path = tmp_path / "mine.toml"
    shutil.copy(bundled_dir("models") / "qwen3-8b.toml", path)
    mine = load_model(str(path))
    assert param_counts(mine).total == param_counts(load_model("qwen3-8b")).total
    assert mine.source_path == str(path)


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    return str(path)


MINIMAL = """\
source = "test"
hidden_size = 1024
num_layers = 4
num_attention_heads = 8
intermediate_size = 4096
ffn_activation = "silu"
ffn_gated = true
vocab_size = 1000
tie_word_embeddings = true
"""


def test_minimal_user_toml(tmp_path):
    model = load_model(_write(tmp_path, MINIMAL))
    assert model.name == "bad" and model.head_dim == 128 and model.num_kv_heads == 8
    assert param_counts(model).total == 1000 * 1024 + 4 * (4 * 1024 * 1024 + 3 * 1024 * 4096 + 2 * 1024) + 1024


@pytest.mark.parametrize("extra, where, message", [
    ("hiden_size = 4\n", "hiden_size", "unknown key 'hiden_size'; did you mean 'hidden_size'"),
    ("rope_theta = \"big\"\n", "rope_theta", "expected an integer or a number"),
    ("[moe]\nnum_experts = 8\nexperts_per_token = 2\nexpert_intermediate_size = 1\nwidth = 3\n",
     "moe.width", "unknown key 'width'"),
    ("[moe]\nnum_experts = 8\nexperts_per_token = 9\nexpert_intermediate_size = 1\n",
     "moe.experts_per_token", "exceeds num_experts"),
    ("[moe]\nnum_experts = true\nexperts_per_token = 1\nexpert_intermediate_size = 1\n",
     "moe.num_experts", "expected an integer, got boolean true"),
    ("[mla]\nkv_lora_rank = 512\n", "mla.qk_nope_head_dim", "missing required key"),
    ("sliding_window = 8\nsliding_window_layers = [0, 9]\n", "sliding_window_layers", "out of range"),
    ("norm = \"batchnorm\"\n", "norm", "expected one of rmsnorm, layernorm"),
    ("num_kv_heads = 3\n", "num_kv_heads", "not a multiple"),
    ("[published_params]\ntotal = 5\nsource = \"x\"\nactive = 2\n", "published_params.active",
     "only meaningful for a mixture of experts"),
])
def test_bad_user_toml_names_the_key(tmp_path, extra, where, message):
    path = _write(tmp_path, MINIMAL + extra)
    with pytest.raises(TfxError) as info:
        load_model(path)
    assert info.value.where == f"{path}:{where}"
    assert message in info.value.message


def test_wrong_type_and_missing_key(tmp_path):
    path = _write(tmp_path, MINIMAL.replace("num_layers = 4", "num_layers = \"four\""))
    with pytest.raises(TfxError) as info:
        load_model(path)
    assert str(info.value) == f"{path}:num_layers: error: expected an integer, got str 'four'"
    path = _write(tmp_path, MINIMAL.replace('source = "test"\n', ""))
    with pytest.raises(TfxError, match="missing required key 'source'"):
        load_model(path)


def test_toml_syntax_error_has_line_and_column(tmp_path):
    path = _write(tmp_path, MINIMAL + "vocab = = 3\n")
    with pytest.raises(TfxError) as info:
        load_model(path)
    assert isinstance(info.value.where, SourceLocation)
    assert info.value.where.line == MINIMAL.count("\n") + 1


def test_unknown_preset_suggests_names():
    with pytest.raises(TfxError) as info:
        load_model("llama3.1-8")
    # the hint on the refusal's one line (session 12: it was a note on a second line)
    assert "; did you mean llama3.1-8b" in info.value.message
    with pytest.raises(TfxError, match="no such file"):
        load_model("nowhere/x.toml")


# --------------------------------------------------------------------------- #
# CLI
# --------------------------------------------------------------------------- #

def test_cli_list(capsys):
    assert main(["model", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(ALL) + 1
    row = next(line for line in lines if line.startswith("llama3.1-8b "))
    assert row.split() == ["llama3.1-8b", "8.03B", "32", "4096", "GQA", "32q/8kv"]
    assert any(line.startswith("deepseek-v3 ") and "MLA" in line for line in lines)


def test_cli_show_json(capsys):
    assert main(["model", "show", "deepseek-v3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params"]["total"] == 671_026_419_200
    assert data["kv_bytes_per_token_per_layer"]["bf16"] == 1152
    assert data["published_check"]["total"]["published"] == 671_000_000_000
    assert [(g["first"], g["last"], g["kind"]) for g in data["layer_groups"]] == [(0, 2, "dense"), (3, 60, "moe")]


def test_cli_show_text(capsys):
    assert main(["model", "show", "llama3.1-70b"]) == 0
    out = capsys.readouterr().out
    assert "4,096 B/layer" in out and "70,553,706,496" in out


def test_cli_refusal_exits_2(tmp_path, capsys):
    path = _write(tmp_path, MINIMAL + "hiden_size = 4\n")
    assert main(["model", "show", path]) == 2
    assert f"{path}:hiden_size: error: unknown key" in capsys.readouterr().err
