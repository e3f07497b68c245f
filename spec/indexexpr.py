"""Integer index expressions: the language layouts are written in.

Constants, variables, `+`, `-`, `*`, and floor division / floor modulo by a positive
constant. Every expression evaluates vectorized in numpy, renders to C, translates to Z3
and prints readably (`8*rep + j`, `(4*i + j) % 128`).

Expressions are frozen dataclasses that compare structurally. Build them with the
operators or the functions `add`, `sub`, `mul`, `floordiv`, `mod`: these simplify as they
go. Sums are kept in a linear normal form (like terms merged, first-appearance order,
constant last), so `rep*8 + j` and `j + 8*rep - 0` build the same tree up to term order.
The rewrite rules, all exact under floor semantics for a positive divisor c:

    (k*c*x + u) // c  ->  k*x + u // c          (k*c*x + u) % c  ->  u % c
    (x // a) // b     ->  x // (a*b)            (x % (k*c)) % c  ->  x % c
    c*(x // c) + x % c  ->  x
    x // c, x % c with lo <= x <= hi known and lo//c == hi//c  ->  constants / x - q*c

The last rule needs variable ranges; `simplify(expr, ranges)` applies it everywhere."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Union

import numpy as np

from .hashing import hashed_once

Ranges = Mapping[str, tuple[float, float]]      # name -> inclusive (lo, hi), may be ±inf


class IndexExpr:
    """Base of the expression nodes: operators build simplified expressions."""
    __slots__ = ()

    def __add__(self, other): return add(self, other)
    def __radd__(self, other): return add(other, self)
    def __sub__(self, other): return sub(self, other)
    def __rsub__(self, other): return sub(other, self)
    def __mul__(self, other): return mul(self, other)
    def __rmul__(self, other): return mul(other, self)
    def __neg__(self): return mul(-1, self)
    def __floordiv__(self, c): return floordiv(self, c)
    def __mod__(self, c): return mod(self, c)

    def __str__(self) -> str:
        return _render(self, _PY)

    # --- queries ---------------------------------------------------------------------

    def free_vars(self) -> tuple[str, ...]:
        """Variable names, in first-appearance order."""
        names: dict[str, None] = {}
        _collect_vars(self, names)
        return tuple(names)

    def evaluate(self, env: Mapping[str, "np.ndarray | int"]) -> np.ndarray:
        """The value for every point of env's (broadcast) arrays, as int64."""
        return np.asarray(_eval(self, env), dtype=np.int64)

    def bounds(self, ranges: Ranges | None = None,
               default: tuple[float, float] = (-math.inf, math.inf)) -> tuple[float, float]:
        """Inclusive interval containing every value; variables missing from ranges
        range over default."""
        return _bounds(self, ranges or {}, default)

    # --- rewriting -------------------------------------------------------------------

    def substitute(self, mapping: Mapping[str, "IndexExpr | int"]) -> "IndexExpr":
        """Replace variables by expressions, simplifying the result."""
        return _rebuild(self, {k: as_expr(v) for k, v in mapping.items()}, None)

    def simplify(self, ranges: Ranges | None = None) -> "IndexExpr":
        """Re-simplify bottom-up using variable ranges (a variable whose range is one
        value becomes that constant)."""
        return _rebuild(self, {}, ranges or {})

    # --- back ends -------------------------------------------------------------------

    def to_c(self, names: Mapping[str, str] | None = None,
             ranges: Ranges | None = None) -> str:
        """A C `int` expression. C's `/` and `%` truncate toward zero; they equal floor
        division/modulo when the numerator is non-negative (the divisor is always a
        positive constant). Variables are taken to be non-negative unless ranges says
        otherwise — true of every layout variable (indices, replicas, threads, slots).
        A numerator that may still be negative is rendered with an exact floor form."""
        style = _CStyle(names or {}, ranges or {})
        return _render(self, style)

    def to_z3(self, vars: Mapping[str, object]):
        """A Z3 term. vars maps names to Int terms or to bit-vector terms (all of one
        width). Z3's Int div/mod are Euclidean, which is floor for a positive divisor;
        bit-vector `%` is bvsmod (sign of the divisor: floor for c > 0), and the quotient
        is the exact signed division (x - x mod c) / c. Bit-vector terms wrap: choose a
        width that holds the values (thread and slot numbers are small)."""
        return _to_z3(self, vars, _z3_width(vars))


@hashed_once
@dataclass(frozen=True)
class Const(IndexExpr):
    value: int


@hashed_once
@dataclass(frozen=True)
class Var(IndexExpr):
    name: str


@hashed_once
@dataclass(frozen=True)
class Add(IndexExpr):
    a: IndexExpr
    b: IndexExpr


@hashed_once
@dataclass(frozen=True)
class Sub(IndexExpr):
    a: IndexExpr
    b: IndexExpr


@hashed_once
@dataclass(frozen=True)
class Mul(IndexExpr):
    a: IndexExpr
    b: IndexExpr


@hashed_once
@dataclass(frozen=True)
class FloorDiv(IndexExpr):
    a: IndexExpr
    c: int


@hashed_once
@dataclass(frozen=True)
class Mod(IndexExpr):
    a: IndexExpr
    c: int


ExprLike = Union[IndexExpr, int]


def as_expr(x: ExprLike) -> IndexExpr:
    if isinstance(x, IndexExpr):
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"not an integer index expression: {x!r}")
    return Const(int(x))


def var(name: str) -> Var:
    return Var(name)


# ============================================================ linear normal form of sums
# A sum is an ordered map atom -> coefficient plus a constant. Atoms are Var, FloorDiv,
# Mod and products of two non-constant expressions.

Terms = dict[IndexExpr, int]


def _linear(e: IndexExpr) -> tuple[Terms, int]:
    if isinstance(e, Const):
        return {}, e.value
    if isinstance(e, (Add, Sub)):
        ta, ca = _linear(e.a)
        tb, cb = _linear(e.b)
        sign = 1 if isinstance(e, Add) else -1
        for atom, k in tb.items():
            ta[atom] = ta.get(atom, 0) + sign * k
        return ta, ca + sign * cb
    if isinstance(e, Mul) and isinstance(e.a, Const):
        tb, cb = _linear(e.b)
        return {atom: e.a.value * k for atom, k in tb.items()}, e.a.value * cb
    return {e: 1}, 0


def linear_terms(e: IndexExpr) -> tuple[dict[IndexExpr, int], int]:
    """e as sum(coefficient * atom) + constant, the atoms being variables, floor
    divisions, modulos and products of variables; zero coefficients left out."""
    terms, const = _linear(e)
    return {atom: k for atom, k in terms.items() if k}, const


def linear_in(e: IndexExpr, names) -> tuple[tuple[str, int], ...] | None:
    """The coefficient of each of `names` that e reads, when e is affine in them: each
    appears only as a term c·name of e's linear form, never inside a floor division, a
    modulo or a product of variables. Then e = e[names := 0] + Σ c·name exactly (integer
    arithmetic), so e can be evaluated once with the names at 0 and shifted by a
    scalar for every other value of theirs. None when some name is not affine in e."""
    terms, _ = linear_terms(e)
    out = []
    for atom, k in terms.items():
        if isinstance(atom, Var) and atom.name in names:
            out.append((atom.name, k))
        elif any(n in names for n in atom.free_vars()):
            return None
    return tuple(out)


def _fuse_div_mod(terms: Terms) -> tuple[Terms, int]:
    """c*(x // c) + x % c -> x, also scaled by a common coefficient k. Returns the new
    terms and the constant that x's own linear form adds."""
    extra = 0
    changed = True
    while changed:
        changed = False
        for atom, k in terms.items():
            if isinstance(atom, Mod) and k != 0 and \
                    terms.get(FloorDiv(atom.a, atom.c), 0) == k * atom.c:
                del terms[atom], terms[FloorDiv(atom.a, atom.c)]
                inner, const = _linear(atom.a)
                for a2, k2 in inner.items():
                    terms[a2] = terms.get(a2, 0) + k * k2
                extra += k * const
                changed = True
                break
    return terms, extra


def _from_linear(terms: Terms, const: int) -> IndexExpr:
    terms, extra = _fuse_div_mod(dict(terms))
    const += extra
    out: IndexExpr | None = None
    for atom, k in terms.items():
        if k == 0:
            continue
        if out is None:
            out = atom if k == 1 else Mul(Const(k), atom)
        elif k > 0:
            out = Add(out, atom if k == 1 else Mul(Const(k), atom))
        else:
            out = Sub(out, atom if k == -1 else Mul(Const(-k), atom))
    if out is None:
        return Const(const)
    if const > 0:
        return Add(out, Const(const))
    if const < 0:
        return Sub(out, Const(-const))
    return out


# ============================================================ simplifying constructors

def add(a: ExprLike, b: ExprLike) -> IndexExpr:
    return _from_linear(*_linear(Add(as_expr(a), as_expr(b))))


def sub(a: ExprLike, b: ExprLike) -> IndexExpr:
    return _from_linear(*_linear(Sub(as_expr(a), as_expr(b))))


def mul(a: ExprLike, b: ExprLike) -> IndexExpr:
    a, b = as_expr(a), as_expr(b)
    if isinstance(b, Const) and not isinstance(a, Const):
        a, b = b, a
    if isinstance(a, Const):
        if isinstance(b, Const):
            return Const(a.value * b.value)
        terms, const = _linear(b)
        return _from_linear({t: a.value * k for t, k in terms.items()}, a.value * const)
    return Mul(a, b)                       # not affine: kept as an atom


def _divisor(c) -> int:
    if isinstance(c, Const):
        c = c.value
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)) or c <= 0:
        raise ValueError(f"divisor must be a positive integer constant, got {c!r}")
    return int(c)


def _split_multiples(a: IndexExpr, c: int) -> tuple[Terms, int, Terms, int]:
    """a = c*(multiples) + rest: the terms whose coefficient c divides, and the rest."""
    terms, const = _linear(a)
    whole = {t: k // c for t, k in terms.items() if k % c == 0 and k != 0}
    rest = {t: k for t, k in terms.items() if k % c != 0}
    q, r = divmod(const, c)
    return whole, q, rest, r


def floordiv(a: ExprLike, c, ranges: Ranges | None = None) -> IndexExpr:
    a, c = as_expr(a), _divisor(c)
    if c == 1:
        return a
    if isinstance(a, Const):
        return Const(a.value // c)
    if isinstance(a, FloorDiv):
        return floordiv(a.a, a.c * c, ranges)
    whole, q, rest, r = _split_multiples(a, c)
    if whole or q:
        return add(_from_linear(whole, q), floordiv(_from_linear(rest, r), c, ranges))
    lo, hi = a.bounds(ranges or {})
    if math.isfinite(lo) and math.isfinite(hi) and lo // c == hi // c:
        return Const(int(lo // c))
    common = _common_factor(a, c, ranges)
    if common:
        g, big, _ = common
        return floordiv(big, c // g, ranges)
    return FloorDiv(a, c)


def mod(a: ExprLike, c, ranges: Ranges | None = None) -> IndexExpr:
    a, c = as_expr(a), _divisor(c)
    if c == 1:
        return Const(0)
    if isinstance(a, Const):
        return Const(a.value % c)
    if isinstance(a, Mod) and a.c % c == 0:
        return mod(a.a, c, ranges)
    whole, q, rest, r = _split_multiples(a, c)
    if whole or q:
        return mod(_from_linear(rest, r), c, ranges)
    lo, hi = a.bounds(ranges or {})
    if math.isfinite(lo) and math.isfinite(hi) and lo // c == hi // c:
        return sub(a, int(lo // c) * c)
    common = _common_factor(a, c, ranges)
    if common:
        g, big, small = common
        return add(mul(g, mod(big, c // g, ranges)), small)
    return Mod(a, c)


def _common_factor(a: IndexExpr, c: int, ranges: Ranges | None):
    """a = g*big + small with g > 1 dividing c and 0 <= small < g, so that
    a // c = big // (c/g) and a % c = g*(big % (c/g)) + small. None if no such g."""
    terms, const = _linear(a)
    for g in sorted({math.gcd(c, k) for k in terms.values()}, reverse=True):
        if g <= 1:
            continue
        big = {t: k // g for t, k in terms.items() if k % g == 0}
        small = _from_linear({t: k for t, k in terms.items() if k % g != 0}, const)
        lo, hi = small.bounds(ranges or {})
        if big and 0 <= lo and hi < g:
            return g, _from_linear(big, 0), small
    return None


def _rebuild(e: IndexExpr, mapping: Mapping[str, IndexExpr], ranges: Ranges | None):
    if isinstance(e, Const):
        return e
    if isinstance(e, Var):
        if e.name in mapping:
            return mapping[e.name]
        if ranges and e.name in ranges:
            lo, hi = ranges[e.name]
            if lo == hi and math.isfinite(lo):
                return Const(int(lo))
        return e
    if isinstance(e, (FloorDiv, Mod)):
        inner = _rebuild(e.a, mapping, ranges)
        return (floordiv if isinstance(e, FloorDiv) else mod)(inner, e.c, ranges)
    a, b = _rebuild(e.a, mapping, ranges), _rebuild(e.b, mapping, ranges)
    return {Add: add, Sub: sub, Mul: mul}[type(e)](a, b)


# ============================================================ evaluation and bounds

def _collect_vars(e: IndexExpr, out: dict[str, None]) -> None:
    if isinstance(e, Var):
        out[e.name] = None
    elif isinstance(e, (Add, Sub, Mul)):
        _collect_vars(e.a, out)
        _collect_vars(e.b, out)
    elif isinstance(e, (FloorDiv, Mod)):
        _collect_vars(e.a, out)


def _eval(e: IndexExpr, env):
    if isinstance(e, Const):
        return np.int64(e.value)
    if isinstance(e, Var):
        if e.name not in env:
            raise KeyError(f"no value for variable {e.name!r}")
        return np.asarray(env[e.name], dtype=np.int64)
    if isinstance(e, Add):
        return _eval(e.a, env) + _eval(e.b, env)
    if isinstance(e, Sub):
        return _eval(e.a, env) - _eval(e.b, env)
    if isinstance(e, Mul):
        return _eval(e.a, env) * _eval(e.b, env)
    if isinstance(e, FloorDiv):
        return np.floor_divide(_eval(e.a, env), e.c)
    return np.mod(_eval(e.a, env), e.c)


def _mul_interval(a, b):
    products = [x * y if not (x == 0 or y == 0) else 0 for x in a for y in b]
    return min(products), max(products)


def _bounds(e: IndexExpr, ranges: Ranges, default) -> tuple[float, float]:
    if isinstance(e, Const):
        return e.value, e.value
    if isinstance(e, Var):
        return tuple(ranges.get(e.name, default))
    if isinstance(e, (Add, Sub)):
        (al, ah), (bl, bh) = _bounds(e.a, ranges, default), _bounds(e.b, ranges, default)
        return (al + bl, ah + bh) if isinstance(e, Add) else (al - bh, ah - bl)
    if isinstance(e, Mul):
        return _mul_interval(_bounds(e.a, ranges, default), _bounds(e.b, ranges, default))
    lo, hi = _bounds(e.a, ranges, default)
    if isinstance(e, FloorDiv):
        return (lo // e.c if math.isfinite(lo) else lo), (hi // e.c if math.isfinite(hi) else hi)
    if math.isfinite(lo) and math.isfinite(hi) and lo // e.c == hi // e.c:
        q = lo // e.c
        return lo - q * e.c, hi - q * e.c
    return 0, e.c - 1


# ============================================================ printing (Python and C)
# Precedence: 1 for + and -, 2 for *, // and %, 3 for atoms. Python and C agree on it,
# so one renderer serves both; a style decides leaves and the floor operators.

class _PyStyle:
    def leaf(self, e: IndexExpr) -> str:
        return str(e.value) if isinstance(e, Const) else e.name

    def floor_op(self, e, left: str) -> str:
        return f"{left} {'//' if isinstance(e, FloorDiv) else '%'} {e.c}"

    def safe(self, e) -> bool:
        return True


_PY = _PyStyle()
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*$")


class _CStyle:
    def __init__(self, names: Mapping[str, str], ranges: Ranges):
        self.names, self.ranges = names, ranges

    def leaf(self, e: IndexExpr) -> str:
        if isinstance(e, Const):
            return str(e.value)
        text = self.names.get(e.name, e.name)
        return text if _IDENT.match(text) else f"({text})"

    def safe(self, e) -> bool:
        """Truncating C division equals floor division here: numerator >= 0."""
        return e.a.bounds(self.ranges, default=(0, math.inf))[0] >= 0

    def floor_op(self, e, left: str) -> str:
        if self.safe(e):
            return f"{left} {'/' if isinstance(e, FloorDiv) else '%'} {e.c}"
        inner = _render(e.a, self)
        floor_mod = f"((({inner}) % {e.c} + {e.c}) % {e.c})"
        if isinstance(e, Mod):
            return floor_mod
        return f"((({inner}) - {floor_mod}) / {e.c})"   # exact: a - a mod c is a multiple


def _prec(e: IndexExpr) -> int:
    if isinstance(e, (Add, Sub)):
        return 1
    if isinstance(e, (Mul, FloorDiv, Mod)):
        return 2
    if isinstance(e, Const) and e.value < 0:
        return 1
    return 3


def _render(e: IndexExpr, style) -> str:
    def sub_(x: IndexExpr, min_prec: int) -> str:
        text = _render(x, style)
        return f"({text})" if _prec(x) < min_prec else text

    if isinstance(e, (Const, Var)):
        return style.leaf(e)
    if isinstance(e, Add):
        return f"{sub_(e.a, 1)} + {sub_(e.b, 2)}"
    if isinstance(e, Sub):
        return f"{sub_(e.a, 1)} - {sub_(e.b, 2)}"
    if isinstance(e, Mul):
        return f"{sub_(e.a, 2)}*{sub_(e.b, 3)}"
    return style.floor_op(e, sub_(e.a, 2))


# ============================================================ Z3

def _z3_width(vars: Mapping[str, object]) -> int | None:
    import z3
    for v in vars.values():
        if isinstance(v, z3.BitVecRef):
            return v.size()
    return None


def _to_z3(e: IndexExpr, vars, width):
    import z3
    if isinstance(e, Const):
        return z3.IntVal(e.value) if width is None else z3.BitVecVal(e.value, width)
    if isinstance(e, Var):
        return vars[e.name]
    if isinstance(e, (FloorDiv, Mod)):
        a = _to_z3(e.a, vars, width)
        if width is None:
            return a / e.c if isinstance(e, FloorDiv) else a % e.c
        c = z3.BitVecVal(e.c, width)
        m = a % c                                   # bvsmod: floor modulo for c > 0
        return m if isinstance(e, Mod) else (a - m) / c
    a, b = _to_z3(e.a, vars, width), _to_z3(e.b, vars, width)
    if isinstance(e, Add):
        return a + b
    if isinstance(e, Sub):
        return a - b
    return a * b
