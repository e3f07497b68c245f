"""The logical IR: what a TileLang kernel means, with a source span on every node.

Shapes, grid sizes, thread counts and `T.Parallel` extents are compile-time integers (the
frontend folds module constants). Nodes compare by identity (eq=False) so later stages
can key tables by node. Every expression carries the dtype it evaluates to; an untyped
Python literal is `weak` and adopts the dtype of the operand it meets (as TVM does)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator, Union

from .dtypes import BOOL, FLOAT64, INT32, DType, promote
from .source import Span

if TYPE_CHECKING:                    # an annotation only: the IR runs without the op table
    from .user_ops import UserMonoid

node = dataclass(frozen=True, eq=False)

# ----------------------------------------------------------------------------- buffers

SCOPES = ("global", "shared", "fragment", "local", "reducer")


@node
class ReducerInfo:
    op: str                          # a name in spec.ops.MONOIDS ("sum", "max", ...)
    legacy: bool                     # allocated with replication= (the v1 surface)
    replication: str | None = None   # "all" | "none" as written, kept for the legacy plan
    user: "UserMonoid | None" = None  # the program's declared op named `op` (spec.user_ops)


@node
class Buffer:
    name: str
    shape: tuple[int, ...]
    dtype: DType
    scope: str
    span: Span
    reducer: ReducerInfo | None = None

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def is_reducer(self) -> bool:
        return self.reducer is not None


# ----------------------------------------------------------------------------- expressions

@node
class Const:
    value: int | float | bool
    dtype: DType
    span: Span
    weak: bool = False               # an untyped Python literal


@node
class Var:
    """A loop variable, block index, or a name bound by Let."""
    name: str
    span: Span
    dtype: DType = INT32


@node
class ThreadBinding:
    """T.get_thread_binding(): the physical thread index (divergent by nature)."""
    span: Span
    dtype: DType = INT32


@node
class Load:
    buffer: Buffer
    indices: tuple["Expr", ...]
    span: Span

    @property
    def dtype(self) -> DType:
        return self.buffer.dtype


# Binary arithmetic: "+", "-", "*", "/" (true division for floats, truncating for
# integers, as C), "//" (floor division), "%" (floor modulo), "&", "|", "^", "<<", ">>".
# What each operator means, in every consumer's form, is its row of spec.operators.
BINARY_OPS = ("+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>")
COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=")


@node
class Binary:
    op: str
    a: "Expr"
    b: "Expr"
    dtype: DType
    span: Span

    def __post_init__(self):
        assert self.op in BINARY_OPS, self.op


@node
class Unary:
    op: str                          # "neg" | "not" | "invert"
    a: "Expr"
    dtype: DType
    span: Span


@node
class Compare:
    op: str
    a: "Expr"
    b: "Expr"
    span: Span
    dtype: DType = BOOL

    @property
    def operand_dtype(self) -> DType:
        """The dtype the comparison is made in: strong operands promote; an untyped
        literal adopts the other side's dtype, except a float literal beside an integer,
        compared in float64 (so `i < 0.5` means what it says)."""
        weak_a = isinstance(self.a, Const) and self.a.weak
        weak_b = isinstance(self.b, Const) and self.b.weak
        if weak_a != weak_b:
            literal, other = (self.a, self.b) if weak_a else (self.b, self.a)
            if isinstance(literal.value, float) and not other.dtype.is_float:
                return FLOAT64
            return other.dtype
        return promote(self.a.dtype, self.b.dtype)

    def __post_init__(self):
        assert self.op in COMPARE_OPS, self.op


@node
class Logical:
    op: str                          # "and" | "or"
    a: "Expr"
    b: "Expr"
    span: Span
    dtype: DType = BOOL


# The intrinsics of Call (their arity, meaning and C names) are spec.intrinsics; the warp
# builtins are spec.warp's; Call("reinterpret", (value,), dtype) is T.reinterpret, the
# value's bits read as dtype (spec.reinterpret).


@node
class Call:
    func: str
    args: tuple["Expr", ...]
    dtype: DType
    span: Span


@node
class Cast:
    a: "Expr"
    dtype: DType
    span: Span


@node
class Select:
    """T.if_then_else(cond, a, b) and Python's `a if cond else b`."""
    cond: "Expr"
    a: "Expr"
    b: "Expr"
    dtype: DType
    span: Span


Expr = Union[Const, Var, ThreadBinding, Load, Binary, Unary, Compare, Logical, Call, Cast,
             Select]

# ----------------------------------------------------------------------------- statements


@node
class Region:
    """A box of a buffer: per dimension a start expression and a constant extent.
    The frontend resolves TileLang's shorthand (a point means "from here, the other side's
    extent"; a bare buffer means all of it) so both sides of a copy carry full extents."""
    buffer: Buffer
    starts: tuple[Expr, ...]
    extents: tuple[int, ...]
    span: Span


@node
class Alloc:
    buffer: Buffer
    span: Span


@node
class Let:
    """`name = value` inside a kernel: binds var for the rest of the enclosing block."""
    var: Var
    value: Expr
    span: Span


@node
class Alias:
    """`b = acc` where acc is a buffer: b now names the same buffer (R211 for reducers)."""
    name: str
    buffer: Buffer
    span: Span


@node
class ParallelFor:
    """T.Parallel(e0, e1, ...): a logical for-all, each iteration exactly once."""
    vars: tuple[Var, ...]
    extents: tuple[int, ...]
    body: tuple["Stmt", ...]
    span: Span


SERIAL_KINDS = ("serial", "pipelined", "unroll", "range")


@node
class SerialFor:
    """T.serial / T.Pipelined / T.unroll / range: iterations in order,
    var = start, start+step, ... while < stop (step > 0) or > stop (step < 0)."""
    var: Var
    start: Expr
    stop: Expr
    step: int
    kind: str
    body: tuple["Stmt", ...]
    span: Span
    num_stages: int | None = None

    def __post_init__(self):
        assert self.kind in SERIAL_KINDS, self.kind


@node
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]
    span: Span


@node
class Store:
    """buffer[indices] = value, for a buffer that is not a reducer (or a reducer after an
    in-place legacy finalize, or any store to a reducer that no update form matches:
    verify.epochs.checker reports those as R205)."""
    buffer: Buffer
    indices: tuple[Expr, ...]
    value: Expr
    span: Span


@node
class Copy:
    src: Region
    dst: Region
    span: Span


@node
class Fill:
    """T.fill(region, value) / T.clear(buffer) of an ordinary buffer."""
    region: Region
    value: Expr
    span: Span


INIT_FORMS = ("reducer_init", "fill", "clear", "implicit")


@node
class ReducerInit:
    """Opens an epoch: every partial becomes the identity; `seed` (if any) is combined
    once at finalize. form "fill"/"clear" is the legacy v1 start; `fill_value` keeps the
    value a legacy T.fill wrote (R213 when it is not the identity of a sum)."""
    reducer: Buffer
    seed: Expr | None
    form: str
    span: Span
    fill_value: Expr | None = None

    def __post_init__(self):
        assert self.form in INIT_FORMS, self.form


UPDATE_FORMS = ("reducer_update", "+=", "-=", "store-add", "store-max", "store-min",
                "store-mul", "*=", "&=", "|=", "^=",
                # `acc[i] = acc[i] - v` (a sum of -v, like -=) and the bitwise store forms
                "store-sub", "store-and", "store-or", "store-xor")


@node
class ReducerUpdate:
    """Combine `value` into logical output `indices` of the reducer, exactly once.
    `form_op` is the monoid the written form denotes (a `+=` denotes "sum"); it equals the
    reducer's op unless the program is wrong (R206). For `-=` and `store-sub` the frontend
    has already negated value."""
    reducer: Buffer
    indices: tuple[Expr, ...]
    value: Expr
    form: str
    form_op: str
    span: Span

    def __post_init__(self):
        assert self.form in UPDATE_FORMS, self.form


@node
class ReducerFinalize:
    """Closes the epoch. dst None: legacy in-place finalize (the reducer becomes readable).
    batch: a codegen hint only; it never changes the meaning."""
    reducer: Buffer
    dst: Buffer | None
    batch: int | None
    span: Span


@node
class Reduce:
    """T.reduce_<kind>(src, dst, dim=dim, clear=clear)."""
    kind: str                        # a name in spec.ops.REDUCE_KINDS
    src: Buffer
    dst: Buffer
    dim: int
    clear: bool
    span: Span
    nan_propagate: bool = False      # a NaN term makes the result NaN (spec.ops.reduce_monoid)


GEMM_POLICIES = ("Square", "FullRow", "FullCol")     # TileLang's GemmWarpPolicy, in its order


@node
class Gemm:
    """T.gemm(a, b, c, transpose_A, transpose_B, policy, clear_accum): the matrix product
    c (+)= op(a)·op(b), op the transpose where asked (a is M×K, or K×M transposed; b is
    K×N, or N×K transposed; c is M×N). Each output is a sum of its old value (none when
    clear_accum holds) and K exact products, rounded as any float sum
    (docs/semantics.md §9.1). policy only chooses how warps split c (the layout,
    codegen.layout's gemm rule); k_pack and wg_wait do not change the meaning."""
    a: Buffer
    b: Buffer
    c: Buffer
    transpose_a: bool
    transpose_b: bool
    policy: str
    clear_accum: "Expr"              # a bool expression (TileLang allows `k == 0`)
    span: Span

    def __post_init__(self):
        assert self.policy in GEMM_POLICIES, self.policy

    @property
    def mnk(self) -> tuple[int, int, int]:
        m, n = self.c.shape
        k = self.a.shape[0] if self.transpose_a else self.a.shape[1]
        return m, n, k


ATOMIC_OPS = {"atomic_add": "sum", "atomic_max": "max", "atomic_min": "min"}
MEMORY_ORDERS = ("relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst")


@node
class AtomicUpdate:
    """T.atomic_add / atomic_max / atomic_min(buffer[indices], value): `value`, converted
    to the buffer's dtype, combined into one element by `op` (a monoid name: "sum", "max",
    "min") as an indivisible read-modify-write. Every execution is one contribution, in
    whatever order the hardware applies them (docs/semantics.md §12). memory_order is
    kept as written (None: TileLang's default, relaxed); it orders nothing we model.
    vector = n > 1: a lane of TileLang's `T.atomic_addx2/x4`, the one statement of an
    unrolled loop over the n lanes (each lane an element atomic, as every analysis reads
    it; codegen.lower.atomics issues the loop as one vector instruction)."""
    buffer: Buffer
    indices: tuple[Expr, ...]
    value: Expr
    op: str
    memory_order: str | None
    span: Span
    vector: int = 1

    def __post_init__(self):
        assert self.op in ATOMIC_OPS.values(), self.op


@node
class WarpGroup:
    """`with T.ws(g0, ...)`: the body runs on warp groups g (threads [128g, 128g+128))."""
    groups: tuple[int, ...]
    body: tuple["Stmt", ...]
    span: Span


Stmt = Union[Alloc, Let, Alias, ParallelFor, SerialFor, If, Store, Copy, Fill, ReducerInit,
             ReducerUpdate, ReducerFinalize, Reduce, AtomicUpdate, Gemm, WarpGroup]
Body = tuple[Stmt, ...]

# ----------------------------------------------------------------------------- kernels


@node
class Raster:
    """`T.use_swizzle(panel_size, order)`: the launch visits the grid panel by panel
    (TileLang's rasterization2DRow / rasterization2DColumn / rasterization2DMLX), so that
    blocks sharing operand tiles run together. Which block indices a launched block
    takes is all it changes: the program's meaning does not depend on the order of its
    blocks (codegen.plan_raster decides whether the plan applies it)."""
    panel: int
    order: str                       # "row" | "column" | "mlx"
    span: Span


@node
class Kernel:
    grid: tuple[int, ...]            # 1 to 3 extents
    threads: int
    block_vars: tuple[Var, ...]      # one per grid dimension (unnamed ones get "_bx" ...)
    body: Body
    span: Span
    raster: Raster | None = None     # T.use_swizzle (with enable=True)


@node
class PrimFunc:
    name: str
    params: tuple[Buffer, ...]       # the global tensors, in signature order
    kernel: Kernel
    span: Span


@node
class Program:
    path: str
    source: str
    funcs: dict[str, PrimFunc]
    constants: dict[str, object] = field(default_factory=dict)

    def func(self, name: str | None = None) -> PrimFunc:
        """The prim_func called name; default main, or the only one. KeyError otherwise."""
        if name is not None:
            return self.funcs[name]
        if "main" in self.funcs:
            return self.funcs["main"]
        if len(self.funcs) == 1:
            return next(iter(self.funcs.values()))
        raise KeyError(None)


# ----------------------------------------------------------------------------- traversal

def children(stmt: Stmt) -> Iterator[Body]:
    """The nested bodies of a statement, in source order."""
    if isinstance(stmt, (ParallelFor, SerialFor, WarpGroup)):
        yield stmt.body
    elif isinstance(stmt, If):
        yield stmt.then
        yield stmt.orelse


def walk(body: Body) -> Iterator[Stmt]:
    """Every statement of body and of its nested bodies, pre-order."""
    for stmt in body:
        yield stmt
        for sub in children(stmt):
            yield from walk(sub)


def written_buffers(stmt: Stmt) -> set[Buffer]:
    """The buffers a statement itself writes (not those of nested bodies)."""
    if isinstance(stmt, (Store, AtomicUpdate)):
        return {stmt.buffer}
    if isinstance(stmt, Copy):
        return {stmt.dst.buffer}
    if isinstance(stmt, Fill):
        return {stmt.region.buffer}
    if isinstance(stmt, Reduce):
        return {stmt.dst}
    if isinstance(stmt, Gemm):
        return {stmt.c}
    if isinstance(stmt, ReducerFinalize) and stmt.dst is not None:
        return {stmt.dst}
    return set()


def read_buffers(stmt: Stmt) -> set[Buffer]:
    """The buffers a statement itself reads (not those of nested bodies): its loads, a
    copy's source, a reduction's source, a gemm's operands and accumulator (C += A·B)."""
    found = {e.buffer for x in stmt_exprs(stmt) for e in subexprs(x) if isinstance(e, Load)}
    if isinstance(stmt, Copy):
        found.add(stmt.src.buffer)
    elif isinstance(stmt, Reduce):
        found.add(stmt.src)
    elif isinstance(stmt, Gemm):
        found |= {stmt.a, stmt.b, stmt.c}
    return found


def stmt_exprs(stmt: Stmt) -> Iterator[Expr]:
    """The expressions a statement evaluates itself (not those of nested bodies)."""
    if isinstance(stmt, Let):
        yield stmt.value
    elif isinstance(stmt, SerialFor):
        yield stmt.start
        yield stmt.stop
    elif isinstance(stmt, If):
        yield stmt.cond
    elif isinstance(stmt, (Store, ReducerUpdate, AtomicUpdate)):
        yield from stmt.indices
        yield stmt.value
    elif isinstance(stmt, Copy):
        yield from stmt.src.starts
        yield from stmt.dst.starts
    elif isinstance(stmt, Fill):
        yield from stmt.region.starts
        yield stmt.value
    elif isinstance(stmt, ReducerInit):
        if stmt.seed is not None:
            yield stmt.seed
        if stmt.fill_value is not None:
            yield stmt.fill_value
    elif isinstance(stmt, Gemm):
        yield stmt.clear_accum


def subexprs(expr: Expr) -> Iterator[Expr]:
    """expr and every expression inside it, pre-order."""
    yield expr
    if isinstance(expr, Load):
        for i in expr.indices:
            yield from subexprs(i)
    elif isinstance(expr, (Binary, Compare, Logical)):
        yield from subexprs(expr.a)
        yield from subexprs(expr.b)
    elif isinstance(expr, (Unary, Cast)):
        yield from subexprs(expr.a)
    elif isinstance(expr, Call):
        for a in expr.args:
            yield from subexprs(a)
    elif isinstance(expr, Select):
        yield from subexprs(expr.cond)
        yield from subexprs(expr.a)
        yield from subexprs(expr.b)
