"""A GEMM k-loop's next copy waits behind the trip's warpgroup mma (docs/analysis.md, section 8,
"copy behind the mma").

Triton's pipelined k-loop on the warpgroup mma (the SASS of kernels/persistent_gemm.tile's
Triton kernel at 256x128x128, 8 warps, 2 stages: calibration/h200/measured/tensor_clock/README.md)
runs, each trip: wait for its stage's copies (DEPBAR), a CTA barrier, the trip's HGMMA
instructions, WARPGROUP.DEPBAR.LE gsb0 1 (the previous trip's mma done), a second barrier,
then the cp.async copies of trip i+S-1 (LDGSTS). Read as asynchronous, those copies would fly
while the trip's mma runs and a 2-stage trip would take the longer of the mma and the copies'
round trip. Measured, it takes their **sum**: the k-loop of kernels/gemm.tile with every
byte from L2, one CTA per SM on 78 and 132 SMs (bench/h200/measure_tensor_clock.py,
calibration/h200/measured/tensor_clock/kloop_big.csv):

    tile (BMxBNxBK, warps)  bytes   L2 round trip   mma     sum     measured (78 / 132 SMs)
    256x128x128, 8          98,304  1,086           1,181   2,267   2,100 / 2,312
    128x128x128, 8          65,536    831             591   1,422   1,385 / 1,503
    256x128x64, 8           49,152    704             591   1,295   1,146 / 1,153
    256x64x128, 8           81,920    959             591   1,550   1,608 / 1,667
    128x128x64, 8           32,768    577             295     872     841 /   874
    128x256x32, 8           24,576    513             295     808     732 /   773
    128x64x32, 4            12,288    417              74     491     486 /   505

(ns; the L2 round trip is tfx.analysis.load_trip.round_trip_ns: 122.2 ns of chain + the
profile's 200 ns L2 latency + the bytes at the SM's 128.7 B/ns port; the mma at the rate the
warpgroup mma runs at alone with every SM busy, measured in the same run: 4,095 flop/cycle at
a 1.73-1.74 GHz SM clock on 132 SMs, ``pipeline.wgmma_clock_fraction`` = 1.735 / 1.98 = 0.876 of
the profile's clock). The warps issue the next copies only once the trip's mma instructions
have gone, so a copy's issue-to-use chain is the mma and then its L2 round trip. With S
stages S-1 copies are in flight (Little's law, as tfx.analysis.performance prices the
prefetch): a trip takes at least (mma + L2 round trip) / (S - 1). At 3 or more stages this
rarely binds (the 128x128x128 tile on 4 warps: (591 + 831) / 2 = 711 ns against the copies'
own bound); at 2 stages it is the trip.

The mma time is the loop's tensor time (tensor efficiency included) over the profile's tensor
efficiency for its dtype times ``wgmma_clock_fraction``: the efficiency (cuBLAS' sustained
rate) is a whole-kernel ceiling, the mma a copy waits behind runs at the tensor cores' own
rate. The DRAM round trip (tfx.analysis.load_trip.loaded_round_trip_ns) stays its own bound:
the trip waits the longer of the two. Only GEMM k-loops (load_trip.applies: an mma, none
chained) whose mma is properly asynchronous (a chained or waited mma already holds the copy:
tfx.analysis.mma_path.prefetch_wait); the profile without the fact: no term. Scalars and
numpy arrays alike.
"""

from __future__ import annotations

from typing import Any, Callable

from tfx.analysis import load_trip, mma_path
from tfx.hw.units import formula_bytes, formula_rate
from tfx.hw.units import format_plain


def clock_fraction(m) -> float | None:
    """``pipeline.wgmma_clock_fraction`` (the SM clock under warpgroup mmas on every SM over the
    profile's clock), or None where the profile states none (GPU only)."""
    if m.kind != "gpu":
        return None
    return m.profile.get("pipeline.wgmma_clock_fraction", None)


def mma_ns(loop, m, warps, tensor_ns: Callable[[Any], Any], efficiency: Callable[[Any], Any]) -> Any:
    """ns one CTA's properly asynchronous warpgroup mmas of a trip take on the tensor cores at
    their own rate: sum of tensor_ns(c) x efficiency(c) / ``wgmma_clock_fraction`` (0 where the
    profile states no fraction). ``tensor_ns(c)``: the mma's tensor ns a trip at the model's
    sustained rate; ``efficiency(c)``: that rate's efficiency for c's dtype."""
    fraction = clock_fraction(m)
    if not fraction:
        return 0
    total = 0
    for c in loop.mma_ops():
        total = total + mma_path.properly_async(c, loop, m, warps) * tensor_ns(c) * efficiency(c) / fraction
    return total


def chain_ns(mma, loaded_bytes, m, f: load_trip.LoadTrip) -> Any:
    """One copy's issue-to-use chain behind the trip's mma: the mma, then the copies' L2 round
    trip (load_trip.round_trip_ns at the profile's L2 latency, the bytes at the SM's port);
    0 where there is no such mma. Arrays elementwise."""
    trip = load_trip.round_trip_ns(m.l2_latency, loaded_bytes, 0, f)
    return (mma > 0) * (mma + trip)


def detail(line, stages, mma, loaded_bytes, m, f: load_trip.LoadTrip, fmt) -> str:
    """The breakdown's line (scalars)."""
    trip = load_trip.round_trip_ns(m.l2_latency, loaded_bytes, 0, f)
    s1 = max(int(stages) - 1, 1)
    per = (mma + trip) / s1
    return (f"line {line}: the next copies leave after the trip's warpgroup mma, {fmt(mma)} at the tensor "
            f"cores' own rate (clock x {format_plain(clock_fraction(m))}), then make their L2 round trip "
            f"{fmt(f.overhead_ns)} of chain + {fmt(m.l2_latency)} + {formula_bytes(loaded_bytes)} / "
            f"{formula_rate(f.port_bytes_per_ns)} = {fmt(trip)}: ({fmt(mma)} + {fmt(trip)}) / ({int(stages)} - 1) = "
            f"{fmt(per)} a trip at least")
