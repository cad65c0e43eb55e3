"""The analysis' composite dispatch (performance._scope_time/_loop_time), the model the
simulator's command counts are checked against: hand-derived differences, sweeps."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.explore import explore
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
TINY_HW = str(Path(__file__).parent / "data" / "sim" / "tiny_sip.toml")
SIP_ATTN = ROOT / "kernels" / "sip_decode_attention.tile"

# tiny.tile's loop without stages, written three ways: plain ops, one composite per trip,
# one composite around the whole loop.
LOOP = """
        loop k = 0 to TRIPS carry(%acc) capture(A, B) {
{body}
        }"""
BODY = """          %a = load A[k * 32 : 32, :] -> tcm
          %b = load B[k * 32 : 32, :] -> tcm
          %acc = mma %a, %b, %acc"""
KERNEL = """
kernel t {
  param TRIPS = 4 in 1..64

  tensor A : bf16[TRIPS * 32, 32] @hbm in
  tensor B : bf16[TRIPS * 32, 32] @hbm in
  tensor C : bf16[32, 32] @hbm out

  mesh cube[1] as (c) capture(A, B, C) {
    mesh pe[1] as (p) capture(A, B, C) {
      %acc = zeros f32[32, 32] @tcm
{loop}
      %c = cast %acc to bf16
      store %c -> C[0 : 32, :]
    }
  }
}
"""

def _loop(body):
    return LOOP.replace("{body}", body)


VARIANTS = {
    "plain": KERNEL.replace("{loop}", _loop(BODY)),
    "per_trip": KERNEL.replace("{loop}", _loop("          composite step {\n" + BODY + "\n          }")),
    "around": KERNEL.replace("{loop}", "      composite stream {" + _loop(BODY) + "\n      }"),
}


def _module(tmp_path, name):
    path = tmp_path / f"{name}.tile"
    path.write_text(VARIANTS[name])
    return parse_file(str(path))


def _predicted(module, profile, **params):
    return analyze(module, None, profile, params=params).metrics["performance.predicted_ns"]


@pytest.mark.parametrize("trips", [1, 4, 16])
def test_composite_dispatch_inside_and_around_a_loop(tmp_path, trips):
    """tiny_sip: 10 ns per single-op command, 50 ns per composite. The loop has no stages, so
    each trip costs the latency plus the sum of its engines, dispatch included:
    plain 3 commands x 10 = 30 ns per trip; one composite per trip 50 ns per trip (+20);
    one composite around the loop: no dispatch per trip, 50 ns once, overlapped like an op's
    dispatch by the loop's own time (-30 per trip)."""
    profile = load_profile(TINY_HW)
    plain = _predicted(_module(tmp_path, "plain"), profile, TRIPS=trips)
    per_trip = _predicted(_module(tmp_path, "per_trip"), profile, TRIPS=trips)
    around = _predicted(_module(tmp_path, "around"), profile, TRIPS=trips)
    assert per_trip - plain == pytest.approx(20 * trips)
    assert plain - around == pytest.approx(30 * trips)


def test_sip_decode_attention_composite_saves_its_dispatches():
    """CTX = 128K: 64 blocks per PE, 16 dispatched ops per block at 8 ns, all inside the one
    composite; the KV loop has no stages, so every trip loses its 128 ns of dispatch:
    64 x 128 = 8192 ns less than the single-op kernel (the composite's 40 ns hides under
    the loop). Before, both kernels were predicted the same time."""
    module = parse_file(str(SIP_ATTN))
    profile = load_profile("sip")
    single = analyze(module, "decode_attention_single_op", profile).metrics["performance.predicted_ns"]
    comp = analyze(module, "decode_attention_composite", profile).metrics["performance.predicted_ns"]
    assert single - comp == pytest.approx(64 * 16 * 8)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_composite_dispatch_vectorized_equals_scalar(tmp_path, variant):
    module = _module(tmp_path, variant)
    profile = load_profile(TINY_HW)
    r = explore(module, module.kernel(None), profile, sweeps={"TRIPS": [1, 3, 8, 64]}, chunk_size=3, keep_metrics=True)
    for i in range(r.configs):
        params, _ = r.space.decode(i)
        assert math.isclose(_predicted(module, profile, **params), float(r.columns["time"][i]),
                            rel_tol=1e-9)


def test_sip_decode_attention_composite_vectorized_equals_scalar():
    module = parse_file(str(SIP_ATTN))
    kernel = module.kernel("decode_attention_composite")
    profile = load_profile("sip")
    sweeps = {"CTX": [8192, 131072], "HQ": [8, 64], "HKV": [1, 8], "BLOCK": [64, 1024]}
    r = explore(module, kernel, profile, sweeps=sweeps, chunk_size=5, keep_metrics=True)
    times = np.asarray(r.columns["time"])
    for i in range(r.configs):
        params, _ = r.space.decode(i)
        a = analyze(module, kernel, profile, params=params, check=False)
        assert math.isclose(a.metrics["performance.predicted_ns"], float(times[i]), rel_tol=1e-9)
