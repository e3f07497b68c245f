"""The address functions of copies and fills, written once for both executors: the CUDA
renderer evaluates them over IndexExpr (symbolic, then C), the simulator over numpy
arrays, so an address the kernel computes is the address the simulator checks.

- `region_indices`: the element of a region that iteration `loop` of a copy's layout
  touches (non-unit dimensions matched in order, a unit dimension stays at its start);
- `flat_offset`: the row-major offset of an index tuple in a buffer — what a kernel
  computes for shared and global memory, with no per-dimension check;
- `border_guards`: per dimension of a global region, whether the kernel tests the
  index against 0 and against the extent (a T.copy or T.fill reads 0 outside a tensor
  and drops writes outside it — only where it tests). A test is left out only when the
  index provably stays inside over `statement_ranges`: the grid's block indices and
  the constant ranges of enclosing serial loops; every other name (a Let, a loop with
  a runtime start) may be anything, negative included."""
from __future__ import annotations

import math
from typing import Sequence

from typing import Callable

from . import ir
from .indexexpr import Const, IndexExpr, Ranges, Var
from .operators import OPERATORS, UNARY_OPERATORS
from .run_cost import block_value, grid_blocks


def integer_index(e: ir.Expr, lookup: Callable[[str], IndexExpr | None],
                  ranges: Ranges) -> IndexExpr | None:
    """e as an integer IndexExpr, each variable replaced by lookup(name), or None where
    e is not an affine-with-floordiv/mod function of integer names (a load, a float, a
    division by a non-constant). `ranges` bounds the names for the one rule that needs
    them: integer `/` truncates (C), which is floor division only when the numerator is
    provably >= 0. Layout inference, the renderer and the simulator all read indices
    through this function."""
    if isinstance(e, ir.Const):
        v = e.value
        return Const(int(v)) if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(e, ir.Var):
        return lookup(e.name)
    if isinstance(e, ir.Cast):
        return integer_index(e.a, lookup, ranges) if e.dtype.is_int else None
    if isinstance(e, ir.Unary):
        a = integer_index(e.a, lookup, ranges)
        index = UNARY_OPERATORS[e.op].index
        return index(a, None, None, True) if index is not None and a is not None else None
    if not isinstance(e, ir.Binary) or OPERATORS[e.op].index is None:
        return None
    a, b = integer_index(e.a, lookup, ranges), integer_index(e.b, lookup, ranges)
    if a is None or b is None:
        return None
    c = b.value if isinstance(b, Const) else None
    # the operator's index form (spec.operators); `/` needs its numerator's sign
    nonneg = e.op != "/" or (e.dtype.is_int and c is not None and c > 0
                              and a.bounds(ranges)[0] >= 0)
    return OPERATORS[e.op].index(a, b, c, nonneg)


def affine(e: ir.Expr) -> IndexExpr | None:
    """e over free names: every integer variable stands for itself, unbounded."""
    return integer_index(e, Var, {})


def region_indices(starts: Sequence, extents: Sequence[int], loop_shape: Sequence[int],
                   loop: Sequence) -> tuple:
    """The index, per dimension of the region's buffer, of loop iteration `loop` (over
    loop_shape): start + the loop index of the matching non-unit dimension."""
    loop_dims = [d for d, e in enumerate(loop_shape) if e > 1]
    region_dims = [d for d, e in enumerate(extents) if e > 1]
    index = list(starts)
    for a, b in zip(loop_dims, region_dims):
        index[b] = starts[b] + loop[a]
    return tuple(index)


def flat_offset(shape: Sequence[int], indices: Sequence):
    """sum(index_d * stride_d), row-major: an IndexExpr for IndexExpr indices, an array
    for arrays."""
    flat = Const(0) if any(isinstance(ix, IndexExpr) for ix in indices) else 0
    stride = 1
    for extent, ix in reversed(list(zip(shape, indices))):
        flat = ix * stride + flat
        stride *= extent
    return flat


def border_guards(region: ir.Region, starts: Sequence[IndexExpr], loop_shape: Sequence[int],
                  ranges: Ranges) -> tuple[tuple[bool, bool], ...]:
    """Per dimension of a global region touched by a loop over loop_shape: (test
    index >= 0, test index < extent). Interval bounds of an affine index over
    independent ranges are exact, so a test left out can never fail."""
    if region.buffer.scope != "global":
        return tuple((False, False) for _ in region.buffer.shape)
    names = [f"$loop{d}" for d in range(len(loop_shape))]
    inner = dict(ranges)
    inner.update((n, (0, e - 1)) for n, e in zip(names, loop_shape))
    index = region_indices(starts, region.extents, loop_shape, [Var(n) for n in names])
    guards = []
    for ix, extent in zip(index, region.buffer.shape):
        low, high = ix.bounds(inner)
        guards.append((low < 0, high >= extent))
    return tuple(guards)


# The most blocks over which a loop's stop read from the block indices is evaluated, to
# bound the loop variable from above (numpy over the grid: a few MB at most)
STOP_BLOCKS = 2**16


def statement_ranges(func: ir.PrimFunc) -> dict[ir.Stmt, dict[str, tuple[float, float]]]:
    """For every statement of the kernel, the ranges its integer names are known to
    take: block indices over the grid, serial loop variables over their constant
    bounds, or up to the largest value over the grid of a stop read from the block
    indices (a causal attention's `T.min(..., T.ceildiv((bx + 1) * block_M, block_N))`,
    evaluated exactly by spec.run_cost). A name a Let binds again is unknown from there
    on."""
    kernel = func.kernel
    known = {v.name: (0, extent - 1) for v, extent in zip(kernel.block_vars, kernel.grid)}
    values = None
    # the block-only names are evaluated over the grid only for a kernel that has such
    # a stop: most have none, and this runs for every plan and render
    runtime_stop = any(isinstance(s, ir.SerialFor) and not isinstance(s.stop, ir.Const)
                       for s in ir.walk(kernel.body))
    if runtime_stop and math.prod(kernel.grid) <= STOP_BLOCKS:
        blocks = grid_blocks(kernel.grid)
        values = {v.name: blocks[:, d].astype(object) for d, v in enumerate(kernel.block_vars)}
    out: dict[ir.Stmt, dict[str, tuple[float, float]]] = {}
    _scope(kernel.body, known, values, out)
    return out


def _scope(body: ir.Body, known: dict, values: dict | None, out: dict) -> None:
    """values: the block-only integer names' values over the grid (None: not tracked)."""
    known = dict(known)
    values = None if values is None else dict(values)
    for stmt in body:
        out[stmt] = known
        if isinstance(stmt, ir.Let):
            known = {k: v for k, v in known.items() if k != stmt.var.name}
            if values is not None:
                values[stmt.var.name] = block_value(stmt.value, values)
            continue
        if isinstance(stmt, ir.SerialFor):
            inner = dict(known)
            inner.pop(stmt.var.name, None)
            found = _loop_range(stmt, values)
            if found is not None:
                inner[stmt.var.name] = found
            hidden = None if values is None else {**values, stmt.var.name: None}
            _scope(stmt.body, inner, hidden, out)
            continue
        hidden = values
        if values is not None and isinstance(stmt, ir.ParallelFor):
            hidden = {**values, **{v.name: None for v in stmt.vars}}
        for sub in ir.children(stmt):
            _scope(sub, known, hidden, out)


def loop_variable_range(ranges: dict, loop: ir.SerialFor) -> tuple[float, float] | None:
    """The range statement_ranges gives a serial loop's variable inside its body (None:
    the loop runs no iteration, or its start is read at run time)."""
    return ranges.get(loop.body[0], {}).get(loop.var.name) if loop.body else None


def _loop_range(stmt: ir.SerialFor, values: dict | None) -> tuple[float, float] | None:
    start = stmt.start.value if isinstance(stmt.start, ir.Const) else None
    stop = stmt.stop.value if isinstance(stmt.stop, ir.Const) else None
    if start is None:
        return None
    if stop is None:      # a runtime trip count: the side the start bounds, and the
        # largest stop over the grid where the stop reads only block indices
        if stmt.step <= 0:
            return -math.inf, int(start)
        found = _largest_stop(stmt.stop, values)
        if found is None:
            return int(start), math.inf
        if found <= int(start):
            return None
        return int(start), int(start) + (found - 1 - int(start)) // stmt.step * stmt.step
    taken = range(int(start), int(stop), stmt.step)
    if not taken:
        return None
    return min(taken), max(taken)


def _largest_stop(stop: ir.Expr, values: dict | None) -> int | None:
    """The largest value of a loop's stop over the grid's blocks, where it reads only
    block indices, constants and names bound to those (None otherwise)."""
    if values is None:
        return None
    found = block_value(stop, values)
    if found is None:
        return None
    return int(max(found)) if hasattr(found, "__len__") else int(found)
