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
  too slow. On the loaded line itself the tile counts only its time through the port: the line
  was fitted with that alone subtracted (load_trip.loaded_round_trip_ns); the idle floor, fitted
  with the tile at one SM's DRAM ceiling, keeps the one-SM rate.

The L2-hit share of the trip keeps the L2 latency and its bytes at the SM's share of L2.

**The trip's chain** (``trip_chain``, ``round_ns``): the SASS of the measured Triton decode
kernels (calibration/h200/measured/decode_sass) shows a trip as one in-order instruction stream
a warp issues, plus the warps' shared-memory reads meeting at the SM's port; its closed form
from the tile's mma plans is a floor on the trip (one CTA) and on the round (r co-resident
CTAs add their port time).

**Co-resident trips** (``co_resident_wait_ns``): where a trip waits for its copies' round trip,
the r CTAs of an SM do not keep the lock step of the round: while one waits, the others run
their chains, and they queue only at the port. A closed queue (tfx.analysis.closed_queue) over
the port's per-CTA demand with the rest of the chain and the round trip as the delay; never
below the round (calibration/h200/measured/decode_trip, 2-stage trips from L2 at r = 1..4).
Works on numpy arrays of parameter values (sweeps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import load_trip, memory_parallelism
from tfx.analysis.numbers import cdiv, emax, emin, if_else, is_array, where
from tfx.hw.units import format_counted, format_time_ns as T, formula_bytes as B, formula_rate as BW, formula_frequency
from tfx.hw.units import format_percent, format_plain, format_whole, formula_slope


class StreamFacts(NamedTuple):
    port_bytes_per_ns: float        # one SM's L2 read port
    sm_dram_bytes_per_ns: float     # one SM's DRAM ceiling
    base_ns: float                  # the loaded line's intercept
    slope_ns_per_byte_ns: float     # ns more per B/ns the SMs draw
    idle_ns: float                  # the round trip one SM alone waits
    # the DRAM latency's growth with the bandwidth streamed, measured by a pointer chase:
    # ((B/ns, ns over the unloaded latency), ...) from (0, 0), linear between; None: not stated
    queue: tuple | None = None
    read_only: bool = False         # the queue measured beside a read-only stream (read_latency_queue)


QUEUE_POINTS = (("dram_latency_loaded_low_at", "dram_latency_loaded_low"),
                ("dram_latency_loaded_high_at", "dram_latency_loaded_high"),
                ("dram_latency_saturated_at", "dram_latency_saturated"))


def latency_queue(m) -> tuple | None:
    """(the unloaded pointer-chase DRAM latency, its growth under load as ((B/ns, ns over the
    unloaded latency), ...) from (0, 0)) where the profile states every point
    (``pipeline.dram_latency_*``) and they make a valid curve (``queue_is_valid``), else None.
    Shared by the streaming round trip here and tfx.analysis.load_rounds' dependent rounds."""
    unloaded = m.profile.get("pipeline.dram_latency_unloaded", None)
    points = [(m.profile.get("pipeline." + at, None), m.profile.get("pipeline." + ns, None)) for at, ns in QUEUE_POINTS]
    if unloaded is None or any(a is None or v is None for a, v in points):
        return None
    curve = ((0.0, 0.0),) + tuple((a / 1e9, v - unloaded) for a, v in points)
    return (unloaded, curve) if queue_is_valid(curve) else None


READ_QUEUE_POINTS = (("dram_read_latency_mid_at", "dram_read_latency_mid"),
                     ("dram_read_latency_high_at", "dram_read_latency_high"),
                     ("dram_read_latency_saturated_at", "dram_read_latency_saturated"))


def read_latency_queue(m) -> tuple | None:
    """``latency_queue`` under a read-only stream (``pipeline.dram_read_latency_*``): the DRAM
    latency's growth while the SMs draw reads alone, as a decode trip's K and V copies do, where
    the profile states every point and they make a valid curve, else None. A read-only stream
    queues less at the same bandwidth than a copy, whose writes turn the bus around: measured
    (calibration/h200/measured/latency_read_s16, one warp's pointer chase beside streamer CTAs)
    at 132 CTAs 400 ns at 3.40 TB/s read against 445 ns at 1.97 TB/s copied; at 264 CTAs 577 ns
    at 4.37 TB/s against 554 at 3.08."""
    unloaded = m.profile.get("pipeline.dram_latency_unloaded", None)
    points = [(m.profile.get("pipeline." + at, None), m.profile.get("pipeline." + ns, None))
              for at, ns in READ_QUEUE_POINTS]
    if unloaded is None or any(a is None or v is None for a, v in points):
        return None
    curve = ((0.0, 0.0),) + tuple((a / 1e9, v - unloaded) for a, v in points)
    return (unloaded, curve) if queue_is_valid(curve) else None


def facts(m) -> StreamFacts | None:
    """The profile's facts for the streaming round trip, or None where it lacks one (GPU only):
    the loaded DRAM line of ``load_trip.dram_facts`` with the SM's port and DRAM ceiling, and the
    DRAM latency under load where the profile states it: under a read-only stream
    (``read_latency_queue``: a decode trip's copies are reads alone, and so is what the other
    SMs draw beside them), else under a copy (``pipeline.dram_latency_*``)."""
    if m.kind != "gpu":
        return None
    d = load_trip.dram_facts(m)
    port, ceiling = (m.profile.get("pipeline.sm_load_bandwidth_per_cycle", None),
                     m.profile.get("pipeline.sm_dram_bandwidth_per_cycle", None))
    if d is None or d.idle_ns is None or None in (port, ceiling):
        return None
    read = read_latency_queue(m)
    lq = read or latency_queue(m)
    queue = lq[1] if lq is not None else None
    return StreamFacts(port * m.clock_ghz, ceiling * m.clock_ghz, d.base_ns, d.slope_ns_per_byte_ns, d.idle_ns,
                       queue, read is not None)


def queue_is_valid(curve) -> bool:
    """Whether the latency-under-load points ((0, 0), low, high, saturated as (B/ns, ns over the
    unloaded latency)) make a curve ``first_group_round_trip_ns`` can solve: bandwidths strictly
    rising from 0 (0 < low_at < high_at < saturated_at: the segments' slopes and np.interp
    divide by their differences) and delays not falling (each segment's slope >= 0: then the
    round trip falls as the trip time grows, so exactly one segment holds the fixed point)."""
    ats, delays = [a for a, _ in curve], [d for _, d in curve]
    return (all(a < b for a, b in zip(ats, ats[1:]))
            and all(a <= b for a, b in zip(delays, delays[1:])))


def queue_delay_ns(drawn, queue) -> Any:
    """ns the DRAM latency grows by while the SMs draw ``drawn`` B/ns: linear between the
    measured points of ``queue``, the last segment's slope beyond the last (arrays elementwise;
    a scalar without numpy, as the scalar analysis and load_rounds' bisection run it, in
    np.interp's arithmetic so both give the same float)."""
    (b0, d0), (b1, d1) = queue[-2], queue[-1]
    if is_array(drawn):
        import numpy as np
        x = np.asarray(drawn, dtype=float)
        bs, ds = [b for b, _ in queue], [d for _, d in queue]
        return np.where(x > b1, d1 + (x - b1) * (d1 - d0) / (b1 - b0), np.interp(x, bs, ds))
    x = float(drawn)
    if x > b1:
        return d1 + (x - b1) * (d1 - d0) / (b1 - b0)
    if x <= queue[0][0]:
        return float(queue[0][1])                      # np.interp holds the first point's value left of it
    for (lo, at_lo), (hi, at_hi) in zip(queue, queue[1:]):
        if x < hi:
            return (at_hi - at_lo) / (hi - lo) * (x - lo) + at_lo
    return float(d1)                                   # x on the last point


def first_group_round_trip_ns(waited_ns, miss, l2_latency_ns, fetch_ns, dram_bytes, r, active_units, stages,
                              f: StreamFacts) -> Any:
    """The round trip of the copy group a streaming trip waits for first (``first_wait_share``)
    when the profile states the DRAM latency under load (``f.queue``): its DRAM part is the idle
    round trip one SM waits (``f.idle_ns``) plus the latency's growth at the bandwidth all SMs
    draw (``queue_delay_ns``), its transfer ``fetch_ns``; with S-1 trips in flight,
    (S-1) T = waited + miss x (idle + delay(U r D / T)) + (1 - miss) x L2 latency + fetch.
    On the segment of the measured curve where delay = a + s x drawn this is
    (S-1) T^2 - K T - miss s U r D = 0 (K = waited + miss (idle + a) + (1 - miss) L2 + fetch),
    solved on every segment; the one whose drawn bandwidth U r D / T falls inside it is the fixed
    point (the left side grows with T and the right side falls: one crossing, ``queue_is_valid``;
    a drawn bandwidth on a shared end within rounding counts for the first segment). Returns
    (S-1) T - waited."""
    import numpy as np
    s1 = emax(stages - 1, 1)
    c = active_units * r * dram_bytes                   # B per trip time the SMs draw
    q = f.queue
    best = None
    for i, (lo, at_lo) in enumerate(q):
        # segment i: from point i to point i + 1, the last one on with the last slope
        j = min(i + 1, len(q) - 1)
        hi = q[i + 1][0] if i + 1 < len(q) else float("inf")
        slope = (q[j][1] - q[j - 1][1]) / (q[j][0] - q[j - 1][0])
        k = waited_ns + miss * (f.idle_ns + at_lo - slope * lo) + (1 - miss) * l2_latency_ns + fetch_ns
        t = (k + np.sqrt(k * k + 4 * s1 * miss * slope * c)) / (2 * s1)
        drawn = c / np.maximum(t, 1e-30)
        inside = (drawn >= lo * (1 - 1e-9)) & (drawn <= hi * (1 + 1e-9))
        best = np.where(inside, t, np.nan) if best is None else np.where(np.isnan(best) & inside, t, best)
    out = s1 * best - waited_ns
    return out if is_array(waited_ns, miss, fetch_ns, dram_bytes, r, active_units, stages) else float(out)


def round_trip_ns(waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes, l2_share_bytes_per_ns,
                  r, active_units, stages, f: StreamFacts, first_share=1) -> Any:
    """ns of one tile's round trip (issue to arrival) in a serial trip whose copies leave after
    ``waited_ns`` of the trip's chain, S-1 trips ahead (Little's law: (S-1) T = waited + round
    trip). ``miss``: the share of the trip's wait that is DRAM's (1 when any byte misses:
    tfx.analysis.memory_parallelism.trip_miss). With
    K = waited + miss x base + (1 - miss) x L2 latency + loaded bytes / the SM's port (the line
    was fitted with only the port time subtracted: load_trip.loaded_round_trip_ns), and
    q = miss x slope x U x r x DRAM bytes (r: CTAs per SM drawing DRAM, fractional in a tail
    wave: memory_parallelism.drawing_per_unit): (S-1) T^2 - K T - q = 0,
    T = (K + sqrt(K^2 + 4 (S-1) q)) / (2 (S-1)); at least the idle floor, waited + miss x idle +
    (1 - miss) x L2 latency + fetch, fetch = max(DRAM bytes / the SM's DRAM ceiling, loaded
    bytes / its port, L2 bytes / its L2 share). Returns (S-1) T - waited.

    ``first_share`` < 1 (``first_wait_share``: the trip waits for its copy groups one at a
    time) prices the group the trip waits for first: its bytes through the SM's port (and its
    L2 share), not the tile's at the SM's DRAM ceiling; the load all SMs put on DRAM keeps the
    whole tile. Where the profile states the DRAM latency under load (``f.queue``) that group's
    DRAM part is the idle round trip plus the latency's measured growth, not the GEMM k-loop's
    line (``first_group_round_trip_ns``)."""
    # load_trip's loaded round trip with the chain before the issue as its overhead: its K takes
    # the (first-waited) bytes through the port only, q the whole tile's DRAM load, and its idle
    # floor the transfer below (the DRAM ceiling and the L2 share; the first group's L2 share)
    transfer = where(first_share < 1, first_share * l2_bytes / l2_share_bytes_per_ns,
                     emax(dram_bytes / f.sm_dram_bytes_per_ns, l2_bytes / l2_share_bytes_per_ns))
    d = load_trip.DramRoundTrip(f.base_ns, f.slope_ns_per_byte_ns, f.idle_ns)
    line = load_trip.loaded_round_trip_ns(l2_latency_ns, miss, first_share * loaded_bytes, transfer, dram_bytes, r,
                                          active_units, stages, load_trip.LoadTrip(waited_ns, f.port_bytes_per_ns),
                                          d) - waited_ns
    if f.queue is None or not (is_array(first_share) or first_share < 1):
        return line
    fetch = emax(transfer, first_share * loaded_bytes / f.port_bytes_per_ns)
    first = first_group_round_trip_ns(waited_ns, miss, l2_latency_ns, fetch, dram_bytes, r, active_units, stages, f)
    return where(first_share < 1, first, line)


def first_wait_share(loop) -> Any:
    """The share of a streaming trip's global-load bytes that its first mma waits for: the
    loads whose tiles reach the trip's scores mma (``mma_path.scores``) through views, over all
    its global loads; 1 where every load feeds it (a GEMM k-loop) or none is found.

    Why: Triton's decode trip waits for its copy groups one at a time (calibration/h200/
    measured/decode_sass: the K group's wait before QK^T, the V group's after the softmax,
    before PV), so the next trip starts when K has landed; V has QK^T and the softmax to
    arrive in. Measured (calibration/h200/measured/decode_trip, one CTA a SM on 16 SMs, DRAM):
    a 2-stage trip less the 3-stage one (its chain) is 582-612 ns for a 16 KiB tile, 636-673
    for 32 KiB, 652-726 for 64 KiB: the idle round trip (557 ns) and the K half through the
    port (64-255 ns), not the whole tile at the SM's 81.2 B/ns DRAM ceiling (759-1,364 ns).
    (The one wait a trip is the one-stage binaries' reading; at 2 and 3 stages the compiled trip
    waits for both groups at its top, ``DEPBAR.LE SB0`` at the loop head, and the half tile
    stands for how little that round trip grows with the tile: 610 -> 716 ns from 16 to 64 KiB
    on 16 SMs; docs/analysis.md, decode16.)"""
    from tfx.analysis import mma_path
    scores = mma_path.scores(loop)
    ops = loop.body_ops()
    if scores is None:
        return 1

    def read_bytes(c):
        return sum(v for k, v in c.per_exec.items()
                   if isinstance(k, tuple) and k[0] == "traffic" and k[2] == "read" and k[1] != "smem"
                   and k[1] != "rmem")
    loads = {c.op.result: c for c in ops if c.op.opcode == "load" and c.op.result}
    made_by = {c.op.result: c for c in ops if c.op.result}
    fed, todo, seen = set(), scores.op.value_reads(), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in loads:
            fed.add(name)
        elif name in made_by and made_by[name].op.opcode in mma_path.VIEWS:
            todo += made_by[name].op.value_reads()
    total = sum(read_bytes(c) for c in loads.values())
    first = sum(read_bytes(loads[n]) for n in fed)
    if not fed or is_array(total, first):
        return 1 if not fed else where(total > 0, first / emax(total, 1e-30), 1)
    return first / total if total else 1


def describe(line, waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes, l2_share_bytes_per_ns,
             r, active_units, stages, f: StreamFacts, first_share=1) -> str:
    """One line for the breakdown: the round trip ``round_trip_ns`` solved, with its values."""
    waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes, l2_share_bytes_per_ns, r, active_units = (
        float(x) for x in (waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes,
                           l2_share_bytes_per_ns, r, active_units))
    first_share = float(first_share)
    s1 = max(stages - 1, 1)
    in_flight = round_trip_ns(waited_ns, miss, l2_latency_ns, dram_bytes, l2_bytes, loaded_bytes,
                              l2_share_bytes_per_ns, r, active_units, stages, f, first_share)
    trip = (waited_ns + in_flight) / s1
    drawn = active_units * r * dram_bytes / trip
    loaded = f.base_ns + f.slope_ns_per_byte_ns * drawn
    if first_share < 1:
        first_port = first_share * loaded_bytes / f.port_bytes_per_ns
        first_l2 = first_share * l2_bytes / l2_share_bytes_per_ns
        fetch = max(first_port, first_l2)
        group = (f"plus the first-waited copy group ({format_percent(first_share)} of the {B(loaded_bytes)} tile: the "
                 f"rest is waited for after the softmax) through the SM's port")
        port_text = f"{B(first_share * loaded_bytes)} / {BW(f.port_bytes_per_ns)} = {T(first_port)}"
        l2_text = f"{B(first_share * l2_bytes)} / {BW(l2_share_bytes_per_ns)} L2 share = {T(first_l2)}"
        if f.queue is not None:
            fetch_text = f"{group} and its L2 share, max({port_text} port, {l2_text}) = {T(fetch)}"
        else:
            # as the whole tile's: the loaded line takes the port time, the idle floor the transfer
            fetch_text = (f"{group}, {port_text} on the loaded line (which holds the rest of its transfer), "
                          f"at the idle floor max(port, {l2_text}) = {T(fetch)}")
    else:
        fetch = max(dram_bytes / f.sm_dram_bytes_per_ns, loaded_bytes / f.port_bytes_per_ns,
                    l2_bytes / l2_share_bytes_per_ns)
        # the loaded line was fitted with only the port time subtracted: on it the tile counts
        # its port time; the idle floor keeps the tile at one SM's rate (load_trip)
        fetch_text = (f"plus the tile through the SM's port, {B(loaded_bytes)} / {BW(f.port_bytes_per_ns)} = "
                      f"{T(loaded_bytes / f.port_bytes_per_ns)} on the loaded line (which holds the rest of its "
                      f"transfer), at the idle floor the tile at one SM's rate, max({B(dram_bytes)} / "
                      f"{BW(f.sm_dram_bytes_per_ns)} DRAM, port, L2 share) = {T(fetch)}")
    hits = f" + {format_percent(1 - miss)} x L2 {T(l2_latency_ns)}" if miss < 1 else ""
    if first_share < 1 and f.queue is not None:
        delay = queue_delay_ns(drawn, f.queue)
        dram_text = (f"the idle round trip {T(f.idle_ns)} + the DRAM latency's growth at {BW(drawn)} drawn "
                     f"{T(delay)} (a pointer chase beside a {'read-only ' if f.read_only else ''}stream, linear between the measured points) = "
                     f"{T(f.idle_ns + delay)}")
    else:
        dram_text = (f"max(idle {T(f.idle_ns)}, {T(f.base_ns)} + {formula_slope(f.slope_ns_per_byte_ns)} x "
                     f"{BW(drawn)} drawn = {T(loaded)})")
    return (f"loop at line {line}: the copies of a trip leave after {T(waited_ns)} of its chain; their round "
            f"trip waits DRAM's latency under the load all SMs put on it, {dram_text}"
            f"{' x ' + format_percent(miss) if miss < 1 else ''}{hits}, solved with the trip time "
            f"({memory_parallelism.drawing_text(r, active_units)} x {B(dram_bytes)} per trip), "
            f"{fetch_text}, not at its share of the device "
            f"(a throughput bound the copy engine keeps): {T(in_flight)}; {s1} tile(s) in flight: a trip takes "
            f"at least ({T(waited_ns)} + {T(in_flight)}) / {s1} = {T(trip)}")


# --------------------------------------------------------------------------------------------
# The trip's chain: one warp's in-order instruction stream (calibration/h200/measured/decode_sass)
#
# The SASS of the measured Triton decode kernels (Triton 3.6.0, sm_90, all 27 BLOCK_N x WARPS x
# STAGES) shows a trip as one in-order stream each warp issues, not a dataflow path: an op
# costs the warp the longer of its dependent latency and its instructions' issue, one after
# the other. The trip's bookkeeping and copies, counted in that SASS:
TRIP_BOOKKEEPING_CYCLES = 30   # DEPBAR + 14 uniform-datapath updates + the exit compare and branch, at their stall counts
COPY_ISSUE_CYCLES = 4          # one 16-byte cp.async a lane (LDGSTS) + its 64-bit address (IMAD.WIDE, 3 stall cycles)
SMEM_WORDS_PER_REDUCTION = 3   # a cross-warp reduction's LDS (its partials twice, the result once), 128 B a warp each
FRAGMENT_BYTES = 512           # one ldmatrix.x4: 32 lanes x 16 B


class ChainFacts(NamedTuple):
    """The profile's facts for the in-order chain (cycles unless stated)."""
    lat: Any                      # tfx.analysis.trip_latency.Latencies (measured)
    mma_issue: Any                # warp_mma.f16_mma_cycles: an independent mma.sync's turn on the tensor core
    sfu_issue: Any                # a warp's exp2: 32 lanes / (special f32 per SM / sub-partitions)
    port_bytes_per_cycle: Any     # the SM's shared-memory port
    clock_ghz: Any
    subpartitions: Any = 4        # the SM's sub-partitions (warp_mma facts)


def chain_facts(m) -> ChainFacts | None:
    """None where the profile lacks a fact (the term is off)."""
    from tfx.analysis import mma_layout, trip_latency
    lat = trip_latency.facts(m)
    wm = mma_layout.warp_mma_facts(m.profile)
    sfu = m.profile.get("compute.special.f32", None)
    port = m.profile.get("memory.smem.bandwidth_per_cycle", None)
    if m.kind != "gpu" or lat is None or wm is None or not sfu or not port:
        return None
    return ChainFacts(lat, wm.mma_cycles, 32 * wm.subpartitions / sfu, port, m.clock_ghz, wm.subpartitions)


class TripChain(NamedTuple):
    """One trip of a warp-mma streaming trip (cycles, one warp) and what the CTA reads."""
    mma_cycles: Any               # the mmas: fragments' latency + max(k-steps x latency, mmas x issue) + ldmatrix
    softmax_cycles: Any           # the elementwise ops, exp2s and row reductions between them
    overhead_cycles: Any          # bookkeeping, the tile wait's and the copy groups' barriers, the copies' issue
    warp_cycles: Any              # their sum (at least the compiled schedule, schedule_cycles): one warp's in-order stream
    smem_read_bytes: Any          # one warp's shared-memory reads (fragments + the reductions' partials)
    port_cycles: Any              # the CTA's reads at the port: warps x smem_read_bytes / port
    copy_port_cycles: Any         # the CTA's tile written by cp.async at the port
    clock_ghz: Any
    ns: Any                       # one CTA's trip: (warp_cycles + port_cycles) / clock (0 where it does not apply)
    issue_cycles: Any = 0         # one warp's instructions a trip, the compiled binary's (issue_insns; 0: not known)
    warps: Any = 1                # the CTA's warps
    subpartitions: Any = 4        # the SM's sub-partitions (an issue slot each)


def _reduce_cycles(per_row, warps_n, lat):
    """Triton's row reduction over an mma layout: a thread's per_row values (dependent fma),
    2 butterfly shuffles over the quad; across warps_n > 1 warps, the partials stored, a
    barrier, loaded, log2(warps_n) more shuffle rounds, stored, a barrier, loaded."""
    from tfx.analysis.numbers import ceil_log2
    local = emax(per_row - 1, 0) * lat.fma + 2 * (lat.shfl_sync + lat.fma)
    cross = 2 * (lat.bar_sync + lat.smem_load + 1) + ceil_log2(warps_n) * (lat.shfl_sync + lat.fma)
    return local + if_else(warps_n > 1, cross, 0)


def trip_chain(loop, m, warps, tile_bytes, f: ChainFacts | None, stages=None) -> TripChain | None:
    """The in-order chain of one trip of a streaming loop whose scores mma runs on the warp mma
    with every warp along N (a decode CTA: 16 padded query rows), or None where it does not
    apply (no facts, no such mma, a warpgroup mma, warps along M).

    Per warp, each op in program order (counts as the SASS has them):
    * an mma (m-tiles mt, n-tiles nt, k-steps ks of its warp tile): its first fragments'
      ldmatrix latency + max(ks x mma latency, mt nt ks mmas x their issue) + one issue cycle
      per ldmatrix.x4 (A: mt ks, Triton re-reads it from shared memory every trip; B: nt ks / 2);
      an A operand the trip computed goes through shared memory between two barriers first;
    * a row reduction: ``_reduce_cycles`` over 2 x nt values a row;
    * exp2: its values a thread x the SFU issue + the ex2 latency; any other elementwise op
      one issue cycle per value a thread (a cast packs two);
    * the trip: its bookkeeping, two barriers (the tile wait's, and between the K and V copy
      groups) and tile_bytes / (16 B x 32 lanes x warps) copies at COPY_ISSUE_CYCLES.
    The warps run in lock step (a barrier at the trip's start, in each reduction, around P)
    and their ldmatrix bursts meet at the SM's one shared-memory port: one CTA's trip is the
    warp's stream + warps x its reads / port. Measured (decode_trip, one CTA a SM, 3 stages):
    0.84-1.01 of it over the 9 BLOCK_N x WARPS.

    With ``stages`` the warp's stream is at least the compiled binary's own in-order schedule
    at that stage count (``schedule_cycles``: the campaigns' kernel at D = 128, 16 query rows),
    which the closed form undercounts by up to 17% (it leaves out ptxas' order and stalls);
    at 3 stages schedule + port is 0.95-1.16 of the chain measured from L2 (decode_sass README)."""
    if f is None:
        return None
    from tfx.analysis import mma_layout, mma_path
    from tfx.analysis.numbers import cdiv
    lat = f.lat
    ops = loop.body_ops()
    mmas = mma_path.shaped_mmas(loop)
    scores = mma_path.scores(loop)
    if scores is None:
        return None
    plans = {id(c): mma_layout.plan(c.per_exec_shape, m.inst, warps, getattr(c, "mma_bits", 16),
                                    getattr(c, "mma_chained", False)) for c in mmas}
    ps = plans[id(scores)]
    applies = (ps.path == "warp") & (ps.warps_m == 1)
    if not is_array(applies) and not applies:
        return None
    threads = 32 * warps
    m_s, n_s, _ = scores.per_exec_shape
    rows_per_thread = 2 * ps.m // 16          # two rows of each 16-row m-tile
    per_row = 2 * ps.n // (8 * ps.warps_n)    # a row's values a thread holds
    produced = set()
    mma_c = soft = reads = 0
    for c in ops:
        code = c.op.opcode
        if code in mma_path.VIEWS or code in ("load", "store", "zeros", "fill", "iota"):
            continue
        if code in ("mma", "dot") and id(c) in plans:
            p = plans[id(c)]
            mt, nt, ks = p.m // (16 * p.warps_m), p.n // (8 * p.warps_n), cdiv(p.k, p.depth)
            ldsm = mt * ks + cdiv(nt * ks, 2)
            cyc = lat.smem_load + emax(ks * lat.mma_sync, mt * nt * ks * f.mma_issue) + ldsm
            a = [o.name for o in c.op.operands if hasattr(o, "name")][:1]
            if a and a[0] in produced:
                cyc = cyc + if_else(p.warps_n > 1, 2 * lat.bar_sync + 1, 0)
            mma_c = mma_c + cyc
            reads = reads + ldsm * FRAGMENT_BYTES
        elif code == "reduce":
            soft = soft + _reduce_cycles(per_row, ps.warps_n, lat)
            reads = reads + SMEM_WORDS_PER_REDUCTION * 32 * 4 * (ps.warps_n > 1)
        else:
            elems = sum(v for k, v in c.per_exec.items() if isinstance(k, tuple) and k[0] == "flops")
            # a thread's values: the padded mma layout of the scores (or of another mma's result)
            vals = cdiv(elems * ps.m, m_s * threads)
            for q in mmas:
                pq = plans[id(q)]
                mq, nq, _ = q.per_exec_shape
                vals = where(elems == mq * nq, pq.m * pq.n // threads, vals)
            vals = emax(vals, rows_per_thread)
            if code == "exp2":
                cyc = vals * f.sfu_issue + lat.ex2
            elif code == "exp":
                cyc = vals * f.sfu_issue + lat.ex2 + lat.fma
            elif code == "cast":
                cyc = cdiv(vals, 2)
            else:
                cyc = vals
            soft = soft + cyc
        if c.op.result and code not in mma_path.VIEWS:
            produced.add(c.op.result)
    copies = cdiv(tile_bytes, 16 * threads)
    over = TRIP_BOOKKEEPING_CYCLES + 2 * lat.bar_sync + copies * COPY_ISSUE_CYCLES
    warp = mma_c + soft + over
    if stages is not None:
        warp = emax(warp, schedule_cycles(loop, warps, stages, m.isa))
    port = warps * reads / f.port_bytes_per_cycle
    copy_port = tile_bytes / f.port_bytes_per_cycle
    ns = (warp + port) / f.clock_ghz
    if is_array(applies):
        ns = where(applies, ns, 0)
    # one warp's instructions a trip, the compiled binary's (known at a stage count: issue_insns)
    insns = issue_insns(loop, warps, stages, m.isa) if stages is not None else 0
    return TripChain(mma_c, soft, over, warp, reads, port, copy_port, f.clock_ghz, ns, insns, warps,
                     f.subpartitions)


def sm_demand_cycles(chain: TripChain) -> Any:
    """Cycles one CTA-trip holds the SM's shared resources: its warps' reads and its tile's
    cp.async writes at the shared-memory port, and its warps' instructions on their
    sub-partitions' issue slots (warps / sub-partitions of them a slot, ``issue_cycles`` each),
    one after the other (``round_ns``: measured, they do not overlap)."""
    return (chain.port_cycles + chain.copy_port_cycles
            + chain.warps / chain.subpartitions * chain.issue_cycles)


def round_ns(chain: TripChain, r) -> Any:
    """ns of a round of r co-resident CTAs (each one trip): one CTA's chain + each other CTA's
    shared-memory traffic at the one port (its warps' reads + its tile's cp.async writes), and
    at least the r CTAs' demand on the SM's shared resources together: r x (reads + tile writes)
    at the port + the busiest sub-partition's instructions, ceil(r x warps / sub-partitions) x a
    warp's compiled instructions a trip (``issue_insns``), in series.

    Measured (calibration/h200/measured/decode_trip, 3 stages from L2, one trip of each of r
    CTAs a SM): BLOCK_N 32 on 8 warps (688 cycles at the port a CTA-trip, 176 instructions a
    warp) 1,163 / 1,598 / 2,079 ns at r = 2 / 3 / 4, where the chain + (r-1) x port form gives
    1,150 / 1,498 / 1,845 and the demand (r x 688 + 2r x 176) / 1.98 = 1,051 / 1,576 / 2,101;
    BLOCK_N 64 on 8 warps at r = 3 2,045 (the demand (3 x 944 + 6 x 208) / 1.98 = 2,061, the
    chain form 1,871); at 2 stages BLOCK_N 32 on 8 warps at r = 4 2,130 (the demand 2,053). On 2
    and 4 warps the demand stays under the chain form (4 warps, r = 4: 1,293 against 1,414,
    measured 1,300): it binds where a CTA's two warps share each sub-partition's issue slot (8
    warps), which the one-warp schedule leaves out (docs/analysis.md, decode17)."""
    extra = emax(r - 1, 0) * (chain.port_cycles + chain.copy_port_cycles) / chain.clock_ghz
    _, demand_cycles = round_demand(chain, r)
    return if_else(chain.ns > 0, emax(chain.ns + extra, demand_cycles / chain.clock_ghz), 0)


def round_demand(chain: TripChain, r) -> tuple:
    """The r co-resident CTAs' demand on the SM's shared resources together (``round_ns``): the
    busiest sub-partition's warps, ceil(r x warps / sub-partitions), and the cycles r x (reads +
    tile writes) at the port + those warps x a warp's compiled instructions a trip, in series."""
    rr = emax(r, 1)
    busiest = cdiv(rr * chain.warps, chain.subpartitions)
    return busiest, rr * (chain.port_cycles + chain.copy_port_cycles) + busiest * chain.issue_cycles


def describe_chain(line, chain: TripChain, r) -> str:
    """One line for the breakdown: the chain's parts with their values."""
    c = chain
    rr = float(r)
    extra = max(rr - 1, 0) * float(c.port_cycles + c.copy_port_cycles) / float(c.clock_ghz)
    closed = float(c.mma_cycles + c.softmax_cycles + c.overhead_cycles)
    schedule = (f", at least the compiled binary's own schedule {format_whole(c.warp_cycles)} cycles (decode_sass.csv "
                f"warp_schedule_cycles)" if float(c.warp_cycles) > closed else "")
    return (f"loop at line {line}: one warp issues a trip in order (decode_sass): mmas {format_whole(c.mma_cycles)} + "
            f"softmax {format_whole(c.softmax_cycles)} + bookkeeping, barriers and copies {format_whole(c.overhead_cycles)} "
            f"= {format_whole(closed)} cycles{schedule}, plus the warps' shared-memory reads at the port "
            f"{format_whole(c.port_cycles)} cycles ({B(c.smem_read_bytes)} a warp): one CTA's trip "
            f"{T(float(c.ns))} at {formula_frequency(c.clock_ghz)}"
            + (f"; {format_plain(rr)} CTAs a SM: + {format_plain(rr - 1)} x ({format_whole(c.port_cycles)} + {format_whole(c.copy_port_cycles)} "
               f"cycles of the other CTAs' reads and tile writes at the port) = {T(float(c.ns) + extra)} a round"
               + _demand_clause(c, rr, float(c.ns) + extra)
               if rr > 1 else ""))


def _demand_clause(c: TripChain, rr, chained_ns) -> str:
    """The round's clause for the r CTAs' demand on the SM (``round_ns``), where it binds."""
    if not float(c.issue_cycles):
        return ""
    busiest, cyc = round_demand(c, rr)
    busiest, cyc = int(busiest), float(cyc)
    demand = cyc / float(c.clock_ghz)
    if demand <= chained_ns:
        return ""
    return (f", at least the {format_plain(rr)} CTAs' demand on the SM: {format_plain(rr)} x "
            f"{format_whole(c.port_cycles + c.copy_port_cycles)} cycles at the port + the busiest sub-partition's "
            f"{busiest} warps x {format_whole(c.issue_cycles)} instructions (decode_sass.csv insns) = {format_whole(cyc)} cycles, "
            f"{T(demand)} a round")


QUEUE_SOLVES = 6     # fixed-point steps of the co-resident wait with its round trip (converged to < 0.1 ns)


def co_resident_wait_ns(waited_ns, lockstep_ns, chain: TripChain, r, stages, round_trip_of) -> Any:
    """ns before the copies of a trip leave that, with the round trip ``round_trip_of(waited)``
    (``round_trip_ns`` at the other arguments), gives the trip of r co-resident CTAs:
    (S-1) T = waited + round trip, T = max(the round (``round_ns``), cycle(r)) with cycle the
    closed queue (tfx.analysis.closed_queue.cycle_ns) of r CTAs over the SM's shared resources,
    demand D = ``sm_demand_cycles`` / clock a CTA-trip (a warp's reads x warps + the tile's
    writes at the port, and its warps' share of a sub-partition's issue), and the delay
    c - D + max(0, (c + RT) / (S-1) - c) (c: one CTA's chain ``waited_ns``): the rest of its
    chain, and what the round trip adds beyond the chain at S-1 tiles in flight. Solved by
    fixed point (the round trip depends on the bandwidth drawn, hence on T); a fractional r (a
    tail wave's mean) takes the cycle between those of its two counts. One CTA
    (r <= 1) and a 1-stage trip (each trip waits its own load) keep ``lockstep_ns``, the wait
    behind the round.

    Why: the lock step (the copies of all r CTAs leave after the round, then all wait) holds
    while trips are chain-bound (3 stages from L2: 907 / 1,206 / 1,503 ns at r = 1..3 for
    BLOCK_N 64, 4 warps, a round's port demand apart), but where a trip waits for its copies
    the waiting CTAs leave the port to the others (2 stages from L2, the same kernel: 1,501 /
    1,617 / 1,709 / 1,981 ns at r = 1..4; lock step c + (r-1) D + RT +16% to +32%, this -2% to
    +4%; BLOCK_N 128: 2,026 / 2,635 at r = 2, 3 against 2,115 / 2,569)."""
    import numpy as np
    from tfx.analysis import closed_queue
    d = sm_demand_cycles(chain) / chain.clock_ghz
    rnd = round_ns(chain, r)
    s1 = emax(stages - 1, 1)
    w = waited_ns
    for _ in range(QUEUE_SOLVES):
        rt = round_trip_of(w)
        delay = waited_ns - d + emax(s1 * 0, (waited_ns + rt) / s1 - waited_ns)
        lo = np.floor(r)
        queued = closed_queue.cycle_ns(lo, [d], delay)
        # a tail wave's mean r between two counts: its cycle between theirs
        queued = queued + (r - lo) * (closed_queue.cycle_ns(lo + 1, [d], delay) - queued)
        t = emax(rnd, queued)
        w = s1 * t - rt
    applies = (r > 1) & (stages >= 2) & (chain.ns > 0)     # in a sweep: only where the chain applies
    return if_else(applies, w, lockstep_ns)


def describe_queue(waited_ns, lockstep_ns, queued_ns, chain: TripChain, r, stages) -> str:
    """The clause the stream round trip's line gets where ``co_resident_wait_ns`` moved the
    copies' leaving time off the round's lock step ("" where it did not)."""
    waited_ns, lockstep_ns, queued_ns, r = float(waited_ns), float(lockstep_ns), float(queued_ns), float(r)
    if not (r > 1 and stages >= 2) or abs(queued_ns - lockstep_ns) < 1e-9:
        return ""
    d = float(sm_demand_cycles(chain)) / float(chain.clock_ghz)
    issue = (f" and its warps' instructions ({format_plain(chain.warps)} / {format_plain(chain.subpartitions)} x "
             f"{format_whole(chain.issue_cycles)} a sub-partition)" if float(chain.issue_cycles) else "")
    return (f"; the {format_plain(r)} CTAs a SM do not wait in lock step: they queue at the port (a closed queue of {format_plain(r)} over "
            f"{T(d)} a CTA-trip of reads and tile writes{issue}; delay: one CTA's chain "
            f"{T(waited_ns)} less that, plus what the round trip adds at {int(stages) - 1} tile(s) in flight; never under "
            f"the round), so the copies leave {T(queued_ns)} into the trip, not after the round's "
            f"{T(lockstep_ns)}")


# --------------------------------------------------------------------------------------------
# The unpipelined streaming trip (STAGES = 1): two dependent copy groups, the round's lock step
#
# decode_sass (Triton 3.6.0, the 9 one-stage BLOCK_N x WARPS binaries of the issue-15 decode
# kernel): every LDG of the K tile issues before the first STS waits on one (the K group is one
# dependent round of loads), the V tile's LDGs issue after the row-sum reduction's barrier and
# are waited for before PV (a second round); nothing of the next trip is in flight. The
# one-stage code is also a longer instruction stream than the pipelined one: each 16-byte copy
# is two CS2R zero-fills (the masked load's other=0), an LDG and an STS where cp.async is one
# LDGSTS, the tile's stores go between extra barriers, and ptxas stalls the register-starved
# mmas longer. The trip chain takes it from the table below (``schedule_cycles``).


# --------------------------------------------------------------------------------------------
# The compiled schedule: one warp's in-order schedule of the campaigns' decode binaries
#
# decode_sass.csv `warp_schedule_cycles` (Triton 3.6.0, sm_90, kernels/gqa_decode.tile launch 1
# at D = 128 and GROUP padded to 16 query rows, the measured binaries: cuobjdump's registers are
# the campaigns' compiled counts): one warp issuing the loop body in order, alone, each
# scoreboard wait at the measured latencies, by (BLOCK_N, WARPS, STAGES):
SCHEDULE_CYCLES = {
    (32, 2, 1): 1292, (32, 4, 1): 1095, (32, 8, 1): 996,
    (64, 2, 1): 2182, (64, 4, 1): 1533, (64, 8, 1): 1146,
    (128, 2, 1): 4015, (128, 4, 1): 2272, (128, 8, 1): 1658,
    (32, 2, 2): 1128, (32, 4, 2): 1113, (32, 8, 2): 955,
    (64, 2, 2): 1339, (64, 4, 2): 1289, (64, 8, 2): 1153,
    (128, 2, 2): 2113, (128, 4, 2): 1536, (128, 8, 2): 1460,
    (32, 2, 3): 1174, (32, 4, 3): 1167, (32, 8, 3): 1030,
    (64, 2, 3): 1343, (64, 4, 3): 1297, (64, 8, 3): 1128,
    (128, 2, 3): 2075, (128, 4, 3): 1621, (128, 8, 3): 1325,
}
SCHEDULE_D = 128                # the head size of those binaries
BINARIES_ISA = "sm_90"          # their instruction set (and ISSUE_INSNS'): another device runs other code
SCHEDULE_ROWS = 16              # their padded query rows (GROUP 4 padded to the mma's 16)
# The stage counts whose schedule floors the chain. Not 2: a 2-stage trip is its chain plus the
# copies' round trip (the SASS waits for both copy groups at the trip's top, DEPBAR.LE SB0, 0x0,
# and issues the next ones last), and that round trip is priced at the DRAM latency's growth
# under a copy (pipeline.dram_latency_*, half its traffic writes), which the read-only decode
# trips do not see: decode_trip's 2-stage trips grow 0-50 ns from 16 to 132 SMs at 1.6-2.8 TB/s
# drawn where the curve adds 90-180 ns (one CTA a SM on 132 SMs priced +8.0% median on the closed
# form, +12.7% with the schedule; on 16 SMs -2.7% and +2.2%); with the schedule on top the
# campaigns' 351 2-stage rows go +1.2% -> +2.2% signed, and the read-only chase's curve
# (calibration/h200/measured/latency_read_s16) in the copy's place does not bring them back
# (docs/analysis.md, decode16: the wait is not a function of the drawn bandwidth alone).
SCHEDULED_STAGES = (1, 3)
_SCHEDULE_FLOORS = {key: cyc for key, cyc in SCHEDULE_CYCLES.items() if key[2] in SCHEDULED_STAGES}


def schedule_cycles(loop, warps, stages, isa) -> Any:
    """One warp's compiled in-order schedule of a decode trip (``SCHEDULE_CYCLES``) for a scores
    mma of BLOCK_N keys over D = 128 on at most 16 query rows, at 1 stage or 3 and more (the
    3-stage body: more stages change only the wait's count and the ring's offsets); 0 off the
    table and at 2 stages (``SCHEDULED_STAGES``; arrays elementwise)."""
    return _compiled_binary_fact(_SCHEDULE_FLOORS, loop, warps, stages, isa)


def _compiled_binary_fact(table, loop, warps, stages, isa) -> Any:
    """The value ``table`` holds for the compiled decode binary this trip is, keyed by (BLOCK_N,
    WARPS, STAGES) with 3 standing for 3 and more stages: a scores mma of BLOCK_N keys over
    D = 128 (``SCHEDULE_D``) on at most 16 query rows (``SCHEDULE_ROWS``); 0 off the table and
    on a device whose instruction set ``isa`` (the profile's) is not the binaries'
    (``BINARIES_ISA``) (arrays elementwise)."""
    if isa != BINARIES_ISA:
        return 0
    from tfx.analysis import mma_path
    s = mma_path.scores(loop)
    if s is None:
        return 0
    m_s, n_s, k_s = s.per_exec_shape
    st = emin(stages, 3)
    out = 0
    for (bn, w, sg), value in table.items():
        hit = (n_s == bn) & (k_s == SCHEDULE_D) & (m_s <= SCHEDULE_ROWS) & (warps == w) & (st == sg)
        if is_array(hit):
            out = where(hit, value, out)
        elif hit:
            out = value
    return out


# decode_sass.csv `insns`: the instructions one warp issues a trip in the same binaries (the loop
# body's, by (BLOCK_N, WARPS, STAGES)); two warps of an 8-warp CTA share each sub-partition's issue
# slot (round_ns).
ISSUE_INSNS = {
    (32, 2, 1): 302, (32, 4, 1): 193, (32, 8, 1): 157,
    (64, 2, 1): 522, (64, 4, 1): 321, (64, 8, 1): 199,
    (128, 2, 1): 1015, (128, 4, 1): 559, (128, 8, 1): 335,
    (32, 2, 2): 271, (32, 4, 2): 191, (32, 8, 2): 164,
    (64, 2, 2): 423, (64, 4, 2): 277, (64, 8, 2): 199,
    (128, 2, 2): 757, (128, 4, 2): 450, (128, 8, 2): 317,
    (32, 2, 3): 285, (32, 4, 3): 200, (32, 8, 3): 176,
    (64, 2, 3): 433, (64, 4, 3): 288, (64, 8, 3): 208,
    (128, 2, 3): 768, (128, 4, 3): 463, (128, 8, 3): 319,
}


def issue_insns(loop, warps, stages, isa) -> Any:
    """The instructions one warp of the compiled decode binary issues a trip (``ISSUE_INSNS``)
    for a scores mma of BLOCK_N keys over D = 128 on at most 16 query rows, at its stage count
    (3 for 3 and more, as ``schedule_cycles``); 0 off the table (arrays elementwise)."""
    return _compiled_binary_fact(ISSUE_INSNS, loop, warps, stages, isa)


class UnpipelinedTrip(NamedTuple):
    """The round of an unpipelined streaming trip and its parts (ns; arrays elementwise)."""
    ns: Any                       # the round of the r co-resident CTAs (each one trip)
    chain_round: Any              # the r CTAs' chains in lock step (round_ns; the one-stage code's schedule in the chain)
    latency: Any                  # one group's wait before its bytes: the copies' issue and wait chain + the load latency
    fetch: Any                    # the groups' bytes through the SM's port and its L2 share, summed over the groups
    groups: Any                   # the dependent copy groups a trip (2: K, then V; 1 where every load feeds the scores)


def dram_chase_ns(m) -> Any:
    """The unloaded latency of a dependent DRAM load (``pipeline.dram_latency_unloaded``: a
    pointer chase, calibration/h200/measured/latency.csv), or None where the profile lacks it."""
    return m.profile.get("pipeline.dram_latency_unloaded", None) if m.kind == "gpu" else None


def unpipelined_round_ns(chain: TripChain, r, miss, l2_latency_ns, l2_bytes, loaded_bytes,
                         l2_share_bytes_per_ns, first_share, issue_ns, chase_ns, f: StreamFacts) -> UnpipelinedTrip:
    """The round of r co-resident CTAs running an unpipelined streaming trip (STAGES = 1): their
    chains in lock step (``round_ns``: one CTA's chain, the one-stage binary's schedule
    ``schedule_cycles`` at least, + each other CTA's traffic at the shared-memory port), then the
    trip's ``groups`` dependent copy groups (K's, then V's: ``first_share`` < 1 says the scores
    mma waits for only part of the tile), each the copies' issue and wait chain ``issue_ns``
    (pipeline.load_trip_overhead) and the load latency (DRAM: the unloaded pointer chase
    ``chase_ns``; L2 hits the L2 latency), and the group's bytes through the SM's port and its L2
    share (as the pipelined trip's first-waited group, ``round_trip_ns``: not at the SM's DRAM
    ceiling, a sustained rate with many tiles in flight).

    Not a transfer at the SM's share of the device: that share is a throughput bound the copy
    engine keeps (r x the tile / share a round, the round's floor in tfx.analysis.performance),
    not a wait of each trip; counting it in the wait priced 8-warp 128-key rows at two CTAs a SM
    4.84 us a trip where they run at the share's 4.08. Measured
    (calibration/h200/measured/decode_trip, one stage, from DRAM): one CTA a SM takes the same
    time on 16 SMs as on 132 (0.95-1.00 of it at 1.2-3.0 TB/s drawn), so the groups wait the
    unloaded latency; a second CTA a SM adds about its port traffic (from L2: +376 ns at BLOCK_N
    64 on 4 warps, whose port demand is 368), so the round keeps its lock step."""
    groups = if_else(first_share < 1, 2, 1)
    fetch = 0
    for share in (first_share, 1 - first_share):
        fetch = fetch + emax(share * loaded_bytes / f.port_bytes_per_ns, share * l2_bytes / l2_share_bytes_per_ns)
    latency = issue_ns + miss * chase_ns + (1 - miss) * l2_latency_ns
    chains = round_ns(chain, r)
    ns = chains + groups * latency + fetch
    if is_array(chain.ns, ns):
        ns = where(chain.ns > 0, ns, 0)
    elif not chain.ns:
        ns = 0
    return UnpipelinedTrip(ns, chains, latency, fetch, groups)


def describe_unpipelined(t: UnpipelinedTrip, r, chain: TripChain) -> str:
    """The load-wait clause of an unpipelined streaming trip (scalars)."""
    rr, g = float(r), int(t.groups)
    groups = "its K, then its V copy group" if g == 2 else "its copy group"
    return (f"the chains in lock step {T(float(t.chain_round))}, then {groups}: {g} x {T(float(t.latency))} (the copies' issue "
            f"and wait + the unloaded load latency) + the groups' bytes through the SM's port and L2 share "
            f"{T(float(t.fetch))} = "
            f"{T(float(t.ns))} a round of {format_plain(rr)} (the DRAM share is a throughput bound, not a wait)")


# --------------------------------------------------------------------------------------------
# The tail of lock-step one-stage trips: an SM's slots free together
#
# calibration/h200/measured/decode_timeline_s14 (bench/h200/measure_decode_timeline.py: each
# CTA's SM and its start and end on the global timer, the campaigns' split kernel): run13 B2
# HQ32 HKV8 SKV32768 SPLITS32 BLOCK_N128 4 warps 1 stage, 512 CTAs at 3 a SM (1.29 waves): the
# first wave's 396 CTAs end between 50.6 and 59.6 us, an SM's own three within 2.4 us of each
# other (median); the 116 tail CTAs all start between 50.8 and 53.7 us, on the slots that free
# first: 53 SMs take one, 15 two, 11 three. A tail CTA alone on its SM runs 26.0 us (median),
# three together 38.7; the last ends at 93.5 us, 40 us after the first wave, where one CTA a SM
# would end 26 us after it. run17 B32 HQ64 SKV4096 SPLITS2 (the same tile, 512 CTAs): 50 SMs
# take one, 18 two, 10 three; 49.6 / 62.5 / 75.3 us; the first wave ends 92.3-102.7 us, the last
# tail CTA at 174.2.


def packs(runs_lockstep_round, full_waves) -> Any:
    """Whether a launch's tail wave takes an SM's slots together (``packed_tail``): it follows
    one full wave and every streaming trip its CTAs run (``runs_lockstep_round``: each decode trip
    loop's bool or array, True where it runs the unpipelined lock-step round,
    ``unpipelined_round_ns``: a one-stage split loop with its one-stage masked loop, not a
    pipelined one with it) runs the lock-step round; False where none is given (arrays
    elementwise). A launch of one wave or less starts its CTAs spread over the SMs, one a SM
    before a second (decode_timeline_s14 run15: 256 CTAs at 2 a SM ran 2 on 124 SMs and 1 on 8);
    after two or more full waves the SMs no longer end in phase: a tail that packs there is
    priced slower than measured (122 decode rows of runs 1-21, median |error| 3.1% -> 3.7%)."""
    runs_lockstep_round = list(runs_lockstep_round)
    if not runs_lockstep_round:
        return False
    out = True
    for a in runs_lockstep_round:
        out = out & a if is_array(a, out) else (out and bool(a))
    return (out & (full_waves == 1)) if is_array(out, full_waves) else bool(out and full_waves == 1)


def packed_tail(packed, tail, resident, r_tail, active_tail) -> tuple:
    """(CTAs on the tail's busiest SM, SMs the tail runs on) where ``packed``, else the waves
    model's (``r_tail`` = ceil(t / SMs), ``active_tail`` = min(t, SMs)).

    Why: the r co-resident CTAs of a one-stage trip run their rounds in lock step
    (``unpipelined_round_ns``), so an SM's slots free together, and the block scheduler hands
    the waiting tail CTAs to the first slots that free: an SM whose r CTAs end first takes r of
    them. The tail ends with its busiest SM, a round of min(r, t) CTAs (their lock step), not
    one CTA's round; its t CTAs still draw DRAM together, over ceil(t / that) SMs at that many
    a SM. Measured (decode_timeline_s14, above): the 1.29-wave launches' 116 tail CTAs at most
    3 a SM (= r) on 11 and 10 SMs, which end the launch."""
    r_pack = emax(emax(r_tail, emin(tail, resident)), 1)
    active_pack = cdiv(tail, r_pack)
    if is_array(packed, r_pack, active_pack):
        return where(packed, r_pack, r_tail), where(packed, active_pack, active_tail)
    return (r_pack, active_pack) if packed else (r_tail, active_tail)


def describe_packed(r_tail, active_tail, unit="CTA") -> str:
    """The tail wave's clause where ``packed_tail`` packed it (scalars)."""
    r, n = int(r_tail), int(active_tail)
    return (f": the first wave's one-stage trips run in lock step, so an SM's slots free together and the tail "
            f"takes the first to free, {format_counted(r, unit)} a SM on {format_counted(n, 'SM')} "
            f"(calibration/h200/measured/decode_timeline_s14)")
