"""Per-scope counting: what every executing scope computes and moves.

One walk over the IR attaches to every op (and every moving capture) its work
and traffic per execution, how many times it executes in total (every loop trip
times every executing mesh position) and its logical multiplier (the trips of
the loops it varies in). Regions aggregate their children. See docs/analysis.md.

Everything is closed-form: trip counts, extents and window unions are products
and affine sums; the one enumeration is a trip count that is not affine in the few
positions it varies over (at most MAX_ENUMERATED_POSITIONS of them, evaluated in one
numpy pass). The walk works on scalar environments (exact) and numpy-array
environments (vectorized sweeps) alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from tfx.errors import TfxError
from tfx.ir import ops as opcat
from tfx.ir.expr import Expr, linear_coefficients, reads_in
from tfx.ir.nodes import Composite, Kernel, LoopRegion, MeshRegion, Module, Op, Scalar, ValueRef, Window
from tfx.ir.types import TileType
from tfx.ir.verify import KernelInfo
from tfx.analysis import mma_layout, mma_path
from tfx.analysis.mma_layout import SHARED_LEVEL
from tfx.analysis.roofline import unit_conversions
from tfx.analysis.numbers import (cdiv, combine_precision, emax, emin, floor_sum, is_array, nbytes,
                                  ratio, where)

# Keys of per-execution quantities.
#   ("flops", dtype, unit)      unit: tensor | vector | special
#   ("traffic", level, "read"|"write")
#   ("link", name, "bytes")


@dataclass
class ValueInfo:
    type: TileType
    dims: tuple           # concrete extents (numbers or arrays)
    deps: frozenset       # index variables the value varies with
    # The axis that is contiguous where the tile was loaded from (a row-major window: its
    # last axis; a 2-D transpose swaps it); None when unknown (computed in registers).
    minor: Any = None
    # The mma ops whose results flow into this value (elementwise ops carry them on), so an
    # mma can tell that it consumes another's result (tfx.analysis.mma_layout: chained dots)
    mma_src: tuple = ()

    @property
    def elements(self):
        n = 1
        for d in self.dims:
            n = n * d
        return n

    @property
    def nbytes(self):
        return nbytes(self.type.dtype.bits, self.elements)


# Most positions (combinations of index variables) a trip count that is not affine in them
# is evaluated at to get its exact mean; past it, the loop's stated bound (an upper bound).
MAX_ENUMERATED_POSITIONS = 4096


def _integral(*xs) -> bool:
    """Every value a whole number (a Python or numpy int, or an integer array)."""
    import numpy as np
    for x in xs:
        if is_array(x):
            if not np.issubdtype(np.asarray(x).dtype, np.integer):
                return False
        elif not isinstance(x, (int, np.integer)):
            return False
    return True


@dataclass
class IndexRange:
    """The values an index variable takes in one execution of its region."""

    first: Any
    count: Any
    step: Any
    regular: bool = True   # False when its count varies per executing position
    last: Any = None       # the largest value it takes (for bounds checks)


@dataclass
class ScopeNode:
    """One node of the scope tree: kernel, mesh, loop, composite, op or capture."""

    id: str
    kind: str
    label: str
    line: int | None
    execs: Any                            # total executions of this node
    logical: Any = 1                      # logical multiplier (trips of the loops it varies in)
    precision: str = "exact"
    per_exec: dict = field(default_factory=dict)   # key -> quantity per execution (ops only)
    children: list = field(default_factory=list)
    op: Any = None
    region: Any = None
    trips: Any = None                     # loops: trips per execution of the loop
    stages: Any = None
    positions: Any = None                 # meshes: positions per execution
    depth: int = 0
    level: str | None = None              # meshes: level name
    units: dict = field(default_factory=dict)   # mesh positions by level enclosing this node
    # Aggregates, filled by aggregate(): key -> total, key -> logical
    total: dict = field(default_factory=dict)
    logical_sum: dict = field(default_factory=dict)

    def walk(self):
        """This scope and every scope below it, depth first, each before its children in order:
        one generator for the whole walk (nested ``yield from`` resumed every generator up the
        path for each node: ~6,000 resumptions an analysis of flash_prefill's 72 scopes)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            if node.children:
                stack.extend(reversed(node.children))

    def body_ops(self) -> list:
        """The op nodes (with an op) of this scope and below, in walk (program) order. Built at
        the first ask, once the scope is complete (the counter asks only then), and kept: the
        time model asks a loop for its ops again and again. A shared list: callers do not change it."""
        ops = self.__dict__.get("_memo_ops")
        if ops is None:
            ops = self._memo_ops = [c for c in self.walk() if c.kind == "op" and c.op is not None]
        return ops

    def reads(self) -> list:
        """An op node's ``Op.value_reads``, kept: a trip's paths and chains ask each op again and
        again. A shared list: callers do not change it."""
        names = self.__dict__.get("_memo_reads")
        if names is None:
            names = self._memo_reads = self.op.value_reads()
        return names

    def mma_ops(self):
        """The matrix-multiply op nodes (``mma`` and ``dot``) of this scope and below, in walk order."""
        return (c for c in self.body_ops() if c.op.opcode in ("mma", "dot"))

    def load_ops(self):
        """The ``load`` op nodes of this scope and below, in walk (program) order."""
        return (c for c in self.body_ops() if c.op.opcode == "load")

    def __getstate__(self):
        # what is kept to answer again (``_memo_*``) is rebuilt after a pickle, not carried
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_memo_")}


class Counter:
    def __init__(self, module: Module, kernel: Kernel, env: Mapping[str, Any], operand_reads=None,
                 profile: Any = None):
        # ``profile``: the machine whose counts a called kernel's defaults may name (units(sm))
        self.profile = profile
        # ``operand_reads(node)``: an mma node's shared-memory reads as its warps issue them
        # (tfx.analysis.mma_layout.OperandReads), or None to keep A and B read once; given by
        # analyze() from the profile and the CTA's warps (mma_layout.shared_reads)
        self.operand_reads = operand_reads
        self.module = module
        self.kernel = kernel
        self.info: KernelInfo = module.info[kernel.name]
        self.env = dict(env)
        self.tensor_dims = {t.name: tuple(d.evaluate(self.env) for d in t.type.shape)
                            for t in kernel.tensors}
        self.tensor_types = {t.name: t.type for t in kernel.tensors}
        self.tensor_roles = {t.name: t.role for t in kernel.tensors}
        self._ids: dict[str, int] = {}

    # ------------------------------------------------------------ entry
    def run(self) -> ScopeNode:
        root = ScopeNode(id=self.kernel.name, kind="kernel", label=f"kernel {self.kernel.name}",
                         line=self.kernel.loc.line if self.kernel.loc else None, execs=1)
        ctx = _Ctx(execs=1, loops=(), ranges={}, values={}, precision="exact", units={}, depth=0)
        self.block(self.kernel.body, root, ctx)
        if self.operand_reads is not None:
            # after the walk: an mma learns it is chained only when a later one reads its result
            for node in root.mma_ops():
                self.shared_operand_reads(node)
        aggregate(root)
        return root

    def shared_operand_reads(self, node: ScopeNode) -> None:
        """Replace the once-read bytes of an mma's shared-memory operands by the bytes its warps
        read (docs/analysis.md section 3, "mma operands in shared memory"): each warp (or
        warpgroup) reads its own tile's rows of A and columns of B, so the readers side by side
        re-read them. Kept on the node (``operand_reads``) for the breakdown's line."""
        once = getattr(node, "mma_operands", None)
        reads = self.operand_reads(node) if once is not None else None
        if reads is None:
            return
        changed = False
        for (level, read_once), again in zip(once, (reads.a_bytes, reads.b_bytes)):
            if level == SHARED_LEVEL:
                key = ("traffic", level, "read")
                node.per_exec[key] = node.per_exec[key] + again - read_once
                changed = True
        if changed:
            node.operand_reads = reads

    def new_id(self, parent: ScopeNode, label: str) -> str:
        base = f"{parent.id}/{label}"
        n = self._ids.get(base, 0)
        self._ids[base] = n + 1
        return base if n == 0 else f"{base}#{n + 1}"

    def ev(self, e: Expr, ctx: "_Ctx"):
        """Evaluate an expression that may use index variables: at their mean value."""
        names = e.free_names() & set(ctx.ranges)
        if not names:
            return e.evaluate(self.env)
        env = dict(self.env)
        for n in names:
            r = ctx.ranges[n]
            env[n] = r.first + ratio((r.count - 1) * r.step, 2) if not is_array(r.count) else r.first + (r.count - 1) * r.step / 2
        return e.evaluate(env)

    # ------------------------------------------------------------ statements
    def block(self, stmts, parent: ScopeNode, ctx: "_Ctx") -> None:
        for s in stmts:
            if isinstance(s, Op):
                self.op(s, parent, ctx)
            elif isinstance(s, MeshRegion):
                self.mesh(s, parent, ctx)
            elif isinstance(s, LoopRegion):
                self.loop(s, parent, ctx)
            elif isinstance(s, Composite):
                node = ScopeNode(id=self.new_id(parent, f"composite {s.name}"), kind="composite",
                                 label=f"composite {s.name}", line=s.loc.line if s.loc else None,
                                 execs=ctx.execs, precision=ctx.precision, region=s,
                                 depth=ctx.depth + 1, units=dict(ctx.units))
                parent.children.append(node)
                self.block(s.body, node, ctx.child(depth=ctx.depth + 1))

    def region_captures(self, region, node: ScopeNode, ctx: "_Ctx", inner_values: dict) -> None:
        """Captured values are visible inside; a capture ``-> level`` moves the value once
        per execution of the region (counted at the region's own execution count)."""
        for c in region.captures:
            if c.name not in ctx.values:
                continue  # tensors and index variables
            v = ctx.values[c.name]
            if c.move_to is None:
                inner_values[c.name] = v
                continue
            moved = ValueInfo(v.type.with_level(c.move_to), v.dims, v.deps)
            inner_values[c.name] = moved
            cap = ScopeNode(id=self.new_id(node, f"capture {c.name} -> {c.move_to}"), kind="capture",
                            label=f"capture {c.name} -> {c.move_to}", line=c.loc.line if c.loc else None,
                            execs=ctx.execs, precision=ctx.precision, depth=ctx.depth + 1,
                            units=dict(ctx.units))
            b = v.nbytes
            cap.per_exec = {("traffic", v.type.level, "read"): b, ("traffic", c.move_to, "write"): b}
            cap.logical = self.logical_multiplier(v.deps, ctx)
            node.children.append(cap)

    def mesh(self, m: MeshRegion, parent: ScopeNode, ctx: "_Ctx") -> None:
        extents = [self.ev(e, ctx) for e in m.extents]
        positions = 1
        for e in extents:
            positions = positions * e
        units = dict(ctx.units)
        units[m.level] = units.get(m.level, 1) * positions
        label = f"mesh {m.level}"
        node = ScopeNode(id=self.new_id(parent, label), kind="mesh", label=label,
                         line=m.loc.line if m.loc else None, execs=ctx.execs * positions,
                         precision=ctx.precision, region=m, positions=positions, level=m.level,
                         depth=ctx.depth + 1, units=units)
        parent.children.append(node)
        values: dict = {}
        self.region_captures(m, node, ctx, values)
        ranges = dict(ctx.ranges)
        for coord, ext in zip(m.coords, extents):
            ranges[coord] = IndexRange(0, ext, 1, last=ext - 1)
        inner = _Ctx(execs=ctx.execs * positions, loops=ctx.loops, ranges=ranges, values=values,
                     precision=ctx.precision, units=units, depth=ctx.depth + 1)
        self.block(m.body, node, inner)
        self.export_values(m, ctx, inner)
        mma_path.mark_operands(node)      # an mma outside any loop: its operands' sources

    def trip_count(self, lp: LoopRegion, ctx: "_Ctx"):
        """Mean trips per execution of the loop, the precision, and whether it is regular."""
        if lp.trip.kind == "runtime":
            if lp.trip.expect is not None:
                return emax(self.ev(lp.trip.expect, ctx), 0), "estimate", False
            return emax(self.ev(lp.trip.hi, ctx), 0), "upper", False
        step = lp.step.evaluate(self.env) if not (lp.step.free_names() & set(ctx.ranges)) else None
        varying = (lp.stop.free_names() | lp.start.free_names()) & set(ctx.ranges)
        if step is not None and not varying:
            span = lp.stop.evaluate(self.env) - lp.start.evaluate(self.env)
            return emax(cdiv(span, step), 0), "exact", True
        # Trip count varies with one index variable: exact mean when it is affine in it.
        from tfx.ir.expr import BinOp
        if step is not None and len(varying) == 1:
            (var,) = varying
            r = ctx.ranges[var]
            span_expr = BinOp("-", lp.stop, lp.start)
            if r.regular:
                last_value = r.first + (r.count - 1) * r.step
                mask: list = []
                coeffs = linear_coefficients(span_expr, var, self.env, (r.first, last_value), mask)
                if coeffs is not None:
                    a, b = coeffs
                    first = a * r.first + b
                    last = a * last_value + b
                    # Sum over the variable's n values of cdiv(span, step): with every span
                    # non-negative (affine: both ends suffice) it is a floor sum, closed form.
                    ok = (first >= 0) & (last >= 0) & (step >= 1)
                    for cond in mask:
                        ok = ok & cond
                    n = r.count
                    if is_array(ok, first, n, step):
                        import numpy as np
                        safe_step = np.maximum(step, 1)
                        total = floor_sum(np.maximum(n, 0), safe_step, a * r.step, first + safe_step - 1)
                        # where a span is negative (a position skips the loop) the floor sum
                        # does not hold: the enumerated mean, else the stated bound
                        if np.all(ok):
                            return total / np.maximum(n, 1), "exact", False
                        fallback = self.enumerated_mean_trips(lp, varying, ctx, step)
                        if fallback is None:
                            fallback = (emax(self.ev(lp.bound, ctx), 0) if lp.bound is not None
                                        else total / np.maximum(n, 1))
                        return where(ok, total / np.maximum(n, 1), fallback), "exact", False
                    if ok and n > 0:
                        total = floor_sum(n, step, a * r.step, first + step - 1)
                        return ratio(total, n), "exact", False
        if step is not None:
            mean = self.enumerated_mean_trips(lp, varying, ctx, step)
            if mean is not None:
                return mean, "exact", False
        if lp.bound is None:  # pragma: no cover - the verifier requires it
            raise self.module.error(f"loop {lp.var} needs a stated bound", lp.loc)
        return emax(self.ev(lp.bound, ctx), 0), "upper", False

    def enumerated_mean_trips(self, lp: LoopRegion, varying: set, ctx: "_Ctx", step):
        """The exact mean trips of a loop whose bounds are not affine in the index variables
        they name (min, max, cdiv: gqa_decode's last split runs fewer blocks, its masked
        tail loop 0 or 1 trips), by evaluating the trip count at every combination of those
        variables' values, when they are regular and at most MAX_ENUMERATED_POSITIONS; None
        otherwise (the caller falls back to the stated bound, an upper bound). One
        configuration: one numpy evaluation over the positions. A sweep (parameter arrays):
        one evaluation per position over the configurations, so memory stays a chunk's."""
        import numpy as np
        names = sorted(varying)
        ranges = [ctx.ranges[n] for n in names]
        if not all(r.regular and _integral(r.first, r.count, r.step) for r in ranges) or not _integral(step):
            return None
        counts = [int(np.max(r.count)) if is_array(r.count) else int(r.count) for r in ranges]
        positions = 1
        for c in counts:
            positions *= max(c, 0)
        if positions == 0 or positions > MAX_ENUMERATED_POSITIONS or np.any(np.asarray(step) < 1):
            return None

        def trips_at(values: dict):
            env = {**self.env, **values}
            span = lp.stop.evaluate(env) - lp.start.evaluate(env)
            return np.maximum(-((-np.asarray(span)) // step), 0)

        sweep = is_array(step, *(x for r in ranges for x in (r.first, r.count, r.step)),
                         *self.env.values())
        if not sweep:
            grids = np.meshgrid(*(np.arange(c, dtype=np.int64) for c in counts), indexing="ij")
            values = {n: r.first + g.ravel() * r.step for n, r, g in zip(names, ranges, grids)}
            total = int(np.sum(np.broadcast_to(trips_at(values), (positions,))))
            return ratio(total, positions)
        total, valid_positions = 0, 0
        for idx in np.ndindex(*counts):
            valid = True
            for i, r in zip(idx, ranges):
                valid = valid & (i < r.count)       # a position past this configuration's extent
            values = {n: r.first + i * r.step for n, r, i in zip(names, ranges, idx)}
            total = total + np.where(valid, trips_at(values), 0)
            valid_positions = valid_positions + np.where(valid, 1, 0)
        return np.asarray(total, dtype=np.float64) / np.maximum(valid_positions, 1)

    def loop(self, lp: LoopRegion, parent: ScopeNode, ctx: "_Ctx") -> None:
        trips, prec, regular = self.trip_count(lp, ctx)
        label = f"loop {lp.var}"
        precision = combine_precision(ctx.precision, prec)
        stages = lp.stages.evaluate(self.env) if lp.stages is not None else 1
        node = ScopeNode(id=self.new_id(parent, label), kind="loop", label=label,
                         line=lp.loc.line if lp.loc else None, execs=ctx.execs * trips,
                         precision=precision, region=lp, trips=trips, stages=stages,
                         depth=ctx.depth + 1, units=dict(ctx.units))
        parent.children.append(node)
        values: dict = {}
        self.region_captures(lp, node, ctx, values)
        for v in lp.carry:
            # A carried value is a new value every trip (a recurrence): whatever reads it
            # varies with the loop and cannot be hoisted out of it (docs/analysis.md, 1).
            carried = ctx.values[v]
            values[v] = ValueInfo(carried.type, carried.dims, carried.deps | {lp.var})
        ranges = dict(ctx.ranges)
        start = self.ev(lp.start, ctx)
        step = self.ev(lp.step, ctx)
        bound_trips = self.ev(lp.bound, ctx) if lp.bound is not None else (
            self.ev(lp.trip.hi, ctx) if lp.trip.hi is not None else trips)
        ranges[lp.var] = IndexRange(start, trips, step, regular=regular and prec == "exact",
                                    last=start + (bound_trips - 1) * step)
        inner = _Ctx(execs=ctx.execs * trips, loops=ctx.loops + ((lp.var, trips),), ranges=ranges,
                     values=values, precision=precision, units=ctx.units, depth=ctx.depth + 1)
        self.block(lp.body, node, inner)
        self.export_values(lp, ctx, inner)
        # where each mma of the trip reads its operands from, once (tfx.analysis.mma_path.mark_operands)
        mma_path.mark_operands(node)

    def export_values(self, region, outer: "_Ctx", inner: "_Ctx") -> None:
        """After a loop, a carried value names its final value (with the loop's dependences)."""
        if isinstance(region, LoopRegion):
            for v in region.carry:
                if v in inner.values:
                    outer.values[v] = inner.values[v]

    # ------------------------------------------------------------ windows
    def axis_extent(self, axis, full, ctx: "_Ctx"):
        """Mean extent of one window axis per execution, and its precision."""
        if axis.kind == "full":
            return full, "exact"
        if axis.kind == "gather":
            return ctx.values[axis.index].elements, "exact"
        if axis.kind == "runtime":
            # Its start is data; the window still moves exactly `size` elements (a window that
            # crosses the tensor's edge is the kernel's business, as for moving windows).
            return self.ev(axis.size, ctx), "exact"
        size_vars = axis.size.free_names() & set(ctx.ranges)
        if size_vars:
            # A size that varies per position (a tail tile written min(BM, M - pm * BM)):
            # its exact mean over the variable, when it is a min/max of affine forms.
            mean = self.mean_of_min(axis.size, size_vars, ctx)
            if mean is not None:
                return mean, "exact"
            return self.ev(axis.size, ctx), "upper"
        size = self.ev(axis.size, ctx)
        if axis.stride is not None:
            return size, "exact"
        names = axis.offset.free_names() & set(ctx.ranges)
        if not names:
            off = axis.offset.evaluate(self.env)
            return emax(emin(size, full - off), 0), "exact"
        if len(names) == 1 and not (axis.size.free_names() & set(ctx.ranges)):
            (var,) = names
            r = ctx.ranges[var]
            coeffs = linear_coefficients(axis.offset, var, self.env) if r.regular else None
            if coeffs is not None:
                a, b = coeffs
                first = a * r.first + b
                # Windows that tile the axis in order: together they cover [first, first + n*size),
                # clipped at the tensor's edge (masked loads read only valid elements).
                tiles = (a * r.step == size)
                covered = emax(emin(full - first, r.count * size), 0)
                mean = ratio(covered, r.count) if not is_array(covered, tiles) else covered / r.count
                if is_array(tiles, mean, size):
                    return where(tiles, mean, size), "exact"
                if tiles:
                    return mean, "exact"
        # Not a recognised tiling: count the whole window, exact when it can never cross the
        # tensor's edge (its offset at every variable's largest value still fits).
        hi_env = dict(self.env)
        for n in names:
            r = ctx.ranges[n]
            hi_env[n] = r.last if r.last is not None else r.first + (r.count - 1) * r.step
        try:
            end = axis.offset.evaluate(hi_env) + size
        except Exception:
            return size, "upper"
        if is_array(end):
            return size, "exact" if bool((end <= full).all()) else "upper"
        return size, "exact" if end <= full else "upper"

    def mean_of_min(self, e: Expr, names, ctx: "_Ctx"):
        """Mean of ``min(P, Q)`` (or ``max``) over one regular index variable, P and Q affine in it.

        The two forms cross at most once: sum each side's arithmetic series on its side of
        the crossing. None when the expression has another shape.
        """
        from tfx.ir.expr import Call
        if len(names) != 1 or not (isinstance(e, Call) and e.func in ("min", "max")):
            return None
        (var,) = names
        r = ctx.ranges[var]
        if not r.regular:
            return None
        p = linear_coefficients(e.args[0], var, self.env)
        q = linear_coefficients(e.args[1], var, self.env)
        if p is None or q is None:
            return None
        n = r.count
        # In terms of the i-th value (i = 0..n-1): f(i) = f0 + i * fs.
        p0, ps = p[0] * r.first + p[1], p[0] * r.step
        q0, qs = q[0] * r.first + q[1], q[0] * r.step
        if e.func == "max":   # max(P, Q) = -min(-P, -Q)
            p0, ps, q0, qs = -p0, -ps, -q0, -qs
        d0, ds = p0 - q0, ps - qs          # P - Q; P is the min where it is <= 0

        def series(f0, fs, lo, hi):        # sum of f(i) for lo <= i < hi
            cnt = emax(hi - lo, 0)
            return cnt * f0 + fs * ratio((lo + hi - 1) * cnt, 2) if not is_array(cnt, f0, fs) else \
                cnt * f0 + fs * (lo + hi - 1) * cnt / 2

        # k: the number of leading i where P <= Q (ds > 0), or the first i where it holds (ds < 0).
        if is_array(d0, ds, n):
            safe = where(ds == 0, 1, ds)
            k_up = emin(emax(-d0 // safe + 1, 0), n)           # ds > 0: i < k_up use P
            k_dn = emin(emax(-(-d0 // -safe), 0), n)           # ds < 0: i >= k_dn use P
            total = where(ds > 0, series(p0, ps, 0, k_up) + series(q0, qs, k_up, n),
                          where(ds < 0, series(q0, qs, 0, k_dn) + series(p0, ps, k_dn, n),
                                where(d0 <= 0, series(p0, ps, 0, n), series(q0, qs, 0, n))))
        elif ds > 0:
            k = min(max(-d0 // ds + 1, 0), n)
            total = series(p0, ps, 0, k) + series(q0, qs, k, n)
        elif ds < 0:
            k = min(max(-(-d0 // -ds), 0), n)
            total = series(q0, qs, 0, k) + series(p0, ps, k, n)
        else:
            total = series(p0, ps, 0, n) if d0 <= 0 else series(q0, qs, 0, n)
        if e.func == "max":
            total = -total
        return ratio(total, n) if not is_array(total, n) else total / n

    def window_elements(self, w: Window, ctx: "_Ctx"):
        dims = self.tensor_dims[w.tensor]
        n, prec = 1, "exact"
        for axis, full in zip(w.axes, dims):
            e, p = self.axis_extent(axis, full, ctx)
            n = n * e
            prec = combine_precision(prec, p)
        return n, prec

    def window_deps(self, w: Window, ctx: "_Ctx") -> frozenset:
        deps = set()
        for a in w.axes:
            for part in (a.offset, a.size, a.stride):
                if part is not None:
                    deps |= part.free_names() & self.info.index_names
            if a.kind == "gather":
                deps |= ctx.values[a.index].deps
        return frozenset(deps)

    def logical_multiplier(self, deps, ctx: "_Ctx"):
        m = 1
        for var, trips in ctx.loops:
            if var in deps:
                m = m * trips
        return m

    # ------------------------------------------------------------ ops
    def value_of(self, o, ctx: "_Ctx") -> ValueInfo | None:
        if isinstance(o, ValueRef):
            return ctx.values[o.name]
        if isinstance(o, Window):
            # A window used as a tile keeps its rank (one extent per axis), so an mma can
            # read its rows and columns; its elements are the window's element count.
            dims = tuple(self.axis_extent(a, full, ctx)[0]
                         for a, full in zip(o.axes, self.tensor_dims[o.tensor]))
            t = self.tensor_types[o.tensor]
            return ValueInfo(t, dims, self.window_deps(o, ctx))
        return None

    def dims_of(self, ty: TileType, ctx: "_Ctx") -> tuple:
        return tuple(self.ev(d, ctx) for d in ty.shape)

    def op(self, op: Op, parent: ScopeNode, ctx: "_Ctx") -> None:
        code = op.opcode
        label = f"{op.result} = {code}" if op.result else code
        node = ScopeNode(id=self.new_id(parent, label), kind="op", label=label,
                         line=op.loc.line if op.loc else None, execs=ctx.execs,
                         precision=ctx.precision, op=op, depth=ctx.depth + 1, units=dict(ctx.units))
        q: dict = {}
        deps: set = set()
        result_type = self.info.result_types.get(id(op))
        operands = [self.value_of(o, ctx) for o in op.operands]
        for o, v in zip(op.operands, operands):
            if v is not None:
                deps |= v.deps
            elif isinstance(o, Scalar):    # a compare's bound may name coordinates
                deps |= o.expr.names() & self.info.index_names
            if isinstance(o, Window) and code not in ("load", "copy"):
                node.precision = combine_precision(node.precision, self.window_elements(o, ctx)[1])

        def add(key, amount):
            q[key] = q.get(key, 0) + amount

        # A window whose start is read at run time reads those elements first (a scalar
        # load each: the element's bytes at its tensor's level). The same element of a
        # read-only (`in`) tensor named again in the same region body (paged_decode's K and
        # V windows both start at BLOCK_TABLE[b, j]) is one read: the compiler keeps the
        # loaded scalar in a register (common subexpression; nothing can change it between),
        # so it is charged to the first op that names it (docs/analysis.md, 3).
        for w in [o for o in op.operands if isinstance(o, Window)] + ([op.target] if op.target is not None else []):
            for a in w.axes:
                if a.kind == "runtime":
                    for r in reads_in(a.offset):
                        if self.tensor_roles.get(r.tensor) == "in":
                            if r in ctx.start_reads:
                                continue
                            ctx.start_reads.add(r)
                        t = self.tensor_types[r.tensor]
                        add(("traffic", t.level, "read"), nbytes(t.dtype.bits, 1))

        if code in ("load", "copy"):
            src = op.operands[0]
            if isinstance(src, Window):
                elems, p = self.window_elements(src, ctx)
                node.precision = combine_precision(node.precision, p)
                t = self.tensor_types[src.tensor]
                b = nbytes(t.dtype.bits, elems)
                add(("traffic", t.level, "read"), b)
                add(("traffic", op.to_level, "write"), b)
                dims = self.dims_of(result_type, ctx)
                result = ValueInfo(result_type, dims, frozenset(deps), minor=len(dims) - 1)
            else:
                v = operands[0]
                add(("traffic", v.type.level, "read"), v.nbytes)
                add(("traffic", op.to_level, "write"), v.nbytes)
                result = ValueInfo(result_type, v.dims, v.deps)
        elif code == "store":
            v = operands[0]
            elems, p = self.window_elements(op.target, ctx)
            node.precision = combine_precision(node.precision, p)
            t = self.tensor_types[op.target.tensor]
            add(("traffic", v.type.level, "read"), nbytes(v.type.dtype.bits, elems))
            add(("traffic", t.level, "write"), nbytes(t.dtype.bits, elems))
            deps |= self.window_deps(op.target, ctx)
            result = None
        elif code in opcat.MMA:
            a, b, c = operands
            # Extents from the operand types (a window keeps its axes there): the last two
            # axes are [M, K], [K, N], [M, N]; a 3-D accumulator's first axis is the batch,
            # over which a 2-D (or batch-1) operand is shared.
            tys = self.info.operand_types[id(op)]
            (m, k), n = self.dims_of(tys[0], ctx)[-2:], self.dims_of(tys[1], ctx)[-1]
            c_dims = self.dims_of(tys[2], ctx)
            batch = c_dims[0] if len(c_dims) == 3 else 1
            add(("flops", a.type.dtype.text, "tensor"), 2 * batch * m * n * k)
            add(("traffic", a.type.level, "read"), a.nbytes)
            add(("traffic", b.type.level, "read"), b.nbytes)
            add(("traffic", c.type.level, "read"), c.nbytes)
            add(("traffic", c.type.level, "write"), c.nbytes)
            result = ValueInfo(result_type, c.dims, frozenset(deps), mma_src=(node,))
            node.per_exec_shape = (m, n, k)
            node.per_exec_batch = batch
            node.mma_operands = ((a.type.level, a.nbytes), (b.type.level, b.nbytes))
            # K-major operands (A contiguous along K, its last axis; B along K, its first of
            # the last two), None where unknown: the tensor instruction may need one
            # (tfx.analysis.mma_layout); chained mmas (one consumes the other's result) lay
            # their warps out differently
            node.mma_k_major = (None if a.minor is None else a.minor == len(a.dims) - 1,
                                None if b.minor is None else b.minor == len(b.dims) - 2)
            node.mma_bits = a.type.dtype.bits
            # (Triton's warpsPerTileV2 looks both ways, its warpsPerTileV3 only at the dot's
            # forward slice: mma_layout.FEEDS for a dot whose result another reads, READS for
            # one that only reads another's)
            producers = a.mma_src + b.mma_src
            # A computed from another mma's result (attention's P): where that mma's warps split
            # this one's K, the code generator passes it through shared memory (smem_buffers)
            node.mma_a_from_mma = bool(a.mma_src)
            if not mma_layout.feeds_dot(getattr(node, "mma_chained", False)):
                node.mma_chained = mma_layout.READS if producers else False
            for p_node in producers:
                # on the warp mma the dot it feeds sets its warps (mma_layout.feeds_into)
                p_node.mma_chained = mma_layout.feeds_into(m, n)
        elif code in opcat.COMPARE or code in opcat.SELECT:
            # One comparison (or selection) per result element, its own work kind; a compare
            # is counted in its operands' dtype, a select in its result's.
            tiles = [v for v in operands if v is not None]
            elems = tiles[0].elements
            dtype = tiles[0].type.dtype.text if code in opcat.COMPARE else result_type.dtype.text
            add(("flops", dtype, opcat.cost_class(code)), elems)
            for v in tiles:
                add(("traffic", v.type.level, "read"), v.nbytes)
            res = ValueInfo(result_type, tiles[0].dims, frozenset(deps))
            add(("traffic", result_type.level, "write"), res.nbytes)
            result = res
        elif code in opcat.UNARY or code in opcat.BINARY or code == "cast":
            tiles = [v for v in operands if v is not None]
            out_dims = tiles[0].dims
            out_type = result_type
            elems = tiles[0].elements
            unit = "special" if code in opcat.SPECIAL else "vector"
            converts = (unit_conversions(self.profile, tiles[0].type.dtype.text, result_type.dtype.text)
                        if code == "cast" and self.profile is not None else None)
            if converts is not None:
                # a cast the code generator lowers to the XU's type conversions (I2F, F2F), which
                # hold the special-function unit as an exp2 does, at its f32 rate
                add(("flops", "f32", "special"), elems * converts)
            else:
                add(("flops", tiles[0].type.dtype.text, unit), elems)
            for v in tiles:
                add(("traffic", v.type.level, "read"), v.nbytes)
            res = ValueInfo(out_type, out_dims, frozenset(deps))
            add(("traffic", out_type.level, "write"), res.nbytes)
            result = res
        elif code == "reduce":
            v = operands[0]
            # (operand elements, extent of the reduced axis, bytes per element): its
            # dependent chain (tfx.analysis.row_body.reduction_chain_ns)
            node.per_exec_reduce = (v.elements, v.dims[op.axis] if op.axis is not None else v.elements,
                                    max(v.type.dtype.bits // 8, 1))
            add(("flops", v.type.dtype.text, "vector"), v.elements)
            add(("traffic", v.type.level, "read"), v.nbytes)
            res = ValueInfo(result_type, self.dims_of(result_type, ctx), frozenset(deps))
            add(("traffic", result_type.level, "write"), res.nbytes)
            result = res
        elif code in ("zeros", "fill", "iota"):
            # an iota that starts at a coordinate differs per position, like a window
            start_deps = op.start.free_names() & self.info.index_names if op.start is not None else set()
            deps |= start_deps
            res = ValueInfo(result_type, self.dims_of(result_type, ctx), frozenset(start_deps))
            add(("traffic", result_type.level, "write"), res.nbytes)
            result = res
        elif code == "return":
            # free: names the value the call produces (counting.call reads it back)
            result = None
            node.returned = op.operands[0].name
        elif code in opcat.VIEWS:
            v = operands[0]
            dims = self.dims_of(result_type, ctx)
            # a 2-D transpose is a view: the contiguous axis is the other one now
            minor = (1 - v.minor) if code == "transpose" and v.minor is not None and len(dims) == 2 else (
                v.minor if code == "return" else None)
            result = ValueInfo(result_type, dims, v.deps, minor=minor)
        elif code == "call":
            result = self.call(op, node, ctx, frozenset(deps))
        elif code in opcat.COLLECTIVES:
            if code == "recv":
                res = ValueInfo(result_type, self.dims_of(result_type, ctx), frozenset())
                add(("link", op.peer.split("[")[0], "bytes"), res.nbytes)
                add(("traffic", result_type.level, "write"), res.nbytes)
                result = res
            else:
                v = operands[0]
                level = op.peer.split("[")[0]
                n = ctx.units.get(level, 1)
                factor = 1 if code == "send" else ratio(2 * (n - 1), n) if not is_array(n) else 2 * (n - 1) / n
                add(("link", level, "bytes"), v.nbytes * factor)
                add(("traffic", v.type.level, "read"), v.nbytes)
                result = v if code == "allreduce" else None
                if code == "allreduce":
                    result = ValueInfo(result_type, v.dims, v.deps)
                    # the ring's reduce-scatter: each position combines (n - 1) / n of the
                    # elements on its vector unit
                    add(("flops", v.type.dtype.text, "vector"), v.elements * (factor / 2))
        else:  # pragma: no cover
            raise TfxError(f"no cost rule for {code}")
        node.per_exec = q
        node.logical = self.logical_multiplier(deps, ctx)
        parent.children.append(node)
        if result is not None and code not in opcat.MMA and code not in ("load", "copy"):
            carried = tuple(p for v in operands if v is not None for p in v.mma_src)
            if carried:
                seen: dict = {}
                for p_node in result.mma_src + carried:      # ScopeNodes are not hashable
                    seen.setdefault(id(p_node), p_node)
                result.mma_src = tuple(seen.values())
        if op.result is not None and result is not None:
            ctx.values[op.result] = result

    def call(self, op: Op, node: ScopeNode, ctx: "_Ctx", deps: frozenset = frozenset()) -> ValueInfo | None:
        """Inline the callee's costs under ``node``; with ``%r = call``, the value its
        ``return`` names, with the caller's type and the dependences of the arguments."""
        from tfx.ir.bind import bind
        callee = self.module.kernel(op.callee)
        overrides = {n: self.ev(e, ctx) for n, e in op.bindings}
        env = bind(self.module, callee, overrides, profile=self.profile, units=self.env)   # the caller's machine
        sub = Counter(self.module, callee, env, profile=self.profile)
        sub_ctx = _Ctx(execs=ctx.execs, loops=ctx.loops, ranges={}, values={}, precision=ctx.precision,
                       units=dict(ctx.units), depth=ctx.depth + 1)
        sub._ids = self._ids
        node.kind = "call"
        sub.block(callee.body, node, sub_ctx)
        if op.result is None:
            return None
        for child in node.children:
            if getattr(child, "returned", None) is not None:
                child.returns_to = op.result   # the simulator aliases the callee's value to it
        result_type = self.info.result_types[id(op)]
        return ValueInfo(result_type, self.dims_of(result_type, ctx), deps)


def _all(x) -> bool:
    import numpy as np
    return bool(np.all(x))


@dataclass
class _Ctx:
    execs: Any
    loops: tuple
    ranges: dict
    values: dict
    precision: str
    units: dict
    depth: int
    # Window-start elements of read-only tensors already read in this region body (one
    # execution: a mesh position, a loop trip, a call); a composite shares its region's.
    start_reads: set = field(default_factory=set)

    def child(self, **kw) -> "_Ctx":
        d = dict(self.__dict__)
        d.update(kw)
        return _Ctx(**d)


def aggregate(node: ScopeNode) -> None:
    """Fill ``total`` and ``logical_sum`` bottom-up; precision of a region is its children's worst."""
    total: dict = {}
    logical: dict = {}
    if node.per_exec:
        for k, v in node.per_exec.items():
            total[k] = v * node.execs
            logical[k] = v * node.logical
    for c in node.children:
        aggregate(c)
        for k, v in c.total.items():
            total[k] = total.get(k, 0) + v
        for k, v in c.logical_sum.items():
            logical[k] = logical.get(k, 0) + v
        node.precision = combine_precision(node.precision, c.precision)
    node.total = total
    node.logical_sum = logical
