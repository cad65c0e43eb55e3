"""How long a CPU run of a kernel takes, estimated before running it, and the refusal.

The estimate walks the IR like the analysis does, without running anything, and
counts what the executor's time goes to:

* ``flops``: 2·M·N·K per mma (numpy's BLAS, one thread);
* ``elements``: one per result element of every other op (per element moved for
  loads, copies and stores), plus every tensor element once (inputs are drawn and
  rounded, outputs filled);
* ``steps``: ops the interpreter dispatches one at a time: meshes run their
  positions together (a factor 1), except those whose tile shapes vary per position,
  which run them one by one;
* ``memory``: bytes of the tensors as the executor holds them (float32, float64 or
  the integer type), twice (the inputs are kept to report them);

each op times the executions of the enclosing meshes and loops (a loop's ``bound``,
or a runtime loop's upper bound, when its trip count varies). ``seconds`` prices
them at the rates of one laptop core running numpy (below), so a refusal can say
how long the run would take and propose sizes that take about a second.
Coordinates and loop variables count as 0 where a shape depends on them (a tail tile
``min(BM, M - pm * BM)`` counts as a full one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from tfx.errors import TfxError
from tfx.execute.dtypes import storage
from tfx.ir import ops as opcat
from tfx.ir.bind import bind, check_shapes
from tfx.ir.nodes import Composite, Kernel, LoopRegion, MeshRegion, Module, Op, walk

# Rates of one core running numpy, measured with bench/run_speed.py's kernels on a
# laptop-class x86 core: single-threaded sgemm ~20 GFLOP/s; an elementwise op with
# its rounding to bf16 (ml_dtypes), a fancy-indexed gather or a drawn input ~20 ns an
# element; one interpreted op ~30 us of Python.
SECONDS_PER_FLOP = 5e-11
SECONDS_PER_ELEMENT = 2e-8
SECONDS_PER_STEP = 3e-5
# Refused above 10 s or 2 x 2**30 B (2.15 GB) of tensors; proposed sizes aim at a second.
MAX_SECONDS = 10.0
MAX_MEMORY = 2 * 2 ** 30
SUGGESTED_SECONDS = 1.0


class _Zeros(dict):
    """Parameters and lets; every coordinate and loop variable reads as 0."""

    def __missing__(self, key):
        return 0


@dataclass(frozen=True)
class Work:
    flops: float
    elements: float
    steps: float
    memory: float

    @property
    def seconds(self) -> float:
        return (self.flops * SECONDS_PER_FLOP + self.elements * SECONDS_PER_ELEMENT
                + self.steps * SECONDS_PER_STEP)

    def describe(self) -> str:
        """``33.55 Mflop of mma, 655,360 element operations, 15 interpreted steps``: flops as
        `tfx analyze` writes work (decimal prefixes), counts with thousands separators (it wrote
        '3.4e+07 mma flops, 6.6e+05 element operations')."""
        from tfx.hw.units import format_count, format_prefixed_count
        return (f"{format_prefixed_count(self.flops, 'flop')} of mma, {format_count(round(self.elements))} element operations, "
                f"{format_count(round(self.steps))} interpreted steps")

    def over(self, max_seconds: float = MAX_SECONDS) -> list[str]:
        out = []
        if self.seconds > max_seconds:
            from tfx.hw.units import format_duration_s
            out.append(f"{self.describe()}: about {format_duration_s(self.seconds)} on one CPU core "
                       f"(limit {format_duration_s(max_seconds)})")
        if self.memory > MAX_MEMORY:
            # bytes by the one unit policy (decimal prefixes: tfx.hw.units.format_bytes, as
            # tfx.present.formatting.nbytes writes them); was '4.0 GiB ... (limit 2 GiB)'
            from tfx.hw.units import format_bytes
            out.append(f"{format_bytes(self.memory)} of tensors (limit {format_bytes(MAX_MEMORY)})")
        return out

    def ratio(self, max_seconds: float = MAX_SECONDS) -> float:
        return max(self.seconds / max_seconds, self.memory / MAX_MEMORY)


def _varies(module: Module, kernel: Kernel, region) -> bool:
    info = module.info[kernel.name]
    for s in walk(region.body):
        if isinstance(s, Op):
            types = list(info.operand_types.get(id(s), ())) + [info.result_types.get(id(s))]
            shapes = [t.shape for t in types if t is not None] + ([s.shape] if s.shape is not None else [])
            if any(d.free_names() & info.index_names for sh in shapes for d in sh):
                return True
    return False


def _elements(ty, env) -> float:
    return float(math.prod(max(int(d.evaluate(env)), 0) for d in ty.shape)) if ty is not None else 0.0


def estimate(module: Module, kernel: Kernel, env: Mapping[str, Any]) -> Work:
    info = module.info[kernel.name]
    zenv = _Zeros(env)
    flops = elements = steps = 0.0

    def op_work(op: Op, env) -> tuple[float, float]:
        """(mma flops, element operations) of one execution."""
        types = info.operand_types.get(id(op), ())
        if op.opcode in opcat.MMA:
            a, b, c = types[0], types[1], types[2]
            m, k = (int(d.evaluate(env)) for d in a.shape[-2:])
            n = int(b.shape[-1].evaluate(env))
            batch = math.prod(int(d.evaluate(env)) for d in c.shape[:-2])
            return 2.0 * batch * m * n * k, 0.0
        if op.opcode == "store":
            return 0.0, _elements(types[0], env)
        if op.opcode == "call":
            callee = module.kernel(op.callee)
            cenv = bind(module, callee, {n: int(e.evaluate(env)) for n, e in op.bindings}, units=env)
            w = estimate(module, callee, cenv)
            return w.flops, w.elements
        return 0.0, max(_elements(info.result_types.get(id(op)), env),
                        max((_elements(t, env) for t in types), default=0.0))

    def rec(stmts, mult: float, step_mult: float) -> None:
        nonlocal flops, elements, steps
        for s in stmts:
            if isinstance(s, Op):
                f, e = op_work(s, zenv)
                flops += mult * f
                elements += mult * e
                steps += step_mult
            elif isinstance(s, MeshRegion):
                total = float(math.prod(max(int(e.evaluate(zenv)), 0) for e in s.extents))
                rec(s.body, mult * total, step_mult * (total if _varies(module, kernel, s) else 1.0))
            elif isinstance(s, LoopRegion):
                if s.trip.kind == "runtime":
                    trips = int((s.trip.expect if s.trip.expect is not None else s.trip.hi).evaluate(zenv))
                elif s.bound is not None:
                    trips = int(s.bound.evaluate(zenv))
                else:
                    start, stop, step = (int(x.evaluate(zenv)) for x in (s.start, s.stop, s.step))
                    trips = max(0, -((start - stop) // max(step, 1)))
                rec(s.body, mult * trips, step_mult * trips)
            elif isinstance(s, Composite):
                rec(s.body, mult, step_mult)

    rec(kernel.body, 1.0, 1.0)
    memory = 0.0
    for t in kernel.tensors:
        n = math.prod(int(d.evaluate(env)) for d in t.type.shape)
        elements += n
        memory += 2.0 * n * np.dtype(storage(t.type.dtype)).itemsize
    return Work(flops, elements, steps, memory)


def suggest(module: Module, kernel: Kernel, overrides: Mapping[str, int],
            max_seconds: float = SUGGESTED_SECONDS, units: Mapping[str, Any] | None = None) -> dict[str, int]:
    """Parameters to shrink, greedily: halve the one whose halving cuts the estimate most
    (a problem size before a tile size when they cut it alike), until the run is estimated
    at ``max_seconds`` or less (or nothing more can be halved). Only sizes that still bind
    and shape-check are proposed; {} when none fits. ``units``: the machine's counts
    (tfx.ir.bind: an environment bound with the profile)."""
    current = dict(overrides)
    env = bind(module, kernel, current, units=units)
    shapes = kernel.shape_parameters()
    # Problem sizes first; tile sizes too, for the kernels whose tiles outgrow a small problem.
    names = sorted(shapes) + sorted(p.name for p in kernel.params if p.name not in shapes)
    changed: dict[str, int] = {}
    est = estimate(module, kernel, env)
    for _ in range(128):
        if not est.over(max_seconds):
            break
        best = None
        for n in names:
            v = int(env[n])
            if v <= 1:
                continue
            trial = dict(current, **{n: v // 2})
            try:
                tenv = bind(module, kernel, trial, units=units)
                check_shapes(module, kernel, tenv)
                t_est = estimate(module, kernel, tenv)
            except (TfxError, ZeroDivisionError, ValueError):
                continue
            key = (t_est.ratio(max_seconds), n not in shapes, -v)
            if best is None or key < best[0]:
                best = (key, n, v // 2, tenv, t_est)
        # A halving that leaves the estimate as it is may still open the way (the 64 PEs
        # of sip_gemm each compute one whole tile until N and then TM shrink): take it.
        if best is None or best[0][0] > est.ratio(max_seconds):
            break
        _, n, v, env, est = best
        current[n] = v
        changed[n] = v
    return changed if not est.over(max_seconds) else {}


def refuse_if_too_big(module: Module, kernel: Kernel, env: Mapping[str, Any],
                      overrides: Mapping[str, int]) -> Work:
    """The estimate, or a TfxError naming what to shrink when the run is too big for a CPU."""
    est = estimate(module, kernel, env)
    over = est.over()
    if not over:
        return est
    names = sorted(kernel.shape_parameters(), key=lambda n: -int(env[n]))
    # Propose sizes that run in about a second, not ones just under the limit.
    hint = suggest(module, kernel, overrides, SUGGESTED_SECONDS, units=env)
    if hint:
        advice = "try " + " ".join(f"--set {n}={v}" for n, v in hint.items())
    else:
        advice = "shrink " + ", ".join(names) if names else "this kernel has no size parameter to shrink"
    raise module.error(f"kernel {kernel.name} is too big to run on a CPU at these sizes: "
                       f"{'; '.join(over)}; {advice}", kernel.loc)
