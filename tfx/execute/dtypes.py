"""How the executor stores and rounds each element type.

Every tile value is a numpy array whose elements are exactly representable in
the value's dtype: float types narrower than 32 bits (bf16, f16, fp8, fp4) and
tf32 are held in float32 after rounding to the nearest value of the dtype
(round to nearest even, saturating to the largest finite value where the format
has no infinity, as the hardware converters do); f64 in float64; integers in
their own width (int8, int32, int64; int4 in int8, wrapped to -8..7), so
arithmetic wraps as on the device; bool as numpy bool. The narrow float formats come from ml_dtypes, which
implements them bit-exactly (the same library JAX and TensorFlow use).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tfx.ir.types import DType

# Formats ml_dtypes rounds for us; tf32 is rounded by hand (10 mantissa bits).
_NARROW = {
    DType.BF16: ml_dtypes.bfloat16,
    DType.F16: np.float16,
    DType.FP8E4M3: ml_dtypes.float8_e4m3fn,
    DType.FP8E5M2: ml_dtypes.float8_e5m2,
    DType.FP4E2M1: ml_dtypes.float4_e2m1fn,
}

_INTS = {"int4": np.int8, "int8": np.int8, "int32": np.int32, "int64": np.int64, "i64": np.int64}
# int4 is held in int8; its own range is -8..7 (a 4-bit two's-complement code)
_INT4_RANGE = (-8, 7)

# Machine epsilon (distance from 1 to the next value) of each float format:
# 2^-(explicit mantissa bits).
EPSILON = {
    DType.F64: 2.0 ** -52,
    DType.F32: 2.0 ** -23,
    DType.TF32: 2.0 ** -10,
    DType.BF16: 2.0 ** -7,
    DType.F16: 2.0 ** -10,
    DType.FP8E4M3: 2.0 ** -3,
    DType.FP8E5M2: 2.0 ** -2,
    DType.FP4E2M1: 2.0 ** -1,
}


def storage(dtype: DType):
    """The numpy dtype a value of ``dtype`` is held in."""
    if dtype.family == "float":
        return np.float64 if dtype == DType.F64 else np.float32
    if dtype.family == "bool":
        return np.bool_
    return _INTS.get(dtype.text, np.int64)


def is_int(dtype: DType) -> bool:
    return dtype.family == "int"


def epsilon(dtype: DType) -> float:
    """Relative rounding step of a float dtype; 0 for integers and bool (exact)."""
    return EPSILON.get(dtype, 0.0)


def _round_tf32(x: np.ndarray) -> np.ndarray:
    """Round float32 to 10 explicit mantissa bits, nearest even (what cvt.rna.tf32 keeps)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    finite = np.isfinite(x)
    lsb = (bits >> 13) & 1
    rounded = ((bits + 0xFFF + lsb) & 0xFFFFE000).astype(np.uint32)
    return np.where(finite, rounded.view(np.float32), x)


def round_to(dtype: DType, x) -> np.ndarray:
    """``x`` (any numeric array) as values of ``dtype``, in its storage type.

    Floats round to nearest; narrow formats without infinities (fp8e4m3, fp4)
    saturate to their largest finite magnitude. Float to integer truncates toward
    zero and saturates to the type's range, NaN giving 0 (PTX ``cvt.rzi.sat``).
    """
    x = np.asarray(x)
    if dtype.family == "float":
        if dtype == DType.F64:
            return x.astype(np.float64)
        x32 = x.astype(np.float32)
        if dtype == DType.F32:
            return x32
        if dtype == DType.TF32:
            return _round_tf32(x32)
        narrow = _NARROW[dtype]
        if dtype in (DType.FP8E4M3, DType.FP4E2M1):
            limit = float(ml_dtypes.finfo(narrow).max)
            x32 = np.where(np.isnan(x32), x32, np.clip(x32, -limit, limit)).astype(np.float32)
        return x32.astype(narrow).astype(np.float32)
    if dtype.family == "bool":
        return x != 0
    target = storage(dtype)
    lo, hi = _INT4_RANGE if dtype == DType.INT4 else (np.iinfo(target).min, np.iinfo(target).max)
    if x.dtype.kind == "f":
        t = np.trunc(np.nan_to_num(x, nan=0.0))
        return np.clip(t, lo, hi).astype(target)
    if dtype == DType.INT4:
        # integers wrap to their low 4 bits, as a packed code does
        return ((x.astype(np.int64) - lo) % 16 + lo).astype(target)
    return x.astype(target)
