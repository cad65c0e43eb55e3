"""Canonical printer: ``parse(print(parse(x))) == parse(x)`` for every kernel."""

from __future__ import annotations

from tfx.ir.expr import to_text
from tfx.ir.nodes import (AxisSlice, Composite, Domain, Kernel, LoopRegion, MeshRegion, Module, Op,
                          Scalar, ValueRef, Window)

INDENT = "  "


def print_domain(d: Domain) -> str:
    if d.values is not None:
        return "{" + ", ".join(to_text(v) for v in d.values) + "}"
    text = f"{to_text(d.lo)}..{to_text(d.hi)}"
    if d.step is not None:
        text += f" step x{to_text(d.step)}" if d.geometric else f" step {to_text(d.step)}"
    return text


def print_axis(a: AxisSlice) -> str:
    if a.kind == "full":
        return ":"
    if a.kind == "gather":
        return f"gather({a.index})"
    text = f"{to_text(a.offset)} : {to_text(a.size)}"
    if a.stride is not None:
        text += f" : {to_text(a.stride)}"
    return text


def print_window(w: Window) -> str:
    return f"{w.tensor}[" + ", ".join(print_axis(a) for a in w.axes) + "]"


def print_operand(o) -> str:
    if isinstance(o, ValueRef):
        return o.name
    if isinstance(o, Window):
        return print_window(o)
    if isinstance(o, Scalar):
        return o.text
    raise AssertionError(type(o))


def _shape(dims) -> str:
    return "[" + ", ".join(to_text(d) for d in dims) + "]"


def _new_tile(op: Op) -> str:
    """The type and level of a tile an op creates: ``f32[BM, BN] @reg``."""
    return f"{op.dtype}{_shape(op.shape)} @{op.level}"


def print_op(op: Op) -> str:
    code = op.opcode
    ops = ", ".join(print_operand(o) for o in op.operands)
    if code in ("load", "copy"):
        body = f"{code} {ops} -> {op.to_level}"
    elif code == "store":
        body = f"store {ops} -> {print_window(op.target)}"
    elif code == "reduce":
        body = f"reduce {op.reduce_kind} {ops} axis {op.axis}"
    elif code == "cast":
        body = f"cast {ops} to {op.dtype}"
    elif code == "zeros":
        body = f"zeros {_new_tile(op)}"
    elif code == "fill":
        body = f"fill {op.fill_value.text} {_new_tile(op)}"
    elif code == "iota":
        body = f"iota {_new_tile(op)} axis {op.axis}"
        if op.start is not None:
            body += f" from {to_text(op.start)}"
    elif code == "recv":
        body = f"recv {_new_tile(op)} from {op.peer}"
    elif code in ("reshape", "broadcast"):
        body = f"{code} {ops} to {_shape(op.shape)}"
    elif code == "transpose":
        body = f"transpose {ops}" + (f" perm [{', '.join(map(str, op.perm))}]" if op.perm else "")
    elif code == "call":
        body = f"call {op.callee}({ops})"
        if op.bindings:
            body += " with (" + ", ".join(f"{n} = {to_text(e)}" for n, e in op.bindings) + ")"
    elif code == "send":
        body = f"send {ops} to {op.peer}"
    elif code == "allreduce":
        body = f"allreduce {op.reduce_kind} {ops} over {op.peer}"
    else:
        body = f"{code} {ops}"
    return f"{op.result} = {body}" if op.result else body


def _captures(region) -> str:
    items = [c.name + (f" -> {c.move_to}" if c.move_to else "") for c in region.captures]
    return "capture(" + ", ".join(items) + ")"


def region_header(s) -> str:
    """The first line of a region, without indentation or the opening brace."""
    if isinstance(s, MeshRegion):
        text = f"mesh {s.level}[" + ", ".join(to_text(e) for e in s.extents) + "] as (" + ", ".join(s.coords) + ")"
        if s.swizzle is not None:
            text += f" swizzle({to_text(s.swizzle)})"
        return f"{text} {_captures(s)}"
    if isinstance(s, LoopRegion):
        text = f"loop {s.var} = {to_text(s.start)} to "
        if s.trip.kind == "runtime":
            text += f"runtime({to_text(s.trip.lo)}..{to_text(s.trip.hi)})"
            if s.trip.expect is not None:
                text += f" expect {to_text(s.trip.expect)}"
        else:
            text += to_text(s.stop)
        if to_text(s.step) != "1":
            text += f" step {to_text(s.step)}"
        if s.bound is not None:
            text += f" bound {to_text(s.bound)}"
        if s.stages is not None:
            text += f" stages {to_text(s.stages)}"
        if s.carry:
            text += " carry(" + ", ".join(s.carry) + ")"
        return f"{text} {_captures(s)}"
    if isinstance(s, Composite):
        return f"composite {s.name}"
    raise AssertionError(type(s))


def print_body(stmts, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    for s in stmts:
        if isinstance(s, Op):
            out.append(pad + print_op(s))
        else:
            out.append(pad + region_header(s) + " {")
            print_body(s.body, depth + 1, out)
            out.append(pad + "}")


def print_kernel(k: Kernel) -> str:
    out: list[str] = []
    for line in k.doc.split("\n") if k.doc else []:
        out.append(f"// {line}".rstrip())
    out.append(f"kernel {k.name} {{")
    groups = [
        [f"param {p.name} = {to_text(p.default)}" + (f" in {print_domain(p.domain)}" if p.domain else "")
         + (f" sweep {print_domain(p.sweep)}" if p.sweep else "") for p in k.params],
        [f"let {l.name} = {to_text(l.value)}" for l in k.lets],
        [f"attr {a.name} = {to_text(a.value)}" for a in k.attrs],
        [f"tensor {t.name} : {t.type.dtype}{_shape(t.type.shape)} @{t.type.level} {t.role}" for t in k.tensors],
    ]
    body: list[str] = []
    print_body(k.body, 1, body)
    groups.append(body)
    first = True
    for g in groups:
        if not g:
            continue
        if not first:
            out.append("")
        first = False
        out.extend(INDENT + line if not line.startswith(INDENT) else line for line in g)
    out.append("}")
    return "\n".join(out) + "\n"


def print_module(m: Module) -> str:
    return "\n".join(print_kernel(k) for k in m.kernels)
