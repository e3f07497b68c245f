"""Tile statements: T.copy, T.fill, T.clear and T.reduce_<kind>. A whole-buffer fill or
clear of a reducer is the legacy epoch start and becomes a ReducerInit."""
from __future__ import annotations

import ast

from ..ir import Copy, Fill, Reduce, Stmt
from ..ops import NAN_DTYPES, REDUCE_KINDS
from ..source import Span
from .constants import NotConstant
from .context import FuncContext
from .errors import shape_error, unsupported
from .exprs import buffer_named, call_args, lower_expr
from .promotion import adopt, is_weak, typed_const
from .reducers import fill_init
from .regions import fill_region, lower_region_arg, resolve_copy

# keywords that pick an instruction or a layout, never the meaning of the copy
_COPY_HINTS = ("coalesced_width", "disable_tma", "eviction_policy", "loop_layout",
               "annotations", "force_async_copy")


def lower_copy(ctx: FuncContext, call: ast.Call) -> list[Stmt]:
    args = call_args(call, ("src", "dst"), 2, "T.copy", ignored=_COPY_HINTS)
    src = lower_region_arg(ctx, args["src"])
    dst = lower_region_arg(ctx, args["dst"])
    src_region, dst_region = resolve_copy(src, dst, call)
    return [Copy(src_region, dst_region, Span.of(call))]


def _is_whole(node: ast.AST) -> bool:
    return isinstance(node, ast.Name)


def lower_fill(ctx: FuncContext, call: ast.Call, clear: bool) -> list[Stmt]:
    name = "T.clear" if clear else "T.fill"
    params = ("buffer",) if clear else ("buffer", "value")
    args = call_args(call, params, len(params), name)
    target = lower_region_arg(ctx, args["buffer"])
    buffer = target.buffer
    span = Span.of(call)
    value = None if clear else lower_expr(ctx, args["value"])
    if buffer.is_reducer and _is_whole(args["buffer"]):
        return [fill_init(ctx, buffer, value, "clear" if clear else "fill", span)]
    if value is None:
        value = typed_const(0, buffer.dtype, span)
    elif is_weak(value) and (buffer.dtype.is_float or not value.dtype.is_float):
        value = adopt(value, buffer.dtype)
    return [Fill(fill_region(target), value, span)]


def lower_reduce(ctx: FuncContext, call: ast.Call, kind: str) -> list[Stmt]:
    what = f"T.reduce_{kind}"
    # TileLang's reduce_abssum has no `clear` (it always clears); language/reduce_op.py
    params = ("buffer", "out", "dim", "batch") if kind == "abssum" else \
        ("buffer", "out", "dim", "clear", "batch")
    if kind in _NAN_KINDS:
        params += ("nan_propagate",)
    args = call_args(call, params, 2, what)
    nan_propagate = "nan_propagate" in args and constant_bool(
        ctx, args["nan_propagate"], "`nan_propagate`")
    if "batch" in args:
        # how many outputs share one all-reduce's barriers: code generation only, the
        # values reduced are the same (TileLang checks only batch >= 1)
        batch = ctx.folder.fold_int(args["batch"], "batch")
        if batch < 1:
            shape_error(f"{what}: batch must be at least 1, got {batch}", args["batch"])
    src = buffer_named(ctx, args["buffer"])
    dst = buffer_named(ctx, args["out"])
    # TileLang switches to __hmax_nan/__hmin_nan only when the accumulator is
    # float16/bfloat16 (backend/common/op/reduce.h, use_nan_op): a NaN term makes the
    # result NaN there. Into any other dtype the flag changes nothing (fmaxf/fminf).
    nan_propagate = nan_propagate and dst.dtype.name in NAN_DTYPES
    if src.scope == "local":
        check_local_reduce(what, src, dst, batch if "batch" in args else 1, args, call)
    elif src.scope not in ("fragment", "shared") and not src.is_reducer:
        unsupported(f"{what} of the {src.scope} buffer `{src.name}` is not supported: "
                    f"the source of a tile reduction must be a fragment, a shared or a "
                    f"local buffer", args["buffer"])
    rank = len(src.shape)
    dim = ctx.folder.fold_int(args["dim"], "dim") if "dim" in args else -1
    if not -rank <= dim < rank:
        shape_error(f"dim {dim} is out of range for the {rank}-D buffer `{src.name}`",
                    args.get("dim", call))
    dim %= rank
    clear = constant_bool(ctx, args["clear"], "`clear`") if "clear" in args else True
    # the reduced dimension is removed (TileLang), or kept with extent 1
    dropped = src.shape[:dim] + src.shape[dim + 1:]
    kept = src.shape[:dim] + (1,) + src.shape[dim + 1:]
    if dst.shape not in (dropped, kept) and not (dropped == () and dst.shape == (1,)):
        shape_error(f"{what} of `{src.name}` {src.shape} over dim {dim} gives shape "
                    f"{dropped or (1,)}, but `{dst.name}` has shape {dst.shape}", call)
    if REDUCE_KINDS[kind].monoid.startswith("bit") and not (src.dtype.is_int
                                                            and dst.dtype.is_int):
        shape_error(f"{what} needs integer buffers, got {src.dtype} and {dst.dtype}", call)
    return [Reduce(kind, src, dst, dim, clear, Span.of(call), nan_propagate)]


def check_local_reduce(what: str, src, dst, batch: int, args: dict, call: ast.Call) -> None:
    """A thread-private source is reduced by each thread over its own copy, as TileLang
    lowers it (src/backend/common/op/reduce.h, LowerLocal): only into a local (or
    T.alloc_var) destination, in one dtype, without batch."""
    if dst.scope != "local":
        unsupported(f"{what} of the local buffer `{src.name}` is not supported into the "
                    f"{dst.scope} buffer `{dst.name}`: TileLang reduces a thread-private "
                    f"source only into a thread-private destination (T.alloc_local, "
                    f"T.alloc_var)", args["out"])
    if src.dtype != dst.dtype:
        shape_error(f"{what} of the local buffer `{src.name}` ({src.dtype}) into "
                    f"`{dst.name}` ({dst.dtype}): TileLang's per-thread reduction needs "
                    f"one dtype on both sides", call)
    if batch != 1:
        shape_error(f"{what} of the local buffer `{src.name}` takes no batch (TileLang: "
                    f"a local reduction does not support batch), got batch={batch}",
                    args["batch"])


# the kinds whose TileLang form takes nan_propagate (language/reduce_op.py)
_NAN_KINDS = ("max", "min", "absmax")


def constant_bool(ctx: FuncContext, node: ast.expr, what: str) -> bool:
    """A flag argument's value: a constant True or False, else R102 naming `what` (the
    argument, as the message spells it: "`clear`", "T.gemm's `transpose_A`")."""
    try:
        value = ctx.folder.fold(node)
    except NotConstant:
        shape_error(f"{what} must be a constant bool", node)
    if not isinstance(value, bool):
        shape_error(f"{what} must be True or False, got {value!r}", node)
    return value
