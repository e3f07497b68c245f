"""One `@T.prim_func`: its tensor parameters (`a: T.Tensor((M, K), T.float16)`, also
`T.Buffer`) and its single `with T.Kernel(gx[, gy[, gz]], threads=N) as bx` block."""
from __future__ import annotations

import ast
import math

from ..dtypes import INT32
from ..ir import Buffer, Kernel, PrimFunc, Var
from ..source import Span
from .buffers import fold_shape
from .constants import NotConstant
from .context import POISON, Constant, Entry, FuncContext
from .errors import FrontendError, construct_name, shape_error, unsupported
from .exprs import call_args
from .names import Imports
from ..limits import MAX_TENSOR_ELEMENTS
from .sizes import check_func_sizes, check_grid_extent, thread_extents
from .stmts import lower_block, target_names
from .views import stale_views

_TENSOR_TYPES = ("Tensor", "Buffer")
_BLOCK_NAMES = ("_bx", "_by", "_bz")


def lower_prim_func(imports: Imports, env: dict[str, Entry], node: ast.FunctionDef,
                    name: str) -> tuple[PrimFunc | None, list]:
    """The PrimFunc, or None with the diagnostics that stopped it."""
    ctx = FuncContext(imports, env)
    params = []
    for arg in _positional_params(ctx, node):
        try:
            params.append(_param(ctx, arg))
        except FrontendError as exc:
            ctx.diagnostics.append(exc.diagnostic)
            ctx.bind(arg.arg, POISON)        # its uses are not reported a second time
    kernel = None
    try:
        kernel_node = _kernel_statement(ctx, node)
        kernel = _kernel(ctx, kernel_node)
        ctx.diagnostics += stale_views(kernel.body, ctx.views)
    except FrontendError as exc:
        ctx.diagnostics.append(exc.diagnostic)
    if ctx.diagnostics or kernel is None:
        return None, ctx.diagnostics
    func = PrimFunc(name, tuple(params), kernel, Span.of(node))
    too_big = check_func_sizes(func)
    return (None, too_big) if too_big else (func, [])


def _positional_params(ctx: FuncContext, node: ast.FunctionDef) -> list[ast.arg]:
    args = node.args
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            ctx.diagnostics.append(_diag(unsupported, "star-parameters (`*args`, `**kwargs`) "
                                         "are not supported in a prim_func", extra))
    for default in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
        ctx.diagnostics.append(_diag(unsupported, "parameter defaults are not supported in "
                                     "a prim_func", default))
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _diag(kind, message: str, where: ast.AST):
    try:
        kind(message, where)
    except FrontendError as exc:
        return exc.diagnostic


def _param(ctx: FuncContext, arg: ast.arg) -> Buffer:
    ann = arg.annotation
    if ann is None:
        shape_error(f"parameter `{arg.arg}` needs a tensor annotation "
                    f"(`{arg.arg}: T.Tensor(shape, dtype)`)", arg)
    kind = ctx.imports.t_name(ann.func) if isinstance(ann, ast.Call) else None
    if kind not in _TENSOR_TYPES:
        scalar = ctx.imports.t_name(ann)
        if scalar is not None and scalar not in _TENSOR_TYPES:
            unsupported(f"scalar parameter `{arg.arg}` is not supported (shapes are "
                        f"compile-time constants; pass a tensor)", ann)
        shape_error(f"parameter `{arg.arg}` must be annotated `T.Tensor(shape, dtype)`, "
                    f"got `{ast.unparse(ann)}`", ann)
    args = call_args(ann, ("shape", "dtype"), 2, f"T.{kind}")
    shape = fold_shape(ctx, args["shape"], MAX_TENSOR_ELEMENTS)
    dtype = ctx.folder.fold_dtype(args["dtype"])
    buffer = Buffer(ctx.fresh_name(arg.arg), shape, dtype, "global", Span.of(arg))
    ctx.bind(arg.arg, buffer)
    return buffer


def _kernel_statement(ctx: FuncContext, node: ast.FunctionDef) -> ast.With:
    """The one `with T.Kernel(...)`; before it only docstrings and constants may stand."""
    kernel = None
    for stmt in node.body:
        if isinstance(stmt, ast.With) and _is_kernel(ctx, stmt):
            if kernel is not None:
                unsupported("a prim_func with several `with T.Kernel(...)` blocks is not "
                            "supported", stmt)
            kernel = stmt
        elif _is_docstring(stmt) or isinstance(stmt, ast.Pass):
            continue
        elif kernel is None and _is_constant_assign(ctx, stmt):
            continue
        elif kernel is None:
            unsupported(f"{_what(stmt)} before `with T.Kernel(...)` are not supported "
                        f"(only constants may stand there)", stmt)
        else:
            unsupported("statements after the `with T.Kernel(...)` block are not supported",
                        stmt)
    if kernel is None:
        unsupported(f"prim_func `{node.name}` has no `with T.Kernel(...)` block", node)
    return kernel


def _what(stmt: ast.stmt) -> str:
    plain = (ast.Assign, ast.Expr, ast.For, ast.If, ast.With, ast.AugAssign)
    return "statements" if isinstance(stmt, plain) else construct_name(stmt)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


def _is_kernel(ctx: FuncContext, stmt: ast.With) -> bool:
    expr = stmt.items[0].context_expr
    return isinstance(expr, ast.Call) and ctx.imports.t_name(expr.func) == "Kernel"


def _is_constant_assign(ctx: FuncContext, stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return False
    try:
        value = ctx.folder.fold(stmt.value)
    except NotConstant:
        return False
    ctx.bind(stmt.targets[0].id, Constant(value))
    return True


def _kernel(ctx: FuncContext, node: ast.With) -> Kernel:
    if len(node.items) != 1:
        unsupported("`with` over several items is not supported", node)
    item = node.items[0]
    call = item.context_expr
    for a in call.args:
        if isinstance(a, ast.Starred):
            unsupported("star-arguments are not supported", a)
    if not 1 <= len(call.args) <= 3:
        shape_error(f"T.Kernel takes 1 to 3 grid extents, got {len(call.args)}", call)
    grid = tuple(ctx.folder.fold_int(a, "a grid extent") for a in call.args)
    for axis, (a, g) in enumerate(zip(call.args, grid)):
        if g < 1:
            shape_error(f"a grid extent must be positive, got {g}", a)
        check_grid_extent(axis, g, a)
    ctx.thread_extents = (128,)                     # TileLang's default
    for kw in call.keywords:
        if kw.arg != "threads":
            shape_error(f"T.Kernel got an unexpected keyword `{kw.arg}`", kw)
        ctx.thread_extents = _threads(ctx, kw.value)
    threads = math.prod(ctx.thread_extents)
    names, block_vars = _block_vars(ctx, item.optional_vars, len(grid), Span.of(call))
    ctx.push()
    try:
        for name, var in zip(names, block_vars):
            ctx.bind(name, var)
        body = lower_block(ctx, node.body)
    finally:
        ctx.pop()
    return Kernel(grid, threads, block_vars, body, Span.of(node), ctx.raster)


def _threads(ctx: FuncContext, node: ast.AST) -> tuple[int, ...]:
    try:
        value = ctx.folder.fold(node)
    except NotConstant:
        shape_error("threads must be a compile-time constant integer", node)
    return thread_extents(value, node)


def _block_vars(ctx: FuncContext, target: ast.AST | None, rank: int,
                span: Span) -> tuple[list[str], tuple[Var, ...]]:
    """The source names bound by `as ...` and their Vars (unnamed indices get _bx...)."""
    if target is None:
        return [], tuple(Var(ctx.fresh_name(_BLOCK_NAMES[d]), span, INT32)
                         for d in range(rank))
    names = target_names(target, "`{}` cannot name a block index")
    if len(names) != rank:
        shape_error(f"T.Kernel with {rank} grid dimension(s) binds {rank} block "
                    f"index name(s), got {len(names)}", target)
    return [n.id for n in names], tuple(Var(ctx.fresh_name(n.id), Span.of(n), INT32)
                                        for n in names)
