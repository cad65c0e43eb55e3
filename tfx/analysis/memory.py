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
from itertools import combinations

from tfx.analysis.counting import Counter, ScopeNode
from tfx.analysis.numbers import emax, emin, is_array, nbytes
from tfx.ir.ops import BINARY, CAST, UNARY
from tfx.ir.nodes import Composite, Kernel, LoopRegion, MeshRegion, Op, ValueRef, Window, walk


ELEMENTWISE = UNARY | BINARY | CAST

# ---------------------------------------------------------------- footprint

def _axis_interval(axis, full, ranges, env):
    """[lo, hi) covered by one window axis over all values of its index variables."""
    if axis.kind in ("full", "gather"):
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


def footprints(kernel: Kernel, env, counter_ranges) -> dict:
    """Unique bytes per tensor: the union of the boxes its windows cover."""
    boxes: dict[str, list] = {}
    for op in (s for s in walk(kernel.body) if isinstance(s, Op)):
        windows = [o for o in op.operands if isinstance(o, Window)]
        if op.target is not None:
            windows.append(op.target)
        for w in windows:
            t = kernel.tensor(w.tensor)
            dims = [d.evaluate(env) for d in t.type.shape]
            box = tuple(_axis_interval(a, full, counter_ranges, env) for a, full in zip(w.axes, dims))
            boxes.setdefault(w.tensor, []).append(box)
    out = {}
    for name, bs in boxes.items():
        t = kernel.tensor(name)
        unique = _dedupe(bs)
        elements = _union_volume(unique[:10])
        out[name] = nbytes(t.type.dtype.bits, elements)
    return out


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
    for lo, hi in box:
        v = v * emax(hi - lo, 0)
    return v


def _intersect(a, b):
    return tuple((emax(x0, y0), emin(x1, y1)) for (x0, x1), (y0, y1) in zip(a, b))


def _union_volume(boxes):
    """Inclusion-exclusion over boxes (few per tensor in practice)."""
    total = 0
    for r in range(1, len(boxes) + 1):
        sign = 1 if r % 2 else -1
        for combo in combinations(boxes, r):
            box = combo[0]
            for other in combo[1:]:
                box = _intersect(box, other)
            total = total + sign * _volume(box)
    return total


def index_ranges(kernel: Kernel, env) -> dict:
    """(first, count, step) of every coordinate and induction variable, trips at their bound."""
    ranges = {}

    def visit(stmts):
        for s in stmts:
            if isinstance(s, MeshRegion):
                for c, e in zip(s.coords, s.extents):
                    ranges[c] = (0, e.evaluate({**env, **{n: r[1] for n, r in ranges.items()}}), 1)
                visit(s.body)
            elif isinstance(s, LoopRegion):
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
                    ranges[s.var] = (lo, hi - lo + 1, 1)
                else:
                    ranges[s.var] = (lo, count, step)
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


def peak_live(root: ScopeNode, counter: Counter, stmts=None) -> dict:
    """Peak bytes per storage level, per instance of that level.

    Liveness per block, by linear scan: a value is live from the statement that
    defines it to its last use in that block (a use inside a nested region counts
    at the region's statement; a value a loop carries, or the block passes out, stays
    live to the end). Views (reshape, transpose, broadcast) alias their source; an
    op that updates a carried value (``%acc = mma ..., %acc``) writes in place. A
    pipelined loop (``stages S``) holds S copies of each tile a trip loads. Nested
    regions add their own peak at their statement. Values at a thread-scoped level
    (rmem) in a CTA-level scope are spread over the CTA's threads (by the caller).
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

    # A tile whose shape varies per position (a tail tile) is allocated at its largest,
    # which these shapes reach at the variables' first values (min(BM, M - pm*BM) at pm = 0).
    first_env = {**counter.env, **{n: r[0] for n, r in index_ranges(counter.kernel, counter.env).items()}}

    def value_bytes(op):
        ty = counter.info.result_types.get(id(op))
        if ty is None:
            return None, 0
        elems = 1
        for d in ty.shape:
            elems = elems * d.evaluate(first_env)
        return ty.level, nbytes(ty.dtype.bits, elems)

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

    def block(stmts, scope_id: str, stages, carried: frozenset, live_out: frozenset) -> dict:
        """Peak bytes per level over one execution of ``stmts``."""
        flat = []
        for s_ in stmts:   # composites are transparent: their ops join this block
            if isinstance(s_, Composite):
                flat.extend(s_.body)
            else:
                flat.append(s_)
        stmts = flat
        n = len(stmts)
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
            copies = stages if st.opcode in ("load", "copy") else 1
            defs[st.result] = (i, level, b * copies)
            last.setdefault(st.result, i)
            last[st.result] = max(last[st.result], raw_last.get(st.result, i))
        for name in live_out | carried:
            root_name = alias.get(name, name)
            if root_name in defs:
                last[root_name] = n
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
                    _, b = value_bytes(src)
                    moved[c.move_to] = moved.get(c.move_to, 0) + b
        if isinstance(region, LoopRegion):
            stages = region.stages.evaluate(counter.env) if region.stages is not None else 1
            inner = block(region.body, scope_id, stages, frozenset(region.carry), frozenset())
        else:
            inner = block(region.body, scope_id, 1, frozenset(), frozenset())
        for level, b in moved.items():
            inner[level] = inner.get(level, 0) + b
        return inner

    block(counter.kernel.body if stmts is None else stmts, root.id, 1, frozenset(), frozenset())
    return peaks


def _find_def(stmts, name):
    for st in walk(stmts):
        if isinstance(st, Op) and st.result == name:
            return st
    return None
