"""Registers: the per-thread storage of fragments (and of reducer partials), laid out by a
spec.layout.Layout, with poison tracking.

A register file is `values[thread - offset, slot]` plus `written[...]`: a register
starts poisoned and becomes readable when something writes it (DESIGN §4). Which
element a register holds is the layout's `inverse()`; the tables derived from a layout
are computed once per layout object (`tables`), since a loop's layout is reused every
time the loop runs."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spec.layout import Layout


@dataclass(frozen=True)
class LayoutTables:
    """Everything the simulator asks of a layout, as arrays."""
    layout: Layout
    index: np.ndarray        # [count, slots]: flat element held there, -1 unused
    replica: np.ndarray      # [count, slots]: its replica, -1 unused
    slot_of: np.ndarray      # [size]: the slot of every element
    pair_thread: np.ndarray  # [pairs]: relative thread of every used (thread, slot)
    pair_slot: np.ndarray    # [pairs]
    pair_index: np.ndarray   # [pairs]: the element (or loop iteration) there
    pair_replica: np.ndarray  # [pairs]
    # cells() of recent (threads, flat) arrays, keyed by identity: a loop's lanes and
    # a whole-fragment copy present the very same arrays every time they run
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def index_flat(self) -> np.ndarray:
        return self.index.reshape(-1)

    @property
    def pair_cell(self) -> np.ndarray:
        return self.pair_thread * self.index.shape[1] + self.pair_slot

    def cells(self, rel: np.ndarray, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cell, held) per entry: the register cell `rel * slots + slot` where
        relative thread rel keeps element flat, and whether it does hold it there."""
        count, slots = self.index.shape
        key = rel * slots + self.slot_of[flat]
        if len(rel) and (rel.min() < 0 or rel.max() >= count):
            inside = (rel >= 0) & (rel < count)
            held = np.zeros(len(rel), dtype=bool)
            held[inside] = self.index_flat[key[inside]] == flat[inside]
            return np.where(inside, key, 0), held
        return key, self.index_flat[key] == flat

    def holders(self, flat: int) -> np.ndarray:
        """Absolute threads holding element flat (every replica)."""
        rel = np.nonzero((self.index == flat).any(axis=1))[0]
        return rel + self.layout.offset


_CACHE: dict[int, LayoutTables] = {}


def tables(layout: Layout) -> LayoutTables:
    """The tables of layout, computed once per layout object (the cache keeps the
    layout alive, so its id is never reused)."""
    found = _CACHE.get(id(layout))
    if found is not None and found.layout is layout:
        return found
    index, replica = layout.inverse()
    rel, slot = np.nonzero(index >= 0)
    made = LayoutTables(layout, index, replica, layout.slots_of(), rel, slot,
                        index[rel, slot], replica[rel, slot])
    _CACHE[id(layout)] = made
    return made


class Registers:
    """One buffer's registers in every thread of its layout."""

    def __init__(self, layout: Layout, np_dtype: np.dtype):
        self.layout = layout
        self.tables = tables(layout)
        shape = (layout.count, layout.slots_per_thread)
        self.values = np.zeros(shape, dtype=np_dtype)
        self.written = np.zeros(shape, dtype=bool)

    def locate(self, threads: np.ndarray, flat: np.ndarray):
        """(cell, held) of element flat in each absolute thread: cells index the
        flattened `values` / `written` (`flat_values`, `flat_written`); held is None
        when every thread holds its element (the common case, tested once here)."""
        cells, held, _ = self._place(threads, flat)
        return cells, held

    def window(self, threads: np.ndarray, flat: np.ndarray):
        """(index, held) as locate gives (cells, held), but the index is a slice when
        every element is held and the cells are consecutive — a loop or copy laid out like the buffer itself —
        and a gather or scatter through a slice costs a fraction of one through an
        array. Reading through it gives a view: copy what must outlive the registers."""
        _, held, index = self._place(threads, flat)
        return index, held

    def _place(self, threads: np.ndarray, flat: np.ndarray):
        memo = self.tables.memo
        found = memo.get((id(threads), id(flat)))
        if found is not None and found[0] is threads and found[1] is flat:
            return found[2]
        cells, held = self.tables.cells(threads - self.layout.offset, flat)
        if not held.all():
            result = (cells, held, cells)
        elif len(cells) > 1 and (np.diff(cells) == 1).all():
            result = (cells, None, slice(int(cells[0]), int(cells[-1]) + 1))
        else:
            result = (cells, None, cells)
        if len(memo) > 64:
            memo.clear()
        memo[(id(threads), id(flat))] = (threads, flat, result)   # keeps both alive
        return result

    @property
    def flat_values(self) -> np.ndarray:
        return self.values.reshape(-1)

    @property
    def flat_written(self) -> np.ndarray:
        return self.written.reshape(-1)


class LocalBuffer:
    """A T.alloc_local buffer: every thread its own copy of every element."""

    def __init__(self, threads: int, size: int, np_dtype: np.dtype):
        self.values = np.zeros((threads, size), dtype=np_dtype)
        self.written = np.zeros((threads, size), dtype=bool)
