"""A reducer's partials in the simulator: every participant's storage slots, the
ids and counts that account for every contribution, and the entries that say where a
site's lanes contribute (its guard, the storage slot of each output)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.ops import reducer_monoid
from verify_reducer.spec.physical import ReducerPlan, SitePlan

from .accounting import Ledger
from .registers import LayoutTables, Registers
from .shared import RaceTracker



class Partials:
    """One reducer's partials in one block: registers in its storage layout, the
    accounting pair beside every value, the open epoch's ledger and seed."""

    def __init__(self, buffer: ir.Buffer, rplan: ReducerPlan, threads: int):
        self.buffer = buffer
        self.plan = rplan
        self.monoid = reducer_monoid(buffer.reducer)
        dtype = buffer.dtype
        self.np_dtype = dtype.np
        self.ufunc = self.monoid.float_ufunc if dtype.is_float else self.monoid.ufunc
        self.direct = not dtype.emulated and not dtype.is_bool
        self.regs = Registers(rplan.storage, buffer.dtype.np, buffer.shape)
        self.tables: LayoutTables = self.regs.tables
        self.ids = np.zeros(self.regs.values.shape, dtype=np.uint64)
        self.counts = np.zeros(self.regs.values.shape, dtype=np.int64)
        self.races = RaceTracker(max(rplan.workspace_words, 1), threads)
        # per Entry id: [entry, wrapping id sum per entering lane, visits] not yet
        # added to ids / counts (see accumulate)
        self.pending: dict[int, list] = {}
        self.ledger: Ledger | None = None
        self.seed = None
        self.readable = False

    def combine(self, a, b):
        """a ⊕ b in the reducer's dtype (spec.ops), without conversions when both
        operands are already stored in it (numpy's integer ops wrap as the GPU's do)."""
        if self.direct and isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
                a.dtype == self.np_dtype and b.dtype == self.np_dtype:
            # inf - inf is NaN and a NaN input propagates, on the GPU too: no warning
            with np.errstate(invalid="ignore", over="ignore"):
                return self.ufunc(a, b)
        return self.monoid.combine(self.buffer.dtype, a, b)

    def fold(self, terms: np.ndarray, axis: int) -> np.ndarray:
        """The combine of terms along axis, left to right as a loop of combines would
        round them: exact ops reduce in any order; float sum and product accumulate
        sequentially; bfloat16 and float8 (rounded after every step) go term by term."""
        dtype = self.buffer.dtype
        if dtype.emulated:
            terms = np.moveaxis(terms, axis, 0)
            acc = terms[0]
            for term in terms[1:]:
                acc = self.combine(acc, term)
            return acc
        if dtype.is_float:
            if self.monoid.name in ("sum", "product"):
                with np.errstate(invalid="ignore", over="ignore"):   # inf × 0 is NaN here too
                    folded = self.ufunc.accumulate(terms, axis=axis, dtype=terms.dtype)
                return dtype.quantize(folded.take(-1, axis=axis))
            return dtype.quantize(self.ufunc.reduce(terms, axis=axis))
        return dtype.quantize(self.ufunc.reduce(terms, axis=axis, dtype=terms.dtype))

    def open(self, seed) -> None:
        # Every partial register of every participant starts at the identity, also the
        # (thread, slot) pairs the storage layout leaves unused: the partial array is one
        # register array per thread, and a narrow butterfly shuffles whole slots, so an
        # unused pair's identity meets its partner's partial (and changes nothing).
        identity = self.monoid.identity(self.buffer.dtype)
        self.regs.values[...] = self.buffer.dtype.quantize(np.array(identity))
        self.regs.written[...] = True
        self.ids[...] = 0
        self.counts[...] = 0
        self.pending = {}
        self.ledger = Ledger(self.buffer.size)
        self.seed = seed
        self.readable = False

    def accumulate(self, entry: "Entry", values: np.ndarray, ids: np.ndarray) -> None:
        """Combine each entering lane's contribution into its cell, in order (the
        values' rounding depends on it). The accounting pair is a wrapping sum and a
        count, which no order changes: an entry's lanes always enter the same cells,
        so their ids are summed per lane across visits and added to the cells once,
        before the collective reads them (`settle`)."""
        vals = self.regs.flat_values
        if entry.rounds is None:               # every lane its own cell
            cells = entry.cells
            vals[cells] = self.combine(vals[cells], values)
        else:
            for lanes, cells in entry.rounds:
                vals[cells] = self.combine(vals[cells], values[lanes])
        found = self.pending.get(id(entry))
        if found is None:
            self.pending[id(entry)] = [entry, ids.copy(), 1]    # keeps entry alive
        else:
            found[1] += ids
            found[2] += 1

    def settle(self) -> None:
        """Add the pending id sums and counts to their cells."""
        id_sums, counts = self.ids.reshape(-1), self.counts.reshape(-1)
        for entry, lane_ids, visits in self.pending.values():
            if entry.rounds is None:
                id_sums[entry.cells] += lane_ids
                counts[entry.cells] += visits
            else:
                np.add.at(id_sums, entry.cells, lane_ids)
                counts += visits * entry.per_cell
        self.pending = {}


@dataclass(frozen=True)
class Entry:
    """Where one update's lanes enter the partials — the same at every visit of a
    loop, so derived once per (site, lane arrays)."""
    lanes: np.ndarray | None       # the lanes that enter (guard admits, cell held); None: all
    threads: np.ndarray            # thread and output of every lane the guard admits
    outputs: np.ndarray
    unheld: int | None             # the first of those with no partial of its output
    beyond: np.ndarray | None      # those whose storage slot is past the partial array
    cells: np.ndarray              # per entering lane: its partial cell
    # a thread combines its lanes one after another in slot order (an unrolled loop),
    # so lanes sharing a cell go in rounds: the r-th lane of every cell in round r —
    # (lanes, cells) per round, None when no two lanes share a cell
    rounds: list[tuple[np.ndarray, np.ndarray]] | None
    per_cell: np.ndarray | None    # entering lanes per (flat) cell, with rounds

    @staticmethod
    def derive(site: SitePlan, p: Partials, threads, outputs, replica) -> "Entry":
        admitted = None if site.guard_replica is None else \
            np.flatnonzero(replica == site.guard_replica)
        e_threads = threads if admitted is None else threads[admitted]
        e_outputs = outputs if admitted is None else outputs[admitted]
        cells, held = p.regs.locate(e_threads, e_outputs)
        beyond = p.regs.beyond(e_outputs)
        unheld = None
        lanes = admitted
        if held is not None:
            missing = ~held if beyond is None else ~held & ~beyond
            unheld = int(np.argmax(missing)) if missing.any() else None
            kept = np.flatnonzero(held)
            cells = cells[kept]
            lanes = kept if admitted is None else admitted[kept]
        per_cell = np.bincount(cells, minlength=p.regs.values.size)
        if per_cell.max(initial=0) <= 1:
            return Entry(lanes, e_threads, e_outputs, unheld, beyond, cells, None, None)
        order = np.argsort(cells, kind="stable")
        sorted_cells = cells[order]
        starts = np.r_[0, np.nonzero(sorted_cells[1:] != sorted_cells[:-1])[0] + 1]
        run = np.repeat(starts, np.diff(np.r_[starts, len(cells)]))
        rank = np.arange(len(cells)) - run
        rounds = []
        for r in range(int(rank.max()) + 1):
            members = order[rank == r]
            rounds.append((members, cells[members]))
        return Entry(lanes, e_threads, e_outputs, unheld, beyond, cells, rounds, per_cell)


# ============================================================================ a block

