"""How many bytes a spilling k-loop moves through local memory per trip.

A k-loop whose values do not all fit the thread's registers keeps some of them in local
memory. What that costs depends on how often each spilled word is touched in one trip:

* On the warpgroup mma (wgmma, 4+ warps on sm_90) the accumulator is the asynchronous
  group's operand for the whole trip: a spilled word is reloaded once before the trip's
  mma chain and stored once after it, as every other value that lives across the loop
  (pointers, offsets, the loop's invariants): ``2 x spilled bytes`` per thread and trip.
* On the warp mma (mma.sync m16n8k16: 2-warp CTAs, BM < 64; fp8 converted to f16 in
  registers, tfx.analysis.mma_layout.warp_mma) Triton's lowering runs the trip's K in
  16-deep steps, each step updating every accumulator fragment of the warp's tile
  (MMAv2's loop order: k outermost, then m, then n). The compiler spills first what the
  loop body does not touch (the loop invariants); the accumulator is touched at every
  k-step, so it spills only where the accumulator and one k-step's operand fragments
  (A: warp_m x 16 f16, B: warp_n x 16 f16 per warp) exceed the registers allocated. Each
  such accumulator word is then reloaded and stored at every k-step: ``2 x ksteps`` per
  trip instead of 2.

So a trip moves ``2 x threads x 4 B x (acc_spilled x ksteps + (spilled - acc_spilled))``
with ``acc_spilled = clamp(acc + fragments - regs, 0, spilled)`` words per thread.

Sources: the k-loop body's SASS of Triton's warp-mma kernels
(calibration/h200/measured/fp8_mma/*.sass.txt: per k-step one ldmatrix set, the F2FP
conversions and (warp_m/16)(warp_n/8) HMMA.16816 over the whole accumulator); the
accumulator fragments are 4-byte f32 registers, warp_m x warp_n / 32 per thread.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import emax, emin, is_array, where

WORD = 4                 # bytes of one register (Triton's n_spills counts 4-byte words)
K_STEP = 16              # the warp mma's K per instruction (m16n8k16 f16/bf16; fp8 promoted to f16)
F16_BYTES = 2


class SpillTrip(NamedTuple):
    """Local-memory bytes one CTA moves in one k-loop trip and how they were counted."""

    bytes_per_trip: Any          # per CTA: loads + stores
    spilled_words: Any           # per thread (the compiler's local frame)
    acc_words: Any               # accumulator registers per thread (0: not on the warp mma)
    fragment_words: Any          # one k-step's A and B operand registers per thread
    acc_spilled: Any             # accumulator words per thread in local memory
    ksteps: Any                  # warp-mma k-steps per trip (1 on the warpgroup mma)
    threads: Any
    regs: Any = None             # registers allocated per thread


def kloop_trip(spill_bytes_per_thread, threads, regs, warp=None) -> SpillTrip:
    """The bytes a spilling k-loop trip moves through local memory per CTA.

    ``warp`` is the dot's ``mma_layout.WarpMma`` (None where the dot takes the warpgroup
    mma); ``regs`` the registers allocated per thread (None: unknown, every spilled word
    counts once as on the warpgroup mma)."""
    words = spill_bytes_per_thread / WORD
    once = 2 * threads * spill_bytes_per_thread
    if warp is None or regs is None:
        return SpillTrip(once, words, 0, 0, 0, 1, threads, regs)
    acc = warp.warp_m * warp.warp_n / 32
    fragments = (warp.warp_m + warp.warp_n) * K_STEP * F16_BYTES / 32 / WORD
    ksteps = warp.k / K_STEP
    acc_spilled = emin(emax(acc + fragments - regs, 0), words)
    moved = 2 * threads * WORD * (acc_spilled * ksteps + (words - acc_spilled))
    if is_array(warp.applies):
        moved = where(warp.applies, moved, once)
        acc_spilled = where(warp.applies, acc_spilled, 0)
        ksteps = where(warp.applies, ksteps, 1)
    return SpillTrip(moved, words, acc, fragments, acc_spilled, ksteps, threads, regs)


def describe(t: SpillTrip, rate_bytes_per_ns, level: str) -> str:
    """One line for the predicted-time breakdown."""
    if not t.acc_words:
        return (f"every spilled word reloaded and stored once a trip: 2 x {float(t.spilled_words):,.0f} words x 4 B x "
                f"{t.threads} threads = {float(t.bytes_per_trip):,.0f} B a trip from {level} at "
                f"{float(rate_bytes_per_ns):.1f} GB/s per SM")
    return (f"warp mma: accumulator {float(t.acc_words):,.0f} + one k-step's operands {float(t.fragment_words):,.0f} "
            f"words per thread over {float(t.regs):,.0f} registers: {float(t.acc_spilled):,.0f} accumulator words in local memory, "
            f"touched at each of {float(t.ksteps):.0f} k-steps: 2 x 4 B x {t.threads} threads x "
            f"({float(t.acc_spilled):,.0f} x {float(t.ksteps):.0f} + {float(t.spilled_words - t.acc_spilled):,.0f}) = "
            f"{float(t.bytes_per_trip):,.0f} B a trip from {level} at {float(rate_bytes_per_ns):.1f} GB/s per SM")
