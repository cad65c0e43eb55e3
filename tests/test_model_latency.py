"""Model level: per-stage latency and memory, checked against hand arithmetic."""

import json
import subprocess
import sys

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.model.system import DEFAULT_GEMM_CODEGEN
from tfx.model import kv_bytes_per_token_per_layer, load_model
from tfx.model.kernels import GEMM_CANDIDATES_GPU
from tfx.model.latency import latency, memory
from tfx.model.system import Parallelism, Workload, load_system


def test_kv_bytes_per_token_per_layer_and_per_rank():
    """Llama 3.1 70B, bf16: 2 (K, V) x 8 KV heads x 128 x 2 B = 4096 B per token per layer.
    With TP = 8 each rank holds 8/8 = 1 KV head: 2 x 1 x 128 x 2 = 512 B; over 80 layers
    and 8192 tokens: 80 x 8192 x 512 = 335,544,320 B per device.
    With TP = 16 (> 8 KV heads) every head is on 2 ranks (replicated): still 512 B per rank."""
    m = load_model("llama3.1-70b")
    assert kv_bytes_per_token_per_layer(m, "bf16") == 4096
    wl = Workload("decode", 8192, 1)
    assert memory(m, "h200_nvl8", wl, Parallelism(tp=8))["kv_cache"] == 335_544_320
    assert memory(m, "h200_nvl8", wl, Parallelism(tp=16))["kv_cache"] == 335_544_320
    # kv_shard=seq: the 2 replicas split the context: half each
    assert memory(m, "h200_nvl8", wl, Parallelism(tp=16, kv_shard="seq"))["kv_cache"] == 335_544_320 // 2
    # fp8 KV halves it
    assert memory(m, "h200_nvl8", Workload("decode", 8192, 1, kv_dtype="fp8"), Parallelism(tp=8))["kv_cache"] \
        == 335_544_320 // 2


def test_memory_per_device_weights_tp2_by_hand():
    """Llama 3.1 8B, bf16, TP = 2 (h = 4096, 32 q / 8 kv heads of 128, I = 14336):
    attention per rank: 2 x 4096 x (16 x 128) + 2 x 4096 x (4 x 128) = 16,777,216 + 4,194,304 = 20,971,520
    FFN per rank: 3 x 4096 x 7168 = 88,080,384
    norms per layer (replicated): 2 x 4096 = 8,192
    per layer: (20,971,520 + 88,080,384 + 8,192) x 2 B = 218,120,192 B; x 32 = 6,979,846,144
    embedding + untied lm head, vocabulary over TP: 2 x 525,336,576 / 2 = 525,336,576 (+ final norm 4,096)
    -> x 2 B = 1,050,681,344
    total 8,030,527,488 B."""
    m = memory("llama3.1-8b", "h200_nvl8", Workload("decode", 1024, 1), Parallelism(tp=2))
    assert m["weights"] == 8_030_527_488
    assert m["capacity"] == 141e9 and m["fits"]


def test_tp_allreduce_stage_by_hand():
    """Llama 3.1 70B decode, batch 1, TP = 8 on h200_nvl8 (NVLink 450 GB/s each way line rate x
    0.822 NCCL protocol efficiency = 369.9 GB/s, 1 us latency):
    bytes = 1 token x 8192 x 2 B = 16,384
    ring all-reduce = 2 x 7/8 x 16,384 / 369.9e9 s + 2 x 7 x 1000 ns = 77.52 ns + 14,000 ns
    = 14,077.52 ns per layer; x 80 layers = 1,126,202 ns, plus 80 launches x the per-launch cost (0.529 us measured
    inside a CUDA graph, calibration/h200/measured/launch.csv; 1.5 us estimate without it)."""
    r = latency("llama3.1-70b", "h200_nvl8", Workload("decode", 8192, 1), Parallelism(tp=8))
    st = next(s for s in r.stages if s.name == "tp_allreduce_attn")
    per_layer = 2 * 7 / 8 * 16384 / (450e9 * 0.822) * 1e9 + 14 * 1000
    assert st.comm_ns == pytest.approx(80 * per_layer, rel=1e-9)
    launch = load_system("h200_nvl8").launch_ns
    assert st.total_ns == pytest.approx(80 * per_layer + 80 * launch, rel=1e-9)
    assert st.bound == "comm" and "2 x 7/8" in st.formula


def test_decode_gemm_stage_from_the_kernel_analysis():
    """Llama 3.1 8B decode, batch 1, TP = 1 on h200_sxm, fused kernels (one unsplit GEMM per
    projection; eager split-K: tests/test_model_latency_eager.py), o_proj: C[1, 4096] = A[1, 4096] @ W[4096, 4096].
    Priced by linear.tile (the weight [N, K], K contiguous, as the model's layers hold it) at M=1 N=4096 K=4096 on the H200 at the one attainable-bandwidth rule,
    4.8 TB/s x efficiency 0.883 = 4238.4 GB/s (tfx.hw.attainable, which the analysis applies; the
    model no longer swaps in the measured figure on top of it): the weights are 4096 x 4096 x 2 B
    = 33,554,432 B -> 33,554,432 / 4238.4 GB/s = 7.92 us of memory time, a floor. Small decode
    GEMMs reach at least 45% of the copy bandwidth on this GPU (the measured GEMM-only decode
    step of calibration/h200/measured/decode_step.csv moves its weights at 3.1 TB/s, 73% of
    4.24 TB/s, through cuBLAS split-K; linear.tile splits no K: 64 CTAs for 132 SMs, each trip a
    load round trip of chain, loaded DRAM latency and the SM's L2 port, tfx.analysis.load_trip,
    measured in calibration/h200/measured/kloop; bench/model_public.py's 36 rows went 9.1% ->
    8.6% with it), so the body lies between 7.92 us and 7.92 / 0.45 = 17.6 us. The stage is 32 layers x that body plus 32 launches x the per-launch
    cost. We recompute the candidates here, one scalar analyze each. The roofline memory term is
    at the datasheet 4.8 TB/s: 32 x 33,554,432 / 4800 GB/s = 223.7 us."""
    prof = load_profile("h200_sxm")
    mod = parse_file("kernels/linear.tile")
    bodies = []
    for bm, bn, bk, w, st in GEMM_CANDIDATES_GPU:
        # as the model compiles its GEMMs (tfx.model.system.DEFAULT_GEMM_CODEGEN: cutlass)
        a = analyze(mod, None, prof, params=dict(M=1, N=4096, K=4096, BM=bm, BN=bn, BK=bk, WARPS=w, STAGES=st,
                                                 GROUP_M=8), check=False, codegen=DEFAULT_GEMM_CODEGEN)
        ideal = max(a.metrics["roofline.compute_ns"], a.metrics["roofline.memory_ns"])
        bodies.append(max(float(a.metrics["performance.predicted_ns"]) - 3000.0, float(ideal)))
    body = min(bodies)
    assert 7_920 < body < 17_600
    r = latency("llama3.1-8b", "h200_sxm", Workload("decode", 8192, 1, kernels="fused"))
    st = next(s for s in r.stages if s.name == "o_proj")
    launch = load_system("h200_sxm").launch_ns
    assert st.total_ns == pytest.approx(32 * body + 32 * launch, rel=1e-9)
    assert st.memory_ns == pytest.approx(32 * 33_554_432 / 4800, rel=2e-3)
    assert st.bound == "memory"


@pytest.mark.parametrize("kernels", ["eager", "fused"])
@pytest.mark.parametrize("model,hw,wl,par", [
    ("llama3.1-8b", "h200_sxm", Workload("decode", 8192, 1), Parallelism()),
    ("llama3.1-70b", "h200_nvl8", Workload("decode", 131072, 4), Parallelism(tp=8, cp=2, dp=2, pp=2)),
    ("llama3.1-70b", "h200_nvl8", Workload("prefill", 8192, 1), Parallelism(tp=4, cp=2, cp_ring="q")),
    ("mixtral-8x7b", "h200_nvl8", Workload("decode", 4096, 8), Parallelism(tp=2, dp=4, ep=8)),
    ("deepseek-v3", "h200_nvl8", Workload("decode", 4096, 8, weight_dtype="fp8"), Parallelism(tp=8, dp=8, ep=64)),
    ("gemma2-9b", "h200_nvl8", Workload("prefill", 8192, 1), Parallelism(tp=2)),
    ("llama3.1-8b", "sip", Workload("decode", 8192, 1), Parallelism(tp=8, cp=8, tp_place="cube", cp_place="pe")),
])
def test_attention_plus_ffn_is_the_whole(model, hw, wl, par, kernels):
    from dataclasses import replace
    r = latency(model, hw, replace(wl, kernels=kernels), par)
    assert r.attention_ns + r.ffn_ns == pytest.approx(r.latency_ns, rel=1e-12)
    assert sum(s.total_ns for s in r.stages) == pytest.approx(r.latency_ns, rel=1e-12)
    assert r.latency_ns > 0 and all(s.bound for s in r.stages)


def test_pipeline_parallelism_does_not_shorten_one_request():
    """A request crosses all 80 layers whatever PP is: PP = 4 adds 3 send/recv hops and keeps
    every layer's stage times, so its latency is the PP = 1 latency plus the hops."""
    wl = Workload("decode", 8192, 1)
    one = latency("llama3.1-70b", "h200_nvl8", wl, Parallelism(tp=2))
    four = latency("llama3.1-70b", "h200_nvl8", wl, Parallelism(tp=2, pp=4))
    hops = next(s for s in four.stages if s.name == "pp_sendrecv")
    assert four.latency_ns >= one.latency_ns
    assert four.latency_ns == pytest.approx(one.latency_ns + hops.total_ns, rel=1e-9)
    # 3 hops of 8192 x 2 B over NVLink (tp2 x pp4 = 8 GPUs fit a node) at NCCL's 450 GB/s x 0.822
    # + 3 x 1 us + 6 launches
    assert hops.comm_ns == pytest.approx(3 * (16384 / (450e9 * 0.822) * 1e9 + 1000), rel=1e-9)
    # ... while memory per device drops: a quarter of the layers
    assert four.memory["weights"] < one.memory["weights"] / 3


def test_meaningless_parallelism_is_refused():
    m = "llama3.1-8b"
    wl = Workload("decode", 8192, 1)
    for par, text in [(Parallelism(pp=64), "pp 64 > 32 layers"), (Parallelism(ep=2), "dense"),
                      (Parallelism(cp_ring="q"), "ring variant"), (Parallelism(dp=2), "batch"),
                      (Parallelism(tp=2), "single GPU .* use h200_nvl8")]:
        with pytest.raises(TfxError, match=text):
            latency(m, "h200_sxm" if par.tp == 2 else "h200_nvl8", wl, par)
    with pytest.raises(TfxError, match="must divide tp x dp"):
        latency("mixtral-8x7b", "h200_nvl8", Workload("decode", 8192, 1), Parallelism(tp=2, ep=8))


def test_cli_latency_json():
    out = subprocess.run([sys.executable, "-m", "tfx.cli.main", "model", "latency", "--model", "llama3.1-8b",
                          "--hw", "h200_sxm", "--mode", "decode", "--batch", "1", "--ctx", "8192", "--json"],
                         capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    assert data["latency_ns"] > 0 and data["memory"]["fits"]
    for s in data["stages"]:
        assert {"name", "compute_ns", "memory_ns", "comm_ns", "bound", "formula"} <= set(s)


def test_cli_compare_marks_best(tmp_path):
    a = tmp_path / "a.json"
    subprocess.run([sys.executable, "-m", "tfx.cli.main", "model", "latency", "--model", "llama3.1-70b",
                    "--hw", "h200_nvl8", "--tp", "8", "--save", str(a), "--json"], capture_output=True, check=True)
    out = subprocess.run([sys.executable, "-m", "tfx.cli.main", "model", "compare", str(a), "--model",
                          "llama3.1-70b", "--hw", "h200_nvl8", "--config", "tp=4,pp=2", "--json"],
                         capture_output=True, text=True, check=True).stdout
    table = json.loads(out)
    row = next(r for r in table["rows"] if r["name"] == "latency")
    assert row["best"] == [True, False]


def test_cli_compare_text_columns_apart():
    """tfx model compare's text: two columns labelled 'tp1 cp1 pp1 dp1 ep1' and 'tp2 cp1 pp1 dp1 ep1'
    (19 characters each) ran into one ('... ep1 tp2 ...', one space). Now a column is 2 spaces, the
    label or value right-aligned in 19, then 2 for the best mark: the header is '  ' + 'stage'
    padded to 24 + '  ' + label 1 + '  ' + '  ' + label 2 (trailing spaces dropped) =
    2 + 24 + 2 + 19 + 4 + 19 = 70 characters, the labels 4 spaces apart; every value ends where its
    label ends (columns 2 + 24 + 2 + 19 = 47 and 47 + 4 + 19 = 70)."""
    out = subprocess.run([sys.executable, "-m", "tfx.cli.main", "model", "compare", "--model", "llama3.1-8b",
                          "--hw", "h200_nvl8", "--config", "tp=1", "--config", "tp=2"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    header = next(line for line in out if line.startswith("  stage"))
    assert header == "  stage" + " " * 19 + "  tp1 cp1 pp1 dp1 ep1    tp2 cp1 pp1 dp1 ep1"
    assert len(header) == 70
    latency = next(line for line in out if line.startswith("  latency "))
    assert latency[46] != " " and latency[47] == " " and latency[69] != " "
    assert latency[70:] in ("", " *")
