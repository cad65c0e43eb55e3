"""The executor's semantics (tfx/execute, docs/language.md "Executing kernels"), each
expected number derived by hand in the test."""

from __future__ import annotations

import numpy as np
import pytest

from tfx.errors import TfxError
from tfx.execute import derived_rtol, estimate, execute, rounding_dtypes
from tfx.execute.check import compare
from tfx.execute.dtypes import round_to
from tfx.execute.inputs import generate_inputs, index_extents
from tfx.ir.bind import bind
from tfx.ir.types import DType
from tfx.lang import parse_file, parse_text


def run_text(text, inputs=None, overrides=None, kernel=None, **kw):
    module = parse_text(text, "t.tile")
    return execute(module, module.kernel(kernel), overrides, inputs=inputs, **kw)


# ---------------------------------------------------------------- rounding

def test_bf16_rounds_to_nearest_even():
    """bf16 keeps 7 explicit mantissa bits: values near 1 are 2^-7 apart.
    1 + 2^-8 is half-way between 1 and 1 + 2^-7: ties go to the even mantissa, 1.
    1 + 3 * 2^-8 is half-way between 1 + 2^-7 (odd) and 1 + 2^-6 (even): 1.015625."""
    got = round_to(DType.BF16, np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8]))
    assert got.tolist() == [1.0, 1.015625]


def test_fp8e4m3_and_fp4_saturate_and_round():
    """fp8e4m3 has no infinity: its largest finite value is 448 (1.75 x 2^8), so 1000 -> 448.
    fp4e2m1's values are 0, 0.5, 1, 1.5, 2, 3, 4, 6: 2.4 -> 2, 2.6 -> 3, 100 -> 6."""
    assert round_to(DType.FP8E4M3, np.array([1000.0, -1000.0])).tolist() == [448.0, -448.0]
    assert round_to(DType.FP4E2M1, np.array([2.4, 2.6, 100.0])).tolist() == [2.0, 3.0, 6.0]


def test_float_to_int_truncates_and_saturates():
    """cvt.rzi.sat: 2.7 -> 2, -2.7 -> -2, 300 -> 127 and -300 -> -128 in int8, NaN -> 0."""
    got = round_to(DType.INT8, np.array([2.7, -2.7, 300.0, -300.0, np.nan]))
    assert got.tolist() == [2, -2, 127, -128, 0]


def test_int4_codes_saturate_from_floats_and_wrap_from_integers():
    """int4 holds -8..7 (a 4-bit two's-complement code, stored in int8): floats truncate and saturate
    (7.9 -> 7, -9.5 -> -8, 100 -> 7); integers keep their low 4 bits: 8 = 0b1000 -> -8, -9 = ...10111 -> 7,
    23 = 0b1_0111 -> 7; 3 and -8 are codes already."""
    assert round_to(DType.INT4, np.array([7.9, -9.5, 100.0])).tolist() == [7, -8, 7]
    got = round_to(DType.INT4, np.array([8, -9, 23, 3, -8]))
    assert got.tolist() == [-8, 7, 7, 3, -8] and got.dtype == np.int8


# ---------------------------------------------------------------- ops

MMA = """
kernel acc {
  param K = 257
  tensor A : bf16[1, K] @gmem in
  tensor B : bf16[K, 1] @gmem in
  tensor C : f32[1, 1] @gmem out
  tensor R : bf16[1] @gmem out
  mesh cta[1] as (p) capture(A, B, C, R) {
    %a = load A[:, :] -> smem
    %b = load B[:, :] -> smem
    %z = zeros f32[1, 1] @rmem
    %c = mma %a, %b, %z
    store %c -> C[:, :]
    %r = reduce sum %a axis 1
    store %r -> R[:]
  }
}
"""


def test_mma_and_reduce_accumulate_in_f32():
    """A = [1, 2^-9 x 256], B = ones: the exact sum is 1 + 256 x 2^-9 = 1.5. A bf16
    accumulator would lose every 2^-9 (half of bf16's 2^-7 step at 1 rounds to even, 1),
    giving 1.0; f32 keeps them: 1.5, exactly representable in bf16 too (R)."""
    a = np.full((1, 257), 2.0 ** -9)
    a[0, 0] = 1.0
    r = run_text(MMA, inputs={"A": a, "B": np.ones((257, 1))})
    assert r.tensors["C"].tolist() == [[1.5]]
    assert r.tensors["R"].tolist() == [1.5]


WINDOWS = """
kernel shift {
  param N = 10
  param BLOCK = 4
  tensor X : f32[N] @gmem in
  tensor Y : f32[N] @gmem out
  mesh cta[cdiv(N, BLOCK)] as (p) capture(X, Y) {
    %x = load X[p * BLOCK + 2 : BLOCK] -> rmem
    store %x -> Y[p * BLOCK : BLOCK]
  }
}
"""


def test_windows_outside_the_tensor_read_zeros_and_drop_writes():
    """3 positions (cdiv(10, 4)) read X[4p+2 .. 4p+5] and write Y[4p .. 4p+3].
    X = 0..9: position 2 reads X[10], X[11], X[12], X[13] (outside: zeros) and writes
    Y[8], Y[9] (Y[10], Y[11] are dropped). Y[i] = X[i + 2] = i + 2 for i < 8, else 0."""
    r = run_text(WINDOWS, inputs={"X": np.arange(10.0)})
    assert r.tensors["Y"].tolist() == [2, 3, 4, 5, 6, 7, 8, 9, 0, 0]


CARRY = """
kernel prefix {
  tensor X : f32[3] @gmem in
  tensor Y : f32[3] @gmem out
  mesh cta[3] as (p) capture(X, Y) {
    %acc = zeros f32[1] @rmem
    loop i = 0 to p + 1 bound 3 carry(%acc) capture(X) {
      %x = load X[i : 1] -> rmem
      %acc = add %acc, %x
    }
    store %acc -> Y[p : 1]
  }
}
"""


def test_loops_with_trip_counts_per_position_and_carries():
    """Position p runs p + 1 iterations, adding X[0..p]: X = [1, 2, 4] gives 1, 1 + 2 = 3,
    1 + 2 + 4 = 7. The positions run together; a finished one keeps its carried value."""
    r = run_text(CARRY, inputs={"X": [1.0, 2.0, 4.0]})
    assert r.tensors["Y"].tolist() == [1.0, 3.0, 7.0]


GATHER = """
kernel route {
  tensor X : f32[4, 2] @gmem in
  tensor IDX : int32[3] @gmem in
  tensor OUT : int32[3] @gmem in
  tensor Y : f32[5, 2] @gmem out
  mesh cta[1] as (p) capture(X, IDX, OUT, Y) {
    %rows = load IDX[:] -> rmem
    %slots = load OUT[:] -> rmem
    %x = load X[gather(%rows), :] -> rmem
    %y = mul %x, 10.0
    store %y -> Y[gather(%slots), :]
  }
}
"""


def test_gather_and_scatter_with_padding():
    """IDX = [2, -1, 0]: rows X[2], zeros (padding), X[0]; scattered x10 to OUT = [4, 0, -1]:
    Y[4] = 10 X[2] = [40, 50], Y[0] = zeros, the third row dropped. X = [[0,1],[2,3],[4,5],[6,7]].
    Rows 1..3 of Y are never written: NaN, as outputs start."""
    r = run_text(GATHER, inputs={"X": np.arange(8.0).reshape(4, 2), "IDX": [2, -1, 0], "OUT": [4, 0, -1]})
    y = r.tensors["Y"]
    assert y[4].tolist() == [40.0, 50.0]
    assert y[0].tolist() == [0.0, 0.0]
    assert np.isnan(y[1:4]).all()


CALL = """
kernel twice {
  param N = 4
  tensor X : f32[N] @gmem in
  tensor Y : f32[N] @gmem out
  mesh cta[1] as (p) capture(X, Y) {
    %x = load X[:] -> rmem
    %y = add %x, %x
    store %y -> Y[:]
  }
}

kernel main {
  tensor A : f32[8] @gmem in
  tensor B : f32[8] @gmem out
  mesh cta[2] as (p) capture(A, B) {
    call twice(A[p * 4 : 4], B[p * 4 : 4]) with (N = 4)
  }
}
"""


def test_call_runs_the_callee_on_windows_and_writes_its_outputs_back():
    """Each of 2 positions doubles its half: B = 2 A = 0, 2, ..., 14."""
    r = run_text(CALL, inputs={"A": np.arange(8.0)}, kernel="main")
    assert r.tensors["B"].tolist() == [0, 2, 4, 6, 8, 10, 12, 14]


LINKS = "tests/data/sim/links.tile"


def test_allreduce_sums_over_the_level_and_send_recv_swap():
    """links.tile: 2 PEs, PE p holds A[32p : 32]. `reduce`: each writes the sum of both
    halves, so C[:32] = C[32:] = A[:32] + A[32:]. `swap`: PE p receives the other's tile
    and adds it to its own: the same sums. A[r, c] = (32 r + c) mod 7: each sum is at most
    6 + 6 = 12, an integer bf16 holds exactly, so the comparison is exact."""
    module = parse_file(LINKS)
    a = (np.arange(64 * 32) % 7).reshape(64, 32).astype(float)
    want = a[:32] + a[32:]
    for name in ("reduce", "swap"):
        r = execute(module, module.kernel(name), inputs={"A": a})
        assert np.array_equal(r.tensors["C"][:32], want)
        assert np.array_equal(r.tensors["C"][32:], want)


RUNTIME = """
kernel rows {
  param T = 8
  param BM = 4
  tensor X : f32[T] @gmem in
  tensor Y : f32[T] @gmem out
  mesh cta[1] as (p) capture(X, Y) {
    loop r = 0 to runtime(0..cdiv(T, BM)) capture(X, Y) {
      %x = load X[r * BM : BM] -> rmem
      store %x -> Y[r * BM : BM]
    }
  }
}
"""


def test_runtime_loops_run_their_expectation_else_their_upper_bound():
    """runtime(0..cdiv(8, 4)) runs 2 iterations: Y is all of X. With `expect 1` it runs 1:
    Y[0..3] = X[0..3], Y[4..7] never written (NaN)."""
    r = run_text(RUNTIME, inputs={"X": np.arange(8.0)})
    assert r.tensors["Y"].tolist() == list(range(8))
    r = run_text(RUNTIME.replace("cdiv(T, BM))", "cdiv(T, BM)) expect 1"), inputs={"X": np.arange(8.0)})
    assert r.tensors["Y"][:4].tolist() == [0, 1, 2, 3] and np.isnan(r.tensors["Y"][4:]).all()


# ---------------------------------------------------------------- inputs, budget, tolerance

def test_inputs_are_seeded_per_tensor_and_index_tables_are_permutations():
    """moe_w4a16 at T=16, E=4, TOPK=2: ROW_TOKEN (4 x 16 = 64 entries) indexes X's 16 rows,
    ROW_SLOT indexes Y's 16 x 2 = 32 rows: a permutation of 0..63 with values >= 16 (resp.
    >= 32) set to -1, so exactly 16 (resp. 32) distinct valid entries."""
    module = parse_file("kernels/moe_w4a16.tile")
    k = module.kernel()
    env = bind(module, k, {"T": 16, "E": 4, "TOPK": 2, "H": 64, "I": 32})
    assert index_extents(k, env) == {"ROW_TOKEN": 16, "ROW_SLOT": 32}
    first = generate_inputs(k, env, seed=3)
    again = generate_inputs(k, env, seed=3)
    other = generate_inputs(k, env, seed=4)
    assert all(np.array_equal(first[n], again[n], equal_nan=True) for n in first)
    assert not np.array_equal(first["X"], other["X"])
    tokens = first["ROW_TOKEN"].reshape(-1)
    assert sorted(tokens[tokens >= 0].tolist()) == list(range(16))
    slots = first["ROW_SLOT"].reshape(-1)
    assert sorted(slots[slots >= 0].tolist()) == list(range(32))
    assert np.isnan(first["Y"]).all()


def test_work_estimate_of_a_gemm():
    """gemm at M = N = K = 256, BM = BN = 128, BK = 64: 2 x 2 = 4 positions, each with
    4 K steps of mma 2*128*128*64 = 2097152 flops: 4 x 4 x 2097152 = 33554432 flops.
    Elements per position: zeros 128*128 = 16384; 4 x (load a 128*64 + load b 64*128)
    = 65536; cast and store 16384 each: 114688; x 4 = 458752; plus the tensors A, B, C of
    65536 each (drawn or filled once): 458752 + 196608 = 655360.
    Steps (ops dispatched): zeros, 4 x 3, cast, store = 15 (the positions run together).
    Seconds: 33554432 x 5e-11 + 655360 x 2e-8 + 15 x 3e-5 = 0.0016777 + 0.0131072 + 0.00045
    = 0.0152349216."""
    module = parse_file("kernels/gemm.tile")
    k = module.kernel()
    w = estimate(module, k, bind(module, k, {"M": 256, "N": 256, "K": 256}))
    assert (w.flops, w.elements, w.steps) == (33554432, 655360, 15)
    assert w.seconds == pytest.approx(0.0152349216, rel=1e-9)
    # written as `tfx analyze` writes work (33,554,432 flop = 33.55 Mflop) and counts with
    # separators (it wrote '3.4e+07 mma flops, 6.6e+05 element operations')
    assert w.describe() == "33.55 Mflop of mma, 655,360 element operations, 15 interpreted steps"


def test_too_big_is_refused_with_what_to_shrink():
    module = parse_file("kernels/gemm.tile")
    with pytest.raises(TfxError) as err:
        execute(module, module.kernel())
    text = str(err.value)
    # 4096^3 at its defaults: 2 x 4096^3 = 137,438,953,472 flop = 137.44 Gflop
    assert "too big to run on a CPU" in text and "137.44 Gflop of mma" in text and "on one CPU core" in text
    assert "--set" in text


def test_tolerance_is_derived_from_the_dtypes_and_the_sum_lengths():
    """gemm rounds to f32 (mma) and bf16 (cast, output): ε_low = 2^-7, ε_high = 2^-23; at
    K = 256 (the largest extent) rtol = 4 x 2^-7 + 256 x 2^-23 = 0.03125 + 0.000030517578125
    = 0.031280517578125. An f32-only kernel over 1024 terms: 4 x 2^-23 + 1024 x 2^-23 =
    1028 x 2^-23. Integers only: 0 (exact)."""
    module = parse_file("kernels/gemm.tile")
    assert derived_rtol(rounding_dtypes(module, module.kernel()), 256) == 0.031280517578125
    assert derived_rtol({DType.F32}, 1024) == 1028 * 2.0 ** -23
    assert derived_rtol({DType.INT32}, 1024) == 0.0


def test_compare_reports_the_worst_element():
    """want = [1, 2, 100], got = [1, 2.01, 90], rtol 0.01. rms(want) = sqrt((1 + 4 + 10000)/3)
    = 57.77; allowed = 0.01 x (|want| + 57.77): 0.5877, 0.5977, 1.5777. Errors 0, 0.01, 10:
    only the last fails, at index 2, rel error 10 / 100 = 0.1."""
    c = compare("Y", np.array([1.0, 2.01, 90.0]), np.array([1.0, 2.0, 100.0]), 0.01)
    assert not c.passed
    assert c.worst_index == (2,)
    assert (c.got, c.want) == (90.0, 100.0)
    assert c.max_abs == pytest.approx(10.0)
    assert c.max_rel == pytest.approx(0.1)
    assert c.allowed == pytest.approx(0.01 * (100 + np.sqrt(10005 / 3)))


MASK = """
kernel mask {
  tensor X : f32[3, 4] @gmem in
  tensor Y : f32[3, 4] @gmem out
  tensor C : bool[3, 4] @gmem out
  tensor I : i64[3, 4] @gmem out
  mesh cta[1] as (p) capture(X, Y, C, I) {
    %x = load X[:, :] -> rmem
    %rows = iota i64[3, 4] @rmem axis 0 from 1
    %cols = iota i64[3, 4] @rmem axis 1
    %keep = ge %rows, %cols
    %y = select %keep, %x, -inf
    store %y -> Y[:, :]
    %pos = gt %x, 0.5
    store %pos -> C[:, :]
    store %rows -> I[:, :]
  }
}
"""


def test_iota_compare_and_select_mask_a_tile():
    """rows = 1 + i (axis 0 from 1), cols = j: keep where 1 + i >= j, so row 0 keeps
    columns 0, 1; row 1 keeps 0..2; row 2 keeps all four; the rest become -inf.
    X = 0, 0.25, ..., 2.75 (row-major): gt 0.5 is true from element 3 (0.75) on."""
    x = np.arange(12.0).reshape(3, 4) / 4
    r = run_text(MASK, inputs={"X": x})
    y = r.tensors["Y"]
    inf = -np.inf
    assert y.tolist() == [[0.0, 0.25, inf, inf], [1.0, 1.25, 1.5, inf], [2.0, 2.25, 2.5, 2.75]]
    assert r.tensors["C"].reshape(-1).tolist() == [False] * 3 + [True] * 9
    assert r.tensors["I"].dtype == np.int64 and r.tensors["I"][:, 0].tolist() == [1, 2, 3]



BATCHED = """
kernel bmm {
  tensor A : f32[2, 2, 3] @gmem in
  tensor B : f32[3, 2] @gmem in
  tensor C : f32[2, 2, 2] @gmem out
  mesh cta[1] as (p) capture(A, B, C) {
    %a = load A[:, :, :] -> smem
    %b = load B[:, :] -> smem
    %z = zeros f32[2, 2, 2] @rmem
    %c = mma %a, %b, %z
    store %c -> C[:, :, :]
  }
}
"""


def test_batched_mma_broadcasts_a_2d_operand_over_the_batch():
    """A[0] = [[1,0,0],[0,1,0]], A[1] = [[0,0,1],[1,1,1]], B = [[1,2],[3,4],[5,6]] (f32 mma,
    exact): C[0] = rows 0 and 1 of B = [[1,2],[3,4]]; C[1] = [row 2, sum of rows] =
    [[5,6],[9,12]]."""
    a = np.array([[[1, 0, 0], [0, 1, 0]], [[0, 0, 1], [1, 1, 1]]], dtype=float)
    b = np.array([[1, 2], [3, 4], [5, 6]], dtype=float)
    r = run_text(BATCHED, inputs={"A": a, "B": b})
    assert r.tensors["C"].tolist() == [[[1, 2], [3, 4]], [[5, 6], [9, 12]]]


PAGED = """
kernel pages {
  param PAGE = 2
  tensor CACHE : f32[8, 1] @gmem in
  tensor TABLE : i64[3] @gmem in
  tensor Y : f32[6, 1] @gmem out
  mesh cta[3] as (j) capture(CACHE, TABLE, Y) {
    %x = load CACHE[TABLE[j] * PAGE : PAGE, :] -> rmem
    store %x -> Y[j * PAGE : PAGE, :]
  }
}
"""


def test_window_starts_read_at_run_time():
    """TABLE = [3, 0, 2], pages of 2 rows of CACHE = 0..7: Y = rows 6,7 then 0,1 then 4,5.
    TABLE[1] = 4 puts the window at rows 8, 9 of an 8-row cache: an error naming the read."""
    cache = np.arange(8.0).reshape(8, 1)
    r = run_text(PAGED, inputs={"CACHE": cache, "TABLE": [3, 0, 2]})
    assert r.tensors["Y"].reshape(-1).tolist() == [6, 7, 0, 1, 4, 5]
    with pytest.raises(TfxError) as err:
        run_text(PAGED, inputs={"CACHE": cache, "TABLE": [3, 4, 2]})
    assert "starts at 8 (TABLE[j] = 4): [8, 9] leaves the axis of 8 elements" in str(err.value)


def test_page_tables_are_drawn_inside_the_cache():
    """paged_decode at B = 2, CTX = 64, PAGE = 16: MAX_PAGES = 4, CACHE_PAGES = 8, the cache
    8 x 16 = 128 rows; K_CACHE[BLOCK_TABLE[b, j] * 16 : 16] stays inside for 0 <= v <= 7
    (16 v + 15 <= 127); one entry covers 16 rows = 16 / 16 = 1 value of v (span 1). The
    table's 8 entries are a permutation of 0..7."""
    from tfx.execute.inputs import runtime_ranges
    module = parse_file("kernels/paged_decode.tile")
    k = module.kernel()
    env = bind(module, k, {"B": 2, "CTX": 64, "PAGE": 16})
    assert runtime_ranges(k, env) == {"BLOCK_TABLE": (0, 7, 1)}
    table = generate_inputs(k, env, seed=1)["BLOCK_TABLE"]
    assert sorted(table.reshape(-1).tolist()) == list(range(8))


CALL_VALUE = """
kernel k_step {
  param BM = 2
  tensor A : f32[BM, 2] @smem in
  tensor B : f32[2, 2] @smem in
  tensor ACC : f32[BM, 2] @rmem in
  %out = mma A[:, :], B[:, :], ACC[:, :]
  return %out
}

kernel gemm {
  tensor X : f32[4, 4] @gmem in
  tensor W : f32[4, 2] @gmem in
  tensor Y : f32[4, 2] @gmem out
  mesh cta[2] as (pm) capture(X, W, Y) {
    %acc = zeros f32[2, 2] @rmem
    loop k = 0 to 2 carry(%acc) capture(X, W, pm) {
      %x = load X[pm * 2 : 2, k * 2 : 2] -> smem
      %w = load W[k * 2 : 2, :] -> smem
      %acc = call k_step(%x, %w, %acc) with (BM = 2)
    }
    store %acc -> Y[pm * 2 : 2, :]
  }
}
"""


def test_a_call_returns_a_carried_accumulator():
    """Two k-steps of a 2 x 2 x 2 mma through the call accumulate X @ W. X = 0..15 row-major,
    W = [[1,0],[0,1],[1,0],[0,1]]: Y[i] = [X[i,0] + X[i,2], X[i,1] + X[i,3]]
    = [0+2, 1+3], [4+6, 5+7], [8+10, 9+11], [12+14, 13+15]."""
    x = np.arange(16.0).reshape(4, 4)
    w = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float)
    r = run_text(CALL_VALUE, inputs={"X": x, "W": w}, kernel="gemm")
    assert r.tensors["Y"].tolist() == [[2, 4], [10, 12], [18, 20], [26, 28]]
    # Run on its own, k_step ignores its return (it has no output tensor to write).
    alone = run_text(CALL_VALUE, kernel="k_step")
    assert alone.outputs() == {}


F16_ACC = """
kernel acc16 {
  tensor A : f16[1, 3] @gmem in
  tensor B : f16[3, 1] @gmem in
  tensor C : f16[1, 1] @gmem out
  mesh cta[1] as (p) capture(A, B, C) {
    %a = load A[:, :] -> smem
    %b = load B[:, :] -> smem
    %z = zeros f16[1, 1] @rmem
    %c = mma %a, %b, %z
    store %c -> C[:, :]
  }
}
"""


def test_an_f16_accumulator_rounds_every_step():
    """A = [2048, 1, 1], B = ones. f16 values near 2048 are 2 apart: 2048 + 1 = 2049 is a tie,
    rounding to the even 2048, twice: C = 2048. Summing in f32 and rounding once would give
    2050 (representable)."""
    r = run_text(F16_ACC, inputs={"A": [[2048.0, 1.0, 1.0]], "B": np.ones((3, 1))})
    assert r.tensors["C"].tolist() == [[2048.0]]


TAIL = """
kernel tail {
  param N = 10
  param B = 4
  tensor X : f32[N] @gmem in
  tensor Y : f32[N] @gmem out
  mesh cta[cdiv(N, B)] as (p) capture(X, Y) {
    %x = load X[p * B : min(B, N - p * B)] -> rmem
    %y = mul %x, 2.0
    store %y -> Y[p * B : min(B, N - p * B)]
  }
}
"""


def test_tail_tiles_run_position_by_position():
    """The last of cdiv(10, 4) = 3 positions has a 10 - 8 = 2-element tile: the shapes
    differ, so the positions run one at a time (3 x 3 = 9 steps); Y = 2 X exactly."""
    module = parse_text(TAIL, "t.tile")
    k = module.kernel()
    assert estimate(module, k, bind(module, k, {})).steps == 9
    r = execute(module, k, inputs={"X": np.arange(10.0)})
    assert r.tensors["Y"].tolist() == [2.0 * i for i in range(10)]
