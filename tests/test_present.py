"""The presentation package: one unit policy, the named bound, the one diff, the inputs a
result remembers. Expected numbers are derived by hand in the comments."""

from __future__ import annotations

import json

import pytest

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.present import analysis_report, diff
from tfx.present import formatting as fmt
from tfx.bundled import bundled_kernel


def gemm(knobs=None):
    return analyze(parse_file(bundled_kernel("gemm.tile")), None,
                   load_profile("h200_sxm").with_knobs(knobs or {}))


def test_metric_formatting_by_name():
    assert fmt.metric("performance.predicted_ns", 216_260) == "216.26 us"      # 216,260 ns / 1000
    assert fmt.metric("memory.traffic.gmem.total.read", 2**31) == "2.15 GB"     # 2,147,483,648 B
    assert fmt.metric("compute-cost.flops.bf16.total", 2 * 4096**3) == "137.44 Gflop"  # 2*4096^3
    assert fmt.metric("compute-cost.special.f32.total", 2_097_152) == "2.10 Mop"
    assert fmt.metric("performance.l2_hit_ratio", 0.895) == "89.5%"
    assert fmt.metric("occupancy.occupancy_pct", 12.5) == "12.5%"
    assert fmt.metric("occupancy.blocks_per_sm", 2) == "2"
    assert fmt.metric("roofline.bound_by", "l2") == "l2"
    assert fmt.allocation(98_304) == "98,304 B"
    assert fmt.pct_change(200, 150) == " (-25.0%)"


def test_gemm_roofline_names_l2_and_splits_the_gmem_term():
    """gemm 4096^3 bf16 on the H200, BM = BN = 128, BK = 64:
    l2: every gmem request crosses L2: A and B are each re-read N/BN = M/BM = 32 times:
        2 x 32 x 4096 x 4096 x 2 B = 2,147,483,648 B read + C 33,554,432 B written
        = 2,181,038,080 B at the SMs' L2 read ports (roofline.l2_request_peak: 132 x 65 B/cycle
        x 1.98 GHz = 16,988.4 B/ns) = 128,383.96 -> 128,384 ns; at the sustained 11 TB/s (11,000
        B/ns) 198,276.2 -> 198,277 ns, the attainable roofline's
    smem: the one warpgroup's two m64 wgmma read B twice and A once, (128 + 2 x 128) x 64 x 2 =
        49,152 B a trip, and the copies write 32,768 B; x 65,536 trips = 5,368,709,120 B /
        (128 B x 132 SMs x 1.98 GHz = 33,454.08 B/ns) = 160,479.4 -> 160,480 ns
    dram: the footprint once, A + B + C = 3 x 33,554,432 = 100,663,296 B / 4,800 B/ns
        = 20,971.5 -> 20,972 ns
    tensor: 137,438,953,472 flop / (4096 flop/cycle x 132 SMs x 1.98 GHz = 1,070,530.56 flop/ns)
        = 128,383.4 -> 128,384 ns; vector: the f32 cast, 251 ns; compute = 128,635 ns
    The memory roof (smem 160,480) beats compute: bound by smem; the attainable roofline is the
    l2 term at 11 TB/s, 198,277 ns, its excess 198,277 - 160,480 = 37,797 ns named "l2 below peak
    (64.8%)" (11,000 / 16,988.4 = 0.647501)."""
    a = gemm()
    m = a.metrics
    assert m["roofline.memory_ns.l2"] == 128_384
    assert m["roofline.memory_ns.smem"] == 160_480
    assert m["roofline.memory_ns.dram"] == 20_972
    assert m["roofline.compute_ns.tensor"] == 128_384
    assert m["roofline.memory_ns"] == m["roofline.ideal_ns"] == 160_480
    assert m["roofline.bound_by"] == "smem"
    assert "roofline.memory_ns.gmem" not in m
    root = a.scope_roofline[a.root.id]
    assert root.attainable_ns == 198_277
    assert root.attainable_terms == [("l2 below peak (64.8%)", 37_797)]


def test_knobs_move_the_term_they_name_and_are_remembered():
    """memory.l2.bandwidth x2: l2 = 2,181,038,080 B / 22,000 B/ns = 99,138.1 -> 99,139 ns, below
    compute 128,635 (tensor 128,384 + vector 251) and below shared memory, which binds: each trip
    the one warpgroup's two m64 wgmma read B twice and A once, (128 + 2 x 128) x 64 x 2 = 49,152 B
    (tests/test_operand_reads.py), and the copies write 32,768 B; x 65,536 trips = 5,368,709,120 B
    / (128 B x 132 SMs x 1.98 GHz = 33,454.08 B/ns) = 160,479.4 -> 160,480 ns.
    memory.gmem.bandwidth x2: only dram halves, 100,663,296 / 9,600 = 10,485.8 -> 10,486 ns;
    smem still binds at 160,480 ns. (x2 puts the sustained rate, 22,000 B/ns, past the SMs' L2
    ports, 16,988.4 B/ns: the roof is the larger, test_gemm_roofline_names_l2_and_splits_the_gmem_term.)"""
    a = gemm({"memory.l2.bandwidth": "x2"})
    assert a.metrics["roofline.memory_ns.l2"] == 99_139
    assert a.metrics["roofline.memory_ns.smem"] == 160_480
    assert a.metrics["roofline.bound_by"] == "smem"
    assert a.to_json()["knobs"] == {"memory.l2.bandwidth": "x2"}
    assert analysis_report.inputs_line(a).endswith("on h200_sxm with memory.l2.bandwidth=x2, compiled as triton")
    b = gemm({"memory.gmem.bandwidth": "x2"})
    assert b.metrics["roofline.memory_ns.dram"] == 10_486
    assert b.metrics["roofline.ideal_ns"] == 160_480 and b.metrics["roofline.bound_by"] == "smem"


def test_scope_rooflines_are_in_the_result():
    """Each load of gemm moves 1,073,741,824 B through L2 (half of the l2 term above):
    1,073,741,824 / 16,988.4 = 63,204.4 -> 63,205 ns, past its shared-memory writes
    (1,073,741,824 / 33,454.08 = 32,096.1 ns); the mma's scope is its tensor time; the kernel's
    is the smem term, 160,480 ns."""
    a = gemm()
    by_label = {}
    for node in a.root.walk():
        by_label.setdefault(node.label, node)
    assert a.scope_roofline[a.root.id].ideal_ns == 160_480
    assert a.scope_roofline[by_label["%a = load"].id].ideal_ns == 63_205
    assert a.scope_roofline[by_label["%a = load"].id].bound_by == "l2"
    assert a.scope_roofline[by_label["%acc = mma"].id].bound_by == "tensor"
    scopes = a.to_json()["scopes"]
    assert scopes["roofline"]["bound_by"] == "smem"


def test_diff_engine_orders_by_relative_change_and_serves_both_surfaces():
    """memory.smem.bandwidth_per_cycle x2: the smem term halves, 5,368,709,120 B / 66,908.16
    B/ns = 80,239.7 -> 80,240 ns, under the l2 term at the SMs' L2 ports, 128,384 ns
    (test_gemm_roofline_names_l2_and_splits_the_gmem_term), now the memory roof; compute,
    128,635 ns (tensor 128,384 + vector 251), is longer still and binds: bound by tensor."""
    a, b = gemm(), gemm({"memory.smem.bandwidth_per_cycle": "x2"})
    rows = diff.changes(a, b.to_json())          # an Analysis against a saved report
    names = [c.metric for c in rows]
    # non-numeric changes (the bound's name) come first, then the largest |log ratio|:
    # smem 80,240 / 160,480 = 0.5 (|log| 0.693) before ideal 128,635 / 160,480 = 0.8016 (0.221)
    assert names.index("roofline.bound_by") < names.index("roofline.memory_ns.smem") < names.index("roofline.ideal_ns")
    smem = next(c for c in rows if c.metric == "roofline.memory_ns.smem")
    assert diff.line(smem) == "roofline.memory_ns.smem 160.48 us -> 80.24 us (x0.5)"
    s = diff.summary(a, b)
    assert "memory 160.48 us -> 128.38 us (-20.0%)" in s   # 128,384 / 160,480 - 1 = -20.0%
    assert diff.summary(a, a) == "nothing moved"


def test_tfx_diff_json_carries_both_sides_inputs(capsys):
    from tfx.cli.main import main
    rc = main(["diff", str(bundled_kernel("gemm.tile")), str(bundled_kernel("gemm.tile")),
               "--knob-b", "memory.smem.bandwidth_per_cycle=x2", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["a"]["knobs"] == {} and out["b"]["knobs"] == {"memory.smem.bandwidth_per_cycle": "x2"}
    # smem 160,480 -> 80,240 ns, under compute 128,635 (test_diff_engine_orders_by_relative_change_...)
    assert {"metric": "roofline.bound_by", "old": "smem", "new": "tensor", "ratio": None} in out["changes"]


@pytest.mark.parametrize("argv", [["analyze"], ["simulate"]])
def test_text_header_names_the_knob(argv, capsys):
    from tfx.cli.main import main
    rc = main([*argv, str(bundled_kernel("copy.tile")), "--hw", "h200_sxm", "--knob", "memory.gmem.bandwidth=x2"])
    assert rc == 0
    assert "with memory.gmem.bandwidth=x2" in capsys.readouterr().out


def test_parameter_count_reads_as_model_cards_write_it():
    # 8,030,261,248 / 1e9 = 8.030... -> three significant figures "8.03", suffix B (billion)
    assert fmt.parameter_count(8_030_261_248) == "8.03B"
    # 671e9 is below 1e12: 671e9 / 1e9 = 671 -> "671B"
    assert fmt.parameter_count(671_000_000_000) == "671B"
    # 1.5e12 / 1e12 = 1.5 -> "1.5T" (%.3g drops the trailing zero)
    assert fmt.parameter_count(1_500_000_000_000) == "1.5T"
    # 12,345 / 1e3 = 12.345 -> 3 significant figures "12.3" -> "12.3K"
    assert fmt.parameter_count(12_345) == "12.3K"
    # below a thousand: the number itself
    assert fmt.parameter_count(950) == "950"


def test_with_knobs_names_each_knob_as_given():
    """Two knobs, in the order applied, joined by ', ' after ' with '; none -> ''."""
    from tfx.present.formatting import with_knobs
    assert with_knobs({"memory.l2.bandwidth": "x2", "launch.overhead": "/2"}) == \
        " with memory.l2.bandwidth=x2, launch.overhead=/2"
    assert with_knobs({}) == "" and with_knobs(None) == ""


def test_arithmetic_intensity_and_peak_fractions_per_scope(capsys):
    """gemm M = N = K = 256, BM = BN = 128, BK = 64 on h200_sxm (2 x 2 CTAs, 4 k trips):
    flops: mma 2 x 256^3 = 33,554,432 bf16 + the f32 cast, one per C element 256^2 = 65,536
        = 33,619,968 flop.
    dram: the footprint A + B + C = 3 x 256 x 256 x 2 B = 393,216 B / 4,800 B/ns = 81.92 -> 82 ns
    l2: A and B each re-read N/BN = 2 times: 2 x 2 x 131,072 = 524,288 B + C 131,072 B written
        = 655,360 B / 16,988.4 B/ns (the SMs' L2 ports) = 38.58 -> 39 ns
    smem: the loads write 524,288 B and the mma's one warpgroup (4 warps) reads A once and B
        twice (two m64 instructions, tests/test_operand_reads.py): (128 + 2 x 128) x 64 x 2 =
        49,152 B x 16 executions = 786,432 B; 1,310,720 B / (128 B/cycle x 132 x 1.98 GHz =
        33,454.08 B/ns) = 39.18 -> 40 ns
    tensor: 33,554,432 / (4096 flop/cycle x 132 x 1.98 = 1,070,530.56 flop/ns) = 31.34 -> 32 ns
    vector: 65,536 / (256 x 132 x 1.98 = 66,908.16) = 0.98 -> 1 ns
    ideal = max(32 + 1, 82) = 82 ns, bound by dram, so intensity counts dram bytes (the chart's x):
        33,619,968 / 393,216 = 85.5 flop/B; at l2 33,619,968 / 655,360 = 51.3 flop/B.
    Fractions of each peak at 82 ns: dram 82/82 = 100.0%, l2 39/82 = 47.6%, tensor 32/82 = 39.0%,
        smem 40/82 = 48.8%, vector 1/82 = 1.2%.
    The k loop: mma flops only, 33,554,432; dram A + B = 262,144 B / 4,800 = 54.6 -> 55 ns;
        l2 524,288 / 16,988.4 = 30.9 -> 31 ns: intensity 33,554,432 / 262,144 = 128 flop/B,
        tensor 32/55 = 58.2%, l2 31/55 = 56.4%, smem 40/55 = 72.7%."""
    from tfx.cli.main import main
    a = analyze(parse_file(bundled_kernel("gemm.tile")), None, load_profile("h200_sxm"),
                {"M": 256, "N": 256, "K": 256})
    root = a.scope_roofline[a.root.id]
    assert root.intensity_level() == "dram"
    assert root.arithmetic_intensity() == {"dram": 85.5, "l2": 51.3, "smem": 33_619_968 / 1_310_720}
    assert root.peak_fractions() == {"tensor": 32 / 82, "vector": 1 / 82, "dram": 1.0, "l2": 39 / 82,
                                     "smem": 40 / 82}
    tt = analysis_report.traffic_table(a, "total")
    col = {c: i for i, c in enumerate(tt.columns)}
    rows = {r[0].strip(): r for r in tt.rows}
    assert rows["kernel gemm"][col["flop/B dram"]] == "85.5 flop/B"
    assert rows["kernel gemm"][col["l2 peak%"]] == "47.6%"
    assert rows["kernel gemm"][col["tensor peak%"]] == "39.0%"
    assert rows["kernel gemm"][col["dram peak%"]] == "100.0%"
    assert rows["loop k"][col["flop/B dram"]] == "128 flop/B"
    assert rows["loop k"][col["tensor peak%"]] == "58.2%"
    assert rows["loop k"][col["vector peak%"]] == ""            # the loop does no vector work
    text = analysis_report.summary(a)
    assert "  scopes at their roofline time: flop per dram byte; fraction of each peak" in text
    assert "        loop k: 128 flop/B; tensor 58.2%, dram 100.0%, l2 56.4%, smem 72.7%" in text
    rc = main(["analyze", str(bundled_kernel("gemm.tile")), "--set", "M=256", "--set", "N=256",
               "--set", "K=256", "--json"])
    assert rc == 0
    roof = json.loads(capsys.readouterr().out)["scopes"]["roofline"]
    assert roof["arithmetic_intensity_flop_per_byte"]["dram"] == 85.5
    assert roof["peak_fraction"]["l2"] == 39 / 82
