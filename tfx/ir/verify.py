"""Name resolution, region isolation and type inference for a parsed module.

Scoping rules (docs/language.md, "Scopes and captures"):
- parameters and ``let``s are compile-time constants visible everywhere;
- a mesh or loop region sees only what its ``capture(...)`` list names, its own
  coordinates or induction variable, and what its body defines;
- ``carry(%v)`` makes ``%v`` visible and re-assignable in a loop; after the loop
  ``%v`` names the final value;
- ``composite`` blocks are transparent (a dispatch grouping, not a scope).

Using an outside value without capturing it is refused with
``region is not isolated``, naming the value, the use and the definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfx.errors import SourceLocation, TfxError
from tfx.ir import ops as opcat
from tfx.ir.expr import BinOp, Call, Const, Expr, Name, Neg, reads_in, substitute, to_text, units_level
from tfx.ir.nodes import (Composite, Kernel, LoopRegion, MeshRegion, Module, Op, Scalar,
                          ValueRef, Window)
from tfx.ir.scalar import CONSTANTS as SCALAR_CONSTANTS
from tfx.ir.types import INDEX_DTYPES, MMA_ACCUMULATORS, DType, TileType

STORAGE_LEVELS = {"gmem", "l2", "smem", "rmem", "hbm", "tcm"}
MESH_LEVELS = {"cta", "cluster", "warpgroup", "warp", "thread", "sip", "cube", "pe"}


@dataclass
class KernelInfo:
    """What the verifier learned about one kernel, keyed by ``id(op)``."""

    result_types: dict[int, TileType] = field(default_factory=dict)
    operand_types: dict[int, tuple] = field(default_factory=dict)   # TileType or None (scalars)
    index_names: set[str] = field(default_factory=set)              # coordinates and induction vars
    # Every divisor (the right side of / and %, cdiv's second argument) with the node that
    # divides: check_shapes evaluates those free of indices under the bound parameters.
    divisors: list = field(default_factory=list)
    # The hardware profile's hierarchy levels the kernel counts with units(LEVEL), each at its
    # first use: tfx.ir.bind takes their counts from the profile it binds against.
    units: dict[str, SourceLocation | None] = field(default_factory=dict)


@dataclass
class _Symbol:
    kind: str                  # "tensor" | "value" | "index"
    type: TileType | None
    loc: SourceLocation | None
    reassignable: bool = False


class _Scope:
    def __init__(self, parent: "_Scope | None", region: str, region_loc, isolated: bool):
        self.parent = parent
        self.names: dict[str, _Symbol] = {}
        self.region = region
        self.region_loc = region_loc
        self.isolated = isolated

    def lookup(self, name: str):
        """(symbol, crossed_isolation_boundary_scope) or (None, None)."""
        scope, barrier = self, None
        while scope is not None:
            if name in scope.names:
                return scope.names[name], barrier
            if scope.isolated and barrier is None:
                barrier = scope
            scope = scope.parent
        return None, None


class Verifier:
    def __init__(self, module: Module, lines: list[str], busy: set | None = None):
        self.module = module
        self.lines = lines
        self.busy = busy if busy is not None else set()   # kernels being verified (call cycles)

    def error(self, message: str, loc: SourceLocation | None, notes=()) -> TfxError:
        line = None
        if loc is not None and 0 < loc.line <= len(self.lines):
            line = self.lines[loc.line - 1]
        return TfxError(message, loc or self.module.filename, line, tuple(notes))

    # ------------------------------------------------------------ kernel level
    def run(self) -> None:
        seen = {}
        for k in self.module.kernels:
            if k.name in seen:
                raise self.error(f"duplicate kernel name {k.name!r} (first defined at line {seen[k.name].line})", k.loc)
            seen[k.name] = k.loc
        for k in self.module.kernels:
            if k.name not in self.module.info:   # a caller may have verified its callee already
                self.module.info[k.name] = self.verify_kernel(k)

    def verify_kernel(self, k: Kernel) -> KernelInfo:
        self.busy.add(k.name)
        self.info = KernelInfo()
        self.kernel = k
        for i, s in enumerate(k.body):
            if isinstance(s, Op) and s.opcode == "return" and i != len(k.body) - 1:
                raise self.error("'return' must be the kernel's last statement", s.loc)
        consts: dict[str, SourceLocation | None] = {}
        for item in (*k.params, *k.lets):
            if item.name in consts:
                raise self.error(f"duplicate name {item.name!r} (first defined at line {consts[item.name].line})", item.loc)
            consts[item.name] = item.loc
        self.consts = set(consts)
        # Parameters' defaults may use earlier parameters; lets may use parameters and earlier lets.
        visible: set[str] = set()
        for p in k.params:
            self.check_order(p.default, visible, f"the default of {p.name}", "parameter defaults may use only earlier parameters")
            self.check_expr(p.default, visible, f"the default of {p.name}", units_ok=True)
            visible.add(p.name)
        for p in k.params:
            for what, d in (("domain", p.domain), ("sweep", p.sweep)):
                for e in d.expressions() if d is not None else ():
                    # a sweep of the machine's shares ({units(sm) / 2, units(sm)}) is bound with it
                    self.check_expr(e, visible, f"the {what} of {p.name}", units_ok=True)
        for l in k.lets:
            self.check_order(l.value, visible, f"let {l.name}", "a let may use parameters and earlier lets")
            self.check_expr(l.value, visible, f"let {l.name}", units_ok=True)
            visible.add(l.name)
        for a in k.attrs:
            self.check_expr(a.value, visible, f"attr {a.name}")
        root = _Scope(None, f"kernel {k.name}", k.loc, isolated=False)
        for t in k.tensors:
            if t.name in consts or t.name in root.names:
                first = consts[t.name] if t.name in consts else root.names[t.name].loc
                line = f" (first defined at line {first.line})" if first is not None else ""
                raise self.error(f"duplicate name {t.name!r}{line}", t.loc)
            if t.type.level not in STORAGE_LEVELS:
                raise self.error(f"unknown storage level {t.type.level!r}, expected one of: {', '.join(sorted(STORAGE_LEVELS))}", t.loc)
            for d in t.type.shape:
                self.check_expr(d, visible, f"the shape of {t.name}")
            root.names[t.name] = _Symbol("tensor", t.type, t.loc)
        self.block(k.body, root)
        return self.info

    # ------------------------------------------------------------ expressions
    def check_expr(self, e: Expr, allowed: set[str], what: str, scope: _Scope | None = None,
                   use_loc=None, reads_ok: bool = False, units_ok: bool = False) -> None:
        for r in reads_in(e):
            if not reads_ok:
                raise self.error(f"{to_text(r)} reads a tensor at run time, which only a window's offset may do "
                                 f"(found in {what})", r.loc or use_loc)
            self.check_read(r, scope, what, use_loc)
        for node, divisor in _divisions(e):
            if reads_in(divisor):
                continue  # a divisor read at run time: data, checked by the run
            if not divisor.free_names():
                if divisor.evaluate({}) == 0:
                    raise self.error(f"division by zero in {what}", node.loc or use_loc)
            else:
                self.info.divisors.append((node, divisor, what, use_loc))
        for name in sorted(e.free_names()):
            if name in allowed or name in self.consts:
                continue
            if units_level(name) is not None:
                loc = _expr_loc(e, name) or use_loc
                if not units_ok:
                    # bound once, before anything else is evaluated: what the analysis reads after
                    # binding (attrs, shapes, the body) names the parameter or let
                    raise self.error(f"{name} is a count of the hardware profile, named only in a "
                                     f"parameter's default, domain or sweep, or a let: bind it to a let "
                                     f"(let N = {name}) and use that in {what}", loc)
                self.info.units.setdefault(units_level(name), loc)
                continue
            if scope is not None:
                sym, barrier = scope.lookup(name)
                if sym is not None and sym.kind == "index":
                    if barrier is not None:
                        raise self.isolation_error(name, sym, barrier, _expr_loc(e, name) or use_loc)
                    continue
                if sym is not None:
                    raise self.error(f"{name!r} is a {sym.kind}, not an integer, in {what}", _expr_loc(e, name) or use_loc)
            raise self.error(f"unknown name {name!r} in {what}: expected a parameter, let, mesh coordinate or loop variable",
                             _expr_loc(e, name) or use_loc)

    def check_read(self, r, scope, what: str, use_loc) -> None:
        """A runtime read names a visible integer tensor with one index per axis."""
        sym, barrier = scope.lookup(r.tensor) if scope is not None else (None, None)
        loc = r.loc or use_loc
        if sym is None:
            raise self.error(f"unknown tensor {r.tensor!r} read in {what}", loc)
        if barrier is not None:
            raise self.isolation_error(r.tensor, sym, barrier, loc)
        if sym.kind != "tensor":
            raise self.error(f"{r.tensor} is a {sym.kind}; a runtime window start reads a tensor element", loc)
        if sym.type.dtype not in INDEX_DTYPES:
            raise self.error(f"a window start read from {r.tensor} needs an i64, int32 or int8 tensor, "
                             f"found {sym.type.dtype}", loc)
        if len(r.indices) != len(sym.type.shape):
            raise self.error(f"{to_text(r)} has {len(r.indices)} indices, {r.tensor} has {len(sym.type.shape)} axes", loc)
        for i in r.indices:
            self.check_expr(i, set(), f"the read of {r.tensor}", scope, use_loc)

    def check_order(self, e: Expr, visible: set[str], what: str, rule: str) -> None:
        """Refuse a use of a parameter or let before its definition (binding evaluates in order)."""
        for name in sorted(e.free_names()):
            if name in self.consts and name not in visible:
                raise self.error(f"{name} is used in {what} before it is defined: {rule}", _expr_loc(e, name))

    def isolation_error(self, name, sym: _Symbol, barrier: _Scope, use_loc) -> TfxError:
        defined = f"defined at line {sym.loc.line}" if sym.loc else "defined outside"
        region_line = f"line {barrier.region_loc.line}" if barrier.region_loc else "?"
        return self.error(
            f"region is not isolated: {name} is used here but the {barrier.region} at {region_line} does not capture it ({defined})",
            use_loc, notes=(f"add {name} to the capture(...) list of the {barrier.region} at {region_line}",))

    # ------------------------------------------------------------ statements
    def block(self, stmts, scope: _Scope) -> None:
        for s in stmts:
            if isinstance(s, Op):
                self.op(s, scope)
            elif isinstance(s, MeshRegion):
                self.mesh(s, scope)
            elif isinstance(s, LoopRegion):
                self.loop(s, scope)
            elif isinstance(s, Composite):
                self.block(s.body, scope)

    def captures(self, region, inner: _Scope, outer: _Scope) -> None:
        seen = set()
        for c in region.captures:
            if c.name in seen:
                raise self.error(f"{c.name} is captured twice", c.loc)
            seen.add(c.name)
            if c.name in self.consts:
                raise self.error(f"{c.name} is a parameter: parameters are visible everywhere and are not captured", c.loc)
            sym, barrier = outer.lookup(c.name)
            if sym is None:
                raise self.error(f"captured name {c.name} is not defined outside this region", c.loc)
            if barrier is not None:
                raise self.isolation_error(c.name, sym, barrier, c.loc)
            ty = sym.type
            if c.move_to is not None:
                if sym.kind != "value":
                    raise self.error(f"only values can be moved by a capture; {c.name} is a {sym.kind}", c.loc)
                if c.move_to not in STORAGE_LEVELS:
                    raise self.error(f"unknown storage level {c.move_to!r}", c.loc)
                ty = ty.with_level(c.move_to)
            inner.names[c.name] = _Symbol(sym.kind, ty, sym.loc)

    def mesh(self, m: MeshRegion, scope: _Scope) -> None:
        if m.level not in MESH_LEVELS:
            raise self.error(f"unknown mesh level {m.level!r}, expected one of: {', '.join(sorted(MESH_LEVELS))}", m.loc)
        for e in m.extents:
            self.check_expr(e, set(), f"the extent of mesh {m.level}", scope, m.loc)
        if m.swizzle is not None:
            self.check_expr(m.swizzle, set(), "swizzle", scope, m.loc)
        inner = _Scope(scope, f"mesh {m.level}", m.loc, isolated=True)
        self.captures(m, inner, scope)
        for c in m.coords:
            if c in self.consts or c in inner.names:
                raise self.error(f"duplicate name {c!r}: mesh coordinate shadows a visible name", m.loc)
            inner.names[c] = _Symbol("index", None, m.loc)
            self.info.index_names.add(c)
        self.block(m.body, inner)

    def loop(self, lp: LoopRegion, scope: _Scope) -> None:
        for what, e in (("start", lp.start), ("stop", lp.stop), ("step", lp.step), ("bound", lp.bound),
                        ("stages", lp.stages), ("trip lo", lp.trip.lo), ("trip hi", lp.trip.hi),
                        ("expect", lp.trip.expect)):
            if e is not None:
                self.check_expr(e, set(), f"the {what} of loop {lp.var}", scope, lp.loc)
        # A stop that varies per executing position needs a stated bound.
        if lp.stop is not None and lp.bound is None:
            varying = [n for n in lp.stop.free_names() | lp.start.free_names() if n not in self.consts]
            if varying:
                raise self.error(
                    f"loop {lp.var}'s trip count depends on {', '.join(sorted(varying))}: state an upper bound with 'bound EXPR'",
                    lp.loc)
        inner = _Scope(scope, f"loop {lp.var}", lp.loc, isolated=True)
        self.captures(lp, inner, scope)
        for v in lp.carry:
            sym, barrier = scope.lookup(v)
            if sym is None or sym.kind != "value":
                raise self.error(f"carried value {v} is not defined before the loop", lp.loc)
            if barrier is not None:
                raise self.isolation_error(v, sym, barrier, lp.loc)
            if v in inner.names:
                raise self.error(f"{v} is both carried and captured; carry(...) already makes it visible", lp.loc)
            inner.names[v] = _Symbol("value", sym.type, sym.loc, reassignable=True)
        if lp.var in self.consts or lp.var in inner.names:
            raise self.error(f"duplicate name {lp.var!r}: the induction variable shadows a visible name", lp.loc)
        inner.names[lp.var] = _Symbol("index", None, lp.loc)
        self.info.index_names.add(lp.var)
        self.block(lp.body, inner)

    def call_result_type(self, op: Op, callee: Kernel, loc) -> TileType:
        """The type of ``%r = call K(...)``: K's returned value, its shape in the caller's terms
        (K's parameters replaced by the call's bindings or K's defaults, its lets by their values)."""
        ret = callee.body[-1] if callee.body else None
        if not (isinstance(ret, Op) and ret.opcode == "return"):
            raise self.error(f"{callee.name} returns no value (its last statement is not 'return %v'); "
                             f"write 'call {callee.name}(...)' without a result", loc)
        if callee.name not in self.module.info:
            if callee.name in self.busy:
                raise self.error(f"call cycle through kernel {callee.name}", loc)
            self.module.info[callee.name] = Verifier(self.module, self.lines, self.busy).verify_kernel(callee)
        ret_type = self.module.info[callee.name].operand_types[id(ret)][0]
        bound = dict(op.bindings)
        mapping: dict[str, Expr] = {}
        for p in callee.params:
            mapping[p.name] = bound[p.name] if p.name in bound else substitute(p.default, mapping)
        for let in callee.lets:
            mapping[let.name] = substitute(let.value, mapping)
        return TileType(ret_type.dtype, tuple(substitute(d, mapping) for d in ret_type.shape), ret_type.level)

    # ------------------------------------------------------------ ops
    def scalar(self, s: Scalar, scope: _Scope, loc, per_position: bool = False) -> None:
        """A scalar operand is compile-time: it names parameters, lets and constants. A
        compare's (``per_position``) may also name the mesh coordinates and loop variables in
        scope, captured as any index use is: the bound a mask compares against, per position
        (``lt %k_pos, CTX - p * PE_CTX``). A coordinate shadows a constant of its name."""
        for name in sorted(s.expr.names()):
            if name in self.consts:
                continue
            sym, barrier = scope.lookup(name)
            where = _scalar_loc(s.expr, name) or s.loc or loc
            if sym is not None and sym.kind == "index":
                if not per_position:
                    raise self.error(f"{name} is a mesh coordinate or loop variable: scalar operands are "
                                     "compile-time numbers of parameters, lets and constants (a "
                                     "compare's may name coordinates)", where)
                if barrier is not None:
                    raise self.isolation_error(name, sym, barrier, where)
                continue
            if name in SCALAR_CONSTANTS:
                continue
            if sym is not None and sym.kind == "tensor":
                raise self.error(f"{name} is a tensor: an operand reads a window of it, {name}[...]", where)
            raise self.error(f"unknown name {name!r} in a scalar operand: expected a parameter, let or "
                             f"constant ({', '.join(SCALAR_CONSTANTS)})", where)

    def value_type(self, name: str, scope: _Scope, loc) -> TileType:
        sym, barrier = scope.lookup(name)
        if sym is None:
            raise self.error(f"unknown value {name}", loc)
        if barrier is not None:
            raise self.isolation_error(name, sym, barrier, loc)
        if sym.kind != "value":
            raise self.error(f"{name} is a {sym.kind}, expected a value", loc)
        return sym.type

    def window_type(self, w: Window, scope: _Scope, level: str | None) -> TileType:
        sym, barrier = scope.lookup(w.tensor)
        if sym is None:
            raise self.error(f"unknown tensor {w.tensor!r}", w.loc)
        if barrier is not None:
            raise self.isolation_error(w.tensor, sym, barrier, w.loc)
        if sym.kind != "tensor":
            raise self.error(f"{w.tensor} is a {sym.kind}, expected a tensor", w.loc)
        tt = sym.type
        if len(w.axes) != len(tt.shape):
            raise self.error(f"window on {w.tensor} has {len(w.axes)} axes, the tensor has {len(tt.shape)}", w.loc)
        dims = []
        for axis, full in zip(w.axes, tt.shape):
            if axis.kind == "full":
                dims.append(full)
            elif axis.kind == "gather":
                idx = self.value_type(axis.index, scope, w.loc)
                if idx.dtype not in INDEX_DTYPES:
                    raise self.error(f"gather index {axis.index} must be i64, int32 or int8, found {idx.dtype}", w.loc)
                count: Expr = Const(1)
                for d in idx.shape:
                    count = d if count == Const(1) else BinOp("*", count, d)
                dims.append(count)
            else:
                for part in (axis.offset, axis.size, axis.stride):
                    if part is not None:
                        self.check_expr(part, set(), f"the window on {w.tensor}", scope, w.loc,
                                        reads_ok=part is axis.offset)
                dims.append(axis.size)
        return TileType(tt.dtype, tuple(dims), level)

    def operand_type(self, o, scope: _Scope, loc):
        if isinstance(o, ValueRef):
            return self.value_type(o.name, scope, o.loc or loc)
        if isinstance(o, Window):
            return self.window_type(o, scope, self.tensor_level(o, scope))
        return None  # Scalar

    def tensor_level(self, w: Window, scope: _Scope):
        sym, _ = scope.lookup(w.tensor)
        return sym.type.level if sym is not None and sym.type is not None else None

    def define(self, op: Op, ty: TileType, scope: _Scope) -> None:
        if op.result is None:
            return
        if op.result in self.consts:
            raise self.error(f"duplicate name {op.result}: it is a parameter", op.loc)
        existing = scope.names.get(op.result)
        if existing is not None:
            if existing.reassignable:
                if existing.type is not None and (existing.type.dtype != ty.dtype or len(existing.type.shape) != len(ty.shape)):
                    raise self.error(f"carried value {op.result} changes type from {existing.type} to {ty}", op.loc)
            else:
                line = existing.loc.line if existing.loc else "?"
                raise self.error(f"duplicate name {op.result} (first defined at line {line})", op.loc)
        scope.names[op.result] = _Symbol("value", ty, op.loc, reassignable=bool(existing and existing.reassignable))
        self.info.result_types[id(op)] = ty

    def _elementwise_operands(self, code: str, tys, loc) -> TileType:
        """The tile type of an elementwise op's operands: at least one tile; two tiles agree in dtype and rank."""
        tiles = [t for t in tys if t is not None]
        if not tiles:
            raise self.error(f"{code} needs at least one tile operand", loc)
        if len(tiles) == 2:
            if tiles[0].dtype != tiles[1].dtype:
                raise self.error(f"{code} operand dtypes differ: {tiles[0].dtype} and {tiles[1].dtype}", loc)
            if len(tiles[0].shape) != len(tiles[1].shape):
                raise self.error(f"{code} operand ranks differ: {tiles[0]} and {tiles[1]}; broadcast first", loc)
        return tiles[0]

    def op(self, op: Op, scope: _Scope) -> None:
        loc = op.loc
        tys = tuple(self.operand_type(o, scope, loc) for o in op.operands)
        self.info.operand_types[id(op)] = tys
        code = op.opcode
        for o in op.operands + ((op.fill_value,) if op.fill_value is not None else ()):
            if isinstance(o, Scalar):
                self.scalar(o, scope, loc, per_position=code in opcat.COMPARE)
        needs_result = code not in ("store", "send", "call", "return")
        if needs_result and op.result is None:
            raise self.error(f"{code} produces a value: write %name = {code} ...", loc)
        if not needs_result and op.result is not None and code != "call":
            raise self.error(f"{code} produces no value", loc)
        # Only elementwise ops take a number operand; everything else needs tiles.
        if code not in opcat.BINARY and code not in opcat.COMPARE and code not in opcat.SELECT \
                and code not in opcat.MMA and code not in opcat.UNARY:
            for o, t in zip(op.operands, tys):
                if t is None and isinstance(o, Scalar):
                    raise self.error(f"{code} takes a tile (%value or tensor window), found the number {o.text}",
                                     o.loc or loc)
        for lvl in (op.to_level, op.level):
            if lvl is not None and lvl not in STORAGE_LEVELS:
                raise self.error(f"unknown storage level {lvl!r}, expected one of: {', '.join(sorted(STORAGE_LEVELS))}", loc)
        if code in ("load", "copy"):
            ty = tys[0].with_level(op.to_level)
        elif code == "store":
            tgt = self.window_type(op.target, scope, self.tensor_level(op.target, scope))
            self.info.operand_types[id(op)] = tys + (tgt,)
            if any(a.kind == "gather" for a in op.target.axes):
                pass  # scatter rows: allowed
            if tys[0].dtype != tgt.dtype:
                raise self.error(f"store of {tys[0].dtype} into {op.target.tensor} of {tgt.dtype}: cast first", loc)
            if len(tys[0].shape) != len(tgt.shape):
                raise self.error(f"store of a rank-{len(tys[0].shape)} tile into a rank-{len(tgt.shape)} window", loc)
            return
        elif code in opcat.MMA:
            a, b, c = tys
            if a is None or b is None or c is None:
                raise self.error(f"{code} operands must be tiles", loc)
            ranks = (len(a.shape), len(b.shape), len(c.shape))
            if any(r not in (2, 3) for r in ranks) or len(c.shape) != max(ranks[:2]):
                raise self.error(f"{code} takes 2-D tiles a[M,K], b[K,N], acc[M,N], or batched 3-D ones "
                                 f"a[B,M,K], b[B,K,N], acc[B,M,N] (a 2-D a or b is shared by every batch "
                                 f"entry); found ranks {ranks[0]}, {ranks[1]}, {ranks[2]}", loc)
            fp8 = {DType.FP8E4M3, DType.FP8E5M2}
            if a.dtype != b.dtype and not (a.dtype in fp8 and b.dtype in fp8):
                raise self.error(f"{code} operand dtypes differ: {a.dtype} and {b.dtype}", loc)
            allowed = MMA_ACCUMULATORS.get(a.dtype, set())
            if c.dtype not in allowed:
                exp = " or ".join(sorted(str(d) for d in allowed)) or "none"
                raise self.error(f"{code} on {a.dtype} accumulates in {exp}, found {c.dtype}", loc)
            ty = c
        elif code in opcat.UNARY:
            if tys[0] is None:
                raise self.error(f"{code} takes a tile", loc)
            if code in opcat.SPECIAL and not tys[0].dtype.is_float:
                raise self.error(f"{code} needs a floating-point tile, found {tys[0].dtype}", loc)
            ty = tys[0]
        elif code in opcat.BINARY:
            ty = self._elementwise_operands(code, tys, loc)
        elif code in opcat.COMPARE:
            # A comparison checks its operands as an elementwise binary op does, and yields bool.
            ty = self._elementwise_operands(code, tys, loc).with_dtype(DType.BOOL)
        elif code in opcat.SELECT:
            cond, *branches = tys
            if cond is None or cond.dtype != DType.BOOL:
                found = f"the number {op.operands[0].text}" if cond is None else f"a {cond.dtype} tile"
                raise self.error(f"select's condition must be a bool tile (from lt, le, gt, ge, eq, ne), found {found}", loc)
            tiles = [t for t in branches if t is not None]
            if not tiles:
                raise self.error("select needs a tile among its two choices (both are numbers)", loc)
            if len(tiles) == 2 and tiles[0].dtype != tiles[1].dtype:
                raise self.error(f"select choices' dtypes differ: {tiles[0].dtype} and {tiles[1].dtype}", loc)
            for t in tiles:
                if len(t.shape) != len(cond.shape):
                    raise self.error(f"select operand ranks differ: condition {cond} and {t}; broadcast first", loc)
            ty = tiles[0]
        elif code == "iota":
            for d in op.shape:
                self.check_expr(d, set(), f"the shape of {op.result}", scope, loc)
            if op.start is not None:
                self.check_expr(op.start, set(), f"the start of {op.result}", scope, loc)
            if op.dtype == DType.BOOL:
                raise self.error("iota counts in a number dtype (i64, int32, f32, ...), found bool", loc)
            if not 0 <= op.axis < len(op.shape):
                raise self.error(f"iota axis {op.axis} out of range for a rank-{len(op.shape)} tile", loc)
            ty = TileType(op.dtype, op.shape, op.level)
        elif code == "reduce":
            t = tys[0]
            if t is None or not (0 <= op.axis < len(t.shape)):
                raise self.error(f"reduce axis {op.axis} out of range for {t}", loc)
            shape = t.shape[:op.axis] + t.shape[op.axis + 1:]
            ty = TileType(t.dtype, shape or (Const(1),), t.level)
        elif code == "cast":
            ty = tys[0].with_dtype(op.dtype)
        elif code in ("zeros", "fill", "recv"):
            for d in op.shape:
                self.check_expr(d, set(), f"the shape of {op.result}", scope, loc)
            ty = TileType(op.dtype, op.shape, op.level)
        elif code == "reshape":
            for d in op.shape:
                self.check_expr(d, set(), "reshape", scope, loc)
            ty = TileType(tys[0].dtype, op.shape, tys[0].level)
        elif code == "broadcast":
            for d in op.shape:
                self.check_expr(d, set(), "broadcast", scope, loc)
            if len(op.shape) < len(tys[0].shape):
                raise self.error("broadcast cannot reduce the rank", loc)
            ty = TileType(tys[0].dtype, op.shape, tys[0].level)
        elif code == "transpose":
            t = tys[0]
            perm = op.perm or tuple(reversed(range(len(t.shape))))
            if sorted(perm) != list(range(len(t.shape))):
                raise self.error(f"transpose perm {list(perm)} is not a permutation of {len(t.shape)} axes", loc)
            ty = TileType(t.dtype, tuple(t.shape[i] for i in perm), t.level)
        elif code == "call":
            callee = next((k for k in self.module.kernels if k.name == op.callee), None)
            if callee is None:
                raise self.error(f"call of unknown kernel {op.callee!r}", loc)
            if callee is self.kernel:
                raise self.error("a kernel cannot call itself", loc)
            if len(op.operands) != len(callee.tensors):
                raise self.error(f"{op.callee} takes {len(callee.tensors)} arguments ({', '.join(t.name for t in callee.tensors)}), found {len(op.operands)}", loc)
            for name, e in op.bindings:
                if callee.param(name) is None:
                    raise self.error(f"{op.callee} has no parameter {name!r}", loc)
                self.check_expr(e, set(), f"the binding of {name}", scope, loc)
            for arg, t in zip(tys, callee.tensors):
                if arg is not None and arg.dtype != t.type.dtype:
                    raise self.error(f"argument for {t.name} of {op.callee} is {arg.dtype}, expected {t.type.dtype}", loc)
            if op.result is None:
                return
            ty = self.call_result_type(op, callee, loc)
        elif code == "return":
            if scope.parent is not None:
                raise self.error("'return' belongs at the kernel's top level, after its regions", loc)
            if tys[0] is None:
                raise self.error("return takes a value (%name)", loc)
            return
        elif code == "send":
            return
        elif code == "allreduce":
            ty = tys[0]
        else:  # pragma: no cover - the parser admits only catalogued opcodes
            raise self.error(f"unknown op {code!r}", loc)
        self.define(op, ty, scope)


def _divisions(e: Expr):
    """(node, divisor) for every division, modulo and cdiv in ``e``, without recursion."""
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, BinOp):
            if node.op in ("/", "%"):
                yield node, node.rhs
            stack += [node.lhs, node.rhs]
        elif isinstance(node, Call):
            if node.func == "cdiv":
                yield node, node.args[1]
            stack += list(node.args)
        elif isinstance(node, Neg):
            stack.append(node.operand)


def _expr_loc(e: Expr, name: str):
    if isinstance(e, Name) and e.name == name:
        return e.loc
    for child in getattr(e, "args", ()) or ():
        l = _expr_loc(child, name)
        if l is not None:
            return l
    for attr in ("lhs", "rhs", "operand"):
        child = getattr(e, attr, None)
        if child is not None:
            l = _expr_loc(child, name)
            if l is not None:
                return l
    return None


def _scalar_loc(e, name: str):
    from tfx.ir import scalar as sc
    if isinstance(e, sc.Ref):
        return e.loc if e.name == name else None
    for child in (getattr(e, "args", None) or ()) + tuple(
            c for c in (getattr(e, "lhs", None), getattr(e, "rhs", None), getattr(e, "operand", None)) if c is not None):
        got = _scalar_loc(child, name)
        if got is not None:
            return got
    return None


def verify_module(module: Module, lines: list[str]) -> None:
    Verifier(module, lines).run()
