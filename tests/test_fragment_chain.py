"""The serialized fragment chain of a warp-mma GEMM trip (tfx.analysis.fragment_chain; docs/analysis.md,
"Fragment chain of a warp-mma trip"), derived by hand. H200 facts: ldmatrix 34 cycles
(calibration/h200/measured/ldsm_latency), mma.sync 24 cycles (latency/instr_latency.csv), the SM at
0.907 of 1.98 GHz under warp mma, 6 cycles of issue per mma.sync, a warp-wide 16-byte copy of rows of
64 B or less 14.0 cycles of the load path, the port 128.7 B/ns (hw_profiles/h200_sxm.toml)."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import fragment_chain, warp_trip
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
GEMM = parse_file(ROOT / "kernels" / "gemm.tile")
GHZ = Fraction("1.98") * Fraction("0.907")            # 1.79586 GHz


def test_the_table_gives_a_configuration_its_chain_and_others_none():
    table = {(16, 128, 32, 2, 5): (8, 8), (16, 64, 32, 2, 4): (4, 4)}
    assert fragment_chain.counts((16, 128, 32), 2, 5, table=table) == (8, 8)
    assert fragment_chain.counts((16, 128, 32), 2, 2, table=table) == (0, 0)       # not listed: none
    assert fragment_chain.counts((16, 128, 32), 2, 5, bits=8, table=table) == (0, 0)
    assert fragment_chain.counts((16, 128, 32), 2, 5, b_k_major=True, table=table) == (0, 0)
    ld, mma = fragment_chain.counts((np.array([16, 16, 16]), np.array([128, 64, 128]), np.array([32, 32, 32])),
                                    np.array([2, 2, 4]), np.array([5, 4, 5]), table=table)
    assert list(ld) == [8, 4, 0] and list(mma) == [8, 4, 0]


def test_the_compiled_table_holds_the_sass_of_the_held_out_row():
    # calibration/h200/measured/fragment_chain (and stream_depth's loop): 16x128x32 on 2 warps at
    # 3-5 stages loads each of a warp's 8 n-tiles' B fragment into R56-R59 and runs its 2 k-steps
    # after it: 8 x (ldmatrix + mma); at 2 stages (120 registers) the fragments are loaded apart
    # (16 B registers) and the mma issue, 16 x 6 = 96 cycles, outlasts the chain: not listed
    for st in (3, 4, 5):
        assert fragment_chain.counts((16, 128, 32), 2, st) == (8, 8)
    assert fragment_chain.counts((16, 128, 32), 2, 2) == (0, 0)


def test_the_chain_in_ns():
    # 8 x 34 + 8 x 24 = 272 + 192 = 464 cycles / 1.79586 GHz = 258.372 ns
    c = fragment_chain.chain(8, 8, 34, 24, float(GHZ))
    assert c.ns == pytest.approx(float(Fraction(464) / GHZ), rel=1e-12)
    assert round(c.ns, 3) == 258.372


def test_the_chain_is_the_warps_own_time_in_the_trip():
    # one 2-warp CTA, 53.46 ns of mma issue a warp (16 x 6 cycles / 1.79586 GHz = 53.456 ns), 77.79
    # ns of copies, a chain of 258.372 ns: its share of the busiest sub-partition 1 x 53.456 / 1,
    # its delay max(1 x 53.456, 258.372) - 53.456 = 204.916; one customer: 53.456 + 77.79 + 204.916
    # = 336.162 ns (without the chain 53.456 + 77.79 = 131.246)
    issue = float(Fraction(96) / GHZ)
    chain = float(Fraction(464) / GHZ)
    t = warp_trip.stations(issue, 2, 1, 4, 77.79, 1, chain)
    assert t.delay == pytest.approx(chain - issue)
    assert warp_trip.round_ns(t) == pytest.approx(chain + 77.79)
    assert round(warp_trip.round_ns(t), 3) == 336.162
    assert warp_trip.round_ns(warp_trip.stations(issue, 2, 1, 4, 77.79)) == pytest.approx(issue + 77.79)
    # a chain shorter than the issue changes nothing
    assert warp_trip.round_ns(warp_trip.stations(issue, 2, 1, 4, 77.79, 1, issue / 2)) == pytest.approx(issue + 77.79)


def test_the_census_walk_by_hand():
    sys.path.insert(0, str(ROOT / "bench" / "h200"))
    import fragment_chain as census
    # two n-tiles through one B quad: LDSM R56 (t 0, ready 34) -> HMMA R16 (34, ready 58) -> HMMA
    # R16 (58) -> LDSM R56 issues at 58 in order (ready 92) -> HMMA R20 (92) -> HMMA R20 (116):
    # a trip of 2 x (34 + 24) = 116 cycles, the next trip's LDSM R56 again after the last HMMA
    body = ["LDSM.16.M88.4 R48, [R71+UR7]", "LDSM.16.MT88.4 R56, [R69+UR8]",
            "HMMA.16816.F32.BF16 R16, R48, R56, R16", "HMMA.16816.F32.BF16 R16, R48, R58, R16",
            "LDSM.16.MT88.4 R56, [R69+UR8+0x80]",
            "HMMA.16816.F32.BF16 R20, R48, R56, R20", "HMMA.16816.F32.BF16 R20, R48, R58, R20",
            "BAR.SYNC.DEFER_BLOCKING 0x0"]
    assert census.chain(body) == (116, 2, 2)
    # the fragments in separate registers: the three LDSMs at once (ready 34), both accumulators'
    # first mma at 34, their second at 58 (after the first's 24); the next trip's LDSMs issue in
    # order after that, at 58: a steady trip of 34 + 24 = 58 cycles, 1 ldmatrix + 1 mma
    apart = ["LDSM.16.M88.4 R48, [R71+UR7]", "LDSM.16.MT88.4 R56, [R69+UR8]", "LDSM.16.MT88.4 R60, [R69+UR8+0x80]",
             "HMMA.16816.F32.BF16 R16, R48, R56, R16", "HMMA.16816.F32.BF16 R20, R48, R60, R20",
             "HMMA.16816.F32.BF16 R16, R48, R58, R16", "HMMA.16816.F32.BF16 R20, R48, R62, R20"]
    assert census.chain(apart) == (58, 1, 1)


def test_the_held_out_row_by_hand():
    # issue15 run7 32x4096x8192, 16x128x32 on 2 warps, 5 stages, 96 registers, measured 89.54 us
    # (~335 ns a trip): 2 x 32 = 64 CTAs, one a SM; per warp 16 x 64 over K = 32: (16/16)(64/8)(32/16)
    # = 16 mma.sync x 6 = 96 cycles = 53.456 ns of issue; copies 8,192 B of B / 128.7 B/ns = 63.652 ns
    # + A's 2 warp-wide copies of 32-B rows x 14.0 / 1.98 = 14.141 ns = 77.793 ns; chain 258.372 ns:
    # a round 53.456 + 77.793 + 204.916 = 336.165 ns (131.25 ns before)
    a = analyze(GEMM, None, H200, dict(M=32, N=4096, K=8192, BM=16, BN=128, BK=32, WARPS=2, STAGES=5, GROUP_M=1),
                resources={"threads": 64, "regs": 96, "spills": 0})
    text = {t.name: t.detail for t in a.terms}["warp-mma trip"]
    assert "max(1 x 53.46 ns, its warps' fragment chain 258.37 ns) - 53.46 ns = 204.92 ns" in text
    # (the lone warps' compiled loop, tfx.analysis.lone_walk, is the round where longer: tests/test_lone_walk.py)
    assert "cycles in 336.17 ns, at least the lone warps' compiled loop" in text
    assert "8 ldmatrix x 34 + 8 mma x 24 cycles = 464 cycles / 1.796 GHz = 258.37 ns a trip" in text
    # the round binds the trip: 256 trips x 336.165 ns = 86.06 us of the tail wave at least
    tail = {t.name: t.ns for t in a.terms}["tail wave"]
    assert tail >= 256 * 336.16


def test_a_tma_code_generator_has_no_chain():
    a = analyze(GEMM, None, H200, dict(M=32, N=4096, K=8192, BM=16, BN=128, BK=32, WARPS=2, STAGES=5, GROUP_M=1),
                codegen="cutlass")
    assert "fragment chain" not in " ".join(t.detail for t in a.terms)


def test_a_dot_fed_by_a_register_conversion_has_no_chain():
    # gemm_w8a16 at the held-out row's tile (16x128x32, 2 warps, 5 stages): its W tile is copied to
    # registers and cast to bf16 before the dot, a k-loop the census (kernels/gemm.tile's, both
    # operands straight from shared memory) never compiled, so no chain is priced; the plain bf16
    # GEMM at the same tile has its 8 x (34 + 24) = 464-cycle chain (test above)
    w8a16 = parse_file(ROOT / "kernels" / "gemm_w8a16.tile")
    params = dict(M=32, N=4096, K=8192, BM=16, BN=128, BK=32, WARPS=2, STAGES=5, GROUP_M=1)
    a = analyze(w8a16, None, H200, params, resources={"threads": 64, "regs": 96, "spills": 0})
    assert "fragment chain" not in " ".join(t.detail for t in a.terms)
    plain = analyze(GEMM, None, H200, params, resources={"threads": 64, "regs": 96, "spills": 0})
    assert "fragment chain" in " ".join(t.detail for t in plain.terms)
