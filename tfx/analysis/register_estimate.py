"""The registers a thread needs when nobody gave a compiled count (docs/analysis.md, section 6).

`tfx analyze`, `tfx explore` and the TUI price a kernel nobody compiled with this estimate: it
sets the CTAs an SM (the occupancy calculator's register limit) and the registers over the
thread's cap that spill. Each term counts values the compiled code keeps live:

* **tiles**: without a matrix multiply, the live register tiles of the IR (tfx.analysis.memory's
  liveness, spread over the CTA's threads); in a loop-free body (a row kernel, a copy) only the
  tiles its elementwise chains cannot compute element by element: loads, values used again after
  a reduction, reductions' results (tfx.analysis.memory.row_held_bytes), with a measured base of
  16 (ROW_BASE_REGISTERS). With one, the tiles an mma needs whole: each mma's
  accumulator (its result) as the tensor instruction lays it out (tfx.analysis.mma_layout.plan:
  rows and columns padded to the instruction, e.g. a decode GROUP of 4 query rows to the
  mma.sync's 16), and the operands the trip computes in registers (attention's P; a value moved
  to registers) at the same padding, summed over the mmas of one trip. The elementwise chains
  between them (scale, exp2, masks) are computed element by element from those tiles and need
  no tile of their own: the IR's liveness counts each intermediate tile (attention's
  ``s_scaled``, ``s_shifted``, the causal mask's two iota tiles), which Triton's per-element
  lowering never holds at once.
* **copy addresses**: every 16-byte copy a thread issues a trip (a global load in a loop,
  ``ceil(bytes / (16 x threads))`` copies) carries its own 64-bit global address: 2 registers
  (the SASS of Triton 3.6.0's k-loop: each ``LDGSTS.E.BYPASS.128 [Rs], desc[..][Rn.64]`` has its
  own pair, live across the loop); the loop with the most copies counts (sibling loops do not
  run at once). Not in a loop that reduces (attention's and decode's online softmax) at 2 stages
  or more: Triton's attention and decode kernels index K and V by the trip's block each trip
  rather than advancing a pointer tile, and the compiled loop computes each copy's address where
  it issues (the SASS of the measured decode binaries, calibration/h200/measured/decode_sass:
  at BLOCK_N 128 on 2 warps and 2 stages each of the 64 LDGSTS a trip takes an address an
  IMAD.WIDE makes just before it from a 32-bit offset and a base pair, 46 of them in 4 pairs that
  the softmax reuses between; over the 18 binaries at 2-3 stages REG is a median 36 under the
  estimate with the term and 4-8 off without it). At 1 stage those loops load K and V into
  registers (LDG, then STS) and the term stands in for the loaded values: K's copies x 4
  registers (16 B) equal the K and V copies' x 2 when the tiles are alike (the 1-stage binaries
  are a median 6 off the estimate with it, 28 without).
* **warp-mma fragments**: an mma.sync (Triton's MMAv2: warps not a multiple of 4, or M not of
  64) reads its shared-memory operands into registers with ldmatrix, one 16-deep k-slice at a
  time (A: the warp's rows x 16, B: 16 x the warp's columns, 2-byte values: fp8 is promoted to
  f16 on this path), and Triton's prefetch pass loads the next slice while the mma reads this
  one: 2 slices. The warpgroup mma (wgmma) reads shared memory through descriptors: none.
* **base**: the registers a thread keeps besides those terms: the shared-memory addresses of
  its copies and ldmatrix reads, the K-mask compares of its copies, loop counters and barrier
  state, and the 2 that ptxas' count has over the highest register the code names. In a
  pipelined one-tile GEMM k-loop (every mma reads both operands from shared memory, an 8-bit
  one K-major, the loop not inside another loop, 2 stages or more) 24, measured: the SASS of 30 such configurations
  of the issue-15 campaigns (Triton 3.6.0, sm_90, compiled on the CPU, drawn at random with
  seed 16; mma.sync and wgmma, bf16 and fp8, 2-8 warps), nvdisasm's live ranges at the loop's
  peak classified by each register's next reader, keep 16-62 registers that are none of
  accumulator, ldmatrix fragment or copy address, median 24 (bench/h200/kloop_registers.py,
  calibration/h200/measured/kloop_registers). Elsewhere (attention, decode, the persistent
  tile walk, one-stage loops, kernels with a loop and no mma, and any kernel priced as another
  code generator compiles it: CUTLASS's TMA mainloops; no SASS classified) 32, an estimate:
  kernels compiled by Triton use 20-40. A loop-free body: 16, measured (ROW_BASE_REGISTERS).

The sum may exceed the 255 a thread can have: the caller caps it and prices the excess as spills.
Everything is arithmetic over ints or numpy arrays (explore's vectorized sweeps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfx.analysis import mma_layout, mma_path
from tfx.analysis.memory import row_held_bytes
from tfx.analysis.numbers import cdiv, ceil_int, emax, emin, if_else, is_array, ratio
from tfx.analysis.row_spill import RUN_REGISTERS
from tfx.ir.ops import REDUCE

# Registers a thread needs besides its tiles, copies and fragments: the tile's addresses,
# indices, loop counters, barrier state. An estimate (kernels compiled by Triton use 20-40).
BASE_REGISTERS = 32
# The same in a pipelined one-tile GEMM k-loop, measured: the median of 30 compiled loops' live
# registers at their peak that are none of accumulator, fragment or copy address (module doc)
KLOOP_BASE_REGISTERS = 24
# The same in a loop-free row body, measured: the median over 40 non-spilling row binaries of
# REG less the held tiles (bench/h200/row_registers.py, calibration/h200/measured/row_registers)
ROW_BASE_REGISTERS = 16
# The registers a thread is allocated where a row body streams whole through local memory (its
# held tiles over the cap by the cap again): ptxas runs such a body in a few dozen registers,
# not at the cap. 32 is the fewest the corpus's spilled row kernels allocate
# (tfx.analysis.row_spill.RUN_REGISTERS); of the campaigns' 715 row configurations this estimate
# calls streamed, 365 compile to 32, 314 to 40-64 and 33 (one warp, 512-1,024 values) to 168-255.
STREAMED_ROW_REGISTERS = RUN_REGISTERS
ADDRESS_REGISTERS = 2      # one 64-bit global address a copy
COPY_BYTES = 16            # a thread's widest copy (LDGSTS.128 / LDG.E.128)
FRAGMENT_SLICES = 2        # the k-slice an mma.sync reads + the next one the prefetch loads
FRAGMENT_DEPTH = 16        # K of one mma.sync slice of 2-byte values (m16n8k16)
FRAGMENT_BYTES = 2         # bytes of an mma.sync operand value (bf16/f16; fp8 promoted to f16)
LANE_BYTES = 32 * 4        # a warp's 32 lanes x one 4-byte register
MMA_OPS = ("mma", "dot")


@dataclass(frozen=True)
class RegisterEstimate:
    """The registers a thread needs, by term (each an int or a numpy array per configuration)."""

    tiles: Any
    addresses: Any
    fragments: Any
    base: Any = BASE_REGISTERS   # KLOOP_BASE_REGISTERS where a pipelined GEMM k-loop (an array in sweeps)
    from_mma: bool = False       # tiles counted from the mmas (else the IR's live register tiles)
    from_rows: bool = False      # a row body's tiles held whole (memory.row_held_bytes)
    live_tiles: Any = None       # a row body's section-5 live tiles (registers), what spills when the held ones do not fit
    cap: Any = None              # the registers the compiler may give a thread (occupancy.thread_register_cap), set by analyze

    @property
    def streams(self) -> Any:
        """Whether a row body streams whole through local memory: its held tiles exceed the cap
        by the cap again (the campaigns: 16-warp rows at 256 values a thread, 2-warp ones at 512)."""
        if not self.from_rows or self.cap is None:
            return False
        return self.total - self.cap >= self.cap

    @property
    def allocated(self) -> Any:
        """The registers a thread is allocated: the estimate up to the cap, the rest spilled; a
        row body that streams runs in STREAMED_ROW_REGISTERS (its occupancy, and the local traffic
        tfx.analysis.row_spill prices for a frame that reaches them, are a 32-register kernel's)."""
        if self.cap is None:
            return self.total
        capped = emin(self.total, self.cap)
        if not self.from_rows:
            return capped
        return if_else(self.streams, STREAMED_ROW_REGISTERS, capped)

    def priced(self, given=None) -> Any:
        """The registers a thread is priced at: a given count (compiled, declared) up to the cap,
        else the estimate's allocation. analyze's occupancy and explore's register column both
        read this."""
        if given is None:
            return self.allocated
        return given if self.cap is None else emin(given, self.cap)

    @property
    def spill_total(self) -> Any:
        """The registers whose excess over the cap spills: a row body whose held tiles do not fit
        has its chains' intermediates as tiles too (they are spilled, not computed in place)."""
        if self.live_tiles is None:
            return self.total
        return ceil_int(emax(self.live_tiles, self.tiles) + self.addresses + self.fragments) + self.base

    @property
    def total(self) -> Any:
        return ceil_int(self.tiles + self.addresses + self.fragments) + self.base

    @property
    def copies(self) -> Any:
        """The 16-byte copies a thread issues a trip whose addresses ``addresses`` counts."""
        return ratio(self.addresses, ADDRESS_REGISTERS)

    def to_json(self) -> dict:
        """Registers a thread by term, and their sum (before the 255 cap); the copies the
        addresses are counted for, as the text names them."""
        from tfx.analysis.numbers import to_plain
        return {"tiles": to_plain(self.tiles),
                "tiles_from": "mma" if self.from_mma else "held tiles" if self.from_rows else "live tiles",
                "copy_addresses": to_plain(self.addresses), "copies": to_plain(self.copies),
                "mma_sync_fragments": to_plain(self.fragments), "base": to_plain(self.base),
                "total": to_plain(self.total), "cap": to_plain(self.cap), "allocated": to_plain(self.allocated),
                "streams": to_plain(self.streams)}


def registers_of(nbytes) -> Any:
    """4-byte registers holding ``nbytes`` (arrays elementwise), not rounded."""
    return ratio(nbytes, 4)


def _direct_ops(scope) -> list:
    """The op nodes of ``scope`` that no nested loop holds (composites are transparent)."""
    out = []
    for c in scope.children:
        if c.kind == "loop":
            continue
        if c.kind == "op" and c.op is not None:
            out.append(c)
        else:
            out.extend(_direct_ops(c))
    return out


def _scopes(mesh) -> list:
    """The launch and every loop in it: the scopes whose direct ops run together a trip."""
    return [mesh] + [n for n in mesh.walk() if n.kind == "loop"]


def _layout(node, inst, warps):
    """The mma's layout as Triton compiles it: mma_layout.plan where the GPU has a 64-row warpgroup
    instruction (wgmma, else mma.sync with Triton's warpsPerTileV2); on a GPU without one, the
    same warp-mma layout (plan puts every warp on M there, which pads a 16-row tile to 16 rows a
    warp: an 8-warp decode GROUP would hold 128 rows)."""
    chained = getattr(node, "mma_chained", False)
    plan = mma_layout.plan(node.per_exec_shape, inst, warps, getattr(node, "mma_bits", 16), chained)
    if inst[0] >= 64:
        return plan
    m, n, _ = node.per_exec_shape
    wm, wn = mma_layout._warps_v2(m, n, warps, chained)
    rows, cols = mma_layout.WARP_MMA_M, mma_layout.WARP_MMA_N
    return plan._replace(path="warp", warps_m=wm, warps_n=wn, m=cdiv(m, rows * wm) * rows * wm,
                         n=cdiv(n, cols * wn) * cols * wn)


def _mmas(ops) -> list:
    """The mma nodes among ``ops`` with their counted shapes."""
    return [node for node in ops if node.op.opcode in MMA_OPS and getattr(node, "per_exec_shape", None) is not None]


def _plans(ops, inst, warps) -> list:
    """(node, its layout) for the mmas among ``ops``, each laid out once."""
    return [(node, _layout(node, inst, warps)) for node in _mmas(ops)]


def direct_mmas(scope) -> list:
    """The mma nodes ``scope`` issues itself (not its nested loops'), with their counted shapes."""
    return _mmas(_direct_ops(scope))


def mma_layouts(scope, inst, warps) -> list:
    """(node, its layout) for each mma ``scope`` issues itself, laid out as Triton compiles it."""
    return _plans(_direct_ops(scope), inst, warps)


def mma_paths(scope, inst, warps) -> list:
    """The instruction path ("warp" or "warpgroup", or an array of them for a sweep) of each mma
    ``scope`` issues itself (not its nested loops'), laid out as Triton compiles it."""
    return [_layout(node, inst, warps).path for node in direct_mmas(scope)]


def _mma_tiles(plans, counter, threads) -> Any:
    """Registers a thread holds for the mmas of one scope: each distinct accumulator (result)
    and each operand computed in registers, at the instruction's padding."""
    total, seen = 0, set()
    for node, plan in plans:
        bits = getattr(node, "mma_bits", 16)
        k = node.per_exec_shape[2]
        ty = counter.info.result_types.get(id(node.op))
        out_bytes = (ty.dtype.bits if ty is not None else 32) // 8
        if node.op.result not in seen:
            seen.add(node.op.result)
            total = total + registers_of(ratio(plan.m * plan.n * out_bytes, threads))
        a_smem, b_smem = getattr(node, "mma_from_smem", None) or (False, False)
        a, b = node.op.operands[0], node.op.operands[1]
        if not a_smem and getattr(a, "name", None) not in seen:
            seen.add(getattr(a, "name", None))
            total = total + registers_of(ratio(plan.m * k * bits // 8, threads))
        if not b_smem and getattr(b, "name", None) not in seen:
            seen.add(getattr(b, "name", None))
            total = total + registers_of(ratio(k * plan.n * bits // 8, threads))
    return total


def _fragments(plans) -> Any:
    """The largest mma.sync operand fragments of one scope (0 on the warpgroup mma)."""
    best = 0
    for node, plan in plans:
        a_smem, b_smem = getattr(node, "mma_from_smem", None) or (False, False)
        slice_bytes = (int(a_smem) * plan.m / plan.warps_m + int(b_smem) * plan.n / plan.warps_n) \
            * FRAGMENT_DEPTH * FRAGMENT_BYTES
        frag = FRAGMENT_SLICES * slice_bytes / LANE_BYTES
        best = emax(best, if_else(mma_layout.on_path(plan.path, "warp"), frag, 0))
    return best


def _byte_operand_not_k_major(node) -> bool:
    """An 8-bit operand of mma ``node`` that is not K-major where it was loaded (gemm_fp8_kn's B
    [K, N]): Triton transposes it in registers or gathers its bytes (tfx.analysis.mma_layout),
    a loop the measured k-loops do not include."""
    majors = getattr(node, "mma_k_major", None)
    return getattr(node, "mma_bits", 16) < 16 and majors is not None and not all(bool(m) for m in majors)


def _kloop_base(mesh, scopes) -> Any:
    """KLOOP_BASE_REGISTERS where the mmas of ``mesh`` form pipelined one-tile GEMM k-loops (each
    mma in a loop of 2 stages or more that no other loop holds, reading both operands from shared
    memory, an 8-bit operand K-major), else BASE_REGISTERS; elementwise over a sweep's stages."""
    nested = {id(m) for n in mesh.walk() if n.kind == "loop" for m in n.walk() if m.kind == "loop" and m is not n}
    stages = None
    for ops, scope in scopes:
        mmas = [o for o in ops if o.op.opcode in MMA_OPS]
        if not mmas:
            continue
        if scope.kind != "loop" or id(scope) in nested or scope.stages is None \
                or any(getattr(o, "mma_from_smem", None) != (True, True) or _byte_operand_not_k_major(o)
                       for o in mmas):
            return BASE_REGISTERS
        stages = scope.stages if stages is None else emin(stages, scope.stages)
    return BASE_REGISTERS if stages is None else if_else(stages >= 2, KLOOP_BASE_REGISTERS, BASE_REGISTERS)


def _reduces(ops) -> bool:
    """Whether ``ops`` reduce (a loop's online softmax: attention's and decode's row max and sum)."""
    return any(o.op.opcode in REDUCE for o in ops)


def _addresses_at_each_copy(scopes) -> Any:
    """Whether the loops that reduce (attention's and decode's online softmax) compute each copy's
    address where it issues, keeping none live across the loop: at 2 stages or more (cp.async),
    the most stages among them (a masked tail loop of one trip is the same compiled loop)."""
    stages = None
    for ops, scope in scopes:
        if scope.kind == "loop" and scope.stages is not None and _reduces(ops):
            stages = scope.stages if stages is None else emax(stages, scope.stages)
    return False if stages is None else stages >= 2


def _copies(ops, threads, local_levels) -> Any:
    """16-byte copies a thread issues for the global loads among ``ops``, one execution each."""
    total = 0
    for node in ops:
        if node.op.opcode != "load":
            continue
        moved = sum((v for (kind, level, way), v in node.per_exec.items()
                     if kind == "traffic" and way == "read" and level not in local_levels), 0)
        if is_array(moved) or moved:
            total = total + emax(ceil_int(ratio(moved, threads * COPY_BYTES)), 1)
    return total


def estimate(mesh, counter, profile, threads, rmem_tiles, triton=True) -> RegisterEstimate:
    """The registers a thread of launch ``mesh`` needs; ``rmem_tiles`` is its live register
    tiles per thread in bytes (tfx.analysis.memory's peak, spread over the threads); ``triton``:
    priced as Triton compiles it (tfx.analysis.codegen: per-thread copies), where the measured
    k-loop base applies."""
    tiles = registers_of(rmem_tiles)
    if profile.kind != "gpu" or threads is None:
        return RegisterEstimate(tiles, 0, 0)
    inst = mma_layout.instruction_shape(profile)
    warps = mma_layout.warps_of(threads)
    local = {"rmem", mma_layout.SHARED_LEVEL}
    scopes = [(_direct_ops(s), s) for s in _scopes(mesh)]
    has_mma = any(o.op.opcode in MMA_OPS for ops, _ in scopes for o in ops)
    addresses = 0
    at_each_copy = _addresses_at_each_copy(scopes)
    for ops, scope in scopes:
        if scope.kind == "loop":
            carried = ADDRESS_REGISTERS * _copies(ops, threads, local)
            if _reduces(ops):
                carried = if_else(at_each_copy, 0, carried)
            addresses = emax(addresses, carried)
    if not has_mma:
        # a loop-free body (a row kernel): only the tiles its chains cannot compute element by
        # element are held whole (tfx.analysis.memory.row_held_bytes)
        row = None if len(scopes) > 1 else row_held_bytes(mesh.region, counter)
        if row is not None:
            return RegisterEstimate(registers_of(ratio(row, threads)), addresses, 0, ROW_BASE_REGISTERS,
                                    from_rows=True, live_tiles=tiles)
        return RegisterEstimate(tiles, addresses, 0)
    mma_tiles, fragments = 0, 0
    for ops, _ in scopes:
        plans = _plans(ops, inst, warps)
        if plans:
            mma_tiles = emax(mma_tiles, _mma_tiles(plans, counter, threads))
            fragments = emax(fragments, _fragments(plans))
    base = _kloop_base(mesh, scopes) if triton else BASE_REGISTERS
    return RegisterEstimate(mma_tiles, addresses, fragments, base, from_mma=True)


def describe(e: RegisterEstimate) -> str:
    """The estimate and its terms, for a person (scalars only; a term that is 0 is left out):
    ``128 for the mmas' accumulators and register operands + 32 for 16 copies' 64-bit addresses
    a trip + 32 base = 192``."""
    from tfx.hw.units import format_count, format_counted
    what = ("the mmas' accumulators and register operands" if e.from_mma else
            "the tiles held whole (loads, values used again after a reduction)" if e.from_rows else
            "the live register tiles")
    parts = [f"{format_count(float(e.tiles))} for {what}"]
    if e.addresses:
        copies = format_counted(e.copies, "copy", "copies")
        parts.append(f"{format_count(e.addresses)} for {copies}' 64-bit addresses a trip")
    if e.fragments:
        parts.append(f"{format_count(float(e.fragments))} of mma.sync operand fragments (2 k-slices)")
    line = " + ".join(parts + [f"{e.base} base"]) + f" = {format_count(e.total)}"
    if e.cap is None or float(e.total) <= float(e.cap):
        return line
    if e.streams:
        return (line + f", twice the cap of {format_count(e.cap)} or more: the row streams through local memory "
                f"and runs in {format_count(e.allocated)} allocated")
    return line + f", {format_count(e.allocated)} allocated (the cap; the rest spills)"
