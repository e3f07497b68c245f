"""When a copy may move 16 bytes per access (128-bit loads and stores), decided exactly
from the copy's layout, its index expressions and the extents — never hoped for.

A copy over shape (..., n) with V = 16 / sizeof(dtype) elements per vector is
vectorized when all of these hold (otherwise it stays scalar):

1. both sides have the same dtype, and neither is a reducer or a local buffer;
2. the copy's layout gives each thread **runs**: elements (..., V*r + lane), lane < V, of
   one replica sit in one thread at slots V*g + lane (`runs_of`: checked on every
   element), so a thread's run is V logically consecutive elements;
3. every memory side (global, shared) is contiguous along the run: the copy's innermost
   dimension is the buffer's innermost one;
4. every memory side's element offset of a run's first element is a multiple of V for
   every value of the block indices, serial loop variables and run indices in range
   (`multiple_of`: the linear form modulo V, else every combination enumerated);
   buffers start 16-byte aligned (shared arrays are declared `__align__(16)`, tensor
   parameters come from cudaMalloc, 256-byte aligned);
5. no border guard splits a vector: a guarded global side has an innermost extent that
   is a multiple of V, so with (4) a run is wholly inside or wholly outside.

A fragment side needs no contiguity: its registers are filled element by element from
(or into) the vector."""
from __future__ import annotations

import math

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import affine, border_guards, flat_offset, region_indices
from verify_reducer.spec.indexexpr import Const, IndexExpr, Var, floordiv, mod
from verify_reducer.spec.layout import Layout

from .layout_copy import vector_elements

ENUMERATE_LIMIT = 1 << 16


def runs_of(layout: Layout, v: int) -> Layout | None:
    """The layout of the runs of v elements (the last index variable renamed
    `<name>_run`, counting runs), when layout gives every thread runs; else None."""
    *outer, inner = layout.shape
    if v <= 1 or inner % v or layout.slots_per_thread % v:
        return None
    names = layout.index_vars
    run_var = f"{names[-1]}_run"
    while run_var in names or run_var == layout.rep_var:
        run_var += "_"
    run_names = names[:-1] + (run_var,)
    shape = tuple(outer) + (inner // v,)
    ranges = {n: (0, e - 1) for n, e in zip(run_names, shape)}
    first = {names[-1]: Var(run_var) * v}
    thread = layout.thread.substitute(first)
    slot = floordiv(layout.slot.substitute(first), v, ranges)
    try:
        runs = Layout(shape, run_names, thread, slot, layout.count, layout.replicate,
                      layout.offset, layout.rep_var)
    except ValueError:
        return None
    # every element: the thread of its run, the slot v*(run slot) + lane
    threads = layout.threads_of().reshape(layout.replicate, -1, v)
    slots = layout.slots_of().reshape(-1, v)
    run_threads = runs.threads_of()
    run_slots = runs.slots_of()
    if not (threads == run_threads[:, :, None]).all():
        return None
    if not (slots == run_slots[:, None] * v + np.arange(v)[None, :]).all():
        return None
    return runs


def multiple_of(expr: IndexExpr, v: int, ranges: dict[str, tuple[float, float]]) -> bool:
    """Whether expr is a multiple of v for every value of its variables in ranges
    (inclusive; a variable without a finite range can take any value)."""
    rest = mod(expr, v, {})
    if isinstance(rest, Const):
        return rest.value == 0
    names = rest.free_vars()
    bounds = [ranges.get(n, (-math.inf, math.inf)) for n in names]
    if any(not (math.isfinite(lo) and math.isfinite(hi)) for lo, hi in bounds):
        return False
    sizes = [int(hi) - int(lo) + 1 for lo, hi in bounds]
    if math.prod(sizes) > ENUMERATE_LIMIT:
        return False
    grids = np.meshgrid(*[np.arange(int(lo), int(hi) + 1) for lo, hi in bounds],
                        indexing="ij")
    env = {n: g.reshape(-1) for n, g in zip(names, grids)}
    # rest ≡ expr (mod v), over only the names left in it (expr may have more)
    return bool((np.asarray(rest.evaluate(env)) % v == 0).all())


def copy_runs(stmt: ir.Copy, layout: Layout,
              ranges: dict[str, tuple[float, float]]) -> Layout | None:
    """The runs of a copy whose every access can move 16 bytes (conditions 1-5 above),
    else None. layout is the copy's layout; ranges those of the names the region starts
    read (spec.addressing.statement_ranges: block indices, serial loop variables)."""
    src, dst = stmt.src, stmt.dst
    dtype = dst.buffer.dtype
    v = vector_elements(dtype)
    sides = (src, dst)
    if src.buffer.dtype != dtype or any(r.buffer.is_reducer or r.buffer.scope == "local"
                                        for r in sides):
        return None
    runs = runs_of(layout, v)
    if runs is None:
        return None
    first = tuple(Var(n) for n in runs.index_vars[:-1]) + (Var(runs.index_vars[-1]) * v,)
    inner = dict(ranges)
    inner.update((n, (0, e - 1)) for n, e in zip(runs.index_vars, runs.shape))
    for region in sides:
        if region.buffer.scope == "fragment":
            continue
        if tuple(region.extents)[-1] != layout.shape[-1]:
            return None                   # the run is not along the buffer's rows
        starts = tuple(affine(s) for s in region.starts)
        if any(s is None for s in starts):
            return None
        ix = region_indices(starts, region.extents, layout.shape, first)
        if not multiple_of(flat_offset(region.buffer.shape, ix), v, inner):
            return None
        # the guards of the elements (not only of a run's first): a run is then wholly
        # inside or wholly outside when the innermost extent is a multiple of v, and the
        # test of its first element decides it
        guards = border_guards(region, starts, layout.shape, ranges)
        if region.buffer.shape[-1] % v and any(any(g) for g in guards):
            return None                   # a border guard could split a run
    return runs


def vector_type(c_name: str) -> tuple[str, str]:
    """The CUDA 16-byte vector type that carries a run of c_name, and its zero."""
    if c_name == "float":
        return "float4", "make_float4(0.0f, 0.0f, 0.0f, 0.0f)"
    return "uint4", "make_uint4(0u, 0u, 0u, 0u)"

