"""Scalar dtypes as TileLang spells them, with their numpy storage, C name and limits.

bfloat16 and the float8 dtypes have no numpy dtype of their own: they are stored in
float32 arrays whose values are kept on their grid by `DType.quantize` (bfloat16: round to
nearest even on the upper 16 bits; float8: ml_dtypes' rounding to nearest even, then the
GPU's saturation, docs/semantics.md §8)."""
from __future__ import annotations

import functools

from dataclasses import dataclass
from functools import cached_property

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

    @cached_property
    def emulated(self) -> bool:
        """A float kept in wider storage (bfloat16, float8 in float32): every value
        stored must pass `quantize`, an array of the storage dtype is no proof. Cached:
        the interpreter asks it of every operand (interp.evaluate.stored)."""
        return self.is_float and self.np.itemsize * 8 != self.bits

    @property
    def is_float8(self) -> bool:
        return self.name in _FLOAT8_NAMES

    @property
    def saturates(self) -> bool:
        """Whether a float converted into this dtype saturates at ±finite_max instead of
        overflowing to ±inf: the float8 dtypes, which TileLang's CUDA converts with
        `cvt.rn.satfinite` (docs/semantics.md §8)."""
        return self.is_float8

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
        if self.is_float8:
            return float(_finfo8(self.name).max)
        if self.is_float:
            return float(np.finfo(self.np).max)
        return self.highest

    @property
    def smallest_normal(self) -> float:
        """The least positive normal value of a float dtype (bfloat16 has float32's
        exponent range)."""
        if self.is_float8:
            return float(_finfo8(self.name).tiny)
        return float(np.finfo(np.float32 if self.name == "bfloat16" else self.np).tiny)

    @property
    def smallest_subnormal(self) -> float:
        """The least positive value of a float dtype."""
        return self.smallest_normal * 2.0 ** (1 - _SIGNIFICAND_BITS[self.name])

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

    @property
    def saturation(self) -> tuple[int, int]:
        """The range a float → integer conversion to this dtype clamps to before it
        wraps to the width: the dtype's own range for 32- and 64-bit integers, the
        32-bit range of the same signedness for 8- and 16-bit ones (CUDA converts
        through int/unsigned int, then keeps the low bits; docs/semantics.md §8)."""
        if self.bits >= 32:
            return self.lowest, self.highest
        wide = DTYPES["int32" if self.kind == "int" else "uint32"]
        return wide.lowest, wide.highest

    def nan_to_int(self, source: "DType") -> int:
        """What NaN converts to: 0 from a 16- or 32-bit float into a 32-bit (or
        narrower) integer; the bit pattern 100…0 of the conversion's width otherwise
        (a 64-bit integer, or float64 into a 32-bit one), wrapped to this dtype — the
        H200 under CUDA 13.0 (docs/decisions.md, "Float → integer conversions")."""
        width = 64 if self.bits == 64 else 32
        if width == 32 and source.bits < 64:
            return 0
        pattern = 1 << (width - 1)
        return wrap_int(pattern, self)

    def quantize(self, values: np.ndarray) -> np.ndarray:
        """Values converted to this dtype as TileLang's CUDA converts them on the GPU
        (docs/semantics.md §8): integers wrap; floats into integers truncate, saturate
        and wrap (`float_to_int`); anything into float16/bfloat16 goes through float32
        (TileLang prints `half_t(x)`/`bfloat16_t(x)`, which convert a float), and an
        integer into bfloat16 is then truncated, as cutlass does; anything into a
        float8 dtype goes through float32 too (cutlass's float_e4m3_t(double) and (int)
        convert float(x)) and then rounds to nearest even, saturating (`_to_float8`);
        other conversions round to nearest even."""
        arr = np.asarray(values)
        if self.is_int and arr.dtype.kind == "f":
            return float_to_int(arr, self)
        if self.is_int and arr.dtype.kind in "iub":
            return arr.astype(np.int64).astype(self.np) if arr.dtype != self.np else arr
        if self.is_bool:
            return arr.astype(bool)
        with np.errstate(over="ignore"):
            if self.is_float8:
                wide = arr if arr.dtype == np.float32 else arr.astype(np.float32)
                return _to_float8(wide, self)
            if self.bits == 16:
                wide = arr if arr.dtype == np.float32 else arr.astype(np.float32)
                if self.name == "bfloat16" and arr.dtype.kind in "iub":
                    # cutlass's bfloat16_t(int) keeps the upper 16 bits of float(x):
                    # toward zero, not to nearest (the H200 gives 65280 for 65519)
                    bits = wide.view(np.uint32) & np.uint32(0xFFFF0000)
                    return bits.view(np.float32)
                if self.name == "bfloat16":
                    return _round_to_bfloat16(wide)
                return _canonical_nan(wide.astype(np.float16))
            return arr.astype(self.np)

    def __str__(self) -> str:
        return self.name


def _canonical_nan(half: np.ndarray) -> np.ndarray:
    """float16 values with every NaN made 0x7FFF, the NaN __float2half gives."""
    nan = np.isnan(half)
    if not nan.any():
        return half
    return np.where(nan, np.uint16(0x7FFF).view(np.float16), half)


def wrap_int(value: int, dtype: DType) -> int:
    """An exact integer wrapped to dtype's width in two's complement."""
    value &= (1 << dtype.bits) - 1
    if dtype.kind == "int" and value >> (dtype.bits - 1):
        value -= 1 << dtype.bits
    return value


def float_to_int(values: np.ndarray, dtype: DType) -> np.ndarray:
    """Floats converted to an integer dtype as the GPU does: truncate toward zero,
    clamp to `dtype.saturation` (±inf too), wrap to the width; NaN is
    `dtype.nan_to_int`. Exact at every magnitude: the clamp happens in float64,
    where both ends of every saturation range are exact, and no value reaches int64
    or uint64 unless it fits."""
    source = DTYPES["float64" if values.dtype == np.float64 else "float32"]
    x = values.astype(np.float64)
    lo, hi = dtype.saturation
    with np.errstate(invalid="ignore"):
        t = np.trunc(x)
        nan = np.isnan(x)
        below = t <= float(lo)                  # lo and hi + 1 are 0 or ±2**k
        above = t >= float(hi + 1)
    inside = np.where(nan | below | above, 0.0, t)
    if hi < 2 ** 63:
        out = inside.astype(np.int64)
        out[below] = lo
        out[above] = hi
        out[nan] = dtype.nan_to_int(source) if dtype.bits < 64 else -2 ** 63
        return out.astype(dtype.np)
    # uint64: [2**63, 2**64) does not fit int64; convert its offset from 2**63
    big = inside >= 2.0 ** 63
    out = np.where(big, inside - 2.0 ** 63, inside).astype(np.int64).astype(np.uint64)
    out[big] += np.uint64(2 ** 63)
    out[above] = np.uint64(hi)
    out[below] = np.uint64(0)
    out[nan] = np.uint64(2 ** 63)
    return out


def _round_to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest even on the upper 16 bits), kept in
    float32. NaN becomes the canonical NaN 0x7FFF, as CUDA's __float2bfloat16 gives
    for every NaN (masking a NaN whose payload sits in the low bits would make ±inf)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    finite = np.isfinite(values)
    rounded = np.where(finite, (bits + rounding) & np.uint32(0xFFFF0000),
                       bits & np.uint32(0xFFFF0000))
    rounded = np.where(np.isnan(values), np.uint32(0x7FFF0000), rounded)
    return rounded.astype(np.uint32).view(np.float32)


def _to_float8(values: np.ndarray, dtype: DType) -> np.ndarray:
    """float32 values converted to a float8 dtype as the GPU converts them, kept in
    float32: round to nearest even (subnormals kept, the sign of zero kept) as ml_dtypes
    rounds; a magnitude past the largest finite value, ±inf included, saturates to
    ±finite_max (`cvt.rn.satfinite`, which cutlass's float_e4m3_t(float) and CUDA's
    __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) execute on sm_89 and later, where
    ml_dtypes would give NaN or inf); NaN stays NaN."""
    top = np.float32(dtype.finite_max)
    with np.errstate(invalid="ignore"):
        clamped = np.clip(values, -top, top)        # NaN passes through np.clip
        rounded = clamped.astype(_float8_format(dtype.name)).astype(np.float32)
    return rounded


def float8_bits(values: np.ndarray, dtype: DType) -> np.ndarray:
    """The uint8 bit patterns of float8 values (on the grid already: `quantize`d)."""
    return np.asarray(values, np.float32).astype(_float8_format(dtype.name)).view(np.uint8)


def float8_from_bits(bits: np.ndarray, dtype: DType) -> np.ndarray:
    """uint8 bit patterns read as float8 values, in float32 storage."""
    raw = np.ascontiguousarray(bits).view(np.uint8)
    return raw.view(_float8_format(dtype.name)).astype(np.float32)


# p, the significand's precision in bits (the implicit leading bit included)
_SIGNIFICAND_BITS = {"float8_e4m3fn": 4, "float8_e5m2": 3, "float16": 11, "bfloat16": 8,
                     "float32": 24, "float64": 53}

# The float8 dtypes modelled. Each rounds like an ml_dtypes type (their overflow differs:
# `_to_float8` saturates first), loaded on first use: ml_dtypes takes half a second to
# import, which every check of a program without float8 would pay.
_FLOAT8_NAMES = frozenset({"float8_e4m3fn", "float8_e5m2"})


@functools.cache
def _float8_format(name: str) -> np.dtype:
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, name))

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
    DType("float8_e4m3fn", "float", 8, "float32", "__nv_fp8_e4m3"),
    DType("float8_e5m2", "float", 8, "float32", "__nv_fp8_e5m2"),
    DType("float16", "float", 16, "float16", "half"),
    DType("bfloat16", "float", 16, "float32", "__nv_bfloat16"),
    DType("float32", "float", 32, "float32", "float"),
    DType("float64", "float", 64, "float64", "double"),
]

DTYPES: dict[str, DType] = {d.name: d for d in _ALL}
# TileLang's short spellings ("float", "half", ...) and a few common aliases
_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32",
            "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64",
            "float16_t": "float16", "bool_": "bool",
            # TVM's float8_e4m3 is IEEE-like (infinities, largest 240), but TileLang's CUDA
            # prints fp8_e4_t (cutlass's float_e4m3_t, the e4m3fn format) for it and hands
            # it torch.float8_e4m3fn: on the GPU it is float8_e4m3fn
            "float8_e4m3": "float8_e4m3fn"}

BOOL = DTYPES["bool"]
INT32 = DTYPES["int32"]
INT64 = DTYPES["int64"]
FLOAT32 = DTYPES["float32"]
FLOAT64 = DTYPES["float64"]


def lookup(name: str) -> DType | None:
    """The dtype a TileLang name denotes, or None."""
    return DTYPES.get(name) or DTYPES.get(_ALIASES.get(name, ""))


# TileLang dtypes we do not model, each with why: a program that names one is refused
# with this reason (R102), never as an unknown name or a non-constant dtype.
_FNUZ = ("the fnuz float8 formats (one NaN, no negative zero) are AMD's: CUDA has no such "
         "type and TileLang's CUDA backend does not print them; float8_e4m3fn and "
         "float8_e5m2 are supported")
REFUSED_DTYPES: dict[str, str] = {
    **{n: _FNUZ for n in ("float8_e4m3fnuz", "float8_e5m2fnuz")},
    "float8_e8m0fnu": ("float8_e8m0fnu (a power-of-two scale format, exponent only) is not "
                       "modelled; float8_e4m3fn and float8_e5m2 are supported"),
    **{n: "4-bit floats (packed two to a byte) are not modelled"
       for n in ("float4_e2m1fn", "float4_e2m1fnx2")},
    "int4": "4-bit integers (packed two to a byte) are not modelled",
    "tfloat32": "tfloat32 (a tensor-core input format) is not modelled",
}


@dataclass(frozen=True)
class RefusedDType:
    """What a refused dtype's name folds to: a compile-time value like any dtype (so
    `dtype = T.float8_e4m3fn` is a constant), refused with its reason wherever it is
    used as a dtype."""
    name: str

    @property
    def message(self) -> str:
        return refused_dtype(self.name)

    def __repr__(self) -> str:          # as other messages quote it: T.float8_e4m3fn
        return f"T.{self.name}"


def refused_dtype(name: str) -> str | None:
    """The refusal message for a TileLang dtype we do not model, or None."""
    reason = REFUSED_DTYPES.get(name)
    if reason is None:
        return None
    return f"the dtype {name} is not supported: {reason} (docs/limits.md)"


def promote(a: DType, b: DType) -> DType:
    """Result dtype of a binary arithmetic op on two strongly typed operands (C-like:
    a float beats an integer, wider beats narrower, unsigned beats signed at equal width)."""
    if a == b:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            if a.bits != b.bits:
                return a if a.bits > b.bits else b   # float8 with float32 is float32
            # float16 with bfloat16, float8_e4m3fn with float8_e5m2: TVM refuses;
            # compute in float32
            return FLOAT32
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
            # every value fits when dst has at least the precision and both ends of
            # the range (float8 into float16, bfloat16 and wider; float16 and bfloat16
            # only into float32 and float64)
            return _SIGNIFICAND_BITS[dst.name] >= _SIGNIFICAND_BITS[src.name] and \
                dst.finite_max >= src.finite_max and \
                dst.smallest_subnormal <= src.smallest_subnormal
        # an integer fits when its magnitude fits the significand
        return src.bits - (1 if src.kind == "int" else 0) <= _SIGNIFICAND_BITS[dst.name]
    if src.is_float or dst.is_bool:
        return False
    if src.kind == dst.kind:
        return dst.bits >= src.bits
    if src.kind == "uint":  # unsigned into signed needs one more bit
        return dst.bits > src.bits
    return False  # signed into unsigned loses negatives


def _finfo8(name: str):
    import ml_dtypes
    return ml_dtypes.finfo(_float8_format(name))
