"""A cast the code generator lowers to the GPU's type conversions is priced on the special-function
unit (the XU: transcendentals and I2F / F2I / F2F), one conversion a stated element: an integer ->
float cast (compute.special.int_to_float) on every NVIDIA profile, fp8 -> bf16 (fp8_to_bf16) where
PTX converts fp8 only to f16x2 (sm_90: h100_sxm, h200_sxm). Any other cast stays vector work."""
import pytest

from tfx.analysis.analyze import analyze
from tfx.hw.profile import load_profile
from tfx.lang import parse_text

CAST = """
kernel dequant {{
  param N = 1048576
  tensor X : {src}[N] @gmem in
  tensor Y : {dst}[N] @gmem out
  mesh cta[N / 4096] as (p) capture(X, Y) {{
    %x = load X[p * 4096 : 4096] -> rmem
    %y = cast %x to {dst}
    store %y -> Y[p * 4096 : 4096]
  }}
}}
"""


def roofline_ns(src, dst, hw):
    a = analyze(parse_text(CAST.format(src=src, dst=dst)), None, load_profile(hw))
    return {k.rsplit(".", 1)[1]: v for k, v in a.metrics.items() if k.startswith("roofline.compute_ns.")}


def test_int4_to_bf16_holds_the_special_function_unit_on_an_h100():
    """2^20 int4 codes -> bf16: one I2F each at the XU's 16 a cycle a SM, 132 SMs at 1.98 GHz =
    4,181.76 conversions a ns: 1,048,576 / 4,181.76 = 250.75 ns, 251 in whole ns; nothing on the
    vector unit."""
    got = roofline_ns("int4", "bf16", "h100_sxm")
    assert got.get("special") == 251 and "vector" not in got


def test_fp8_to_bf16_is_a_conversion_on_hopper_and_vector_work_where_no_fact_says_so():
    """fp8e4m3 -> bf16 on the H200 (the H100's die): the same 251 ns of F2F.BF16.F16 as above. The A100
    states no fp8_to_bf16 (sm_80 has no fp8 conversion instruction): vector work, not special."""
    assert roofline_ns("fp8e4m3", "bf16", "h200_sxm").get("special") == 251
    a100 = roofline_ns("fp8e4m3", "bf16", "a100_sxm")
    assert "special" not in a100 and a100["vector"] > 0


def test_a_float_narrowing_cast_stays_vector_work():
    """f32 -> bf16 is a packed F2FP on the ALU (two elements an instruction), not the XU: vector work on
    the H100, its roofline at the vector peak, 2^20 flop / (compute.vector.f32 = 256 flop a cycle x 132 SMs x
    1.98 GHz = 66,908.16 a ns) = 15.67 ns, 16 in whole ns."""
    got = roofline_ns("f32", "bf16", "h100_sxm")
    assert "special" not in got and got["vector"] == 16


def test_a_warp_mma_trip_converts_its_share_before_its_mma():
    """gemm_w8a16.tile at its defaults on the H200 (16x128x128 on 4 warps, the warp mma): each trip converts
    128 x 128 = 16,384 fp8 weights, 4,096 a warp, at its sub-partition's quarter of the unit (16 / 4 = 4 a cycle):
    1,024 cycles / 1.98 GHz = 517.17 ns a warp, in series with its 32 mma.sync (32 x 6 cycles / (1.98 GHz x
    0.907) = 106.91 ns): 624.08 ns of issue a trip, where the warp-mma trip priced 106.91 before."""
    from tfx.bundled import bundled_kernel
    from tfx.lang import parse_file
    a = analyze(parse_file(bundled_kernel("gemm_w8a16.tile")), None, load_profile("h200_sxm"))
    trip = next(t.detail for t in a.terms if t.name == "warp-mma trip")
    assert "special-function lanes (517.17 ns a warp, in its 624.08 ns)" in trip
    assert "each 1 x 624.08 ns / 1 = 624.08 ns" in trip


def test_an_unpipelined_warp_mma_trip_converts_its_share_too():
    """gemm_w8a16.tile at STAGES = 1 (M 16, N 14336, 16x64x128 on 4 warps, 2 CTAs an SM on the H200): the warps
    load, wait, convert, mma. Each trip converts 128 x 64 = 8,192 weights, 2,048 a warp at 4 a cycle = 512 cycles
    / 1.98 GHz = 258.59 ns, beside its 16 mma.sync (1 x 2 x 8 of m16n8k16 over a 16 x 16 warp tile, K 128) x 6
    cycles / (1.98 GHz x 0.907) = 53.456 ns: 312.04 ns a warp (258.586 + 53.456 = 312.042), the sub-partition
    station the two CTAs queue at (the busiest holds 2 of their 8 warps: 2 x 312.04 / 2)."""
    from tfx.lang import parse_file
    a = analyze(parse_file("kernels/gemm_w8a16.tile"), None, load_profile("h200_sxm"),
                {"M": 16, "N": 14336, "K": 4096, "BM": 16, "BN": 64, "BK": 128, "WARPS": 4, "STAGES": 1},
                resources={"threads": 128, "regs": 72, "smem": 20480, "spills": 0})
    trip = next(t.detail for t in a.terms if t.name == "warp-mma trip")
    assert "STAGES = 1 on the warp mma" in trip
    assert "special-function lanes (258.59 ns a warp, in its 312.04 ns)" in trip
    assert "each 2 x 312.04 ns / 2 = 312.04 ns" in trip


def test_a_converting_warpgroup_trip_converts_mmas_and_copies_in_series():
    """gemm_w8a16.tile at 1024x14336x4096, 128x128x64 on 8 warps (the warpgroup mma), 2 CTAs an SM on the H200:
    Triton's trip converts the 64 x 128 fp8 tile and stores it, issues its wgmmas and waits them out, then copies
    (tfx.analysis.converting_trip). One CTA's stations a trip: 8,192 conversions / 16 a cycle = 512 cycles / 1.98
    GHz = 258.59 ns; 2 x 128 x 128 x 64 = 2,097,152 flop / (4,096 a cycle x 1.98 GHz) = 258.59 ns at peak, / 0.74
    sustained = 349.44 ns; its copies 190.96 ns. Mean value analysis, 2 CTAs: alone the cycle is 258.59 + 349.44 +
    190.96 = 798.99 ns, each station's queue D / 798.99 = 0.32364, 0.43735, 0.23900; the second CTA waits
    258.59 x 1.32364 + 349.44 x 1.43735 + 190.96 x 1.23900 = 342.28 + 502.27 + 236.60 = 1,081.15 ns a round."""
    from tfx.analysis import converting_trip
    from tfx.lang import parse_file
    t = converting_trip.stations(258.586, 349.44, 190.96, 2)
    assert converting_trip.round_ns(t) == pytest.approx(1081.15, abs=0.05)
    assert converting_trip.round_ns(t._replace(resident=1)) == pytest.approx(798.99, abs=0.01)
    a = analyze(parse_file("kernels/gemm_w8a16.tile"), None, load_profile("h200_sxm"),
                {"M": 1024, "N": 14336, "K": 4096, "BM": 128, "BN": 128, "BK": 64, "WARPS": 8, "STAGES": 4,
                 "GROUP_M": 8}, resources={"threads": 256, "regs": 127, "smem": 106496, "spills": 0})
    trip = next(t.detail for t in a.terms if t.name == "converting trip")
    assert "2 CTAs take turns at the conversion unit (each 258.59 ns), the tensor cores (each 349.44 ns)" in trip
    assert "cycles in 1.08 us a round" in trip


def test_no_converting_trip_where_b_is_loaded():
    """gemm.tile's B is loaded (straight from shared memory), so its warpgroup trip is no converting trip."""
    from tfx.bundled import bundled_kernel
    from tfx.lang import parse_file
    a = analyze(parse_file(bundled_kernel("gemm.tile")), None, load_profile("h200_sxm"))
    assert not [t for t in a.terms if t.name == "converting trip"]
