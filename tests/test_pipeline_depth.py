"""A pipelined loop's prefetch waits behind a synchronous mma (Triton's software pipeliner).

Triton puts the prefetch of iteration i+S-1 after the body's compute (MatmulLoopPipeline.cpp,
the prefetch cluster made with schedule.clusters.newAtBack()). With a synchronous mma (MMAv2,
a CTA's mma rows not a multiple of 64) the load is issued only when the mma is done, so a trip
lasts max(mma, (mma + latency + fetch) / (S-1)); an asynchronous warpgroup mma (MMAv3, rows a
multiple of 64, warps a multiple of 4) lets the load go while it runs: max(mma, (latency +
fetch) / (S-1)). The tests take one CTA of kernels/gemm.tile at STAGES=2 and compare K=8192
with K=4096: 64 more trips, nothing else changes (one CTA, every tile read once: all misses).

H200 profile (hw_profiles/h200_sxm.toml): 4096 bf16 flop/cycle x 1.98 GHz = 8110.08 flop/ns
x 0.74 tensor efficiency = 6001.4592 flop/ns; DRAM 4.8 TB/s x 0.883 = 4238.4 B/ns for the one
active SM (L2 at 11,000 B/ns is faster). A GEMM k-loop's load waits the measured DRAM round trip
(tfx.analysis.load_trip.loaded_round_trip_ns), not the profile's estimated 700 ns latency: one SM
alone draws too little for the loaded line (205 ns + 0.3249 ns per B/ns drawn: under 500 ns
here) to reach the idle round trip, which binds; with one tile in flight (STAGES=2) it is the one measured so,
pipeline.dram_round_trip_idle_one_tile 527 ns (tfx.analysis.load_trip.one_tile_floor; the 3-5-stage rows'
pipeline.dram_round_trip_idle, 557 ns, holds the queue of the SM's own tiles): IDLE. A GEMM k-loop's load round
trip also holds the trip's chain, pipeline.load_trip_overhead 242 cycles / 1.98 GHz =
122.2222 ns, and its bytes cross the SM's L2 port at 65 B x 1.98 = 128.7 B/ns, slower than the
DRAM share (tfx.analysis.load_trip): CHAIN below. One SM alone brings DRAM bytes at most at
pipeline.sm_dram_bandwidth_per_cycle 41 B x 1.98 GHz = 81.18 B/ns (tfx.analysis.memory_parallelism),
slower than both the port and the device's 4238.4 B/ns: SM_DRAM below, the fetch of a tile.
"""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import load_trip, pipeline_depth

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

GEMM = Path(__file__).resolve().parent.parent / "kernels" / "gemm.tile"
CHAIN = 242 / 1.98          # ns: the trip's chain in each load's round trip
PORT = 65 * 1.98            # B/ns: the SM's L2 port
SM_DRAM = 41 * 1.98         # B/ns: one SM's DRAM ceiling
IDLE = 527                  # ns: the idle DRAM round trip of one tile in flight, beyond the chain and the fetch


def _extra_ns(bm, warps):
    m = parse_file(str(GEMM))
    prof = load_profile("h200_sxm")
    t = []
    for k in (4096, 8192):
        p = {"M": bm, "N": 64, "K": k, "BM": bm, "BN": 64, "BK": 64, "WARPS": warps, "STAGES": 2, "GROUP_M": 1}
        t.append(analyze(m, None, prof, p).metrics["performance.predicted_ns"])
    return t[1] - t[0]


def test_two_stage_synchronous_mma_pays_mma_latency_and_fetch_each_trip():
    """BM=32: MMAv2 (32 % 64 != 0), so the trip is mma + latency + fetch.

    mma.sync m16n8k16 with its 4 warps on N (tfx.analysis.mma_layout's warpsPerTileV2 on
    32 x 64: 2 row repetitions against 8 column ones): each warp 32 x 16, no padding. The warp
    mma's own rate (tfx.analysis.mma_layout.warp_mma, [warp_mma] measured): (32/16)(16/8)(64/16)
    = 16 mma.sync x 6 cycles = 96 cycles at 1.98 GHz x 0.907 = 1.79586 GHz: 53.4563 ns; one CTA's
    4 warps sit one on each sub-partition, so that is the CTA's mma (the warpgroup rate would
    give 262,144 flop / 6001.4592 = 43.68 ns).
    Fetch: A 32x64 + B 64x64 bf16 = 4096 + 8192 = 12,288 B / 81.18 (one SM's DRAM ceiling,
    slower than the port's 128.7 and the device's 4238.4) = 151.3673 ns. Trip: 53.4563 +
    122.2222 + 527 + 151.3673 = 854.0458 ns; 64 trips: 54,658.9 ns. (Without the waited mma:
    800.5895 ns a trip, 51,237.7 ns. The loaded line instead: 122.2222 + 205 + 12,288 / 128.7 =
    422.70 ns plus its queue of 0.3249 x 12,288 B per trip, T = (422.70 + sqrt(422.70^2 + 4 x
    3,992.2)) / 2 = 431.94 ns, under the idle round trip.)"""
    assert _extra_ns(32, 4) == pytest.approx(64 * (16 * 6 / (1.98 * 0.907) + CHAIN + IDLE + 12_288 / SM_DRAM),
                                             rel=1e-4)


def test_two_stage_async_warpgroup_mma_overlaps_the_next_load():
    """BM=64, 4 warps: MMAv3, the load overlaps the mma: the trip is max(mma, latency + fetch).

    mma 87.3604 ns as above (64 rows, no padding); fetch: 8192 + 8192 = 16,384 B / 81.18 (one
    SM's DRAM ceiling) = 201.8231 ns; chain + idle round trip + fetch = 122.2222 + 527 + 201.8231
    = 851.0453 ns > 87.36; 64 trips: 54,466.9 ns."""
    assert _extra_ns(64, 4) == pytest.approx(64 * (CHAIN + IDLE + 16_384 / SM_DRAM), rel=1e-4)


def test_two_warps_rule_out_the_warpgroup_mma():
    """BM=64 with 2 warps: 2 % 4 != 0, so MMAv2 and the chain includes the mma. warpsPerTileV2
    on 64 x 64 (4 row against 8 column repetitions) puts both warps on N: each warp 64 x 32,
    (64/16)(32/8)(64/16) = 64 mma.sync x 6 cycles = 384 cycles / 1.79586 GHz = 213.8251 ns (two
    warps use two of the SM's four sub-partitions: 2.4x the 87.36 ns of the warpgroup rate);
    trip 213.8251 + 122.2222 + 527 + 201.8231 = 1064.8704 ns; 64 trips: 68,151.7 ns (54,466.9 if
    the load overlapped the mma)."""
    assert _extra_ns(64, 2) == pytest.approx(64 * (64 * 6 / (1.98 * 0.907) + CHAIN + IDLE + 16_384 / SM_DRAM),
                                             rel=1e-4)


def test_an_unpipelined_trip_waits_dram_when_it_first_reads_a_tile():
    """memory_parallelism.first_reader_share: a trip waits DRAM when it is the first reader of
    one of its tiles. A read by 32 CTAs of the wave (miss 1/32) and B by 8 (1/8):
    1 - (31/32)(7/8) = 1 - 0.84765625 = 0.15234375; a private B (miss 1): 1."""
    from tfx.analysis import memory_parallelism
    assert memory_parallelism.first_reader_share([1 / 32, 1 / 8]) == pytest.approx(0.15234375)
    assert memory_parallelism.first_reader_share([1 / 112, 1.0]) == 1.0
    assert memory_parallelism.first_reader_share([]) == 0
    arr = memory_parallelism.first_reader_share([np.array([1 / 32, 0.0]), np.array([1 / 8, 0.0])])
    assert arr == pytest.approx([0.15234375, 0.0])


def test_unpipelined_cycle_is_chain_round_trip_and_compute_in_series():
    """H200 facts: chain 242 / 1.98 = 122.2222 ns, port 128.7 B/ns, DRAM line 205 ns + 0.3248867
    ns per B/ns drawn ((1582 - 205) / 4238.4), idle 660 ns.
    (a) gemm.tile 16x14336x4096 at 16x64x128, 4 warps, STAGES = 1: 224 CTAs on 132 SMs,
    20,480 B a trip, 16,402 B from DRAM (B's private 16,384 + A's 1,024 / 56 = 18.3), transfer
    510.83 ns, compute 215.07 ns, first-reader chance 1. The line's K holds the tile's bytes
    through the port only (the line was fitted net of bytes / port; load_trip.
    loaded_round_trip_ns), the idle floor keeps the transfer:
    K = 122.2222 + 215.07 + 205 + 20,480 / 128.7 (= 159.1298) = 701.4220,
    q = 0.3248867 x 224 x 16,402 = 1,193,649.5, K^2 + 4 q = 491,992.8 + 4,774,598.1 = 5,266,590.8,
    sqrt = 2,294.905, T = (701.4220 + 2,294.905) / 2 = 1,498.164 ns, under the idle floor
    122.2222 + 215.07 + 660 + max(510.83, 159.13) = 1,508.1222, which binds.
    (b) chance 0.15234375, 16,384 B, 1,272 B from DRAM, 2 CTAs on each of 132 SMs, transfer
    197 ns, compute 304 ns, L2 200 ns: K = 122.2222 + 304 + 0.15234375 x 205 (= 31.2305)
    + 0.84765625 x 200 (= 169.5313) + 16,384 / 128.7 (= 127.3038) = 754.2878,
    q = 0.15234375 x 0.3248867 x 264 x 1,272 = 16,620.64, K^2 + 4 q = 568,950.0 + 66,482.6
    = 635,432.6, sqrt = 797.140, the line gives T = (754.2878 + 797.140) / 2 = 775.714; the idle
    floor 122.2222 + 304 + 0.15234375 x 660 + 0.84765625 x 200 + max(197, 127.30) = 893.300
    binds."""
    f = load_trip.LoadTrip(242 / 1.98, 65 * 1.98)
    d = load_trip.DramRoundTrip(205, (1582 - 205) / 4238.4, 660)
    a = pipeline_depth.unpipelined_cycle_ns(200, 1.0, 20480, 510.83, 16402, 224 / 132, 132, 215.07, f, d)
    assert a == pytest.approx(1508.1222, abs=1e-3)
    b = pipeline_depth.unpipelined_cycle_ns(200, 0.15234375, 16384, 197, 1272, 2, 132, 304, f, d)
    assert b == pytest.approx(893.3003, abs=1e-3)


def test_breakdown_shows_the_unpipelined_trip():
    """The same 1-stage configuration (a) in the breakdown, with the profile's idle round trip
    (pipeline.dram_round_trip_idle = 557 ns, not the 660 of the test above) and the compute the
    model gives it: the copies' 20,480 B written at 128 B x 1.98 GHz = 253.44 B/ns (80.81 ns) in
    series with the mma, whose operand reads (warps 1 x 4: (4 x 16 + 1 x 64) x 128 x 2 B =
    32,768 B at 128 B x 1.98 GHz x 0.907 = 229.87 B/ns, 142.55 ns) overlap its tensor work
    (16 mma.sync x 6 cycles / 1.796 GHz = 53.46 ns): 80.81 + max(53.46, 142.55) = 223.36 ns
    (tests/test_operand_reads.py). Its 224 CTAs on 132 SMs; A's 4,096 B a trip shared by the
    224 CTAs, so 16,384 + 4,096 / 224 = 16,402.29 B a trip from DRAM. B's 16,384 B are a weight
    stream (M = 16 = BM: each B byte read by one CTA, its 128-B rows continued by CTA pn + 1;
    tests/test_weight_stream.py), 16,384 / 16,402.29 = 0.998885 of the DRAM bytes, so the loaded
    line is stream_depth's mixed by that share: base 205 + 0.998885 x (433 - 205) = 432.7458 ns,
    slope 0.3248867 + 0.998885 x (0.1049924 - 0.3248867) = 0.1052376 ns per B/ns;
    K = 122.2222 + 223.36 + 432.7458 + 20,480 / 128.7 (= 159.1298) = 937.4578,
    q = 0.1052376 x 224 x 16,402.29 = 386,654.7. The idle floor takes the trip's bytes at the
    rates one SM gets while its tile is in flight (performance._own_transfer_ns, as the pipelined
    trip's floor: pipeline.dram_round_trip_idle was derived net of the tile at one SM's DRAM
    ceiling): DRAM's 16,402.29 B at 41 B x 1.98 GHz = 81.18 B/ns (202.05 ns), the 20,480 B
    through L2 at its share 11,000 / 132 = 83.33 B/ns (245.76 ns), the longer 245.76; the floor, one
    tile in flight (pipeline.dram_round_trip_idle_one_tile, tfx.analysis.load_trip.one_tile_floor),
    122.2222 + 223.36 + 527 + max(245.76, 159.13) = 1,118.34 ns. Triton's SASS of this tile issues
    its loads in 3 dependent rounds (4/4/2, tfx.analysis.load_rounds): 2 more, each a dependent
    DRAM load, 341 ns + 105 / 1,974 = 0.0531915 ns per B/ns the 224 CTAs draw (224 x 16,402.29 =
    3,674,112 B a trip). With the first round on the line: T = 937.4578 + 386,654.7 / T + 2 x 341
    + 2 x 0.0531915 x 3,674,112 / T = 1,619.4578 + 777,517.7 / T, T = (1,619.4578 +
    sqrt(1,619.4578^2 + 4 x 777,517.7)) / 2 = 2,006.88 ns, and the first round there, 937.4578 +
    386,654.7 / 2,006.88 = 1,130.12 ns, is over its floor (1,118.34), so the line binds: 2.01 us a
    trip (with the 3-5-stage floor, 557 ns, the floor bound the first round at 1,148.34 and the trip
    took 2,023.50; on kloop's line alone, before the weight stream, 2,134.17). The wave's other CTA
    on each SM queues with it at the sub-partitions and the load path (the warp mma's closed queue,
    tfx.analysis.warp_trip.unpipelined_stations): 4 warps x 2 CTAs on 4 sub-partitions, the busiest
    holds 2, each CTA's share 2 x 53.456 / 2 = 53.456 ns; its loads into registers 8 + 32 whole-line
    16-byte loads (A 4,096 B and B 16,384 B over 128 threads x 16 B, x 4 warps) x 17.07 / 1.98 =
    344.848 ns; the rest of its trip 2,006.88 - 53.456 - 344.848 = 1,608.575 ns. Mean value
    analysis: one CTA cycles in 2,006.88 ns with queues 53.456 / 2,006.88 = 0.026637 and 344.848 /
    2,006.88 = 0.171833; two wait 53.456 x 1.026637 + 344.848 x 1.171833 = 54.880 + 404.105 at the
    stations, a round of 2,067.56 ns. So 32 more trips (K = 8192 against 4096) add 32 x 2,067.56 =
    66,161.9 ns to the tail wave."""
    def gemm(k):
        return analyze(parse_file(str(GEMM)), None, load_profile("h200_sxm"),
                       {"M": 16, "N": 14336, "K": k, "BM": 16, "BN": 64, "BK": 128, "WARPS": 4, "STAGES": 1},
                       resources={"threads": 128, "regs": 72, "smem": 20480, "spills": 0})

    def tail(a):
        return float([x for x in a.terms if x.name == "tail wave"][0].ns)
    g = gemm(4096)
    t = [x for x in g.terms if x.name == "unpipelined trip"]
    assert t and "224 CTAs on 132 SMs" in t[0].detail and "= 2.01 us a trip" in t[0].detail
    assert "at least the idle round trip with max(245.76 ns, 159.13 ns)" in t[0].detail
    assert "223.36 ns of compute" in t[0].detail
    assert "3 dependent rounds" in t[0].detail
    assert tail(gemm(8192)) - tail(g) == pytest.approx(32 * 2067.56, abs=0.5)
