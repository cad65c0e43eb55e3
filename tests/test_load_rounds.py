"""The load rounds of an unpipelined GEMM trip (tfx.analysis.load_rounds), derived by hand."""

import math

import numpy as np
import pytest

from tfx.analysis import load_rounds, load_trip, pipeline_depth

# Round numbers, so the arithmetic can be done by hand: a chain of 100 ns, a port of 100 B/ns,
# a loaded DRAM line 200 ns + 0 ns per B/ns with an idle floor of 500 ns, and a pointer chase
# of 300 ns unloaded that grows 100 ns by 2,000 B/ns, 200 by 3,000, 500 by 4,000.
CHAIN = load_trip.LoadTrip(100, 100)
FLAT_LINE = load_trip.DramRoundTrip(200, 0, 500)
CHASE = load_rounds.RoundFacts(300, ((0.0, 0.0), (2000.0, 100.0), (3000.0, 200.0), (4000.0, 500.0)))
# one CTA's trip: 10,000 B through the port, transfer 150 ns, 10,000 B from DRAM, 1 CTA on
# 100 SMs, 50 ns of compute; L2 latency 200 ns; p = 1 (every trip first reads a tile)
TRIP = dict(lat=200, first_reader=1, loaded_bytes=10_000, transfer_ns=150, dram_bytes=10_000, r=1,
            active_units=100, compute_ns=50)


def test_one_round_is_the_floor_of_the_loaded_round_trip():
    # K = 100 + 50 + 200 + 10,000 / 100 = 450; q = 0 (a flat line); floor = 100 + 50 + 500 +
    # max(150, 100) = 800: T = max(450, 800) = 800
    assert load_rounds.cycle_ns(1, **TRIP, f=CHAIN, d=FLAT_LINE, rf=CHASE) == pytest.approx(800, abs=1e-6)


def test_one_round_on_the_loaded_line_is_pipeline_depths_trip():
    # slope 0.1 ns per B/ns, idle 100: q = 0.1 x 100 x 1 x 10,000 = 100,000, K = 450:
    # T = (450 + sqrt(450^2 + 4 x 100,000)) / 2 = (450 + sqrt(602,500)) / 2 = (450 + 776.2087) / 2
    # = 613.1044; the floor 100 + 50 + 100 + 150 = 400 is below
    line = load_trip.DramRoundTrip(200, 0.1, 100)
    t = load_rounds.cycle_ns(1, **TRIP, f=CHAIN, d=line, rf=CHASE)
    assert t == pytest.approx((450 + math.sqrt(602_500)) / 2, abs=1e-6)
    assert t == pytest.approx(613.1044, abs=1e-3)
    # n = 1 is the trip pipeline_depth priced before the rounds
    assert t == pytest.approx(pipeline_depth.unpipelined_cycle_ns(200, 1, 10_000, 150, 10_000, 1, 100, 50, CHAIN, line),
                              abs=1e-6)


def test_three_rounds_add_two_dependent_latencies_at_the_drawn_bandwidth():
    # first round 800 (above); the SMs draw c / T, c = 100 x 1 x 10,000 = 1,000,000 B a trip; on
    # the chase's first segment the delay is 100 / 2,000 x drawn = 50,000 / T, so
    # T = 800 + 2 x (300 + 50,000 / T): T^2 - 1,400 T - 100,000 = 0,
    # T = (1,400 + sqrt(1,960,000 + 400,000)) / 2 = (1,400 + 1,536.2292) / 2 = 1,468.1146;
    # drawn = 1,000,000 / 1,468.11 = 681 B/ns, inside the first segment (0..2,000)
    t = load_rounds.cycle_ns(3, **TRIP, f=CHAIN, d=FLAT_LINE, rf=CHASE)
    assert t == pytest.approx((1400 + math.sqrt(2_360_000)) / 2, abs=1e-6)
    assert t == pytest.approx(1468.1146, abs=1e-3)


def test_later_rounds_hit_l2_with_the_rest_of_the_chance():
    # p = 0.5: first round K = 100 + 50 + 0.5 x 200 + 0.5 x 200 + 100 = 450, floor = 100 + 50 +
    # 0.5 x 500 + 0.5 x 200 + 150 = 650; the later round 0.5 x (300 + delay) + 0.5 x 200, the
    # SMs drawing 0.5's share is not separate (c keeps the trip's DRAM bytes), delay = 50,000 / T:
    # T = 650 + 250 + 25,000 / T: T^2 - 900 T - 25,000 = 0, T = (900 + sqrt(810,000 + 100,000)) / 2
    # = (900 + 953.9392) / 2 = 926.9696
    t = load_rounds.cycle_ns(2, **{**TRIP, "first_reader": 0.5}, f=CHAIN, d=FLAT_LINE, rf=CHASE)
    assert t == pytest.approx((900 + math.sqrt(910_000)) / 2, abs=1e-6)


def test_rounds_elementwise_over_a_sweep():
    t = load_rounds.cycle_ns(np.array([1, 3]), **TRIP, f=CHAIN, d=FLAT_LINE, rf=CHASE)
    assert t == pytest.approx([800, (1400 + math.sqrt(2_360_000)) / 2], abs=1e-6)
    # a sweep of one-round trips only: the closed form everywhere, 800 as above
    t = load_rounds.cycle_ns(np.array([1, 1]), **TRIP, f=CHAIN, d=FLAT_LINE, rf=CHASE)
    assert list(t) == [800, 800]


def test_no_pointer_chase_prices_the_first_round_alone():
    # a profile without the chase's curve: the later rounds are not charged, 3 rounds = 1 = 800
    assert load_rounds.cycle_ns(3, **TRIP, f=CHAIN, d=FLAT_LINE, rf=None) == pytest.approx(800, abs=1e-6)
    got = load_rounds.cycle_ns(np.array([1, 3]), **TRIP, f=CHAIN, d=FLAT_LINE, rf=None)
    assert got == pytest.approx([800, 800], abs=1e-6)


def test_no_idle_round_trip_no_floor_in_either():
    # no idle round trip stated: the loaded line alone, K = 100 + 50 + 200 (the base) + 10,000 / 100
    # = 450 (q = 0): T = 450 in load_rounds and in pipeline_depth alike (one source:
    # load_trip.loaded_line). The base with the transfer, 100 + 50 + 200 + max(150, 100) = 500, is no
    # floor: the line's base was fitted with the bytes through the port only (the transfer counted twice)
    line = load_trip.DramRoundTrip(200, 0, None)
    assert load_rounds.cycle_ns(1, **TRIP, f=CHAIN, d=line, rf=CHASE) == pytest.approx(450, abs=1e-9)
    assert pipeline_depth.unpipelined_cycle_ns(200, 1, 10_000, 150, 10_000, 1, 100, 50, CHAIN, line) == \
        pytest.approx(450, abs=1e-9)
    assert load_trip.loaded_line(200, 1, 10_000, 150, 10_000, 1, 100, load_trip.LoadTrip(150, 100), line) == \
        (450, 0, None)
    # three rounds on that line: T = 450 + 2 x (300 + 50,000 / T) (the chase as in the test above):
    # T^2 - 1,050 T - 100,000 = 0, T = (1,050 + sqrt(1,102,500 + 400,000)) / 2 = (1,050 + 1,225.7651) / 2
    # = 1,137.8826; drawn 1,000,000 / 1,137.88 = 879 B/ns, on the chase's first segment
    assert load_rounds.cycle_ns(3, **TRIP, f=CHAIN, d=line, rf=CHASE) == \
        pytest.approx((1050 + math.sqrt(1_502_500)) / 2, abs=1e-6)
    got = load_rounds.cycle_ns(np.array([1, 3]), **TRIP, f=CHAIN, d=line, rf=CHASE)
    assert got == pytest.approx([450, (1050 + math.sqrt(1_502_500)) / 2], abs=1e-6)


def test_a_profile_without_the_idle_round_trip_prices_one_unpipelined_trip():
    """A synthetic profile: h200_sxm without pipeline.dram_round_trip_idle and
    pipeline.dram_round_trip_idle_one_tile (no shipped profile lacks them;
    tests/profile_variants.py). Its facts: chain 242 cycles / 1.98 GHz = 122.22 ns, port 65 B/cycle x 1.98 =
    128.7 B/ns, base 205 ns. A trip of 12,870 B (100 ns through the port, 150 ns of transfer), every
    trip first reading a tile (p = 1), no DRAM bytes drawn (q = 0), 50 ns of compute:
    T = 122.22 + 50 + 205 + 100 = 477.22 ns, in load_rounds and pipeline_depth alike. With the idle
    round trip (h200_sxm; an unpipelined trip keeps one tile in flight, so the one measured so,
    pipeline.dram_round_trip_idle_one_tile 527 ns: load_trip.one_tile_floor) both take the floor
    122.22 + 50 + 527 + max(150, 100) = 849.22; the profile without either idle fact keeps the line."""
    from tfx.analysis.machine import Machine
    from tfx.hw import load_profile
    from profile_variants import without
    no_idle = without("h200_sxm", "pipeline.dram_round_trip_idle", "pipeline.dram_round_trip_idle_one_tile")
    chain = 242 / 1.98
    for profile, want in ((no_idle, chain + 50 + 205 + 100),
                          (load_profile("h200_sxm"), chain + 50 + 527 + 150)):
        m = Machine(profile, "cta")
        f, d = load_trip.facts(m), load_trip.dram_facts(m)
        assert f.overhead_ns == pytest.approx(chain) and f.port_bytes_per_ns == pytest.approx(128.7)
        assert d.base_ns == 205
        trip = dict(lat=200, first_reader=1, loaded_bytes=12_870, transfer_ns=150, dram_bytes=0, r=1,
                    active_units=132, compute_ns=50)
        assert load_rounds.cycle_ns(1, **trip, f=f, d=d, rf=load_rounds.facts(m)) == pytest.approx(want, abs=1e-9)
        assert pipeline_depth.unpipelined_cycle_ns(*trip.values(), f, d) == pytest.approx(want, abs=1e-9)


def test_the_table_gives_a_configuration_its_rounds_and_others_one():
    table = {(16, False, 16, 128, 64, 2): 9, (8, True, 64, 256, 64, 4): 4}
    assert load_rounds.rounds((16, 128, 64), 16, False, 2, table) == 9
    assert load_rounds.rounds((16, 128, 64), 16, False, 4, table) == 1      # not compiled: one round
    assert load_rounds.rounds((64, 256, 64), 8, True, 4, table) == 4
    got = load_rounds.rounds((np.array([16, 64]), np.array([128, 256]), np.array([64, 64])), 16, False,
                             np.array([2, 4]), table)
    assert list(got) == [9, 1]


def test_the_compiled_table_holds_the_sass_of_the_worst_row():
    # calibration/h200/measured/unpipelined_rounds: gemm.tile bf16 (B [K, N]) 16x128x64 on 2 warps,
    # A's 2 LDG.E.128 then B's 16 in 8 pairs, each pair stored before the next leaves: 9 rounds;
    # 64x128x32 on 2 warps issues its 12 loads at once: 1 round
    assert load_rounds.rounds((16, 128, 64), 16, False, 2) == 9
    assert load_rounds.rounds((64, 128, 32), 16, False, 2) == 1


def test_the_breakdown_names_the_rounds_of_a_triton_trip_only():
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    prof = load_profile("h200_sxm")
    mod = parse_file("kernels/gemm.tile")
    params = dict(M=32, N=8192, K=8192, BM=16, BN=128, BK=64, WARPS=2, STAGES=1, GROUP_M=1)

    def line(codegen):
        a = analyze(mod, None, prof, params, codegen=codegen)
        return next(t.detail for t in a.terms if t.name == "unpipelined trip")
    assert "9 dependent rounds" in line(None)
    assert "dependent rounds" not in line("cutlass")


def test_the_rounds_read_the_copys_curve_and_the_streaming_trip_the_read_only_one():
    """hw_profiles/h200_sxm.toml: a pointer chase beside a copy (pipeline.dram_latency_*) 341 ns
    unloaded, 446 at 1,974 GB/s, 555 at 3,086, 884 at 3,898: over the unloaded latency (0, 0),
    (1,974 B/ns, 446 - 341 = 105 ns), (3,086, 555 - 341 = 214), (3,898, 884 - 341 = 543), read once
    (decode_trip.latency_queue) for the unpipelined rounds, whose loads share DRAM with stores.
    The decode streaming trip reads K and V and stores nothing: its chase is the one measured
    beside a read-only stream (pipeline.dram_read_latency_*, latency_read_s16): 400.3 ns at
    3,399 GB/s, 577.2 at 4,372, 853.5 at 4,527, over the same unloaded 341: (3,399, 400.3 - 341 =
    59.3), (4,372, 577.2 - 341 = 236.2), (4,527, 853.5 - 341 = 512.5)."""
    from tfx.analysis import decode_trip
    from tfx.analysis.machine import Machine
    from tfx.hw import load_profile
    m = Machine(load_profile("h200_sxm"), "cta")
    rf = load_rounds.facts(m)
    assert rf.unloaded_ns == 341
    assert [pt for xy in rf.queue for pt in xy] == pytest.approx([0, 0, 1974, 105, 3086, 214, 3898, 543])
    assert decode_trip.latency_queue(m) == (341, rf.queue)
    f = decode_trip.facts(m)
    assert f.read_only
    assert [pt for xy in f.queue for pt in xy] == pytest.approx([0, 0, 3399, 59.3, 4372, 236.2, 4527, 512.5])
    # a profile without the curve: neither has one
    sip = Machine(load_profile("sip"), "pe")
    assert load_rounds.facts(sip) is None and decode_trip.latency_queue(sip) is None
    assert decode_trip.read_latency_queue(sip) is None


def test_a_compile_that_spills_a_few_words_keeps_its_rounds():
    # calibration/h200/measured/unpipelined_rounds/grid.csv: bf16 32x256x128 on 2 warps compiles
    # to 255 registers and 40 spilled words (the B tile's row pointers, each reloaded right before
    # the LDG it addresses); its 72 LDG.E.128 a thread leave in 13 dependent groups,
    # 8+6+8+8+2+4+3+3+4+6+6+6+8 = 72: 13 rounds. bf16 128x128x64 on 2 warps compiles to 32
    # registers and 1,660 words (the frame reaches the registers): not in the table, 1 round.
    assert load_rounds.rounds((32, 256, 128), 16, False, 2) == 13
    assert load_rounds.rounds((128, 128, 64), 16, False, 2) == 1


def test_the_table_keeps_compiles_whose_frame_is_under_their_registers(tmp_path):
    """bench/h200/unpipelined_rounds.py's emit: a row enters where spills_compiled <
    regs_compiled (0 < 96; 40 < 255), not where the frame reaches the registers (1,660 >= 32)."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "unpipelined_rounds", Path(__file__).resolve().parents[1] / "bench" / "h200" / "unpipelined_rounds.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    head = "family,BM,BN,BK,WARPS,layout,regs_compiled,spills_compiled,rounds\n"
    rows = ("gemm_bf16,16,128,64,2,kn,96,0,9\n"
            "gemm_bf16,32,256,128,2,kn,255,40,13\n"
            "gemm_bf16,128,128,64,2,kn,32,1660,15\n")
    (tmp_path / "r.csv").write_text(head + rows)
    ns: dict = {}
    exec(mod.emit([tmp_path / "r.csv"]), ns)
    assert ns["ROUNDS"] == {(16, False, 16, 128, 64, 2): 9, (16, False, 32, 256, 128, 2): 13}


def test_the_spilling_32_row_trip_of_thirteen_rounds():
    """issue15 run17 gemm_bf16 32x28672x8192, 32x256x128 on 2 warps, 1 stage (255 registers, 40
    spilled words; measured 541.9 us, 64 trips: (541.9 - 3.7) / 64 = 8.41 us a trip), at about
    its facts in round numbers: one CTA on each of 112 SMs, p = 1, a trip loads 73,728 B (A's
    32 x 128 x 2 = 8,192 + B's 128 x 256 x 2 = 65,536), 65,536 + 8,192 / 112 = 65,609 B of them
    from DRAM (A's tile read by all 112 CTAs, fetched once), chain 122 ns, compute 1,470 ns,
    transfer 1,734 ns, port 128.7 B/ns, the H200's idle round trip 557 ns, slope 0.3249.
    First round: the floor 122 + 1,470 + 557 + max(1,734, 73,728 / 128.7 = 572.9) = 3,883 ns;
    the loaded line K = 122 + 1,470 + 205 + 572.9 = 2,369.9, q = 0.3249 x 112 x 65,609 =
    2,387,400, so K + q / T at T ~ 8,500 is 2,651 < 3,883: the floor.
    Twelve later rounds, each the pointer chase 341 ns + 105 / 1,974 ns per B/ns of the
    112 x 65,609 = 7,348,208 B a trip the SMs draw: T = 3,883 + 12 x 341 + 12 x (105 / 1,974) x
    7,348,208 / T = 7,975 + 4,690,350 / T, T^2 - 7,975 T - 4,690,350 = 0,
    T = (7,975 + sqrt(63,600,625 + 18,761,400)) / 2 = (7,975 + 9,075.35) / 2 = 8,525.2 ns
    (drawn 7,348,208 / 8,525.2 = 862 B/ns: the chase's first segment). With one round the trip
    was the floor, 3,883 ns."""
    f = load_trip.LoadTrip(122, 128.7)
    d = load_trip.DramRoundTrip(205, 0.3249, 557)
    chase = load_rounds.RoundFacts(341, ((0.0, 0.0), (1974.0, 105.0), (3086.0, 214.0), (3898.0, 543.0)))
    trip = dict(lat=200, first_reader=1, loaded_bytes=73_728, transfer_ns=1734, dram_bytes=65_609, r=1,
                active_units=112, compute_ns=1470)
    c = 12 * 105 / 1974 * 112 * 65_609
    want = (122 + 1470 + 557 + 1734 + 12 * 341 + math.sqrt((122 + 1470 + 557 + 1734 + 12 * 341) ** 2 + 4 * c)) / 2
    assert want == pytest.approx(8525.2, abs=0.1)
    assert load_rounds.cycle_ns(13, **trip, f=f, d=d, rf=chase) == pytest.approx(want, abs=1e-6)
    assert load_rounds.cycle_ns(1, **trip, f=f, d=d, rf=chase) == pytest.approx(3883, abs=1e-9)


def test_the_breakdown_names_the_spilling_compiles_rounds():
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    a = analyze(parse_file("kernels/gemm.tile"), None, load_profile("h200_sxm"),
                dict(M=32, N=28672, K=8192, BM=32, BN=256, BK=128, WARPS=2, STAGES=1, GROUP_M=1),
                resources=dict(threads=64, regs=255, spills=40, smem=73728))
    line = next(t.detail for t in a.terms if t.name == "unpipelined trip")
    assert "13 dependent rounds" in line


def test_a_wave_started_together_waits_dram_for_its_co_readers_hits():
    # lockstep_share: p' = p + (1 - p) (1 - drifted). One wave (drifted 0): every "hit" is a hit
    # under the co-reader's pending miss, p' = 1. 1,024 CTAs on 264 slots: drifted = 1 - 264 /
    # 1,024 = 0.7421875, p' = 0.5 + 0.5 x 0.2578125 = 0.62890625. A trip that always misses
    # (p = 1) stays 1.
    assert load_rounds.lockstep_share(0.508, 0) == pytest.approx(1, abs=1e-12)
    assert load_rounds.lockstep_share(0.5, 1 - 264 / 1024) == pytest.approx(0.62890625, abs=1e-12)
    assert load_rounds.lockstep_share(1, 0.9) == pytest.approx(1, abs=1e-12)
    got = load_rounds.lockstep_share(np.array([0.5, 0.5]), np.array([0.0, 1.0]))
    assert list(got) == [1.0, 0.5]
    # the breakdown's clause, and none where nothing is added
    assert load_rounds.describe_lockstep(0.5, 1 - 264 / 1024).endswith("= 0.629")
    assert load_rounds.describe_lockstep(1, 0) == "" and load_rounds.describe_lockstep(0.5, 1) == ""


def test_the_one_wave_16_row_trip_waits_dram_in_every_round():
    """issue15 run6 gemm_bf16 32x8192x8192, 16x128x64 on 2 warps, 1 stage (measured 614.0 us):
    2 x 64 = 128 CTAs, one wave (drifted 0). Its 9 rounds' later waits were 0.508 x DRAM +
    0.492 x L2 (the second tile row reads B's tiles 'from L2' in the same step as the first):
    now the DRAM chase's latency at p' = 1."""
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    a = analyze(parse_file("kernels/gemm.tile"), None, load_profile("h200_sxm"),
                dict(M=32, N=8192, K=8192, BM=16, BN=128, BK=64, WARPS=2, STAGES=1, GROUP_M=8),
                resources=dict(threads=64, regs=96, spills=0, smem=18432))
    line = next(t.detail for t in a.terms if t.name == "unpipelined trip")
    assert "with the chance 100.0% that the trip waits for DRAM" in line
    assert "x 1.000 of CTAs started together" in line
    assert "1.000 x (DRAM 341.00 ns" in line and "0.000 x L2 200.00 ns" in line
