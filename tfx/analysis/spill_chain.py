"""A k-loop compiled to 32 registers: each warp's trip is a chain of local-load round trips.

Where ptxas gives a spilling warp-mma k-loop only 32 registers a thread (the issue-15 2-warp
Triton GEMMs at one stage with a 256-1024-word accumulator: 13 configurations over runs 1-7,
spilling 924-6310 words), a thread holds little more than one mma.sync's operands at a time.
Its SASS (calibration/h200/measured/spill_chain, bench/h200/spill_chain_sass.py: Triton 3.6.0
for sm_90, REG and STACK equal to the measured registers and spills) reloads the accumulator
fragment and operands of each HMMA.16816 from local memory a few instructions before it and
stores them right after: 1.86-2.30 waits on a local load per HMMA (``WAITS_PER_MMA``, the
median of the census), each 3-6 instructions after its load. Nothing hides those round trips:
a warp's trip takes at least ``waits x latency``, whatever the bandwidth, and the warps of
every resident CTA wait side by side (each on its own chain), so the floor does not grow
with the CTAs an SM holds; the bandwidth bound (tfx.analysis.spill_traffic) does.

The round trip (calibration/h200/measured/ldl_chase, bench/h200/measure_ldl_chase.cu: a
dependent chain of coalesced LDL through a per-thread frame, 2-warp CTAs on every SM) is 17.5 ns
from L1, 130.0 ns from L2 (the machine's frames 34.6 MB) and 315-385 ns, median 357.3, once the
machine's frames pass L2 (69 MB and more: there is no gradual share, the frames are walked
whole and L2 keeps none of them). A spilling k-loop's reloads are not all that far: most read a
word the same trip stored a few hundred instructions before, which L2 still holds; a wait lasts
as long as its farthest load. In the SASS a share ``FAR_WAIT_SHARE`` of the waits (median
0.576 over the census) covers a load of a word last stored in an earlier trip (or before the
loop). So a wait costs the L2 round trip where the machine's spilled frames (spilled bytes x
threads x the CTAs resident at once: CTAs a SM x SMs, no more than the grid's) fit L2, else ``far x past-L2 + (1 - far) x L2``.

Measured against (issue15 run1-run7, one CTA a SM: the chain alone): bf16 128x4096x4096
128x128x64 (32 CTAs, 511 waits a trip, the frames 13.6 MB in L2) 4.338 ms = 64 trips of 67.8
us, 132.7 ns a wait; 1536^3 256x128x64 (72 CTAs, 1109 waits, 62.1 MB against L2's 62.9) 24
trips of 146.7 us, 132.3 ns a wait: the chase's 130.0. Past L2 (1-2 CTAs a SM): 2560^3
256x128x64 247 ns a wait, 256x128x128 256, 128x256x32 270, 6144^3 128x256x128 250-287 (4.4 rounds of 2 CTAs), against
0.576 x 357.3 + 0.424 x 130.0 = 260.9. Not fitted to them: the latencies are the chase's, the
shares the SASS's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import if_else, is_array
from tfx.hw.units import format_time_ns, formula_bytes
from tfx.hw.units import format_whole, formula_share

# Median of LDL waits per HMMA in the k-loop bodies of the 13 issue-15 kernels compiled to 32
# registers (calibration/h200/measured/spill_chain/chain.csv, column waits_per_HMMA; see
# the README there for the sorted values and the median's arithmetic).
WAITS_PER_MMA = 2.102
# Median share of those waits that cover a load of a word last stored in an earlier trip
# (chain.csv, column far_wait_share; the README there sorts them).
FAR_WAIT_SHARE = 0.576
CHAIN_REGS = 32      # the allocation of every kernel of the census (ptxas's, for all 13)


class SpillChain(NamedTuple):
    """One warp's chain of local-load round trips in one k-loop trip."""

    mmas: Any             # mma.sync a warp issues a trip
    waits: Any            # WAITS_PER_MMA x mmas
    past_l2: Any          # the machine's spilled frames exceed L2
    latency_ns: Any       # one wait: L2's, or far x past L2 + (1 - far) x L2
    ns: Any               # waits x latency: the trip's floor
    working_set: Any      # the machine's spilled bytes (all resident CTAs, at most the grid's)
    l2_capacity: Any
    l2_ns: float
    dram_ns: float
    applies: Any = True


def applies(regs, spill_bytes_per_thread) -> Any:
    """Whether the loop is compiled at the chain's allocation and spills (``regs <= 32``)."""
    if is_array(regs, spill_bytes_per_thread):
        return (regs <= CHAIN_REGS) & (spill_bytes_per_thread > 0)
    return regs <= CHAIN_REGS and spill_bytes_per_thread > 0


def wait_ns(working_set, l2_capacity, l2_ns, past_l2_ns) -> Any:
    """One wait's round trip: L2's where the frames fit it, else its far share past L2."""
    far = FAR_WAIT_SHARE * past_l2_ns + (1 - FAR_WAIT_SHARE) * l2_ns
    past = working_set > l2_capacity
    return if_else(past, far, l2_ns)


def trip_chain(mmas, regs, spill_bytes_per_thread, working_set, l2_capacity, l2_ns, dram_ns) -> SpillChain:
    """The floor of one k-loop trip of a warp that issues ``mmas`` mma.sync a trip."""
    latency = wait_ns(working_set, l2_capacity, l2_ns, dram_ns)
    waits = WAITS_PER_MMA * mmas
    on = applies(regs, spill_bytes_per_thread)
    ns = waits * latency
    ns = if_else(on, ns, 0)
    return SpillChain(mmas, waits, working_set > l2_capacity, latency, ns, working_set, l2_capacity, l2_ns,
                      dram_ns, on)


def describe(c: SpillChain) -> str:
    """The breakdown's line."""
    frames = (f"{formula_bytes(float(c.working_set))} of spilled frames "
              f"{'past' if bool(c.past_l2) else 'within'} L2's {formula_bytes(float(c.l2_capacity))}")
    wait = (f"{FAR_WAIT_SHARE} x {format_time_ns(c.dram_ns)} past L2 + {formula_share(1 - FAR_WAIT_SHARE)} x "
            f"{format_time_ns(c.l2_ns)} from L2 = {format_time_ns(float(c.latency_ns))}" if bool(c.past_l2)
            else f"{format_time_ns(c.l2_ns)} from L2")
    return (f"compiled to {CHAIN_REGS} registers, each warp reloads every mma.sync's operands from local memory: "
            f"{WAITS_PER_MMA} waits an mma x {format_whole(c.mmas)} mma a trip = {format_whole(c.waits)} round trips of "
            f"{wait} ({frames}): a trip takes at least {format_time_ns(float(c.ns))}")
