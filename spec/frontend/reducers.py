"""The three reducer surfaces, canonicalized to one ReducerInit / ReducerUpdate /
ReducerFinalize form:

- TileLang v2: `T.reducer_init(acc[, seed])`, `T.reducer_update(acc[i, j], v)`,
  `T.finalize_reducer(acc, dst[, batch=k])`;
- the RFC's: `T.reducer_update(acc, (i,), v)` / `T.reducer_update(acc, i, v)`, the epoch
  opened by the allocation itself (an implicit init);
- legacy v1: `replication=` on the allocation, `T.fill` / `T.clear` as the epoch start,
  `acc[i] += v`, `-=`, `*=`, `&=`, `|=`, `^=`, `acc[i] = acc[i] + v`,
  `acc[i] = T.max(acc[i], v)`, in-place `T.finalize_reducer(acc)`.

The frontend only recognizes forms: whether a form fits the reducer's op, whether the
epoch is open, whether a store is legal — all of that is verify.epochs.checker's (R2xx)."""
from __future__ import annotations

import ast

from ..ir import (Alloc, Buffer, Const, Expr, ReducerFinalize, ReducerInfo, ReducerInit,
                  ReducerUpdate, Stmt, Store, Unary)
from ..ops import OP_ALIASES
from ..source import Span
from .constants import NotConstant
from .context import FuncContext
from .errors import shape_error
from .exprs import buffer_named, call_args, lower_expr, lower_index, lower_point
from .user_ops import DeclaredOp
from .promotion import adopt, is_weak, typed_const, weak_const

# the monoid each written form denotes (R206 compares it with the reducer's op)
FORM_OPS = {
    "+=": "sum", "-=": "sum", "store-add": "sum", "store-sub": "sum",
    "*=": "product", "store-mul": "product", "store-max": "max", "store-min": "min",
    "&=": "bitand", "|=": "bitor", "^=": "bitxor",
    "store-and": "bitand", "store-or": "bitor", "store-xor": "bitxor",
}
AUG_FORMS = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.BitAnd: "&=",
             ast.BitOr: "|=", ast.BitXor: "^="}
STORE_FORMS = {ast.Add: "store-add", ast.Sub: "store-sub", ast.Mult: "store-mul",
               ast.BitAnd: "store-and", ast.BitOr: "store-or", ast.BitXor: "store-xor"}
_COMMUTATIVE = ("store-add", "store-mul", "store-and", "store-or", "store-xor")


def reducer_info(ctx: FuncContext, args: dict[str, ast.expr], call: ast.Call) -> ReducerInfo:
    replication = constant_str(ctx, args.get("replication"), None, "replication")
    if replication is not None and replication not in ("all", "none"):
        shape_error(f"replication must be \"all\" or \"none\", got {replication!r}",
                    args["replication"])
    legacy = replication is not None
    op_node = args.get("op")
    # `op=argmax_packed` (the declared function) or `op="argmax_packed"`
    named = ctx.lookup(op_node.id) if isinstance(op_node, ast.Name) else None
    if isinstance(named, DeclaredOp):
        return ReducerInfo(named.monoid.name, legacy, replication, named.monoid)
    op = constant_str(ctx, op_node, "sum", "op")
    declared = ctx.lookup(op)
    if isinstance(declared, DeclaredOp) and declared.monoid.name == op:
        return ReducerInfo(op, legacy, replication, declared.monoid)
    # an op we do not know is kept as written: verify.epochs.checker reports it (R212)
    canonical = OP_ALIASES.get(op.lower(), op.lower())
    return ReducerInfo(canonical, legacy=legacy, replication=replication)


def constant_str(ctx: FuncContext, node: ast.expr | None, default, what: str):
    if node is None:
        return default
    try:
        value = ctx.folder.fold(node)
    except NotConstant:
        shape_error(f"`{what}` must be a constant string", node)
    if value is None:
        return default
    if not isinstance(value, str):
        shape_error(f"`{what}` must be a string, got {value!r}", node)
    return value


def contribution(reducer: Buffer, value: Expr) -> Expr:
    """A weak literal contribution adopts the reducer's dtype (TVM casts it); a float
    literal into an integer reducer stays float so that R210 can see it."""
    if is_weak(value) and (reducer.dtype.is_float or not value.dtype.is_float):
        return adopt(value, reducer.dtype)
    return value


def negate(value: Expr, span: Span) -> Expr:
    if isinstance(value, Const):
        return Const(-value.value, value.dtype, value.span, value.weak)
    return Unary("neg", value, value.dtype, span)


def make_update(reducer: Buffer, indices, value: Expr, form: str, span: Span) -> ReducerUpdate:
    value = contribution(reducer, value)
    if form in ("-=", "store-sub"):
        value = negate(value, span)
    form_op = reducer.reducer.op if form == "reducer_update" else FORM_OPS[form]
    return ReducerUpdate(reducer, tuple(indices), value, form, form_op, span)


def _reducer_arg(ctx: FuncContext, node: ast.AST, what: str) -> Buffer:
    buffer = buffer_named(ctx, node, "a reducer")
    if not buffer.is_reducer:
        shape_error(f"`{what}` expects a reducer, but `{buffer.name}` is a "
                    f"{buffer.scope} buffer", node)
    return buffer


# ----------------------------------------------------------------------------- calls

def reducer_init(ctx: FuncContext, call: ast.Call) -> list[Stmt]:
    args = call_args(call, ("reducer", "seed"), 1, "T.reducer_init")
    reducer = _reducer_arg(ctx, args["reducer"], "T.reducer_init")
    seed = None
    if "seed" in args:
        seed = contribution(reducer, lower_expr(ctx, args["seed"]))
    ctx.explicit_init.add(id(reducer))
    return [ReducerInit(reducer, seed, "reducer_init", Span.of(call))]


def reducer_update(ctx: FuncContext, call: ast.Call) -> list[Stmt]:
    for kw in call.keywords:
        shape_error("`T.reducer_update` takes positional arguments only", kw)
    args = call.args
    if len(args) == 2 and isinstance(args[0], ast.Subscript):
        # TileLang v2: T.reducer_update(acc[i, j], value)
        reducer = _reducer_arg(ctx, args[0].value, "T.reducer_update")
        indices = lower_point(ctx, reducer, args[0])
    elif len(args) == 3:
        # the RFC's: T.reducer_update(acc, (i, j), value) or T.reducer_update(acc, i, value)
        reducer = _reducer_arg(ctx, args[0], "T.reducer_update")
        indices = _rfc_indices(ctx, reducer, args[1])
    else:
        shape_error("`T.reducer_update` takes (acc[i, ...], value) or (acc, (i, ...), value)",
                    call)
    value = lower_expr(ctx, args[-1])
    return [make_update(reducer, indices, value, "reducer_update", Span.of(call))]


def _rfc_indices(ctx: FuncContext, reducer: Buffer, node: ast.AST) -> tuple[Expr, ...]:
    """`(i, j)`, `[i, j]`, a bare `i`, or a constant tuple such as `IDX = (0,)`."""
    if isinstance(node, (ast.Tuple, ast.List)):
        indices = tuple(lower_index(ctx, i) for i in node.elts)
    else:
        try:
            folded = ctx.folder.fold(node)
        except NotConstant:
            folded = None
        if isinstance(folded, tuple):
            indices = tuple(weak_const(v, Span.of(node), node) for v in folded)
        else:
            indices = (lower_index(ctx, node),)
    if len(indices) != len(reducer.shape):
        shape_error(f"`{reducer.name}` has {len(reducer.shape)} dimension(s) but "
                    f"{len(indices)} index(es) were given", node)
    for i in indices:
        if not (i.dtype.is_int or i.dtype.is_bool):
            shape_error(f"an index must be an integer, got {i.dtype}", node)
    return indices


def finalize_reducer(ctx: FuncContext, call: ast.Call) -> list[Stmt]:
    args = call_args(call, ("reducer", "dst", "batch"), 1, "T.finalize_reducer")
    reducer = _reducer_arg(ctx, args["reducer"], "T.finalize_reducer")
    dst = None
    if "dst" in args and not (isinstance(args["dst"], ast.Constant)
                              and args["dst"].value is None):
        if not isinstance(args["dst"], ast.Name):
            shape_error("the finalize destination must be a whole buffer", args["dst"])
        dst = buffer_named(ctx, args["dst"])
    batch = None
    if "batch" in args:
        batch = ctx.folder.fold_int(args["batch"], "batch")
        if batch < 1:
            shape_error(f"batch must be positive, got {batch}", args["batch"])
    return [ReducerFinalize(reducer, dst, batch, Span.of(call))]


def fill_init(ctx: FuncContext, reducer: Buffer, value: Expr | None, form: str,
              span: Span) -> ReducerInit:
    """Legacy epoch start: T.fill(acc, v) / T.clear(acc) of a whole reducer."""
    if value is None:
        value = typed_const(0, reducer.dtype, span)
    ctx.explicit_init.add(id(reducer))
    return ReducerInit(reducer, None, form, span, fill_value=contribution(reducer, value))


def implicit_inits(body: list[Stmt], allocs: list[Alloc], ctx: FuncContext) -> list[Stmt]:
    """The RFC's rule: a non-legacy reducer with no explicit epoch start opens its epoch
    at allocation, with every partial at the identity."""
    pending = {id(a): a for a in allocs if id(a.buffer) not in ctx.explicit_init}
    if not pending:
        return body
    out: list[Stmt] = []
    for stmt in body:
        out.append(stmt)
        if id(stmt) in pending:
            out.append(ReducerInit(stmt.buffer, None, "implicit", stmt.span))
    return out


# ----------------------------------------------------------------------------- stores

def _same_access(node: ast.AST, target: ast.Subscript) -> bool:
    return (isinstance(node, ast.Subscript) and ast.dump(node.value) == ast.dump(target.value)
            and ast.dump(node.slice) == ast.dump(target.slice))


def _store_form(ctx: FuncContext, target: ast.Subscript,
                value: ast.AST) -> tuple[str, ast.AST] | None:
    """(form, contribution node) when `acc[i] = <value>` is a legacy update form."""
    if isinstance(value, ast.BinOp) and type(value.op) in STORE_FORMS:
        form = STORE_FORMS[type(value.op)]
        if _same_access(value.left, target):
            return form, value.right
        if form in _COMMUTATIVE and _same_access(value.right, target):
            return form, value.left
    if isinstance(value, ast.Call) and len(value.args) == 2 and not value.keywords:
        name = ctx.imports.t_name(value.func)
        if name in ("max", "min"):
            a, b = value.args
            if _same_access(a, target):
                return f"store-{name}", b
            if _same_access(b, target):
                return f"store-{name}", a
    return None


def store_to_reducer(ctx: FuncContext, node: ast.Assign, reducer: Buffer) -> list[Stmt]:
    target = node.targets[0]
    indices = lower_point(ctx, reducer, target)
    matched = _store_form(ctx, target, node.value)
    if matched is None:
        # not an update form: a plain store, which verify.epochs.checker judges (R205)
        return [Store(reducer, indices, lower_expr(ctx, node.value), Span.of(node))]
    form, value_node = matched
    return [make_update(reducer, indices, lower_expr(ctx, value_node), form, Span.of(node))]


def augassign_to_reducer(ctx: FuncContext, node: ast.AugAssign,
                         reducer: Buffer) -> list[Stmt] | None:
    """`acc[i] op= v`: an update for the six forms, None for the others (`/=` ...)."""
    form = AUG_FORMS.get(type(node.op))
    if form is None:
        return None
    indices = lower_point(ctx, reducer, node.target)
    value = lower_expr(ctx, node.value)
    return [make_update(reducer, indices, value, form, Span.of(node))]
