"""The loads in flight of a streaming serial trip (decode's KV loop) on a GPU (docs/analysis.md,
section 8, "the round trip of a streaming serial trip").

A split-KV decode CTA streams its K and V tiles from DRAM S-1 trips ahead (Triton's cp.async
pipeline) and its trip is a serial chain (QK^T, the softmax, PV). By Little's law a trip takes
at least (what its warps do before the copies leave + the copies' round trip) / (S-1). That
round trip is the DRAM's latency under the load the SMs put on it plus the tile's bytes at the
rate one SM brings them in:

* **The loaded latency.** The DRAM part of a tile's round trip grows with the bandwidth all SMs
  draw (``pipeline.dram_round_trip_unloaded`` + slope x B/ns drawn, the kloop line of
  ``tfx.analysis.load_trip``), and is never below the idle round trip one SM alone waits
  (``pipeline.dram_round_trip_idle``, tfx.analysis.memory_parallelism). The bandwidth drawn is
  U SMs x r CTAs x the trip's DRAM bytes per trip time T, so the round trip is solved with T;
  r is the CTAs per SM that draw together (``memory_parallelism.drawing_per_unit``, the rule of
  the k-loop's loaded round trip): a tail wave of t CTAs draws with t, not ceil(t / U) x U.
* **The tile's own transfer** runs at one SM's rate: the slower of its L2 read port
  (``pipeline.sm_load_bandwidth_per_cycle``) and its DRAM ceiling
  (``pipeline.sm_dram_bandwidth_per_cycle``), not at its share of the device bandwidth. The
  share is a throughput bound the copy engine already enforces (r x bytes / share a round);
  the waiting it stands for when every SM pulls is the queueing the loaded latency holds.
  Counting both (the latency at 700 ns for a loaded system plus the bytes at the share) made
  the 2-stage 64 KiB decode trips, which reach ~4 TB/s with one tile in flight a CTA, 60-85%
  too slow.

The L2-hit share of the trip keeps the L2 latency and its bytes at the SM's share of L2.
Works on numpy arrays of parameter values (sweeps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import load_trip, memory_parallelism
from tfx.analysis.numbers import emax


class StreamFacts(NamedTuple):
    port_bytes_per_ns: float        # one SM's L2 read port
    sm_dram_bytes_per_ns: float     # one SM's DRAM ceiling
    base_ns: float                  # the loaded line's intercept
    slope_ns_per_byte_ns: float     # ns more per B/ns the SMs draw
    idle_ns: float                  # the round trip one SM alone waits


def facts(m) -> StreamFacts | None:
    """The profile's facts for the streaming round trip, or None where it lacks one (GPU only):
    the loaded DRAM line of ``load_trip.dram_facts`` with the SM's port and DRAM ceiling."""
    if m.kind != "gpu":
        return None
    d = load_trip.dram_facts(m)
    port, ceiling = (m.profile.get("pipeline.sm_load_bandwidth_per_cycle", None),
                     m.profile.get("pipeline.sm_dram_bandwidth_per_cycle", None))
    if d is None or d.idle_ns is None or None in (port, ceiling):
        return None
    return StreamFacts(port * m.clock_ghz, ceiling * m.clock_ghz, d.base_ns, d.slope_ns_per_byte_ns, d.idle_ns)


def round_trip_ns(waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes, l2_share_bytes_per_ns,
                  r, active_units, stages, f: StreamFacts) -> Any:
    """ns of one tile's round trip (issue to arrival) in a serial trip whose copies leave after
    ``waited_ns`` of the trip's chain, S-1 trips ahead (Little's law: (S-1) T = waited + round
    trip). ``miss``: the share of the trip's wait that is DRAM's (1 when any byte misses:
    tfx.analysis.memory_parallelism.trip_miss). With
    K = waited + miss x base + (1 - miss) x L2 latency + fetch, fetch = max(DRAM bytes / the
    SM's DRAM ceiling, loaded bytes / its port, L2 bytes / its L2 share), and
    q = miss x slope x U x r x DRAM bytes (r: CTAs per SM drawing DRAM, fractional in a tail
    wave: memory_parallelism.drawing_per_unit): (S-1) T^2 - K T - q = 0,
    T = (K + sqrt(K^2 + 4 (S-1) q)) / (2 (S-1)); the DRAM part at least the idle round trip.
    Returns (S-1) T - waited."""
    # load_trip's loaded round trip with the chain before the issue as its overhead and the
    # tile's non-port transfer (DRAM ceiling, L2 share) as its transfer: the same K, q and idle floor
    transfer = emax(dram_bytes / f.sm_dram_bytes_per_ns, l2_bytes / l2_share_bytes_per_ns)
    d = load_trip.DramRoundTrip(f.base_ns, f.slope_ns_per_byte_ns, f.idle_ns)
    return load_trip.loaded_round_trip_ns(l2_latency_ns, miss, loaded_bytes, transfer, dram_bytes, r, active_units,
                                          stages, load_trip.LoadTrip(waited_ns, f.port_bytes_per_ns), d) - waited_ns


def describe(line, waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes, l2_share_bytes_per_ns,
             r, active_units, stages, f: StreamFacts) -> str:
    """One line for the breakdown: the round trip ``round_trip_ns`` solved, with its values."""
    waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes, l2_share_bytes_per_ns, r, active_units = (
        float(x) for x in (waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes,
                           l2_share_bytes_per_ns, r, active_units))
    s1 = max(stages - 1, 1)
    in_flight = round_trip_ns(waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes,
                              l2_share_bytes_per_ns, r, active_units, stages, f)
    trip = (waited_ns + in_flight) / s1
    drawn = active_units * r * dram_bytes / trip
    loaded = f.base_ns + f.slope_ns_per_byte_ns * drawn
    fetch = max(dram_bytes / f.sm_dram_bytes_per_ns, loaded_bytes / f.port_bytes_per_ns,
                l2_bytes / l2_share_bytes_per_ns)
    hits = f" + {1 - miss:.1%} x L2 {l2_latency_ns:,.0f}" if miss < 1 else ""
    return (f"loop at line {line}: the copies of a trip leave after {waited_ns:,.2f} ns of its chain; their round "
            f"trip waits DRAM's latency under the load all SMs put on it, max(idle {f.idle_ns:,.0f}, "
            f"{f.base_ns:,.0f} + {f.slope_ns_per_byte_ns:.4f} x {drawn:,.0f} B/ns drawn = {loaded:,.0f}) ns"
            f"{' x ' + format(miss, '.1%') if miss < 1 else ''}{hits}, solved with the trip time "
            f"({memory_parallelism.drawing_text(r, active_units)} x {dram_bytes:,.0f} B per trip), "
            f"plus the tile at one SM's rate, "
            f"max({dram_bytes:,.0f} B / {f.sm_dram_bytes_per_ns:.1f} B/ns DRAM, {loaded_bytes:,.0f} B / "
            f"{f.port_bytes_per_ns:.1f} B/ns port, L2 share) = {fetch:,.2f} ns, not at its share of the device "
            f"(a throughput bound the copy engine keeps): {in_flight:,.2f} ns; {s1} tile(s) in flight: a trip takes "
            f"at least ({waited_ns:,.2f} + {in_flight:,.2f}) / {s1} = {trip:,.2f} ns")
