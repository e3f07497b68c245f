"""Statements inside `with T.Kernel(...)`: assignments (allocations, Let bindings, buffer
aliases, stores and augmented stores), loops, if/elif/else, `with T.ws(...)` and the tile
and reducer calls. Each statement is lowered on its own: an error is recorded and the next
statement goes on, so one run reports every independent mistake."""
from __future__ import annotations

import ast

from ..diagnostics import error
from ..dtypes import INT32
from ..ir import (ATOMIC_OPS, Alias, Binary, Buffer, Const, If, Let, Load, ParallelFor,
                  Raster, SerialFor, Stmt, Store, Var, WarpGroup, stmt_exprs, subexprs, walk)
from ..printer import format_expr
from ..ops import REDUCE_KINDS
from ..source import Span
from .buffers import SCOPES, lower_alloc, lower_alloc_var, var_element
from .helpers import Helper, inline_helper
from .constants import NotConstant, is_number
from .context import POISON, Constant, FuncContext
from .views import lower_view
from .errors import (FrontendError, Poisoned, construct_name, shape_error, unknown,
                     unsupported)
from .exprs import (BINARY, buffer_named, buffer_view, call_args, lower_expr, lower_index,
                    lower_point, make_binary)
from .promotion import fits, is_weak, typed_const
from .reducers import (constant_str, augassign_to_reducer, finalize_reducer, implicit_inits,
                       reducer_init, reducer_update, store_to_reducer)
from .sizes import (check_elements, check_expr_depth, check_stages, check_trip_count,
                    constant_trip_count)
from .tile_ops import constant_bool, lower_copy, lower_fill, lower_reduce
from .atomics import VECTOR_ATOMICS, lower_atomic, lower_vector_atomic
from .gemm import lower_gemm

# calls that only tune performance; they change nothing we model
# physical choices that never change a value: a swizzle, register allocation, and a
# layout annotation (TileLang places the annotated buffer's elements as told; our plan
# infers its own layout, the one the simulator checks and our CUDA runs, so TileLang's
# annotated layout is checked by running TileLang: --backend tilelang; docs/limits.md)
_HINT_CALLS = ("no_set_max_nreg", "disable_warp_group_reg_alloc", "annotate_layout")
RASTER_ORDERS = ("row", "column", "mlx")      # TileLang's use_swizzle orders


def lower_block(ctx: FuncContext, nodes: list[ast.stmt]) -> tuple[Stmt, ...]:
    ctx.push()
    try:
        body = lower_inline(ctx, nodes)
    finally:
        allocs = ctx.pop()
    return tuple(implicit_inits(body, allocs, ctx))


def lower_inline(ctx: FuncContext, nodes: list[ast.stmt]) -> list[Stmt]:
    """nodes lowered in the current scope (a block's statements, or the branch of a
    trace-time `if`, whose names stay bound after it as Python's do)."""
    body: list[Stmt] = []
    for node in nodes:
        try:
            body.extend(lower_stmt(ctx, node))
        except FrontendError as exc:
            ctx.diagnostics.append(exc.diagnostic)
            _poison_targets(ctx, node)
        except Poisoned:
            _poison_targets(ctx, node)
        except RecursionError:
            ctx.diagnostics.append(error("R100", "this statement is nested too deeply",
                                         Span.of(node)))
        except Exception as exc:  # a frontend bug must still end in a diagnostic
            ctx.diagnostics.append(error(
                "R100", f"internal frontend error on this statement: {exc!r}",
                Span.of(node)))
    return body


def _poison_targets(ctx: FuncContext, node: ast.stmt) -> None:
    """Names a failed statement would have bound: later uses are skipped silently (an
    `if` whose condition failed binds nothing in either branch: one cause, one error)."""
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node] if isinstance(node, ast.If) else []
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                ctx.bind(n.id, POISON)


def lower_stmt(ctx: FuncContext, node: ast.stmt) -> list[Stmt]:
    handler = _STMTS.get(type(node))
    if handler is None:
        unsupported(f"{construct_name(node)} are not supported in a kernel", node)
    check_expr_depth(node)
    return handler(ctx, node)


# ----------------------------------------------------------------------------- simple

def _pass(ctx: FuncContext, node: ast.Pass) -> list[Stmt]:
    return []


def _expr_stmt(ctx: FuncContext, node: ast.Expr) -> list[Stmt]:
    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return []                                   # a docstring or comment string
    if not isinstance(node.value, ast.Call):
        unsupported("an expression statement that is not a call is not supported", node)
    return lower_call_stmt(ctx, node.value)


def lower_call_stmt(ctx: FuncContext, call: ast.Call) -> list[Stmt]:
    name = ctx.imports.t_name(call.func)
    if name is None and isinstance(call.func, ast.Name) \
            and isinstance(ctx.lookup(call.func.id), Helper):
        return inline_helper(ctx, call)     # a function of the same file (helpers.py)
    if name is None:
        if isinstance(call.func, ast.Name) and ctx.lookup(call.func.id) is None \
                and not ctx.imports.binds(call.func.id):
            unknown(f"`{call.func.id}(...)` is not supported in a kernel", call.func)
        unknown(f"`{ast.unparse(call.func)}(...)` is not supported in a kernel", call.func)
    if name == "copy":
        return lower_copy(ctx, call)
    if name in ("fill", "clear"):
        return lower_fill(ctx, call, clear=name == "clear")
    if name.startswith("reduce_") and name[len("reduce_"):] in REDUCE_KINDS:
        return lower_reduce(ctx, call, name[len("reduce_"):])
    if name == "gemm":
        return lower_gemm(ctx, call)
    if name == "reducer_init":
        return reducer_init(ctx, call)
    if name == "reducer_update":
        return reducer_update(ctx, call)
    if name == "finalize_reducer":
        return finalize_reducer(ctx, call)
    if name in ATOMIC_OPS:
        return lower_atomic(ctx, call, name)
    if name in VECTOR_ATOMICS:
        return lower_vector_atomic(ctx, call, name)
    if name in _HINT_CALLS:
        return []
    if name == "use_swizzle":
        return _use_swizzle(ctx, call)
    if name in SCOPES:
        shape_error(f"the result of `T.{name}` must be assigned to a name", call)
    if name in ("reshape", "view"):
        buffer_view(ctx, call, name)
    unknown(f"`T.{name}` is not supported", call.func)


def _use_swizzle(ctx: FuncContext, call: ast.Call) -> list[Stmt]:
    """T.use_swizzle(panel_size, order="row", enable=True): recorded for the kernel
    (ir.Raster); a statement of its own it is not. Its arguments are Python values in
    TileLang, constants here."""
    args = call_args(call, ("panel_size", "order", "enable"), 1, "T.use_swizzle")
    panel = ctx.folder.fold_int(args["panel_size"], "panel_size")
    if panel < 1:
        shape_error(f"T.use_swizzle's panel_size must be positive, got {panel}",
                    args["panel_size"])
    order = constant_str(ctx, args.get("order"), "row", "order")
    if order not in RASTER_ORDERS:
        shape_error(f"T.use_swizzle's order must be one of {', '.join(RASTER_ORDERS)}, "
                    f"got {order!r}", args["order"])
    if "enable" in args and not constant_bool(ctx, args["enable"], "T.use_swizzle's `enable`"):
        return []
    if ctx.raster is not None:
        shape_error(f"T.use_swizzle is given twice (first at line {ctx.raster.span.line})",
                    call)
    ctx.raster = Raster(panel, order, Span.of(call))
    return []


# ----------------------------------------------------------------------------- assignments

def _assign(ctx: FuncContext, node: ast.Assign) -> list[Stmt]:
    if len(node.targets) != 1:
        unsupported("chained assignments (`a = b = ...`) are not supported", node)
    target = node.targets[0]
    if isinstance(target, ast.Subscript):
        return _store(ctx, node, target)
    if not isinstance(target, ast.Name):
        unsupported(f"assignment to `{ast.unparse(target)}` is not supported "
                    f"(assign one name or one buffer element)", target)
    value = node.value
    if isinstance(value, ast.Call):
        tname = ctx.imports.t_name(value.func)
        if tname in SCOPES:
            return lower_alloc(ctx, target, value, tname)
        if tname == "alloc_var":
            return lower_alloc_var(ctx, target, value)
        if tname in ("reshape", "view"):
            return lower_view(ctx, target, value, tname)
    if id(ctx.lookup(target.id)) in ctx.var_buffers:        # `v = x` of a T.alloc_var
        buffer = ctx.lookup(target.id)
        return [Store(buffer, var_element(buffer, Span.of(target)), lower_expr(ctx, value),
                      Span.of(node))]
    if isinstance(value, ast.Name) and isinstance(ctx.lookup(value.id), Buffer):
        buffer = ctx.lookup(value.id)
        ctx.bind(target.id, buffer)
        return [Alias(target.id, buffer, Span.of(node))]
    return _bind_value(ctx, target, value, node)


def _bind_value(ctx: FuncContext, target: ast.Name, value: ast.AST,
                node: ast.AST) -> list[Stmt]:
    """`x = expr`: a Python-level value (a number, a tuple, a dtype) stays a constant,
    usable in shapes and extents; anything typed or run-time becomes a Let of a fresh
    variable (`z = T.float32(1) + 2` is a float32 Let, as in TileLang)."""
    try:
        folded = ctx.folder.fold(value)
        if not is_number(folded):
            ctx.bind(target.id, Constant(folded))
            return []
    except NotConstant:
        pass
    expr = lower_expr(ctx, value)
    if is_weak(expr):
        ctx.bind(target.id, Constant(expr.value))
        return []
    var = Var(ctx.fresh_name(target.id), Span.of(target), expr.dtype)
    ctx.bind(target.id, var)
    return [Let(var, expr, Span.of(node))]


def _store(ctx: FuncContext, node: ast.Assign, target: ast.Subscript) -> list[Stmt]:
    buffer = buffer_named(ctx, target.value)
    if buffer.is_reducer:
        return store_to_reducer(ctx, node, buffer)
    indices = lower_point(ctx, buffer, target)
    value = lower_expr(ctx, node.value)
    if is_weak(value) and not fits(value.value, buffer.dtype):
        shape_error(f"integer constant {value.value} does not fit in {buffer.dtype}, the "
                    f"dtype of `{buffer.name}`", node.value)
    return [Store(buffer, indices, value, Span.of(node))]


def _augassign(ctx: FuncContext, node: ast.AugAssign) -> list[Stmt]:
    target = node.target
    if isinstance(target, ast.Name) and id(ctx.lookup(target.id)) in ctx.var_buffers:
        return _var_augassign(ctx, node, ctx.lookup(target.id))
    if not isinstance(target, ast.Subscript):
        unsupported(f"augmented assignment to the name `{ast.unparse(target)}` is not "
                    f"supported (kernel names are immutable; use a local buffer)", node)
    buffer = buffer_named(ctx, target.value)
    if buffer.is_reducer:
        update = augassign_to_reducer(ctx, node, buffer)
        if update is not None:
            return update
    op = BINARY.get(type(node.op))
    if op is None:
        unsupported(f"{construct_name(node.op)} are not supported", node)
    indices = lower_point(ctx, buffer, target)
    old = Load(buffer, indices, Span.of(target))
    value = make_binary(op, old, lower_expr(ctx, node.value), node)
    return [Store(buffer, indices, value, Span.of(node))]


def _var_augassign(ctx: FuncContext, node: ast.AugAssign, buffer: Buffer) -> list[Stmt]:
    """`v += x` of a T.alloc_var: its one element, read and stored."""
    op = BINARY.get(type(node.op))
    if op is None:
        unsupported(f"{construct_name(node.op)} are not supported", node)
    index = var_element(buffer, Span.of(node.target))
    old = Load(buffer, index, Span.of(node.target))
    value = make_binary(op, old, lower_expr(ctx, node.value), node)
    return [Store(buffer, index, value, Span.of(node))]


# ----------------------------------------------------------------------------- control flow

def _if(ctx: FuncContext, node: ast.If) -> list[Stmt]:
    truth = ctx.truth(node.test)
    if truth is not None:
        # a Python-level condition (`if op == "sum":` on a factory argument): TileLang
        # builds only the branch taken, as Python runs it (context.py, truth)
        return lower_inline(ctx, node.body if truth else node.orelse)
    cond = lower_expr(ctx, node.test)
    if is_weak(cond):
        # a Python-level condition on constants: TileLang picks the branch at parse time
        return lower_inline(ctx, node.body if cond.value else node.orelse)
    then = lower_block(ctx, node.body)
    orelse = lower_block(ctx, node.orelse)
    return [If(cond, then, orelse, Span.of(node))]


def _for(ctx: FuncContext, node: ast.For) -> list[Stmt]:
    if node.orelse:
        unsupported("`for ... else` is not supported", node.orelse[0])
    it = node.iter
    if not isinstance(it, ast.Call):
        unsupported(f"loops over `{ast.unparse(it)}` are not supported (use T.Parallel, "
                    f"T.Pipelined, T.serial, T.unroll or range)", it)
    name = ctx.imports.t_name(it.func)
    if name in _PARALLEL_SPELLINGS:
        return [_parallel(ctx, node)]
    if name in _SERIAL_SPELLINGS:
        return [_serial(ctx, node, it, _SERIAL_SPELLINGS[name])]
    if isinstance(it.func, ast.Name) and it.func.id == "range" and ctx.lookup("range") is None:
        return [_serial(ctx, node, it, "range")]
    if name is not None:
        unknown(f"`T.{name}` loops are not supported", it.func)
    unknown(f"loops over `{ast.unparse(it.func)}(...)` are not supported", it.func)


def target_names(target: ast.AST, refusal: str) -> list[ast.Name]:
    """The names a `for`/`with ... as` target binds (one, or a tuple of them); anything
    else is R100 with `refusal` ({} is the offending target's text)."""
    names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    for n in names:
        if not isinstance(n, ast.Name):
            unsupported(refusal.format(ast.unparse(n)), n)
    return names


def _loop_vars(ctx: FuncContext, target: ast.AST, count: int) -> list[tuple[str, Var]]:
    """(source name, Var) per loop variable."""
    names = target_names(target, "loop target `{}` is not supported")
    if len(names) != count:
        shape_error(f"the loop binds {len(names)} variable(s) but iterates over "
                    f"{count} dimension(s)", target)
    return [(n.id, Var(ctx.loop_name(n.id), Span.of(n), INT32)) for n in names]


def _loop_body(ctx: FuncContext, bound: list[tuple[str, Var]],
               nodes: list[ast.stmt]) -> tuple[Stmt, ...]:
    ctx.push()
    try:
        for name, var in bound:
            ctx.bind(name, var)
        return lower_block(ctx, nodes)
    finally:
        ctx.pop()


_PARALLEL_HINTS = ("coalesced_width", "loop_layout", "prefer_async")
# TileLang's T.Parallel(a, b) is a nest of parallel `For` loops, and so is a nest of TVM's
# lower-case `T.parallel` loops: layout inference takes a perfect nest of either as one
# parallel loop over all its extents, and so do we
_PARALLEL_SPELLINGS = ("Parallel", "parallel")


def _parallel(ctx: FuncContext, node: ast.For) -> ParallelFor:
    loops = _parallel_nest(ctx, node)
    extents, bound = [], []
    for loop in loops:
        got = _parallel_extents(ctx, loop.iter)
        # each loop's own domain here; the nest's lanes at once are check_func_sizes'
        check_elements(tuple(got), "the T.Parallel domain", loop.iter)
        extents += got
        bound += _loop_vars(ctx, loop.target, len(got))
    body = _loop_body(ctx, bound, loops[-1].body)
    for stmt in walk(body):
        if isinstance(stmt, WarpGroup):
            # a warp group is a branch on the thread index; a T.Parallel iteration has
            # no thread of its own until layout inference spreads the loop over threads
            unsupported("`with T.ws(...)` inside `T.Parallel` is not supported: a warp "
                        "group selects threads, and the loop's iterations are spread over "
                        "threads by its layout; put the `with T.ws(...)` around the loop",
                        stmt.span)
    loop_vars = tuple(v for _, v in bound)
    _refuse_local_indexed_by(body, loop_vars)
    return ParallelFor(loop_vars, tuple(extents), body, Span.of(node))


def _refuse_local_indexed_by(body: tuple[Stmt, ...], loop_vars: tuple[Var, ...]) -> None:
    """TileLang's semantic check (tilelang/analysis/parallel_local_index_checker.py): a
    thread-private local buffer indexed by a T.Parallel loop variable has no meaning,
    since local buffers take no part in the loop's layout; TileLang refuses the kernel,
    and so do we (a local indexed by anything else, `acc[0]`, is fine)."""
    for stmt in walk(body):
        accesses = [(stmt.buffer, stmt.indices, stmt.span)] if isinstance(stmt, Store) else []
        accesses += [(sub.buffer, sub.indices, sub.span) for e in stmt_exprs(stmt)
                     for sub in subexprs(e) if isinstance(sub, Load)]
        for buffer, indices, span in accesses:
            if buffer.scope != "local":
                continue
            used = [v for v in loop_vars
                    if any(sub is v for i in indices for sub in subexprs(i))]
            if used:
                unsupported(f"the thread-private local buffer `{buffer.name}` is indexed by "
                            f"the T.Parallel variable `{used[0].name}`: local buffers take no "
                            f"part in a parallel loop's layout, and TileLang refuses this "
                            f"(\"Local buffer ... is indexed by T.Parallel loop variable\"); "
                            f"index it in a T.serial/T.unroll/T.vectorized loop, or allocate "
                            f"a fragment", span)


def _parallel_nest(ctx: FuncContext, node: ast.For) -> list[ast.For]:
    """The loop and every parallel loop that is the whole body of the one before."""
    loops = [node]
    while len(loops[-1].body) == 1 and isinstance(inner := loops[-1].body[0], ast.For) \
            and not inner.orelse and isinstance(inner.iter, ast.Call) \
            and ctx.imports.t_name(inner.iter.func) in _PARALLEL_SPELLINGS:
        loops.append(inner)
    return loops


def _parallel_extents(ctx: FuncContext, it: ast.Call) -> list[int]:
    """T.Parallel's extents, or T.parallel's one (`T.parallel(n)`, `T.parallel(0, n)`)."""
    if ctx.imports.t_name(it.func) == "Parallel":
        for kw in it.keywords:
            if kw.arg not in _PARALLEL_HINTS:
                shape_error(f"`T.Parallel` got an unexpected keyword `{kw.arg}`", kw)
        return constant_ints(ctx, it, "`T.Parallel` needs at least one extent",
                             "a T.Parallel extent", 1, "positive")
    for kw in it.keywords:
        if kw.arg != "annotations":
            shape_error(f"`T.parallel` got an unexpected keyword `{kw.arg}`", kw)
    if len(it.args) not in (1, 2):
        shape_error("`T.parallel` takes (stop) or (start, stop)", it)
    if len(it.args) == 2:
        start = ctx.folder.fold_int(it.args[0], "a T.parallel start")
        if start != 0:
            unsupported(f"`T.parallel({start}, ...)`: a parallel loop that does not start "
                        f"at 0 is not supported (write T.Parallel(n) and add the offset)",
                        it.args[0])
    stop = ctx.folder.fold_int(it.args[-1], "a T.parallel extent")
    if stop < 1:
        shape_error(f"a T.parallel extent must be positive, got {stop}", it.args[-1])
    return [stop]


# per loop kind: its spelling, its parameters, and the scheduling keywords we ignore
_SERIAL_PARAMS = {
    "pipelined": ("T.Pipelined", ("start", "stop", "num_stages"),
                  ("order", "stage", "sync", "group")),
    "serial": ("T.serial", ("start", "stop", "step"), ("annotations",)),
    "unroll": ("T.unroll", ("start", "stop", "step"),
               ("explicit", "unroll_factor", "annotations")),
    "range": ("range", ("start", "stop", "step"), ()),
    "vectorized": ("T.vectorized", ("start", "stop"), ("annotations",)),
}

# TileLang's loop spellings and the parameter row each takes (T.Serial and T.Unroll are
# its aliases of T.serial and T.unroll, T.Vectorized of T.vectorized; language/loop.py)
_SERIAL_SPELLINGS = {"Pipelined": "pipelined", "serial": "serial", "Serial": "serial",
                     "unroll": "unroll", "Unroll": "unroll", "vectorized": "vectorized",
                     "Vectorized": "vectorized"}


def _serial(ctx: FuncContext, node: ast.For, it: ast.Call, kind: str) -> SerialFor:
    what, positional, hints = _SERIAL_PARAMS[kind]
    args = call_args(it, positional, 1, what, ignored=hints)
    span = Span.of(it)
    if "stop" in args:
        start, stop = lower_index(ctx, args["start"]), lower_index(ctx, args["stop"])
    else:
        start, stop = typed_const(0, INT32, span), lower_index(ctx, args["start"])
    step, stages = 1, None
    if "step" in args:
        step = ctx.folder.fold_int(args["step"], "a loop step")
        if step == 0:
            shape_error("a loop step must not be zero", args["step"])
    if isinstance(start, Const) and isinstance(stop, Const):
        trips = constant_trip_count(int(start.value), int(stop.value), step)
        if trips < 0:
            shape_error(f"{what} from {start.value} to {stop.value} with step {step} runs "
                        f"backwards (a negative trip count)", it)
        check_trip_count(trips, it)
    if "num_stages" in args:
        stages = ctx.folder.fold_int(args["num_stages"], "num_stages")
        check_stages(stages, args["num_stages"])
    bound = _loop_vars(ctx, node.target, 1)
    body = _loop_body(ctx, bound, node.body)
    var = bound[0][1]
    if kind == "vectorized":
        _check_vectorizable(body, var)
        kind = "serial"         # its meaning: each thread runs the iterations in order
    return SerialFor(var, start, stop, step, kind, body, Span.of(node), stages)


def _check_vectorizable(body: tuple[Stmt, ...], var: Var) -> None:
    """A T.vectorized loop means its iterations in order (a TIR vectorized For is a
    serial For the compiler may turn into vector instructions), but TVM's vectorizer
    turns the body into one vector statement per store without checking for a carried
    dependence, so a body that reads an element another iteration writes, or stores
    values that differ by iteration into one element, has two meanings. We accept the
    bodies where they agree: element stores and Let bindings (optionally under an if);
    no buffer both stored and loaded except at the very index it is stored; a store of
    a value that varies with the loop variable goes to an index that is the loop
    variable plus terms without it (docs/semantics.md §2)."""
    stored: dict[str, set] = {}
    loads: list[Load] = []
    varying = {var}                 # the loop variable and the Lets computed from it
    for stmt in walk(body):
        if isinstance(stmt, Let) and _reads(stmt.value, varying):
            varying.add(stmt.var)
        if isinstance(stmt, Store):
            stored.setdefault(stmt.buffer.name, set()).add(_index_text(stmt.indices))
            if _reads(stmt.value, varying) and \
                    not any(_unit_in(i, var) for i in stmt.indices):
                unsupported(f"`T.vectorized` stores a value that changes with `{var.name}` "
                            f"into an element of `{stmt.buffer.name}` that does not: every "
                            f"iteration writes it, which a vector store and the loop's "
                            f"order disagree on (use T.serial)", stmt.span)
        elif not isinstance(stmt, (Let, If)):
            what = _STMT_NAMES.get(type(stmt).__name__, type(stmt).__name__)
            unsupported(f"{what} inside `T.vectorized` is not supported (only element "
                        f"stores and bindings vectorize; use T.serial)", stmt.span)
        for e in stmt_exprs(stmt):
            loads.extend(x for x in subexprs(e) if isinstance(x, Load))
    for load in loads:
        if load.buffer.name in stored and \
                stored[load.buffer.name] != {_index_text(load.indices)}:
            unsupported(f"`T.vectorized` reads `{load.buffer.name}`, which the loop also "
                        f"writes at another index: TVM's vectorizer and the loop's order "
                        f"disagree on that (use T.serial)", load.span)


def _reads(e, names: set) -> bool:
    return any(isinstance(x, Var) and x in names for x in subexprs(e))


def _unit_in(e, var: Var) -> bool:
    """e is var plus or minus terms without var: one distinct element per iteration."""
    if e is var:
        return True
    if isinstance(e, Binary) and e.op in ("+", "-"):
        left, right = _reads(e.a, {var}), _reads(e.b, {var})
        if left and not right:
            return _unit_in(e.a, var)
        if right and not left and e.op == "+":
            return _unit_in(e.b, var)
    return False


# how the statements a T.vectorized body may not hold are written
_STMT_NAMES = {"Copy": "T.copy", "Fill": "T.fill/T.clear", "Reduce": "T.reduce_*",
               "ParallelFor": "T.Parallel", "SerialFor": "a nested loop",
               "WarpGroup": "`with T.ws(...)`", "Alloc": "an allocation",
               "Alias": "a buffer alias", "ReducerInit": "a reducer init",
               "ReducerUpdate": "a reducer update", "ReducerFinalize": "T.finalize_reducer"}


def _index_text(indices: tuple) -> tuple[str, ...]:
    """Indices compared by what they compute (IR nodes compare by identity)."""
    return tuple(format_expr(i) for i in indices)


def _with(ctx: FuncContext, node: ast.With) -> list[Stmt]:
    if len(node.items) != 1:
        unsupported("`with` over several items is not supported", node)
    item = node.items[0]
    expr = item.context_expr
    name = ctx.imports.t_name(expr.func) if isinstance(expr, ast.Call) else None
    if name == "ws":
        if item.optional_vars is not None:
            unsupported("`with T.ws(...) as name` is not supported", item.optional_vars)
        return [_warp_group(ctx, node, expr)]
    if name == "Kernel":
        unsupported("a nested `with T.Kernel(...)` is not supported", expr)
    if name is not None:
        unknown(f"`with T.{name}(...)` is not supported", expr)
    unsupported(f"`with {ast.unparse(expr)}` is not supported (only T.Kernel and T.ws)",
                expr)


def _warp_group(ctx: FuncContext, node: ast.With, call: ast.Call) -> WarpGroup:
    for kw in call.keywords:
        shape_error(f"`T.ws` got an unexpected keyword `{kw.arg}`", kw)
    groups = constant_ints(ctx, call, "`T.ws` needs at least one warp-group index",
                           "a warp-group index", 0, "non-negative")
    return WarpGroup(tuple(groups), lower_block(ctx, node.body), Span.of(node))


def constant_ints(ctx: FuncContext, call: ast.Call, none_given: str, what: str,
                  minimum: int, adjective: str) -> list[int]:
    """The call's positional arguments folded to integers of at least `minimum`."""
    if not call.args:
        shape_error(none_given, call)
    values = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            unsupported("star-arguments are not supported", a)
        value = ctx.folder.fold_int(a, what)
        if value < minimum:
            shape_error(f"{what} must be {adjective}, got {value}", a)
        values.append(value)
    return values


_STMTS = {
    ast.Pass: _pass, ast.Expr: _expr_stmt, ast.Assign: _assign, ast.AugAssign: _augassign,
    ast.If: _if, ast.For: _for, ast.With: _with,
}
