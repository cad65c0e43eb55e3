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

import numpy as np

from tfx.analysis.counting import Counter, ScopeNode
from tfx.analysis.numbers import emax, emin, is_array, nbytes, ratio
from tfx.ir.expr import linear_coefficients
from tfx.ir.nodes import Kernel, LoopRegion, MeshRegion, Op, Window, walk


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
    lo_env, hi_env = dict(env), dict(env)
    for n in names:
        first, count, step = ranges[n]
        lo_env[n] = first
        hi_env[n] = first + (count - 1) * step
    lo = axis.offset.evaluate(lo_env)
    hi = axis.offset.evaluate(hi_env)
    lo, hi = emin(lo, hi), emax(lo, hi)
    return emax(lo, 0), emin(hi + (size - 1) * stride + 1, full)


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
                benv = {**env, **{n: r[0] + (r[1] - 1) * r[2] for n, r in ranges.items()}}
                start = s.start.evaluate(benv) if not (s.start.free_names() - set(benv)) else 0
                step = s.step.evaluate(benv)
                if s.trip.kind == "runtime":
                    count = s.trip.hi.evaluate(benv)
                elif s.bound is not None:
                    count = s.bound.evaluate(benv)
                else:
                    count = emax(-((start - s.stop.evaluate(benv)) // step), 0)
                ranges[s.var] = (start, emax(count, 1), step)
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


def peak_live(root: ScopeNode, counter: Counter, threads_per_cta, mesh_units) -> dict:
    """Peak bytes per storage level, per instance of that level.

    Conservative liveness: every value a scope defines stays live until the scope
    ends; a pipelined loop (``stages S``) holds S copies of each tile it loads.
    Values at a thread-scoped level (rmem) that live in a CTA-level scope are
    spread over the CTA's threads.
    """
    peaks: dict[str, LevelPeak] = {}

    def scope_bytes(node: ScopeNode, multiplier) -> dict:
        here: dict[str, object] = {}
        for c in node.children:
            if c.kind == "op" and c.op is not None and c.op.result is not None:
                ty = counter.info.result_types.get(id(c.op))
                if ty is None or c.op.opcode in ("reshape", "transpose", "broadcast"):
                    continue
                if c.op.opcode == "mma" or (node.region is not None and isinstance(node.region, LoopRegion)
                                            and c.op.result in node.region.carry):
                    continue  # an accumulator updated in place: counted where it was created
                dims = [counter.ev(d, _RangesCtx(counter, node)) for d in ty.shape]
                elems = 1
                for d in dims:
                    elems = elems * d
                b = nbytes(ty.dtype.bits, elems)
                stages = node.stages if (node.kind == "loop" and c.op.opcode in ("load", "copy")) else 1
                here[ty.level] = here.get(ty.level, 0) + b * _or1(stages) * multiplier
        child_max: dict[str, object] = {}
        for c in node.children:
            if c.kind in ("loop", "composite", "mesh", "call"):
                sub = scope_bytes(c, multiplier)
                for lvl, b in sub.items():
                    child_max[lvl] = emax(child_max.get(lvl, 0), b)
        out = dict(here)
        for lvl, b in child_max.items():
            out[lvl] = out.get(lvl, 0) + b
        for lvl, b in out.items():
            prev = peaks.get(lvl)
            if prev is None:
                peaks[lvl] = LevelPeak(lvl, b, node.id)
            elif is_array(b, prev.bytes):
                peaks[lvl] = LevelPeak(lvl, emax(b, prev.bytes), prev.scope)
            elif b > prev.bytes:
                peaks[lvl] = LevelPeak(lvl, b, node.id)
        return out

    scope_bytes(root, 1)
    return peaks


def _or1(x):
    """``x or 1`` that also works elementwise on arrays (0 becomes 1)."""
    if is_array(x):
        return np.where(x == 0, 1, x)
    return x or 1


class _RangesCtx:
    """Adapter so Counter.ev can evaluate shapes without the walk's context (params only)."""

    def __init__(self, counter, node):
        self.ranges = {}

