"""A GEMM k-loop's next copies leave once the trip's warpgroup mmas are issued, then make their L2
round trip (tfx.analysis.copy_behind_mma; docs/analysis.md section 8, "copy behind the mma"). Every
expected number is derived by hand.

H200 facts (hw_profiles/h200_sxm.toml): bf16 4096 flop/cycle x 1.98 GHz = 8,110.08 flop/ns; the
model's sustained rate x 0.74 = 6,001.4592 flop/ns; the warpgroup mma's own rate with every SM
busy x pipeline.wgmma_clock_fraction 0.876 = 7,104.4301 flop/ns; the trip's chain
pipeline.load_trip_overhead 242 / 1.98 = 122.2222 ns; the SM's L2 port 65 x 1.98 = 128.7 B/ns;
the L2 latency 200 ns; DRAM latency 700 ns; one SM's DRAM ceiling 41 x 1.98 = 81.18 B/ns.
The issue facts (hw_profiles/h100_sxm.toml, calibration/h100/measured/copy_issue_stamps): a warp
keeps pipeline.wgmma_outstanding = 3 HGMMAs outstanding, each holds its sub-partition's issue
pipeline.wgmma_issue_cycles = 25 cycles, the trip's barriers and arrive take
pipeline.wgmma_trip_issue_overhead = 200 cycles, all at the clock under warpgroup mmas 1.98 x 0.876
= 1.73448 GHz: 200 cycles = 115.3083 ns.
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
GATE_UP = ROOT / "tests" / "fixtures" / "kernels" / "gate_up_gemm.tile"
H200 = load_profile("h200_sxm")
CHAIN = 242 / 1.98
PORT = 65 * 1.98
OWN_RATE = 4096 * 1.98 * 0.876          # flop/ns of the warpgroup mma a copy waits behind
F = load_trip.LoadTrip(CHAIN, PORT)
WG_CLOCK = 1.98 * 0.876                 # GHz, the clock the issue cycles run at
OVERHEAD = 200 / WG_CLOCK               # 115.3083 ns


def _one_cta(bm, bn, bk, warps, stages, k):
    p = {"M": bm, "N": bn, "K": k, "BM": bm, "BN": bn, "BK": bk, "WARPS": warps, "STAGES": stages, "GROUP_M": 1}
    return analyze(parse_file(str(GEMM)), None, H200, p)


def test_chain_is_the_leave_then_the_l2_round_trip():
    """256x128x128 bf16: 98,304 B a trip. L2 round trip 122.2222 + 200 + 98,304 / 128.7 =
    122.2222 + 200 + 763.8228 = 1,086.0451 ns; copies that leave 1,000 ns into the trip: 2,086.0451
    ns; without a warpgroup mma (a leave of 0): no chain (0), elementwise on arrays."""
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


def test_issue_shape_counts_each_warpgroups_hgmmas():
    """HGMMAs a warpgroup issues a trip: (its rows / 64) x (its columns / the instruction's N) x
    (K / 16). 128x256x64 on 8 warps: warps 8 x 1 (M 128 > 16 x 4 doubles M), 64 rows and 256
    columns a warpgroup, m64n256k16: 1 x 1 x 4 = 4, 2 warpgroups. 256x128x64 on 8 warps: 128 rows
    (two m64) x 128 columns, m64n128k16: 2 x 1 x 4 = 8. 64x256x64 on 8 warps: warps 4 x 2 (64 rows
    do not double M), 64 x 128 a warpgroup, N = min(256 / (8 / 4), 256) = 128: 1 x 1 x 4 = 4.
    128x128x64 on 4 warps: one warpgroup of 128 rows: 2 x 1 x 4 = 8."""
    m = Machine(H200, "cta")
    for (bm, bn, bk, warps), (k, g) in {(128, 256, 64, 8): (4, 2), (256, 128, 64, 8): (8, 2),
                                        (64, 256, 64, 8): (4, 2), (128, 128, 64, 4): (8, 1)}.items():
        a = _one_cta(bm, bn, bk, warps, 2, 4096)
        loop = [n for n in a.root.walk() if n.kind == "loop"][0]
        shape = copy_behind_mma.issue_shape(next(iter(loop.mma_ops())), m, warps)
        assert (int(shape.k), int(shape.groups)) == (k, g), (bm, bn, bk, warps)


def test_copies_leave_once_the_hgmmas_are_issued():
    """128x256x64 on 8 warps (k = 4): mma 4,194,304 / 7,104.4301 = 590.3787 ns; the last HGMMA
    waits for the 1st of 4: 590.3787 x 1 / 4 = 147.5947 ns, above the issue 2 x 4 x 25 = 200
    cycles = 115.3083 ns; + the overhead 115.3083 = 262.9030 ns. 256x128x64 (k = 8): 590.3787 x 5
    / 8 = 368.9867 ns (issue 2 x 8 x 25 = 400 cycles = 230.6167) + 115.3083 = 484.2950 ns: the
    same mma, its narrower instructions leave more of it queued. 128x256x32 (k = 2): nothing
    queued, the issue 2 x 2 x 25 = 100 cycles = 57.6542 ns + 115.3083 = 172.9625 ns."""
    m = Machine(H200, "cta")
    mma = 4_194_304 / OWN_RATE
    for (bm, bn, bk), want in {(128, 256, 64): mma / 4 + OVERHEAD, (256, 128, 64): mma * 5 / 8 + OVERHEAD,
                               (128, 256, 32): 100 / WG_CLOCK + OVERHEAD}.items():
        a = _one_cta(bm, bn, bk, 8, 2, 4096)
        loop = [n for n in a.root.walk() if n.kind == "loop"][0]
        flop = 2 * bm * bn * bk
        got = copy_behind_mma.leave_ns(loop, m, 8, lambda c: flop / (8110.08 * 0.74), lambda c: 0.74)
        assert got == pytest.approx(want, rel=1e-6)
    assert mma / 4 + OVERHEAD == pytest.approx(262.9030, abs=1e-3)
    assert mma * 5 / 8 + OVERHEAD == pytest.approx(484.2950, abs=1e-3)
    assert 100 / WG_CLOCK + OVERHEAD == pytest.approx(172.9625, abs=1e-3)


def test_without_the_issue_facts_the_copies_wait_for_the_whole_mma(monkeypatch):
    """A profile without the issue facts (their keys looked up under names no profile states)
    keeps the first reading: the copies leave after the whole mma, 256x128x128's 1,180.7573 ns."""
    monkeypatch.setattr(copy_behind_mma, "ISSUE_FACTS", ("pipeline.no_outstanding", "pipeline.no_issue",
                                                         "pipeline.no_overhead"))
    m = Machine(H200, "cta")
    assert copy_behind_mma.issue_facts(m) is None
    a = _one_cta(256, 128, 128, 8, 2, 8192)
    loop = [n for n in a.root.walk() if n.kind == "loop"][0]
    got = copy_behind_mma.leave_ns(loop, m, 8, lambda c: 8_388_608 / (8110.08 * 0.74), lambda c: 0.74)
    assert got == pytest.approx(1180.7573, abs=1e-3)


def test_two_stage_trip_is_the_leave_plus_the_l2_round_trip():
    """One CTA of gemm.tile at 256x128x128 on 8 warps, 2 stages; K = 16,384 against 8,192 adds
    64 trips and nothing else. Each trip: k = 2 x 1 x 8 = 16 HGMMAs a warpgroup, the copies leave
    at 1,180.7573 x 13 / 16 = 959.3653 ns (above the issue 2 x 16 x 25 = 800 cycles = 461.2333 ns)
    + 115.3083 = 1,074.6736 ns, then the L2 round trip 1,086.0451: 2,160.7187 ns. The DRAM round
    trip one CTA waits, 122.2222 + 700 + 98,304 / 81.18 (one SM's DRAM ceiling, slower than the
    port) = 2,033.1609 ns, and the mma at the model's rate, 1,397.7614 ns, are shorter: 64 x
    2,160.7187 = 138,286.00 ns (64 x 2,266.8024 = 145,075.35 ns when the copies waited for the
    whole mma)."""
    extra = (_one_cta(256, 128, 128, 8, 2, 16384).metrics["performance.predicted_ns"]
             - _one_cta(256, 128, 128, 8, 2, 8192).metrics["performance.predicted_ns"])
    leave = 8_388_608 / OWN_RATE * 13 / 16 + OVERHEAD
    assert extra == pytest.approx(64 * (leave + CHAIN + 200 + 98_304 / PORT), rel=1e-4)
    assert extra == pytest.approx(138_286.00, rel=1e-4)


def test_deeper_pipelines_spread_it_over_their_copies_in_flight():
    """At 3 stages two copies are in flight: (leave + L2 round trip) / 2. 256x128x64 on 8 warps,
    one CTA: the leave 484.2950 ns (above), the L2 round trip 122.2222 + 200 + 49,152 / 128.7 =
    704.1336: (484.2950 + 704.1336) / 2 = 594.2143 ns a trip (the breakdown's line). The one CTA's
    DRAM round trip (all 49,152 B from DRAM at one SM's 81.18 B/ns), (122.2222 + 557 + 605.4693)
    / 2 = 642.3458 ns, is longer and binds: the mma's clock no longer moves the trip (with
    pipeline.wgmma_clock_fraction 1: 0 ns saved, where the copies behind the whole mma bound it
    at (590.3787 + 704.1336) / 2 = 647.2562 ns and the full clock saved 64 x 4.91 ns)."""
    m = Machine(H200, "cta")
    assert copy_behind_mma.chain_ns(4_194_304 / OWN_RATE * 5 / 8 + OVERHEAD, 49_152, m, F) / 2 == pytest.approx(
        594.2143, abs=1e-3)
    a = _one_cta(256, 128, 64, 8, 3, 4096)
    t = [x for x in a.terms if x.name == "copy behind mma"]
    assert t and "/ (3 - 1) = 594.21 ns a trip at least" in t[0].detail
    p = {"M": 256, "N": 128, "K": 4096, "BM": 256, "BN": 128, "BK": 64, "WARPS": 8, "STAGES": 3, "GROUP_M": 1}
    full = analyze(parse_file(str(GEMM)), None, H200.with_knobs({"pipeline.wgmma_clock_fraction": 1.0}), p)
    saved = float(a.metrics["performance.predicted_ns"]) - float(full.metrics["performance.predicted_ns"])
    assert saved == pytest.approx(0, abs=1.0)


def test_breakdown_names_the_term():
    """The breakdown of the 2-stage 256x128x128 trip: 16 HGMMAs a warpgroup, max(1.18 us x 13 /
    16 = 959.37 ns, 2 x 16 x 25 cycles = 461.23 ns) + 200 cycles = 1.07 us, the L2 round trip
    1.09 us: (1.07 + 1.09) / (2 - 1) = 2.16 us a trip."""
    a = _one_cta(256, 128, 128, 8, 2, 8192)
    t = [x for x in a.terms if x.name == "copy behind mma"]
    assert t and t[0].ns == 0
    d = t[0].detail
    assert "issued the trip's 16 HGMMAs a warpgroup" in d
    assert "max(1.18 us of mma at the tensor cores' own rate x 13 / 16 = 959.37 ns, 2 x 16 x 25 cycles of issue = 461.23 ns)" in d
    assert "= 1.09 us" in d and "(1.07 us + 1.09 us) / (2 - 1) = 2.16 us a trip at least" in d


def test_two_mmas_a_trip_sum_their_leaves_and_the_line_shows_each():
    """A k-loop with two warpgroup mmas (the gate and up projections over one A tile, 256x128x64 each
    on 8 warps): each is 8 HGMMAs a warpgroup (2 x m64 rows x 1 x n128 x 64 / 16), 4,194,304 flop /
    7,104.4301 = 590.3787 ns, its last HGMMA waits for 5 of 8: 368.9867 ns (above the issue 2 x 8 x 25
    = 400 cycles = 230.6167 ns). The warps issue them one after another, so the copies leave at
    368.9867 + 368.9867 + the trip's 200 cycles 115.3083 = 853.2817 ns; the breakdown shows both
    mmas' parts and that sum (the line once described the first mma alone)."""
    m = Machine(H200, "cta")
    p = {"M": 256, "N": 128, "K": 8192, "BM": 256, "BN": 128, "BK": 64, "WARPS": 8, "STAGES": 2}
    a = analyze(parse_file(str(GATE_UP)), None, H200, p)
    loop = [n for n in a.root.walk() if n.kind == "loop"][0]
    flop = 2 * 256 * 128 * 64
    ops = copy_behind_mma.op_leaves(loop, m, 8, lambda c: flop / (8110.08 * 0.74), lambda c: 0.74)
    assert [(int(o.shape.k), int(o.shape.groups)) for o in ops] == [(8, 2), (8, 2)]
    want = 2 * (flop / OWN_RATE * 5 / 8) + OVERHEAD
    assert want == pytest.approx(853.2817, abs=1e-3)
    got = copy_behind_mma.leave_ns(loop, m, 8, lambda c: flop / (8110.08 * 0.74), lambda c: 0.74)
    assert got == pytest.approx(want, rel=1e-6)
    d = [x for x in a.terms if x.name == "copy behind mma"][0].detail
    assert "the trip's 2 warpgroup mmas, one after another" in d
    assert d.count("x 5 / 8 = 368.99 ns, 2 x 8 x 25 cycles of issue = 230.62 ns) = 368.99 ns") == 2
    assert "= 853.28 ns (calibration/h100/measured/copy_issue_stamps)" in d


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
