"""Counts and their nouns in the report's prose (session 13, polish13): singular at exactly one
(tfx.hw.units.format_counted), as every other count of the reports is written."""

from __future__ import annotations

from pathlib import Path

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent


def _analysis(kernel: str, profile: str = "h200_sxm", **params):
    return analyze(parse_file(ROOT / "kernels" / f"{kernel}.tile"), None, load_profile(profile), params)


def _details(a, name: str) -> list[str]:
    return [t.detail for t in a.terms if t.name == name]


def test_l2_across_waves_index_that_wraps_every_position():
    """gemm_w8a16 at its defaults: M = 16, BM = 16, N = 4096, BN = 128, a grid of cdiv(16, 16) x
    cdiv(4096, 128) = 1 x 32 = 32 CTAs, one wave (132 SMs x 2 resident = 264 >= 32): W = 32. A's
    tile row pm takes 1 value, so its index wraps every 1 position (it read 'every 1 positions'):
    max(0, min(32, 1) - max(0, 1 - 32)) / min(32, 1) = (1 - 0) / 1 = 100.0%; the first wave of
    each run of 32 follows none: x (1 - 32 / 32) = 0.0%."""
    line = _details(_analysis("gemm_w8a16"), "l2 across waves")[0]
    assert line == ("line 30: an index that wraps every 1 position: the previous 32 positions read "
                    "max(0, min(32, 1) - max(0, 1 - 32)) / 1 = 100.0% of its tiles; x (1 - 32 / 32 positions: "
                    "the first wave of each run of 32 follows none) = 0.0%")
