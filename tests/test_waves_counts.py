"""The waves and tail-wave lines write their counts with thousands separators, as every count
of the one unit policy (tfx.hw.units.format_count): '65536 CTAs on 132 sms' read '65,536'."""

from tfx.analysis.analyze import analyze
from tfx.bundled import bundled_kernel
from tfx.hw import load_profile
from tfx.lang import parse_file

H200 = load_profile("h200_sxm")


def _detail(a, name):
    return next(t.detail for t in a.terms if t.name == name)


def test_copy_at_its_defaults():
    """copy.tile N = 268,435,456 elements, BLOCK = 4096: 65,536 CTAs; 10 resident on 132 SMs =
    1,320 slots: 65,536 / 1,320 = 49.65 waves, 49 full, 65,536 - 49 x 1,320 = 856 in the tail."""
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200)
    assert _detail(a, "waves").startswith("65,536 CTAs on 132 sms x 10 resident = 49.65 waves; ")
    assert _detail(a, "tail wave").startswith("856 CTAs in the last wave (0.65 of a wave) take ")


def test_a_tail_of_more_than_a_thousand_ctas():
    """N = 2,420 x 4,096 = 9,912,320: 2,420 CTAs on 1,320 slots = 1.83 waves, 1 full, a tail of
    2,420 - 1,320 = 1,100 CTAs = 1,100 / 1,320 = 0.83 of a wave."""
    a = analyze(parse_file(bundled_kernel("copy.tile")), None, H200, {"N": 9_912_320})
    assert _detail(a, "waves").startswith("2,420 CTAs on 132 sms x 10 resident = 1.83 waves; ")
    assert _detail(a, "tail wave").startswith("1,100 CTAs in the last wave (0.83 of a wave) take ")
