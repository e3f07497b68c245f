"""Scalar dtypes as TileLang spells them, with their numpy storage, C name and limits.

bfloat16 has no numpy dtype: it is stored in float32 arrays whose values are kept on the
bfloat16 grid by `DType.quantize` (round to nearest even on the upper 16 bits)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    name: str
    kind: str        # "bool" | "int" | "uint" | "float"
    bits: int
    np_name: str     # numpy storage dtype
    c_name: str

    @property
    def np(self) -> np.dtype:
        return np.dtype(self.np_name)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        """Integer in the arithmetic sense (bool excluded)."""
        return self.kind in ("int", "uint")

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def unit_roundoff(self) -> float:
        """u = 2^-p for a p-bit significand (0 for exact integer dtypes)."""
        return 2.0 ** -_SIGNIFICAND_BITS[self.name] if self.is_float else 0.0

    @property
    def lowest(self):
        if self.is_float:
            return -float("inf")
        if self.is_bool:
            return False
        return int(np.iinfo(self.np).min)

    @property
    def highest(self):
        if self.is_float:
            return float("inf")
        if self.is_bool:
            return True
        return int(np.iinfo(self.np).max)

    @property
    def finite_max(self):
        """T.max_value: the largest finite value."""
        if self.name == "bfloat16":
            return float.fromhex("0x1.fep127")
        if self.is_float:
            return float(np.finfo(self.np).max)
        return self.highest

    @property
    def smallest_normal(self) -> float:
        """The least positive normal value of a float dtype (bfloat16 has float32's
        exponent range)."""
        return float(np.finfo(np.float32 if self.name == "bfloat16" else self.np).tiny)

    @property
    def finite_min(self):
        """T.min_value: the most negative finite value."""
        if self.is_float:
            return -self.finite_max
        return self.lowest

    @property
    def all_ones(self):
        if self.kind == "uint":
            return (1 << self.bits) - 1
        if self.kind == "int":
            return -1
        return True

    def quantize(self, values: np.ndarray) -> np.ndarray:
        """Values converted to this dtype (wrapping integers, rounding floats)."""
        arr = np.asarray(values)
        if self.is_int and arr.dtype.kind == "f":
            # C semantics: truncate toward zero, then wrap; non-finite values become 0
            arr = np.where(np.isfinite(arr), np.trunc(arr), 0).astype(np.int64)
        if self.is_int and arr.dtype.kind in "iub":
            return arr.astype(np.int64).astype(self.np) if arr.dtype != self.np else arr
        if self.name == "bfloat16":
            if arr.dtype == np.float64:
                return _round_to_bfloat16(_float32_round_to_odd(arr))
            return _round_to_bfloat16(arr.astype(np.float32))
        return arr.astype(self.np)

    def __str__(self) -> str:
        return self.name


def _float32_round_to_odd(values: np.ndarray) -> np.ndarray:
    """float64 → float32 rounded to odd: truncate, then set the last bit if inexact.
    Rounding that result to bfloat16 equals rounding the float64 directly (no double
    rounding), as CUDA's __double2bfloat16 does."""
    with np.errstate(over="ignore"):
        nearest = values.astype(np.float32)
    too_far = np.isfinite(values) & (np.abs(nearest.astype(np.float64)) > np.abs(values))
    truncated = np.where(too_far, np.nextafter(nearest, np.float32(0)), nearest)
    inexact = np.isfinite(values) & (truncated.astype(np.float64) != values)
    bits = np.ascontiguousarray(truncated, dtype=np.float32).view(np.uint32)
    return (bits | inexact.astype(np.uint32)).view(np.float32)


def _round_to_bfloat16(values: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    finite = np.isfinite(values)
    rounded = np.where(finite, (bits + rounding) & np.uint32(0xFFFF0000),
                       bits & np.uint32(0xFFFF0000))
    return rounded.astype(np.uint32).view(np.float32)


# p, the significand's precision in bits (the implicit leading bit included)
_SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}

_ALL = [
    DType("bool", "bool", 8, "bool", "bool"),
    DType("int8", "int", 8, "int8", "signed char"),
    DType("int16", "int", 16, "int16", "short"),
    DType("int32", "int", 32, "int32", "int"),
    DType("int64", "int", 64, "int64", "long long"),
    DType("uint8", "uint", 8, "uint8", "unsigned char"),
    DType("uint16", "uint", 16, "uint16", "unsigned short"),
    DType("uint32", "uint", 32, "uint32", "unsigned int"),
    DType("uint64", "uint", 64, "uint64", "unsigned long long"),
    DType("float16", "float", 16, "float16", "half"),
    DType("bfloat16", "float", 16, "float32", "__nv_bfloat16"),
    DType("float32", "float", 32, "float32", "float"),
    DType("float64", "float", 64, "float64", "double"),
]

DTYPES: dict[str, DType] = {d.name: d for d in _ALL}
# TileLang's short spellings ("float", "half", ...) and a few common aliases
_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32",
            "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64",
            "float16_t": "float16", "bool_": "bool"}

BOOL = DTYPES["bool"]
INT32 = DTYPES["int32"]
INT64 = DTYPES["int64"]
FLOAT32 = DTYPES["float32"]
FLOAT64 = DTYPES["float64"]


def lookup(name: str) -> DType | None:
    """The dtype a TileLang name denotes, or None."""
    return DTYPES.get(name) or DTYPES.get(_ALIASES.get(name, ""))


def promote(a: DType, b: DType) -> DType:
    """Result dtype of a binary arithmetic op on two strongly typed operands (C-like:
    a float beats an integer, wider beats narrower, unsigned beats signed at equal width)."""
    if a == b:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            if a.bits != b.bits:
                return a if a.bits > b.bits else b
            return FLOAT32  # float16 with bfloat16: TVM refuses; compute in float32
        return a if a.is_float else b
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if a.kind == "uint" else b


def converts_exactly(src: DType, dst: DType) -> bool:
    """Whether every value of src is representable in dst (the R210 rule)."""
    if src == dst or src.is_bool:
        return True
    if dst.is_float:
        if src.is_float:
            if src.name == "bfloat16":
                return dst.name in ("float32", "float64")
            if src.name == "float16":
                return dst.name in ("float32", "float64")
            return dst.bits >= src.bits and dst.name != "bfloat16"
        # an integer fits when its magnitude fits the significand
        return src.bits - (1 if src.kind == "int" else 0) <= _SIGNIFICAND_BITS[dst.name]
    if src.is_float or dst.is_bool:
        return False
    if src.kind == dst.kind:
        return dst.bits >= src.bits
    if src.kind == "uint":  # unsigned into signed needs one more bit
        return dst.bits > src.bits
    return False  # signed into unsigned loses negatives
