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


def test_chunked_steps_are_priced_from_their_parts():
    """input 2048, output 128, concurrency 64, chunk 2048: a prompt takes n = 1 chunk step of
    q = 2048 tokens. A decode step runs 64 decode tokens; a chunk step the 63 other sequences'
    decode tokens plus the 2048-token chunk:
        t_decode = linear(64 tokens, head of 64) + decode attention (64 at 2048 + 64 = 2112)
        t_chunk  = linear(63 + 2048 = 2111 tokens, head of 64) + decode attention (63 at 2112)
                   + prompt attention(2048) x 2048 / 2048;
    TTFT, TPOT and the rate are the closed loop's (closed_loop, tested by hand below) over those."""
    from tfx.model.serve import closed_loop
    r = serve("llama3.1-8b", SYS, RequestMix(2048, 128, 64), Parallelism(tp=1))
    wl = Workload()
    pre = lambda T: latency("llama3.1-8b", SYS, Workload("prefill", T, 1))
    dec = lambda B, ctx: latency("llama3.1-8b", SYS, Workload("decode", ctx, B))
    head64 = parts(dec(64, 1))[1]
    t_dec = parts(pre(64))[2] + head64 + parts(dec(64, 2112))[0]
    t_chunk = parts(pre(2111))[2] + head64 + parts(dec(63, 2112))[0] + parts(pre(2048))[0]
    assert r.parts["decode_step_ns"] == pytest.approx(t_dec, rel=1e-12)
    assert r.parts["chunk_step_ns"] == pytest.approx(t_chunk, rel=1e-12)
    assert (r.parts["chunk_steps"], r.parts["chunk_tokens"], r.batch) == (1, 2048, 64)
    ttft, tpot, rate = closed_loop(64, t_chunk, t_dec, t_chunk, 128)
    assert (r.ttft_ns, r.tpot_ns) == (pytest.approx(ttft, rel=1e-12), pytest.approx(tpot, rel=1e-12))
    assert r.output_tokens_per_s_per_gpu == pytest.approx(rate * 1e9 * 128, rel=1e-12)
    assert t_dec < r.tpot_ns < t_chunk          # other prompts' chunks stretch some decode steps
    assert r.ttft_ns >= t_chunk                 # its own chunk, plus any wait behind others
    assert r.runtime == wl.runtime == "engine"


def test_closed_loop_by_hand():
    """One customer: no one to wait for and no one else's chunks: TTFT = S = 300, TPOT = t_decode
    = 10, rate = 1 / (S + (output - 1) x TPOT) = 1 / (300 + 10 x 10) = 1 / 400.
    Two customers, chunk steps as long as decode steps (TPOT = 10 whatever the share), S = 100,
    output 11 (think Z = 10 x 10 = 100): k = 1: R = 100, X = 1/200, Q = U = 1/2;
    k = 2: R = 100 x (1 + 1/2) - 1/2 x 100/2 = 125 (the prompt in service has half its time
    left), X = 2 / (125 + 100) = 2/225 (under the budget's 1/100).
    Output 3 instead (Z = 20): k = 2 gives X = 2 / (R + 20) above 1/S = 1/100, so the budget
    bounds it: X = 1/100 and R = 2 / X - Z = 200 - 20 = 180."""
    from tfx.model.serve import closed_loop
    assert closed_loop(1, 300.0, 10.0, 100.0, 11) == (300.0, 10.0, 1 / 400)
    ttft, tpot, rate = closed_loop(2, 100.0, 10.0, 10.0, 11)
    assert ttft == pytest.approx(125.0, rel=1e-12) and tpot == pytest.approx(10.0, rel=1e-12)
    assert rate == pytest.approx(2 / 225, rel=1e-12)
    ttft, tpot, rate = closed_loop(2, 100.0, 10.0, 10.0, 3)
    assert (ttft, rate) == (pytest.approx(180.0, rel=1e-12), pytest.approx(1 / 100, rel=1e-12))


def test_a_saturated_prefill_budget_bounds_the_request_rate():
    """input 4096, output 64, concurrency 256, chunk 512: n = 8 chunk steps of 512 tokens per
    prompt; 256 requests each spending 8 prefill steps of 72 keep the one prefill budget nearly
    always busy: the request rate cannot pass 1 / S (S = 8 chunk steps) and TTFT is at least S."""
    r = serve("llama3.1-8b", SYS, RequestMix(4096, 64, 256), Parallelism(tp=1), chunk=512)
    assert (r.parts["chunk_steps"], r.parts["chunk_tokens"], r.batch) == (8, 512, 256)
    service = 8 * r.parts["chunk_step_ns"]
    rate = r.requests_per_s_per_gpu / 1e9
    # (at the bound exactly the product is 1 to the last bit: 1.0000000000000002)
    assert rate * service <= 1.0 + 1e-12 and r.parts["prefill_busy"] > 0.9
    assert r.ttft_ns >= service


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
    # the note writes the bytes by the one unit policy (decimal): 268,435,456 B = 268.44 MB
    assert any(n.endswith("KV transfer 268.44 MB over ib") for n in r.notes), r.notes


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
    # Little's law over the closed loop: 64 requests, each TTFT + 127 x TPOT long, 128 tokens
    assert math.isclose(d["output_tokens_per_s_per_gpu"], 64 * 128 / (d["ttft_ns"] + 127 * d["tpot_ns"]) * 1e9,
                        rel_tol=1e-6)


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


def test_the_tiled_capacity_placeholder_is_written_in_decimal_bytes():
    """sip states no HBM capacity: 2 GiB = 2,147,483,648 B per PE is the placeholder, written
    2.15 GB by the one unit policy, x 64 PEs = 137,438,953,472 B."""
    s = load_system("sip")
    assert s.capacity == 137_438_953_472
    assert s.capacity_note.startswith("placeholder 2.15 GB per PE x 64 PEs ")


def test_model_results_remember_their_knobs(capsys):
    """--knob memory.gmem.bandwidth=x2: latency and serve name it in the text header after the
    profile and carry it in the JSON as given (path -> text); without a knob, no 'with'."""
    from tfx.cli.main import main
    knob = ["--knob", "memory.gmem.bandwidth=x2"]
    for cmd, hw in (("latency", "h200_sxm"), ("serve", "h200_nvl8")):
        base = ["model", cmd, "--model", "llama3.1-8b", "--hw", hw]
        assert main([*base, *knob]) == 0
        assert capsys.readouterr().out.startswith(f"llama3.1-8b on {hw} with memory.gmem.bandwidth=x2: ")
        assert main([*base, *knob, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["knobs"] == {"memory.gmem.bandwidth": "x2"}
        assert main(base) == 0
        assert capsys.readouterr().out.startswith(f"llama3.1-8b on {hw}: ")


def test_memory_and_suggest_remember_their_knobs(capsys):
    """--knob memory.gmem.capacity=/2 on h200_nvl8 (141 GB an H200, vendor): 70.5 GB a device,
    70,500,000,000 B; memory's header and suggest's name the knob, both JSONs carry it."""
    from tfx.cli.main import main
    knob = ["--knob", "memory.gmem.capacity=/2"]
    base = ["--model", "llama3.1-8b", "--hw", "h200_nvl8", *knob]
    assert main(["model", "memory", *base, "--tp", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("llama3.1-8b on h200_nvl8 with memory.gmem.capacity=/2: decode, batch 1, context 8,192, "
                      "weights bf16, kv bf16; tp2 cp1 pp1 dp1 ep1")
    assert any(line.split()[:3] == ["capacity", "70.50", "GB"] for line in out)
    assert main(["model", "memory", *base, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["model"], d["hw"], d["knobs"]) == ("llama3.1-8b", "h200_nvl8", {"memory.gmem.capacity": "/2"})
    assert d["capacity"] == 70_500_000_000
    assert main(["model", "suggest", *base, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["knobs"] == {"memory.gmem.capacity": "/2"}
    assert main(["model", "suggest", *base]) == 0
    assert capsys.readouterr().out.startswith("llama3.1-8b on h200_nvl8 with memory.gmem.capacity=/2 (<= 8 devices")
    assert main(["model", "hw-sweep", *base, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["knobs"] == {"memory.gmem.capacity": "/2"}
    assert main(["model", "hw-sweep", *base]) == 0
    # then the device limit (--devices, 64 by default), as suggest names its own
    assert capsys.readouterr().out.startswith("llama3.1-8b on h200_nvl8 with memory.gmem.capacity=/2 (<= 64 devices): ")
