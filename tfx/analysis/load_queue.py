"""A persistent walk's tiles in flight queued at the SM's load path (docs/analysis.md, section 8,
"The walk's tiles in flight queue at the load path").

A CTA of a pipelined GEMM k-loop keeps S-1 tiles in flight. Each tile passes the SM's one load
path, which the r resident CTAs share (tfx.analysis.load_trip.copies_port_ns: its bytes at the
port's 128.7 B/ns, copies of rows of 64 B or less at 7.07 ns and narrow ones at 8.3 ns a warp-wide
instruction), then the rest of its round trip (the chain that issues it, the L2 or DRAM latency,
the mma it waits behind: the issue chain the round prices over S-1), and comes back as the next
copy once the mma has read it. The engines' max prices the two ends: a round is at least the r
CTAs' copies on the load path, and at least the issue chain over the S-1 tiles in flight (Little's
law). Between the two the tiles collide: a tile that comes back while the path still copies
another's waits. The copies take a fixed time (a deterministic server) while the round trip
spreads (the DRAM and L2 latencies: calibration/h200/measured/latency.csv, latency_read_s16), so
the collisions are those of a closed queueing network (tfx.analysis.closed_queue, exact mean value
analysis with a deterministic server's residual, as smallm18 priced the DRAM intake, and as the
warp-mma trip's load path, tfx.analysis.warp_trip) of r x (S-1) customers, the tiles in flight,
each through

* the load path (``copies``): one CTA's copies of a trip;
* a delay: the rest of its issue chain, ``issue_chain - copies`` (at least 0).

A customer's cycle is S-1 of its CTA's trips, so the round (one trip of each of the r CTAs) is
cycle(r x (S-1)) / (S-1); its asymptotes are the two floors, r x copies and issue_chain / (S-1),
and with one tile in flight (2 stages, one CTA) it is the issue chain itself.

Only a persistent walk's trips take it: their round trip is built from latencies measured alone
(the idle floor, the pointer chase under a read-only stream: load_trip.chase_round_trip_ns), which
hold no queue of the SM's own tiles; the one-tile-a-CTA k-loops' loaded line (205 + 325 ns per
TB/s) was fitted on measured k-loop trips, whose queue it holds. So the walk's idle floor is the
one measured with one tile in flight (``pipeline.dram_round_trip_idle_one_tile``, mlp's 2-stage
one-SM rows: the queue is empty), not the 3-5-stage one that holds the queue
(``pipeline.dram_round_trip_idle``). Everything is scalar or numpy arithmetic (explore's sweeps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import closed_queue
from tfx.analysis.numbers import ceil_int, emax, is_array
from tfx.hw.units import format_count, format_counted


class LoadQueue(NamedTuple):
    """One CTA's trip as the queue sees it (ns), and its tiles in flight."""

    copies: Any          # one CTA's copies of a trip on the SM's load path (load_trip.copies_port_ns)
    issue_chain: Any     # a tile's issue chain: its round trip and the compute it leaves behind
    resident: Any        # CTAs on the SM
    stages: Any          # the loop's stages: S-1 tiles in flight a CTA


def customers(q: LoadQueue) -> Any:
    """Tiles in flight on one SM: r resident CTAs (whole, at least one) x (S-1)."""
    return emax(ceil_int(q.resident), 1) * emax(q.stages - 1, 1)


def delay_ns(q: LoadQueue) -> Any:
    """The part of a tile's cycle the load path does not serve: its issue chain less its copies."""
    return emax(q.issue_chain - q.copies, 0)


def cycle_ns(q: LoadQueue) -> Any:
    """One tile's cycle: the closed network's with a deterministic load path (module docstring)."""
    return closed_queue.cycle_ns(customers(q), [q.copies], delay_ns(q), deterministic=True)


def round_ns(q: LoadQueue) -> Any:
    """ns of a round of the r resident CTAs' trips: cycle(r x (S-1)) / (S-1); arrays elementwise."""
    return cycle_ns(q) / emax(q.stages - 1, 1)


def describe(line, q: LoadQueue, fmt) -> str:
    """One line of the breakdown (scalar trips)."""
    n = int(customers(q))
    s1 = int(max(float(q.stages) - 1, 1))
    r = int(max(ceil_int(float(q.resident)), 1))
    plain = max(r * float(q.copies), float(q.issue_chain) / s1)
    got = float(round_ns(q))
    return (f"line {line}: a persistent walk's tiles in flight queue at the SM's load path: "
            f"{format_counted(r, 'CTA')} x {format_counted(s1, 'tile')} in flight = {format_counted(n, 'tile')}, "
            f"each {fmt(q.copies)} of copies on the "
            f"path and the rest of its issue chain, {fmt(q.issue_chain)} - {fmt(q.copies)} = {fmt(delay_ns(q))}, "
            f"away from it: a closed queue (mean value analysis, the copies a fixed time) cycles in "
            f"{fmt(cycle_ns(q))} = {format_counted(s1, 'trip')} of {fmt(got)}, against the floors' "
            f"max({format_count(r)} x {fmt(q.copies)}, {fmt(q.issue_chain)} / {format_count(s1)}) = {fmt(plain)}")


def applies_to(walk, chase, idle_one_tile) -> bool:
    """Whether a pipelined trip's tiles queue here: a persistent walk whose round trip is the
    pointer chase's (``chase``: load_trip.chase_facts) and a profile that states the idle floor
    with one tile in flight (``idle_one_tile``); else the engines' max alone."""
    return bool(walk) and chase is not None and idle_one_tile is not None and not is_array(walk)
