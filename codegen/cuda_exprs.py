"""Logical expressions as C expressions with the interpreter's meaning (interp.evaluate).

Every expression is computed in its own dtype, its operands converted first, exactly as
the interpreter does; the C text carries a precedence so it is parenthesized only where C
needs it. The rules that C does not give for free:

- integers narrower than int are promoted by C, so a result is cast back to its width
  (the interpreter wraps every result to its dtype);
- `/` truncates for integers (C's own), `//` and `%` floor (reducer_floordiv/floormod);
- half, bfloat16 and float8 arithmetic runs in float, each operation rounded back to the
  narrow dtype: numpy does the same, and float holds enough bits (24 >= 2*11 + 2) that
  this double rounding is the correctly rounded narrow result; float8 values convert
  with the runtime header's reducer_to_fp8 (round to nearest even, saturating:
  docs/semantics.md §8), as TileLang's fp8_e4_t(x) does;
- T.max/T.min on floats are fmaxf/fminf (NaN ignored, +0 > -0: spec.ops.IEEE_MAX);
  float to integer conversions are CUDA's saturating __float2int_rz family
  (`float_to_int`), never a C cast, whose out-of-range result is undefined;
- T.reinterpret is CUDA's bit-cast intrinsics (__float_as_uint, __ushort_as_half, ...;
  a float8's bits are its `__x` byte), never a pointer pun;
- a reducer's combine is the op table's `Monoid.c_combine`, never re-listed here."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.dtypes import BOOL, FLOAT32, INT64, DType
from verify_reducer.spec.intrinsics import INTRINSICS
from verify_reducer.spec.operators import (OPERATORS, UNARY_OPERATORS, ExprVisitor,
                                           cast_kind)
from verify_reducer.spec.ops import Monoid
from verify_reducer.spec import reinterpret as R

# C precedence levels (higher binds tighter).
ATOM, UNARY, MUL, ADD, SHIFT, REL, EQ, BAND, BXOR, BOR, LAND, LOR, COND = \
    100, 90, 80, 70, 60, 50, 45, 40, 35, 30, 20, 15, 10

_BINARY_PREC = {"+": ADD, "-": ADD, "*": MUL, "/": MUL, "%": MUL, "<<": SHIFT, ">>": SHIFT,
                "<": REL, "<=": REL, ">": REL, ">=": REL, "==": EQ, "!=": EQ, "&": BAND,
                "^": BXOR, "|": BOR, "&&": LAND, "||": LOR}


@dataclass(frozen=True)
class C:
    """A C expression and the precedence of its outermost operator."""
    text: str
    prec: int = ATOM

    def at(self, prec: int) -> str:
        """The text as an operand of an operator of precedence prec."""
        return self.text if self.prec >= prec else f"({self.text})"

    def __str__(self) -> str:
        return self.text


def binary(op: str, a: C, b: C) -> C:
    prec = _BINARY_PREC[op]
    return C(f"{a.at(prec)} {op} {b.at(prec + 1)}", prec)


def call(name: str, *args: C) -> C:
    return C(f"{name}({', '.join(a.text for a in args)})")


def cast(dtype: DType, a: C) -> C:
    return C(f"({dtype.c_name}){a.at(UNARY)}", UNARY)


def is_half_like(dtype: DType) -> bool:
    """Floats narrower than float, whose arithmetic runs in float (16-bit and float8)."""
    return dtype.is_float and dtype.bits < 32


def narrow_int(dtype: DType) -> bool:
    """Integer types C promotes to int before any arithmetic."""
    return (dtype.is_int or dtype.is_bool) and dtype.bits < 32


# ----------------------------------------------------------------------------- literals

def literal(value, dtype: DType) -> C:
    """A constant of dtype, converted from a Python value as the interpreter does."""
    if dtype.is_bool:
        return C("true" if bool(value) else "false")
    if dtype.is_int:
        v = int(dtype.quantize(np.array([value]))[0])
        return _int_literal(v, dtype)
    v = float(dtype.quantize(np.array([value], dtype=np.float64))[0])
    if dtype.name == "float64":
        return _float_literal(v, "CUDART_INF", "CUDART_NAN", repr(v))
    text = _float_literal(v, "CUDART_INF_F", "CUDART_NAN_F", str(np.float32(v)) + "f")
    if is_half_like(dtype):
        return from_float(text, dtype)
    return text


def _float_literal(v: float, inf: str, nan: str, finite: str) -> C:
    if math.isnan(v):
        return C(nan)
    if math.isinf(v):
        return C(inf) if v > 0 else C(f"-{inf}", UNARY)
    if "." not in finite and "e" not in finite and "inf" not in finite:
        finite = finite.replace("f", ".0f") if finite.endswith("f") else finite + ".0"
    return C(finite, UNARY if finite.startswith("-") else ATOM)


def _int_literal(v: int, dtype: DType) -> C:
    if dtype.bits == 32 and dtype.kind == "int" and v == -2 ** 31:
        return C("(-2147483647 - 1)")
    if dtype.bits == 64 and dtype.kind == "int" and v == -2 ** 63:
        return C("(-9223372036854775807LL - 1)")
    suffix = {("int", 64): "LL", ("uint", 32): "u", ("uint", 64): "ull"}.get(
        (dtype.kind, dtype.bits), "")
    text = f"{v}{suffix}"
    c = C(text, UNARY if v < 0 else ATOM)
    return cast(dtype, c) if dtype.bits < 32 else c


# ----------------------------------------------------------------------------- conversions

# float -> narrow float and back: 16-bit floats round to nearest even (CUDA's own), the
# float8 ones through the runtime header's saturating conversions (reducer_runtime.cuh)
_FROM_FLOAT = {"float16": "__float2half_rn", "bfloat16": "__float2bfloat16_rn",
               "float8_e4m3fn": "reducer_to_e4m3", "float8_e5m2": "reducer_to_e5m2"}
_TO_FLOAT = {"float16": "__half2float", "bfloat16": "__bfloat162float",
             "float8_e4m3fn": "reducer_fp8_to_float", "float8_e5m2": "reducer_fp8_to_float"}


def to_float(a: C, dtype: DType) -> C:
    """A narrow float value widened to float (exact)."""
    return call(_TO_FLOAT[dtype.name], a)


def from_float(a: C, dtype: DType) -> C:
    """A float rounded to a narrow float dtype (round to nearest even; float8 saturates)."""
    return call(_FROM_FLOAT[dtype.name], a)


def convert(a: C, src: DType, dst: DType) -> C:
    """a (of dtype src) converted to dst with DType.quantize's meaning, spelled by its
    cast kind (spec.operators.CASTS); a narrow float is widened to float first."""
    kind = cast_kind(src, dst)
    if kind != "same" and is_half_like(src):
        return convert(to_float(a, src), FLOAT32, dst)
    return C_CASTS[kind](a, src, dst)


def _to_bool(a: C, src: DType, dst: DType) -> C:
    return C(f"({binary('!=', a, literal(0, src)).text})")


def _int_to_float(a: C, src: DType, dst: DType) -> C:
    if dst.name == "bfloat16":
        # cutlass's bfloat16_t(int): float(x), then the upper 16 bits (toward zero)
        return call("__float2bfloat16_rz", cast(FLOAT32, a))
    return _float_to_float(a, src, dst)


def _float_to_float(a: C, src: DType, dst: DType) -> C:
    if is_half_like(dst):
        # through float, as TileLang's half_t(x) / bfloat16_t(x) convert (and quantize)
        return from_float(a if src.name == "float32" else cast(FLOAT32, a), dst)
    return cast(dst, a)


# CUDA's round-toward-zero conversions (cvt.rzi): they saturate and map NaN to a fixed
# value with a defined meaning, where a C cast of an out-of-range float is undefined
# behaviour that the compiler may fold to anything. Keyed by (source, kind, bits).
_RZ = {("float32", "int", 32): "__float2int_rz", ("float32", "uint", 32): "__float2uint_rz",
       ("float32", "int", 64): "__float2ll_rz", ("float32", "uint", 64): "__float2ull_rz",
       ("float64", "int", 32): "__double2int_rz", ("float64", "uint", 32): "__double2uint_rz",
       ("float64", "int", 64): "__double2ll_rz", ("float64", "uint", 64): "__double2ull_rz"}


def float_to_int(a: C, src: DType, dst: DType) -> C:
    """A float or double converted to an integer dtype: truncate, saturate to
    dst.saturation, wrap to the width (DType.quantize). 8- and 16-bit integers take the
    low bits of the 32-bit conversion of their signedness, as nvcc compiles TileLang's
    `(signed char)x` (docs/semantics.md §8)."""
    width = 64 if dst.bits == 64 else 32
    result = call(_RZ[(src.name, dst.kind, width)], a)
    return cast(dst, result) if dst.bits < 32 else result


# The C spelling of each cast kind of spec.operators.CASTS (the source already float or
# wider: `convert` widens narrow floats first).
C_CASTS: dict[str, Callable[[C, DType, DType], C]] = {
    "same": lambda a, src, dst: a,
    "to_bool": _to_bool,
    "int_to_int": lambda a, src, dst: cast(dst, a),
    "from_bool": _int_to_float,              # a C cast, or float's rounding for floats
    "float_to_int": float_to_int,
    "int_to_float": _int_to_float,
    "float_to_float": _float_to_float,
}


# ----------------------------------------------------------------------------- bit casts

# T.reinterpret's CUDA intrinsics (spec.reinterpret), by (float dtype, integer kind):
# (the float's bits as that integer, that integer's bits as the float). float64 has only
# the signed pair; a float8's bits are its `__x` byte.
_BITCASTS = {
    ("float32", "int"): ("__float_as_int", "__int_as_float"),
    ("float32", "uint"): ("__float_as_uint", "__uint_as_float"),
    ("float64", "int"): ("__double_as_longlong", "__longlong_as_double"),
    ("float16", "int"): ("__half_as_short", "__short_as_half"),
    ("float16", "uint"): ("__half_as_ushort", "__ushort_as_half"),
    ("bfloat16", "int"): ("__bfloat16_as_short", "__short_as_bfloat16"),
    ("bfloat16", "uint"): ("__bfloat16_as_ushort", "__ushort_as_bfloat16"),
}


def reinterpret(a: C, src: DType, dst: DType) -> C:
    """a (of dtype src) with its bits read as dst: the integers' own conversion between
    integers (two's complement, one width), CUDA's bit casts otherwise; a float read as
    another float goes through the unsigned integer of the width."""
    if R.is_integer_wrap(src, dst):
        return cast(dst, a)
    if src.is_float and dst.is_float:
        bits = R.bits_dtype(src)
        return reinterpret(reinterpret(a, src, bits), bits, dst)
    if src.is_float:
        return _float_bits(a, src, dst)
    return _bits_float(a, src, dst)


def _float_bits(a: C, src: DType, dst: DType) -> C:
    """The bits of the float a as the integer dtype dst (of its width)."""
    if src.is_float8:
        byte = C(f"{a.at(ATOM)}.__x")                  # __nv_fp8_storage_t: unsigned char
        return byte if dst.kind == "uint" else cast(dst, byte)
    pair = _BITCASTS.get((src.name, dst.kind))
    if pair is None:                                    # float64 as uint64
        return cast(dst, call(_BITCASTS[(src.name, "int")][0], a))
    return call(pair[0], a)


def _bits_float(a: C, src: DType, dst: DType) -> C:
    """The integer a (of dtype src) read as the float dtype dst (of its width)."""
    if dst.is_float8:
        # no intrinsic builds an __nv_fp8_* from its byte: set the byte of a fresh one
        return C(f"[&]() -> {dst.c_name} {{ {dst.c_name} r; r.__x = (unsigned char)"
                 f"{a.at(UNARY)}; return r; }}()")
    pair = _BITCASTS.get((dst.name, src.kind))
    if pair is None:                                    # uint64 as float64
        return call(_BITCASTS[(dst.name, "int")][1], cast(INT64, a))
    return call(pair[1], a)


# ----------------------------------------------------------------------------- expressions

class ExprRenderer(ExprVisitor):
    """Renders logical expressions (the CUDA face of spec.operators.ExprVisitor; each
    operator's C spelling is its table row). `name(var)` gives the C name of a variable
    and `load(load)` the C text of a buffer read (both depend on where the expression
    sits: registers of the executing thread, shared or global memory)."""

    def __init__(self, name: Callable[[str], str], load: Callable[[ir.Load], C]):
        self.name = name
        self.load = load

    def render(self, e: ir.Expr) -> C:
        return self.visit(e)

    def operand(self, e: ir.Expr, dtype: DType) -> C:
        """e converted to dtype; an untyped literal is made in dtype directly."""
        if isinstance(e, ir.Const) and e.weak:
            return literal(e.value, dtype)
        return convert(self.render(e), e.dtype, dtype)

    # --- leaves ----------------------------------------------------------------------

    def visit_const(self, e: ir.Const) -> C:
        return literal(e.value, e.dtype)

    def visit_var(self, e: ir.Var) -> C:
        return C(self.name(e.name))

    def visit_threadbinding(self, e: ir.ThreadBinding) -> C:
        return C("tid")

    def visit_load(self, e: ir.Load) -> C:
        return self.load(e)

    # --- arithmetic ------------------------------------------------------------------

    def visit_binary(self, e: ir.Binary) -> C:
        dtype = e.dtype
        a, b = self.operand(e.a, dtype), self.operand(e.b, dtype)
        if dtype.is_float:
            return float_binary(e.op, a, b, dtype)
        row = OPERATORS[e.op]
        if row.c_function is not None:
            return C(f"{row.c_function}<{dtype.c_name}>({a.text}, {b.text})")
        result = binary(row.c, a, b)
        return cast(dtype, result) if narrow_int(dtype) else result

    def visit_unary(self, e: ir.Unary) -> C:
        dtype = e.dtype
        a = self.operand(e.a, dtype)
        token = UNARY_OPERATORS[e.op].c
        if e.op == "not":
            return C(f"{token}{a.at(UNARY)}", UNARY)
        if is_half_like(dtype):
            return from_float(C(f"{token}{to_float(a, dtype).at(UNARY)}", UNARY), dtype)
        if e.op == "neg" and dtype.is_bool:
            return a
        result = C(f"{token}{a.at(UNARY)}", UNARY)
        return cast(dtype, result) if narrow_int(dtype) else result

    def visit_compare(self, e: ir.Compare) -> C:
        dtype = e.operand_dtype
        a, b = self.operand(e.a, dtype), self.operand(e.b, dtype)
        if is_half_like(dtype):
            a, b = to_float(a, dtype), to_float(b, dtype)
        return binary(OPERATORS[e.op].c, a, b)

    def visit_logical(self, e: ir.Logical) -> C:
        a, b = self.operand(e.a, BOOL), self.operand(e.b, BOOL)
        return binary(OPERATORS[e.op].c, a, b)

    def visit_call(self, e: ir.Call) -> C:
        if e.func == R.NAME:
            (arg,) = e.args
            return reinterpret(self.operand(arg, arg.dtype), arg.dtype, e.dtype)
        dtype = e.dtype
        args = [self.operand(a, dtype) for a in e.args]
        if is_half_like(dtype):
            wide = [to_float(a, dtype) for a in args]
            return from_float(intrinsic(e.func, wide, FLOAT32), dtype)
        result = intrinsic(e.func, args, dtype)
        return cast(dtype, result) if narrow_int(dtype) else result

    def visit_cast(self, e: ir.Cast) -> C:
        return self.operand(e.a, e.dtype)

    def visit_select(self, e: ir.Select) -> C:
        cond = self.operand(e.cond, BOOL)
        a, b = self.operand(e.a, e.dtype), self.operand(e.b, e.dtype)
        return C(f"{cond.at(LOR)} ? {a.at(COND)} : {b.at(COND)}", COND)


def float_binary(op: str, a: C, b: C, dtype: DType) -> C:
    """a op b in a float dtype, spelled as its row's `c_float` says (floordiv: floor of
    the quotient; floormod: a − floor(a/b)·b, as TVM lowers them); 16-bit floats compute
    in float and round each step, as the interpreter's numpy does."""
    form, token = OPERATORS[op].c_float, OPERATORS[op].c
    if is_half_like(dtype):
        def rounded(op_: str, x: C, y: C) -> C:
            return from_float(float_binary(op_, to_float(x, dtype), to_float(y, dtype),
                                           FLOAT32), dtype)

        def floor_quotient() -> C:
            quotient = rounded("/", a, b)
            return from_float(call("floorf", to_float(quotient, dtype)), dtype)
        if form == "floordiv":
            return floor_quotient()
        if form == "floormod":
            return rounded("-", a, rounded("*", floor_quotient(), b))
        return rounded(op, a, b)
    floor = "floor" if dtype.name == "float64" else "floorf"
    if form == "floordiv":
        return call(floor, binary("/", a, b))
    if form == "floormod":
        return binary("-", a, binary("*", call(floor, binary("/", a, b)), b))
    return binary(token, a, b)


def intrinsic(func: str, args: list[C], dtype: DType) -> C:
    """A T.<func> call on operands already in dtype (float or double for floats)."""
    if not dtype.is_float:
        if func == "abs":
            if dtype.kind == "uint" or dtype.is_bool:
                return args[0]                     # |x| of an unsigned value is x
            return call("llabs" if dtype.bits == 64 else "abs", *args)
        return call(func, *args)                   # CUDA's integer max/min overloads
    suffix = "" if dtype.name == "float64" else "f"
    one = literal(1, dtype)
    if func == "sigmoid":
        exp = call("exp" + suffix, C(f"-{args[0].at(UNARY)}", UNARY))
        return binary("/", one, C(f"({binary('+', one, exp).text})"))
    return call(INTRINSICS[func].c_name + suffix, *args)


def combine(monoid: Monoid, dtype: DType, a: C, b: C) -> C:
    """a ⊕ b in dtype, from the op table's C template."""
    if is_half_like(dtype):
        wide = C(monoid.c_combine(to_float(a, dtype).at(UNARY), to_float(b, dtype).at(UNARY)),
                 COND)
        return from_float(wide, dtype)
    text = monoid.c_combine(a.at(UNARY), b.at(UNARY))
    result = C(text, ATOM if re.match(r"\w+\(.*\)$", text) else COND)
    return cast(dtype, C(f"({text})")) if narrow_int(dtype) else result
