"""A cell loop executed: codegen.lower.cells.CellLoop — the loop the kernel runs over each
thread's cells of a layout — evaluated with numpy over every (thread, slot), and checked
against the layout's forward tables (interp.registers.tables, the reference: where the
layout's own thread and slot formulas put each element).

The kernel computes each cell's iteration and replica from the loop's inverse, so the
simulator places the statement's iterations by that same map, never by the forward
tables; where the two disagree the kernel's threads would run the wrong iterations, and
the disagreement is a finding with a counterexample (thread, slot, element):

- R505: a cell that passes the guard computes an iteration outside the loop (or a
  replica past the layout's);
- R503: an iteration (with its replica) that does not run exactly once on the cell the
  layout puts it on — no cell runs it (the guard drops its cell, or its cell computes
  another iteration), two cells run it, or it runs on another cell than its own.

Executed once per layout value in a plan's statics (interp.sim_statics.PlanStatics.cells)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.codegen.lower.cells import FLAT, REP, S, T, CellLoop
from verify_reducer.spec.diagnostics import Counterexample

from .registers import tables


@dataclass(frozen=True)
class CellFinding:
    """One disagreement of a cell loop with its layout: the cell (relative thread, slot),
    the iteration (logical indices) and replica it concerns, and what went wrong."""
    code: str
    what: str                  # "missing", "twice", "misplaced" or "outside"
    thread: int
    slot: int
    iteration: tuple[int, ...]
    replica: int
    message: str


@dataclass(frozen=True)
class Cells:
    """The cells a loop runs, thread-major (thread 0's slots first): relative thread,
    slot, the iteration (flat logical index, and per dimension) and its replica; and the
    findings of the check against the forward tables."""
    loop: CellLoop
    thread: np.ndarray
    slot: np.ndarray
    index: np.ndarray
    coords: tuple[np.ndarray, ...]
    replica: np.ndarray
    findings: tuple[CellFinding, ...]


def run_cells(loop: CellLoop) -> Cells:
    """Every (thread, slot) of the loop through its guard and inverse, and the check."""
    layout = loop.layout
    count, slots = layout.count, loop.slots
    t, s = np.meshgrid(np.arange(count), np.arange(slots), indexing="ij")
    env: dict[str, np.ndarray] = {T: t, S: s}
    if loop.tables is not None:
        cell = np.broadcast_to(loop.cell.evaluate(env), t.shape)
        env[FLAT] = _entries(loop.tables.flat, cell)
        env[REP] = _entries(loop.tables.replica, cell)
    live = np.ones(t.shape, dtype=bool)
    for bound in loop.guard:
        value = bound.expr.evaluate(env)
        if bound.low is not None:
            live &= value >= bound.low
        if bound.high is not None:
            live &= value < bound.high
    coords = tuple(np.broadcast_to(e.evaluate(env), t.shape) for e in loop.indices)
    replica = np.zeros(t.shape, dtype=np.int64) if loop.replica is None else \
        np.broadcast_to(loop.replica.evaluate(env), t.shape)
    inside = replica >= 0
    inside &= replica < layout.replicate
    for c, extent in zip(coords, layout.shape):
        inside &= (c >= 0) & (c < extent)
    flat = np.full(t.shape, -1, dtype=np.int64)
    runs = live & inside
    flat[runs] = np.ravel_multi_index(tuple(c[runs] for c in coords), layout.shape)
    findings = _check(loop, live & ~inside, coords, replica, flat, runs)
    rel, slot = np.nonzero(runs)
    return Cells(loop, rel, slot, flat[rel, slot], tuple(c[rel, slot] for c in coords),
                 replica[rel, slot], findings)


def _entries(table: tuple[int, ...], cell: np.ndarray) -> np.ndarray:
    """A table's entries at the cells (-1 past its end: no cell the kernel reads)."""
    values = np.asarray(table, dtype=np.int64)
    inside = (cell >= 0) & (cell < len(values))
    return np.where(inside, values[np.where(inside, cell, 0)], -1)


def _check(loop: CellLoop, outside: np.ndarray, coords, replica: np.ndarray,
           flat: np.ndarray, runs: np.ndarray) -> tuple[CellFinding, ...]:
    """The first cell of each kind of disagreement with the forward tables."""
    layout = loop.layout
    forward = tables(layout)
    if not outside.any() and np.array_equal(flat, forward.index) and \
            np.array_equal(replica[runs], forward.replica[runs]):
        return ()                                  # the common case, tested at once
    found = []
    if outside.any():
        t, s = _first(outside)
        it = tuple(int(c[t, s]) for c in coords)
        found.append(CellFinding(
            "R505", "outside", t, s, it, int(replica[t, s]),
            f"the cell loop computes iteration {it} (replica {int(replica[t, s])}) at "
            f"thread {t + layout.offset}, slot {s}, outside the loop's "
            f"{' x '.join(map(str, layout.shape))} iterations ({layout.replicate} "
            f"replica{'s' if layout.replicate > 1 else ''})"))
    size = layout.size
    key = np.where(runs, replica * size + flat, -1)
    want = np.where(forward.index >= 0, forward.replica * size + forward.index, -1)
    times = np.bincount(key[runs], minlength=size * layout.replicate)
    uncovered = (want >= 0) & (times[np.maximum(want, 0)] == 0)
    if uncovered.any():
        t, s = _first(uncovered)
        why = "the cell guard drops this cell, where the layout puts" if not runs[t, s] \
            else f"this cell runs iteration {_iteration(layout, int(flat[t, s]))} " \
                 f"(replica {int(replica[t, s])}) instead of the layout's"
        found.append(_finding(layout, "missing", t, s, int(want[t, s]), times, why))
    twice = runs & (times[np.maximum(key, 0)] > 1)
    if twice.any():
        t, s = _first(twice)
        found.append(_finding(layout, "twice", t, s, int(key[t, s]), times,
                              "this cell and another both run"))
    wrong = runs & (key != want)
    if wrong.any() and not twice.any() and not uncovered.any():
        t, s = _first(wrong)
        where = "a cell the layout leaves unused" if want[t, s] < 0 else \
            f"a cell that holds iteration {_iteration(layout, int(want[t, s]))}"
        found.append(_finding(layout, "misplaced", t, s, int(key[t, s]), times,
                              f"{where}, yet it runs"))
    return tuple(found)


def _finding(layout, what: str, t: int, s: int, key: int, times: np.ndarray,
             why: str) -> CellFinding:
    """An R503 at cell (t, s) about the (iteration, replica) numbered key."""
    replica, flat = divmod(key, layout.size)
    it = _iteration(layout, flat)
    n = int(times[key])
    return CellFinding("R503", what, t, s, it, replica,
                       f"the cell loop's thread {t + layout.offset}, slot {s}: {why} "
                       f"iteration {it} (replica {replica}), which runs {n} "
                       f"time{'' if n == 1 else 's'} in all instead of once")


def _first(mask: np.ndarray) -> tuple[int, int]:
    t, s = np.nonzero(mask)
    return int(t[0]), int(s[0])


def _iteration(layout, flat: int) -> tuple[int, ...]:
    return tuple(int(c) for c in np.unravel_index(flat, layout.shape))


# what the counterexample marks on the thread of a finding's cell
THREAD_ROLE = {"missing": "stale", "twice": "unheld", "misplaced": "unheld",
               "outside": "unheld"}


def report_cells(report, cells: Cells, head: str, span, carried: bool = False) -> None:
    """Each finding of a statement's cell loop (head: the statement as its grid names it,
    `T.Parallel(64, 93)`, `T.reduce_sum`) into the run's violations, with its
    counterexample drawn on the loop's grid — the plan's, or, `carried`, the layout's
    own (a statement's cells that are no T.Parallel of the plan)."""
    layout = cells.loop.layout
    for f in cells.findings:
        thread = f.thread + layout.offset
        elements = () if f.what == "outside" else ((f.iteration, "iteration"),)
        drawn = Counterexample(("loop", head, span.line),
                               f"thread {thread}, slot {f.slot}: iteration {f.iteration}",
                               elements, ((thread, THREAD_ROLE[f.what]),),
                               layout=layout if carried else None)
        report.add(f.code, f"{f.message}; its layout is {layout.describe()}", span,
                   key=("cells", f.what), counterexample=drawn)
