"""Races between blocks that a whole run meets (R504), for the runs whose blocks were
not proved independent before they ran.

`check` runs a sample of the blocks when verify.oracle.blocks proves them independent,
and rejects, before any run, the races it has a Z3 witness for
(verify.oracle.block_races). In between — the indices depend on loaded values, or Z3
could not decide — every block runs, one after the other, which is one order among the
many the hardware may pick: a block that reads what an earlier block stored would see a
value it may not see on the GPU. So a run of several blocks over whole tensors records,
per element of each global tensor, which block last stored it, read it (or that several
did) and updated it atomically, and stops at the first access that another block's
access of the same element makes a race:

- a plain read or store of an element another block stored;
- a plain store of an element another block read;
- a plain read or store of an element another block updated atomically, or an atomic
  update of an element another block read or stored plainly.

Atomic updates of one element by several blocks commute (docs/semantics.md §12). Found
for these inputs only: a race other inputs would reach is not claimed absent. Accesses
within one block are ordered by the program (and on-chip memory by the plan's
barriers: the simulator's business)."""
from __future__ import annotations

import contextlib

import numpy as np

from verify_reducer.spec.diagnostics import DiagnosticError, Note, error
from verify_reducer.spec.ir import Buffer
from verify_reducer.spec.source import Span

from .memory import Storage

NOBODY, SEVERAL = -1, -2


class Position:
    """Where a run is: the block running (its flat index in the grid) and the
    statement it runs (its interpreter, whose stmt_span says)."""

    def __init__(self):
        self.block = NOBODY
        self.runner = None

    @property
    def span(self) -> Span:
        return self.runner.stmt_span


def ordered_storage(arrays: dict[Buffer, np.ndarray], grid: tuple[int, ...],
                    position: Position, written: set[Buffer]) -> dict[Buffer, Storage]:
    """Every global tensor's storage: those the kernel writes (`written`) record each
    access against position; one it only reads cannot race, and is kept plain (the
    records are six words per element)."""
    return {p: OrderedStorage(p, arr, BlockOrder(p, grid, position)) if p in written
            else Storage(p, arr) for p, arr in arrays.items()}


class BlockOrder:
    """The per-element record of one global tensor across the blocks of a run."""

    def __init__(self, buffer: Buffer, grid: tuple[int, ...], now):
        size = buffer.size
        self.buffer, self.grid, self.now = buffer, grid, now
        # per element: the block (flat index) of the last store, read, atomic update
        # (SEVERAL: more than one block read, or updated, it), and where (a span index)
        # (int32: a grid has fewer than 2**31 blocks, a run fewer statements)
        self.stored, self.read, self.updated = np.full((3, size), NOBODY, np.int32)
        self.stored_at, self.read_at, self.updated_at = np.zeros((3, size), np.int32)
        self.spans: list[Span] = []
        self.quiet = False

    def _others(self, record: np.ndarray, flat) -> np.ndarray:
        who = record[flat]
        return (who == SEVERAL) | ((who >= 0) & (who != self.now.block))

    def _stamp(self, record, at, flat, several: bool) -> None:
        span = self.now.span
        if not self.spans or self.spans[-1] is not span:
            self.spans.append(span)
        block = self.now.block
        if several:
            who = record[flat]
            record[flat] = np.where((who == NOBODY) | (who == block), block, SEVERAL)
        else:
            record[flat] = block
        at[flat] = len(self.spans) - 1

    def on_read(self, flat) -> None:
        if self.quiet:
            return
        self._first(flat, "reads", ((self.stored, self.stored_at, "stored"),
                                    (self.updated, self.updated_at, "updated atomically")))
        self._stamp(self.read, self.read_at, flat, several=True)

    def on_write(self, flat) -> None:
        if self.quiet:
            return
        self._first(flat, "stores", ((self.stored, self.stored_at, "stored"),
                                     (self.read, self.read_at, "read"),
                                     (self.updated, self.updated_at, "updated atomically")))
        self._stamp(self.stored, self.stored_at, flat, several=False)

    def on_atomic(self, flat) -> None:
        self._first(flat, "updates atomically", ((self.stored, self.stored_at, "stored"),
                                                 (self.read, self.read_at, "read")))
        self._stamp(self.updated, self.updated_at, flat, several=True)

    @contextlib.contextmanager
    def atomically(self, flat):
        """An atomic update's own read and store of its elements: checked as one."""
        self.on_atomic(flat)
        self.quiet = True
        try:
            yield
        finally:
            self.quiet = False

    def _first(self, flat, verb: str, records) -> None:
        flat = np.asarray(flat).reshape(-1)
        for record, at, past in records:
            clash = self._others(record, flat)
            if clash.any():
                k = int(np.argmax(clash))
                raise self._race(int(flat[k]), verb, int(record[flat[k]]), past,
                                 self.spans[int(at[flat[k]])])

    def _race(self, element: int, verb: str, other: int, past: str,
              then: Span) -> DiagnosticError:
        point = ", ".join(str(int(i)) for i in np.unravel_index(element, self.buffer.shape))
        who = "another block" if other == SEVERAL else f"block {self._block(other)}"
        return DiagnosticError(error(
            "R504", f"race between blocks, met in this run: block "
            f"{self._block(self.now.block)} {verb} {self.buffer.name}[{point}], which "
            f"{who} {past} at line {then.line}; blocks of one launch run in no order, so "
            f"on the GPU either may come first (their independence was not proved "
            f"before the run, so every block ran, one after the other)",
            self.now.span, Note(f"where {who} {past} it", then)))

    def _block(self, flat_index: int) -> tuple[int, ...] | int:
        block = tuple(int(i) for i in np.unravel_index(flat_index, self.grid))
        return block if len(block) > 1 else block[0]


class OrderedStorage(Storage):
    """A global tensor's Storage in a whole run of several blocks: every read and store
    is recorded (BlockOrder) before it happens."""

    def __init__(self, buffer: Buffer, values: np.ndarray, order: BlockOrder):
        super().__init__(buffer, values)
        self.block_order = order

    def read(self, flat, span, stmt_span=None):
        self.block_order.on_read(flat)
        return super().read(flat, span, stmt_span)

    def write(self, flat, val) -> None:
        self.block_order.on_write(flat)
        super().write(flat, val)
