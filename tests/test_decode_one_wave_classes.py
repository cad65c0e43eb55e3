"""bench/decode_one_wave_classes.py: which decode rows are one-wave long splits, and their error less the shape's
median by class. Rows made up here; every expected figure is worked out in a comment."""

from __future__ import annotations

from pathlib import Path

from tfx.analysis.measured import Compared, MeasuredRow
from tfx.errors import SourceLocation

from bench_script import load_bench

bench = load_bench("decode_one_wave_classes")


def p(B, SPLITS, WARPS=8, BLOCK_N=64, STAGES=2, SKV=65536, HKV=8):
    return dict(B=B, HQ=32, HKV=HKV, SKV=SKV, D=128, SPLITS=SPLITS, BLOCK_N=BLOCK_N, WARPS=WARPS, STAGES=STAGES)


def test_one_wave_long():
    # B44 x HKV8 x SPLITS 1 = 352 CTAs: 132 <= 352 <= 132 x 3 = 396, split 65536 keys: kept
    assert bench.one_wave_long(p(44, 1), 3, 8192, 132)
    # at 2 CTAs an SM: 352 > 264, more than one wave
    assert not bench.one_wave_long(p(44, 1), 2, 8192, 132)
    # SPLITS 16: 5,632 CTAs, many waves; B1 SPLITS 8: 64 CTAs < 132, the SMs not filled
    assert not bench.one_wave_long(p(44, 16), 3, 8192, 132)
    assert not bench.one_wave_long(p(1, 8), 10, 8192, 132)
    # B 44 SPLITS 4 at SKV 16384: 4,096 keys a split < 8,192
    assert not bench.one_wave_long(p(44, 4, SKV=16384), 12, 8192, 132)
    # no CTAs-an-SM figure (an empty cell): not kept
    assert not bench.one_wave_long(p(44, 1), 0, 8192, 132)


def row(line, params, measured, predicted, bps):
    r = MeasuredRow(SourceLocation("d.csv", line, 1), Path("kernels/gqa_decode.tile"), None, measured, params,
                    notes={"family": "gqa_decode", "shape": "B44", "run": "run1", "blocks_per_sm": str(bps)})
    return Compared(r, predicted, False)


def test_classes_relative_to_the_shape_median():
    # one shape, errors 0.95/1 - 1 = -5% (SPLITS 1, w8 n64 s2, one wave at 3 an SM), 1.02/1 - 1 = +2% and
    # 1.01/1 - 1 = +1% (SPLITS 16, many waves): median +1%; the one-wave row keeps -5% - 1% = -6%, its busiest SM
    # ceil(352 / 132) = 3 CTAs; the SPLITS 16 rows are not one wave
    rows = [row(2, p(44, 1), 1.0, 0.95, 3), row(3, p(44, 16), 1.0, 1.02, 3), row(4, p(44, 16, WARPS=2), 1.0, 1.01, 3)]
    got = bench.classes(rows, 8192, 132)
    assert list(got) == [(8, 64, 2)]
    (err, per_sm), = got[(8, 64, 2)]
    assert abs(err - (-0.06)) < 1e-12 and per_sm == 3


def test_inflight_kb():
    # B44 x HKV8 x SPLITS 1 = 352 CTAs, ceil(352 / 132) = 3 on the busiest SM; 3 stages keep 2 tiles of 64 keys x
    # 128 x 2 B x 2 (K and V) = 32 KB: 3 x 2 x 32 = 192 KB
    assert bench.inflight_kb(p(44, 1, STAGES=3), 132) == 192
    # one stage counts one tile: BLOCK_N 32 -> 16 KB, 3 CTAs: 48 KB
    assert bench.inflight_kb(p(44, 1, BLOCK_N=32, STAGES=1), 132) == 48
    # B39 SPLITS 1 BLOCK_N 128 at 2 stages: 312 CTAs -> 3, one tile of 64 KB: 192 KB
    assert bench.inflight_kb(p(39, 1, BLOCK_N=128, STAGES=2), 132) == 192
