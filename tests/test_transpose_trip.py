"""The fp8 operand that is not K-major (gemm_fp8_kn): the warpgroup path's serial trip
(tfx.analysis.transpose_trip) and the warp path's byte gathers (tfx.analysis.mma_layout.
byte_gathers); docs/analysis.md section 8, "transposed-operand trip" and "byte gather"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tfx.analysis import transpose_trip
from tfx.analysis.analyze import analyze
from tfx.analysis.mma_layout import byte_gathers, register_transposes
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
WGMMA = (64, 8, 16)
SHAPE = {"M": 4096, "N": 4096, "K": 4096, "GROUP_M": 8}


def _nodes(params):
    a = analyze(parse_file(ROOT / "kernels" / "gemm_fp8_kn.tile"), None, H200, {**SHAPE, **params}, check=False)
    loop = next(n for n in a.root.walk() if n.kind == "loop")
    mma = next(n for n in a.root.walk() if n.op is not None and n.op.opcode == "mma")
    return a, loop, mma


def test_chain_sums_what_is_in_series():
    # A 500 ns and B 500 ns round trips, 60 ns of byte stores, a 50 ns mma:
    # 500 + 500 + 60 + 50 = 1110 ns; with A copied stages ahead (not in series): 500 + 60 + 50 = 610
    t = transpose_trip.chain([("A", 500.0, 1), ("B", 500.0, 1)], 60.0, 50.0)
    assert t.chain_ns == pytest.approx(1110.0)
    t = transpose_trip.chain([("A", 500.0, 0), ("B", 500.0, 1)], 60.0, 50.0)
    assert t.chain_ns == pytest.approx(610.0)
    # per configuration of a sweep: A in series at 2 stages (1), not at 4 (0)
    t = transpose_trip.chain([("A", 500.0, np.array([1.0, 0.0])), ("B", 500.0, 1)], 60.0, 50.0)
    assert t.chain_ns == pytest.approx([1110.0, 610.0])


def test_round_of_resident_ctas_is_a_closed_queue():
    # chain 1110 ns = delay 1000 (the round trips) + stores 60 + mma 50; one CTA's smem work
    # 100 ns (stores included), its mma 50 ns. Mean value analysis:
    #   r = 1: 100 + 50 + 1000 = 1150 ns (the chain plus the CTA's other 40 ns of smem work)
    #   r = 2: queues after 1: 100/1150 and 50/1150, so R_smem = 100 x 1250/1150 = 108.6957,
    #          R_tensor = 50 x 1200/1150 = 52.1739; 1000 + 160.8696 = 1160.8696 ns
    t = transpose_trip.chain([("A", 500.0, 1), ("B", 500.0, 1)], 60.0, 50.0)
    assert transpose_trip.round_ns(t, 1, 100.0, 50.0) == pytest.approx(1150.0)
    assert transpose_trip.round_ns(t, 2, 100.0, 50.0) == pytest.approx(1000 + 100 * 1250 / 1150 + 50 * 1200 / 1150)
    # many CTAs: the shared-memory pipe binds, 20 x 100 = 2000 ns at most 1150 ns of latency above it
    r20 = transpose_trip.round_ns(t, 20, 100.0, 50.0)
    assert 2000.0 <= r20 <= 2000.0 + 1150.0


def test_a_is_in_series_at_two_stages_only():
    """fp8_kn_128x32x128_w4_s2.sass.txt waits A's copy for the next trip at the top of that trip
    (DEPBAR.LE SB0, 0x0): at 2 stages A's round trip is in the chain; at 4 (DEPBAR.LE SB0, 0x2)
    it is three trips ahead and the fence before the wgmma does not wait for it
    (calibration/h200/measured/fence_wait). B, transposed, is in series at any depth."""
    for stages, a_serial in ((2, 1), (4, 0)):
        _, loop, _ = _nodes({"BM": 128, "BN": 64, "BK": 64, "WARPS": 4, "STAGES": stages})
        assert transpose_trip.transposed_results(loop, WGMMA, 4) == {"%b"}
        t = transpose_trip.trip(loop, WGMMA, 4, stages, lambda c: 100.0, 10.0, 5.0)
        assert [(n, s) for n, _, s in t.round_trips] == [("A", a_serial), ("B", 1)]
        # 2 stages: 100 + 100 + 10 + 5 = 215; 4 stages: 100 + 10 + 5 = 115
        assert t.chain_ns == pytest.approx(215.0 if a_serial else 115.0)


def test_warp_path_gathers_bytes_instead_of_transposing():
    """64 x 32 x 128 on 2 warps takes the warp mma (2 warps: no warpgroup), warps 2 x 1 over
    M x N (warpsPerTileV2: repetitions 64/16 = 4 >= 32/8 = 4, so M): each warp's B is 32 columns
    x 128 of K = 4096 bytes, 32 a LDS.U8: 128 per warp (the SASS of fp8_kn_64x32x128_w2_s2 counts
    128 LDS.U8 and 64 IMAD per warp and trip); 2 warps: 256 shared-memory wavefronts a trip.
    No register transpose there; on 4 warps (warpgroup path) the reverse."""
    _, _, mma = _nodes({"BM": 64, "BN": 32, "BK": 128, "WARPS": 2, "STAGES": 2})
    assert register_transposes(mma, WGMMA, 8, 2) == []
    (g,) = byte_gathers(mma, WGMMA, 8, 2)
    assert (g.operand, g.per_warp, g.k, g.loads, g.wavefronts) == ("B", 32, 128, 128, 256)
    _, _, mma = _nodes({"BM": 64, "BN": 32, "BK": 128, "WARPS": 4, "STAGES": 2})
    assert byte_gathers(mma, WGMMA, 8, 4) == []
    (t,) = register_transposes(mma, WGMMA, 8, 4)
    # 32 columns x 1 byte / 16 B per thread = 2 lanes per bank: 128 x 32 / 32 x 2 = 256 cycles
    assert (t.operand, t.conflict, t.cycles, t.applies) == ("B", 2, 256, 1)


def test_gather_prices_the_smem_pipe_on_the_warp_mma_clock():
    """The same 2-warp config as compiled (64 threads, 124 registers, 12,288 B: 8 CTAs per SM):
    the gathers take 8 CTAs x 2 warps x 128 = 2,048 wavefronts of the SM's shared-memory pipe a
    round = 2048 / (1.98 GHz x 0.907 = 1.79586) = 1,140.40 ns (format_time_ns: 1.14 us), added to
    the warps' mma; the K-major kernel (gemm_fp8.tile, ldmatrix) has none of it."""
    params = {**SHAPE, "BM": 64, "BN": 32, "BK": 128, "WARPS": 2, "STAGES": 2}
    res = {"threads": 64, "regs": 124, "smem": 12288, "spills": 0}
    kn = analyze(parse_file(ROOT / "kernels" / "gemm_fp8_kn.tile"), None, H200, params, resources=res, check=False)
    km = analyze(parse_file(ROOT / "kernels" / "gemm_fp8.tile"), None, H200, params, resources=res, check=False)
    terms = {t.name: t for t in kn.terms}
    assert "transpose" not in terms
    detail = terms["byte gather"].detail
    assert "32 x 128 / 32 = 128 LDS.U8 per warp" in detail
    assert "8 CTAs x 2 warps x 128 = 2,048 cycles" in detail and "= 1.14 us, in series" in detail
    assert "byte gather" not in {t.name for t in km.terms}
    assert float(kn.metrics["performance.predicted_ns"]) > float(km.metrics["performance.predicted_ns"])


def test_serial_trip_in_the_breakdown():
    """128 x 64 x 64 on 4 warps, 2 stages: the breakdown names the serial trip with both loads."""
    a, _, _ = _nodes({"BM": 128, "BN": 64, "BK": 64, "WARPS": 4, "STAGES": 2})
    terms = [t for t in a.terms if t.name == "transposed trip"]
    assert terms and "round trips A" in terms[0].detail and "+ B" in terms[0].detail
    # B 64 x 64: 64 / 16 = 4 lanes a bank, 64 x 64 / 32 x 4 = 512 cycles / 1.98 GHz = 258.59 ns;
    # the mma 2 x 128 x 64 x 64 = 1,048,576 flop at the fp8 wgmma's rate (
    # 8192 flop/cycle x 1.98 GHz x fp8 efficiency 0.700 = 11,354.1 flop/ns) = 92.35 ns
    assert "byte stores 258.59 ns + waited mma 92.35 ns" in terms[0].detail
    a, _, _ = _nodes({"BM": 128, "BN": 64, "BK": 64, "WARPS": 4, "STAGES": 4})
    (term,) = [t for t in a.terms if t.name == "transposed trip"]
    assert "A copied stages ahead" in term.detail


def test_sweep_matches_each_configuration():
    """A sweep (numpy columns, as tfx explore evaluates) prices each configuration as its own
    scalar analysis: the warpgroup path's serial trip at 4 warps (2 and 4 stages) and the warp
    path's gathers at 2 warps, side by side."""
    configs = [(128, 64, 64, 4, 2), (128, 64, 64, 4, 4), (64, 32, 128, 2, 2)]
    names = ("BM", "BN", "BK", "WARPS", "STAGES")
    cols = {k: np.array([c[i] for c in configs]) for i, k in enumerate(names)}
    module = parse_file(ROOT / "kernels" / "gemm_fp8_kn.tile")
    swept = analyze(module, None, H200, {**SHAPE, **cols}, check=False)
    got = np.asarray(swept.metrics["performance.predicted_ns"], dtype=float)
    for i, c in enumerate(configs):
        one = analyze(module, None, H200, {**SHAPE, **dict(zip(names, c))}, check=False)
        assert got[i] == pytest.approx(float(one.metrics["performance.predicted_ns"]), rel=1e-9)
