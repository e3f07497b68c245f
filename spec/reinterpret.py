"""`T.reinterpret(value, dtype)`: the bits of a value read as another dtype of the same
width (TVM's `tir.reinterpret`; TileLang's CUDA prints `*(T *)(&x)`).

This module is the one place that says which reinterpretations exist and what they
mean; the frontend, the interpreter (and through it the simulator), the CUDA renderer
and the static checks all ask it.

- The widths must be equal (TVM: "Reinterpret requires size match"). bool has no width
  another dtype shares (TVM's bool is 1 bit), so it is refused too.
- The meaning is the storage bits: every dtype's value is turned into the unsigned
  integer of its width (`to_bits`) and that integer into the target (`from_bits`).
  bfloat16 and the float8 dtypes live in float32 arrays on their grid
  (spec.dtypes.DType.quantize): a bfloat16's bits are the upper half of the float32's,
  a float8's are ml_dtypes' encoding of the value.
- Between two integer dtypes a reinterpretation is the two's-complement conversion to
  the same width: exactly what the integer conversion (`DType.quantize`) does, which is
  how Z3 and the interval analyses model it (`is_integer_wrap`).
- What is not modelled: the bits of a NaN (its sign and payload depend on the operation
  that made it, and numpy's NaNs are not the GPU's), so those lanes are not judged
  (`nan_lanes`); and a float8_e5m2 infinity, which float8 values are modelled without
  (docs/semantics.md §8): producing one is an error (`unmodelled_float8`)."""
from __future__ import annotations

import numpy as np

from .dtypes import DTYPES, DType, float8_bits, float8_from_bits

NAME = "reinterpret"            # the ir.Call func of a reinterpretation


def refusal(src: DType, dst: DType) -> str | None:
    """Why `T.reinterpret` of a src value as dst has no meaning, or None."""
    if src.is_bool or dst.is_bool:
        return (f"T.reinterpret between {src} and {dst} is not supported: bool has no "
                f"bit width another dtype shares (TVM's bool is 1 bit)")
    if src.bits != dst.bits:
        return (f"T.reinterpret needs two dtypes of one width: {src} has {src.bits} bits, "
                f"{dst} has {dst.bits} (TVM: \"Reinterpret requires size match\"); "
                f"convert with T.cast first")
    return None


def bits_dtype(dtype: DType) -> DType:
    """The unsigned integer dtype of dtype's width: what its bits are read as."""
    return DTYPES[f"uint{dtype.bits}"]


def is_integer_wrap(src: DType, dst: DType) -> bool:
    """Whether reinterpreting src as dst is the integer conversion (both integers)."""
    return src.is_int and dst.is_int


def to_bits(values: np.ndarray, dtype: DType) -> np.ndarray:
    """The bits of values (in dtype's storage) as the unsigned integer of its width."""
    unsigned = bits_dtype(dtype).np
    arr = np.ascontiguousarray(values)
    if dtype.is_int:
        return arr.astype(dtype.np).view(unsigned)
    if dtype.is_float8:
        return float8_bits(arr, dtype)
    if dtype.name == "bfloat16":
        upper = arr.astype(np.float32).view(np.uint32) >> np.uint32(16)
        return upper.astype(unsigned)
    return arr.astype(dtype.np).view(unsigned)


def from_bits(bits: np.ndarray, dtype: DType) -> np.ndarray:
    """Unsigned integers of dtype's width read as dtype's values, in its storage."""
    raw = np.ascontiguousarray(bits, dtype=bits_dtype(dtype).np)
    if dtype.is_int:
        return raw.view(dtype.np)
    if dtype.is_float8:
        return float8_from_bits(raw, dtype)
    if dtype.name == "bfloat16":
        return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32)
    return raw.view(dtype.np)


def reinterpret(values: np.ndarray, src: DType, dst: DType) -> np.ndarray:
    """values of src with their bits read as dst (refusal(src, dst) is None)."""
    return from_bits(to_bits(values, src), dst)


def nan_lanes(values: np.ndarray, src: DType) -> np.ndarray | None:
    """The lanes whose bits are not modelled: NaNs of a float source. None: none."""
    if not src.is_float:
        return None
    nan = np.isnan(values)            # in its own storage: no cast to quiet a NaN
    return nan if nan.any() else None


def unmodelled_float8(values: np.ndarray, dst: DType) -> int | None:
    """The bits of the first infinite float8 value among values (of dst), or None:
    float8 values are modelled without infinities, and only float8_e5m2 has them."""
    if not dst.is_float8:
        return None
    inf = np.isinf(np.asarray(values, dtype=np.float32))
    if not inf.any():
        return None
    return int(to_bits(values[inf][:1], dst)[0])
