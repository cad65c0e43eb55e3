"""L2 reuse within a wave and across waves: which gmem reads of a launch hit L2 because
co-resident CTAs of the same wave read the same tile, or because the previous wave read it and
it is still in L2 (docs/analysis.md, "performance" and "L2 reuse across waves"), and the
windows of tiles that must stay resident in L2 for that reuse to hold.

Public: ``wave_reuse`` (the analysis and the simulator price loads with it) and its result
``WaveReuse``, ``kept_across_waves``, ``cross_wave_share``, ``straddle_share``,
``enclosing_loop``, ``loops_between`` and ``running_share``; for GROUP_M = 1 readers that drift
apart (the timing prices their rate gap), ``Drift``, ``rate_classes_apart``, ``drift_refetch``,
``with_drift`` and ``describe_drift``.
"""

from __future__ import annotations

from fractions import Fraction

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tfx.analysis import launch_handoff, persistent_rounds, tile_walk
from tfx.analysis.counting import ScopeNode
from tfx.analysis.numbers import cdiv, ceil_int, emax, emin, if_else, is_array, ratio, where
from tfx.ir.nodes import MeshRegion, Window
from tfx.hw.units import format_counted, format_percent, formula_bytes, verb_for
from tfx.hw.units import formula_share


@dataclass(eq=False, repr=False)
class WaveReuse(dict):
    """One launch's share of each load's gmem reads that go to DRAM, per load op id (the
    mapping: first touches in a wave whose tile the previous wave did not leave in L2), with the
    wave facts its timing and breakdown read (the fields). Only op ids iterate."""
    window: tuple | None = None        # (bytes that must stay resident for the reuse within a wave, L2 capacity)
    cross_window: tuple | None = None  # (the previous wave's whole loop of distinct bytes, the L2 room, partitions)
    cross: dict = field(default_factory=dict)      # op id -> share of the wave's CTAs whose tile the previous wave left in L2
    cross_how: dict = field(default_factory=dict)  # op id -> (line, (kind, period, span), W), for the breakdown
    walk: tuple | None = None          # (Rounds, W, op id -> (line, tensor, WalkIndex)): a persistent kernel's tile walk
    l2_only: dict = field(default_factory=dict)    # loop id -> share of its trips whose every load the previous wave left
    handoff: Any = None                # what the previous launch stored and left in L2 (launch_handoff's facts)
    drift: Any = None                  # GROUP_M = 1: the co-readers' Drift facts (drift_refetch), None where none
    pair_merged: dict = field(default_factory=dict)  # op id -> share of its copies the TPC pair merges (pair_merged_share)
    side_block: dict = field(default_factory=dict)   # op id -> co-readers that share one L2 partition (side_block)
    partitions: Any = 1                # the L2's partitions (far_fill_share)

    @classmethod
    def of(cls, ratios, **fields) -> "WaveReuse":
        """``ratios`` (op id -> DRAM share) with ``fields`` set."""
        out = cls(**fields)
        out.update(ratios)
        return out


def kept_across_waves(distance, room):
    """1 where the previous wave's tiles are still in L2 when the next wave reads them, else 0:
    their LRU stack distance (every distinct byte read between the two uses: the previous
    wave's whole loop) against the L2 room. The one place both a mesh's waves and a tile walk's
    rounds (tile_walk) decide it. A step: a trace of the l2_groupm launches through one LRU of
    the room reproduces Nsight Compute's DRAM bytes where every partition reads the tiles
    (4096^3 128 x 128 x 64 at 1.22 x the room keeps nothing: 0.309 GB traced, 0.305-0.308
    delivered; random replacement keeps 0.180), while a walk whose tiles one SM reads keeps a
    share that falls smoothly with the distance (l2_groupm_s12: 0.80 at 1.06 x the room, 0.60
    at 1.56, 0.62 at 1.94): docs/analysis.md, "Not modelled: GROUP_M = 1 and the lock step's
    limits"."""
    fits = distance <= room
    return if_else(fits, 1, 0)


class Drift(NamedTuple):
    """A row-major launch's facts for the re-fetch of its column tiles' (B's) shared re-reads
    whose readers drift apart (``drift_refetch``); the timing gives the rest (``delta``)."""
    ops: frozenset      # the loads whose window depends only on the column coordinate
    P: Any              # the share of co-reader pairs in different rate classes (rate_classes_apart)
    W: Any              # the wave's CTAs
    units: Any          # the SMs
    loop_bytes: Any     # the wave's loop of distinct bytes (``cross_window``)
    room: Any           # the L2 room (capacity / partitions)
    stagger: Any = 0    # the dispatcher's start offset of two co-readers past the first wave: g1 / W of a life, at most 1
    waves: Any = 1      # the launch's CTAs over the wave's (at least 1)


def rate_classes_apart(W, units):
    """The share of pairs of a wave's CTAs, drawn apart (GROUP_M = 1 co-readers sit g1 launch
    positions apart, on unrelated SMs: calibration/h200/measured/cta_timeline), that run in
    different rate classes. The dispatcher hands the W CTAs to the ``units`` SMs round after
    round, q = W // units on every SM and one more on rem = W mod units of them; a CTA's rate
    follows its SM's count and its slot there (the warps of older CTAs issue first), so the
    classes are (q + 1 CTAs, slot j), rem CTAs each, and (q CTAs, slot j), units - rem each:
    1 - sum over the classes of (CTAs in it / W)^2. One wave of 224 on 132 SMs: q = 1, rem = 92,
    1 - (92^2 + 92^2 + 40^2) / 224^2 = 0.631; b on every SM 1 - 1 / b; one an SM 0."""
    q, rem = _dispatched(W, units)
    return 1 - (rem * rem * (q + 1) + (units - rem) ** 2 * q) / (W * W)


def _dispatched(W, units):
    """(q, rem): the dispatcher's round-robin of W CTAs over ``units`` SMs puts q = W // units
    on every SM and one more on rem = W mod units of them."""
    q = W // units
    return q, W - q * units


def drift_refetch(P, delta, loop_bytes, room, stagger=0, waves=1):
    """The share of the lock step's shared re-reads of a column tile (B) that DRAM delivers
    again because its readers drift apart (docs/analysis.md, "GROUP_M = 1: readers that drift
    apart" and "... across waves"). Two co-readers in different rate classes (``P``) run at rates
    up to ``delta`` apart (the share by which a CTA's rate falls with the CTAs that share its SM:
    1 - a lone CTA's time / one of b's, from the timing); after t of the loop the slower lags by
    delta x t. The byte waits in L2 while the machine streams the wave's loop (``loop_bytes`` over
    the loop's time T), so it is gone once the lag passes L = room / loop_bytes of the loop: in
    the first wave over the share max(0, 1 - L / delta) of it, T cancels.

    Past the first wave the slots' CTAs start where their predecessors ended, so two slots' start
    times part by delta a wave, up to the dispatcher's own offset: it hands the positions out in
    order as slots free, so co-readers g1 positions apart start at most ``stagger`` = g1 / W of a
    life apart (calibration/h200/measured/cta_timeline: the B co-readers' start gap grows with the
    wave). Wave w's pairs start min(stagger, delta x w) apart and miss over max(0, min(1, 1 - (L -
    min(stagger, delta x w)) / delta)) of the loop; the launch's share is P x their mean over its
    ``waves`` (the last one by its fraction). With ``waves`` 1 (or less) this is the first wave's:
    P x max(0, 1 - L / delta). 0 where delta is 0 (the CTAs' rate does not depend on their SM's
    load) and where the loop fits the room (no lag of less than the loop loses a byte). Arrays
    elementwise."""
    d = emax(delta, 1e-30)
    L = room / emax(loop_bytes, 1e-30)
    a = 1 - L / d                                     # wave w misses clamp(a + min(c, w), 0, 1)
    c = stagger / d
    n = emax(waves, 1)
    whole = _floor(n)
    m = emin(whole, _ceil(c))                         # waves whose offset still grows (w < c)
    level = _clamp01(1 - (L - stagger) / d)           # the waves at the dispatcher's offset (a + c)
    total = (_ramp_sum(a, m) + emax(whole - m, 0) * level
             + (n - whole) * _clamp01(a + emin(c, whole)))
    share = P * total / n
    # a lag of the whole loop or more is no lag: where the loop fits the room nothing is lost
    keep = (delta > 0) & (room < loop_bytes) if is_array(delta, room, loop_bytes) else (
        delta > 0 and room < loop_bytes)
    return where(keep, share, 0) if is_array(keep, share) else (share if keep else 0)


def _clamp01(x):
    return emin(emax(x, 0), 1)


def _floor(x):
    if is_array(x):
        import numpy as np
        return np.floor(x)
    return math.floor(x)


def _ceil(x):
    return ceil_int(emin(x, 1e9))     # capped: a rate gap near 0 puts the offset's waves past any launch


def _ramp_sum(a, K):
    """sum over w = 0 .. K - 1 of clamp(a + w, 0, 1): the waves from u = ceil(1 - a) on count
    whole, the one before it (w = u - 1, where 0 <= a + w < 1) its fraction, the earlier ones 0."""
    u = emax(_ceil(1 - a), 0)
    ones = emax(K - u, 0)
    w = u - 1
    part = where((w >= 0) & (w < K), _clamp01(a + w), 0) if is_array(w, K) else (
        _clamp01(a + w) if 0 <= w < K else 0)
    return ones + part


def with_drift(info: "WaveReuse", share) -> "WaveReuse":
    """``info`` with its drift ops' DRAM share v raised by ``share`` of the rest: v + share x
    (1 - v) (the shared re-reads the drift fetches again); the wave facts kept."""
    ops = info.drift.ops
    ratios = {k: (v + share * (1 - v) if k in ops else v) for k, v in info.items()}
    return WaveReuse.of(ratios, window=info.window, cross_window=info.cross_window, cross=info.cross,
                        cross_how=info.cross_how, walk=info.walk, l2_only=info.l2_only,
                        handoff=info.handoff, drift=info.drift, pair_merged=info.pair_merged,
                        side_block=info.side_block, partitions=info.partitions)


def describe_drift(facts: Drift, rate, fmt_ns) -> str:
    """The breakdown's line for the drift re-fetch (``drift_refetch``): the rate classes, the
    rate gap from the timing (``rate``: performance.DriftRate), the room against the wave's
    loop, the share."""
    W, units, P = int(facts.W), int(facts.units), float(facts.P)
    q, rem = _dispatched(W, units)
    b = int(rate.b)
    hold = verb_for(rem, "hold")
    classes = (f"{format_counted(rem, 'SM')} {hold} {format_counted(q + 1, 'CTA')}, {units - rem} "
               f"{verb_for(units - rem, 'hold')} {q}" if rem and q else
               f"{format_counted(rem, 'SM')} {hold} 1 CTA" if rem else f"every SM holds {format_counted(q, 'CTA')}")
    loop, room = float(facts.loop_bytes), float(facts.room)
    delta = float(rate.delta)
    return (f"GROUP_M = 1: a column tile's co-readers sit on unrelated SMs and drift apart; {classes}: "
            f"{format_percent(P)} of the pairs run in different rate classes (CTAs an SM, slot); a CTA alone "
            f"on its SM takes {fmt_ns(float(rate.lone_ns))}, one of {b} on an SM {fmt_ns(float(rate.shared_ns))}: "
            f"rates {format_percent(delta)} apart; a re-read finds its byte in L2 while the lag is under the room "
            f"over the wave's loop ({formula_bytes(room)} / {formula_bytes(loop)} = {formula_share(room / loop)} of the "
            f"loop){_describe_waves(facts, P, room / loop, delta)} = {format_percent(rate.share)} of the "
            f"shared re-reads come from DRAM again")


def _describe_waves(facts: Drift, P, room_share, delta) -> str:
    """The share's arithmetic: one wave's P x (1 - L / delta), or, past the first wave, the
    dispatcher's offset and the mean over the waves (``drift_refetch``)."""
    first = f"{formula_share(P)} x (1 - {formula_share(room_share)} / {formula_share(delta)})"
    waves, stagger = float(facts.waves), float(facts.stagger)
    if waves <= 1:
        return f": {first}"
    return (f"; past the first wave its co-readers, {format_counted(round(stagger * float(facts.W)), 'position')} "
            f"apart, start min({formula_share(stagger)}, {formula_share(delta)} x w) of a life apart in wave w (their slots part by "
            f"the rate gap a wave, at most the dispatcher's offset, positions / wave's CTAs) and lose "
            f"(1 - ({formula_share(room_share)} - that) / {formula_share(delta)}) of the loop: {formula_share(P)} x the mean over "
            f"{format_counted(waves, 'wave')} of each wave's share, the first's max(0, 1 - {formula_share(room_share)} / {formula_share(delta)})")


def wave_reuse(root: ScopeNode, kernel, env, profile, blocks) -> dict:
    """Per top-level mesh, a ``WaveReuse``: op id -> fraction of its gmem reads that miss L2
    (first touches in a wave whose tile the previous wave did not leave in L2); its ``window``:
    (bytes that must stay resident for the reuse within a wave, L2 capacity); ``cross``: per op,
    the share of the wave's CTAs whose tile the previous wave left in L2 (``cross_wave_share``,
    0 where that wave's tiles do not fit: ``cross_window``, ``kept_across_waves``); ``l2_only``:
    per innermost loop, the share of its trips whose every load hits such a tile (they wait the
    L2 round trip, not DRAM's: tfx.analysis.memory_parallelism.trip_miss).

    A wave is ``units x resident`` consecutive positions in launch order: the last mesh
    coordinate fastest; with a ``swizzle(G)`` the order walks G rows of the grid before moving a
    column (Triton's group-M order). A load whose window depends only on the row coordinate is
    re-read by every CTA of that row in the wave; only the first read goes to DRAM. The next
    wave re-reads the rows and columns the two waves share (``cross_wave_share``).

    A persistent kernel's one-coordinate mesh whose loads read its tile walk's variable, not
    the coordinate (``loop t = sm to TILES step CTAS``): a wave is a round of W consecutive
    tiles, and each load's index of ``t`` (``t % P``, ``t / P``) gives its distinct tiles and
    its recurrence (tfx.analysis.tile_walk); ``walk``: (the Rounds, W, per op (line,
    tensor, WalkIndex)) for the breakdown.
    """
    out: dict = {}
    if profile.kind != "gpu":
        return out
    levels = profile.memory_levels()
    l2 = next((l for l in levels.values() if l.caches), None)
    if l2 is None:
        return out
    # A partitioned L2 keeps a tile every SM reads in each partition (the A100/H100
    # whitepapers: "each L2 partition localizes and caches data for memory accesses from SMs
    # in the GPCs directly connected to the partition"; Nsight Compute counts the far
    # partition's copies as L2-to-L2 traffic): a previous wave's tiles have capacity /
    # partitions of room.
    partitions = profile.get(f"memory.{l2.name}.partitions", None) or 1
    # the share of a shared tile's copies a persistent walk's TPC pair merges, measured
    # (walk_pair_merged_share); the grouped launches' half where the profile states none
    walk_merge = profile.get(f"memory.{l2.name}.walk_pair_merged_share", None)
    walk_merge = ratio(1, 2) if walk_merge is None else walk_merge
    units = profile.units_of(profile.mesh_levels().get("cta", "sm"))
    for mesh in (c for c in root.children if c.kind == "mesh"):
        region: MeshRegion = mesh.region
        extents = [e.evaluate(env) for e in region.extents]
        total = mesh.positions
        resident = blocks.get(mesh.id, 1) if isinstance(blocks, dict) else blocks
        W = emin(units * resident, total)
        W = emax(W, 1)
        g0 = extents[0]
        g1 = extents[1] if len(extents) > 1 else 1
        swizzled = region.swizzle is not None and len(extents) > 1
        # Row-major order (no swizzle, or a group of one row): a load's first touches over the
        # whole launch, its full waves and the last one, exactly (tile_walk.slow_visits /
        # fast_visits), where a wave's ceil(W / g1) rows miss the row a wave starting mid-row adds
        # and the last wave's columns are shared by fewer CTAs than a full wave's.
        row_major = (True if not swizzled else
                     (region.swizzle.evaluate(env) == 1 if len(extents) > 1 else True))
        launch_rows = _share(tile_walk.slow_visits(total, W, g1), total)
        launch_cols = _share(tile_walk.fast_visits(total, W, g1), total)
        if swizzled:
            # Group-M order: groups of G rows x all g1 columns, walked column by column.
            # A wave inside one group spans G rows and ceil(W / G) columns; a wave larger
            # than a group spans whole groups' rows and every column.
            G = emax(emin(region.swizzle.evaluate(env), g0), 1)
            group = G * g1
            rows = where(W <= group, emin(G, W), emin(g0, G * -(-W // group)))
            cols = where(W <= group, emin(g1, -(-W // G)), g1)
            # Across waves, a wave inside one group: the row advances fastest (period G), the
            # column every G positions, and both restart every group of G x g1 positions. A
            # wave of whole groups: every column recurs in each group (period G x g1), the
            # rows advance a group at a time.
            inside = W <= group
            order = {"row": (inside, ("fast", G, group), ("slow", group, total, False)),
                     "col": (inside, ("slow", G, group), ("fast", group, total))}
        else:
            cols = emin(g1, W)
            rows = emin(g0, -(-W // g1))
            order = {"row": (True, ("slow", g1, total), None), "col": (True, ("fast", g1, total), None)}
        # a row-major wave's rows, for the bytes it keeps resident: the exact mean over the waves,
        # (W + g1 - gcd(W, g1)) / g1 (a wave starting mid-row spans one more than ceil(W / g1)
        # where it ends past the row; tile_walk.slow_distinct, as a tile walk's round)
        rows = where(row_major, tile_walk.slow_distinct(W, g1, total), rows)
        coords = region.coords
        # a persistent kernel's tile walk (loop t = sm to TILES step CTAS): a wave is a round of
        # W consecutive tiles, and a load that reads t, not sm, follows t's order (tile_walk)
        rounds = persistent_rounds.find(mesh, env) if len(coords) == 1 else None
        walked = {}
        drift_ops = set()  # loads of the column's tile (B), whose co-readers sit g1 positions apart
        per_op = {}
        pair = {}         # op id -> share of its copies the TPC pair merges (pair_merged_share)
        block = {}        # op id -> its co-readers that sit on one L2 partition (side_block)
        exact = {}        # op id -> its first touches over the whole launch, exactly (row-major order)
        cross = {}
        values = {}       # op id -> share of the wave's distinct tiles the previous wave read (cross_value_share)
        how = {}
        window = 0
        cross_window = 0
        for node in mesh.walk():
            if node.kind != "op" or node.op is None:
                continue
            windows = [o for o in node.op.operands if isinstance(o, Window)]
            if not windows or node.op.opcode not in ("load", "copy"):
                continue
            deps = set()
            for w in windows:
                for a in w.axes:
                    for part in (a.offset, a.size):
                        if part is not None:
                            deps |= part.free_names()
            used = [c for c in coords if c in deps]
            index = (tile_walk.walk_index(windows, rounds.loop_var, env)
                     if rounds is not None and not used else None)
            first = None      # the launch's share of first touches where it is exact, else distinct / W
            if index is not None:
                distinct = tile_walk.distinct(index, W, rounds.tiles)
                first = tile_walk.launch_share(index, W, rounds.tiles)
                kind = (None if index.kind == "each" else
                        (True, (index.kind, index.period, rounds.tiles), None))
                walked[node.id] = (node.line, windows[0].tensor, index)
                pair[node.id] = walk_pair_merged_share(index, walk_merge)
                block[node.id] = walk_side_block(index)
            elif len(coords) >= 2 and used == [coords[0]]:
                distinct, kind = rows, order["row"]
                first = where(row_major, launch_rows, _share(rows, W))
            elif len(coords) >= 2 and used == [coords[1]]:
                distinct, kind = cols, order["col"]
                first = where(row_major, launch_cols, _share(cols, W))
                drift_ops.add(node.id)
            elif not used:
                distinct, kind = 1, (True, ("same", 1, total), None)
            else:
                distinct, kind = W, None
            per_op[node.id] = ratio(distinct, W) if not is_array(distinct, W) else distinct / W
            if index is None and len(coords) >= 2:
                pair[node.id] = pair_merged_share(used, coords, g0, g1,
                                                  region.swizzle.evaluate(env) if swizzled else 1)
                block[node.id] = side_block(used, coords, g0, g1,
                                            region.swizzle.evaluate(env) if swizzled else 1)
            if first is not None:
                exact[node.id] = first
            if kind is None:
                cross[node.id] = 0
                values[node.id] = 0
            else:
                cond, a, b = kind
                share_a = cross_wave_share(a[0], W, a[1], a[2])
                value_a = cross_value_share(a[0], W, a[1], a[2], distinct, *a[3:])
                if b is None:
                    cross[node.id] = share_a
                    values[node.id] = value_a
                elif is_array(cond):
                    cross[node.id] = where(cond, share_a, cross_wave_share(b[0], W, b[1], b[2]))
                    values[node.id] = where(cond, value_a, cross_value_share(b[0], W, b[1], b[2], distinct, *b[3:]))
                else:
                    cross[node.id] = share_a if cond else cross_wave_share(b[0], W, b[1], b[2])
                    values[node.id] = value_a if cond else cross_value_share(b[0], W, b[1], b[2], distinct, *b[3:])
                if not is_array(cond):
                    how[node.id] = (node.line, (a if cond else b)[:3], W)
            # The reuse needs, per k-step of the wave, each distinct tile resident in L2 while
            # the CTAs that share it read it: distinct tiles x bytes x the loop's stages, for
            # the share of the wave's CTAs that run the op at all.
            tile = sum(v for (kind_, lvl, rw), v in node.per_exec.items() if kind_ == "traffic" and rw == "read")
            loop = enclosing_loop(mesh, node)
            stages = loop.stages if loop is not None and loop.stages is not None else 1
            share = running_share(mesh, node)
            window = window + distinct * share * tile * stages
            # The reuse across waves needs the previous wave's tiles still in L2 when the next
            # wave reads them one loop later: the LRU stack distance (Mattson et al. 1970) of a
            # tile is every distinct byte the wave reads between the two uses, its whole loop.
            trips = loop.trips if loop is not None else 1
            cross_window = cross_window + distinct * share * tile * trips
        fits = window <= l2.capacity
        room = l2.capacity / partitions
        kept = kept_across_waves(cross_window, room)
        if not is_array(fits) and not fits:
            per_op = {k: 1 for k in per_op}   # the window does not fit: every request goes to DRAM
            cross = {k: 0 for k in cross}
        elif is_array(fits):
            per_op = {k: where(fits, v, 1) for k, v in per_op.items()}
            cross = {k: where(fits, v, 0) for k, v in cross.items()}
        cross = {k: v * kept if is_array(kept, v) else (v if kept else 0)
                 for k, v in cross.items()}   # the previous wave's tiles were evicted: no reuse
        values = {k: v * kept * if_else(fits, 1, 0)
                  if is_array(kept, v, fits) else (v if kept and fits else 0) for k, v in values.items()}
        # a tile the previous wave left in L2 is no first touch: only the rest go to DRAM; where
        # nothing crosses the waves, a row-major launch's first touches are counted exactly, its
        # last, shorter wave included (tile_walk.slow_visits / fast_visits)
        per_op = {k: _first_touches(v, values[k], exact.get(k), fits) for k, v in per_op.items()}
        l2_only: dict = {}
        for node in mesh.walk():
            if node.id in cross:
                loop = enclosing_loop(mesh, node)
                if loop is not None:
                    l2_only[loop.id] = l2_only.get(loop.id, 1) * cross[node.id]
        # GROUP_M = 1: the co-readers of a column's tile sit g1 launch positions apart, on
        # unrelated SMs, and drift apart (the timing prices the share: drift_refetch); group-M
        # co-readers share a dispatch pair and do not
        # in a pipelined loop (an unpipelined trip waits its own loads: a reader that falls behind
        # waits the L2 round trip where the first reader waited DRAM's, and catches up)
        drift = None
        if drift_ops and (is_array(row_major) or row_major):
            loops = [enclosing_loop(mesh, n) for n in mesh.walk() if n.id in drift_ops]
            piped = 1
            for loop in loops:
                stages = loop.stages if loop is not None and loop.stages is not None else 1
                piped = piped * if_else(stages >= 2, 1, 0)
            P = rate_classes_apart(W, units) * piped
            P = if_else(row_major, P, 0)
            if is_array(P) or P:
                drift = Drift(frozenset(drift_ops), P, W, units, cross_window, room,
                              emin(g1 / W, 1), emax(total / W, 1))
        out[mesh.id] = WaveReuse.of(per_op, window=(window, l2.capacity),
                                    cross_window=(cross_window, room, partitions), cross=cross,
                                    cross_how=how, walk=(rounds, W, walked) if walked else None,
                                    l2_only=l2_only, drift=drift, pair_merged=pair,
                                    side_block=block, partitions=partitions)
    # reads of what the previous launch stored and left in L2 (tfx.analysis.launch_handoff)
    meshes = [c for c in root.children if c.kind == "mesh"]
    for mesh_id, (ops, facts) in launch_handoff.handoff(meshes, units, blocks, l2.capacity / partitions).items():
        per_op = out[mesh_id]
        for op_id, share in ops.items():
            per_op[op_id] = per_op[op_id] * (1 - share)
        per_op.handoff = facts
    return out


def pair_merged_share(used, coords, g0, g1, G):
    """The share of a load's copies that the two SMs of a TPC merge: the dispatcher hands launch
    positions 2k and 2k + 1 to the two SMs of one TPC (calibration/h200/measured/cta_timeline), and
    where both copy the same tile at a step, the slices see one of the two requests
    (l2_groupm_s14 .. s18: half the pair's shared tile gives 11 measured merged shares within
    0.14). Row-major order (GROUP_M = 1, or a group of one row) puts a pair in one tile row: the
    row's tile (A, which reads only the row coordinate) is shared; group-M order (G >= 2 rows)
    walks the rows fastest: the column's tile (B) is shared. A pair straddles a row (a group's
    column) once every g1 (G) pairs' positions where that count is odd."""
    G = emin(emax(G, 1), g0)
    row_major = G <= 1
    if used == [coords[0]]:       # the row's tile: shared by a row-major pair (a row of 2+ tiles)
        return if_else(row_major, if_else(g1 >= 2, ratio(1, 2) - ratio(g1 % 2, 2 * g1), 0), 0)
    if used == [coords[1]]:       # the column's tile: shared by a group-M pair
        return if_else(row_major, 0, ratio(1, 2) - ratio(G % 2, 2 * G))
    if not used:
        return ratio(1, 2)
    return 0


# consecutive launch positions whose CTAs sit on one L2 partition: the dispatcher hands positions
# 2k and 2k + 1 to one TPC and the next pair to the next GPC (calibration/h200/measured/
# cta_timeline: smids 124 125, 6 7, 22 23, 38 39, ...), and a tile the four positions of two such
# pairs read is filled across the fabric as a tile one SM reads is (l2_groupm_s23's 256x8192x8192
# G8, B read by 4 consecutive positions: 0.53-0.55 far fills a DRAM byte; s26c's G8, by 2: 0.51)
SIDE_RUN = 4


def side_block(used, coords, g0, g1, G):
    """How many of a tile's co-readers sit on one L2 partition (far_fill_share): the co-readers
    that a run of ``SIDE_RUN`` consecutive launch positions holds. Row-major order (G = 1):
    the row's tile (A) is read by the row's g1 consecutive positions, min(g1, 4) of them to a
    run; the column's tile (B) by positions g1 apart, ceil(4 / g1) to a run (1 where g1 >= 4).
    Group-M order: the column's tile by a group's G consecutive positions, min(G, 4); the row's
    tile by positions G apart, ceil(4 / G). A tile of its own, 1; a tile every CTA reads, 4."""
    G = emin(emax(G, 1), g0)
    row_major = G <= 1
    run = SIDE_RUN
    if used == [coords[0]]:
        return if_else(row_major, emin(g1, run), cdiv(run, G))
    if used == [coords[1]]:
        return if_else(row_major, cdiv(run, emax(g1, 1)), emin(G, run))
    if not used:
        return run
    return 1


def walk_side_block(index):
    """A persistent walk's ``side_block``: the row's tile (``slow``, P consecutive tiles) min(P, 4)
    co-readers to a run of consecutive CTAs, the column's (``fast``, P apart) ceil(4 / P)."""
    run = SIDE_RUN
    if index.kind == "slow":
        return emin(index.period, run)
    if index.kind == "fast":
        return cdiv(run, emax(index.period, 1))
    return 1


def far_fill_share(miss, block, partitions):
    """Bytes the far partitions fill across the L2 fabric per DRAM byte of a load: each of the
    ``partitions`` keeps its own copy of a line its SMs read (the A100/H100 whitepapers), the
    line's home is the one at its DRAM channel, and every other partition with a reader fills
    once from it. A DRAM byte serves 1 / ``miss`` copies, in runs of ``block`` that sit on one
    partition (side_block), so t = 1 / (miss x block) independent sides draw: each other
    partition holds a reader with chance 1 - (1 - 1/P)^t, (P - 1)(1 - (1 - 1/P)^t) fills. Two
    partitions: 1/2 for one reader (l2_groupm_s26b's seven one-reader launches: 0.50-0.52 of the
    DRAM bytes), 3/4 for two far apart (s25's 64x14336x8192 G1: 0.75; s26c's 32x28672x8192 G1:
    0.86), towards 1 for many (s14's 3072x8192x4096: 1.00)."""
    P = partitions
    if is_array(miss, block):
        import numpy as np
        m = np.maximum(np.asarray(miss, dtype=float), 1e-12)
        t = np.maximum(1.0 / (m * np.asarray(block, dtype=float)), 1.0)
        return (P - 1) * (1 - (1 - 1 / P) ** t)
    if not miss:
        return 0
    t = max(1 / (float(miss) * float(block)), 1.0)
    return (P - 1) * (1 - (1 - 1 / P) ** t)


def walk_pair_merged_share(index, share=Fraction(1, 2)):
    """A persistent walk's ``pair_merged_share``: the TPC's two SMs run CTAs 2j and 2j + 1, whose
    tiles t and t + 1 share t / P (the row's tile) except where t + 1 starts a row: ``share`` for
    an even P (t is even), ``share`` x (1 - 1/P) for an odd one; t % P (the column's) differs
    unless P is 1; a tile of its own each t, never. ``share``: the part of the pair's shared
    tile whose copies merge, ``memory.l2.walk_pair_merged_share`` (measured 0.23: the walk's
    pair runs in step only in its first tile, then a trip or so apart, persist_walk_s20); 1/2,
    the grouped launches' (the pair in step), where the profile states none."""
    if index.kind == "slow":
        P = index.period
        return if_else(P % 2 == 0, share, share - share / P)
    if index.kind == "fast":
        return if_else(index.period == 1, share, 0)
    return 0


def _first_touches(wave_share, cross, exact, fits):
    """A load's DRAM share: a wave's first touches less what the previous wave left in L2
    (``wave_share`` x (1 - ``cross``)); where nothing crosses and the reuse window fits, the
    launch's exact first touches (``exact``) where the order gives them."""
    kept = wave_share * (1 - cross) if is_array(cross) or cross else wave_share
    if exact is None:
        return kept
    if is_array(cross, exact, fits):
        import numpy as np
        return np.where(np.asarray(fits, dtype=bool) & (np.asarray(cross) == 0), exact, kept)
    return exact if (fits and not cross) else kept


def _share(part, whole):
    """part / whole, exact for scalars (numbers.ratio), elementwise for arrays."""
    return ratio(part, whole) if not is_array(part, whole) else part / whole


def cross_wave_share(kind: str, W, period, span):
    """The share of a wave's W CTAs whose tile of a load the previous wave also read, for a
    load that depends on one index of the launch order:

    * ``fast``: an index that advances every position and wraps every ``period`` positions
      (the column of a row-major grid). The wave reads min(W, period) distinct values; the
      previous W positions read the same value ``period`` positions earlier for all but the
      max(0, period - W) first ones: max(0, min(W, period) - max(0, period - W)) / min(W, period).
    * ``slow``: an index that advances every ``period`` positions (the row). Only the value the
      wave starts in can be shared with the previous wave: ``straddle_share``; 1 where the
      index never advances within ``span`` (one row).
    * ``same``: every position reads the same tile: 1.

    Either way the first wave of each ``span`` positions (a swizzle group, the grid) follows no
    wave that read the same rows and columns: x max(0, 1 - W / span)."""
    if kind == "same":
        share = 1
    elif kind == "fast":
        distinct = emin(W, period)
        share = emax(distinct - emax(period - W, 0), 0) / distinct
    else:
        one_row = span <= period
        share = if_else(one_row, 1, straddle_share(W, period))
    return share * emax(1 - W / span, 0)


def cross_value_share(kind: str, W, period, span, distinct, by_value=True):
    """The share of a wave's distinct tiles of a load that the previous wave also read (what
    leaves DRAM: each tile is one first touch however many CTAs read it), beside
    ``cross_wave_share``'s share of the wave's CTAs that read such a tile (what waits only L2):

    * ``same`` and ``fast``: the two agree (one tile; or each CTA its own tile where W <= the
      period, every tile shared where W > it);
    * ``slow``: the previous wave ends in the value this wave starts in whenever the wave starts
      mid-value: wave i starts iW mod P into a value, the multiples of d = gcd(W, P) below P
      equally often, only 0 of them at a value's start, so 1 - d / P of the waves share one of
      their ``distinct`` values: (1 - d / P) / distinct (1 where the index never advances within
      ``span``). 132 CTAs on rows of 32 tiles: d = 4, 7 / 8 of the waves share 1 of their 5
      rows, where 13.3% of their CTAs (straddle_share) read it. So a wave's new values are
      distinct - (1 - d / P) = W / P over the waves (W + P - d) / P: each value once. Where a
      value is several of the wave's tiles (a wave of whole swizzle groups: the group index, G
      rows, against rows counted ceil(W / (G g1)) x G), ``by_value`` False keeps the CTAs'
      share (``cross_wave_share``).

    Either way x max(0, 1 - W / span): the first wave of each span follows none."""
    if kind != "slow" or not by_value:
        return cross_wave_share(kind, W, period, span)
    d = tile_walk._gcd(W, period)
    first = emax(1 - W / span, 0)
    one_row = span <= period
    shared = emin((1 - d / period) / distinct, 1)
    return if_else(one_row, 1, shared) * first


def describe_cross(info: WaveReuse) -> list[str]:
    """Lines for the breakdown: per load whose tiles the next wave re-reads, the share of the
    wave's CTAs that find their tile left in L2 by the previous wave, the formula with its
    values; and the reuse window against the L2 room (scalars only)."""
    cross, how = info.cross, info.cross_how
    if info.cross_window is None or any(is_array(v) for v in cross.values()):
        return []
    window, room, partitions = info.cross_window
    if is_array(window):
        return []
    out = []
    fits = window <= room
    for op, (line, (kind, period, span), W) in how.items():
        if kind == "same":
            continue
        W, period, span = int(W), int(period), int(span)
        if kind == "fast":
            distinct = min(W, period)
            raw = max(distinct - max(period - W, 0), 0) / distinct
            formula = (f"an index that wraps every {format_counted(period, 'position')}: the previous {format_counted(W, 'position')} read "
                       f"max(0, min({W}, {period}) - max(0, {period} - {W})) / {distinct} = {format_percent(raw)} of its tiles")
        else:
            raw = 1.0 if span <= period else straddle_share(W, period)
            formula = (f"an index that advances every {format_counted(period, 'position')}: the wave shares with the previous one "
                       f"the value it starts in, {format_percent(raw)} of its CTAs over the waves (straddle_share)")
        first = max(1 - W / span, 0)
        if not raw:
            continue
        out.append(f"line {line}: {formula}; x (1 - {W} / {span} positions: the first wave of each run of "
                   f"{span} follows none) = {format_percent(raw * first)}"
                   + ("" if fits else " - but evicted: 0%"))
    if out:
        verdict = "fit" if fits else "do not fit"
        part = f" / {partitions} partitions (each keeps its own copy)" if partitions > 1 else ""
        out.append(f"the previous wave's tiles stay in L2 if its whole loop's distinct bytes (LRU stack distance) "
                   f"fit: {formula_bytes(window)} vs {formula_bytes(room)} of L2{part}: they {verdict}")
    return out


def straddle_share(W, period):
    """The mean share of a wave's W CTAs in the slow index the previous wave ended in. Wave i
    starts at position iW; the value it starts in holds (-iW mod period) more positions, so
    min(W, -iW mod period) of its CTAs share it. Over the waves, -iW mod period takes the
    multiples of d = gcd(W, period) below the period equally often (n = period / d of them):
    mean of min(W, j d), j = 0..n-1, = (d w (w - 1) / 2 + (n - w) W) / n with w = min(W / d, n);
    over W: the share. (Exact over a whole period of waves: 132 CTAs on a 64-wide row: d = 4,
    n = 16, w = 16: 4 x 16 x 15 / 2 / 16 = 30 CTAs, 30 / 132 = 22.7%.)"""
    if is_array(W, period):
        import numpy as np
        Wi = np.asarray(W, dtype=np.int64)
        fi = np.asarray(period, dtype=np.int64)
        d = np.gcd(Wi, fi)
    else:
        import math
        Wi, fi = int(W), int(period)
        d = math.gcd(Wi, fi)
    n = fi // d
    w = emin(Wi // d, n)
    return (d * w * (w - 1) / 2 + (n - w) * Wi) / (n * Wi)


def running_share(mesh: ScopeNode, target: ScopeNode):
    """The share of ``mesh``'s positions that execute ``target``: the product, over the loops
    between them, of min(1, the loop's mean trips per execution). A loop whose trip count is
    0 at some positions and 1 at others (gqa_decode's masked tail block, ``bound 1``) runs at
    exactly its mean share of them; one that runs at least once everywhere gives 1; a loop
    with 0 trips everywhere gives 0, so its body's tiles claim no L2 (they were counted at
    the loop's bound, inflating gqa_decode's window from 25.99 to 34.64 MB). Where a loop's
    trips are uneven and some positions skip it, this is an upper bound on the share."""
    share = 1
    for loop in loops_between(mesh, target):
        share = share * emin(loop.trips, 1)
    return share


def loops_between(mesh: ScopeNode, target: ScopeNode) -> list:
    """The loop nodes of ``mesh``'s subtree that contain ``target``, outermost first."""
    path: list = []

    def visit(node) -> bool:
        if node is target:
            return True
        for c in node.children:
            if visit(c):
                if c.kind == "loop":
                    path.append(c)
                return True
        return False

    visit(mesh)
    return path[::-1]


def enclosing_loop(mesh: ScopeNode, target: ScopeNode):
    """The innermost loop node of ``mesh``'s subtree that contains ``target``."""
    found = None

    def visit(node, loop):
        nonlocal found
        if node is target:
            found = loop
            return True
        for c in node.children:
            if visit(c, c if c.kind == "loop" else loop):
                return True
        return False

    visit(mesh, None)
    return found
