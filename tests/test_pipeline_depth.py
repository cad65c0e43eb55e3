"""A pipelined loop's prefetch waits behind a synchronous mma (Triton's software pipeliner).

Triton puts the prefetch of iteration i+S-1 after the body's compute (MatmulLoopPipeline.cpp,
the prefetch cluster made with schedule.clusters.newAtBack()). With a synchronous mma (MMAv2,
a CTA's mma rows not a multiple of 64) the load is issued only when the mma is done, so a trip
lasts max(mma, (mma + latency + fetch) / (S-1)); an asynchronous warpgroup mma (MMAv3, rows a
multiple of 64, warps a multiple of 4) lets the load go while it runs: max(mma, (latency +
fetch) / (S-1)). The tests take one CTA of kernels/gemm.tile at STAGES=2 and compare K=8192
with K=4096: 64 more trips, nothing else changes (one CTA, every tile read once: all misses).

H200 profile (hw_profiles/h200_sxm.toml): 4096 bf16 flop/cycle x 1.98 GHz = 8110.08 flop/ns
x 0.74 tensor efficiency = 6001.4592 flop/ns; DRAM latency 700 ns; DRAM 4.8 TB/s x 0.883 =
4238.4 B/ns for the one active SM (L2 at 11,000 B/ns is faster). A GEMM k-loop's load round
trip also holds the trip's chain, pipeline.load_trip_overhead 242 cycles / 1.98 GHz =
122.2222 ns, and its bytes cross the SM's L2 port at 65 B x 1.98 = 128.7 B/ns, slower than the
DRAM share (tfx.analysis.load_trip): CHAIN below. One SM alone brings DRAM bytes at most at
pipeline.sm_dram_bandwidth_per_cycle 41 B x 1.98 GHz = 81.18 B/ns (tfx.analysis.memory_parallelism),
slower than both the port and the device's 4238.4 B/ns: SM_DRAM below, the fetch of a tile.
"""

from pathlib import Path

import pytest

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

GEMM = Path(__file__).resolve().parent.parent / "kernels" / "gemm.tile"
CHAIN = 242 / 1.98          # ns: the trip's chain in each load's round trip
PORT = 65 * 1.98            # B/ns: the SM's L2 port
SM_DRAM = 41 * 1.98         # B/ns: one SM's DRAM ceiling


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
    122.2222 + 700 + 151.3673 = 1027.0458 ns; 64 trips: 65,730.9 ns. (Without the waited mma:
    973.5895 ns a trip, 62,309.7 ns.)"""
    assert _extra_ns(32, 4) == pytest.approx(64 * (16 * 6 / (1.98 * 0.907) + CHAIN + 700 + 12_288 / SM_DRAM),
                                             rel=1e-4)


def test_two_stage_async_warpgroup_mma_overlaps_the_next_load():
    """BM=64, 4 warps: MMAv3, the load overlaps the mma: the trip is max(mma, latency + fetch).

    mma 87.3604 ns as above (64 rows, no padding); fetch: 8192 + 8192 = 16,384 B / 81.18 (one
    SM's DRAM ceiling) = 201.8231 ns; chain + latency + fetch = 122.2222 + 700 + 201.8231 =
    1024.0453 ns > 87.36; 64 trips: 65,538.9 ns."""
    assert _extra_ns(64, 4) == pytest.approx(64 * (CHAIN + 700 + 16_384 / SM_DRAM), rel=1e-4)


def test_two_warps_rule_out_the_warpgroup_mma():
    """BM=64 with 2 warps: 2 % 4 != 0, so MMAv2 and the chain includes the mma. warpsPerTileV2
    on 64 x 64 (4 row against 8 column repetitions) puts both warps on N: each warp 64 x 32,
    (64/16)(32/8)(64/16) = 64 mma.sync x 6 cycles = 384 cycles / 1.79586 GHz = 213.8251 ns (two
    warps use two of the SM's four sub-partitions: 2.4x the 87.36 ns of the warpgroup rate);
    trip 213.8251 + 122.2222 + 700 + 201.8231 = 1237.8704 ns; 64 trips: 79,223.7 ns (65,538.9 if
    the load overlapped the mma)."""
    assert _extra_ns(64, 2) == pytest.approx(64 * (64 * 6 / (1.98 * 0.907) + CHAIN + 700 + 16_384 / SM_DRAM),
                                             rel=1e-4)
