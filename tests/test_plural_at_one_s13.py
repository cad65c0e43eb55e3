"""Counts of one in the singular in the breakdown's prose where the count can be one (the
unit policy, docs/architecture.md): the GROUP_M = 1 drift line's rate classes and the
persistent walk's last round of one tile."""

from types import SimpleNamespace

from tfx.analysis.l2_reuse import describe_drift
from tfx.analysis.persistent_rounds import Rounds, detail
from tfx.hw.units import format_time_ns


def _classes(W, units):
    facts = SimpleNamespace(W=W, units=units, P=0.5, loop_bytes=1e9, room=3.1e7)
    rate = SimpleNamespace(b=2, lone_ns=1.0, shared_ns=2.0, delta=0.5, share=0.3)
    line = describe_drift(facts, rate, format_time_ns)
    return line.split("drift apart; ", 1)[1].split(":", 1)[0]


def test_rate_classes_agree_in_number():
    """133 CTAs on 132 SMs: q = 133 // 132 = 1, rem = 133 - 132 = 1 -> one SM holds 2, 131 hold
    1; 264 on 132: q = 2, rem 0; 132 on 132: q = 1, rem 0; one CTA: q = 0, rem = 1."""
    assert _classes(133, 132) == "1 SM holds 2 CTAs, 131 hold 1"
    assert _classes(264, 132) == "every SM holds 2 CTAs"
    assert _classes(132, 132) == "every SM holds 1 CTA"
    assert _classes(1, 132) == "1 SM holds 1 CTA"
    assert _classes(224, 132) == "92 SMs hold 2 CTAs, 40 hold 1"   # 224 - 132 = 92


def test_a_last_round_of_one_tile():
    """7 tiles on 3 CTAs: 2 full rounds (7 // 3) and a last round of 7 mod 3 = 1 tile."""
    rounds = Rounds(loop_id="t", line=12, var="sm", ctas=3, fewest=2, mean=7 / 3, extra=1)
    text = detail(rounds, 100.0, 100.0, lambda ns: f"{ns:.0f} ns")
    assert "7 tiles on 3 CTAs are 2 full rounds and a last round of 1 tile (7 mod 3)" in text
    assert "(only 1 pulling)" in text
