"""Registers: the per-thread storage of fragments (and of reducer partials), laid out by a
spec.layout.Layout, with poison tracking.

A register file is `values[thread - offset, slot]` plus `written[...]`: a register
starts poisoned and becomes readable when something writes it (docs/design.md §12). Which
element a register holds is the layout's `inverse()`; the tables derived from a layout
are computed once per layout value (`tables`), since a loop's layout is reused every
time the loop runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from verify_reducer.spec.layout import Layout


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

    def holders(self, flat: int) -> np.ndarray:
        """Absolute threads holding element flat (every replica)."""
        rel = np.nonzero((self.index == flat).any(axis=1))[0]
        return rel + self.layout.offset


# Layouts are values (equal layouts have equal tables), so the tables are shared by
# value, and only the most recent are kept: a process that checks many programs (an
# oracle server, a test session) must not keep every layout it ever simulated. Each
# table's `memo` holds at most 65 entries of lane arrays, so this bounds what dead
# plans' arrays a memo can still hold; a program has a few dozen layouts at most.
TABLES_KEPT = 128


@lru_cache(maxsize=TABLES_KEPT)
def tables(layout: Layout) -> LayoutTables:
    """The tables of layout, computed once per layout value among the recent ones."""
    index, replica = layout.inverse()
    rel, slot = np.nonzero(index >= 0)
    return LayoutTables(layout, index, replica, layout.slots_of(), rel, slot,
                        index[rel, slot], replica[rel, slot])


class Registers:
    """One buffer's registers in every thread of its layout: `slots_per_thread` per
    thread, as the renderer declares the array. An element's slot is the layout's slot
    expression evaluated at the element's own indices, as the renderer computes it; a
    slot past the array (a layout that does not fit its buffer) is no cell at all:
    `beyond` names those elements, and the caller reports them (R505)."""

    def __init__(self, layout: Layout, np_dtype: np.dtype, shape: tuple[int, ...]):
        self.layout = layout
        self.tables = tables(layout)
        self.slots = layout.slots_per_thread
        cells = (layout.count, self.slots)
        self.values = np.zeros(cells, dtype=np_dtype)
        self.written = np.zeros(cells, dtype=bool)
        self.slot_of, self.layout_flat = _element_slots(layout, tuple(shape))
        outside = self.slot_of >= self.slots
        self.outside = outside if outside.any() else None

    def beyond(self, flat: np.ndarray) -> np.ndarray | None:
        """Which of elements flat have a slot past the array; None: none of them."""
        if self.outside is None:
            return None
        bad = self.outside[flat]
        return bad if bad.any() else None

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
        key = (id(threads), id(flat), id(self.slot_of))
        found = memo.get(key)
        if found is not None and found[0] is threads and found[1] is flat and \
                found[3] is self.slot_of:
            return found[2]
        cells, held = self._cells(threads - self.layout.offset, flat)
        if not held.all():
            result = (cells, held, cells)
        elif len(cells) > 1 and (np.diff(cells) == 1).all():
            result = (cells, None, slice(int(cells[0]), int(cells[-1]) + 1))
        else:
            result = (cells, None, cells)
        if len(memo) > 64:
            memo.clear()
        memo[key] = (threads, flat, result, self.slot_of)   # keeps the keys alive
        return result

    def _cells(self, rel: np.ndarray, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cell, held) per entry: the register cell `rel * slots + slot` where relative
        thread rel keeps element flat, and whether it does hold it there (a thread
        outside the layout, or a slot past the array, holds nothing: cell 0)."""
        count = self.layout.count
        slot = self.slot_of[flat]
        key = rel * self.slots + slot
        wanted = flat if self.layout_flat is None else self.layout_flat[flat]
        inside = None
        if len(rel) and (rel.min() < 0 or rel.max() >= count):
            inside = (rel >= 0) & (rel < count)
        if self.outside is not None:
            fits = ~self.outside[flat]
            inside = fits if inside is None else inside & fits
        if inside is None:
            return key, self.tables.index_flat[key] == wanted
        held = np.zeros(len(rel), dtype=bool)
        held[inside] = self.tables.index_flat[key[inside]] == wanted[inside]
        return np.where(inside, key, 0), held

    @property
    def flat_values(self) -> np.ndarray:
        return self.values.reshape(-1)

    @property
    def flat_written(self) -> np.ndarray:
        return self.written.reshape(-1)


def _element_slots(layout: Layout, shape: tuple[int, ...]):
    """(slot of every element of a buffer of shape, the element's flat index in the
    layout's own index space or None when the two spaces are the same). The slot is
    the layout's slot expression at the element's indices — what the renderer
    computes — so a layout narrower than its buffer gives slots past the array."""
    tab = tables(layout)
    if shape == layout.shape:
        return tab.slot_of, None
    size = int(np.prod(shape))
    if len(shape) == len(layout.shape):
        coords = np.unravel_index(np.arange(size), shape)
        slot = layout.slots_of(coords)
        inside = np.ones(size, dtype=bool)
        for c, extent in zip(coords, layout.shape):
            inside &= c < extent
        mapped = np.full(size, -1, dtype=np.int64)
        mapped[inside] = np.ravel_multi_index(tuple(c[inside] for c in coords),
                                              layout.shape)
        return slot, mapped
    # another rank over the same row-major order (unit dimensions added or dropped)
    flat = np.arange(size)
    slot = np.full(size, layout.slots_per_thread, dtype=np.int64)
    known = flat < layout.size
    slot[known] = tab.slot_of[flat[known]]
    return slot, np.where(known, flat, -1)


class LocalBuffer:
    """A T.alloc_local buffer: every thread its own copy of every element."""

    def __init__(self, threads: int, size: int, np_dtype: np.dtype):
        self.values = np.zeros((threads, size), dtype=np_dtype)
        self.written = np.zeros((threads, size), dtype=bool)
