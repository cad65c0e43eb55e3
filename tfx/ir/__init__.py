"""The tile IR: expressions, types, kernels, regions with explicit captures, ops."""

from tfx.ir.expr import BinOp, Call, Const, Expr, Name, Neg
from tfx.ir.nodes import (AxisSlice, Capture, Composite, Domain, Kernel, LoopRegion, MeshRegion,
                          Module, Op, Param, Scalar, Tensor, TripCount, ValueRef, Window, walk,
                          walk_ops)
from tfx.ir.types import DTYPES, DType, TileType

__all__ = [n for n in dir() if not n.startswith("_")]
