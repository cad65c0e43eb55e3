"""tfx.analysis.local_parallelism: a row body's spilled values in DRAM come back at the pace
of its warps' rounds. Expected numbers derived by hand from h200_sxm:

    DRAM share of one SM: 4800 GB/s x 0.883 = 4238.4 GB/s / 132 SMs = 32.109091 B/ns
    local.dram_round_bytes_per_warp 4096 B (spill_local: 32 threads x 8 LDL.64 and 8 STL.64)
    local.dram_warp_round 802.0 ns
    service a round D = 4096 / 32.109091 = 127.5651 ns

Exact mean value analysis, Q(0) = 0, R(n) = D (1 + Q(n-1)), C(n) = R(n) + Z, Q(n) = n R(n) / C(n):

    n = 1: R 127.5651, C 929.5651, Q 0.137231
    n = 2: R 127.5651 x 1.137231 = 145.0710, C 947.0710, Q 2 x 145.0710 / 947.0710 = 0.306357
    n = 3: R 127.5651 x 1.306357 = 166.6456, C 968.6456, Q 3 x 166.6456 / 968.6456 = 0.516119
    n = 4: R 127.5651 x 1.516119 = 193.4040, C 995.4040
    rate(n) = n x 4096 / C(n): 4.4064, 8.6498, 12.6858, 16.4596 B/ns (measured at 4 warps 16.46)
"""

import pytest

from tfx.analysis import local_parallelism
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

from profile_variants import without

SHARE = 4238.4 / 132


def test_rates_of_a_closed_queue_of_warps():
    assert local_parallelism.facts(load_profile("h200_sxm")) == (4096.0, 802.0)
    for warps, expected in ((1, 4.4064), (2, 8.6498), (3, 12.6858), (4, 16.4596)):
        assert local_parallelism.rate(warps, SHARE, 4096.0, 802.0) == pytest.approx(expected, abs=1e-4)


def test_many_warps_reach_the_share():
    """64 warps: 64 D = 8,164.2 ns of service against D + Z = 929.6, the queue is the share's."""
    assert local_parallelism.rate(64, SHARE, 4096.0, 802.0) == pytest.approx(SHARE, rel=1e-6)
    lb = local_parallelism.latency_bound(load_profile("h200_sxm"), 64, SHARE)
    assert not lb.bound


def test_no_facts_no_bound():
    """A Hopper profile that states neither fact (h100_sxm less local.dram_round_bytes_per_warp
    and local.dram_warp_round, tests/profile_variants.py): no bound, the rate stays the share.
    h100_sxm itself states both (the GH100's 4096 B and 802.0 ns) and has one."""
    bare = without("h100_sxm", "local.dram_round_bytes_per_warp", "local.dram_warp_round")
    assert local_parallelism.facts(bare) is None
    assert local_parallelism.latency_bound(bare, 4, SHARE) is None
    assert local_parallelism.facts(load_profile("h100_sxm")) == (4096.0, 802.0)
    assert local_parallelism.latency_bound(load_profile("h100_sxm"), 4, SHARE) is not None


def _spill_term(profile):
    a = analyze(parse_file("kernels/rmsnorm.tile"), None, profile,
                {"M": 1024, "N": 16384, "BLOCK_M": 4, "WARPS": 2},
                resources={"threads": 64, "regs": 32, "spills": 2120, "smem": 16})
    return {t.name: t for t in a.terms}["spill"]


def test_rmsnorm_under_a_wave_of_two_warp_ctas():
    """rmsnorm M = 1024, N = 16384, BLOCK_M = 4, WARPS = 2 as compiled (32 registers, 2,120
    spilled words: the measured Triton kernel's): 256 CTAs on 132 SMs, at most
    cdiv(256, 132) = 2 on an SM (32 could fit), 2 x 2 = 4 warps. Under one wave the busiest SM
    holds 132 x 2 / 256 = 1.03125 x its even share of the machine's warps
    (local_parallelism.spread), so its DRAM share is 4,238.4 / 132 x 1.03125 = 33.1125 B/ns.

    Bound: the SM's queue of 4 warps over that share (D = 4096 / 33.1125 = 123.70 ns, Z = 802),
    by exact mean value analysis: n = 1: R = 123.70, X = 1 / 925.70, Q = 0.13363; n = 2:
    R = 123.70 x 1.13363 = 140.23, Q = 2 x 140.23 / 942.23 = 0.29766; n = 3: R = 160.52,
    Q = 3 x 160.52 / 962.52 = 0.50032; n = 4: R = 185.59, cycle 987.59 ns: 4 x 4096 / 987.59 =
    16.590 B/ns, under the machine's queue at 4 / 1.03125 = 3.88 -> 4 warps a SM of all 132
    (16.4596, the measured 4-warp rate local.dram_warp_round was fitted to) x 1.03125 = 16.974.
    Free (Z = 0.001 ns): the queue no longer binds, the measured ceiling does: the machine's
    warps are 3.88 a SM of all, at or under 8, local.dram_bandwidth_8_warps 3,014.8 GB/s / 132
    = 22.8394 B/ns a SM of all, x 1.03125 = 23.5531 for the busiest SM. The spill term grows by
    23.5531 / 16.590 = 1.41972."""
    base = load_profile("h200_sxm")
    bound, free = _spill_term(base), _spill_term(base.with_knobs({"local.dram_warp_round": "0.001ns"}))
    assert bound.ns / free.ns == pytest.approx(3014.8 / 132 * 1.03125 / 16.590, rel=1e-4)
    # one unit policy (tfx.hw.units): 4,096 B -> 4.096 KB (four significant digits in a formula), 4096 / 33.1125 = 123.698 ns -> 123.70 ns,
    # 33.1125 B/ns = 33.11 GB/s, 16.590 B/ns = 16.59 GB/s
    assert ("served from DRAM at 16.59 GB/s per SM (under one wave the busiest SM holds 1.03125 x its even share of "
            "the machine's warps: 4.238 TB/s of DRAM / 132 SMs x 1.03125 = 33.11 GB/s)") in bound.detail
    assert ("bound by latency: 4 warps a SM, each moving 4.096 KB a round (123.70 ns at the SM's DRAM share "
            "33.11 GB/s, 802.00 ns of latency and issue): a closed queue of 4 draws 16.59 GB/s") in bound.detail
    assert ("the machine's warps are 3.87879 a SM of all 132 SMs (the busiest holds 1.03125 x its share), where it "
            "moves local.dram_bandwidth_8_warps 3.015 TB/s / 132 SMs = 22.84 GB/s (8 warps or fewer); x 1.03125 = "
            "23.55 GB/s for the busiest SM") in free.detail
    assert "bound by latency" not in free.detail


def test_the_measured_ceiling_between_8_and_16_warps():
    """local.dram_bandwidth 3,374.7 GB/s and local.dram_bandwidth_8_warps 3,014.8 GB/s over 132
    SMs: 25.56591 and 22.83939 B/ns. 4 warps: 22.83939 (8 or fewer); 8: 22.83939; 16 and 64:
    25.56591; 12 warps: 22.83939 x (25.56591 / 22.83939)^(log2 12 - 3) = 22.83939 x
    1.119378^0.5849625 = 22.83939 x exp(0.5849625 x 0.112772 (ln 1.119378) = 0.065968) = 22.83939 x
    1.068193 = 24.39687. A profile that states neither (h100_sxm less both,
    tests/profile_variants.py): the share, 20.0 stays 20.0.

    h100_sxm's (measured on an H100, calibration/h100/measured/h100_memory/spill_local): 2,316.7 and
    2,430.0 GB/s over 132 SMs: 17.550758 and 18.409091 B/ns; 12 warps: 17.550758 x (2,430.0 /
    2,316.7 = 1.048906)^0.5849625 = 17.550758 x exp(0.5849625 x 0.047747 = 0.027931) = 17.550758 x
    1.028325 = 18.04787, under the share 20.0 it is given (H100's own: 3,350 x 0.8932 / 132 = 22.67)."""
    p = load_profile("h200_sxm")
    few, many = 3014.8 / 132, 3374.7 / 132
    for warps, expected in ((4, few), (8, few), (16, many), (64, many), (12, 24.39687)):
        assert local_parallelism.ceiling(p, warps, SHARE, 132) == pytest.approx(expected, rel=1e-6)
    bare = without("h100_sxm", "local.dram_bandwidth", "local.dram_bandwidth_8_warps")
    assert local_parallelism.ceiling(bare, 12, 20.0, 132) == 20.0
    h100 = load_profile("h100_sxm")
    for warps, expected in ((8, 2316.7 / 132), (16, 2430.0 / 132), (12, 18.04787)):
        assert local_parallelism.ceiling(h100, warps, 20.0, 132) == pytest.approx(expected, rel=1e-6)


def _spill_detail(m_rows, warps):
    a = analyze(parse_file("kernels/rmsnorm.tile"), None, load_profile("h200_sxm"),
                {"M": m_rows, "N": 16384, "BLOCK_M": 4, "WARPS": warps},
                resources={"threads": 32 * warps, "regs": 32, "spills": 2120, "smem": 16})
    return {t.name: t for t in a.terms}["spill"].detail


def test_the_measured_ceiling_binds_and_is_named():
    """rmsnorm M = 1056, N = 16384, BLOCK_M = 4, WARPS = 4 (32 registers, 2,120 spilled words):
    264 CTAs on 132 SMs, cdiv(264, 132) = 2 on every SM (132 x 2 / 264 = 1: each SM holds its
    even share of the machine's warps, local_parallelism.spread), 2 x 4 = 8 warps. The closed queue of 8
    draws 27.7 B/ns (the profile's local.dram_warp_round source), above the measured ceiling at 8
    warps or fewer, local.dram_bandwidth_8_warps 3,014.8 GB/s / 132 = 22.839 B/ns (both under the
    share 32.1): the traffic runs at 22.8 (printed 22.84 GB/s) and the line names the ceiling, not the
    queue (3,014.8 GB/s printed 3.015 TB/s)."""
    detail = _spill_detail(1056, 4)
    assert ("served from DRAM at 22.84 GB/s per SM, bound by the measured rate of local traffic past L2 "
            "at 8 warps a SM: local.dram_bandwidth_8_warps 3.015 TB/s / 132 SMs = 22.84 GB/s "
            "(8 warps or fewer) (included") in detail
    assert "closed queue" not in detail and "bound by latency" not in detail


def test_the_ceiling_between_8_and_16_warps_names_both_facts():
    """M = 1584: 1584 / 4 = 396 CTAs, cdiv(396, 132) = 3 on an SM x 4 warps = 12 warps: the ceiling
    24.39687 B/ns (test_the_measured_ceiling_between_8_and_16_warps), printed 24.4 GB/s (four significant digits, %g drops the 0); the queue
    of 12 is above it (27.7 at 8 already, a closed queue's rate grows with its customers).
    3,374.7 / 132 = 25.566 B/ns, printed 25.57 GB/s; 3,374.7 GB/s printed 3.375 TB/s."""
    detail = _spill_detail(1584, 4)
    assert ("served from DRAM at 24.4 GB/s per SM, bound by the measured rate of local traffic past L2 "
            "at 12 warps a SM: between local.dram_bandwidth_8_warps 3.015 TB/s / 132 SMs = 22.84 GB/s "
            "at 8 warps and local.dram_bandwidth 3.375 TB/s / 132 SMs = 25.57 GB/s at 16, geometric in "
            "log2 of the warps (included") in detail


def test_the_ceiling_applies_without_the_round():
    """A profile that states the ceiling but not the round (local.dram_warp_round): the traffic at
    DRAM still stops at the ceiling, 4 warps: 3,014.8 / 132 = 22.83939 B/ns from the share
    32.10909, and the bound names it."""
    from types import SimpleNamespace

    from tfx.analysis.performance import LocalMemory

    h200 = load_profile("h200_sxm")

    class NoRound:
        def get(self, key, default=None):
            return default if key == "local.dram_warp_round" else h200.get(key, default)

    m = SimpleNamespace(kind="gpu", dram_bw_device=4238.4, units=132, profile=NoRound())
    local = LocalMemory("DRAM", SHARE, 1e6, 262e3, SHARE, "DRAM")
    got, bound = local_parallelism.in_local_memory(m, local, 4)
    assert got.bytes_per_ns == pytest.approx(3014.8 / 132, rel=1e-9)
    assert bound.queue is None and bound.binding == "ceiling"
    assert local_parallelism.describe_bound(bound) == (
        "bound by the measured rate of local traffic past L2 at 4 warps a SM: "
        "local.dram_bandwidth_8_warps 3.015 TB/s / 132 SMs = 22.84 GB/s (8 warps or fewer)")


# Spilled values in L2 (local_parallelism.l2_latency_bound, local.l2_warp_round 190.2 ns): the
# same queue over the SM's L2 share local.l2_bandwidth 7,360 GB/s / 132 = 55.757576 B/ns,
# D = 4096 / 55.757576 = 73.4609 ns:
#     n = 1: R 73.4609, C 263.6609, Q 73.4609 / 263.6609 = 0.278619
#     n = 2: R 73.4609 x 1.278619 = 93.9284, C 284.1284, rate 2 x 4096 / 284.1284 = 28.8320
#            (spill_local, 2 warps, 512 B a thread in L2: 28.9)
#     n = 3: Q(2) = 2 x 93.9284 / 284.1284 = 0.661169; R 73.4609 x 1.661169 = 122.0309,
#            C 312.2309, Q 1.172506
#     n = 4: R 73.4609 x 2.172506 = 159.5942, C 349.7942, rate 4 x 4096 / 349.7942 = 46.8390
#            (measured 46.84, the point local.l2_warp_round is derived from)
L2_SHARE = 7360 / 132


def test_the_l2_round_of_the_profile():
    assert local_parallelism.l2_facts(load_profile("h200_sxm")) == (4096.0, 190.2)
    # a Hopper profile without the L2 round (h100_sxm less local.l2_warp_round,
    # tests/profile_variants.py): none; h100_sxm itself states the GH100's 190.2 ns
    assert local_parallelism.l2_facts(without("h100_sxm", "local.l2_warp_round")) is None
    assert local_parallelism.l2_facts(load_profile("h100_sxm")) == (4096.0, 190.2)


def test_rates_of_warps_whose_spills_live_in_l2():
    for warps, expected in ((2, 28.8320), (4, 46.8390)):
        lb = local_parallelism.l2_latency_bound(load_profile("h200_sxm"), warps, L2_SHARE)
        assert lb.bytes_per_ns == pytest.approx(expected, abs=1e-4)
        assert lb.level == "L2" and lb.bound


def test_a_two_warp_launch_in_l2_is_bound_by_its_rounds():
    """rmsnorm.tile M = 4096, N = 2048, BLOCK_M = 16, one warp (64 registers, 1,808 spilled
    words; issue15 run7): 256 CTAs, two a SM; 2 x 32 x 7,232 B = 462,848 B a SM past the
    262,144 B of L1, 132 x 462,848 = 61.1 MB under the 62.9 MB L2: served from L2, at the
    queue's 28.8320 B/ns for 2 warps instead of the L2 share 55.76. Printed by the one unit policy:
    4096 / 55.757576 = 73.46 ns, 28.83 GB/s, 55.76 GB/s, 4.096 KB (four significant digits)."""
    a = analyze(parse_file("kernels/rmsnorm.tile"), None, load_profile("h200_sxm"),
                {"M": 4096, "N": 2048, "BLOCK_M": 16, "WARPS": 1},
                resources={"threads": 32, "regs": 64, "spills": 1808, "smem": 0})
    detail = {t.name: t for t in a.terms}["spill"].detail
    assert ("served from L2 at 28.83 GB/s per SM, bound by latency: 2 warps a SM, each moving 4.096 KB a round "
            "(73.46 ns at the SM's L2 share 55.76 GB/s, 190.20 ns of latency and issue): a closed queue of 2 "
            "draws 28.83 GB/s") in detail


def test_a_sweep_caps_only_its_l2_configurations_by_the_l2_round():
    """Three configurations at 2 warps a SM: in L1 (100 KB under the 262,144 B free: 63.36 B/ns
    stays), in L2 (55.757576 -> the L2 queue's 28.8320) and in DRAM (the DRAM queue's 8.6498,
    under the measured ceiling 22.84)."""
    import numpy as np
    from types import SimpleNamespace

    from tfx.analysis.performance import LocalMemory

    m = SimpleNamespace(kind="gpu", dram_bw_device=4238.4, units=132, profile=load_profile("h200_sxm"))
    local = LocalMemory("mixed", np.array([63.36, L2_SHARE, SHARE]), np.array([100e3, 400e3, 600e3]), 262144.0,
                        np.array([L2_SHARE, L2_SHARE, SHARE]), "mixed", np.array([False, False, True]))
    got, _ = local_parallelism.in_local_memory(m, local, np.array([2.0, 2.0, 2.0]))
    assert got.bytes_per_ns[0] == pytest.approx(63.36, rel=1e-12)
    assert got.bytes_per_ns[1] == pytest.approx(28.8320, abs=1e-4)
    assert got.bytes_per_ns[2] == pytest.approx(8.6498, abs=1e-4)


# A launch under one wave: the machine's warps are one queue (local_parallelism.spread,
# machine_ceiling, _bounded; docs/analysis.md section 8 (t)).

def test_the_busiest_sms_share_of_the_machines_warps():
    """spread = SMs x CTAs the busiest SM holds / min(CTAs, slots): 32 CTAs on 132 SMs, one
    each: 132 x 1 / 32 = 4.125; 160 CTAs of which an SM holds at most cdiv(160, 132) = 2 (4
    fit): 132 x 2 / 160 = 1.65; 264 CTAs, 2 on every SM: 132 x 2 / 264 = 1; a launch of many
    waves (1,000 CTAs, 2 slots an SM: 264 slots) fills every slot: 132 x 2 / 264 = 1."""
    assert local_parallelism.spread(132, 1, 32, 132 * 4) == pytest.approx(4.125)
    assert local_parallelism.spread(132, 2, 160, 132 * 4) == pytest.approx(1.65)
    assert local_parallelism.spread(132, 2, 264, 132 * 2) == 1
    assert local_parallelism.spread(132, 2, 1000, 132 * 2) == 1


def _row_spill(kernel, m_rows, n_cols, block_m, warps, spills):
    a = analyze(parse_file(f"kernels/{kernel}.tile"), None, load_profile("h200_sxm"),
                {"M": m_rows, "N": n_cols, "BLOCK_M": block_m, "WARPS": warps},
                resources={"threads": 32 * warps, "regs": 32, "spills": spills})
    return {t.name: t for t in a.terms}["spill"]


def test_thirty_two_ctas_draw_their_sms_own_queue():
    """softmax M = 512, N = 16384, BLOCK_M = 16, WARPS = 16 as compiled (32 registers, 1,226
    spilled words; issue15 run14 measured 198.3 us, where the same CTA in a grid of 128 took
    476-482 us): 32 CTAs, one an SM, spread 132 / 32 = 4.125. The machine's 32 x 16 = 512 warps
    are 3.88 a SM of all 132: its queue at 4 warps draws 16.4596 a SM (module docstring), x 4.125
    = 67.90 for each busy SM; its measured ceiling at 8 warps or fewer 3,014.8 / 132 x 4.125 =
    94.21. The busy SM's own share: 4,238.4 / 132 x 4.125 = 132.45, over its local path
    local.l1_bandwidth_per_cycle 32 B/cycle x 1.98 GHz = 63.36 B/ns (under its DRAM ceiling
    41 x 1.98 = 81.18): 63.36. Its own queue of 16 warps over 63.36 (D = 4096 / 63.36 = 64.646
    ns, Z = 802) is the least, the recursion below: 58.90 B/ns. The CTA's local bytes
    (the body's estimate, the line's 12,877,824 B) take 12,877,824 / 58.90 ns; a fixed share of
    all 132 SMs priced them at local.dram_bandwidth 3,374.7 / 132 = 25.566 B/ns, 2.3x longer."""
    term = _row_spill("softmax", 512, 16384, 16, 16, 1226)
    d, q = 4096 / 63.36, 0.0
    for n in range(1, 17):
        r = d * (1 + q)
        q = n * r / (r + 802.0)
    own = 16 * 4096 / (r + 802.0)
    assert own == pytest.approx(58.90, abs=0.01)
    assert min(16.4596 * 4.125, 3014.8 / 132 * 4.125, 63.36) > own
    assert float(term.ns) == pytest.approx(12_877_824 / own, rel=1e-6)
    assert ("served from DRAM at 58.9 GB/s per SM (under one wave the busiest SM holds 4.125 x its even share "
            "of the machine's warps: 4.238 TB/s of DRAM / 132 SMs x 4.125 = 132.4 GB/s, at most its local "
            "path's 63.36 GB/s (local.l1_bandwidth_per_cycle 32 B/cycle))") in term.detail
    assert "a closed queue of 16 draws 58.9 GB/s" in term.detail


def test_an_uneven_wave_draws_the_machines_ceiling_split_by_warps():
    """rmsnorm M = 1280, N = 32768, BLOCK_M = 8, WARPS = 16 as compiled (32 registers, 1,438
    spilled words; issue15 run26 measured 535.1 us, priced 861.9 with a fixed share): 160 CTAs,
    4 fit an SM, the busiest holds cdiv(160, 132) = 2 (32 warps): spread 132 x 2 / 160 = 1.65.
    The machine's 160 x 16 = 2,560 warps are 19.39 a SM of all 132, 16 or more: the measured
    local.dram_bandwidth 3,374.7 / 132 = 25.56591 B/ns a SM of all, x 1.65 = 42.18375 for the
    busiest, under its share 4,238.4 / 132 x 1.65 = 52.98 (which its 32 warps' own queue and the
    machine's queue at 19 warps a SM both reach). Its 2 CTAs' local bytes, 2 x 10,649,600 (the
    line's estimate) / 42.18375 = 504,916 ns: 132 x 2 / 160 of the time the SM's 2 CTAs took at
    the fixed share (2 x 10,649,600 / 25.56591 = 833,112 ns)."""
    term = _row_spill("rmsnorm", 1280, 32768, 8, 16, 1438)
    busiest = 3374.7 / 132 * 1.65
    assert busiest == pytest.approx(42.18375, abs=1e-5)
    assert float(term.ns) == pytest.approx(2 * 10_649_600 / busiest, rel=1e-6)
    assert ("the machine's warps are 19.3939 a SM of all 132 SMs (the busiest holds 1.65 x its share), where it "
            "moves local.dram_bandwidth 3.375 TB/s / 132 SMs = 25.57 GB/s (16 warps or more); x 1.65 = "
            "42.18 GB/s for the busiest SM") in term.detail


def test_a_grid_under_a_wave_keeps_its_frames_in_l2():
    """softmax M = 256, BLOCK_M = 16, WARPS = 16 (the CTA of the test above): 16 CTAs of
    512 threads x 4,904 B = 2,510,848 B each, 40.2 MB in all, inside L2's 62,914,560 B; the
    working set of 132 such SMs (331 MB) would not be. Served from L2 at the SM's own L2 rate,
    which a grid under one wave does not raise (L2's local traffic, 7.36 TB/s at 8 warps a SM
    of all, is a SM's: L2 serves global loads faster): the queue of 16 warps over
    local.l2_bandwidth 7,360 / 132 = 55.7576 B/ns reaches that share (16 x D = 1,175 ns of
    service against D + Z = 263.7)."""
    term = _row_spill("softmax", 256, 16384, 16, 16, 1226)
    assert 16 * 512 * 4904 <= 62_914_560 < 132 * 512 * 4904
    assert "served from L2 at 55.76 GB/s per SM" in term.detail
    assert float(term.ns) == pytest.approx(12_877_824 / (7360 / 132), rel=1e-3)


def test_a_full_wave_of_two_warp_ctas_draws_the_four_warp_queue():
    """docs/analysis.md's worked example of the queue (section 8, local traffic bound by
    latency): rmsnorm M = 1056, N = 16384, BLOCK_M = 4, WARPS = 2 as compiled (32 registers,
    2,120 spilled words): 264 CTAs, 2 on every SM (spread 132 x 2 / 264 = 1), 4 warps: the
    queue's 16.4596 B/ns (module docstring) over the even share 32.109, under the ceiling at 8
    warps or fewer (22.839)."""
    detail = _spill_detail(1056, 2)
    assert ("served from DRAM at 16.46 GB/s per SM, bound by latency: 4 warps a SM, each moving 4.096 KB a "
            "round (127.57 ns at the SM's DRAM share 32.11 GB/s, 802.00 ns of latency and issue): a closed "
            "queue of 4 draws 16.46 GB/s (included") in detail


def test_without_an_sms_own_ceilings_the_busiest_sm_keeps_the_even_share():
    """The softmax CTA of test_thirty_two_ctas_draw_their_sms_own_queue on an H200 profile that
    states neither the SM's local path (local.l1_bandwidth_per_cycle) nor its DRAM ceiling
    (pipeline.sm_dram_bandwidth_per_cycle): nothing says what one SM alone can take of the device,
    so its share stays the even 4,238.4 / 132 = 32.109 B/ns (not x 4.125). The machine's measured
    ceiling at its 3.88 warps a SM of all, 22.839 x 4.125 = 94.2, is capped there; its own queue of
    16 warps over 32.109 draws 32.0921 (tests/test_spills.py's recursion): 12,877,824 / 32.0921 ns,
    and no "under one wave" clause."""
    profile = without("h200_sxm", "local.l1_bandwidth_per_cycle", "pipeline.sm_dram_bandwidth_per_cycle")
    a = analyze(parse_file("kernels/softmax.tile"), None, profile,
                {"M": 512, "N": 16384, "BLOCK_M": 16, "WARPS": 16},
                resources={"threads": 512, "regs": 32, "spills": 1226})
    term = {t.name: t for t in a.terms}["spill"]
    assert local_parallelism.rate(16, SHARE, 4096.0, 802.0) == pytest.approx(32.0921, abs=1e-4)
    assert float(term.ns) == pytest.approx(12_877_824 / 32.0921, rel=1e-5)
    assert "under one wave" not in term.detail
