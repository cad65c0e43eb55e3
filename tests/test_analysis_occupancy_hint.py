"""The occupancy hint inside `tfx analyze` (the sm_120 report: 1.65x slower when ignored)."""

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.bundled import bundled_kernel


def _moe(resources):
    m = parse_file(bundled_kernel("moe_w4a16.tile"))
    return analyze(m, None, load_profile("rtx5070ti"), resources=resources, occupancy_hint=2)


def test_the_build_that_ignored_the_hint_runs_one_cta_and_shows_the_gain():
    """384 threads, 168 regs, 100,484 B smem on sm_120 (64K regs, 100 KB smem per SM):
    registers: 168*32 = 5376 per warp (already a multiple of 256), 65536 // 5376 = 12 warps,
    rounded down to 4 -> 12, // 12 warps per CTA = 1 CTA; smem: 100,484 + 1,024 reserved =
    101,508 -> 101,632 (128 B units), 102,400 // 101,632 = 1 CTA. So 1 CTA/SM, the hint of 2
    is not met, and the hinted build (at most 80 regs, 50,176 B) is predicted faster."""
    a = _moe({"threads": 384, "regs": 168, "smem": 100_484})
    assert a.metrics["occupancy.blocks_per_sm"] == 1
    assert a.metrics["occupancy.hint_met"] is False
    assert a.metrics["occupancy.hint_predicted_ns"] < a.metrics["performance.predicted_ns"]
    assert any(t.name == "hint" for t in a.terms)


def test_the_build_that_honoured_the_hint_meets_it():
    """256 threads, 128 regs, 44,068 B: registers 128*32 = 4096 per warp, 65536 // 4096 = 16
    warps // 8 per CTA = 2 CTAs; smem 44,068 + 1,024 = 45,092 -> 45,184, 102,400 // 45,184 = 2.
    2 CTAs/SM: the hint is met and no what-if term is added."""
    a = _moe({"threads": 256, "regs": 128, "smem": 44_068})
    assert a.metrics["occupancy.blocks_per_sm"] == 2
    assert a.metrics["occupancy.hint_met"] is True
    assert "occupancy.hint_predicted_ns" not in a.metrics
