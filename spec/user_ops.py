"""User-declared reducer ops (docs/design.md §22): a combine written as one expression
over its two operands in one integer dtype, with its identity, as an entry of the one op
table (`UserMonoid` is a `spec.ops.Monoid`).

The body is a small typed expression language, read from the declaration by
spec.frontend.user_ops and given the same three faces as spec.indexexpr:

- `evaluate`: numpy, vectorized, for the interpreter and the simulator;
- `c_definition`: a `__device__` function for the CUDA renderer, one `const` temporary per
  node, so no operand is evaluated twice (an operand may be a warp shuffle) and no C
  precedence or promotion rule needs thinking about;
- `encode`: Z3 bit-vectors of each node's width, for the proofs of the monoid laws.

Every node has one dtype; operands of an operator have the same dtype (the frontend
inserts no conversion: the user writes `T.cast`). Integers wrap after every operation,
as everywhere else (docs/semantics.md §8). In C the wrapping arithmetic and the left
shift run on the unsigned type of the width, then convert back, so no operation is
undefined behaviour; shift amounts are constants in [0, bits) (the frontend checks)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Union

import numpy as np

from .dtypes import BOOL, DType
from .intrinsics import INTRINSICS
from .operators import (CASTS, OPERATORS, UNARY_OPERATORS, ExprVisitor, cast_kind,
                        convert_array)
from .ops import Monoid
from .source import Span

ARITHMETIC = ("+", "-", "*")
BITWISE = ("&", "|", "^")
SHIFTS = ("<<", ">>")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


@dataclass(frozen=True)
class Param:
    index: int                       # 0: the left operand, 1: the right one
    dtype: DType


@dataclass(frozen=True)
class Lit:
    value: int | bool                # representable in dtype (the frontend checks)
    dtype: DType


@dataclass(frozen=True)
class UnaryOp:
    op: str                          # "neg" | "invert" | "not"
    a: "Node"
    dtype: DType


@dataclass(frozen=True)
class BinaryOp:
    op: str                          # ARITHMETIC, BITWISE or SHIFTS (b a Lit for shifts)
    a: "Node"
    b: "Node"
    dtype: DType


@dataclass(frozen=True)
class CompareOp:
    op: str                          # COMPARISONS, on operands of one dtype
    a: "Node"
    b: "Node"
    dtype: DType = BOOL


@dataclass(frozen=True)
class LogicalOp:
    op: str                          # "and" | "or", on bools
    a: "Node"
    b: "Node"
    dtype: DType = BOOL


@dataclass(frozen=True)
class SelectOp:
    cond: "Node"
    a: "Node"
    b: "Node"
    dtype: DType


@dataclass(frozen=True)
class ExtremumOp:
    op: str                          # "max" | "min"
    a: "Node"
    b: "Node"
    dtype: DType


@dataclass(frozen=True)
class CastOp:
    a: "Node"
    dtype: DType                     # an integer dtype or bool


Node = Union[Param, Lit, UnaryOp, BinaryOp, CompareOp, LogicalOp, SelectOp, ExtremumOp,
             CastOp]


for _type, _method in ((Param, "visit_var"), (Lit, "visit_const"), (UnaryOp, "visit_unary"),
                       (BinaryOp, "visit_binary"), (CompareOp, "visit_compare"),
                       (LogicalOp, "visit_logical"), (SelectOp, "visit_select"),
                       (ExtremumOp, "visit_call"), (CastOp, "visit_cast")):
    ExprVisitor.register(_type, _method)


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, (Param, Lit)):
        return ()
    if isinstance(node, (UnaryOp, CastOp)):
        return (node.a,)
    if isinstance(node, SelectOp):
        return (node.cond, node.a, node.b)
    return (node.a, node.b)


class BodyVisitor(ExprVisitor):
    """The visitor protocol on a body: a declared op has no loads, thread index or
    reserved calls other than max/min (ExtremumOp, visited as a call)."""

    def visit_threadbinding(self, n, *args):
        return self.fallback(n, *args)

    visit_load = visit_threadbinding


# ----------------------------------------------------------------------------- numpy

def evaluate(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The body on numpy operands of the declared dtype (broadcast together)."""
    with np.errstate(over="ignore"):             # integers wrap, on purpose
        return np.asarray(_NUMPY.visit(node, (a, b)), node.dtype.np)


class _Numpy(BodyVisitor):
    """Each node's numpy meaning: its operator's row (spec.operators)."""

    def visit_var(self, n, args):
        return args[n.index]

    def visit_const(self, n, args):
        return np.asarray(n.value, n.dtype.np)

    def _values(self, n, args):
        return [np.asarray(self.visit(c, args)) for c in children(n)]

    def visit_cast(self, n, args):
        return convert_array(np.asarray(self.visit(n.a, args)), n.dtype)

    def visit_unary(self, n, args):
        return UNARY_OPERATORS[n.op].ints(*self._values(n, args))

    def visit_binary(self, n, args):
        return OPERATORS[n.op].ints(*self._values(n, args)).astype(n.dtype.np, copy=False)

    def visit_compare(self, n, args):
        return OPERATORS[n.op].ints(*self._values(n, args))

    visit_logical = visit_compare

    def visit_select(self, n, args):
        return np.where(*self._values(n, args)).astype(n.dtype.np, copy=False)

    def visit_call(self, n, args):                 # ExtremumOp
        return INTRINSICS[n.op].numpy_int(*self._values(n, args))


_NUMPY = _Numpy()


# ----------------------------------------------------------------------------- C

def _unsigned(dtype: DType) -> str:
    """The unsigned C type wrapping arithmetic of dtype runs in (never promoted to int)."""
    return "unsigned long long" if dtype.bits > 32 else "unsigned int"


def _c_literal(value, dtype: DType) -> str:
    if dtype.is_bool:
        return "true" if value else "false"
    # the value's bits as an unsigned literal, converted: no literal is out of range
    return f"(({dtype.c_name}){int(value) % (1 << dtype.bits)}ull)"


class _CNode(BodyVisitor):
    """The C expression of one node over the names of its children's temporaries
    (`operand(child)`), each operator spelled by its row's C token."""

    def visit_const(self, n, operand):
        return _c_literal(n.value, n.dtype)

    def visit_unary(self, n, operand):
        x, token = operand(n.a), UNARY_OPERATORS[n.op].c
        if n.op == "not":
            return f"{token}{x}"
        t, u = n.dtype.c_name, _unsigned(n.dtype)
        return f"({t})({token}({u}){x})"

    def visit_binary(self, n, operand):
        x, y, token = operand(n.a), operand(n.b), OPERATORS[n.op].c
        t, u = n.dtype.c_name, _unsigned(n.dtype)
        if n.op == ">>":
            return f"({t})({x} {token} {y})"          # arithmetic for signed, as numpy
        return f"({t})(({u}){x} {token} ({u}){y})"

    def visit_compare(self, n, operand):
        return f"{operand(n.a)} {OPERATORS[n.op].c} {operand(n.b)}"

    visit_logical = visit_compare

    def visit_select(self, n, operand):
        return f"{operand(n.cond)} ? {operand(n.a)} : {operand(n.b)}"

    def visit_call(self, n, operand):              # ExtremumOp
        x, y = operand(n.a), operand(n.b)
        keep = OPERATORS[">=" if n.op == "max" else "<="].c
        return f"{x} {keep} {y} ? {x} : {y}"

    def visit_cast(self, n, operand):
        if n.dtype.is_bool:
            return f"{operand(n.a)} != 0"
        return f"({n.dtype.c_name}){operand(n.a)}"

    def visit_var(self, n, operand):               # a Param is named by c_body
        return operand(n)


_C_NODE = _CNode()


def c_body(node: Node, params: tuple[str, str]) -> list[str]:
    """Statements computing node into temporaries `t0, t1, ...`, the last one the
    result; a node shared by value is computed once."""
    lines: list[str] = []
    names: dict[Node, str] = {}

    def operand(n: Node) -> str:
        if isinstance(n, Param):
            return params[n.index]
        if n not in names:
            text = _C_NODE.visit(n, operand)
            names[n] = f"t{len(names)}"
            lines.append(f"const {n.dtype.c_name} {names[n]} = {text};")
        return names[n]

    result = operand(node)
    lines.append(f"return {result};")
    return lines


# ----------------------------------------------------------------------------- Z3

def encode(node: Node, a, b):
    """The body on Z3 terms: bit-vectors of each node's width (bool nodes are Bools)."""
    import z3
    memo: dict[Node, object] = {}

    def go(n: Node):
        if n in memo:
            return memo[n]
        memo[n] = term = _Z3.visit(n, z3, go, (a, b))
        return term

    return go(node)


class _Z3Node(BodyVisitor):
    """Each node's bit-vector encoding: its operator's row's `z3_bv`."""

    def visit_var(self, n, z3, go, args):
        return args[n.index]

    def visit_const(self, n, z3, go, args):
        if n.dtype.is_bool:
            return z3.BoolVal(bool(n.value))
        return z3.BitVecVal(int(n.value) % (1 << n.dtype.bits), n.dtype.bits)

    def visit_cast(self, n, z3, go, args):
        return CASTS[cast_kind(n.a.dtype, n.dtype)].z3_bv(go(n.a), n.a.dtype, n.dtype)

    def visit_unary(self, n, z3, go, args):
        return UNARY_OPERATORS[n.op].z3_bv(go(n.a), None, n.dtype.kind == "int")

    def visit_binary(self, n, z3, go, args):
        return OPERATORS[n.op].z3_bv(go(n.a), go(n.b), n.dtype.kind == "int")

    def visit_compare(self, n, z3, go, args):
        return _z3_compare(z3, n.op, go(n.a), go(n.b), n.a.dtype)

    def visit_logical(self, n, z3, go, args):
        return OPERATORS[n.op].z3_bv(go(n.a), go(n.b), False)

    def visit_select(self, n, z3, go, args):
        return z3.If(go(n.cond), go(n.a), go(n.b))

    def visit_call(self, n, z3, go, args):         # ExtremumOp
        x, y = go(n.a), go(n.b)
        keep_a = _z3_compare(z3, ">=" if n.op == "max" else "<=", x, y, n.dtype)
        return z3.If(keep_a, x, y)


_Z3 = _Z3Node()


def _z3_compare(z3, op: str, x, y, dtype: DType):
    row = OPERATORS[op]
    if row.z3_unsigned is not None and dtype.kind == "uint":
        return getattr(z3, row.z3_unsigned)(x, y)
    if row.z3_unsigned is not None and dtype.is_bool:  # False < True, as numpy orders bools
        x, y = z3.If(x, 1, 0), z3.If(y, 1, 0)
    return row.z3_bv(x, y, dtype.kind == "int")


# ----------------------------------------------------------------------------- the entry

class CombineUfunc:
    """The three ufunc methods the executors call on a monoid's `ufunc` (a call, `.at`,
    `.reduce`), for a combine that numpy has no ufunc for. Orders differ from a loop's
    (a tree of pairs): the laws proved for the op make every order give the same bits."""

    def __init__(self, monoid: "UserMonoid"):
        self.monoid = monoid

    def __call__(self, a, b):
        return evaluate(self.monoid.body, np.asarray(a), np.asarray(b))

    def reduce(self, terms: np.ndarray, axis: int = 0, dtype=None) -> np.ndarray:
        terms = np.moveaxis(np.asarray(terms, self.monoid.dtype.np), axis, 0)
        if terms.shape[0] == 0:
            return np.full(terms.shape[1:], self.monoid.identity_value, self.monoid.dtype.np)
        while terms.shape[0] > 1:
            half = terms.shape[0] // 2
            paired = self(terms[0:2 * half:2], terms[1:2 * half:2])
            terms = np.concatenate([paired, terms[2 * half:]]) if terms.shape[0] % 2 \
                else paired
        return terms[0]

    def at(self, acc: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
        """acc[index[i]] ⊕= values[i] for every i, repeated indices included: the values
        of each index are combined pairwise within their run, then into acc."""
        index = np.asarray(index).reshape(-1)
        values = np.asarray(values, self.monoid.dtype.np).reshape(-1)
        order = np.argsort(index, kind="stable")
        keys, vals = index[order], values[order]
        while keys.size:
            starts = np.r_[True, keys[1:] != keys[:-1]]
            run_start = np.maximum.accumulate(np.where(starts, np.arange(keys.size), 0))
            rank = np.arange(keys.size) - run_start
            if not (rank > 0).any():
                break
            has_next = np.r_[keys[1:] == keys[:-1], False]
            left = (rank % 2 == 0)
            pairs = left & has_next
            merged = vals[left].copy()
            pair_at = np.flatnonzero(pairs[left])
            lefts = np.flatnonzero(pairs)
            merged[pair_at] = self(vals[lefts], vals[lefts + 1])
            keys, vals = keys[left], merged
        acc[keys] = self(acc[keys], vals)


@dataclass(frozen=True, eq=False)
class UserMonoid(Monoid):
    """A declared op: `ufunc`/`float_ufunc` are its CombineUfunc, `c_template` calls its
    `__device__` function. Compared and hashed by identity (one object per declaration)."""
    dtype: DType = None
    identity_value: int = 0
    body: Node = None
    params: tuple[str, str] = ("a", "b")
    source: str = ""                  # the body as written, for messages
    span: Span | None = None          # the declaration

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @classmethod
    def declare(cls, name: str, dtype: DType, identity: int, body: Node,
                params: tuple[str, str], source: str, span: Span) -> "UserMonoid":
        digest = hashlib.sha256(repr((name, dtype.name, body)).encode()).hexdigest()[:8]
        monoid = cls(name, None, None, f"reducer_op_{name}_{digest}({{a}}, {{b}})", True,
                     False, dtype, identity, body, params, source, span)
        ufunc = CombineUfunc(monoid)
        object.__setattr__(monoid, "ufunc", ufunc)
        object.__setattr__(monoid, "float_ufunc", ufunc)
        return monoid

    @property
    def is_user(self) -> bool:
        return True

    @property
    def c_function(self) -> str:
        return self.c_template.split("(", 1)[0]

    def identity(self, dtype: DType):
        return self.identity_value

    def supports(self, dtype: DType) -> bool:
        return dtype == self.dtype

    def combine(self, dtype: DType, a, b):
        return self.ufunc(np.asarray(a, dtype.np), np.asarray(b, dtype.np))

    def z3_combine(self, dtype: DType, a, b):
        return encode(self.body, a, b)

    def c_definition(self) -> str:
        """The op's `__device__` function, guarded so that two kernels of one translation
        unit may both carry it (the name carries a digest of the body)."""
        fn, t = self.c_function, self.dtype.c_name
        guard = fn.upper() + "_DEFINED"
        body = "\n".join("    " + line for line in c_body(self.body, ("a", "b")))
        return (f"#ifndef {guard}\n#define {guard}\n"
                f"// reducer op {self.name} ({self.dtype.name}): {self.source}\n"
                f"__device__ __forceinline__ {t} {fn}({t} a, {t} b) {{\n{body}\n}}\n"
                f"#endif")
