"""The load rounds of an unpipelined GEMM trip (docs/analysis.md, section 8, "Load rounds of an
unpipelined trip").

At STAGES = 1 Triton 3.6 (sm_90) loads a k-loop trip's tiles into registers and stores them to
shared memory: its PTX issues every ``ld.global`` of the trip, then every ``st.shared``. ptxas
does not keep that order: it sinks each load next to its store and reuses a few destination
registers, so a thread issues its loads in groups and its stores wait for each group before the
next one is issued. A trip is then ``rounds`` dependent round trips in series, not one
(calibration/h200/measured/unpipelined_rounds: the k-loop SASS of every 1-stage configuration of
the issue-15 GEMM space, walked in issue order; a load's round is 1 + the highest round of the
loads already waited for when it issues). E.g. gemm.tile bf16 16x128x64 on 2 warps (96
registers): A's two LDG.E.128, then B's sixteen in eight pairs, each pair stored (STS.128)
before the next pair leaves: 9 rounds. 64x128x32 on 2 warps (228 registers) issues its 12 loads
at once: 1 round. A compile that spills a few long-lived words beside its registers (frame <
registers) groups its loads the same way: 32x256x128 on 2 warps (255 registers, 40 spilled
words: the B tile's row pointers, each reloaded from local memory right before the LDG it
addresses) issues its 72 loads a thread in 13 dependent rounds. The compiles whose frame reaches
their registers (32 registers, 924-6310 words) wait on their local loads between groups; their
trip is tfx.analysis.spill_traffic's and they keep one round here.

How many loads ptxas keeps in flight is its scheduler's choice (not the registers left beside
the accumulator: the 9-round kernel above has 64 of its 96 free), so the rounds are a fact of
the code generator, measured per tile configuration by compiling it (``ROUNDS``:
tfx/analysis/triton_load_rounds.py, written by bench/h200/unpipelined_rounds.py). A
configuration outside that table, or another code generator, takes one round (the trip as
before).

A trip of n rounds (``cycle_ns``): the chain and compute, then n round trips in series, each the
latency of a load (DRAM with the chance p that the trip first reads one of its tiles
(memory_parallelism.first_reader_share), or in a wave started together that a co-reader's miss
of it is pending (``lockstep_share``), else L2) and the trip's bytes through the SM's port
once (each round moves its own share). Every round's DRAM latency grows with the bandwidth the
SMs draw (the loaded line of load_trip.loaded_round_trip_ns, slope x U r D / T with T the whole
trip), so T = K + n q / T:
T = (K + sqrt(K^2 + 4 n q)) / 2, K = chain + compute + n (p base + (1 - p) lat) + bytes / port,
q = p slope U r D; at least chain + compute + n (p idle + (1 - p) lat) + max(transfer, bytes /
port). At n = 1 it is the closed form max((K + sqrt(K^2 + 4 q)) / 2, floor), pipeline_depth.
unpipelined_cycle_ns: K, q and the floor come from one place (load_trip.loaded_line), and a
profile that states no idle round trip has no floor in either (the loaded line alone).
Everything is int/float or numpy arithmetic (explore's vectorized sweeps).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from tfx.analysis import decode_trip, load_trip
from tfx.analysis.numbers import emax, is_array, where
from tfx.hw.units import formula_rate
from tfx.hw.units import format_plain, formula_share


def lockstep_share(first_reader, drifted) -> Any:
    """The chance an unpipelined trip waits DRAM's latency: the first reader's share
    (memory_parallelism.first_reader_share), and for the share ``1 - drifted`` of CTAs that start
    together (pipeline_depth.drifted_share: the first wave's) the co-readers' as well. A wave's
    CTAs start together and run the same trips, so the readers of one tile (A by every CTA of its
    tile row, B by every tile row of the wave) ask for it at the same step: one request misses,
    the others reach L2 while its fill is pending (a hit under miss) and wait for the same fill.
    Their "hits" come back at the DRAM latency, not L2's: p' = p + (1 - p) (1 - drifted).
    CTAs that start as slots free drift apart, and their later readers hit L2 (p, as before).
    Arrays elementwise."""
    return first_reader + (1 - first_reader) * (1 - drifted)


def describe_lockstep(first_reader, drifted) -> str:
    """The breakdown's clause for ``lockstep_share`` (scalars): '' where it adds nothing."""
    p, d = float(first_reader), float(drifted)
    if p >= 1 or d >= 1:
        return ""
    return (f"; the chance is the first reader's {formula_share(p)} + (1 - {formula_share(p)}) x {formula_share(1 - d)} of CTAs started together "
            f"(the first wave's: a co-reader's request of the same tile is pending, its L2 hit waits the same DRAM "
            f"fill: tfx.analysis.load_rounds.lockstep_share) = {formula_share(lockstep_share(p, d))}")


def rounds(shape, bits, b_k_major, warps, table=None) -> Any:
    """The dependent load rounds of one unpipelined trip of a dot of ``shape`` (BM, BN, BK) in
    ``bits``-bit operands, B K-major or not, on ``warps`` warps: the table's entry, 1 where it
    has none (arrays elementwise)."""
    if table is None:
        from tfx.analysis.triton_load_rounds import ROUNDS as table
    bm, bn, bk = shape
    if is_array(bm, bn, bk, warps):
        import numpy as np
        keys = np.stack([a.ravel() for a in np.broadcast_arrays(*(np.asarray(v) for v in (bm, bn, bk, warps)))],
                        axis=1)
        shape = np.broadcast(*(np.asarray(v) for v in (bm, bn, bk, warps))).shape
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        found = np.array([table.get((int(bits), bool(b_k_major), *map(int, u)), 1) for u in uniq], dtype=float)
        return found[inverse.ravel()].reshape(shape)
    return table.get((int(bits), bool(b_k_major), int(bm), int(bn), int(bk), int(warps)), 1)


class RoundFacts(NamedTuple):
    """The DRAM latency one dependent load waits (a pointer chase: pipeline.dram_latency_*)."""
    unloaded_ns: float
    # ((B/ns the SMs draw, ns over the unloaded latency), ...) from (0, 0), linear between
    queue: tuple


def facts(m) -> RoundFacts | None:
    """The profile's pointer-chase DRAM latency, unloaded and under load, or None where it
    states no valid curve (then a trip keeps the loaded line of pipeline_depth)."""
    lq = decode_trip.latency_queue(m)
    return RoundFacts(*lq) if lq is not None else None


def cycle_ns(n, lat, first_reader, loaded_bytes, transfer_ns, dram_bytes, r, active_units, compute_ns,
             f: load_trip.LoadTrip, d: load_trip.DramRoundTrip, rf: RoundFacts | None) -> Any:
    """One CTA's trip of an unpipelined GEMM k-loop of ``n`` load rounds (module docstring):
    T = max(K + q / T, floor) + (n - 1) (p (L0 + delay(U r D / T)) + (1 - p) lat), the first
    round the loaded round trip of pipeline_depth.unpipelined_cycle_ns (K = chain + compute +
    p base + (1 - p) lat + bytes / port, q = p slope U r D, floor = chain + compute + p idle +
    (1 - p) lat + max(transfer, bytes / port), or none without an idle round trip: all three
    from load_trip.loaded_line), each later round one dependent load's latency
    (the pointer chase's L0 and its growth with the bandwidth drawn). A trip of one round (or
    no pointer chase in the profile) is the first round alone, in closed form:
    T = max((K + sqrt(K^2 + 4 q)) / 2, floor). With later rounds both sides fall as T grows, so
    the fixed point is unique: found by bisection, on the configurations of more than one round
    only (arrays elementwise)."""
    p = first_reader
    d = load_trip.one_tile_floor(d, 1)    # one tile in flight: the floor measured so
    # the first round is pipeline_depth's unpipelined trip, from the same pieces (one source)
    k, q, floor = load_trip.loaded_line(lat, p, loaded_bytes, transfer_ns, dram_bytes, r, active_units,
                                        load_trip.LoadTrip(f.overhead_ns + compute_ns, f.port_bytes_per_ns), d)
    if floor is None:
        floor = k              # no idle round trip stated: the loaded line alone (K + q / T >= K)
    arrays = is_array(n, lat, first_reader, loaded_bytes, transfer_ns, dram_bytes, r, active_units, compute_ns)
    if not arrays:
        one = emax((k + math.sqrt(k * k + 4 * q)) / 2, floor)
        return one if rf is None or n <= 1 else _rounds_ns(n, p, lat, k, q, floor, r, active_units, dram_bytes, rf)
    import numpy as np
    n, p, lat, k, q, floor, r, active_units, dram_bytes = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (n, p, lat, k, q, floor, r, active_units, dram_bytes)))
    one = np.maximum((k + np.sqrt(k * k + 4 * q)) / 2, floor)
    later = n > 1
    if rf is None or not later.any():
        return one
    out = one.copy()
    out[later] = _rounds_ns(*(v[later] for v in (n, p, lat, k, q, floor, r, active_units, dram_bytes)), rf)
    return out


def _rounds_ns(n, p, lat, k, q, floor, r, active_units, dram_bytes, rf: RoundFacts) -> Any:
    """``cycle_ns``'s fixed point for n > 1 rounds, by bisection (scalars, or arrays of equal
    shape): the first round at T (max(K + q / T, floor)), then n - 1 dependent loads at the
    pointer chase's latency for the bandwidth c / T the SMs draw."""
    c = active_units * r * dram_bytes                  # B the SMs draw per trip time
    extra = n - 1
    lo = emax(k, floor) + extra * (p * rf.unloaded_ns + (1 - p) * lat)   # the right side at T -> infinity
    arrays = is_array(lo)

    def side(t):
        return emax(k + q / t, floor) + extra * (p * (rf.unloaded_ns + decode_trip.queue_delay_ns(c / t, rf.queue)) + (1 - p) * lat)

    hi = side(lo)                                       # side falls as t grows: the fixed point is in [lo, hi]
    for _ in range(60):
        mid = (lo + hi) / 2
        above = side(mid) > mid
        if arrays:
            lo, hi = where(above, mid, lo), where(above, hi, mid)
        elif above:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def describe(n, cycle, first_reader, lat, dram_bytes, r, active_units, rf: RoundFacts | None, fmt) -> str:
    """The breakdown's clause (scalars): the later rounds and what each waits."""
    n = float(n)
    if n <= 1 or rf is None:
        return ""
    p = float(first_reader)
    drawn = float(active_units) * float(r) * float(dram_bytes) / float(cycle)
    delay = float(decode_trip.queue_delay_ns(drawn, rf.queue))
    each = p * (rf.unloaded_ns + delay) + (1 - p) * float(lat)
    return (f"; ptxas issues the trip's loads in {format_plain(n)} dependent rounds (each group stored to shared memory "
            f"before the next leaves: tfx.analysis.load_rounds): the first is the loaded round trip, each of the "
            f"other {format_plain(n - 1)} one dependent load's latency, {formula_share(p)} x (DRAM {fmt(rf.unloaded_ns)} + "
            f"{fmt(delay)} at the {formula_rate(drawn)} the SMs draw) + {formula_share(1 - p)} x L2 {fmt(lat)} = {fmt(each)}, "
            f"{fmt((n - 1) * each)} in all")


__all__ = ["RoundFacts", "facts", "lockstep_share", "describe_lockstep", "rounds", "cycle_ns", "describe"]
