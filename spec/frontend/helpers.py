"""Plain Python functions of the same file, used as TileLang's frontend uses them at
trace time (nothing is imported or run; their bodies are read):

- called as a statement in a kernel (`_reduce_op(T, op, src, dst, dim=1)`): the body is
  lowered in place, its parameters bound to the call's buffers and compile-time values,
  as the Python call would emit its TileLang statements into the kernel being traced;
- called in a compile-time expression (`T.Kernel(_blocks(M))`, `x = _pick(op)`): the
  body is evaluated over compile-time values (assignments, `if`, `return`), as Python
  would before TileLang sees the value;
- called in a kernel expression with kernel values (`s[i] = fast_round_scale(amax[i],
  inv)`): the body's assignments and its `return` build one expression, each parameter
  and local standing for the expression it was given, as the Python call builds a
  TileLang expression tree while the kernel is traced.

A helper sees the module's names, its parameters and its own locals, as a Python
function does. What a helper cannot mean statically (a loop, a call of an unknown
function, a runtime value where a constant is needed) is R102 or R100 naming it."""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable

from ..ir import Buffer, Let, Stmt, Var
from ..source import Span
from .constants import NotConstant
from .context import Constant, FuncContext, Inlined, Opaque
from .errors import shape_error, unsupported

MAX_HELPER_DEPTH = 16           # nested helper calls (a recursive helper stops here)


@dataclass(frozen=True)
class Helper(Opaque):
    """A module-level plain function (not a prim_func, not a factory): an Opaque name
    wherever a value is wanted, a body to evaluate or inline where it is called."""
    node: ast.FunctionDef | None = None


def _check_depth(depth: int, where: ast.AST) -> None:
    """R102 where helper calls nest past MAX_HELPER_DEPTH (a recursive helper)."""
    if depth > MAX_HELPER_DEPTH:
        shape_error(f"helper calls nested more than {MAX_HELPER_DEPTH} deep (a recursive "
                    f"helper?)", where)


# ----------------------------------------------------------------------------- statements

def inline_helper(ctx: FuncContext, call: ast.Call) -> list[Stmt]:
    """`helper(args...)` as a kernel statement: its body lowered in a scope of its own
    with its parameters bound (buffers to the caller's buffers, compile-time values to
    constants, a kernel value to a Let), as Python would run it while TileLang traces
    the kernel. Statements after a top-level `return` are not reached; its value is
    dropped."""
    from .reducers import implicit_inits
    from .stmts import lower_inline
    helper = ctx.lookup(call.func.id).node
    _check_depth(ctx.helper_depth + 1, call)
    bound = bind_arguments(helper, call)
    lets: list[Stmt] = []
    entries = {name: _argument_entry(ctx, name, expr, helper, lets)
               for name, expr in bound.items()}
    ctx.push()
    ctx.helper_depth += 1
    body: list[Stmt] = list(lets)
    try:
        for name, entry in entries.items():
            if entry is not None:
                ctx.bind(name, entry)
        for stmt in helper.body:
            if isinstance(stmt, ast.Return):
                break       # a statement call drops the value, as Python does
            stmt = expand_keywords(stmt, ctx.const_lookup, lambda v: _fresh(ctx, v))
            body += lower_inline(ctx, [stmt])
    finally:
        ctx.helper_depth -= 1
        allocs = ctx.pop()
    return list(implicit_inits(body, allocs, ctx))


def inline_value_helper(ctx: FuncContext, call: ast.Call):
    """`helper(args...)` in a kernel expression whose arguments are kernel values: the
    expression its `return` builds, with the parameters and the locals its assignments
    bind standing for their expressions (TileLang expressions are trees without side
    effects, so reading one twice means what the Python call means)."""
    from .exprs import lower_expr
    helper = ctx.lookup(call.func.id).node
    _check_depth(ctx.helper_depth + 1, call)
    entries = {name: _value_entry(ctx, name, expr, helper)
               for name, expr in bind_arguments(helper, call).items()}
    ctx.push()
    ctx.helper_depth += 1
    try:
        for name, entry in entries.items():
            if entry is not None:
                ctx.bind(name, entry)
        for stmt in helper.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue                                    # a docstring
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                return lower_expr(ctx, stmt.value)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                ctx.bind(stmt.targets[0].id, _value_entry(ctx, stmt.targets[0].id,
                                                          stmt.value, helper))
                continue
            unsupported(f"helper `{helper.name}` used as a kernel value: "
                        f"`{ast.unparse(stmt).splitlines()[0]}` is not one of the "
                        f"statements it may hold (assignments to one name, and a "
                        f"`return` of the value)", stmt)
        shape_error(f"helper `{helper.name}` returns no value, but the kernel uses its "
                    f"value", call)
    finally:
        ctx.helper_depth -= 1
        ctx.pop()


def _value_entry(ctx: FuncContext, param: str, expr: ast.expr, helper: ast.FunctionDef):
    """What a name of a value helper stands for: a buffer, a compile-time constant, or
    a kernel expression (None: the module `T` passed to its own name)."""
    from .exprs import lower_expr
    if isinstance(expr, ast.Name):
        entry = ctx.lookup(expr.id)
        if isinstance(entry, Buffer):
            return entry
        if entry is None and ctx.imports.binds(expr.id) and expr.id == param:
            return None
    try:
        return Constant(ctx.folder.fold(expr))
    except NotConstant:
        return Inlined(lower_expr(ctx, expr))


def _fresh(ctx: FuncContext, value) -> str:
    name = ctx.fresh_name("_kw")
    ctx.bind(name, Constant(value))
    return name


def _argument_entry(ctx: FuncContext, param: str, expr: ast.expr, helper: ast.FunctionDef,
                    lets: list[Stmt]):
    from .exprs import lower_expr
    from .promotion import is_weak
    if isinstance(expr, ast.Name):
        entry = ctx.lookup(expr.id)
        if isinstance(entry, Buffer):
            return entry
        if entry is None and ctx.imports.binds(expr.id):
            if expr.id == param:
                return None          # `_reduce_op(T, ...)` into its parameter `T`
            unsupported(f"passing the imported `{expr.id}` to helper `{helper.name}` as "
                        f"`{param}` is not supported (name the parameter `{expr.id}`)",
                        expr)
    try:
        return Constant(ctx.folder.fold(expr))
    except NotConstant:
        pass
    value = lower_expr(ctx, expr)
    if is_weak(value):
        return Constant(value.value)
    var = Var(ctx.fresh_name(param), Span.of(expr), value.dtype)
    lets.append(Let(var, value, Span.of(expr)))
    return var


def bind_arguments(helper: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr]:
    """The call's argument expression for each parameter, defaults filled in, the way
    Python binds them; R102 for a call Python would refuse."""
    args = helper.args
    what = f"helper `{helper.name}`"
    if args.vararg or args.kwarg:
        unsupported(f"{what} takes `*args`/`**kwargs`: only named parameters are "
                    f"supported in a helper called at trace time", helper)
    for a in call.args:
        if isinstance(a, ast.Starred):
            unsupported(f"star-arguments in a call of {what} are not supported", a)
    positional = [*args.posonlyargs, *args.args]
    if len(call.args) > len(positional):
        shape_error(f"{what} takes {len(positional)} positional argument(s), got "
                    f"{len(call.args)}", call)
    bound = {p.arg: a for p, a in zip(positional, call.args)}
    names = {p.arg for p in [*positional, *args.kwonlyargs]}
    for kw in call.keywords:
        if kw.arg is None:
            unsupported(f"`**` arguments in a call of {what} are not supported", kw)
        if kw.arg not in names:
            shape_error(f"{what} got an unexpected keyword `{kw.arg}`", kw)
        if kw.arg in bound:
            shape_error(f"{what} got `{kw.arg}` twice", kw)
        bound[kw.arg] = kw.value
    defaults = dict(zip([p.arg for p in positional[len(positional) - len(args.defaults):]],
                        args.defaults))
    defaults.update({p.arg: d for p, d in zip(args.kwonlyargs, args.kw_defaults)
                     if d is not None})
    for p in [*positional, *args.kwonlyargs]:
        if p.arg not in bound:
            if p.arg not in defaults:
                shape_error(f"{what} is missing the argument `{p.arg}`", call)
            bound[p.arg] = defaults[p.arg]
    return bound


def expand_keywords(stmt: ast.stmt, value_of: Callable[[str, ast.AST], object],
                    bind: Callable[[object], str]) -> ast.stmt:
    """stmt with each `f(..., **name)` whose name holds a compile-time dict spelled
    out as keywords (`kwargs = {} if batch == 1 else {"batch": batch}` then
    `T.reduce_sum(src, dst, **kwargs)`, as upstream's helpers write it). bind(value)
    gives a fresh name bound to a value. A copy: the helper's tree is shared by its
    call sites."""
    stmt = copy.deepcopy(stmt)
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call):
            continue
        keywords = []
        for kw in node.keywords:
            if kw.arg is not None or not isinstance(kw.value, ast.Name):
                keywords.append(kw)
                continue
            try:
                value = value_of(kw.value.id, kw.value)
            except NotConstant:
                value = None
            if not isinstance(value, dict):
                unsupported(f"`**{kw.value.id}` must name a dict known at trace time",
                            kw)
            for key, item in value.items():
                name = ast.Name(bind(item), ast.Load())
                keywords.append(ast.copy_location(ast.keyword(key, ast.copy_location(
                    name, kw.value)), kw))
        node.keywords = keywords
    return stmt


class _Return(Exception):
    def __init__(self, value):
        self.value = value


def evaluate(helper: ast.FunctionDef, arguments: dict[str, object],
             fold: Callable[[ast.AST, dict[str, object]], object], depth: int):
    """The value a helper returns for these argument values. fold(node, locals) folds
    an expression with the helper's locals in scope. NotConstant for a body that
    cannot be evaluated statically (it names what)."""
    _check_depth(depth, helper)
    local = dict(arguments)
    try:
        _run(helper, helper.body, local, fold)
    except _Return as ret:
        return ret.value
    return None


def _run(helper: ast.FunctionDef, body: list[ast.stmt], local: dict[str, object],
         fold) -> None:
    for stmt in body:
        if isinstance(stmt, ast.Return):
            raise _Return(None if stmt.value is None else fold(stmt.value, local))
        if isinstance(stmt, ast.Assign):
            value = fold(stmt.value, local)
            for target in stmt.targets:
                _store(target, value, local, stmt)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            _store(stmt.target, fold(stmt.value, local), local, stmt)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            node = ast.copy_location(ast.BinOp(stmt.target, stmt.op, stmt.value), stmt)
            local[stmt.target.id] = fold(ast.copy_location(
                ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op, stmt.value), node),
                local)
        elif isinstance(stmt, ast.If):
            _run(helper, stmt.body if fold(stmt.test, local) else stmt.orelse, local, fold)
        elif isinstance(stmt, ast.Assert):
            if not fold(stmt.test, local):
                shape_error(f"helper `{helper.name}`'s assertion "
                            f"`{ast.unparse(stmt.test)}` fails", stmt)
        elif isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr)
                                            and isinstance(stmt.value, ast.Constant)):
            continue
        else:
            # Python would run it; we read only what has one static meaning
            shape_error(f"helper `{helper.name}` cannot be evaluated at trace time: "
                        f"`{ast.unparse(stmt).splitlines()[0]}` ({_kind(stmt)}) is not "
                        f"one of the statements read statically (assignments, if, "
                        f"return, assert)", stmt)


def _kind(stmt: ast.stmt) -> str:
    return {ast.For: "a loop", ast.While: "a loop", ast.Expr: "a call for its effect",
            ast.With: "a with block", ast.Try: "a try block",
            ast.FunctionDef: "a nested function"}.get(type(stmt), type(stmt).__name__)


def _store(target: ast.AST, value, local: dict[str, object], stmt: ast.stmt) -> None:
    if isinstance(target, ast.Name):
        local[target.id] = value
        return
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, tuple) \
            and len(value) == len(target.elts):
        for t, v in zip(target.elts, value):
            _store(t, v, local, stmt)
        return
    raise NotConstant(stmt, f"assignment to `{ast.unparse(target)}` in a helper")
