"""Buffer allocations: `x = T.alloc_shared / alloc_fragment / alloc_local / alloc_reducer
(shape, dtype, ...)`. Shapes are compile-time integers (module constants fold)."""
from __future__ import annotations

import ast

from ..ir import Alloc, Buffer, ReducerInfo, Stmt
from ..source import Span
from .constants import NotConstant
from .context import FuncContext
from .errors import shape_error
from .exprs import call_args
from .reducers import reducer_info
from .sizes import check_elements

SCOPES = {"alloc_shared": "shared", "alloc_fragment": "fragment", "alloc_local": "local",
          "alloc_reducer": "reducer"}
# keywords that choose a memory flavour or layout but never change the logical meaning
_IGNORED = ("scope", "layout")


def fold_shape(ctx: FuncContext, node: ast.AST) -> tuple[int, ...]:
    """`(M, N)`, `[M, N]` or a bare `M`: positive compile-time integers."""
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
    check_elements(tuple(dims), "shape", node)
    return tuple(dims)


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
