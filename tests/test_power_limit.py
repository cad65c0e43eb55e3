"""The clock a long serial-chain launch (attention) settles at under the board's power limit
(tfx.analysis.power_limit; docs/analysis.md section 8, "The power limit's clock"). Every number
by hand.

H200 facts (hw_profiles/h200_sxm.toml): power.tensor_share_at_limit 0.618, power.l2_traffic_power
0.443, power.response_time 0.56 ms, compute.tensor.power_clock_exponent 3, clock.core 1.98 GHz.
P = (tensor_busy + 0.443 x l2_busy) / 0.618; the clock falls to P^(-1/3) of 1.98 GHz where P > 1;
a launch runs its first 0.56 ms at 1.98 GHz and the rest at the lower clock.
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
    assert F == power_limit.PowerFacts(0.618, 0.443, 0.56e6, 3)


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


def test_the_first_response_time_runs_at_the_boost_clock():
    """At 0.878954 of the clock: a 4 ms launch takes 0.56 + 3.44 / 0.878954 = 0.56 + 3.913743 =
    4.473743 ms; a 0.5 ms one ends before the controller acts: 0.5 ms."""
    assert power_limit.stretched_ns(4e6, 0.878954, F) == pytest.approx(4.473743e6, rel=1e-6)
    assert power_limit.stretched_ns(0.5e6, 0.878954, F) == 0.5e6
    got = power_limit.stretched_ns(np.array([4e6, 0.5e6]), 0.878954, F)
    assert got == pytest.approx([4.473743e6, 0.5e6], rel=1e-6)


def test_busy_shares_are_the_launchs_tensor_time_and_l2_bytes_over_its_time():
    """1,000 positions, each 500 ns of tensor work at the sustained rate and 1 MB through L2, over
    5 ms of launch on 132 SMs: tensor busy 1,000 x 500 / (132 x 5e6) = 0.000758; L2 1,000 x 1e6 B /
    (11,000 B/ns x 5e6 ns) = 0.018182: P = (0.000758 + 0.443 x 0.018182) / 0.618 = 0.014260, the
    clock stays and nothing is added. A profile without the facts (the H100's) prices none."""
    m = Machine(H200, "cta")
    pc = power_limit.launch(m, 500, 1e6, 1000, 5e6)
    assert float(pc.tensor_busy) == pytest.approx(1000 * 500 / (132 * 5e6))
    assert float(pc.l2_busy) == pytest.approx(1e9 / (11_000 * 5e6))
    assert float(pc.power) == pytest.approx((0.000758 + 0.443 * 0.018182) / 0.618, rel=1e-3)
    assert float(pc.clock) == 1 and float(pc.ns) == 0
    assert power_limit.launch(Machine(load_profile("h100_sxm"), "cta"), 500, 1e6, 1000, 5e6) is None


def _flash(B, bm, bn, w, st, regs, smem, S=4096):
    g = parse_file(str(ROOT / "kernels" / "flash_attention.tile"))
    return analyze(g, None, H200, dict(B=B, H=32, S=S, D=128, BLOCK_M=bm, BLOCK_N=bn, WARPS=w, STAGES=st),
                   resources={"regs": regs, "smem": smem, "spills": 0}, check=False)


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
    assert "of the limit; the clock falls to" in da.detail and "(power.response_time)" in da.detail
    # without the limit's clock, the order the zeros launches have
    assert ta - float(da.ns) < tb - float(db.ns)


def test_a_launch_shorter_than_the_response_keeps_the_clock():
    """The same 64 x 64 tile at B1 H32 S2048 (~0.16 ms): over the limit, but the launch ends
    before the controller acts: its line says so and adds nothing. At B1 S4096 (~0.58 ms, the
    length attn_s19 timed on random data as on zeros: 0.558 against 0.574 ms) it adds under 1%."""
    a = _flash(1, 64, 64, 4, 3, 156, 114688, S=2048)
    d = {t.name: t for t in a.terms}["power limit"]
    assert float(d.ns) == 0
    assert "ends within the controller's response" in d.detail
    b = _flash(1, 64, 64, 4, 3, 156, 114688)
    db = {t.name: t for t in b.terms}["power limit"]
    assert 0 < float(db.ns) < 0.01 * float(b.metrics["performance.predicted_ns"])


def test_a_gemm_takes_no_power_limit_line():
    """A GEMM's tensor rate was measured at the limit (compute.tensor.efficiency): no line."""
    g = parse_file(str(ROOT / "kernels" / "gemm.tile"))
    assert "power limit" not in {t.name for t in analyze(g, None, H200, {}).terms}
