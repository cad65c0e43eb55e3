"""Seeded random inputs for a kernel's tensors (docs/language.md, "Executing kernels").

* float tensors: standard normal N(0, 1) by default, or uniform on [-1, 1) when asked
  (``--dist NAME=uniform``), rounded to the tensor's dtype;
* integer tensors whose values index rows through ``gather(...)`` (router tables):
  a random permutation of 0..size-1, where values >= the extent of the indexed axis
  become -1 (padding: a gather reads zeros there and a scatter drops the row), so
  every row is addressed at most once;
* integer tensors read in a window's start (``K_CACHE[BLOCK_TABLE[b, j] * PAGE : PAGE]``):
  a random permutation of 0..size-1 folded into the values that keep the window inside
  its tensor (lo + p mod (hi - lo + 1)), so a page table names distinct pages when it can;
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
from tfx.ir.nodes import Kernel, ValueRef, Window, walk_ops

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


def runtime_ranges(kernel: Kernel, env: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Integer tensors read in a window's start (``PAGES[b, j] * PAGE : PAGE``), with the
    values that keep every such window inside its tensor: the start must be affine in the
    read (``a * v + b``, coordinates and loop variables taken as 0), the range of v the
    intersection over the windows that read the tensor."""
    shapes = {t.name: tensor_shape(t, env) for t in kernel.tensors}
    zenv = _Zeros(env)
    out: dict[str, tuple[int, int]] = {}
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
                form = linear_coefficients(_replace_read(a.offset, reads[0], Name(var)), var, zenv)
                if form is None or form[0] == 0:
                    continue
                slope, base = int(form[0]), int(form[1])
                size = int(a.size.evaluate(zenv))
                stride = 1 if a.stride is None else int(a.stride.evaluate(zenv))
                dim = shapes[w.tensor][axis_no]
                # 0 <= slope * v + base and slope * v + base + (size - 1) * stride < dim
                lo_end, hi_end = -base, dim - 1 - (size - 1) * stride - base
                lo, hi = (-(-lo_end // slope), hi_end // slope) if slope > 0 else \
                    (-(-hi_end // slope), lo_end // slope)
                prev = out.get(reads[0].tensor, (lo, hi))
                out[reads[0].tensor] = (max(prev[0], lo), min(prev[1], hi))
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
            lo, hi = starts[t.name]
            size = int(np.prod(shape))
            perm = rng.permutation(size)
            out[t.name] = round_to(dtype, (lo + perm % (hi - lo + 1)).reshape(shape))
        elif t.name in extents:
            size = int(np.prod(shape))
            perm = rng.permutation(size)
            out[t.name] = round_to(dtype, np.where(perm < extents[t.name], perm, -1).reshape(shape))
        else:
            out[t.name] = round_to(dtype, rng.integers(-8, 8, size=shape))
    return out

