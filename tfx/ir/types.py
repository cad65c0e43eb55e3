"""Element types and tile types."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tfx.ir.expr import Expr, to_text


class DType(Enum):
    """Element types with their storage width in bits.

    Packed types count bits, not whole bytes: nine fp4 values take 36 bits,
    which is 5 bytes once rounded up (tfx.analysis.numbers.nbytes).
    """

    F64 = ("f64", 64, "float")
    F32 = ("f32", 32, "float")
    TF32 = ("tf32", 32, "float")   # stored as 32 bits; computes at the tf32 rate
    BF16 = ("bf16", 16, "float")
    F16 = ("f16", 16, "float")
    FP8E4M3 = ("fp8e4m3", 8, "float")
    FP8E5M2 = ("fp8e5m2", 8, "float")
    FP4E2M1 = ("fp4e2m1", 4, "float")
    I64 = ("i64", 64, "int")       # index tensors and offsets past 2^31
    INT32 = ("int32", 32, "int")
    INT8 = ("int8", 8, "int")
    INT4 = ("int4", 4, "int")      # 4-bit codes of weight-only quantisation, packed two per byte
    BOOL = ("bool", 8, "bool")

    def __init__(self, text: str, bits: int, family: str):
        self.text = text
        self.bits = bits
        self.family = family

    def __str__(self) -> str:
        return self.text

    @property
    def is_float(self) -> bool:
        return self.family == "float"


DTYPES = {d.text: d for d in DType}

# Element types an index tile (gather) or a runtime window start may have.
INDEX_DTYPES = (DType.I64, DType.INT32, DType.INT8)

# Accumulator dtypes an mma may produce for each operand dtype.
MMA_ACCUMULATORS = {
    DType.F64: {DType.F64},
    DType.F32: {DType.F32},
    DType.TF32: {DType.F32},
    DType.BF16: {DType.F32},
    DType.F16: {DType.F32, DType.F16},
    DType.FP8E4M3: {DType.F32, DType.F16},
    DType.FP8E5M2: {DType.F32, DType.F16},
    DType.FP4E2M1: {DType.F32},
    DType.INT8: {DType.INT32},
}


@dataclass(frozen=True)
class TileType:
    """A tile's element type, symbolic shape and storage level (None for index scalars)."""

    dtype: DType
    shape: tuple[Expr, ...]
    level: str | None

    def __str__(self) -> str:
        dims = ", ".join(to_text(d) for d in self.shape)
        text = f"{self.dtype}[{dims}]"
        return f"{text} @{self.level}" if self.level else text

    def with_level(self, level: str | None) -> "TileType":
        return TileType(self.dtype, self.shape, level)

    def with_dtype(self, dtype: DType) -> "TileType":
        return TileType(dtype, self.shape, self.level)
