"""The copies and fills of the thread program: who moves which element of a T.copy or
T.fill, at which index, under which tests, with which accesses — decided once.

Contract. `lower_copy(plan, stmt, participants)` returns a CopyMoves, `lower_fill(...)`
a FillMoves: plain frozen data whose per-thread parts are spec.indexexpr expressions
over the partition's index variables. codegen.cuda_copies PRINTS them (and
codegen.cuda_pipeline a staged copy's runs); interp.sim_copies and interp.simulate's
fill EXECUTE them — the thread that moves an element in the simulator is the one that
moves it on the GPU, so shared-memory race tracking, register ownership and R505 follow
the kernel exactly. Neither side chooses a partition, a writer, a guard or a vector.

What a copy decides:

- the **partition** Layout over the copy's extents, and where it comes from: the plan's
  LayoutMap.copies (a fragment side's layout, or codegen.layout_copy's cooperative
  partition); else a finalized reducer side's storage (renamed to the region's index
  names) when it covers the region; else the participants' `default_partition` (a
  reducer held whole by every thread, or a copy the layout inference left alone). A
  reducer side whose storage covers part of the region and not every thread is refused
  (Unlowerable);
- **one writer**: memory (global, shared) takes one write per element, by replica 0, when
  the partition replicates;
- the **border guards** (spec.addressing.border_guards) of each global side, per
  dimension (test `>= 0`, test `< extent`): a read outside gives 0, a write outside is
  dropped (TileLang's rule); a side without a test that still leaves its buffer is R505
  in the simulator;
- **hoisted starts**: a region start that is not affine in the kernel's integer names
  (it reads memory: `X[row_offset + i]` with row_offset a T.alloc_var) is evaluated once
  per thread into a local before the copy; the index expressions read it as a variable
  named by HoistedStart.name (no range known: guarded on both sides);
- the **vector run**: 16 bytes per access where the conditions below hold, with the
  layout of the runs and the indices of a run's first element; else the reason none.

Vector conditions (a copy over shape (..., n), V = 16 / sizeof(dtype) elements):
1. both sides have the same dtype, neither is a reducer or a local buffer, no start is
   hoisted;
2. the partition gives each thread **runs**: elements (..., V*r + lane), lane < V, of one
   replica sit in one thread at slots V*g + lane (`runs_of`, checked on every element);
3. every memory side (global, shared) is contiguous along the run: the copy's innermost
   dimension is the buffer's innermost one;
4. every memory side's element offset of a run's first element is a multiple of V for
   every value of the block indices, serial loop variables and run indices in range
   (`multiple_of`); buffers start 16-byte aligned (shared arrays are `__align__(16)`,
   tensors come from cudaMalloc);
5. no border guard splits a vector: a guarded global side has an innermost extent that
   is a multiple of V, so with (4) a run is wholly inside or wholly outside.
A fragment side needs no contiguity: its registers are filled element by element."""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import affine, border_guards, flat_offset, region_indices
from verify_reducer.spec.dtypes import DType
from verify_reducer.spec.indexexpr import Const, IndexExpr, Var, floordiv, mod
from verify_reducer.spec.layout import Layout, default_partition, index_names

VECTOR_BYTES = 16
LANE = "$lane"             # the element of a run (codegen.cuda_access.LANE, unrolled)
ENUMERATE_LIMIT = 1 << 16
MEMORY = ("global", "shared")

Guards = tuple[tuple[bool, bool], ...]


class Unlowerable(ValueError):
    """A copy or fill no thread program moves (the message names it and its line): the
    renderer reports it as unsupported, the simulator as R100."""


@dataclass(frozen=True)
class HoistedStart:
    """A region start evaluated once per thread before the copy, read by the index
    expressions as the variable `name`."""
    side: str                          # "src" | "dst" (a fill's: "region")
    dim: int
    value: ir.Expr
    name: str


@dataclass(frozen=True)
class VectorRun:
    """Runs of `elements` consecutive elements, one 128-bit access each: `runs` is the
    partition of the runs (its last index counts runs), `first` the iteration of a run's
    first element, src/dst_index that element's indices in each buffer, src/dst_lanes
    the indices of element LANE of the run (a fragment side's registers, one by one)."""
    elements: int
    runs: Layout
    first: tuple[IndexExpr, ...]
    src_index: tuple[IndexExpr, ...]
    dst_index: tuple[IndexExpr, ...]
    src_lanes: tuple[IndexExpr, ...]
    dst_lanes: tuple[IndexExpr, ...]


@dataclass(frozen=True)
class CopyMoves:
    """One T.copy, lowered (see the module docstring)."""
    stmt: ir.Copy
    partition: Layout
    source: str                        # "layout map" | "reducer storage" | "participants"
    one_writer: bool                   # only replica 0 stores
    src_guards: Guards                 # per dimension of src's buffer: (>= 0, < extent)
    dst_guards: Guards
    hoisted: tuple[HoistedStart, ...]
    src_index: tuple[IndexExpr, ...]   # per element, over partition.index_vars
    dst_index: tuple[IndexExpr, ...]
    vector: VectorRun | None
    no_vector: str                     # why there is no vector run ("" when there is)

    def describe(self) -> str:
        stmt = self.stmt
        lines = [f"line {stmt.span.line}: T.copy {stmt.src.buffer.name} -> "
                 f"{stmt.dst.buffer.name}, partition from the {self.source}: "
                 f"{self.partition.describe()}"]
        if self.one_writer:
            lines.append("  stores by replica 0 only (one write per element)")
        for side, guards in (("src", self.src_guards), ("dst", self.dst_guards)):
            tests = [f"dim {d}: {' and '.join(t for t, on in zip(('>= 0', '< extent'), g) if on)}"
                     for d, g in enumerate(guards) if any(g)]
            if tests:
                lines.append(f"  {side} border tests: {'; '.join(tests)}")
        for h in self.hoisted:
            lines.append(f"  {h.side} start of dim {h.dim} hoisted (not affine)")
        if self.vector is not None:
            lines.append(f"  {self.vector.elements} elements per 128-bit access: "
                         f"{self.vector.runs.describe()}")
        else:
            lines.append(f"  element by element: {self.no_vector}")
        return "\n".join(lines)


@dataclass(frozen=True)
class FillMoves:
    """One T.fill, lowered. `partition`: None for a local buffer (every thread writes its
    own copy of every element of the region, which must be the whole buffer); a
    fragment's own layout (every holder writes, over the whole buffer; `in_region` when
    the region is not all of it); else the participants' default partition of the region
    (every holder writes: the value is uniform). `index`: the buffer element of each
    iteration of the element loop (`loop`: the partition's index variables, or the
    region's for a local buffer) over `shape`."""
    stmt: ir.Fill
    partition: Layout | None
    source: str                        # "local" | "fragment layout" | "participants"
    loop: tuple[str, ...]
    shape: tuple[int, ...]
    index: tuple[IndexExpr, ...]
    in_region: bool                    # the fragment's elements are tested against the region
    guards: Guards                     # the region's border tests (global)
    hoisted: tuple[HoistedStart, ...] = ()   # starts that are not affine (see refused)
    refused: str = ""                  # why the printer cannot lower it ("" when it can)

    def describe(self) -> str:
        stmt = self.stmt
        head = f"line {stmt.span.line}: T.fill {stmt.region.buffer.name}"
        if self.partition is None:
            text = f"{head}: every thread fills its own copy"
        else:
            text = f"{head}, partition from the {self.source}: {self.partition.describe()}"
        if self.in_region:
            text += "\n  holders test the region"
        tests = [f"dim {d}: {' and '.join(t for t, on in zip(('>= 0', '< extent'), g) if on)}"
                 for d, g in enumerate(self.guards) if any(g)]
        if tests:
            text += f"\n  border tests: {'; '.join(tests)}"
        return text + (f"\n  refused: {self.refused}" if self.refused else "")


# ------------------------------------------------------------------ copies

def lower_copy(plan, stmt: ir.Copy, participants: tuple[int, int]) -> CopyMoves:
    """The copy's moves in plan (a spec.physical.PhysicalPlan), run by participants
    (offset, count); memoized per plan."""
    return _memoized(plan, "copies", stmt, participants, _lower_copy)


def _lower_copy(plan, stmt, participants, ranges) -> CopyMoves:
    src, dst = stmt.src, stmt.dst
    partition, source = _partition(plan, stmt, participants)
    hoisted = tuple(HoistedStart(side, d, start, f"${side}_start{d}")
                    for side, region in (("src", src), ("dst", dst))
                    for d, start in enumerate(region.starts) if affine(start) is None)
    starts = {side: _starts(region, hoisted, side)
              for side, region in (("src", src), ("dst", dst))}
    loop = tuple(Var(n) for n in partition.index_vars)
    if hoisted:
        vector, no_vector = None, "a region start is hoisted (not affine)"
    else:
        runs, no_vector = vector_runs(stmt, partition, ranges)
        vector = None if runs is None else _vector(runs, stmt, partition, starts)
    return CopyMoves(
        stmt, partition, source,
        one_writer=dst.buffer.scope in MEMORY and partition.replicate > 1,
        src_guards=border_guards(src, starts["src"], partition.shape, ranges),
        dst_guards=border_guards(dst, starts["dst"], partition.shape, ranges),
        hoisted=hoisted,
        src_index=region_indices(starts["src"], src.extents, partition.shape, loop),
        dst_index=region_indices(starts["dst"], dst.extents, partition.shape, loop),
        vector=vector, no_vector=no_vector)


def _partition(plan, stmt: ir.Copy, participants) -> tuple[Layout, str]:
    found = plan.layouts.copies.get(stmt)
    if found is not None:
        return found, "layout map"
    extents = tuple(stmt.dst.extents)
    for side in (stmt.src.buffer, stmt.dst.buffer):
        if side.is_reducer:
            storage = next(rp.storage for rp in plan.reducers if rp.reducer is side)
            if storage.shape == extents:
                return storage.rename(index_names(len(extents))), "reducer storage"
            if storage.replicate == storage.count:
                break                  # every thread holds every element
            raise Unlowerable(f"line {stmt.span.line}: copy of reducer {side.name} "
                              f"over a region its storage layout does not cover")
    offset, count = participants
    return default_partition(extents, count, offset), "participants"


def _starts(region: ir.Region, hoisted, side: str) -> tuple[IndexExpr, ...]:
    names = {h.dim: h.name for h in hoisted if h.side == side}
    return tuple(Var(names[d]) if d in names else affine(s)
                 for d, s in enumerate(region.starts))


def _vector(runs: Layout, stmt: ir.Copy, partition: Layout, starts) -> VectorRun:
    v = vector_elements(stmt.dst.buffer.dtype)
    first = run_start(runs, v)
    lane = first[:-1] + (first[-1] + Var(LANE),)
    src, dst, shape = stmt.src, stmt.dst, partition.shape
    return VectorRun(v, runs, first,
                     region_indices(starts["src"], src.extents, shape, first),
                     region_indices(starts["dst"], dst.extents, shape, first),
                     region_indices(starts["src"], src.extents, shape, lane),
                     region_indices(starts["dst"], dst.extents, shape, lane))


def run_start(runs: Layout, v: int) -> tuple[IndexExpr, ...]:
    """The iteration of a run's first element: runs counts runs of v elements along the
    last dimension."""
    return tuple(Var(n) for n in runs.index_vars[:-1]) + (Var(runs.index_vars[-1]) * v,)


def region_element(region: ir.Region, loop_shape: tuple[int, ...],
                   loop: tuple[IndexExpr, ...]) -> tuple[IndexExpr, ...]:
    """The element of region touched by iteration `loop` (over loop_shape) of a copy
    whose starts are affine (a staged copy's: codegen.pipeline stages only those)."""
    starts = tuple(affine(s) for s in region.starts)
    if any(s is None for s in starts):
        raise Unlowerable(f"line {region.span.line}: a region start of "
                          f"{region.buffer.name} that is not an integer affine expression")
    return region_indices(starts, region.extents, loop_shape, loop)


# ------------------------------------------------------------------ fills

def lower_fill(plan, stmt: ir.Fill, participants: tuple[int, int]) -> FillMoves:
    """The fill's moves in plan, run by participants (offset, count); memoized per plan."""
    return _memoized(plan, "fills", stmt, participants, _lower_fill)


def _lower_fill(plan, stmt: ir.Fill, participants, ranges) -> FillMoves:
    region = stmt.region
    buffer = region.buffer
    extents = tuple(region.extents)
    whole = extents == buffer.shape and \
        all(isinstance(s, ir.Const) and s.value == 0 for s in region.starts)
    if buffer.scope == "fragment":
        layout = plan.layouts.fragments[buffer]
        return FillMoves(stmt, layout, "fragment layout", layout.index_vars, layout.shape,
                         tuple(Var(n) for n in layout.index_vars), not whole,
                         tuple((False, False) for _ in buffer.shape))
    layout, source, loop = None, "local", index_names(len(extents))
    if buffer.scope != "local":
        offset, count = participants
        layout, source = default_partition(extents, count, offset), "participants"
        loop = layout.index_vars
    hoisted = tuple(HoistedStart("region", d, start, f"$fill_start{d}")
                    for d, start in enumerate(region.starts) if affine(start) is None)
    starts = _starts(region, hoisted, "region")
    index = region_indices(starts, extents, extents, tuple(Var(n) for n in loop))
    # the printer hoists no fill's start and fills a local buffer whole: such fills are
    # refused there; the simulator runs them (a start evaluated once, tested both sides)
    refused = ""
    if hoisted:
        refused = (f"line {region.span.line}: a region start of {buffer.name} that is "
                   f"not an integer affine expression")
    elif layout is None and not whole:
        refused = f"line {region.span.line}: a T.fill of part of local buffer {buffer.name}"
    return FillMoves(stmt, layout, source, loop, extents, index, False,
                     border_guards(region, starts, extents, ranges), hoisted, refused)


# ------------------------------------------------------------------ vector runs

def vector_elements(dtype: DType) -> int:
    """Elements of dtype in one 128-bit access (1: no vector of this dtype)."""
    size = dtype.bits // 8
    if dtype.bits % 8 or size < 1 or VECTOR_BYTES % size:
        return 1
    return VECTOR_BYTES // size


def copy_runs(stmt: ir.Copy, layout: Layout,
              ranges: dict[str, tuple[float, float]]) -> Layout | None:
    """The runs of a copy under layout whose every access can move 16 bytes, else None
    (vector_runs without the reason: the planner's question)."""
    return vector_runs(stmt, layout, ranges)[0]


def vector_runs(stmt: ir.Copy, layout: Layout,
                ranges: dict[str, tuple[float, float]]) -> tuple[Layout | None, str]:
    """(the runs, "") when conditions 1-5 of the module docstring hold, else (None, why).
    ranges: those of the names the region starts read (block indices, serial loops)."""
    src, dst = stmt.src, stmt.dst
    dtype = dst.buffer.dtype
    v = vector_elements(dtype)
    sides = (src, dst)
    if src.buffer.dtype != dtype:
        return None, "the sides' dtypes differ"
    if any(r.buffer.is_reducer or r.buffer.scope == "local" for r in sides):
        return None, "a side is a reducer or a local buffer"
    runs = runs_of(layout, v)
    if runs is None:
        return None, f"the partition gives no thread runs of {v} elements"
    first = run_start(runs, v)
    inner = dict(ranges)
    inner.update((n, (0, e - 1)) for n, e in zip(runs.index_vars, runs.shape))
    for region in sides:
        if region.buffer.scope == "fragment":
            continue
        name = region.buffer.name
        if tuple(region.extents)[-1] != layout.shape[-1]:
            return None, f"the run is not along {name}'s rows"
        starts = tuple(affine(s) for s in region.starts)
        if any(s is None for s in starts):
            return None, f"a start of {name} is not affine"
        ix = region_indices(starts, region.extents, layout.shape, first)
        if not multiple_of(flat_offset(region.buffer.shape, ix), v, inner):
            return None, f"a run of {name} may start off a 16-byte boundary"
        # the guards of the elements (not only of a run's first): a run is then wholly
        # inside or wholly outside when the innermost extent is a multiple of v, and the
        # test of its first element decides it
        guards = border_guards(region, starts, layout.shape, ranges)
        if region.buffer.shape[-1] % v and any(any(g) for g in guards):
            return None, f"a border test of {name} could split a run"
    return runs, ""


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
    if not (threads == runs.threads_of()[:, :, None]).all():
        return None
    if not (slots == runs.slots_of()[:, None] * v + np.arange(v)[None, :]).all():
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


# ------------------------------------------------------------------ the per-plan memo

@dataclass
class _Memo:
    ranges: dict
    copies: dict
    fills: dict


_MEMOS: dict[int, tuple[weakref.ref, _Memo]] = {}


def _memoized(plan, table: str, stmt, participants, lower):
    """lower(plan, stmt, participants, ranges), once per plan, statement and
    participants (the plan's memo's `table`)."""
    memo = _memo(plan)
    found = getattr(memo, table)
    key = (stmt, tuple(participants))
    if key not in found:
        found[key] = lower(plan, stmt, tuple(participants), memo.ranges[stmt])
    return found[key]


def _memo(plan) -> _Memo:
    """The plan's statement ranges and lowered statements, built once and dropped with
    the plan (held weakly, so a process that lowers many plans keeps the live ones)."""
    found = _MEMOS.get(id(plan))
    if found is not None and found[0]() is plan:
        return found[1]
    made = _Memo(plan.statement_ranges(), {}, {})
    _MEMOS[id(plan)] = (weakref.ref(plan), made)
    weakref.finalize(plan, _MEMOS.pop, id(plan), None)
    return made
