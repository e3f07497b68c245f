"""The thread partition of a cooperative copy: a `T.copy` between global and shared
memory (no fragment side, so no layout fixes who moves which element; the choice is
ours). Layout inference records it in `LayoutMap.copies` like every other copy layout,
so the simulator and the CUDA renderer run the same partition.

The rule (plain data, decided from the copy's regions and dtypes alone):

- **runs** of V = 16 / sizeof(dtype) elements, when both sides have the same dtype, the
  copy's innermost extent is a multiple of V, and that innermost dimension is the
  innermost (unit-stride) dimension of both buffers. Run `c = flat div V` (row-major
  over the copy's extents) goes to thread `c mod P`, its elements to the thread's
  consecutive slots `(c div P)*V + flat mod V`; with fewer runs than participants the
  threads `>= runs` sit the copy out. A thread's run is then V consecutive elements in
  both memories, which the renderer moves with one 128-bit access where it can prove
  the addresses 16-byte aligned (codegen.lower.copies), else element by element.
- otherwise the **default partition** of the copy's extents (docs/design.md §5;
  replicas take no part in the write: replica 0 moves each element)."""
from __future__ import annotations

import math

from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import floordiv, mod
from verify_reducer.spec.layout import (Layout, default_partition, flat_index, fresh_rep, index_names,
                         vectorized_partition)

from .lower.copies import vector_elements

COOPERATIVE = ("global", "shared")


def is_cooperative(stmt: ir.Copy) -> bool:
    """A copy between global and shared memory: every participant helps, nobody owns."""
    return all(r.buffer.scope in COOPERATIVE and not r.buffer.is_reducer
               for r in (stmt.src, stmt.dst))


def run_length(stmt: ir.Copy) -> int:
    """V when the copy can move runs of V contiguous elements (see the module rule)."""
    src, dst = stmt.src, stmt.dst
    extents = tuple(dst.extents)
    if src.buffer.dtype != dst.buffer.dtype or not extents:
        return 1
    v = vector_elements(dst.buffer.dtype)
    inner = extents[-1]
    if v == 1 or inner % v:
        return 1
    for region in (src, dst):
        if tuple(region.extents)[-1] != inner:
            return 1                  # the innermost loop dimension is not unit stride
    return v


def cooperative_layout(stmt: ir.Copy, participants: tuple[int, int]) -> Layout:
    """The copy's partition over participants (offset, count), by the module rule."""
    offset, count = participants
    extents = tuple(int(e) for e in stmt.dst.extents)
    names = index_names(len(extents))
    v = run_length(stmt)
    if v == 1:
        return default_partition(extents, count, offset, names)
    return run_partition(extents, v, count, offset, names)


def run_partition(shape: tuple[int, ...], v: int, count: int, offset: int = 0,
                  index_vars: tuple[str, ...] | None = None) -> Layout:
    """Runs of v consecutive elements (shape[-1] % v == 0) dealt round-robin over count
    threads: run c = flat div v to thread c mod count, slots (c div count)*v + flat mod v
    (spec.layout.vectorized_partition). With fewer runs than threads, thread c takes run
    c and the others sit the copy out: a copy between memories needs no replicas."""
    index_vars = tuple(index_vars) if index_vars is not None else index_names(len(shape))
    runs = math.prod(shape) // v
    if runs >= count:
        return vectorized_partition(shape, count, offset, index_vars, v)
    ranges = {name: (0, e - 1) for name, e in zip(index_vars, shape)}
    flat = flat_index(shape, index_vars).simplify(ranges)
    return Layout(shape, index_vars, floordiv(flat, v, ranges), mod(flat, v, ranges), count,
                  1, offset, fresh_rep(index_vars))
