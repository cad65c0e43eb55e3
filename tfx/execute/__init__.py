"""Executing kernels on data: ``tfx run`` (docs/language.md, "Executing kernels").

``execute(module, kernel, overrides, seed=...)`` binds the parameters, refuses
sizes too big for a CPU (naming what to shrink), generates seeded inputs
(``tfx.execute.inputs``), interprets the verified IR with numpy
(``tfx.execute.interp``) and returns every tensor: inputs as generated, outputs
as computed. ``tfx.execute.check`` compares outputs under a tolerance derived
from the dtypes. Depends on ``tfx.ir`` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from tfx.errors import TfxError
from tfx.execute.budget import Work, estimate, refuse_if_too_big
from tfx.execute.check import OutputCheck, accumulation_terms, compare, derived_rtol, rounding_dtypes
from tfx.execute.dtypes import round_to
from tfx.execute.inputs import INPUT_ROLES, generate_inputs, tensor_shape
from tfx.execute.interp import Interpreter
from tfx.ir.bind import bind, check_shapes, module_units, profile_units
from tfx.ir.nodes import Kernel, Module

OUTPUT_ROLES = ("out", "inout")


@dataclass
class RunResult:
    """One execution: parameter values, the tensors before and after, the estimate."""

    kernel: str
    params: dict[str, int]
    roles: dict[str, str]
    dtypes: dict[str, str]
    inputs: dict[str, np.ndarray]       # in and inout tensors as generated
    tensors: dict[str, np.ndarray]      # every tensor after the run
    work: Work
    seed: int = 0
    extra: dict = field(default_factory=dict)

    def outputs(self) -> dict[str, np.ndarray]:
        return {n: a for n, a in self.tensors.items() if self.roles[n] in OUTPUT_ROLES}

    def arrays(self) -> dict[str, np.ndarray]:
        """What ``--out`` saves: every tensor by name (inputs as generated, the rest as
        computed; an inout tensor's starting value as ``NAME.in``), in float32 or its
        integer type."""
        out = {}
        for name, a in self.tensors.items():
            role = self.roles[name]
            value = self.inputs[name] if role == "in" else a
            out[name] = value.astype(np.float32) if value.dtype.kind == "f" else value
            if role == "inout":
                v = self.inputs[name]
                out[name + ".in"] = v.astype(np.float32) if v.dtype.kind == "f" else v
        return out


def prepare(module: Module, kernel: Kernel, overrides: Mapping[str, int] | None = None,
            budget: bool = True, units: Mapping[str, int] | None = None):
    """Bound parameters, shape-checked, with the work estimate (refused when too big).
    ``units``: the machine's counts a default or let names (``{"units(sm)": 132}``,
    tfx.ir.bind.profile_units)."""
    overrides = dict(overrides or {})
    env = bind(module, kernel, overrides, units=units)
    check_shapes(module, kernel, env)
    work = refuse_if_too_big(module, kernel, env, overrides) if budget else estimate(module, kernel, env)
    return env, work


def execute(module: Module, kernel: Kernel, overrides: Mapping[str, int] | None = None, *,
            seed: int = 0, dists: Mapping[str, str] | None = None,
            inputs: Mapping[str, Any] | None = None, budget: bool = True,
            profile: Any = None, units: Mapping[str, int] | None = None) -> RunResult:
    """Run ``kernel`` on seeded random inputs; ``inputs`` replaces generated tensors by name
    (rounded to the tensor's dtype; shapes must match). A kernel that counts the machine
    (``units(pe)``) takes the counts from ``profile``, or ``units`` (tfx.ir.bind.profile_units)."""
    if units is None and profile is not None:
        # the kernel's own refusal first (a level the profile lacks), then every kernel's
        # counts, so a called kernel binds on the same machine
        units = {**module_units(module, profile), **profile_units(module, kernel, profile)}
    env, work = prepare(module, kernel, overrides, budget, units)
    tensors = generate_inputs(kernel, env, seed, dists)
    for name, value in (inputs or {}).items():
        t = kernel.tensor(name)
        if t is None:
            raise TfxError(f"kernel {kernel.name} has no tensor {name!r}", where=f"inputs {name}")
        value = np.asarray(value)
        want = tensor_shape(t, env)
        if value.shape != want:
            raise TfxError(f"tensor {name} is {list(want)}, the value given is {list(value.shape)}",
                           where=f"inputs {name}")
        tensors[name] = np.array(round_to(t.type.dtype, value))
    given = {t.name: tensors[t.name].copy() for t in kernel.tensors if t.role in INPUT_ROLES}
    Interpreter(module, kernel, tensors).run(env)
    params = {p.name: int(env[p.name]) for p in kernel.params}
    return RunResult(kernel.name, params, {t.name: t.role for t in kernel.tensors},
                     {t.name: str(t.type.dtype) for t in kernel.tensors}, given, tensors, work, seed)


def check_outputs(result: RunResult, expected: Mapping[str, np.ndarray], rtol: float) -> list[OutputCheck]:
    """Each expected output (by name) against the computed one."""
    checks = []
    for name, want in expected.items():
        if name not in result.tensors or result.roles[name] not in OUTPUT_ROLES:
            outs = ", ".join(n for n, r in result.roles.items() if r in OUTPUT_ROLES)
            raise TfxError(f"{name!r} is not an output of kernel {result.kernel} (outputs: {outs})")
        got = result.tensors[name]
        want = np.asarray(want)
        if want.shape != got.shape:
            raise TfxError(f"expected {name} of shape {list(want.shape)}, the kernel's is {list(got.shape)}")
        checks.append(compare(name, got, want, rtol))
    return checks


__all__ = ["RunResult", "Work", "OutputCheck", "execute", "prepare", "check_outputs", "compare",
           "derived_rtol", "accumulation_terms", "rounding_dtypes", "generate_inputs", "estimate"]
