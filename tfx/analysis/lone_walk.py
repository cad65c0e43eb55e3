"""A lone warp's compiled k-loop a trip (docs/analysis.md, section 8, "A lone warp's compiled loop").

A warp alone on its sub-partition (one or two 2-warp CTAs an SM) has no other warp to issue while it
waits, so its trip is at least its own instruction stream as compiled: ptxas writes into each instruction a stall
count (the cycles the warp holds its issue after it: fixed-latency dependences, the HMMA spacing of 6 cycles) and
the scoreboards it waits on (variable-latency results). calibration/h200/measured/lone_warp_s27: the stall counts
summed over the k-loop body are Nsight's `wait` + `selected` cycles of a trip within 0.91-1.00 on the seven
l2_groupm_s26b launches; walked in order with the scoreboards (an LDSM's fragment 34 cycles after issue,
ldsm_latency/, queued at the SM's 128 B/cycle shared-memory port behind the same LDSM of the CTA's other warps; an
LDGSTS's address registers released 11 cycles after issue, the median of 15 waits Nsight sampled in 16x128x128 w2
s4, whose 168-register compile computes every copy's address into one register pair) the body takes 0.78-1.04 of
Nsight's trip on the six four-stage launches (0.59 at three stages, where the DRAM round trip shows): a floor of the
trip, not the trip (dispatch stalls and the MIO queue's later releases in other loops, 15-35 cycles, are not in it).
Where the busiest sub-partition holds two or more warps the others issue in the waits, and the walk is not kept
(tfx.analysis.warp_trip.stations).

The walk is the compiler's, so it is a table by tile configuration (``WALK``: tfx/analysis/triton_lone_walk.py,
written by bench/h200/lone_warp_walk.py --emit from the compiled loops of every multi-stage 2-warp bf16
configuration of the issue-15 space): (BM, BN, BK, warps, stages) -> cycles a trip. Anything else has none (0):
fp8, B stored [N, K], spilling compiles, a code generator whose threads do not copy the tiles, and 4 or 8 warps (the
port's lock step, Nsight's on 2-warp loops, overshoots a lone 4-warp 16x64x128 s4 trip by +15-17%:
copy_issue_wide_s24; warps along an ldmatrix chain do not meet the port together).
"""

from __future__ import annotations

from typing import Any

from tfx.analysis import fragment_chain
from tfx.hw.units import format_plain, formula_frequency

_TABLE: dict = {}


def _pairs(table) -> dict:
    """``table`` as fragment_chain's (count, 0) pairs, built once (its sorted-key search serves arrays)."""
    got = _TABLE.get(id(table))
    if got is None or got[0] is not table:
        got = _TABLE[id(table)] = (table, {k: (v, 0) for k, v in table.items()})
    return got[1]


def cycles(shape, warps, stages, bits=16, b_k_major=False, table=None) -> Any:
    """One warp's walk of its compiled k-loop a trip (cycles) for a dot of ``shape`` (BM, BN, BK) on ``warps``
    warps at ``stages`` stages: the table's entry, 0 where it has none or the operands are not 16-bit with B [K, N]
    (arrays elementwise)."""
    if table is None:
        from tfx.analysis.triton_lone_walk import WALK as table
    return fragment_chain.counts(shape, warps, stages, bits, b_k_major, table=_pairs(table))[0]


def describe(walk_ns, walk_cycles, ghz, fmt) -> str:
    """The warp-mma trip's clause (scalars)."""
    return (f"; each warp alone on its sub-partition issues its compiled k-loop in order (stall counts, scoreboards, "
            f"its ldmatrix at the SM's port: tfx.analysis.lone_walk): {format_plain(walk_cycles)} cycles / "
            f"{formula_frequency(ghz)} = {fmt(walk_ns)} a trip, the round at least that")


__all__ = ["cycles", "describe"]
