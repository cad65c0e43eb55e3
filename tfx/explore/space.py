"""The design space: swept parameter values x knob combinations, its flat index and its chunks.

A configuration is identified by one flat index into the cartesian product, knob
combinations outermost, then the swept parameters in the kernel's declaration
order (the last parameter varies fastest)::

    index = knob_index * n_param_configs + ravel_multi_index(param value indices)

Chunks are sub-grids of that product (a slice of one parameter's values, every
value of the parameters after it, one value of those before it), so each chunk
covers a contiguous range of flat indices and can be evaluated with broadcast
arrays (``tfx.explore.evaluate``): an expression of BM and BN alone costs
|BM| x |BN| operations, not one per configuration.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from tfx.errors import TfxError, argument_error
from tfx.hw.units import format_count

INT64_MAX = 2 ** 63 - 1
# Most values one swept parameter may take (a --sweep range or a declared domain).
MAX_SWEEP_VALUES = 10_000_000
# Most configurations one exploration evaluates: about 40 s at the 500,000 configurations/s
# bench/explore_speed.py measures on one core; a larger space is refused before any work.
MAX_CONFIGS = 20_000_000
DEFAULT_CHUNK = 1 << 18   # 262,144 configurations per chunk bounds memory (~tens of MB)

_RANGE = re.compile(r"^\s*(-?[0-9_xXa-fA-F]+)\s*\.\.\s*(-?[0-9_xXa-fA-F]+)\s*(?::\s*([x*]?)\s*([0-9_]+))?\s*$")


def _int(text: str, where: str) -> int:
    from tfx.literals import parse_int
    try:
        return parse_int(text)
    except ValueError as exc:
        raise argument_error(where, str(exc), found=text.strip()) from None


def parse_values(text: str, where: str = "--sweep") -> list[int]:
    """``"64,128,256"``, ``"2..6"``, ``"2..6:2"``, ``"16..256:x2"`` (inclusive; ``x`` = geometric),
    or several of those separated by commas. Duplicates are dropped, order kept."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise argument_error(where, "expected V1,V2,... without an empty value", found=text)
        m = _RANGE.match(part)
        if m and ".." in part:
            lo, hi = _int(m.group(1), where), _int(m.group(2), where)
            geometric = bool(m.group(3))
            step = _int(m.group(4), where) if m.group(4) else (2 if geometric else 1)
            if hi < lo:
                raise argument_error(where, f"range {part!r} is empty (end below start)")
            if (geometric and (step < 2 or lo <= 0)) or (not geometric and step < 1):
                raise argument_error(where, f"range {part!r} needs a step >= 1 (or a factor >= 2 from a "
                                            "positive start)")
            v = lo
            while v <= hi:
                out.append(v)
                v = v * step if geometric else v + step
                if len(out) > MAX_SWEEP_VALUES:
                    raise argument_error(where, f"range {part!r} has too many values (at most "
                                                f"{format_count(MAX_SWEEP_VALUES)})")
        elif ".." in part:
            raise argument_error(where, "expected LO..HI or LO..HI:STEP or LO..HI:xFACTOR", found=part)
        else:
            out.append(_int(part, where))
    seen: set[int] = set()
    return [v for v in out if not (v in seen or seen.add(v))]


def parse_sweeps(items: list[str] | None, flag: str = "--sweep") -> dict[str, list[int] | None]:
    """``["BM=64,128", "STAGES=2..6", "NUM_SMS"]`` -> ``{"BM": [64, 128], "STAGES": [2, 3, 4, 5, 6],
    "NUM_SMS": None}``: a bare name is its declared sweep (``build_space`` evaluates it on the profile)."""
    out: dict[str, list[int] | None] = {}
    for item in items or []:
        name, equals, values = (s.strip() for s in item.partition("="))
        if not name or (equals and not values) or not (equals or name.isidentifier()):
            raise argument_error(flag, "expected NAME=VALUES, or NAME for its declared sweep", found=item)
        if name in out:
            raise argument_error(flag, "given twice", name=name)
        out[name] = parse_values(values, f"{flag} {name}") if equals else None
    return out


def parse_knob_sweeps(items: list[str] | None, flag: str = "--knob-sweep") -> dict[str, list[str]]:
    """``["hbm.bandwidth=x0.5,x1,x2"]`` -> ``{"hbm.bandwidth": ["x0.5", "x1", "x2"]}``."""
    out: dict[str, list[str]] = {}
    for item in items or []:
        name, equals, values = (s.strip() for s in item.partition("="))
        vals = [v.strip() for v in values.split(",")]
        if not (name and equals and values) or any(not v for v in vals):
            raise argument_error(flag, "expected PATH=V1,V2,...", found=item)
        if name in out:
            raise argument_error(flag, "given twice", name=name)
        out[name] = list(dict.fromkeys(vals))
    return out


@dataclass(frozen=True)
class Chunk:
    """One sub-grid: knob combination, fixed value indices of the leading params, a slice of one."""

    knob: int
    lead: tuple[int, ...]        # value index of each parameter before ``axis``
    axis: int                    # the sliced parameter (== len(lead))
    lo: int
    hi: int
    start: int                   # first flat index
    size: int


@dataclass
class Space:
    names: list[str]                          # swept parameters, declaration order
    values: list[np.ndarray]                  # their values (int64)
    knob_paths: list[str] = field(default_factory=list)     # knob paths as the user wrote them
    knob_canonical: list[str] = field(default_factory=list)
    knob_values: list[list[str]] = field(default_factory=list)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.values)

    @property
    def n_params(self) -> int:
        return math.prod(self.sizes)

    @property
    def knob_combos(self) -> list[dict[str, str]]:
        """Knob combinations in index order (the last knob varies fastest)."""
        return [dict(zip(self.knob_paths, combo)) for combo in itertools.product(*self.knob_values)]

    @property
    def n_knobs(self) -> int:
        return math.prod(len(v) for v in self.knob_values)

    @property
    def size(self) -> int:
        return self.n_knobs * self.n_params

    def decode(self, index: int) -> tuple[dict[str, int], int]:
        """Swept parameter values and the knob-combination index of flat ``index``."""
        index = int(index)
        if not 0 <= index < self.size:
            raise IndexError(index)
        knob, rest = divmod(index, self.n_params)
        params = {}
        if self.names:
            idx = np.unravel_index(rest, self.sizes)
            params = {n: int(v[i]) for n, v, i in zip(self.names, self.values, idx)}
        return params, knob

    def decode_many(self, indices: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        indices = np.asarray(indices, dtype=np.int64)
        knob, rest = np.divmod(indices, self.n_params)
        params = {}
        if self.names:
            idx = np.unravel_index(rest, self.sizes)
            params = {n: v[i] for n, v, i in zip(self.names, self.values, idx)}
        return params, knob

    def chunks(self, chunk_size: int = DEFAULT_CHUNK) -> list[Chunk]:
        """Sub-grids of at most ``chunk_size`` configurations (at least one value of one param)."""
        sizes = self.sizes
        d = len(sizes)
        inner = [1] * (d + 1)
        for i in range(d - 1, -1, -1):
            inner[i] = inner[i + 1] * sizes[i]
        j = next(i for i in range(d + 1) if inner[i] <= max(chunk_size, 1))
        out: list[Chunk] = []
        for knob in range(self.n_knobs):
            base = knob * self.n_params
            if j == 0:   # the whole parameter grid in one chunk
                out.append(Chunk(knob, (), 0, 0, sizes[0] if d else 1, base, inner[0]))
                continue
            axis = j - 1
            step = max(1, chunk_size // inner[j])
            for lead in itertools.product(*(range(s) for s in sizes[:axis])):
                lead_flat = int(np.ravel_multi_index(lead, sizes[:axis])) if axis else 0
                for lo in range(0, sizes[axis], step):
                    hi = min(lo + step, sizes[axis])
                    start = base + (lead_flat * sizes[axis] + lo) * inner[j]
                    out.append(Chunk(knob, tuple(lead), axis, lo, hi, start, (hi - lo) * inner[j]))
        return out

    def grid(self, chunk: Chunk) -> tuple[dict[str, np.ndarray], tuple[int, ...]]:
        """Broadcastable int64 arrays of one chunk's swept values, and the chunk's grid shape."""
        d = len(self.names)
        dims = max(d, 1)
        out = {}
        shape = []
        for i, (name, vals) in enumerate(zip(self.names, self.values)):
            if i < chunk.axis:
                v = vals[chunk.lead[i]:chunk.lead[i] + 1]
            elif i == chunk.axis:
                v = vals[chunk.lo:chunk.hi]
            else:
                v = vals
            s = [1] * dims
            s[i] = len(v)
            out[name] = np.ascontiguousarray(v, dtype=np.int64).reshape(s)
            shape.append(len(v))
        return out, tuple(shape) or (1,)

    def to_json(self) -> dict[str, Any]:
        return {"params": {n: [int(x) for x in v] for n, v in zip(self.names, self.values)},
                "knobs": {p: list(v) for p, v in zip(self.knob_paths, self.knob_values)},
                "configs": self.size}


def declared_sweeps(kernel, fixed: Mapping[str, int], profile, names=None) -> dict[str, list[int]]:
    """Parameter -> the values of its declared sweep (its ``sweep``, else its domain), evaluated
    under its defaults and ``fixed`` with ``profile``'s counts (a sweep may name them:
    ``{units(sm) / 2, units(sm)}``), for ``names`` (None: every parameter that declares one except
    ``fixed`` and those the machine sizes, ``tfx explore``'s default space). A sweep that cannot
    be drawn from is refused at its declaration."""
    from tfx.ir.bind import profile_dependent, profile_units, sweep_problem

    env: dict[str, Any] = profile_units(None, kernel, profile)   # the machine's counts (units(sm))
    for p in kernel.params:
        env[p.name] = fixed[p.name] if p.name in fixed else p.default.evaluate(env)
    for let in kernel.lets:   # a domain may name any parameter or let (HQ in HKV..8192 step HKV)
        env[let.name] = let.value.evaluate(env)
    if names is None:
        # a parameter the machine sizes (NUM_SMS = units(sm)) follows the profile and its knobs,
        # as the launch on that machine would: swept only when asked for by name
        machine = profile_dependent(kernel, fixed)
        wanted = {p.name for p in kernel.params if p.name not in fixed and p.name not in machine}
    else:
        wanted = set(names)
    chosen: dict[str, list[int]] = {}
    for p in kernel.params:
        sweep = p.sweep_domain
        if sweep is not None and p.name in wanted:
            problem = sweep_problem(p, env)
            if problem is not None:
                message, loc, notes = problem
                raise TfxError(message, where=loc, notes=notes)
            chosen[p.name] = sweep.enumerate(env)
    return chosen


def _sweeps_count_the_machine(kernel, fixed: Mapping[str, int], names=None) -> bool:
    """Whether the declared sweep of any of ``names`` (None: every parameter not ``fixed``) names
    a count of the machine (``units(sm)``), directly or through a parameter or let that does: a
    knob on the hierarchy changes its values."""
    from tfx.ir.bind import machine_names, names_machine
    machine = machine_names(kernel, fixed)
    return any(p.sweep_domain is not None and p.name not in fixed and (names is None or p.name in names)
               and names_machine(p.sweep_domain.free_names(), machine) for p in kernel.params)


def build_space(kernel, sweeps: Mapping[str, list[int] | None] | None, fixed: Mapping[str, int],
                knob_sweeps: Mapping[str, list[str]] | None, profile) -> Space:
    """The space of ``sweeps`` (None: every parameter's declared sweep, or its domain when it
    declares none, except ``fixed`` and those the machine sizes; a parameter given None: its
    declared sweep) and ``knob_sweeps``."""
    from tfx.hw.knobs import resolve_knob_path

    knob_paths, knob_canonical, knob_values = [], [], []
    for path, vals in (knob_sweeps or {}).items():
        canonical = resolve_knob_path(profile, path.strip(), flag="--knob-sweep")
        if canonical in knob_canonical:
            raise argument_error("--knob-sweep", f"swept twice (as {canonical})", name=path)
        if not vals:
            raise argument_error("--knob-sweep", "no values", name=path)
        knob_paths.append(path.strip())
        knob_canonical.append(canonical)
        knob_values.append([str(v) for v in vals])

    def declared(names=None) -> dict[str, list[int]]:
        # a declared sweep that names the machine's counts ({units(sm) / 2, units(sm)}) is drawn
        # on every knob point's machine: the space holds each point's values (a cartesian space:
        # their union, each value priced at every point, as a swept value is)
        if not knob_paths or not _sweeps_count_the_machine(kernel, fixed, names):
            return declared_sweeps(kernel, fixed, profile, names=names)
        united: dict[str, list[int]] = {}
        ascending: dict[str, bool] = {}
        for combo in itertools.product(*knob_values):
            point = profile.with_knobs(dict(zip(knob_paths, combo)), "--knob-sweep")
            for name, vals in declared_sweeps(kernel, fixed, point, names=names).items():
                united[name] = list(dict.fromkeys(united.get(name, []) + [int(v) for v in vals]))
                ascending[name] = ascending.get(name, True) and all(a < b for a, b in zip(vals, vals[1:]))
        # ascending at every point (33, 66, 99, 132 and 16, 33, 49, 66): ascending together
        return {n: sorted(v) if ascending[n] else v for n, v in united.items()}

    names = [p.name for p in kernel.params]
    if sweeps is None:
        chosen = declared()
    else:
        chosen = {}
        bare = [n for n, v in sweeps.items() if v is None and n in names and n not in fixed]
        declared_values = declared(bare) if bare else {}
        for name, vals in sweeps.items():
            if name not in names:
                import difflib
                close = difflib.get_close_matches(name, names, n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                raise TfxError(f"kernel {kernel.name} has no parameter {name!r} "
                               f"(parameters: {', '.join(names)}){hint}", where=f"--sweep {name}")
            if name in fixed:
                raise TfxError(f"{name} is both swept and fixed with --set", where=f"--sweep {name}")
            if vals is None:        # a bare name: its declared sweep, on this profile's counts
                if name not in declared_values:
                    raise TfxError(f"{name} declares no sweep or domain: give its values ({name}=64,128 "
                                   "or 2..6)", where=f"--sweep {name}")
                vals = declared_values[name]
            vals = [int(v) for v in vals]
            if not vals:
                raise TfxError(f"no values to sweep for {name}", where=f"--sweep {name}")
            chosen[name] = list(dict.fromkeys(vals))
    order = [n for n in names if n in chosen]
    for n in order:
        if any(not -INT64_MAX <= v <= INT64_MAX for v in chosen[n]):
            raise argument_error("--sweep", "a value does not fit a 64-bit integer", name=n)
    space = Space(order, [np.asarray(chosen[n], dtype=np.int64) for n in order])
    space.knob_paths.extend(knob_paths)
    space.knob_canonical.extend(knob_canonical)
    space.knob_values.extend(knob_values)
    if space.size > MAX_CONFIGS:
        raise TfxError(f"the space has {format_count(space.size)} configurations (at most {format_count(MAX_CONFIGS)}, "
                       f"about {MAX_CONFIGS // 500_000} s at 500,000 configurations/s); narrow it "
                       "with --set, --sweep or fewer --knob-sweep values")
    return space
