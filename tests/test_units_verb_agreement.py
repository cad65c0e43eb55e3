"""tfx.hw.units.format_counted_verb / verb_for: a count, its noun and a verb that agrees with it,
where occupancy, cta_launch and explore matched the verb to the count by hand. Each expected
string is written by hand: singular noun and verb + "s" at exactly one, the plural noun
(noun + "s") and the verb as given otherwise."""

from tfx.hw.units import format_counted_verb, verb_for


def test_one_takes_the_singular_verb():
    assert format_counted_verb(1, "CTA", "take") == "1 CTA takes"
    assert format_counted_verb(1, "knob", "change") == "1 knob changes"
    assert format_counted_verb(1.0, "CTA", "need") == "1 CTA needs"


def test_other_counts_take_the_plural_verb():
    assert format_counted_verb(2, "CTA", "take") == "2 CTAs take"
    assert format_counted_verb(3, "knob", "change") == "3 knobs change"
    assert format_counted_verb(0, "knob", "change") == "0 knobs change"
    assert format_counted_verb(1024, "CTA", "exceed") == "1,024 CTAs exceed"   # thousands separator
    assert format_counted_verb(1.5, "wave", "overlap") == "1.50 waves overlap"  # not exactly one


def test_irregular_verbs_and_an_own_plural():
    assert format_counted_verb(1, "CTA", "are") == "1 CTA is"
    assert format_counted_verb(4, "CTA", "are") == "4 CTAs are"
    assert format_counted_verb(1, "CTA", "do") == "1 CTA does"
    assert format_counted_verb(1, "CTA", "have") == "1 CTA has"
    assert format_counted_verb(1, "batch", "finish", "batches") == "1 batch finishes"   # sh -> es
    assert format_counted_verb(2, "batch", "finish", "batches") == "2 batches finish"
    assert format_counted_verb(1, "CTA/SM", "need", "CTAs/SM") == "1 CTA/SM needs"


def test_verb_alone():
    assert verb_for(1, "do") == "does"
    assert verb_for(2, "do") == "do"
    assert verb_for(1, "pass") == "passes"
    assert verb_for(1, "reach") == "reaches"
