"""What a 1- or 2-stage pipeline cannot hide (tfx.analysis.pipeline_depth; docs/analysis.md
section 8, "pipeline depth").

H200 facts (hw_profiles/h200_sxm.toml): clock 1.98 GHz; pipeline.load_trip_overhead 242
cycles = 122.22 ns; sm_load_bandwidth_per_cycle 65 B x 1.98 = 128.7 B/ns per SM; bf16 tensor
4096 flop/cycle x 1.98 x 0.74 = 6001.4592 flop/ns per SM; instruction_latency.wgmma_rs_group
50 cycles = 25.25 ns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import pipeline_depth
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
TENSOR = 4096 * 1.98 * 0.74


def test_round_trip_is_the_load_trips_chain_latency_and_bytes():
    """16,384 B of K and V after 200 ns of L2 latency, 196.608 ns at the SM's L2 share
    (11,000 / 132 = 83.333 B/ns): 122.22 + 200 + max(196.61, 16,384 / 128.7 = 127.30) =
    518.83 ns; at a transfer share faster than the port, the port: 122.22 + 200 + 127.30 =
    449.53 ns (the 2-stage GEMM k-loop alone, 8 KiB: 122.22 + 200 + 63.65 = 385.88 ns against
    385.62 measured, calibration/h200/measured/kloop)."""
    m = Machine(H200, "cta")
    assert pipeline_depth.round_trip_ns(m, 200, 16_384, 196.608) == pytest.approx(518.830, abs=1e-3)
    assert pipeline_depth.round_trip_ns(m, 200, 16_384, 50) == pytest.approx(449.527, abs=1e-3)
    assert pipeline_depth.round_trip_ns(m, 200, 8192, 0) == pytest.approx(385.875, abs=1e-3)


def test_round_trip_without_load_trip_facts_is_latency_and_transfer():
    """A profile that states no load-trip facts (the sip accelerator): latency + transfer."""
    m = Machine(load_profile("sip"), "pe")
    assert pipeline_depth.round_trip_ns(m, 200, 16_384, 196.608) == pytest.approx(396.608)


def test_exposed_only_at_two_stages_less_the_async_mma_for_the_l2_share():
    """518.83 ns round trip, 112.61 ns of PV running on: 406.22 ns at 2 stages; a quarter of
    the bytes from DRAM: 406.22 x 0.75 = 304.67 ns; none at 1 or 3 stages; never negative."""
    assert pipeline_depth.exposed_ns(2, 518.83, 112.61) == pytest.approx(406.22)
    assert pipeline_depth.exposed_ns(2, 518.83, 112.61, 0.25) == pytest.approx(304.665)
    assert pipeline_depth.exposed_ns(1, 518.83, 112.61) == 0
    assert pipeline_depth.exposed_ns(3, 518.83, 112.61) == 0
    assert pipeline_depth.exposed_ns(2, 100.0, 112.61) == 0
    got = pipeline_depth.exposed_ns(np.array([1, 2, 3, 2]), 518.83, 112.61, np.array([0, 0, 0, 1]))
    assert list(got) == pytest.approx([0, 406.22, 0, 0])


def _attention_loop(p):
    a = analyze(parse_file(str(ROOT / "kernels" / "flash_attention.tile")), None, H200, p)
    return next(n for n in a.root.walk() if n.kind == "loop")


def test_async_mma_is_pv_alone():
    """flash_attention D128 at 64 x 32 on 4 warps: QK^T is waited (the softmax reads it), PV
    runs on from registers (RS): 2 x 64 x 32 x 128 = 524,288 flop / 6001.4592 = 87.36 ns +
    the RS group 25.25 ns = 112.61 ns."""
    loop = _attention_loop(dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2))
    m = Machine(H200, "cta")

    def tensor_ns(c):
        return 2 * 64 * 32 * 128 / TENSOR

    assert pipeline_depth.async_mma_ns(loop, m, 4, tensor_ns) == pytest.approx(524_288 / TENSOR + 50 / 1.98)
    assert 524_288 / TENSOR + 50 / 1.98 == pytest.approx(112.61, abs=1e-2)


def test_two_stages_slower_than_three_by_the_exposed_round_trip_at_one_cta():
    """One CTA per SM (resources that fit one), D128 64 x 32, 4 warps. At 3 stages a round is
    the CTA's chain (tests/test_attention_chain.py: 525.49 ns at this tile); at 2 the chain
    plus the exposed round trip: the round trip 122.22 + latency + 16,384 B at the slower of
    the L2 share and the port, less PV (112.61 ns), for the hit share. The two analyses differ
    by exactly that delay per trip: (pred(2) - pred(3)) / trips / waves = exposed."""
    kernel = parse_file(str(ROOT / "kernels" / "flash_attention.tile"))
    res = dict(threads=128, regs=126, smem=200_000, spills=0)
    p = dict(B=1, H=33, S=256, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4)   # 33 x 4 = 132 CTAs, 8 trips
    t2 = analyze(kernel, None, H200, {**p, "STAGES": 2}, resources=res)
    depth = {t.name: t for t in t2.terms}["pipeline depth"]
    # every one of the 132 CTAs starts a head: 33 of 132 at 4 query blocks a head; all CTAs of
    # a head read the same K and V, the first of the 4 misses: 1/4 x 700 + 3/4 x 200 = 325 ns
    latency = 0.25 * 700 + 0.75 * 200
    trip = 242 / 1.98 + latency + 16_384 / (11_000 / 132)
    exposed = (trip - (524_288 / TENSOR + 50 / 1.98)) * 0.75
    assert f"{exposed:,.2f} ns a trip" in depth.detail


def test_drifted_share_is_the_ctas_after_the_first_wave():
    """2048 CTAs on 132 slots: 1 - 132/2048 = 0.935546875 start after the first wave; a launch
    of one wave or less (132 or 100 CTAs on 132 slots) none; arrays elementwise."""
    assert pipeline_depth.drifted_share(2048, 132) == pytest.approx(0.935546875)
    assert pipeline_depth.drifted_share(132, 132) == 0
    assert pipeline_depth.drifted_share(100, 132) == 0
    got = pipeline_depth.drifted_share(np.array([2048, 100, 264]), np.array([132, 132, 132]))
    assert list(got) == pytest.approx([0.935546875, 0, 0.5])


def test_serial_copies_of_drifted_ctas_come_at_the_port():
    """64 KiB of K and V: the L2 share 65,536 / 83.333 = 786.43 ns, the port 65,536 / 128.7 =
    509.22 ns, DRAM's share 7.2 ns (586 B / 81.2 B/ns). One wave (0 drifted): the share,
    786.43; all drifted: max(7.2, 509.22) = 509.22; half: (786.43 + 509.22) / 2 = 647.83 ns. A
    profile without load-trip facts (sip) keeps the share. The 2-stage exposed wait of the
    one-wave microbenchmark (calibration/h200/measured/attn_stages, D128 64 x 128 w4, PV
    374.69 ns): 122.22 + 200 + 786.43 - 374.69 = 733.97 ns against 653.5 measured; drifted:
    122.22 + 200 + 509.22 - 374.69 = 456.75 ns."""
    m = Machine(H200, "cta")
    share, port = 65_536 / (11_000 / 132), 65_536 / (65 * 1.98)
    assert share == pytest.approx(786.43, abs=1e-2) and port == pytest.approx(509.22, abs=1e-2)
    assert pipeline_depth.serial_copy_transfer_ns(m, 65_536, share, 7.2, 0) == pytest.approx(786.432)
    assert pipeline_depth.serial_copy_transfer_ns(m, 65_536, share, 7.2, 1) == pytest.approx(509.22, abs=1e-2)
    assert pipeline_depth.serial_copy_transfer_ns(m, 65_536, share, 7.2, 0.5) == pytest.approx(647.83, abs=1e-2)
    # DRAM-streamed bytes keep their DRAM share when it is the slower
    assert pipeline_depth.serial_copy_transfer_ns(m, 65_536, 900.0, 900.0, 1) == pytest.approx(900.0)
    assert pipeline_depth.serial_copy_transfer_ns(Machine(load_profile("sip"), "pe"), 65_536, share, 7.2, 1) == share
    got = pipeline_depth.serial_copy_transfer_ns(m, 65_536, share, 7.2, np.array([0.0, 1.0]))
    assert list(got) == pytest.approx([786.432, 509.22], abs=1e-2)
    trip = pipeline_depth.round_trip_ns(m, 200, 65_536, pipeline_depth.serial_copy_transfer_ns(m, 65_536, share, 7.2, 0))
    assert trip - 374.69 == pytest.approx(733.97, abs=1e-2)
    trip = pipeline_depth.round_trip_ns(m, 200, 65_536, pipeline_depth.serial_copy_transfer_ns(m, 65_536, share, 7.2, 1))
    assert trip - 374.69 == pytest.approx(456.75, abs=1e-2)


def test_drift_text_names_the_split():
    assert "one wave" in pipeline_depth.drift_text(0)
    assert "93.6% of CTAs started after the first wave" in pipeline_depth.drift_text(0.935546875)


def test_drifted_ctas_wait_the_lead_past_pv_then_the_bytes_at_the_fill_rate():
    """pipeline.drifted_fill_bandwidth_per_cycle 107.5 B x 1.98 GHz = 212.85 B/ns. The lead is
    the round trip of no bytes: 122.22 + 200 = 322.22 ns. D128 64 x 128 on 4 warps (64 KiB,
    PV 374.69 ns, longer than the lead): 0 + 65,536 / 212.85 = 307.90 ns (measured drifted,
    attn_trip_s13: 309.4), against 456.75 at the port; 128 x 128 on 8 warps, PV 749.38 ns:
    the same 307.90 (measured 294.0, where the port less PV gave 0). 64 x 32 (16 KiB, PV
    112.61 ns, shorter than the lead): 322.22 - 112.61 + 16,384 / 212.85 = 209.61 + 76.97 =
    286.58 ns; a quarter of the bytes from DRAM: x 0.75 = 214.94; none at 1 or 3 stages."""
    m = Machine(H200, "cta")
    fill = pipeline_depth.fill_bytes_per_ns(m)
    assert fill == pytest.approx(107.5 * 1.98)
    lead = pipeline_depth.round_trip_ns(m, 200, 0, 0)
    assert lead == pytest.approx(242 / 1.98 + 200)
    assert pipeline_depth.drifted_exposed_ns(2, lead, 374.69, 65_536, fill) == pytest.approx(307.90, abs=1e-2)
    assert pipeline_depth.drifted_exposed_ns(2, lead, 749.38, 65_536, fill) == pytest.approx(307.90, abs=1e-2)
    assert pipeline_depth.drifted_exposed_ns(2, lead, 112.61, 16_384, fill) == pytest.approx(286.58, abs=1e-2)
    assert pipeline_depth.drifted_exposed_ns(2, lead, 112.61, 16_384, fill, 0.25) == pytest.approx(214.94, abs=1e-2)
    assert pipeline_depth.drifted_exposed_ns(1, lead, 112.61, 16_384, fill) == 0
    assert pipeline_depth.drifted_exposed_ns(3, lead, 112.61, 16_384, fill) == 0
    got = pipeline_depth.drifted_exposed_ns(np.array([2, 3]), lead, 374.69, 65_536, fill)
    assert list(got) == pytest.approx([307.90, 0], abs=1e-2)
    # a profile without the fact keeps the round trip at the port for the drifted CTAs
    assert pipeline_depth.fill_bytes_per_ns(Machine(load_profile("sip"), "pe")) is None


def test_two_stage_delay_weighs_the_first_wave_and_the_drifted_ctas():
    """flash_attention B1 H32 S4096 D128 at 64 x 32 on 4 warps, 2 stages, resources of one CTA
    a SM: 2,048 CTAs on 132 slots, 1 - 132 / 2,048 = 93.55% drifted. The breakdown's delay is
    (1 - d) x the first wave's (round trip at the L2 share less PV) + d x the drifted CTAs'
    (lead past PV + bytes at the fill rate), each for the hit share: its words name both parts
    and the sum equals the delay it prints."""
    kernel = parse_file(str(ROOT / "kernels" / "flash_attention.tile"))
    res = dict(threads=128, regs=126, smem=200_000, spills=0)
    a = analyze(kernel, None, H200, dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2),
                resources=res)
    detail = {t.name: t for t in a.terms}["pipeline depth"].detail
    assert "the 93.6% started after it, drifted apart" in detail
    import re
    first, late, total = (float(x.replace(",", "")) for x in re.search(
        r"0\.064 x ([\d,.]+) ns \+ 0\.936 x ([\d,.]+) ns = ([\d,.]+) ns a trip", detail).groups())
    d = 1 - 132 / 2048
    assert (1 - d) * first + d * late == pytest.approx(total, abs=0.01)
    # the drifted part: the lead (122.22 + the latency, 200 ns on a hit and 700 on a miss) past
    # PV (112.61) + 16,384 B / 212.85 B/ns, for the hit share the breakdown prints
    hit = float(re.search(r"x ([\d.]+) of its bytes from L2", detail).group(1))
    lead = 242 / 1.98 + (1 - hit) * 700 + hit * 200
    assert late == pytest.approx((lead - 112.61 + 16_384 / 212.85) * hit, rel=2e-3)
