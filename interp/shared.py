"""Shared memory of one block: the kernel's shared buffers and a reducer's workspace,
with the happens-before bookkeeping that finds races (DESIGN §4).

Two accesses to one address by different threads are ordered only by a barrier instance
that completed after the first access and that both threads passed. A write that is not
ordered after the previous write or read of another thread, or a read not ordered after
the previous write, is a race (R504). Each address remembers its last writer and its
last reader (one of them, when several threads read it at once: the check then sees
the latest, which is the usual broadcast pattern)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Race:
    address: int
    first: int          # the thread of the earlier access
    second: int         # the thread of the later one
    kind: str           # "write/write" | "read/write" | "write/read"


class RaceTracker:
    def __init__(self, words: int, threads: int):
        self.threads = threads
        self.write_thread = np.full(words, -1, dtype=np.int64)
        self.write_time = np.full(words, -1, dtype=np.int64)
        self.read_thread = np.full(words, -1, dtype=np.int64)
        self.read_time = np.full(words, -1, dtype=np.int64)
        self.barriers: list[tuple[int, np.ndarray]] = []   # (time, member mask)
        self.now = 0

    def tick(self) -> None:
        """A new step: accesses after this are later than everything before."""
        self.now += 1

    def barrier(self, arrived: np.ndarray) -> None:
        members = np.zeros(self.threads, dtype=bool)
        members[arrived] = True
        self.tick()
        self.barriers.append((self.now, members))

    def _unordered(self, before: np.ndarray, when: np.ndarray, after: np.ndarray):
        ok = (before < 0) | (before == after)
        safe = np.where(before < 0, 0, before)
        for time, members in self.barriers:
            ok |= (time > when) & members[safe] & members[after]
        return ~ok

    def read(self, threads: np.ndarray, addrs: np.ndarray) -> Race | None:
        bad = self._unordered(self.write_thread[addrs], self.write_time[addrs], threads)
        race = self._first(bad, addrs, self.write_thread[addrs], threads, "write/read")
        self.read_thread[addrs] = threads
        self.read_time[addrs] = self.now
        return race

    def write(self, threads: np.ndarray, addrs: np.ndarray) -> Race | None:
        """Checks against earlier steps; two writers within this step are
        `same_step`'s business (static per step, so the caller computes it once)."""
        race = None
        for prev, when, kind in ((self.write_thread, self.write_time, "write/write"),
                                 (self.read_thread, self.read_time, "read/write")):
            if race is None:
                bad = self._unordered(prev[addrs], when[addrs], threads)
                race = self._first(bad, addrs, prev[addrs], threads, kind)
        self.write_thread[addrs] = threads
        self.write_time[addrs] = self.now
        return race

    @staticmethod
    def same_step(threads: np.ndarray, addrs: np.ndarray) -> Race | None:
        """Two different threads writing one address in the same step."""
        order = np.lexsort((threads, addrs))
        a, t = addrs[order], threads[order]
        clash = np.nonzero((a[1:] == a[:-1]) & (t[1:] != t[:-1]))[0]
        if not len(clash):
            return None
        i = clash[0]
        return Race(int(a[i]), int(t[i]), int(t[i + 1]), "write/write")

    @staticmethod
    def _first(bad, addrs, before, after, kind) -> Race | None:
        hit = np.nonzero(bad)[0]
        if not len(hit):
            return None
        i = hit[0]
        return Race(int(addrs[i]), int(before[i]), int(after[i]), kind)


class SharedBuffer:
    """An ordinary shared buffer: values and which elements were ever written."""

    def __init__(self, size: int, np_dtype: np.dtype):
        self.values = np.zeros(size, dtype=np_dtype)
        self.written = np.zeros(size, dtype=bool)
