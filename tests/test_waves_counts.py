"""The waves and tail-wave lines write their counts with thousands separators, as every count
of the one unit policy (tfx.hw.units.format_count): '65536 CTAs on 132 sms' read '65,536'; and each
count's noun as a person writes it (tfx.hw.units.format_counted, level_noun): '132 SMs', '64 PEs',
'1 full wave', '1 CTA ... takes' (they read '132 sms', '64 pes', '1 full waves', '1 CTAs ... take')."""

from tfx.analysis.analyze import analyze
from tfx.bundled import bundled_kernel
from tfx.hw import load_profile
from tfx.hw.units import format_counted, level_noun
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")


def _detail(a, name):
    return next(t.detail for t in a.terms if t.name == name)


def test_copy_at_its_defaults():
    """copy.tile N = 268,435,456 elements, BLOCK = 4096: 65,536 CTAs. Resident: the register
    estimate of a loop-free body holds the loaded tile, 4,096 x 2 B / 128 threads = 64 B = 16
    registers, + the row base 16 = 32; a warp takes 32 x 32 = 1,024 registers, so the threads
    (2,048 / 128), the warps (64 / 4) and the registers (65,536 / 1,024 = 64 warps) each allow 16
    CTAs: 16 on 132 SMs = 2,112 slots: 65,536 / 2,112 = 31.03 waves, 31 full, 65,536 - 31 x 2,112
    = 64 in the tail, 64 / 2,112 = 0.03 of a wave."""
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200)
    assert _detail(a, "waves").startswith("65,536 CTAs on 132 SMs x 16 resident = 31.03 waves; ")
    assert _detail(a, "tail wave").startswith("64 CTAs in the last wave (0.03 of a wave) take ")


def test_a_tail_of_more_than_a_thousand_ctas():
    """N = 3,212 x 4,096 = 13,156,352: 3,212 CTAs on 2,112 slots (test_copy_at_its_defaults) =
    1.52 waves, 1 full, a tail of 3,212 - 2,112 = 1,100 CTAs = 1,100 / 2,112 = 0.52 of a wave."""
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200, {"N": 13_156_352})
    assert _detail(a, "waves").startswith("3,212 CTAs on 132 SMs x 16 resident = 1.52 waves; ")
    assert _detail(a, "tail wave").startswith("1,100 CTAs in the last wave (0.52 of a wave) take ")


def test_one_full_wave_and_a_tail_of_one_cta():
    """N = 2,113 x 4,096 = 8,654,848: 2,113 CTAs on 2,112 slots = 2,113 / 2,112 = 1.0005 -> 1.00
    waves, 1 full wave (copy's straight body: the first wave in lock step, no overlapping ones) and
    2,113 - 2,112 = 1 CTA in the tail, 1 / 2,112 = 0.0005 -> 0.00 of a wave."""
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200, {"N": 8_654_848})
    waves = _detail(a, "waves")
    assert waves.startswith("2,113 CTAs on 132 SMs x 16 resident = 1.00 waves; the first wave in lock step ")
    assert "full waves" not in waves
    assert _detail(a, "tail wave").startswith("1 CTA in the last wave (0.00 of a wave) takes ")


def test_the_tiled_accelerator_names_its_pes():
    """sip_gemm at its defaults: M = N = 4,096, TM = TN = 128: 32 x 32 = 1,024 tiles walked by
    CUBES x PES_PER_CUBE = 8 x 8 = 64 PEs, one position a PE: 64 positions on 64 PEs x 1 resident
    = 64 / 64 = 1 wave, whole, so written whole and singular as every count (format_counted, as
    the explorer's 'what moved' line writes performance.waves through fmt.metric: '1'; it read
    '1.00 waves'), 64 // 64 = 1 full wave, no tail."""
    a = analyze(parse_file(bundled_kernel("sip_gemm.tile")), None, load_profile("sip"))
    assert _detail(a, "waves").startswith("64 PEs on 64 PEs x 1 resident = 1 wave; 1 full wave x ")


def test_the_roofline_pane_writes_the_waves_as_the_breakdown():
    """The Roofline pane's 'Predicted ... (bound by ..., N waves)' writes the same count as the
    breakdown's waves line: copy.tile at N = 2,112 x 4,096 = 8,650,752 is 2,112 CTAs on
    132 x 16 = 2,112 slots (test_copy_at_its_defaults) = exactly 1 wave ('1 wave', where the pane
    wrote '1.00 waves'); at N = 3,212 x 4,096 it is 3,212 / 2,112 = 1.5208 -> '1.52 waves' on both."""
    from tfx.tui import core
    from tfx.tui.widgets.roofline import roofline_text
    for n, words in ((8_650_752, "1 wave"), (13_156_352, "1.52 waves")):
        a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200, {"N": n})
        assert _detail(a, "waves").startswith(f"{n // 4096:,} CTAs on 132 SMs x 16 resident = {words}; ")
        assert f", {words})" in roofline_text(core.Outcome(1, analysis=a)).plain


def test_counted_nouns():
    """Singular at exactly one, the plural otherwise (0 and 1.5 too); acronym levels in capitals."""
    assert format_counted(1, "full wave") == "1 full wave"
    assert format_counted(0, "full wave") == "0 full waves"
    assert format_counted(132, "SM") == "132 SMs"
    assert format_counted(1.5, "wave") == "1.50 waves"
    assert format_counted(65536, "CTA") == "65,536 CTAs"
    assert [level_noun(x) for x in ("sm", "pe", "cube", "warp")] == ["SM", "PE", "cube", "warp"]


def test_the_l2_hand_off_counts_its_waves_and_groups():
    """launch_handoff.describe writes its waves and wave groups as counts with their nouns and the
    verb agreeing (format_counted, verb_for), where it wrote '{waves:.2f} waves, {n} wave group(s)'
    and '= 1 leave': 3.88 waves -> n = ceil(3.88) = 4 groups, 135.81 MB with 31.46 MB of room:
    min(4, floor(31.46 x 4 / 135.81) + 1) = min(4, 0 + 1) = 1 group leaves; 1 wave -> 1 group,
    min(1, floor(31.46 / 20) + 1) = 1; 8 waves, 60 MB, room 30 MB: min(8, floor(30 x 8 / 60) + 1)
    = 5 groups leave."""
    from tfx.analysis import launch_handoff

    def words(total, waves, room):
        return launch_handoff.describe((0.5, total, waves, room, "mesh cta", ["O_PART"]), lambda b: f"{b / 1e6:.2f} MB")
    a = words(135.81e6, 3.88, 31.46e6)
    assert "over 3.88 waves, 4 wave groups of 33.95 MB;" in a and ") + 1) = 1 leaves their lines" in a
    b = words(20e6, 1, 31.46e6)
    assert "over 1 wave, 1 wave group of 20.00 MB;" in b and ") + 1) = 1 leaves their lines" in b
    c = words(60e6, 8, 30e6)
    assert "over 8 waves, 8 wave groups of 7.50 MB;" in c and ") + 1) = 5 leave their lines" in c


def test_the_json_carries_the_waves_lines_numbers():
    """tfx analyze --json's performance.launches: the counts the waves and tail-wave lines write,
    where the JSON had only their sum (performance.waves) and the terms' ns. copy.tile at its
    defaults (test_copy_at_its_defaults): 65,536 positions on 132 SMs x 16 resident, 65,536 /
    2,112 = 31.03... waves, 31 full, 64 in the tail; the tail's ns is the tail-wave term's."""
    import json
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200)
    (lt,) = json.loads(json.dumps(a.to_json()))["performance"]["launches"]
    assert (lt["positions"], lt["units"], lt["resident"], lt["full_waves"], lt["tail_positions"]) == (
        65_536, 132, 16, 31, 64)
    assert lt["waves"] == 65_536 / 2_112
    assert lt["bound_by"] == a.metrics["performance.bound_by"] and lt["scope"] == a.launches[0].scope
    tail = next(t for t in a.terms if t.name == "tail wave")
    assert lt["tail_ns"] == float(tail.ns)
    assert lt["total_ns"] == float(a.launches[0].total_ns)
