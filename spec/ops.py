"""The one op/monoid table: the interpreter, the Z3 encoder and the CUDA renderer all
read the combine operation, identity and properties of a reducer op from here. A program's
own ops (`@T.reducer_op`) are entries of the same type, built from their declaration by
spec.user_ops and reached through the reducer (`reducer_monoid`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .dtypes import DType


class SignedZeroExtremum:
    """np.fmax / np.fmin with the signed zeros of IEEE 754-2019 maximumNumber and
    minimumNumber: NaN is ignored and +0 > -0, so max(-0, +0) is +0 and min(-0, +0)
    is -0 in either order. That is what CUDA's fmaxf/fminf/fmax/fmin/__hmax/__hmin
    give on the H200 (docs/decisions.md, "Signed zeros in max and min"); np.fmax
    returns its first operand for two zeros. Called like a ufunc, with the
    .at/.reduce/.accumulate that the reducers use."""

    def __init__(self, ufunc, name: str):
        self.ufunc = ufunc
        self.__name__ = name
        self.is_max = ufunc is np.fmax

    def _winner(self, values):
        """Where values hold the zero that wins a tie of zeros (+0 for max, -0 for min)."""
        sign = np.signbit(values)
        return (values == 0) & (~sign if self.is_max else sign)

    def _settle(self, result, winner_seen):
        zero = np.zeros_like(result)
        return np.where((result == 0) & winner_seen, zero if self.is_max else -zero, result)

    def __call__(self, a, b):
        result = self.ufunc(a, b)
        return self._settle(result, self._winner(a) | self._winner(b))

    def reduce(self, terms, axis=0, dtype=None):
        result = self.ufunc.reduce(terms, axis=axis, dtype=dtype)
        return self._settle(result, self._winner(terms).any(axis=axis))

    def accumulate(self, terms, axis=0, dtype=None):
        result = self.ufunc.accumulate(terms, axis=axis, dtype=dtype)
        return self._settle(result, np.logical_or.accumulate(self._winner(terms), axis=axis))

    def at(self, acc, index, values):
        seen = self._winner(acc)
        self.ufunc.at(acc, index, values)
        np.logical_or.at(seen, index, self._winner(np.asarray(values)))
        acc[...] = self._settle(acc, seen)


IEEE_MAX = SignedZeroExtremum(np.fmax, "maximum")
IEEE_MIN = SignedZeroExtremum(np.fmin, "minimum")


class NanPropagatingExtremum(SignedZeroExtremum):
    """SignedZeroExtremum where a NaN operand makes the result NaN: TileLang's
    MaxOpNan/MinOpNan, CUDA's __hmax_nan/__hmin_nan, which `T.reduce_max(...,
    nan_propagate=True)` uses into a float16/bfloat16 destination."""

    def __call__(self, a, b):
        result = super().__call__(a, b)
        return np.where(np.isnan(a) | np.isnan(b), np.nan, result).astype(result.dtype)

    def reduce(self, terms, axis=0, dtype=None):
        result = super().reduce(terms, axis=axis, dtype=dtype)
        return np.where(np.isnan(terms).any(axis=axis), np.nan, result).astype(result.dtype)

    def accumulate(self, terms, axis=0, dtype=None):
        result = super().accumulate(terms, axis=axis, dtype=dtype)
        seen = np.logical_or.accumulate(np.isnan(terms), axis=axis)
        return np.where(seen, np.nan, result).astype(result.dtype)

    def at(self, acc, index, values):
        nan = np.isnan(acc)
        np.logical_or.at(nan, index, np.isnan(np.asarray(values)))
        super().at(acc, index, values)
        acc[nan] = np.nan


@dataclass(frozen=True)
class Monoid:
    name: str
    ufunc: Callable            # numpy binary ufunc: combine(a, b), with .at/.reduce
    float_ufunc: Callable      # for float operands: max/min ignore NaN and order -0 < +0,
                               # as CUDA's fmaxf/fminf do (SignedZeroExtremum)
    c_template: str            # C expression combining {a} and {b}
    integer_only: bool         # bitwise ops need integer dtypes
    idempotent: bool           # x ⊕ x = x (max/min/and/or): duplicates would hide in values

    @property
    def is_user(self) -> bool:
        """Declared in the program (spec.user_ops), not one of the built-in ops."""
        return False

    def identity(self, dtype: DType):
        """The per-partial identity e with e ⊕ x = x for every x of dtype
        (docs/semantics.md §3)."""
        return {
            "sum": 0,
            "product": 1,
            "max": dtype.lowest,
            "min": dtype.highest,
            "bitand": dtype.all_ones,
            "bitor": 0,
            "bitxor": 0,
        }[self.name]

    def supports(self, dtype: DType) -> bool:
        return not (self.integer_only and not dtype.is_int)

    def combine(self, dtype: DType, a, b):
        """a ⊕ b on numpy values of dtype, the result in dtype (integers wrap)."""
        fn = self.float_ufunc if dtype.is_float else self.ufunc
        return dtype.quantize(fn(np.asarray(a, dtype.np), np.asarray(b, dtype.np)))

    def c_combine(self, a: str, b: str) -> str:
        return self.c_template.format(a=a, b=b)

    def z3_combine(self, dtype: DType, a, b):
        """a ⊕ b on Z3 terms of dtype: bit-vectors of its width for integers (wrapping,
        unsigned comparisons for unsigned dtypes), reals or floating-point terms for
        floats. The verifier's proofs of the monoid laws read the op from here."""
        import z3
        if self.name == "sum":
            return a + b
        if self.name == "product":
            return a * b
        if self.name in ("max", "min") and z3.is_fp(a):
            return _z3_fp_extremum(self.name == "max", a, b)
        if self.name in ("max", "min"):
            if dtype.kind == "uint":
                pick_a = z3.UGE(a, b) if self.name == "max" else z3.ULE(a, b)
            else:
                pick_a = a >= b if self.name == "max" else a <= b
            return z3.If(pick_a, a, b)
        return {"bitand": a & b, "bitor": a | b, "bitxor": a ^ b}[self.name]


def _z3_fp_extremum(is_max: bool, a, b):
    """max/min of two Z3 floating-point terms as SignedZeroExtremum computes them: a NaN
    operand is ignored, and of two zeros the +0 (max) or the -0 (min) wins."""
    import z3
    pick_a = z3.fpGT(a, b) if is_max else z3.fpLT(a, b)
    zero = z3.If(z3.fpIsNegative(a), b, a) if is_max else z3.If(z3.fpIsNegative(a), a, b)
    return z3.If(z3.fpIsNaN(a), b, z3.If(z3.fpIsNaN(b), a,
                 z3.If(z3.And(z3.fpIsZero(a), z3.fpIsZero(b)), zero,
                       z3.If(pick_a, a, b))))


MONOIDS: dict[str, Monoid] = {m.name: m for m in [
    Monoid("sum", np.add, np.add, "{a} + {b}", False, False),
    Monoid("product", np.multiply, np.multiply, "{a} * {b}", False, False),
    Monoid("max", np.maximum, IEEE_MAX, "max({a}, {b})", False, True),
    Monoid("min", np.minimum, IEEE_MIN, "min({a}, {b})", False, True),
    Monoid("bitand", np.bitwise_and, np.bitwise_and, "{a} & {b}", True, True),
    Monoid("bitor", np.bitwise_or, np.bitwise_or, "{a} | {b}", True, True),
    Monoid("bitxor", np.bitwise_xor, np.bitwise_xor, "{a} ^ {b}", True, False),
]}

# Spellings accepted for `op=` of T.alloc_reducer, mapped to the table's names.
OP_ALIASES: dict[str, str] = {
    "sum": "sum", "add": "sum", "product": "product", "prod": "product", "mul": "product",
    "max": "max", "min": "min", "bitand": "bitand", "and": "bitand", "bitor": "bitor",
    "or": "bitor", "bitxor": "bitxor", "xor": "bitxor",
}


@dataclass(frozen=True)
class ReduceKind:
    """A `T.reduce_*` kind: a monoid plus an optional transform of each element."""
    name: str
    monoid: str
    absolute: bool


REDUCE_KINDS: dict[str, ReduceKind] = {k.name: k for k in [
    ReduceKind("sum", "sum", False), ReduceKind("max", "max", False),
    ReduceKind("min", "min", False), ReduceKind("abssum", "sum", True),
    ReduceKind("absmax", "max", True), ReduceKind("bitand", "bitand", False),
    ReduceKind("bitor", "bitor", False), ReduceKind("bitxor", "bitxor", False),
]}


# `nan_propagate=True` of T.reduce_max/min/absmax into float16/bfloat16: the same op for
# every rule that asks what the op is (named max/min: exact, idempotent, any order), with
# a NaN term making the result NaN, in numpy and in C (the runtime's reducer_max_nan)
NAN_PROPAGATING: dict[str, Monoid] = {m.name: m for m in [
    Monoid("max", np.maximum, NanPropagatingExtremum(np.fmax, "maximum_nan"),
           "reducer_max_nan({a}, {b})", False, True),
    Monoid("min", np.minimum, NanPropagatingExtremum(np.fmin, "minimum_nan"),
           "reducer_min_nan({a}, {b})", False, True),
]}
NAN_DTYPES = ("float16", "bfloat16")       # where TileLang's use_nan_op applies


def reduce_monoid(stmt) -> Monoid:
    """The op a T.reduce_* statement (spec.ir.Reduce) combines with."""
    name = REDUCE_KINDS[stmt.kind].monoid
    if stmt.nan_propagate:
        return NAN_PROPAGATING[name]
    return MONOIDS[name]


def monoid(name: str) -> Monoid:
    return MONOIDS[OP_ALIASES.get(name, name)]


def reducer_monoid(info) -> Monoid | None:
    """The op of a reducer (a spec.ir.ReducerInfo): its user-declared op
    (spec.user_ops.UserMonoid) or the built-in one its name denotes; None for a name
    that denotes neither (R212)."""
    if info.user is not None:
        return info.user
    return MONOIDS.get(OP_ALIASES.get(info.op, info.op))
