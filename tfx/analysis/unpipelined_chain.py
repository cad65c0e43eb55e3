"""An unpipelined serial trip is its load wait, then its chains (docs/analysis.md, section 8,
"The unpipelined serial trip").

At STAGES = 1 Triton prefetches nothing (tfx.analysis.mma_path.unpipelined_wait): every trip
of attention's KV loop loads its K and V tiles, waits for them, then runs the chain that
reads its own mma (QK^T -> softmax -> PV, tfx.analysis.chain_overlap). A round of the
resident CTAs is therefore the load wait (the copies' issue-and-wait chain, the latency and
the bytes at the SM's port or share: tfx.analysis.pipeline_depth.round_trip_ns) plus the
closed queue's round of their chains. Triton 3.6's SASS of such a loop says nothing else
happens in series (calibration/h200/measured/chain/sass_loop_causal_d128_128x64_w8_s1.txt,
flash_fwd_kernel causal D = 128, 128 x 64, 8 warps, 1 stage, 166 registers as measured):
K's four LDG.E.128 a thread, BAR.SYNC, their STS.128, BAR.SYNC, the eight HGMMA of QK^T, V's
LDG.E.128 issued right behind them, the wait for QK^T, the softmax with V's STS.128 inside it,
BAR.SYNC, the four register-fed HGMMA of PV and their wait, the branch.

The GEMM path's unpipelined floor, one CTA's latency plus every engine of the trip in series
(tensor + vector + special + copy + shared memory), is not such a trip's round: it adds the
tiles' transfer a second time (the copy engine at the SM's L2 share, after the wait already
moved them), the shared-memory port time the chain's tensor station already floors, and the
mma and softmax of a CTA's two warpgroups end to end where they overlap (chain_overlap's
warpgroups). It bound every 1-stage attention configuration of one CTA a SM: issue-15 causal
B1 H8 S32768 D128 at 128 x 64 on 8 warps was priced 2.18 us a trip (+37.7%) where the wait
and the chain give 1.72 us. So where a serial trip's stations are priced (``applies``) that
floor is dropped (``floor_ns``) and the round is the wait plus the chains.

Not modelled: V's copy flies under QK^T and the softmax in that SASS, so one CTA alone waits
for K's round trip only; the wait keeps both tiles' bytes (at 2 or more CTAs a SM the CTAs'
waits line up: tfx.analysis.mma_path.unpipelined_wait). Everything is int/float or numpy
arithmetic (explore's vectorized sweeps).
"""

from __future__ import annotations

from typing import Any


def applies(stations) -> bool:
    """True where the trip is a serial chain whose stations are priced
    (tfx.analysis.chain_overlap.Stations, not None): its round is the load wait and the chains."""
    return stations is not None


def floor_ns(single, stations) -> Any:
    """The unpipelined round's one-CTA floor: ``single`` (latency + every engine of one CTA in
    series), or 0 where ``applies`` (arrays elementwise)."""
    return single * 0 if applies(stations) else single


def detail(single, fmt) -> str:
    """The breakdown's clause (scalars): the floor that no longer binds."""
    return (f"; the one-CTA sum of latency and every engine in series, {fmt(single)}, is not a floor: "
            f"the SASS runs the wait, then the chains (tfx.analysis.unpipelined_chain)")


__all__ = ["applies", "floor_ns", "detail"]
