"""Thread-private memory of the logical interpreter: a `T.alloc_local` or `T.alloc_var`
buffer has one copy per thread of the block (docs/semantics.md §2).

A statement reaches a set of threads per lane. Where it runs once per thread (it reads
the thread index, or a private value whose copies differ between its threads) each lane
is one thread, and it reads and writes that thread's copy. Where it runs as a
block-level statement, each lane stands for all the threads that reach it: a write sets
every one of their copies, and a read is the one value their copies agree on — when
they do not, the read raises `Diverges` (interp.logical then runs the statement once per
thread) or, where that has no meaning, a diagnostic."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec.diagnostics import DiagnosticError, Note, error
from verify_reducer.spec.ir import Buffer
from verify_reducer.spec.source import Span

from .memory import flat_positions
from .values import Val

CHUNK = 1 << 20          # lanes × threads compared at once (memory, not meaning)


class Diverges(Exception):
    """A block-level statement read a private element whose threads' copies differ."""

    def __init__(self, buffer: Buffer, flat: int, first: int, second: int):
        super().__init__(buffer.name)
        self.buffer, self.flat, self.threads = buffer, flat, (first, second)


class PrivateStorage:
    """One copy of buffer per thread: values, which elements each thread wrote, bounds."""

    def __init__(self, buffer: Buffer, threads: int):
        self.buffer = buffer
        self.values = np.zeros((threads, buffer.size), dtype=buffer.dtype.np)
        self.written = np.zeros((threads, buffer.size), dtype=bool)
        self.bounds: np.ndarray | None = None

    def copies(self, rows: np.ndarray) -> "ThreadCopies":
        """The copies that a statement's lanes reach: rows is (lanes × threads) bool."""
        return ThreadCopies(self, rows)

    def differing(self, flat: np.ndarray, rows: np.ndarray) -> tuple[int, int, int] | None:
        """(lane, thread, other thread) of the first lane whose threads' copies of its
        element flat[lane] differ (a value, a bound, or written on one and not the
        other). Vectorized over lanes, in chunks of at most CHUNK lanes × threads."""
        threads = rows.shape[1]
        step = max(1, CHUNK // max(threads, 1))
        for lo in range(0, len(flat), step):
            f, r = flat[lo:lo + step], rows[lo:lo + step]
            first = np.argmax(r, axis=1)                    # a thread each lane reaches
            copies = self.values[:, f].T                    # lanes × threads
            same = _same_bits(copies, self.values[first, f][:, None])
            same &= self.written[:, f].T == self.written[first, f][:, None]
            if self.bounds is not None:
                same &= self.bounds[:, f].T == self.bounds[first, f][:, None]
            differ = r & ~same
            lanes = np.flatnonzero(differ.any(axis=1))
            if len(lanes):
                k = int(lanes[0])
                return lo + k, int(first[k]), int(np.argmax(differ[k]))
        return None


def _same_bits(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Equal, NaN equal to NaN (two copies holding NaN hold the same value)."""
    same = values == first
    if values.dtype.kind == "f":
        same |= np.isnan(values) & np.isnan(first)
    return same


class ThreadCopies:
    """A private buffer as one statement sees it: lane k reaches the threads rows[k]
    (exactly one where the statement runs per thread). Reads and writes take one flat
    position per lane, or any number of them for a single lane (rows of one row)."""

    def __init__(self, storage: PrivateStorage, rows: np.ndarray):
        self.storage = storage
        self.buffer = storage.buffer
        self.rows = rows

    def lane(self, k: int) -> "ThreadCopies":
        return ThreadCopies(self.storage, self.rows[k:k + 1])

    def flat(self, indices: list[np.ndarray], span: Span, code: str = "R102") -> np.ndarray:
        return flat_positions(self.buffer, indices, span, code)

    def point(self, key: int) -> str:
        """The element of a race key (race_keys), as check_race names it."""
        flat = int(key) % self.buffer.size
        return ", ".join(str(int(i)) for i in np.unravel_index(flat, self.buffer.shape))

    def race_keys(self, flat: np.ndarray) -> np.ndarray:
        """Where each lane's store lands, for the race check: its thread's element when
        each lane is one thread; the element itself when lanes stand for all threads
        (two iterations storing different values to one element race in every copy)."""
        if (self.rows.sum(axis=1) == 1).all():
            return np.argmax(self.rows, axis=1) * self.buffer.size + flat
        return flat

    def _per_lane(self, flat: np.ndarray) -> np.ndarray:
        if len(self.rows) == len(flat):
            return self.rows
        return np.broadcast_to(self.rows[:1], (len(flat), self.rows.shape[1]))

    def read(self, flat: np.ndarray, span: Span, stmt_span: Span | None = None) -> Val:
        """Each lane's element from its threads' copies, which must agree (Diverges)
        and have been written (R502)."""
        s = self.storage
        rows = self._per_lane(flat)
        found = s.differing(flat, rows)
        if found is not None:
            lane, first, second = found
            raise Diverges(self.buffer, int(flat[lane]), first, second)
        thread = np.argmax(rows, axis=1)
        missing = ~s.written[thread, flat]
        if missing.any():
            k = int(np.argmax(missing))
            notes = [Note("in this statement", stmt_span)] if stmt_span else []
            at = ", ".join(str(int(i)) for i in np.unravel_index(int(flat[k]),
                                                                 self.buffer.shape))
            raise DiagnosticError(error(
                "R502", f"read of {self.buffer.name}[{at}] by thread {int(thread[k])}, "
                f"which never wrote it (local memory starts uninitialized)", span, *notes))
        b = None if s.bounds is None else s.bounds[thread, flat]
        if b is not None and not b.any():
            b = None
        return Val(s.values[thread, flat], self.buffer.dtype, b)

    def write(self, flat: np.ndarray, val: Val) -> None:
        """Lane k's value into element flat[k] of every copy its threads hold."""
        s = self.storage
        rows = self._per_lane(flat)
        lane, thread = np.nonzero(rows)
        where = flat[lane]
        s.values[thread, where] = self.buffer.dtype.quantize(val.v)[lane]
        if val.b is not None and val.b.any():
            if s.bounds is None:
                s.bounds = np.zeros(s.values.shape)
            s.bounds[thread, where] = val.b[lane]
        elif s.bounds is not None:
            s.bounds[thread, where] = 0.0
        s.written[thread, where] = True

    def write_all(self, values: np.ndarray, bounds: np.ndarray | None) -> None:
        self.lane(0).write(np.arange(self.buffer.size),
                           Val(values.reshape(-1), self.buffer.dtype,
                               None if bounds is None else bounds.reshape(-1)))

    def uncertain_everywhere(self) -> None:
        """A store through an uncertain index could have landed anywhere in the copies
        it writes."""
        s = self.storage
        if s.bounds is None:
            s.bounds = np.zeros(s.values.shape)
        s.bounds[self.rows.any(axis=0)] = np.inf


def diverging_read(exc: Diverges, span: Span, where: str) -> DiagnosticError:
    """The refusal of a read of differing private copies where running the statement
    once per thread has no meaning (`where` says why)."""
    s = exc.buffer
    at = ", ".join(str(int(i)) for i in np.unravel_index(exc.flat, s.shape))
    first, second = exc.threads
    return DiagnosticError(error(
        "R100", f"read of thread-private {s.name}[{at}] {where}, where the threads' copies "
        f"differ (threads {first} and {second}): which thread's copy it means is a "
        f"physical choice", span))
