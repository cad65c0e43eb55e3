"""The serving view (tfx.model.serve): its figures are the step model's, combined by the
formulas of the module docstring; each expected value is rebuilt here from ``latency``."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from tfx.errors import TfxError
from tfx.model.latency import latency
from tfx.model.serve import ATTENTION_CORE, RequestMix, serve, suggest
from tfx.model.system import Parallelism, Workload, load_system

SYS = load_system("h100_hgx8")


def parts(r):
    core = sum(s.total_ns for s in r.stages if s.name in ATTENTION_CORE)
    head = sum(s.total_ns for s in r.stages if s.name in ("lm_head", "logits_gather", "final_norm"))
    return core, head, r.latency_ns - core - head


def test_chunked_step_is_the_sum_of_its_parts():
    """input 2048, output 128, concurrency 64: c = 2048 x 64 / 128 = 1024 prompt tokens per step
    (<= chunk 2048), so a step carries 64 + 1024 = 1088 tokens:
    t = linear(1088 tokens, head of 64) + decode attention (64 sequences at 2048 + 64 = 2112)
        + prompt attention(2048) x 1024 / 2048;
    TTFT = ceil(2048 / 2048) = 1 step carrying a full 2048-token chunk; tokens/s/GPU = 64 / t."""
    r = serve("llama3.1-8b", SYS, RequestMix(2048, 128, 64), Parallelism(tp=1))
    wl = Workload()
    pre = lambda T: latency("llama3.1-8b", SYS, Workload("prefill", T, 1))
    dec = lambda B, ctx: latency("llama3.1-8b", SYS, Workload("decode", ctx, B))
    head64 = parts(dec(64, 1))[1]
    a_dec = parts(dec(64, 2112))[0]
    a_pre = parts(pre(2048))[0]
    step = parts(pre(1088))[2] + head64 + a_dec + a_pre * 1024 / 2048
    full = parts(pre(64 + 2048))[2] + head64 + a_dec + a_pre
    assert (r.batch, r.prefill_tokens_per_step) == (64, 1024)
    assert r.tpot_ns == pytest.approx(step, rel=1e-12)
    assert r.ttft_ns == pytest.approx(full, rel=1e-12)
    assert r.output_tokens_per_s_per_gpu == pytest.approx(64 / step * 1e9, rel=1e-12)
    assert r.runtime == wl.runtime == "engine"


def test_chunk_cap_limits_the_decode_batch():
    """input 4096, output 64, concurrency 256, chunk 512: c = 4096 x 256 / 64 = 16384 > 512, so
    the batch is what one 512-token chunk per step can feed: 512 x 64 / 4096 = 8 sequences,
    c = 4096 x 8 / 64 = 512; the prompt needs ceil(4096 / 512) = 8 chunk steps before its first token."""
    r = serve("llama3.1-8b", SYS, RequestMix(4096, 64, 256), Parallelism(tp=1), chunk=512)
    assert (r.batch, r.prefill_tokens_per_step) == (8, 512)
    assert r.ttft_ns == pytest.approx(8 * r.tpot_ns, rel=1e-12)     # every step carries a full chunk


def test_disaggregated_pools():
    """Prefill alone (2048 tokens), KV shipped over the node's NIC: Llama 3.1 8B keeps
    32 layers x 2 x 8 KV heads x 128 x 2 B = 131,072 B per token, x 2048 = 268,435,456 B at
    50 GB/s (NDR 400 Gb/s) + 2 us = 5,370,709.12 ns. GPU-seconds per request = 1 x t_prefill +
    1 x 128 x t_decode(64 at 2048 + 64) / 64; tokens/s/GPU = 128 / that."""
    r = serve("llama3.1-8b", SYS, RequestMix(2048, 128, 64), Parallelism(tp=1), mode="disaggregated")
    t_pre = latency("llama3.1-8b", SYS, Workload("prefill", 2048, 1)).latency_ns
    t_dec = latency("llama3.1-8b", SYS, Workload("decode", 2112, 64)).latency_ns
    assert r.parts["kv_transfer_ns"] == pytest.approx(5_370_709.12, rel=1e-12)
    assert r.ttft_ns == pytest.approx(t_pre + 5_370_709.12, rel=1e-12)
    assert r.tpot_ns == t_dec
    assert r.output_tokens_per_s_per_gpu == pytest.approx(128 / (t_pre + 128 * t_dec / 64) * 1e9, rel=1e-12)


def test_rate_solves_littles_law():
    """With an arrival rate the batch is the fixed point B = rate x (TTFT + output x TPOT)."""
    r = serve("llama3.1-8b", SYS, RequestMix(2048, 128, None, rate=10.0), Parallelism(tp=1))
    assert r.batch == max(1, round(10.0 * (r.ttft_ns + 128 * r.tpot_ns) / 1e9))


def test_bad_mixes_are_refused():
    for kw, text in [(dict(input=0), "input and output"), (dict(concurrency=None), "either"),
                     (dict(rate=1.0), "either"), (dict(concurrency=0), "concurrency")]:
        with pytest.raises(TfxError, match=text):
            RequestMix(**{"input": 128, "output": 16, "concurrency": 4, **kw})
    with pytest.raises(TfxError, match="single GPU"):
        serve("llama3.1-8b", "h100_sxm", RequestMix(128, 16, 4), Parallelism(tp=2))


def test_suggest_meets_the_sla_and_maximises_throughput():
    """Every candidate kept meets the bounds; the best has the most tokens/s/GPU of them."""
    s = suggest("llama3.1-8b", SYS, RequestMix(1024, 128, 1), ttft_ms=200, tpot_ms=20,
                concurrencies=(1, 16, 128), chunks=(2048,), max_devices=2)
    assert s.best is not None and s.feasible >= len(s.frontier) >= 1
    for r in s.frontier + [s.best]:
        assert r.ttft_ns <= 200e6 and r.tpot_ns <= 20e6 and r.fits
    assert s.best.output_tokens_per_s_per_gpu == max(r.output_tokens_per_s_per_gpu for r in s.frontier)


def test_cli_serve_json():
    out = subprocess.run([sys.executable, "-m", "tfx.cli.main", "model", "serve", "--model", "llama3.1-8b",
                          "--hw", "h100_hgx8", "--input", "2048", "--output", "128", "--concurrency", "64",
                          "--json"], capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    assert d["batch"] == 64 and d["runtime"] == "engine" and d["mode"] == "chunked"
    assert math.isclose(d["output_tokens_per_s_per_gpu"], 64 / d["tpot_ns"] * 1e9, rel_tol=1e-12)


def test_a_short_prompt_chunk_prices_finite():
    """A chunked step of a few tokens prefills fewer rows than flash_prefill's BLOCK_M (128): its
    causal stage 1 (blocks wholly below the diagonal) runs no trip. A loop of zero trips adds
    nothing; it used to add 0/0 = NaN, which made the whole step NaN (and explore.pareto loop)."""
    import numpy as np
    r = latency("llama3.1-8b", SYS, Workload("prefill", 9, 1))
    assert np.isfinite(r.latency_ns) and all(np.isfinite(s.total_ns) for s in r.stages)


def test_pareto_refuses_nan():
    import numpy as np

    from tfx.explore.pareto import pareto_front
    with pytest.raises(ValueError, match="NaN"):
        pareto_front(np.array([[1.0, 2.0, float("nan")], [0.0, 1.0, 2.0]]))
