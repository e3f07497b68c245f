"""R209: is a reducer's logical index inside its shape for every iteration?

The proof has two rungs, cheapest first. Intervals: each variable gets its range from
where it is bound (block index from the grid, `T.Parallel` extents, serial loop bounds,
`T.get_thread_binding()` from the thread count) and the index expression is evaluated on
ranges. That settles most indices; it cannot see correlations (`i*4 + j` with j < 4 on a
(32,) reducer: the interval of i*4 + j over i < 8, j < 4 is 0..31, fine, but i*4 + j with
j < 5 has interval 0..32 although that is a real overflow only for some i). Z3 then decides
it exactly, with the enclosing `if` conditions as assumptions (a predicated update
`if j < N: acc[j] += ...` is in bounds because of its guard). A Z3 `unknown` (timeout,
nonlinear arithmetic) is never taken as a pass: it is reported as possibly out of bounds.

The same interval machinery gives trip counts to the control-flow graph (verify.epochs.cfg)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import z3

from verify_reducer.spec import ir
from verify_reducer.spec import reinterpret as R
from verify_reducer.spec.intrinsics import INTRINSICS
from verify_reducer.spec.operators import (CASTS, OPERATORS, UNARY_OPERATORS, ExprVisitor,
                                           cast_kind)

from verify_reducer.verify.epochs.scopes import Binding, Context

INF = math.inf
Z3_TIMEOUT_MS = 2000


@dataclass(frozen=True)
class Interval:
    lo: float      # an int, or -inf
    hi: float      # an int, or +inf

    @staticmethod
    def point(v: int) -> "Interval":
        return Interval(v, v)

    def inside(self, lo: int, hi: int) -> bool:
        return lo <= self.lo and self.hi <= hi

    def union(self, other: "Interval") -> "Interval":
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))


def _dtype_range(dtype) -> Interval:
    if dtype.is_int:
        return Interval(dtype.lowest, dtype.highest)
    if dtype.is_bool:
        return Interval(0, 1)
    if dtype.saturates:
        # a float8 value is never infinite: every conversion into it saturates
        # (docs/semantics.md §8); its range ends are integers (448, 57344)
        return Interval(-int(dtype.finite_max), int(dtype.finite_max))
    return Interval(-INF, INF)


def _const_value(iv: Interval) -> int | None:
    return int(iv.lo) if iv.lo == iv.hi and not math.isinf(iv.lo) else None


def integer_conversion(e: ir.Expr) -> ir.Expr | None:
    """The integer operand that e converts to its integer dtype, or None: a T.cast, or a
    T.reinterpret between integers, which is the same two's-complement conversion
    (spec.reinterpret). A reinterpretation from or to a float is not one: its integer
    side is any value of its dtype here, as every float is (`_Encoder.fresh`), and a
    float made from bits is any float (a float8 within ±finite_max: an infinity made
    that way is refused where it is computed, interp.evaluate)."""
    if isinstance(e, ir.Cast) and e.dtype.is_int and \
            CASTS[cast_kind(e.a.dtype, e.dtype)].integer_exact:
        return e.a
    if isinstance(e, ir.Call) and e.func == R.NAME and \
            R.is_integer_wrap(e.args[0].dtype, e.dtype):
        return e.args[0]
    return None


def interval(e: ir.Expr, ctx: Context, depth: int = 0) -> Interval:
    """A range containing every value e can take at a statement in ctx."""
    if depth > 32:  # a Let chain this deep is not worth following
        return _dtype_range(e.dtype)
    return _INTERVALS.visit(e, ctx, depth)


def _by_row(row, a: Interval, b: Interval | None, c: int | None, dtype) -> Interval:
    """The row's interval rule (spec.operators), or dtype's range where it has none."""
    found = row.interval((a.lo, a.hi), None if b is None else (b.lo, b.hi), c) \
        if row.interval is not None else None
    return _dtype_range(dtype) if found is None else Interval(*found)


class _Intervals(ExprVisitor):
    """interval's face of the visitor protocol: (e, ctx, depth) -> Interval."""

    def visit_const(self, e, ctx, depth):
        v = e.value
        if isinstance(v, bool):
            return Interval.point(int(v))
        if isinstance(v, int):
            return Interval.point(v)
        return Interval(v, v) if math.isfinite(v) and v == int(v) else Interval(-INF, INF)

    def visit_var(self, e, ctx, depth):
        return var_interval(ctx.lookup(e), ctx, depth)

    def visit_threadbinding(self, e, ctx, depth):
        return Interval(0, ctx.kernel.threads - 1)

    def visit_load(self, e, ctx, depth):
        return _dtype_range(e.dtype)

    def _converted(self, source, e, ctx, depth):
        inner = interval(source, ctx, depth + 1)
        rng = _dtype_range(e.dtype)
        return inner if inner.inside(rng.lo, rng.hi) else rng

    def visit_cast(self, e, ctx, depth):
        return self._converted(e.a, e, ctx, depth)

    def visit_select(self, e, ctx, depth):
        return interval(e.a, ctx, depth + 1).union(interval(e.b, ctx, depth + 1))

    def visit_unary(self, e, ctx, depth):
        return _by_row(UNARY_OPERATORS[e.op], interval(e.a, ctx, depth + 1), None, None,
                       e.dtype)

    def visit_call(self, e, ctx, depth):
        source = integer_conversion(e)
        if source is not None:
            return self._converted(source, e, ctx, depth)
        row = INTRINSICS.get(e.func)
        if row is not None and row.interval is not None and len(e.args) == 2:
            a, b = (interval(x, ctx, depth + 1) for x in e.args)
            return Interval(*row.interval((a.lo, a.hi), (b.lo, b.hi)))
        return _dtype_range(e.dtype)

    def visit_binary(self, e, ctx, depth):
        if not e.dtype.is_int:
            return _dtype_range(e.dtype)
        a = interval(e.a, ctx, depth + 1)
        b = interval(e.b, ctx, depth + 1)
        return _by_row(OPERATORS[e.op], a, b, _const_value(b), e.dtype)

    def visit_compare(self, e, ctx, depth):
        return Interval(0, 1)

    visit_logical = visit_compare


_INTERVALS = _Intervals()


def var_interval(b: Binding | None, ctx: Context, depth: int = 0) -> Interval:
    if b is None:
        return Interval(-INF, INF)
    if b.kind in ("block", "parallel"):
        return Interval(0, b.extent - 1)
    if b.kind == "let":
        return interval(b.let.value, ctx, depth + 1)
    loop = b.loop
    start, stop = interval(loop.start, ctx, depth + 1), interval(loop.stop, ctx, depth + 1)
    if loop.step > 0:
        return Interval(start.lo, max(start.lo, stop.hi - 1))
    return Interval(min(start.hi, stop.lo + 1), start.hi)


def trip_range(loop: ir.SerialFor, ctx: Context) -> tuple[float, float]:
    """(fewest, most) iterations the loop can run; inf when the bounds are unknown."""
    start, stop = interval(loop.start, ctx), interval(loop.stop, ctx)
    step = loop.step
    if step > 0:
        fewest, most = stop.lo - start.hi, stop.hi - start.lo
    else:
        fewest, most = start.lo - stop.hi, start.hi - stop.lo
        step = -step

    def trips(distance):
        if math.isinf(distance):
            return distance if distance > 0 else 0
        return max(0, -(-int(distance) // step))
    return trips(fewest), trips(most)


# ----------------------------------------------------------------------------- Z3


class _Encoder:
    """Integer expressions of the IR as Z3 terms, with the facts about their variables."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.facts: list = []
        self.vars: dict[str, z3.ArithRef] = {}   # shown in counterexamples, by source name
        self._fresh = 0
        self.dropped = 0             # conditions left out (not readable as integers)

    def fresh(self, dtype, hint: str = "v") -> z3.ArithRef:
        """An unconstrained value (a fragment element, a float): any value of its dtype."""
        self._fresh += 1
        t = z3.Int(f"{hint}!{self._fresh}")
        rng = _dtype_range(dtype)
        if not math.isinf(rng.lo):
            self.facts += [t >= int(rng.lo), t <= int(rng.hi)]
        return t

    def term(self, e: ir.Expr, depth: int = 0) -> z3.ArithRef:
        if depth > 32:
            return self.fresh(e.dtype)
        return _Terms.visit(_TERMS, e, self, depth)

    def converted(self, e: ir.Expr, dtype, depth: int) -> z3.ArithRef:
        """The integer e converted to the integer dtype: itself where its interval
        fits, else wrapped to the width in two's complement as C converts (a negative
        int32 compared as uint32 is 2**32 + it; docs/semantics.md §8)."""
        t = self.term(e, depth)
        rng = _dtype_range(dtype)
        if interval(e, self.ctx, depth).inside(rng.lo, rng.hi):
            return t
        size = 1 << dtype.bits
        if dtype.kind == "uint":
            return t % size                   # Z3's % by a positive constant: in [0, size)
        half = size >> 1
        return (t + half) % size - half

    def _either(self, a, b, dtype):
        t = self.fresh(dtype)
        self.facts.append(z3.Or(t == a, t == b))
        return t

    def binary(self, e: ir.Binary, depth: int) -> z3.ArithRef:
        """The row's Z3 integer encoding (spec.operators); an operation it has none for
        (other bit operations, a shift by a non-constant) is any value in its interval."""
        a, b = self.term(e.a, depth + 1), self.term(e.b, depth + 1)
        row = OPERATORS[e.op]
        if row.z3_int is not None:
            t = row.z3_int(a, b, _const_value(interval(e.b, self.ctx)), self.facts)
            if t is not None:
                return t
        t = self.fresh(e.dtype)
        iv = interval(e, self.ctx)
        if not math.isinf(iv.lo):
            self.facts += [t >= int(iv.lo), t <= int(iv.hi)]
        return t

    def var(self, v: ir.Var, depth: int) -> z3.ArithRef:
        b = self.ctx.lookup(v)
        if b is None:
            return self.fresh(v.dtype, v.name)
        if b.kind == "let":
            return self.term(b.let.value, depth + 1)
        if v.name in self.vars:
            return self.vars[v.name]
        t = z3.Int(v.name)
        self.vars[v.name] = t
        if b.kind in ("block", "parallel"):
            self.facts += [t >= 0, t < b.extent]
        else:
            loop = b.loop
            start, stop = self.term(loop.start, depth + 1), self.term(loop.stop, depth + 1)
            n = z3.Int(f"{v.name}!iteration")
            self.facts += [n >= 0, t == start + loop.step * n,
                           t < stop if loop.step > 0 else t > stop]
        return t

    def cond(self, e: ir.Expr, depth: int = 0):
        """A Z3 boolean for an integer condition, or None (then it is not assumed)."""
        return _CONDITIONS.visit(e, self, depth)

    def assumed(self, conds) -> list:
        """Each (condition, holds) as a Z3 boolean to assume; an integer condition the
        encoder cannot read is left out (assuming less is sound)."""
        out = []
        for cond, holds in conds:
            c = self.cond(cond)
            if c is not None:
                out.append(c if holds else z3.Not(c))
            else:
                self.dropped += 1
        return out

    @property
    def exact(self) -> bool:
        """Whether every term so far is the expression itself: no value stood in for by
        a fresh one (a load, a float, an operation without an encoding) and no condition
        left out. Only then is a model a witness rather than a possibility."""
        return self._fresh == 0 and self.dropped == 0

    def guards(self) -> list:
        """The enclosing `if` conditions of the context, as assumptions."""
        return self.assumed(self.ctx.guards())


class _Terms(ExprVisitor):
    """_Encoder.term's face of the visitor protocol: (e, encoder, depth) -> a Z3 integer;
    what is not an integer the encoder follows is a fresh value of its dtype."""

    def visit_const(self, e, enc, depth):
        v = e.value
        if isinstance(v, (bool, int)) or (math.isfinite(v) and v == int(v)):
            return z3.IntVal(int(v))
        return enc.fresh(e.dtype)

    def visit_var(self, e, enc, depth):
        return enc.var(e, depth)

    def visit_threadbinding(self, e, enc, depth):
        if "T.get_thread_binding()" not in enc.vars:
            t = z3.Int("T.get_thread_binding()")
            enc.facts += [t >= 0, t < enc.ctx.kernel.threads]
            enc.vars["T.get_thread_binding()"] = t
        return enc.vars["T.get_thread_binding()"]

    def visit_load(self, e, enc, depth):
        return enc.fresh(e.dtype)

    visit_compare = visit_logical = visit_load

    def visit_cast(self, e, enc, depth):
        source = integer_conversion(e)                     # a wrap (the cast kind's)
        if source is not None:
            return enc.converted(source, e.dtype, depth + 1)
        if e.dtype.is_int and e.a.dtype.saturates:
            # a float8 value truncated to an integer: within ±finite_max where the
            # target holds that range (NaN converts to 0, inside it)
            t = enc.fresh(e.dtype)
            iv = interval(e, enc.ctx, depth)
            enc.facts += [t >= int(iv.lo), t <= int(iv.hi)]
            return t
        return enc.fresh(e.dtype)

    def visit_call(self, e, enc, depth):
        source = integer_conversion(e)
        if source is not None:
            return enc.converted(source, e.dtype, depth + 1)
        row = INTRINSICS.get(e.func)
        if row is not None and row.z3_int is not None and e.dtype.is_int:
            return row.z3_int(*(enc.term(x, depth + 1) for x in e.args))
        return enc.fresh(e.dtype)

    def visit_unary(self, e, enc, depth):
        row = UNARY_OPERATORS[e.op]
        if e.dtype.is_int and row.z3_int is not None:
            return row.z3_int(enc.term(e.a, depth + 1), None, None, enc.facts)
        return enc.fresh(e.dtype)

    def visit_select(self, e, enc, depth):
        if not e.dtype.is_int:
            return enc.fresh(e.dtype)
        cond = enc.cond(e.cond, depth + 1)
        a, b = enc.term(e.a, depth + 1), enc.term(e.b, depth + 1)
        return z3.If(cond, a, b) if cond is not None else enc._either(a, b, e.dtype)

    def visit_binary(self, e, enc, depth):
        return enc.binary(e, depth) if e.dtype.is_int else enc.fresh(e.dtype)


_TERMS = _Terms()


class _Conditions(ExprVisitor):
    """_Encoder.cond's face of the visitor protocol: (e, encoder, depth) -> a Z3 boolean
    for an integer condition, or None where it cannot be read (assuming less is sound)."""

    def visit_const(self, e, enc, depth):
        return z3.BoolVal(e.value) if isinstance(e.value, bool) else None

    def visit_compare(self, e, enc, depth):
        if not (e.a.dtype.is_int and e.b.dtype.is_int):
            return None
        # both sides converted to the dtype the comparison runs in (C's usual
        # conversions: `u32 > s32` compares as uint32)
        a = enc.converted(e.a, e.operand_dtype, depth + 1)
        b = enc.converted(e.b, e.operand_dtype, depth + 1)
        return OPERATORS[e.op].z3_int(a, b, None, enc.facts)

    def visit_logical(self, e, enc, depth):
        a, b = enc.cond(e.a, depth + 1), enc.cond(e.b, depth + 1)
        if OPERATORS[e.op].decides is False:          # and
            # one unknown conjunct: assuming only the other is still sound
            parts = [p for p in (a, b) if p is not None]
            return z3.And(*parts) if parts else None
        return z3.Or(a, b) if a is not None and b is not None else None

    def visit_unary(self, e, enc, depth):
        if e.op != "not":
            return None
        a = enc.cond(e.a, depth + 1)
        return z3.Not(a) if a is not None else None

    def visit_var(self, e, enc, depth):
        return None

    visit_threadbinding = visit_load = visit_binary = visit_call = visit_cast = \
        visit_select = visit_var


_CONDITIONS = _Conditions()


@dataclass(frozen=True)
class OutOfBounds:
    """One dimension of one index that can leave the shape."""
    dim: int
    extent: int
    proved: bool                         # False: Z3 could not decide
    values: tuple[tuple[str, int], ...]  # the counterexample's variables, source order
    index_value: int | None


def check_index(indices: tuple[ir.Expr, ...], shape: tuple[int, ...],
                ctx: Context) -> list[OutOfBounds]:
    """Each dimension whose index can leave 0..extent-1 (the arity is checked by caller)."""
    found = []
    for dim, (idx, extent) in enumerate(zip(indices, shape)):
        if interval(idx, ctx).inside(0, extent - 1):
            continue
        verdict = _z3_index(idx, dim, extent, ctx)
        if verdict is not None:
            found.append(verdict)
    return found


def _z3_index(idx: ir.Expr, dim: int, extent: int, ctx: Context) -> OutOfBounds | None:
    enc = _Encoder(ctx)
    value = enc.term(idx)
    assumptions = enc.guards()
    solver = z3.Solver()
    solver.set("timeout", Z3_TIMEOUT_MS)
    solver.add(*enc.facts, *assumptions, z3.Or(value < 0, value >= extent))
    result = solver.check()
    if result == z3.unsat:
        return None
    if result == z3.unknown:
        return OutOfBounds(dim, extent, False, (), None)
    model = solver.model()
    shown = tuple((name, model.eval(t, model_completion=True).as_long())
                  for name, t in enc.vars.items())
    return OutOfBounds(dim, extent, True, shown,
                       model.eval(value, model_completion=True).as_long())
