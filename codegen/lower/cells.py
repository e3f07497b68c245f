"""The cell loops of the thread program: every placed statement of a kernel (a
T.Parallel body, a fragment copy, a fill, a T.reduce_* destination, a reducer's
storage) runs in a loop over the executing thread's cells of a layout, and this module
decides that loop once.

Contract: `cell_loop(layout, selects)` returns a `CellLoop` — plain data — with the
slots per thread, the layout's INVERSE (for each (thread t, slot s) the iteration's
index variables and the replica, as spec.indexexpr expressions over t and s, or over the
entries of constant tables), the cell guard that turns unused cells off, and whether the
slot loop is unrolled or rolled, with the reason. Its consumers: codegen.cuda_cells
prints it (a `for slot` loop, the declarations, the guard, the tables) and decides none
of it; interp.sim_cells executes it (evaluates the inverse with numpy over every
(thread, slot) and places the statement's elements by that map, checked against the
layout's forward tables), so a wrong digit, window, guard or table entry is a simulator
finding on the CPU rather than a wrong kernel on the GPU.

The inverse. Every layout the planners produce numbers its (thread, slot) cells so that
the cell position `u = slot*count + thread` (thread relative to the participant offset)
yields the flat logical index and the replica as digits, `(u / a) % b`: the default
partition (flat = u, rep = u / N), a fully replicated layout (flat = slot, rep =
thread), a projection (flat = u / 64, rep = u % 64), ... `inverse_of` finds those
digits from the layout's own numeric inverse and checks the formulas on every cell; the
used cells must be a prefix of u (`u < used`). A dimension may also be a weighted sum
of digits: under the vectorized partition (spec.layout.vectorized_partition) the
innermost index is `vec*(its vector's thread digit) + (its lane, a slot digit)`.

A loop over part of a row leaves cells of every thread unused, not a prefix of u:
`T.Parallel(64, 93)` under `thread = 8*(i % 4) + k // 16, slot = 16*(i // 4) + k % 16`
uses the cells with k < 93 of the 64 × 128 the same formulas fill. The inverse is then
the inverse of that wider window (one dimension widened until the cells are all used,
the window possibly shifted: `k + 93` over k < 35 runs in [93, 128) of the same 128),
with a guard that keeps the cells inside it (`window`). A layout that fits neither gets
its inverse as a constant table: always correct, but every index read from it is a
run-time value.

Rolled or unrolled. A cell loop's slots are unrolled, so that a register slot that
follows the loop's layout is a constant in each copy. A slot known only at run time is
a select over the whole array (codegen.cuda_access), and unrolled, each copy repeats
that select: a loop of 256 slots over a 64-slot partial expands into 32 K selects, and
nvcc takes minutes or crashes. `SELECT_LIMIT` bounds that expansion (slots × the
selects of one slot): past it the loop is rolled. The selects of one slot are the
run-time register accesses of the loop's body, which the statement printers decide
(codegen.cuda_access.register_place, per access, from the frame the body renders in);
the printer reports their count and this module makes the decision."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import Const, IndexExpr, Var, floordiv, mod
from verify_reducer.spec.layout import Layout

# Internal variable names: "$" keeps them apart from every TileLang name.
T, S = "$t", "$s"


@dataclass(frozen=True)
class Inverse:
    """Per logical dimension its index, and the replica, as expressions over t (the
    participant-relative thread) and s (the slot); `used` is the number of cells in
    use (cells u >= used are guarded off; None: all are used). With a table, flat and
    replica are read from `table_name`."""
    layout: Layout
    indices: tuple[IndexExpr, ...] | None
    replica: IndexExpr | None
    used: int | None
    table: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    window: "Window | None" = None

    @property
    def ranges(self) -> dict[str, tuple[int, int]]:
        return _cell(self.layout)[1]

    def cell(self) -> IndexExpr:
        return _cell(self.layout)[0]


@dataclass(frozen=True)
class Window:
    """The cells in use are those whose widened index `index` (over t and s) of
    dimension `dim` lies in [low, high) of [0, wide); the dimension's own index is
    index - low."""
    dim: int
    index: IndexExpr
    low: int
    high: int
    wide: int


# The shifts of a widened dimension tried before falling back to a table.
MAX_SHIFTS = 1024


@lru_cache(maxsize=1024)
def inverse_of(layout: Layout) -> Inverse:
    """The layout's inverse (cached: every plan of a program renders the same loops)."""
    found = _prefix_inverse(layout)
    if found.table is None:
        return found
    windowed = _windowed_inverse(layout)
    return windowed if windowed is not None else found


def _prefix_inverse(layout: Layout) -> Inverse:
    index, replica = layout.inverse()
    count, slots = layout.count, layout.slots_per_thread
    # u[t, s] = s*count + t, so the row-major transpose lists cells in u order
    flat_by_u = index.T.reshape(-1)
    rep_by_u = replica.T.reshape(-1)
    used_mask = flat_by_u >= 0
    used = int(used_mask.sum())
    table = (tuple(int(v) for v in flat_by_u), tuple(int(v) for v in rep_by_u))
    if not used_mask[:used].all():
        return Inverse(layout, None, None, None, table)
    u, ranges = _cell(layout)
    indices = _per_dimension(layout.shape, flat_by_u[:used], u, ranges)
    rep = _digit(rep_by_u[:used], layout.replicate)
    if indices is None or rep is None:
        return Inverse(layout, None, None, None, table)
    rep_expr = _apply(u, *rep, ranges) if layout.replicate > 1 else None
    return Inverse(layout, indices, rep_expr, None if used == count * slots else used)


def _windowed_inverse(layout: Layout) -> Inverse | None:
    """The inverse through a window of one widened dimension whose cells, under the
    layout's own formulas, are exactly all of the cells; None when no window fits."""
    count, slots = layout.count, layout.slots_per_thread
    cells = count * slots
    for dim, extent in enumerate(layout.shape):
        others = layout.size // extent * layout.replicate
        if cells % others or cells // others <= extent:
            continue
        wide = cells // others
        for low in range(min(wide - extent, MAX_SHIFTS - 1) + 1):
            found = _window(layout, dim, wide, low)
            if found is not None:
                return found
    return None


def _window(layout: Layout, dim: int, wide: int, low: int) -> Inverse | None:
    """The inverse through dimension dim widened to [0, wide), the layout's own index
    running from low; None unless those cells are each of the layout's exactly once."""
    count, slots = layout.count, layout.slots_per_thread
    if not _row_fits(layout, dim, wide, low):
        return None
    shape = layout.shape[:dim] + (wide,) + layout.shape[dim + 1:]
    size = int(np.prod(shape))
    points = np.unravel_index(np.arange(size), shape)
    own = tuple(p - low if d == dim else p for d, p in enumerate(points))
    threads = layout.threads_of(own)                  # [R, size], participant-relative
    slot_of = np.broadcast_to(layout.slots_of(own), (size,))
    if not _inside(layout, threads, slot_of):
        return None
    u = (slot_of[None, :] * count + threads).reshape(-1)
    if len(np.unique(u)) != count * slots:            # every cell exactly once
        return None
    flat_by_u = np.empty(count * slots, dtype=np.int64)
    rep_by_u = np.empty(count * slots, dtype=np.int64)
    flat_by_u[u] = np.tile(np.arange(size), layout.replicate)
    rep_by_u[u] = np.repeat(np.arange(layout.replicate), size)
    cell, ranges = _cell(layout)
    indices = _per_dimension(shape, flat_by_u, cell, ranges)
    rep = _digit(rep_by_u, layout.replicate)
    if indices is None or rep is None:
        return None
    widened = indices[dim]
    own_indices = indices[:dim] + ((widened - low).simplify(ranges),) + indices[dim + 1:]
    rep_expr = _apply(cell, *rep, ranges) if layout.replicate > 1 else None
    return Inverse(layout, own_indices, rep_expr, None,
                   window=Window(dim, widened, low, low + layout.shape[dim], wide))


def _row_fits(layout: Layout, dim: int, wide: int, low: int) -> bool:
    """The cheap necessary condition first: the widened row at index 0 of every other
    dimension, replica 0, lands on distinct cells inside the layout's."""
    row = np.arange(wide) - low
    own = tuple(row if d == dim else np.zeros(wide, dtype=np.int64)
                for d in range(len(layout.shape)))
    threads = layout.threads_of(own)[0]
    slot_of = np.broadcast_to(layout.slots_of(own), (wide,))
    return _inside(layout, threads, slot_of) and \
        len(np.unique(slot_of * layout.count + threads)) == wide


def _inside(layout: Layout, threads: np.ndarray, slots: np.ndarray) -> bool:
    """Every (thread, slot) is one of the layout's cells."""
    return threads.min() >= 0 and threads.max() < layout.count and slots.min() >= 0 and \
        slots.max() < layout.slots_per_thread


def _cell(layout: Layout) -> tuple[IndexExpr, dict[str, tuple[int, int]]]:
    """The cell u = s*count + t as an expression, and the ranges of t and s."""
    ranges = {T: (0, layout.count - 1), S: (0, layout.slots_per_thread - 1)}
    return (Var(S) * layout.count + Var(T)).simplify(ranges), ranges


def _per_dimension(shape: tuple[int, ...], flat: np.ndarray, u: IndexExpr,
                   ranges) -> tuple[IndexExpr, ...] | None:
    """Each logical index as one digit of u; else the flat index as one digit of u,
    unraveled row-major."""
    coords = np.unravel_index(flat, shape)
    digits = [_digit_sum(c, extent) for c, extent in zip(coords, shape)]
    if all(d is not None for d in digits):
        return tuple(_apply_sum(u, d, ranges) for d in digits)
    size = int(np.prod(shape))
    whole = _digit(flat, size)
    if whole is None:
        return None
    flat_expr = _apply(u, *whole, ranges)
    out = []
    stride = size
    for extent in shape:
        stride //= extent
        out.append(mod(floordiv(flat_expr, stride, ranges), extent, ranges).simplify(ranges))
    return tuple(out)


def _digit(values: np.ndarray, extent: int) -> tuple[int, int | None] | None:
    """(a, b) with values[u] == (u // a) % b for every u (b None: u // a), or None."""
    if extent == 1:
        return (1, 1) if not values.any() else None
    if values[0] != 0:
        return None
    changed = np.nonzero(values != 0)[0]
    a = int(changed[0]) if len(changed) else 1
    b = int(values.max()) + 1
    u = np.arange(len(values))
    if np.array_equal(values, u // a):
        return a, None                     # the top digit: no modulo needed
    if np.array_equal(values, (u // a) % b):
        return a, b
    return None


def _digit_sum(values: np.ndarray, extent: int) -> list[tuple[int, int, int | None]] | None:
    """[(weight, a, b), ...] with values[u] == sum(weight * ((u // a) % b)) for every u,
    the digits lowest first (one digit of weight 1 when `_digit` fits); None when no
    such sum fits. Each digit starts at the first u the lower ones leave unexplained
    and runs as long as the values grow by its weight at multiples of a."""
    single = _digit(values, extent)
    if single is not None:
        return [(1, *single)]
    u = np.arange(len(values))
    rest = values.astype(np.int64).copy()
    digits = []
    while rest.any() and len(digits) < MAX_DIGITS:
        a = int(np.nonzero(rest)[0][0])
        if a == 0:
            return None                    # a value at u = 0: no digit sum gives it
        weight = int(rest[a])
        steps = rest[::a] if a else rest[:1]
        b = 1
        while b < len(steps) and steps[b] == weight * b:
            b += 1
        top = a * b >= len(values)
        digits.append((weight, a, None if top else b))
        rest = rest - weight * ((u // a) if top else (u // a) % b)
    return digits if not rest.any() else None


MAX_DIGITS = 4


def _apply_sum(u: IndexExpr, digits, ranges) -> IndexExpr:
    total: IndexExpr = Const(0)
    for weight, a, b in digits:
        total = total + _apply(u, a, b, ranges) * weight
    return total.simplify(ranges)


def _apply(u: IndexExpr, a: int, b: int | None, ranges) -> IndexExpr:
    if b == 1:
        return Const(0)
    digit = floordiv(u, a, ranges)
    return (digit if b is None else mod(digit, b, ranges)).simplify(ranges)


# ====================================================================== the cell loop

# Names of a tabled inverse's entries: the flat index and the replica read from the
# tables at the cell ("$" keeps them apart from every TileLang name).
FLAT, REP = "$flat", "$rep"

# Run-time register selects (array slots × accesses) an unrolled cell loop may expand
# into. Measured with nvcc 13.0 for sm_90 on tests/programs/valid/fuzz_row_split_windows.py
# as it rendered before its loops had windows: two loops of 98 K selects each crashed nvcc
# after two and a half minutes (docs/compiler-bugs/cicc-13.0-select-chain-crash.md), the
# same two at 65 K (an affine cell inverse instead of the table) took a minute; the 8 K of
# canonical_batched_in_place.py compile in under four seconds.
SELECT_LIMIT = 8192


@dataclass(frozen=True)
class Bound:
    """One test of a cell guard: low <= expr < high (None: that side is not tested)."""
    expr: IndexExpr
    low: int | None
    high: int | None

    def __str__(self) -> str:
        tests = ([f"{self.expr} >= {self.low}"] if self.low is not None else []) + \
            ([f"{self.expr} < {self.high}"] if self.high is not None else [])
        return " and ".join(tests)


@dataclass(frozen=True)
class CellTables:
    """A tabled inverse: per cell u, the flat logical index (-1: unused) and the replica."""
    flat: tuple[int, ...]
    replica: tuple[int, ...]


@dataclass(frozen=True)
class CellLoop:
    """The loop over the executing thread's cells of `layout`. For each cell (t: the
    thread relative to the participant offset, s: the slot) the iteration's index
    variables are `indices` (one per layout.index_vars) and its replica `replica` (None
    for an unreplicated layout), expressions over t and s — or, with `tables`, over
    FLAT and REP, the tables' entries at the cell `cell`. Only the cells that pass every
    Bound of `guard` run. `rolled` is why the slot loop is not unrolled (None: it is);
    `selects` the run-time register selects the unrolled loop would expand into (None:
    not yet counted — the body's selects are known once it prints)."""
    layout: Layout
    slots: int
    cell: IndexExpr
    indices: tuple[IndexExpr, ...]
    replica: IndexExpr | None
    guard: tuple[Bound, ...]
    tables: CellTables | None = None
    window: Window | None = None
    rolled: str | None = None
    selects: int | None = None

    @property
    def ranges(self) -> dict[str, tuple[int, int]]:
        """The ranges of the variables the inverse is written over."""
        layout = self.layout
        found = {T: (0, layout.count - 1), S: (0, self.slots - 1)}
        if self.tables is not None:
            found.update({FLAT: (0, layout.size - 1), REP: (0, layout.replicate - 1)})
        return found

    def describe(self) -> str:
        layout = self.layout
        kind = "tables" if self.tables is not None else \
            "a window" if self.window is not None else "digit formulas"
        head = (f"cells of {layout.describe()}: {self.slots} slot"
                f"{'s' if self.slots != 1 else ''} per thread of {layout.count}, "
                f"inverse by {kind}")
        if self.slots > 1 and self.selects is None:
            head += (f"; unrolled unless its body's run-time register selects, times "
                     f"{self.slots}, pass {SELECT_LIMIT}")
        elif self.slots > 1:
            head += "; " + (f"rolled ({self.rolled})" if self.rolled else "unrolled")
        lines = [head]
        if self.tables is not None:
            lines.append(f"  flat = table[{self.cell}], rep = table[{self.cell}]")
        for name, expr in zip(layout.index_vars, self.indices):
            lines.append(f"  {name} = {expr}")
        if self.replica is not None:
            lines.append(f"  rep = {self.replica}")
        if self.guard:
            lines.append("  guard: " + " and ".join(str(b) for b in self.guard))
        return "\n".join(line.replace(T, "t").replace(S, "s").replace(FLAT, "flat")
                         .replace(REP, "rep") for line in lines)


def cell_loop(layout: Layout, selects: int | None = None) -> CellLoop:
    """The cell loop of layout. `selects`: the run-time register selects of one slot of
    the body (as printed, codegen.cuda_cells counts them; None: not counted yet, the
    loop unrolled); past SELECT_LIMIT, times the slots, the loop is rolled."""
    inverse = inverse_of(layout)
    slots = layout.slots_per_thread
    expansion = None if selects is None else selects * slots
    rolled = None
    if slots > 1 and expansion is not None and expansion > SELECT_LIMIT:
        rolled = (f"unrolling its {slots} slots would expand its run-time register slots "
                  f"into {expansion} selects (limit {SELECT_LIMIT})")
    cell = inverse.cell()
    if inverse.table is not None:
        flat, replica = inverse.table
        indices = []
        stride = layout.size
        for extent in layout.shape:
            stride //= extent
            indices.append((Var(FLAT) // stride) % extent)
        return CellLoop(layout, slots, cell, tuple(indices),
                        Var(REP) if layout.replicate > 1 else None,
                        (Bound(Var(FLAT), 0, None),), CellTables(flat, replica),
                        rolled=rolled, selects=expansion)
    guard: tuple[Bound, ...] = ()
    window = inverse.window
    if window is not None:
        low = window.low if window.low > 0 else None
        high = window.high if window.high < window.wide else None
        if low is not None or high is not None:
            guard = (Bound(window.index, low, high),)
    elif inverse.used is not None:
        guard = (Bound(cell, None, inverse.used),)
    return CellLoop(layout, slots, cell, inverse.indices, inverse.replica, guard,
                    window=window, rolled=rolled, selects=expansion)


def loop_cells(plan) -> Iterator[tuple[ir.ParallelFor, CellLoop]]:
    """(loop, its CellLoop) for every T.Parallel of the plan (its LayoutMap's loops), in
    kernel order, for the thread program (codegen.lower.program); whether a loop is
    rolled is decided once its body's selects are counted, as the renderer prints it."""
    loops = plan.layouts.loops
    for stmt in ir.walk(plan.func.kernel.body):
        if isinstance(stmt, ir.ParallelFor) and stmt in loops:
            yield stmt, cell_loop(loops[stmt])
