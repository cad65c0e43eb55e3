"""A GEMM k-loop's warpgroup mma held by the SM's shared-memory port (docs/analysis.md, section 8,
"the port under the warpgroup mma", session 28, helper slab28).

A warpgroup mma that reads both operands from shared memory (SS) reads, every m64nNk16
instruction, A's 64 x 16 and B's N x 16 elements (tfx.analysis.counting's operand reads), and
the trip's cp.async copies write the next stages' tiles into the same shared memory. Both go
through the SM's one port, 128 B a cycle (``onchip.smem``; chain/mma_rate.csv: m64n32k16, 3 KiB
an instruction against 16 cycles of tensor work, runs 0.60 of 4,096 flop/cycle), and both the
port and the tensor cores run on the SM clock. A trip's demands in cycles, clock-free:

    tensor   F / 4,096 flop/cycle / busy     (busy = ``pipeline.wgmma_trip_busy``)
    port     (operand reads + copies written) / 128 B

Measured in cycles (calibration/h200/measured/gemm_clock_s15: the persistent GEMM at
8192x8192x4096 on 8 warps, 3 and 4 stages, each CTA's %clock64; flop a cycle an SM on 132 /
114 / 78 / 33 SMs):

    tile         tensor  port (reads + copies)   measured cycles a trip
    128x256x64   1,024   1,024 (81,920 + 49,152)   1,107-1,120 (3,745-3,789 flop/cycle)
    256x128x64   1,024   1,152 (98,304 + 49,152)   1,197-1,225 (3,425-3,505)
    128x128x64     512     640 (49,152 + 32,768)     614-638   (3,285-3,418)

The 128x256x64 tile, whose port demand equals its tensor cycles, runs its tensor cores 0.914
of the trip (3,744 of 4,096 flop/cycle, the median of its eight rows, random and zero data):
``pipeline.wgmma_trip_busy``. The other two run at their port within -4..+4%: the 256x128
tile's two 64-row slabs a warpgroup read B twice (n128: 96 B of operands a tensor cycle against
n256's 80), and with the copies' 48 B a cycle that is 144 B against the port's 128.

In ns the model prices the tensor cycles at the sustained rate (compute.tensor.efficiency,
the power-limited clock of a launch whose tensor cores are busy; tfx.analysis.machine), so
the port's cycles are priced at the same clock: rho = port cycles / (tensor cycles / busy),
and where rho > 1 the trip is rho x the tensor's ns, less the clock the power limit gives back
(the tensor datapath busy 1 / rho of the trip switches 1 / rho of the power: the clock rises
by rho^(1 / compute.tensor.power_clock_exponent), at most to compute.tensor.
unthrottled_efficiency; gemm_clock_s15 on 132 SMs: 256x128x64 1,500 MHz against
128x256x64's 1,425): rho^(2/3) x the tensor ns.

Only GEMM k-loops whose every mma Triton leaves running (tfx.analysis.mma_path.properly_async):
their copies fly under the mma. Scalars and numpy arrays alike.
"""

from __future__ import annotations

from typing import Any

from tfx.analysis.numbers import emax, emin, if_else, is_array
from tfx.hw.units import format_plain


def busy(m) -> float | None:
    """``pipeline.wgmma_trip_busy`` (the share of a tensor-bound GEMM k-trip its warpgroup mma
    runs), or None where the profile states none (no term)."""
    if m.kind != "gpu":
        return None
    return m.profile.get("pipeline.wgmma_trip_busy", None)


def ratio(tensor, smem, efficiency, share) -> Any:
    """rho: the trip's port cycles over its tensor cycles / ``share``. ``tensor``: the trip's
    tensor ns at the sustained rate (efficiency ``efficiency``), ``smem``: its shared-memory
    bytes at the port's 128 B a cycle at the profile's clock (ns). Arrays elementwise; 0 where
    there is no tensor work."""
    if is_array(tensor, smem):
        import numpy as np
        t = np.asarray(tensor, dtype=float)
        return np.where(t > 0, smem * share / (np.where(t > 0, t, 1) * efficiency), 0.0)
    return smem * share / (tensor * efficiency) if tensor else 0


def clock_rise(m, rho) -> Any:
    """How much faster the power-limited clock runs where the tensor cores are busy 1 / rho of a
    trip: rho^(1 / power_clock_exponent), at most what leaves the unthrottled clock; 1 where the
    profile states neither fact."""
    a = m.profile.get("compute.tensor.power_clock_exponent", None)
    top = m.profile.get("compute.tensor.unthrottled_efficiency", None)
    if not a or not top or not m.tensor_eff:
        return 1
    return emin(emax(rho, 1) ** (1 / a), (top / m.tensor_eff) / m.tensor_clock_factor())


def trip_ns(m, tensor, smem, efficiency) -> Any:
    """The smem engine's ns a trip for such a loop: ``smem`` where the port does not bind, else
    tensor x rho / clock_rise (at least ``smem``). Arrays elementwise."""
    share = busy(m)
    if not share:
        return smem
    rho = ratio(tensor, smem, efficiency, share)
    return emax(smem, if_else(rho > 1, tensor * rho / clock_rise(m, rho), 0))


def detail(line, m, tensor, smem, efficiency, fmt) -> str | None:
    """The breakdown's line (scalars), None where the port does not bind."""
    share = busy(m)
    if not share or not tensor:
        return None
    rho = float(ratio(tensor, smem, efficiency, share))
    if rho <= 1:
        return None
    rise = float(clock_rise(m, rho))
    r, up = format_plain(round(rho, 4)), format_plain(round(rise, 4))
    return (f"line {line}: the trip's shared-memory operand reads and copies take {r}x its tensor cycles "
            f"(the tensor cores busy {format_plain(share)} of a trip, pipeline.wgmma_trip_busy): the mma waits "
            f"for the port, the power limit's clock {up}x faster: {fmt(tensor)} x {r} / {up} = "
            f"{fmt(tensor * rho / rise)} a trip")
