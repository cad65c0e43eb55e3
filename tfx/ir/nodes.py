"""The IR: kernels, regions with explicit captures, and ops on tiles.

Nodes compare structurally and ignore source locations, so
``parse(print(parse(x))) == parse(x)`` is a meaningful test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

from tfx.errors import SourceLocation
from tfx.ir.expr import Expr
from tfx.ir.scalar import ScalarExpr
from tfx.ir.scalar import to_text as scalar_text
from tfx.ir.types import DType, TileType

Loc = SourceLocation | None


def _loc():
    return field(default=None, compare=False, repr=False)


# ---------------------------------------------------------------- parameters

@dataclass(frozen=True)
class Domain:
    """A set of integers a parameter is declared over: listed values, or a range lo..hi
    with a step.

    A parameter's *domain* (``in ...``) is the values it may take; its *sweep*
    (``sweep ...``, or the domain when it declares none) the values ``tfx explore`` draws.
    ``geometric`` ranges multiply by ``step`` instead of adding it (``16..256 step x2``).
    A range may be huge (``1..2^40``): ``contains`` and ``size`` are arithmetic and only
    ``enumerate`` lists values, so only a sweep is ever enumerated.
    """

    values: tuple[Expr, ...] | None = None
    lo: Expr | None = None
    hi: Expr | None = None
    step: Expr | None = None
    geometric: bool = False
    loc: Loc = _loc()

    def expressions(self) -> tuple[Expr, ...]:
        """Every expression the domain is written with (values, or lo, hi and step)."""
        if self.values is not None:
            return self.values
        return tuple(x for x in (self.lo, self.hi, self.step) if x is not None)

    def free_names(self) -> set[str]:
        """Parameters and lets the domain is written with."""
        return set().union(*(e.free_names() for e in self.expressions()))

    def _bounds(self, env) -> tuple[int, int, int]:
        lo, hi = int(self.lo.evaluate(env)), int(self.hi.evaluate(env))
        step = int(self.step.evaluate(env)) if self.step is not None else (2 if self.geometric else 1)
        return lo, hi, step

    def _degenerate(self, lo: int, step: int) -> bool:
        """A step that would never move (+0, x1) or a geometric range from 0 or below: just lo."""
        return step <= (1 if self.geometric else 0) or (lo <= 0 and self.geometric)

    def size(self, env) -> int:
        """How many values ``enumerate`` gives, computed without listing them."""
        if self.values is not None:
            return len(self.values)
        lo, hi, step = self._bounds(env)
        if self._degenerate(lo, step):
            return 1
        if hi < lo:
            return 0
        if not self.geometric:
            return (hi - lo) // step + 1
        n, v = 0, lo
        while v <= hi:  # at most 64 rounds: step >= 2 from lo >= 1 passes 2**63 by then
            n, v = n + 1, v * step
        return n

    def iterate(self, env) -> Iterator[int]:
        """The values in order, one at a time (a caller may stop early)."""
        if self.values is not None:
            for v in self.values:
                yield int(v.evaluate(env))
            return
        lo, hi, step = self._bounds(env)
        if self._degenerate(lo, step):
            yield lo
            return
        v = lo
        while v <= hi:
            yield v
            v = v * step if self.geometric else v + step

    def enumerate(self, env) -> list[int]:
        """The values in order. Callers bound ``size(env)`` first: a range can be huge."""
        return list(self.iterate(env))

    def extremes(self, env) -> list[int]:
        """Values that bound every value of the domain: the listed values, or lo and hi."""
        if self.values is not None:
            return [int(v.evaluate(env)) for v in self.values]
        return [int(self.lo.evaluate(env)), int(self.hi.evaluate(env))]

    def contains(self, value: int, env) -> bool:
        """Whether ``value`` is one of the domain's values (without listing a range)."""
        if self.values is not None:
            return any(int(v.evaluate(env)) == value for v in self.values)
        lo, hi, step = self._bounds(env)
        if self._degenerate(lo, step):
            return value == lo
        if not lo <= value <= hi:
            return False
        if not self.geometric:
            return (value - lo) % step == 0
        v = lo
        while v < value:  # at most 64 rounds, as in size()
            v *= step
        return v == value

    def first_outside(self, other: "Domain", env) -> tuple[int, Expr | None] | None:
        """The first value of this domain that ``other`` does not contain, with the listed
        expression that gives it (None for a range's value), or None when every value is in
        ``other``. Never lists a huge range: an arithmetic range inside an arithmetic range
        is answered by arithmetic; otherwise this domain is walked only until its first miss,
        which comes within ``other.size + 1`` values when ``other`` is a list or geometric
        (each hit is a distinct value of ``other``), and a geometric range has at most 64."""
        if self.values is not None:
            for e in self.values:
                v = int(e.evaluate(env))
                if not other.contains(v, env):
                    return v, e
            return None
        lo, hi, step = self._bounds(env)
        arithmetic = not self.geometric and not self._degenerate(lo, step) and hi >= lo
        if arithmetic and other.values is None and not other.geometric:
            olo, ohi, ostep = other._bounds(env)
            if not other._degenerate(olo, ostep):
                last = lo + (hi - lo) // step * step
                if not (olo <= lo <= ohi and (lo - olo) % ostep == 0):
                    return lo, None
                if last > lo and step % ostep != 0:
                    return lo + step, None            # lo is in, lo + step falls between
                if last > ohi:
                    return lo + ((ohi - lo) // step + 1) * step, None
                return None
        for v in self.iterate(env):
            if not other.contains(v, env):
                return v, None
        return None

    def describe(self, env) -> str:
        """The domain as a person reads it, evaluated: ``{16, 32, 64}``, ``1..6``, ``16..256 step x2``."""
        if self.values is not None:
            shown = [str(int(v.evaluate(env))) for v in self.values[:12]]
            more = f", ... ({len(self.values)} values)" if len(self.values) > 12 else ""
            return "{" + ", ".join(shown) + more + "}"
        lo, hi, step = self._bounds(env)
        if self.geometric:
            return f"{lo}..{hi} step x{step}"
        return f"{lo}..{hi}" + (f" step {step}" if step != 1 else "")


@dataclass(frozen=True)
class Param:
    """``param NAME = DEFAULT [in DOMAIN] [sweep SWEEP]``.

    ``domain``: the values the parameter may take (``--set``, the explorer's edit dialog and
    ``tfx validate`` rows refuse others); None accepts any. ``sweep``: the values
    ``tfx explore`` draws, when they differ from the domain (a problem size valid over
    ``1..1048576`` swept over a few typical sizes); None sweeps the domain itself."""

    name: str
    default: Expr
    domain: Domain | None = None
    sweep: Domain | None = None
    loc: Loc = _loc()

    @property
    def sweep_domain(self) -> Domain | None:
        """What a sweep draws: the declared sweep, else the domain (a bare ``in {...}`` is both)."""
        return self.sweep if self.sweep is not None else self.domain


@dataclass(frozen=True)
class Let:
    name: str
    value: Expr
    loc: Loc = _loc()


@dataclass(frozen=True)
class Attr:
    name: str
    value: Expr
    loc: Loc = _loc()


KERNEL_ATTRS = {
    "threads": "threads per CTA",
    "occupancy": "CTAs per SM the schedule is tuned for (a hint the compiler may ignore)",
    "regs": "known registers per thread",
    "smem": "known dynamic shared memory per CTA, bytes",
    "static_smem": "known static shared memory per CTA, bytes",
}

ROLES = ("in", "out", "inout", "scratch")


@dataclass(frozen=True)
class Tensor:
    name: str
    type: TileType
    role: str
    loc: Loc = _loc()


# ---------------------------------------------------------------- operands

@dataclass(frozen=True)
class AxisSlice:
    """One axis of a window: ``off : size [: stride]``, ``:`` (whole axis) or ``gather(%idx)``.

    ``runtime``: an ``off : size`` whose offset reads tensor elements at run time
    (``PAGES[b, j] * PAGE : PAGE``); the size is static, where it lands is data."""

    kind: str                     # "range" | "full" | "gather" | "runtime"
    offset: Expr | None = None
    size: Expr | None = None
    stride: Expr | None = None    # None means 1
    index: str | None = None      # value name of the index tile, for gather


@dataclass(frozen=True)
class Window:
    tensor: str
    axes: tuple[AxisSlice, ...]
    loc: Loc = _loc()


@dataclass(frozen=True)
class ValueRef:
    name: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class Scalar:
    """A number operand: a literal (``0.125``, ``-inf``) or a real-valued expression of
    parameters (``1.0 / N``, ``log2e / sqrt(D)``); see tfx.ir.scalar."""

    expr: ScalarExpr
    loc: Loc = _loc()

    @property
    def text(self) -> str:
        """Canonical text, as printed."""
        return scalar_text(self.expr)

    def value(self, env):
        """The number under a binding of parameters and lets (float, or float array)."""
        return self.expr.evaluate(env)


Operand = Union[ValueRef, Window, Scalar]


# ---------------------------------------------------------------- ops

@dataclass(frozen=True)
class Op:
    """One operation. Which optional fields are set depends on ``opcode``; see docs/language.md."""

    opcode: str
    result: str | None = None
    operands: tuple[Operand, ...] = ()
    to_level: str | None = None            # load/copy destination level
    target: Window | None = None           # store destination
    dtype: DType | None = None             # cast target, zeros/fill/recv element type
    shape: tuple[Expr, ...] | None = None  # zeros/fill/recv/reshape/broadcast shape
    level: str | None = None               # zeros/fill/recv level
    axis: int | None = None                # reduce axis
    perm: tuple[int, ...] | None = None    # transpose permutation
    reduce_kind: str | None = None         # reduce: sum | max | min
    fill_value: "Scalar | None" = None     # fill value
    callee: str | None = None              # call
    bindings: tuple[tuple[str, Expr], ...] = ()  # call parameter bindings
    peer: str | None = None                # collectives: mesh level and offset, as text
    start: Expr | None = None              # iota: the value at index 0 of its axis (default 0)
    loc: Loc = _loc()

    def value_reads(self) -> list[str]:
        """The names of the values this op reads (its ``ValueRef`` operands), in operand order."""
        return [o.name for o in self.operands if isinstance(o, ValueRef)]


# ---------------------------------------------------------------- regions

@dataclass(frozen=True)
class Capture:
    """A name a region takes from outside; ``move_to`` moves the value once per execution of the region."""

    name: str
    move_to: str | None = None
    loc: Loc = _loc()


@dataclass(frozen=True)
class MeshRegion:
    """A grid of executing positions at one level of the hardware hierarchy."""

    level: str
    extents: tuple[Expr, ...]
    coords: tuple[str, ...]
    captures: tuple[Capture, ...]
    body: tuple["Stmt", ...]
    swizzle: Expr | None = None   # group-M style raster order (affects L2 reuse, not counts)
    loc: Loc = _loc()
    end_loc: Loc = _loc()


@dataclass(frozen=True)
class TripCount:
    """How many times a loop runs.

    ``static``: from start/stop/step. ``runtime``: known only at run time, within
    ``lo..hi``, with an optional expected value used for predictions.
    """

    kind: str                 # "static" | "runtime"
    lo: Expr | None = None
    hi: Expr | None = None
    expect: Expr | None = None


@dataclass(frozen=True)
class LoopRegion:
    var: str
    start: Expr
    stop: Expr | None             # None for runtime trip counts
    step: Expr
    trip: TripCount
    bound: Expr | None            # stated upper bound on the trip count when stop varies per position
    stages: Expr | None
    carry: tuple[str, ...]
    captures: tuple[Capture, ...]
    body: tuple["Stmt", ...]
    loc: Loc = _loc()
    end_loc: Loc = _loc()


@dataclass(frozen=True)
class Composite:
    """Ops dispatched to the engine as one command; the engine's scheduler streams the inner tiles.

    Not an isolation boundary: it groups ops of the enclosing scope.
    """

    name: str
    body: tuple["Stmt", ...]
    loc: Loc = _loc()


Stmt = Union[Op, MeshRegion, LoopRegion, Composite]


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[Param, ...]
    lets: tuple[Let, ...]
    attrs: tuple[Attr, ...]
    tensors: tuple[Tensor, ...]
    body: tuple[Stmt, ...]
    doc: str = ""
    loc: Loc = _loc()

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def tensor(self, name: str) -> Tensor | None:
        return next((t for t in self.tensors if t.name == name), None)

    def attr(self, name: str) -> Attr | None:
        return next((a for a in self.attrs if a.name == name), None)

    def shape_parameters(self) -> set[str]:
        """Parameters that size the problem: named, directly or through ``let``s, in the
        extents of a tensor that is not scratch (``A : bf16[M, K]`` makes M and K shapes;
        BM is a tile parameter)."""
        lets = {l.name: l.value for l in self.lets}
        seen: set[str] = set()
        todo = [n for t in self.tensors if t.role != "scratch" for d in t.type.shape
                for n in d.free_names()]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in lets:
                todo.extend(lets[n].free_names())
        return seen & {p.name for p in self.params}


@dataclass(frozen=True)
class Module:
    kernels: tuple[Kernel, ...]
    filename: str = field(default="<string>", compare=False)
    doc: str = ""
    # Per-kernel facts the verifier derives (KernelInfo, by kernel name); not part of equality.
    info: dict = field(default_factory=dict, compare=False, repr=False)
    source_lines: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def error(self, message: str, loc, notes=()):
        """A TfxError at ``loc`` quoting the source line."""
        from tfx.errors import TfxError
        line = None
        if loc is not None and 0 < loc.line <= len(self.source_lines):
            line = self.source_lines[loc.line - 1]
        return TfxError(message, loc or self.filename, line, tuple(notes))

    # The verifier's facts (KernelInfo) are keyed by id(op), which a copy made by pickle (a worker
    # process's Analysis coming back) or deepcopy does not keep: they travel keyed by each op's
    # place in its kernel's walk and are keyed by the new ops' ids on the way in, so that such a
    # copy binds and analyzes again.
    def __getstate__(self):
        state = {name: getattr(self, name) for name in ("kernels", "filename", "doc", "source_lines")}
        state["info"] = {name: _rekey_info(info, self._ops_of(name), by_place=True)
                         for name, info in self.info.items()}
        return state

    def __setstate__(self, state):
        info = state.pop("info")
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "info", {name: _rekey_info(i, self._ops_of(name), by_place=False)
                                          for name, i in info.items()})

    def _ops_of(self, name: str) -> list:
        return next((list(walk_ops(k.body)) for k in self.kernels if k.name == name), [])

    def kernel(self, name: str | None = None) -> Kernel:
        from tfx.errors import TfxError
        if name is None:
            return self.kernels[-1] if len(self.kernels) == 1 else self._main()
        for k in self.kernels:
            if k.name == name:
                return k
        names = ", ".join(k.name for k in self.kernels)
        raise TfxError(f"no kernel named {name!r} (this file has: {names})", where=self.filename)

    def _main(self) -> Kernel:
        """With several kernels, the one that no other kernel calls (the last such)."""
        called = {op.callee for k in self.kernels for op in walk_ops(k.body) if op.callee}
        roots = [k for k in self.kernels if k.name not in called]
        return (roots or list(self.kernels))[-1]


def walk(stmts) -> Iterator[Stmt]:
    """Every statement, depth first, regions before their bodies."""
    for s in stmts:
        yield s
        if isinstance(s, (MeshRegion, LoopRegion, Composite)):
            yield from walk(s.body)


def walk_ops(stmts) -> Iterator[Op]:
    for s in walk(stmts):
        if isinstance(s, Op):
            yield s


def _rekey_info(info, ops: list, by_place: bool):
    """A KernelInfo with its id(op)-keyed tables keyed by place in ``ops`` (``by_place``) or back
    by the ids of ``ops``; an entry whose op is not in ``ops`` cannot travel and is left out."""
    from dataclasses import replace
    if not hasattr(info, "operand_types"):
        return info
    if by_place:
        key = {id(op): i for i, op in enumerate(ops)}
    else:
        key = {i: id(op) for i, op in enumerate(ops)}
    return replace(info, result_types={key[k]: v for k, v in info.result_types.items() if k in key},
                   operand_types={key[k]: v for k, v in info.operand_types.items() if k in key})
