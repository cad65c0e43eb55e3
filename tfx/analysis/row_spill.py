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

What this does not see: the ratio moves with the elements a thread holds (3.3-3.5 at 256,
3.4-4.9 at 512, 4.9-5.4 at 1024 for softmax; rmsnorm 2.2-4.2, 3.2-4.9, 3.6-4.9), which
the compiler's schedule sets and no count of the configuration gives; rows priced with
the median scatter by that much (docs/analysis.md section 8, *spilled rows, the frame's
traffic*).
"""

from __future__ import annotations

from typing import Any

from tfx.analysis.numbers import emax, emin, is_array, where
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
    return (f" (the compiled code's local loads and stores move {b:,.0f} B a thread x {threads} threads = "
            f"{b * threads:,.0f} B a CTA, {float(share) * 100:.1f}% of the CTA's register bytes)")


def describe(spill_bytes_per_thread, threads, regs, share, reductions=0) -> str:
    """The clause of the spill line where the frame sets the traffic."""
    words = float(spill_bytes_per_thread) / WORD
    ratio = frame_traffic(float(regs), reductions)
    k = int(reductions)
    how = (f", {STREAMING_REGISTERS} or more: a streamed spill, " + (
           f"each spilled tile stored once before each of the body's {k} reduction(s) and loaded once after: "
           f"the loads and stores move 2 x {k} = {ratio:g} x the frame" if k > 0 else
           f"no reduction: stored once, loaded once = {ratio:g} x the frame")
           if float(regs) >= STREAMING_REGISTERS else f": the compiled code's loads and stores move {ratio:g} x the frame")
    return (f" (the {words:,.0f} spilled words reach the {float(regs):.0f} registers{how}, {ratio:g} x "
            f"{float(spill_bytes_per_thread):,.0f} B x {threads} threads = "
            f"{ratio * float(spill_bytes_per_thread) * threads:,.0f} B a CTA, "
            f"{float(share) * 100:.1f}% of the CTA's register bytes)")
