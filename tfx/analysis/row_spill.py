"""A loop-free (row) body whose compiled frame reaches its registers: its local traffic is a
multiple of the frame, not every op's spilled share.

Where ptxas spills at least as many words as it allocates registers (Triton's row kernels at
32-72 registers holding 256-1024 row elements a thread), the model priced every op's
register operands through local memory at the spilled share ``f`` of the thread's register
tiles (tfx.analysis.performance.spill_fraction). That share is about 1 for every such
configuration, so all of them moved the same bytes whatever they were compiled to
(softmax 8192x16384: seven configurations predicted 1,832.5 us, measured 1,697-2,062, and
the 64-register (1, 1) at 1,768 us against 864). What the compiled code moves is what its
LDL and STL move, and that follows the frame the compiler laid out: the SASS of the 52
issue-15 row kernels whose spilled words reach their registers (calibration/h200/measured/
row_spill_sass: Triton 3.6.0 for sm_90, the measured binaries' registers and frames; the
kernels are loop-free, so static counts are what a thread executes) loads and stores
1.79-5.44 times the frame, median 4.355 (the mean of the 26th and 27th of the 52 sorted
ratios, 4.2841 and 4.4266): a spilled word is stored and loaded about twice, its slot
reused by the next phase's values (the row max and the row sum split the body into
phases whose live tiles replace each other). The per-op share stays where it is smaller.

Below the registers (a frame under the registers allocated, 128-255 registers) each value
is stored once and loaded once (tfx.analysis.spill_traffic.stored_once_share, 2x the frame;
the SASS median is 2.08): that rule is unchanged.

A streamed spill where the compiler kept many registers (``STREAMING_REGISTERS``): the four
kernels of the corpus whose frame reaches registers it allocated at 168-255 (rmsnorm (1, 1) at
N = 16384, softmax (8, 1) at 2048, (4, 1) at 4096, (16, 1) at 1024) move 1.79, 3.48, 3.76 and
3.18 x the frame, not the 3.2-5.4 of the 32-72-register ones. Their SASS stores only values
that live across a reduction (the loaded row, its f32 copy, their addresses: rmsnorm (1, 1)
stores 660 words and loads 648 against its 732-word frame) and loads each back once after it;
the 32-72-register code also spills the products and unpacked halves inside a phase (FMUL,
PRMT results) and stores reloaded words again. A tile that crosses ``k`` reductions is stored
once before each and loaded once after it: ``2 x max(1, k)`` x the frame, rmsnorm's one row
sum 2 (SASS 1.79), softmax's row max and row sum 4 (SASS 3.18-3.76). The corpus has no kernel
whose frame reaches its registers between 73 and 167 registers, so any boundary there splits
it alike; 128 is half of the 255 a thread can hold.

Where the compiled code's own local traffic is given (the ``local_bytes`` resource: LDL + STL
bytes a thread of its SASS), it replaces these estimates (``compiled_share``): the ratio to the
frame is 2.3-5.4 across the corpus and sets the spilled rows' order, which the frame alone
does not give (docs/analysis.md section 8 (p)).

Where the compiled code's traffic is not given (the campaigns record ``regs`` and ``spills``
only), a frame that reaches fewer than ``STREAMING_REGISTERS`` registers takes an estimate of
it from the body (``estimated_local_bytes``, docs/analysis.md section 8 (q)): bytes a row element
a thread, not a multiple of the frame. The SASS of the row kernels moves about the same bytes an
element whatever the elements a thread (rmsnorm at 32 registers: 38.5-44.0 B at 4-16 rows a
thread over 256-1024 elements, whose frames hold 2.07-3.05 words an element), and what changes
them is the rows a thread holds: with one row the statistics' products stream into the next
op; with ``R`` rows the compiler emits the normalization row by row as each row's statistic
arrives, reloading the row's f32 input, storing its product and reloading it for the next op
(3 x 4 B an element: ``PRODUCT_BYTES``) for the ``R - 1`` rows whose product is not consumed at
once, and a vector broadcast over the rows (rmsnorm's weight) is reloaded for each further row
(4 B an element: ``VECTOR_BYTES``). Where the registers beyond the 32 the spilled code runs in
(``RUN_REGISTERS``: the fewest the corpus's spilled kernels allocate) hold a row's ``c``
elements a thread, the product needs no local memory: the share of it that goes there is
``max(0, 1 - (regs - 32) / c)``. One row's bytes ``ONE_ROW_BYTES`` are the SASS's: 26.625 B an
element at 48 registers or fewer (rmsnorm (1, 2) at N = 32768, the one 32-register one-row
kernel: 6,944 + 6,688 B over 512 elements), 19.754 at 56-72 (the median of the six one-row
kernels there, (19.711 + 19.797) / 2). Against the 78 kernels of row_spill_sass (both files)
whose frame reaches fewer than 128 registers: median |error| 4.4%, worst 35.9% (the frame's
multiple: 12.7%, 94.8%).

What this does not see: the ratio moves with the elements a thread holds (3.3-3.5 at 256,
3.4-4.9 at 512, 4.9-5.4 at 1024 for softmax; rmsnorm 2.2-4.2, 3.2-4.9, 3.6-4.9), which
the compiler's schedule sets and no count of the configuration gives; rows priced with
the median scatter by that much (docs/analysis.md section 8, *spilled rows, the frame's
traffic*).
"""

from __future__ import annotations

from typing import Any

from tfx.analysis.numbers import emax, emin, if_else, is_array, where
from tfx.hw.units import format_exact_bytes, format_percent
from tfx.hw.units import format_plain, format_whole, formula_share
from tfx.analysis.spill_traffic import WORD, frame_under_registers

# LDL + STL bytes over the frame, median of row_spill_sass's 52 kernels whose frame reaches the
# registers. It applies only to the 48 under STREAMING_REGISTERS (the 4 at 168-255 take 2 x
# reductions); their own median is 4.427 (the 24th and 25th of 48, 4.4266 and 4.4281), 1.7% above,
# far inside the ratio's scatter (1.79-5.44). Tried (bench/accuracy.py --measured-only --split all,
# runs 1-8): 4.355 -> 4.427 moves rmsnorm 7.1% -> 7.9% median |error| (regret 19.7% either way) and
# softmax 10.7% -> 10.4% (Spearman 0.69 either way): rmsnorm worse beyond noise, so the 52-kernel
# figure stands.
FRAME_TRAFFIC = 4.355
STREAMING_REGISTERS = 128       # from here on a frame reaching the registers is a streamed spill (docstring)


def frame_traffic(regs, reductions=0) -> Any:
    """LDL + STL bytes over the frame where it reaches the registers: ``2 x max(1,
    reductions)`` (each spilled tile stored once before each reduction it crosses and loaded
    once after it) at ``STREAMING_REGISTERS`` or more, else the corpus median FRAME_TRAFFIC."""
    streamed = 2.0 * max(int(reductions), 1)
    if is_array(regs):
        return where(regs >= STREAMING_REGISTERS, streamed, FRAME_TRAFFIC)
    return streamed if regs >= STREAMING_REGISTERS else FRAME_TRAFFIC


# Estimated local bytes of a spilled row body (docstring; docs/analysis.md section 8 (q)).
RUN_REGISTERS = 32              # the fewest registers the corpus's spilled row kernels allocate
LOW_CLASS_REGISTERS = 48        # the top of the corpus's low register class (none at 49-55)
ONE_ROW_BYTES_LOW = 26.625      # SASS: rmsnorm (1, 2), N = 32768, 32 regs: (6,944 + 6,688) / 512
ONE_ROW_BYTES_MID = 19.754      # SASS median of the six one-row kernels at 56-72 registers
PRODUCT_BYTES = 12.0            # a further row's f32 input reloaded, its product stored and reloaded
VECTOR_BYTES = 4.0              # a row vector's f32 value reloaded for a further row
WARP_ROW_ELEMENTS = 256         # a warp's span of a row: 32 lanes x 8 two-byte elements (16 B loads)


def rows_per_thread(rows, row_length, warps) -> Any:
    """The rows of a CTA's [rows, row_length] tile one thread holds: Triton's blocked layout
    puts 32 lanes x 8 elements (a 16 B vector) along the row and its warps along the row as
    far as the row spans them (``row_length / 256``), the rest along the rows."""
    along = emin(emax(row_length / WARP_ROW_ELEMENTS, 1), warps)
    return emax(rows / (warps / along), 1)


def estimated_local_bytes(elements_per_thread, rows, regs, per_row, vectors) -> Any:
    """LDL + STL bytes a thread of a spilled row body whose frame reaches its registers
    (module docstring): ``elements x (one row's bytes + (12 x per_row + 4 x vectors) x (1 -
    1 / rows) x the product's spilled share)``. ``rows``: the rows a thread holds;
    ``per_row``: the reduce results broadcast back over their rows; ``vectors``: the other
    broadcasts (a row vector over the rows)."""
    one = if_else(regs <= LOW_CLASS_REGISTERS, ONE_ROW_BYTES_LOW, ONE_ROW_BYTES_MID)
    further = ((PRODUCT_BYTES * per_row + VECTOR_BYTES * vectors) * (1 - 1 / rows)
               * product_share(elements_per_thread, rows, regs))
    return elements_per_thread * (one + further)


def product_share(elements_per_thread, rows, regs) -> Any:
    """The share of a further row's product that goes to local memory: none where the registers
    beyond ``RUN_REGISTERS`` hold the row's elements a thread, ``1 - (regs - 32) / c`` where
    they hold part of them."""
    per_row_elements = elements_per_thread / rows
    return emax(1 - emax(regs - RUN_REGISTERS, 0) / emax(per_row_elements, 1e-30), 0)


def estimate_applies(spill_bytes_per_thread, regs) -> Any:
    """Whether the estimate stands in for the frame's multiple: the frame reaches the registers
    and they are fewer than ``STREAMING_REGISTERS``."""
    reach = applies(spill_bytes_per_thread, regs)
    return reach & (regs < STREAMING_REGISTERS) if is_array(reach, regs) else bool(reach) and regs < STREAMING_REGISTERS


def body_facts(ops) -> tuple | None:
    """(tile elements, rows, per-row broadcasts, vector broadcasts) of a row body's op nodes
    (tfx.analysis.counting ScopeNodes, program order), or None without a reduce. The tile is the
    widest reduce's operand (its vector flops, one an element), its rows the reduce's f32
    results (its register writes / 4 B); a broadcast whose source comes from a reduce is
    per-row, any other a vector broadcast."""
    made = {c.op.result: c.op for c in ops if c.op.result}
    from_reduce: dict = {}

    def derived(name) -> bool:
        if name in from_reduce:
            return from_reduce[name]
        op = made.get(name)
        from_reduce[name] = False
        got = op is not None and (op.opcode == "reduce" or any(
            derived(o.name) for o in op.operands if hasattr(o, "name") and isinstance(o.name, str)
            and o.name.startswith("%")))
        from_reduce[name] = got
        return got

    reduces = [c for c in ops if c.op.opcode == "reduce"]
    if not reduces:
        return None
    best = None
    for c in reduces:
        flops = sum(v for k, v in c.per_exec.items() if k[0] == "flops")
        writes = sum(v for k, v in c.per_exec.items() if k[0] == "traffic" and k[1] == "rmem" and k[2] == "write")
        if best is None or float(flops if not is_array(flops) else flops.max()) > float(
                best[0] if not is_array(best[0]) else best[0].max()):
            best = (flops, writes / WORD)
    per_row = vectors = 0
    for c in ops:
        if c.op.opcode == "broadcast" and c.op.operands:
            src = getattr(c.op.operands[0], "name", None)
            if isinstance(src, str) and derived(src):
                per_row += 1
            else:
                vectors += 1
    return best[0], best[1], per_row, vectors


def describe_estimated(local_bytes_per_thread, elements_per_thread, rows, per_row, vectors, regs, threads,
                       share) -> str:
    """The clause of the spill line where the body's estimate sets the traffic."""
    e, r, b = float(elements_per_thread), float(rows), float(local_bytes_per_thread)
    one = ONE_ROW_BYTES_LOW if float(regs) <= LOW_CLASS_REGISTERS else ONE_ROW_BYTES_MID
    part = float(product_share(e, r, float(regs)))
    if r <= 1:
        how = f"{format_whole(e)} row elements a thread of one row x {format_plain(one)} B an element (its products stream into the next op)"
    else:
        how = (f"{format_whole(e)} row elements a thread of {format_whole(r)} rows x ({format_plain(one)} B an element + ({format_plain(PRODUCT_BYTES)} x "
               f"{per_row} per-row product(s) + {format_plain(VECTOR_BYTES)} x {vectors} row vector(s)) x (1 - 1/{format_whole(r)})"
               + (f" x {formula_share(part)} of a row's product past the registers" if part < 1 else "") + " for the further rows)")
    return (f" (the frame reaches the {format_whole(regs)} registers: the local loads and stores estimated from the body, "
            f"{how} = {format_exact_bytes(b)} a thread x {threads} threads = {format_exact_bytes(b * threads)} a CTA, "
            f"{format_percent(share)} of the CTA's register bytes)")


def applies(spill_bytes_per_thread, regs) -> Any:
    """Whether the compiled frame reaches the registers allocated (``spilled words >= regs``)."""
    return ~frame_under_registers(spill_bytes_per_thread, regs) if is_array(spill_bytes_per_thread, regs) else (
        not frame_under_registers(spill_bytes_per_thread, regs))


def frame_share(share, spill_bytes_per_thread, threads, register_bytes, regs, reductions=0):
    """The share of a CTA's register bytes (``register_bytes``: what its ops read and write
    in registers) that moves through local memory: where the frame reaches the registers,
    at most ``frame_traffic(regs, reductions) x spilled bytes x threads`` of them; elsewhere
    ``share``. ``reductions``: the reduce ops of the row body."""
    ratio = frame_traffic(regs, reductions)
    framed = emin(share, ratio * spill_bytes_per_thread * threads / emax(register_bytes, 1e-30))
    full = applies(spill_bytes_per_thread, regs)
    if is_array(full, framed, share):
        return where(full, framed, share)
    return framed if full else share


def compiled_share(local_bytes_per_thread, threads, register_bytes) -> Any:
    """The share of a CTA's register bytes that moves through local memory where the compiled
    code's own local traffic is given: ``local_bytes_per_thread`` (the LDL + STL bytes of its
    SASS, each instruction by its width) x ``threads`` over the CTA's ``register_bytes``. It
    replaces both the frame's multiple and the stored-once rule, at any registers: those
    estimate what this counts (docs/analysis.md section 8 (p))."""
    return local_bytes_per_thread * threads / emax(register_bytes, 1e-30)


def describe_compiled(local_bytes_per_thread, threads, share) -> str:
    """The clause of the spill line where the compiled code's local traffic is given."""
    b = float(local_bytes_per_thread)
    return (f" (the compiled code's local loads and stores move {format_exact_bytes(b)} a thread x {threads} threads = "
            f"{format_exact_bytes(b * threads)} a CTA, {format_percent(share)} of the CTA's register bytes)")


def describe(spill_bytes_per_thread, threads, regs, share, reductions=0) -> str:
    """The clause of the spill line where the frame sets the traffic."""
    words = float(spill_bytes_per_thread) / WORD
    ratio = frame_traffic(float(regs), reductions)
    k = int(reductions)
    how = (f", {STREAMING_REGISTERS} or more: a streamed spill, " + (
           f"each spilled tile stored once before each of the body's {k} reduction(s) and loaded once after: "
           f"the loads and stores move 2 x {k} = {format_plain(ratio)} x the frame" if k > 0 else
           f"no reduction: stored once, loaded once = {format_plain(ratio)} x the frame")
           if float(regs) >= STREAMING_REGISTERS else f": the compiled code's loads and stores move {format_plain(ratio)} x the frame")
    return (f" (the {format_whole(words)} spilled words reach the {format_whole(regs)} registers{how}, {format_plain(ratio)} x "
            f"{format_exact_bytes(float(spill_bytes_per_thread))} x {threads} threads = "
            f"{format_exact_bytes(ratio * float(spill_bytes_per_thread) * threads)} a CTA, "
            f"{format_percent(share)} of the CTA's register bytes)")
