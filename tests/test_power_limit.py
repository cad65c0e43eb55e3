"""The clock a long serial-chain launch (attention) settles at under the board's power limit
(tfx.analysis.power_limit; docs/analysis.md section 8, "The power limit's clock"). Every number
by hand.

H200 facts (hw_profiles/h200_sxm.toml): power.tensor_share_at_limit 0.618, power.l2_traffic_power
0.443, power.response_time 40 ms (of sustained load), compute.tensor.power_clock_exponent 3,
clock.core 1.98 GHz. P = (tensor_busy + 0.443 x l2_busy) / 0.618; the clock falls to P^(-1/3) of
1.98 GHz where P > 1. A serving step's load is sustained: the whole launch runs at the lower
clock. A launch timed by the campaigns' harness (bench(): do_bench 25 ms, and ten launches more
for one over 2.5 ms) runs at it where the load before its median timed launch reaches 40 ms.
"""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import power_limit
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
F = power_limit.facts(Machine(H200, "cta"))


def test_the_profile_states_the_facts():
    assert F == power_limit.PowerFacts(0.618, 0.443, 40e6, 3)


def test_power_and_clock_by_hand():
    """tensor cores busy 60%, L2 traffic at 70% of its bandwidth: (0.6 + 0.443 x 0.7) / 0.618 =
    0.9101 / 0.618 = 1.472654 of the limit; the clock 1.472654^(-1/3): ln 1.472654 = 0.387065,
    / 3 = 0.129022, e^-0.129022 = 0.878954 (1.740 GHz). Half as busy: 0.45505 / 0.618 = 0.736327,
    under the limit: the clock stays (1). Arrays elementwise."""
    p = power_limit.power_share(0.6, 0.7, F)
    assert p == pytest.approx(0.9101 / 0.618)
    assert p == pytest.approx(1.472654, abs=1e-6)
    assert power_limit.clock_share(p, F) == pytest.approx(0.878954, abs=1e-6)
    assert power_limit.clock_share(power_limit.power_share(0.3, 0.35, F), F) == 1
    got = power_limit.clock_share(power_limit.power_share(np.array([0.6, 0.3]), np.array([0.7, 0.35]), F), F)
    assert got == pytest.approx([0.878954, 1.0], abs=1e-6)


def test_the_harness_load_before_its_median_timed_launch():
    """do_bench estimates over 5 launches, warms up 5 ms, times 25 ms; over 2.5 ms bench() times
    again over 10 launches. T = 1 ms: 5 x 1 + 5 + 25 / 2 = 22.5 ms. T = 2.5 ms (not over): 12.5 +
    5 + 12.5 = 30 ms. T = 4 ms: first call 5 x 4 + 5 + 25 = 50 ms, then 5 x 4 + 5 + 10 x 4 / 2 =
    45 ms: 95 ms."""
    assert power_limit.harness_load_ns(1e6) == pytest.approx(22.5e6)
    assert power_limit.harness_load_ns(2.5e6) == pytest.approx(30e6)
    assert power_limit.harness_load_ns(4e6) == pytest.approx(95e6)
    got = power_limit.harness_load_ns(np.array([1e6, 4e6]))
    assert got == pytest.approx([22.5e6, 95e6])


def test_the_lower_clock_where_the_load_outlasts_the_response():
    """At 0.878954 of the clock a 4 ms launch takes 4 / 0.878954 = 4.550865 ms: sustained (a
    serving step, load None) or after 95 ms of the harness's load (>= 40 ms); after 22.5 ms (< 40)
    it keeps 4 ms."""
    assert power_limit.stretched_ns(4e6, 0.878954, F) == pytest.approx(4.550865e6, rel=1e-6)
    assert power_limit.stretched_ns(4e6, 0.878954, F, 95e6) == pytest.approx(4.550865e6, rel=1e-6)
    assert power_limit.stretched_ns(4e6, 0.878954, F, 22.5e6) == 4e6
    got = power_limit.stretched_ns(np.array([4e6, 4e6]), 0.878954, F, np.array([95e6, 22.5e6]))
    assert got == pytest.approx([4.550865e6, 4e6], rel=1e-6)


def test_busy_shares_are_the_launchs_tensor_time_and_l2_bytes_over_its_time():
    """1,000 positions, each 500 ns of tensor work at the sustained rate and 1 MB through L2, over
    5 ms of launch on 132 SMs: tensor busy 1,000 x 500 / (132 x 5e6) = 0.000758; L2 1,000 x 1e6 B /
    (11,000 B/ns x 5e6 ns) = 0.018182: P = (0.000758 + 0.443 x 0.018182) / 0.618 = 0.014260, the
    clock stays and nothing is added. h100_sxm (the same die's tensor share, 132 SMs, 5/6 of the
    L2 slices: 9,170 B/ns) puts the same bytes at 1e9 / (9,170 x 5e6) = 0.021810 of its L2 and
    prices each share at 0.443 x 5 / 6 = 0.369: P = (0.000758 + 0.369 x 0.021810) / 0.618 =
    0.014249, the same power within the rounding of 0.369. A profile without the power facts
    (h100_sxm less power.*, tests/profile_variants.py) prices none."""
    from profile_variants import without
    for profile, l2, share, power in ((H200, 11_000, 0.443, 0.014260), (load_profile("h100_sxm"), 9_170, 0.369, 0.014249)):
        pc = power_limit.launch(Machine(profile, "cta"), 500, 1e6, 1000, 5e6)
        assert float(pc.tensor_busy) == pytest.approx(1000 * 500 / (132 * 5e6))
        assert float(pc.l2_busy) == pytest.approx(1e9 / (l2 * 5e6))
        assert float(pc.power) == pytest.approx((1000 * 500 / (132 * 5e6) + share * 1e9 / (l2 * 5e6)) / 0.618)
        assert float(pc.power) == pytest.approx(power, rel=1e-3)
        assert float(pc.clock) == 1 and float(pc.ns) == 0
    bare = without("h100_sxm", "power.tensor_share_at_limit", "power.l2_traffic_power", "power.response_time")
    assert power_limit.launch(Machine(bare, "cta"), 500, 1e6, 1000, 5e6) is None


def _flash(B, bm, bn, w, st, regs, smem, S=4096, l2_clear=False):
    g = parse_file(str(ROOT / "kernels" / "flash_attention.tile"))
    return analyze(g, None, H200, dict(B=B, H=32, S=S, D=128, BLOCK_M=bm, BLOCK_N=bn, WARPS=w, STAGES=st),
                   resources={"regs": regs, "smem": smem, "spills": 0}, check=False, l2_clear=l2_clear)


def test_the_long_launch_of_the_busier_tile_loses_the_ranking_it_had():
    """calibration/h200/measured/attn_s19/power, full attention B8 H32 S4096 D128 on random data:
    64 x 64 w4 s3 5.008 ms at 1,710 MHz, 128 x 64 w8 s4 4.680 ms at 1,860 (on zeros 4.302 and
    4.435 ms, both ~1,975 MHz): the zeros order flips on random data (run28's campaign rows: 5.051
    and 4.622 ms). Without the limit the model ranks 64 x 64 first (4.58 against 4.77 ms); its
    tile draws more power (its 64-row tiles pull twice the K and V bytes per flop through the
    L2), so it loses more clock and ranks second."""
    a = _flash(8, 64, 64, 4, 3, 156, 114688)
    b = _flash(8, 128, 64, 8, 4, 153, 163840)
    ta, tb = (float(x.metrics["performance.predicted_ns"]) for x in (a, b))
    assert tb < ta
    da = {t.name: t for t in a.terms}["power limit"]
    db = {t.name: t for t in b.terms}["power limit"]
    assert float(da.ns) > float(db.ns) > 0
    assert "of the limit; the clock falls to" in da.detail and "a serving step's load is sustained" in da.detail
    # without the limit's clock, the order the zeros launches have
    assert ta - float(da.ns) < tb - float(db.ns)


def test_the_harness_times_a_short_launch_at_the_full_clock():
    """calibration/h200/measured/attn_power_s20 by_length.csv: 64 x 64 w4 s3 B1-B4 H32 S4096 D128
    (0.56-2.2 ms) timed by bench() from idle on random data as on zeros (1.012, 1.021, 1.020),
    B8 (4.3 ms) 1.167 slower. At B1 (~0.58 ms): do_bench's median launch after 5 x 0.58 + 5 +
    12.5 = ~20.4 ms of load, under 40 ms: nothing added under the harness; a serving step (no
    harness) pays body / clock - body in full. At B8 the harness's load is 15 x T + 35 ms > 40:
    the term is body / clock - body, as a serving step's."""
    a = _flash(1, 64, 64, 4, 3, 156, 114688, l2_clear=True)
    d = {t.name: t for t in a.terms}["power limit"]
    assert float(d.ns) == 0
    assert "within the controller's response" in d.detail and "it is timed at the full clock" in d.detail
    s = _flash(1, 64, 64, 4, 3, 156, 114688)
    ds = {t.name: t for t in s.terms}["power limit"]
    assert float(ds.ns) > 0
    # the same body and clock priced both ways: the serving step's stretch is body x (1/clock - 1)
    b8 = _flash(8, 64, 64, 4, 3, 156, 114688, l2_clear=True)
    s8 = _flash(8, 64, 64, 4, 3, 156, 114688)
    t8 = {t.name: t for t in b8.terms}["power limit"]
    u8 = {t.name: t for t in s8.terms}["power limit"]
    assert float(t8.ns) == pytest.approx(float(u8.ns)) and float(t8.ns) > 0
    assert "past the controller's response" in t8.detail


def test_worked_example_the_serving_step_stretch():
    """docs/analysis.md's worked example: B8 H32 S4096 D128 64 x 64 w4 s3 (the model's body 4.5785
    ms at clock.core, tensor busy 60.63%, L2 69.30%): P = (0.6063 + 0.443 x 0.6930) / 0.618 =
    (0.6063 + 0.306999) / 0.618 = 0.913299 / 0.618 = 1.477830; clock 1.477830^(-1/3): ln 1.477830
    = 0.390575, / 3 = 0.130192, e^-0.130192 = 0.877927; a serving step (sustained) pays 4.5785 /
    0.877927 - 4.5785 = 5.215125 - 4.5785 = 0.636625 ms."""
    seen = []
    real = power_limit.launch

    def spy(*args, **kw):
        pc = real(*args, **kw)
        seen.append(pc)
        return pc
    power_limit.launch = spy
    try:
        a = _flash(8, 64, 64, 4, 3, 156, 114688)
    finally:
        power_limit.launch = real
    pc = seen[0]
    assert float(pc.tensor_busy) == pytest.approx(0.6063, abs=5e-5)
    assert float(pc.l2_busy) == pytest.approx(0.6930, abs=5e-5)
    assert float(pc.body_ns) == pytest.approx(4.5785e6, abs=50)
    assert float(pc.power) == pytest.approx(1.477830, abs=1e-4)
    assert float(pc.clock) == pytest.approx(0.877927, abs=2e-5)
    assert float(pc.ns) == pytest.approx(0.636625e6, rel=1e-3)
    assert float({t.name: t for t in a.terms}["power limit"].ns) == pytest.approx(float(pc.ns))


def test_a_gemm_takes_no_power_limit_line():
    """A GEMM's tensor rate was measured at the limit (compute.tensor.efficiency): no line."""
    g = parse_file(str(ROOT / "kernels" / "gemm.tile"))
    assert "power limit" not in {t.name for t in analyze(g, None, H200, {}).terms}
