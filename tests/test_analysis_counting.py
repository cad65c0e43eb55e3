"""Hand-checked fixtures for per-scope counting (docs/analysis.md).

Every expected number is derived in the test's docstring; none is copied from output.
"""

from fractions import Fraction

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.counting import Counter
from tfx.hw import load_profile
from tfx.ir.bind import bind
from tfx.lang import parse_file, parse_text
from tfx.bundled import bundled_kernel


def count(text: str, params=None):
    m = parse_text(text, "t.tile")
    k = m.kernel()
    root = Counter(m, k, bind(m, k, params or {})).run()
    return root


def flops(node, dtype="f32", unit="vector"):
    return node.total.get(("flops", dtype, unit), 0)


ADD_BODY = """
      %x = load X[{win}] -> rmem
      %y = load Y[{win}] -> rmem
      %z = add %x, %y
"""


def test_add_outside_any_mesh_counts_each_element_once():
    """An (8,16) f32 add outside any mesh: 8 * 16 = 128 flops."""
    root = count("""kernel k {
      tensor X : f32[8, 16] @gmem in
      tensor Y : f32[8, 16] @gmem in
    """ + ADD_BODY.format(win="0 : 8, 0 : 16") + "}")
    assert flops(root) == 128


def test_add_sharded_across_threads_of_two_ctas():
    """2 CTAs x 4 threads; each thread adds its (2,16) slice (rows t*2 .. t*2+1):
    per thread 2 * 16 = 32 flops; total 2 CTAs * 4 threads * 32 = 256 (each CTA repeats the
    whole (8,16) add, the threads shard it)."""
    root = count("""kernel k {
      tensor X : f32[8, 16] @gmem in
      tensor Y : f32[8, 16] @gmem in
      mesh cta[2] as (c) capture(X, Y) {
        mesh thread[4] as (t) capture(X, Y) {
    """ + ADD_BODY.format(win="t * 2 : 2, 0 : 16") + "}}}")
    assert flops(root) == 256
    threads = [n for n in root.walk() if n.kind == "mesh" and n.level == "thread"][0]
    assert threads.execs == 8          # 2 CTAs * 4 threads
    assert Fraction(flops(root), threads.execs) == 32


def test_add_unsharded_inside_the_mesh_is_repeated_by_every_position():
    """The whole (8,16) add in each of 2 * 4 = 8 positions: 8 * 128 = 1024 flops, 128 per thread."""
    root = count("""kernel k {
      tensor X : f32[8, 16] @gmem in
      tensor Y : f32[8, 16] @gmem in
      mesh cta[2] as (c) capture(X, Y) {
        mesh thread[4] as (t) capture(X, Y) {
    """ + ADD_BODY.format(win="0 : 8, 0 : 16") + "}}}")
    assert flops(root) == 1024
    assert Fraction(flops(root), 8) == 128


def test_invariant_capture_is_moved_once_per_execution_of_the_capturing_scope():
    """q (64 x 128 bf16 = 16,384 B) is moved gmem->smem once per CTA, then captured into a
    10-trip loop with `-> rmem`: the capture moves 16,384 B smem->rmem once per CTA
    (4 CTAs: 65,536 B), not once per trip (which would be 655,360 B)."""
    root = count("""kernel k {
      tensor Q : bf16[64, 128] @gmem in
      tensor KV : bf16[640, 128] @gmem in
      mesh cta[4] as (c) capture(Q, KV) {
        %q = load Q[0 : 64, 0 : 128] -> smem
        loop j = 0 to 10 capture(KV, %q -> rmem) {
          %kv = load KV[j * 64 : 64, 0 : 128] -> smem
          %s = mul %q, %kv
        }
      }
    }""")
    cap = [n for n in root.walk() if n.kind == "capture"][0]
    assert cap.execs == 4
    assert cap.total[("traffic", "smem", "read")] == 4 * 16384
    assert cap.total[("traffic", "rmem", "write")] == 65536
    # The loop body's loads are per trip: 4 CTAs * 10 trips * 16,384 B = 655,360 B of gmem.
    loop = [n for n in root.walk() if n.kind == "loop"][0]
    assert loop.total[("traffic", "gmem", "read")] == 655360


def test_packed_fp4_counts_bits_not_elements():
    """Nine fp4 values are 9 * 4 = 36 bits = 4.5 bytes, rounded up to 5 bytes."""
    root = count("""kernel k {
      tensor W : fp4e2m1[9] @gmem in
      mesh cta[1] as (c) capture(W) {
        %w = load W[0 : 9] -> smem
      }
    }""")
    assert root.total[("traffic", "gmem", "read")] == 5


def test_gemm_worked_example_from_the_issue():
    """gemm.tile at M=N=K=4096, 128x128x64 tiles:
    gmem read = 2 B * (M*K*(N/BN) + K*N*(M/BM)) = 2 * (4096*4096*32 + 4096*4096*32)
              = 2 * 1,073,741,824 = 2,147,483,648 B;
    gmem write = 2 B * M * N = 2 * 16,777,216 = 33,554,432 B;
    bf16 flops = 2 * 4096^3 = 137,438,953,472."""
    m = parse_file(bundled_kernel("gemm.tile"))
    a = analyze(m, None, load_profile("h200_sxm"), {"M": 4096, "N": 4096, "K": 4096})
    assert a.metrics["memory.traffic.gmem.total.read"] == 2_147_483_648
    assert a.metrics["memory.traffic.gmem.total.write"] == 33_554_432
    assert a.metrics["compute-cost.flops.bf16.total"] == 137_438_953_472
    # Per CTA: 1024 CTAs share the total: 2,147,483,648 / 1024 = 2,097,152 B.
    assert a.metrics["memory.traffic.gmem.cta.read"] == 2_097_152
    # Logical: the loads vary in k only (64 trips): 2 loads * 128*64*2 B * 64 = 2,097,152 B.
    assert a.metrics["memory.traffic.gmem.logical.read"] == 2_097_152


def test_edge_tiles_are_clipped_to_the_tensor():
    """M = N = 1000 with 128-wide tiles: cdiv(1000,128) = 8 tile rows, the last 104 rows wide.
    A is read once per column of tiles: 2 B * M*K * cdiv(N,BN) = 2 * 1000*64 * 8 = 1,024,000 B
    (with K = BK = 64: one trip). B likewise: 2 * 64*1000 * 8 = 1,024,000 B. Total 2,048,000 B."""
    m = parse_file(bundled_kernel("gemm.tile"))
    a = analyze(m, None, load_profile("h200_sxm"), {"M": 1000, "N": 1000, "K": 64, "BK": 64})
    assert a.metrics["memory.traffic.gmem.total.read"] == 2_048_000
    assert a.precision["memory.traffic.gmem.total.read"] == "exact"


def test_huge_sizes_stay_exact_and_cost_the_same():
    """M = 2**40: gmem write = 2 B * M * N = 2 * 2**40 * 4096 = 2**53 exactly (no float rounding)."""
    m = parse_file(bundled_kernel("gemm.tile"))
    a = analyze(m, None, load_profile("h200_sxm"), {"M": 2**40})
    assert a.metrics["memory.traffic.gmem.total.write"] == 2**53
    assert a.metrics["compute-cost.flops.bf16.total"] == 2 * 2**40 * 4096 * 4096


def test_footprint_is_a_union_not_a_sum():
    """Two loads of X rows [0,64) and [32,96) (x 128 f32 cols): the sum is 2 * 64 * 128 * 4 =
    65,536 B but the union covers rows [0,96): 96 * 128 * 4 = 49,152 B."""
    m = parse_text("""kernel k {
      tensor X : f32[128, 128] @gmem in
      mesh cta[1] as (c) capture(X) {
        %a = load X[0 : 64, 0 : 128] -> smem
        %b = load X[32 : 64, 0 : 128] -> smem
      }
    }""", "t.tile")
    a = analyze(m, None, load_profile("h200_sxm"))
    assert a.metrics["memory.traffic.gmem.total.read"] == 65536
    assert a.metrics["memory.footprint.X.logical"] == 49152


def test_tail_wave_is_the_fraction_it_is():
    """copy of 140 CTAs, each 1 thread, tiny: occupancy is not the limit (blocks limit 32/SM),
    so 132 SMs x 32 = 4224 slots and 140 CTAs make 140/4224 = 35/1056 of a wave.
    With resources forcing 1 CTA/SM (smem 200 KB): 140/132 = 35/33 waves: one full wave
    and a tail of 8 CTAs."""
    m = parse_text("""kernel k {
      tensor X : f32[140, 32] @gmem in
      tensor Y : f32[140, 32] @gmem out
      attr threads = 32
      mesh cta[140] as (c) capture(X, Y) {
        %x = load X[c : 1, 0 : 32] -> rmem
        store %x -> Y[c : 1, 0 : 32]
      }
    }""", "t.tile")
    p = load_profile("h200_sxm")
    a = analyze(m, None, p, resources={"smem": 200_000})
    assert a.metrics["performance.waves"] == Fraction(35, 33)
    lt = a.launches[0]
    assert lt.full_waves == 1 and lt.tail_positions == 8


def test_over_capacity_shared_memory_peak_is_reported_with_its_scope():
    """STAGES=6 with 256x256x128 bf16 tiles: 6 * (256*128 + 128*256) * 2 B = 786,432 B of smem
    per CTA, over the H200's 232,448 B opt-in: a warning names the loop scope and the CTA is
    infeasible (0 CTAs/SM)."""
    m = parse_file(bundled_kernel("gemm.tile"))
    a = analyze(m, None, load_profile("h200_sxm"),
                {"BM": 256, "BN": 256, "BK": 128, "STAGES": 6})
    assert a.metrics["memory.peak.smem"] == 786_432
    assert any("exceeds its capacity" in w and "loop k" in w for w in a.warnings)
    assert a.metrics["occupancy.blocks_per_sm"] == 0


def test_causal_trip_count_sum_is_exact():
    """A loop to pm + 1 over a mesh of 8 rows runs 1+2+...+8 = 36 times in total (not 8*8 = 64)."""
    root = count("""kernel k {
      tensor X : f32[64, 8] @gmem in
      mesh cta[8] as (pm) capture(X) {
        loop j = 0 to pm + 1 bound 8 capture(X) {
          %x = load X[j * 8 : 8, 0 : 8] -> smem
        }
      }
    }""")
    loop = [n for n in root.walk() if n.kind == "loop"][0]
    assert loop.execs == 36
    assert loop.precision == "exact"


def test_l2_reuse_window_of_a_grouped_wave():
    """gemm.tile defaults on the H200: 2 CTAs/SM (registers) -> a wave of min(132*2, 1024) = 264
    CTAs. Group-M order with GROUP_M = 8 walks groups of 8 tile rows x all 32 tile columns
    (256 CTAs) column by column: the wave fills one group and 8 CTAs of the next, so it spans
    8 * ceil(264 / 256) = 16 rows and all 32 columns. Per k-step the A tiles of 16 rows and the
    B tiles of 32 columns (128*64*2 = 16,384 B each) must stay in L2, 3 stages deep:
    (16 + 32) * 16,384 * 3 = 2,359,296 B, which fits in the 62,914,560 B L2.
    DRAM reads are 16/264 of A's requests and 32/264 of B's (each 1,073,741,824 B), writes all
    33,554,432 B: hit ratio = 1 - (1,073,741,824 * 48/264 + 33,554,432) / 2,181,038,080."""
    m = parse_file(bundled_kernel("gemm.tile"))
    a = analyze(m, None, load_profile("h200_sxm"))
    assert a.metrics["occupancy.blocks_per_sm"] == 2
    assert a.metrics["memory.l2.reuse_window"] == 2_359_296
    assert a.metrics["memory.l2.reuse_fits"] is True
    expected_hit = 1 - (Fraction(1_073_741_824 * 48, 264) + 33_554_432) / 2_181_038_080
    assert a.metrics["performance.l2_hit_ratio"] == expected_hit


TAIL = """kernel k {
  param M = 1000
  param BM = 128
  tensor X : f32[M, 8] @gmem in
  mesh cta[cdiv(M, BM)] as (pm) capture(X) {
    %x = load X[pm * BM : min(BM, M - pm * BM), 0 : 8] -> smem
  }
}"""


def test_tail_tile_written_with_min_is_summed_exactly():
    """cdiv(1000, 128) = 8 CTAs; sizes min(128, 1000 - 128*pm): seven of 128 rows and one of
    1000 - 896 = 104, together 1000 rows x 8 f32 = 32,000 B (not 8 * 128 * 32 = 32,768 B).
    Per CTA: 32,000 / 8 = 4,000 B. The smem tile is allocated at its largest: 128*8*4 = 4,096 B."""
    m = parse_text(TAIL, "t.tile")
    a = analyze(m, None, load_profile("h200_sxm"))
    assert a.metrics["memory.traffic.gmem.total.read"] == 32_000
    assert a.metrics["memory.traffic.gmem.cta.read"] == 4_000
    assert a.metrics["memory.peak.smem"] == 4_096
    assert a.precision["memory.traffic.gmem.total.read"] == "exact"


def test_tail_tile_sum_is_the_same_in_a_sweep():
    """The vectorized walk gives the same 32,000 B for M = 1000 and, for M = 1024 (8 full
    tiles), 1024 * 8 * 4 = 32,768 B."""
    import numpy as np
    m = parse_text(TAIL, "t.tile")
    a = analyze(m, None, load_profile("h200_sxm"), {"M": np.array([1000, 1024])}, check=False)
    assert list(a.metrics["memory.traffic.gmem.total.read"]) == [32_000, 32_768]


def test_persistent_gemm_counts_every_tile_once_across_positions():
    """persistent_gemm.tile at M = N = K = 8192, 128x256x64 tiles: TILES = 64 * 32 = 2048 tiles
    over CTAS = 132 resident CTAs; CTA sm runs cdiv(2048 - sm, 132) tiles (16 for sm < 68,
    15 after): 68*16 + 64*15 = 2048 in total, a floor sum, exact.
    gmem reads: A once per column of tiles, B once per row of tiles:
    2 B * (8192*8192*32 + 8192*8192*64) = 2 * 6,442,450,944 = 12,884,901,888 B.
    (The scope-of-first-use bug reported 244 MB for such a kernel: a value's traffic must be
    counted per executing position and loop trip.)"""
    m = parse_file(bundled_kernel("persistent_gemm.tile"))
    a = analyze(m, None, load_profile("h200_sxm"), {"M": 8192, "N": 8192, "K": 8192})
    tile_loop = [n for n in a.root.walk() if n.kind == "loop" and n.label == "loop t"][0]
    assert tile_loop.execs == 2048
    assert tile_loop.precision == "exact"
    assert a.metrics["memory.traffic.gmem.total.read"] == 12_884_901_888


CALL = """kernel scale_rows {
  param R = 4
  param C = 8
  tensor X : f32[R, C] @gmem in
  tensor Y : f32[R, C] @gmem out
  %x = load X[0 : R, 0 : C] -> rmem
  %y = mul %x, 2.0
  store %y -> Y[0 : R, 0 : C]
}
kernel main {
  param N = 16
  tensor X : f32[N, 8] @gmem in
  tensor Y : f32[N, 8] @gmem out
  mesh cta[N / 4] as (b) capture(X, Y) {
    call scale_rows(X[b * 4 : 4, 0 : 8], Y[b * 4 : 4, 0 : 8]) with (R = 4, C = 8)
  }
}"""


def test_a_device_function_is_counted_at_every_call():
    """main (the kernel no other calls) runs N/4 = 4 CTAs, each calling scale_rows with R=4, C=8:
    4 * 8 = 32 f32 multiplies and 32 * 4 B = 128 B of gmem reads per call, so 4 * 32 = 128 flops
    and 4 * 128 = 512 B in total."""
    m = parse_text(CALL, "call.tile")
    a = analyze(m, None, load_profile("h200_sxm"))
    assert a.kernel.name == "main"
    assert a.metrics["compute-cost.flops.f32.total"] == 128
    assert a.metrics["memory.traffic.gmem.total.read"] == 512
    assert a.metrics["memory.traffic.gmem.total.write"] == 512
