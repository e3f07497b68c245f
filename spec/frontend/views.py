"""`v = T.reshape(buf, shape)` and `v = T.view(buf, shape)`: a second shape over a
buffer's elements.

TileLang's view shares the storage of `buf` (row-major, the same element count). Our
buffers own their storage (one layout, one register file, one shared tile each), so a
view is read as a **copy** made where the view is created: a new buffer of the view's
shape, filled by a `T.Parallel` over it whose element `v[i, j, k]` is the element of
`buf` at the same row-major position. The copy and the view are the same values as
long as neither buffer is written after the view exists, and that is checked
(`stale_views`): a write to either after the view statement is refused by name, so the
copy never stands for a view whose elements changed. A view of an on-chip buffer
(fragment or shared) is read this way; a view of a global tensor, of a thread-private
local buffer, of a reducer, or one that changes the dtype (a reinterpretation of the
bits) is refused by name."""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from ..diagnostics import Diagnostic, error
from ..dtypes import INT32
from ..ir import (Alloc, Binary, Buffer, Const, Expr, Load, ParallelFor, Stmt, Store, Var,
                  children, written_buffers)
from ..source import Span
from .context import FuncContext
from .errors import shape_error, unsupported
from .exprs import call_args

_VIEW_SCOPES = ("fragment", "shared")


@dataclass(frozen=True)
class View:
    """A view made by the frontend: its copy loop, and the two buffers it ties."""
    copy: ParallelFor
    source: Buffer
    view: Buffer
    span: Span


def lower_view(ctx: FuncContext, target: ast.Name, call: ast.Call, name: str) -> list[Stmt]:
    """`target = T.reshape(src, shape)` / `T.view(src, shape=None, dtype=None)`: the
    view's Alloc and the copy that fills it (module docstring)."""
    from .buffers import fold_shape
    if name == "reshape":
        args = call_args(call, ("src", "shape"), 2, "T.reshape")
    else:
        args = call_args(call, ("src", "shape", "dtype"), 1, "T.view")
    src = _source(ctx, args["src"], name)
    shape = fold_shape(ctx, args["shape"]) if args.get("shape") is not None else src.shape
    if args.get("dtype") is not None and ctx.folder.fold_dtype(args["dtype"]) != src.dtype:
        unsupported(f"`T.view` of `{src.name}` as {ctx.folder.fold_dtype(args['dtype'])}: a "
                    f"view with another dtype reinterprets the bits of {src.dtype} elements, "
                    f"which is not supported (convert with T.cast)", args["dtype"])
    if math.prod(shape) != math.prod(src.shape):
        shape_error(f"T.{name} of `{src.name}` {src.shape} ({math.prod(src.shape)} elements) "
                    f"to {shape} ({math.prod(shape)} elements): a view has the same number "
                    f"of elements", call)
    span = Span.of(target).to(Span.of(call))
    view = Buffer(ctx.fresh_name(target.id), shape, src.dtype, src.scope, span)
    ctx.bind(target.id, view)
    copy = _copy_loop(ctx, src, view, span)
    ctx.views.append(View(copy, src, view, span))
    return [Alloc(view, span), copy]


def _source(ctx: FuncContext, node: ast.AST, name: str) -> Buffer:
    entry = ctx.lookup(node.id) if isinstance(node, ast.Name) else None
    if not isinstance(entry, Buffer):
        shape_error(f"T.{name} takes a buffer, got `{ast.unparse(node)}`", node)
    if entry.is_reducer:
        unsupported(f"T.{name} of the reducer `{node.id}` is not supported: a reducer's "
                    f"elements are partial until it is finalized", node)
    if entry.scope not in _VIEW_SCOPES:
        what = {"global": "global tensor", "local": "thread-private local buffer"}
        unsupported(f"T.{name} of the {what.get(entry.scope, entry.scope)} `{node.id}` is "
                    f"not supported: a view is read as a copy, which is exact for a fragment "
                    f"or a shared buffer only (index `{node.id}` itself)", node)
    return entry


def _copy_loop(ctx: FuncContext, src: Buffer, view: Buffer, span: Span) -> ParallelFor:
    """for v... in T.Parallel(view.shape): view[v] = src[unflatten(flatten(v))]."""
    loop_vars = tuple(Var(ctx.fresh_name(f"_view{d}"), span, INT32)
                      for d in range(len(view.shape)))
    flat: Expr = loop_vars[0]
    for var, extent in zip(loop_vars[1:], view.shape[1:]):
        flat = Binary("+", Binary("*", flat, _const(extent, span), INT32, span), var,
                      INT32, span)
    indices = []
    for d, extent in enumerate(src.shape):
        below = math.prod(src.shape[d + 1:])
        index = flat if below == 1 else Binary("//", flat, _const(below, span), INT32, span)
        if d > 0:
            index = Binary("%", index, _const(extent, span), INT32, span)
        indices.append(index)
    store = Store(view, loop_vars, Load(src, tuple(indices), span), span)
    return ParallelFor(loop_vars, view.shape, (store,), span)


def _const(value: int, span: Span) -> Const:
    return Const(value, INT32, span, weak=True)


def stale_views(body: tuple[Stmt, ...], views: list[View]) -> list[Diagnostic]:
    """R101 at the first write to a viewed buffer or to a view after the view was made
    (in program order: later in its block, or after a statement that encloses it); one
    per view, the cause being one."""
    made = {id(v.copy): v for v in views}
    live: list[View] = []
    found: list[Diagnostic] = []

    def visit(stmts) -> None:
        for stmt in stmts:
            for buffer in written_buffers(stmt):
                for v in [v for v in live if buffer is v.source or buffer is v.view]:
                    found.append(_stale(stmt, buffer, v))
                    live.remove(v)
            for sub in children(stmt):
                visit(sub)
            if id(stmt) in made:
                live.append(made[id(stmt)])

    visit(body)
    return found


def _stale(stmt: Stmt, buffer: Buffer, v: View) -> Diagnostic:
    other = v.view if buffer is v.source else v.source
    return error("R101", f"`{buffer.name}` is written after the view at line {v.span.line} "
                 f"tied it to `{other.name}`: a view is read as a copy of the elements "
                 f"when it is made, so writing either buffer afterwards is not supported "
                 f"(make the view after the last write)", stmt.span)
