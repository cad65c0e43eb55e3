"""Regressions for the six counting bugs of issue 12 (found by comparing with TileFoundry).

Every expected number is derived by hand in the test's docstring or comments.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from tfx.analysis import memory
from tfx.analysis.analyze import analyze
from tfx.analysis.counting import Counter
from tfx.hw import load_profile
from tfx.ir.bind import bind
from tfx.lang import parse_text

H200 = load_profile("h200_sxm")


def run(text: str, params=None, check=True):
    return analyze(parse_text(text, "t.tile"), None, H200, params or {}, check=check)


# ------------------------------------------------------------------ 1. gather footprint

GATHER = """kernel k {{
  param R = 268435456
  tensor X : f32[R, 4] @gmem in
  tensor I : int32[2] @gmem in
  tensor Y : f32[{out_rows}, 4] @gmem out
  mesh cta[{ctas}] as (c) capture(X, I, Y) {{
    %i = load I[0 : 2] -> rmem
    %x = load X[gather(%i), 0 : 4] -> rmem
    store %x -> Y[c * 2 : 2, 0 : 4]
  }}
}}"""


def test_gather_footprint_is_the_rows_the_index_names_as_an_upper_bound():
    """One CTA gathers 2 rows of 4 f32 from X of R = 2**28 rows. Which rows is data, how many
    is not: at most 2 rows x 4 cols x 4 B = 32 B (`upper`), not the whole R x 16 B =
    4,294,967,296 B tensor labelled exact."""
    a = run(GATHER.format(out_rows=2, ctas=1))
    assert a.metrics["memory.footprint.X.logical"] == 2 * 4 * 4
    assert a.precision["memory.footprint.X.logical"] == "upper"
    # The index and the output are plain windows: exact. I: 2 x 4 B; Y: 2 x 4 x 4 B.
    assert a.metrics["memory.footprint.I.logical"] == 8
    assert a.precision["memory.footprint.I.logical"] == "exact"
    assert a.metrics["memory.footprint.Y.logical"] == 32


def test_gather_footprint_no_longer_drives_the_roofline():
    """gmem moves I (8 B read) + X rows (32 B read) + Y (32 B write) = 72 B; at 4.8 TB/s
    that is 72 * 10**9 / 4.8e12 = 0.015 ns (L2: 72 / 11e12 s = 0.0065 ns), so the memory
    roofline is ceil(0.015) = 1 ns, not the 894,785 ns of reading all 4 GiB of X."""
    a = run(GATHER.format(out_rows=2, ctas=1))
    assert a.metrics["memory.traffic.gmem.total.read"] == 8 + 32
    assert a.metrics["roofline.memory_ns"] == 1


def test_gather_bound_grows_with_the_executions_and_stops_at_the_tensor():
    """3 CTAs each gather 2 rows: at most 3 * 2 = 6 distinct rows, 6 * 16 B = 96 B.
    With X of only R = 4 rows, the bound stops at the whole tensor: 4 * 16 B = 64 B."""
    a = run(GATHER.format(out_rows=6, ctas=3))
    assert a.metrics["memory.footprint.X.logical"] == 96
    a = run(GATHER.format(out_rows=6, ctas=3), {"R": 4})
    assert a.metrics["memory.footprint.X.logical"] == 64
    assert a.precision["memory.footprint.X.logical"] == "upper"


# ------------------------------------------------------------------ 2. union of many windows

def rows_kernel(n: int, size: str = "1", step: str = "1") -> str:
    body = "\n".join(f"    %x{i} = load X[{i} * {step} : {size}, 0 : 4] -> rmem\n"
                     f"    store %x{i} -> Y[{i} * {step} : {size}, 0 : 4]" for i in range(n))
    return ("kernel k {\n  param S = 1\n  tensor X : f32[64, 4] @gmem in\n  tensor Y : f32[64, 4] @gmem out\n"
            "  mesh cta[1] as (c) capture(X, Y) {\n" + body + "\n  }\n}")


def test_footprint_union_counts_every_window_not_the_first_ten():
    """12 disjoint one-row windows of 4 f32 (16 B each), loaded and stored:
    12 * 16 = 192 B per tensor, exact (the union stopped at 10 windows: 160 B)."""
    a = run(rows_kernel(12))
    assert a.metrics["memory.footprint.X.logical"] == 192
    assert a.metrics["memory.footprint.Y.logical"] == 192
    assert a.precision["memory.footprint.X.logical"] == "exact"


def test_footprint_union_of_overlapping_windows_is_their_span():
    """12 two-row windows starting at rows 0, 1, ..., 11 overlap their neighbours: together
    rows [0, 13), 13 * 16 = 208 B (the sum would be 12 * 32 = 384 B)."""
    a = run(rows_kernel(12, size="2"))
    assert a.metrics["memory.footprint.X.logical"] == 13 * 16


def test_footprint_union_in_a_sweep_matches_the_single_configurations():
    """Windows X[i * S : 2] for i = 0..11 over S in {1, 2}: S = 1 spans rows [0, 13) (208 B,
    as above); S = 2 tiles rows [0, 24) without overlap (24 * 16 = 384 B). The sweep evaluates
    the inclusion-exclusion on arrays; with its budget of terms cut to 5 it counts each
    configuration by the scalar sweep instead: the same numbers."""
    text = rows_kernel(12, size="2", step="S")
    a = run(text, {"S": np.array([1, 2])}, check=False)
    assert list(a.metrics["memory.footprint.X.logical"]) == [208, 384]
    assert run(text, {"S": 2}).metrics["memory.footprint.X.logical"] == 384
    budget = memory._ARRAY_TERMS_BUDGET
    try:
        memory._ARRAY_TERMS_BUDGET = 5
        a = run(text, {"S": np.array([1, 2])}, check=False)
    finally:
        memory._ARRAY_TERMS_BUDGET = budget
    assert list(a.metrics["memory.footprint.X.logical"]) == [208, 384]


def test_union_of_boxes_in_two_dimensions():
    """Three 2-D boxes: [0,4)x[0,4) (16), [2,6)x[2,6) (16, sharing [2,4)x[2,4) = 4 with the
    first) and [10,12)x[0,1) (2, apart): 16 + 16 - 4 + 2 = 30."""
    assert memory._union_volume([((0, 4), (0, 4)), ((2, 6), (2, 6)), ((10, 12), (0, 1))]) == 30


# ------------------------------------------------------------------ 3. reused coordinate names

def test_two_launches_reusing_a_coordinate_name_each_cover_their_own_range():
    """Launch 1 (cta[8] as p) reads rows p of X f32[8, 128]: all 8 rows; launch 2 (cta[2] as p)
    reads rows 0 and 1 again. Union: 8 rows * 128 * 4 B = 4,096 B (one shared range for p,
    the last launch's [0, 2), gave 2 * 512 = 1,024 B)."""
    a = run("""kernel k {
      tensor X : f32[8, 128] @gmem in
      mesh cta[8] as (p) capture(X) {
        %x = load X[p : 1, 0 : 128] -> rmem
      }
      mesh cta[2] as (p) capture(X) {
        %y = load X[p : 1, 0 : 128] -> rmem
      }
    }""")
    assert a.metrics["memory.footprint.X.logical"] == 4096


MLP = """kernel mlp {
      param H = 64
      param I = 128
      tensor X : bf16[16, H] @gmem in
      tensor Wgu : bf16[H, 2 * I] @gmem in
      tensor Wd : bf16[I, H] @gmem in
      mesh cta[2 * I / 64] as (pn) capture(X, Wgu) {
        %x = load X[0 : 16, 0 : H] -> smem
        %w = load Wgu[0 : H, pn * 64 : 64] -> smem
      }
      mesh cta[H / 64] as (pn) capture(Wd) {
        %d = load Wd[0 : I, pn * 64 : 64] -> smem
      }
    }"""


def test_two_meshes_of_an_mlp_count_the_whole_weight():
    """Gate/up then down projections as two launches that both call their tile coordinate pn.
    Launch 1: cta[W_UP / 64] over W_UP = 2 * I = 256 columns of Wgu bf16[H, 256], H = 64:
    all 64 * 256 * 2 B = 32,768 B. Launch 2 (cta[H / 64] = 1 position, pn = 0) reads Wd.
    With one shared range pn in [0, 1) Wgu's footprint was one 64-column tile: 8,192 B."""
    a = run(MLP)
    assert a.metrics["memory.footprint.Wgu.logical"] == 64 * 256 * 2
    # Wd: 128 rows x 64 cols x 2 B = 16,384 B.
    assert a.metrics["memory.footprint.Wd.logical"] == 16_384
    # At Qwen3-1.7B's sizes (H = 2048, gate/up 2 * I = 6144 columns): Wgu is
    # 2048 * 6144 * 2 = 25,165,824 B. The shared range (pn in [0, H / 64 = 32)) gave 32 tiles
    # of 64 columns: 2048 * 2048 * 2 = 8,388,608 B, the number the issue reports.
    a = run(MLP, {"H": 2048, "I": 3072})
    assert a.metrics["memory.footprint.Wgu.logical"] == 2048 * 6144 * 2 == 25_165_824


# ------------------------------------------------------------------ 4. mma on windows

MMA_WINDOWS = """kernel k {
  tensor A : bf16[16, 16] @gmem in
  tensor B : bf16[16, 8] @gmem in
  mesh cta[1] as (c) capture(A, B) {
    %acc = zeros f32[16, 8] @rmem
    %c = mma A[:, :], B[:, :], %acc
  }
}"""


def test_mma_on_window_operands_is_counted():
    """mma of A bf16[16, 16] by B bf16[16, 8] read straight from gmem windows:
    2 * M * N * K = 2 * 16 * 8 * 16 = 4,096 bf16 tensor flops; gmem reads are A (16*16*2 =
    512 B) and B (16*8*2 = 256 B): 768 B."""
    a = run(MMA_WINDOWS)
    assert a.metrics["compute-cost.flops.bf16.total"] == 4096
    assert a.metrics["memory.traffic.gmem.total.read"] == 768


def test_mma_on_a_tile_of_a_window_uses_the_window_extents():
    """A window A[16 : 16, 0 : 16] of a 32 x 16 matrix by B[:, 0 : 8]: still 16 x 16 by 16 x 8,
    4,096 flops, per CTA of 2 CTAs (mesh as pm, rows pm * 16): 8,192 in total."""
    a = run("""kernel k {
      tensor A : bf16[32, 16] @gmem in
      tensor B : bf16[16, 16] @gmem in
      mesh cta[2] as (pm) capture(A, B) {
        %acc = zeros f32[16, 8] @rmem
        %c = mma A[pm * 16 : 16, 0 : 16], B[:, 0 : 8], %acc
      }
    }""")
    assert a.metrics["compute-cost.flops.bf16.total"] == 2 * 4096


# ------------------------------------------------------------------ 5. exact roofline

def test_compute_roofline_is_an_exact_integer_ceiling():
    """One tf32 mma M x K by K x N with M = 26,763,264, N = 7,446,534, K = 8,418,349:
    F = 2 * M * N * K flops on the H200's tensor cores at 2,048 flop/cycle x 132 SMs x
    1.98 GHz = R = 535,265,280,000,000 flop/s. F * 10**9 / R divides exactly (checked below),
    so the compute term is that integer; dividing in floats gave 1 ns less."""
    M, N, K = 26_763_264, 7_446_534, 8_418_349
    F = 2 * M * N * K
    R = 2048 * 132 * 1_980_000_000
    assert F * 10**9 % R == 0
    expected = F * 10**9 // R
    assert expected == 6_268_752_205_236_600
    a = run(f"""kernel k {{
      tensor A : tf32[{M}, {K}] @gmem in
      tensor B : tf32[{K}, {N}] @gmem in
      mesh cta[1] as (c) capture(A, B) {{
        %acc = zeros f32[{M}, {N}] @rmem
        %c = mma A[:, :], B[:, :], %acc
      }}
    }}""", check=False)
    assert a.metrics["compute-cost.flops.tf32.total"] == F
    assert a.metrics["roofline.compute_ns"] == expected


def test_memory_roofline_is_an_exact_integer_ceiling():
    """A copy of X f32[M, 1] with M = 600 * 120,095,990,063,217 = 72,057,594,037,930,200 rows:
    gmem reads 4M B and writes 4M B, footprint X + Y = 8M B. At 4.8 TB/s = 4,800 B/ns that is
    8M / 4,800 = M / 600 = 120,095,990,063,217 ns exactly (L2 at 11,000 B/ns needs less:
    8M / 11,000 < M / 600). In floats 8M / 4800.0 rounds above the integer: one ns too many."""
    q = 120_095_990_063_217
    M = 600 * q
    a = run(f"""kernel k {{
      tensor X : f32[{M}, 1] @gmem in
      tensor Y : f32[{M}, 1] @gmem out
      mesh cta[1] as (c) capture(X, Y) {{
        %x = load X[:, :] -> rmem
        store %x -> Y[:, :]
      }}
    }}""", check=False)
    assert a.metrics["memory.footprint.X.logical"] + a.metrics["memory.footprint.Y.logical"] == 8 * M
    assert a.metrics["roofline.memory_ns.dram"] == q      # the footprint over DRAM (was the gmem term)
    assert math.ceil(8 * M / 4800.0) == q + 1      # the float quotient this replaces


# ------------------------------------------------------------------ 6. logical of recurrences

def count(text: str):
    m = parse_text(text, "t.tile")
    k = m.kernel()
    return Counter(m, k, bind(m, k, {})).run()


def test_a_recurrence_is_logical_work_every_trip_an_invariant_op_is_not():
    """In a 6-trip loop, `%o = add %o, %x` reads the value the previous trip made: it cannot be
    hoisted, so its logical work is 6 trips x 32 elements = 192 flops (= total). `%y = mul %x,
    2.0` reads only the loop-invariant %x: logical 32 (once, as if hoisted), total 6 * 32 = 192.
    Kernel logical: 192 + 32 = 224; total: 192 + 192 = 384."""
    root = count("""kernel k {
      tensor X : f32[32] @gmem in
      mesh cta[1] as (c) capture(X) {
        %x = load X[0 : 32] -> rmem
        %o = zeros f32[32] @rmem
        loop j = 0 to 6 carry(%o) capture(%x) {
          %o = add %o, %x
          %y = mul %x, 2.0
        }
      }
    }""")
    ops = {n.label: n for n in root.walk() if n.kind == "op"}
    assert ops["%o = add"].logical_sum[("flops", "f32", "vector")] == 192
    assert ops["%y = mul"].logical_sum[("flops", "f32", "vector")] == 32
    assert root.logical_sum[("flops", "f32", "vector")] == 224
    assert root.total[("flops", "f32", "vector")] == 384


def test_a_value_derived_from_a_carried_value_also_varies_with_the_loop():
    """`%t = mul %o, 2.0` reads the carried %o (4 trips): logical 4 * 16 = 64, like the
    recurrence `%o = add %t, %x` that closes the cycle: 64. After the loop the final %o is read
    once by `%z = exp %o`: outside the loop, logical 16 (no enclosing loop)."""
    root = count("""kernel k {
      tensor X : f32[16] @gmem in
      mesh cta[1] as (c) capture(X) {
        %x = load X[0 : 16] -> rmem
        %o = zeros f32[16] @rmem
        loop j = 0 to 4 carry(%o) capture(%x) {
          %t = mul %o, 2.0
          %o = add %t, %x
        }
        %z = exp %o
      }
    }""")
    ops = {n.label: n for n in root.walk() if n.kind == "op"}
    assert ops["%t = mul"].logical_sum[("flops", "f32", "vector")] == 64
    assert ops["%o = add"].logical_sum[("flops", "f32", "vector")] == 64
    assert ops["%z = exp"].logical_sum[("flops", "f32", "special")] == 16


# ------------------------------------------------------------------ sweeps see the stages

def test_l2_reuse_window_counts_the_stages_in_a_sweep_too():
    """gemm.tile defaults: a wave spans 16 tile rows and 32 tile columns (see
    test_l2_reuse_window_of_a_grouped_wave; with STAGES = 1 the CTA needs less smem, 3 CTAs/SM
    make a wave of 396 CTAs: still 8 * ceil(396 / 256) = 16 rows). Per k-step 48 tiles of
    128 * 64 * 2 = 16,384 B, times the stages: STAGES = 1 -> 786,432 B, STAGES = 3 ->
    2,359,296 B. A sweep over STAGES must give the same (it ignored the stages: 786,432 twice,
    so its L2 miss ratios and predictions differed from single configurations')."""
    from tfx.bundled import bundled_kernel
    from tfx.lang import parse_file
    m = parse_file(bundled_kernel("gemm.tile"))
    assert analyze(m, None, H200, {"STAGES": 1}).metrics["memory.l2.reuse_window"] == 48 * 16_384
    assert analyze(m, None, H200, {"STAGES": 3}).metrics["memory.l2.reuse_window"] == 48 * 16_384 * 3
    a = analyze(m, None, H200, {"STAGES": np.array([1, 3])}, check=False)
    assert list(a.metrics["memory.l2.reuse_window"]) == [786_432, 2_359_296]
