"""The reference meaning of T.atomic_add / atomic_max / atomic_min (docs/semantics.md §12).

An atomic is an indivisible read-modify-write of one element: every execution is one
contribution, and the hardware applies a launch's contributions to an element in an
order nobody chooses. So the interpreter does not apply them in its own order: each
element of a destination keeps a *ledger* — the value it held before its first atomic
(the base) and every contribution since — and its value is always the exact combination
of base and contributions (interp.exact.combine, the base as the seed: it is one more
term of the chain). For integers and max/min that is the one right answer; for a float
sum the bound is the reassociation bound of §9 with n = contributions + 1 — every order
of the chain, each step rounded into the destination's dtype (a `float16` or `bfloat16`
atomic rounds at every step, and u is that dtype's: the bound says so because the chain
is one of the orders γ(n) covers).

A plain write in between starts a new chain: the ledger notices that the element no
longer holds the value it last gave it and takes what it holds as the new base. Keeping
the old terms instead would also be sound (the orders of two chains are orders of their
union), so an equal value written back is no loss.

Ledgers live on the destination's Storage (a global tensor's lasts the whole run, so the
blocks of a launch meet in it: a split-K output is the exact sum of every block's
contribution); `counts` say how many contributions each element's chain holds
(docs/design.md §25)."""
from __future__ import annotations

import contextlib

import numpy as np

from verify_reducer.spec.dtypes import DType
from verify_reducer.spec.ops import MONOIDS

from .exact import combine
from .values import Val


class Ledger:
    """One destination's chains: per element touched so far (sparse: `elements`, sorted
    flat positions, so a window of a huge tensor costs what its atomics touch) the base,
    the value the ledger last stored, and the contributions of the current chain."""

    def __init__(self, dtype: DType):
        self.dtype = dtype
        self.elements = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros(0, dtype=np.int64)
        self.base_v = np.zeros(0, dtype=dtype.np)
        self.base_b = np.zeros(0)
        self.last_v = np.zeros(0, dtype=dtype.np)
        self.last_b = np.zeros(0)
        self.flat = np.zeros(0, dtype=np.int64)         # every live contribution
        self.values = np.zeros(0, dtype=dtype.np)
        self.bounds = np.zeros(0)

    def apply(self, op: str, flat: np.ndarray, value: Val, current: Val) -> Val:
        """Adds the contributions (flat position, value) and returns the new value of each
        distinct element touched (np.unique(flat) order); current: what those elements
        hold now (a plain write since the last atomic restarts their chain)."""
        touched, where = np.unique(flat, return_inverse=True)
        slot = self._slots(touched)
        cur_b = np.zeros(len(touched)) if current.b is None else current.b
        restarted = (self.counts[slot] == 0) | \
            ~_same(self.last_v[slot], current.v) | (self.last_b[slot] != cur_b)
        if restarted.any():
            self._forget(touched[restarted])
            self.counts[slot[restarted]] = 0
            self.base_v[slot[restarted]] = current.v[restarted]
            self.base_b[slot[restarted]] = cur_b[restarted]
        new_b = np.zeros(len(flat)) if value.b is None else value.b
        self.flat = np.concatenate([self.flat, flat])
        self.values = np.concatenate([self.values, value.v.astype(self.dtype.np)])
        self.bounds = np.concatenate([self.bounds, new_b])
        np.add.at(self.counts, slot[where], 1)
        mine = np.isin(self.flat, touched)
        terms = np.searchsorted(touched, self.flat[mine])
        bounds, base_b = self.bounds[mine], self.base_b[slot]
        result, bound, _ = combine(MONOIDS[op], self.dtype, terms, self.values[mine],
                                   bounds if bounds.any() else None, len(touched),
                                   seed=self.base_v[slot],
                                   seed_bound=base_b if base_b.any() else None)
        self.last_v[slot] = result
        self.last_b[slot] = bound
        return Val(result, self.dtype, bound if bound.any() else None)

    def _slots(self, touched: np.ndarray) -> np.ndarray:
        """The state rows of the touched elements, new ones added (zeroed)."""
        new = np.setdiff1d(touched, self.elements, assume_unique=True)
        if len(new):
            merged = np.union1d(self.elements, new)
            old = np.searchsorted(merged, self.elements)
            for name in ("counts", "base_v", "base_b", "last_v", "last_b"):
                arr = getattr(self, name)
                grown = np.zeros(len(merged), dtype=arr.dtype)
                grown[old] = arr
                setattr(self, name, grown)
            self.elements = merged
        return np.searchsorted(self.elements, touched)

    def _forget(self, elements: np.ndarray) -> None:
        keep = ~np.isin(self.flat, elements)
        self.flat, self.values, self.bounds = \
            self.flat[keep], self.values[keep], self.bounds[keep]


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    same = a == b
    if a.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(b)
    return same


def ledger_of(storage, dtype: DType) -> Ledger:
    """The storage's ledger, made at its first atomic (a fresh allocation is a fresh
    Storage, so a re-allocated shared buffer starts with no chains)."""
    found = getattr(storage, "atomic_ledger", None)
    if found is None:
        found = Ledger(dtype)
        storage.atomic_ledger = found
    return found


def apply_atomic(storage, op: str, flat: np.ndarray, value: Val, span, stmt_span) -> None:
    """Combines value[k] into element flat[k] of storage, for every k (the elements'
    chains, above); reading an element never written (shared memory) is R502."""
    touched = np.unique(flat)
    order = getattr(storage, "block_order", None)      # a run of several blocks
    with order.atomically(touched) if order is not None else contextlib.nullcontext():
        current = storage.read(touched, span, stmt_span)
        ledger = ledger_of(storage, storage.buffer.dtype)
        storage.write(touched, ledger.apply(op, flat, value, current))
