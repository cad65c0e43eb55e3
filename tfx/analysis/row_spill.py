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

FRAME_TRAFFIC = 4.355           # LDL + STL bytes over the frame, median of row_spill_sass's 52 kernels


def applies(spill_bytes_per_thread, regs) -> Any:
    """Whether the compiled frame reaches the registers allocated (``spilled words >= regs``)."""
    return ~frame_under_registers(spill_bytes_per_thread, regs) if is_array(spill_bytes_per_thread, regs) else (
        not frame_under_registers(spill_bytes_per_thread, regs))


def frame_share(share, spill_bytes_per_thread, threads, register_bytes, regs):
    """The share of a CTA's register bytes (``register_bytes``: what its ops read and write
    in registers) that moves through local memory: where the frame reaches the registers,
    at most ``FRAME_TRAFFIC x spilled bytes x threads`` of them; elsewhere ``share``."""
    framed = emin(share, FRAME_TRAFFIC * spill_bytes_per_thread * threads / emax(register_bytes, 1e-30))
    full = applies(spill_bytes_per_thread, regs)
    if is_array(full, framed, share):
        return where(full, framed, share)
    return framed if full else share


def describe(spill_bytes_per_thread, threads, regs, share) -> str:
    """The clause of the spill line where the frame sets the traffic."""
    words = float(spill_bytes_per_thread) / WORD
    return (f" (the {words:,.0f} spilled words reach the {float(regs):.0f} registers: the compiled code's "
            f"loads and stores move {FRAME_TRAFFIC} x the frame, {FRAME_TRAFFIC} x "
            f"{float(spill_bytes_per_thread):,.0f} B x {threads} threads = "
            f"{FRAME_TRAFFIC * float(spill_bytes_per_thread) * threads:,.0f} B a CTA, "
            f"{float(share) * 100:.1f}% of the CTA's register bytes)")
