"""A pipelined k-loop whose every mma is a properly asynchronous warpgroup mma does its
bookkeeping (pipeline.iteration_overhead: barriers, address steps, the next copies' issue) while
the tensor cores run: one CTA's trip is the longer of the two, not their sum
(tfx.analysis.performance._loop_time; calibration/h200/measured/tensor_clock: a loop of HGMMAs,
a barrier and WARPGROUP.DEPBAR a trip runs 4,095 of 4,096 flop a cycle). Numbers by hand.

H200 facts (hw_profiles/h200_sxm.toml): bf16 4096 flop/cycle x 1.98 GHz x 0.74 = 6,001.4592
flop/ns; the bookkeeping 100 cycles / 1.98 GHz = 50.5051 ns. The one-CTA launch below keeps one
SM busy, whose power-limited clock would run faster (tests/test_power_clock.py); the knob
compute.tensor.unthrottled_efficiency = 0.74 holds it at the 132-SM rate, so that the tensor
engine binds here and the bookkeeping is what the test sees.
"""

from pathlib import Path

import pytest

from tfx.analysis import mma_path
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm").with_knobs({"compute.tensor.unthrottled_efficiency": "0.74"})
RATE = 4096 * 1.98 * 0.74               # 6,001.4592 flop/ns
BOOKKEEPING = 100 / 1.98                # 50.5051 ns


def _gemm(k, stages):
    p = {"M": 256, "N": 128, "K": k, "BM": 256, "BN": 128, "BK": 64, "WARPS": 8, "STAGES": stages, "GROUP_M": 1}
    return analyze(parse_file(str(ROOT / "kernels" / "gemm.tile")), None, H200, p)


def test_a_gemm_trip_on_one_sm_is_its_warpgroup_mma_alone():
    """One CTA of gemm.tile at 256x128x64 on 8 warps, 4 stages: K = 16,384 against 8,192 adds
    128 trips. A trip's mma: 2 x 256 x 128 x 64 = 4,194,304 flop / 6,001.4592 = 698.8807 ns; the
    other floors are shorter (the load trip 122.2222 + 49,152 / 128.7 = 504.13 ns; the copy behind
    the mma and the DRAM round trip over 3 tiles in flight ~430 ns). So 128 x 698.8807 =
    89,456.73 ns; with the bookkeeping in series it was 128 x (698.8807 + 50.5051) = 95,921.38."""
    extra = (_gemm(16384, 4).metrics["performance.predicted_ns"] - _gemm(8192, 4).metrics["performance.predicted_ns"])
    assert float(extra) == pytest.approx(128 * 4_194_304 / RATE, rel=1e-4)
    assert float(extra) == pytest.approx(89_456.73, rel=1e-4)
    assert float(extra) != pytest.approx(128 * (4_194_304 / RATE + BOOKKEEPING), rel=1e-3)


def test_every_mma_async_tells_a_gemm_loop_from_attention():
    """gemm.tile's k-loop carries its accumulator to the next trip only: 1. flash_attention's
    trip reads QK^T's scores in the softmax (waited at once): 0. A loop with no mma: 0."""
    m = Machine(H200, "cta")
    g = _gemm(8192, 4)
    loop = next(n for n in g.root.walk() if n.kind == "loop" and any(n.mma_ops()))
    assert mma_path.every_mma_async(loop, m, 8) == 1
    p = {"B": 1, "H": 1, "S": 1024, "D": 128, "BLOCK_M": 128, "BLOCK_N": 64, "WARPS": 8, "STAGES": 2}
    a = analyze(parse_file(str(ROOT / "kernels" / "flash_attention.tile")), None, H200, p)
    aloop = next(n for n in a.root.walk() if n.kind == "loop" and any(n.mma_ops()))
    assert mma_path.every_mma_async(aloop, m, 8) == 0
    copy = analyze(parse_file(str(ROOT / "kernels" / "copy.tile")), None, H200, {"N": 1 << 20})
    loops = [n for n in copy.root.walk() if n.kind == "loop"]
    assert all(mma_path.every_mma_async(n, m, 4) == 0 for n in loops)
