"""One CTA's pipelined load trip on a GPU (docs/analysis.md, section 8, "load trip").

A software-pipelined k-loop (Triton: cp.async copies S-1 trips ahead, one barrier and one mma
per trip) cannot run a trip faster than its own chain: wait for the stage, barrier, issue the
mma, update the addresses, issue the next copies (``pipeline.load_trip_overhead``), plus the
trip's bytes through the SM's L2 read port (``pipeline.sm_load_bandwidth_per_cycle``).
Measured on the H200 with one CTA alone on the GPU (bench/h200/measure_kloop.py,
calibration/h200/measured/kloop): from 3 stages on, more stages no longer shorten a trip, so
the trip is bound by that chain, not by the memory latency. Co-resident CTAs overlap their
chains but share the port: r of them need at least r x bytes / port per round.

**Narrow copies.** Triton copies a [R, C] tile with one vector of min(16 B, R x C / threads
elements) a thread (its coalescing pass: ``perThread = min(128 bits, max(elements / threads, 1))``),
and a cp.async of 16 bytes is ``cp.async.cg`` (SASS LDGSTS.E.BYPASS.128, bypasses L1) while a
narrower one can only be ``cp.async.ca`` (LDGSTS.E.64 / .E: allocates the line in L1; PTX
allows .cg at 16 bytes alone). Triton 3.6.0's SASS of gemm 32x32x32 on 8 warps (8 B a thread)
has LDGSTS.E.64, on 2 and 4 warps LDGSTS.E.BYPASS.128 (bench/h200/measure_l2_draw.py --cpu).
Those narrow copies do not ride the port's byte rate: measured with 6 CTAs of 32x32x32 on 8
warps per SM, every copy 8 B a thread, every byte from L2 (calibration/h200/measured/
mlp_l2_stage1, 3 stages: 798.4 ns a round for 6 x 16 warp-wide copies), each warp-wide narrow
copy holds the SM's load path 8.3 ns (``pipeline.narrow_copy_cycles`` = 16.5 cycles), whatever
its bytes: 31 B/ns per SM for 8-byte copies against 128.7 for 16-byte ones. So r CTAs need
r x (wide bytes / port + narrow copies x 8.3 ns) per round (``port_ns``); one CTA alone keeps
its measured chain (192 ns a trip for that tile, not 122 + 16 x 8.3).

**Short rows.** Nor do 16-byte copies of short rows ride the byte rate. Measured with every
byte from L2 (calibration/h200/measured/l2_draw, bench/h200/measure_l2_draw.py: saturated
rounds over r x the warp-wide copies of a CTA's trip), k-loops whose tile rows are 64 bytes
(BK = 32 bf16) cost 7.1-8.8 ns per warp-wide copy whatever its width: 16-byte copies
(32x32x32 on 1, 2, 4 warps at 16, 16, 12 CTAs per SM: 7.06, 7.27, 8.55 ns), 8-byte ones
(32x32x32 on 8 warps, 6 CTAs: 8.62) and 4-byte ones (16x16x32 on 8 warps, 8 CTAs: 7.82).
A warp-wide 16-byte copy of 64-byte rows covers 8 rows, each its own half line, where the
port's byte rate (128.7 B/ns) would take 512 / 128.7 = 3.98 ns; rows of 128 bytes and more
come near the byte rate (64x128x64 on 4 warps: 4.63 ns a copy, 110.6 B/ns). So a 16-byte copy
of a tile whose contiguous rows are at most ``SHORT_ROW_BYTES`` holds the load path
``short_row_copy_ns`` (``pipeline.short_row_copy_cycles`` = 14.0 cycles = 7.06 ns, the
fastest of those saturated rounds: a floor claims no more than the load path always takes;
4-8-warp CTAs of the same tiles took up to 8.9 ns): r x (long-row bytes / port + narrow
copies x 8.3 ns + short-row copies x 7.06 ns) per round. Not for the unpipelined loads below,
whose 16-byte price was measured on 64-byte rows already.

**Shorter rows.** The 7.06 ns is a copy of 64-byte rows: 512 B over 8 rows, each in its own
128-byte line. L1TEX looks up at most 4 lines ("4 sets x 4 sectors") a wavefront and sends a
request the tag stage cannot resolve in one as several wavefronts in series (NVIDIA's Nsight
Compute forum answers: "The L1 tag stage can resolve 4 sets x 4 sectors per cycle"; "If not all
cache lines or sectors can be accessed in a single wavefront, multiple wavefronts are created
and sent for processing one by one"), and the L2 sees one request a line: the copy's cost goes
with its lines, not its bytes or sectors (8 lines and 16 sectors at 64 B; a 128-byte row's copy,
4 lines and 16 sectors, comes near the byte rate). So a 16-byte copy of rows of R <= 64 bytes
touches 512 / R lines and holds the load path ``short_row_copy_ns`` x (512 / R) / 8: twice the
measured copy at R = 32 (BK = 16 bf16, or BN = 16 of a row-major B), 14.14 ns
(``TripCopies.short_lines``; the measured copy's own lines give back 7.06 ns).

**Unpipelined loads.** At 1 stage Triton issues no cp.async: each thread loads its vector into
registers (ld.global, allocating in L1) and stores it to shared memory. Their SM's load path is
slower still, per warp-wide load: 11.0 ns for 16 bytes a thread (``pipeline.sync_load_cycles``,
mlp_l2_stage1 32x32x32 on 2 warps at 12 CTAs per SM: 1057.1 ns a round / 96 loads; 46.5 B/ns)
and 7.8 ns for 8 bytes (``pipeline.sync_narrow_load_cycles``, 32x32x32 on 8 warps at 8 CTAs:
995.1 / 128); the mixed 16x32x32 on 4 warps (A 8, B 16 B a thread) checks them: 8 x (4 x 7.77
+ 4 x 11.01) = 600.9 ns against 599.0 measured at 8 CTAs. So r unpipelined CTAs need r x
(loads x their ns) a round (``floor_ns`` at stages 1), whatever their chains overlap.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from tfx.analysis.numbers import emax, is_array, where
from tfx.hw.units import format_counted, format_percent, format_time_ns as T, formula_bytes as B, formula_rate as BW, verb_for
from tfx.hw.units import format_plain, formula_share, formula_slope


WIDE_COPY_BYTES = 16            # the widest vector a thread copies: cp.async.cg's only size
NARROWEST_COPY_BYTES = 4        # cp.async copies 4, 8 or 16 bytes (PTX ISA, cp.async)
SHORT_ROW_BYTES = 64            # rows this short cost a copy instruction, not bytes (l2_draw, BK = 32 bf16)
WARP_COPY_BYTES = 32 * WIDE_COPY_BYTES  # one warp-wide 16-byte copy: 512 B
# lines of the measured short-row copy (l2_draw's 64-byte rows): 512 / 64 = 8, its price's unit
SHORT_ROW_COPY_LINES = WARP_COPY_BYTES // SHORT_ROW_BYTES


class LoadTrip(NamedTuple):
    overhead_ns: float          # one CTA's chain beyond its bytes
    port_bytes_per_ns: float    # one SM's L2 read port
    narrow_copy_ns: float | None = None  # one warp-wide copy of < 16 B a thread on the SM's load path
    sync_load_ns: float | None = None    # one warp-wide unpipelined load of 16 B a thread
    sync_narrow_load_ns: float | None = None  # ... of 4-8 B a thread
    short_row_copy_ns: float | None = None    # one warp-wide 16-byte copy of rows <= SHORT_ROW_BYTES
    # one CTA's own chain and port where its k-loop steps its pointers (kloop_step), for the
    # floor of one CTA's trip (``floor_ns``); None: overhead_ns and port_bytes_per_ns
    stepped_overhead_ns: float | None = None
    stepped_port_bytes_per_ns: float | None = None
    # one warp-wide unpipelined load of 16 B a thread of rows longer than SHORT_ROW_BYTES (whole
    # lines); None: sync_load_ns, the 64-byte rows' price, for every row
    sync_line_load_ns: float | None = None

    @property
    def own_chain_ns(self) -> float:
        """One CTA's own chain a trip: the stepped loop's where the profile states it."""
        return self.overhead_ns if self.stepped_overhead_ns is None else self.stepped_overhead_ns

    @property
    def own_port_bytes_per_ns(self) -> float:
        """One CTA's own port: the stepped loop's where the profile states it."""
        return self.port_bytes_per_ns if self.stepped_port_bytes_per_ns is None else self.stepped_port_bytes_per_ns

    def own_trip_ns(self, loaded_bytes) -> Any:
        """One CTA's trip alone: its own chain plus its bytes through its own port."""
        return self.own_chain_ns + loaded_bytes / self.own_port_bytes_per_ns


class TripCopies(NamedTuple):
    """One CTA's copies in a trip: the bytes and warp-wide instructions of those under 16 B a
    thread (4 or 8), the warp-wide instructions of the 16-byte ones, and of those the bytes,
    instructions and 128-byte lines (one a row) whose tile rows are at most ``SHORT_ROW_BYTES``
    long."""
    narrow_bytes: Any = 0
    narrow_instructions: Any = 0
    wide_instructions: Any = 0
    short_bytes: Any = 0
    short_instructions: Any = 0
    short_lines: Any = 0

    def __add__(self, other):
        return TripCopies(*(a + b for a, b in zip(self, other)))


def facts(m) -> LoadTrip | None:
    """The profile's load-trip facts, or None where it states none (then no floor)."""
    cycles = m.profile.get("pipeline.load_trip_overhead", None)
    per_cycle = m.profile.get("pipeline.sm_load_bandwidth_per_cycle", None)
    if cycles is None or per_cycle is None or m.kind != "gpu":
        return None
    per_thread = m.codegen.per_thread_copies

    def ns(key):
        # per-thread copy instructions are the code generator's (tfx.analysis.codegen): TMA has none
        c = m.profile.get(f"pipeline.{key}", None) if per_thread else None
        return None if c is None else c / m.clock_ghz
    # a Triton k-loop steps its pointers (a_ptrs += BK * stride): its own chain and port were
    # measured on that loop (stepped_*); the round trips keep load_trip_overhead, with which the
    # DRAM and L2 round-trip facts were fitted
    stepped = m.profile.get("pipeline.stepped_trip_overhead", None) if per_thread else None
    stepped_port = m.profile.get("pipeline.stepped_load_bandwidth_per_cycle", None) if per_thread else None
    both = stepped is not None and stepped_port is not None     # the pair or neither
    return LoadTrip(cycles / m.clock_ghz, per_cycle * m.clock_ghz, ns("narrow_copy_cycles"),
                    ns("sync_load_cycles"), ns("sync_narrow_load_cycles"), ns("short_row_copy_cycles"),
                    stepped / m.clock_ghz if both else None, stepped_port * m.clock_ghz if both else None,
                    ns("sync_line_load_cycles"))


def copy_width_bytes(tile_bytes, threads, elem_bytes) -> Any:
    """Bytes one thread copies per instruction of a tile of ``tile_bytes``: Triton's vector,
    max(elements // threads, 1) elements, at most 16 bytes (arrays elementwise)."""
    if is_array(tile_bytes, threads, elem_bytes):
        import numpy as np
        per_thread = np.maximum(np.floor_divide(np.asarray(tile_bytes) // elem_bytes, threads), 1)
        return np.minimum(per_thread * elem_bytes, WIDE_COPY_BYTES)
    per_thread = max(int(tile_bytes // elem_bytes) // int(threads), 1)
    return min(per_thread * elem_bytes, WIDE_COPY_BYTES)


def narrow_copies(tile_bytes, threads, elem_bytes) -> tuple[Any, Any]:
    """(bytes, warp-wide instructions) of a tile's copy where each thread copies 4 or 8 bytes at
    a time (cp.async.ca); (0, 0) for a tile copied in 16-byte vectors, and for one under 4 bytes
    a thread, which is no cp.async (Triton loads it synchronously; not measured here).
    Instructions: ceil(tile bytes / (threads x width)) per thread, once per warp (arrays
    elementwise)."""
    return _narrow_copies(tile_bytes, threads, copy_width_bytes(tile_bytes, threads, elem_bytes))


def _narrow_copies(tile_bytes, threads, width) -> tuple[Any, Any]:
    """``narrow_copies`` for a copy ``width`` already chosen (trip_copies needs it too)."""
    if is_array(tile_bytes, threads, width):
        import numpy as np
        per_thread = np.ceil(np.asarray(tile_bytes) / (np.asarray(threads) * width))
        narrow = (np.asarray(width) < WIDE_COPY_BYTES) & (np.asarray(width) >= NARROWEST_COPY_BYTES)
        return (np.where(narrow, tile_bytes, 0), np.where(narrow, per_thread * np.asarray(threads) / 32, 0))
    if width >= WIDE_COPY_BYTES or width < NARROWEST_COPY_BYTES or not tile_bytes:
        return 0, 0
    return tile_bytes, math.ceil(tile_bytes / (threads * width)) * threads / 32


def trip_copies(tile_bytes, threads, elem_bytes, row_bytes=None) -> TripCopies:
    """A tile's copy as ``TripCopies``: ``narrow_copies`` and, for a tile copied 16 B a thread,
    its warp-wide instructions ceil(tile bytes / (threads x 16)) x warps, counted again as
    short-row copies where the tile's contiguous rows (``row_bytes``; None: unknown, long)
    are at most ``SHORT_ROW_BYTES``, each touching 512 / row bytes lines (a row its own line;
    rows under 16 B count as 16, the copy's vector) (arrays elementwise)."""
    width = copy_width_bytes(tile_bytes, threads, elem_bytes)
    nb, ni = _narrow_copies(tile_bytes, threads, width)
    if is_array(tile_bytes, threads, width, row_bytes):
        import numpy as np
        per_thread = np.ceil(np.asarray(tile_bytes) / (np.asarray(threads) * WIDE_COPY_BYTES))
        wide = np.where(np.asarray(width) >= WIDE_COPY_BYTES, per_thread * np.asarray(threads) / 32, 0)
        if row_bytes is None:
            return TripCopies(nb, ni, wide)
        short = (np.asarray(row_bytes) <= SHORT_ROW_BYTES) & (wide > 0)
        lines = wide * WARP_COPY_BYTES / np.maximum(np.asarray(row_bytes, dtype=float), WIDE_COPY_BYTES)
        return TripCopies(nb, ni, wide, np.where(short, tile_bytes, 0), np.where(short, wide, 0),
                          np.where(short, lines, 0))
    wide = math.ceil(tile_bytes / (threads * WIDE_COPY_BYTES)) * threads / 32 if width >= WIDE_COPY_BYTES else 0
    if row_bytes is not None and row_bytes <= SHORT_ROW_BYTES and wide:
        return TripCopies(nb, ni, wide, tile_bytes, wide, wide * WARP_COPY_BYTES / max(row_bytes, WIDE_COPY_BYTES))
    return TripCopies(nb, ni, wide)


def sync_load_ns(copies: TripCopies, f: LoadTrip) -> Any:
    """ns of one CTA's unpipelined trip on the SM's load path (its loads into registers), or 0
    where the profile states no such fact."""
    if f.sync_load_ns is None or f.sync_narrow_load_ns is None:
        return 0
    short, long = _sync_split(copies, f)
    return (short * f.sync_load_ns + long * (f.sync_line_load_ns or 0)
            + copies.narrow_instructions * f.sync_narrow_load_ns)


def _sync_split(copies: TripCopies, f: LoadTrip):
    """(16-byte loads at the 64-byte rows' price, 16-byte loads of whole lines): every 16-byte
    load at ``sync_load_ns`` where the profile states no whole-line price."""
    if f.sync_line_load_ns is None:
        return copies.wide_instructions, 0
    return copies.short_instructions, copies.wide_instructions - copies.short_instructions


def short_line_ns(f: LoadTrip) -> float:
    """ns one line of a short-row copy holds the load path: the measured copy's
    ``short_row_copy_ns`` over its ``SHORT_ROW_COPY_LINES`` (8) lines."""
    return f.short_row_copy_ns / SHORT_ROW_COPY_LINES


def port_ns(loaded_bytes, narrow_bytes, narrow_instructions, f: LoadTrip, short_bytes=0,
            short_lines=0) -> Any:
    """ns of one CTA's trip on the SM's load path, which co-resident CTAs share: its 16-byte
    copies' bytes through the port, its narrow copies at ``narrow_copy_ns`` each and the lines
    of its 16-byte copies of short rows at ``short_line_ns`` each (``short_row_copy_ns`` a copy
    of 64-byte rows; bytes through the port where the profile states no such fact)."""
    if f.narrow_copy_ns is None:
        narrow_bytes, narrow_instructions = 0, 0
    if f.short_row_copy_ns is None:
        return (loaded_bytes - narrow_bytes) / f.port_bytes_per_ns + narrow_instructions * (f.narrow_copy_ns or 0)
    return ((loaded_bytes - narrow_bytes - short_bytes) / f.port_bytes_per_ns
            + narrow_instructions * (f.narrow_copy_ns or 0) + short_lines * short_line_ns(f))


def copies_port_ns(loaded_bytes, copies: TripCopies, f: LoadTrip) -> Any:
    """``port_ns`` of one CTA's ``TripCopies``."""
    return port_ns(loaded_bytes, copies.narrow_bytes, copies.narrow_instructions, f, copies.short_bytes,
                   copies.short_lines)


def applies(loop) -> bool:
    """The floor is measured on a GEMM k-loop: a body with an mma, none of them chained to
    another (attention's trip is one serial chain of two mmas and a softmax, priced by its
    own terms)."""
    mmas = list(loop.mma_ops())
    return bool(mmas) and not any(getattr(x, "mma_chained", False) for x in mmas)


def streams(loop) -> bool:
    """A loop that loads from global memory: its loads make a round trip through L2/DRAM
    whatever the trip computes, so their loaded DRAM round trip (``loaded_round_trip_ns``)
    holds for it, not only for the GEMM k-loops whose trip floor ``applies`` to."""
    return any(loop.load_ops())


def floor_ns(loaded_bytes, r, stages, f: LoadTrip, copies: TripCopies = TripCopies()) -> Any:
    """ns one round of r co-resident positions takes at least: one position's chain
    (overhead + its bytes through the port) or the r positions' trips on the SM's load path
    (``copies_port_ns``: narrow and short-row copies per instruction), whichever is longer; for an unpipelined loop (stages < 2) the
    r positions' loads on the load path (``sync_load_ns``: their chains are the unpipelined
    trip's); 0 for a loop that loads nothing."""
    one = f.own_trip_ns(loaded_bytes)
    shared = r * copies_port_ns(loaded_bytes, copies, f)
    t = emax(one, shared)
    sync = r * sync_load_ns(copies, f)
    if is_array(loaded_bytes, stages, t, sync):
        import numpy as np
        return np.where(np.asarray(loaded_bytes) > 0, np.where(np.asarray(stages) >= 2, t, sync), 0)
    if not loaded_bytes:
        return 0
    return t if stages >= 2 else sync


def round_trip_ns(lat, loaded_bytes, transfer_ns, f: LoadTrip) -> Any:
    """One tile load's round trip in the pipeline (Little's law: S-1 of them in flight): the
    trip's chain that issues it (overhead), the memory latency, and its bytes at the slower
    of the SM's port and the unit's share of L2/DRAM. Measured: one CTA with one tile in
    flight (2 stages) takes ~330 ns + bytes / port from L2 (calibration/h200/measured/kloop:
    386 ns for 8 KB, 660 ns for 40 KB), i.e. the chain, the L2 latency and the bytes in
    series. A synchronous warp mma adds nothing measurable: its 2-stage trip (16x64x64,
    10 KB) took 391 ns, the warpgroup mma's (128x32x32, 10 KB) 430 ns."""
    return f.overhead_ns + lat + emax(transfer_ns, loaded_bytes / f.port_bytes_per_ns)


class DramRoundTrip(NamedTuple):
    base_ns: float              # the loaded line's intercept
    slope_ns_per_byte_ns: float  # ns more per B/ns of DRAM bandwidth the SMs draw
    idle_ns: float | None = None  # the round trip with no other traffic: the line holds above it
    idle_one_tile_ns: float | None = None  # ... with one tile in flight: the floor of a k-loop of 1-2
                                           # stages (one_tile_floor) and of a persistent walk whose tiles
                                           # queue at the load path (load_queue)


def dram_facts(m) -> DramRoundTrip | None:
    """The loaded DRAM round trip of a pipelined tile load, or None (then the one latency)."""
    base = m.profile.get("pipeline.dram_round_trip_unloaded", None)
    at_copy = m.profile.get("pipeline.dram_round_trip_at_copy_bandwidth", None)
    if base is None or at_copy is None or not m.dram_bw_device:
        return None
    return DramRoundTrip(base, (at_copy - base) / m.dram_bw_device,
                         m.profile.get("pipeline.dram_round_trip_idle", None),
                         m.profile.get("pipeline.dram_round_trip_idle_one_tile", None))


def stream_facts(m, d: DramRoundTrip | None, share) -> DramRoundTrip | None:
    """The loaded line of a k-loop whose DRAM bytes are a share ``share`` weight stream (every
    byte read by one CTA of the launch, its rows continued by the neighbouring CTA's: B of a
    small-M GEMM, ``tfx.analysis.performance._weight_stream_shares``): base and slope mixed
    toward the stream's own line by that share, ``base + share x (stream base - base)`` and
    likewise the slope; ``d`` where the profile states no stream line or the share is 0.

    The two lines were measured on two kinds of launch (docs/analysis.md, "A weight stream's
    round trip"): kloop's ``dram`` rows (``dram_round_trip_unloaded``) read each CTA's own A
    rows in BK-wide pieces 32 KB apart, stream_depth's (``dram_round_trip_stream_unloaded``)
    the small-M k-loop itself, B read whole across CTAs: 433 ns + 105 ns per TB/s against 205
    + 325. *Worked example*: every DRAM byte a stream's (share 1): base 433 ns, slope (878 -
    433) / 4,238.4 B/ns = 0.1050 ns per B/ns; half (share 0.5): 205 + 0.5 x 228 = 319 ns and
    0.3249 + 0.5 x (0.1050 - 0.3249) = 0.2150 ns per B/ns. Arrays elementwise."""
    if d is None:
        return None
    base = m.profile.get("pipeline.dram_round_trip_stream_unloaded", None)
    at_copy = m.profile.get("pipeline.dram_round_trip_stream_at_copy_bandwidth", None)
    if base is None or at_copy is None or not m.dram_bw_device:
        return d
    if not is_array(share) and not share:
        return d
    slope = (at_copy - base) / m.dram_bw_device
    return d._replace(base_ns=d.base_ns + share * (base - d.base_ns),
                      slope_ns_per_byte_ns=d.slope_ns_per_byte_ns + share * (slope - d.slope_ns_per_byte_ns))


def describe_stream(m, plain: DramRoundTrip, mixed: DramRoundTrip, share) -> str:
    """A clause for the breakdown: the line a weight stream's share of the DRAM bytes moves."""
    base = m.profile.get("pipeline.dram_round_trip_stream_unloaded")
    slope = (m.profile.get("pipeline.dram_round_trip_stream_at_copy_bandwidth") - base) / m.dram_bw_device
    whole = share >= 1 - 1e-9
    text = (f"{format_percent(share)} of its DRAM bytes are a weight stream (each read by one CTA of the "
            f"launch, its rows continued by the neighbouring CTA's), which waits on the stream's own line, "
            f"{T(base)} + {formula_slope(slope)} (calibration/h200/measured/stream_depth), not kloop's "
            f"{T(plain.base_ns)} + {formula_slope(plain.slope_ns_per_byte_ns)}")
    if not whole:
        text += (f": mixed by that share, {T(plain.base_ns)} + {formula_share(share, 4)} x ({T(base)} - "
                 f"{T(plain.base_ns)}) = {T(mixed.base_ns)} and {formula_slope(mixed.slope_ns_per_byte_ns)}")
    return text


def one_tile_floor(d: DramRoundTrip, stages) -> DramRoundTrip:
    """``d`` with the idle floor measured with one tile in flight where the loop keeps at most
    one (``stages`` <= 2; 1 is the unpipelined trip): ``pipeline.dram_round_trip_idle_one_tile``
    (mlp's 2-stage one-SM rows, 527 ns), not the 3-5-stage rows' ``pipeline.dram_round_trip_idle``
    (557 ns), which holds the queue of the SM's own tiles at its DRAM intake that one tile in
    flight never waits (docs/analysis.md, "One tile in flight waits no queue of its own").
    ``d`` itself where the profile states either floor not. Arrays elementwise."""
    if d.idle_ns is None or d.idle_one_tile_ns is None:
        return d
    if is_array(stages):
        return d._replace(idle_ns=where(stages <= 2, d.idle_one_tile_ns, d.idle_ns))
    return d._replace(idle_ns=d.idle_one_tile_ns) if stages <= 2 else d


def loaded_round_trip_ns(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, stages,
                         f: LoadTrip, d: DramRoundTrip) -> Any:
    """One tile load's round trip when its DRAM part waits longer the more bandwidth the SMs
    draw (queueing): L = base + slope x bandwidth, with bandwidth = active SMs x r CTAs x the
    DRAM bytes of a trip / the trip time T, and (S-1) T = the round trip (Little's law). So
    (S-1) T = K + miss x slope x U r D / T, K the round trip with L = base:
    T = (K + sqrt(K^2 + 4 (S-1) miss slope U r D)) / (2 (S-1)); returns (S-1) T.
    K holds the tile's bytes through the SM's port only, as the line was fitted
    (``pipeline.dram_round_trip_unloaded``: implied round trip - chain - bytes / port): the
    rest of the transfer, at the SM's share of DRAM, is inside the line's queueing already,
    and adding it again counted it twice (a 16 KB trip at 132 SMs' 32 B/ns share: ~385 ns).

    Below the idle round trip (``idle_ns``, one SM alone) the line does not hold: the DRAM part
    is max(idle, base + slope x bandwidth) (tfx.analysis.memory_parallelism). Both sides fall
    as T grows, so the fixed point of the larger is the larger of the two fixed points:
    (S-1) T = max(K_idle, the line's solution), K_idle the round trip with L = idle and the
    transfer (``pipeline.dram_round_trip_idle`` was fitted with the tile at one SM's DRAM
    ceiling subtracted, so there the transfer stays)."""
    s1 = emax(stages - 1, 1)
    d = one_tile_floor(d, stages)
    k, q, floor = loaded_line(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, f, d)
    if is_array(k, q, s1):
        import numpy as np
        t = (k + np.sqrt(k * k + 4 * s1 * q)) / (2 * s1)
    else:
        t = (k + math.sqrt(k * k + 4 * s1 * q)) / (2 * s1)
    return s1 * t if floor is None else emax(s1 * t, floor)


class LoadedTrip(NamedTuple):
    """One priced loaded round trip (``loaded_trip``): its inputs and the value the model
    used, kept so that the breakdown renders the round trip that was priced."""
    lat: Any                    # the latency of the trips that wait no DRAM (the L2's)
    miss: Any                   # the share of trips that wait DRAM (memory_parallelism.trip_miss)
    loaded_bytes: Any
    transfer_ns: Any            # the idle floor's transfer
    dram_bytes: Any             # DRAM bytes as the queue counts them
    r: Any                      # CTAs a SM drawing DRAM
    active_units: Any
    stages: Any
    ns: Any                     # (S-1) T, ``loaded_round_trip_ns``
    chase: Any = None           # the pointer chase's curve it was solved on (chase_round_trip_ns), or None
    idle_ns: Any = None         # the idle floor it was solved on (None: the profile states none)
    walk_transfer: Any = None   # a persistent walk's transfer_ns with its parts (pipeline_depth.WalkTransfer)


def loaded_trip(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, stages,
                f: LoadTrip, d: DramRoundTrip, chase: "ChaseCurve | None" = None, queued=False,
                walk_transfer=None) -> LoadedTrip:
    """``loaded_round_trip_ns`` with the inputs it was solved from; on the pointer chase's
    curve (``chase_round_trip_ns``) where ``chase`` is given (a persistent walk's trips), from
    the idle floor with one tile in flight where ``queued`` (its tiles queue at the load path,
    tfx.analysis.load_queue, which prices what the 3-5-stage floor holds of that queue).
    ``walk_transfer``: the walk's ``transfer_ns`` with its parts (tfx.analysis.pipeline_depth.
    walk_transfer), kept for the breakdown."""
    if chase is not None and d.idle_ns is not None:
        idle = d.idle_ns
        if d.idle_one_tile_ns is not None:
            idle = (where(queued, d.idle_one_tile_ns, d.idle_ns) if is_array(queued)
                    else (d.idle_one_tile_ns if queued else d.idle_ns))
        ns = chase_round_trip_ns(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, stages,
                                 f, idle, chase)
        return LoadedTrip(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, stages, ns, chase, idle,
                          walk_transfer)
    ns = loaded_round_trip_ns(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, stages, f, d)
    return LoadedTrip(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, stages, ns, chase,
                      one_tile_floor(d, stages).idle_ns)


class ChaseCurve(NamedTuple):
    """The DRAM pointer chase's latency while other SMs read DRAM (``pipeline.dram_latency_unloaded``
    and ``pipeline.dram_read_latency_*``): the measured points (draw B/ns, latency ns), the idle
    one (0 B/ns) first, the draws rising."""
    points: tuple

    def excess_ns(self, draw) -> Any:
        """ns the chase waits past its idle latency at ``draw`` B/ns: linear between the measured
        points and along the last segment beyond them, at least 0 (arrays elementwise)."""
        pts = self.points
        l0 = pts[0][1]
        out = 0 * draw
        for n, ((ba, la), (bb, lb)) in enumerate(zip(pts, pts[1:])):
            seg = la - l0 + (draw - ba) * (lb - la) / (bb - ba)
            last = n == len(pts) - 2
            if is_array(draw):
                import numpy as np
                inside = (draw >= ba) if last else ((draw >= ba) & (draw < bb))
                out = np.where(inside, seg, out)
            elif (draw >= ba) if last else (ba <= draw < bb):
                out = seg
        return emax(out, 0)


CHASE_POINTS = ("low", "mid", "high", "saturated")


def chase_facts(m) -> ChaseCurve | None:
    """The pointer chase under a read-only stream (``pipeline.dram_latency_unloaded`` at no draw,
    ``pipeline.dram_read_latency_{low,mid,high,saturated}`` at their ``_at`` draws), or None where
    the profile states any not (then the loaded line prices the round trip)."""
    idle = m.profile.get("pipeline.dram_latency_unloaded", None)
    pts = [(0.0, idle)]
    for k in CHASE_POINTS:
        at = m.profile.get(f"pipeline.dram_read_latency_{k}_at", None)
        pts.append((None if at is None else at / 1e9, m.profile.get(f"pipeline.dram_read_latency_{k}", None)))
    if m.kind != "gpu" or any(a is None or b is None for a, b in pts):
        return None
    return ChaseCurve(tuple(pts))


def chase_round_trip_ns(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, stages,
                        f: LoadTrip, idle_ns, chase: ChaseCurve) -> Any:
    """(S-1) T of a pipelined trip whose DRAM part is the idle round trip plus the pointer
    chase's queueing at the draw the SMs make: (S-1) T = K_idle + miss x Q(U r D / T), K_idle the
    idle floor with its transfer (``loaded_line``'s floor: chain + miss x idle + (1 - miss) x the
    L2's latency + max(transfer, bytes / port)) and Q the chase's excess over its idle latency
    (``ChaseCurve.excess_ns``). On the segment of the curve where Q = a + b x draw, with x = (S-1) T
    and draw = U r D (S-1) / x = Lo / x: x^2 - (K_idle + miss a) x - miss b Lo = 0,
    x = (c + sqrt(c^2 + 4 miss b Lo)) / 2, c = K_idle + miss a; Q rises with the draw and the draw
    falls as x grows, so exactly one segment's root draws inside it (the last segment's
    from its first point on). Arrays elementwise."""
    s1 = emax(stages - 1, 1)
    k0 = round_trip_ns(miss * idle_ns + (1 - miss) * lat, loaded_bytes, transfer_ns, f)
    load = active_units * r * dram_bytes * s1          # draw = load / x, x = (S-1) T
    pts = chase.points
    l0 = pts[0][1]
    out = None
    for n, ((ba, la), (bb, lb)) in enumerate(zip(pts, pts[1:])):
        b = (lb - la) / (bb - ba)
        a = la - l0 - b * ba
        c = k0 + miss * a
        if is_array(c, b, load, miss):
            import numpy as np
            x = (c + np.sqrt(c * c + 4 * miss * b * load)) / 2
            draw = load / np.maximum(x, 1e-30)
            inside = draw >= ba if n == len(pts) - 2 else (draw >= ba) & (draw < bb)
            out = np.where(inside, x, k0 if out is None else out)
        else:
            x = (c + math.sqrt(c * c + 4 * miss * b * load)) / 2
            draw = load / max(x, 1e-30)
            if (draw >= ba) if n == len(pts) - 2 else (ba <= draw < bb):
                out = x
    return k0 if out is None else out


def loaded_line(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, f: LoadTrip,
                d: DramRoundTrip) -> tuple:
    """(K, q, floor) of ``loaded_round_trip_ns``, the one source of its pieces (also the first
    load round of tfx.analysis.load_rounds): K the round trip at the line's base with the bytes
    through the SM's port only, q = miss x slope x U r D, and floor the idle round trip with
    the transfer, or None where the profile states no idle round trip (then the line holds
    alone: its base with the transfer would count the transfer twice, as K's docstring says).
    Arrays elementwise."""
    k = round_trip_ns(miss * d.base_ns + (1 - miss) * lat, loaded_bytes, 0, f)   # port only: see above
    q = miss * d.slope_ns_per_byte_ns * active_units * r * dram_bytes
    floor = (None if d.idle_ns is None else
             round_trip_ns(miss * d.idle_ns + (1 - miss) * lat, loaded_bytes, transfer_ns, f))
    return k, q, floor


def streaming_round_trip_ns(chain_ns, lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units,
                           stages, f: LoadTrip, d: DramRoundTrip) -> Any:
    """The round trip of a load a loop that is not a GEMM k-loop streams (decode's KV loop):
    the same measured facts (the loaded DRAM round trip, the bytes through the SM's port)
    with the trip's own chain before the issue (``chain_ns``) in place of the GEMM's measured
    one. Used for an unpipelined serial trip (``stages`` = 1, tfx.analysis.mma_path.
    unpipelined_wait): its resident CTAs issue their loads together at the end of their
    chains (chain_ns = 0, the chains are counted a round already) and wait one loaded round
    trip, with one tile each in flight (Little's law as in ``loaded_round_trip_ns``, S-1 = 1):
    T = (K + sqrt(K^2 + 4 miss slope U r D)) / 2, K = the unloaded round trip. Not applied to
    pipelined decode trips: there it overshoots the high-bandwidth decode rows (B8 SKV131072
    splits2 +25%), the linear queueing fit being measured on GEMM rows below 3.9 TB/s."""
    return loaded_round_trip_ns(lat, miss, loaded_bytes, transfer_ns, dram_bytes, r, active_units, stages,
                                LoadTrip(chain_ns, f.port_bytes_per_ns), d)


def describe_sync(r, copies: TripCopies, f: LoadTrip) -> str:
    """A clause for an unpipelined trip's line: its loads on the SM's load path."""
    one = sync_load_ns(copies, f)
    short, long = _sync_split(copies, f)
    lines = (f"{format_plain(short)} x {T(f.sync_load_ns)} (16 B a thread, rows of 64 B or less) + "
             f"{format_plain(long)} x {T(f.sync_line_load_ns)} (16 B a thread, whole lines)"
             if f.sync_line_load_ns is not None else
             f"{format_plain(copies.wide_instructions)} x {T(f.sync_load_ns)} (16 B a thread)")
    return (f"its loads into registers hold the SM's load path {lines} + {format_plain(copies.narrow_instructions)} x "
            f"{T(f.sync_narrow_load_ns)} (4-8 B) = {T(float(one))} a trip; {format_counted(r, 'CTA')} per SM: a round "
            f"takes at least {T(float(r * one))}")


def describe(loaded_bytes, r, f: LoadTrip, copies: TripCopies = TripCopies()) -> str:
    one = f.own_trip_ns(loaded_bytes)
    shared = r * copies_port_ns(loaded_bytes, copies, f)
    narrow = f.narrow_copy_ns is not None and copies.narrow_instructions
    short = f.short_row_copy_ns is not None and copies.short_instructions
    if narrow or short:
        wide = loaded_bytes - (copies.narrow_bytes if narrow else 0) - (copies.short_bytes if short else 0)
        parts = [f"{B(wide)} / {BW(f.port_bytes_per_ns)}"] if wide > 0.5 else []
        if narrow:
            parts.append(f"{format_plain(copies.narrow_instructions)} warp-wide copies of {B(copies.narrow_bytes)} "
                         f"narrower than 16 B a thread (cp.async.ca) x {T(f.narrow_copy_ns)}")
        if short and copies.short_lines == SHORT_ROW_COPY_LINES * copies.short_instructions:
            parts.append(f"{format_plain(copies.short_instructions)} warp-wide 16-byte copies of {B(copies.short_bytes)} "
                         f"in rows of at most {SHORT_ROW_BYTES} B x {T(f.short_row_copy_ns)}")
        elif short:     # rows under 64 B: a copy touches more lines than the measured one's 8
            parts.append(f"{format_plain(copies.short_instructions)} warp-wide 16-byte copies of {B(copies.short_bytes)} "
                         f"in rows under {SHORT_ROW_BYTES} B, {format_plain(copies.short_lines)} lines (one a row) x "
                         f"{T(short_line_ns(f))} ({T(f.short_row_copy_ns)} a copy of {SHORT_ROW_BYTES}-B rows, "
                         f"{SHORT_ROW_COPY_LINES} lines)")
        share = f"{format_counted(r, 'CTA')} per SM {verb_for(r, 'share')} its load path: {r} x ({' + '.join(parts)}) = {T(shared)}"
    else:
        share = f"{format_counted(r, 'CTA')} per SM {verb_for(r, 'share')} the port: {r} x {B(loaded_bytes)} / {BW(f.port_bytes_per_ns)} = {T(shared)}"
    return (f"one CTA's pipelined trip: {T(f.own_chain_ns)} of chain + {B(loaded_bytes)} / "
            f"{BW(f.own_port_bytes_per_ns)} of the SM's L2 port = {T(one)}; {share}; a round takes "
            f"at least {T(max(one, shared))}")
