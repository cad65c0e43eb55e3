"""The op catalogue: which opcodes exist, their arity class and cost class.

Cost classes (docs/language.md, docs/analysis.md):
  movement  - moves bytes between storage levels (load, copy, store, gather windows)
  mma       - 2*M*N*K flops at the operand dtype's tensor-core rate
  vector    - one flop per output element on the vector unit
  compare   - one comparison per output element (lt le gt ge eq ne), on the vector unit
  select    - one selection per output element (select), on the vector unit
  special   - one special-function op per output element (exp, rsqrt, ...)
  reduce    - one flop per input element on the vector unit
  view      - no data movement, no work (reshape, transpose, broadcast, return)
  init      - writes its result's bytes at its level (zeros, fill, iota)
  call      - the callee's costs, inlined
  collective- bytes over links between mesh positions
"""

from __future__ import annotations

MOVEMENT = {"load", "copy", "store"}
MMA = {"mma", "dot"}
UNARY_VECTOR = {"neg", "abs", "relu", "sq"}
UNARY_SPECIAL = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "recip", "silu", "gelu",
                 "sigmoid", "tanh"}
UNARY = UNARY_VECTOR | UNARY_SPECIAL
BINARY = {"add", "sub", "mul", "div", "max", "min", "pow"}
# Comparisons give a bool tile; select picks elementwise between two operands by a bool tile.
COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}
SELECT = {"select"}
REDUCE = {"reduce"}
REDUCE_KINDS = {"sum", "max", "min"}
CAST = {"cast"}
INIT = {"zeros", "fill", "iota"}
# `return %v` (a called kernel's last statement) is free like a view: it names the value the
# call produces, moving nothing.
VIEWS = {"reshape", "transpose", "broadcast", "return"}
CALL = {"call"}
COLLECTIVES = {"send", "recv", "allreduce"}

ALL_OPCODES = (MOVEMENT | MMA | UNARY | BINARY | COMPARE | SELECT | REDUCE | CAST | INIT | VIEWS
               | CALL | COLLECTIVES)

# Elementwise ops: one result element per element of their (equal-shaped) tile operands.
ELEMENTWISE = UNARY | BINARY | COMPARE | SELECT | CAST

# Work kinds of counted flops (the third part of a ("flops", dtype, kind) key) and the
# engine that prices each: comparisons and selections are lane operations of the
# vector unit, counted apart so a report shows what masking costs.
WORK_ENGINE = {"tensor": "tensor", "vector": "vector", "special": "special",
               "compare": "vector", "select": "vector"}


def work_engine(kind: str) -> str:
    """The compute engine (profile ``compute.<engine>``) that prices work of ``kind``."""
    return WORK_ENGINE.get(kind, kind)

# Ops that are costed on the special-function unit; everything else elementwise is vector work.
SPECIAL = UNARY_SPECIAL


def cost_class(opcode: str) -> str:
    if opcode in MOVEMENT:
        return "movement"
    if opcode in MMA:
        return "mma"
    if opcode in UNARY_SPECIAL:
        return "special"
    if opcode in UNARY_VECTOR or opcode in BINARY or opcode in CAST:
        return "vector"
    if opcode in COMPARE:
        return "compare"
    if opcode in SELECT:
        return "select"
    if opcode in REDUCE:
        return "reduce"
    if opcode in VIEWS:
        return "view"
    if opcode in INIT:
        return "init"
    if opcode in CALL:
        return "call"
    if opcode in COLLECTIVES:
        return "collective"
    raise KeyError(opcode)
