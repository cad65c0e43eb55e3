"""GROUP_M = 1 readers that drift apart (tfx.analysis.l2_reuse.rate_classes_apart, drift_refetch,
with_drift; performance's lone-CTA pricing and the ``l2 drift`` term; docs/analysis.md, "GROUP_M
= 1: readers that drift apart").

H200 facts used: 132 SMs; L2 62,914,560 B in 2 partitions, so a room of 31,457,280 B
(hw_profiles/h200_sxm.toml memory.l2). Measured (calibration/h200/measured/cta_timeline,
cta_timeline_s12b): 128x28672x8192 64x256x32 w8 s5, a lone CTA 112.1 us against one of two 139.0
at GROUP_M 2 (1 - 112.1 / 139.0 = 0.194); fp8 128x8192x28672 64x64x64 w8 s3, 188.4 against 190.8
(1 - 188.4 / 190.8 = 0.0126).
"""

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.l2_reuse import (Drift, WaveReuse, drift_refetch, rate_classes_apart, wave_reuse,
                                   with_drift)
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")
KERNELS = Path(__file__).resolve().parent.parent / "kernels"
GEMM = parse_file(KERNELS / "gemm.tile")
FP8 = parse_file(KERNELS / "gemm_fp8.tile")
# run12's regret row: 114 registers and 100 KB of shared memory, 2 CTAs an SM
REGRET = dict(M=128, N=28672, K=8192, BM=64, BN=256, BK=32, WARPS=8, STAGES=5, GROUP_M=1)
REGRET_RES = dict(regs=114, smem=102400)


def test_rate_classes_of_one_wave_on_uneven_sms():
    """224 CTAs on 132 SMs: q = 1, rem = 92; classes (2 CTAs, slot 0) and (2, slot 1) of 92 CTAs
    each, (1, slot 0) of 40: 1 - (92^2 + 92^2 + 40^2) / 224^2 = 1 - 18,528 / 50,176 = 31,648 /
    50,176 = 989 / 1568."""
    assert rate_classes_apart(224, 132) == pytest.approx(989 / 1568)


def test_rate_classes_of_b_ctas_on_every_sm_and_of_one():
    """264 = 2 x 132: classes (2, slot 0) and (2, slot 1) of 132 each: 1 - 2 x 132^2 / 264^2 =
    1/2 = 1 - 1/b; 1848 = 14 x 132: 1 - 14 x 132^2 / 1848^2 = 1 - 1/14 = 13/14; one CTA an SM
    (132): one class, 0; arrays elementwise."""
    assert rate_classes_apart(264, 132) == pytest.approx(0.5)
    assert rate_classes_apart(1848, 132) == pytest.approx(13 / 14)
    assert rate_classes_apart(132, 132) == 0
    assert rate_classes_apart(np.array([224, 264, 132]), 132) == pytest.approx([989 / 1568, 0.5, 0])


def test_drift_refetch_is_the_share_of_the_loop_past_the_room():
    """P 0.5, rates 25% apart, a loop of 400 MB against a room of 30 MB: the lag passes the room
    after 30 / (0.25 x 400) = 0.3 of the loop: 0.5 x (1 - 0.3) = 0.35. Rates 5% apart: 0.05 x
    400 = 20 MB < 30 MB, never: 0. Rates equal: 0."""
    assert drift_refetch(0.5, 0.25, 400e6, 30e6) == pytest.approx(0.35)
    assert drift_refetch(0.5, 0.05, 400e6, 30e6) == 0
    assert drift_refetch(0.5, 0, 400e6, 30e6) == 0
    assert drift_refetch(0.5, np.array([0.25, 0.05]), 400e6, 30e6) == pytest.approx([0.35, 0])


def test_with_drift_raises_only_the_column_tiles_share():
    """B's DRAM share 1/2 (two tile rows read each B tile), 0.3 of its shared re-reads fetched
    again: 1/2 + 0.3 x (1 - 1/2) = 0.65; A (1/112) unchanged; the wave facts kept."""
    facts = Drift(frozenset({"b"}), 0.5, 224, 132, 471_859_200, 31_457_280)
    info = WaveReuse.of({"a": Fraction(1, 112), "b": Fraction(1, 2)}, window=(1, 2), drift=facts)
    out = with_drift(info, 0.3)
    assert out["b"] == pytest.approx(0.65)
    assert out["a"] == Fraction(1, 112)
    assert out.window == (1, 2) and out.drift is facts


def test_the_wave_facts_of_the_regret_row():
    """128x28672x8192 64x256x32 at 2 CTAs an SM: one wave of min(132 x 2, 2 x 112) = 224 CTAs,
    P = 989 / 1568; its loop: B 112 columns x 256 x 8192 x 2 B = 469,762,048 B, A 2 rows x 64
    x 8192 x 2 B = 2,097,152 B: 471,859,200 B; room 62,914,560 / 2 = 31,457,280 B. The column
    load (B) is the drift op."""
    a = analyze(GEMM, None, H200, REGRET, resources=REGRET_RES, check=False)
    info = wave_reuse(a.root, a.kernel, a.params, H200, {m: 2 for m in (c.id for c in a.root.children)})
    (facts,) = [w.drift for w in info.values()]
    assert facts.W == 224
    assert facts.P == pytest.approx(989 / 1568)
    assert facts.loop_bytes == 471_859_200
    assert facts.room == 31_457_280
    assert len(facts.ops) == 1 and "%b" in next(iter(facts.ops))


def test_the_regret_row_prices_its_share_from_its_own_rate_gap():
    """The share the launch was priced with is P x (1 - room / (delta x loop)) of its own
    DriftRate, delta = 1 - lone / shared: 989/1568 x (1 - 31,457,280 / (delta x 471,859,200));
    the gap lies between 0 and the measured 1 - 112.1 / 139.0 = 0.194 (the timing prices the pair
    bound by the SM's DRAM share, 521 ns a trip, where it measures 543: docs); and the breakdown
    says it with the room's share 31.46 MB / 471.9 MB = 0.0667 -> '0.067'."""
    a = analyze(GEMM, None, H200, REGRET, resources=REGRET_RES, check=False)
    rate = a.launches[0].drift
    assert rate.b == 2
    assert rate.delta == pytest.approx(1 - rate.lone_ns / rate.shared_ns)
    assert 0 < rate.delta < 1 - 112.1 / 139.0
    assert rate.share == pytest.approx(989 / 1568 * (1 - 31_457_280 / (rate.delta * 471_859_200)))
    (line,) = [t.detail for t in a.terms if t.name == "l2 drift"]
    assert "92 SMs hold 2 CTAs, 40 hold 1: 63.1% of the pairs" in line
    assert "(31.46 MB / 471.9 MB = 0.067 of the loop)" in line


def test_the_regret_row_is_slower_by_its_refetched_bytes_and_its_twins_are_not():
    """GROUP_M = 2 co-readers share a dispatch pair: no drift facts, no term, the lock step's time;
    the G1 launch is priced again with B's re-fetch: slower than its G2 twin, which reads the
    same bytes once."""
    g1 = analyze(GEMM, None, H200, REGRET, resources=REGRET_RES, check=False)
    g2 = analyze(GEMM, None, H200, dict(REGRET, GROUP_M=2), resources=REGRET_RES, check=False)
    assert g2.launches[0].drift is None
    assert not [t for t in g2.terms if t.name == "l2 drift"]
    assert g1.metrics["performance.predicted_ns"] > g2.metrics["performance.predicted_ns"]
    assert g1.metrics["performance.l2_hit_ratio"] < g2.metrics["performance.l2_hit_ratio"]


def test_an_unpipelined_loop_has_no_drift():
    """STAGES = 1: a reader that falls behind waits the L2 round trip where the first waited
    DRAM's and catches up: P is 0 and no drift facts are kept."""
    a = analyze(GEMM, None, H200, dict(REGRET, STAGES=1), check=False)
    info = wave_reuse(a.root, a.kernel, a.params, H200, a.metrics["occupancy.blocks_per_sm"])
    assert all(w.drift is None for w in info.values())
    assert a.launches[0].drift is None


def test_a_launch_whose_ctas_wait_their_own_loads_keeps_its_rates_together():
    """fp8 128x8192x28672 64x64x64 w8 s3 (124 SMs with 2 CTAs, 8 with 1): every CTA waits its
    loads' round trip, so a lone CTA runs as one of two (measured 1 - 188.4 / 190.8 = 0.0126):
    the timing's gap under it, and 256 CTAs' loop of 8192 x 28672 + 2 x 64 x 28672 = 238.5 MB
    against 31.46 MB needs delta > 0.132 to refetch: nothing."""
    a = analyze(FP8, None, H200, dict(M=128, N=8192, K=28672, BM=64, BN=64, BK=64, WARPS=8, STAGES=3, GROUP_M=1),
                resources=dict(regs=42, smem=24576), check=False)
    assert a.launches[0].drift is None
    assert not [t for t in a.terms if t.name == "l2 drift"]


def test_vectorized_drift_matches_the_scalar_pricing():
    """explore's arrays price the drift elementwise: the regret row beside its G2 twin and its
    STAGES = 1 variant in one call give the scalar predictions, and the G1 row is the slowest."""
    from tfx.explore import explore
    sweeps = {k: [v] for k, v in REGRET.items()}
    sweeps.update(GROUP_M=[1, 2], STAGES=[1, 5])
    r = explore(GEMM, None, H200, sweeps=sweeps, keep_metrics=True)
    times = {}
    for i in range(r.configs):
        params, _ = r.space.decode(i)
        scalar = analyze(GEMM, None, H200, params=params, check=False)
        assert float(r.columns["time"][i]) == pytest.approx(float(scalar.metrics["performance.predicted_ns"]), rel=1e-9)
        times[(params["GROUP_M"], params["STAGES"])] = float(r.columns["time"][i])
    assert times[(1, 5)] > times[(2, 5)]


# run21's regret row (bf16 1536x28672x4096, 64x128x64 on 2 warps, 3 stages, GROUP_M 1): 249
# registers and 48 KB of shared memory, 4 CTAs an SM (calibration/h200/measured/issue15/run21)
RUN21 = dict(M=1536, N=28672, K=4096, BM=64, BN=128, BK=64, WARPS=2, STAGES=3, GROUP_M=1)
RUN21_RES = dict(regs=249, smem=49152)


def _waves_by_hand(P, delta, L, stagger, waves):
    """The mean the docstring of drift_refetch states, wave by wave: wave w's co-readers start
    min(stagger, delta x w) apart and lose clamp(1 - (L - that) / delta, 0, 1) of the loop; the
    last wave counts by its fraction."""
    total, w = 0.0, 0
    while w < waves:
        weight = min(1.0, waves - w)
        total += weight * min(1.0, max(0.0, 1 - (L - min(stagger, delta * w)) / delta))
        w += 1
    return P * total / waves


def test_drift_refetch_past_the_first_wave():
    """L = 30e6 / 400e6 = 0.075 of the loop. (1) delta 0.25, stagger 0.2, 3.5 waves: wave 0 loses
    1 - 0.075 / 0.25 = 0.7, wave 1 starts min(0.2, 0.25) = 0.2 apart: 1 - (0.075 - 0.2) / 0.25 =
    1.5 -> 1, waves 2 and 3 (half) 1: (0.7 + 1 + 1 + 0.5) / 3.5 = 3.2 / 3.5, x P 0.75 = 0.685714.
    (2) delta 0.05, stagger 0.2, 5 waves, P 0.5: wave 0 1 - 1.5 = -0.5 -> 0, wave 1 0.05 apart:
    1 - (0.075 - 0.05) / 0.05 = 0.5, wave 2 0.1 apart: 1.5 -> 1, waves 3, 4 1: 3.5 / 5 x 0.5 =
    0.35. (3) the dispatcher's offset under the room: delta 0.1, stagger 0.02, 2 waves, P 1:
    wave 0 1 - 0.75 = 0.25, wave 1 min(0.02, 0.1) = 0.02 apart: 1 - (0.075 - 0.02) / 0.1 = 0.45:
    0.7 / 2 = 0.35. (4) one wave (or less) is the first wave's P x (1 - L / delta) = 0.5 x 0.7 =
    0.35 whatever the offset; (5) a loop that fits the room (40e6 > 30e6) loses nothing."""
    assert drift_refetch(0.75, 0.25, 400e6, 30e6, 0.2, 3.5) == pytest.approx(0.75 * 3.2 / 3.5)
    assert drift_refetch(0.5, 0.05, 400e6, 30e6, 0.2, 5) == pytest.approx(0.35)
    assert drift_refetch(1, 0.1, 400e6, 30e6, 0.02, 2) == pytest.approx(0.35)
    assert drift_refetch(0.5, 0.25, 400e6, 30e6, 0.2, 1) == pytest.approx(0.35)
    assert drift_refetch(0.5, 0.25, 400e6, 30e6, 0.2, 0.4) == pytest.approx(0.35)
    assert drift_refetch(0.5, 0.5, 30e6, 40e6, 1, 4) == 0
    for args in [(0.75, 0.25, 0.075, 0.2, 3.5), (0.5, 0.05, 0.075, 0.2, 5), (1, 0.1, 0.075, 0.02, 2)]:
        P, delta, L, stagger, waves = args
        assert drift_refetch(P, delta, 400e6, L * 400e6, stagger, waves) == pytest.approx(_waves_by_hand(*args))
    got = drift_refetch(np.array([0.75, 0.5, 1.0]), np.array([0.25, 0.05, 0.1]), 400e6, 30e6,
                        np.array([0.2, 0.2, 0.02]), np.array([3.5, 5, 2]))
    assert got == pytest.approx([0.75 * 3.2 / 3.5, 0.35, 0.35])


def test_run21s_regret_row_drifts_across_its_waves():
    """1536x28672x4096 64x128x64 w2 s3 G1 at 4 CTAs an SM: a wave of 132 x 4 = 528 CTAs, 24 x 224
    = 5,376 positions, 5,376 / 528 = 10.18 waves; B's co-readers are N / BN = 224 positions apart,
    224 / 528 = 0.424 of a life past the first wave; P = 1 - 1 / 4 = 0.75 (4 CTAs on every SM).
    The wave's loop holds all of B, 224 columns x 128 x 4096 x 2 B = 234,881,024 B, against the
    room 31,457,280 B. Its share is
    drift_refetch's mean over the waves of its own delta (checked wave by wave by hand), above the
    first wave's alone; calibration/h200/measured/l2_groupm_s16 reads 5.24 GB from DRAM, 93% of
    every tile row reading B once (24 x 234.9 MB + 12.6 MB = 5.65 GB)."""
    a = analyze(GEMM, None, H200, RUN21, resources=RUN21_RES, check=False)
    assert a.metrics["occupancy.blocks_per_sm"] == 4
    info = wave_reuse(a.root, a.kernel, a.params, H200, 4)
    (facts,) = [w.drift for w in info.values()]
    assert facts.W == 528
    assert facts.stagger == pytest.approx(224 / 528)
    assert facts.waves == pytest.approx(5376 / 528)
    assert facts.P == pytest.approx(0.75)
    rate = a.launches[0].drift
    L = facts.room / facts.loop_bytes
    assert rate.share == pytest.approx(_waves_by_hand(0.75, rate.delta, L, 224 / 528, 5376 / 528))
    assert rate.share > 0.75 * max(0.0, 1 - L / rate.delta)
    (line,) = [t.detail for t in a.terms if t.name == "l2 drift"]
    assert "past the first wave its co-readers, 224 positions apart, start min(0.424," in line
    assert "the mean over 10.18 waves" in line
