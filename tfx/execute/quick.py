"""A quick check of a kernel at a small size: the explorer's run-check action.

``quick_check(path, kernel, overrides)`` shrinks the kernel's shape parameters (halving
the one that cuts the estimated work most, as ``tfx run``'s refusal suggests) until a
run is estimated at ``QUICK_SECONDS`` or less (tfx.execute.budget), runs it on seeded random inputs and
checks it:

* against each *twin*: another kernel of the file that declares the same non-scratch
  tensors (``decode_attention_composite`` vs ``decode_attention_single_op``), on the same
  inputs, under the tolerance derived from the dtypes (``tfx.execute.check``);
* with no twin, that every output element was written and is finite (an output starts
  as NaN, so an element the schedule never stores shows up; rows of an output written
  where the data places them (a scatter, a window start read at run time) may stay
  unwritten, the random routing addressing only some of them).

It returns plain data (picklable: the explorer runs it in a worker process, through
``tfx.tui.core.run_check``, which parses the kernel text: this package sees only the IR).
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np

from tfx.errors import TfxError
from tfx.hw.units import format_significant, format_time_ns
from tfx.execute import OUTPUT_ROLES, accumulation_terms, check_outputs, derived_rtol, execute, rounding_dtypes
from tfx.execute.budget import suggest
from tfx.ir.nodes import Kernel, Module, walk_ops

# A quick check should answer within a keystroke or two (the estimate's seconds).
QUICK_SECONDS = 0.2


def twins(module: Module, kernel: Kernel) -> list[Kernel]:
    """The other kernels of the file with the same non-scratch tensors (name, role, dtype)."""
    def sig(k):
        return {(t.name, t.role, t.type.dtype) for t in k.tensors if t.role != "scratch"}
    return [k for k in module.kernels if k is not kernel and sig(k) == sig(kernel)]


def scatter_targets(kernel: Kernel) -> set[str]:
    """Tensors whose rows the data places: written through ``gather(...)`` rows (a scatter)
    or at a window start read at run time (an expert's row group)."""
    return {op.target.tensor for op in walk_ops(kernel.body)
            if op.opcode == "store" and any(a.kind in ("gather", "runtime") for a in op.target.axes)}


def small_sizes(module: Module, kernel: Kernel, overrides: Mapping[str, int] | None = None,
                units: Mapping[str, int] | None = None) -> dict[str, int]:
    """``overrides`` plus the halved shape parameters that bring a run under the quick limits."""
    overrides = dict(overrides or {})
    return {**overrides, **suggest(module, kernel, overrides, QUICK_SECONDS, units=units)}


def quick_check(module: Module, kernel_name: str | None = None, overrides: Mapping[str, int] | None = None,
                seed: int = 0, units: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Run the kernel small and check it (see the module); errors come back as ``error``.
    ``units``: the machine's counts (tfx.ir.bind.profile_units) a default or let names."""
    started = time.perf_counter()
    try:
        kernel = module.kernel(kernel_name)
        sizes = small_sizes(module, kernel, overrides, units)
        result = execute(module, kernel, sizes, seed=seed, units=units)
        outputs = []
        others = twins(module, kernel)
        for other in others:
            mine = {n: v for n, v in sizes.items() if other.param(n) is not None}
            twin = execute(module, other, mine, seed=seed, inputs=result.inputs, units=units)
            rtol = derived_rtol(rounding_dtypes(module, kernel) | rounding_dtypes(module, other),
                                accumulation_terms(result.tensors, twin.tensors))
            for c in check_outputs(result, twin.outputs(), rtol):
                outputs.append({"name": c.name, "against": other.name, "max_abs_error": c.max_abs,
                                "max_rel_error": c.max_rel, "pass": c.passed,
                                "worst": list(c.worst_index) if not c.passed else None})
        if not others:
            scattered = scatter_targets(kernel)
            for name, a in result.outputs().items():
                floats = a.dtype.kind == "f"
                unwritten = int(np.isnan(a).sum()) if floats else 0
                infinite = int(np.isinf(a).sum()) if floats else 0
                # Rows the random routing does not address stay NaN legitimately.
                ok = infinite == 0 and (unwritten == 0 or name in scattered)
                outputs.append({"name": name, "against": None, "max_abs_error": None, "max_rel_error": None,
                                "pass": ok, "unwritten": unwritten, "infinite": infinite,
                                "scattered": name in scattered})
        return {"kernel": kernel.name, "params": result.params, "shrunk": {n: sizes[n] for n in sizes
                if n not in (overrides or {})}, "outputs": outputs,
                "pass": all(o["pass"] for o in outputs), "seconds": time.perf_counter() - started,
                "error": None}
    except TfxError as err:
        return {"kernel": kernel_name, "outputs": [], "pass": False, "error": err.headline(),
                "seconds": time.perf_counter() - started}


def summary(outcome: Mapping[str, Any]) -> str:
    """One line per output, for a toast or a status line."""
    if outcome.get("error"):
        return f"run check: {outcome['error']}"
    sizes = ", ".join(f"{n}={v}" for n, v in outcome["shrunk"].items()) or "the current sizes"
    lines = [f"run check {outcome['kernel']} at {sizes}: {'pass' if outcome['pass'] else 'FAIL'} "
             f"({format_time_ns(outcome['seconds'] * 1e9)})"]
    for o in outcome["outputs"]:
        verdict = "ok" if o["pass"] else "FAIL"
        if o["against"] is not None:
            lines.append(f"  {o['name']} vs {o['against']}: max abs error {format_significant(o['max_abs_error'], 3)}, "
                         f"max rel {format_significant(o['max_rel_error'], 3)}  {verdict}")
        else:
            what = "in rows the routing did not address" if o["scattered"] else "never written"
            lines.append(f"  {o['name']}: {o['unwritten']} elements {what}, {o['infinite']} infinite  {verdict}")
    return "\n".join(lines)


__all__ = ["quick_check", "small_sizes", "summary", "twins", "QUICK_SECONDS", "OUTPUT_ROLES"]
