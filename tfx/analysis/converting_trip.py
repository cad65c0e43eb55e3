"""A warpgroup-mma k-loop trip whose operand is converted in registers: convert, mma, copy, in series
(docs/analysis.md, "Dequantizing casts hold the XU").

A weight-only GEMM on the warpgroup mma (BM >= 64) cannot hand wgmma a register operand it converted as B,
so Triton stores the converted tile to shared memory first. Triton 3.6.0's SASS of every such trip the
weight-only campaign compiled (gemm_w8a16 64x128x128 and 128x128x64 on 8 warps, gemm_w4a16 64x64x128 and
128x64x128 on 4) runs one order: wait for the stage (DEPBAR, BAR.SYNC); load the stored weights, convert
them (F2FP + F2F.BF16.F16, or I2F for 4-bit codes) and store the bf16 tile (STS.128); FENCE.VIEW.ASYNC,
BAR.SYNC, WARPGROUP.ARRIVE, the trip's HGMMAs and ``WARPGROUP.DEPBAR.LE gsb0, 0x0``, which waits every one
of them out (the converted tile is one buffer, rewritten next trip); BAR.SYNC; then the next stage's
LDGSTS copies. Nothing of one CTA's trip overlaps: its conversions hold the SM's special-function unit
(the XU), its mmas the tensor cores, its copies the SM's load path, each in turn.

r co-resident CTAs share those three stations in no fixed order: a closed queueing network of r
customers (tfx.analysis.closed_queue, exact mean value analysis, as tfx.analysis.warp_trip's warp-mma
trip), each cycling through

* the conversion unit (``converts``): the CTA's conversions a trip at the SM's special-function rate
  (every warp's sub-partition converts its share; a CTA of 4 warps or more holds all four);
* the tensor cores (``tensor``): the CTA's warpgroup mmas a trip, at their rate;
* the load path (``copies``): the CTA's copies (tfx.analysis.load_trip.copies_port_ns).

One CTA alone takes the three in series; many saturate the busiest: cycle(r) -> max over the stations
of r x its demand, the engines' max the roofline already prices.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import closed_queue
from tfx.analysis.numbers import ceil_int, emax, where_applies
from tfx.hw.units import format_counted_verb


class ConvertingTrip(NamedTuple):
    """One CTA's demands a trip (ns) of a warpgroup-mma k-loop that converts its operand in registers."""

    converts: Any         # its conversions on the SM's special-function unit
    tensor: Any           # its warpgroup mmas, waited out
    copies: Any           # its next stage's copies on the SM's load path
    resident: Any         # CTAs on the SM
    applies: Any = 1      # 1 where the dot takes the warpgroup mma (arrays: per configuration), else 0


def stations(converts_ns, tensor_ns, copies_ns, resident, applies=1) -> ConvertingTrip:
    """The trip's stations for ``resident`` CTAs (at least one; arrays elementwise)."""
    return ConvertingTrip(converts_ns, tensor_ns, copies_ns, emax(ceil_int(resident), 1), applies)


def round_ns(t: ConvertingTrip) -> Any:
    """A round of the resident CTAs' trips: the closed network's cycle; 0 where it does not apply."""
    cycle = closed_queue.cycle_ns(t.resident, [t.converts, t.tensor, t.copies], 0)
    return where_applies(t.applies, cycle)


def describe(line, t: ConvertingTrip, fmt) -> str:
    """One line of the breakdown (scalar trips)."""
    return (f"line {line}: each CTA converts its operand on the SM's special-function unit and stores it, then "
            f"issues its warpgroup mma and waits it out, then its next stage's copies, in series (Triton's trip): "
            f"{format_counted_verb(int(t.resident), 'CTA', 'take')} turns at the conversion unit (each {fmt(t.converts)}), the tensor cores (each "
            f"{fmt(t.tensor)}) and the load path (each {fmt(t.copies)}): a closed queue (mean value analysis) "
            f"that cycles in {fmt(round_ns(t))} a round")
