"""Expressions, evaluated for all lanes at once with numpy, each in its own dtype.

Arithmetic happens in `expr.dtype` after converting the operands with `DType.quantize`
(integers wrap two's complement; float16 in float16; bfloat16 in float32 rounded back).
Each operator's numpy meaning is its row of spec.operators (`/` truncates for integers as
C does, `//` and `%` floor; for floats floor(a/b) and a − floor(a/b)·b, the way TVM lowers
them); a row's `domain` makes integer division by zero and shifts outside [0, bits)
errors rather than C's undefined behaviour. The walk is spec.operators' ExprVisitor.
T.max/T.min on floats ignore NaN and order -0 < +0 like CUDA's fmaxf/fminf. Float →
integer conversions truncate, saturate and wrap (`DType.quantize`, docs/semantics.md §8).
T.reinterpret reads the operand's storage bits as its dtype (spec.reinterpret); the bits
of an inexact value or of a NaN are not judged (an infinite bound).
Selects and `and`/`or` evaluate an operand only on the lanes that need it (as C and
TIR's if_then_else do), so a guarded out-of-bounds load in the untaken branch is never
read. Error bounds follow
the rules of `interp.bounds`."""
from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.dtypes import BOOL, DType
from verify_reducer.spec.intrinsics import INTRINSICS
from verify_reducer.spec.operators import OPERATORS, UNARY_OPERATORS, ExprVisitor
from verify_reducer.spec.limits import MAX_ITERATIONS, power_of_two
from verify_reducer.spec.ops import MONOIDS
from verify_reducer.spec import reinterpret as R
from verify_reducer.spec.warp import is_warp_call

from . import bounds as B
from .values import THREAD, Lanes, Val, const
from .warp import warp_call


class Memory(Protocol):
    def load(self, load: ir.Load, indices: list[Val], lanes: Lanes) -> Val: ...


def evaluate(expr: ir.Expr, lanes: Lanes, mem: Memory) -> Val:
    return _EVALUATOR.visit(expr, lanes, mem)


def operand(expr: ir.Expr, dtype: DType, lanes: Lanes, mem: Memory) -> Val:
    """expr converted to dtype; an untyped literal is made in dtype from its Python value."""
    if isinstance(expr, ir.Const) and expr.weak:
        if dtype.is_int and not isinstance(expr.value, float) \
                and not dtype.lowest <= expr.value <= dtype.highest:
            # constants are exact: one the dtype cannot hold is an error, never a wrap
            raise DiagnosticError(error(
                "R102", f"integer constant {expr.value} does not fit in {dtype}", expr.span))
        return const(expr.value, dtype, lanes.n)
    return convert(evaluate(expr, lanes, mem), dtype)


_STORAGE: dict[str, np.dtype] = {}


def stored(dtype: DType, values: np.ndarray) -> np.ndarray:
    """values in dtype's numpy storage: `dtype.quantize`, skipped when they already are
    (an array of the storage dtype holds only representable values, except float32
    storage holding bfloat16 or float8, which is always rounded). Hot: every operand passes here,
    so the storage dtype is looked up by name rather than rebuilt."""
    np_dtype = _STORAGE.get(dtype.name)
    if np_dtype is None:
        np_dtype = _STORAGE[dtype.name] = dtype.np
    if values.__class__ is np.ndarray and values.dtype is np_dtype and \
            not dtype.emulated:
        return values
    return dtype.quantize(values)


def convert(val: Val, dtype: DType) -> Val:
    if val.dtype is dtype or val.dtype == dtype:     # identity first: dtypes are shared
        return val
    with np.errstate(all="ignore"):
        v = stored(dtype, val.v)
    if dtype.is_float and val.dtype.is_float:
        return Val(v, dtype, B.rounded(dtype, val.b, v))
    # to an integer: truncation steps; from an uncertain integer: an unknown one
    return Val(v, dtype, B.taint(val.b))


def indices_of(exprs, lanes: Lanes, mem: Memory) -> tuple[list[np.ndarray], bool]:
    """Index expressions as int64 arrays, and whether any of them is uncertain."""
    out, uncertain = [], False
    for e in exprs:
        val = evaluate(e, lanes, mem)
        if val.dtype.is_float:
            raise DiagnosticError(error("R102", "a buffer index must be an integer", e.span))
        out.append(val.v.astype(np.int64))
        uncertain |= B.any_uncertain(val.b)
    return out, uncertain


# ----------------------------------------------------------------------------- leaves

def _const(e: ir.Const, lanes, mem):
    return const(e.value, e.dtype, lanes.n)


def _var(e: ir.Var, lanes, mem):
    if e.name in lanes.deferred:
        let = lanes.deferred[e.name]
        check = getattr(mem, "check_deferred", None)      # the logical interpreter's
        if check is not None:
            check(let)
        return convert(operand(let.value, let.var.dtype, lanes, mem), e.dtype)
    val = lanes.env.get(e.name)
    if val is None:
        raise DiagnosticError(error("R101", f"unknown name {e.name!r}", e.span))
    return convert(val, e.dtype)


def _thread_binding(e: ir.ThreadBinding, lanes, mem):
    """Statements that read the thread index run once per thread (Block forks them)."""
    if THREAD in lanes.env:
        return convert(lanes.env[THREAD], e.dtype)
    raise DiagnosticError(error(
        "R102", "T.get_thread_binding() here depends on the physical thread in a way the "
        "logical interpreter cannot follow", e.span))


def reads_thread(exprs, lanes: Lanes) -> bool:
    """Whether evaluating exprs needs the physical thread index (a warp builtin needs
    the other lanes of its warp, so it runs per thread too)."""
    return any(isinstance(s, ir.ThreadBinding)
               or (isinstance(s, ir.Var) and s.name in lanes.deferred)
               or (isinstance(s, ir.Call) and is_warp_call(s.func))
               for x in exprs for s in ir.subexprs(x))


def _load(e: ir.Load, lanes, mem):
    idx = [evaluate(i, lanes, mem) for i in e.indices]
    return mem.load(e, idx, lanes)


# ----------------------------------------------------------------------------- arithmetic

def _binary(e: ir.Binary, lanes, mem):
    dtype = e.dtype
    a = operand(e.a, dtype, lanes, mem)
    b = operand(e.b, dtype, lanes, mem)
    if dtype.is_float:
        return _float_binary(e, a, b)
    return _int_binary(e, a, b)


# The float error-bound rule a row names (spec.operators.Operator.error_rule).
_SPREAD: dict[str, Callable] = {
    "total": lambda a, b: B.total(a.b, b.b),
    "product": lambda a, b: B.product_spread(a.v, a.b, b.v, b.b),
    "quotient": lambda a, b: B.quotient_spread(a.v, a.b, b.v, b.b),
    "step": lambda a, b: B.taint(a.b, b.b),     # a step function: no continuity to use
}


def _float_binary(e: ir.Binary, a: Val, b: Val) -> Val:
    dtype = e.dtype
    row = OPERATORS[e.op]
    if row.floats is None:
        raise DiagnosticError(error(
            "R102", f"operator {e.op} needs integer operands, not {dtype}", e.span))
    with np.errstate(all="ignore"):
        v = stored(dtype, row.floats(a.v, b.v, dtype))
        spread = _SPREAD[row.error_rule](a, b)
    if row.error_rule == "step":
        return Val(v, dtype, spread)
    return Val(v, dtype, B.rounded(dtype, spread, v))


def _int_binary(e: ir.Binary, a: Val, b: Val) -> Val:
    dtype = e.dtype
    row = OPERATORS[e.op]
    x, y = a.v, b.v
    if row.domain == "divisor" and (y == 0).any():
        raise DiagnosticError(error("R102", "integer division by zero", e.span))
    if row.domain == "shift":
        shift = y.astype(np.int64)
        if ((shift < 0) | (shift >= dtype.bits)).any():
            raise DiagnosticError(error(
                "R102", f"shift by {int(shift[(shift < 0) | (shift >= dtype.bits)][0])} is "
                f"outside [0, {dtype.bits}) for {dtype}", e.span))
    with np.errstate(all="ignore"):
        v = row.ints(x, y)
    return Val(stored(dtype, v), dtype, B.taint(a.b, b.b))


def _unary(e: ir.Unary, lanes, mem):
    a = operand(e.a, e.dtype, lanes, mem)
    row = UNARY_OPERATORS[e.op]
    with np.errstate(all="ignore"):
        if e.op == "not":                  # its operand read as a bool, whatever its dtype
            return Val(row.ints(BOOL.quantize(a.v)), BOOL, B.taint(a.b))
        if not e.dtype.is_float:
            return Val(e.dtype.quantize(row.ints(a.v)), e.dtype, B.taint(a.b))
        if row.floats is None:
            raise DiagnosticError(error(
                "R102", f"{row.c} needs an integer operand", e.span))
        return Val(e.dtype.quantize(row.floats(a.v, None, e.dtype)), e.dtype, a.b)


# ----------------------------------------------------------------------------- comparisons


def _compare(e: ir.Compare, lanes, mem):
    dtype = e.operand_dtype
    a = operand(e.a, dtype, lanes, mem)
    b = operand(e.b, dtype, lanes, mem)
    v = OPERATORS[e.op].ints(a.v, b.v)
    spread = B.total(a.b, b.b)
    bound = None
    if spread is not None and dtype.is_float:
        # only lanes whose operands' intervals overlap could compare the other way
        with np.errstate(invalid="ignore"):
            near = np.abs(a.v.astype(np.float64) - b.v.astype(np.float64)) <= spread
        bound = B.taint(np.where(near, spread, 0.0))
    elif spread is not None:
        bound = B.taint(spread)
    return Val(v, BOOL, bound)


def _logical(e: ir.Logical, lanes, mem):
    a = operand(e.a, BOOL, lanes, mem)
    decides = OPERATORS[e.op].decides
    decided = a.v if decides else ~a.v               # lanes where b is not needed
    v = a.v.copy()
    b_bound = np.zeros(lanes.n) if a.b is not None else None
    rest = ~decided
    if rest.any():
        b = operand(e.b, BOOL, lanes.select(rest), mem)
        v[rest] = b.v
        if b.b is not None:
            b_bound = np.zeros(lanes.n) if b_bound is None else b_bound
            b_bound[rest] = b.b
    return Val(v, BOOL, B.taint(a.b, b_bound))


# ----------------------------------------------------------------------------- calls



def _call(e: ir.Call, lanes, mem):
    if is_warp_call(e.func):
        return warp_call(e, lanes, mem, operand)
    if e.func == R.NAME:
        return _reinterpret(e, lanes, mem)
    dtype = e.dtype
    args = [operand(a, dtype, lanes, mem) for a in e.args]
    intrinsic = INTRINSICS.get(e.func)
    if intrinsic is None:
        raise DiagnosticError(error("R101", f"unknown intrinsic T.{e.func}", e.span))
    arity = intrinsic.arity
    if len(args) != arity:
        raise DiagnosticError(error(
            "R102", f"T.{e.func} takes {arity} operand(s), got {len(args)}", e.span))
    with np.errstate(all="ignore"):
        if e.func in ("max", "min"):
            a, b = args
            if dtype.is_float:
                # the reducer ops' max/min: NaN ignored, -0 < +0 (spec.ops)
                extremum = MONOIDS[e.func].float_ufunc
                return Val(dtype.quantize(extremum(a.v, b.v)), dtype, B.widest(a.b, b.b))
            return Val(intrinsic.numpy_int(a.v, b.v), dtype, B.taint(a.b, b.b))
        if e.func == "abs":
            (a,) = args
            fn = intrinsic.numpy if dtype.is_float else intrinsic.numpy_int
            return Val(dtype.quantize(fn(a.v)), dtype,
                       a.b if dtype.is_float else B.taint(a.b))
        if not dtype.is_float:
            raise DiagnosticError(error(
                "R102", f"T.{e.func} needs a float operand, not {dtype}", e.span))
        fn = intrinsic.numpy
        if e.func == "pow":
            a, b = args
            v = dtype.quantize(fn(a.v, b.v))
            spread = B.corner_spread(fn, a.v, a.b, b.v, b.b)
            if spread is not None:
                spread = np.where(a.v.astype(np.float64) - _zero(a.b) > 0, spread, np.inf)
        else:
            (a,) = args
            v = dtype.quantize(fn(a.v))
            spread = B.monotone_spread(fn, a.v, a.b)
    bound = B.total(B.rounded(dtype, spread, v), B.ulps(dtype, v, intrinsic.cuda_ulps))
    return Val(v, dtype, bound)


def _reinterpret(e: ir.Call, lanes, mem):
    """The operand's storage bits read as e.dtype (spec.reinterpret). The bits of a value
    known only within a bound say nothing exact, nor do a NaN's (its payload is the
    producing operation's): those lanes are not judged, never silently passed."""
    (arg,) = e.args
    a = operand(arg, arg.dtype, lanes, mem)
    with np.errstate(all="ignore"):
        v = R.reinterpret(a.v, a.dtype, e.dtype)
    infinite = R.unmodelled_float8(v, e.dtype)
    if infinite is not None:
        raise DiagnosticError(error(
            "R102", f"T.reinterpret gives the {e.dtype} bits {infinite:#04x}, an infinity: "
            f"float8 values are modelled without infinities (docs/limits.md)", e.span))
    nan = R.nan_lanes(a.v, a.dtype)
    return Val(v, e.dtype, B.taint(a.b, None if nan is None else nan.astype(np.float64)))


def _zero(b):
    return 0.0 if b is None else b


def _cast(e: ir.Cast, lanes, mem):
    return operand(e.a, e.dtype, lanes, mem)


def _select(e: ir.Select, lanes, mem):
    """Each lane evaluates the branch its condition picks; lanes whose condition an
    uncertain float could flip evaluate both, and get |a − b| plus both bounds."""
    cond = operand(e.cond, BOOL, lanes, mem)
    flip = np.zeros(lanes.n, dtype=bool) if cond.b is None else cond.b > 0
    a = _branch(e.a, e.dtype, lanes, mem, cond.v | flip)
    b = _branch(e.b, e.dtype, lanes, mem, ~cond.v | flip)
    v = np.where(cond.v, a.v, b.v)
    bound = np.where(cond.v, a.b, b.b)
    if flip.any():
        if e.dtype.is_float:
            with np.errstate(invalid="ignore"):
                both = np.abs(a.v.astype(np.float64) - b.v.astype(np.float64)) + a.b + b.b
        else:
            both = np.where(a.v != b.v, np.inf, np.maximum(a.b, b.b))
        bound = np.where(flip, B.clean(both), bound)
    return Val(v, e.dtype, bound if bound.any() else None)


def _branch(expr, dtype: DType, lanes: Lanes, mem: Memory, want: np.ndarray) -> Val:
    """expr evaluated on the lanes in `want`, scattered to all lanes (zeros elsewhere),
    with a full bound array."""
    v = np.zeros(lanes.n, dtype=dtype.np)
    b = np.zeros(lanes.n)
    if want.any():
        part = operand(expr, dtype, lanes.select(want), mem)
        v[want] = part.v
        if part.b is not None:
            b[want] = part.b
    return Val(v, dtype, b)


class Evaluator(ExprVisitor):
    """The interpreter's face of the one visitor protocol (spec.operators.ExprVisitor):
    each method takes (expr, lanes, mem) and gives its Val."""
    visit_const = staticmethod(_const)
    visit_var = staticmethod(_var)
    visit_threadbinding = staticmethod(_thread_binding)
    visit_load = staticmethod(_load)
    visit_binary = staticmethod(_binary)
    visit_unary = staticmethod(_unary)
    visit_compare = staticmethod(_compare)
    visit_logical = staticmethod(_logical)
    visit_call = staticmethod(_call)
    visit_cast = staticmethod(_cast)
    visit_select = staticmethod(_select)


_EVALUATOR = Evaluator()


def serial_iterations(stmt: ir.SerialFor, lanes: Lanes, ctx):
    """The (lanes, bound lanes) of each iteration of a serial loop, in order. Lanes whose
    start/stop differ run different trip counts: iteration t runs the lanes with more
    than t trips, each with var = start + t·step of its own."""
    var = stmt.var
    if stmt.step == 0:
        raise DiagnosticError(error("R102", "a loop step of 0 never ends", stmt.span))
    start = operand(stmt.start, var.dtype, lanes, ctx).v.astype(np.int64)
    stop = operand(stmt.stop, var.dtype, lanes, ctx).v.astype(np.int64)
    step = stmt.step
    span = (stop - start) if step > 0 else (start - stop)
    trips = np.maximum(-(-span // abs(step)), 0)
    if len(trips) and int(trips.max()) > MAX_ITERATIONS:
        # bounds read at run time: the frontend could not check them (docs/limits.md)
        raise DiagnosticError(error(
            "R102", f"this loop would run {int(trips.max())} times; at most "
            f"{power_of_two(MAX_ITERATIONS)} iterations are supported", stmt.span))
    uniform = bool((trips == trips[0]).all()) if len(trips) else True
    for t in range(int(trips.max()) if len(trips) else 0):
        live = lanes if uniform else lanes.select(trips > t)
        first = start if uniform else start[trips > t]
        yield live.bind(var.name, Val(var.dtype.quantize(first + t * step), var.dtype))
