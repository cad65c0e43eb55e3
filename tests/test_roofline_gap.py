"""The prediction's excess over the roofline, by term (tfx.analysis.roofline_gap), on every
surface. Expected numbers are derived by hand in the comments."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.performance import Term
from tfx.analysis.roofline import roofline
from tfx.analysis.roofline_gap import (RooflineGap, attribute, latency_past_engines_ns, mma_chain_waits_ns,
                                       smem_port_ns, tail_excess_ns)
from tfx.bundled import bundled_kernel
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.present import analysis_report


def launch(terms, positions=0, units=1, resident=1, tail=0, batch_ns=0.0, tail_ns=0.0):
    # waves as LaunchTime holds them: positions / slots
    return SimpleNamespace(terms=terms, positions=positions, units=units, resident=resident,
                           waves=positions / (units * resident), tail_positions=tail, batch_ns=batch_ns,
                           tail_ns=tail_ns, total_ns=0.0)


def test_tail_excess_is_the_tail_over_its_share_of_a_wave():
    # 10 SMs x 2 resident = 20 slots; a tail of 5 CTAs takes 800 ns where a full wave takes
    # 1000: its share of a wave is 5/20 x 1000 = 250 ns, so it runs 800 - 250 = 550 ns over
    lt = launch([], units=10, resident=2, tail=5, batch_ns=1000.0, tail_ns=800.0)
    assert tail_excess_ns(lt) == pytest.approx(550.0)
    # no tail wave: nothing
    assert tail_excess_ns(launch([], units=10, resident=2, tail=0, batch_ns=1000.0)) == 0.0


def test_attribute_names_the_terms_beyond_the_roofline_largest_first():
    # two launches; only the terms flagged beyond the roofline count, summed by name:
    # launch 3000 + 3000 = 6000, fill 700 + 700 = 1400, pipeline depth 2500; "waves" (the
    # work) and the 0-ns note do not count. Tail of the first launch: 4 slots, 1 CTA, a wave
    # 400 ns, the tail 400 ns: 400 - 1/4 x 400 = 300 ns.
    a = launch([Term("launch", 3000, "", True), Term("fill", 700, "", True), Term("waves", 9000, ""),
                Term("pipeline depth", 2500, "", True), Term("overlap", 0, "")],
               units=4, resident=1, tail=1, batch_ns=400.0, tail_ns=400.0)
    b = launch([Term("launch", 3000, "", True), Term("fill", 700, "", True)])
    # predicted 20,000, roofline 8,000: gap 12,000; named 6000 + 2500 + 1400 + 300 = 10,200;
    # not attributed 12,000 - 10,200 = 1,800
    g = attribute([a, b], 20_000, 8_000)
    assert g.gap_ns == 12_000
    assert g.terms == [("launch", 6000.0), ("pipeline depth", 2500.0), ("fill", 1400.0), ("tail-wave excess", 300.0)]
    assert g.not_attributed_ns == pytest.approx(1_800)
    assert g.to_json()["not_attributed_ns"] == pytest.approx(1_800)
    # at the roofline: no gap, no terms
    assert attribute([a, b], 8_000, 8_000).terms == []


def test_attribute_names_the_rates_first_at_most_the_gap():
    # the roofline 8,000 ns at peak, 9,500 at the sustained rates: 1,500 of a 12,000 gap is the
    # rates', named by the roofline's note; the terms as before (launch 3000, fill 700): not
    # attributed 12,000 - 1,500 - 3,700 = 6,800
    a = launch([Term("launch", 3000, "", True), Term("fill", 700, "", True)])
    roof = SimpleNamespace(attainable_ns=9_500, attainable_note="tensor below peak (74.0%)")
    g = attribute([a], 20_000, 8_000, roof)
    assert g.terms == [("launch", 3000.0), ("tensor below peak (74.0%)", 1500.0), ("fill", 700.0)]
    assert g.not_attributed_ns == pytest.approx(6_800)
    # a prediction under the attainable roofline: the rates take the whole gap (1,000), and the
    # terms overlap it by 3,700
    g = attribute([a], 9_000, 8_000, roof)
    assert g.terms == [("launch", 3000.0), ("tensor below peak (74.0%)", 1000.0), ("fill", 700.0)]
    assert g.not_attributed_ns == pytest.approx(-3_700)
    # no note (nothing below peak): no rates term
    g = attribute([a], 20_000, 8_000, SimpleNamespace(attainable_ns=8_000, attainable_note=None))
    assert [n for n, _ in g.terms] == ["launch", "fill"]


def test_attribute_names_dram_read_again():
    """The launches' own DRAM bytes at the rate DRAM sustains, past the attainable roofline
    (which moves each byte once): 6e9 B at 4e12 B/s = 1,500,000 ns against an attainable
    roofline of 1,000,000 (the ideal 900,000): 500,000 ns of re-reads, after the rates' 100,000;
    the launch's 3,000 and 700 leave 2,000,000 - 900,000 - 100,000 - 500,000 - 3,700 = 496,300
    not attributed."""
    a = launch([Term("launch", 3000, "", True), Term("fill", 700, "", True)])
    a.dram_bytes = 6 * 10**9
    roof = SimpleNamespace(attainable_ns=1_000_000, attainable_note="dram below peak (90.0%)", dram_rate=4e12)
    g = attribute([a], 2_000_000, 900_000, roof)
    assert g.terms == [("dram re-reads", 500_000.0), ("dram below peak (90.0%)", 100_000.0),
                       ("launch", 3000.0), ("fill", 700.0)]
    assert g.not_attributed_ns == pytest.approx(496_300)
    # at most what the gap leaves after the rates: a 300,000 gap gives 200,000
    g = attribute([a], 1_200_000, 900_000, roof)
    assert dict(g.terms)["dram re-reads"] == pytest.approx(200_000)
    # bytes that fit under the attainable roofline are no term
    a.dram_bytes = 4 * 10**9            # 1,000,000 ns: not past it
    assert "dram re-reads" not in dict(attribute([a], 2_000_000, 900_000, roof).terms)


def test_moe_grouped_reads_its_weights_again_on_h200():
    """moe_grouped.tile on h200_sxm: 19,333,742,592 B read and 201,326,592 B written in global
    memory, so the writes' share w = 201,326,592 / 19,535,069,184 = 0.0103059 and DRAM sustains
    1 / (1 / 0.9404 + 2w (1 / 0.883 - 1 / 0.9404)) = 1 / (1.06337729 + 0.0206118 x 0.06912554)
    = 0.939142 of 4.8 TB/s = 4.50788 TB/s. Its 19,535,069,184 B of L2 requests take 1,149,907 ns
    at the SMs' L2 ports (16,988.4 B/ns: 1,149,906.1 ns), under the shared-memory term that binds
    the ideal, and 1,775,916 ns at the L2's sustained 11,000 B/ns (1,775,915.4 ns), which is the
    attainable roofline (the tensor work at 0.74 of peak, 770,304 / 0.74 = 1,040,951 ns, stays
    under it), named "l2 below peak (64.8%)" (11,000 / 16,988.4); the launch moves its L2
    misses from DRAM, each as often as it misses: those bytes at 4.50788 TB/s, less 1,775,916
    ns, are the re-reads."""
    a = analyze(parse_file(bundled_kernel("moe_grouped.tile")), None, H200)
    r = a.scope_roofline[a.root.id]
    assert (r.terms["l2"], r.bound_by) == (1_149_907, "smem")
    assert (r.attainable_ns, r.attainable_note) == (1_775_916, "l2 below peak (64.8%)")
    assert r.dram_rate == pytest.approx(4.50788e12, rel=1e-6)
    lt = a.launches[0]
    again = dict(a.roofline_gap.terms)["dram re-reads"]
    assert again == pytest.approx(float(lt.dram_bytes) / 4.50788e12 * 1e9 - 1_775_916, rel=1e-5)
    # the launch moves far more than the footprint's 2,139,095,552 B (its L2 hit ratio is 31.6%:
    # most of its 19.33 GB of reads come from DRAM): the term is most of the gap past the
    # attainable roofline (the gap less its "l2 below peak" part, 1,775,916 - ideal)
    past = a.roofline_gap.gap_ns - (1_775_916 - r.ideal_ns)
    assert float(lt.dram_bytes) > 6 * 2_139_095_552 and again > 0.7 * past


def test_attribute_names_the_smem_port_where_it_binds():
    """A launch whose waves the shared-memory port binds: 1,000 positions on 10 SMs x 2 = 20
    slots, the port 4,000 ns a full wave: 4,000 x 1,000 / 20 = 200,000 ns. Against the roofline
    150,000 (nothing below peak): 50,000 of a 60,000 gap; launch 3,000: not attributed 7,000."""
    a = launch([Term("launch", 3000, "", True)], positions=1000, units=10, resident=2)
    a.engines, a.bound_engine = {"smem": 4000, "tensor": 3000}, "smem"
    assert smem_port_ns([a]) == pytest.approx(200_000)
    g = attribute([a], 210_000, 150_000)
    assert g.terms == [("smem port (as scheduled)", 50_000.0), ("launch", 3000.0)]
    assert g.not_attributed_ns == pytest.approx(7_000)
    # bound by another engine: no port term
    a.bound_engine = "tensor"
    assert smem_port_ns([a]) == 0 and [n for n, _ in attribute([a], 210_000, 150_000).terms] == ["launch"]


def test_attribute_names_the_copy_engine_where_it_binds():
    """The same launch bound by its copy engine instead, 4,000 ns a full wave: 200,000 ns over the
    waves against the 150,000 roofline: 50,000 of the 60,000 gap, launch 3,000, 7,000 not
    attributed; with 30,000 ns of DRAM re-reads before it (a floor named first), the copy engine
    takes only what it sits past both, 20,000."""
    a = launch([Term("launch", 3000, "", True)], positions=1000, units=10, resident=2)
    a.engines, a.bound_engine = {"copy": 4000, "tensor": 3000}, "copy"
    g = attribute([a], 210_000, 150_000)
    assert g.terms == [("copy engine (as scheduled)", 50_000.0), ("launch", 3000.0)]
    assert g.not_attributed_ns == pytest.approx(7_000)
    # 180,000 ns of DRAM bytes at 1 byte/ns: 30,000 past the roofline
    a.dram_bytes = 180_000
    g = attribute([a], 210_000, 150_000, SimpleNamespace(attainable_note=None, dram_rate=1e9))
    assert g.terms == [("dram re-reads", 30_000.0), ("copy engine (as scheduled)", 20_000.0), ("launch", 3000.0)]
    # bound by another engine: no copy term
    a.bound_engine = "tensor"
    assert "copy engine (as scheduled)" not in dict(attribute([a], 210_000, 150_000).terms)


# gemm.tile (4096^3, 128 x 128 x 64 tiles): the ideal roofline is shared memory's, each trip's
# wgmma operand reads (128 + 2 x 128) x 64 x 2 = 49,152 B and copy writes 32,768 B, x 65,536 trips
# = 5,368,709,120 B / (128 B x 132 x 1.98 GHz = 33,454.08 B/ns) = 160,479.4 -> 160,480 ns; the
# attainable one the L2's at its sustained 11 TB/s: A and B, 1,024 CTAs x (128 x 4096 + 4096 x 128)
# x 2 B = 2,147,483,648 B, and C, 4096 x 4096 x 2 B = 33,554,432 B: 2,181,038,080 B / 11e12 s =
# 198,276.19 -> 198,277 ns (the tensor work at 0.74 stays under it), its excess the "l2 below
# peak" term; the waves are the copy engine's, whose L2 bytes flow at each SM's share of the L2.
# gemm_fp8_kn.tile: B not K-major is transposed in registers through shared memory with 8-way bank
# conflicts, and its waves are the port's; 128 x 128 x 128 fp8 tiles: (128 + 2 x 128) x 128 + 32,768
# = 81,920 B a trip x 32,768 trips = 2,684,354,560 B / 33,454.08 = 80,239.7 -> 80,240 ns ideal, the
# L2's 1,073,741,824 + 33,554,432 = 1,107,296,256 B / 11e12 s = 100,663.3 -> 100,664 ns attainable
# (the fp8 tensor work at 0.700, 64,192 / 0.7 = 91,703 ns, and DRAM stay under it). Each: 1,024
# CTAs on 132 SMs x 2 = 264 slots, the bound engine's time a wave x 1,024 / 264, less the
# attainable roofline, is the term.
@pytest.mark.parametrize("kernel, engine, term, ideal, attainable", [
    ("gemm.tile", "copy", "copy engine (as scheduled)", 160_480, 198_277),
    ("gemm_fp8_kn.tile", "smem", "smem port (as scheduled)", 80_240, 100_664),
])
def test_bound_engine_as_scheduled_on_h200(kernel, engine, term, ideal, attainable):
    a = analyze(parse_file(bundled_kernel(kernel)), None, H200)
    lt = a.launches[0]
    assert (lt.positions, lt.units, lt.resident, lt.bound_engine) == (1024, 132, 2, engine)
    assert a.metrics["roofline.ideal_ns"] == ideal
    terms = dict(a.roofline_gap.terms)
    assert terms[term] == pytest.approx(float(lt.engines[engine]) * 1024 / 264 - attainable)
    assert terms["l2 below peak (64.8%)"] == attainable - ideal
    assert not any(n == "dram re-reads" for n in terms)


def test_attribute_names_mma_padding_past_the_floors():
    """A tensor-bound launch of 64 positions on 64 units (one each): its tensor engine 131,072
    ns a wave, 114,688 of them padding (the mma's M of 4 run as the instruction's 32: 8x the
    flops, 7/8 of them padding). Roofline 32,789 (its DRAM), nothing below peak: the engine sits
    131,072 - 32,789 = 98,283 past it, less than the padding, so the term is 98,283; the launch's
    5,000 leave 115,604 - 98,283 - 5,000 = 12,321 not attributed."""
    a = launch([Term("launch", 5000, "", True)], positions=64, units=64, resident=1)
    a.engines, a.bound_engine, a.tensor_pad_ns = {"tensor": 131_072}, "tensor", 114_688
    g = attribute([a], 148_393, 32_789)
    assert g.terms == [("mma padding", 98_283.0), ("launch", 5000.0)]
    assert g.not_attributed_ns == pytest.approx(12_321)
    # the engine far past the floor: the padding itself (114,688)
    a.engines = {"tensor": 251_796}
    assert dict(attribute([a], 300_000, 32_789).terms)["mma padding"] == 114_688
    # a launch the tensor engine does not bind: no term
    a.bound_engine = "copy"
    assert "mma padding" not in dict(attribute([a], 300_000, 32_789).terms)


def test_sip_decode_composite_padding():
    """sip_decode_attention.tile's one-composite kernel on sip (HQ 32 over HKV 8: GROUP = 4 query
    rows an mma, D 128, CTX 131,072, 64 PEs at 2,048 bf16 flop a cycle at 1 GHz): per KV head
    q.K^T and P.V are 2 x (2 x 4 x 128 x 131,072) = 268,435,456 flops, x 8 heads = 2,147,483,648:
    at 64 x 2,048 flop/ns that is 16,384 ns, the roofline's tensor term. The matrix engine runs 32
    rows (compute.tensor.instruction_m): 8x, 131,072 ns, 114,688 of padding. DRAM sets the
    roofline: K and V, 2 x 8 x 131,072 x 128 x 2 B = 536,870,912 B at 64 PEs x 256 B/ns = 32,768
    ns, with Q, the partial outputs and O (about 344 KB) 32,789 ns; so the padding's share of the
    gap is 131,072 - 32,789 = 98,283 ns."""
    mod = parse_file(bundled_kernel("sip_decode_attention.tile"))
    a = analyze(mod, "decode_attention_composite", load_profile("sip"))
    r = a.scope_roofline[a.root.id]
    assert (r.terms["tensor"], r.ideal_ns) == (16_384, 32_789)
    lt = a.launches[0]
    assert (lt.bound_engine, float(lt.tensor_pad_ns), float(lt.engines["tensor"])) == ("tensor", 114_688, 131_072)
    assert dict(a.roofline_gap.terms)["mma padding"] == 98_283


def test_attribute_names_the_mma_chain_waits_last():
    """A launch the tensor engine binds: 1,000 positions on 10 units x 2 = 20 slots (50 waves), the
    engine 5,000 ns a full wave where its mmas take 3,000 (tensor_work_ns: 3,000 x 50 = 150,000 over
    the launch): 5,000 x 50 = 250,000 - 150,000 = 100,000 ns of waits (no vector or special work;
    the wave at the engine's time, nothing past the engines). Gap 150,000 (roofline 200,000): the launch's
    3,000 and a pipeline depth of 20,000 first, so the waits take at most the 127,000 left: all
    100,000 of them, 27,000 not attributed; a gap of 110,000 leaves them 87,000."""
    a = launch([Term("launch", 3000, "", True), Term("pipeline depth", 20_000, "", True)],
               positions=1000, units=10, resident=2, batch_ns=5000.0)
    a.engines, a.bound_engine, a.bound_by, a.tensor_work_ns = {"tensor": 5000, "copy": 4000}, "tensor", "tensor", 150_000
    assert mma_chain_waits_ns([a]) == pytest.approx(100_000)
    g = attribute([a], 350_000, 200_000)
    assert g.terms == [("mma chain waits", 100_000.0), ("pipeline depth", 20_000.0), ("launch", 3000.0)]
    assert g.not_attributed_ns == pytest.approx(27_000)
    assert dict(attribute([a], 310_000, 200_000).terms)["mma chain waits"] == pytest.approx(87_000)
    # the engine at its work (no chain), another engine binding, or a latency-bound launch
    # (latency_past_engines_ns has it): no term
    for change in ({"tensor_work_ns": 250_000}, {"bound_engine": "copy"}, {"bound_by": "latency"}):
        b = SimpleNamespace(**{**vars(a), **change})
        assert mma_chain_waits_ns([b]) == 0
    # vector and special work of 600 + 400 ns a wave, which the roofline adds to the tensor's:
    # (600 + 400) x 50 = 50,000 less, 50,000 of waits
    a.engines = {"tensor": 5000, "copy": 4000, "vector": 600, "special": 400}
    assert mma_chain_waits_ns([a]) == pytest.approx(50_000)


def test_sip_gemm_command_chain():
    """sip_gemm.tile on sip (M = N = K = 4096, 128 x 128 x 128 tiles, 64 PEs at 2,048 bf16 flop a
    cycle, 1 GHz): 1,024 tiles, 16 a PE, each 4096 / 128 = 32 k-trips: 512 mmas a PE of 2 x 128^3 =
    4,194,304 flops, 2,048 ns each: 1,048,576 ns of tensor work (the roofline's tensor term, the
    launch's tensor_work_ns). Each trip's mma reads the accumulator the last one wrote, so the
    in-order command processor dispatches it dispatch.completion_latency (250 cycles) after that
    one ends, plus its own single-op dispatch (8 cycles): 258 ns a trip, x 512 = 132,096 ns past the
    work. The roofline already adds the cast of each tile's accumulator (128 x 128 = 16,384 f32
    elements at the PE's 64 lanes, one a lane-cycle: 256 ns a tile, x 16 = 4,096 ns on the vector
    engine; its roofline term 16,777,216 flops / (64 x 128 flop/ns) = 2,048, at peak), so the waits
    named are 132,096 - 4,096 = 128,000 ns. The gap, 158,212 ns, is then exactly: the launch
    (5,000), fill (700), the cast's rate (4,096 - 2,048 = 2,048), the wave past its tensor engine
    (1,203,136 - 1,180,672 = 22,464: each tile's first loads and its cast and store after the loop)
    and the 128,000 of waits."""
    a = analyze(parse_file(bundled_kernel("sip_gemm.tile")), None, load_profile("sip"))
    lt = a.launches[0]
    assert (lt.bound_engine, float(lt.tensor_work_ns), float(lt.engines["tensor"])) == ("tensor", 1_048_576, 1_180_672)
    assert (float(lt.engines["vector"]), float(lt.batch_ns)) == (4_096, 1_203_136)
    assert a.scope_roofline[a.root.id].terms["tensor"] == 1_048_576
    assert mma_chain_waits_ns(a.launches) == 128_000
    assert dict(a.roofline_gap.terms) == {"mma chain waits": 128_000, "latency past the engines": 22_464,
                                          "launch": 5_000, "vector below peak (50.0%: one flop a lane-cycle)": 2_048,
                                          "fill": 700}
    assert a.roofline_gap.gap_ns == 158_212 and a.roofline_gap.not_attributed_ns == pytest.approx(0, abs=1e-6)
    # the breakdown says the chain's arithmetic: 2,048 ns of work + 1 x 258 = 2,306 ns a trip
    chain = next(t for t in a.terms if t.name == "command chain")
    assert ("runs 2.05 us of work, then its command waits" in chain.detail
            and "250 cycles (dispatch.completion_latency)" in chain.detail
            and "8 (dispatch.single_op): 2.05 us + 1 x 258.00 ns = 2.31 us a trip against the tensor engine's "
                "2.05 us: the chain sets the trip (each of the loop's 32 trips" in chain.detail)


def test_sip_block_composite_command_chain():
    """sip_decode_attention.tile's block-composite kernel: its KV loop's carried chain is one
    composite command, dispatched dispatch.completion_latency (250 cycles) after its producer ends
    plus a composite's own dispatch, dispatch.composite (40 cycles), not a single op's 8: 290 ns
    a trip at 1 GHz."""
    a = analyze(parse_file(bundled_kernel("sip_decode_attention.tile")), "decode_attention_block_composites",
                load_profile("sip"))
    chain = next(t for t in a.terms if t.name == "command chain")
    assert "its own dispatch, 40 (dispatch.composite): " in chain.detail and " + 1 x 290.00 ns = " in chain.detail
    assert "dispatch.single_op" not in chain.detail


def test_attribute_names_latency_past_the_engines_last():
    """A latency-bound launch: 1,000 positions on 10 units x 2 = 20 slots, a full wave 6,000 ns
    where its busiest engine takes 4,000: (6,000 - 4,000) x 1,000 / 20 = 100,000 ns past the
    engines. Gap 150,000 (roofline 200,000): launch 3,000 and a load wait of 20,000 come first,
    so the latency term takes at most the 127,000 left: all of its 100,000, 27,000 not attributed.
    A gap of 110,000 leaves it 87,000 (the load wait is part of it, not added twice)."""
    a = launch([Term("launch", 3000, "", True), Term("load wait", 20_000, "", True)],
               positions=1000, units=10, resident=2, batch_ns=6000.0)
    a.engines, a.bound_by = {"copy": 4000, "tensor": 2500}, "latency"
    assert latency_past_engines_ns([a]) == pytest.approx(100_000)
    g = attribute([a], 350_000, 200_000)
    assert g.terms == [("latency past the engines", 100_000.0), ("load wait", 20_000.0), ("launch", 3000.0)]
    assert g.not_attributed_ns == pytest.approx(27_000)
    assert dict(attribute([a], 310_000, 200_000).terms)["latency past the engines"] == pytest.approx(87_000)
    # bound by an engine, the wave still 2,000 ns past its busiest one: the same 100,000 (a CTA's
    # first loads, an epilogue after its loop); a wave at its busiest engine's time: none
    a.bound_by = "dram"
    assert latency_past_engines_ns([a]) == pytest.approx(100_000)
    a.batch_ns = 4000.0
    assert latency_past_engines_ns([a]) == 0


def test_rmsnorm_latency_on_h200():
    """rmsnorm.tile on h200_sxm is latency-bound (a CTA's row chain outlasts its engines): 2,048
    CTAs on 132 SMs x 1 = 132 slots; the term is (a full wave - its busiest engine, the copy) x
    2,048 / 132, all of it inside what the gap leaves after the rates, launch, fill and the tail."""
    a = analyze(parse_file(bundled_kernel("rmsnorm.tile")), None, H200)
    lt = a.launches[0]
    assert (lt.positions, lt.units, lt.resident, lt.bound_by) == (2048, 132, 1, "latency")
    expected = (float(lt.batch_ns) - max(float(v) for v in lt.engines.values())) * 2048 / 132
    terms = dict(a.roofline_gap.terms)
    assert terms["latency past the engines"] == pytest.approx(expected)
    assert a.roofline_gap.not_attributed_ns >= 0


H200 = load_profile("h200_sxm")


def test_attainable_roofline_of_a_copy_a_read_and_a_mixed_stream():
    """h200_sxm: DRAM 4.8 TB/s datasheet, memory.gmem.efficiency 0.883 (a copy: half its bytes
    writes), read_efficiency 0.9404 (a read-only stream); L2 11 TB/s does not bind here.
    Copy, 1 GB read + 1 GB written: at peak 2e9 / 4.8e12 s = 416,666.67 -> 416,667 ns; the writes
    are half the bytes, so the copy's fraction: 2e9 / (4.8e12 x 0.883) = 471,876.18 -> 471,877."""
    r = roofline({("traffic", "gmem", "read"): 10**9, ("traffic", "gmem", "write"): 10**9}, H200)
    assert (r.ideal_ns, r.attainable_ns) == (416_667, 471_877)
    assert r.attainable_note == "dram below peak (88.3%)"
    # read-only, 1 GB: 1e9 / 4.8e12 = 208,333.33 -> 208,334 at peak; 1e9 / (4.8e12 x 0.9404)
    # = 221,536.90 -> 221,537
    r = roofline({("traffic", "gmem", "read"): 10**9}, H200)
    assert (r.ideal_ns, r.attainable_ns) == (208_334, 221_537)
    assert r.attainable_note == "dram below peak (94.0%)"
    # 3 GB read + 1 GB written: w = 1/4, 2w = 1/2; 1/f = 1/0.9404 + 1/2 (1/0.883 - 1/0.9404)
    # = 1.06337729 + 0.5 x 0.06912554 = 1.09794006, f = 0.910797; 4e9 / 4.8e12 = 833,333.33 ->
    # 833,334 at peak, 833,333.33 x 1.09794006 = 914,950.05 -> 914,951
    r = roofline({("traffic", "gmem", "read"): 3 * 10**9, ("traffic", "gmem", "write"): 10**9}, H200)
    assert (r.ideal_ns, r.attainable_ns) == (833_334, 914_951)
    assert r.attainable_note == "dram below peak (91.1%)"


def test_attainable_roofline_of_tensor_work():
    """h200_sxm's tensor core: 4096 bf16 flop/cycle x 132 SMs x 1.98 GHz = 1.07053056e15 flop/s
    at peak, compute.tensor.efficiency 0.74 sustained; fp8 (e4m3) 8192 flop/cycle, 0.700.
    1.07053056e12 bf16 flops take 1 ms at peak, 1e6 / 0.74 = 1,351,351.35 -> 1,351,352 ns
    sustained; the 1 GB read beside them (221,537 ns at its rate, above) does not bind."""
    flops = 1_070_530_560_000
    r = roofline({("flops", "bf16", "tensor"): flops, ("traffic", "gmem", "read"): 10**9}, H200)
    assert (r.ideal_ns, r.attainable_ns, r.bound_by) == (1_000_000, 1_351_352, "tensor")
    assert r.attainable_note == "tensor below peak (74.0%)"
    # half the bf16 flops (500,000 ns) beside as many fp8 flops as before at twice the rate
    # (500,000 ns): 1,000,000 ns at peak; sustained 500,000 / 0.74 + 500,000 / 0.7 = 675,675.68
    # + 714,285.71 = 1,389,961.39 -> 1,389,962; two fractions below peak: one note for both
    r = roofline({("flops", "bf16", "tensor"): flops // 2, ("flops", "fp8e4m3", "tensor"): flops}, H200)
    assert (r.ideal_ns, r.attainable_ns) == (1_000_000, 1_389_962)
    assert r.attainable_note == "compute below peak"
    # split by fraction, largest first: fp8 714,285.71 - 500,000 = 214,285.71, bf16 675,675.68 -
    # 500,000 = 175,675.68; they sum to 389,961.39 of the 389,962 the whole-ns roofs leave: the
    # 0.61 of rounding goes to the last, 175,676.29
    assert [n for n, _ in r.attainable_terms] == ["tensor below peak (70.0%)", "tensor below peak (74.0%)"]
    assert [ns for _, ns in r.attainable_terms] == pytest.approx([214_285.714, 175_676.286], abs=1e-3)


def test_attainable_roofline_of_elementwise_vector_work():
    """h200_sxm's vector unit: 256 f32 flop/cycle an SM, 128 lanes x 2 flop per FMA, x 132 SMs x
    1.98 GHz = 6.690816e13 flop/s at peak; an elementwise op or a reduction step does one flop a
    lane-cycle, so it runs at half that (50.0%), as the prediction's engines price it.
    6.690816e10 f32 flops: 1 ms at peak, 2 ms at one flop a lane-cycle. Beside 1 ms of bf16
    tensor work (1,351,351.35 ns sustained, above): 2,000,000 ns at peak (compute units add),
    1,351,351.35 + 2,000,000 = 3,351,351.35 -> 3,351,352 attainable; the excess 1,351,352 splits
    into the vector's 1,000,000 and the tensor's 351,351.35 (+ 0.65 of rounding = 351,352)."""
    vector = 66_908_160_000
    r = roofline({("flops", "f32", "vector"): vector}, H200)
    assert (r.ideal_ns, r.attainable_ns, r.bound_by) == (1_000_000, 2_000_000, "vector")
    assert r.attainable_note == "vector below peak (50.0%: one flop a lane-cycle)"
    assert r.attainable_terms == [("vector below peak (50.0%: one flop a lane-cycle)", 1_000_000)]
    r = roofline({("flops", "f32", "vector"): vector, ("flops", "bf16", "tensor"): 1_070_530_560_000}, H200)
    assert (r.ideal_ns, r.attainable_ns) == (2_000_000, 3_351_352)
    assert r.attainable_note == "compute below peak"
    assert [n for n, _ in r.attainable_terms] == ["vector below peak (50.0%: one flop a lane-cycle)",
                                                  "tensor below peak (74.0%)"]
    assert [ns for _, ns in r.attainable_terms] == pytest.approx([1_000_000, 351_352])
    # the gap names each: a prediction of 4 ms over the 2 ms roofline leaves 648,648 ns after them
    g = attribute([], 4_000_000, r.ideal_ns, r)
    assert g.terms == [("vector below peak (50.0%: one flop a lane-cycle)", 1_000_000),
                       ("tensor below peak (74.0%)", pytest.approx(351_352))]
    assert g.not_attributed_ns == pytest.approx(648_648)
    # a prediction of 2.5 ms: the rates' term is the gap's 500,000 ns, all the vector's (largest first)
    g = attribute([], 2_500_000, r.ideal_ns, r)
    assert g.terms == [("vector below peak (50.0%: one flop a lane-cycle)", 500_000)]
    # an f32 mma without a tensor path runs FMAs: the peak's own units, nothing below it
    sip = load_profile("sip")
    r = roofline({("flops", "f32", "tensor"): 10**9}, sip)
    assert r.bound_by == "vector" and r.attainable_ns == r.ideal_ns and r.attainable_terms == []


def test_attainable_roofline_without_stated_fractions():
    """A profile that states no efficiency (sip: the hbm level and the PE's tensor unit) has its
    tensor and DRAM work at peak in the attainable roofline; only the vector unit's elementwise
    work (sip_gemm's cast of the accumulator: its roofline vector term) runs below the FMA peak,
    at one flop a lane-cycle: its term again, and nothing else is a rate."""
    sip = load_profile("sip")
    a = analyze(parse_file(bundled_kernel("sip_gemm.tile")), None, sip)
    r = a.scope_roofline[a.root.id]
    assert r.attainable_ns == r.ideal_ns + r.terms["vector"]
    assert r.attainable_note == "vector below peak (50.0%: one flop a lane-cycle)"
    assert [n for n, _ in a.roofline_gap.terms if "below peak" in n] == [r.attainable_note]


def softmax():
    return analyze(parse_file(bundled_kernel("softmax.tile")), None, load_profile("h200_sxm"))


def test_softmax_gap_on_h200():
    """softmax.tile (M = N = 4096, BLOCK_M = 2, WARPS = 4) on h200_sxm: the register estimate 81
    (tests/test_register_estimate.py: 64.02 held + the row base 16), a warp 81 x 32 = 2,592 ->
    2,816 registers (11 units of 256), 65,536 / 2,816 = 23 warps -> 20 (groups of 4) = 5 CTAs of
    4 warps. 4096 / 2 = 2048 CTAs on 132 SMs x 5 resident = 660 slots: 3 full waves (1,980 CTAs)
    and a tail of 68, one CTA on each of 68 SMs: it takes the tail's own time (one CTA alone on
    an SM) while doing 68 / 660 of a wave's work, so it runs tail_ns - 68 / 660 x a wave over.
    The launch adds the 3 us launch overhead and the fill one DRAM latency, 700 ns
    (hw_profiles/h200_sxm.toml memory.dram.latency)."""
    a = softmax()
    lt = a.launches[0]
    assert (lt.positions, lt.units, lt.resident, lt.full_waves, lt.tail_positions) == (2048, 132, 5, 3, 68)
    g = a.roofline_gap
    names = dict(g.terms)
    assert names["launch"] == 3000 and names["fill"] == 700
    assert names["tail-wave excess"] == pytest.approx(float(lt.tail_ns) - float(lt.batch_ns) * 68 / 660)
    # the rates: X read and Y written, 4096 x 4096 bf16 each, 33,554,432 B, so half the bytes
    # writes (a copy's fraction, 0.883): 67,108,864 / 4.8e12 s = 13,981.01 -> 13,982 ns at peak,
    # 67,108,864 / (4.8e12 x 0.883) = 15,833.71 -> 15,834: 1,852 ns
    assert a.metrics["roofline.ideal_ns"] == 13_982
    assert names["dram below peak (88.3%)"] == 15_834 - 13_982
    # a full wave past its busiest engine, the copy (what no engine's throughput sets):
    # (a wave - the copy's time) x 2,048 / 660
    past = (float(lt.batch_ns) - max(float(v) for v in lt.engines.values())) * 2048 / 660
    assert past > 0 and names["latency past the engines"] == pytest.approx(past)
    # the first of the 3 full waves starts its CTAs together and runs in lock step (the waves line:
    # the first wave, then 2 overlapping batches): the waves' ns less 3 x a batch's
    waves = next(t for t in lt.terms if t.name == "waves").ns
    first = float(waves) - 3 * float(lt.batch_ns)
    assert first > 0 and names["first wave in lock step"] == pytest.approx(first)
    assert set(names) == {"dram below peak (88.3%)", "launch", "fill", "tail-wave excess", "latency past the engines",
                          "first wave in lock step"}
    # the gap is the prediction over the roofline: the terms name all of it (to the roofline's
    # whole-ns rounding)
    gap = a.metrics["performance.predicted_ns"] - a.metrics["roofline.ideal_ns"]
    assert g.gap_ns == pytest.approx(gap)
    assert g.not_attributed_ns == pytest.approx(gap - 1852 - 3000 - 700 - names["tail-wave excess"] - past - first)
    assert abs(g.not_attributed_ns) < 1


def test_softmax_gap_on_every_surface():
    a = softmax()
    g = a.roofline_gap
    line = analysis_report.beyond_roofline(a)
    # the terms in order, largest first, as the analysis ranks them; each written by fmt.ns
    causes = line.split(": ", 1)[1]
    order = [name for name, _ in sorted(g.terms, key=lambda t: -t[1])]
    assert [n for n, _ in g.terms] == order
    positions = [causes.index(f"{name} {analysis_report.fmt.ns(ns)}") for name, ns in g.terms]
    assert positions == sorted(positions)
    assert "launch 3.00 us" in causes and "fill 700.00 ns" in causes
    # softmax's terms name its whole gap (test_softmax_gap_on_h200): no remainder is written; a
    # remainder of half a ns or more is, and terms past the gap are said to overlap
    assert abs(g.not_attributed_ns) < 0.5 and "not attributed" not in causes and "overlap" not in causes
    rest = SimpleNamespace(roofline_gap=RooflineGap(10_000, [("launch", 3000.0)], 7_000))
    assert analysis_report.gap_causes(rest) == ": launch 3.00 us, not attributed 7.00 us"
    over = SimpleNamespace(roofline_gap=RooflineGap(2_000, [("launch", 3000.0)], -1_000))
    assert analysis_report.gap_causes(over) == ": launch 3.00 us, the terms overlap by 1.00 us"
    js = json.loads(json.dumps(a.to_json()))["performance"]["roofline_gap"]
    assert [t["name"] for t in js["terms"]] == order
    assert dict((t["name"], t["ns"]) for t in js["terms"])["launch"] == 3000


def test_gap_terms_are_flagged_where_built():
    """The terms whose ns the roofline does not price: launch and fill always; the waves (the
    work itself) and the tail wave (part work) never, whole."""
    flags = {t.name: t.beyond_roofline for t in softmax().launches[0].terms}
    assert flags["launch"] and flags["fill"]
    assert not flags["waves"] and not flags["tail wave"]


def _every_bundled_kernel():
    from tests.golden import profile_for
    from tfx.bundled import bundled_dir
    for path in sorted(bundled_dir("kernels").glob("*.tile")):
        for k in parse_file(path).kernels:
            yield pytest.param(path, k.name, profile_for(path), id=f"{path.stem}:{k.name}")


@pytest.mark.parametrize("path, kernel, profile", list(_every_bundled_kernel()))
def test_gap_terms_never_name_more_than_the_gap(path, kernel, profile):
    """Each term takes at most what the gap leaves (module docstring), so on every bundled kernel
    the named terms are each positive and sum to the gap or less (within the roofs' whole-ns
    rounding, 1 ns a term): never 'the terms overlap by'."""
    a = analyze(parse_file(path), kernel, load_profile(profile))
    g = a.roofline_gap
    assert all(ns > 0 for _, ns in g.terms)
    assert sum(ns for _, ns in g.terms) <= g.gap_ns + len(g.terms)
    assert g.not_attributed_ns >= -len(g.terms)


# ----------------------------------------------------------------- the L2 request roof


def test_l2_request_roof_is_the_sms_ports():
    """The roofline's l2 term takes the SMs' L2 read ports together: 132 SMs x 65 B/cycle
    (pipeline.sm_load_bandwidth_per_cycle) x 1.98 GHz = 16,988.4 B/ns = 1.69884e13 B/s, past the
    11 TB/s the L2 sustains; a sustained rate past the ports (a knob) is the roof itself; a
    profile without the port fact (the A100's) keeps the rate it is given."""
    from tfx.analysis.roofline import l2_request_peak
    assert l2_request_peak(H200, 11e12) == pytest.approx(1.69884e13)
    assert l2_request_peak(H200, 22e12) == 22e12
    a100 = load_profile("a100_sxm")
    assert a100.get("pipeline.sm_load_bandwidth_per_cycle", None) is None
    assert l2_request_peak(a100, 7e12) == 7e12


def test_a_measured_launch_past_the_sustained_l2_rate_stays_above_its_roofline():
    """2560x8192x8192 bf16, 64x256x64 tiles on 4 warps, 5 stages, GROUP_M 8: measured 512.0 us
    (calibration/h200/measured/l2_groupm_s18, do_bench), its 40 x 32 = 1,280 CTAs' requests
    1,280 x (64 + 256) x 8192 x 2 B = 6,710,886,400 B in that time, 13.1 TB/s, past the L2's
    sustained 11 TB/s (Nsight: 49% of the copies merged before the slices). The roofline:
    l2, those requests + C's 2560 x 8192 x 2 = 41,943,040 B written = 6,752,829,440 B / 16,988.4
    B/ns = 397,496.5 -> 397,497 ns; smem, each of the 163,840 trips (1,280 CTAs x 128) writes its
    (64 x 64 + 64 x 256) x 2 = 40,960 B of tiles and its one warpgroup reads them once, 81,920 B:
    13,421,772,800 B / 33,454.08 B/ns = 401,199.3 -> 401,200 ns, the ideal, under the 512.0 us
    measured. At 11 TB/s the l2 term was 6,752,829,440 / 11,000 = 613,893.6 -> 613,894 ns: above it."""
    a = analyze(parse_file(bundled_kernel("gemm.tile")), None, H200,
                {"M": 2560, "N": 8192, "K": 8192, "BM": 64, "BN": 256, "BK": 64, "WARPS": 4, "STAGES": 5,
                 "GROUP_M": 8})
    r = a.scope_roofline[a.root.id]
    assert (r.terms["l2"], r.terms["smem"], r.ideal_ns, r.bound_by) == (397_497, 401_200, 401_200, "smem")
    assert r.ideal_ns < 512_000 < 613_894
    assert r.attainable_ns == 613_894
