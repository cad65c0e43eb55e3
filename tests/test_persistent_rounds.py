"""The last round of a persistent kernel (tfx.analysis.persistent_rounds; docs/analysis.md
section 8, "Last round"). Every expected number is derived by hand below."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import persistent_rounds
from tfx.analysis.analyze import analyze, bind
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
PERSISTENT = parse_file(ROOT / "kernels" / "persistent_gemm.tile")


def _rounds(params, module=PERSISTENT):
    a = analyze(module, None, H200, params)
    mesh = [n for n in a.root.walk() if n.kind == "mesh"][0]
    return a, persistent_rounds.find(mesh, bind(module, module.kernel(None), params))


def test_rounds_of_the_tile_loop():
    """4096^3 in 64 x 64 tiles: TILES = 64 x 64 = 4,096 on CTAS = min(132, 4096) = 132. The last
    position sm = 131 runs cdiv(4,096 - 131, 132) = cdiv(3,965, 132) = 31 tiles (30.04 -> 31);
    the mean is 4,096 / 132 = 31.0303; 4,096 - 31 x 132 = 4,096 - 4,092 = 4 positions run 32."""
    _, r = _rounds(dict(M=4096, N=4096, K=4096, BM=64, BN=64, BK=128, WARPS=4, STAGES=2, NUM_SMS=132))
    assert r.var == "sm"
    assert r.ctas == 132
    assert r.fewest == 31
    assert float(r.mean) == pytest.approx(4096 / 132)
    assert r.extra == 4


def test_a_short_last_round():
    """2048 x 2048 in 128 x 256 tiles: TILES = 16 x 8 = 128 on 114 CTAs: the last position runs
    cdiv(128 - 113, 114) = 1 tile, 128 - 114 = 14 positions run 2."""
    _, r = _rounds(dict(M=2048, N=2048, K=8192, BM=128, BN=256, BK=32, WARPS=8, STAGES=2, NUM_SMS=114))
    assert (r.ctas, r.fewest, r.extra) == (114, 1, 14)


def test_whole_rounds_add_nothing():
    """4,096 tiles on 128 CTAs: 32 rounds exactly (4,096 / 128 = 32), no position runs more:
    extra 0 and the term is 32 x t - 32 x t = 0 whatever the tiles cost."""
    a, r = _rounds(dict(M=4096, N=4096, K=4096, BM=64, BN=64, BK=128, WARPS=4, STAGES=2, NUM_SMS=128))
    assert (r.fewest, r.extra) == (32, 0)
    assert persistent_rounds.extra_ns(r, 1_000.0, 900.0) == pytest.approx(0)
    terms = {t.name: t.ns for t in a.launches[0].terms}
    assert terms["last round"] == pytest.approx(0)


def test_extra_by_hand():
    """128 tiles on 114 CTAs, a tile 100 ns with all 114 pulling, 80 ns with the 14 of the last
    round: the longest CTA 1 x 100 + 1 x 80 = 180 ns; the mean CTA 128 / 114 x 100 = 112.28 ns;
    the term 180 - 112.28 = 67.72 ns."""
    r = persistent_rounds.Rounds("L", 1, "sm", 114, 1, 128 / 114, 14)
    assert persistent_rounds.extra_ns(r, 100.0, 80.0) == pytest.approx(180 - 12_800 / 114)


def test_arrays_elementwise():
    """Two sweep points: (fewest 1, mean 128/114, extra 14) and (32, 32, 0) with tiles of
    100 / 80 ns: 67.72 ns as above, and 32 x 100 + 0 - 32 x 100 = 0."""
    r = persistent_rounds.Rounds("L", 1, "sm", np.array([114, 128]), np.array([1, 32]),
                                 np.array([128 / 114, 32.0]), np.array([14, 0]))
    out = persistent_rounds.extra_ns(r, np.array([100.0, 100.0]), np.array([80.0, 80.0]))
    assert out == pytest.approx([180 - 12_800 / 114, 0])


def test_one_tile_per_cta_grid_has_no_rounds():
    """gemm.tile launches one CTA a tile (no loop over the mesh coordinate): nothing found."""
    module = parse_file(ROOT / "kernels" / "gemm.tile")
    _, r = _rounds(dict(M=4096, N=4096, K=4096), module)
    assert r is None


def test_prediction_adds_the_term():
    """The breakdown's ``last round`` term is in the total: launch + fill + waves + tail wave +
    last round = predicted_ns (whole ns, rounded up). At 128 tiles on 114 CTAs the longest CTA
    runs 2 tiles against the mean CTA's 1.12: the term is positive, and at least the last
    round's tile less 0.12 of a full-rate tile (the last round's tile is not faster than half
    a full round's: its 14 CTAs wait the same round trips)."""
    a, r = _rounds(dict(M=2048, N=2048, K=8192, BM=128, BN=256, BK=32, WARPS=8, STAGES=2, NUM_SMS=114))
    terms = {t.name: t.ns for t in a.launches[0].terms}
    assert terms["last round"] > 0
    total = terms["launch"] + terms["fill"] + terms["waves"] + terms["tail wave"] + terms["last round"]
    assert float(a.metrics["performance.predicted_ns"]) == pytest.approx(float(total), abs=1)
    # the mean CTA runs 128 / 114 tiles in the tail wave's 114 CTAs: a tile there is
    # tail wave / (128 / 114); the longest CTA adds (2 - 128 / 114) tiles at most
    tile_full = terms["tail wave"] / (128 / 114)
    assert terms["last round"] <= (2 - 128 / 114) * tile_full + 1e-6
    assert terms["last round"] >= 0.5 * tile_full - (128 / 114 - 1) * tile_full
