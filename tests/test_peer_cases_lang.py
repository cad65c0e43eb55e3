"""Peer-style cost cases for the language pieces of issue 12 (after TileFoundry's per-op
CostCase tables): one op, its shapes, and its expected flops per work kind and bytes per
level per execution, each derived in the case's comment. The main peer table is
tests/test_peer_cases.py (helper `count`); these cover the new ops: compare, select,
iota, i64, batched and f32 mma, runtime window starts, a call returning a value."""

from __future__ import annotations

import pytest

from tfx.analysis.counting import Counter
from tfx.ir.bind import bind, check_shapes
from tfx.lang import parse_text


def kernel(tensors: str, body: str, extra: str = "") -> str:
    return f"""{extra}kernel k {{
{tensors}
  mesh cta[1] as (p) capture({", ".join(line.split()[1] for line in tensors.strip().splitlines())}) {{
{body}
  }}
}}
"""


R = ("traffic", "rmem", "read")
W = ("traffic", "rmem", "write")
SR = ("traffic", "smem", "read")
SW = ("traffic", "smem", "write")
GR = ("traffic", "gmem", "read")
GW = ("traffic", "gmem", "write")


CASES = [
    # lt on two f32[16, 32] tiles: 512 compares in f32; reads 2 x 512 x 4 = 4096 B, writes a
    # bool tile of 512 B.
    ("lt_f32_tiles", kernel("  tensor X : f32[16, 32] @gmem in\n  tensor Y : f32[16, 32] @gmem in",
                            "    %x = load X[:, :] -> rmem\n    %y = load Y[:, :] -> rmem\n    %c = lt %x, %y"),
     "%c = lt", {("flops", "f32", "compare"): 512, R: 4096, W: 512}),
    # eq of an int32[8, 8] tile with the immediate 0: 64 compares; reads 256 B, writes 64 B.
    ("eq_int32_scalar", kernel("  tensor X : int32[8, 8] @gmem in", "    %x = load X[:, :] -> rmem\n    %c = eq %x, 0"),
     "%c = eq", {("flops", "int32", "compare"): 64, R: 256, W: 64}),
    # ge on i64[4, 16] tiles: 64 compares in i64; reads 2 x 64 x 8 = 1024 B, writes 64 B.
    ("ge_i64", kernel("  tensor X : i64[4, 16] @gmem in", "    %x = load X[:, :] -> rmem\n    %c = ge %x, %x"),
     "%c = ge", {("flops", "i64", "compare"): 64, R: 1024, W: 64}),
    # ne of bf16[32] in smem with 1.0 / 32 (a scalar expression): 32 compares; reads 64 B of
    # smem, writes a 32 B bool tile in smem.
    ("ne_bf16_smem", kernel("  tensor X : bf16[32] @gmem in", "    %x = load X[:] -> smem\n    %c = ne %x, 1.0 / 32"),
     "%c = ne", {("flops", "bf16", "compare"): 32, SR: 64, SW: 32}),
    # select on f32[16, 32] with an immediate -inf: 512 selections; reads the condition 512 B
    # and the tile 2048 B = 2560 B, writes 2048 B.
    ("select_f32_scalar", kernel("  tensor X : f32[16, 32] @gmem in",
                                 "    %x = load X[:, :] -> rmem\n    %c = gt %x, 0.0\n    %y = select %c, %x, -inf"),
     "%y = select", {("flops", "f32", "select"): 512, R: 2560, W: 2048}),
    # select between two bf16[8, 64] tiles: 512 selections in bf16; reads 512 + 1024 + 1024 =
    # 2560 B, writes 1024 B.
    ("select_bf16_tiles", kernel("  tensor X : bf16[8, 64] @gmem in\n  tensor Y : bf16[8, 64] @gmem in",
                                 "    %x = load X[:, :] -> rmem\n    %y = load Y[:, :] -> rmem\n"
                                 "    %c = le %x, %y\n    %z = select %c, %x, %y"),
     "%z = select", {("flops", "bf16", "select"): 512, R: 2560, W: 1024}),
    # select between i64[4, 4] tiles: 16 selections; reads 16 + 128 + 128 = 272 B, writes 128 B.
    ("select_i64", kernel("  tensor X : i64[4, 4] @gmem in",
                          "    %x = load X[:, :] -> rmem\n    %c = lt %x, 3\n    %z = select %c, %x, 3"),
     "%z = select", {("flops", "i64", "select"): 16, R: 16 + 128, W: 128}),
    # iota int32[64, 32] in registers: no work, writes 64 x 32 x 4 = 8192 B.
    ("iota_int32", kernel("  tensor X : f32[1] @gmem in", "    %i = iota int32[64, 32] @rmem axis 1 from p * 32"),
     "%i = iota", {W: 8192}),
    # iota i64[128] in smem: writes 128 x 8 = 1024 B of smem.
    ("iota_i64_smem", kernel("  tensor X : f32[1] @gmem in", "    %i = iota i64[128] @smem axis 0"),
     "%i = iota", {SW: 1024}),
    # batched bf16 mma a[2, 16, 16] x b[2, 16, 8] -> acc f32[2, 16, 8]: 2 x 2 x 16 x 8 x 16 =
    # 8192 flop; reads a 1024 B and b 512 B of smem; the accumulator 2 x 16 x 8 x 4 = 1024 B
    # read and written in registers.
    ("mma_batched_bf16", kernel("  tensor A : bf16[2, 16, 16] @gmem in\n  tensor B : bf16[2, 16, 8] @gmem in",
                                "    %a = load A[:, :, :] -> smem\n    %b = load B[:, :, :] -> smem\n"
                                "    %acc = zeros f32[2, 16, 8] @rmem\n    %c = mma %a, %b, %acc"),
     "%c = mma", {("flops", "bf16", "tensor"): 8192, SR: 1536, R: 1024, W: 1024}),
    # batch 4 against a shared fp8 b[64, 32]: 2 x 4 x 32 x 32 x 64 = 524,288 flop; reads a
    # 4 x 32 x 64 = 8192 B, b 64 x 32 = 2048 B once; acc 4 x 32 x 32 x 4 = 16,384 B each way.
    ("mma_batch_broadcast_fp8", kernel("  tensor A : fp8e4m3[4, 32, 64] @gmem in\n  tensor B : fp8e4m3[64, 32] @gmem in",
                                       "    %a = load A[:, :, :] -> smem\n    %b = load B[:, :] -> smem\n"
                                       "    %acc = zeros f32[4, 32, 32] @rmem\n    %c = mma %a, %b, %acc"),
     "%c = mma", {("flops", "fp8e4m3", "tensor"): 524288, SR: 10240, R: 16384, W: 16384}),
    # f32 mma [16, 8] x [8, 16]: 2 x 16 x 16 x 8 = 4096 flop (counted as mma work; a profile
    # without an f32 tensor rate prices it as vector FMAs); reads 512 + 512 B of smem, the
    # 16 x 16 x 4 = 1024 B accumulator each way.
    ("mma_f32", kernel("  tensor A : f32[16, 8] @gmem in\n  tensor B : f32[8, 16] @gmem in",
                       "    %a = load A[:, :] -> smem\n    %b = load B[:, :] -> smem\n"
                       "    %acc = zeros f32[16, 16] @rmem\n    %c = mma %a, %b, %acc"),
     "%c = mma", {("flops", "f32", "tensor"): 4096, SR: 1024, R: 1024, W: 1024}),
    # a 16-row bf16 page of a [1024, 64] cache at a start read from an i64 table: the page
    # 16 x 64 x 2 = 2048 B plus the 8 B page id from gmem; writes 2048 B of smem.
    ("load_runtime_start_i64", kernel("  tensor T : i64[8] @gmem in\n  tensor C : bf16[1024, 64] @gmem in",
                                      "    %k = load C[T[p] * 16 : 16, :] -> smem"),
     "%k = load", {GR: 2048 + 8, SW: 2048}),
    # a start built from two int32 reads (expert offset + row tile of a routing table):
    # 8 rows x 32 x 2 B = 512 B plus 2 x 4 B of ids.
    ("load_runtime_start_two_reads", kernel("  tensor S : int32[4] @gmem in\n  tensor R : int32[4, 4] @gmem in\n"
                                            "  tensor X : bf16[256, 32] @gmem in",
                                            "    %x = load X[S[p] + R[p, 1] * 8 : 8, :] -> rmem"),
     "%x = load", {GR: 512 + 8, W: 512}),
    # a store to rows placed by an i64 id: reads the 8 x 16 f32 value (512 B of rmem), writes
    # 512 B of gmem and reads the 8 B id.
    ("store_runtime_start", kernel("  tensor IDX : i64[2] @gmem in\n  tensor X : f32[8, 16] @gmem in\n"
                                   "  tensor Y : f32[64, 16] @gmem out",
                                   "    %x = load X[:, :] -> rmem\n    store %x -> Y[IDX[p] * 8 : 8, :]"),
     "store", {R: 512, GW: 512, GR: 8}),
    # a call returning a value: the callee's one f32 add of two [4, 4] windows in registers:
    # 16 flops, reads 2 x 64 B, writes 64 B; the call's own node adds nothing beyond it.
    ("call_returns_value", kernel("  tensor X : f32[4, 4] @gmem in",
                                  "    %x = load X[:, :] -> rmem\n    %y = call twice(%x, %x)",
                                  extra="kernel twice {\n  tensor A : f32[4, 4] @rmem in\n"
                                        "  tensor B : f32[4, 4] @rmem in\n  %s = add A[:, :], B[:, :]\n"
                                        "  return %s\n}\n"),
     "%s = add", {("flops", "f32", "vector"): 16, R: 128, W: 64}),
]


@pytest.mark.parametrize("name, text, label, expected", CASES, ids=[c[0] for c in CASES])
def test_peer_case(name, text, label, expected):
    m = parse_text(text, f"{name}.tile")
    k = m.kernel("k")
    env = bind(m, k)
    check_shapes(m, k, env)
    root = Counter(m, k, env).run()
    node = next(n for n in root.walk() if n.label == label)
    assert node.per_exec == expected
