"""The dtype of every expression. Typed operands combine C-like (spec.dtypes.promote).
An untyped Python literal is *weak* (as in TVM): it adopts the dtype of the operand it
meets — `x_f16 * 2` is float16 — except that a float literal meeting an integer makes the
operation float32 (`i * 0.5` is float32, TVM's rule for a Python float)."""
from __future__ import annotations

import ast
import math

from ..dtypes import BOOL, FLOAT32, INT32, INT64, DType, DTYPES, RefusedDType, promote
from ..ir import Const, Expr
from ..source import Span
from .errors import shape_error

UINT64 = DTYPES["uint64"]


def weak_const(value, span: Span, node: ast.AST) -> Const:
    """An untyped Python literal (or a folded module constant) as a weak Const."""
    if isinstance(value, bool):
        return Const(value, BOOL, span, weak=True)
    if isinstance(value, int):
        for dtype in (INT32, INT64, UINT64):
            if dtype.lowest <= value <= dtype.highest:
                return Const(value, dtype, span, weak=True)
        shape_error(f"integer constant {value} does not fit in 64 bits", node)
    if isinstance(value, float):
        return Const(value, FLOAT32, span, weak=True)
    if isinstance(value, RefusedDType):
        shape_error(value.message, node)
    if isinstance(value, DType):
        shape_error(f"the dtype {value} is not a value (write T.{value}(x))", node)
    shape_error(f"{value!r} is not a scalar value", node)


def fits(value, dtype: DType) -> bool:
    """Whether dtype holds the integer value exactly (floats and bools hold any number
    the folder lets through: at most 2**256, so never an overflow to inf)."""
    if not dtype.is_int or isinstance(value, float):
        return True
    return dtype.lowest <= value <= dtype.highest


def typed_const(value, dtype: DType, span: Span) -> Const:
    """A strongly typed literal such as T.float32(1). Constants are exact Python
    integers: one that an integer dtype cannot hold is R102, never a wrapped value."""
    if dtype.is_float:
        value = float(value)
    elif dtype.is_bool:
        value = bool(value)
    else:
        if isinstance(value, float):
            if not math.isfinite(value):
                shape_error(f"{value} has no {dtype} value", span)
            value = int(value)
        if not fits(value, dtype):
            shape_error(f"integer constant {value} does not fit in {dtype} "
                        f"[{dtype.lowest}, {dtype.highest}]", span)
    return Const(value, dtype, span)


def is_weak(e: Expr) -> bool:
    return isinstance(e, Const) and e.weak


def adopt(c: Const, dtype: DType) -> Const:
    """A weak literal given the dtype of the operand it meets (still marked weak)."""
    return Const(typed_const(c.value, dtype, c.span).value, dtype, c.span, weak=True)


def _adopted_dtype(weak: Const, other: DType) -> DType:
    if weak.dtype.is_float and not other.is_float:
        return FLOAT32
    if weak.dtype.is_bool and not other.is_bool:
        return other
    if other.is_bool:
        return weak.dtype          # `flag + 1`: the int literal keeps int32
    return other


def unify(a: Expr, b: Expr) -> tuple[Expr, Expr, DType]:
    """The two operands with weak literals adopted, and the dtype they combine in."""
    if is_weak(a) and not is_weak(b):
        a = adopt(a, _adopted_dtype(a, b.dtype))
    elif is_weak(b) and not is_weak(a):
        b = adopt(b, _adopted_dtype(b, a.dtype))
    return a, b, promote(a.dtype, b.dtype)


def as_float(e: Expr, what: str, node: ast.AST) -> Expr:
    """The operand of a transcendental intrinsic: a weak integer literal becomes float32;
    a typed integer operand is a dtype error (TVM refuses `T.exp(i)` too)."""
    if e.dtype.is_float:
        return e
    if is_weak(e):
        return adopt(e, FLOAT32)
    shape_error(f"{what} needs a float operand, got {e.dtype}", node)


def require_integer(e: Expr, what: str, node: ast.AST, allow_bool: bool = False) -> None:
    if e.dtype.is_int or (allow_bool and e.dtype.is_bool):
        return
    shape_error(f"{what} needs integer operands, got {e.dtype}", node)
