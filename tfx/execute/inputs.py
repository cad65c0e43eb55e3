"""Seeded random inputs for a kernel's tensors (docs/language.md, "Executing kernels").

* float tensors: standard normal N(0, 1) by default, or uniform on [-1, 1) when asked
  (``--dist NAME=uniform``), rounded to the tensor's dtype;
* integer tensors whose values index rows through ``gather(...)`` (router tables):
  a random permutation of 0..size-1, where values >= the extent of the indexed axis
  become -1 (padding: a gather reads zeros there and a scatter drops the row), so
  every row is addressed at most once;
* integer tensors read in a window's start (``K_CACHE[BLOCK_TABLE[b, j] * PAGE : PAGE]``,
  ``X[EXPERT_START[e] + r * BM : BM]``): a random permutation p of 0..size-1 placed on the
  values that keep every window inside its tensor, ``span`` apart so that two entries'
  windows never overlap when there is room (lo + (p mod slots) x span: distinct pages of
  a page table, disjoint row groups of experts);
* other integer tensors: uniform integers in [-8, 8); bool tensors: fair coin flips;
* ``out`` and ``scratch`` tensors start as NaN (floats) or 0 (integers), so an element
  a kernel never writes shows up as NaN in the results and fails any check.

Each tensor draws from its own generator seeded by (seed, crc32(name)), so adding a
tensor to a kernel does not change the values of the others.
"""

from __future__ import annotations

import zlib
from typing import Any, Mapping

import numpy as np

from tfx.errors import TfxError
from tfx.execute.dtypes import round_to, storage
from tfx.ir.expr import BinOp, Call, Name, Neg, linear_coefficients, reads_in
from tfx.ir.nodes import Composite, Kernel, LoopRegion, MeshRegion, ValueRef, Window, walk_ops

DISTRIBUTIONS = ("normal", "uniform")
INPUT_ROLES = ("in", "inout")


def tensor_shape(tensor, env: Mapping[str, Any]) -> tuple[int, ...]:
    return tuple(int(d.evaluate(env)) for d in tensor.type.shape)


def index_extents(kernel: Kernel, env: Mapping[str, Any]) -> dict[str, int]:
    """Integer tensors whose loaded values are used as ``gather`` rows, with the smallest
    extent of the axes they index (a value followed through load, copy and reshape)."""
    source: dict[str, str] = {}      # %value -> integer tensor it was loaded from
    out: dict[str, int] = {}
    shapes = {t.name: tensor_shape(t, env) for t in kernel.tensors}
    for op in walk_ops(kernel.body):
        src = op.operands[0] if op.operands else None
        if op.opcode in ("load", "copy", "reshape") and op.result:
            if isinstance(src, Window) and kernel.tensor(src.tensor).type.dtype.family == "int":
                source[op.result] = src.tensor
            elif isinstance(src, ValueRef) and src.name in source:
                source[op.result] = source[src.name]
        windows = [o for o in op.operands if isinstance(o, Window)]
        if op.target is not None:
            windows.append(op.target)
        for w in windows:
            for axis_no, a in enumerate(w.axes):
                if a.kind == "gather" and a.index in source:
                    t = source[a.index]
                    extent = shapes[w.tensor][axis_no]
                    out[t] = min(out.get(t, extent), extent)
    return out


class _Zeros(dict):
    def __missing__(self, key):
        return 0


def _index_maxima(kernel: Kernel, env: Mapping[str, Any]) -> dict[int, dict[str, int]]:
    """For each op (by id), the largest value each enclosing coordinate and loop variable
    takes (loops at the trip count the executor runs: a runtime loop's expectation)."""
    out: dict[int, dict[str, int]] = {}

    def rec(stmts, top: dict[str, int]) -> None:
        for st in stmts:
            if isinstance(st, MeshRegion):
                inner = dict(top)
                for c, e in zip(st.coords, st.extents):
                    inner[c] = int(e.evaluate(_Zeros({**env, **top}))) - 1
                rec(st.body, inner)
            elif isinstance(st, LoopRegion):
                z = _Zeros({**env, **top})
                start, step = int(st.start.evaluate(z)), max(int(st.step.evaluate(z)), 1)
                if st.trip.kind == "runtime":
                    trips = int((st.trip.expect or st.trip.hi).evaluate(z))
                elif st.bound is not None:
                    trips = int(st.bound.evaluate(z))
                else:
                    trips = -((start - int(st.stop.evaluate(z))) // step)
                rec(st.body, dict(top, **{st.var: start + max(trips - 1, 0) * step}))
            elif isinstance(st, Composite):
                rec(st.body, top)
            else:
                out[id(st)] = top

    rec(kernel.body, {})
    return out


def runtime_ranges(kernel: Kernel, env: Mapping[str, Any]) -> dict[str, tuple[int, int, int]]:
    """Integer tensors read in a window's start (``PAGES[b, j] * PAGE : PAGE``,
    ``EXPERT_START[e] + r * BM : BM``) -> (lo, hi, span): the values v that keep every such
    window inside its tensor at every position (the start must be affine in the read,
    ``slope * v + base``; base taken at coordinates and loop variables 0 and at their
    largest), and the span of v one entry's windows cover (``PAGE / PAGE`` = 1 page; an
    expert's ``expect * BM`` rows), so entries ``span`` apart never overlap."""
    shapes = {t.name: tensor_shape(t, env) for t in kernel.tensors}
    zenv = _Zeros(env)
    maxima = _index_maxima(kernel, env)
    out: dict[str, tuple[int, int, int]] = {}
    for op in walk_ops(kernel.body):
        windows = [o for o in op.operands if isinstance(o, Window)]
        if op.target is not None:
            windows.append(op.target)
        for w in windows:
            for axis_no, a in enumerate(w.axes):
                if a.kind != "runtime":
                    continue
                reads = reads_in(a.offset)
                if len(reads) != 1:
                    continue
                var = "__read"
                start = _replace_read(a.offset, reads[0], Name(var))
                low = linear_coefficients(start, var, zenv)
                high = linear_coefficients(start, var, _Zeros({**env, **maxima.get(id(op), {})}))
                if low is None or high is None or low[0] == 0:
                    continue
                slope = int(low[0])
                base_lo, base_hi = sorted((int(low[1]), int(high[1])))
                size = int(a.size.evaluate(zenv))
                stride = 1 if a.stride is None else int(a.stride.evaluate(zenv))
                dim = shapes[w.tensor][axis_no]
                # 0 <= slope * v + base_lo and slope * v + base_hi + (size - 1) * stride < dim
                lo_end, hi_end = -base_lo, dim - 1 - (size - 1) * stride - base_hi
                lo, hi = (-(-lo_end // slope), hi_end // slope) if slope > 0 else \
                    (-(-hi_end // slope), lo_end // slope)
                span = max(1, -(-(base_hi - base_lo + size * stride) // abs(slope)))
                prev = out.get(reads[0].tensor, (lo, hi, span))
                out[reads[0].tensor] = (max(prev[0], lo), min(prev[1], hi), max(prev[2], span))
    return out


def _replace_read(e, read, by):
    if e is read:
        return by
    if isinstance(e, BinOp):
        return BinOp(e.op, _replace_read(e.lhs, read, by), _replace_read(e.rhs, read, by))
    if isinstance(e, Neg):
        return Neg(_replace_read(e.operand, read, by))
    if isinstance(e, Call):
        return Call(e.func, tuple(_replace_read(x, read, by) for x in e.args))
    return e


def generate_inputs(kernel: Kernel, env: Mapping[str, Any], seed: int = 0,
                    dists: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """Every tensor of ``kernel`` at its starting value (inputs random, outputs NaN or 0)."""
    dists = dict(dists or {})
    for name, dist in dists.items():
        if kernel.tensor(name) is None:
            names = ", ".join(t.name for t in kernel.tensors)
            raise TfxError(f"kernel {kernel.name} has no tensor {name!r} (tensors: {names})", where=f"--dist {name}")
        if dist not in DISTRIBUTIONS:
            raise TfxError(f"unknown distribution {dist!r}, expected normal or uniform", where=f"--dist {name}")
        t = kernel.tensor(name)
        if t.type.dtype.family != "float" or t.role not in INPUT_ROLES:
            article = "an" if t.role[0] in "aeiou" else "a"
            raise TfxError(f"{name} is {article} {t.role} {t.type.dtype} tensor: --dist draws float inputs only",
                           where=f"--dist {name}")
    extents = index_extents(kernel, env)
    starts = runtime_ranges(kernel, env)
    out: dict[str, np.ndarray] = {}
    for t in kernel.tensors:
        shape = tensor_shape(t, env)
        dtype = t.type.dtype
        if t.role not in INPUT_ROLES:
            fill = np.nan if dtype.family == "float" else 0
            out[t.name] = np.full(shape, fill, dtype=storage(dtype))
            continue
        rng = np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(t.name.encode())])
        if dtype.family == "float":
            if dists.get(t.name, "normal") == "uniform":
                raw = rng.uniform(-1.0, 1.0, size=shape)
            else:
                raw = rng.standard_normal(size=shape)
            out[t.name] = round_to(dtype, raw)
        elif dtype.family == "bool":
            out[t.name] = rng.integers(0, 2, size=shape).astype(bool)
        elif t.name in starts and starts[t.name][0] <= starts[t.name][1]:
            lo, hi, span = starts[t.name]
            slots = (hi - lo) // span + 1
            perm = rng.permutation(int(np.prod(shape)))
            out[t.name] = round_to(dtype, (lo + (perm % slots) * span).reshape(shape))
        elif t.name in extents:
            size = int(np.prod(shape))
            perm = rng.permutation(size)
            out[t.name] = round_to(dtype, np.where(perm < extents[t.name], perm, -1).reshape(shape))
        else:
            out[t.name] = round_to(dtype, rng.integers(-8, 8, size=shape))
    return out

