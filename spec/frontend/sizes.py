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
from ..ir import Const, Kernel, ParallelFor, PrimFunc, SerialFor, Stmt, children
from ..limits import (GRID_AXES, MAX_BLOCKS, MAX_ELEMENTS, MAX_EXPR_DEPTH, MAX_GRID,
                      MAX_ITERATIONS, MAX_STMT_DEPTH, MAX_THREADS_PER_BLOCK,
                      MAX_TOTAL_ELEMENTS, TARGET, power_of_two)
from .errors import fail, shape_error, unsupported


# ----------------------------------------------------------------------------- launch

def check_threads(threads: int, node: ast.AST) -> None:
    if threads > MAX_THREADS_PER_BLOCK:
        fail("R506", f"threads={threads} exceeds {MAX_THREADS_PER_BLOCK} threads per block "
             f"on {TARGET}", node)


def check_blocks(grid: tuple[int, ...], node: ast.AST) -> None:
    blocks = _product(grid)
    if blocks > MAX_BLOCKS:
        shape_error(f"the grid {grid} has {blocks} blocks; at most "
                    f"{power_of_two(MAX_BLOCKS)} are supported (docs/limits.md)", node)


def check_grid_extent(axis: int, extent: int, node: ast.AST) -> None:
    if extent > MAX_GRID[axis]:
        fail("R506", f"grid extent {extent} exceeds the largest gridDim.{GRID_AXES[axis]} "
             f"on {TARGET} ({MAX_GRID[axis]})", node)


# ----------------------------------------------------------------------------- sizes

def check_elements(shape: tuple[int, ...], what: str, node: ast.AST) -> None:
    count = _product(shape)
    if count > MAX_ELEMENTS:
        shape_error(f"{what} {shape} has {count} elements; at most "
                    f"{power_of_two(MAX_ELEMENTS)} are supported (docs/limits.md)", node)


def constant_trip_count(start: int, stop: int, step: int) -> int:
    """Iterations of `range(start, stop, step)`, negative when the bounds run backwards
    (`T.serial(-8)`): such a loop is a mistake, not an empty loop."""
    span = stop - start if step > 0 else start - stop
    return -(-span // abs(step)) if span > 0 else span


def check_trip_count(trips: int, node: ast.AST) -> None:
    if trips > MAX_ITERATIONS:
        shape_error(f"this loop runs {trips} times; at most {power_of_two(MAX_ITERATIONS)} "
                    f"iterations are supported (docs/limits.md)", node)


def check_func_sizes(func: PrimFunc) -> list[Diagnostic]:
    """Limits that involve several constructs: all tensors together, T.Parallel lanes
    across nested loops, iterations across the grid and nested serial loops, and the
    depth of nested statements."""
    found: list[Diagnostic] = []
    total = sum(p.size for p in func.params)
    if total > MAX_TOTAL_ELEMENTS:
        found.append(error("R102", f"the tensor parameters have {total} elements together; "
                           f"at most {power_of_two(MAX_TOTAL_ELEMENTS)} are supported "
                           f"(docs/limits.md)", func.span))
    kernel = func.kernel
    _walk(kernel.body, 1, _product(kernel.grid), 1, kernel, found)
    return found


def _walk(body: tuple[Stmt, ...], depth: int, iterations: int, lanes: int, kernel: Kernel,
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
            if trips > 0 and inner_iterations > MAX_ITERATIONS:
                found.append(error(
                    "R102", f"this loop's body would run {inner_iterations} times "
                    f"({_product(kernel.grid)} block(s) × the trip counts of the serial "
                    f"loops around it); at most {power_of_two(MAX_ITERATIONS)} are "
                    f"supported (docs/limits.md)", stmt.span))
                continue
        elif isinstance(stmt, ParallelFor):
            inner_lanes = lanes * _product(stmt.extents)
            if inner_lanes > MAX_ELEMENTS:
                found.append(error(
                    "R102", f"nested T.Parallel loops run {inner_lanes} iterations at once; "
                    f"at most {power_of_two(MAX_ELEMENTS)} are supported (docs/limits.md)",
                    stmt.span))
                continue
        for sub in children(stmt):
            _walk(sub, depth + 1, inner_iterations, inner_lanes, kernel, found)


def _static_trips(loop: SerialFor) -> int:
    """The trip count of a loop with constant bounds; 1 when it depends on run-time
    values (the interpreter checks those when it runs them)."""
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
