"""Buffer allocations: `x = T.alloc_shared / alloc_fragment / alloc_local / alloc_reducer
(shape, dtype, ...)`. Shapes are compile-time integers (module constants fold)."""
from __future__ import annotations

import ast

from ..dtypes import INT32
from ..ir import Alloc, Buffer, Const, ReducerInfo, Stmt, Store
from ..source import Span
from .constants import NotConstant
from .context import FuncContext
from .errors import shape_error
from .exprs import call_args, lower_expr
from .reducers import reducer_info
from ..limits import MAX_ELEMENTS
from .sizes import check_elements

SCOPES = {"alloc_shared": "shared", "alloc_fragment": "fragment", "alloc_local": "local",
          "alloc_reducer": "reducer"}
# keywords that choose a memory flavour or layout but never change the logical meaning
_IGNORED = ("scope", "layout")


def fold_shape(ctx: FuncContext, node: ast.AST, limit: int = MAX_ELEMENTS) -> tuple[int, ...]:
    """`(M, N)`, `[M, N]` or a bare `M`: positive compile-time integers, at most `limit`
    elements (an on-chip buffer's by default; a tensor parameter passes its own)."""
    try:
        value = ctx.folder.fold(node)
    except NotConstant as exc:
        shape_error(f"shape must be compile-time constant integers "
                    f"(`{ast.unparse(exc.node)}` is not)", exc.node)
    dims = value if isinstance(value, tuple) else (value,)
    if not dims:
        shape_error("shape must have at least one dimension", node)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            shape_error(f"shape must be integers, got {value!r}", node)
        if d <= 0:
            shape_error(f"shape extents must be positive, got {value!r}", node)
    check_elements(tuple(dims), "shape", node, limit)
    return tuple(dims)


def var_element(buffer: Buffer, span: Span) -> tuple[Const]:
    """The index of a T.alloc_var's one element: its name reads and assigns it."""
    return (Const(0, INT32, span, weak=True),)


def lower_alloc_var(ctx: FuncContext, target: ast.Name, call: ast.Call) -> list[Stmt]:
    """`v = T.alloc_var(dtype[, init][, scope], init=..., scope=...)`: TileLang's scalar
    (tilelang/language/allocate.py): a one-element thread-private ("local.var") buffer,
    stored `init` when one is given; `v` then reads it and `v = x`, `v += x` store it.
    A lone second positional argument that is a string is the scope, otherwise the init."""
    for a in call.args:
        if isinstance(a, ast.Starred):
            shape_error("star-arguments are not supported", a)
    if not call.args and not any(k.arg == "dtype" for k in call.keywords):
        shape_error("T.alloc_var needs a dtype", call)
    dtype_node = call.args[0] if call.args else \
        next(k.value for k in call.keywords if k.arg == "dtype")
    rest = list(call.args[1:])
    init = None
    if rest and not (isinstance(rest[0], ast.Constant) and isinstance(rest[0].value, str)):
        init = rest.pop(0)
    if len(rest) > 1 or (rest and not (isinstance(rest[0], ast.Constant)
                                       and isinstance(rest[0].value, str))):
        shape_error("T.alloc_var takes (dtype, init, scope) with a string scope", call)
    for kw in call.keywords:
        if kw.arg == "init":
            if init is not None:
                shape_error("T.alloc_var's init is given twice", kw)
            init = kw.value
        elif kw.arg not in ("dtype", "scope"):
            shape_error(f"`T.alloc_var` got an unexpected keyword `{kw.arg}`", kw)
    dtype = ctx.folder.fold_dtype(dtype_node)
    span = Span.of(target).to(Span.of(call))
    buffer = Buffer(ctx.fresh_name(target.id), (1,), dtype, "local", span)
    stmts: list[Stmt] = [Alloc(buffer, span)]
    if init is not None:
        stmts.append(Store(buffer, var_element(buffer, span), lower_expr(ctx, init), span))
    ctx.bind(target.id, buffer)
    ctx.var_buffers.add(id(buffer))
    return stmts


def lower_alloc(ctx: FuncContext, target: ast.Name, call: ast.Call, tname: str) -> list[Stmt]:
    scope = SCOPES[tname]
    if scope == "reducer":
        args = call_args(call, ("shape", "dtype", "op", "replication"), 2, f"T.{tname}",
                         ignored=_IGNORED)
    else:
        args = call_args(call, ("shape", "dtype"), 2, f"T.{tname}", ignored=_IGNORED)
    shape = fold_shape(ctx, args["shape"])
    dtype = ctx.folder.fold_dtype(args["dtype"])
    info: ReducerInfo | None = reducer_info(ctx, args, call) if scope == "reducer" else None
    span = Span.of(target).to(Span.of(call))
    buffer = Buffer(ctx.fresh_name(target.id), shape, dtype, scope, span, info)
    ctx.bind(target.id, buffer)
    alloc = Alloc(buffer, span)
    if info is not None and not info.legacy:
        ctx.block_allocs[-1].append(alloc)     # may get an implicit init at block end
    return [alloc]
