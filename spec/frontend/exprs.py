"""Expressions inside a kernel: arithmetic, comparisons, boolean and bit operators,
conditional expressions, buffer loads and TileLang's scalar intrinsics — each with the
dtype it evaluates to. Constant subexpressions made only of Python values are folded
with Python's own semantics, as TileLang itself would before TVM sees them."""
from __future__ import annotations

import ast
import math

import numpy as np

from ..dtypes import BOOL, INT32, INT64, DType, lookup as lookup_dtype, refused_dtype
from ..ir import (Binary, Buffer, Call, Cast, Compare, Const, Expr, Load, Logical, Select,
                  ThreadBinding, Unary, Var)
from ..intrinsics import INTRINSICS
from .. import reinterpret as R
from ..source import Span
from ..warp import FULL_MASK, SHUFFLES, WARP, WARP_REDUCES
from .constants import COMPARES, NotConstant, apply_binop, ceildiv
from .context import POISON, Constant, FuncContext, Inlined, Opaque
from .errors import Poisoned, construct_name, shape_error, unknown, unsupported
from .helpers import Helper, inline_value_helper
from .promotion import (as_float, is_weak, require_integer, typed_const, unify,
                        weak_const)

BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
          ast.RShift: ">>"}
COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!="}
BITWISE = ("&", "|", "^")
SHIFTS = ("<<", ">>")


def lower_expr(ctx: FuncContext, node: ast.AST) -> Expr:
    method = _LOWER.get(type(node))
    if method is None:
        unsupported(f"{construct_name(node)} are not supported in a kernel expression", node)
    return method(ctx, node)


def lower_index(ctx: FuncContext, node: ast.AST) -> Expr:
    """An expression used as a buffer index or loop bound: it must be an integer."""
    e = lower_expr(ctx, node)
    if not (e.dtype.is_int or e.dtype.is_bool):
        shape_error(f"an index must be an integer, got {e.dtype}", node)
    if is_weak(e) and not INT32.lowest <= e.value <= INT32.highest:
        # indices and loop variables are int32: a constant beyond it would wrap
        shape_error(f"integer constant {e.value} does not fit in int32, the dtype of "
                    f"indices and loop bounds", node)
    return e


def index_nodes(sub: ast.Subscript) -> list[ast.expr]:
    return list(sub.slice.elts) if isinstance(sub.slice, ast.Tuple) else [sub.slice]


def buffer_named(ctx: FuncContext, node: ast.AST, what: str = "a buffer") -> Buffer:
    """The buffer a name denotes (R101 unknown name, R102 not a buffer)."""
    if isinstance(node, ast.Call) and ctx.imports.t_name(node.func) in ("reshape", "view"):
        buffer_view(ctx, node, ctx.imports.t_name(node.func))     # named, at the call
    if not isinstance(node, ast.Name):
        shape_error(f"expected {what}, got `{ast.unparse(node)}`", node)
    entry = ctx.lookup(node.id)
    if isinstance(entry, Buffer):
        return entry
    if entry is POISON:
        raise Poisoned(node.id)
    if entry is None:
        unknown(f"unknown name `{node.id}`", node)
    shape_error(f"`{node.id}` is not a buffer", node)


def lower_point(ctx: FuncContext, buffer: Buffer, sub: ast.Subscript) -> tuple[Expr, ...]:
    """The indices of `buf[i, j]`: one integer per dimension, no slices."""
    nodes = index_nodes(sub)
    for n in nodes:
        if isinstance(n, ast.Slice):
            unsupported("slices are only supported in T.copy/T.fill regions", n)
    if len(nodes) != len(buffer.shape):
        shape_error(f"`{buffer.name}` has {len(buffer.shape)} dimension(s) but "
                    f"{len(nodes)} index(es) were given", sub)
    return tuple(lower_index(ctx, n) for n in nodes)


# ----------------------------------------------------------------------------- atoms

def _constant(ctx: FuncContext, node: ast.Constant) -> Expr:
    if isinstance(node.value, (bool, int, float)):
        return weak_const(node.value, Span.of(node), node)
    shape_error(f"{node.value!r} is not a scalar value", node)


def _name(ctx: FuncContext, node: ast.Name) -> Expr:
    entry = ctx.lookup(node.id)
    if isinstance(entry, Var):
        return entry        # the binding's own Var: later stages key variables by identity
    if isinstance(entry, Constant):
        return weak_const(entry.value, Span.of(node), node)
    if isinstance(entry, Inlined):
        return entry.expr
    if isinstance(entry, Buffer) and id(entry) in ctx.var_buffers:
        return Load(entry, (Const(0, INT32, Span.of(node), weak=True),),  # a T.alloc_var
                    Span.of(node))
    if isinstance(entry, Buffer):
        shape_error(f"buffer `{node.id}` used as a scalar; index it (`{node.id}[i]`)", node)
    if isinstance(entry, Opaque):
        unknown(f"`{node.id}` is not a compile-time constant or kernel value", node)
    if entry is POISON:
        raise Poisoned(node.id)
    if ctx.imports.binds(node.id):
        unknown(f"`{node.id}` is a module, not a value", node)
    unknown(f"unknown name `{node.id}`", node)


def _attribute(ctx: FuncContext, node: ast.Attribute) -> Expr:
    name = ctx.imports.t_name(node)
    if name is not None and lookup_dtype(name) is not None:
        shape_error(f"the dtype `T.{name}` is not a value (write `T.{name}(x)`)", node)
    if name is not None and refused_dtype(name):
        shape_error(refused_dtype(name), node)
    if name is not None:
        unknown(f"`T.{name}` is not supported", node)
    unknown(f"unknown name `{ast.unparse(node)}`", node)


def _subscript(ctx: FuncContext, node: ast.Subscript) -> Expr:
    if isinstance(node.value, ast.Name) and isinstance(ctx.lookup(node.value.id), Constant):
        try:
            return weak_const(ctx.folder.fold(node), Span.of(node), node)
        except NotConstant:
            shape_error("index into a constant tuple must be a constant", node)
    buffer = buffer_named(ctx, node.value)
    return Load(buffer, lower_point(ctx, buffer, node), Span.of(node))


# ----------------------------------------------------------------------------- operators

def _fold_weak(op: ast.operator, a: Const, b: Const, node: ast.AST) -> Const:
    return weak_const(apply_binop(op, a.value, b.value, node), Span.of(node), node)


def make_binary(op: str, a: Expr, b: Expr, node: ast.AST) -> Expr:
    a, b, dtype = unify(a, b)
    if op in BITWISE:
        require_integer(a, f"`{op}`", node, allow_bool=True)
        require_integer(b, f"`{op}`", node, allow_bool=True)
    if op in SHIFTS:
        require_integer(a, f"`{op}`", node)
        require_integer(b, f"`{op}`", node)
    return Binary(op, a, b, dtype, Span.of(node))


def _binop(ctx: FuncContext, node: ast.BinOp) -> Expr:
    a, b = lower_expr(ctx, node.left), lower_expr(ctx, node.right)
    if is_weak(a) and is_weak(b):
        return _fold_weak(node.op, a, b, node)
    if isinstance(node.op, ast.Pow):
        a, b, dtype = unify(a, b)
        return Call("pow", (a, b), dtype, Span.of(node))
    op = BINARY.get(type(node.op))
    if op is None:
        unsupported(f"{construct_name(node.op)} are not supported", node)
    return make_binary(op, a, b, node)


def _unaryop(ctx: FuncContext, node: ast.UnaryOp) -> Expr:
    a = lower_expr(ctx, node.operand)
    span = Span.of(node)
    if isinstance(node.op, ast.Not):
        if is_weak(a):
            return weak_const(not a.value, span, node)
        return Unary("not", a, BOOL, span)
    if isinstance(node.op, ast.UAdd):
        return a
    if isinstance(node.op, ast.USub):
        if is_weak(a):
            return weak_const(-a.value, span, node)
        return Unary("neg", a, a.dtype, span)
    require_integer(a, "`~`", node, allow_bool=True)
    if is_weak(a):
        return weak_const(~a.value, span, node)
    return Unary("invert", a, a.dtype, span)


def _boolop(ctx: FuncContext, node: ast.BoolOp) -> Expr:
    op = "and" if isinstance(node.op, ast.And) else "or"
    return balanced(op, [lower_expr(ctx, v) for v in node.values], Span.of(node))


def balanced(op: str, parts: list[Expr], span: Span) -> Expr:
    """`p0 op p1 op ... op pn` as a balanced tree: and/or are associative and the tree
    still evaluates (and short-circuits) left to right, so a 400-term chain is 9 levels
    deep for every recursive walker, not 400."""
    if len(parts) == 1:
        return parts[0]
    half = len(parts) // 2
    return Logical(op, balanced(op, parts[:half], span), balanced(op, parts[half:], span),
                   span)


def _compare(ctx: FuncContext, node: ast.Compare) -> Expr:
    # `a < b < c` means `a < b and b < c` (b is pure, so evaluating it twice is harmless)
    parts = []
    left = _compare_operand(ctx, node.left)
    for op, right_node in zip(node.ops, node.comparators):
        name = COMPARE.get(type(op))
        if name is None:
            unsupported(f"the `{type(op).__name__}` comparison is not supported", node)
        right = _compare_operand(ctx, right_node)
        parts.append(_compare_link(name, type(op), left, right, node))
        left = right
    return balanced("and", parts, Span.of(node))


def _compare_operand(ctx: FuncContext, node: ast.AST) -> Expr:
    """An operand of a comparison. An integer constant beyond 64 bits is allowed here
    only (`j >= -2**70`): _compare_link folds every link it takes part in, so it never
    reaches the IR."""
    try:
        value = ctx.folder.fold(node)
    except NotConstant:
        value = None
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 63:
        return Const(value, INT64, Span.of(node), weak=True)
    return lower_expr(ctx, node)


def _compare_link(name: str, op: type, left: Expr, right: Expr, node: ast.AST) -> Expr:
    """One link `left op right`. Constants are exact Python integers: a literal that
    the other side's integer dtype cannot hold (`j < 2**63` with j int32) compares the
    same way with every value of that dtype, so the link is that constant truth value,
    not a comparison with a wrapped literal."""
    if is_weak(left) and is_weak(right):
        return weak_const(bool(COMPARES[op](left.value, right.value)), Span.of(node), node)
    for weak, typed in ((left, right), (right, left)):
        dtype = typed.dtype
        if is_weak(weak) and not is_weak(typed) and dtype.kind == "uint" \
                and not weak.dtype.is_float and weak.value < 0:
            # C would compare with the wrapped literal (`u > -1` is false), the folded
            # truth says true, and TileLang refuses ("cannot make uint from negative
            # value"): no meaning to give it, so no answer either (docs/semantics.md §8)
            shape_error(f"a negative constant ({weak.value}) compared with a {dtype} "
                        f"value has no single meaning (TileLang refuses it; C would "
                        f"compare with {weak.value % (1 << dtype.bits)}): write "
                        f"T.{dtype}(...) or cast the {dtype} operand to a signed type",
                        node)
        if is_weak(weak) and not is_weak(typed) and not dtype.is_float \
                and not weak.dtype.is_float \
                and not dtype.lowest <= weak.value <= dtype.highest:
            sample = int(dtype.lowest)
            a, b = (weak.value, sample) if weak is left else (sample, weak.value)
            return weak_const(bool(COMPARES[op](a, b)), Span.of(node), node)
    a, b, _ = unify(left, right)
    return Compare(name, a, b, Span.of(node))


def _ifexp(ctx: FuncContext, node: ast.IfExp) -> Expr:
    truth = ctx.truth(node.test)        # `a if op == "sum" else b`: chosen at trace time
    if truth is not None:
        return lower_expr(ctx, node.body if truth else node.orelse)
    cond = lower_expr(ctx, node.test)
    if is_weak(cond):       # a Python-level choice between two expressions
        return lower_expr(ctx, node.body if cond.value else node.orelse)
    return make_select(cond, lower_expr(ctx, node.body), lower_expr(ctx, node.orelse), node)


def make_select(cond: Expr, a: Expr, b: Expr, node: ast.AST) -> Expr:
    a, b, dtype = unify(a, b)
    return Select(cond, a, b, dtype, Span.of(node))


# ----------------------------------------------------------------------------- calls



def _args(node: ast.Call, count: int | tuple[int, ...], what: str) -> list[ast.expr]:
    for a in node.args:
        if isinstance(a, ast.Starred):
            unsupported("star-arguments are not supported", a)
    for kw in node.keywords:
        if kw.arg is None:
            unsupported("`**` arguments are not supported", kw)
        shape_error(f"`{what}` got an unexpected keyword `{kw.arg}`", kw)
    counts = (count,) if isinstance(count, int) else count
    if len(node.args) not in counts:
        want = " or ".join(str(c) for c in counts)
        shape_error(f"`{what}` takes {want} argument(s), got {len(node.args)}", node)
    return node.args


def call_args(node: ast.Call, positional: tuple[str, ...], required: int,
              what: str, ignored: tuple[str, ...] = ()) -> dict[str, ast.expr]:
    """Bind a call's arguments to parameter names the way Python would (positional then
    keywords); codegen-only keywords in `ignored` are dropped."""
    bound: dict[str, ast.expr] = {}
    for a in node.args:
        if isinstance(a, ast.Starred):
            unsupported("star-arguments are not supported", a)
    if len(node.args) > len(positional):
        shape_error(f"`{what}` takes at most {len(positional)} positional argument(s), "
                    f"got {len(node.args)}", node)
    bound.update(zip(positional, node.args))
    for kw in node.keywords:
        if kw.arg is None:
            unsupported("`**` arguments are not supported", kw)
        if kw.arg in ignored:
            continue
        if kw.arg not in positional:
            shape_error(f"`{what}` got an unexpected keyword `{kw.arg}`", kw)
        if kw.arg in bound:
            shape_error(f"`{what}` got `{kw.arg}` twice", kw)
        bound[kw.arg] = kw.value
    missing = [p for p in positional[:required] if p not in bound]
    if missing:
        shape_error(f"`{what}` is missing the argument `{missing[0]}`", node)
    return bound


def _intrinsic(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    span = Span.of(node)
    if INTRINSICS[name].arity == 2:
        a, b = (lower_expr(ctx, n) for n in _args(node, 2, f"T.{name}"))
        return _binary_intrinsic(name, a, b, node)
    (a_node,) = _args(node, 1, f"T.{name}")
    a = lower_expr(ctx, a_node)
    if INTRINSICS[name].float_only:
        a = as_float(a, f"T.{name}", node)
    return Call(name, (a,), a.dtype, span)


def _binary_intrinsic(name: str, a: Expr, b: Expr, node: ast.AST) -> Expr:
    a, b, dtype = unify(a, b)
    return Call(name, (a, b), dtype, Span.of(node))


def _clamp(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    """T.clamp(x, lo, hi) is TileLang's `T.min(T.max(x, lo), hi)` (language/customize.py),
    built from those two intrinsics so it has one meaning everywhere: the upper bound
    wins when lo > hi, and a NaN x gives min(lo, hi) (T.max/T.min ignore NaN)."""
    args = call_args(node, ("dst", "min_val", "max_val"), 3, "T.clamp")
    x, lo, hi = (lower_expr(ctx, args[p]) for p in ("dst", "min_val", "max_val"))
    return _binary_intrinsic("min", _binary_intrinsic("max", x, lo, node), hi, node)


def _integer_binary(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    a, b = (lower_expr(ctx, n) for n in _args(node, 2, f"T.{name}"))
    if is_weak(a) and is_weak(b):
        if name == "ceildiv":
            return weak_const(ceildiv(a.value, b.value, node), Span.of(node), node)
        op = {"floordiv": ast.FloorDiv(), "floormod": ast.Mod()}[name]
        return _fold_weak(op, a, b, node)
    if name == "ceildiv":
        # ceildiv(a, b) = (a + b - 1) // b, for the positive divisors tile sizes are
        a, b, _ = unify(a, b)
        require_integer(a, "T.ceildiv", node)
        one = typed_const(1, b.dtype, Span.of(node))
        top = make_binary("+", a, make_binary("-", b, one, node), node)
        return make_binary("//", top, b, node)
    return make_binary({"floordiv": "//", "floormod": "%"}[name], a, b, node)


def _dtype_arg(ctx: FuncContext, node: ast.expr) -> DType:
    return ctx.folder.fold_dtype(node)


def _cast(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    # T.cast(value, dtype) as TileLang spells it; tir's Cast(dtype, value) the other way
    value_node, dtype_node = _args(node, 2, f"T.{name}")
    if name == "Cast":
        value_node, dtype_node = dtype_node, value_node
    dtype = _dtype_arg(ctx, dtype_node)
    return _converted(lower_expr(ctx, value_node), dtype, node)


def _astype(ctx: FuncContext, node: ast.Call) -> Expr:
    """`x.astype(dtype)`: TVM's PrimExpr.astype, the same conversion as T.cast(x, dtype).
    A Python number has no .astype (TileLang fails with AttributeError), so the value
    must be a kernel value."""
    (dtype_node,) = _args(node, 1, ".astype")
    value = lower_expr(ctx, node.func.value)
    if is_weak(value):
        shape_error(f"`.astype` needs a kernel value; `{ast.unparse(node.func.value)}` is "
                    f"a Python number (write T.cast(..., dtype) or T.<dtype>(...))", node)
    return _converted(value, _dtype_arg(ctx, dtype_node), node)


def _typed_literal(ctx: FuncContext, node: ast.Call, dtype: DType) -> Expr:
    (a_node,) = _args(node, 1, f"T.{dtype.name}")
    return _converted(lower_expr(ctx, a_node), dtype, node)


def _converted(value: Expr, dtype: DType, node: ast.AST) -> Expr:
    """T.cast / T.<dtype>(...) of value. A constant into an integer dtype is folded as
    TVM folds it (`make_const`: the value truncated toward zero, which must fit — out
    of range, NaN or inf TileLang refuses at compile time, and so do we: R102); a
    typed float constant is first rounded to its own dtype."""
    if is_weak(value):
        return typed_const(value.value, dtype, Span.of(node))
    if isinstance(value, Const) and dtype.is_int and not value.dtype.is_bool:
        exact = value.dtype.quantize(np.array([value.value]))[0]
        exact = float(exact) if value.dtype.is_float else int(exact)
        return typed_const(exact, dtype, Span.of(node))
    return Cast(value, dtype, Span.of(node))


def _reinterpret(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    """T.reinterpret(value, dtype): value's bits read as dtype (spec.reinterpret). A
    Python number is typed as TVM converts it (int32, int64 beyond; float32); the value's
    own dtype is the value itself (TVM returns it unchanged)."""
    args = call_args(node, ("value", "dtype"), 2, "T.reinterpret")
    value_node, dtype_node = args["value"], args["dtype"]
    if _names_dtype(ctx, value_node):
        # TileLang still takes the old order T.reinterpret(dtype, value), with a warning
        value_node, dtype_node = dtype_node, value_node
    if _folds_to(ctx, dtype_node, "handle"):
        unknown("T.reinterpret into `handle` (TVM's pointer type: a null pointer for "
                "T.attr and tvm_thread_allreduce) is not supported", dtype_node)
    dtype = _dtype_arg(ctx, dtype_node)
    value = lower_expr(ctx, value_node)
    if is_weak(value):
        value = typed_const(value.value, value.dtype, value.span)
    problem = R.refusal(value.dtype, dtype)
    if problem is not None:
        shape_error(problem, node)
    if value.dtype == dtype:
        return value
    return Call(R.NAME, (value,), dtype, Span.of(node))


def _names_dtype(ctx: FuncContext, node: ast.expr) -> bool:
    value = _folded(ctx, node)
    return isinstance(value, DType) or isinstance(value, str) and \
        lookup_dtype(value) is not None


def _folds_to(ctx: FuncContext, node: ast.expr, name: str) -> bool:
    return _folded(ctx, node) == name


def _folded(ctx: FuncContext, node: ast.expr):
    """node's compile-time value, or None where it has none."""
    try:
        return ctx.folder.fold(node)
    except NotConstant:
        return None


def _special_value(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    (dtype_node,) = _args(node, 1, f"T.{name}")
    dtype = _dtype_arg(ctx, dtype_node)
    if name == "infinity":
        if not dtype.is_float:
            # TileLang's tl.infinity has no integer form ("Cannot decide infinity for
            # type"); T.max_value is the integer bound
            shape_error(f"T.infinity needs a float dtype, got {dtype} (TileLang has no "
                        f"integer infinity; T.max_value({dtype}) is its largest value)",
                        node)
        if dtype.is_float8:
            # e4m3fn has no infinity (TileLang: "Cannot decide infinity"); e5m2's is a
            # bit pattern TileLang prints, while every conversion into float8 saturates
            shape_error(f"T.infinity({dtype}) is not supported: float8 values are "
                        f"modelled saturating, without infinities (docs/limits.md); "
                        f"T.max_value({dtype}) is its largest value", node)
        value = math.inf
    else:
        value = dtype.finite_max if name == "max_value" else dtype.finite_min
    return Const(value, dtype, Span.of(node))


def buffer_view(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    # a view is made by an assignment (`v = T.reshape(buf, shape)`, views.py), where the
    # frontend can give it a name, a buffer of its own and the copy that fills it
    unknown(f"`T.{name}` is supported only assigned to a name (`v = T.{name}(buf, "
            f"shape)`), not inside an expression or a call", node.func)


def _if_then_else(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    c, a, b = (lower_expr(ctx, n) for n in _args(node, 3, "T.if_then_else"))
    return make_select(c, a, b, node)


def _thread_binding(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    """T.get_thread_binding(d): threadIdx.x, .y or .z. The IR has one thread index, the
    linear one (x + X·(y + Y·z), spec.frontend.sizes.thread_extents), so dimension d is
    (t // (extents below d)) % extent d; a dimension of extent 1 is 0."""
    args = _args(node, (0, 1), "T.get_thread_binding")
    dim = ctx.folder.fold_int(args[0], "the thread dimension") if args else 0
    if not 0 <= dim <= 2:
        shape_error(f"T.get_thread_binding({dim}): the thread dimension is 0, 1 or 2 "
                    f"(threadIdx.x, .y, .z)", node)
    return thread_dimension(ctx.thread_extents, dim, Span.of(node))


def thread_dimension(extents: tuple[int, ...], dim: int, span: Span) -> Expr:
    """threadIdx of dimension dim as an expression of the linear thread index."""
    extents = extents + (1,) * (3 - len(extents))
    below = math.prod(extents[:dim])
    if extents[dim] == 1:
        return Const(0, INT32, span)
    index: Expr = ThreadBinding(span, INT32)
    if below > 1:
        index = Binary("//", index, Const(below, INT32, span, weak=True), INT32, span)
    if below * extents[dim] < math.prod(extents):
        index = Binary("%", index, Const(extents[dim], INT32, span, weak=True), INT32,
                       span)
    return index


def _shuffle(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    """T.shfl_xor/down/up/sync(value, lane, width=32, mask=full warp): the value of
    `value` on another lane of the warp (spec.warp)."""
    what = f"T.{name}"
    lane_param = "srcLane" if name == "shfl_sync" else "delta"
    args = call_args(node, ("value", lane_param, "width", "mask"), 2, what)
    value = lower_expr(ctx, args["value"])
    _warp_value(value, what, node)
    lane = lower_expr(ctx, args[lane_param])
    require_integer(lane, f"{what}'s {lane_param}", args[lane_param])
    width = ctx.folder.fold_int(args["width"], "the shuffle width") if "width" in args \
        else WARP
    if width not in (1, 2, 4, 8, 16, 32):
        shape_error(f"{what}: width must be a power of two up to 32, got {width}",
                    args.get("width", node))
    if "mask" in args and ctx.folder.fold_int(args["mask"], "the lane mask") != FULL_MASK:
        unsupported(f"{what} with a lane mask other than the full warp (0xFFFFFFFF) is not "
                    f"supported", args["mask"])
    span = Span.of(node)
    if is_weak(lane):
        if not INT32.lowest <= lane.value <= INT32.highest:
            shape_error(f"{what}'s {lane_param} {lane.value} does not fit in int32",
                        args[lane_param])
        lane = Const(int(lane.value), INT32, lane.span)
    elif lane.dtype != INT32:
        lane = Cast(lane, INT32, span)              # CUDA's `int` parameter
    return Call(name, (value, lane, Const(width, INT32, span)), value.dtype, span)


def _warp_reduce(ctx: FuncContext, node: ast.Call, name: str) -> Expr:
    """T.warp_reduce_<op>(value): tl::warp_reduce's butterfly over the warp (spec.warp)."""
    what = f"T.{name}"
    (value_node,) = _args(node, 1, what)
    value = lower_expr(ctx, value_node)
    _warp_value(value, what, node)
    kind = WARP_REDUCES[name]
    if kind.startswith("bit") and not value.dtype.is_int:
        shape_error(f"{what} needs an integer value, not {value.dtype}", node)
    if kind in ("max", "min") and value.dtype.name == "float64":
        # tl::fast_max/fast_min of a double is `a < b ? b : a`, not fmax: NaN differs
        shape_error(f"{what} of a float64 value is not supported: TileLang compares "
                    f"doubles with `a < b ? b : a`, which treats NaN unlike T.{kind}", node)
    return Call(name, (value,), value.dtype, Span.of(node))


def _warp_value(value: Expr, what: str, node: ast.AST) -> None:
    if is_weak(value):
        shape_error(f"{what} of an untyped literal: give it a dtype (`T.float32(1)`)", node)
    if value.dtype.is_bool or value.dtype.bits < 16 and value.dtype.is_float:
        shape_error(f"{what} of a {value.dtype} value is not supported", node)


CALLS = {
    **{n: _intrinsic for n in INTRINSICS},
    "ceildiv": _integer_binary, "floordiv": _integer_binary, "floormod": _integer_binary,
    "cast": _cast, "Cast": _cast, "if_then_else": _if_then_else,
    "infinity": _special_value, "max_value": _special_value, "min_value": _special_value,
    "get_thread_binding": _thread_binding, "clamp": _clamp, R.NAME: _reinterpret,
    "reshape": buffer_view, "view": buffer_view,
    **{n: _shuffle for n in SHUFFLES}, **{n: _warp_reduce for n in WARP_REDUCES},
}


def _call(ctx: FuncContext, node: ast.Call) -> Expr:
    if not isinstance(node.func, (ast.Name, ast.Attribute)):
        unsupported(f"{construct_name(node.func)} are not supported in a kernel", node.func)
    name = ctx.imports.t_name(node.func)
    if name is None and isinstance(node.func, ast.Attribute) and node.func.attr == "astype":
        return _astype(ctx, node)
    if name is None:
        return _python_call(ctx, node)
    handler = CALLS.get(name)
    if handler is not None:
        return handler(ctx, node, name)
    dtype = lookup_dtype(name)
    if dtype is not None:
        return _typed_literal(ctx, node, dtype)
    if refused_dtype(name):
        shape_error(refused_dtype(name), node.func)
    if name.startswith("atomic_"):
        from .atomics import refuse_atomic_value      # atomics reads this module
        refuse_atomic_value(node, name)
    unknown(f"`T.{name}` is not supported in an expression", node.func)


def _python_call(ctx: FuncContext, node: ast.Call) -> Expr:
    """`min(BM, 4)` and friends are fine on constants; anything else is not TileLang."""
    try:
        return weak_const(ctx.folder.fold(node), Span.of(node), node)
    except NotConstant:
        pass
    if isinstance(node.func, ast.Name) and isinstance(ctx.lookup(node.func.id), Helper):
        return inline_value_helper(ctx, node)
    if isinstance(node.func, ast.Name) and ctx.lookup(node.func.id) is None \
            and not ctx.imports.binds(node.func.id) and node.func.id not in _BUILTINS:
        unknown(f"unknown name `{node.func.id}`", node.func)
    unknown(f"`{ast.unparse(node.func)}` is not supported in a kernel "
            f"(use the T. intrinsics, e.g. T.max)", node.func)


_BUILTINS = ("min", "max", "abs", "int", "float", "len", "print", "round", "pow", "range")

_LOWER = {
    ast.Constant: _constant, ast.Name: _name, ast.Attribute: _attribute,
    ast.Subscript: _subscript, ast.BinOp: _binop, ast.UnaryOp: _unaryop,
    ast.BoolOp: _boolop, ast.Compare: _compare, ast.IfExp: _ifexp, ast.Call: _call,
}
