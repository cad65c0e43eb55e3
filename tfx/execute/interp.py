"""The interpreter: runs a verified kernel on numpy arrays (docs/language.md, "Executing kernels").

All positions of a mesh run together: every tile value carries a leading axis
with one entry per position, index expressions evaluate to one integer per
position (``tfx.ir.expr`` already evaluates on int arrays), and a window whose
offset depends on the position becomes one fancy-indexed gather. Positions run
in lockstep, op by op. A mesh whose tile shapes depend on the position (a tail
tile ``min(BM, M - pm * BM)``) runs its positions one at a time instead.

Loops whose trip count differs between positions run to the largest count; a
position whose count is exhausted is masked: its stores, sends and carried
values no longer change. Windows that reach outside their tensor read zeros and
drop their writes (the masked loads and stores of tile compilers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from threadpoolctl import threadpool_limits

from tfx.errors import TfxError
from tfx.execute.dtypes import is_int, round_to, storage
from tfx.execute.peer import parse_peer
from tfx.ir import ops as opcat
from tfx.ir.bind import bind
from tfx.ir.expr import BinOp, Name, Neg, Read, to_text
from tfx.ir.expr import Call as ExprCall
from tfx.ir.nodes import Composite, Kernel, LoopRegion, MeshRegion, Module, Op, ValueRef, Window, walk
from tfx.ir.types import DType

_MASK_IDENTITY = {"sum": 0.0, "max": -np.inf, "min": np.inf}


@dataclass
class Batch:
    """The positions that run together: ``size`` of them, laid out row-major over the
    enclosing meshes (``factors``: (level, positions) from the outermost mesh in),
    ``active`` False where a loop's trip count is exhausted (None: all active)."""

    size: int
    factors: tuple[tuple[str, int], ...]
    active: np.ndarray | None = None


@dataclass
class Frame:
    batch: Batch
    env: dict[str, Any]
    values: dict[str, np.ndarray]


def _uniform(v, what: str) -> int:
    """An integer that must be the same at every position (a shape or an extent)."""
    if isinstance(v, np.ndarray):
        flat = v.reshape(-1)
        if flat.size == 0:
            return 0
        if not np.all(flat == flat[0]):
            raise TfxError(f"{what} differs between positions that run together")
        return int(flat[0])
    return int(v)


def _column(v, size: int) -> np.ndarray:
    """An index value as an int64 column: [size, 1] when it varies, [1, 1] when not."""
    a = np.asarray(v, dtype=np.int64).reshape(-1, 1)
    return a if a.shape[0] in (1, size) else np.broadcast_to(a, (size, 1))


def number(text: str) -> float:
    t = text.replace("_", "")
    try:
        return float(int(t, 0))
    except ValueError:
        return float(t)


def scalar_value(o, env):
    """The value of a scalar operand (a literal, or an expression of parameters): a float,
    or one float per position when it names a coordinate (a compare's bound)."""
    expr = getattr(o, "expr", None)
    if expr is not None:
        v = np.asarray(expr.evaluate(env), dtype=np.float64)
        return float(v) if v.ndim == 0 else v
    if isinstance(o, str):
        return number(o)
    if hasattr(o, "evaluate"):
        return float(o.evaluate(env))
    return number(o.text)


def _per_position(x: np.ndarray, rank: int) -> np.ndarray:
    """A number operand against tiles of ``rank`` axes (the batch first): one value, or one
    per position (a compare's bound naming a coordinate) as a [B, 1, ..., 1] column."""
    return x if x.ndim == 0 else x.reshape((-1,) + (1,) * (rank - 1))


def _expand(mask: np.ndarray, ndim: int) -> np.ndarray:
    return mask.reshape(mask.shape + (1,) * (ndim - mask.ndim))


class Interpreter:
    """Runs one kernel of ``module`` on ``tensors`` (name -> array, updated in place)."""

    _running = False

    def __init__(self, module: Module, kernel: Kernel, tensors: dict[str, np.ndarray]):
        self.module = module
        self.kernel = kernel
        self.info = module.info[kernel.name]
        self.tensors = tensors
        self.dtypes = {t.name: t.type.dtype for t in kernel.tensors}
        self.mailbox: list[dict] = []
        self._varies: dict[int, bool] = {}
        self._op: Op | None = None
        self.returned: np.ndarray | None = None     # what `return %v` named
        self.dispatches = 0

    # ------------------------------------------------------------ regions
    def run(self, env: Mapping[str, Any]) -> None:
        frame = Frame(Batch(1, ()), dict(env), {})
        # One BLAS thread: the executor's matmuls are tile-sized, and OpenBLAS's worker
        # threads spinning against each other on a busy CPU made them 30x slower.
        if Interpreter._running:       # a call's callee: the limits are in place
            self.block(self.kernel.body, frame)
            return
        Interpreter._running = True
        try:
            with np.errstate(all="ignore"), threadpool_limits(1, user_api="blas"):
                self.block(self.kernel.body, frame)
        finally:
            Interpreter._running = False

    def block(self, stmts, fr: Frame) -> None:
        for s in stmts:
            if isinstance(s, Op):
                self.dispatches += 1
                self.op(s, fr)
            elif isinstance(s, MeshRegion):
                self.mesh(s, fr)
            elif isinstance(s, LoopRegion):
                self.loop(s, fr)
            elif isinstance(s, Composite):
                self.block(s.body, fr)   # a dispatch grouping: same values, same scope

    def shapes_vary(self, region) -> bool:
        """True when a tile shape in the region depends on a coordinate or loop variable."""
        key = id(region)
        if key not in self._varies:
            idx = self.info.index_names
            varies = False
            for s in walk(region.body):
                if not isinstance(s, Op):
                    continue
                types = list(self.info.operand_types.get(id(s), ()))
                types.append(self.info.result_types.get(id(s)))
                shapes = [t.shape for t in types if t is not None]
                if s.shape is not None:
                    shapes.append(s.shape)
                if any(d.free_names() & idx for shape in shapes for d in shape):
                    varies = True
                    break
            self._varies[key] = varies
        return self._varies[key]

    def mesh(self, m: MeshRegion, fr: Frame) -> None:
        extents = [_uniform(e.evaluate(fr.env), f"the extent of mesh {m.level}") for e in m.extents]
        total = math.prod(extents)
        if total <= 0:
            return
        outer = fr.batch.size
        size = outer * total
        coords = np.unravel_index(np.arange(total), extents)
        env = {k: (np.repeat(v, total) if isinstance(v, np.ndarray) else v) for k, v in fr.env.items()}
        for name, c in zip(m.coords, coords):
            env[name] = np.tile(c.astype(np.int64), outer)
        names = {c.name for c in m.captures} & set(fr.values)
        values = {n: np.repeat(fr.values[n], total, axis=0) for n in names}
        active = None if fr.batch.active is None else np.repeat(fr.batch.active, total)
        batch = Batch(size, fr.batch.factors + ((m.level, total),), active)
        inner = Frame(batch, env, values)
        if not self.shapes_vary(m):
            self.block(m.body, inner)
            return
        if any(s.opcode in opcat.COLLECTIVES for s in walk(m.body) if isinstance(s, Op)):
            raise self.module.error(
                f"mesh {m.level}: tile shapes vary between its positions, so they run one at a time, "
                "and its collectives need them to run together", m.loc)
        for f in range(size):
            if active is not None and not active[f]:
                continue
            one = Frame(Batch(1, ()),
                        {k: (v[f:f + 1] if isinstance(v, np.ndarray) else v) for k, v in env.items()},
                        {k: v[f:f + 1] for k, v in values.items()})
            self.block(m.body, one)

    def loop(self, lp: LoopRegion, fr: Frame) -> None:
        env = fr.env
        size = fr.batch.size
        start = lp.start.evaluate(env)
        step = lp.step.evaluate(env)
        if np.any(np.asarray(step) <= 0):
            raise self.module.error(f"loop {lp.var}: the step must be positive to run it", lp.loc)
        if lp.trip.kind == "runtime":
            # A data-dependent trip count runs the count predictions use: the stated
            # expectation (the balanced case: T * TOPK / E rows per expert), else the
            # upper bound. Running the bound would walk past a group's rows into the next.
            trips = (lp.trip.expect if lp.trip.expect is not None else lp.trip.hi).evaluate(env)
        else:
            stop = lp.stop.evaluate(env)
            trips = np.maximum(0, -((start - stop) // step))
        trips = np.broadcast_to(np.asarray(trips, dtype=np.int64), (size,))
        if fr.batch.active is not None:
            trips = np.where(fr.batch.active, trips, 0)
        count = int(trips.max()) if size else 0
        for i in range(count):
            now = trips > i
            everyone = bool(now.all())
            body_env = dict(env)
            body_env[lp.var] = start + i * step
            body_values = dict(fr.values)
            batch = Batch(size, fr.batch.factors, None if everyone else now)
            self.block(lp.body, Frame(batch, body_env, body_values))
            for c in lp.carry:
                new = body_values[c]
                fr.values[c] = new if everyone else np.where(_expand(now, new.ndim), new, fr.values[c])

    # ------------------------------------------------------------ windows
    def _indices(self, w: Window, fr: Frame):
        """Per axis an index array shaped for open-mesh fancy indexing:
        [B, 1.., s_k, ..1] with B = 1 (same at every position) or the batch size."""
        tensor = self.tensors[w.tensor]
        rank = len(w.axes)
        size = fr.batch.size
        out = []
        for k, (a, dim) in enumerate(zip(w.axes, tensor.shape)):
            if a.kind == "full":
                ix = np.arange(dim, dtype=np.int64).reshape(1, dim)
            elif a.kind == "gather":
                rows = fr.values[a.index]
                ix = rows.reshape(rows.shape[0], -1).astype(np.int64)
            else:
                n = _uniform(a.size.evaluate(fr.env), f"the size of the window on {w.tensor}")
                offset = a.offset
                if a.kind == "runtime":
                    off = _column(self.runtime_offset(w, k, n, fr), size)
                else:
                    off = _column(offset.evaluate(fr.env), size)
                stride = 1 if a.stride is None else _column(a.stride.evaluate(fr.env), size)
                ix = off + np.arange(n, dtype=np.int64).reshape(1, n) * stride
            shape = (ix.shape[0],) + (1,) * k + (ix.shape[1],) + (1,) * (rank - k - 1)
            out.append(ix.reshape(shape))
        return tensor, out

    def runtime_offset(self, w: Window, axis_no: int, n: int, fr: Frame):
        """A window start that reads tensor elements (``PAGES[b, j] * PAGE``): each read is
        replaced by the element's value now; a window that then leaves its tensor is an
        error naming the value read (positions masked by a loop are not checked)."""
        env = dict(fr.env)
        seen: list[tuple[str, Any]] = []

        def bind_reads(e):
            if isinstance(e, Read):
                idx = [bind_reads(i).evaluate(env) for i in e.indices]
                table = self.tensors[e.tensor]
                cols = [np.broadcast_to(np.asarray(i, dtype=np.int64), (fr.batch.size,)) for i in idx]
                bad = np.zeros(fr.batch.size, bool)
                for c, dim in zip(cols, table.shape):
                    bad |= (c < 0) | (c >= dim)
                if fr.batch.active is not None:
                    bad &= fr.batch.active
                if bad.any():
                    f = int(np.flatnonzero(bad)[0])
                    at = ", ".join(str(int(c[f])) for c in cols)
                    raise self.module.error(f"{e.tensor}[{at}] is outside {e.tensor} "
                                            f"{list(table.shape)}", self._op.loc if self._op else None)
                clipped = tuple(np.clip(c, 0, dim - 1) for c, dim in zip(cols, table.shape))
                name = f"{e.tensor}[#{len(seen)}]"
                env[name] = table[clipped].astype(np.int64)
                seen.append((to_text(e), env[name]))
                return Name(name)
            if isinstance(e, BinOp):
                return BinOp(e.op, bind_reads(e.lhs), bind_reads(e.rhs))
            if isinstance(e, Neg):
                return Neg(bind_reads(e.operand))
            if isinstance(e, ExprCall):
                return ExprCall(e.func, tuple(bind_reads(x) for x in e.args))
            return e

        axis = w.axes[axis_no]
        off = np.broadcast_to(np.asarray(bind_reads(axis.offset).evaluate(env), dtype=np.int64),
                              (fr.batch.size,))
        stride = 1 if axis.stride is None else np.asarray(axis.stride.evaluate(fr.env), dtype=np.int64)
        dim = self.tensors[w.tensor].shape[axis_no]
        last = off + (n - 1) * stride
        bad = (off < 0) | (last >= dim)
        if fr.batch.active is not None:
            bad &= fr.batch.active
        if bad.any():
            f = int(np.flatnonzero(bad)[0])
            reads = ", ".join(f"{text} = {int(np.broadcast_to(v, (fr.batch.size,))[f])}" for text, v in seen)
            raise self.module.error(
                f"the window on {w.tensor} axis {axis_no} starts at {int(off[f])} ({reads}): "
                f"[{int(off[f])}, {int(last[f])}] leaves the axis of {dim} elements",
                self._op.loc if self._op else None)
        return off

    def read(self, w: Window, fr: Frame) -> np.ndarray:
        tensor, idx = self._indices(w, fr)
        size = fr.batch.size
        valid = None
        for k, ix in enumerate(idx):
            ok = (ix >= 0) & (ix < tensor.shape[k])
            if not ok.all():
                valid = ok if valid is None else valid & ok
        if valid is None:
            vals = tensor[tuple(idx)]
        else:
            clipped = tuple(np.clip(ix, 0, max(tensor.shape[k] - 1, 0)) for k, ix in enumerate(idx))
            vals = np.where(valid, tensor[clipped], np.zeros((), tensor.dtype))
        if vals.shape[0] != size:
            vals = np.broadcast_to(vals, (size,) + vals.shape[1:])
        return vals

    def write(self, w: Window, fr: Frame, value: np.ndarray) -> None:
        tensor, idx = self._indices(w, fr)
        shape = value.shape
        full = [np.broadcast_to(ix, shape) for ix in idx]
        keep = np.ones(shape, dtype=bool)
        for k, ix in enumerate(full):
            keep &= (ix >= 0) & (ix < tensor.shape[k])
        if fr.batch.active is not None:
            keep &= _expand(fr.batch.active, len(shape))
        if keep.all():
            tensor[tuple(full)] = value
        else:
            tensor[tuple(ix[keep] for ix in full)] = value[keep]

    # ------------------------------------------------------------ ops
    def operand(self, o, fr: Frame):
        if isinstance(o, ValueRef):
            return fr.values[o.name]
        if isinstance(o, Window):
            return self.read(o, fr)
        return scalar_value(o, fr.env)

    def result_dtype(self, op: Op) -> DType:
        return self.info.result_types[id(op)].dtype

    def shape(self, exprs, fr: Frame) -> tuple[int, ...]:
        return tuple(_uniform(e.evaluate(fr.env), "a tile shape") for e in exprs)

    def op(self, op: Op, fr: Frame) -> None:
        self._op = op
        code = op.opcode
        handler = getattr(self, "op_" + code, None)
        if handler is None:
            if code in opcat.UNARY:
                handler = self.op_unary
            elif code in opcat.BINARY:
                handler = self.op_binary
            elif code in COMPARISONS:
                handler = self.op_compare
            else:
                raise self.module.error(f"tfx run cannot execute {code} yet", op.loc)
        value = handler(op, fr)
        if op.result is not None:
            fr.values[op.result] = value

    def op_load(self, op: Op, fr: Frame):
        return self.operand(op.operands[0], fr)   # a move between levels keeps the values

    op_copy = op_load

    def op_store(self, op: Op, fr: Frame):
        value = self.operand(op.operands[0], fr)
        self.write(op.target, fr, value)

    def op_mma(self, op: Op, fr: Frame):
        a, b, acc = (self.operand(o, fr) for o in op.operands)
        # Batched mma: a tile without the batch axis is shared by every batch entry.
        rank = max(a.ndim, b.ndim, acc.ndim)
        a, b, acc = (x.reshape(x.shape[:1] + (1,) * (rank - x.ndim) + x.shape[1:]) for x in (a, b, acc))
        out = self.result_dtype(op)
        if is_int(out):
            prod = np.matmul(a.astype(np.int64), b.astype(np.int64)) + acc.astype(np.int64)
        elif out == DType.F64:
            prod = np.matmul(a.astype(np.float64), b.astype(np.float64)) + acc
        elif out == DType.F16:
            # An f16 accumulator sums in f16: each step's sum rounds (the products of
            # f16 or fp8 operands are exact in f32). K steps of elementwise work.
            prod = acc.astype(np.float32)
            a32, b32 = a.astype(np.float32), b.astype(np.float32)
            for k in range(a32.shape[-1]):
                prod = round_to(out, prod + a32[..., :, k:k + 1] * b32[..., k:k + 1, :])
        else:
            # Products of the operand values, summed in f32 (the tensor core's accumulator).
            prod = np.matmul(a.astype(np.float32), b.astype(np.float32)) + acc.astype(np.float32)
        return round_to(out, prod)

    op_dot = op_mma

    def _compute_type(self, dtype: DType):
        return np.float64 if dtype == DType.F64 else np.float32

    def op_unary(self, op: Op, fr: Frame):
        dtype = self.result_dtype(op)
        x = self.operand(op.operands[0], fr)
        if not dtype.is_float:
            x = x.astype(np.int64)
        else:
            x = x.astype(self._compute_type(dtype))
        return round_to(dtype, UNARY_FUNCTIONS[op.opcode](x))

    def op_binary(self, op: Op, fr: Frame):
        dtype = self.result_dtype(op)
        a, b = (self.operand(o, fr) for o in op.operands)
        if dtype.is_float:
            ct = self._compute_type(dtype)
            a, b = np.asarray(a, dtype=ct), np.asarray(b, dtype=ct)
            return round_to(dtype, FLOAT_BINARY[op.opcode](a, b))
        if dtype.family == "bool":
            return round_to(dtype, FLOAT_BINARY[op.opcode](np.asarray(a, np.int64), np.asarray(b, np.int64)))
        a, b = _as_int(a), _as_int(b)
        return round_to(dtype, INT_BINARY[op.opcode](a, b))

    def _tile_dtype(self, op: Op, which) -> DType:
        types = self.info.operand_types[id(op)]
        return next(types[i].dtype for i in which if types[i] is not None)

    def op_compare(self, op: Op, fr: Frame):
        """lt le gt ge eq ne: in the operands' dtype (a number is converted to it first)."""
        dtype = self._tile_dtype(op, (0, 1))
        a, b = (self.operand(o, fr) for o in op.operands)
        rank = next(x.ndim for o, x in zip(op.operands, (a, b)) if isinstance(o, (ValueRef, Window)))
        a, b = (x if isinstance(o, (ValueRef, Window)) else _per_position(round_to(dtype, np.asarray(x)), rank)
                for o, x in zip(op.operands, (a, b)))
        return COMPARISONS[op.opcode](a, b)

    def op_select(self, op: Op, fr: Frame):
        """``a where c else b``; a number choice is converted to the tile choice's dtype."""
        dtype = self._tile_dtype(op, (1, 2))
        c, a, b = (self.operand(o, fr) for o in op.operands)
        a, b = (round_to(dtype, np.asarray(x)) for x in (a, b))
        return np.where(c, a, b)

    def op_iota(self, op: Op, fr: Frame):
        """Element [i0, ..., in] is start + i_axis, converted to the dtype."""
        shape = self.shape(op.shape, fr)
        start = 0 if op.start is None else op.start.evaluate(fr.env)
        start = np.asarray(start, dtype=np.int64).reshape((-1,) + (1,) * len(shape))
        axis = np.arange(shape[op.axis], dtype=np.int64).reshape(
            (1,) + tuple(n if k == op.axis else 1 for k, n in enumerate(shape)))
        values = np.broadcast_to(start + axis, (fr.batch.size,) + shape)
        return round_to(op.dtype, values)

    def op_reduce(self, op: Op, fr: Frame):
        x = self.operand(op.operands[0], fr)
        dtype = self.result_dtype(op)
        axis = op.axis + 1
        kind = op.reduce_kind
        if kind == "sum":
            acc = np.int64 if not dtype.is_float else self._compute_type(dtype)
            r = np.sum(x, axis=axis, dtype=acc)
        else:
            r = np.max(x, axis=axis) if kind == "max" else np.min(x, axis=axis)
        if r.ndim == 1:
            r = r.reshape(-1, 1)    # a rank-1 tile reduces to [1]
        return round_to(dtype, r)

    def op_cast(self, op: Op, fr: Frame):
        return round_to(op.dtype, self.operand(op.operands[0], fr))

    def op_zeros(self, op: Op, fr: Frame):
        shape = self.shape(op.shape, fr)
        return np.broadcast_to(np.zeros((), storage(op.dtype)), (fr.batch.size,) + shape)

    def op_fill(self, op: Op, fr: Frame):
        shape = self.shape(op.shape, fr)
        v = round_to(op.dtype, np.asarray(scalar_value(op.fill_value, fr.env)))
        return np.broadcast_to(v, (fr.batch.size,) + shape)

    def op_reshape(self, op: Op, fr: Frame):
        x = self.operand(op.operands[0], fr)
        return x.reshape((fr.batch.size,) + self.shape(op.shape, fr))

    def op_broadcast(self, op: Op, fr: Frame):
        x = self.operand(op.operands[0], fr)
        shape = self.shape(op.shape, fr)
        src = x.shape[1:]
        x = x.reshape((x.shape[0],) + (1,) * (len(shape) - len(src)) + src)
        return np.broadcast_to(x, (fr.batch.size,) + shape)

    def op_transpose(self, op: Op, fr: Frame):
        x = self.operand(op.operands[0], fr)
        rank = x.ndim - 1
        perm = op.perm or tuple(reversed(range(rank)))
        return np.transpose(x, (0,) + tuple(p + 1 for p in perm))

    # ------------------------------------------------------------ calls
    def op_call(self, op: Op, fr: Frame):
        callee = self.module.kernel(op.callee)
        results: dict[int, np.ndarray] = {}
        for f in range(fr.batch.size):
            if fr.batch.active is not None and not fr.batch.active[f]:
                continue
            env = {k: (int(v[f]) if isinstance(v, np.ndarray) else v) for k, v in fr.env.items()}
            one = Frame(Batch(1, ()), env, {k: v[f:f + 1] for k, v in fr.values.items()})
            overrides = {name: int(e.evaluate(env)) for name, e in op.bindings}
            cenv = bind(self.module, callee, overrides, where=f"call {callee.name} with", units=env)
            args: dict[str, np.ndarray] = {}
            for o, t in zip(op.operands, callee.tensors):
                value = self.operand(o, one)[0]
                want = tuple(int(d.evaluate(cenv)) for d in t.type.shape)
                if value.shape != want:
                    raise self.module.error(
                        f"call {callee.name}: argument for {t.name} is {list(value.shape)}, "
                        f"the callee's tensor is {list(want)}", op.loc)
                args[t.name] = np.array(round_to(t.type.dtype, value))
            inner = Interpreter(self.module, callee, args)
            inner.run(cenv)
            for o, t in zip(op.operands, callee.tensors):
                # A window argument is written back; a %value argument is the callee's copy.
                if t.role in ("out", "inout") and isinstance(o, Window):
                    self.write(o, one, args[t.name][None])
            if op.result is not None:
                if inner.returned is None:
                    raise self.module.error(f"{callee.name} returned no value", op.loc)
                results[f] = inner.returned[0]
        if op.result is None:
            return None
        shape = next(iter(results.values())).shape if results else \
            self.shape(self.info.result_types[id(op)].shape, fr)
        out = np.zeros((fr.batch.size,) + tuple(shape), storage(self.result_dtype(op)))
        for f, value in results.items():
            out[f] = value
        return out

    def op_return(self, op: Op, fr: Frame):
        """``return %v``: the value a ``call`` of this kernel produces (ignored when the
        kernel runs on its own)."""
        self.returned = self.operand(op.operands[0], fr)

    # ------------------------------------------------------------ collectives
    def _factor(self, level: str, fr: Frame, op: Op) -> tuple[int, list[int]]:
        extents = [n for _, n in fr.batch.factors]
        for k in range(len(fr.batch.factors) - 1, -1, -1):
            if fr.batch.factors[k][0] == level:
                return k, extents
        raise self.module.error(
            f"{op.opcode} over {level}: no enclosing mesh of that level runs its positions together", op.loc)

    def op_allreduce(self, op: Op, fr: Frame):
        x = self.operand(op.operands[0], fr)
        dtype = self.result_dtype(op)
        k, extents = self._factor(op.peer, fr, op)
        kind = op.reduce_kind
        if fr.batch.active is not None:
            ident = _MASK_IDENTITY[kind]
            if is_int(dtype):
                info = np.iinfo(x.dtype)
                ident = {"sum": 0, "max": info.min, "min": info.max}[kind]
            x = np.where(_expand(fr.batch.active, x.ndim), x, np.asarray(ident, x.dtype))
        grid = x.reshape(tuple(extents) + x.shape[1:])
        if kind == "sum":
            acc = np.int64 if is_int(dtype) else self._compute_type(dtype)
            r = np.sum(grid, axis=k, keepdims=True, dtype=acc)
        else:
            r = (np.max if kind == "max" else np.min)(grid, axis=k, keepdims=True)
        r = np.broadcast_to(round_to(dtype, r), grid.shape)
        return r.reshape(x.shape)

    def _peer(self, op: Op, fr: Frame):
        level, offset = parse_peer(op.peer, self.module, op.loc)
        k, extents = self._factor(level, fr, op)
        inner = math.prod(extents[k + 1:])
        flat = np.arange(fr.batch.size)
        mine = (flat // inner) % extents[k]
        other = np.broadcast_to(np.asarray(offset.evaluate(fr.env), dtype=np.int64), (fr.batch.size,))
        if np.any((other < 0) | (other >= extents[k])):
            bad = int(other[(other < 0) | (other >= extents[k])][0])
            raise self.module.error(f"{op.opcode} names {level}[{bad}], outside the {extents[k]} positions of {level}",
                                    op.loc)
        return level, mine, other, flat + (other - mine) * inner

    def op_send(self, op: Op, fr: Frame):
        value = self.operand(op.operands[0], fr)
        level, _, dest, _ = self._peer(op, fr)
        active = np.ones(fr.batch.size, bool) if fr.batch.active is None else fr.batch.active.copy()
        self.mailbox.append({"level": level, "value": value, "dest": dest, "pending": active})

    def op_recv(self, op: Op, fr: Frame):
        level, mine, source, sender = self._peer(op, fr)
        shape = (fr.batch.size,) + self.shape(op.shape, fr)
        out = np.zeros(shape, storage(op.dtype))
        need = np.ones(fr.batch.size, bool) if fr.batch.active is None else fr.batch.active.copy()
        for msg in self.mailbox:
            if msg["level"] != level or not need.any():
                continue
            match = need & msg["pending"][sender] & (msg["dest"][sender] == mine)
            if not match.any():
                continue
            if msg["value"].shape[1:] != shape[1:]:
                raise self.module.error(f"recv of {list(shape[1:])} matches a send of "
                                        f"{list(msg['value'].shape[1:])}", op.loc)
            out[match] = msg["value"][sender[match]]
            msg["pending"][sender[match]] = False
            need &= ~match
        if need.any():
            r = int(np.flatnonzero(need)[0])
            raise self.module.error(
                f"recv at {level}[{int(mine[r])}] from {level}[{int(source[r])}] found no send to it: "
                "positions run in lockstep, so a send must come before its recv in the kernel's text", op.loc)
        return round_to(op.dtype, out)


def _as_int(v):
    if isinstance(v, float):
        return np.int64(int(v)) if v == int(v) else v
    return np.asarray(v).astype(np.int64)


def _gelu(x):
    """GELU with the exact erf, erf by Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7)."""
    z = np.abs(x) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return (0.5 * x * (1.0 + erf)).astype(x.dtype)


def _sigmoid(x):
    return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype)


UNARY_FUNCTIONS = {
    "neg": np.negative,
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "sq": lambda x: x * x,
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: (1.0 / np.sqrt(x)).astype(x.dtype),
    "recip": lambda x: (1.0 / x).astype(x.dtype),
    "silu": lambda x: (x * _sigmoid(x)).astype(x.dtype),
    "gelu": _gelu,
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
}

FLOAT_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    "pow": np.power,
}


def _int_div(a, b):
    """Integer division truncating toward zero (C, PTX); division by zero gives 0."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe)
    return np.where(b == 0, 0, q)


def _int_pow(a, b):
    b = np.asarray(b, np.int64)
    return np.where(b < 0, 0, np.power(np.asarray(a, np.int64), np.maximum(b, 0)))


INT_BINARY = dict(FLOAT_BINARY, div=_int_div, pow=_int_pow)

# Comparisons give bool; NaN compares false except with ne (IEEE, numpy).
COMPARISONS = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
