"""Footprints, peak live bytes per storage level and L2 reuse per wave.

- footprint: the unique bytes each tensor's windows touch over the whole kernel
  (a union of boxes, computed by inclusion-exclusion over the windows' boxes, not a sum);
- peak: per storage level, the bytes live at once in one instance of that level
  (one CTA's shared memory, one thread's registers, the device's gmem), with
  pipelined loops holding ``stages`` copies of what each trip loads;
- wave reuse: which fraction of a wave's gmem reads are first touches (DRAM)
  rather than re-reads of tiles co-resident CTAs already brought into L2.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfx.analysis.counting import Counter, ScopeNode
from tfx.analysis.mma_layout import SHARED_LEVEL
from tfx.analysis.numbers import emax, emin, if_else, is_array, nbytes
from tfx.ir.expr import Const, reads_in
from tfx.ir.ops import ELEMENTWISE, REDUCE
from tfx.ir.nodes import (AxisSlice, Composite, Kernel, LoopRegion, MeshRegion, Op, ValueRef, Window,
                          walk)


# ---------------------------------------------------------------- footprint

@dataclass(frozen=True)
class GatherRows:
    """A gathered axis: which rows it reads is data, only how many is known.

    ``rows`` bounds the distinct rows over the whole kernel: the index tile's elements
    times the executions of the op (each execution may name new rows), at most the axis.
    """

    rows: object


def _axis_interval(axis, full, ranges, env):
    """[lo, hi) covered by one window axis over all values of its index variables."""
    if axis.kind == "full":
        return 0, full
    size = axis.size.evaluate({**env, **{n: r[1] for n, r in ranges.items()}}) \
        if axis.size.free_names() & set(ranges) else axis.size.evaluate(env)
    names = axis.offset.free_names() & set(ranges)
    stride = axis.stride.evaluate(env) if axis.stride is not None else 1
    if not names:
        lo = axis.offset.evaluate(env)
        return emax(lo, 0), emin(lo + (size - 1) * stride + 1, full)
    if _has_modulo_of(axis.offset, names):
        # t % TILES_N wraps around: the offsets are not monotonic in t, so the endpoints do
        # not bound them. Take the whole axis (the tiles of a round-robin loop cover it).
        return 0, full
    lo_env, hi_env = dict(env), dict(env)
    for n in names:
        first, count, step = ranges[n]
        lo_env[n] = first
        hi_env[n] = first + (count - 1) * step
    lo = axis.offset.evaluate(lo_env)
    hi = axis.offset.evaluate(hi_env)
    lo, hi = emin(lo, hi), emax(lo, hi)
    return emax(lo, 0), emin(hi + (size - 1) * stride + 1, full)


def _has_modulo_of(e, names) -> bool:
    from tfx.ir.expr import BinOp, Call, Neg
    if isinstance(e, BinOp):
        if e.op == "%" and e.free_names() & names:
            return True
        return _has_modulo_of(e.lhs, names) or _has_modulo_of(e.rhs, names)
    if isinstance(e, Neg):
        return _has_modulo_of(e.operand, names)
    if isinstance(e, Call):
        return any(_has_modulo_of(a, names) for a in e.args)
    return False


def footprints(kernel: Kernel, env, info) -> tuple[dict, dict]:
    """Unique bytes per tensor and their precision: the union of the boxes its windows cover.

    Index variables are scoped: two launches (or loops) that reuse a coordinate name each
    cover their own range. A window with a gathered axis reads rows named by data: it
    counts at most the rows its index tiles can name (``upper``); the others are exact.
    """
    value_types = {op.result: info.result_types[id(op)] for op in walk(kernel.body)
                   if isinstance(op, Op) and op.result is not None and id(op) in info.result_types}
    boxes: dict[str, list] = {}
    for op, ranges, execs in _ops_in_scope(kernel.body, env, {}, 1):
        windows = [o for o in op.operands if isinstance(o, Window)]
        if op.target is not None:
            windows.append(op.target)
        first_env = {**env, **{n: r[0] for n, r in ranges.items()}}
        for w in windows:
            t = kernel.tensor(w.tensor)
            dims = [d.evaluate(env) for d in t.type.shape]
            box = []
            for a, full in zip(w.axes, dims):
                if a.kind == "gather":
                    index_elements = 1
                    for d in value_types[a.index].shape:
                        index_elements = index_elements * d.evaluate(first_env)
                    box.append(GatherRows(emin(index_elements * execs, full)))
                elif a.kind == "runtime":
                    # a start read from data: each execution may land anywhere, like a gather
                    # of `size` rows
                    size = a.size.evaluate({**env, **{n: r[1] for n, r in ranges.items()}})
                    box.append(GatherRows(emin(size * execs, full)))
                    for r in reads_in(a.offset):   # the elements read for the start: exact
                        rt = kernel.tensor(r.tensor)
                        rbox = tuple(_axis_interval(AxisSlice("range", i, Const(1)), d.evaluate(env), ranges, env)
                                     for i, d in zip(r.indices, rt.type.shape))
                        boxes.setdefault(r.tensor, []).append(rbox)
                else:
                    box.append(_axis_interval(a, full, ranges, env))
            boxes.setdefault(w.tensor, []).append(tuple(box))
    out, precision = {}, {}
    for name, bs in boxes.items():
        t = kernel.tensor(name)
        unique = _dedupe(bs)
        exact = [b for b in unique if not any(isinstance(a, GatherRows) for a in b)]
        gathered = [b for b in unique if any(isinstance(a, GatherRows) for a in b)]
        elements = _union_volume(exact)
        if gathered:
            # Where gathered rows fall is data: they may miss every other box, so their
            # volumes add (an upper bound), and no tensor holds more than all its elements.
            whole = 1
            for d in t.type.shape:
                whole = whole * d.evaluate(env)
            for b in gathered:
                elements = elements + _volume(b)
            elements = emin(elements, whole)
        out[name] = nbytes(t.type.dtype.bits, elements)
        precision[name] = "upper" if gathered else "exact"
    return out, precision


def _dedupe(boxes):
    seen, out = set(), []
    for b in boxes:
        key = repr(b)
        if key not in seen:
            seen.add(key)
            out.append(b)
    return out


def _volume(box):
    v = 1
    for axis in box:
        if isinstance(axis, GatherRows):
            v = v * axis.rows
        else:
            lo, hi = axis
            v = v * emax(hi - lo, 0)
    return v


def _intersect(a, b):
    return tuple((emax(x0, y0), emin(x1, y1)) for (x0, x1), (y0, y1) in zip(a, b))


# Inclusion-exclusion terms a sweep may evaluate before it counts point by point instead.
_ARRAY_TERMS_BUDGET = 4096


def _union_volume(boxes):
    """Elements in the union of axis-aligned boxes ([lo, hi) per axis), exactly.

    One configuration: a sweep over the first axis's distinct ends, each slab adding its
    width times the union of the boxes spanning it (one axis fewer), polynomial in the
    number of boxes. A sweep of configurations (numpy bounds): inclusion-exclusion that
    skips every superset of an empty intersection (disjoint windows cost pairs, not
    subsets); past a budget of terms, the scalar sweep per configuration.
    """
    if not boxes:
        return 0
    if any(is_array(lo, hi) for b in boxes for lo, hi in b):
        return _union_volume_arrays(boxes)
    return _union_volume_scalar(boxes)


def _union_volume_scalar(boxes):
    boxes = [b for b in boxes if all(hi > lo for lo, hi in b)]
    if not boxes:
        return 0
    if len(boxes[0]) == 0:
        return 1
    if len(boxes) == 1:
        return _volume(boxes[0])
    cuts = sorted({e for b in boxes for e in b[0]})
    total = 0
    for lo, hi in zip(cuts, cuts[1:]):
        spanning = _dedupe([b[1:] for b in boxes if b[0][0] <= lo and b[0][1] >= hi])
        if spanning:
            total = total + (hi - lo) * _union_volume_scalar(spanning)
    return total


def _union_volume_arrays(boxes):
    import numpy as np
    terms = 0
    total = 0

    def empty(v) -> bool:
        return not np.any(v) if is_array(v) else v == 0

    def add_intersections(start, box, sign):
        nonlocal terms, total
        for j in range(start, len(boxes)):
            inter = boxes[j] if box is None else _intersect(box, boxes[j])
            v = _volume(inter)
            if empty(v):
                continue   # so is every intersection that adds more boxes to this one
            terms += 1
            if terms > _ARRAY_TERMS_BUDGET:
                raise _TooManyTerms
            total = total + sign * v
            add_intersections(j + 1, inter, -sign)

    try:
        add_intersections(0, None, 1)
        return total
    except _TooManyTerms:
        pass
    shape = np.broadcast_shapes(*(np.shape(x) for b in boxes for ax in b for x in ax))
    bounds = [[(np.broadcast_to(lo, shape), np.broadcast_to(hi, shape)) for lo, hi in b] for b in boxes]
    out = np.zeros(shape, dtype=np.float64)
    for idx in np.ndindex(shape):
        out[idx] = _union_volume_scalar([tuple((int(lo[idx]), int(hi[idx])) for lo, hi in b) for b in bounds])
    return out


class _TooManyTerms(Exception):
    pass


def _region_ranges(s, env, ranges) -> dict:
    """The (first, count, step) of the variables a mesh or loop introduces, given the
    enclosing ``ranges`` (trip counts at their bound)."""
    out = {}
    if isinstance(s, MeshRegion):
        for c, e in zip(s.coords, s.extents):
            out[c] = (0, e.evaluate({**env, **{n: r[1] for n, r in ranges.items()}}), 1)
        return out
    lo_env = {**env, **{n: r[0] for n, r in ranges.items()}}
    hi_env = {**env, **{n: r[0] + (r[1] - 1) * r[2] for n, r in ranges.items()}}
    step = s.step.evaluate(hi_env)
    lo = s.start.evaluate(lo_env)
    start_hi = s.start.evaluate(hi_env)
    if s.trip.kind == "runtime":
        count = s.trip.hi.evaluate(hi_env)
    elif s.bound is not None:
        count = s.bound.evaluate(hi_env)
    else:
        count = emax(-((start_hi - s.stop.evaluate(hi_env)) // step), 0)
    count = emax(count, 1)
    if s.start.free_names() & set(ranges):
        # The start varies per position (t = sm, sm + CTAS, ...): over all positions
        # the variable takes every value from the lowest start to the highest end.
        hi = start_hi + (count - 1) * step
        out[s.var] = (lo, hi - lo + 1, 1)
    else:
        out[s.var] = (lo, count, step)
    return out


def _ops_in_scope(stmts, env, ranges, execs):
    """Every op with the index ranges in scope where it stands and a bound on its executions
    (the product of the counts of the variables in scope)."""
    for s in stmts:
        if isinstance(s, Op):
            yield s, ranges, execs
        elif isinstance(s, (MeshRegion, LoopRegion)):
            own = _region_ranges(s, env, ranges)
            inner_execs = execs
            for _, count, _ in own.values():
                inner_execs = inner_execs * count
            yield from _ops_in_scope(s.body, env, {**ranges, **own}, inner_execs)
        elif hasattr(s, "body"):
            yield from _ops_in_scope(s.body, env, ranges, execs)


def index_ranges(kernel: Kernel, env) -> dict:
    """(first, count, step) of every coordinate and induction variable, trips at their bound.

    One flat map: where two regions reuse a name, the later one wins (footprints scope them).
    """
    ranges = {}

    def visit(stmts):
        for s in stmts:
            if isinstance(s, (MeshRegion, LoopRegion)):
                ranges.update(_region_ranges(s, env, ranges))
                visit(s.body)
            elif hasattr(s, "body"):
                visit(s.body)

    visit(kernel.body)
    return ranges


# ---------------------------------------------------------------- peak live bytes

@dataclass
class LevelPeak:
    level: str
    bytes: object        # per instance of the level (per CTA for smem, per thread for rmem)
    scope: str           # the scope at which the peak is reached


def peak_live(root: ScopeNode, counter: Counter, stmts=None, buffers=None, staged=None, exchange=None,
              padded=None, unpipelined=None) -> dict:
    """Peak bytes per storage level, per instance of that level.

    Liveness per block, by linear scan: a value is live from the statement that
    defines it to its last use in that block (a use inside a nested region counts
    at the region's statement; a value a loop carries, or the block passes out, stays
    live to the end). Views (reshape, transpose, broadcast) alias their source; an
    op that updates a carried value (``%acc = mma ..., %acc``) writes in place. A
    pipelined loop (``stages S``) holds S copies of each tile a trip loads. Nested
    regions add their own peak at their statement. Values at a thread-scoped level
    (rmem) in a CTA-level scope are spread over the CTA's threads (by the caller).
    ``buffers`` ({id(loop region): copies}) overrides S for the loop's shared-memory tiles, where
    the code generator allocates another count (tfx.analysis.smem_buffers: Triton's warp-mma
    loops hold S - 1); its register values keep S. ``staged`` ({id(loop region): (groups of operand
    names, condition)}): where the condition holds, the loop's shared-memory tiles those operands
    name are live a group at a time in one buffer, the largest group's (tfx.analysis.smem_buffers:
    a one-stage loop's dots each hold their own operands; one-stage fp8 operands on the warp mma
    one by one); groups that share a tile are one. ``exchange`` ({id(loop region): bytes}): shared
    memory a trip passes register operands through, beside its tiles. ``padded`` ({id(op):
    bytes}): a shared-memory tile allocated at more bytes than its type (an mma's A at the
    instruction's rows). ``unpipelined`` ({id(loop region): ((operand name, condition), ...)}):
    shared tiles of the loop that hold one buffer where the condition holds, whatever the loop's
    count (an fp8 operand Triton transposes in registers and does not pipeline).
    """
    peaks: dict[str, LevelPeak] = {}
    nodes_by_region = {id(n.region): n for n in root.walk() if n.region is not None}

    def record(level, amount, scope_id):
        prev = peaks.get(level)
        if prev is None:
            peaks[level] = LevelPeak(level, amount, scope_id)
        elif is_array(amount, prev.bytes):
            peaks[level] = LevelPeak(level, emax(amount, prev.bytes), prev.scope)
        elif amount > prev.bytes:
            peaks[level] = LevelPeak(level, amount, scope_id)

    first_env = allocation_env(counter)

    def value_bytes(op):
        level, b = allocated_bytes(counter, op, first_env)
        if padded and id(op) in padded:
            b = padded[id(op)]
        return level, b

    def uses_of(stmt) -> set:
        if isinstance(stmt, Op):
            names = {o.name for o in stmt.operands if isinstance(o, ValueRef)}
            for o in list(stmt.operands) + ([stmt.target] if stmt.target is not None else []):
                if isinstance(o, Window):
                    names |= {a.index for a in o.axes if a.kind == "gather"}
            return names
        names = {c.name for c in getattr(stmt, "captures", ())}
        names |= set(getattr(stmt, "carry", ()))
        if isinstance(stmt, Composite):
            for inner in stmt.body:
                names |= uses_of(inner)
        return names

    def block(stmts, scope_id: str, stages, carried: frozenset, live_out: frozenset,
              smem_copies=None, one_at_a_time=None, single=None) -> dict:
        """Peak bytes per level over one execution of ``stmts``."""
        flat = []
        for s_ in stmts:   # composites are transparent: their ops join this block
            if isinstance(s_, Composite):
                flat.extend(s_.body)
            else:
                flat.append(s_)
        stmts = flat
        n = len(stmts)
        # a load's copies at the shared level: the code generator's own count, else S
        shared_copies = smem_copies if smem_copies is not None else stages
        # Pass 1: the last statement that uses each name (views resolved to their source).
        view_src: dict[str, str] = {}
        raw_last: dict[str, int] = {}
        for i, st in enumerate(stmts):
            for u in uses_of(st):
                raw_last[view_src.get(u, u)] = i
            if isinstance(st, Op) and st.result is not None and st.opcode in ("reshape", "transpose", "broadcast"):
                src = st.operands[0]
                if isinstance(src, ValueRef):
                    view_src[st.result] = view_src.get(src.name, src.name)
        # Pass 2: storage. A view aliases its source; an update of a carried value or an
        # accumulating mma writes in place; an elementwise op whose tile operand dies here
        # (same level, at least as many bytes) reuses that operand's storage, as register
        # allocators do.
        alias: dict[str, str] = {}
        defs: dict[str, tuple] = {}        # root name -> (index, level, bytes)
        last: dict[str, int] = {}
        for i, st in enumerate(stmts):
            for u in uses_of(st):
                r = alias.get(u, u)
                last[r] = max(last.get(r, i), i)
            if not (isinstance(st, Op) and st.result is not None):
                continue
            if st.opcode in ("reshape", "transpose", "broadcast"):
                src = st.operands[0]
                alias[st.result] = alias.get(src.name, src.name) if isinstance(src, ValueRef) else st.result
                continue
            if st.result in carried or st.result in defs or st.opcode in ("mma", "dot") and \
                    any(isinstance(o, ValueRef) and o.name == st.result for o in st.operands):
                last[st.result] = max(last.get(st.result, i), i)
                continue  # in-place update of a value that already has storage
            level, b = value_bytes(st)
            if level is None:
                continue
            if st.opcode in ELEMENTWISE:
                # The decision is structural (same shape expression, level, and no wider
                # result), so one configuration and a whole sweep reuse the same storage.
                result_type = counter.info.result_types.get(id(st))
                operand_types = counter.info.operand_types.get(id(st), ())
                donor = None
                for o, oty in zip(st.operands, operand_types):
                    if not isinstance(o, ValueRef) or oty is None or result_type is None:
                        continue
                    if oty.level != result_type.level or oty.shape != result_type.shape \
                            or oty.dtype.bits < result_type.dtype.bits:
                        continue
                    root_name = alias.get(o.name, o.name)
                    if raw_last.get(view_src.get(o.name, o.name)) != i or root_name in live_out:
                        continue
                    # A carried value may donate only when the loop reassigns it later in the
                    # body (its old value is dead after this use).
                    if root_name in carried and not any(
                            isinstance(x, Op) and x.result == root_name for x in stmts[i + 1:]):
                        continue
                    if root_name in defs or root_name in carried:
                        donor = root_name
                        break
                if donor is not None:
                    alias[st.result] = donor
                    last[donor] = max(last.get(donor, i), raw_last.get(st.result, i))
                    continue
            copies = 1
            if st.opcode in ("load", "copy"):
                copies = shared_copies if level == SHARED_LEVEL else stages
            defs[st.result] = (i, level, b * copies)
            last.setdefault(st.result, i)
            last[st.result] = max(last[st.result], raw_last.get(st.result, i))
        for name in live_out | carried:
            root_name = alias.get(name, name)
            if root_name in defs:
                last[root_name] = n
        for name, cond in single or ():
            # a tile the pipeliner leaves out: one buffer, not the loop's count
            r = alias.get(name, name)
            if r in defs and defs[r][1] == SHARED_LEVEL:
                d, lvl, b = defs[r]
                defs[r] = (d, lvl, if_else(cond, b / shared_copies, b))
        if one_at_a_time is not None:
            # groups of operands live in turn through one buffer: the first tile keeps the largest
            # group's bytes, the rest none, where the condition holds (elementwise for a sweep)
            groups, cond = one_at_a_time
            tiles: list = []
            for g in groups:
                roots = {r for r in (alias.get(n, n) for n in g if n is not None)
                         if r in defs and defs[r][1] == SHARED_LEVEL}
                for other in [t for t in tiles if t & roots]:    # a tile two groups read: one group
                    tiles.remove(other)
                    roots |= other
                if roots:
                    tiles.append(roots)
            if len(tiles) > 1:
                order = [r for r in defs if any(r in t for t in tiles)]     # definition order
                largest = 0
                for t in tiles:
                    group = 0
                    for r in t:
                        group = group + defs[r][2]
                    largest = emax(largest, group)
                d0, lvl0, b0 = defs[order[0]]
                defs[order[0]] = (d0, lvl0, if_else(cond, largest, b0))
                for r in order[1:]:
                    d, lvl, b = defs[r]
                    defs[r] = (d, lvl, if_else(cond, 0, b))
        best: dict = {}
        for i, st in enumerate(stmts):
            live: dict = {}
            for name, (d, level, b) in defs.items():
                if d <= i <= last.get(name, d):
                    live[level] = live.get(level, 0) + b
            if not isinstance(st, Op):
                child = child_peak(st, scope_id)
                for level, b in child.items():
                    live[level] = live.get(level, 0) + b
            for level, b in live.items():
                best[level] = emax(best.get(level, 0), b)
        for level, b in best.items():
            record(level, b, scope_id)
        return best

    def child_peak(region, parent_id: str) -> dict:
        node = nodes_by_region.get(id(region))
        scope_id = node.id if node is not None else parent_id
        moved: dict = {}
        for c in getattr(region, "captures", ()):
            if c.move_to is not None:
                # A moved capture gets storage of its own at the destination level.
                src = _find_def(counter.kernel.body, c.name)
                if src is not None:
                    # the copy at its own level, as typed (a shared tile's padding stays there)
                    _, b = allocated_bytes(counter, src, first_env)
                    moved[c.move_to] = moved.get(c.move_to, 0) + b
        if isinstance(region, LoopRegion):
            stages = region.stages.evaluate(counter.env) if region.stages is not None else 1
            inner = block(region.body, scope_id, stages, frozenset(region.carry), frozenset(),
                          (buffers or {}).get(id(region)), (staged or {}).get(id(region)),
                          (unpipelined or {}).get(id(region)))
            swapped = (exchange or {}).get(id(region))
            if swapped is not None:
                # register operands crossing warps, beside the trip's tiles (the later dot's
                # buffer is live where its operand is exchanged)
                inner[SHARED_LEVEL] = inner.get(SHARED_LEVEL, 0) + swapped
                record(SHARED_LEVEL, inner[SHARED_LEVEL], scope_id)
        else:
            inner = block(region.body, scope_id, 1, frozenset(), frozenset())
        for level, b in moved.items():
            inner[level] = inner.get(level, 0) + b
        return inner

    block(counter.kernel.body if stmts is None else stmts, root.id, 1, frozenset(), frozenset())
    return peaks


def allocation_env(counter: Counter) -> dict:
    """The environment a tile is allocated at: a tile whose shape varies per position (a tail
    tile) is allocated at its largest, which these shapes reach at the variables' first values
    (min(BM, M - pm*BM) at pm = 0)."""
    return {**counter.env, **{n: r[0] for n, r in index_ranges(counter.kernel, counter.env).items()}}


def allocated_bytes(counter: Counter, op, first_env: dict) -> tuple:
    """(storage level, bytes) of ``op``'s result at ``first_env``; (None, 0) if it has no type."""
    ty = counter.info.result_types.get(id(op))
    if ty is None:
        return None, 0
    elems = 1
    for d in ty.shape:
        elems = elems * d.evaluate(first_env)
    return ty.level, nbytes(ty.dtype.bits, elems)


VIEWS = ("reshape", "transpose", "broadcast")


def row_held_bytes(region, counter: Counter):
    """Bytes of register tiles a loop-free body without a matrix multiply holds whole at its
    peak, as a code generator that lowers elementwise chains element by element keeps them
    (Triton: each op of a chain is applied to one element's registers, so the chain's
    intermediates never exist as tiles; docs/analysis.md section 6). A tile is held whole when
    it is
      * a load's result: the whole tile's loads are issued at once (for their latency), and
        its values stay until the last element of the chains they feed is computed;
      * a value used again after a reduction that follows it (rmsnorm's f32 row, softmax's
        exponentials): every element must exist before the reduction's result, and again
        after it;
      * a reduction's result (one value a row).
    A held value lives from its definition through the elementwise chains it feeds (views
    alias their source) up to the statement where another held value takes its place or the
    last consumer; at that statement its storage passes to the result, element by element.
    ``region``: a mesh's region whose body has no nested region; returns None otherwise (the
    caller keeps section 5's liveness). Ints or numpy arrays (a sweep's tiles)."""
    stmts = []
    for st in region.body:
        if isinstance(st, Composite):
            stmts.extend(st.body)
        elif isinstance(st, Op):
            stmts.append(st)
        else:
            return None          # a nested region (a loop): not a row body
    first_env = allocation_env(counter)
    index = {}                   # value name -> its defining statement's index
    users: dict = {}             # value name -> indices of the statements that read it
    for i, st in enumerate(stmts):
        for o in st.operands:
            if isinstance(o, ValueRef):
                users.setdefault(o.name, []).append(i)
        if st.result is not None:
            index[st.result] = i
    reductions = [i for i, st in enumerate(stmts) if st.opcode in REDUCE]

    def held(st, i) -> bool:
        if st.opcode in ("load", "copy") or st.opcode in REDUCE:
            return True
        if st.opcode in VIEWS:
            return False
        return any(i < j < u for j in reductions for u in users.get(st.result, ()))

    keep = {st.result: held(st, i) for i, st in enumerate(stmts) if st.result is not None}
    ends: dict = {}              # value name -> the statement where its storage is given up
    for i in range(len(stmts) - 1, -1, -1):
        st = stmts[i]
        if st.result is None:
            continue
        end = i
        for u in users.get(st.result, ()):
            end = max(end, u)
            nxt = stmts[u]
            # a chain that is not a tile of its own keeps this one's elements until it ends
            if nxt.result is not None and not keep.get(nxt.result, True) and (
                    nxt.opcode in ELEMENTWISE or nxt.opcode in VIEWS):
                end = max(end, ends.get(nxt.result, u))
        ends[st.result] = end
    tiles = []                   # (first statement, statement it is given up at, bytes) a held register tile
    for st in stmts:
        if st.result is not None and keep[st.result]:
            level, size = allocated_bytes(counter, st, first_env)
            if level == "rmem":
                tiles.append((index[st.result], ends[st.result], size))
    best = 0
    for i in range(len(stmts)):
        live = 0
        for d, e, size in tiles:
            if d <= i and (i < e or i == d):
                live = live + size
        best = emax(best, live)
    return best


def _find_def(stmts, name):
    for st in walk(stmts):
        if isinstance(st, Op) and st.result == name:
            return st
    return None
