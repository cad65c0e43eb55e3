"""Loops that run 0 times at some positions: their bodies count at the trips they run, not at
the loop's stated bound (counting: the exact mean trips over the positions; the L2 reuse
window: only the share of a wave's CTAs that run the body claims L2).

Every expected number is derived by hand in the docstrings.
"""

from fractions import Fraction

import numpy as np

from tfx.analysis.analyze import analyze
from tfx.analysis.counting import Counter
from tfx.hw import load_profile
from tfx.ir.bind import bind
from tfx.lang import parse_text

# 4 x 16 CTAs; CTA (bh, sp) owns rows bh * 1024 + sp * 64 .. + 63 of K, the sp-th 64-row block
# of a LEN-row sequence (flash-decoding's split, one block per split). The first loop reads the
# block when it is whole (LEN - sp * 64 >= 64), the second, a masked tail, when it is partial.
SPLIT_KERNEL = """kernel split {
  param LEN = 1024
  tensor K : bf16[4096, 64] @gmem in
  tensor O : f32[64, 64] @gmem out
  mesh cta[4, 16] as (bh, sp) capture(K, O) {
    loop j = 0 to min(1, max(LEN - sp * 64, 0) / 64) bound 1 capture(K, bh, sp) {
      %k = load K[bh * 1024 + sp * 64 : 64, :] -> smem
    }
    loop j = min(1, max(LEN - sp * 64, 0) / 64) to min(1, cdiv(max(LEN - sp * 64, 0), 64)) bound 1 capture(K, bh, sp) {
      %t = load K[bh * 1024 + sp * 64 : 64, :] -> smem
    }
    %z = zeros f32[1, 64] @rmem
    store %z -> O[bh * 16 + sp : 1, :]
  }
}
"""


def loops(module, env):
    k = module.kernel(None)
    return [n for n in Counter(module, k, env).run().walk() if n.kind == "loop"]


def test_a_tail_loop_that_never_runs_counts_nothing():
    """LEN = 1024 = 16 * 64: every split holds a whole block. The first loop runs
    min(1, (1024 - 64 sp) / 64) = 1 trip at every sp in 0..15; the tail loop runs from 1 to
    min(1, cdiv(1024 - 64 sp, 64)) = 1: 0 trips everywhere (its bound 1 is only a ceiling).
    K reads: 64 CTAs x 1 block x 64 x 64 x 2 B = 524,288 B, each block once."""
    m = parse_text(SPLIT_KERNEL, "split.tile")
    whole, tail = loops(m, bind(m, m.kernel(None)))
    assert (whole.trips, tail.trips) == (1, 0)
    assert whole.precision == tail.precision == "exact"
    a = analyze(m, None, load_profile("h200_sxm"))
    assert a.metrics["memory.traffic.gmem.total.read"] == 524_288


def test_a_tail_loop_that_runs_at_one_split_counts_its_mean():
    """LEN = 1000: split 15 holds 1000 - 960 = 40 rows, a partial block; splits 0..14 whole
    ones (split 14: 1000 - 896 = 104 >= 64). First loop: 1 trip at 15 splits, 0 at split 15,
    mean 15/16; tail loop: 0 trips at 15 splits, 1 at split 15 (from 0 to cdiv(40, 64) = 1),
    mean 1/16 (the bound, 1, counted 16 times too many). K reads stay one block per CTA:
    64 x (15/16 + 1/16) x 8,192 B = 524,288 B."""
    m = parse_text(SPLIT_KERNEL, "split.tile")
    whole, tail = loops(m, bind(m, m.kernel(None), {"LEN": 1000}))
    assert (whole.trips, tail.trips) == (Fraction(15, 16), Fraction(1, 16))
    assert whole.execs == 60 and tail.execs == 4          # 64 positions x 15/16, x 1/16
    a = analyze(m, None, load_profile("h200_sxm"), {"LEN": 1000})
    assert a.metrics["memory.traffic.gmem.total.read"] == 524_288


def test_a_sweep_counts_the_same_means():
    """The vectorized walk (parameter arrays, as tfx explore runs it) gives the same means
    per configuration: LEN = 1024 -> (1, 0), LEN = 1000 -> (15/16, 1/16)."""
    m = parse_text(SPLIT_KERNEL, "split.tile")
    whole, tail = loops(m, bind(m, m.kernel(None), {"LEN": np.array([1024, 1000])}))
    assert np.allclose(whole.trips, [1, 15 / 16]) and np.allclose(tail.trips, [0, 1 / 16])


def test_the_l2_reuse_window_claims_only_the_ctas_that_run_the_body():
    """4 x 16 = 64 CTAs fit in one wave of the H200's 132 SMs (W = min(132 x resident, 64) = 64
    at any occupancy). Each load's window depends on both coordinates, so the wave reads 64
    distinct 64 x 64 bf16 tiles of 8,192 B, one stage deep, per load that the CTAs run:
    LEN = 1024: the first loop at every CTA (share 1), the tail at none (share 0):
    64 x 8,192 x (1 + 0) = 524,288 B (it was 1,048,576, the tail counted at its bound);
    LEN = 1000: shares 15/16 and 1/16: 64 x 8,192 x (15/16 + 1/16) = 524,288 B."""
    m = parse_text(SPLIT_KERNEL, "split.tile")
    for length in (1024, 1000):
        a = analyze(m, None, load_profile("h200_sxm"), {"LEN": length})
        assert a.metrics["memory.l2.reuse_window"] == 524_288


def test_a_round_robin_loop_past_the_tiles_runs_at_half_the_positions():
    """sip_splitk_gemm's shape: 8 PEs take tiles t = p, p + 8, ... below TILES = 4, so PEs 0..3
    run 1 trip and PEs 4..7 none: mean 4/8 = 1/2 (the bound cdiv(4, 8) = 1 doubled it), in one
    configuration and in a sweep alike."""
    text = """kernel rr {
  param TILES = 4
  tensor X : f32[64, 8] @gmem in
  mesh cta[8] as (p) capture(X) {
    loop t = p to TILES step 8 bound cdiv(TILES, 8) capture(X) {
      %x = load X[t * 8 : 8, :] -> smem
    }
  }
}
"""
    m = parse_text(text, "rr.tile")
    (loop,) = loops(m, bind(m, m.kernel(None)))
    assert loop.trips == Fraction(1, 2) and loop.execs == 4 and loop.precision == "exact"
    # TILES = 4 -> 1/2; TILES = 12: PEs 0..3 run t = p, p + 8 (2 trips), PEs 4..7 one: 12/8
    (loop,) = loops(m, bind(m, m.kernel(None), {"TILES": np.array([4, 12])}))
    assert np.allclose(loop.trips, [0.5, 1.5])
