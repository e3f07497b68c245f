"""The size and depth limits of spec.limits, checked while lowering (each with the number
that broke it): target launch limits (R506), sizes a run cannot hold (R102) and nesting
deeper than every IR walker is known to handle (R100).

Expression depth is measured on the Python AST before lowering, without recursion, so
a 10 000-deep expression is refused before anything recurses on it. A flat `and`/`or`
of n operands and a chained comparison of n links lower to balanced trees (exprs.py),
so they count log2(n) levels, not n."""
from __future__ import annotations

import ast

from ..diagnostics import Diagnostic, error
from ..ir import Alloc, Const, ParallelFor, PrimFunc, SerialFor, Stmt, children, walk
from ..limits import (GRID_AXES, MAX_ELEMENTS, MAX_EXPR_DEPTH, MAX_GRID, MAX_LANES,
                      MAX_LAYOUT_CELLS, MAX_STAGES, MAX_STMT_DEPTH, MAX_THREADS_PER_BLOCK,
                      MAX_TRIPS, TARGET, power_of_two)
from .errors import fail, shape_error, unsupported

MAX_THREADS_Z = 64                   # CUDA's largest blockDim.z (x and y allow 1024)


# ----------------------------------------------------------------------------- launch

def thread_extents(value: object, node: ast.AST) -> tuple[int, ...]:
    """`threads=` as TileLang reads it (tilelang/language/kernel.py, _normalize_threads):
    one integer, or a tuple or list of 1 to 3 extents (threadIdx.x, .y, .z; missing ones
    are 1). The block's threads are numbered x fastest, x + X·(y + Y·z), which is also
    the order CUDA forms warps in; T.get_thread_binding(d) is a function of that one
    index (spec.frontend.exprs)."""
    extents = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(extents) <= 3 or any(isinstance(e, bool) or not isinstance(e, int)
                                         for e in extents):
        shape_error(f"threads must be an integer or a tuple of 1 to 3 integers, got "
                    f"{value!r}", node)
    for e in extents:
        if e < 1:
            shape_error(f"threads must be positive, got {value}", node)
    check_threads(_product(extents), node)
    if len(extents) == 3 and extents[2] > MAX_THREADS_Z:
        fail("R506", f"threads={value} has {extents[2]} threads in z; CUDA allows at most "
             f"{MAX_THREADS_Z} (blockDim.z)", node,
             hint="put the larger extents first: threadIdx.x and .y allow 1024")
    return extents


def check_threads(threads: int, node: ast.AST) -> None:
    if threads > MAX_THREADS_PER_BLOCK:
        fail("R506", f"threads={threads} exceeds {MAX_THREADS_PER_BLOCK} threads per block "
             f"on {TARGET}", node,
             hint=f"use threads={MAX_THREADS_PER_BLOCK} or fewer in T.Kernel")


def check_grid_extent(axis: int, extent: int, node: ast.AST) -> None:
    if extent > MAX_GRID[axis]:
        fail("R506", f"grid extent {extent} exceeds the largest gridDim.{GRID_AXES[axis]} "
             f"on {TARGET} ({MAX_GRID[axis]})", node,
             hint="use larger tiles (fewer blocks), or move blocks to the x extent")


# ----------------------------------------------------------------------------- sizes

def check_elements(shape: tuple[int, ...], what: str, node: ast.AST,
                   limit: int = MAX_ELEMENTS) -> None:
    count = _product(shape)
    if count > limit:
        shape_error(f"{what} {shape} has {count} elements; at most "
                    f"{power_of_two(limit)} are supported (docs/limits.md)", node)


def constant_trip_count(start: int, stop: int, step: int) -> int:
    """Iterations of `range(start, stop, step)`, negative when the bounds run backwards
    (`T.serial(-8)`): such a loop is a mistake, not an empty loop."""
    span = stop - start if step > 0 else start - stop
    return -(-span // abs(step)) if span > 0 else span


def check_trip_count(trips: int, node: ast.AST) -> None:
    if trips > MAX_TRIPS:
        shape_error(f"this loop runs {trips} times; at most {power_of_two(MAX_TRIPS)} "
                    f"iterations are supported (docs/limits.md)", node)


def check_stages(stages: int, node: ast.AST) -> None:
    if not 0 <= stages <= MAX_STAGES:
        shown = str(stages) if len(str(stages)) <= 20 else f"a {len(str(stages))}-digit number"
        shape_error(f"num_stages is {shown}, outside 0..{power_of_two(MAX_STAGES)} "
                    f"(docs/limits.md)", node)


def check_func_sizes(func: PrimFunc) -> list[Diagnostic]:
    """Limits of one block that involve several constructs: T.Parallel lanes across
    nested loops, runs of a body across nested serial loops, and the depth of nested
    statements. What a run executes over its blocks is spec.run_cost's (check_run_size)."""
    found: list[Diagnostic] = []
    _walk(func.kernel.body, 1, 1, 1, found)
    found += _reducer_cells(func)
    found += _private_cells(func)
    return found


def _private_cells(func: PrimFunc) -> list[Diagnostic]:
    """R102 at a thread-private buffer (T.alloc_local, T.alloc_var) whose elements times
    the kernel's threads pass MAX_LAYOUT_CELLS: the interpreter and the simulator keep
    one copy per thread (interp.private, interp.registers.LocalBuffer)."""
    return _per_thread_cells(func, "local", lambda name, n, threads, cells: (
        f"local buffer {name} has {n} elements in each of {threads} threads, {cells} "
        f"cells"))


def _reducer_cells(func: PrimFunc) -> list[Diagnostic]:
    """R102 at a reducer whose elements times the kernel's threads pass
    MAX_LAYOUT_CELLS: every plan may keep each element in every participant (the
    canonical plan's finalize destinations do), and the planner and the simulator
    evaluate that storage cell by cell."""
    return _per_thread_cells(func, "reducer", lambda name, n, threads, cells: (
        f"reducer {name} has {n} elements over {threads} threads, {cells} cells where "
        f"every thread keeps every element"))


def _per_thread_cells(func: PrimFunc, scope: str, what) -> list[Diagnostic]:
    """R102 at each allocation of scope whose elements times the threads pass
    MAX_LAYOUT_CELLS; what(name, elements, threads, cells) says what it holds."""
    threads = func.kernel.threads
    found = []
    for stmt in walk(func.kernel.body):
        if isinstance(stmt, Alloc) and stmt.buffer.scope == scope:
            elements = _product(stmt.buffer.shape)
            cells = elements * threads
            if cells > MAX_LAYOUT_CELLS:
                found.append(error(
                    "R102", f"{what(stmt.buffer.name, elements, threads, cells)}; at most "
                    f"{power_of_two(MAX_LAYOUT_CELLS)} are supported (docs/limits.md)",
                    stmt.span))
    return found


def _walk(body: tuple[Stmt, ...], depth: int, iterations: int, lanes: int,
          found: list[Diagnostic]) -> None:
    for stmt in body:
        if depth > MAX_STMT_DEPTH:
            found.append(error("R100", f"statements nested {depth} deep; at most "
                               f"{MAX_STMT_DEPTH} levels are supported (docs/limits.md)",
                               stmt.span))
            return
        inner_iterations, inner_lanes = iterations, lanes
        if isinstance(stmt, SerialFor):
            trips = _static_trips(stmt)
            inner_iterations = iterations * max(trips, 1)
            if trips > 0 and inner_iterations > MAX_TRIPS:
                found.append(error(
                    "R102", f"this loop's body would run {inner_iterations} times in one "
                    f"block (the trip counts of the serial loops around it); at most "
                    f"{power_of_two(MAX_TRIPS)} are supported (docs/limits.md)",
                    stmt.span))
                continue
        elif isinstance(stmt, ParallelFor):
            inner_lanes = lanes * _product(stmt.extents)
            if inner_lanes > MAX_LANES:
                found.append(error(
                    "R102", f"T.Parallel loops run {inner_lanes} iterations at once; "
                    f"at most {power_of_two(MAX_LANES)} are supported (docs/limits.md)",
                    stmt.span))
                continue
        for sub in children(stmt):
            _walk(sub, depth + 1, inner_iterations, inner_lanes, found)


def _static_trips(loop: SerialFor) -> int:
    """The trip count of a loop with constant bounds; 1 when it depends on run-time
    values (spec.run_cost counts those per block before a run, interp.runs as it goes)."""
    if isinstance(loop.start, Const) and isinstance(loop.stop, Const):
        return constant_trip_count(int(loop.start.value), int(loop.stop.value), loop.step)
    return 1


def _product(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


# ----------------------------------------------------------------------------- depth

def check_expr_depth(stmt: ast.stmt) -> None:
    """R100 when an expression of stmt (its own, not those of nested statements) is
    nested deeper than MAX_EXPR_DEPTH."""
    for root in _own_exprs(stmt):
        depth, node = _deepest(root)
        if depth > MAX_EXPR_DEPTH:
            unsupported(f"expression nested {depth} levels deep; at most {MAX_EXPR_DEPTH} "
                        f"are supported (docs/limits.md)", node)


def _own_exprs(stmt: ast.stmt):
    for field, value in ast.iter_fields(stmt):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.expr):
                yield item
            elif isinstance(item, ast.withitem):
                yield item.context_expr
            elif isinstance(item, ast.keyword):
                yield item.value


def _deepest(root: ast.expr) -> tuple[int, ast.AST]:
    """(depth, the node where it is reached), iteratively."""
    best = (0, root)
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > best[0]:
            best = (depth, node)
        extra = 0
        if isinstance(node, ast.BoolOp):
            extra = (len(node.values) - 1).bit_length()
        elif isinstance(node, ast.Compare):
            extra = (len(node.ops) - 1).bit_length()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.expr, ast.keyword)):
                stack.append((child, depth + 1 + extra))
    return best
