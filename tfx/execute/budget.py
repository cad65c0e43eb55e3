"""How much a CPU run of a kernel costs, estimated before running it, and the refusal.

The estimate walks the IR like the analysis does, without running anything:

* ``work``: element operations: 2·M·N·K per mma, one per result element of every
  other op (per element moved for loads, copies and stores), times the executions
  of the enclosing meshes and loops (a loop's ``bound`` or runtime upper bound when
  its trip count varies);
* ``steps``: ops the interpreter dispatches one at a time: meshes run their
  positions together (a factor 1), except those whose tile shapes vary per
  position, which run them one by one;
* ``memory``: bytes of the tensors as the executor holds them (float32, float64 or
  the integer type), twice (the inputs are kept to report them).

Coordinates and loop variables count as 0 where a shape depends on them (a tail
tile ``min(BM, M - pm * BM)`` counts as a full one).
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

# A CPU with numpy does ~1e9 simple element operations a second on one core; these
# limits keep a run under a minute or so on a laptop.
MAX_WORK = 2e10
MAX_STEPS = 2e6
MAX_MEMORY = 2 * 2 ** 30
SUGGESTED_WORK = 1e9


class _Zeros(dict):
    """Parameters and lets; every coordinate and loop variable reads as 0."""

    def __missing__(self, key):
        return 0


@dataclass(frozen=True)
class Work:
    work: float
    steps: float
    memory: float

    def over(self) -> list[str]:
        out = []
        if self.work > MAX_WORK:
            out.append(f"about {self.work:.2g} element operations (limit {MAX_WORK:.0e})")
        if self.steps > MAX_STEPS:
            out.append(f"about {self.steps:.2g} interpreted steps (limit {MAX_STEPS:.0e})")
        if self.memory > MAX_MEMORY:
            out.append(f"{self.memory / 2 ** 30:.1f} GiB of tensors (limit {MAX_MEMORY / 2 ** 30:.0f} GiB)")
        return out

    def ratio(self) -> float:
        return max(self.work / MAX_WORK, self.steps / MAX_STEPS, self.memory / MAX_MEMORY)


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
    work = steps = 0.0

    def op_work(op: Op, env) -> float:
        types = info.operand_types.get(id(op), ())
        if op.opcode in opcat.MMA:
            a, b = types[0], types[1]
            m, k = (int(d.evaluate(env)) for d in a.shape[-2:])
            n = int(b.shape[-1].evaluate(env))
            batch = math.prod(int(d.evaluate(env)) for d in a.shape[:-2])
            return 2.0 * batch * m * n * k
        if op.opcode == "store":
            return _elements(types[0], env)
        if op.opcode == "call":
            callee = module.kernel(op.callee)
            cenv = bind(module, callee, {n: int(e.evaluate(env)) for n, e in op.bindings})
            return estimate(module, callee, cenv).work
        return max(_elements(info.result_types.get(id(op)), env),
                   max((_elements(t, env) for t in types), default=0.0))

    def rec(stmts, mult: float, step_mult: float) -> None:
        nonlocal work, steps
        for s in stmts:
            if isinstance(s, Op):
                work += mult * op_work(s, zenv)
                steps += step_mult
            elif isinstance(s, MeshRegion):
                total = float(math.prod(max(int(e.evaluate(zenv)), 0) for e in s.extents))
                rec(s.body, mult * total, step_mult * (total if _varies(module, kernel, s) else 1.0))
            elif isinstance(s, LoopRegion):
                if s.trip.kind == "runtime":
                    trips = int(s.trip.hi.evaluate(zenv))
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
        memory += 2.0 * n * np.dtype(storage(t.type.dtype)).itemsize
    return Work(work, steps, memory)


def suggest(module: Module, kernel: Kernel, overrides: Mapping[str, int],
            max_work: float = MAX_WORK, max_steps: float = MAX_STEPS) -> dict[str, int]:
    """Parameters to shrink, greedily: halve the one whose halving cuts the estimate most
    (a problem size before a tile size when they cut it alike), until it fits ``max_work``
    and ``max_steps`` (or nothing more can be halved).
    Only sizes that still bind and shape-check are proposed; {} when none fits."""
    current = dict(overrides)
    env = bind(module, kernel, current)
    shapes = kernel.shape_parameters()
    # Problem sizes first; tile sizes too, for the kernels whose tiles outgrow a small problem.
    names = sorted(shapes) + sorted(p.name for p in kernel.params if p.name not in shapes)
    changed: dict[str, int] = {}
    est = estimate(module, kernel, env)

    def over(w: Work) -> bool:
        return bool(w.over()) or w.work > max_work or w.steps > max_steps

    def ratio(w: Work) -> float:
        return max(w.ratio(), w.work / max_work, w.steps / max_steps)

    for _ in range(128):
        if not over(est):
            break
        best = None
        for n in names:
            v = int(env[n])
            if v <= 1:
                continue
            trial = dict(current, **{n: v // 2})
            try:
                tenv = bind(module, kernel, trial)
                check_shapes(module, kernel, tenv)
                t_est = estimate(module, kernel, tenv)
            except (TfxError, ZeroDivisionError, ValueError):
                continue
            key = (ratio(t_est), n not in shapes, -v)
            if best is None or key < best[0]:
                best = (key, n, v // 2, tenv, t_est)
        # A halving that leaves the estimate as it is may still open the way (the 64 PEs
        # of sip_gemm each compute one whole tile until N and then TM shrink): take it.
        if best is None or best[0][0] > ratio(est):
            break
        _, n, v, env, est = best
        current[n] = v
        changed[n] = v
    return changed if not over(est) else {}


def refuse_if_too_big(module: Module, kernel: Kernel, env: Mapping[str, Any],
                      overrides: Mapping[str, int]) -> Work:
    """The estimate, or a TfxError naming what to shrink when the run is too big for a CPU."""
    est = estimate(module, kernel, env)
    over = est.over()
    if not over:
        return est
    names = sorted(kernel.shape_parameters(), key=lambda n: -int(env[n]))
    # Propose sizes that run in about a second, not ones just under the limit.
    hint = suggest(module, kernel, overrides, max_work=SUGGESTED_WORK)
    if hint:
        advice = "try " + " ".join(f"--set {n}={v}" for n, v in hint.items())
    else:
        advice = "shrink " + ", ".join(names) if names else "this kernel has no size parameter to shrink"
    raise module.error(f"kernel {kernel.name} is too big to run on a CPU at these sizes: "
                       f"{'; '.join(over)}; {advice}", kernel.loc)
