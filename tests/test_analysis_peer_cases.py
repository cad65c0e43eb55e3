"""Peer-style cost cases: one op (or one small composition) per row, with expected flops and
bytes per storage level, in the manner of TileFoundry's per-op CostCase tables (tests/ops/).

Each row's numbers are derived in its comment from the shape and dtype sizes (f32 4 B,
bf16/f16 2 B, fp8 1 B, int32 4 B) and the cost rules of docs/analysis.md sections 2-3:
a load moves its window's bytes (read at the source level, written at the destination); an
elementwise op reads each tile operand and writes its result; a store reads the value and
writes the window; views are free. The whole flops and traffic dictionaries are compared,
so a quantity counted that a row does not expect fails it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import pytest

from tfx.analysis.counting import Counter
from tfx.ir.bind import bind
from tfx.lang import parse_text


def flops(dtype: str, unit: str = "vector"):
    return ("flops", dtype, unit)


GR, GW = ("traffic", "gmem", "read"), ("traffic", "gmem", "write")
SR, SW = ("traffic", "smem", "read"), ("traffic", "smem", "write")
RR, RW = ("traffic", "rmem", "read"), ("traffic", "rmem", "write")


@dataclass(frozen=True)
class CostCase:
    """``body`` runs in ``mesh cta[ctas] as (coords)`` over the declared ``tensors``."""

    name: str
    tensors: str
    body: str
    flops: dict
    traffic: dict
    ctas: str = "1"
    coords: str = "c"
    params: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)
    per_cta: dict = field(default_factory=dict)   # key -> expected total / CTAs
    logical: dict = field(default_factory=dict)   # key -> expected logical sum

    def text(self) -> str:
        names = [line.split(":")[0].split()[-1] for line in self.tensors.strip().splitlines()
                 if line.strip().startswith("tensor")]
        params = "\n".join(f"  param {k} = {v}" for k, v in self.params.items())
        return (f"kernel k {{\n{params}\n{self.tensors}\n"
                f"  mesh cta[{self.ctas}] as ({self.coords}) capture({', '.join(names)}) {{\n{self.body}\n  }}\n}}")


def tensors(*decls: str) -> str:
    return "\n".join(f"  tensor {d}" for d in decls)


CASES = [
    # ---------------------------------------------------------------- binary
    # X, Y f32[8, 16]: 128 elements, 512 B each. Loads: gmem read 2 * 512 = 1,024, rmem write
    # 1,024. add: 128 flops, rmem read 1,024, rmem write 512. store: rmem read 512, gmem write 512.
    CostCase("add_f32_8x16",
             tensors("X : f32[8, 16] @gmem in", "Y : f32[8, 16] @gmem in", "Z : f32[8, 16] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = load Y[:, :] -> rmem
    %z = add %x, %y
    store %z -> Z[:, :]""",
             {flops("f32"): 128},
             {GR: 1024, RW: 1024 + 512, RR: 1024 + 512, GW: 512}),
    # bf16[64, 64] times a scalar: 4,096 elements, 8,192 B. load 8,192 gmem->rmem; mul reads
    # one tile (8,192 B), writes 8,192 B; store 8,192 rmem->gmem. A scalar is not traffic.
    CostCase("mul_bf16_by_scalar_64x64",
             tensors("X : bf16[64, 64] @gmem in", "Y : bf16[64, 64] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = mul %x, 0.5
    store %y -> Y[:, :]""",
             {flops("bf16"): 4096},
             {GR: 8192, RW: 8192 + 8192, RR: 8192 + 8192, GW: 8192}),
    # f16[32, 32] minus f16[32, 32]: 1,024 elements, 2,048 B a tile. Loads 2 * 2,048 = 4,096;
    # sub reads 4,096, writes 2,048; store 2,048.
    CostCase("sub_f16_32x32",
             tensors("X : f16[32, 32] @gmem in", "Y : f16[32, 32] @gmem in", "Z : f16[32, 32] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = load Y[:, :] -> rmem
    %z = sub %x, %y
    store %z -> Z[:, :]""",
             {flops("f16"): 1024},
             {GR: 4096, RW: 4096 + 2048, RR: 4096 + 2048, GW: 2048}),
    # Rank 1: f32[128] / f32[128]: 128 flops; tiles of 512 B; operands staged in smem.
    # Loads: gmem read 1,024, smem write 1,024. div: smem read 1,024, smem write 512.
    # store: smem read 512, gmem write 512.
    CostCase("div_f32_rank1_in_smem",
             tensors("X : f32[128] @gmem in", "Y : f32[128] @gmem in", "Z : f32[128] @gmem out"),
             """    %x = load X[:] -> smem
    %y = load Y[:] -> smem
    %z = div %x, %y
    store %z -> Z[:]""",
             {flops("f32"): 128},
             {GR: 1024, SW: 1024 + 512, SR: 1024 + 512, GW: 512}),
    # max of two f32[16, 16] tiles: 256 flops, tiles of 1,024 B.
    CostCase("max_f32_16x16",
             tensors("X : f32[16, 16] @gmem in", "Y : f32[16, 16] @gmem in", "Z : f32[16, 16] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = load Y[:, :] -> rmem
    %z = max %x, %y
    store %z -> Z[:, :]""",
             {flops("f32"): 256},
             {GR: 2048, RW: 2048 + 1024, RR: 2048 + 1024, GW: 1024}),
    # ---------------------------------------------------------------- unary (vector)
    # relu on bf16[128, 64]: 8,192 elements, 16,384 B. load, relu (read + write), store.
    CostCase("relu_bf16_128x64",
             tensors("X : bf16[128, 64] @gmem in", "Y : bf16[128, 64] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = relu %x
    store %y -> Y[:, :]""",
             {flops("bf16"): 8192},
             {GR: 16384, RW: 2 * 16384, RR: 2 * 16384, GW: 16384}),
    # neg on f32[4, 4]: 16 elements, 64 B.
    CostCase("neg_f32_4x4",
             tensors("X : f32[4, 4] @gmem in", "Y : f32[4, 4] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = neg %x
    store %y -> Y[:, :]""",
             {flops("f32"): 16},
             {GR: 64, RW: 128, RR: 128, GW: 64}),
    # sq (square) on f32[1000]: 1,000 elements, 4,000 B.
    CostCase("square_f32_1000",
             tensors("X : f32[1000] @gmem in", "Y : f32[1000] @gmem out"),
             """    %x = load X[:] -> rmem
    %y = sq %x
    store %y -> Y[:]""",
             {flops("f32"): 1000},
             {GR: 4000, RW: 8000, RR: 8000, GW: 4000}),
    # ---------------------------------------------------------------- unary (special functions)
    # exp on f32[64, 64]: 4,096 special-function ops, 16,384 B a tile.
    CostCase("exp_f32_64x64",
             tensors("X : f32[64, 64] @gmem in", "Y : f32[64, 64] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = exp %x
    store %y -> Y[:, :]""",
             {flops("f32", "special"): 4096},
             {GR: 16384, RW: 2 * 16384, RR: 2 * 16384, GW: 16384}),
    # rsqrt on f32[256]: 256 special ops, 1,024 B.
    CostCase("rsqrt_f32_256",
             tensors("X : f32[256] @gmem in", "Y : f32[256] @gmem out"),
             """    %x = load X[:] -> rmem
    %y = rsqrt %x
    store %y -> Y[:]""",
             {flops("f32", "special"): 256},
             {GR: 1024, RW: 2048, RR: 2048, GW: 1024}),
    # sigmoid on f32[32, 8]: 256 special ops, 1,024 B.
    CostCase("sigmoid_f32_32x8",
             tensors("X : f32[32, 8] @gmem in", "Y : f32[32, 8] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = sigmoid %x
    store %y -> Y[:, :]""",
             {flops("f32", "special"): 256},
             {GR: 1024, RW: 2048, RR: 2048, GW: 1024}),
    # tanh on f32[2, 3, 4] (rank 3): 24 special ops, 96 B.
    CostCase("tanh_f32_rank3",
             tensors("X : f32[2, 3, 4] @gmem in", "Y : f32[2, 3, 4] @gmem out"),
             """    %x = load X[:, :, :] -> rmem
    %y = tanh %x
    store %y -> Y[:, :, :]""",
             {flops("f32", "special"): 24},
             {GR: 96, RW: 192, RR: 192, GW: 96}),
    # silu on f32[1, 2048] (a Qwen3-1.7B hidden row): 2,048 special ops, 8,192 B.
    CostCase("silu_f32_qwen3_row",
             tensors("X : f32[1, 2048] @gmem in", "Y : f32[1, 2048] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = silu %x
    store %y -> Y[:, :]""",
             {flops("f32", "special"): 2048},
             {GR: 8192, RW: 2 * 8192, RR: 2 * 8192, GW: 8192}),
    # ---------------------------------------------------------------- cast
    # bf16[64, 128] -> f32: 8,192 conversions counted at the source dtype (bf16) on the vector
    # unit; reads 8,192 * 2 = 16,384 B, writes 8,192 * 4 = 32,768 B (then stored: 32,768 B).
    CostCase("cast_bf16_to_f32_64x128",
             tensors("X : bf16[64, 128] @gmem in", "Y : f32[64, 128] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = cast %x to f32
    store %y -> Y[:, :]""",
             {flops("bf16"): 8192},
             {GR: 16384, RW: 16384 + 32768, RR: 16384 + 32768, GW: 32768}),
    # f32[16, 16] -> fp8e4m3: 256 conversions (f32); reads 1,024 B, writes 256 B.
    CostCase("cast_f32_to_fp8_16x16",
             tensors("X : f32[16, 16] @gmem in", "Y : fp8e4m3[16, 16] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = cast %x to fp8e4m3
    store %y -> Y[:, :]""",
             {flops("f32"): 256},
             {GR: 1024, RW: 1024 + 256, RR: 1024 + 256, GW: 256}),
    # ---------------------------------------------------------------- reduce
    # sum over axis 1 of f32[32, 64]: one flop per input element, 2,048; reads 8,192 B and
    # writes the [32] result: 128 B (stored: 128 B).
    CostCase("reduce_sum_f32_32x64_axis1",
             tensors("X : f32[32, 64] @gmem in", "Y : f32[32] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = reduce sum %x axis 1
    store %y -> Y[:]""",
             {flops("f32"): 2048},
             {GR: 8192, RW: 8192 + 128, RR: 8192 + 128, GW: 128}),
    # max over the only axis of f32[1024]: 1,024 flops; result [1]: 4 B.
    CostCase("reduce_max_f32_1024_to_1",
             tensors("X : f32[1024] @gmem in", "Y : f32[1] @gmem out"),
             """    %x = load X[:] -> rmem
    %y = reduce max %x axis 0
    store %y -> Y[:]""",
             {flops("f32"): 1024},
             {GR: 4096, RW: 4096 + 4, RR: 4096 + 4, GW: 4}),
    # ---------------------------------------------------------------- matmul
    # One mma tile: A bf16[16, 16] (512 B), B bf16[16, 8] (256 B) staged in smem; acc
    # f32[16, 8] (512 B) zeroed in rmem. flops 2 * 16 * 8 * 16 = 4,096 (bf16, tensor unit).
    # gmem read 768, smem write 768 (loads), smem read 768 (mma operands); rmem: zeros writes
    # 512, mma reads and writes the accumulator (512 + 512); store reads 512... after a cast to
    # bf16: cast reads 512 (f32) and writes 256; store reads 256 rmem, writes 256 gmem.
    CostCase("mma_bf16_16x8x16",
             tensors("A : bf16[16, 16] @gmem in", "B : bf16[16, 8] @gmem in", "C : bf16[16, 8] @gmem out"),
             """    %a = load A[:, :] -> smem
    %b = load B[:, :] -> smem
    %acc = zeros f32[16, 8] @rmem
    %c = mma %a, %b, %acc
    %o = cast %c to bf16
    store %o -> C[:, :]""",
             {flops("bf16", "tensor"): 4096, flops("f32"): 128},
             {GR: 768, SW: 768, SR: 768, RW: 512 + 512 + 256, RR: 512 + 512 + 256, GW: 256}),
    # fp8e4m3 operands, f32 accumulator, 64 x 32 x 64: flops 2 * 64 * 32 * 64 = 262,144 (fp8).
    # A 64*64 = 4,096 B, B 64*32 = 2,048 B (1 B each) read straight from gmem windows; acc
    # 64*32*4 = 8,192 B: zeros writes it, mma reads and writes it, the store reads it.
    CostCase("mma_fp8_windows_64x32x64",
             tensors("A : fp8e4m3[64, 64] @gmem in", "B : fp8e4m3[64, 32] @gmem in", "C : f32[64, 32] @gmem out"),
             """    %acc = zeros f32[64, 32] @rmem
    %c = mma A[:, :], B[:, :], %acc
    store %c -> C[:, :]""",
             {flops("fp8e4m3", "tensor"): 262144},
             {GR: 4096 + 2048, RW: 8192 + 8192, RR: 8192 + 8192, GW: 8192}),
    # Tiled GEMM, M = N = 256, K = 128, 64 x 64 x 32 tiles: 4 x 4 = 16 CTAs (as pm, pn), 4 k-steps.
    # flops 2 * 256 * 256 * 128 = 16,777,216. gmem reads: A (M*K*2 = 65,536 B) once per tile
    # column (4): 262,144; B likewise: 262,144; total 524,288 (= smem writes). smem reads the
    # same 524,288 (mma operands). acc 64*64*4 = 16,384 B: zeros 16 * 16,384 = 262,144 written;
    # mma reads and writes it 16 CTAs * 4 trips: 1,048,576 each; the store reads 262,144 and
    # writes C: 256*256*4 = 262,144 B. Per CTA: 524,288 / 16 = 32,768 B of gmem reads.
    CostCase("gemm_tiled_bf16_256x256x128",
             tensors("A : bf16[256, 128] @gmem in", "B : bf16[128, 256] @gmem in", "C : f32[256, 256] @gmem out"),
             """    %acc = zeros f32[64, 64] @rmem
    loop k = 0 to 4 carry(%acc) capture(A, B, pm, pn) {
      %a = load A[pm * 64 : 64, k * 32 : 32] -> smem
      %b = load B[k * 32 : 32, pn * 64 : 64] -> smem
      %acc = mma %a, %b, %acc
    }
    store %acc -> C[pm * 64 : 64, pn * 64 : 64]""",
             {flops("bf16", "tensor"): 16_777_216},
             {GR: 524_288, SW: 524_288, SR: 524_288, RW: 262_144 + 1_048_576, RR: 1_048_576 + 262_144,
              GW: 262_144},
             ctas="4, 4", coords="pm, pn",
             per_cta={GR: 32_768},
             # logical: the loads vary in k (4 trips): 4 * (64*32*2 + 32*64*2) = 32,768 B.
             logical={GR: 32_768}),
    # ---------------------------------------------------------------- views and initialisers
    # transpose is a view: only the load (f32[8, 32]: 1,024 B) and the store of the [32, 8]
    # tile move bytes.
    CostCase("transpose_is_free",
             tensors("X : f32[8, 32] @gmem in", "Y : f32[32, 8] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %t = transpose %x
    store %t -> Y[:, :]""",
             {},
             {GR: 1024, RW: 1024, RR: 1024, GW: 1024}),
    # reshape [64] -> [8, 8] and broadcast [8, 1] -> [8, 8] are views; add over 64 elements.
    # Loads X f32[64] (256 B) and S f32[8, 1] (32 B); add reads both views (256 + 256: the
    # broadcast tile counts its 64 elements) and writes 256; store 256.
    CostCase("reshape_broadcast_add",
             tensors("X : f32[64] @gmem in", "S : f32[8, 1] @gmem in", "Y : f32[8, 8] @gmem out"),
             """    %x = load X[:] -> rmem
    %s = load S[:, :] -> rmem
    %x2 = reshape %x to [8, 8]
    %sb = broadcast %s to [8, 8]
    %y = add %x2, %sb
    store %y -> Y[:, :]""",
             {flops("f32"): 64},
             {GR: 256 + 32, RW: 256 + 32 + 256, RR: 256 + 256 + 256, GW: 256}),
    # full_like: zeros f32[16, 32] in smem (2,048 B written), stored (2,048 smem read, gmem write).
    CostCase("zeros_then_store",
             tensors("Y : f32[16, 32] @gmem out"),
             """    %z = zeros f32[16, 32] @smem
    store %z -> Y[:, :]""",
             {},
             {SW: 2048, SR: 2048, GW: 2048}),
    # ---------------------------------------------------------------- slicing and layout
    # slice X[4 : 8, 16 : 16] of f32[64, 64]: 8 * 16 = 128 elements, 512 B.
    CostCase("slice_window",
             tensors("X : f32[64, 64] @gmem in", "Y : f32[8, 16] @gmem out"),
             """    %x = load X[4 : 8, 16 : 16] -> rmem
    store %x -> Y[:, :]""",
             {},
             {GR: 512, RW: 512, RR: 512, GW: 512}),
    # strided slice X[0 : 8 : 2, :] of f32[16, 4]: rows 0, 2, ..., 14: 8 rows * 4 = 32 elements,
    # 128 B.
    CostCase("strided_slice",
             tensors("X : f32[16, 4] @gmem in", "Y : f32[8, 4] @gmem out"),
             """    %x = load X[0 : 8 : 2, :] -> rmem
    store %x -> Y[:, :]""",
             {},
             {GR: 128, RW: 128, RR: 128, GW: 128}),
    # concat along axis 0: X1, X2 bf16[4, 32] (256 B each) into the halves of Y bf16[8, 32].
    CostCase("concat_two_halves",
             tensors("X1 : bf16[4, 32] @gmem in", "X2 : bf16[4, 32] @gmem in", "Y : bf16[8, 32] @gmem out"),
             """    %a = load X1[:, :] -> rmem
    %b = load X2[:, :] -> rmem
    store %a -> Y[0 : 4, :]
    store %b -> Y[4 : 4, :]""",
             {},
             {GR: 512, RW: 512, RR: 512, GW: 512}),
    # split along axis 1: the two halves of X f32[4, 16] (128 B each) to Y1 and Y2.
    CostCase("split_two_halves",
             tensors("X : f32[4, 16] @gmem in", "Y1 : f32[4, 8] @gmem out", "Y2 : f32[4, 8] @gmem out"),
             """    %a = load X[:, 0 : 8] -> rmem
    %b = load X[:, 8 : 8] -> rmem
    store %a -> Y1[:, :]
    store %b -> Y2[:, :]""",
             {},
             {GR: 256, RW: 256, RR: 256, GW: 256}),
    # ---------------------------------------------------------------- gather / scatter
    # index_select: 3 int32 indices (12 B) pick 3 rows of 16 bf16 (32 B a row) from a
    # 1,000-row table: index load 12 B; gathered rows 3 * 32 = 96 B; store 96 B.
    CostCase("index_select_rows",
             tensors("T : bf16[1000, 16] @gmem in", "I : int32[3] @gmem in", "Y : bf16[3, 16] @gmem out"),
             """    %i = load I[:] -> rmem
    %r = load T[gather(%i), :] -> rmem
    store %r -> Y[:, :]""",
             {},
             {GR: 12 + 96, RW: 12 + 96, RR: 96, GW: 96}),
    # index_add-like scatter: 2 rows of 4 f32 (32 B) added into the rows named by 2 int32 indices
    # (8 B) of A f32[R, 4]: loads 8 + 32 (src) + 32 (gathered rows of A) = 72 B; add 8 flops,
    # reads 64 B, writes 32 B; the scatter store writes 32 B.
    CostCase("index_add_rows",
             tensors("A : f32[64, 4] @gmem inout", "I : int32[2] @gmem in", "S : f32[2, 4] @gmem in"),
             """    %i = load I[:] -> rmem
    %s = load S[:, :] -> rmem
    %a = load A[gather(%i), :] -> rmem
    %y = add %a, %s
    store %y -> A[gather(%i), :]""",
             {flops("f32"): 8},
             {GR: 8 + 32 + 32, RW: 8 + 32 + 32 + 32, RR: 64 + 32, GW: 32}),
    # ---------------------------------------------------------------- tails and sharding
    # 100 f32 in tiles of 32 over cdiv(100, 32) = 4 CTAs: tiles of 32, 32, 32 and 4 elements
    # (clipped at the edge): 100 * 4 = 400 B read in all; per CTA 400 / 4 = 100 B.
    CostCase("tail_tile_clipped",
             tensors("X : f32[100] @gmem in"),
             """    %x = load X[c * 32 : 32] -> smem""",
             {},
             {GR: 400, SW: 400},
             ctas="4",
             per_cta={GR: 100}),
    # Each of 8 CTAs adds its row block X[c * 2 : 2, :] of f32[16, 64] (128 elements): 8 * 128 =
    # 1,024 flops (each element once); 8 * 512 = 4,096 B per operand tile level.
    CostCase("rows_sharded_over_ctas",
             tensors("X : f32[16, 64] @gmem in", "Y : f32[16, 64] @gmem out"),
             """    %x = load X[c * 2 : 2, :] -> rmem
    %y = add %x, %x
    store %y -> Y[c * 2 : 2, :]""",
             {flops("f32"): 1024},
             {GR: 4096, RW: 4096 + 4096, RR: 8192 + 4096, GW: 4096},
             ctas="8",
             per_cta={flops("f32"): 128, GR: 512}),
    # ---------------------------------------------------------------- compositions
    # RMSNorm of one row f32[1, 256]: sq (256), reduce sum (256 flops -> [1, ...] via axis 1: [1]),
    # mul by 1/256 (1 flop), rsqrt (1 special), broadcast (view), mul (256).
    # Bytes (rmem): x 1,024 written by the load; sq r 1,024 w 1,024; reduce r 1,024 w 4;
    # mul-scalar r 4 w 4; rsqrt r 4 w 4; broadcast free; mul r 1,024 + 1,024 (the broadcast
    # tile counts 256 elements) w 1,024; store r 1,024.
    CostCase("rmsnorm_row_f32_256",
             tensors("X : f32[1, 256] @gmem in", "Y : f32[1, 256] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %x2 = sq %x
    %ss = reduce sum %x2 axis 1
    %ms = mul %ss, 0.00390625
    %r = rsqrt %ms
    %r2 = reshape %r to [1, 1]
    %rb = broadcast %r2 to [1, 256]
    %y = mul %x, %rb
    store %y -> Y[:, :]""",
             {flops("f32"): 256 + 256 + 1 + 256, flops("f32", "special"): 1},
             {GR: 1024, RW: 1024 + 1024 + 4 + 4 + 4 + 1024, RR: 1024 + 1024 + 4 + 4 + 2048 + 1024,
              GW: 1024}),
    # Softmax of one row f32[1, 128]: reduce max (128), broadcast (view), sub (128), exp (128
    # special), reduce sum (128), recip (1 special), broadcast, mul (128).
    # rmem bytes: load w 512; max r 512 w 4; sub r 512 + 512 w 512; exp r 512 w 512;
    # sum r 512 w 4; recip r 4 w 4; mul r 512 + 512 w 512; store r 512.
    CostCase("softmax_row_f32_128",
             tensors("X : f32[1, 128] @gmem in", "Y : f32[1, 128] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %m = reduce max %x axis 1
    %m2 = reshape %m to [1, 1]
    %mb = broadcast %m2 to [1, 128]
    %d = sub %x, %mb
    %e = exp %d
    %s = reduce sum %e axis 1
    %inv = recip %s
    %i2 = reshape %inv to [1, 1]
    %ib = broadcast %i2 to [1, 128]
    %y = mul %e, %ib
    store %y -> Y[:, :]""",
             {flops("f32"): 128 + 128 + 128 + 128, flops("f32", "special"): 128 + 1},
             {GR: 512, RW: 512 + 4 + 512 + 512 + 4 + 4 + 512,
              RR: 512 + 1024 + 512 + 512 + 4 + 1024 + 512, GW: 512}),
    # allreduce sum of f32[256] (1,024 B) over 4 CTAs: each moves 2 (4 - 1) / 4 * 1,024 = 1,536 B
    # over the CTA link (4 * 1,536 = 6,144 in all) and adds (4 - 1) / 4 * 256 = 192 elements
    # (768 in all); reads its tile: 4 * 1,024 = 4,096 B of rmem (after 4 * 1,024 B of loads).
    CostCase("allreduce_ring_over_4_ctas",
             tensors("X : f32[256] @gmem in"),
             """    %x = load X[:] -> rmem
    %y = allreduce sum %x over cta""",
             {flops("f32"): 768},
             {GR: 4096, RW: 4096, RR: 4096},
             ctas="4",
             links={("link", "cta", "bytes"): 6144}),
    # ---------------------------------------------------------------- compare, select, iota (issue 12)
    # ge of two f32[16, 16] tiles: 256 comparisons (work kind compare, f32); reads 2 * 1,024 B,
    # writes a bool tile of 256 * 1 B = 256 B (then stored: 256 B).
    CostCase("compare_ge_f32_16x16",
             tensors("X : f32[16, 16] @gmem in", "Y : f32[16, 16] @gmem in", "M : bool[16, 16] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %y = load Y[:, :] -> rmem
    %m = ge %x, %y
    store %m -> M[:, :]""",
             {flops("f32", "compare"): 256},
             {GR: 2048, RW: 2048 + 256, RR: 2048 + 256, GW: 256}),
    # select of f32[8, 32] against -inf by a loaded bool mask: 256 selections (kind select, f32);
    # reads the mask (256 B) and the one tile choice (1,024 B), writes 1,024 B.
    CostCase("select_f32_8x32",
             tensors("X : f32[8, 32] @gmem in", "M : bool[8, 32] @gmem in", "Y : f32[8, 32] @gmem out"),
             """    %x = load X[:, :] -> rmem
    %m = load M[:, :] -> rmem
    %y = select %m, %x, -inf
    store %y -> Y[:, :]""",
             {flops("f32", "select"): 256},
             {GR: 1024 + 256, RW: 1024 + 256 + 1024, RR: 256 + 1024 + 1024, GW: 1024}),
    # A causal mask of one 4 x 4 block: two int32 iotas (64 B written each, no work), ge of them
    # (16 int32 comparisons, reads 128 B, writes 16 B), select on a loaded f32 tile (16
    # selections: reads 16 + 64 B, writes 64 B), stored (64 B).
    CostCase("causal_mask_iota_ge_select",
             tensors("S : f32[4, 4] @gmem in", "Y : f32[4, 4] @gmem out"),
             """    %s = load S[:, :] -> rmem
    %q = iota int32[4, 4] @rmem axis 0
    %k = iota int32[4, 4] @rmem axis 1
    %keep = ge %q, %k
    %y = select %keep, %s, -inf
    store %y -> Y[:, :]""",
             {flops("int32", "compare"): 16, flops("f32", "select"): 16},
             {GR: 64, RW: 64 + 64 + 64 + 16 + 64, RR: 128 + 16 + 64 + 64, GW: 64}),
    # ---------------------------------------------------------------- i64, batched and f32 mma, runtime starts
    # index_select with i64 indices: 3 * 8 = 24 B of index, 3 rows of 8 f32 (32 B) = 96 B.
    CostCase("index_select_i64_indices",
             tensors("T : f32[100, 8] @gmem in", "I : i64[3] @gmem in", "Y : f32[3, 8] @gmem out"),
             """    %i = load I[:] -> rmem
    %r = load T[gather(%i), :] -> rmem
    store %r -> Y[:, :]""",
             {},
             {GR: 24 + 96, RW: 24 + 96, RR: 96, GW: 96}),
    # Batched mma: a bf16[4, 16, 16] (2,048 B) by a shared b bf16[16, 8] (256 B) into acc
    # f32[4, 16, 8] (2,048 B): 2 * B * M * N * K = 2 * 4 * 16 * 8 * 16 = 16,384 bf16 tensor flops.
    # Loads: 2,048 + 256 B gmem -> smem; mma reads them from smem, reads and writes acc (rmem,
    # zeroed first: 2,048 written).
    CostCase("batched_mma_shared_b",
             tensors("A : bf16[4, 16, 16] @gmem in", "B : bf16[16, 8] @gmem in"),
             """    %a = load A[:, :, :] -> smem
    %b = load B[:, :] -> smem
    %acc = zeros f32[4, 16, 8] @rmem
    %c = mma %a, %b, %acc""",
             {flops("bf16", "tensor"): 16384},
             {GR: 2048 + 256, SW: 2048 + 256, SR: 2048 + 256, RW: 2048 + 2048, RR: 2048}),
    # f32 mma 8 x 8 x 8 (no f32 tensor rate on the H200: priced as FMAs, but counted as the
    # mma's 2 * 8 * 8 * 8 = 1,024 f32 flops). Operands f32 windows in gmem (256 B each), acc
    # f32[8, 8] in rmem (256 B): zeros writes it, mma reads and writes it.
    CostCase("mma_f32_8x8x8",
             tensors("A : f32[8, 8] @gmem in", "B : f32[8, 8] @gmem in"),
             """    %acc = zeros f32[8, 8] @rmem
    %c = mma A[:, :], B[:, :], %acc""",
             {flops("f32", "tensor"): 1024},
             {GR: 512, RW: 256 + 256, RR: 256}),
    # A window whose start is read at run time (a page table): 4 CTAs each read their page
    # number PT[c] (an i64: 8 B) and the 4-row page K[PT[c] * 4 : 4, :] of 16 bf16 (4 * 32 = 128
    # B): gmem reads 4 * (8 + 128) = 544 B, smem writes 4 * 128 = 512 B.
    CostCase("paged_window_runtime_start",
             tensors("K : bf16[64, 16] @gmem in", "PT : i64[4] @gmem in"),
             """    %k = load K[PT[c] * 4 : 4, :] -> smem""",
             {},
             {GR: 4 * (8 + 128), SW: 4 * 128},
             ctas="4",
             per_cta={GR: 136}),
]


def count(case: CostCase):
    m = parse_text(case.text(), f"{case.name}.tile")
    k = m.kernel()
    return Counter(m, k, bind(m, k, {})).run()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_peer_cost_case(case: CostCase):
    root = count(case)
    got_flops = {k: v for k, v in root.total.items() if k[0] == "flops"}
    got_traffic = {k: v for k, v in root.total.items() if k[0] == "traffic"}
    got_links = {k: v for k, v in root.total.items() if k[0] == "link"}
    assert got_flops == case.flops
    assert got_traffic == case.traffic
    assert got_links == case.links
    assert root.precision == "exact"
    ctas = [n for n in root.walk() if n.kind == "mesh"]
    positions = 1
    for n in ctas:
        positions = max(positions, n.execs)
    for key, expected in case.per_cta.items():
        assert Fraction(root.total[key], positions) == expected
    for key, expected in case.logical.items():
        assert root.logical_sum[key] == expected


def test_the_table_has_at_least_25_cases_with_distinct_names():
    """Issue 12 asks for a table of at least 25 peer-style cases."""
    assert len(CASES) >= 25
    assert len({c.name for c in CASES}) == len(CASES)
