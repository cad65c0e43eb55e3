"""Knobs: ``--knob PATH=VALUE`` absolute or factor, suffix and alias paths, refusals by name.

Expected numbers are derived by hand in the comments (datasheet value x factor,
or the unit definition).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfx.cli.main import main
from tfx.errors import TfxError
from tfx.hw import load_profile, resolve_knob_path


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


# ------------------------------------------------------------- absolute

@pytest.mark.parametrize("text, expected", [
    ("1.2e12", 1.2e12),          # no unit: canonical B/s
    ("3.2TB/s", 3.2e12),         # 3.2 x 1e12
    ("3.2 TB/s", 3.2e12),
    ("6000GB/s", 6e12),          # 6000 x 1e9
    ("5000 B/ns", 5e12),         # 5000 x 1e9 B/s
    ("4096", 4096.0),
])
def test_absolute_bandwidth_knob(text, expected):
    profile = load_profile("h200_sxm", knobs={"memory.gmem.bandwidth": text})
    assert profile.value("memory.gmem.bandwidth") == pytest.approx(expected)


def test_absolute_knobs_on_other_families():
    profile = load_profile("h100_sxm", knobs={"clock.core": "1.5GHz", "memory.smem.capacity": "100KiB",
                                              "launch.overhead": "5us", "hierarchy.sm.count": "100"})
    assert profile.value("clock.core") == pytest.approx(1.5e9)
    assert profile.value("memory.smem.capacity") == 100 * 1024     # 102400 B
    assert profile.value("launch.overhead") == pytest.approx(5000)  # 5 us in ns
    assert profile.value("hierarchy.sm.count") == 100
    # 4096 flop/cycle x 100 SMs x 1.5e9 Hz: knobs reach the derived numbers.
    assert profile.peak_flops_per_s("tensor", "bf16") == pytest.approx(4096 * 100 * 1.5e9)


# --------------------------------------------------------------- factors

@pytest.mark.parametrize("text, expected", [
    ("x2", 9.6e12),      # 4.8 TB/s x 2
    ("*2", 9.6e12),
    ("x0.5", 2.4e12),    # 4.8 / 2
    ("/2", 2.4e12),
    ("/3", 1.6e12),      # 4.8 / 3
    ("x1", 4.8e12),
])
def test_factor_knob(text, expected):
    profile = load_profile("h200_sxm", knobs={"memory.gmem.bandwidth": text})
    assert profile.value("memory.gmem.bandwidth") == pytest.approx(expected)


def test_factor_on_a_count_stays_an_integer():
    profile = load_profile("h100_sxm", knobs={"sm.count": "/2"})
    assert profile.value("hierarchy.sm.count") == 66           # 132 / 2
    assert isinstance(profile.value("hierarchy.sm.count"), int)
    assert profile.units_of("sm") == 66


def test_knobbed_fact_records_what_it_replaced():
    fact = load_profile("h200_sxm", knobs={"hbm.bandwidth": "x2"}).fact("memory.gmem.bandwidth")
    assert fact.knob == "x2"
    assert fact.origin == "estimated"                          # a what-if, not the datasheet
    assert "was 4.8 TB/s" in fact.source and "vendor" in fact.source
    assert (fact.raw_value, fact.raw_unit) == (9.6, "TB/s")    # scaled in the unit it was written in


def test_knobs_do_not_change_the_original_profile():
    base = load_profile("h200_sxm")
    changed = base.with_knobs({"memory.gmem.bandwidth": "x2"})
    assert base.value("memory.gmem.bandwidth") == pytest.approx(4.8e12)
    assert changed.value("memory.gmem.bandwidth") == pytest.approx(9.6e12)
    assert load_profile("h200_sxm").value("memory.gmem.bandwidth") == pytest.approx(4.8e12)
    assert base.knobs == {} and changed.knobs == {"memory.gmem.bandwidth": "x2"}


def test_knobs_compose():
    profile = load_profile("h200_sxm").with_knobs({"gmem.bandwidth": "x2"}).with_knobs(
        {"gmem.bandwidth": "x2"})
    assert profile.value("memory.gmem.bandwidth") == pytest.approx(4 * 4.8e12)


def test_with_no_knobs_is_the_same_profile():
    profile = load_profile("h200_sxm")
    assert profile.with_knobs({}) is profile
    assert profile.with_knobs(None) is profile


# ------------------------------------------------------------ path forms

@pytest.mark.parametrize("profile_name, spelled, canonical", [
    ("h200_sxm", "memory.gmem.bandwidth", "memory.gmem.bandwidth"),
    ("h200_sxm", "gmem.bandwidth", "memory.gmem.bandwidth"),      # unique suffix
    ("h200_sxm", "hbm.bandwidth", "memory.gmem.bandwidth"),       # alias of gmem on GPUs
    ("h200_sxm", "memory.hbm.bandwidth", "memory.gmem.bandwidth"),
    ("h200_sxm", "sm.count", "hierarchy.sm.count"),
    ("h200_sxm", "core", "clock.core"),
    ("h200_sxm", "smem_per_sm", "occupancy.smem_per_sm"),
    ("sip", "hbm.bandwidth", "memory.hbm.bandwidth"),             # literally hbm on the SIP
    ("sip", "gmem.bandwidth", "memory.hbm.bandwidth"),            # and gmem is its alias
    ("sip", "tcm.capacity", "memory.tcm.capacity"),
    ("sip", "single_op", "dispatch.single_op"),
    ("sip", "d2d.bandwidth", "links.d2d.bandwidth"),
])
def test_knob_path_forms(profile_name, spelled, canonical):
    assert resolve_knob_path(load_profile(profile_name), spelled) == canonical


def test_sip_knobs():
    sip = load_profile("sip", knobs={"hbm.bandwidth": "x2", "dma.hold_channel_for_round_trip": "0",
                                     "dispatch.composite": "20", "cube.count": "4"})
    assert sip.value("memory.hbm.bandwidth") == pytest.approx(512e9)   # 256 B/ns x 2
    assert sip.value("dma.hold_channel_for_round_trip") == 0
    assert sip.value("dispatch.composite") == 20
    assert sip.units_of("pe") == 4 * 8


def test_absolute_knob_may_set_an_unavailable_fact():
    b200 = load_profile("b200", knobs={"memory.l2.bandwidth": "20TB/s"})
    assert b200.value("memory.l2.bandwidth") == pytest.approx(20e12)
    assert "was unavailable" in b200.fact("memory.l2.bandwidth").source


def test_numeric_knob_paths():
    paths = load_profile("h200_sxm").numeric_knob_paths()
    assert "memory.gmem.bandwidth" in paths and "clock.core" in paths
    assert "memory.gmem.scope" not in paths                  # a setting
    assert "memory.rmem.bandwidth" not in paths              # unavailable: nothing to scale


def test_knobbed_profile_round_trips_through_toml(tmp_path):
    profile = load_profile("h200_sxm", knobs={"hbm.bandwidth": "/3", "sm.count": "100",
                                              "clock.core": "1.7GHz"})
    path = tmp_path / "what_if.toml"
    path.write_text(profile.to_toml(name="what_if"))
    again = load_profile(path)
    assert again.facts() == profile.facts()
    assert again.value("memory.gmem.bandwidth") == profile.value("memory.gmem.bandwidth")


@settings(max_examples=60, deadline=None)
@given(factor=st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False))
def test_factor_then_inverse_factor_is_identity(factor):
    profile = load_profile("h200_sxm")
    scaled = profile.with_knobs({"gmem.bandwidth": f"x{factor!r}"})
    assert scaled.value("memory.gmem.bandwidth") == pytest.approx(4.8e12 * factor, rel=1e-12)
    back = scaled.with_knobs({"gmem.bandwidth": f"/{factor!r}"})
    assert back.value("memory.gmem.bandwidth") == pytest.approx(4.8e12, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(value=st.floats(min_value=1e3, max_value=1e6, allow_nan=False, allow_infinity=False),
       unit_and_scale=st.sampled_from([("B/s", 1), ("GB/s", 1e9), ("TB/s", 1e12), ("B/ns", 1e9),
                                       ("GiB/s", 2 ** 30), ("Gb/s", 1e9 / 8)]))
def test_absolute_knob_with_any_bandwidth_unit(value, unit_and_scale):
    unit, scale = unit_and_scale
    profile = load_profile("h200_sxm", knobs={"gmem.bandwidth": f"{value!r}{unit}"})
    assert profile.value("memory.gmem.bandwidth") == pytest.approx(value * scale, rel=1e-12)


# -------------------------------------------------------------- refusals

KNOB_REFUSALS = [
    # (case id, profile, knob, text the one-line error must contain)
    ("unknown path, suggests close names", "h200_sxm", "memory.gmem.bandwith=x2",
     "--knob memory.gmem.bandwith: error: unknown fact in profile h200_sxm; "
     "did you mean memory.gmem.bandwidth"),
    ("unknown short path", "h200_sxm", "hbm.bandwidht=x2", "did you mean memory.gmem.bandwidth"),
    ("unknown path, nothing close", "h200_sxm", "qqq=1", "--knob qqq: error: unknown fact in profile h200_sxm"),
    ("ambiguous suffix", "h200_sxm", "bandwidth=x2", "--knob bandwidth: error: ambiguous, matches"),
    ("setting, not a number", "h200_sxm", "memory.gmem.scope=x2",
     "--knob memory.gmem.scope: error: memory.gmem.scope is a setting"),
    ("GPU has no tcm", "h200_sxm", "tcm.capacity=1MiB", "--knob tcm.capacity: error: unknown fact"),
    ("non-number", "h200_sxm", "gmem.bandwidth=fast",
     "--knob gmem.bandwidth: error: expected a number (1.2e12, 3.2TB/s) or a factor (x2, /2), found 'fast'"),
    ("non-number factor", "h200_sxm", "gmem.bandwidth=xfast",
     "--knob gmem.bandwidth: error: expected a number after 'x', found 'xfast'"),
    ("not a finite number", "h200_sxm", "gmem.bandwidth=inf", "--knob gmem.bandwidth: error: expected a number (1.2e12, 3.2TB/s) or a factor (x2, /2), found 'inf'"),
    ("zero factor", "h200_sxm", "gmem.bandwidth=x0",
     "--knob gmem.bandwidth: error: a factor must be a finite number > 0, found 'x0'"),
    ("negative factor", "h200_sxm", "gmem.bandwidth=x-2", "a factor must be a finite number > 0"),
    ("negative bandwidth", "h200_sxm", "memory.gmem.bandwidth=-1",
     "--knob memory.gmem.bandwidth: error: bandwidth must be a number > 0, got -1"),
    ("zero bandwidth", "h200_sxm", "hbm.bandwidth=0TB/s",
     "--knob hbm.bandwidth: error: bandwidth must be a number > 0"),
    ("zero SMs", "h200_sxm", "sm.count=0", "--knob sm.count: error: count must be a whole number >= 1"),
    ("fractional SMs", "h200_sxm", "sm.count=/2.5",
     "--knob sm.count: error: count must be a whole number >= 1, got 52.8 (/2.5 of 132 count)"),  # 132 / 2.5
    ("fractional occupancy limit", "h200_sxm", "occupancy.max_blocks_per_sm=31.5",
     "max_blocks_per_sm must be a whole number >= 1"),
    ("zero clock", "h200_sxm", "clock.core=0", "--knob clock.core: error: core must be a number > 0"),
    ("negative clock", "h200_sxm", "clock.core=-1.9GHz", "core must be a number > 0"),
    ("unit of another family", "h200_sxm", "clock.core=3TB/s",
     "--knob clock.core: error: unit 'TB/s' does not fit; expected Hz, kHz, MHz, GHz, found '3TB/s'"),
    ("per-second rate for a per-cycle fact", "h200_sxm", "tensor.bf16=989TFLOP/s",
     "unit 'TFLOP/s' does not fit; expected flop/cycle"),
    ("flag other than 0/1", "sip", "dma.hold_channel_for_round_trip=2",
     "hold_channel_for_round_trip must be 0 or 1, got 2"),
    ("scaling an unavailable fact", "b200", "memory.l2.bandwidth=x2",
     "cannot scale an unavailable fact (not published; not measured)"),
    ("malformed item", "h200_sxm", "gmem.bandwidth", "--knob: error: expected NAME=VALUE, found 'gmem.bandwidth'"),
]


@pytest.mark.parametrize("profile, knob, expected", [c[1:] for c in KNOB_REFUSALS],
                         ids=[c[0] for c in KNOB_REFUSALS])
def test_bad_knob_is_refused_by_name(profile, knob, expected, capsys):
    rc, out, err = run_cli(capsys, "hw", "show", profile, "--knob", knob)
    assert rc == 2
    assert expected in err, err
    assert len(err.strip().splitlines()) == 1        # one line, no traceback
    assert out == ""


def test_python_api_refuses_with_where_knob():
    with pytest.raises(TfxError) as info:
        load_profile("h200_sxm", knobs={"memory.gmem.bandwidth": -1})
    assert info.value.where == "--knob memory.gmem.bandwidth"
    assert info.value.message.startswith("bandwidth must be")
    with pytest.raises(TfxError, match="expected a number, not a boolean"):
        load_profile("h200_sxm", knobs={"memory.gmem.bandwidth": True})


def test_cli_show_with_knobs(capsys):
    rc, out, err = run_cli(capsys, "hw", "show", "h200_sxm", "--knob", "hbm.bandwidth=x2",
                           "--knob", "sm.count=66", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["knobs"] == {"memory.gmem.bandwidth": "x2", "hierarchy.sm.count": "66"}
    facts = {f["path"]: f for f in data["facts"]}
    assert facts["memory.gmem.bandwidth"]["value"] == pytest.approx(9.6e12)   # 4.8 TB/s x 2
    assert facts["memory.gmem.bandwidth"]["knob"] == "x2"
    assert facts["hierarchy.sm.count"]["value"] == 66
    rc, out, err = run_cli(capsys, "hw", "show", "h200_sxm", "--knob", "hbm.bandwidth=x2")
    assert rc == 0, err
    assert "knob: memory.gmem.bandwidth=x2" in out
    row = next(line for line in out.splitlines() if line.startswith("memory.gmem.bandwidth "))
    assert "9.60 TB/s" in row and "(knob)" in row
