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

* A serial attention trip (QK^T -> softmax -> PV, tfx.analysis.mma_path.trip_waits_for_mma)
  whose warpgroup mmas fit a thread's registers (accumulators + register-fed A <= 255:
  tfx.analysis.wgmma_serial.fits) keeps its whole state in registers: the trip's peak (S, P
  and O in flight) is what the registers were allocated for, and a compile that still
  spills puts in local memory the values live across the loop that the trip does not read
  (the epilogue's and the masked loop's pointers and bounds): no bytes a trip
  (``kloop_trip``'s ``untouched``).
  Source: the SASS of Triton 3.6's flash_fwd_kernel, the issue-15 attention kernel, compiled
  for sm_90a (bench/h200/compile_attn_sass.py; calibration/h200/measured/attn_spill_sass):
  the main (unmasked) loop's LDL + STL bytes a thread a trip against the compiled spilled
  words, at D = 128: causal 128 x 64 on 4 warps (S 64 + O 128 + P 32 = 224 registers) 8 B at
  2, 3 and 4 stages (18, 46, 48 words: one or two LDL of a word, no STL), full 128 x 64 s4 0 B
  (2 words); at 1 stage, where the trip also holds K's and V's LDG registers before their
  STS, 136 B (causal, 42 words) and 72 B (full, 14 words), not priced. Where the mmas do not
  fit (128 x 128 on 4 warps: 320 registers, serialized: tfx.analysis.wgmma_serial) the trip
  moves its spilled words as counted above: 1,024 B a trip at 3 stages (140 words; the count
  2 x 140 x 4 = 1,120 B), 1,848 B at 1 stage (284 words; 2,272 B).

**What a trip's local bytes cost** (``in_series``). Measured on the H200
(calibration/h200/measured/spill_local, bench/h200/measure_spill_local.cu): local loads and
stores whose working set is past L1 reach L2 at 55.8 B/ns per SM with 8 or more warps per SM
(``local.l2_bandwidth`` 7360 GB/s); served from L1 they reach 62-65 B/ns, 12-15% more, so
where the spilled set lives barely moves the price. Beside the mma pipe that traffic hides only
where a warp has many reloads in flight before the mma that needs them. With a run of 16
LDL.64 (8 accumulator fragments) before their mma.sync and the stores after, and as much mma
time as local time (16 mma a fragment), 41-61% of the mma time hid behind the local traffic at
2-4 warps per SM and 33-87% at 8-32 (a little mma beside much local traffic hid 50-100%).
Triton's spilling k-loops reload in runs of 2-4 loads before the HMMA that consumes them (the
median run in 13 of the 14 k-loop bodies of calibration/h200/measured/spill_sass; 27 in one)
and store the result right after; on the
warpgroup mma the spilled accumulator must wait for the asynchronous group before it is stored:
the reloads, the mma and the stores are one dependent chain in each warp, with one or two warps
per scheduler to hide it. So the trip's local time is added to the rest of its round (the
busiest of its mma, shared-memory and copy engines), not overlapped with it.

Sources: the k-loop body's SASS of Triton's warp-mma kernels
(calibration/h200/measured/fp8_mma/*.sass.txt: per k-step one ldmatrix set, the F2FP
conversions and (warp_m/16)(warp_n/8) HMMA.16816 over the whole accumulator); the
accumulator fragments are 4-byte f32 registers, warp_m x warp_n / 32 per thread.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import emax, emin, is_array, where
from tfx.hw.units import format_count, format_counted, format_time_ns, formula_bytes, formula_rate

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
    untouched: Any = 0           # 1 where the spilled words are not the trip's (``untouched``)


def kloop_trip(spill_bytes_per_thread, threads, regs, warp=None, untouched=0) -> SpillTrip:
    """The bytes a spilling k-loop trip moves through local memory per CTA.

    ``warp`` is the dot's ``mma_layout.WarpMma`` (None where the dot takes the warpgroup
    mma); ``regs`` the registers allocated per thread (None: unknown, every spilled word
    counts once as on the warpgroup mma); ``untouched`` 1 where the spilled words are not
    the trip's (a serial attention trip whose warpgroup mmas fit the registers: the module
    docstring), which then moves none."""
    words = spill_bytes_per_thread / WORD
    once = 2 * threads * spill_bytes_per_thread * (1 - untouched)
    if warp is None or regs is None:
        return SpillTrip(once, words, 0, 0, 0, 1, threads, regs, untouched)
    acc = warp.warp_m * warp.warp_n / 32
    fragments = (warp.warp_m + warp.warp_n) * K_STEP * F16_BYTES / 32 / WORD
    ksteps = warp.k / K_STEP
    acc_spilled = emin(emax(acc + fragments - regs, 0), words)
    moved = 2 * threads * WORD * (acc_spilled * ksteps + (words - acc_spilled))
    if is_array(warp.applies):
        moved = where(warp.applies, moved, once)
        acc_spilled = where(warp.applies, acc_spilled, 0)
        ksteps = where(warp.applies, ksteps, 1)
    # a sweep's warpgroup-mma configurations (not warp.applies) keep their ``untouched``
    return SpillTrip(moved, words, acc, fragments, acc_spilled, ksteps, threads, regs, untouched)


def frame_under_registers(spill_bytes_per_thread, regs) -> Any:
    """Whether the compiled frame is smaller than the registers allocated (``spilled words <
    regs``): the compiler keeps most values in registers and spills the long-lived ones. Its
    negation is where the frame reaches the registers (tfx.analysis.row_spill.applies)."""
    return spill_bytes_per_thread / WORD < regs


def stored_once_share(fraction, spill_bytes_per_thread, threads, register_bytes, regs):
    """The share of a CTA's register bytes (``register_bytes``: what its ops read and write in
    registers, per CTA) that moves through local memory, for a kernel without an mma.

    Where the compiled frame is smaller than the registers allocated (``spilled words <
    regs``: the compiler keeps most values in registers and spills the long-lived ones),
    each spilled value is stored once after it is made and loaded once at its later use,
    ``2 x spilled bytes x threads`` a CTA, when that is under the per-op share
    ``fraction x register_bytes``. Source: the SASS of the issue-15 row kernels
    (calibration/h200/measured/row_phases, docs/analysis.md section 8 (b)): LDL + STL move
    1.8-2.3x the local frame where the compiler keeps 255 registers (a row stored once after
    its load, loaded once after the reduction). Where the frame reaches the registers (the
    32-64-register configurations, 3.4-5.1x the frame) the per-op share ``fraction`` is
    returned unchanged: tfx.analysis.row_spill.frame_share caps it there, at
    ``row_spill.frame_traffic`` x the frame (4.355; 2 per reduction at 128 registers or more)."""
    once = 2 * spill_bytes_per_thread * threads
    capped = emin(fraction, once / emax(register_bytes, 1e-30))
    few = frame_under_registers(spill_bytes_per_thread, regs)
    if is_array(few, capped, fraction):
        return where(few, capped, fraction)
    return capped if few else fraction


def in_series(spill_ns, tensor_ns, smem_ns, copy_ns):
    """ns of a spilling k-loop trip's local traffic with the rest of the trip in series after
    it: ``spill + max(tensor, smem, copy)`` (the module's docstring says why), taken as the
    trip's ``spill`` engine so that the round is at least that sum."""
    return spill_ns + emax(emax(tensor_ns, smem_ns), copy_ns)


def _whole(n) -> str:
    """A word, register or k-step count as the breakdown writes it: the whole number nearest
    (as ``:,.0f`` wrote it), through tfx.hw.units.format_count (``46`` -> ``"46"``,
    ``1024`` -> ``"1,024"``)."""
    return format_count(round(float(n)))


def describe(t: SpillTrip, rate_bytes_per_ns, level: str, series=None) -> str:
    """One line for the predicted-time breakdown. ``series``: (local ns, the rest of the
    round in ns, resident CTAs) of one round of the trip (``in_series``), when known."""
    if not is_array(t.untouched) and t.untouched:
        line = (f"the trip's warpgroup mmas fit the {_whole(t.regs)} registers: the {_whole(t.spilled_words)} "
                f"spilled words are values live across the loop that the trip does not read, 0 B a trip "
                f"(tfx.analysis.spill_traffic)")
        return line
    if not t.acc_words:
        line = (f"every spilled word reloaded and stored once a trip: 2 x {_whole(t.spilled_words)} words x 4 B x "
                f"{t.threads} threads = {formula_bytes(float(t.bytes_per_trip))} a trip from {level} at "
                f"{formula_rate(rate_bytes_per_ns)} per SM")
    else:
        line = (f"warp mma: accumulator {_whole(t.acc_words)} + one k-step's operands {_whole(t.fragment_words)} "
                f"words per thread over {_whole(t.regs)} registers: {_whole(t.acc_spilled)} accumulator words in "
                f"local memory, touched at each of {_whole(t.ksteps)} k-steps: 2 x 4 B x {t.threads} threads x "
                f"({_whole(t.acc_spilled)} x {_whole(t.ksteps)} + {_whole(t.spilled_words - t.acc_spilled)}) = "
                f"{formula_bytes(float(t.bytes_per_trip))} a trip from {level} at {formula_rate(rate_bytes_per_ns)} per SM")
    if series is None:
        return line
    local_ns, rest_ns, resident = series
    whose = format_counted(resident, "CTA's", "CTAs'")     # the possessive, singular at one
    return (line + f"; in series with the rest of the trip (the reloads feed its mma, its results are stored): "
            f"{whose} local traffic {format_time_ns(float(local_ns))} + {format_time_ns(float(rest_ns))} of mma, "
            f"shared memory and copies = {format_time_ns(float(local_ns + rest_ns))} a round")
