"""`tfx simulate` names its bound by the roofline's names (issue 14 item 2), in its JSON and in
every line of its text, and the explorer's Timeline pane shows the same comparison."""

from __future__ import annotations

import json

from tfx.bundled import bundled_kernel
from tfx.cli.main import main

GEMM = str(bundled_kernel("gemm.tile"))


def test_simulate_names_the_bound_as_the_roofline_does(capsys):
    """gemm 4096^3 on h200_sxm (the tutorial's section 3): every CTA re-reads its A and B
    tiles through L2, 2.15 GB of reads at the L2's sustained 11 TB/s, 198.28 us; the roofline,
    at peak rates, is bound by smem (the wgmma operand reads and copy writes, 160.48 us, past
    the L2's 128.38 us at the SMs' ports and tensor's 128.38 us); the schedule and the
    simulator's busiest engine, the copy engine that moves the L2 bytes, are bound by l2, never
    the engine's own name 'copy' in place of it."""
    assert main(["simulate", GEMM, "--hw", "h200_sxm", "--json", "--no-events"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bottleneck_engine"] == "copy"
    assert data["bound_by"] == "l2"
    # the analysis' bounds under analyze's own metric names (`tfx analyze --json`'s metrics)
    assert data["analysis"]["roofline.bound_by"] == "smem"
    assert data["analysis"]["performance.bound_by"] == "l2"
    assert "roofline_bound_by" not in data["analysis"] and "predicted_bound_by" not in data["analysis"]
    # the efficiency's denominator is the waves' makespan (launch excluded), the util's the whole
    # makespan: one launch, its waves' makespan = makespan - launch_ns; both ratios are the copy
    # engine's busy time over their own denominator
    (launch,) = data["launches"]
    copy = data["engines"]["copy"]
    assert launch["makespan_ns"] == data["makespan_ns"] - launch["launch_ns"]
    assert abs(data["pipeline_efficiency"] - copy["busy_ns"] / launch["makespan_ns"]) < 1e-5
    assert abs(copy["utilization"] - copy["busy_ns"] / data["makespan_ns"]) < 1e-5
    assert main(["simulate", GEMM, "--hw", "h200_sxm"]) == 0
    out = capsys.readouterr().out
    eff = next(line for line in out.splitlines() if line.lstrip().startswith("efficiency"))
    # the waves' makespan: the efficiency leaves the launch out, the engine table's util does not
    assert "(copy engine busy / the waves' makespan; bound by l2)" in eff
    assert "bottleneck copy" not in out


def test_simulate_names_latency_where_the_analysis_bound_engine_carries_a_chain(capsys):
    """flash_attention.tile at its defaults on h200_sxm: one CTA an SM, each trip's QK^T ->
    softmax -> PV in series (the serial chain the tensor engine carries as its floor); the
    prediction is bound by latency, its bound engine the tensor engine (docs/analysis.md section
    7). The simulator's busiest engine is that same tensor engine, so its bound is latency too,
    not 'tensor' beside the prediction's 'latency'; the roofline, at peak rates, is tensor's."""
    assert main(["simulate", str(bundled_kernel("flash_attention.tile")), "--hw", "h200_sxm", "--json",
                 "--no-events"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bottleneck_engine"] == "tensor"
    assert data["analysis"]["performance.bound_engine"] == "tensor"
    assert data["analysis"]["performance.bound_by"] == "latency"
    assert data["bound_by"] == "latency"
    assert data["analysis"]["roofline.bound_by"] == "tensor"


def test_analyze_json_says_why_a_launch_is_latency_bound(capsys):
    """The same flash_attention launch in `tfx analyze --json`: its launch object carries
    bound_by 'latency' and latency_from 'round' (its longest loop's round, the chain the tensor
    engine carries, past the engines' own work), so a script tells it from a launch whose one
    CTA's chain outlasts every engine ('chain')."""
    assert main(["analyze", str(bundled_kernel("flash_attention.tile")), "--hw", "h200_sxm", "--json"]) == 0
    (launch,) = json.loads(capsys.readouterr().out)["performance"]["launches"]
    assert (launch["bound_engine"], launch["bound_by"], launch["latency_from"]) == ("tensor", "latency", "round")


def test_simulate_names_latency_where_its_busiest_engine_idles_most_of_the_waves(capsys):
    """gemm_w4a16.tile at M 16, N = K = 4096 with 16x64x128 tiles and 2 stages: each trip's int4 weights are copied
    to registers and dequantized (a cast and a mul) after their load lands and before the mma can start, so the
    simulated CTA waits on those dependencies longer than any engine works. Its busiest engine is the special-function
    unit, which runs the cast's conversions (one I2F a weight, compute.special.int_to_float): 128 x 64 = 8,192 a trip
    at 16 a cycle = 512 cycles / 1.98 GHz = 258.6 ns, 259 ns in whole ns, x 32 trips = 8,288 ns, against a makespan
    of more than twice that (pipeline_efficiency < 0.5): the bound is latency, as the prediction's, not the idle
    engine's name. The rule is the ratio itself: efficiency = special busy / waves' makespan, latency below one half."""
    assert main(["simulate", str(bundled_kernel("gemm_w4a16.tile")), "--hw", "h200_sxm", "--set", "BN=64,STAGES=2",
                 "--json", "--no-events"]) == 0
    data = json.loads(capsys.readouterr().out)
    (launch,) = data["launches"]
    busiest = data["bottleneck_engine"]
    assert busiest == "special" and data["engines"]["special"]["busy_ns"] == 32 * 259
    efficiency = data["engines"][busiest]["busy_ns"] / launch["makespan_ns"]
    assert abs(data["pipeline_efficiency"] - efficiency) < 1e-5 and efficiency < 0.5
    # the analysis names latency too (its bound engine is not the simulator's busiest)
    assert data["analysis"]["performance.bound_by"] == "latency"
    assert data["analysis"]["performance.bound_engine"] != busiest
    assert data["bound_by"] == "latency"


def test_an_engine_under_saturation_does_not_contradict_the_analysis_latency(capsys):
    """gemm_w8a16.tile at its defaults (16x128x128 tiles, 32 trips): the analysis prices it latency-bound (its
    round's mma chain past the engines' work, bound engine tensor); the simulator's busiest engine is the
    special-function unit, holding the fp8 -> bf16 cast's F2F.BF16.F16 a weight (compute.special.fp8_to_bf16):
    128 x 128 = 16,384 a trip / 16 a cycle = 1,024 cycles / 1.98 GHz = 517.2 ns, 518 in whole ns, x 32 = 16,576 ns,
    busy about 0.62 of the waves (0.5 <= efficiency < ENGINE_BOUND_EFFICIENCY = 0.9): not the saturation an
    engine-bound pipeline shows past its fill and drain, so the simulator names latency too."""
    from tfx.sim.result import ENGINE_BOUND_EFFICIENCY, LATENCY_BOUND_EFFICIENCY
    assert main(["simulate", str(bundled_kernel("gemm_w8a16.tile")), "--hw", "h200_sxm", "--json",
                 "--no-events"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["analysis"]["performance.bound_by"] == "latency"
    assert data["bottleneck_engine"] == "special" != data["analysis"]["performance.bound_engine"]
    assert data["engines"]["special"]["busy_ns"] == 32 * 518
    assert LATENCY_BOUND_EFFICIENCY <= data["pipeline_efficiency"] < ENGINE_BOUND_EFFICIENCY
    assert data["bound_by"] == "latency"


def test_the_simulator_and_the_analysis_name_one_bound_for_every_shipped_kernel(capsys):
    """Every shipped kernel at its defaults (the sip kernels on sip, the rest on h200_sxm): `tfx simulate`'s bound
    is the prediction's (the two models agree on what limits each launch: dram, l2, tensor or latency)."""
    from pathlib import Path
    kernels = sorted((Path(__file__).resolve().parent.parent / "kernels").glob("*.tile"))
    assert len(kernels) >= 19
    for path in kernels:
        hw = "sip" if path.name.startswith("sip_") else "h200_sxm"
        assert main(["simulate", str(path), "--hw", hw, "--json", "--no-events"]) == 0, path.name
        data = json.loads(capsys.readouterr().out)
        assert data["bound_by"] == data["analysis"]["performance.bound_by"], path.name
