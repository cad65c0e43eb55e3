"""The unpipelined (STAGES = 1) split-KV decode trip (tfx.analysis.decode_trip.unpipelined_round_ns):
the chains in lock step, then the K and the V copy group's round trips; every expected number
derived by hand."""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import decode_trip
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
GQA = parse_file(ROOT / "kernels" / "gqa_decode.tile")

# Stream facts: port 128 B/ns, one SM's DRAM rate 80 B/ns, loaded line 200 ns + 0.3 ns per B/ns,
# idle round trip 650 ns (the one-stage trip reads only the port of these).
ROUND = decode_trip.StreamFacts(128, 80, 200, 0.3, 650)
# A chain: one warp 1,000 cycles, its warps' reads 300 cycles at the port, the tile's writes 200,
# at 2 GHz: one CTA's trip (1,000 + 300) / 2 = 650 ns.
CHAIN = decode_trip.TripChain(400, 500, 100, 1000, 4800, 300, 200, 2.0, 650.0)


def _kv_loop(**params):
    """The unmasked KV loop (line 60) of kernels/gqa_decode.tile at ``params``."""
    base = dict(B=1, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=32, WARPS=4, STAGES=1)
    a = analyze(GQA, None, H200, {**base, **params})
    return [n for n in a.root.walk() if n.kind == "loop"][0]


def _terms(params, name, resources=None):
    a = analyze(GQA, None, H200, params, resources=resources, check=False)
    return [t.detail for t in a.terms if t.name == name]


def test_one_cta_waits_its_two_copy_groups():
    """r = 1, every byte from DRAM, a 64,000 B tile in two halves (first_share 0.5), L2 share
    100 B/ns, the copies' issue and wait 120 ns, the pointer chase 340 ns. Each group: 120 + 340
    = 460 ns, then 32,000 B at max(32,000 / 128 = 250 port, 32,000 / 100 = 320 L2 share) = 320 ns;
    the round: the chain 650 + 2 x 460 + 2 x 320 = 650 + 920 + 640 = 2,210 ns."""
    t = decode_trip.unpipelined_round_ns(CHAIN, 1, 1, 200, 64_000, 64_000, 100, 0.5, 120, 340, ROUND)
    assert (t.groups, t.latency, t.fetch) == (2, 460, 640)
    assert t.chain_round == pytest.approx(650, abs=1e-9)
    assert t.ns == pytest.approx(2210, abs=1e-9)


def test_coresident_ctas_keep_the_lock_step():
    """r = 2: the round of the chains adds the other CTA's port traffic, (300 + 200) / 2 = 250 ns
    (decode_trip.round_ns): 2,210 + 250 = 2,460 ns; r = 3: 2,710. L2 hits (miss 0, L2 latency
    200 ns) wait 120 + 200 = 320 ns a group: at r = 1, 650 + 640 + 640 = 1,930 ns."""
    for r, want in ((2, 2460), (3, 2710)):
        t = decode_trip.unpipelined_round_ns(CHAIN, r, 1, 200, 64_000, 64_000, 100, 0.5, 120, 340, ROUND)
        assert t.ns == pytest.approx(want, abs=1e-9), r
    hit = decode_trip.unpipelined_round_ns(CHAIN, 1, 0, 200, 64_000, 64_000, 100, 0.5, 120, 340, ROUND)
    assert hit.latency == 320 and hit.ns == pytest.approx(1930, abs=1e-9)


def test_one_group_where_every_load_feeds_the_scores():
    """first_share 1: one group, 460 ns + 64,000 / 100 = 640 ns: 650 + 460 + 640 = 1,750 ns."""
    t = decode_trip.unpipelined_round_ns(CHAIN, 1, 1, 200, 64_000, 64_000, 100, 1, 120, 340, ROUND)
    assert t.groups == 1 and t.ns == pytest.approx(1750, abs=1e-9)


def test_a_sweep_gives_what_the_scalars_give():
    """Arrays of r and first_share, element by element, as the scalar calls."""
    rs, shares = np.array([1, 2, 3, 1]), np.array([0.5, 0.5, 0.5, 1.0])
    arr = decode_trip.unpipelined_round_ns(CHAIN, rs, 1, 200, 64_000, 64_000, 100, shares, 120, 340, ROUND)
    assert list(arr.ns) == pytest.approx([2210, 2460, 2710, 1750], abs=1e-9)


def test_the_compiled_schedule_floors_the_chain_at_one_and_three_stages():
    """decode_sass.csv's warp_schedule_cycles of the binary at the launch's stage count: BLOCK_N
    128 on 8 warps 1,658 at one stage and 1,325 at three; at four stages the three-stage body
    (1,325); at two stages none (0: SCHEDULED_STAGES); D = 64 is not in the table: 0."""
    loop = _kv_loop(BLOCK_N=128, WARPS=8)
    assert [decode_trip.schedule_cycles(loop, 8, s, "sm_90") for s in (1, 2, 3, 4)] == [1658, 0, 1325, 1325]
    assert decode_trip.schedule_cycles(_kv_loop(BLOCK_N=128, WARPS=2), 2, 1, "sm_90") == 4015
    assert decode_trip.schedule_cycles(_kv_loop(BLOCK_N=64, WARPS=4, D=64), 4, 1, "sm_90") == 0


def test_the_compiled_binaries_facts_only_on_their_instruction_set():
    """The schedule and issue tables are sm_90 binaries': on sm_80 (an A100) the same loop is
    other code: 0 for both (on sm_90 BLOCK_N 128 on 8 warps: 1,658 cycles one stage, above, and
    ISSUE_INSNS (128, 8, 1) = 335 instructions)."""
    loop = _kv_loop(BLOCK_N=128, WARPS=8)
    assert decode_trip.issue_insns(loop, 8, 1, "sm_90") == 335
    assert decode_trip.schedule_cycles(loop, 8, 1, "sm_80") == 0
    assert decode_trip.issue_insns(loop, 8, 1, "sm_80") == 0


def test_the_chain_is_at_least_the_schedule():
    """BLOCK_N 32 on 4 warps (test_decode_trip: the closed form 345 + 524 + 102 = 971 cycles a
    warp): at one stage the binary's schedule 1,095 > 971 binds, at three 1,167; without a
    stage count the closed form stays."""
    loop = _kv_loop(BLOCK_N=32, WARPS=4)
    m = Machine(H200, "cta")
    f = decode_trip.chain_facts(m)
    assert decode_trip.trip_chain(loop, m, 4, 16384, f).warp_cycles == 971
    assert decode_trip.trip_chain(loop, m, 4, 16384, f, 1).warp_cycles == 1095
    assert decode_trip.trip_chain(loop, m, 4, 16384, f, 3).warp_cycles == 1167
    assert decode_trip.trip_chain(loop, m, 4, 16384, f, 2).warp_cycles == 971


def test_the_table_is_the_sass():
    """Every entry of SCHEDULE_CYCLES is calibration/h200/measured/decode_sass/decode_sass.csv's
    warp_schedule_cycles, all 27 configurations."""
    import csv
    rows = {(int(r["BLOCK_N"]), int(r["WARPS"]), int(r["STAGES"])): float(r["warp_schedule_cycles"])
            for r in csv.DictReader(open(ROOT / "calibration/h200/measured/decode_sass/decode_sass.csv"))}
    assert decode_trip.SCHEDULE_CYCLES == rows


def test_h200_load_wait_of_a_one_stage_decode_trip():
    """gqa_decode B1 HQ32 HKV8 SKV32768 SPLITS16 BLOCK_N32 WARPS4 STAGES1 at 92 registers and
    13,312 B of shared memory as compiled (65,536 / (92 x 128) = 5 CTAs a SM; the breakdown's
    full batch): the chain of BLOCK_N 32 on 4 warps at one stage: a warp max(the closed form 971
    (test_decode_trip), the one-stage binary's schedule 1,095) = 1,095 cycles + its warps' port
    reads 312 = 1,407 cycles / 1.98 GHz = 710.61 ns, each other CTA's port traffic (312 + 128) /
    1.98 = 222.22 ns: the chains in lock step 710.61 + 4 x 222.22 = 1,599.49 ns; each copy group
    242 cycles / 1.98 = 122.22 ns of issue and wait + the pointer chase's 341 ns = 463.22 ns, K and
    V 8,192 B each at max(8,192 / 128.7 = 63.65 port, 8,192 / (11,000 / 132 = 83.33) = 98.30 L2
    share) = 98.30 ns: 196.61 ns; the round 1,599.49 + 926.44 + 196.61 = 2,722.55 ns = 2.72 us."""
    lines = _terms(dict(B=1, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=32, WARPS=4, STAGES=1), "load wait",
                   dict(regs=92, smem=13312))
    assert len(lines) == 1
    assert "the chains in lock step 1.60 us, then its K, then its V copy group: 2 x 463.22 ns" in lines[0]
    assert "L2 share 196.61 ns = 2.72 us a round of 5" in lines[0]


def test_the_unloaded_latency_is_the_pointer_chase():
    """pipeline.dram_latency_unloaded of the H200 (calibration/h200/measured/latency.csv: 341.1 ns
    with no streamers, 341 in the profile); a profile without it (the tiled accelerator) prices
    no such trip."""
    assert decode_trip.dram_chase_ns(Machine(H200, "cta")) == 341
    assert decode_trip.dram_chase_ns(Machine(load_profile("sip"), "pe")) is None


def test_a_one_stage_decode_sweep_equals_the_scalar_analysis():
    """explore's vectorized sweep prices every one-stage decode configuration as the scalar
    analysis does (the table lookup and the round by arrays)."""
    import math
    from tfx.explore import explore
    kernel = GQA.kernel(None)
    sweeps = dict(B=[64], SKV=[8192], SPLITS=[1, 64], BLOCK_N=[32, 64, 128], WARPS=[2, 4, 8], STAGES=[1, 2])
    r = explore(GQA, kernel, H200, sweeps=sweeps, keep_metrics=True, chunk_size=97)
    seen = 0
    for i in range(r.configs):
        params, _ = r.space.decode(i)
        if r.columns["code"][i] != 0:
            continue
        a = analyze(GQA, kernel, H200, params=params, check=False)
        assert math.isclose(a.metrics["performance.predicted_ns"], float(r.columns["time"][i]), rel_tol=1e-9), params
        seen += params["STAGES"] == 1
    assert seen >= 12
