"""Window starts read from a tensor at run time (paged KV caches, MoE routing).

Every expected number is derived by hand in the test's docstring or comments.
"""

from __future__ import annotations

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.counting import Counter
from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.ir.bind import bind, check_shapes
from tfx.ir.nodes import walk_ops
from tfx.lang import parse_file, parse_text, print_module
from tfx.bundled import bundled_kernel
from tfx.sim import simulate

PAGED = """kernel paged {{
  param PAGES = 64
  param PAGE = 16
  tensor TABLE : {idx}[4, 8] @gmem in
  tensor KC : bf16[PAGES * PAGE, 128] @gmem in
  tensor Y : bf16[4 * 8 * PAGE, 128] @gmem out
  mesh cta[4] as (b) capture(TABLE, KC, Y) {{
    loop j = 0 to 8 capture(TABLE, KC, Y, b) {{
      %k = load KC[TABLE[b, j] * PAGE : PAGE, :] -> smem
      store %k -> Y[(b * 8 + j) * PAGE : PAGE, :]
    }}
  }}
}}
"""


def counted(text):
    m = parse_text(text, "t.tile")
    k = m.kernel()
    check_shapes(m, k, bind(m, k))
    return m, Counter(m, k, bind(m, k)).run()


def test_round_trip_and_axis_kind():
    m = parse_text(PAGED.format(idx="i64"))
    load = next(op for op in walk_ops(m.kernels[0].body) if op.opcode == "load")
    assert load.operands[0].axes[0].kind == "runtime"
    text = print_module(m)
    assert "%k = load KC[TABLE[b, j] * PAGE : PAGE, :] -> smem" in text
    assert parse_text(text) == m


@pytest.mark.parametrize("idx, elem_bytes", [("i64", 8), ("int32", 4)])
def test_the_start_read_is_charged(idx, elem_bytes):
    """Each load moves one 16 x 128 bf16 page = 4096 B and first reads its page id:
    8 B (i64) or 4 B (int32). 4 CTAs x 8 trips = 32 executions: 32 x (4096 + id) B of gmem
    read by the loads; the stores write 32 x 4096 = 131,072 B."""
    _, root = counted(PAGED.format(idx=idx))
    load = next(n for n in root.walk() if n.label == "%k = load")
    assert load.per_exec == {("traffic", "gmem", "read"): 4096 + elem_bytes,
                             ("traffic", "smem", "write"): 4096}
    assert load.total[("traffic", "gmem", "read")] == 32 * (4096 + elem_bytes)
    assert root.total[("traffic", "gmem", "write")] == 131072


KV_PAGED = """kernel kv {{
  param PAGE = 16
  tensor TABLE : i64[4, 8] @gmem {role}
  tensor KC : bf16[64 * PAGE, 128] @gmem in
  tensor VC : bf16[64 * PAGE, 128] @gmem in
  tensor Y : bf16[4 * 8 * PAGE, 128] @gmem out
  mesh cta[4] as (b) capture(TABLE, KC, VC, Y) {{
    loop j = 0 to 8 capture(TABLE, KC, VC, Y, b) {{
      %k = load KC[TABLE[b, j] * PAGE : PAGE, :] -> smem
      %v = load VC[TABLE[b, j] * PAGE : PAGE, :] -> smem
      %w = load VC[TABLE[b, 7 - j] * PAGE : PAGE, :] -> smem
      %s = add %k, %v
      %t = add %s, %w
      store %t -> Y[(b * 8 + j) * PAGE : PAGE, :]
    }}
  }}
}}
"""


@pytest.mark.parametrize("role, v_id_bytes", [("in", 0), ("inout", 8)])
def test_one_read_per_start_element_per_trip(role, v_id_bytes):
    """%k and %v start at the same TABLE[b, j]; %w at TABLE[b, 7 - j], another element.
    A read-only (`in`) table's element named twice in one trip is one scalar load the compiler
    keeps in a register: %k pays its 8 B, %v none, %w its own 8 B. An `inout` table may
    change under the kernel, so every window pays its read. Each load moves 16 x 128 x 2 =
    4096 B; 4 CTAs x 8 trips = 32 executions:
      in:    32 x (4104 + 4096 + 4104) = 32 x 12,304 = 393,728 B of gmem read
      inout: 32 x (3 x 4104)          = 32 x 12,312 = 393,984 B"""
    _, root = counted(KV_PAGED.format(role=role))
    per = {n.label: n.per_exec[("traffic", "gmem", "read")] for n in root.walk()
           if n.label in ("%k = load", "%v = load", "%w = load")}
    assert per == {"%k = load": 4104, "%v = load": 4096 + v_id_bytes, "%w = load": 4104}
    assert root.total[("traffic", "gmem", "read")] == {"in": 393728, "inout": 393984}[role]


def test_footprints():
    """TABLE: the 4 x 8 ids read, exactly: 32 x 8 B = 256 B. KC: where the pages land is data,
    so at most 32 executions x 16 rows = 512 of its 1024 rows x 128 x 2 B = 131,072 B (upper)."""
    m = parse_text(PAGED.format(idx="i64"), "t.tile")
    a = analyze(m, None, load_profile("h200_sxm"))
    assert a.metrics["memory.footprint.TABLE.logical"] == 256
    assert a.metrics["memory.footprint.KC.logical"] == 131072


def test_simulated_as_copies():
    """One representative CTA (4 CTAs, each on its own SM) issues its 8 loads and 8 stores:
    16 commands, on the copy engine."""
    m = parse_text(PAGED.format(idx="i64"), "t.tile")
    r = simulate(analyze(m, None, load_profile("h200_sxm")))
    assert r.commands == 16
    assert r.engines["copy"]["busy_ns"] > 0


@pytest.mark.parametrize("old, new, message", [
    ("tensor TABLE : i64[4, 8]", "tensor TABLE : f32[4, 8]",
     "a window start read from TABLE needs an i64, int32 or int8 tensor, found f32"),
    ("KC[TABLE[b, j] * PAGE : PAGE, :]", "KC[TABLE[b] * PAGE : PAGE, :]", "TABLE[b] has 1 indices, TABLE has 2 axes"),
    ("KC[TABLE[b, j] * PAGE : PAGE, :]", "KC[0 : TABLE[b, j], :]",
     "TABLE[b, j] reads a tensor at run time, which only a window's offset may do"),
    ("loop j = 0 to 8", "loop j = 0 to TABLE[b, 0]",
     "TABLE[b, 0] reads a tensor at run time, which only a window's offset may do"),
    ("capture(TABLE, KC, Y, b) {", "capture(KC, Y, b) {",
     "region is not isolated: TABLE is used here but the loop j"),
    ("KC[TABLE[b, j] * PAGE", "KC[NOPE[b, j] * PAGE", "unknown tensor 'NOPE'"),
])
def test_refusals(old, new, message):
    text = PAGED.format(idx="i64").replace(old, new)
    with pytest.raises(TfxError) as err:
        parse_text(text, "t.tile")
    assert message in str(err.value)
    assert str(err.value).startswith("t.tile:")


def test_paged_decode_kernel():
    """Defaults B 32, HQ 32, HKV 8 (GROUP 4), D 128, CTX 4096, PAGE 16: 32 x 8 = 256 CTAs, each
    over 4096 / 16 = 256 pages. gmem read: K and V pages 2 x 256 x 256 x (16 x 128 x 2 B) =
    536,870,912 B; one 8 B page id per trip (the K and V windows name the same
    BLOCK_TABLE[b, j]: one read, see test_one_read_per_start_element_per_trip)
    256 x 256 x 8 = 524,288 B; Q 32 x 32 x 128 x 2 = 262,144 B: 537,657,344 B in all.
    Block table footprint 32 x 256 x 8 = 65,536 B.
    mma work: per trip 2 x (2 x 4 x 16 x 128) = 32,768 flop; x 65,536 trips = 2,147,483,648."""
    m = parse_file(bundled_kernel("paged_decode.tile"))
    a = analyze(m, None, load_profile("h200_sxm"))
    assert a.metrics["memory.traffic.gmem.total.read"] == 537657344
    assert a.metrics["memory.footprint.BLOCK_TABLE.logical"] == 65536
    assert a.metrics["compute-cost.flops.bf16.total"] == 2147483648


def test_moe_grouped_kernel():
    """Defaults T 4096, TOPK 8, E 64, H 4096, I 1536 (N 3072), BM 64, BN 128, BK 64:
    64 x 3072 / 128 = 1536 CTAs, each over cdiv(4096 x 8, 64 x 64) = 8 row tiles (expected)
    of 4096 / 64 = 64 k-steps. The activation load moves 64 x 64 x 2 = 8192 B and reads its
    8 B expert start: 8200 B a step; the store reads the start once per row tile.
    mma work: 1536 x 8 x 64 x (2 x 64 x 128 x 64) = 824,633,720,832 flop
    = 2 x (T x TOPK) x H x N = 2 x 32,768 x 4096 x 3072."""
    m = parse_file(bundled_kernel("moe_grouped.tile"))
    k = m.kernel()
    root = Counter(m, k, bind(m, k)).run()
    x = next(n for n in root.walk() if n.label == "%x = load")
    assert x.per_exec[("traffic", "gmem", "read")] == 8200
    assert x.execs == 1536 * 8 * 64
    store = next(n for n in root.walk() if n.label == "store")
    assert store.per_exec[("traffic", "gmem", "read")] == 8
    assert root.total[("flops", "bf16", "tensor")] == 824633720832 == 2 * 32768 * 4096 * 3072
