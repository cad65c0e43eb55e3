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
    """copy.tile N = 268,435,456 elements, BLOCK = 4096: 65,536 CTAs; 10 resident on 132 SMs =
    1,320 slots: 65,536 / 1,320 = 49.65 waves, 49 full, 65,536 - 49 x 1,320 = 856 in the tail."""
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200)
    assert _detail(a, "waves").startswith("65,536 CTAs on 132 SMs x 10 resident = 49.65 waves; ")
    assert _detail(a, "tail wave").startswith("856 CTAs in the last wave (0.65 of a wave) take ")


def test_a_tail_of_more_than_a_thousand_ctas():
    """N = 2,420 x 4,096 = 9,912,320: 2,420 CTAs on 1,320 slots = 1.83 waves, 1 full, a tail of
    2,420 - 1,320 = 1,100 CTAs = 1,100 / 1,320 = 0.83 of a wave."""
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200, {"N": 9_912_320})
    assert _detail(a, "waves").startswith("2,420 CTAs on 132 SMs x 10 resident = 1.83 waves; ")
    assert _detail(a, "tail wave").startswith("1,100 CTAs in the last wave (0.83 of a wave) take ")


def test_one_full_wave_and_a_tail_of_one_cta():
    """N = 1,321 x 4,096 = 5,410,816: 1,321 CTAs on 1,320 slots = 1,321 / 1,320 = 1.0008 -> 1.00
    waves, 1 full wave (copy's straight body: the first wave in lock step, no overlapping ones) and
    1,321 - 1,320 = 1 CTA in the tail, 1 / 1,320 = 0.0008 -> 0.00 of a wave."""
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200, {"N": 5_410_816})
    waves = _detail(a, "waves")
    assert waves.startswith("1,321 CTAs on 132 SMs x 10 resident = 1.00 waves; the first wave in lock step ")
    assert "full waves" not in waves
    assert _detail(a, "tail wave").startswith("1 CTA in the last wave (0.00 of a wave) takes ")


def test_the_tiled_accelerator_names_its_pes():
    """sip_gemm at its defaults: M = N = 4,096, TM = TN = 128: 32 x 32 = 1,024 tiles walked by
    CUBES x PES_PER_CUBE = 8 x 8 = 64 PEs, one position a PE: 64 positions on 64 PEs x 1 resident
    = 64 / 64 = 1.00 waves, 64 // 64 = 1 full wave, no tail."""
    a = analyze(parse_file(bundled_kernel("sip_gemm.tile")), None, load_profile("sip"))
    assert _detail(a, "waves").startswith("64 PEs on 64 PEs x 1 resident = 1.00 waves; 1 full wave x ")


def test_counted_nouns():
    """Singular at exactly one, the plural otherwise (0 and 1.5 too); acronym levels in capitals."""
    assert format_counted(1, "full wave") == "1 full wave"
    assert format_counted(0, "full wave") == "0 full waves"
    assert format_counted(132, "SM") == "132 SMs"
    assert format_counted(1.5, "wave") == "1.50 waves"
    assert format_counted(65536, "CTA") == "65,536 CTAs"
    assert [level_noun(x) for x in ("sm", "pe", "cube", "warp")] == ["SM", "PE", "cube", "warp"]
