"""The op catalogue: which opcodes exist, their arity class and cost class.

Cost classes (docs/language.md, docs/analysis.md):
  movement  - moves bytes between storage levels (load, copy, store, gather windows)
  mma       - 2*M*N*K flops at the operand dtype's tensor-core rate
  vector    - one flop per output element on the vector unit
  special   - one special-function op per output element (exp, rsqrt, ...)
  reduce    - one flop per input element on the vector unit
  view      - no data movement, no work (reshape, transpose, broadcast)
  init      - writes its result's bytes at its level (zeros, fill)
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
REDUCE = {"reduce"}
REDUCE_KINDS = {"sum", "max", "min"}
CAST = {"cast"}
INIT = {"zeros", "fill"}
VIEWS = {"reshape", "transpose", "broadcast"}
CALL = {"call"}
COLLECTIVES = {"send", "recv", "allreduce"}

ALL_OPCODES = (MOVEMENT | MMA | UNARY | BINARY | REDUCE | CAST | INIT | VIEWS | CALL
               | COLLECTIVES)

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
