"""How a tile compiler lays one CTA's mma on the tensor cores (docs/analysis.md, "mma layout").

Triton is the compiler the shipped GPU kernels are modelled on; on a GPU whose tensor
instruction is a 64-row warpgroup op (Hopper's ``wgmma.mma_async m64nNk16``) it picks one of
two paths per dot (triton-lang/triton, lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp
and lib/Analysis/Utility.cpp ``supportMMA``):

* **warpgroup mma** (MMAv3, ``wgmma``): when ``num_warps % 4 == 0``, the CTA's M is a multiple
  of 64, N a multiple of 8 and K at least one instruction deep (32 bytes of K per row:
  16 bf16, 32 fp8). ``warpsPerTileV3`` starts from 4 warps x 1 over (M, N) and doubles the M
  side while M exceeds 16 rows per warp on it, else the N side: a 64 x 256 tile on 8 warps is
  two warpgroups side by side in N (64 x 128 each), not stacked in M. A dot whose result
  another dot reads (attention's QK^T; ``getForwardSlice``) puts every warp on M instead
  ("chained dot"); the dot that reads it (PV) is laid out as any other. Each warpgroup issues
  m64nNk instructions of Triton's own N (``instruction_n``: a 64-row QK^T on 8 warps takes
  N / 2), so A is read once per instruction along N.
* **warp mma** (MMAv2, ``mma.sync m16n8k16``) otherwise: ``warpsPerTileV2`` balances the
  16-row and 8-column repetitions per warp (towards M on a tie); chained dots (either side:
  ``getSlice`` looks both ways) put every warp on the larger side of the later dot (PV: M =
  BLOCK_M against N = D), which Triton lays out first and whose warps the earlier dot (QK^T)
  takes (``feeds_into``): at BLOCK_M 64 and D 128 both dots split their N over the warps, so
  the row statistics and P cross warps through shared memory.

The padded work is what those instructions execute: M rounded up to 16 rows per warp on M
(64 per warpgroup), N to 8 columns per warp on N, K to the instruction's depth.

A warpgroup mma reads its shared-memory operands K-major, except 16-bit ones which it can
transpose on the fly (PTX ISA, wgmma: the transpose immediates are valid for .f16/.bf16
only; AccelerateMatmul.cpp ``allowTranspose = isF16 || isBF16``). An 8-bit operand stored
N-major (B[K, N] loaded as is) is therefore transposed in registers before its shared-memory
store, and its pipelined load is disabled (Triton's warning in
``getSharedMemoryMMAOperand``: "Registers will be transposed before SMEM store and the
pipelined load for this operand will be disabled"). See ``register_transposes``.
"""

from __future__ import annotations

import functools

from typing import Any, NamedTuple

from tfx.analysis.numbers import cdiv, decimal_value, emax, emin, if_else, is_array, ratio, where
from tfx.hw.units import format_exact_bytes
from tfx.hw.units import format_counted, format_plain, format_time_ns, formula_flop_rate, formula_frequency
from tfx.hw.units import format_count, format_times, format_whole, formula_cycles, formula_share

WARP_MMA_M, WARP_MMA_N = 16, 8          # mma.sync m16n8: rows and columns one warp computes
# How a dot is chained to another (counting's ``mma_chained``): FEEDS, its result is read by
# another dot (attention's QK^T); READS, it only reads another's result (attention's PV);
# False, neither. Triton's warpsPerTileV2 looks both ways (AccelerateMatmul.cpp: getSlice of the
# dot, backward and forward), its warpsPerTileV3 only forward (getForwardSlice of the dot's
# result), so on the warpgroup mma only a dot that FEEDS puts every warp on M. ``True`` (a
# caller that does not tell them apart) counts as FEEDS.
FEEDS, READS = "feeds", "reads"
# A dot that feeds another on the warp mma takes the layout the dot it feeds chose: Triton's
# greedy rewrite lays the later dot (PV) out first, by its own extents, and warpsPerTileV2 then
# returns that dot's warpsPerCTA for the earlier one (AccelerateMatmul.cpp: "if (auto
# mmaEncoding = ...) return getWarpsPerCTA(mmaEncoding)"). Counting records it as
# ``(FEEDS, m, n)``, the reader's M and N (``feeds_into``); the TTGIR of Triton 3.6.0's flash
# forward has one #mma for both dots: warpsPerCTA [1, 2] at BLOCK_M 64, D 128 on 2 warps, where
# QK^T's own 64 x 64 would put both warps on M (bench/h200/compile_attn_sass.py, session 57).


def feeds_into(m, n):
    """``mma_chained`` of a dot whose result a dot of M x N output reads (see FEEDS)."""
    return (FEEDS, m, n)


def _reader_extents(chained):
    """(M, N) of the dot this one feeds (``feeds_into``), or None."""
    return chained[1:] if type(chained) is tuple else None
ROWS_PER_WARP_IN_GROUP = 16             # a warpgroup's 64 rows are 16 per warp
VECTOR_BYTES = 16                       # a thread's widest global load (128 bits)
LANES = 32


class MmaPlan(NamedTuple):
    """One dot as the compiler lays it out: which instruction path, warps over M and N, and
    the M, N, K the instructions execute (the real extents rounded up)."""

    path: str            # "warpgroup" (wgmma), "warp" (mma.sync) or "tile" (no GPU warp layout)
    warps_m: Any
    warps_n: Any
    m: Any
    n: Any
    k: Any
    depth: Any = 16      # K of one instruction

    @property
    def flops(self):
        return 2 * self.m * self.n * self.k


def _k_depth(inst_k, bits):
    """K one instruction covers: the profile states it for 16-bit operands (32 bytes of a
    row); the same bytes hold 32 fp8 or 8 tf32 values."""
    return inst_k * 16 // bits if bits else inst_k


def feeds_dot(chained) -> bool:
    """True where a dot's result is read by another dot (``FEEDS``, or ``True``): the chained
    dot of Triton's warpsPerTileV3, which looks at the dot's forward slice only."""
    return chained is True or chained == FEEDS or _reader_extents(chained) is not None


def _warps_v3(mm, warps, chained):
    """warpsPerTileV3: 4 x 1, then double M while M > 16 x warps on M, else N (a dot that
    feeds another: all on M; ``chained`` is counting's ``mma_chained``)."""
    if feeds_dot(chained):
        return warps, 1 + 0 * warps
    wm, wn = 4 + 0 * mm, 1 + 0 * mm
    for _ in range(5):                                  # at most 128 warps: 4 -> 128 in 5 doublings
        more = wm * wn < warps
        grow_m = more & (mm > ROWS_PER_WARP_IN_GROUP * wm) if is_array(more, mm, wm) else (
            more and mm > ROWS_PER_WARP_IN_GROUP * wm)
        grow_n = more & ~grow_m if is_array(more, grow_m) else (more and not grow_m)
        wm = if_else(grow_m, wm * 2, wm)
        wn = if_else(grow_n, wn * 2, wn)
    return wm, wn


def _warps_v2(mm, nn, warps, chained):
    """warpsPerTileV2: repetitions of 16 rows and 8 columns; each doubling goes to the side
    with more repetitions (M on a tie) and halves them (chained: all warps on the larger side)."""
    if chained:
        # the reader's extents where this dot feeds another (feeds_into), else its own
        reader = _reader_extents(chained)
        on_m = reader[0] >= reader[1] if reader is not None else mm >= nn
        one = 1 + 0 * warps
        return if_else(on_m, warps, one), if_else(on_m, one, warps)
    rm, rn = cdiv(mm, WARP_MMA_M), cdiv(nn, WARP_MMA_N)
    wm, wn = 1 + 0 * rm, 1 + 0 * rm
    for _ in range(7):                                  # at most 128 warps
        more = wm * wn < warps
        if is_array(more, rm, rn):
            import numpy as np
            to_m = more & (rm >= rn)
            to_n = more & ~(rm >= rn)
            wm = np.where(to_m, wm * 2, wm)
            rm = np.where(to_m & (rm != 1), rm // 2, rm)
            wn = np.where(to_n, wn * 2, wn)
            rn = np.where(to_n, rn // 2, rn)
        elif more:
            if rm >= rn:
                wm *= 2
                rm = rm // 2 if rm != 1 else rm
            else:
                wn *= 2
                rn //= 2
    return wm, wn


def plan(shape, inst, warps, bits=16, chained=False, gpu=True) -> MmaPlan:
    """The layout of one CTA's ``mma`` of ``shape`` (M, N, K) over ``warps`` warps.

    ``inst`` is the hardware's tensor instruction (m, n, k); a 64-row instruction means a
    warpgroup mma exists (wgmma), taken where Triton's supportMMA(op, 3) allows it.
    Chained dots (attention's two mmas) take the same two paths with every warp on M (on the
    larger side for mma.sync): a decode GROUP of 4 query rows is one 16-row mma.sync, not a
    64-row warpgroup instruction.

    One configuration's plans are remembered: an analysis asks for the same few dots'
    plans some 250 times (the trip's paths, chains and terms each ask again)."""
    reader = _reader_extents(chained)
    if (type(warps) is int and type(bits) is int and all(type(x) is int for x in shape)
            and (reader is None or all(type(x) is int for x in reader))):
        return _int_plan(tuple(shape), inst, warps, bits, chained, gpu)
    return _plan(shape, inst, warps, bits, chained, gpu)


@functools.lru_cache(maxsize=4096)
def _int_plan(shape, inst, warps, bits, chained, gpu) -> MmaPlan:
    """``_plan`` of int extents and warps (hashable, and equal only where of one type)."""
    return _plan(shape, inst, warps, bits, chained, gpu)


def _plan(shape, inst, warps, bits, chained, gpu) -> MmaPlan:
    mm, nn, kk = shape
    im, in_, ik = inst
    depth = _k_depth(ik, bits) if gpu else ik
    k_pad = cdiv(kk, depth) * depth
    n_pad = cdiv(nn, in_) * in_
    if not gpu:
        return MmaPlan("tile", 1, 1, cdiv(mm, im) * im, n_pad, k_pad, depth)
    if im < 64:
        m_pad = cdiv(cdiv(mm, emax(warps, 1)), im) * im * emax(warps, 1)
        return MmaPlan("warp", emax(warps, 1), 1, m_pad, n_pad, cdiv(kk, ik) * ik, ik)
    v3 = (warps % 4 == 0) & (mm % 64 == 0) & (nn % 8 == 0) & (kk >= depth)
    v3m, v3n = _warps_v3(mm, warps, chained)
    v2m, v2n = _warps_v2(mm, nn, warps, chained)
    m3 = cdiv(mm, ROWS_PER_WARP_IN_GROUP * v3m) * ROWS_PER_WARP_IN_GROUP * v3m
    n3 = cdiv(nn, in_ * v3n) * in_ * v3n
    m2 = cdiv(mm, WARP_MMA_M * v2m) * WARP_MMA_M * v2m
    n2 = cdiv(nn, WARP_MMA_N * v2n) * WARP_MMA_N * v2n
    if is_array(v3):
        import numpy as np
        return MmaPlan(np.where(v3, "warpgroup", "warp"), where(v3, v3m, v2m), where(v3, v3n, v2n),
                       where(v3, m3, m2), where(v3, n3, n2), k_pad, depth)
    if v3:
        return MmaPlan("warpgroup", v3m, v3n, m3, n3, k_pad, depth)
    return MmaPlan("warp", v2m, v2n, m2, n2, k_pad, depth)


def on_path(path, name):
    """Where a plan's ``path`` (a string, or an array of them for a sweep) is ``name``: a bool,
    or a bool array per configuration."""
    if is_array(path):
        import numpy as np
        return np.asarray(path) == name
    return path == name


def path_share(path, name):
    """The share of a term that holds where a plan's ``path`` is ``name``: 1 for a scalar path that is,
    a float array (1.0 / 0.0 per configuration) for a sweep's path that is somewhere, None where no
    configuration takes that path (the term does not apply at all)."""
    if is_array(path):
        share = on_path(path, name).astype(float)
        return share if share.any() else None
    return 1 if path == name else None


def describe(p: MmaPlan, shape, warps, rate_flop_per_ns=None) -> str:
    """One line: the path, the warp layout, the padding and (given the unit's tensor rate)
    the ns one execution takes (scalar plans)."""
    inst = {"warpgroup": "wgmma m64nNk", "warp": "mma.sync m16n8k"}.get(p.path, "tile k")
    padded = tuple(int(x) for x in (p.m, p.n, p.k))
    real = tuple(int(x) for x in shape)
    pad = "no padding" if padded == real else "padded to {}x{}x{}".format(*padded)
    text = (f"{real[0]}x{real[1]}x{real[2]} on {format_counted(int(warps), 'warp')}: {p.path} mma ({inst}{int(p.depth)}), "
            f"warps {int(p.warps_m)} x {int(p.warps_n)} over M x N, {pad}")
    if rate_flop_per_ns:
        text += (f": 2 x {padded[0]} x {padded[1]} x {padded[2]} = {format_count(int(p.flops))} flop / "
                 f"{formula_flop_rate(rate_flop_per_ns)} = {format_time_ns(p.flops / rate_flop_per_ns)} per execution")
    return text


def describe_sustained_rate(dtype, per_cycle, clock_ghz, fraction, key, clock_factor=1) -> str:
    """One line: the tensor rate an mma of ``dtype`` is priced at where the profile states that
    dtype's own sustained fraction (``key``, ``compute.tensor.efficiency_<dtype>``): the SM's peak
    (``per_cycle`` flop/cycle at ``clock_ghz``) times it. fp8 on the H200: 8192 x 1.98 = 16,220.2
    flop/ns (16.22 TFLOP/s) x 0.700 (cuBLAS fp8 / bf16 at 8192^3 in one session, 1.892, x bf16's
    0.74 / 2; calibration/h200/measured/fp8_rate) = 11,354.1 flop/ns, written 11.35 TFLOP/s
    (tfx.hw.units.formula_flop_rate; docs/analysis.md section 8). ``clock_factor``: the launch's
    power-limited clock (tfx.analysis.machine.Machine.tensor_clock_factor), written where not 1."""
    peak = per_cycle * clock_ghz
    clock = f" x {format_plain(clock_factor)} (the power clock, below)" if clock_factor != 1 else ""
    return (f"{dtype} on the tensor cores: {format_whole(per_cycle)} flop/cycle x {formula_frequency(clock_ghz)} = "
            f"{formula_flop_rate(peak)} per SM at peak x {formula_share(fraction)} sustained ({key}){clock} = "
            f"{formula_flop_rate(peak * fraction * clock_factor)}")


# ------------------------------------------------------------------ operand reads from shared memory
SHARED_LEVEL = "smem"                   # the level whose mma operands each warp (warpgroup) reads for itself
WARPGROUP_M = 64                        # rows of one wgmma instruction
WGMMA_MAX_N = 256                       # the widest wgmma instruction (m64n256)
DEFAULT_WARPS = 4                       # a CTA's warps where the kernel states no threads


def instruction_shape(profile) -> tuple:
    """The tensor instruction's (M, N, K) a profile states (compute.tensor.instruction_m / _n /
    _k; 1 where it states none): H100 / H200 m64n8k16, wgmma's smallest N."""
    return tuple(int(profile.get(f"compute.tensor.instruction_{a}", 1)) for a in "mnk")


def warps_of(threads):
    """A CTA's warps: threads / 32, or DEFAULT_WARPS where the kernel states none (the one rule
    the counted operand reads and the predicted time share)."""
    return ratio(threads, 32) if threads is not None else DEFAULT_WARPS


class OperandReads(NamedTuple):
    """The shared-memory bytes one execution of a dot reads as its warps issue it: each warp
    (mma.sync) or warpgroup (wgmma) reads the operand rows and columns of its own tile, so
    those side by side re-read the same rows: A once per reader along N, B once per reader
    along M. A warp the layout duplicates (more warps than 16 x 8 tiles) reloads its rows."""

    path: Any            # "warp" (each warp's ldmatrix) or "warpgroup" (each warpgroup's wgmma)
    warps_m: Any
    warps_n: Any
    a_readers: Any       # readers of each row of A: the warps (warpgroups) side by side along N
    b_readers: Any       # readers of each column of B: the warps (warpgroups) stacked along M
    rows: Any            # A's rows as read (M padded to 16 a warp on M: a duplicate reloads them)
    cols: Any            # B's columns as read (N padded to 8 a warp on N)
    k: Any               # K as read (padded to the instruction's depth)
    bits: Any
    a_bytes: Any         # a_readers x rows x k x bits / 8
    b_bytes: Any         # b_readers x cols x k x bits / 8


def instruction_n(shape, warps, inst_n=8):
    """N of the m64nNk instruction Triton's warpgroup mma issues for a dot of ``shape`` (M, N,
    K) on ``warps`` warps (lib/Dialect/TritonGPU/Transforms/Utility.cpp,
    ``mmaVersionToInstrShape``, version 3): the widest multiple of ``inst_n`` (8) up to
    WGMMA_MAX_N that divides N and is at most ``maxN = max(N / nWarps, 8)``, ``nWarps =
    max(warps / max(M / 16, 1), 1)``: the warps left over once every 16 rows has one. It does
    not follow the warp layout: a 64-row dot that feeds another on 8 warps (every warp on M,
    each warpgroup holding all 64 rows) still takes nWarps = 8 / 4 = 2, so each warpgroup issues
    two N / 2 instructions per k-step, each reading A again (attention's 64 x 32 QK^T on 8
    warps: 16 HGMMA.64x16x16 a warpgroup a trip in the SASS of Triton 3.6.0, not 8 of 64x32;
    bench/h200/compile_attn_sass.py f,128,64,32,8,3). Arrays elementwise."""
    mm, nn = shape[0], shape[1]
    n_warps = emax(ratio(warps, emax(ratio(mm, ROWS_PER_WARP_IN_GROUP) // 1, 1)) // 1, 1)
    max_n = emin(emax(ratio(nn, n_warps) // 1, inst_n), WGMMA_MAX_N)
    if is_array(nn, max_n):
        import numpy as np
        nn_a, max_a = np.asarray(nn), np.asarray(max_n)
        out = np.full(np.broadcast(nn_a, max_a).shape, inst_n)
        for n in range(inst_n, WGMMA_MAX_N + 1, inst_n):      # widest last: it wins
            out = np.where((nn_a % n == 0) & (n <= max_a), n, out)
        return out
    return next((n for n in range(int(max_n) - int(max_n) % inst_n, 0, -inst_n) if nn % n == 0), inst_n)


def operand_reads(shape, inst, warps, bits=16, chained=False) -> OperandReads | None:
    """The shared-memory reads of one execution of a dot of ``shape`` (M, N, K) on ``warps``
    warps laid out as Triton lays it on a warpgroup-mma GPU (``plan``), or None off a GPU layout.

    On the warp mma every warp loads its own fragments (Triton's
    SharedToDotOperandMMAv2OrV3.cpp ``loadArg``: each warp's ldmatrix.x4 at its
    ``warpM = warpId_M mod (M / 16)`` rows and ``warpN = warpId_N mod (N / 8)`` columns, so a
    warp beyond the tile's 16-row (8-column) repetitions wraps onto the rows another warp
    holds and loads them again): A's ``rows x K`` are read by each of the ``warps_n`` warps
    along N, B's ``K x cols`` by each of the ``warps_m`` along M. Checked against the SASS of
    all 344 warp-mma compiles of calibration/h200/measured/fragment_chain: every warp's
    LDSM.16.M88.4 / MT88.4 count x 512 B is ``(rows / warps_m + cols / warps_n) x K x 2 B``.
    On the warpgroup mma each warpgroup's wgmma reads its 64-row slab of A and its columns of
    B from shared memory (both operands' descriptors: PTX ISA, wgmma.mma_async), one m64nNk
    instruction per 64 rows and per ``instruction_n`` columns (Triton's instruction N, at most
    256): B is read once per 64-row instruction along M (``M / 64``: a warpgroup of 128 rows
    issues two), A once per instruction along N (a 64-row dot that feeds another on 8 warps
    issues two N / 2 instructions a warpgroup, so A is read twice by each)."""
    p = plan(shape, inst, warps, bits, chained)
    if not is_array(p.path) and p.path == "tile":
        return None
    group = on_path(p.path, "warpgroup")
    # a warpgroup issues one instruction per 64 rows and per instruction_n columns of its
    # tile, each reading its operands: B once per 64-row instruction along M, A once per
    # instruction along N
    group_b = ratio(p.m, WARPGROUP_M)
    group_a = p.warps_n * cdiv(ratio(p.n, p.warps_n), instruction_n(shape, warps, inst[1]))
    if is_array(group, p.warps_m, group_b, group_a):
        b_readers, a_readers = where(group, group_b, p.warps_m), where(group, group_a, p.warps_n)
    else:
        b_readers, a_readers = (group_b, group_a) if group else (p.warps_m, p.warps_n)
    a_bytes = ratio(a_readers * p.m * p.k * bits, 8)
    b_bytes = ratio(b_readers * p.n * p.k * bits, 8)
    return OperandReads(p.path, p.warps_m, p.warps_n, a_readers, b_readers, p.m, p.n, p.k, bits, a_bytes, b_bytes)


def shared_reads(profile, threads):
    """The counting layer's hook (tfx.analysis.counting.Counter, ``operand_reads``): a function
    of an mma node giving its OperandReads, or None where the layout is not reproduced: off a
    GPU, or on a GPU without both a 64-row warpgroup instruction and a warp mma of its own
    rate beside it (``warp_mma`` facts: sm_90, whose two paths Triton's warpsPerTileV2/V3 lay
    out; a Blackwell tcgen05 mma, issued once for the CTA, reads its operands once). A batched
    dot (Triton puts every warp on the batch) keeps the IR's count."""
    if profile.kind != "gpu" or warp_mma_facts(profile) is None:
        return None
    inst = instruction_shape(profile)
    if inst[0] < 64:
        return None
    warps = warps_of(threads)

    def reads(node):
        shape = getattr(node, "per_exec_shape", None)
        batch = getattr(node, "per_exec_batch", 1)
        if shape is None or is_array(batch) or batch != 1:
            return None
        return operand_reads(shape, inst, warps, getattr(node, "mma_bits", 16), getattr(node, "mma_chained", False))
    return reads


def describe_reads(r: OperandReads, shape, shared=(True, True)) -> str:
    """One line: who reads an mma's shared-memory operands (``shared``: A, B in shared memory),
    how often, and the bytes, against each read once (scalar reads)."""
    warp = r.path == "warp"
    who, how = ("warp", "ldmatrix") if warp else ("warpgroup", "wgmma")
    size = r.bits / 8
    parts, terms, once = [], [], 0
    a_by, b_by = ("warp", "warp") if warp else ("instruction", "64-row instruction")

    if shared[0]:
        pad = (f" ({int(shape[0])} rows padded to {int(r.rows)}: the warps on M past them reload them)"
               if int(r.rows) > int(shape[0]) else "")
        parts.append(f"A's {int(r.rows)} x {int(r.k)}{pad} read by {format_counted(r.a_readers, a_by)} side by side along N")
        terms.append(f"{format_plain(r.a_readers)} x {int(r.rows)}")
        once += shape[0] * shape[2] * size
    if shared[1]:
        pad = f" ({int(shape[1])} columns padded to {int(r.cols)})" if int(r.cols) > int(shape[1]) else ""
        parts.append(f"B's {int(r.k)} x {int(r.cols)}{pad} by {format_counted(r.b_readers, b_by)} along M")
        terms.append(f"{format_plain(r.b_readers)} x {int(r.cols)}")
        once += shape[2] * shape[1] * size
    total = float((r.a_bytes if shared[0] else 0) + (r.b_bytes if shared[1] else 0))
    return (f"{int(shape[0])}x{int(shape[1])}x{int(shape[2])}: each {who} reads its own operands from shared memory "
            f"({how}, warps {int(r.warps_m)} x {int(r.warps_n)} over M x N): " + ", ".join(parts) + ": ("
            + " + ".join(terms) + f") x {int(r.k)} x {format_plain(size)} B = {format_exact_bytes(total)} an execution, "
            f"{format_times(total / float(once))} the {format_exact_bytes(float(once))} read once")


class RegisterTranspose(NamedTuple):
    """An 8-bit operand the warpgroup mma cannot read as stored: transposed in registers and
    stored to shared memory one element per lane, its load not pipelined."""

    operand: str          # "A" or "B"
    rows: Any             # extent along K
    cols: Any             # extent along its contiguous axis (N for B, M for A)
    conflict: Any         # lanes of one warp store that hit the same bank
    cycles: Any           # shared-memory cycles of the store per execution
    applies: Any = 1      # 1 where the dot takes the warpgroup mma (arrays: per configuration), else 0


def register_transposes(node, inst, bits, warps) -> list:
    """The operands of mma ``node`` that Triton transposes in registers (see the module
    docstring): only on a warpgroup-mma GPU, for operands narrower than 16 bits that are not
    K-major where they were loaded.

    The tile was loaded with each thread holding one 16-byte vector along its contiguous axis,
    so ``cols x bytes / 16`` lanes (at most 32) lie along that axis, each on another row of the
    K-major destination. Rows of the destination are K x bytes apart, a multiple of 128 bytes
    for every K >= 128 / bytes, so those lanes' one-byte stores fall in the same bank: each
    warp store of 32 elements takes ``conflict`` shared-memory cycles instead of one, and the
    tile's ``rows x cols`` elements take ``rows x cols / 32 x conflict`` cycles."""
    majors = getattr(node, "mma_k_major", None)
    shape = getattr(node, "per_exec_shape", None)
    if majors is None or shape is None or inst[0] < 64 or not bits or bits >= 16:
        return []
    applies = path_share(plan(shape, inst, warps, bits, getattr(node, "mma_chained", False)).path, "warpgroup")
    if applies is None:
        return []          # the warp mma reads the operand as stored: ``byte_gathers``
    mm, nn, kk = shape
    out = []
    ebytes = max(bits // 8, 1)
    for name, k_major, cols in (("A", majors[0], mm), ("B", majors[1], nn)):
        if k_major is None or k_major:
            continue
        lanes = emin(emax(cdiv(cols * ebytes, VECTOR_BYTES), 1), LANES)
        cycles = kk * cols / LANES * lanes * applies
        out.append(RegisterTranspose(name, kk, cols, lanes, cycles, applies))
    return out


class ByteGather(NamedTuple):
    """An 8-bit operand a warp mma reads from shared memory as stored (not K-major): each
    thread gathers its fragment a byte at a time (``LDS.U8``), one shared-memory wavefront
    per warp instruction."""

    operand: str          # "A" or "B"
    per_warp: Any         # its columns (N for B, M for A) in one warp's tile
    k: Any                # extent along K
    loads: Any            # LDS.U8 per warp: per_warp x k / 32 lanes
    wavefronts: Any       # per CTA: warps x loads (arrays: 0 where the dot takes the warpgroup mma)


def byte_gathers(node, inst, bits, warps) -> list:
    """The operands of mma ``node`` a warp mma gathers byte by byte (Triton 3.6 on sm_90, the
    warp mma's fp8 operand stored N-major: calibration/h200/measured/fp8_mma,
    fp8_kn_64x32x128_w2_s2.sass.txt: 128 LDS.U8 and 64 IMAD pairing the bytes per warp and trip
    for B's 32 columns x 128 of K; no ldmatrix, which moves 16-bit rows). Each warp reads the
    bytes of its own tile's columns over K, 32 a warp instruction, each instruction one
    wavefront: Triton's swizzle of that shared buffer (vec 8, perPhase 4, maxPhase 4 in the
    ttgir) puts the 8 distinct words of one LDS.U8 in 8 banks. Empty off the warp path."""
    majors = getattr(node, "mma_k_major", None)
    shape = getattr(node, "per_exec_shape", None)
    if majors is None or shape is None or inst[0] < 64 or bits != 8:
        return []
    p = plan(shape, inst, warps, bits, getattr(node, "mma_chained", False))
    on_warp = path_share(p.path, "warp")
    if on_warp is None:
        return []
    k = cdiv(shape[2], 16) * 16
    out = []
    for name, k_major, per_warp in (("A", majors[0], ratio(p.m, p.warps_m)), ("B", majors[1], ratio(p.n, p.warps_n))):
        if k_major is None or k_major:
            continue
        loads = ratio(per_warp * k, LANES)
        out.append(ByteGather(name, per_warp, k, loads, loads * warps * on_warp))
    return out


def describe_gather(g: ByteGather, warps, resident, clock_ghz) -> str:
    return (f"operand {g.operand} (8-bit, not K-major) is gathered a byte at a time by each warp: "
            f"{int(g.per_warp)} x {int(g.k)} / 32 = {format_whole(g.loads)} LDS.U8 per warp, one shared-memory "
            f"wavefront each; {format_counted(int(resident), 'CTA')} x {int(warps)} warps x {format_whole(g.loads)} = "
            f"{format_whole(g.loads * warps * resident)} cycles of the SM's shared-memory pipe a round = "
            f"{format_time_ns(float(g.loads * warps * resident) / clock_ghz)}, in series with the warps' mma")


def describe_transpose(t: RegisterTranspose, clock_ghz) -> str:
    return (f"operand {t.operand} ({int(t.rows)} x {int(t.cols)}, 8-bit, not K-major) is transposed in "
            f"registers: {int(t.conflict)} lanes of each warp store share a bank, so "
            f"{int(t.rows)} x {int(t.cols)} / 32 stores x {int(t.conflict)} cycles = {format_whole(t.cycles)} "
            f"shared-memory cycles = {format_time_ns(float(t.cycles) / clock_ghz)} per trip; its load is not "
            f"pipelined (a trip waits for it)")



# ------------------------------------------------------------------ serialized warpgroup mma
SERIAL_WGMMA_N = 256                    # the CTA's N at which ptxas serializes the fp8 dot
SERIAL_WGMMA_WARPS = 8                  # ... on two warpgroups


class SerialWgmmaFacts(NamedTuple):
    trip_overhead_ns: float   # a serialized CTA trip's fixed part (stage wait, barrier, issue, last drain)
    latency_ns: float         # each serialized wgmma's latency beyond its work at the SM's peak rate


def serial_wgmma_facts(m) -> SerialWgmmaFacts | None:
    """The profile's serialized-wgmma facts in ns, or None where it states none."""
    over = m.profile.get("pipeline.wgmma_serial_trip_overhead", None)
    lat = m.profile.get("pipeline.wgmma_serial_latency", None)
    if over is None or lat is None or m.kind != "gpu":
        return None
    if not m.codegen.serializes_fp8_wgmma:
        return None                      # hand-scheduled wgmma (tfx.analysis.codegen)
    return SerialWgmmaFacts(over / m.clock_ghz, lat / m.clock_ghz)


class SerialWgmma(NamedTuple):
    """A warpgroup mma whose instructions ptxas issues one at a time, each waited to completion."""

    instructions: Any     # wgmma instructions one warpgroup issues per execution
    warpgroups: Any       # the CTA's warpgroups (they issue side by side)
    applies: Any = 1      # 1 where serialized (arrays: per configuration), else 0


def serialized_wgmma(node, inst, bits, warps) -> SerialWgmma | None:
    """The serialized warpgroup mma of ``node``, or None. ptxas (Triton 3.6.0's, CUDA 12.8)
    reports "(C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due
    to non wgmma instructions defining accumulator registers of a wgmma between start and end of
    the pipeline stage" for the fp8 dot of two K-major operands (gemm_fp8.tile: A and B^T) at
    N = 256 on 8 warps, and its SASS waits for every QGMMA before the next
    (``WARPGROUP.DEPBAR.LE gsb0, 0x0`` after each), where Triton's ttgir pipelines the dot
    (warp_group_dot_wait pendings = 1). Compiled for sm_90 on the CPU
    (calibration/h200/measured/fp8_serial_trip/README.md): serialized at 64x256, 128x256 and
    256x256 on 8 warps, BK 32-128, 2-4 stages; pipelined at N = 256 on 4 warps, at N <= 128 on 8
    warps, for bf16 at 128x256 and 256x256 on 8 warps and for fp8 with B stored [K, N]
    (transposed in registers: its QGMMAs wait once a trip, not each). A warpgroup issues
    (its rows / 64) x (K / instruction depth) x ceil(its columns / 256) instructions."""
    majors = getattr(node, "mma_k_major", None)
    shape = getattr(node, "per_exec_shape", None)
    if majors is None or shape is None or inst[0] < 64 or bits != 8 or not (majors[0] and majors[1]):
        return None
    if getattr(node, "mma_chained", False):
        return None
    p = plan(shape, inst, warps, bits)
    on = (p.path == "warpgroup") & (warps == SERIAL_WGMMA_WARPS) & (p.n == SERIAL_WGMMA_N)
    if is_array(on):
        import numpy as np
        on = np.asarray(on).astype(float)
        if not on.any():
            return None
    elif not on:
        return None
    else:
        on = 1
    groups = ratio(warps, 4)
    rows = ratio(p.m, ratio(p.warps_m, 4))           # a warpgroup spans 4 warps along M
    cols = ratio(p.n, p.warps_n)
    n_inst = ratio(rows, 64) * ratio(p.k, p.depth) * cdiv(cols, SERIAL_WGMMA_N)
    return SerialWgmma(n_inst, groups, on)


def serial_trip_ns(s: SerialWgmma, peak_ns, resident, facts: SerialWgmmaFacts) -> Any:
    """A round's floor where ``resident`` CTAs each run a serialized trip: each CTA waits out
    its trip's fixed part and, per instruction, its latency beyond the work, while the work of
    all resident CTAs (``peak_ns`` each: the trip's flops at the SM's peak tensor rate) shares
    the tensor cores: overhead + resident x peak_ns + instructions x latency (0 where not
    serialized). Measured (calibration/h200/measured/fp8_serial_trip, one CTA, L2-resident):
    128x256 at BK 32/64/128 and 64x256 at BK 64/128 on 8 warps, 392-873 ns a trip, within 9%."""
    return s.applies * (facts.trip_overhead_ns + resident * peak_ns + s.instructions * facts.latency_ns)


def describe_serial(s: SerialWgmma, shape, peak_rate, resident, facts: SerialWgmmaFacts) -> str:
    flops = 2 * shape[0] * shape[1] * shape[2]
    peak_ns = flops / peak_rate
    total = float(serial_trip_ns(s, peak_ns, resident, facts))
    return (f"{int(shape[0])}x{int(shape[1])}x{int(shape[2])} fp8 on {int(s.warpgroups * 4)} warps: ptxas serializes "
            f"the warpgroup mma (C7515: each of a warpgroup's {format_plain(s.instructions)} wgmma a trip waits for the "
            f"previous one), so a round of {format_counted(resident, 'CTA')} takes at least {format_time_ns(facts.trip_overhead_ns)} + "
            f"{format_plain(resident)} x {format_whole(flops)} flop / {formula_flop_rate(peak_rate)} (the SM's peak) + "
            f"{format_plain(s.instructions)} x {format_time_ns(facts.latency_ns)} of wgmma latency = {format_time_ns(total)}")


# ------------------------------------------------------------------ the warp mma's own rate
class WarpMmaFacts(NamedTuple):
    """The profile's ``warp_mma`` facts (cycles of one SM sub-partition)."""

    subpartitions: int
    mma_cycles: Any          # tensor core cycles per mma.sync m16n8k16 f16/bf16
    issue_cycles: Any        # warp-scheduler issue cycles an mma holds beside conversions
    convert_cycles: Any      # cycles per warp instruction converting an fp8 pair to f16 (None: unstated)
    clock_fraction: Any      # SM clock under sustained warp mma / clock.core
    promotes_fp8: bool = False   # fp8 warp-mma operands become f16 (Triton on sm_90)
    loop_alu: Any = None     # ALU instructions a warp issues a k-loop trip beside its copies (None: unstated)
    copy_alu: Any = None     # ALU instructions a warp issues per 16-byte copy a thread makes a trip
    alu_cycles: Any = None   # cycles one sub-partition's ALU takes per warp instruction


def warp_mma_facts(profile) -> WarpMmaFacts | None:
    """The facts of a GPU whose warp mma (mma.sync) has its own rate beside a warpgroup mma,
    or None (a fact missing: every mma keeps the tensor rate). The fp8 promotion needs
    ``promotes_fp8`` and ``fp8_to_f16_cycles`` as well."""
    vals = [profile.get(f"warp_mma.{k}", None) for k in
            ("subpartitions", "f16_mma_cycles", "mma_issue_cycles", "clock_fraction")]
    if any(v is None for v in vals):
        return None
    convert = profile.get("warp_mma.fp8_to_f16_cycles", None)
    promotes = bool(profile.get("warp_mma.promotes_fp8", 0)) and convert is not None
    loop = [profile.get(f"warp_mma.{k}", None) for k in ("loop_alu_instructions", "copy_alu_instructions",
                                                         "alu_cycles")]
    if any(v is None for v in loop):
        loop = [None, None, None]
    return WarpMmaFacts(int(vals[0]), vals[1], vals[2], convert, vals[3], promotes, *loop)


class WarpMma(NamedTuple):
    """One execution of a dot that takes the warp mma (``plan(...).path == "warp"``) on a GPU
    whose warp mma has its own measured rate: each warp runs mma.sync m16n8k16 f16/bf16 on its
    own sub-partition's tensor core. An fp8 dot's operands are first converted to f16 in each
    warp's registers (Triton on sm_90: ``decomposeMixedModeDotOp``; cvt.rn.f16x2.e4m3x2, a pair
    per instruction); a 16-bit dot converts nothing."""

    warp_m: Any              # rows of one warp's tile
    warp_n: Any              # columns of one warp's tile
    k: Any                   # K padded to the f16 instruction's 16
    mmas: Any                # mma.sync per warp
    converts: Any            # conversion instructions per warp (each thread converts a pair); 0 for 16-bit
    tensor_cycles: Any       # mmas x f16_mma_cycles
    issue_cycles: Any        # mmas x mma_issue_cycles + converts x fp8_to_f16_cycles + loop_cycles
    cycles: Any              # the longer: one warp's time on its sub-partition
    warp_ns: Any             # cycles at the SM clock under warp mma
    applies: Any = True      # per configuration of a sweep: the dot takes the warp mma
    promoted: bool = False   # fp8 operands converted to f16
    copies: Any = 0          # 16-byte copies a thread makes a trip of the operands its loop loads
    loop_cycles: Any = 0     # (loop_alu + copy_alu x copies) x alu_cycles: the loop's own ALU work a warp


def trip_copies_per_thread(shape, bits, loaded, threads):
    """16-byte copies one thread makes a trip of the operands its k-loop loads itself (``loaded``:
    (A, B), tfx.analysis.mma_path.trip_loaded): each operand's tile bytes in 16-byte pieces over
    the CTA's threads, rounded up (a warp issues a whole copy instruction: 16x32x128 fp8 on 8 warps
    copies its 2,048-byte A in 1 and its 4,096-byte B in 1 a thread, Nsight's 2.03 LDGSTS a warp a
    trip, calibration/h200/measured/l2_groupm_s26)."""
    m, n, k = shape
    out = 0
    for on, elems in zip(loaded, (m * k, k * n)):
        if on:
            out = out + cdiv(elems * bits, 128 * threads)     # 16-byte pieces: bits / 8 / 16
    return out


def warp_mma(p: MmaPlan, shape, bits, facts: WarpMmaFacts | None, clock_ghz,
             loaded=(False, False)) -> WarpMma | None:
    """What a dot on the warp path costs one warp, or None where it keeps the tensor rate
    (warpgroup mma, no facts, operands other than 16-bit or promoted fp8). On a sweep
    (arrays) ``applies`` says which configurations take the warp mma; the other fields hold
    for those.

    A warp holds ``M/warps_m`` rows and ``N/warps_n`` columns; K pads to 16. Per 16-deep step
    it runs (rows/16)(cols/8) mma.sync; an fp8 dot also converts rows x 16 A values and
    cols x 16 B values, two per instruction over 32 threads: rows x K / 64 + cols x K / 64
    conversions. Its sub-partition is busy the longer of its tensor core (``f16_mma_cycles``
    per mma) and its warp scheduler's issue (``mma_issue_cycles`` per mma,
    ``fp8_to_f16_cycles`` per conversion: calibration/h200/measured/fp8_mma, within 2% of
    Triton's k-step for tiles of 32 x 16 and up). A 16-bit dot's issue (3.93 of every 6
    cycles on the H200) never binds: its tensor core does, at the SM clock under sustained
    warp mma (``clock_fraction``)."""
    if facts is None or not bits:
        return None
    promoted = bits == 8 and facts.promotes_fp8
    if bits != 16 and not promoted:
        return None
    sweep = is_array(p.path, p.m, p.n, p.warps_m, p.warps_n, *shape)
    if sweep:
        import numpy as np
        applies = np.asarray(p.path) == "warp"
        if not applies.any():
            return None
        num = float
        wm = np.asarray(p.m, dtype=np.float64) / p.warps_m
        wn = np.asarray(p.n, dtype=np.float64) / p.warps_n
        k = np.asarray(cdiv(shape[2], 16) * 16, dtype=np.float64)
        mmas = np.ceil(wm / WARP_MMA_M) * np.ceil(wn / WARP_MMA_N) * (k / 16)
    else:
        if p.path != "warp":
            return None
        applies, num = True, decimal_value
        wm, wn = p.m // p.warps_m, p.n // p.warps_n
        k = cdiv(shape[2], 16) * 16
        mmas = cdiv(wm, WARP_MMA_M) * cdiv(wn, WARP_MMA_N) * (k // 16)
    converts = (ratio(wm * k, 64) + ratio(wn * k, 64)) if promoted else 0 * mmas
    tensor = mmas * num(facts.mma_cycles)
    issue = mmas * num(facts.issue_cycles)
    if promoted:
        issue = issue + converts * num(facts.convert_cycles)
    copies, loop = 0, 0
    if promoted and facts.loop_alu is not None and (loaded[0] or loaded[1]):
        # the k-loop's own ALU work, on the pipe the conversions hold: its counters and each copy's
        # address step and mask (calibration/h200/measured/l2_groupm_s26)
        copies = trip_copies_per_thread(shape, bits, loaded, 32 * p.warps_m * p.warps_n)
        loop = (num(facts.loop_alu) + num(facts.copy_alu) * copies) * num(facts.alu_cycles)
        issue = issue + loop
    cycles = emax(tensor, issue)
    warp_ns = ratio(cycles, num(clock_ghz) * num(facts.clock_fraction))
    return WarpMma(wm, wn, k, mmas, converts, tensor, issue, cycles, warp_ns, applies, promoted, copies, loop)


def busiest_subpartition_warps(warps, resident, subpartitions):
    """Warps on the busiest sub-partition of an SM holding ``resident`` CTAs of ``warps``:
    ceil(resident x warps / subpartitions) (measured: three 2-warp CTAs reach 0.75 of the SM's
    warp-mma rate, calibration/h200/measured/fp8_mma)."""
    return cdiv(resident * warps, subpartitions)


def describe_warp_mma(c: WarpMma, warps, resident, facts: WarpMmaFacts, clock_ghz, dtype="f16") -> str:
    """One line: one warp's mma.sync work on its sub-partition and the busiest sub-partition's
    round (scalar costs)."""
    busiest = busiest_subpartition_warps(warps, resident, facts.subpartitions)
    at = (f" = {formula_cycles(c.cycles)} cycles / ({formula_frequency(clock_ghz)} x {format_plain(facts.clock_fraction)}) "
          f"= {format_time_ns(float(c.warp_ns))}; {format_counted(int(resident), 'CTA')} x {format_counted(int(warps), 'warp')} on {facts.subpartitions} "
          f"sub-partitions: the busiest holds {int(busiest)}, {format_time_ns(float(c.warp_ns * busiest))} a round")
    loop = ""
    if float(c.loop_cycles) > 0:
        loop = (f" + the loop's ALU work ({format_plain(facts.loop_alu)} + {format_plain(facts.copy_alu)} x "
                f"{format_whole(c.copies)} copies a thread) x {format_plain(facts.alu_cycles)}")
    if c.promoted:
        return (f"fp8 operands promoted to f16 (Triton's warp mma on this GPU): each warp's "
                f"{int(c.warp_m)} x {int(c.warp_n)} tile over K = {int(c.k)} runs {int(c.mmas)} mma.sync m16n8k16 f16 "
                f"and {format_whole(c.converts)} fp8 -> f16 pair conversions; its sub-partition needs "
                f"max({int(c.mmas)} x {format_plain(facts.mma_cycles)} = {format_whole(c.tensor_cycles)} tensor, "
                f"{int(c.mmas)} x {format_plain(facts.issue_cycles)} + {format_whole(c.converts)} x "
                f"{format_plain(facts.convert_cycles)}{loop} = {formula_cycles(c.issue_cycles)} issue)" + at)
    return (f"each warp's {int(c.warp_m)} x {int(c.warp_n)} tile over K = {int(c.k)} runs {int(c.mmas)} "
            f"mma.sync m16n8k16 {dtype} on its own sub-partition's tensor core: {int(c.mmas)} x "
            f"{format_plain(facts.mma_cycles)} cycles" + at)
