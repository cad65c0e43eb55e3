"""What a shallow pipeline cannot hide (docs/analysis.md, section 8, "pipeline depth").

Triton's software pipeliner (lib/Dialect/TritonGPU/Transforms/Pipeliner/: the loads of trip
i+S-1 go in a cluster made last in the loop body, after the trip's compute; the next trip
starts with ``async_wait`` for its own stage and a CTA barrier) gives a loop of S stages S-1
tiles in flight. At S = 2 the copies issued at the end of trip i are the ones trip i+1 waits
for at its top: nothing of the CTA runs while they travel except the mmas it left running
asynchronously (a warpgroup mma whose result the trip does not read: attention's PV,
tfx.analysis.mma_path.properly_async). At S = 1 nothing is prefetched at all.

The copies' **round trip** is the same in every loop (``round_trip_ns``), measured on the
GEMM k-loop (calibration/h200/measured/kloop, tfx.analysis.load_trip.round_trip_ns): the
chain that issues and waits for them (address update, cp.async issue and commit, then
cp.async.wait_group and bar.sync: ``pipeline.load_trip_overhead``), the L2 latency and the
bytes at the slower of the SM's L2 port and its share of the bandwidth. One CTA of the
2-stage GEMM k-loop, whose mma is asynchronous, waits exactly that a trip: 386 ns for 8 KiB
and 660 ns for 40 KiB against 122.2 + 200 + bytes / 128.7 = 386 and 640.

In a serial trip (attention: QK^T -> softmax -> PV, tfx.analysis.chain_overlap) the exposed
part of that round trip, ``exposed_ns`` = round trip - the CTA's asynchronous mma time, is a
**delay** of each CTA's cycle: its warps wait and the other resident CTAs' chains use the
stations meanwhile. So it joins the chain's delay in chain_overlap's closed queue (an
infinite-server station, the same mean value analysis), instead of a prefetch wait that no
other CTA could fill. Measured (calibration/h200/measured/chain/attn_trip.csv, D = 128,
64 x 32, 4 warps, 16 KiB of K and V a trip, L2-resident): 989, 1110, 1037 and 1227 ns a round
at 1-4 CTAs per SM at 2 stages against 514, 642 and 955 at 3.

An unpipelined GEMM k-loop (S = 1, ``unpipelined_cycle_ns``) issues its loads at the top of
each trip into registers, waits for all of them, stores them to shared memory and runs the mma:
one CTA's trip is the chain, the round trip and the compute in series. Measured
(calibration/h200/measured/mlp_stage1, one CTA per SM, L2-resident): 128x64x64 on 4 warps
928 ns a trip at 1 stage against 616 at 2, 64x128x64 950 against 638: the 2-stage round trip
plus the tile's compute (mma and the store to shared memory, ~270 ns). Its DRAM part is the
loaded DRAM round trip of ``load_trip.loaded_round_trip_ns`` with one tile in flight, weighted
by the chance that the trip is the first reader of one of its tiles
(``memory_parallelism.first_reader_share``).

Everything is int/float or numpy arithmetic (explore's vectorized sweeps).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from tfx.analysis import load_trip, mma_path
from tfx.analysis.numbers import emax, is_array
from tfx.hw.units import format_count, format_counted, format_percent, formula_bytes, formula_rate, verb_for
from tfx.hw.units import format_time_ns as T
from tfx.hw.units import formula_share


def round_trip_ns(m, lat, loaded_bytes, transfer_ns) -> Any:
    """ns from a trip's copy issue to the data in shared memory behind the wait and barrier:
    ``load_trip.round_trip_ns`` where the profile states the load-trip facts, else the
    latency and the transfer (arrays elementwise)."""
    f = load_trip.facts(m) if m.dispatch_single is None else None
    if f is None:
        return lat + transfer_ns
    return load_trip.round_trip_ns(lat, loaded_bytes, transfer_ns, f)


def drifted_share(positions, slots) -> Any:
    """The share of a launch's CTAs that start after its first wave, 1 - slots / positions, at
    least 0 (arrays elementwise): they start as slots free, so their trips drift apart from
    the other SMs' (``serial_copy_transfer_ns``); the first wave's start together."""
    if is_array(positions, slots):
        import numpy as np
        return np.maximum(1 - np.asarray(slots, dtype=float) / np.asarray(positions, dtype=float), 0.0)
    return max(1 - slots / positions, 0) if positions else 0


def walk_drifted_share(rounds) -> Any:
    """The share of a persistent walk's tiles (tfx.analysis.persistent_rounds.Rounds) after its
    first round, 1 - CTAS / TILES, at least 0 (arrays elementwise): a CTA starts its next tile
    as its last one ends, as a later wave's CTA starts as a slot frees (``drifted_share``)."""
    return drifted_share(rounds.tiles, rounds.ctas)


class WalkTransfer(NamedTuple):
    """A persistent walk's trip transfer (``walk_transfer``): its value and the parts the
    breakdown shows."""
    ns: Any                       # (1 - drifted) x max(share, port) + drifted x max(dram, port)
    share_ns: Any                 # the trip's bytes at the SM's L2 share (its DRAM bytes at its own rate)
    dram_ns: Any                  # its DRAM bytes alone at the SM's own DRAM rate
    port_ns: Any                  # its bytes through the SM's port
    drifted: Any                  # the walk's tiles after its first round (walk_drifted_share)
    rounds: tuple | None = None   # (CTAS, TILES)


def walk_transfer(m, loaded_bytes, share_ns, dram_ns, drifted, rounds=None) -> WalkTransfer:
    """The transfer of a persistent walk's pipelined trip, the idle floor's of its DRAM round
    trip (tfx.analysis.load_trip.chase_round_trip_ns): ``serial_copy_transfer_ns`` with the
    walk's drifted share, its first round's tiles at the slower of the SM's L2 share and port,
    the tiles after it at the slower of its own DRAM rate and port.

    Why: the walk's CTAs start their first tiles together, so their copies of a step meet at
    the L2 and travel at its share, as one wave's do; each CTA starts its next tile as its last
    one ends, and after the first round their trips fall out of phase. Measured
    (calibration/h200/measured/persist_walk_s20, each tile's start on its SM in eight 4-5-stage
    walks, six of 5120x8192x8192 and one each of 4096x8192x8192 and 1536x8192x8192, on 78-132
    CTAs; bench/h200/persist_walk_phase_s23.py reads them): the first round's tiles start
    within 0.06-0.13 trips of each other (interquartile range) with their starts' phase within
    a trip concentrated (mean resultant length 0.62-0.94), the second round's 1.1-2.6 trips
    apart with the phase spread over the whole trip (0.02-0.32; 0 is uniform), and the spread
    grows with the rounds. An SM's copies then rarely meet the others' at the L2: they arrive at
    the SM's port, as the drifted CTAs of a launch of many waves (``serial_copy_transfer_ns``).
    The L2's aggregate stays a bound of the round (the copy engine). Arrays elementwise."""
    f = load_trip.facts(m) if m.dispatch_single is None else None
    port = None if f is None else loaded_bytes / f.port_bytes_per_ns
    ns = serial_copy_transfer_ns(m, loaded_bytes, share_ns, dram_ns, drifted)
    return WalkTransfer(ns, share_ns, dram_ns, port, drifted, rounds)


def describe_walk_transfer(w: WalkTransfer) -> str:
    """The breakdown's words for ``walk_transfer`` (scalars): the mix of the two branches."""
    d = float(w.drifted)
    share, dram, port = float(w.share_ns), float(w.dram_ns), float(w.port_ns)
    first = (f"{format_counted(int(w.rounds[0]), 'CTA')}' first round of {format_count(int(w.rounds[1]))} tiles"
             if w.rounds is not None else "its first round")
    return (f"the transfer, {formula_share(1 - d)} x max({T(share)} at the L2 share, {T(port)} through the port) for "
            f"the walk's tiles in lock step ({first}) + {formula_share(d)} x max({T(dram)} of DRAM at the SM's "
            f"own rate, {T(port)}) for those after it, whose CTAs have drifted apart = {T(float(w.ns))}")


def serial_copy_transfer_ns(m, loaded_bytes, share_ns, dram_ns, drifted) -> Any:
    """ns one CTA's copies of a serial trip (attention's K and V) take to arrive after their
    latency (arrays elementwise): for the share ``drifted`` of the launch's CTAs that start
    after its first wave (``drifted_share``) the slower of the SM's share of DRAM
    (``dram_ns``) and its port (``loaded_bytes`` / pipeline.sm_load_bandwidth_per_cycle x
    clock); for the first wave's the slower of the SM's share of DRAM and L2 (``share_ns``)
    and the port. The profile without load-trip facts: ``share_ns``.

    Why: a wave's CTAs start together and run the same trips, so at 2 stages (and 1) every SM
    issues its K and V copies at the same point of the same trip and they travel together,
    each at its share of the L2. Measured (calibration/h200/measured/attn_stages: one wave of
    132 x r CTAs started together) at D = 128, 64 x 128 on 4 warps, one CTA a SM: 1,952.5 ns a
    trip at 2 stages against 1,299 at 3, 653.5 ns more, against (122.22 + 200 + 65,536 B /
    83.33 B/ns) - 374.69 ns of PV = 733.97 at the share, 456.75 at the port. CTAs that start
    as slots free drift apart, so an SM's copies rarely coincide with all the others': the
    issue-15 rows of that tile (31 waves) run 2 stages ~220 ns a trip slower than 3, 128 x 64
    on 8 warps (15.5 waves) ~217 ns against 513.5 (4 stages) in the one-wave microbenchmark.
    The L2's aggregate stays a bound of the round (the copy engine, tfx.analysis.performance.
    engine_ns), and bytes streamed from DRAM (split-KV decode) keep their DRAM share: there
    every SM streams all the time, drifted apart or not. Used for the 2-stage delay, the
    1-stage load wait and the prefetch's in-flight copies of a serial trip; the streamed round
    trip of tfx.analysis.decode_trip keeps the L2 share (docs/analysis.md section 8, "drifted
    copies": applied there too it moves the default flash_prefill schedule away from the SDPA
    rows)."""
    f = load_trip.facts(m) if m.dispatch_single is None else None
    if f is None:
        return share_ns
    port = loaded_bytes / f.port_bytes_per_ns
    return (1 - drifted) * emax(share_ns, port) + drifted * emax(dram_ns, port)


def async_mma_ns(loop, m, warps, tensor_ns: Callable[[Any], Any]) -> Any:
    """ns of one CTA's trip on mmas that run on while the trip goes on (mma_path.properly_async:
    attention's PV), which the copies' flight overlaps."""
    running = 0
    for c in loop.mma_ops():
        if c.per_exec:
            running = running + mma_path.properly_async(c, loop, m, warps) * mma_path.group_ns(
                c, loop, m, warps, tensor_ns(c))
    return running


def exposed_ns(stages, round_trip, async_ns, miss=0) -> Any:
    """ns of a trip's copy round trip that its CTA waits at S = 2: the round trip less its
    asynchronous mmas, at least 0, for the share of its bytes that hit L2 (1 - ``miss``);
    0 at other depths (S >= 3 keeps a whole trip more in hand, Little's law in
    tfx.analysis.performance; S = 1 waits in lock step, tfx.analysis.mma_path.
    unpipelined_wait). Arrays elementwise.

    Why only the L2 share: the delay is measured on L2-resident copies (attn_trip.csv). Trips
    that stream from DRAM (split-KV decode) keep the Little's-law prefetch of
    tfx.analysis.performance: measured 2-stage decode kernels (calibration/h200/measured/
    attention_triton_decode.csv, one 64 KiB K and V tile in flight a CTA) reach ~4 TB/s, which
    a DRAM round trip in series with the chain cannot (as load_trip's loaded DRAM round trip
    overshoots pipelined decode trips, docs/analysis.md)."""
    wait = emax(round_trip - async_ns, 0) * (1 - miss)
    if is_array(stages, wait):
        import numpy as np
        return np.where(np.asarray(stages) == 2, wait, 0.0)
    return wait if stages == 2 else 0


def fill_bytes_per_ns(m) -> Any:
    """B/ns a drifted CTA's 2-stage wait pays for its trip's copies beyond the latency PV hides
    (``pipeline.drifted_fill_bandwidth_per_cycle`` x the clock), or None where the profile
    states none (then the drifted CTAs keep the round trip at the port, ``exposed_ns``)."""
    per_cycle = m.profile.get("pipeline.drifted_fill_bandwidth_per_cycle", None) if m.kind == "gpu" else None
    return None if per_cycle is None else per_cycle * m.clock_ghz


def drifted_exposed_ns(stages, lead_ns, async_ns, loaded_bytes, fill, miss=0) -> Any:
    """ns of a 2-stage serial trip's copies that a CTA started after the launch's first wave
    waits (arrays elementwise): the copies' lead (the issue-and-wait chain and the latency,
    ``round_trip_ns`` of no bytes) where the mmas left running (``async_ns``: attention's PV)
    do not cover it, then the trip's bytes at ``fill`` B/ns (``fill_bytes_per_ns``), for the
    share of its bytes that hit L2 (1 - ``miss``); 0 at other depths.

    Why: measured (calibration/h200/measured/attn_trip_s13, the drift condition: 8 waves of
    L2-resident trips, CTAs started as slots free, one CTA a SM) a 2-stage trip takes 309 ns
    more than its 3-stage twin at 64 x 128 on 4 warps (64 KiB of K and V, PV 374.69 ns), 154 at
    128 x 64 on 8 (32 KiB), 294 at 128 x 128 on 8 (64 KiB, PV twice as long): the wait goes with
    the bytes (212-223 B/ns), not with the round trip less PV (456.75, 200 and 0 ns at the
    port), and a 2 x longer PV does not shorten it. Every one of these PVs outlasts the lead
    (122.22 + 200 ns), so only the bytes are left; a tile whose PV is shorter than the lead
    (BLOCK_N = 32) waits the rest of the lead too."""
    wait = (emax(lead_ns - async_ns, 0) + loaded_bytes / fill) * (1 - miss)
    if is_array(stages, wait):
        import numpy as np
        return np.where(np.asarray(stages) == 2, wait, 0.0)
    return wait if stages == 2 else 0


def unpipelined_cycle_ns(lat, first_reader, loaded_bytes, transfer_ns, dram_bytes, r, active_units, compute_ns,
                         f: load_trip.LoadTrip, d: load_trip.DramRoundTrip) -> Any:
    """One CTA's trip of an unpipelined GEMM k-loop (S = 1): the issue-and-wait chain, the
    round trip of its tiles and its compute (mma, stores to shared memory) in series. The
    round trip waits DRAM with the chance ``first_reader`` (memory_parallelism.
    first_reader_share), else L2 (``lat``); its DRAM part is the loaded line, solved with the
    whole trip as the period since a CTA keeps one tile in flight a trip (r CTAs per SM on
    ``active_units`` SMs draw r x SMs x ``dram_bytes`` per trip):
    T = (K + sqrt(K^2 + 4 p slope U r D)) / 2, K = chain + compute + p base + (1 - p) lat +
    bytes / port (the loaded line holds the rest of the transfer: load_trip.loaded_round_trip_ns),
    at least chain + compute + p idle + (1 - p) lat + max(transfer, bytes / port)
    (load_trip.loaded_round_trip_ns with S - 1 = 1). Arrays elementwise."""
    return load_trip.loaded_round_trip_ns(lat, first_reader, loaded_bytes, transfer_ns, dram_bytes, r, active_units,
                                          1, load_trip.LoadTrip(f.overhead_ns + compute_ns, f.port_bytes_per_ns), d)


def describe_unpipelined(line, first_reader, loaded_bytes, dram_bytes, transfer_ns, compute_ns, cycle_ns, r,
                         drawing, active_units, f: load_trip.LoadTrip, fmt) -> str:
    """The breakdown's line of an unpipelined GEMM k-loop (scalars)."""
    port = loaded_bytes / f.port_bytes_per_ns
    wait = cycle_ns - f.overhead_ns - compute_ns
    return (f"line {line}: STAGES = 1: a trip loads its {formula_bytes(loaded_bytes)}, waits for them, then computes: "
            f"{fmt(f.overhead_ns)} of chain + {fmt(compute_ns)} of compute + {fmt(wait)} of round trip (the loaded "
            f"DRAM round trip with the chance {format_percent(first_reader)} that the trip waits for DRAM, "
            f"{formula_bytes(dram_bytes)} a trip from DRAM drawn by {drawing}, else L2; its bytes "
            f"{formula_bytes(loaded_bytes)} / {formula_rate(f.port_bytes_per_ns)} = {fmt(port)} through the port on the loaded line, at least the idle "
            f"round trip with max({fmt(transfer_ns)}, {fmt(port)})) = {fmt(cycle_ns)} a trip; {format_counted(int(r), 'CTA')} per SM "
            f"{verb_for(int(r), 'overlap')} " + ("its own" if int(r) == 1 else "theirs"))


def drift_text(drifted) -> str:
    """The breakdown's words for ``serial_copy_transfer_ns``'s split (a scalar share)."""
    d = float(drifted)
    if d <= 0:
        return "bytes at the slower of the SM's L2 share and port: one wave, its CTAs in step"
    return (f"bytes at the SM's port for the {format_percent(d)} of CTAs started after the first wave, which drift apart, "
            f"at the slower of its L2 share and port for the first wave's")


def detail(line, round_trip, async_ns, miss, exposed, resident, chain_round, round_ns, fmt, adds, trips,
           drifted=0, split=None) -> str:
    """The breakdown's text of a 2-stage serial loop's exposed round trip (scalars). ``split``:
    (first wave's exposed ns, drifted CTAs' exposed ns, lead ns, bytes, fill B/ns) where the
    drifted CTAs pay ``drifted_exposed_ns``."""
    hit = 1 - float(miss)
    share = "" if hit == 1 else f" x {formula_share(hit)} of its bytes from L2"
    if split is not None:
        first, late, lead, loaded, fill = (float(x) for x in split)
        d = float(drifted)
        how = (f"the first wave's CTAs, in step, (round trip {fmt(round_trip)} (issue and wait chain + latency + "
               f"bytes at the slower of the SM's L2 share and port) - the asynchronous mma the flight overlaps "
               f"{fmt(async_ns)}){share} = {fmt(first)}; the {format_percent(d)} started after it, drifted apart, "
               f"(max(lead {fmt(lead)} (issue and wait chain + latency) - {fmt(async_ns)}, 0) + "
               f"{formula_bytes(loaded)} / {formula_rate(fill)} at the drifted fill rate){share} = {fmt(late)}: "
               f"{formula_share(1 - d)} x {fmt(first)} + {formula_share(d)} x {fmt(late)}")
        return (f"loop at line {line}: STAGES = 2, the copies issued at the end of a trip are the ones the next "
                f"trip waits for: {how} = {fmt(exposed)} a trip, a delay in "
                f"each CTA's chain that the other {int(resident) - 1} resident CTAs' chains fill (the closed queue "
                f"with it: {fmt(chain_round)} -> {fmt(round_ns)} a round); adds {fmt(adds)} over "
                f"{format_counted(trips, 'trip')} a wave (included in the waves above)")
    return (f"loop at line {line}: STAGES = 2, the copies issued at the end of a trip are the ones the next "
            f"trip waits for: (round trip {fmt(round_trip)} (issue and wait chain + latency + "
            f"{drift_text(drifted)}) - the "
            f"asynchronous mma the flight overlaps {fmt(async_ns)}){share} = {fmt(exposed)} a trip, a delay in "
            f"each CTA's chain that the other {int(resident) - 1} resident CTAs' chains fill (the closed queue "
            f"with it: {fmt(chain_round)} -> {fmt(round_ns)} a round); adds {fmt(adds)} over "
            f"{format_counted(trips, 'trip')} a wave (included in the waves above)")
