"""The one operator table: what each operator, comparison, logical op, cast and reserved
call of the IR means, in every form a consumer needs, and the one visitor protocol that
walks expressions.

A row says, for its operator:

- `ints` / `floats`: the numpy function on storage arrays (the caller converts operands
  to the result dtype first and stores the result with `DType.quantize`: integers wrap,
  float→integer conversions saturate — spec.dtypes holds those hardware rules, not this
  table); `floats` None: the operator needs integer operands;
- `exact`: the mathematical meaning on Python ints (what an index means, what Z3's
  integers and the interval rules must agree with);
- `c`: the C spelling of the integer form (an infix token, or `c_function`, a template of
  the runtime header) and `c_float`: how the float form is spelled;
- `z3_int`: the encoding on Z3 integers (unbounded, as index proofs read them) and
  `z3_bv`: on bit-vectors of the dtype's width (the user-op law proofs);
- `interval`: the range of the result from the operands' ranges (verify.epochs.bounds);
- `index`: the affine index form (spec.indexexpr, read by spec.addressing).

Consumers look a row up at the moment they use it (`OPERATORS[op]`), never copy it: a row
changed here changes the interpreter, the CUDA renderer and the proofs together
(tests/test_operators.py changes one and watches all three).

The reserved calls are rows of their own tables, reached through `CALLS`: the math
intrinsics (spec.intrinsics: their columns — arity, float-only, CUDA ulps — are not an
operator's), T.reinterpret (spec.reinterpret) and the warp builtins (spec.warp)."""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import ir
from . import reinterpret as R
from .dtypes import DType
from .intrinsics import INTRINSICS
from .warp import SHUFFLES, WARP_REDUCES

BINARY, UNARY, COMPARE, LOGICAL = "binary", "unary", "compare", "logical"


@dataclass(frozen=True)
class Operator:
    name: str                          # as ir.Binary/Unary/Compare/Logical spell it
    kind: str                          # BINARY, UNARY, COMPARE or LOGICAL
    ints: Callable | None              # numpy on integer (or bool) storage arrays
    exact: Callable | None             # on Python ints
    c: str | None                      # the C token of the integer form
    floats: Callable | None = None     # numpy (x, y, dtype) on float storage; None: ints only
    c_function: str | None = None      # the integer form as a runtime-header template
    c_float: str | None = None         # "infix" | "floordiv" | "floormod" | None
    error_rule: str | None = None      # the float error-bound rule (interp.bounds): "total",
                                       # "product", "quotient", "step"
    domain: str | None = None          # "divisor" (b != 0) | "shift" (0 <= b < bits)
    z3_int: Callable | None = None     # (a, b, c, facts) -> term, or None: not encoded
    z3_bv: Callable | None = None      # (x, y, signed) -> bit-vector term
    z3_unsigned: str | None = None     # a comparison's unsigned Z3 function name
    interval: Callable | None = None   # ((lo, hi), (lo, hi), c) -> (lo, hi) | None
    truth: Callable | None = None      # a comparison on the range (lo, hi) of a − b:
                                       # (always, never)
    index: Callable | None = None      # (a, b, c, nonneg) on IndexExprs -> IndexExpr | None
    decides: bool | None = None        # a logical op: the left value that decides it alone


# ----------------------------------------------------------------------------- exact

def truncdiv(a: int, b: int) -> int:
    """C's integer division: toward zero."""
    q = a // b
    return q + 1 if q < 0 and q * b != a else q


def _np_truncdiv(x, y):
    q = x // y
    return np.where((q < 0) & (q * y != x), q + 1, q)


def _float_floordiv(x, y, dtype: DType):
    """TVM's floordiv on floats: floor of the quotient rounded to dtype."""
    return np.floor(dtype.quantize(x / y))


def _float_floormod(x, y, dtype: DType):
    return x - dtype.quantize(np.floor(dtype.quantize(x / y)) * y)


# ----------------------------------------------------------------------------- Z3 integers

def z3_floordiv(a, b, facts: list):
    """floor(a / b) on Z3 integers (Z3's own `/` is Euclidean); b != 0 is assumed."""
    import z3
    facts.append(b != 0)            # a division by zero is not an index we judge
    q = a / b
    return z3.If(z3.Or(b > 0, a % b == 0), q, q - 1)


def _z3_floormod(a, b, c, facts):
    return a - b * z3_floordiv(a, b, facts)


def _z3_truncdiv(a, b, c, facts):
    """C's truncation: the floor, moved up by one when the signs differ and the
    division is inexact."""
    import z3
    floor_q = z3_floordiv(a, b, facts)
    inexact = a - b * floor_q != 0
    return z3.If(z3.And(inexact, (a < 0) != (b < 0)), floor_q + 1, floor_q)


def _z3_shl(a, b, c, facts):
    return a * (1 << c) if c is not None and 0 <= c < 63 else None


def _z3_shr(a, b, c, facts):
    if c is None or not 0 <= c < 63:
        return None
    import z3
    return z3_floordiv(a, z3.IntVal(1 << c), facts)


def _z3_and(a, b, c, facts):
    if c is None or c < 0 or (c + 1) & c:
        return None
    return a - (c + 1) * (a / (c + 1))   # a mask of low bits: a floor modulo (Euclidean
                                          # division by a positive constant is the floor)


def _z3_bv_shr(x, y, signed):
    import z3
    return x >> y if signed else z3.LShR(x, y)


# ----------------------------------------------------------------------------- intervals
# The rules take and give (lo, hi) pairs of Python numbers (verify.epochs.bounds: exact
# integers, ±inf) or of float arrays, one entry per block (verify.oracle.blocks).

def _is_array(*xs) -> bool:
    return any(isinstance(x, np.ndarray) for x in xs)


def _min(x, y):
    return np.minimum(x, y) if _is_array(x, y) else min(x, y)


def _max(x, y):
    return np.maximum(x, y) if _is_array(x, y) else max(x, y)


def _times(x, y):
    """x·y with 0·inf = 0: a zero factor pins the product whatever the other is."""
    if _is_array(x, y):
        with np.errstate(invalid="ignore"):
            return np.where((x == 0) | (y == 0), 0.0, x * y)
    return 0 if x == 0 or y == 0 else x * y


def _mul_interval(a, b):
    p = [_times(x, y) for x in a for y in b]
    return (_min(_min(p[0], p[1]), _min(p[2], p[3])),
            _max(_max(p[0], p[1]), _max(p[2], p[3])))


def floordiv_interval(a, c: int):
    """The range of floor(x / c) for x in a (c > 0; infinite ends stay infinite)."""
    def fd(x):
        if isinstance(x, np.ndarray):
            return np.floor(x / c)
        return x if x in (np.inf, -np.inf) else x // c
    return fd(a[0]), fd(a[1])


def _div_interval(a, b, c):
    """Truncation toward zero lies between the floor and zero: the floors' range,
    widened up to 0 (which moves only a negative upper end)."""
    if c is None or c <= 0:
        return None
    lo, hi = floordiv_interval(a, c)
    return lo, _max(hi, 0)


def _mod_interval(a, b, c):
    if c is None or c <= 0:
        return None
    inside = (a[0] >= 0) & (a[1] <= c - 1)
    if _is_array(inside):
        return np.where(inside, a[0], 0.0), np.where(inside, a[1], c - 1.0)
    return a if inside else (0, c - 1)


def _shl_interval(a, b, c):
    return _mul_interval(a, (1 << c, 1 << c)) if c is not None and 0 <= c < 63 else None


def _shr_interval(a, b, c):
    return floordiv_interval(a, 1 << c) if c is not None and 0 <= c < 63 else None


# ----------------------------------------------------------------------------- index forms

def _index_div(a, b, c, nonneg):
    """Integer `/` is floor division only where the numerator is provably >= 0."""
    from .indexexpr import floordiv
    return floordiv(a, c) if c is not None and c > 0 and nonneg else None


def _index_floordiv(a, b, c, nonneg):
    from .indexexpr import floordiv
    return floordiv(a, c) if c is not None and c > 0 else None


def _index_mod(a, b, c, nonneg):
    from .indexexpr import mod
    return mod(a, c) if c is not None and c > 0 else None


def _ring(fn):
    return lambda a, b, c, facts: fn(a, b)


def _ring_index(fn):
    return lambda a, b, c, nonneg: fn(a, b)


def _infix(fn):
    return lambda x, y, dtype: fn(x, y)


# ----------------------------------------------------------------------------- the rows

_ARITH = [
    Operator("+", BINARY, np.add, operator.add, "+", _infix(np.add), c_float="infix",
             error_rule="total", z3_int=_ring(operator.add), z3_bv=lambda x, y, s: x + y,
             interval=lambda a, b, c: (a[0] + b[0], a[1] + b[1]),
             index=_ring_index(operator.add)),
    Operator("-", BINARY, np.subtract, operator.sub, "-", _infix(np.subtract),
             c_float="infix", error_rule="total", z3_int=_ring(operator.sub),
             z3_bv=lambda x, y, s: x - y,
             interval=lambda a, b, c: (a[0] - b[1], a[1] - b[0]),
             index=_ring_index(operator.sub)),
    Operator("*", BINARY, np.multiply, operator.mul, "*", _infix(np.multiply),
             c_float="infix", error_rule="product", z3_int=_ring(operator.mul),
             z3_bv=lambda x, y, s: x * y, interval=lambda a, b, c: _mul_interval(a, b),
             index=_ring_index(operator.mul)),
    Operator("/", BINARY, _np_truncdiv, truncdiv, "/", _infix(np.true_divide),
             c_float="infix", error_rule="quotient", domain="divisor",
             z3_int=_z3_truncdiv, interval=_div_interval, index=_index_div),
    Operator("//", BINARY, np.floor_divide, operator.floordiv, None, _float_floordiv,
             c_function="reducer_floordiv", c_float="floordiv", error_rule="step",
             domain="divisor", z3_int=lambda a, b, c, facts: z3_floordiv(a, b, facts),
             interval=lambda a, b, c: floordiv_interval(a, c)
             if c is not None and c > 0 else None, index=_index_floordiv),
    Operator("%", BINARY, np.remainder, operator.mod, None, _float_floormod,
             c_function="reducer_floormod", c_float="floormod", error_rule="step",
             domain="divisor", z3_int=_z3_floormod, interval=_mod_interval,
             index=_index_mod),
    Operator("&", BINARY, np.bitwise_and, operator.and_, "&", z3_int=_z3_and,
             z3_bv=lambda x, y, s: x & y,
             interval=lambda a, b, c: (0, c) if c is not None and c >= 0 else None),
    Operator("|", BINARY, np.bitwise_or, operator.or_, "|", z3_bv=lambda x, y, s: x | y),
    Operator("^", BINARY, np.bitwise_xor, operator.xor, "^", z3_bv=lambda x, y, s: x ^ y),
    Operator("<<", BINARY, np.left_shift, operator.lshift, "<<", domain="shift",
             z3_int=_z3_shl, z3_bv=lambda x, y, s: x << y, interval=_shl_interval),
    Operator(">>", BINARY, np.right_shift, operator.rshift, ">>", domain="shift",
             z3_int=_z3_shr, z3_bv=_z3_bv_shr, interval=_shr_interval),
]

_UNARY = [
    # neg of a bool is the bool (TVM); integers wrap; 16-bit floats negate through float
    Operator("neg", UNARY, lambda x: x if x.dtype == np.bool_ else -x, operator.neg, "-",
             lambda x, y, dtype: -x, c_float="infix", error_rule="total",
             z3_int=lambda a, b, c, facts: -a, z3_bv=lambda x, y, s: -x,
             interval=lambda a, b, c: (-a[1], -a[0]),
             index=lambda a, b, c, nonneg: -a),
    Operator("not", UNARY, lambda x: ~x, lambda a: int(not a), "!",
             z3_bv=lambda x, y, s: __import__("z3").Not(x)),
    Operator("invert", UNARY, np.invert, operator.invert, "~", z3_bv=lambda x, y, s: ~x),
]


def _cmp(name, ufunc, fn, unsigned, always_never):
    return Operator(name, COMPARE, ufunc, fn, name, _infix(ufunc), c_float="infix",
                    z3_int=_ring(fn), z3_bv=lambda x, y, s: fn(x, y), z3_unsigned=unsigned,
                    truth=always_never)


_COMPARE = [
    _cmp("<", np.less, operator.lt, "ULT", lambda lo, hi: (hi < 0, lo >= 0)),
    _cmp("<=", np.less_equal, operator.le, "ULE", lambda lo, hi: (hi <= 0, lo > 0)),
    _cmp(">", np.greater, operator.gt, "UGT", lambda lo, hi: (lo > 0, hi <= 0)),
    _cmp(">=", np.greater_equal, operator.ge, "UGE", lambda lo, hi: (lo >= 0, hi < 0)),
    _cmp("==", np.equal, operator.eq, None,
         lambda lo, hi: ((lo == 0) & (hi == 0), (hi < 0) | (lo > 0))),
    _cmp("!=", np.not_equal, operator.ne, None,
         lambda lo, hi: ((hi < 0) | (lo > 0), (lo == 0) & (hi == 0))),
]

_LOGICAL = [
    Operator("and", LOGICAL, np.logical_and, lambda a, b: a and b, "&&", decides=False,
             z3_bv=lambda x, y, s: __import__("z3").And(x, y)),
    Operator("or", LOGICAL, np.logical_or, lambda a, b: a or b, "||", decides=True,
             z3_bv=lambda x, y, s: __import__("z3").Or(x, y)),
]

OPERATORS: dict[str, Operator] = {}
for _row in _ARITH + _COMPARE + _LOGICAL:
    OPERATORS[_row.name] = _row
UNARY_OPERATORS: dict[str, Operator] = {r.name: r for r in _UNARY}


def row(e) -> Operator:
    """The row of an ir.Binary/Unary/Compare/Logical node (or a user-op node)."""
    table = UNARY_OPERATORS if e.__class__.__name__ in ("Unary", "UnaryOp") else OPERATORS
    return table[e.op]


# ----------------------------------------------------------------------------- casts

@dataclass(frozen=True)
class CastKind:
    """One kind of conversion. Its numpy meaning is always `dst.quantize` (spec.dtypes:
    float→integer truncates, saturates and wraps; integers wrap; narrow floats round to
    nearest even, float8 saturates); the kinds differ in how C spells them and in what
    the integer analyses know of the result."""
    name: str
    integer_exact: bool        # an integer result that Z3/intervals follow (a wrap)
    z3_bv: Callable | None = None   # (x, src, dst) on bit-vectors (bools as Z3 Bools)


def _bv_to_bool(x, src: DType, dst: DType):
    import z3
    return x != z3.BitVecVal(0, src.bits)


def _bv_from_bool(x, src: DType, dst: DType):
    import z3
    return z3.If(x, z3.BitVecVal(1, dst.bits), z3.BitVecVal(0, dst.bits))


def _bv_wrap(x, src: DType, dst: DType):
    """Two's complement to dst's width: the low bits, or the source's sign or zero
    extension."""
    import z3
    if dst.bits < src.bits:
        return z3.Extract(dst.bits - 1, 0, x)
    if dst.bits > src.bits:
        extend = z3.SignExt if src.kind == "int" else z3.ZeroExt
        return extend(dst.bits - src.bits, x)
    return x


CASTS: dict[str, CastKind] = {k.name: k for k in [
    CastKind("same", True, lambda x, src, dst: x),     # no conversion
    CastKind("to_bool", False, _bv_to_bool),           # x != 0
    CastKind("int_to_int", True, _bv_wrap),            # two's complement wrap to the width
    CastKind("from_bool", False, _bv_from_bool),       # 0 or 1 in the target dtype
    CastKind("float_to_int", False),           # truncate, saturate (CUDA's __float2int_rz)
    CastKind("int_to_float", False),           # round to nearest (bfloat16: toward zero)
    CastKind("float_to_float", False),         # round to nearest even (float8 saturates)
]}


def cast_kind(src: DType, dst: DType) -> str:
    if src == dst:
        return "same"
    if dst.is_bool:
        return "to_bool"
    if src.is_bool:
        return "from_bool"
    if dst.is_int:
        return "float_to_int" if src.is_float else "int_to_int"
    return "float_to_float" if src.is_float else "int_to_float"


def convert_array(values: np.ndarray, dst: DType) -> np.ndarray:
    """The numpy meaning of every cast kind: spec.dtypes' hardware rule."""
    return dst.quantize(values)


# ----------------------------------------------------------------------------- calls

SELECT = "select"
# The reserved calls: their rows live in the tables that own their other columns.
CALLS: dict[str, object] = {**INTRINSICS, R.NAME: R, **{n: SHUFFLES for n in SHUFFLES},
                            **{n: WARP_REDUCES for n in WARP_REDUCES}}


def all_operator_names() -> list[str]:
    """Every row a consumer of expressions must handle, by name (the coverage test)."""
    return [*OPERATORS, *(f"unary {n}" for n in UNARY_OPERATORS),
            *(f"cast {n}" for n in CASTS), SELECT, *(f"call {n}" for n in CALLS)]


# ----------------------------------------------------------------------------- visitor

NODE_TYPES: tuple[type, ...] = (ir.Const, ir.Var, ir.ThreadBinding, ir.Load, ir.Binary,
                                ir.Unary, ir.Compare, ir.Logical, ir.Call, ir.Cast,
                                ir.Select)
_METHODS = {t: "visit_" + t.__name__.lower() for t in NODE_TYPES}


class ExprVisitor:
    """The one way expressions are walked: `visit(e, *args)` calls
    `self.visit_<node type>(e, *args)` (visit_const, visit_var, visit_threadbinding,
    visit_load, visit_binary, visit_unary, visit_compare, visit_logical, visit_call,
    visit_cast, visit_select). A consumer subclasses it, gives one method per node type,
    and `fallback` for the types it does not model (tests/test_operators.py checks that
    each consumer either handles or explicitly falls back on every type). Dispatch is a
    dict lookup by exact type."""

    def visit(self, e, *args):
        return getattr(self, _METHODS[e.__class__])(e, *args)

    def fallback(self, e, *args):
        raise NotImplementedError(f"{type(self).__name__} does not handle {type(e).__name__}")

    @staticmethod
    def register(node_type: type, method: str) -> None:
        """Walk another node family with the same methods: spec.user_ops' declared-op
        body nodes are the same kinds (UnaryOp is a unary, ExtremumOp a T.max/T.min call)."""
        assert method in _METHODS.values(), method
        _METHODS[node_type] = method

    @classmethod
    def handled(cls) -> dict[type, bool]:
        """Per node type: whether this visitor has its own method (True) or routes it to
        `fallback` (False). A type with neither is a gap."""
        return {t: getattr(cls, m, None) is not None for t, m in _METHODS.items()}
