"""A GEMM k-loop's next copies leave after the trip's warpgroup mma (tfx.analysis.copy_behind_mma;
docs/analysis.md section 8, "copy behind the mma"). Every expected number is derived by hand.

H200 facts (hw_profiles/h200_sxm.toml): bf16 4096 flop/cycle x 1.98 GHz = 8,110.08 flop/ns; the
model's sustained rate x 0.74 = 6,001.4592 flop/ns; the warpgroup mma's own rate with every SM
busy x pipeline.wgmma_clock_fraction 0.876 = 7,104.4301 flop/ns; the trip's chain
pipeline.load_trip_overhead 242 / 1.98 = 122.2222 ns; the SM's L2 port 65 x 1.98 = 128.7 B/ns;
the L2 latency 200 ns; DRAM latency 700 ns; one SM's DRAM ceiling 41 x 1.98 = 81.18 B/ns.
"""

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import copy_behind_mma, load_trip
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "kernels" / "gemm.tile"
H200 = load_profile("h200_sxm")
CHAIN = 242 / 1.98
PORT = 65 * 1.98
OWN_RATE = 4096 * 1.98 * 0.876          # flop/ns of the warpgroup mma a copy waits behind
F = load_trip.LoadTrip(CHAIN, PORT)


def _one_cta(bm, bn, bk, warps, stages, k):
    p = {"M": bm, "N": bn, "K": k, "BM": bm, "BN": bn, "BK": bk, "WARPS": warps, "STAGES": stages, "GROUP_M": 1}
    return analyze(parse_file(str(GEMM)), None, H200, p)


def test_chain_is_the_mma_then_the_l2_round_trip():
    """256x128x128 bf16: 98,304 B a trip. L2 round trip 122.2222 + 200 + 98,304 / 128.7 =
    122.2222 + 200 + 763.8228 = 1,086.0451 ns; with a 1,000 ns mma: 2,086.0451 ns; without an
    mma (0): no chain (0), elementwise on arrays."""
    m = Machine(H200, "cta")
    assert copy_behind_mma.chain_ns(1000.0, 98_304, m, F) == pytest.approx(1000 + CHAIN + 200 + 98_304 / PORT)
    assert copy_behind_mma.chain_ns(1000.0, 98_304, m, F) == pytest.approx(2086.0450, abs=1e-3)
    assert copy_behind_mma.chain_ns(0, 98_304, m, F) == 0
    arr = copy_behind_mma.chain_ns(np.array([1000.0, 0.0]), np.array([98_304, 98_304]), m, F)
    assert arr == pytest.approx([2086.0450, 0.0], abs=1e-3)


def test_the_mma_runs_at_the_tensor_cores_own_rate():
    """The model prices 2 x 256 x 128 x 128 = 8,388,608 flop at 6,001.4592 flop/ns = 1,397.7614 ns;
    the copy waits for it at 4096 x 1.98 x 0.876 = 7,104.4301 flop/ns: 1,397.7614 x 0.74 / 0.876
    = 1,180.7573 ns."""
    a = _one_cta(256, 128, 128, 8, 2, 8192)
    loop = [n for n in a.root.walk() if n.kind == "loop"][0]
    m = Machine(H200, "cta")
    got = copy_behind_mma.mma_ns(loop, m, 8, lambda c: 8_388_608 / (8110.08 * 0.74), lambda c: 0.74)
    assert got == pytest.approx(8_388_608 / OWN_RATE)
    assert got == pytest.approx(1180.7573, abs=1e-3)


def test_a_warp_mma_adds_nothing_here():
    """2 warps cannot run the warpgroup mma (mma.sync, already waited for by the prefetch:
    tfx.analysis.mma_path.prefetch_wait): 0."""
    a = _one_cta(64, 64, 64, 2, 2, 8192)
    loop = [n for n in a.root.walk() if n.kind == "loop"][0]
    assert copy_behind_mma.mma_ns(loop, Machine(H200, "cta"), 2, lambda c: 100.0, lambda c: 0.74) == 0


def test_two_stage_trip_is_the_mma_plus_the_l2_round_trip():
    """One CTA of gemm.tile at 256x128x128 on 8 warps, 2 stages; K = 16,384 against 8,192 adds
    64 trips and nothing else. Each trip: the copy behind the mma 1,180.7573 + 1,086.0451 =
    2,266.8024 ns; the DRAM round trip one CTA waits, 122.2222 + 700 + 98,304 / 81.18 (one SM's
    DRAM ceiling, slower than the port) = 122.2222 + 700 + 1,210.9387 = 2,033.1609 ns, and the
    mma at the model's rate, 1,397.7614 ns, are shorter: 64 x 2,266.8024 = 145,075.35 ns (it was
    64 x 2,033.1609 = 130,122.30 ns with the copy flying under the mma)."""
    extra = (_one_cta(256, 128, 128, 8, 2, 16384).metrics["performance.predicted_ns"]
             - _one_cta(256, 128, 128, 8, 2, 8192).metrics["performance.predicted_ns"])
    assert extra == pytest.approx(64 * (8_388_608 / OWN_RATE + CHAIN + 200 + 98_304 / PORT), rel=1e-4)
    assert extra == pytest.approx(145_075.35, rel=1e-4)


def test_deeper_pipelines_spread_it_over_their_copies_in_flight():
    """At 3 stages two copies are in flight: (mma + L2 round trip) / 2. 256x128x64 on 8 warps,
    one CTA: mma 4,194,304 / 7,104.4301 = 590.3787, L2 round trip 122.2222 + 200 + 49,152 /
    128.7 = 122.2222 + 200 + 381.9114 = 704.1336: (590.3787 + 704.1336) / 2 = 647.2562 ns a trip (the breakdown's line). It
    binds the one CTA's trip: the mma alone on one busy SM is 4,194,304 / (8,110.08 x 0.916) =
    564.5979 ns (tests/test_power_clock.py), the DRAM round trip (all 49,152 B from DRAM at one
    SM's 81.18 B/ns) (122.2222 + 557 + 605.4693) / 2 = 642.3458 ns. With the mma at the full clock
    (fraction 1: 4,194,304 / 8,110.08 = 517.1717 ns, (517.1717 + 704.1336) / 2 = 610.6527 ns)
    the DRAM round trip binds instead: 64 trips x (647.2562 - 642.3458) = 314.27 ns less."""
    m = Machine(H200, "cta")
    assert copy_behind_mma.chain_ns(4_194_304 / OWN_RATE, 49_152, m, F) / 2 == pytest.approx(647.2562, abs=1e-3)
    a = _one_cta(256, 128, 64, 8, 3, 4096)
    t = [x for x in a.terms if x.name == "copy behind mma"]
    assert t and "/ (3 - 1) = 647.26 ns a trip at least" in t[0].detail
    p = {"M": 256, "N": 128, "K": 4096, "BM": 256, "BN": 128, "BK": 64, "WARPS": 8, "STAGES": 3, "GROUP_M": 1}
    full = analyze(parse_file(str(GEMM)), None, H200.with_knobs({"pipeline.wgmma_clock_fraction": 1.0}), p)
    saved = float(a.metrics["performance.predicted_ns"]) - float(full.metrics["performance.predicted_ns"])
    assert saved == pytest.approx(64 * (647.2562 - 642.3458), abs=1.0)


def test_breakdown_names_the_term():
    """The breakdown of the 2-stage 256x128x128 trip: 1.18 us of mma, 1.09 us of L2 round trip,
    (1.18 + 1.09) / (2 - 1) = 2.27 us a trip."""
    a = _one_cta(256, 128, 128, 8, 2, 8192)
    t = [x for x in a.terms if x.name == "copy behind mma"]
    assert t and t[0].ns == 0
    assert "1.18 us at the tensor cores' own rate (clock x 0.876)" in t[0].detail
    assert "= 1.09 us" in t[0].detail and "/ (2 - 1) = 2.27 us a trip at least" in t[0].detail


def test_a_profile_without_the_fact_has_no_term():
    """The fact removed from the profile: no mma time, no chain, no breakdown line."""
    class NoFact:
        kind = "gpu"

        class profile:
            @staticmethod
            def get(key, default=None):
                return default
    assert copy_behind_mma.clock_fraction(NoFact) is None
    a = _one_cta(256, 128, 128, 8, 2, 8192)
    loop = [n for n in a.root.walk() if n.kind == "loop"][0]
    assert copy_behind_mma.mma_ns(loop, NoFact, 8, lambda c: 1000.0, lambda c: 0.74) == 0
