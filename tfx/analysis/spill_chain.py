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

The round trip is L2's where the machine's spilled frames fit L2, DRAM's where they do not;
in between a load hits L2 in the share of the frames L2 holds, ``min(1, L2 / working set)``
(the machine's working set: spilled bytes x threads x the CTAs resident at once), so a wait
costs ``hit x L2 latency + (1 - hit) x DRAM latency``, both measured unloaded on the H200
(calibration/h200/measured/latency.csv: a dependent load 146.3 ns from L2 over 4 MiB, 341.1 ns
from DRAM over 1 GiB).

Measured against (issue15 run1-run7, one CTA a SM: the chain alone): bf16 128x4096x4096
128x128x64 (32 CTAs, 511 waits a trip, the frames 13.6 MB in L2) 4.338 ms = 64 trips of 67.8
us, 132.7 ns a wait; 1536^3 256x128x64 (72 CTAs, 1109 waits, 62.1 MB against L2's 62.9) 24
trips of 146.7 us, 132.3 ns a wait: the L2 round trip, 9% under its idle latency (some
reloads hit L1). Not fitted to them: both latencies are the pointer chase's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import emax, emin, is_array, where

# Median of LDL waits per HMMA in the k-loop bodies of the 13 issue-15 kernels compiled to 32
# registers (calibration/h200/measured/spill_chain/chain.csv, column waits_per_HMMA; see
# the README there for the sorted values and the median's arithmetic).
WAITS_PER_MMA = 2.102
CHAIN_REGS = 32      # the allocation of every kernel of the census (ptxas's, for all 13)


class SpillChain(NamedTuple):
    """One warp's chain of local-load round trips in one k-loop trip."""

    mmas: Any             # mma.sync a warp issues a trip
    waits: Any            # WAITS_PER_MMA x mmas
    l2_hit: Any           # share of the reloads L2 holds
    latency_ns: Any       # one wait: hit x L2 + (1 - hit) x DRAM
    ns: Any               # waits x latency: the trip's floor
    working_set: Any      # the machine's spilled bytes (all resident CTAs)
    l2_capacity: Any
    l2_ns: float
    dram_ns: float
    applies: Any = True


def applies(regs, spill_bytes_per_thread) -> Any:
    """Whether the loop is compiled at the chain's allocation and spills (``regs <= 32``)."""
    if is_array(regs, spill_bytes_per_thread):
        return (regs <= CHAIN_REGS) & (spill_bytes_per_thread > 0)
    return regs <= CHAIN_REGS and spill_bytes_per_thread > 0


def l2_hit(working_set, l2_capacity) -> Any:
    """The share of the spilled frames L2 holds: ``min(1, L2 / working set)``."""
    return emin(1.0, l2_capacity / emax(working_set, 1e-30))


def trip_chain(mmas, regs, spill_bytes_per_thread, working_set, l2_capacity, l2_ns, dram_ns) -> SpillChain:
    """The floor of one k-loop trip of a warp that issues ``mmas`` mma.sync a trip."""
    hit = l2_hit(working_set, l2_capacity)
    latency = hit * l2_ns + (1 - hit) * dram_ns
    waits = WAITS_PER_MMA * mmas
    on = applies(regs, spill_bytes_per_thread)
    ns = waits * latency
    ns = where(on, ns, 0) if is_array(on, ns) else (ns if on else 0)
    return SpillChain(mmas, waits, hit, latency, ns, working_set, l2_capacity, l2_ns, dram_ns, on)


def describe(c: SpillChain) -> str:
    """The breakdown's line."""
    return (f"compiled to {CHAIN_REGS} registers, each warp reloads every mma.sync's operands from local memory: "
            f"{WAITS_PER_MMA} waits an mma x {float(c.mmas):,.0f} mma a trip = {float(c.waits):,.0f} round trips of "
            f"{float(c.l2_hit) * 100:.0f}% x {c.l2_ns:.1f} ns (L2) + {(1 - float(c.l2_hit)) * 100:.0f}% x "
            f"{c.dram_ns:.1f} ns (DRAM; L2 holds min(1, {float(c.l2_capacity) / 1e6:,.1f} MB / "
            f"{float(c.working_set) / 1e6:,.1f} MB of spilled frames)) = {float(c.latency_ns):.1f} ns: "
            f"a trip takes at least {float(c.ns):,.1f} ns")
