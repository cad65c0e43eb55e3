"""Memory-level parallelism (tfx.analysis.memory_parallelism): one SM's DRAM ceiling, the idle
DRAM round trip under the loaded line, and a trip waiting for its slowest load.

H200 profile facts (hw_profiles/h200_sxm.toml [pipeline], calibration/h200/measured/mlp):
sm_dram_bandwidth_per_cycle 41 B x 1.98 GHz = 81.18 B/ns; dram_round_trip_idle 557 ns; the
loaded line 205 ns + (1582 - 205) / 4238.4 = 0.324887 ns per B/ns drawn; the trip's chain
242 / 1.98 = 122.2222 ns; the SM's L2 port 65 x 1.98 = 128.7 B/ns; DRAM 4800 x 0.883 = 4238.4
B/ns for the device.
"""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import load_trip, memory_parallelism
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")
KERNELS = Path(__file__).resolve().parent.parent / "kernels"
CHAIN = 242 / 1.98
PORT = 65 * 1.98
SM_DRAM = 41 * 1.98


def test_one_sms_dram_ceiling_binds_only_when_few_sms_pull():
    """16 SMs would share 4238.4 / 16 = 264.9 B/ns each, above one SM's 81.18: the ceiling
    binds. 132 SMs share 4238.4 / 132 = 32.1091 B/ns each, below it: the share binds."""
    m = Machine(H200, "cta")
    assert memory_parallelism.sm_dram_bytes_per_ns(m) == pytest.approx(81.18)
    assert memory_parallelism.sm_dram_share(m, 16) == pytest.approx(81.18)
    assert memory_parallelism.sm_dram_share(m, 132) == pytest.approx(32.1091, rel=1e-5)
    shares = memory_parallelism.sm_dram_share(m, np.array([16, 132]))
    assert shares == pytest.approx([81.18, 32.1091], rel=1e-5)
    assert "81.18 GB/s" in memory_parallelism.describe_share(m, 16)   # 81.18 B/ns, four digits
    assert memory_parallelism.describe_share(m, 132) is None


def test_a_profile_without_the_fact_keeps_the_plain_share():
    """A100 states no SM DRAM ceiling: the share is the device's bandwidth over the SMs."""
    a100 = Machine(load_profile("a100_sxm"), "cta")
    assert memory_parallelism.sm_dram_bytes_per_ns(a100) is None
    assert memory_parallelism.sm_dram_share(a100, 8) == pytest.approx(a100.dram_bw_device / 8)


def test_a_trip_with_any_dram_bytes_waits_the_dram_round_trip():
    """The share of the round trip spent on DRAM is 1 as soon as one byte misses, 0 when all hit."""
    assert memory_parallelism.trip_miss(8448, 40960) == 1.0
    assert memory_parallelism.trip_miss(0, 40960) == 0.0
    assert memory_parallelism.trip_miss(np.array([0, 1, 5000]), np.array([10, 10, 10])).tolist() == [0, 1, 1]


def test_idle_round_trip_is_the_floor_of_the_loaded_line():
    """One CTA on one SM, 10,240 B a trip all from DRAM, 3 stages, fetched at the SM's
    ceiling: 10,240 / 81.18 = 126.1394 ns (over the port's 79.5649).
    The loaded line alone holds the tile's bytes through the port only (the line was fitted with
    bytes / port subtracted; the rest of the transfer is in its queueing):
    K = 122.2222 + 205 + 10,240 / 128.7 = 79.5649 = 406.7871 ns,
    q = 0.324887 x 1 x 1 x 10,240 = 3326.84, T = (406.7871 + sqrt(406.7871^2 + 8 x 3326.84)) / 4
    = (406.7871 + sqrt(165,475.75 + 26,614.72 = 192,090.47) = 438.2813) / 4 = 211.2671 ns,
    a round trip of 2 x 211.2671 = 422.5342 ns: below the idle one. The idle floor keeps the
    transfer: 122.2222 + 660 + max(126.1394, 79.5649) = 908.3617 ns (measured 1 SM at 3 stages:
    2 x 401.25 = 802.5 ns for 16x64x64). At 132 SMs (transfer 50 ns, under the port's 79.5649:
    K = 406.7871 either way) q = 3326.84 x 132 = 439,142.92, T = (406.7871 + sqrt(165,475.75
    + 8 x 439,142.92 = 3,678,619.12) = 1,917.9727) / 4 = 581.1900 ns: the loaded line
    2 x 581.1900 = 1162.38 ns (tests/test_load_trip.py) stays over the floor
    122.2222 + 660 + max(50, 79.5649) = 861.7871."""
    f = load_trip.LoadTrip(CHAIN, PORT)
    slope = (1582 - 205) / 4238.4
    d = load_trip.DramRoundTrip(205, slope, 660)
    fetch = 10240 / SM_DRAM
    assert load_trip.loaded_round_trip_ns(200, 1, 10240, fetch, 10240, 1, 1, 3, f, d) == pytest.approx(908.3617, abs=1e-3)
    line_only = load_trip.DramRoundTrip(205, slope)
    assert load_trip.loaded_round_trip_ns(200, 1, 10240, fetch, 10240, 1, 1, 3, f, line_only) == pytest.approx(
        422.5342, abs=1e-3)
    assert load_trip.loaded_round_trip_ns(200, 1, 10240, 50, 10240, 1, 132, 3, f, d) == pytest.approx(1162.38, abs=0.05)
    arr = load_trip.loaded_round_trip_ns(200, 1, 10240, np.array([fetch, 50]), 10240, 1, np.array([1, 132]), 3, f, d)
    assert arr == pytest.approx([908.3617, 1162.38], abs=0.05)


def test_the_idle_floor_takes_the_tile_at_the_sms_own_rate():
    """calibration/h200/measured/kloop, dram row 128x128x64, 8 warps, 2 stages: 132 CTAs, one a
    SM, 32,768 B a trip all from DRAM, one tile in flight, measured 1,388.0 ns a trip.
    The loaded line: K = 122.2222 + 205 + 32,768 / 128.7 (= 254.6076) = 581.8298 ns,
    q = 0.3248867 x 132 x 32,768 = 1,405,257.35, S - 1 = 1:
    T = (581.8298 + sqrt(581.8298^2 + 4 x 1,405,257.35)) / 2
      = (581.8298 + sqrt(338,525.96 + 5,621,029.40 = 5,959,555.36) = 2,441.2201) / 2 = 1,511.5249 ns
    (2,861.6 B/ns drawn; +8.9%). The idle floor, one tile in flight (pipeline.dram_round_trip_idle_
    one_tile 527 ns, load_trip.one_tile_floor), with the tile at the SM's share of the device,
    4238.4 / 132 = 32.1091 B/ns: 122.2222 + 527 + 32,768 / 32.1091 (= 1,020.5210) = 1,669.7432
    ns, over the line (+20.3%); at the SM's own ceiling 81.18 B/ns: 122.2222 + 527 + 32,768 /
    81.18 (= 403.6462) = 1,052.8684, under it: the line's 1,511.5249 holds.
    The model's transfer for that floor (performance._own_transfer_ns): DRAM bytes at the
    ceiling, L2 bytes at the SM's L2 share 11,000 / 132 = 83.3333 B/ns (32,768 / 83.3333 =
    393.2160): max(403.6462, 393.2160) = 403.6462; the copy engine's transfer at the shares
    (performance._transfer_ns) stays max(1,020.5210, 393.2160) = 1,020.5210. A profile without
    the ceiling (A100) keeps the share."""
    from tfx.analysis.performance import Demand, _own_transfer_ns, _transfer_ns
    h = Machine(H200, "cta")
    f, d = load_trip.facts(h), load_trip.dram_facts(h)
    assert memory_parallelism.own_dram_rate(h, 132) == pytest.approx(81.18)
    a100 = Machine(load_profile("a100_sxm"), "cta")
    assert memory_parallelism.own_dram_rate(a100, 8) == pytest.approx(a100.dram_bw_device / 8)
    tile = Demand(dram=32768, l2=32768, global_loads=32768)
    assert _own_transfer_ns(tile, h, 132) == pytest.approx(403.6462, abs=1e-3)
    assert _transfer_ns(tile, h, 1, 132) == pytest.approx(1020.5210, abs=1e-3)
    own = load_trip.loaded_round_trip_ns(200, 1, 32768, _own_transfer_ns(tile, h, 132), 32768, 1, 132, 2, f, d)
    assert own == pytest.approx(1511.5249, abs=1e-3)
    share = load_trip.loaded_round_trip_ns(200, 1, 32768, _transfer_ns(tile, h, 1, 132), 32768, 1, 132, 2, f, d)
    assert share == pytest.approx(1669.7432, abs=1e-3)


def test_profile_idle_reproduces_its_calibration_row():
    """The profile's idle round trip is derived with the model's own transfer: one CTA alone on
    one SM at 3 stages, 16x64x64 bf16, 10,240 B a trip all from DRAM (calibration/h200/measured/
    mlp, measured 401.25 ns a trip: 2 tiles in flight, a round trip of 2 x 401.25 = 802.5 ns).
    The model: chain 122.2222 + idle 557 + the tile at the SM's DRAM ceiling 10,240 / 81.18 =
    126.1394 = 805.3616 ns (0.4% over; with the first derivation's 660 it was 908.3617, 13% over:
    that idle had subtracted the tile at the port's 128.7 B/ns, 79.5649 ns, and so held the
    46.57 ns the DRAM ceiling adds twice)."""
    h = Machine(H200, "cta")
    d = load_trip.dram_facts(h)
    f = load_trip.facts(h)
    assert d.idle_ns == 557
    rt = load_trip.loaded_round_trip_ns(200, 1, 10240, 10240 / SM_DRAM, 10240, 1, 1, 3, f, d)
    assert rt == pytest.approx(122.2222 + 557 + 126.1394, abs=1e-3)
    assert rt / 2 == pytest.approx(401.25, rel=0.004)


def test_breakdown_names_the_dram_round_trip_and_the_sm_ceiling():
    """gqa_decode at B=1, HKV=8, SPLITS=2: 16 CTAs stream the KV cache, one per SM: each SM
    gets 81.18 B/ns, not 4238.4 / 16 = 264.9; the whole grid 16 x 81.18 = 1299 B/ns."""
    a = analyze(parse_file(str(KERNELS / "gqa_decode.tile")), None, H200,
                {"B": 1, "HQ": 32, "HKV": 8, "SKV": 131072, "SPLITS": 2, "BLOCK_N": 128, "WARPS": 4, "STAGES": 3})
    share = [t for t in a.terms if t.name == "sm dram share"]
    # printed by the one unit policy, four significant digits: 264.9 GB/s, 1,298.9 B/ns = 1.299 TB/s
    assert share and "16 SMs pulling would be 264.9 GB/s" in share[0].detail
    assert "reaches 1.299 TB/s" in share[0].detail
    g = analyze(parse_file(str(KERNELS / "gemm.tile")), None, H200,
                {"M": 128, "N": 4096, "K": 4096, "BM": 128, "BN": 32, "BK": 128, "WARPS": 8, "STAGES": 5})
    mp = [t for t in g.terms if t.name == "memory parallelism"]
    # both branches named (the line with the bytes through the port, the idle one with the transfer).
    # gemm 128x4096x4096, BM 128 BN 32 BK 128, 5 stages: 128 CTAs, one a SM; a trip reads A's
    # [128, 128] (32,768 B, shared by the 128 CTAs: 256 B each from DRAM) and B's [128, 32]
    # (8,192 B from DRAM in 64-byte rows, under a line: x 4238.4 / 3200 = 10,850.3 B of time):
    # 40,960 B a trip, 8,448 from DRAM taking the time of 11,106.3. B is a weight stream (the
    # launch reads it once, its rows continued by CTA pn + 1: tests/test_weight_stream.py), 8,192 /
    # 8,448 = 0.969697 of the DRAM bytes, so the line is mixed toward stream_depth's: base 205 +
    # 0.969697 x 228 = 426.0909 ns, slope 0.324887 + 0.969697 x (0.104992 - 0.324887) = 0.111656
    # ns per B/ns. K = 122.2222 chain + 426.0909 + 40,960 / 128.7 (= 318.26, the port) = 866.5726;
    # q = 0.111656 x 128 x 11,106.3 = 158,731; S - 1 = 4:
    # T = (866.5726 + sqrt(866.5726^2 + 16 x 158,731)) / 8 = (866.5726 + sqrt(750,948 + 2,539,693))
    #   / 8 = (866.5726 + 1,814.01) / 8 = 335.07 ns; drawn 128 x 11,106.3 / 335.07 = 4,242.7 B/ns,
    # the loaded latency 426.09 + 0.111656 x 4,242.7 = 899.81, + 318.26 = 1,218.07; the idle floor
    # 557 + max(40,960 / (11,000 / 128 = 85.9375) = 476.6 L2 share, 318.3 port) = 1,033.6;
    # 122.22 + max(1,218.07, 1,033.6) = 1,340.29 = 4 x 335.07. (On kloop's line alone: 205 +
    # 0.324887 x 3,306.6 = 1,279.3, a round trip of 1,719.7 = 4 x 429.93.)
    # Printed by the one unit policy (times ns/us two decimals, bytes and rates four digits):
    # 122.22 ns, 426.09 ns, 0.1117, 4,242.7 B/ns = 4.243 TB/s, 899.81 ns, 40,960 B = 40.96 KB,
    # 1,218.07 = 1.22 us, 318.26 ns, 1,033.6 = 1.03 us, 1,340.29 = 1.34 us.
    assert mp and ("122.22 ns of chain + max(426.09 ns + 0.1117 ns per GB/s x 4.243 TB/s drawn = 899.81 ns + "
                   "40.96 KB / 128.7 GB/s = 1.22 us, idle 557.00 ns + max(") in mp[0].detail
    assert ", 318.26 ns) = 1.03 us) = 1.34 us" in mp[0].detail
    # unrounded: T = 335.07314 -> 335.07
    assert "4 tiles in flight: a round takes at least 335.07 ns" in mp[0].detail


def test_reads_in_runs_under_a_line_take_longer_from_dram():
    """gemm.tile 32x28672x4096, BM=32 BN=32 BK=64, 4 warps, 4 stages (6 CTAs per SM by the
    estimate: a wave of 792 of the 896 CTAs). B's tile [64, 32] of B[4096, 28672] is 64 rows
    of 32 bf16 = 64 B each, under a 128-byte line: its 4,096 B a trip, all from DRAM (M = BM:
    read once), take 4238.4 / 3200 = 1.3245x their time at memory.gmem.bandwidth_short_runs
    3.2 TB/s: 5,425.2 B of whole lines. A's tile [32, 64] has rows of 128 B: factor 1; it is
    shared by the wave's 792 CTAs, 4,096 / 792 = 5.17 B from DRAM. Trip: 4,096 + 5.17 = 4,101 B
    from DRAM taking the time of 5,425.2 + 5.17 = 5,430 B."""
    g = analyze(parse_file(str(KERNELS / "gemm.tile")), None, H200,
                {"M": 32, "N": 28672, "K": 4096, "BM": 32, "BN": 32, "BK": 64, "WARPS": 4, "STAGES": 4})
    mp = [t for t in g.terms if t.name == "memory parallelism"]
    # four significant digits: 4.101 KB, 5,430 B = 5.43 KB; 4,238.4 B/ns = 4.238 TB/s
    assert mp and "4.101 KB take the time of 5.43 KB of whole lines" in mp[0].detail
    assert "come at 3.2 TB/s, not 4.238 TB/s" in mp[0].detail
    # BK=128: B's rows stay 64 B (BN=32); BN=64: 128-byte rows, no short runs
    wide = analyze(parse_file(str(KERNELS / "gemm.tile")), None, H200,
                   {"M": 32, "N": 28672, "K": 4096, "BM": 32, "BN": 64, "BK": 64, "WARPS": 4, "STAGES": 4})
    assert not any("runs under 128 B" in t.detail for t in wide.terms)


def test_a_tail_wave_draws_dram_with_its_own_ctas():
    """A tail wave of t CTAs on 132 SMs holds ceil(t / 132) on its busiest SM but draws DRAM
    bandwidth with t CTAs: 224 CTAs are 224 / 132 = 1.69697 a SM, not 2; a full wave of
    264 = 132 x 2 is 2; never more than the r the SM holds."""
    assert memory_parallelism.drawing_per_unit(224, 2, 132) == pytest.approx(1.69697, abs=1e-5)
    assert memory_parallelism.drawing_per_unit(264, 2, 132) == 2
    assert memory_parallelism.drawing_per_unit(None, 3, 132) == 3
    assert memory_parallelism.drawing_per_unit(np.array([224, 600]), 2, 132) == pytest.approx([1.69697, 2], abs=1e-5)
    assert memory_parallelism.drawing_text(2, 132) == "132 SMs x 2 CTAs"
    assert memory_parallelism.drawing_text(224 / 132, 132) == "224 CTAs on 132 SMs"


def test_the_loaded_round_trip_of_a_tail_wave():
    """12,288 B a trip of which 4,133 B from DRAM, transfer 147.5 ns, 4 stages (3 in flight),
    132 SMs. K holds the bytes through the port only (the 147.5 ns transfer at the DRAM share is
    in the line's queueing): K = 122.2222 + 205 + 12,288 / 128.7 = 95.4779 = 422.7001 ns.
    With the 224 CTAs of a tail wave: q = 0.3248867 x 224 x 4,133 = 300,777.55,
    T = (422.7001 + sqrt(422.7001^2 + 12 x 300,777.55)) / 6 = (422.7001 + sqrt(178,675.36
    + 3,609,330.65 = 3,788,006.01) = 1,946.2800) / 6 = 394.8300 ns, a round trip of
    3 x 394.8300 = 1,184.4901 ns (224 x 4,133 / 394.83 = 2,344.8 B/ns drawn). Counted as 2 CTAs
    on every SM (264): q = 0.3248867 x 264 x 4,133 = 354,487.83, T = (422.7001 + sqrt(178,675.36
    + 4,253,853.98 = 4,432,529.34) = 2,105.3573) / 6 = 421.3429 ns, 1,264.0287 ns. Both over the
    idle floor, which keeps the transfer: 122.2222 + 660 + max(147.5, 95.4779) = 929.72 ns."""
    f = load_trip.LoadTrip(CHAIN, PORT)
    d = load_trip.DramRoundTrip(205, (1582 - 205) / 4238.4, 660)
    tail = load_trip.loaded_round_trip_ns(200, 1, 12288, 147.5, 4133, 224 / 132, 132, 4, f, d)
    assert tail == pytest.approx(1184.4901, abs=1e-3)
    assert load_trip.loaded_round_trip_ns(200, 1, 12288, 147.5, 4133, 2, 132, 4, f, d) == pytest.approx(1264.0287, abs=1e-3)


def test_breakdown_counts_the_tail_waves_ctas():
    """gemm.tile 128x14336x4096 at 64x128x32, 4 warps, 4 stages (issue 15's fastest measured
    configuration of that shape): 2 x 112 = 224 CTAs, under one wave; the memory-parallelism
    line draws DRAM with those 224, not 132 x 2. A trip's DRAM bytes: B's 32 x 128 x 2 = 8,192 B
    tile is read by the 2 CTAs of its column, 4,096 B from DRAM; A's 64 x 32 x 2 = 4,096 B tile
    by the 112 CTAs of its row, 4,096 / 112 = 36.6 B: 4,132.6 = 4,133 B. A's rows are 64-B runs
    advancing with k only, so its bytes keep DRAM busy as 36.57 x 4,238.4 / 2,120 = 73.12 B of
    whole lines (tfx.analysis.strided_runs; B's 256-B rows are whole lines): the queue draws
    4,096 + 73.12 = 4,169.1 = 4,169 B a trip."""
    g = analyze(parse_file(str(KERNELS / "gemm.tile")), None, H200,
                {"M": 128, "N": 14336, "K": 4096, "BM": 64, "BN": 128, "BK": 32, "WARPS": 4, "STAGES": 4},
                resources={"threads": 128, "regs": 114, "smem": 49152, "spills": 0})
    mp = [t for t in g.terms if t.name == "memory parallelism"]
    # four significant digits: 4.133 KB, 12.29 KB, 4.169 KB
    assert mp and "4.133 KB of the trip's 12.29 KB come from DRAM" in mp[0].detail
    assert "224 CTAs on 132 SMs x 4.169 KB of whole-line DRAM time" in mp[0].detail


def test_the_breakdown_prints_the_round_trip_priced_with_the_trips_miss_share():
    """A 2-stage trip of 16,384 B, all of it counted by the queue as DRAM bytes, 1 CTA a SM on
    132 SMs, where 25% of the trips find every tile left in L2 by the previous wave (trip_miss
    = 0.75) and wait the L2's 200 ns instead; the idle floor's transfer 200 ns.
    K = 122.2222 + 0.75 x 205 + 0.25 x 200 + 16,384 / 128.7 (= 127.3038)
      = 122.2222 + 153.75 + 50 + 127.3038 = 453.2760 ns,
    q = 0.75 x 0.3248867 x 132 x 16,384 = 526,971.51,
    T = (453.2760 + sqrt(453.2760^2 (= 205,459.16) + 4 x 526,971.51 (= 2,107,886.02)
      = 2,313,345.18) (= 1,520.9685)) / 2 = 987.1223 ns;
    the idle floor, one tile in flight (2 stages: pipeline.dram_round_trip_idle_one_tile, 527 ns,
    load_trip.one_tile_floor) 122.2222 + 0.75 x 527 + 0.25 x 200 + max(200, 127.3038) = 767.4722, under it.
    The line renders that value: drawn 132 x 16,384 / 987.1223 = 2,190.90 B/ns (2.191 TB/s),
    205 + 0.3248867 x 2,190.90 = 916.79 ns, 0.75 x 916.79 + 0.25 x 200 = 737.60 ns, + 127.30 =
    864.90 ns; idle branch 0.75 x 527 + 0.25 x 200 + 200 = 645.25 ns; 122.22 + 864.90 = 987.12 ns.
    Solved with miss = 1 (what the line printed before it rendered the priced trip) it would be
    K = 122.2222 + 205 + 127.3038 = 454.5260, q = 702,628.68:
    (454.5260 + sqrt(206,593.88 + 2,810,514.71 = 3,017,108.59) (= 1,736.9826)) / 2 = 1,095.7543."""
    f, d = load_trip.facts(Machine(H200, "cta")), load_trip.dram_facts(Machine(H200, "cta"))
    t = load_trip.loaded_trip(200, memory_parallelism.trip_miss(16384, 16384, 0.25), 16384, 200, 16384, 1, 132, 2,
                              f, d)
    assert t.miss == 0.75
    assert t.ns == pytest.approx(987.1223, abs=1e-3)
    assert load_trip.loaded_round_trip_ns(200, 1.0, 16384, 200, 16384, 1, 132, 2, f, d) == pytest.approx(
        1095.7543, abs=1e-3)
    text = memory_parallelism.describe_round_trip(16384, t, f, d)
    assert ("122.22 ns of chain + max(0.7500 x (205.00 ns + 0.3249 ns per GB/s x 2.191 TB/s drawn = 916.79 ns) "
            "+ 0.2500 x 200.00 ns of L2 = 737.60 ns + 16.38 KB / 128.7 GB/s = 864.90 ns, "
            "0.7500 x idle with one tile in flight 527.00 ns + 0.2500 x 200.00 ns of L2 + max(200.00 ns, 127.30 ns) "
            "= 645.25 ns) = 987.12 ns") in text
    assert "1 tile in flight: a round takes at least 987.12 ns" in text
    # every trip waiting DRAM keeps the unmixed text: 454.5260 + 0.3248867 x 132 x 16,384 /
    # 1,095.7543 (= 1,973.70 B/ns) ... = 1,095.75 ns
    whole = load_trip.loaded_trip(200, 1.0, 16384, 200, 16384, 1, 132, 2, f, d)
    assert "122.22 ns of chain + max(205.00 ns + 0.3249 ns per GB/s x 1.974 TB/s drawn" in \
        memory_parallelism.describe_round_trip(16384, whole, f, d)
    assert "= 1.10 us (solved" in memory_parallelism.describe_round_trip(16384, whole, f, d)
    # that trip draws 1,973.70 B/ns: past a DRAM of 1,500 B/ns the line says DRAM's bandwidth bounds the round above
    # it; under the H200's read rate (4,514 B/ns, or within 0.5% past a rate) it says nothing
    past = memory_parallelism.describe_round_trip(16384, whole, f, d, 1500.0)
    assert past.endswith("a round takes at least 1.10 us; that draw passes the 1.5 TB/s DRAM delivers: DRAM's "
                         "bandwidth bounds the round above this")
    assert "DRAM delivers" not in memory_parallelism.describe_round_trip(16384, whole, f, d, 4514.0)
    assert "DRAM delivers" not in memory_parallelism.describe_round_trip(16384, whole, f, d, 1970.0)


def test_the_breakdown_renders_the_batch_it_shows():
    """_priced_trip picks the priced trip of the batch whose draw the breakdown shows (the full
    wave's 132 SMs x 2 CTAs, not the tail's 5 CTAs on 5 SMs), None where none was priced."""
    from tfx.analysis.performance import LaunchMiss, _priced_trip

    class Loop:
        id = 7
    full = load_trip.LoadedTrip(200, 1.0, 16384, 200, 16384, 2, 132, 2, 1000.0)
    tail = load_trip.LoadedTrip(200, 1.0, 16384, 200, 16384, 1, 5, 2, 800.0)
    miss = LaunchMiss.of({}, dram_trips={7: [full, tail]})
    assert _priced_trip(miss, Loop, 2, 132) is full
    assert _priced_trip(miss, Loop, 1, 5) is tail
    assert _priced_trip(miss, Loop, 1, 132) is None
    assert _priced_trip(LaunchMiss.of({}), Loop, 2, 132) is None


def test_a_decode_tail_shares_dram_among_its_ctas():
    """192 CTAs on 132 SMs (2 on 60 SMs, 1 on 72) draw 192 / 132 = 1.454545 a SM: the busiest
    SM's 2 CTAs draw 2 / 1.454545 = 1.375 even SM shares, 4238.4 / 132 x 1.375 = 32.10909 x
    1.375 = 44.15 B/ns (= 2 x 4238.4 / 192); a whole wave (draw = r) and no draw keep the even
    share; on 16 SMs the SM's own ceiling 81.18 still binds (264.9 x 1.375 over it)."""
    m = Machine(H200, "cta")
    assert memory_parallelism.cta_share_weight(2, 192 / 132) == pytest.approx(1.375)
    assert memory_parallelism.cta_share_weight(2, 2) == 1
    assert memory_parallelism.cta_share_weight(3, None) == 1
    assert memory_parallelism.cta_share_weight(np.array([2, 2]), np.array([192 / 132, 2])) == pytest.approx([1.375, 1])
    assert memory_parallelism.sm_dram_share(m, 132, 1.375) == pytest.approx(44.15, rel=1e-9)
    assert memory_parallelism.sm_dram_share(m, 16, 1.375) == pytest.approx(81.18)
    # the clause prices the decode trip's read-only stream (read_stream_share): 4800 x 0.9404 =
    # 4,513.92 B/ns, 2 x 4,513.92 / 192 = 47.02 B/ns against the even 4,513.92 / 132 = 34.196
    assert memory_parallelism.describe_cta_share(m, 2, 192, 132) == (
        "; DRAM serves the 192 CTAs drawing, not the 132 SMs: the busiest SM's 2 CTAs draw 2 x 4.514 TB/s / 192 "
        "= 47.02 GB/s, not 34.2 GB/s (calibration/h200/measured/decode_timeline_s17)")
    assert memory_parallelism.describe_cta_share(m, 2, 264, 132) == ""
    # a packed tail (decode_trip.packed_tail): 116 CTAs, 3 a SM on 39 SMs: 3 x 4,513.92 / 116 =
    # 116.7 B/ns and the even 4,513.92 / 39 = 115.7 are both over one SM's 81.18: no clause;
    # 200 CTAs, 4 on the busiest of 132 SMs: 4 x 4,513.92 / 200 = 90.28 over 81.18, the even
    # 34.2 under it
    assert memory_parallelism.describe_cta_share(m, 3, 116, 39) == ""
    assert memory_parallelism.describe_cta_share(m, 4, 200, 132) == (
        "; DRAM serves the 200 CTAs drawing, not the 132 SMs: the busiest SM's 4 CTAs draw 4 x 4.514 TB/s / 200, "
        "at most one SM's 81.18 GB/s, not 34.2 GB/s (calibration/h200/measured/decode_timeline_s17)")


def test_run26_b24_split_launch_streams_at_its_ctas_share(monkeypatch):
    """run26 B24 HQ32 HKV8 SKV16384 SPLITS1 BLOCK_N64 4 warps 3 stages (72 registers, 71,680 B
    of shared memory as compiled: 3 CTAs a SM): 24 x 8 = 192 CTAs under one wave, 2 on the
    busiest SM. Each of its 16,384 / 64 = 256 trips reads K's and V's 64 x 128 x 2 B tiles,
    32,768 B, all from DRAM; DRAM binds the trip (the round's 1.26 us is under it). K and V are a
    read-only stream: DRAM serves it at 4800 x 0.9404 = 4,513.92 B/ns (read_stream_share), and
    the busiest SM's 2 CTAs draw 2 x 4,513.92 / 192 = 47.02 B/ns of it: 2 x 32,768 / 47.02 =
    1,393.790 ns a trip, 256 trips 356,810.208 ns, after the pipeline's fill (one DRAM latency,
    700 ns, and a CTA's tile at its share, 1,393.790 / 2 = 696.895 ns): 358,207.103 ns (the
    launch measured 381.9 us); at the copy's rate, 4,238.4 B/ns (44.15 B/ns for the 2 CTAs),
    381,447.089 ns; at the SM's even share of it 2 x 32,768 / 32.10909 x 256 = 522,506.7 ns."""
    from tests.test_decode_packed_tail import _loop_calls
    _, calls = _loop_calls(monkeypatch, dict(B=24, HQ=32, HKV=8, SKV=16384, D=128, SPLITS=1, BLOCK_N=64, WARPS=4,
                                             STAGES=3), {"regs": 72, "smem": 71680})
    tail = [c for c in calls if c[0] == 2 and c[1] == 132 and c[2] == pytest.approx(192 / 132)]
    assert tail and tail[-1][3] == pytest.approx(358207.103, abs=1e-2)


def test_a_tail_after_full_waves_shares_dram_among_its_ctas():
    """gqa_decode's defaults (B8 HQ64 HKV8 SKV32768 SPLITS16 BLOCK_N64, 4 warps, 3 stages:
    8 x 8 x 16 = 1,024 CTAs at 2 a SM, 3 full waves of 264 and a tail of 232): once they run, the
    tail's CTAs stream at one rate wherever they sit (each keeps S - 1 tiles in flight through
    the same loaded round trip), so DRAM serves the 232 CTAs drawing, 232 / 132 = 1.7576 a SM,
    and the busiest SM's 2 CTAs draw 2 x 4,513.92 / 232 = 38.91 B/ns of DRAM's read-only rate,
    not the even 4,513.92 / 132 = 34.2 (session 29: run49 B19 SPLITS8 and run50 B21 SPLITS4,
    1.7-3.1-wave launches at 3 a SM, ran at the device's rate, +9..+15% at the SMs' shares). 192
    CTAs (run26 B24, SPLITS1, 3 a SM) are under one wave: 2 x 4,513.92 / 192 = 47.02 B/ns."""
    gqa = parse_file(str(KERNELS / "gqa_decode.tile"))
    full = analyze(gqa, None, H200, dict(B=8, HQ=64, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=64, WARPS=4,
                                         STAGES=3), resources={"regs": 108, "smem": 100352}, check=False)
    tails = [t.detail for t in full.terms if t.name == "tail wave"]
    assert tails[0].startswith("232 CTAs in the last wave")
    assert "the busiest SM's 2 CTAs draw 2 x 4.514 TB/s / 232 = 38.91 GB/s, not 34.2 GB/s" in tails[0]
    one = analyze(gqa, None, H200, dict(B=24, HQ=32, HKV=8, SKV=16384, D=128, SPLITS=1, BLOCK_N=64, WARPS=4,
                                        STAGES=3), resources={"regs": 72, "smem": 71680}, check=False)
    tails = [t.detail for t in one.terms if t.name == "tail wave"]
    assert "the busiest SM's 2 CTAs draw 2 x 4.514 TB/s / 192 = 47.02 GB/s, not 34.2 GB/s" in tails[0]


def test_the_tail_after_full_waves_streams_at_its_ctas_share(monkeypatch):
    """The loop of gqa_decode's defaults (test above), priced for its tail: each CTA's split
    of 32,768 / 16 = 2,048 keys is 2,048 / 64 = 32 trips of K's and V's 64 x 128 x 2 B tiles,
    32,768 B, all from DRAM. The busiest SM's 2 CTAs at 2 x 4,513.92 / 232 = 38.91310 B/ns: 2 x
    32,768 / 38.91310 = 1,684.163 ns a trip, 32 trips 53,893.209 ns, after the pipeline's fill
    (700 ns and a CTA's tile, 1,684.163 / 2): 55,435.290 ns. A full wave (2 a SM on 132 SMs)
    keeps the even share 34.19636: 2 x 32,768 / 34.19636 = 1,916.461 ns, 32 x 1,916.461 + 700 +
    958.231 = 62,984.985 ns."""
    from tests.test_decode_packed_tail import _loop_calls
    _, calls = _loop_calls(monkeypatch, dict(B=8, HQ=64, HKV=8, SKV=32768, D=128, SPLITS=16, BLOCK_N=64, WARPS=4,
                                             STAGES=3), {"regs": 108, "smem": 100352})
    tail = [c for c in calls if c[0] == 2 and c[2] == pytest.approx(232 / 132)]
    full = [c for c in calls if c[0] == 2 and c[2] == 2]
    assert tail and tail[-1][3] == pytest.approx(55435.290, abs=1e-2)
    assert full and full[-1][3] == pytest.approx(62984.985, abs=1e-2)


def test_a_read_only_stream_shares_dram_at_its_own_rate():
    """DRAM's read-only rate (memory.gmem.read_efficiency, calibration/h200/measured/
    latency_read_s16: 528 CTAs reading saturate at 4,514 GB/s) is 4800 x 0.9404 = 4,513.92 B/ns,
    a copy's 4800 x 0.883 = 4,238.4: one SM of 132 gets 4,513.92 / 132 = 34.19636 B/ns (the
    copy's 32.10909), 1.375 shares of it 47.02; on 16 SMs one SM's own ceiling 81.18 binds either
    way; a profile without the fact keeps the copy's share."""
    m = Machine(H200, "cta")
    assert m.dram_read_bw_device == pytest.approx(4513.92)
    assert memory_parallelism.read_stream_share(m, 132) == pytest.approx(34.19636, rel=1e-6)
    assert memory_parallelism.read_stream_share(m, 132, 1.375) == pytest.approx(47.02, rel=1e-9)
    assert memory_parallelism.read_stream_share(m, 16) == pytest.approx(81.18)
    assert memory_parallelism.read_stream_share(m, np.array([132, 16])) == pytest.approx([34.19636, 81.18], rel=1e-6)
    assert memory_parallelism.describe_read_stream(m) == (
        "; its K and V stream at DRAM's read-only rate 4.514 TB/s (4.8 TB/s x 0.9404), not a copy's 4.238 TB/s "
        "(calibration/h200/measured/latency_read_s16)")
    a100 = Machine(load_profile("a100_sxm"), "cta")
    assert a100.dram_read_bw_device is None
    assert memory_parallelism.read_stream_share(a100, 108) == memory_parallelism.sm_dram_share(a100, 108)
    assert memory_parallelism.describe_read_stream(a100) == ""
