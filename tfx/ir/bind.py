"""Binding parameters to values, and the checks that need concrete numbers.

``bind(module, kernel, overrides)`` gives the environment of parameters and
lets; ``check_shapes`` then verifies, under those values, what the symbolic
verifier cannot: mma and elementwise shapes agree, stores match their window,
static windows stay inside their tensor.
"""

from __future__ import annotations

import difflib
from typing import Any, Mapping

from tfx.errors import TfxError
from tfx.hw.units import format_bytes, format_count, format_significant
from tfx.ir import ops as opcat
from tfx.ir.expr import units_level, units_name
from tfx.ir.nodes import Kernel, LoopRegion, MeshRegion, Module, Op, Scalar, Window, walk
from tfx.ir.verify import KernelInfo

# The hierarchy's root: units(device) is 1 (Profile.units_of).
DEVICE_LEVEL = "device"
# Every value the analysis evaluates must fit the int64 that sweeps evaluate in.
INT64_MAX = 2 ** 63 - 1
# A tensor's bytes stay below this, so byte counts summed over a handful of tensors and
# multiplied by small factors still fit an int64 (and the numbers stay physical: 4 EiB).
MAX_TENSOR_BYTES = 2 ** 62
# Most values a declared domain may hold, the same ceiling as a --sweep range's.
MAX_DOMAIN_VALUES = 10_000_000
# Ceiling of an attribute (threads per CTA, registers, shared memory bytes, occupancy):
# fits an int32, as CUDA's launch parameters do.
MAX_ATTR_VALUE = 2 ** 31 - 1


def bind(module: Module, kernel: Kernel, overrides: Mapping[str, Any] | None = None,
         where: str = "--set", profile: Any = None, units: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Parameter and let values: defaults, replaced by ``overrides`` (ints or int arrays).

    A kernel that counts the machine (``units(sm)``) takes the counts from ``profile``, or
    from the ``units(...)`` entries of ``units`` (an environment bound before: a re-bind of
    the same launch keeps its machine); without either, a default or let that names one is
    refused where it is evaluated."""
    overrides = dict(overrides or {})
    names = [p.name for p in kernel.params]
    for name in overrides:
        if kernel.param(name) is None:
            if any(l.name == name for l in kernel.lets):
                raise TfxError(f"{name} is derived (let {name} = ...) and cannot be set", where=f"{where} {name}")
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise TfxError(f"kernel {kernel.name} has no parameter {name!r} (parameters: {', '.join(names)}){hint}",
                           where=f"{where} {name}")
    env: dict[str, Any] = profile_units(module, kernel, profile, units)
    for p in kernel.params:
        env[p.name] = overrides[p.name] if p.name in overrides else p.default.evaluate(env)
    for l in kernel.lets:
        env[l.name] = l.value.evaluate(env)
    return env


# ---------------------------------------------------------------- the machine's counts

def units_used(module: Module | None, kernel: Kernel) -> dict[str, Any]:
    """``{LEVEL: source location}`` of every ``units(LEVEL)`` the kernel names (the verifier
    records them; a module parsed without verifying, or none given, is scanned here)."""
    info = module.info.get(kernel.name) if module is not None else None
    if info is not None:
        return info.units
    found: dict[str, Any] = {}
    for e in [p.default for p in kernel.params] + [l.value for l in kernel.lets] + _domain_exprs(kernel):
        for name in sorted(e.free_names()):
            level = units_level(name)
            if level is not None:
                found.setdefault(level, getattr(e, "loc", None))
    return found


def _domain_exprs(kernel: Kernel) -> list:
    """Every expression a parameter's domain or sweep is written with."""
    return [e for p in kernel.params for d in (p.domain, p.sweep) if d is not None for e in d.expressions()]


def profile_units(module: Module | None, kernel: Kernel, profile: Any = None,
                  units: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The environment's ``units(LEVEL)`` entries: every one ``units`` has, and those of the
    levels ``kernel`` counts from ``profile.units_of(LEVEL)`` where ``units`` lacks them; refused at the kernel's
    first use of a level the profile lacks. Without a profile there are none: a default or let
    that names one is refused when evaluated (a kernel given NUM_SMS needs no machine)."""
    used = units_used(module, kernel)
    # every count ``units`` carries stays: a kernel it calls binds on the same machine
    out: dict[str, Any] = {k: v for k, v in (units or {}).items() if units_level(k) is not None}
    for level, loc in used.items():
        key = units_name(level)
        if units is not None and key in units:
            out[key] = units[key]
            continue
        if profile is None:
            continue    # a default that names it is refused when evaluated (expr.Name), unless given
        levels = [DEVICE_LEVEL, *profile.hierarchy_levels()]
        if level not in levels:
            raise _error(module, f"{key}: {level!r} is not a hierarchy level of hardware profile "
                                 f"{profile.name} (it has: {', '.join(levels)})", loc,
                         way_out(profile, "level", level))
        out[key] = int(profile.units_of(level))
    return out


def module_units(module: Module, profile: Any) -> dict[str, Any]:
    """The ``units(...)`` entries of every kernel of ``module`` on ``profile`` (levels it lacks
    left out: a kernel that is not run is not refused): what an execution whose kernels call one
    another binds with, each callee on the caller's machine."""
    out: dict[str, Any] = {}
    levels = {DEVICE_LEVEL, *profile.hierarchy_levels()}
    for k in module.kernels:
        for level in units_used(module, k):
            if level in levels:
                out[units_name(level)] = int(profile.units_of(level))
    return out


def machine_names(kernel: Kernel, given: Mapping[str, Any] | set | None = None) -> set[str]:
    """The parameters not in ``given`` and the lets whose values count the machine (``units(sm)``),
    directly or through an earlier such name (profile_dependent, then the lets in order)."""
    out = profile_dependent(kernel, given)
    for let in kernel.lets:
        if names_machine(let.value.free_names(), out):
            out.add(let.name)
    return out


def names_machine(expr_names: set[str], machine: set[str]) -> bool:
    """Whether an expression of ``expr_names`` counts the machine: it names a count, or one of
    ``machine`` (machine_names)."""
    return bool(expr_names & machine) or any(units_level(n) is not None for n in expr_names)


def needs_machine(kernel: Kernel, given: Mapping[str, Any] | set | None = None) -> bool:
    """Whether binding ``kernel`` with ``given`` evaluates a count of the machine: a default
    left unset that names one (profile_dependent), or a let that does. (A domain or sweep that
    names one is judged only where the machine is known: ``unknown_counts``.)"""
    return bool(machine_names(kernel, given))


def unknown_counts(d, env: Mapping[str, Any]) -> bool:
    """Whether domain (or expression) ``d`` names a count of the machine ``env`` was bound without
    (no profile, NUM_SMS given): such a domain, sweep or divisor cannot be evaluated, and is not
    judged there."""
    return d is not None and any(units_level(n) is not None and n not in env for n in d.free_names())


def bind_defaults(module: Module, kernel: Kernel, env: Mapping[str, Any]) -> dict[str, Any]:
    """The kernel under its defaults, on the machine ``env`` was bound with (its ``units(...)``
    entries). Bound without a profile, a parameter whose default counts the machine keeps its
    value in ``env`` (given: NUM_SMS=5), which is all there is to know of that machine."""
    missing = any(units_name(level) not in env for level in units_used(module, kernel))
    keep = {n: env[n] for n in profile_dependent(kernel)} if missing else {}
    return bind(module, kernel, keep, units=env)


def _error(module: Module | None, message: str, loc, notes=()) -> TfxError:
    return module.error(message, loc, notes) if module is not None else TfxError(message, where=loc, notes=notes)


def way_out(profile: Any, kind: str, name: str) -> tuple[str, ...]:
    """The note of a refused level: the shipped profiles that have it (``profile.others_with``;
    a profile without that method, a test's stand-in, gives none)."""
    finder = getattr(profile, "others_with", None)
    names = finder(**{kind: name}) if finder is not None else []
    if not names:
        return ()
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    what = "mesh level" if kind == "mesh" else "hierarchy level"
    return (f"{shown} {'has' if len(names) == 1 else 'have'} {what} {name!r}: --hw {names[0]}",)


def profile_dependent(kernel: Kernel, given: Mapping[str, Any] | set | None = None) -> set[str]:
    """Parameters not in ``given`` whose defaults count the machine (``units(sm)``), directly or
    through an earlier such parameter: a what-if knob on the hierarchy changes them, so a sweep
    or sensitivity that fixes the other parameters recomputes these per profile."""
    given = set(given or ())
    out: set[str] = set()
    for p in kernel.params:
        if p.name in given:
            continue
        if names_machine(p.default.free_names(), out):
            out.add(p.name)
    return out


# ---------------------------------------------------------------- domains (the --set boundary)

def domain_text(kernel: Kernel, name: str, env: Mapping[str, Any]) -> str | None:
    """Parameter ``name``'s declared domain as a person reads it (``{16, 32, 64}``,
    ``1..6``), evaluated under ``env``; None when it declares none. The explorer's edit
    dialog shows this."""
    p = kernel.param(name)
    if p is None or p.domain is None:
        return None
    return describe_domain(p.domain, env)


def describe_domain(d, env: Mapping[str, Any]) -> str:
    """``d.describe(env)``; as written (``{units(sm) / 4, units(sm)}``) where it names a count of
    the machine ``env`` was bound without."""
    if not unknown_counts(d, env):
        return d.describe(env)
    from tfx.ir.expr import to_text
    if d.values is not None:
        return "{" + ", ".join(to_text(v) for v in d.values) + "}"
    step = "" if d.step is None else f" step {'x' if d.geometric else ''}{to_text(d.step)}"
    return f"{to_text(d.lo)}..{to_text(d.hi)}{step}"


def domain_hint(kernel: Kernel, name: str, env: Mapping[str, Any]) -> str:
    """What the explorer's edit dialog tells about parameter ``name``: its declared domain
    (the values it accepts) and, when declared apart, the sweep explore draws from:
    ``declared domain 1..1048576, sweep {512, 1024, ...}``; "" when it declares neither."""
    p = kernel.param(name)
    if p is None:
        return ""
    parts = [f"declared domain {describe_domain(p.domain, env)}" if p.domain is not None else "any value"]
    if p.sweep is not None:
        parts.append(f"sweep {describe_domain(p.sweep, env)}")
    return ", ".join(parts) if p.domain is not None or p.sweep is not None else ""


def domain_problem(kernel: Kernel, name: str, value: int, env: Mapping[str, Any]) -> str | None:
    """Why ``value`` may not be given to parameter ``name`` (outside its declared domain, and
    not its default), or None when it may. ``env`` binds the other parameters."""
    p = kernel.param(name)
    if p is None or p.domain is None or unknown_counts(p.domain, env):
        return None
    # a default counting the machine (units(sm)) bound without a profile: the domain alone judges
    known = all(units_level(n) is None or n in env for n in p.default.free_names())
    if (known and value == p.default.evaluate(env)) or p.domain.contains(value, env):
        return None
    return f"{name}={value} is outside its declared domain {p.domain.describe(env)}"


def check_set_values(module: Module, kernel: Kernel, overrides: Mapping[str, int],
                     where: str = "--set", profile: Any = None) -> None:
    """Refuse (one TfxError line naming the flag and the domain) a value given on the command
    line that lies outside its parameter's declared domain. The Python API stays permissive:
    a sweep may step outside on purpose; a person typing ``--set BM=100`` has a typo."""
    scalar = {n: v for n, v in overrides.items() if isinstance(v, int)}
    if not scalar:
        return
    env = bind(module, kernel, scalar, where=where, profile=profile)
    for name, value in scalar.items():
        problem = domain_problem(kernel, name, value, env)
        if problem:
            raise TfxError(problem, where=f"{where} {name}")
    problem = unset_domain_problem(module, kernel, scalar, env)
    if problem:
        name, message = problem
        raise TfxError(message, where=f"{where} {name}")


def unset_domain_problem(module: Module, kernel: Kernel, given: Mapping[str, int],
                         env: Mapping[str, Any]) -> tuple[str, str] | None:
    """A parameter left at its default whose domain, naming a given one, no longer holds it
    (``--set HKV=3`` leaves HQ = 64 outside ``HKV..8192 step HKV``), as (the given name to
    blame, message); None when there is none. A default that lies outside its domain as
    declared is allowed, as a given default is."""
    defaults = None
    for p in kernel.params:
        if p.name in given or p.domain is None or unknown_counts(p.domain, env) \
                or p.domain.contains(env[p.name], env):
            continue
        defaults = defaults if defaults is not None else bind_defaults(module, kernel, env)
        if not p.domain.contains(defaults[p.name], defaults):
            continue
        named = [n for n in given if n in p.domain.free_names()] or list(given)
        shown = ", ".join(f"{n}={given[n]}" for n in named)
        return named[0], (f"with {shown}, {p.name}={env[p.name]} (its default) is outside its declared "
                          f"domain {p.domain.describe(env)}: set {p.name} too")
    return None


def _dims(shape, env) -> tuple[int, ...]:
    return tuple(int(d.evaluate(env)) for d in shape)


def check_shapes(module: Module, kernel: Kernel, env: Mapping[str, Any]) -> None:
    """Refuse shape mismatches and static out-of-bounds windows under ``env`` (scalar values)."""
    info: KernelInfo = module.info[kernel.name]
    _check_values(module, kernel, env, info)
    for t in kernel.tensors:
        dims = _dims(t.type.shape, env)
        if any(d <= 0 for d in dims):
            raise module.error(f"tensor {t.name} has shape {list(dims)}: every extent must be positive", t.loc)
        nbytes = _prod(dims) * t.type.dtype.bits // 8
        if nbytes > MAX_TENSOR_BYTES:
            raise module.error(f"tensor {t.name} has shape {list(dims)}: {format_bytes(nbytes)}, above the "
                               f"{format_bytes(MAX_TENSOR_BYTES)} (2^62) tfx can count", t.loc)
    tensor_dims = {t.name: _dims(t.type.shape, env) for t in kernel.tensors}
    for s in walk(kernel.body):
        if not isinstance(s, Op):
            continue
        _check_op(module, s, info, env, tensor_dims)


def _check_domains(module: Module, p, env, defaults) -> None:
    """A parameter's domain and sweep under ``env``: every bound fits an int64; the domain
    holds a value; the sweep holds 1..MAX_DOMAIN_VALUES values, each in the domain under the
    parameters' defaults (``defaults``: a declaration is judged as written; with other values
    set, a domain that names them, HQ's ``HKV..8192 step HKV``, may no longer hold the sweep of
    a parameter that is not swept). A domain with a separate sweep is never listed, so it may
    be as large as 64 bits allow."""
    if unknown_counts(p.domain, env) or unknown_counts(p.sweep, env):
        return      # names the machine's counts, and env was bound without them (no profile)
    for what, d in (("domain", p.domain), ("sweep", p.sweep)):
        if d is not None and any(not -INT64_MAX <= v <= INT64_MAX for v in d.extremes(env)):
            raise module.error(f"the {what} of {p.name} holds a value that does not fit a "
                               "64-bit integer", p.loc)
    if p.domain is not None and p.sweep is not None and p.domain.size(env) == 0:
        raise module.error(f"the domain of {p.name} is empty ({p.domain.describe(env)}): no value "
                           "is valid", p.loc)
    problem = sweep_problem(p, env, check_inside=False) or (
        sweep_problem(p, defaults) if defaults is not None else None)
    if problem is not None:
        message, loc, notes = problem
        raise module.error(message, loc, notes)


def sweep_problem(p, env, check_inside: bool = True) -> tuple[str, object, tuple[str, ...]] | None:
    """Why parameter ``p``'s sweep (its ``sweep``, else its domain) cannot be drawn from under
    ``env``: empty, more than MAX_DOMAIN_VALUES values, or (``check_inside``) a value outside
    the domain; as (message, source location, notes), or None. ``tfx check`` and
    ``tfx explore`` refuse alike."""
    sweep = p.sweep_domain
    if sweep is None:
        return None
    what = "sweep" if p.sweep is not None else "domain"
    size = sweep.size(env)
    if size == 0:
        return f"the {what} of {p.name} is empty ({sweep.describe(env)}): nothing to sweep", p.loc, ()
    if size > MAX_DOMAIN_VALUES:
        notes = () if p.sweep is not None else (
            f"to accept every value of {sweep.describe(env)} but sweep a few, declare them apart: "
            f"param {p.name} = ... in {sweep.describe(env)} sweep {{...}}",)
        return (f"the {what} of {p.name} has {format_count(size)} values (at most {format_count(MAX_DOMAIN_VALUES)}): "
                "too many values to sweep", p.loc, notes)
    if check_inside and p.sweep is not None and p.domain is not None:
        outside = p.sweep.first_outside(p.domain, env)
        if outside is not None:
            value, expr = outside
            loc = (expr.loc if expr is not None else None) or p.sweep.loc or p.loc
            return (f"the sweep of {p.name} holds {value}, outside its domain {p.domain.describe(env)}",
                    loc, ())
    return None


def _check_values(module: Module, kernel: Kernel, env, info: KernelInfo) -> None:
    """What only values can show: 64-bit parameters and lets, sane domains and attributes,
    no divisor that is zero, loops that run, meshes and stages of at least one."""
    # a divisor that is zero first, named by where it is written (a sweep's, an attr's), before the
    # domains evaluate it and fail with the operator's bare message
    for node, divisor, what, use_loc in info.divisors:
        if not _static(divisor, info) or unknown_counts(divisor, env):
            continue  # varies per position: evaluated (and refused there) when counted
        if divisor.evaluate(env) == 0:
            raise module.error(f"division by zero in {what} (the divisor is 0 with these parameters)",
                               node.loc or use_loc)
    defaults = None
    for p in kernel.params:
        value = env[p.name]
        if not -INT64_MAX <= value <= INT64_MAX:
            raise module.error(f"parameter {p.name} = {format_significant(value, 3)} does not fit a 64-bit integer", p.loc)
        if defaults is None and p.sweep is not None and p.domain is not None:
            defaults = bind_defaults(module, kernel, env)
        _check_domains(module, p, env, defaults)
    for let in kernel.lets:
        value = env[let.name]
        if not -INT64_MAX <= value <= INT64_MAX:
            raise module.error(f"let {let.name} = {format_significant(value, 3)} does not fit a 64-bit integer", let.loc)
    for attr in kernel.attrs:
        value = int(attr.value.evaluate(env))
        lowest = 1 if attr.name in ("threads", "occupancy") else 0
        if not lowest <= value <= MAX_ATTR_VALUE:
            raise module.error(f"attr {attr.name} = {value}: expected {lowest}..{format_count(MAX_ATTR_VALUE)}", attr.loc)
    for s in walk(kernel.body):
        if isinstance(s, MeshRegion):
            for i, e in enumerate(s.extents):
                if _static(e, info) and int(e.evaluate(env)) < 1:
                    raise module.error(f"mesh {s.level} extent {i} is {int(e.evaluate(env))}: "
                                       "every extent must be >= 1", s.loc)
            if s.swizzle is not None and _static(s.swizzle, info) and int(s.swizzle.evaluate(env)) < 1:
                raise module.error(f"swizzle({int(s.swizzle.evaluate(env))}): the group must be >= 1",
                                   s.loc)
        elif isinstance(s, LoopRegion):
            _check_loop(module, s, env, info)


def _check_loop(module: Module, lp: LoopRegion, env, info: KernelInfo) -> None:
    if lp.stages is not None and _static(lp.stages, info) and int(lp.stages.evaluate(env)) < 1:
        raise module.error(f"loop {lp.var} has stages {int(lp.stages.evaluate(env))}: expected >= 1",
                           lp.loc)
    step = int(lp.step.evaluate(env)) if _static(lp.step, info) else None
    if step is not None and step < 1:
        raise module.error(f"loop {lp.var} has step {step}: expected >= 1", lp.loc)
    if lp.trip.kind == "runtime":
        for label, e in (("runtime upper bound", lp.trip.hi), ("expected trip count", lp.trip.expect)):
            if e is not None and _static(e, info) and int(e.evaluate(env)) < 1:
                raise module.error(f"loop {lp.var}'s {label} is {int(e.evaluate(env))}: the prediction "
                                   "needs at least 1 trip (remove the loop where it never runs)", lp.loc)
    if lp.stop is None or step is None or not (_static(lp.start, info) and _static(lp.stop, info)):
        return  # runtime trip counts and per-position bounds: counted per position
    start, stop = int(lp.start.evaluate(env)), int(lp.stop.evaluate(env))
    if stop <= start:
        raise module.error(f"loop {lp.var} = {start} to {stop} runs 0 times: a loop must run at least "
                           "once (remove it, or change its bounds)", lp.loc)


def _static(expr, info: KernelInfo) -> bool:
    return not (expr.free_names() & info.index_names)


def _check_window(module, w: Window, env, dims, info, loc):
    for axis_no, (a, full) in enumerate(zip(w.axes, dims)):
        if a.kind not in ("range", "runtime"):
            continue
        parts = [a.offset, a.size] + ([a.stride] if a.stride is not None else [])
        if _static(a.size, info):
            size = int(a.size.evaluate(env))
            if size <= 0:
                raise module.error(f"window on {w.tensor} axis {axis_no} has size {size}: must be positive", loc)
        if a.kind == "runtime":
            continue  # where it lands is data: the kernel's business, as for moving windows
        if all(_static(p, info) for p in parts):
            off = int(a.offset.evaluate(env))
            size = int(a.size.evaluate(env))
            stride = int(a.stride.evaluate(env)) if a.stride is not None else 1
            last = off + (size - 1) * stride
            if off < 0 or last >= full:
                raise module.error(
                    f"window on {w.tensor} axis {axis_no} reads [{off}, {last}] but the axis has {full} elements",
                    loc)


def _check_op(module, op: Op, info: KernelInfo, env, tensor_dims) -> None:
    tys = info.operand_types.get(id(op), ())
    loc = op.loc
    for o in op.operands + ((op.fill_value,) if op.fill_value is not None else ()):
        if isinstance(o, Scalar) and not (o.expr.names() & info.index_names):
            # (a compare's bound that names a coordinate has a value per position: the run's)
            try:
                o.value(env)
            except TfxError as err:
                raise module.error(err.message, o.loc or loc) from None
    shapes = [t.shape for t in tys if t is not None] + ([op.shape] if op.shape is not None else [])
    if any(d.free_names() & info.index_names for shape in shapes for d in shape):
        # A shape that varies per position (a tail tile's min(BM, M - pm*BM)) has no single
        # value to check here; the analysis counts it per position.
        for o in op.operands:
            if isinstance(o, Window):
                _check_window(module, o, env, tensor_dims[o.tensor], info, o.loc or loc)
        return
    if op.opcode in ("zeros", "fill", "recv", "iota"):
        dims_ = _dims(op.shape, env)
        if any(d <= 0 for d in dims_):
            raise module.error(f"{op.opcode} of shape {list(dims_)}: every extent must be positive", loc)

    def dims(ty):
        return _dims(ty.shape, env)

    for o in op.operands:
        if isinstance(o, Window):
            _check_window(module, o, env, tensor_dims[o.tensor], info, o.loc or loc)
    if op.target is not None:
        _check_window(module, op.target, env, tensor_dims[op.target.tensor], info, op.target.loc or loc)
    code = op.opcode
    if code in opcat.MMA:
        a, b, c = (dims(t) for t in tys[:3])
        (m, k), (k2, n), (cm, cn) = a[-2:], b[-2:], c[-2:]
        if k != k2 or m != cm or n != cn:
            raise module.error(f"{code} shapes do not agree: a{list(a)} x b{list(b)} -> acc{list(c)} "
                               f"(expected a[M,K], b[K,N], acc[M,N])", loc)
        if len(c) == 3:
            # a batch axis of 1 (or none) broadcasts over the accumulator's batch
            for name, x in (("a", a), ("b", b)):
                if len(x) == 3 and x[0] not in (c[0], 1):
                    raise module.error(f"{code} batch sizes do not agree: {name}{list(x)} against "
                                       f"acc{list(c)} (a batch of {c[0]}, or 1 to broadcast)", loc)
    elif code in opcat.BINARY or code in opcat.COMPARE or code in opcat.SELECT:
        tiles = [t for t in tys if t is not None]
        if code in opcat.SELECT and len(tiles) >= 2:
            for t in tiles[1:]:
                if dims(t) != dims(tiles[0]):
                    raise module.error(f"select shapes differ: condition {list(dims(tiles[0]))} and "
                                       f"{list(dims(t))}; broadcast first", loc)
            tiles = []
        if len(tiles) == 2 and dims(tiles[0]) != dims(tiles[1]):
            raise module.error(f"{code} shapes differ: {list(dims(tiles[0]))} and {list(dims(tiles[1]))}; "
                               "broadcast first", loc)
    elif code == "store":
        v, tgt = dims(tys[0]), dims(tys[1])
        if v != tgt:
            raise module.error(f"store of a {list(v)} tile into a {list(tgt)} window of {op.target.tensor}", loc)
    elif code == "reshape":
        src = dims(tys[0])
        dst = _dims(op.shape, env)
        if _prod(src) != _prod(dst):
            raise module.error(f"reshape of {list(src)} ({_prod(src)} elements) to {list(dst)} ({_prod(dst)} elements)", loc)
    elif code == "broadcast":
        src = dims(tys[0])
        dst = _dims(op.shape, env)
        for s, d in zip(reversed(src), reversed(dst)):
            if s != d and s != 1:
                raise module.error(f"cannot broadcast {list(src)} to {list(dst)}", loc)


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out
