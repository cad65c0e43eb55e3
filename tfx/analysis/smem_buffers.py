"""The shared-memory tile buffers a pipelined loop allocates, as its code generator compiles it.

The IR's ``stages S`` says a loop keeps S - 1 trips' loads in flight ahead of the one it
computes on (tfx.analysis.pipeline_depth); tfx's liveness (tfx.analysis.memory.peak_live) holds
S copies of each tile a trip loads. Triton 3.6.0's software pipeliner allocates fewer: each
load gets ``useStage - defStage`` = S - 1 buffers, and one more only where its use is a dot on
the warpgroup mma, whose asynchronous wgmma may still read the oldest buffer while the newest is
written ("For MMAv3, we need an extra buffer as this is assumed in the wgmma pipelining
post-processing": lib/Dialect/TritonGPU/Transforms/Pipeliner, the loop's allocations take the
largest count any load needs). So a loop whose mmas all take the warp mma (mma.sync: 2 warps, or
BLOCK_M not a multiple of 64, on sm_90; every mma of a GPU without the warpgroup instruction,
as the A100's) holds S - 1 tiles of each load; any wgmma keeps S.

Measured, not fitted: the compiled shared memory of the H200 campaigns' Triton GEMMs
(bench/pipeline_buffers.py, calibration/h200/measured/issue15): 660 warp-mma configurations at
2-5 stages allocate exactly S - 1 tiles of (BM + BN) x BK, 419 warpgroup ones exactly S; the
TTGIR of Triton's flash forward (bench/h200/compile_attn_sass.py) allocates K and V 1 x 64 x 128
at 2 stages on 2 warps and 2 x 64 x 128 on 4. Code generators that allocate S (CUTLASS's
multistage and TMA mainloops: ``Stages`` buffers each) and loops without an mma (whose loads
Triton pipelines by other rules, not measured here) keep the IR's count.

Four more allocations of Triton's, each read from its TTGIR (Triton 3.6.0, sm_90, compiled on the
CPU) or its source and checked against the campaigns' compiled bytes:

* **A loop of one stage holds one mma's shared operands at a time.** Unpipelined, each tile is
  loaded to registers and stored to shared memory just before the dot that reads it
  (``local_alloc`` then ``local_load``); the allocator's liveness lets the tiles of different dots
  share one buffer, the largest dot's (one_at_a_time). Flash attention at one stage holds
  Q + max(K, V), not Q + K + V (all 48 one-stage configurations of the campaigns); Triton's mixed-mode
  rewrite stages a promoted fp8 dot's two operands the same way.
* **A register operand computed from another dot's result crosses warps through shared memory**
  where the warps of the dot that made it split its columns, the later dot's K (exchange_bytes):
  attention's P on the warp mma when Triton puts the warps on N (PV's D wider than BLOCK_M):
  ``local_alloc %p : tensor<BM x BN, #mma>``, BM x BN x 2 B (every warp-mma row of
  calibration/h200/measured/attn_warp_s56 and _s57, and the decode kernel's 16 x BLOCK_N).
* **An mma's A tile in shared memory holds the instruction's rows** (padded_operands): a decode
  GROUP of 4 query rows is stored as the 16 rows of mma.sync's m16 (the Triton kernel pads it to
  tl.dot's 16; its ``local_alloc %q : tensor<16 x D>``).
* **An 8-bit operand transposed in registers holds one buffer** (unpipelined_operands): the
  warpgroup mma reads fp8 only K-major, and Triton does not pipeline the load of an operand it
  transposes before the store (gemm_fp8_kn's B).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import mma_layout
from tfx.analysis.memory import SHARED_LEVEL, allocated_bytes, allocation_env
from tfx.analysis.numbers import cdiv, emax, if_else, is_array, nbytes, to_plain
from tfx.analysis.register_estimate import direct_mmas, mma_layouts
from tfx.hw.units import format_counted, format_exact_bytes
from tfx.ir.nodes import Op, walk


class LoopBuffers(NamedTuple):
    """One mma loop's tile buffers: ``stages`` the IR states, ``buffers`` the code generator
    allocates each tile a trip loads (arrays elementwise for a sweep); ``staged`` groups of shared
    operands, one group live at a time, the groups sharing one buffer where ``staged_when`` holds
    (one_at_a_time; ``staged_kind`` "fp8": one promoted dot's operands, "dots": each dot's);
    ``exchange`` the bytes of register operands passed between warps through shared memory a trip
    (exchange_bytes), at the mma of line ``exchange_line``."""

    region_id: int
    line: int | None
    stages: Any
    buffers: Any
    staged: tuple = ()
    staged_when: Any = False
    staged_kind: str = ""
    exchange: Any = 0
    exchange_line: int | None = None
    declared: bool = True       # the IR states the loop's stages (a pipeline the user tunes)
    # operands whose load Triton does not pipeline (an fp8 tile transposed in registers for the
    # warpgroup mma): (name, condition) pairs, one buffer each where the condition holds
    unpipelined: tuple = ()

    def to_json(self) -> dict:
        out = {"line": self.line, "stages": to_plain(self.stages), "buffers": to_plain(self.buffers)}
        if self.staged:
            out["operands_one_at_a_time"] = to_plain(self.staged_when)
        if is_array(self.exchange) or self.exchange:
            out["exchange_bytes"] = to_plain(self.exchange)
        if self.unpipelined:
            out["unpipelined_operands"] = {name: to_plain(when) for name, when in self.unpipelined}
        return out


class PaddedOperand(NamedTuple):
    """A shared-memory tile an mma reads as its A operand, allocated at the instruction's rows."""

    op_id: int           # id() of the op that defines the tile
    name: str
    line: int | None
    rows: Any
    padded_rows: Any
    bytes: Any           # the tile as the IR types it
    padded_bytes: Any    # as the code generator allocates it

    def to_json(self) -> dict:
        return {"name": self.name, "line": self.line, "rows": to_plain(self.rows),
                "padded_rows": to_plain(self.padded_rows), "bytes": to_plain(self.padded_bytes)}


def _triton_gpu(profile, threads, codegen) -> bool:
    return profile.kind == "gpu" and threads is not None and codegen.warp_mma_stage_buffers_less_one


def pipeline_buffers(root, env, profile, threads, codegen) -> list:
    """A LoopBuffers for each loop (``stages`` S) with an mma of its own, where the code generator's
    allocation is known (Triton's on a GPU); empty elsewhere. ``env``: the bound parameters (S may
    be an array of a sweep: the count is then one too)."""
    if not _triton_gpu(profile, threads, codegen):
        return []
    inst = mma_layout.instruction_shape(profile)
    warps = mma_layout.warps_of(threads)
    out = []
    facts = mma_layout.warp_mma_facts(profile)
    promotes = facts is not None and facts.promotes_fp8
    for node in root.walk():
        region = node.region
        if node.kind != "loop" or region is None:
            continue
        layouts = mma_layouts(node, inst, warps)
        if not layouts:
            continue
        # Triton's loop allocates the largest count any of its loads needs: one wgmma keeps S
        any_warpgroup = False
        for _, plan in layouts:
            any_warpgroup = any_warpgroup | mma_layout.on_path(plan.path, "warpgroup")
        declared = getattr(region, "stages", None) is not None
        stages = region.stages.evaluate(env) if declared else 1
        staged, when, kind = one_at_a_time(node, promotes, any_warpgroup, stages)
        exchange, at = exchange_bytes(layouts)
        out.append(LoopBuffers(id(region), node.line, stages,
                               if_else(any_warpgroup | (stages < 2), stages, stages - 1), staged, when, kind,
                               exchange, at, declared, unpipelined_operands(layouts, inst, warps)))
    return out


def unpipelined_operands(layouts, inst, warps) -> tuple:
    """(operand name, condition) for each shared operand of a loop's mmas that Triton transposes in
    registers before its shared-memory store (mma_layout.register_transposes: an 8-bit tile not
    K-major on the warpgroup mma), whose load the pipeliner leaves out ("the pipelined load for this
    operand will be disabled", getSharedMemoryMMAOperand): it is loaded to registers each trip and
    stored to one buffer, while the loop's other loads keep their stages. The campaigns' fp8 K x N
    GEMMs (gemm_fp8_kn) on the warpgroup mma compile S buffers of A and one of B: 64 x 256 x 64 on 4
    warps at 3 stages 3 x 4,096 + 16,384 = 28,672 B, 128 x 256 x 64 on 8 at 4 stages 4 x 8,192 +
    16,384 = 49,152 B, as compiled."""
    out = []
    for node, _ in layouts:
        for t in mma_layout.register_transposes(node, inst, getattr(node, "mma_bits", 16), warps):
            name = getattr(node.op.operands[0 if t.operand == "A" else 1], "name", None)
            if name is not None:
                out.append((name, t.applies if is_array(t.applies) else bool(t.applies)))
    return tuple(out)


def one_at_a_time(node, promotes_fp8, any_warpgroup, stages) -> tuple:
    """(groups of operand names, condition, kind): shared operands a loop of one stage holds a
    group at a time, all groups in one buffer, the largest group's bytes.

    * "dots": a loop of one stage with several mmas. Unpipelined, Triton loads each tile to
      registers and stores it to shared memory just before the dot that reads it (TTGIR:
      ``local_alloc %v`` before the PV dot, after QK^T's), so the tiles of different dots are
      never live together and the allocator's liveness gives them one buffer. Flash attention at
      one stage: Q + max(K, V) in all 48 one-stage configurations of the campaigns (128 x 128 on
      D 128: 32,768 + 32,768 = 65,536 B, not 98,304); the decode kernel 16 x D of Q + max(K, V) +
      its P (13,312 B at BLOCK_N 32, D 128). One group per dot, its operands.
    * "fp8": a loop of one stage whose one mma takes fp8 operands on the warp mma, where the GPU's
      Triton promotes them to f16 (warp_mma.promotes_fp8, sm_90): Triton's mixed-mode rewrite
      (AccelerateMatmul.cpp, decomposeMixedModeDotOp) gives each operand its own local_alloc,
      local_load and fp_to_fp in sequence, so A's buffer is dead before B's is written. Its TTGIR:
      fp8 32 x 64 x 128 on 2 warps at one stage allocates 32 x 128 then 128 x 64 and uses 8,192 B,
      bf16's the same tile 24,576 (both live); the campaigns' one-stage fp8 warp-mma rows compile
      max(A, B) in all 459. One group per operand.

    ((), False, "") elsewhere: pipelined loops keep their buffers (the pipeliner allocates each
    load's), and one dot's operands stay live together."""
    mmas = direct_mmas(node)
    if len(mmas) > 1:
        # each dot's operands read from shared memory (mma_path's mma_from_smem; unknown: both)
        groups = tuple(tuple(getattr(o, "name", None) for o, shared in
                             zip(m.op.operands[:2], getattr(m, "mma_from_smem", None) or (True, True)) if shared)
                       for m in mmas)
        return groups, stages < 2, "dots"
    if not promotes_fp8:
        return (), False, ""
    if len(mmas) != 1 or getattr(mmas[0], "mma_bits", 16) != 8:
        return (), False, ""
    names = tuple(getattr(o, "name", None) for o in mmas[0].op.operands[:2])
    if None in names:
        return (), False, ""
    return tuple((n,) for n in names), if_else(any_warpgroup, False, stages < 2), "fp8"


def exchange_bytes(layouts) -> tuple:
    """(bytes, line): the register A operands of a loop's mmas that cross warps through shared memory
    a trip. An mma whose A was computed from another mma's result (attention's P from QK^T) on the
    warp mma: the dot that made it took this one's warps (mma_layout.feeds_into), so where those
    split N (warps_n > 1) each warp holds only some of P's columns, this dot's K, and the dot
    operand layout needs every column of its rows: Triton converts it through shared memory
    (TTGIR: ``local_alloc %p : tensor<BM x BN, #mma>``, then ``local_load`` as the dot operand), a
    tile of the padded M x K at A's element size. Warps all on M (BLOCK_M >= D, or one warp) and the
    warpgroup mma (a dot that feeds another puts every warp on M) keep P in registers. Measured, not
    fitted: the compiled shared memory of every warp-mma flash row of calibration/h200/measured/
    attn_warp_s56 and _s57 exceeds the loop's buffers by exactly BM x BN x 2 where the warps split
    N and by nothing where they do not. (0, None) where none does."""
    total, line = 0, None
    for node, plan in layouts:
        if not getattr(node, "mma_a_from_mma", False) or (getattr(node, "mma_from_smem", None) or (False,))[0]:
            continue
        split = mma_layout.on_path(plan.path, "warp") & (plan.warps_n > 1)
        size = plan.m * node.per_exec_shape[2] * (getattr(node, "mma_bits", 16) // 8)
        total = total + if_else(split, size, 0)
        if is_array(split) or split:
            line = node.line
    return total, line


def padded_operands(root, counter, profile, threads, codegen) -> list:
    """A PaddedOperand for each shared-memory tile an mma reads as its A operand with fewer rows
    than one instruction's M (16 on mma.sync, 64 on the warpgroup mma):
    the tile is stored at those rows, as the Triton kernel pads it for tl.dot (the decode kernel's
    GP = max(16, GROUP) query rows: its ``local_alloc %q : tensor<16 x D>``, 4,096 B at D 128 where
    a GROUP of 4 rows is 1,024). Only a tile loaded once by name (a unique definition) at the
    shared level, two-dimensional, read directly or through a capture that moves it."""
    if not _triton_gpu(profile, threads, codegen):
        return []
    inst = mma_layout.instruction_shape(profile)
    warps = mma_layout.warps_of(threads)
    defs: dict = {}
    for st in walk(counter.kernel.body):
        if isinstance(st, Op) and st.result is not None:
            defs.setdefault(st.result, []).append(st)
    at = allocation_env(counter)
    found: dict = {}
    for node in root.walk():
        if node.kind not in ("loop", "mesh"):
            continue
        for mma, plan in mma_layouts(node, inst, warps):
            name = getattr(mma.op.operands[0], "name", None)
            ops = defs.get(name, ())
            if len(ops) != 1 or ops[0].opcode not in ("load", "copy"):
                continue
            ty = counter.info.result_types.get(id(ops[0]))
            if ty is None or ty.level != SHARED_LEVEL or len(ty.shape) != 2:
                continue
            rows, cols = (d.evaluate(at) for d in ty.shape)
            _, size = allocated_bytes(counter, ops[0], at)
            # one instruction's rows: warps stacked on M past the tile's rows re-read it, they
            # do not widen it (the GEMMs' 16-row A on 2 warps is stored at 16 rows, compiled)
            step = if_else(mma_layout.on_path(plan.path, "warpgroup"), 64, mma_layout.WARP_MMA_M)
            padded_rows = emax(rows, cdiv(rows, step) * step)
            prev = found.get(id(ops[0]))
            if prev is not None:
                padded_rows = emax(padded_rows, prev.padded_rows)
            found[id(ops[0])] = PaddedOperand(id(ops[0]), name, ops[0].loc.line if ops[0].loc else None, rows,
                                              padded_rows, size, nbytes(ty.dtype.bits, padded_rows * cols))
    return [p for p in found.values() if is_array(p.padded_rows) or p.padded_rows > p.rows]


def by_region(loops) -> dict:
    """{id(loop region): buffers}, what tfx.analysis.memory.peak_live takes in place of S."""
    return {lb.region_id: lb.buffers for lb in loops}


def staged_by_region(loops) -> dict:
    """{id(loop region): (groups of operand names, condition)}, peak_live's ``staged``."""
    return {lb.region_id: (lb.staged, lb.staged_when) for lb in loops if lb.staged}


def unpipelined_by_region(loops) -> dict:
    """{id(loop region): ((operand name, condition), ...)}, peak_live's ``unpipelined``."""
    return {lb.region_id: lb.unpipelined for lb in loops if lb.unpipelined}


def exchange_by_region(loops) -> dict:
    """{id(loop region): bytes a trip exchanges through shared memory}, peak_live's ``exchange``."""
    return {lb.region_id: lb.exchange for lb in loops if is_array(lb.exchange) or lb.exchange}


def padded_by_op(padded) -> dict:
    """{id(defining op): bytes as allocated}, peak_live's ``padded``."""
    return {p.op_id: p.padded_bytes for p in padded}


def peak_live_overrides(loops, padded) -> dict:
    """Everything tfx.analysis.memory.peak_live takes from the code generator's allocation, as its
    keyword arguments: each loop's buffer count, staged operands, exchanged bytes and unpipelined
    operands, and the padded tiles."""
    return dict(buffers=by_region(loops), staged=staged_by_region(loops), exchange=exchange_by_region(loops),
                unpipelined=unpipelined_by_region(loops), padded=padded_by_op(padded))


def describe(loops, padded=()) -> str | None:
    """The line that says where the shared memory estimate departs from the IR's tiles at its stages
    (scalar analyses; None where nothing does)."""
    fewer = [lb for lb in loops if not is_array(lb.buffers) and int(lb.buffers) != int(lb.stages)]
    # (a loop the IR gives no stages, as a masked tail's, is staged as well but not named: the
    # pipeline the user tunes is the one worth the line)
    staged = [lb for lb in loops if lb.staged and not is_array(lb.staged_when) and bool(lb.staged_when)
              and (lb.declared or lb.staged_kind == "fp8")]
    swapped: dict = {}
    for lb in loops:
        if not is_array(lb.exchange) and lb.exchange:
            swapped.setdefault(int(lb.exchange), []).append(str(lb.exchange_line))
    parts = []
    if fewer:
        where = "; ".join(f"the loop at line {lb.line} holds {format_counted(int(lb.buffers), 'buffer')} "
                          f"of each tile it loads, not its {int(lb.stages)} stages" for lb in fewer)
        parts.append(f"{where} (its mmas take the warp mma: Triton's pipeliner keeps a load stages - 1 trips "
                     f"ahead in as many buffers, and one more only for a warpgroup mma)")
    for lb in staged:
        if lb.staged_kind == "fp8":
            names = ", ".join(g[0] for g in lb.staged)
            parts.append(f"the loop at line {lb.line} passes its fp8 operands {names} "
                         f"through one buffer in turn, the larger (one stage on the warp mma: Triton stages each "
                         f"operand it promotes to f16 alone)")
        else:
            names = " then ".join(", ".join(n for n in g if n) for g in lb.staged)
            parts.append(f"the loop at line {lb.line} (one stage) holds each mma's shared operands in turn "
                         f"({names}) in one buffer, the largest (unpipelined, Triton stores a tile just before "
                         f"the dot that reads it)")
    for lb in loops:
        names = [name for name, when in lb.unpipelined if not is_array(when) and when]
        if names and not is_array(lb.stages) and int(lb.stages) > 1:
            parts.append(f"the loop at line {lb.line} holds one buffer of {', '.join(names)}, not its "
                         f"{int(lb.stages)} stages (an 8-bit operand the warpgroup mma cannot read as stored: Triton "
                         f"transposes it in registers and does not pipeline its load)")
    for size, lines in swapped.items():
        at = f"the mma at line {lines[0]} passes its" if len(lines) == 1 else \
            f"the mmas at lines {', '.join(lines)} pass their"
        parts.append(f"{at} A operand, another mma's result split over the warps along its K, through "
                     f"{format_exact_bytes(size)} of shared memory a trip (Triton converts it to the dot's "
                     f"layout there)")
    for p in padded:
        if is_array(p.padded_rows):
            continue
        parts.append(f"{p.name} (line {p.line}) is stored at the mma instruction's {int(p.padded_rows)} rows, "
                     f"not its {int(p.rows)}: {format_exact_bytes(int(p.padded_bytes))}")
    return "shared memory, estimated: " + "; ".join(parts) if parts else None
