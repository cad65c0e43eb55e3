"""Issue 17's defects: node profiles and the TP refusal, one attainable-bandwidth rule, dtype
paths, the medium-batch GEMM memory term, and same-die facts. Every expected number is
derived in the test's docstring from the profile facts it names."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tfx.errors import TfxError
from tfx.hw import list_profiles, load_profile
from tfx.hw.attainable import attainable_bandwidth
from tfx.model.kernels import KernelPricer
from tfx.model.latency import gemm_path, latency
from tfx.model.system import Parallelism, Workload, load_system, node_profiles_for

# ----------------------------------------------------------------- defect 1: node profiles


@pytest.mark.parametrize("chip,node", [("h100_sxm", "h100_hgx8"), ("h200_sxm", "h200_nvl8"),
                                       ("a100_sxm", "a100_hgx8"), ("a100_sxm_40gb", "a100_40gb_hgx8"),
                                       ("b200", "b200_hgx8")])
def test_tp_on_a_single_gpu_profile_names_its_node_profile(chip, node):
    """A single-GPU profile refuses TP 2 because it is one GPU, and names the node built on it
    (h200_nvl8 is an H200 node, not an H100 one, though h200_sxm inherits from h100_sxm)."""
    assert node_profiles_for(chip) == [node]
    with pytest.raises(TfxError, match=f"profile {chip} is a single GPU .*use {node} "):
        latency("llama3.1-8b", chip, Workload("decode", 8192, 1), Parallelism(tp=2))


def test_tp2_on_an_h100_node_works_over_nvlink():
    """h100_hgx8: NVLink 900 GB/s bidirectional = 450 GB/s each way line rate, of which NCCL
    moves 370 (efficiency 0.822: 369.9 GB/s), 1 us; the TP all-reduce of one decode token
    (4096 x 2 B = 8,192 B) over 2 ranks is 2 x 1/2 x 8192 / 369.9 GB/s + 2 x 1 us
    = 22.15 ns + 2,000 ns = 2,022.15 ns per layer."""
    r = latency("llama3.1-8b", "h100_hgx8", Workload("decode", 8192, 1), Parallelism(tp=2))
    assert r.devices == 2
    ar = next(s for s in r.stages if s.name == "tp_allreduce_attn")
    assert ar.comm_ns == pytest.approx(32 * (8192 / 369.9e9 * 1e9 + 2000.0), rel=1e-9)


@pytest.mark.parametrize("node,nvlink,ib", [("h100_hgx8", 450e9, 400e9 / 8), ("a100_hgx8", 300e9, 200e9 / 8),
                                            ("a100_40gb_hgx8", 300e9, 200e9 / 8), ("b200_hgx8", 900e9, 400e9 / 8)])
def test_node_profiles_state_nvlink_and_a_nic_per_gpu(node, nvlink, ib):
    """Each way per GPU: NVLink 900 / 600 / 1,800 GB/s bidirectional halved; one NIC per GPU,
    NDR 400 Gb/s or HDR 200 Gb/s = 50 or 25 GB/s; 8 GPUs per node."""
    s = load_system(node)
    assert s.profile.value("links.nvlink.bandwidth") == nvlink
    assert (s.inter.bandwidth, s.devices_per_node) == (ib, 8)
    # collectives move the line rate x NCCL's protocol efficiency (370 of 450 GB/s on NVLink4)
    assert s.intra.bandwidth == pytest.approx(nvlink * 0.822, rel=1e-12)


def test_a100_40gb_is_the_80gb_part_with_less_memory():
    """[DS] 40 GB HBM2 at 1,555 GB/s; everything else (108 SMs, 40 MB L2) from a100_sxm."""
    small, big = load_profile("a100_sxm_40gb"), load_profile("a100_sxm")
    assert small.value("memory.gmem.capacity") == 40e9 and small.value("memory.gmem.bandwidth") == 1555e9
    assert small.units_of("sm") == big.units_of("sm") == 108
    assert small.value("memory.l2.capacity") == big.value("memory.l2.capacity")


# ----------------------------------------------------------------- defect 2: one bandwidth rule

def test_one_attainable_bandwidth_rule_for_every_gpu_profile():
    """attainable = datasheet x memory.gmem.efficiency on every GPU profile; h200_sxm's
    efficiency is measured (4238 / 4800 GB/s = 0.883), h100_sxm's too (2,992.3 / 3,350 = 0.8932, session
    34), the others carry the H200's 0.883 as a sourced estimate: 4.8 TB/s x 0.883 = 4.2384 TB/s;
    3.35 x 0.8932 = 2.99222 TB/s;
    1,555 GB/s x 0.883 = 1.373065 TB/s. The model prices kernels with the profile as it is
    (no measured figure swapped in on top of the efficiency)."""
    for name in list_profiles():
        p = load_profile(name)
        if p.kind != "gpu":
            continue
        a = attainable_bandwidth(p)
        assert a.origin in ("measured", "estimated"), name
        assert a.bandwidth == pytest.approx(p.value("memory.gmem.bandwidth") * p.value("memory.gmem.efficiency"))
        assert load_system(name).profile.value("memory.gmem.bandwidth") == p.value("memory.gmem.bandwidth")
    expect = {"h200_sxm": (4.2384e12, "measured"), "h100_sxm": (2.99222e12, "measured"),
              "a100_sxm_40gb": (1.373065e12, "estimated")}
    for name, (bw, origin) in expect.items():
        a = attainable_bandwidth(load_profile(name))
        assert (a.bandwidth, a.origin) == (pytest.approx(bw, rel=1e-12), origin)
    assert load_system("h200_sxm", bandwidth="datasheet").profile.value("memory.gmem.efficiency") == 1.0


def test_hw_show_states_the_rule_with_provenance():
    out = subprocess.run([sys.executable, "-m", "tfx.cli.main", "hw", "show", "h100_sxm"],
                         capture_output=True, text=True, check=True).stdout
    assert "attainable gmem bandwidth 2.99 TB/s = datasheet 3.35 TB/s x efficiency 0.8932 (measured:" in out


# ----------------------------------------------------------------- defects 3 and 5: dtype paths

def test_fp8_on_a100_is_refused_and_names_the_fallback():
    """A100 states compute.tensor.fp8e4m3 unavailable ("Ampere has no fp8 tensor cores")."""
    with pytest.raises(TfxError, match="fp8 activations need fp8e4m3 tensor cores.*a100_sxm") as e:
        latency("llama3.1-8b", "a100_sxm", Workload("decode", 8192, 1, "fp8", "fp8"))
    assert "--act-dtype bf16" in " ".join(e.value.notes)
    r = latency("llama3.1-8b", "a100_sxm", Workload("decode", 8192, 1, "fp8", "bf16"))
    assert "GEMM path: weight-only w8a16" in " ".join(r.notes)


def test_fp8_gemms_are_analysed_on_the_fp8_kernel():
    """fp8 x fp8 on h100_hgx8: every weight GEMM is gemm_fp8.tile analysed at its shape (not
    gemm.tile scaled); the stage's time is that kernel's body, so it equals the pricer's own."""
    from tfx.model.kernels import pricer_for
    sysm = load_system("h100_hgx8")
    r = latency("llama2-70b", sysm, Workload("prefill", 2048, 1, "fp8", "fp8", "fp8"), Parallelism(tp=8))
    g = next(s for s in r.stages if s.name == "o_proj")
    assert "gemm_fp8.tile M=2048 N=8192 K=1024" in g.formula      # K = 64 heads / 8 x 128
    c, = pricer_for(sysm.profile, sysm.profile_key).gemm_fp8([(2048, 8192, 1024)])
    assert g.total_ns == pytest.approx(80 * (c.ns + sysm.launch_ns), rel=1e-12)


def test_gemm_paths_by_hardware():
    """H100 fp8 x fp8: sustained rates, (4096 flop/cycle/SM x 0.742) / (8192 x 0.655)
    = 3039.232 / 5365.76 = 0.566412... (peak alone would say 0.5); int4 weights with bf16
    activations: weight-only w4a16 at bf16 tensor-core time (x 1)."""
    h100 = load_profile("h100_sxm")
    name, ratio = gemm_path(h100, Workload("decode", 8192, 1, "fp8", "fp8"))
    assert ratio == pytest.approx(3039.232 / 5365.76, rel=1e-12) and "fp8e4m3" in name
    name, ratio = gemm_path(h100, Workload("decode", 8192, 1, "int4", "bf16"))
    assert ratio == 1.0 and name.startswith("weight-only w4a16")


# ----------------------------------------------------------------- defects 4 and 6

def test_medium_batch_gemm_memory_term_is_the_same_die_s_shared_memory():
    """gate/up of llama2-70b at TP 4: M = 480, N = 14336, K = 8192, chosen BM = 128, BN = 256 on 8
    warps (2 warpgroups over M). The roofline's memory term is the SMs' shared memory, the same
    on both parts (one die: 132 SMs x 128 B/cycle x 1.98 GHz = 33,454.08 B/ns): the copies write
    A's 480 rows once per N tile, 56 x 480 x 8192 x 2 B = 440,401,920 B, and B once per M tile,
    ceil(480 / 128) = 4: 4 x 8192 x 14336 x 2 B = 939,524,096 B; the wgmma read A's 4 x 128 rows
    (the last tile's 96 padded to its warpgroups' 64-row halves) once, 4 x 128 x 8192 x 2 x 56 =
    469,762,048 B, and B once per warpgroup, 2 x 939,524,096 = 1,879,048,192 B: 3,728,736,256 B
    = 111,458.9 ns, 111,459 whole. The tiles' L2 requests, A once per N tile (440,401,920 B), B
    once per M tile (939,524,096 B) and C written once (480 x 14336 x 2 B = 13,762,560 B), are
    1,393,688,576 B at the SMs' L2 ports (132 x 65 B/cycle x 1.98 GHz = 16,988.4 B/ns) 82,037.3
    ns: under it (before session 60 the L2 term at its sustained rate was the roof: 126,699 ns on
    the H200, 151,984 on the H100). The unique bytes, (480 x 8192 + 8192 x 14336 + 480 x 14336) x
    2 = 256,507,904 B, at h100's attainable 2.99222 TB/s take 85.7 us: under it too."""
    for hw in ("h100_sxm", "h200_sxm"):
        c, = KernelPricer(load_profile(hw)).gemm([(480, 14336, 8192)])
        assert "BM=128 BN=256" in c.config
        assert c.memory_ns == 111_459        # the roofline rounds up to whole ns
        assert c.memory_ns > 1_393_688_576 / 16_988.4 and c.memory_ns > 256_507_904 / 2992.22


def test_same_die_facts_agree_between_h100_and_h200():
    """Both GH100 with 132 SMs at 1980 MHz: the same tensor rates and clock; they differ in memory
    (sourced per profile) and in the L2 slices that sit with it: the H100 SXM5's 10 memory
    controllers of the full die's 12, so its L2 bandwidth is 11 TB/s (measured on the H200) x 5 / 6
    = 9.17 TB/s, derived."""
    h100, h200 = load_profile("h100_sxm"), load_profile("h200_sxm")
    for path in ("clock.core", "compute.tensor.bf16", "compute.tensor.fp8e4m3", "memory.smem.bandwidth_per_cycle"):
        assert h100.value(path) == h200.value(path), path
    # the copy's share of the datasheet, measured on each part: 2,992.3 / 3,350 = 0.8932, 4,238 / 4,800 = 0.883
    assert (h100.value("memory.gmem.efficiency"), h200.value("memory.gmem.efficiency")) == (0.8932, 0.883)
    assert (h100.value("memory.l2.bandwidth"), h200.value("memory.l2.bandwidth")) == (9.17e12, 11e12)
    assert h100.fact("memory.l2.bandwidth").origin == "derived"
    assert h100.units_of("sm") == h200.units_of("sm") == 132


# ----------------------------------------------------------------- sustained tensor rates


@pytest.mark.parametrize("hw,bf16,fp8", [
    # 4096 x 132 x 1.98e9 = 1.07053056e15 peak bf16, 8192 x 132 x 1.98e9 = 2.14106112e15 fp8
    ("h100_sxm", 1.07053056e15 * 0.742, 2.14106112e15 * 0.655),   # MAMF 794.5 / 1402.6 TFLOP/s
    ("h100_hgx8", 1.07053056e15 * 0.742, 2.14106112e15 * 0.655),  # inherited from h100_sxm
    # measured 0.74; fp8 0.74 x 1.892 / 2 = 0.700 (cuBLAS fp8 / bf16 at 8192^3, fp8_rate)
    ("h200_sxm", 1.07053056e15 * 0.74, 2.14106112e15 * 0.700),
    ("h200_nvl8", 1.07053056e15 * 0.74, 2.14106112e15 * 0.700),
    # 2048 x 108 x 1.41e9 = 3.1186944e14 bf16, no fp8 tensor cores
    ("a100_sxm", 3.1186944e14 * 0.87, None),                      # MAMF 271.2 TFLOP/s
    ("a100_40gb_hgx8", 3.1186944e14 * 0.87, None),
    # 8192 x 148 x 1.8558e9 = 2.2500016e15 bf16, twice that fp8
    ("b200", 2.25000161e15 * 0.776, 4.50000323e15 * 0.763),       # MAMF 1745.0 / 3432.5
])
def test_sustained_tensor_rate_per_dtype(hw, bf16, fp8):
    """The sustained (power-limited) tensor rate is the peak x the profile's per-dtype fraction,
    sourced from the public MAMF table (the H200: its own cuBLAS runs, bf16 and fp8): fp8 settles lower than
    bf16 (0.655 vs 0.742 on H100) because it draws more power per cycle."""
    p = load_profile(hw)
    assert p.sustained_flops_per_s("tensor", "bf16") == pytest.approx(bf16, rel=1e-6)
    if fp8 is None:
        with pytest.raises(TfxError):
            p.sustained_flops_per_s("tensor", "fp8e4m3")
    else:
        assert p.sustained_flops_per_s("tensor", "fp8e4m3") == pytest.approx(fp8, rel=1e-6)


def test_sustained_fraction_falls_back_to_the_unit_efficiency_then_one():
    """rtx5070ti states no tensor efficiency at all: 1; h100_sxm states no int8 fraction: its
    `efficiency` (0.742); e5m2 is stated alongside e4m3 (0.655)."""
    assert load_profile("rtx5070ti").sustained_efficiency("tensor", "bf16") == 1.0
    h100 = load_profile("h100_sxm")
    assert h100.sustained_efficiency("tensor", "int8") == 0.742
    assert h100.sustained_efficiency("tensor", "fp8e5m2") == 0.655


def test_the_kernel_analysis_prices_fp8_tensor_work_at_the_fp8_fraction():
    """gemm_fp8.tile at 4096^3 (BM 128, BN 256, BK 64) on an H100 whose fp8 warpgroup mma is
    pipelined (h100_sxm less pipeline.wgmma_serial_trip_overhead and wgmma_serial_latency,
    tests/profile_variants.py): one CTA does 2 x 128 x 256 x 4096 = 268,435,456 fp8 flops at
    8192 flop/cycle x 1.98 GHz = 16,220.16 flop/ns x the fp8 fraction; each of its 4096 / 64 = 64
    trips' 100 cycles of loop overhead (50.51 ns) is issued while the warpgroup mma runs (a trip's
    mma, 4,194,304 flop / 10,624.2 flop/ns = 394.8 ns, is longer): 268,435,456 / (16,220.16 x
    0.655) = 25,266.4 ns with the stated 0.655; a knob putting bf16's 0.742 in its place gives
    22,304.0 ns.

    h100_sxm itself states the GH100's serialized fp8 trip (ptxas C7515 at N = 256 on 8 warps,
    tfx.analysis.mma_layout): a trip is its flops at the peak, 4,194,304 / 8192 = 512 cycles, +
    500 cycles + 42 a wgmma a warpgroup issues (two warpgroups of one 64-row slab each, 64 / 32 =
    2 k-steps of m64n256k32: 2): 512 + 500 + 84 = 1,096 cycles / 1.98 = 553.5354 ns, x 64 trips =
    35,426.26 ns, whatever the fraction."""
    from tfx.analysis.analyze import analyze
    from tfx.lang import parse_file
    from profile_variants import without
    module = parse_file("kernels/gemm_fp8.tile")
    params = dict(M=4096, N=4096, K=4096, BM=128, BN=256, BK=64, WARPS=8, STAGES=3, GROUP_M=8)
    pipelined = without("h100_sxm", "pipeline.wgmma_serial_trip_overhead", "pipeline.wgmma_serial_latency")
    for eff, knobs in ((0.655, None), (0.742, {"compute.tensor.efficiency_fp8e4m3": "0.742"})):
        a = analyze(module, None, pipelined.with_knobs(knobs), params=params)
        expected = 64 * max(268_435_456 / 64 / (16_220.16 * eff), 100 / 1.98)
        assert a.launches[0].engines["tensor"] == pytest.approx(expected, rel=1e-9)
        a = analyze(module, None, load_profile("h100_sxm").with_knobs(knobs), params=params)
        assert a.launches[0].engines["tensor"] == pytest.approx(64 * (512 + 500 + 2 * 42) / 1.98, rel=1e-9)


# ----------------------------------------------------------------- residual stream, collectives


def test_fp8_activations_all_reduce_the_gemm_output_in_bf16():
    """Llama 2 70B prefill of 2048 tokens at TP 8 on h100_hgx8 with fp8 weights and activations:
    fp8 is the GEMM's input only; gemm_fp8.tile writes bf16, so the all-reduce after o_proj moves
    2048 x 8192 x 2 B = 33,554,432 B (not 16,777,216 at 1 B): 2 x 7/8 x 33,554,432 B / 369.9 GB/s
    + 2 x 7 x 1 us = 158,759.9 ns + 14,000 ns = 172,759.9 ns per layer, x 80 layers."""
    r = latency("llama2-70b", "h100_hgx8", Workload("prefill", 2048, 1, "fp8", "fp8", "fp8"), Parallelism(tp=8))
    ar = next(s for s in r.stages if s.name == "tp_allreduce_attn")
    per_layer = 2 * 7 / 8 * 33_554_432 / 369.9e9 * 1e9 + 14_000
    assert ar.comm_ns == pytest.approx(80 * per_layer, rel=1e-9)


def test_link_efficiency_is_stated_with_its_source_and_noted():
    """h200_nvl8 states links.nvlink.efficiency 0.822 (derived, NCCL's 370 of 450 GB/s); the
    system notes the collective rate 369.9 GB/s = 450 GB/s x 0.822."""
    s = load_system("h200_nvl8")
    fact = s.profile.fact("links.nvlink.efficiency")
    assert fact.value == 0.822 and fact.origin == "derived" and "nccl-tests issue 212" in fact.source
    assert any("links.nvlink.efficiency 0.822" in n for n in s.notes)


# ----------------------------------------------------------------- weight-only GEMM kernels


@pytest.mark.parametrize("wdtype,kernel", [("int4", "gemm_w4a16"), ("fp8", "gemm_w8a16"), ("nvfp4", "gemm_w4a16")])
def test_weight_only_gemms_are_analysed_on_their_kernels(wdtype, kernel):
    """int4 / nvfp4 weights with bf16 activations run gemm_w4a16.tile, fp8 weights gemm_w8a16.tile
    (weights dequantized in registers, bf16 mma), each analysed at the stage's shape: Llama 3.1 8B
    decode at batch 8, gate/up fused N = 2 x 14336 = 28672, K = 4096; the stage's time is the
    kernel's body split half and half between gate and up (+ the launch, once)."""
    from tfx.model.kernels import pricer_for
    sysm = load_system("h100_hgx8")
    r = latency("llama3.1-8b", sysm, Workload("decode", 2048, 8, wdtype, "bf16", "bf16"))
    g = next(s for s in r.stages if s.name == "gate_proj")
    assert f"{kernel}.tile M=8 N=28672 K=4096" in g.formula
    c, = getattr(pricer_for(sysm.profile, sysm.profile_key), kernel)([(8, 28672, 4096)])
    assert g.total_ns == pytest.approx(32 * (c.ns / 2 + sysm.launch_ns), rel=1e-12)
    assert f"gemm_w{4 if kernel.endswith('w4a16') else 8}a16.tile analysed" in gemm_path(sysm.profile, r.workload)[0]


def test_w4a16_rounds_k_up_to_whole_scale_groups():
    """One bf16 scale per 128 K elements: K = 100 is priced as one whole group, K = 128; the
    8-bit kernel (per-channel scale) keeps K = 100."""
    p = KernelPricer(load_profile("h100_sxm"))
    c4, = p.gemm_w4a16([(16, 4096, 100)])
    c8, = p.gemm_w8a16([(16, 4096, 100)])
    assert c4.params == "M=16 N=4096 K=128" and c8.params == "M=16 N=4096 K=100"
