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
    """tiny_sip: 10 ns per single-op command, 50 ns per composite, completion latency 50 ns,
    HBM 16 B/ns + 100 ns, TCM 1024 B/cycle, tensor 256 flop/cycle.

    Per trip: loads a, b 2048 B each = 128 + 128 ns of transfer; mma 2*32^3 / 256 = 256 ns;
    TCM 2 KiB + 2 KiB written by the loads + 12 KiB read/written by the mma = 16 KiB = 16 ns.

    plain (no stages: the in-order command processor's recurrence): a dispatched [0,10],
    transfer [10,138]; b dispatched [10,20], transfer [138,266], lands 366; the mma reads b:
    dispatched 366 + 50 = 416, runs [426,682]; the next a overwrites the buffer the mma read:
    dispatched 682 + 50 = 732. A period of 732 ns per trip; one trip spans 682 < 732, no fill.
    one composite per trip: one command of the recurrence, dispatched in 50 ns, which its
    scheduler streams in 32 rows / 32-row instructions = 1 sub-tile, so nothing overlaps
    inside: max(copy 256, tensor 256) + the other 256 / 1 + latency 100 = 612 ns; it reads
    acc, written by the previous trip's composite, so it is dispatched 50 ns after that one
    finishes: 50 + 612 + 50 = 712 ns per trip (the simulator: the same).
    one composite around the loop: the scheduler streams the trips with double-buffered
    loads and no completion waits: a round is max(copy 256, tensor 256, one trip's loads in
    flight 100 + 256 = 356) = 356, plus a fill of 100 + 256 = 356 once; the composite's 50
    hides under the loop. So per_trip - plain = -20 per trip and plain - around =
    732 t - 356 (t + 1) = 376 t - 356."""
    profile = load_profile(TINY_HW)
    plain = _predicted(_module(tmp_path, "plain"), profile, TRIPS=trips)
    per_trip = _predicted(_module(tmp_path, "per_trip"), profile, TRIPS=trips)
    around = _predicted(_module(tmp_path, "around"), profile, TRIPS=trips)
    assert per_trip - plain == pytest.approx(-20 * trips)
    assert plain - around == pytest.approx(376 * trips - 356)
    if trips > 1:
        assert plain - _predicted(_module(tmp_path, "plain"), profile, TRIPS=trips - 1) == pytest.approx(732)


def test_sip_decode_attention_completion_waits_and_composite_stream():
    """CTX = 128K: 64 blocks per PE. The single-op KV loop is serial; in the in-order
    recurrence 10 of its 16 dispatched commands per block wait for a command still running
    and see it finish one completion latency (250 cycles = 250 ns) later: v (its buffer's
    reader, the previous block's P.V), s_scaled (the mma s), m_block, m_new, m_delta, alpha,
    p (s_shifted), l_block, l (l_rescaled) and acc = mma (p_bf16). k, the q.K^T mma,
    s_shifted, l_rescaled, acc_rescaled and p_bf16 find their inputs long done. So
    completion latency 250 against 0 adds 64 x 10 x 250 = 160000 ns more to the single-op
    kernel than to the composite one (the merge launch, the same in both, waits alike).
    Inside the composite the blocks stream: tensor bound at 2 mmas x 4 rows padded to
    32 x 128 x 256 x 2 / 2048 flop/ns = 2048 ns per block, so halving CTX removes
    32 x 2048 = 65536 ns."""
    module = parse_file(str(SIP_ATTN))
    profile = load_profile("sip")

    def predicted(kernel, **params_knobs):
        knobs = {k: v for k, v in params_knobs.items() if "." in k}
        params = {k: v for k, v in params_knobs.items() if "." not in k}
        return analyze(module, kernel, profile.with_knobs(knobs), params=params).metrics["performance.predicted_ns"]

    single, comp = "decode_attention_single_op", "decode_attention_composite"
    no_rt = {"dispatch.completion_latency": "0"}
    waits_single = predicted(single) - predicted(single, **no_rt)
    waits_comp = predicted(comp) - predicted(comp, **no_rt)
    assert waits_single - waits_comp == pytest.approx(160000)
    assert predicted(comp) - predicted(comp, CTX=65536) == pytest.approx(65536)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_composite_dispatch_vectorized_equals_scalar(tmp_path, variant):
    module = _module(tmp_path, variant)
    profile = load_profile(TINY_HW)
    r = explore(module, module.kernel(None), profile, sweeps={"TRIPS": [1, 3, 8, 64]}, chunk_size=3, keep_metrics=True)
    for i in range(r.configs):
        params, _ = r.space.decode(i)
        assert math.isclose(_predicted(module, profile, **params), float(r.columns["time"][i]),
                            rel_tol=1e-9)


@pytest.mark.parametrize("name", ["decode_attention_single_op", "decode_attention_block_composites",
                                  "decode_attention_composite"])
def test_sip_decode_attention_vectorized_equals_scalar(name):
    """The in-order recurrence, the composite as a command and the streamed loop price a
    sweep (arrays of parameter values) exactly as one configuration at a time."""
    module = parse_file(str(SIP_ATTN))
    kernel = module.kernel(name)
    profile = load_profile("sip")
    sweeps = {"CTX": [8192, 131072], "HQ": [8, 64], "HKV": [1, 8], "BLOCK": [64, 1024]}
    r = explore(module, kernel, profile, sweeps=sweeps, chunk_size=5, keep_metrics=True)
    times = np.asarray(r.columns["time"])
    for i in range(r.configs):
        params, _ = r.space.decode(i)
        a = analyze(module, kernel, profile, params=params, check=False)
        assert math.isclose(a.metrics["performance.predicted_ns"], float(times[i]), rel_tol=1e-9)


PAGED_DECODE = ROOT / "kernels" / "paged_decode.tile"


def test_paged_decode_moves_its_query_once_per_loop_and_agrees_with_the_analysis():
    """paged_decode on h200_sxm, defaults B=32, HKV=8 (256 CTAs), CTX=4096, PAGE=16 (256
    trips of a 16 x 128 bf16 K page and V page, 4096 B each), D=128, GROUP=4.

    ``capture(%q -> rmem)`` moves the query tile once per execution of the KV loop, i.e.
    once per CTA (docs/language.md), not once per trip. The representative SM of the tail
    wave runs cdiv(256, 132) = 2 CTAs, so its timeline holds 2 such moves (it held
    2 x 256 = 512 when the simulator re-issued the capture every trip, each queued on the
    copy engine behind the next trips' loads: a memory latency on every trip, 265 us).

    Copy bound: each of the 132 active SMs gets 4.8 TB/s x 0.883 / 132 = 32.106 B/ns; a K
    or V load moves its 4096 B page plus at most the page id's 8 B: ceil(4104 / 32.106) =
    ceil(127.8) = 128 ns. 2 CTAs x 256 trips x 2 loads x 128 ns = 131,072 ns of copy, after
    the 3,000 ns launch and one 700 ns memory latency: at least 134,772 ns. The pipeline
    (3 stages, 2 CTAs: 2 x 2 x 8 KiB in flight over 700 ns = 46.8 B/ns > 32.1) keeps the
    copy engine busy, so the simulation lands within 2% of that bound and of the analysis.

    The analysis also prices a trip's dependent path at measured instruction latencies
    (tfx.analysis.trip_latency: the next prefetch leaves after it), which the simulator does
    not model, nor the DRAM round trip that grows with the bandwidth the SMs draw
    (tfx.analysis.decode_trip: 2 CTAs x 2 pages of 8,200 B in flight per SM against ~1.1 us of
    loaded latency); the agreement is checked on the profile without those facts, and the
    analysis with them is slower (tests/test_trip_latency.py derives that path)."""
    from profile_variants import without
    latencies = [path for path, _ in load_profile("h200_sxm").facts() if path.startswith("instruction_latency.")]
    assert "instruction_latency.fma" in latencies
    # h200_sxm less every instruction latency and the loaded DRAM round trip (tests/profile_variants.py)
    profile = without("h200_sxm", *latencies, "pipeline.dram_round_trip_at_copy_bandwidth")
    assert profile.get("instruction_latency.fma") is None
    assert profile.get("pipeline.dram_round_trip_at_copy_bandwidth", None) is None
    a = analyze(parse_file(str(PAGED_DECODE)), None, profile)
    from tfx.sim import simulate
    r = simulate(a)
    tl = r.timeline
    moves = [e for e in tl.events if tl.labels[e[3]] == "capture %q -> rmem" and e[5] == 0]
    assert len(moves) == 2
    bound = 3_000 + 2 * 256 * 2 * 128 + 700
    assert bound == 134_772
    assert bound <= r.makespan_ns <= bound * 1.02
    predicted = a.metrics["performance.predicted_ns"]
    assert r.makespan_ns == pytest.approx(predicted, rel=0.02)
    with_path = analyze(parse_file(str(PAGED_DECODE)), None, load_profile("h200_sxm"))
    assert with_path.metrics["performance.predicted_ns"] > predicted
