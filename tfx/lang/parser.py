"""Recursive-descent parser for .tile files (grammar: docs/language.md).

The parser builds the IR and then runs the verifier (tfx.ir.verify), so a
successful parse is a well-formed kernel: names resolve, regions are isolated,
types agree.
"""

from __future__ import annotations

from pathlib import Path

from tfx.errors import SourceLocation, TfxError, read_text_file
from tfx.ir import ops as opcat
from tfx.ir import scalar as sc
from tfx.ir.expr import (FUNCTIONS, UNITS_FUNCTION, BinOp, Call, Const, Expr, Name, Neg, Read, reads_in,
                         units_name)
from tfx.ir.nodes import (KERNEL_ATTRS, ROLES, Attr, AxisSlice, Capture, Composite, Domain, Kernel,
                          Let, LoopRegion, MeshRegion, Module, Op, Param, Scalar, Tensor, TripCount,
                          ValueRef, Window)
from tfx.ir.types import DTYPES, TileType
from tfx.lang.lexer import Token, tokenize

KEYWORDS = {"kernel", "param", "let", "attr", "tensor", "mesh", "loop", "composite", "capture",
            "carry", "stages", "step", "bound", "to", "as", "in", "runtime", "expect", "swizzle"}


# Sizes and offsets are evaluated as 64-bit integers (numpy arrays in sweeps).
MAX_INT = 2**63 - 1
# Deeper nesting is refused: every later pass walks the tree recursively.
MAX_EXPR_DEPTH = 100
MAX_REGION_DEPTH = 50


def expr_depth(e: Expr) -> int:
    """Height of an expression tree, computed without recursion."""
    best, stack = 0, [(e, 1)]
    while stack:
        node, d = stack.pop()
        best = max(best, d)
        if isinstance(node, BinOp):
            stack += [(node.lhs, d + 1), (node.rhs, d + 1)]
        elif isinstance(node, Neg):
            stack.append((node.operand, d + 1))
        elif isinstance(node, Call):
            stack += [(a, d + 1) for a in node.args]
        elif isinstance(node, Read):
            stack += [(a, d + 1) for a in node.indices]
    return best


class Parser:
    def __init__(self, text: str, filename: str):
        self.filename = filename
        all_tokens, self.lines = tokenize(text, filename)
        self.comments: dict[int, list[Token]] = {}
        self.tokens: list[Token] = []
        pending: list[Token] = []
        for tok in all_tokens:
            if tok.kind == "COMMENT":
                pending.append(tok)
            else:
                if pending:
                    self.comments[len(self.tokens)] = pending
                    pending = []
                self.tokens.append(tok)
        self.i = 0
        self.expr_nesting = 0
        self.region_nesting = 0

    # ------------------------------------------------------------ helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def loc(self, tok: Token | None = None) -> SourceLocation:
        tok = tok or self.tok
        return SourceLocation(self.filename, tok.line, tok.col)

    def error(self, message: str, tok: Token | None = None) -> TfxError:
        tok = tok or self.tok
        line = self.lines[tok.line - 1] if 0 < tok.line <= len(self.lines) else ""
        return TfxError(message, self.loc(tok), line)

    def describe(self, tok: Token) -> str:
        return "end of file" if tok.kind == "EOF" else repr(tok.text)

    def at(self, text: str) -> bool:
        t = self.tok
        return t.text == text and t.kind in ("PUNCT", "IDENT")

    def accept(self, text: str) -> Token | None:
        if self.at(text):
            t = self.tok
            self.i += 1
            return t
        return None

    def expect(self, text: str, what: str | None = None) -> Token:
        if self.at(text):
            t = self.tok
            self.i += 1
            return t
        raise self.error(f"expected {what or repr(text)}, found {self.describe(self.tok)}")

    def ident(self, what: str = "a name") -> Token:
        t = self.tok
        if t.kind != "IDENT":
            raise self.error(f"expected {what}, found {self.describe(t)}")
        self.i += 1
        return t

    def value(self, what: str = "a value (%name)") -> Token:
        t = self.tok
        if t.kind != "VALUE":
            raise self.error(f"expected {what}, found {self.describe(t)}")
        self.i += 1
        return t

    def int_literal(self, what: str = "an integer") -> int:
        t = self.tok
        if t.kind != "INT":
            raise self.error(f"expected {what}, found {self.describe(t)}")
        self.i += 1
        return self.int_value(t)

    def int_value(self, t: Token) -> int:
        """The value of an INT token; ``007`` and ``0x_`` are refused, not crashed on."""
        try:
            value = int(t.text.replace("_", ""), 0)
        except ValueError:
            raise self.error(f"invalid integer literal {t.text!r}", t) from None
        if value > MAX_INT:
            raise self.error(f"integer literal {t.text!r} is out of range (at most 2^63 - 1)", t)
        return value

    # ------------------------------------------------------------ module
    def parse_module(self) -> Module:
        kernels = []
        while self.tok.kind != "EOF":
            if not self.at("kernel"):
                raise self.error(f"expected 'kernel', found {self.describe(self.tok)}")
            kernels.append(self.parse_kernel())
        if not kernels:
            raise TfxError("expected at least one kernel, found none", SourceLocation(self.filename, 1, 1))
        return Module(tuple(kernels), self.filename, source_lines=tuple(self.lines))

    def doc_before(self, index: int) -> str:
        out = []
        for c in self.comments.get(index, []):
            text = c.text[2:]
            out.append(text[1:] if text.startswith(" ") else text)
        return "\n".join(out).rstrip()

    def parse_kernel(self) -> Kernel:
        doc = self.doc_before(self.i)
        start = self.expect("kernel")
        name = self.ident("a kernel name").text
        self.expect("{")
        params, lets, attrs, tensors, body = [], [], [], [], []
        while not self.at("}"):
            t = self.tok
            if t.kind == "EOF":
                raise self.error(f"expected '}}' to close kernel {name!r}")
            if self.at("param"):
                params.append(self.parse_param())
            elif self.at("let"):
                self.i += 1
                n = self.ident("a name for the derived parameter")
                self.expect("=")
                lets.append(Let(n.text, self.parse_expr(), self.loc(n)))
            elif self.at("attr"):
                self.i += 1
                n = self.ident("an attribute name")
                if n.text not in KERNEL_ATTRS:
                    known = ", ".join(KERNEL_ATTRS)
                    raise self.error(f"unknown kernel attribute {n.text!r}, expected one of: {known}", n)
                self.expect("=")
                attrs.append(Attr(n.text, self.parse_expr(), self.loc(n)))
            elif self.at("tensor"):
                tensors.append(self.parse_tensor())
            else:
                body.append(self.parse_stmt())
        self.expect("}")
        return Kernel(name, tuple(params), tuple(lets), tuple(attrs), tuple(tensors), tuple(body),
                      doc, self.loc(start))

    def parse_param(self) -> Param:
        self.expect("param")
        n = self.ident("a parameter name")
        self.expect("=")
        default = self.parse_expr()
        domain = sweep = None
        if self.accept("in"):
            domain = self.parse_domain()
        # ``sweep`` is significant only here (not reserved): no kernel item starts with it
        if self.accept("sweep"):
            sweep = self.parse_domain()
        for word in ("in", "sweep"):
            if self.at(word):
                raise self.error(f"parameter {n.text}: {word!r} again or out of order: write "
                                 f"param {n.text} = DEFAULT in DOMAIN sweep VALUES (each at most once)")
        return Param(n.text, default, domain, sweep, self.loc(n))

    def parse_domain(self) -> Domain:
        start = self.loc()
        if self.accept("{"):
            values = [self.parse_expr()]
            while self.accept(","):
                values.append(self.parse_expr())
            self.expect("}", "'}' to close the value set")
            return Domain(values=tuple(values), loc=start)
        lo = self.parse_expr()
        self.expect("..", "'..' in a range domain (lo..hi) or a set {a, b}")
        hi = self.parse_expr()
        step, geometric = None, False
        if self.accept("step"):
            t = self.tok
            if t.kind == "IDENT" and t.text[:1] == "x" and t.text[1:].isdigit():
                self.i += 1
                step, geometric = Const(int(t.text[1:]), self.loc(t)), True
            else:
                step = self.parse_expr()
        return Domain(lo=lo, hi=hi, step=step, geometric=geometric, loc=start)

    def parse_type(self) -> TileType:
        t = self.ident("a dtype")
        if t.text not in DTYPES:
            raise self.error(f"unknown dtype {t.text!r}, expected one of: {', '.join(DTYPES)}", t)
        self.expect("[", "'[' and a shape")
        dims = []
        if not self.at("]"):
            dims.append(self.parse_expr())
            while self.accept(","):
                dims.append(self.parse_expr())
        self.expect("]", "']' to close the shape")
        level = None
        if self.accept("@"):
            level = self.ident("a storage level").text
        return TileType(DTYPES[t.text], tuple(dims), level)

    def parse_tensor(self) -> Tensor:
        self.expect("tensor")
        n = self.ident("a tensor name")
        self.expect(":")
        ty = self.parse_type()
        if ty.level is None:
            raise self.error("expected '@level' after the tensor's shape (e.g. @gmem)")
        role = self.ident("a role (in, out, inout, scratch)")
        if role.text not in ROLES:
            raise self.error(f"unknown tensor role {role.text!r}, expected one of: {', '.join(ROLES)}", role)
        return Tensor(n.text, ty, role.text, self.loc(n))

    # ------------------------------------------------------------ statements
    def parse_block(self) -> tuple[tuple, SourceLocation]:
        open_brace = self.expect("{")
        if self.region_nesting >= MAX_REGION_DEPTH:
            raise self.error(f"regions nest more than {MAX_REGION_DEPTH} deep", open_brace)
        self.region_nesting += 1
        try:
            return self._parse_block_body()
        finally:
            self.region_nesting -= 1

    def _parse_block_body(self) -> tuple[tuple, SourceLocation]:
        body = []
        while not self.at("}"):
            if self.tok.kind == "EOF":
                raise self.error("expected '}' to close the region")
            body.append(self.parse_stmt())
        end = self.expect("}")
        return tuple(body), self.loc(end)

    def parse_stmt(self):
        if self.at("mesh"):
            return self.parse_mesh()
        if self.at("loop"):
            return self.parse_loop()
        if self.at("composite"):
            start = self.expect("composite")
            name = self.ident("a name for the composite command").text
            body, _ = self.parse_block()
            return Composite(name, body, self.loc(start))
        return self.parse_op()

    def parse_captures(self) -> tuple[Capture, ...]:
        self.expect("capture", "'capture(...)': every region lists what it takes from outside")
        self.expect("(")
        caps = []
        while not self.at(")"):
            t = self.tok
            if t.kind not in ("IDENT", "VALUE"):
                raise self.error(f"expected a captured name, found {self.describe(t)}")
            self.i += 1
            move = None
            if self.accept("->"):
                move = self.ident("a storage level").text
            caps.append(Capture(t.text, move, self.loc(t)))
            if not self.accept(","):
                break
        self.expect(")", "')' to close the capture list")
        return tuple(caps)

    def parse_mesh(self) -> MeshRegion:
        start = self.expect("mesh")
        level = self.ident("a mesh level (cta, warp, thread, cube, pe)").text
        self.expect("[", "'[' and the mesh extents")
        extents = [self.parse_expr()]
        while self.accept(","):
            extents.append(self.parse_expr())
        self.expect("]")
        self.expect("as", "'as (coords...)' naming the mesh coordinates")
        self.expect("(")
        coords = [self.ident("a coordinate name").text]
        while self.accept(","):
            coords.append(self.ident("a coordinate name").text)
        close = self.expect(")")
        if len(coords) != len(extents):
            raise self.error(f"mesh has {len(extents)} extents but {len(coords)} coordinates", close)
        swizzle = None
        if self.accept("swizzle"):
            self.expect("(")
            swizzle = self.parse_expr()
            self.expect(")")
        caps = self.parse_captures()
        body, end = self.parse_block()
        return MeshRegion(level, tuple(extents), tuple(coords), caps, body, swizzle,
                          self.loc(start), end)

    def parse_loop(self) -> LoopRegion:
        start = self.expect("loop")
        var = self.ident("an induction variable name").text
        self.expect("=")
        lo = self.parse_expr()
        self.expect("to")
        stop = None
        if self.accept("runtime"):
            self.expect("(", "'(' and the trip count's range lo..hi")
            tlo = self.parse_expr()
            self.expect("..")
            thi = self.parse_expr()
            self.expect(")")
            expect = self.parse_expr() if self.accept("expect") else None
            trip = TripCount("runtime", tlo, thi, expect)
        else:
            stop = self.parse_expr()
            trip = TripCount("static")
        step, bound, stages, carry = Const(1), None, None, []
        while True:
            if self.accept("step"):
                step = self.parse_expr()
            elif self.accept("bound"):
                bound = self.parse_expr()
            elif self.accept("stages"):
                stages = self.parse_expr()
            elif self.accept("carry"):
                self.expect("(")
                carry.append(self.value().text)
                while self.accept(","):
                    carry.append(self.value().text)
                self.expect(")")
            else:
                break
        caps = self.parse_captures()
        body, end = self.parse_block()
        return LoopRegion(var, lo, stop, step, trip, bound, stages, tuple(carry), caps, body,
                          self.loc(start), end)

    def parse_operand(self):
        t = self.tok
        if t.kind == "VALUE":
            self.i += 1
            return ValueRef(t.text, self.loc(t))
        if t.kind == "IDENT" and self.peek().text == "[":
            return self.parse_window()
        scalar = self.try_scalar()
        if scalar is not None:
            return scalar
        raise self.error(f"expected an operand (%value, tensor window or number), found {self.describe(t)}")

    def starts_scalar(self) -> bool:
        """Whether the current token can begin a scalar operand (a number expression)."""
        t = self.tok
        if t.kind in ("INT", "FLOAT"):
            return True
        if t.kind == "PUNCT" and t.text in ("-", "("):
            return True
        return t.kind == "IDENT" and t.text not in KEYWORDS and self.peek().text != "["

    def try_scalar(self) -> Scalar | None:
        """A scalar operand: a real-valued expression of literals, parameters, lets and
        constants (docs/language.md, "Scalar operands"), or None when none starts here."""
        if not self.starts_scalar():
            return None
        start = self.tok
        e = self.parse_sexpr(1, 0)
        return Scalar(e, self.loc(start))

    def parse_sexpr(self, min_prec: int, depth: int) -> sc.ScalarExpr:
        if depth >= MAX_EXPR_DEPTH:
            raise self.error(f"expression nests more than {MAX_EXPR_DEPTH} deep")
        lhs = self.parse_sunary(depth + 1)
        while True:
            t = self.tok
            prec = sc.PRECEDENCE.get(t.text) if t.kind == "PUNCT" else None
            if prec is None or prec < min_prec:
                return lhs
            self.i += 1
            rhs = self.parse_sexpr(prec + 1, depth + 1)
            lhs = sc.Bin(t.text, lhs, rhs, self.loc(t))

    def parse_sunary(self, depth: int) -> sc.ScalarExpr:
        t = self.tok
        if depth >= MAX_EXPR_DEPTH:
            raise self.error(f"expression nests more than {MAX_EXPR_DEPTH} deep", t)
        if t.kind == "PUNCT" and t.text == "-":
            self.i += 1
            inner = self.parse_sunary(depth + 1)
            if isinstance(inner, sc.Num) and not inner.text.startswith("-"):
                return sc.Num("-" + inner.text, self.loc(t))
            return sc.Neg(inner, self.loc(t))
        if t.kind in ("INT", "FLOAT"):
            self.i += 1
            if t.kind == "INT":
                self.int_value(t)   # refuse 007 and out-of-range literals alike
            return sc.Num(t.text.replace("_", ""), self.loc(t))
        if t.kind == "PUNCT" and t.text == "(":
            self.i += 1
            e = self.parse_sexpr(1, depth + 1)
            self.expect(")", "')' to close the parenthesis")
            return e
        if t.kind == "IDENT" and t.text not in KEYWORDS:
            self.i += 1
            if self.at("("):
                if t.text not in sc.FUNCTIONS:
                    raise self.error(f"unknown function {t.text!r} in a scalar operand, expected one of: "
                                     f"{', '.join(sc.FUNCTIONS)}", t)
                self.i += 1
                args = [self.parse_sexpr(1, depth + 1)]
                while self.accept(","):
                    args.append(self.parse_sexpr(1, depth + 1))
                self.expect(")", f"')' to close {t.text}(...)")
                if len(args) != sc.FUNCTIONS[t.text]:
                    raise self.error(f"{t.text} takes {sc.FUNCTIONS[t.text]} arguments, found {len(args)}", t)
                return sc.Func(t.text, tuple(args), self.loc(t))
            return sc.Ref(t.text, self.loc(t))
        raise self.error(f"expected a number, parameter or constant in a scalar operand, found {self.describe(t)}")

    def parse_window(self) -> Window:
        name = self.ident("a tensor name")
        self.expect("[")
        axes = [self.parse_axis()]
        while self.accept(","):
            axes.append(self.parse_axis())
        self.expect("]", "']' to close the window")
        return Window(name.text, tuple(axes), self.loc(name))

    def parse_axis(self) -> AxisSlice:
        if self.at(":") and self.peek().text in (",", "]"):
            self.i += 1
            return AxisSlice("full")
        if self.at("gather"):
            self.i += 1
            self.expect("(")
            idx = self.value("an index tile (%name)").text
            self.expect(")")
            return AxisSlice("gather", index=idx)
        off = self.parse_expr()
        self.expect(":", "':' and the window size (offset : size)")
        size = self.parse_expr()
        stride = None
        if self.accept(":"):
            stride = self.parse_expr()
        return AxisSlice("runtime" if reads_in(off) else "range", off, size, stride)

    def parse_shape_list(self) -> tuple[Expr, ...]:
        self.expect("[", "'[' and a shape")
        dims = [self.parse_expr()]
        while self.accept(","):
            dims.append(self.parse_expr())
        self.expect("]")
        return tuple(dims)

    def parse_op(self) -> Op:
        result = None
        first = self.tok
        if first.kind == "VALUE":
            result = first.text
            self.i += 1
            self.expect("=", "'=' after the result name")
        t = self.tok
        if t.kind != "IDENT":
            raise self.error(f"expected an op or a region, found {self.describe(t)}")
        opcode = t.text
        if opcode not in opcat.ALL_OPCODES:
            if opcode in KEYWORDS:
                raise self.error(f"{opcode!r} is not allowed here")
            raise self.error(f"unknown op {opcode!r}")
        self.i += 1
        loc = self.loc(first)
        fields: dict = {}
        if opcode in ("load", "copy"):
            fields["operands"] = (self.parse_operand(),)
            self.expect("->", "'-> level' naming where the tile goes")
            fields["to_level"] = self.ident("a storage level").text
        elif opcode == "store":
            fields["operands"] = (ValueRef(self.value().text, self.loc(self.peek(-1))),)
            self.expect("->", "'-> Tensor[window]'")
            fields["target"] = self.parse_window()
        elif opcode in opcat.MMA:
            ops = [self.parse_operand()]
            while self.accept(","):
                ops.append(self.parse_operand())
            if len(ops) != 3:
                raise self.error(f"{opcode} takes 3 operands (a, b, accumulator), found {len(ops)}", t)
            fields["operands"] = tuple(ops)
        elif opcode in opcat.UNARY:
            fields["operands"] = (self.parse_operand(),)
        elif opcode in opcat.SELECT:
            ops = [self.parse_operand()]
            while self.accept(","):
                ops.append(self.parse_operand())
            if len(ops) != 3:
                raise self.error(f"select takes 3 operands (condition, if true, if false), found {len(ops)}", t)
            fields["operands"] = tuple(ops)
        elif opcode in opcat.BINARY or opcode in opcat.COMPARE:
            a = self.parse_operand()
            self.expect(",", f"',' and the second operand of {opcode}")
            fields["operands"] = (a, self.parse_operand())
        elif opcode == "reduce":
            kind = self.ident("a reduction kind (sum, max, min)")
            if kind.text not in opcat.REDUCE_KINDS:
                raise self.error(f"unknown reduction {kind.text!r}, expected sum, max or min", kind)
            fields["reduce_kind"] = kind.text
            fields["operands"] = (self.parse_operand(),)
            self.expect("axis", "'axis N'")
            fields["axis"] = self.int_literal("an axis number")
        elif opcode == "cast":
            fields["operands"] = (self.parse_operand(),)
            self.expect("to", "'to dtype'")
            d = self.ident("a dtype")
            if d.text not in DTYPES:
                raise self.error(f"unknown dtype {d.text!r}, expected one of: {', '.join(DTYPES)}", d)
            fields["dtype"] = DTYPES[d.text]
        elif opcode == "iota":
            ty = self.parse_type()
            if ty.level is None:
                raise self.error("expected '@level' after the shape of iota")
            fields.update(dtype=ty.dtype, shape=ty.shape, level=ty.level)
            self.expect("axis", "'axis N': the axis along which the values count up")
            fields["axis"] = self.int_literal("an axis number")
            if self.accept("from"):
                fields["start"] = self.parse_expr()
        elif opcode in ("zeros", "fill", "recv"):
            if opcode == "fill":
                s = self.try_scalar()
                if s is None:
                    raise self.error("expected the fill value (a number, -inf or a scalar expression of parameters)")
                fields["fill_value"] = s
            ty = self.parse_type()
            if ty.level is None:
                raise self.error(f"expected '@level' after the shape of {opcode}")
            fields.update(dtype=ty.dtype, shape=ty.shape, level=ty.level)
            if opcode == "recv":
                self.expect("from", "'from level[offset]'")
                fields["peer"] = self.parse_peer()
        elif opcode in ("reshape", "broadcast"):
            fields["operands"] = (self.parse_operand(),)
            self.expect("to", "'to [shape]'")
            fields["shape"] = self.parse_shape_list()
        elif opcode == "return":
            fields["operands"] = (ValueRef(self.value("the returned value (%name)").text, self.loc(self.peek(-1))),)
        elif opcode == "transpose":
            fields["operands"] = (self.parse_operand(),)
            if self.accept("perm"):
                self.expect("[")
                perm = [self.int_literal()]
                while self.accept(","):
                    perm.append(self.int_literal())
                self.expect("]")
                fields["perm"] = tuple(perm)
        elif opcode == "call":
            fields["callee"] = self.ident("the called kernel's name").text
            self.expect("(")
            args = []
            while not self.at(")"):
                args.append(self.parse_operand())
                if not self.accept(","):
                    break
            self.expect(")")
            fields["operands"] = tuple(args)
            if self.accept("with"):
                self.expect("(")
                binds = []
                while not self.at(")"):
                    n = self.ident("a parameter of the callee")
                    self.expect("=")
                    binds.append((n.text, self.parse_expr()))
                    if not self.accept(","):
                        break
                self.expect(")")
                fields["bindings"] = tuple(binds)
        elif opcode == "send":
            fields["operands"] = (self.parse_operand(),)
            self.expect("to", "'to level[offset]'")
            fields["peer"] = self.parse_peer()
        elif opcode == "allreduce":
            kind = self.ident("a reduction kind (sum, max, min)")
            if kind.text not in opcat.REDUCE_KINDS:
                raise self.error(f"unknown reduction {kind.text!r}, expected sum, max or min", kind)
            fields["reduce_kind"] = kind.text
            fields["operands"] = (self.parse_operand(),)
            self.expect("over", "'over level'")
            fields["peer"] = self.ident("a mesh level").text
        return Op(opcode, result, loc=loc, **fields)

    def parse_peer(self) -> str:
        level = self.ident("a mesh level").text
        self.expect("[")
        off = self.parse_expr()
        self.expect("]")
        return f"{level}[{off}]"

    # ------------------------------------------------------------ expressions
    def parse_expr(self, min_prec: int = 1) -> Expr:
        start = self.tok
        if self.expr_nesting >= MAX_EXPR_DEPTH:
            raise self.error(f"expression nests more than {MAX_EXPR_DEPTH} deep", start)
        self.expr_nesting += 1
        try:
            e = self._parse_binary(min_prec)
        finally:
            self.expr_nesting -= 1
        if self.expr_nesting == 0 and expr_depth(e) > MAX_EXPR_DEPTH:
            # a flat chain (1 + 1 + ... + 1) is as deep as it is long: say so, not "nests"
            raise self.error(f"expression is {expr_depth(e) - 1} operations deep (at most "
                             f"{MAX_EXPR_DEPTH - 1}; a chain a + b + c counts one per operator); "
                             "split it with let", start)
        return e

    def _parse_binary(self, min_prec: int) -> Expr:
        lhs = self.parse_unary()
        while True:
            t = self.tok
            prec = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}.get(t.text) if t.kind == "PUNCT" else None
            if prec is None or prec < min_prec:
                return lhs
            self.i += 1
            rhs = self.parse_expr(prec + 1)
            lhs = BinOp(t.text, lhs, rhs, self.loc(t))

    def parse_unary(self) -> Expr:
        t = self.tok
        if t.text == "-" and t.kind == "PUNCT":
            self.i += 1
            if self.expr_nesting >= MAX_EXPR_DEPTH:
                raise self.error(f"expression nests more than {MAX_EXPR_DEPTH} deep", t)
            self.expr_nesting += 1
            try:
                inner = self.parse_unary()
            finally:
                self.expr_nesting -= 1
            if isinstance(inner, Const):
                return Const(-inner.value, self.loc(t))
            return Neg(inner, self.loc(t))
        return self.parse_primary()

    def parse_primary(self) -> Expr:
        t = self.tok
        if t.kind == "INT":
            self.i += 1
            return Const(self.int_value(t), self.loc(t))
        if t.kind == "IDENT":
            self.i += 1
            if self.at("(") and t.text == UNITS_FUNCTION:
                # units(LEVEL): a count of the hardware profile, bound with it (tfx.ir.bind)
                self.i += 1
                level = self.tok
                if level.kind != "IDENT" or level.text in KEYWORDS:
                    raise self.error(f"expected a hierarchy level of the hardware profile in units(...) "
                                     f"(sm, cube, pe), found {self.describe(level)}", level)
                self.i += 1
                self.expect(")", "')' to close units(...): it takes one hierarchy level")
                return Name(units_name(level.text), self.loc(t))
            if self.at("(") and t.text in FUNCTIONS:
                self.i += 1
                args = [self.parse_expr()]
                while self.accept(","):
                    args.append(self.parse_expr())
                self.expect(")", f"')' to close {t.text}(...)")
                if len(args) != FUNCTIONS[t.text]:
                    raise self.error(f"{t.text} takes {FUNCTIONS[t.text]} arguments, found {len(args)}", t)
                return Call(t.text, tuple(args), self.loc(t))
            if self.at("[") and t.text not in KEYWORDS:
                # an element of an integer tensor, read at run time (a window's offset)
                self.i += 1
                idx = [self.parse_expr()]
                while self.accept(","):
                    idx.append(self.parse_expr())
                self.expect("]", f"']' to close the read of {t.text}")
                return Read(t.text, tuple(idx), self.loc(t))
            if self.at("(") and t.text not in KEYWORDS:
                raise self.error(f"unknown function {t.text!r}, expected one of: "
                                 f"{', '.join([*FUNCTIONS, UNITS_FUNCTION])}", t)
            if t.text in KEYWORDS:
                raise self.error(f"expected an expression, found keyword {t.text!r}", t)
            return Name(t.text, self.loc(t))
        if t.text == "(":
            self.i += 1
            e = self.parse_expr()
            self.expect(")", "')' to close the parenthesis")
            return e
        if t.kind == "FLOAT":
            raise self.error(f"expected an integer expression, found {t.text!r}")
        raise self.error(f"expected an expression, found {self.describe(t)}")


def parse_text(text: str, filename: str = "<string>", verify: bool = True) -> Module:
    """Parse (and by default verify) the text of a .tile file."""
    module = Parser(text, filename).parse_module()
    if verify:
        from tfx.ir.verify import verify_module
        verify_module(module, text.split("\n"))
    return module


def parse_file(path: str | Path, verify: bool = True) -> Module:
    try:
        text = read_text_file(path, expected="a .tile file")
    except TfxError as err:          # kernels/gemm.tile outside the repository: say where tfx's copy is
        from tfx.bundled import missing_kernel_notes
        err.notes += missing_kernel_notes(path)
        raise
    return parse_text(text, str(path), verify)
