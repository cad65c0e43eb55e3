"""The explorer's quick run-check (tfx.execute.quick) and the sizes `tfx run` proposes."""

from __future__ import annotations

import pytest

from tfx.errors import TfxError
from tfx.execute import estimate, execute
from tfx.execute.quick import QUICK_SECONDS, quick_check, summary, twins
from tfx.hw import load_profile
from tfx.ir.bind import bind, profile_units
from tfx.lang import parse_file, parse_text


def test_refusal_proposes_sizes_that_run_in_about_a_second():
    """copy.tile at its default N = 2^28: per element a load, a store and the two tensors
    X and Y (drawn / filled): 4 N elements x 2e-8 s = 21.5 s, over the 10 s limit (2 steps,
    no flops). Halving N (the only size; BLOCK halvings leave the estimate unchanged and a
    size goes first) until 8e-8 N <= 1 s: 2^24 gives 1.34 s, 2^23 = 8388608 gives 0.67 s."""
    module = parse_file("kernels/copy.tile")
    with pytest.raises(TfxError) as err:
        execute(module, module.kernel())
    assert "about 21 s on one CPU core (limit 10 s)" in str(err.value)
    assert str(err.value).endswith("try --set N=8388608")


def test_the_proposal_for_a_gemm_fits_and_halves_defaults():
    module = parse_file("kernels/gemm.tile")
    k = module.kernel()
    with pytest.raises(TfxError) as err:
        execute(module, k)
    proposal = dict(item.split("=") for item in str(err.value).split("try --set ")[1].split(" --set "))
    proposal = {n: int(v) for n, v in proposal.items()}
    assert set(proposal) <= {"M", "N", "K"} and all(4096 % v == 0 for v in proposal.values())
    assert estimate(module, k, bind(module, k, proposal)).seconds <= 1.0


def test_quick_check_shrinks_and_checks_against_the_twins():
    module = parse_file("kernels/sip_decode_attention.tile")
    k = module.kernel("decode_attention_composite")
    assert [t.name for t in twins(module, k)] == ["decode_attention_single_op",
                                                  "decode_attention_block_composites"]
    # sip's 8 cubes of 8 PEs (let CUBES = units(cube)), as the explorer passes its analysis'
    units = profile_units(module, k, load_profile("sip"))
    assert units == {"units(cube)": 8, "units(pe)": 8 * 8}
    out = quick_check(module, "decode_attention_composite", units=units)
    assert out["error"] is None and out["pass"] is True
    assert [(o["name"], o["against"], o["max_abs_error"]) for o in out["outputs"]] == [
        ("O", "decode_attention_single_op", 0.0), ("O", "decode_attention_block_composites", 0.0)]
    # Each shrunk parameter is its default halved some times, and the run fits the limit.
    defaults = {p.name: int(p.default.evaluate({})) for p in k.params}
    for name, value in out["shrunk"].items():
        assert value < defaults[name] and defaults[name] % value == 0
    assert estimate(module, k, bind(module, k, out["shrunk"], units=units)).seconds <= QUICK_SECONDS


LOSSY = """
kernel halves {
  param N = 16
  param BLOCK = 4
  tensor X : f32[N] @gmem in
  tensor Y : f32[N] @gmem out
  mesh cta[cdiv(N, BLOCK) - 1] as (p) capture(X, Y) {
    %x = load X[p * BLOCK : BLOCK] -> rmem
    store %x -> Y[p * BLOCK : BLOCK]
  }
}
"""

TWINS = """
kernel scaled {
  tensor X : f32[8] @gmem in
  tensor Y : f32[8] @gmem out
  mesh cta[1] as (p) capture(X, Y) {
    %x = load X[:] -> rmem
    %y = mul %x, 2.0
    store %y -> Y[:]
  }
}

kernel off {
  tensor X : f32[8] @gmem in
  tensor Y : f32[8] @gmem out
  mesh cta[1] as (p) capture(X, Y) {
    %x = load X[:] -> rmem
    %y = add %x, %x
    %z = add %y, 1.0
    store %z -> Y[:]
  }
}
"""


def test_quick_check_finds_unwritten_outputs_and_twins_that_disagree():
    """halves launches cdiv(16, 4) - 1 = 3 CTAs: Y[12..15] is never written, 4 NaN.
    scaled vs off: 2x against 2x + 1, an error of exactly 1 everywhere; rtol is
    4 x 2^-23 + 8 x 2^-23 = 1.4e-6
    (both kernels are f32 only), so every element fails."""
    out = quick_check(parse_text(LOSSY, "l.tile"))
    assert out["pass"] is False and out["outputs"][0]["unwritten"] == 4
    assert "4 elements never written" in summary(out)
    out = quick_check(parse_text(TWINS, "t.tile"), "scaled")
    (o,) = out["outputs"]
    assert o["against"] == "off" and o["max_abs_error"] == 1.0 and o["pass"] is False
    assert "FAIL" in summary(out)


def test_quick_check_reports_bad_input_as_an_error_line():
    out = quick_check(parse_file("kernels/gemm.tile"), "nope")
    assert out["pass"] is False and "no kernel named 'nope'" in out["error"]
