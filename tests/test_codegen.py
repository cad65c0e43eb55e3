"""The code generator as a property of how a kernel is compiled (tfx.analysis.codegen): Triton's
per-thread copy instructions and ptxas's serialized fp8 wgmma are priced under ``triton`` only;
``cutlass`` (TMA copies, hand-pipelined wgmma) keeps every hardware term. Expected numbers by
hand from hw_profiles/h200_sxm.toml (clock 1.98 GHz; pipeline.* facts)."""

import json
import subprocess
import sys

import pytest

from tfx.analysis import codegen, load_trip, mma_layout
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.model.kernels import KernelPricer
from tfx.model.system import DEFAULT_GEMM_CODEGEN

CLOCK = 1.98   # GHz, clock.core of the H200 profile

# gemm_fp8 128x256x64 on 8 warps: A 128 x 64 fp8 = 8,192 B and B^T 256 x 64 = 16,384 B a trip,
# rows of 64 B (BK = 64 one-byte elements); 256 threads copy 16 B each instruction:
# 24,576 / (256 x 16) = 6 copies a thread, 6 x 8 warps = 48 warp-wide copies, all short-row.
FP8_TILE = dict(M=8192, N=8192, K=8192, BM=128, BN=256, BK=64, WARPS=8, STAGES=3, GROUP_M=8)
TRIP_BYTES = 8192 + 16384
SHORT_COPIES = 48


@pytest.fixture(scope="module")
def h200():
    return load_profile("h200_sxm")


def test_lookup_and_refusal():
    assert codegen.lookup(None) is codegen.TRITON
    assert codegen.lookup("cutlass") is codegen.CUTLASS
    assert codegen.DEFAULT == "triton"
    with pytest.raises(TfxError, match="unknown code generator 'nvcc'; known: triton, cutlass"):
        codegen.lookup("nvcc")


def test_load_trip_facts_drop_per_thread_copies(h200):
    tri = load_trip.facts(Machine(h200, "cta"))
    cut = load_trip.facts(Machine(h200, "cta", "cutlass"))
    # Triton: short_row_copy_cycles 14.0 / 1.98 GHz = 7.0707 ns; narrow 16.5 / 1.98 = 8.3333 ns;
    # sync 21.8 / 1.98 = 11.0101 ns, sync narrow 15.4 / 1.98 = 7.7778 ns
    assert tri.short_row_copy_ns == pytest.approx(14.0 / CLOCK)
    assert tri.narrow_copy_ns == pytest.approx(16.5 / CLOCK)
    assert tri.sync_load_ns == pytest.approx(21.8 / CLOCK)
    assert tri.sync_narrow_load_ns == pytest.approx(15.4 / CLOCK)
    assert (cut.short_row_copy_ns, cut.narrow_copy_ns, cut.sync_load_ns, cut.sync_narrow_load_ns) == (None,) * 4
    # the hardware facts stay: chain 242 cycles / 1.98 = 122.22 ns, port 65 B/cycle x 1.98 = 128.7 B/ns
    assert cut.overhead_ns == pytest.approx(242 / CLOCK) == tri.overhead_ns
    assert cut.port_bytes_per_ns == pytest.approx(65 * CLOCK) == tri.port_bytes_per_ns


def test_port_time_of_the_fp8_trip(h200):
    # 64-byte rows: each copy 512 / 64 = 8 lines, 48 x 8 = 384
    copies = load_trip.TripCopies(0, 0, SHORT_COPIES, TRIP_BYTES, SHORT_COPIES, SHORT_COPIES * 8)
    tri = load_trip.facts(Machine(h200, "cta"))
    cut = load_trip.facts(Machine(h200, "cta", "cutlass"))
    # Triton: 48 short-row copies x 7.0707 ns = 339.39 ns; TMA: 24,576 B / 128.7 B/ns = 190.96 ns
    assert load_trip.copies_port_ns(TRIP_BYTES, copies, tri) == pytest.approx(48 * 14.0 / CLOCK)
    assert load_trip.copies_port_ns(TRIP_BYTES, copies, cut) == pytest.approx(24576 / (65 * CLOCK))


def test_serialized_wgmma_is_tritons(h200):
    f = mma_layout.serial_wgmma_facts(Machine(h200, "cta"))
    # 500 cycles / 1.98 = 252.53 ns, 42 / 1.98 = 21.21 ns
    assert f.trip_overhead_ns == pytest.approx(500 / CLOCK)
    assert f.latency_ns == pytest.approx(42 / CLOCK)
    assert mma_layout.serial_wgmma_facts(Machine(h200, "cta", "cutlass")) is None


def test_analysis_names_its_code_generator(h200):
    module = parse_file("kernels/gemm_fp8.tile")
    tri = analyze(module, None, h200, FP8_TILE)
    cut = analyze(module, None, h200, FP8_TILE, codegen="cutlass")
    names = lambda a: [t.name for t in a.terms]
    assert "serialized wgmma" in names(tri) and "code generator" not in names(tri)
    assert "serialized wgmma" not in names(cut) and names(cut)[0] == "code generator"
    assert tri.to_json()["codegen"] == "triton" and cut.to_json()["codegen"] == "cutlass"
    line = next(t.detail for t in cut.terms if t.name == "load trip")
    # one CTA a SM: chain 242 / 1.98 = 122.22 ns + 24,576 B / 128.7 B/ns = 190.96 -> 313.18 ns;
    # the port alone 190.96 ns (24,576 B printed 24.58 KB, four significant digits)
    assert "122.22 ns of chain + 24.58 KB / 128.7 GB/s of the SM's L2 port = 313.18 ns" in line
    assert "1 x 24.58 KB / 128.7 GB/s = 190.96 ns" in line and "rows of at most 64 B" not in line
    tri_line = next(t.detail for t in tri.terms if t.name == "load trip")
    assert "48 warp-wide 16-byte copies of 24.58 KB in rows of at most 64 B x 7.07 ns) = 339.39 ns" in tri_line


def test_bf16_rows_of_128_bytes_do_not_move(h200):
    # gemm.tile 128x128x64 bf16: rows of 64 x 2 = 128 B (> 64: no short rows), 16-byte copies
    # (no narrow ones), 3 stages (no unpipelined loads), bf16 (no C7515): both code generators
    # price the same instructions, so the same time
    module = parse_file("kernels/gemm.tile")
    p = dict(M=4096, N=4096, K=4096, BM=128, BN=128, BK=64, WARPS=4, STAGES=3, GROUP_M=8)
    assert (analyze(module, None, h200, p).metrics["performance.predicted_ns"]
            == analyze(module, None, h200, p, codegen="cutlass").metrics["performance.predicted_ns"])


def test_model_prices_gemms_as_cutlass(h200):
    assert DEFAULT_GEMM_CODEGEN == "cutlass"
    pr = KernelPricer(h200)
    cost = pr.gemm_fp8([(8192, 8192, 8192)])[0]
    assert cost.codegen == "cutlass" and cost.config.endswith(", cutlass")
    assert cost.to_json()["codegen"] == "cutlass"
    # the elementwise kernels keep the analysis' default
    assert pr.copy([1 << 20])[0].codegen == "triton"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "tfx.cli.main", *args], capture_output=True, text=True)


def test_cli_codegen_flag():
    r = run_cli("analyze", "kernels/gemm_fp8.tile", "--codegen", "cutlass", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["codegen"] == "cutlass"
    r = run_cli("analyze", "kernels/gemm_fp8.tile", "--codegen", "cutlass")
    assert r.stdout.splitlines()[0] == "kernel gemm_fp8 (kernels/gemm_fp8.tile) on h200_sxm, compiled as cutlass"
    r = run_cli("analyze", "kernels/gemm_fp8.tile", "--codegen", "nvcc")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == ("--codegen: error: expected one of triton, cutlass, "
                                                 "found 'nvcc' (see tfx analyze --help)")


def test_workload_gemm_codegen():
    from tfx.model.latency import latency
    from tfx.model.system import Workload
    with pytest.raises(TfxError, match="gemm_codegen must be one of triton, cutlass, got 'nvcc'"):
        Workload(gemm_codegen="nvcc")
    assert Workload().gemm_codegen == "cutlass" and Workload().to_json()["gemm_codegen"] == "cutlass"
    # llama2-7b fp8 prefill of 2,048 tokens on the H200: its fused qkv GEMM (M = 2048, N = 12288,
    # K = 4096) picks 128x128x64 on 4 warps, whose A and B^T tiles have 64-byte rows (BK = 64
    # fp8): Triton's short-row copies price every GEMM of the step slower, cutlass does not
    fp8 = dict(mode="prefill", context=2048, batch=1, weight_dtype="fp8", act_dtype="fp8", kv_dtype="fp8")
    res = {cg: latency("llama2-7b", "h200_nvl8", Workload(**fp8, gemm_codegen=cg)) for cg in ("cutlass", "triton")}
    assert res["triton"].latency_ns > res["cutlass"].latency_ns
    for cg, r in res.items():
        q = next(s for s in r.stages if s.name == "q_proj")
        assert f"(BM=128 BN=128 BK=64 WARPS=4 STAGES=3, {cg})" in q.formula
        assert r.to_json()["workload"]["gemm_codegen"] == cg
    r = run_cli("model", "latency", "--model", "llama2-7b", "--gemm-codegen", "nvcc")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == ("--gemm-codegen: error: expected one of triton, cutlass, "
                                                 "found 'nvcc' (see tfx model latency --help)")


def test_one_default_and_one_list_of_code_generators():
    """The model level's GEMM default is one constant (tfx.model.system.DEFAULT_GEMM_CODEGEN),
    used by the Workload, the pricer's GEMM methods and --gemm-codegen; the one list of code
    generators (tfx.analysis.codegen.CODEGENS) is what both --codegen and --gemm-codegen accept."""
    import inspect
    from tfx.analysis import codegen
    from tfx.model.system import Workload
    assert Workload().gemm_codegen == DEFAULT_GEMM_CODEGEN
    for name in ("gemm", "gemm_fp8", "gemm_weight_only", "gemm_w4a16", "gemm_w8a16"):
        assert inspect.signature(getattr(KernelPricer, name)).parameters["codegen"].default == DEFAULT_GEMM_CODEGEN
    assert tuple(codegen.CODEGENS) == ("triton", "cutlass") and codegen.DEFAULT == "triton"


def test_cutlass_breakdown_line_names_every_term_it_drops():
    """cutlass drops three Triton-only terms (codegen.py's docstring): load_trip's per-thread
    copies, the warp-mma trip (performance._warp_trip returns None without per-thread copies)
    and ptxas's serialized fp8 wgmma; the `code generator` line names each."""
    from tfx.analysis import codegen
    line = codegen.describe(codegen.CUTLASS)
    assert "per-thread copy instructions" in line
    assert "the warp-mma trip's copies" in line
    assert "serialized fp8 wgmma (C7515)" in line
    assert codegen.describe(codegen.TRITON) == f"triton ({codegen.TRITON.description})"


def test_model_text_names_the_gemm_code_generator():
    """`tfx model latency` / `compare` text name the GEMMs' code generator on the runtime line
    (the JSON has workload.gemm_codegen); sip runs its own sip_gemm kernel, which has none."""
    engine = "runtime engine (serving engine: fused kernels replayed as CUDA graphs (vLLM, TensorRT-LLM, SGLang))"
    base = ("model", "latency", "--model", "llama3.1-8b")
    assert run_cli(*base, "--hw", "h200_nvl8").stdout.splitlines()[1] == engine + "; GEMMs compiled as cutlass"
    assert (run_cli(*base, "--hw", "h200_nvl8", "--gemm-codegen", "triton").stdout.splitlines()[1]
            == engine + "; GEMMs compiled as triton")
    assert run_cli(*base, "--hw", "sip").stdout.splitlines()[1] == engine + "; GEMMs as the tiled sip_gemm kernel"
    r = run_cli("model", "compare", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--config", "tp=1",
                "--gemm-codegen", "triton")
    # after the one line of what its one column priced
    assert r.stdout.splitlines()[1] == "runtime engine; GEMMs compiled as triton"
