"""Shared memory of one block: the kernel's shared buffers and a reducer's workspace,
with the happens-before bookkeeping that finds races (docs/design.md §12).

Every shared buffer of the kernel body has a RaceTracker over the block's one Clock,
which counts the block's steps (one per statement executed) and the barriers the plan
places (spec.physical.BodyBarriers); a workspace has a clock of its own, advanced by its
collective's steps and named barriers. Each access names its statement (a site of the
clock), so a race names both accesses.

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
    first_span: object = None    # their statements (Clock.note), None when not noted
    second_span: object = None


class Clock:
    """The steps and barriers that order the accesses of one block's shared memory."""

    def __init__(self, threads: int):
        self.threads = threads
        self.now = 0
        self.barriers: list[tuple[int, np.ndarray | None]] = []   # (time, member mask)
        self.last_full = -1          # the time of the newest barrier of every thread
        self.spans: dict[int, object] = {}     # time -> the statement accessing then

    def tick(self) -> None:
        """A new step: accesses after this are later than everything before."""
        self.now += 1

    def barrier(self, arrived: np.ndarray) -> None:
        members = np.zeros(self.threads, dtype=bool)
        members[arrived] = True
        self.tick()
        # None: every thread of the block passed it (then membership needs no lookup)
        full = bool(members.all())
        self.barriers.append((self.now, None if full else members))
        if full:
            self.last_full = self.now

    def note(self, span) -> None:
        """The statement whose accesses the current step makes (a step is one
        statement), for a race's message."""
        self.spans[self.now] = span


class RaceTracker:
    def __init__(self, words: int, threads: int, clock: Clock | None = None):
        self.clock = clock if clock is not None else Clock(threads)
        self.write_thread = np.full(words, -1, dtype=np.int64)
        self.write_time = np.full(words, -1, dtype=np.int64)
        self.read_thread = np.full(words, -1, dtype=np.int64)
        self.read_time = np.full(words, -1, dtype=np.int64)
        # the newest write and read of any word: older than the newest barrier of every
        # thread, no access since can race with them, and the check is skipped
        self.last_write = self.last_read = -1

    def tick(self) -> None:
        self.clock.tick()

    def barrier(self, arrived: np.ndarray) -> None:
        self.clock.barrier(arrived)

    def _unordered(self, before: np.ndarray, when: np.ndarray, addrs: np.ndarray,
                   after: np.ndarray) -> np.ndarray:
        """The positions (ascending) of accesses by threads `after` to `addrs` not
        ordered after the earlier access to their address, by `before` at time
        when[address] (-1: none). The same thread, or no earlier access, settles most
        of them; only the rest are tested against the barriers, newest first, until
        none is left."""
        pending = np.flatnonzero((before >= 0) & (before != after))
        if not len(pending):
            return pending
        times = when[addrs[pending]]
        for time, members in reversed(self.clock.barriers):
            ordered = time > times
            if members is not None:
                ordered &= members[before[pending]] & members[after[pending]]
            pending, times = pending[~ordered], times[~ordered]
            if not len(pending):
                break
        return pending

    def read(self, threads: np.ndarray, addrs: np.ndarray) -> Race | None:
        race = None
        if self.last_write >= self.clock.last_full:
            before = self.write_thread[addrs]
            bad = self._unordered(before, self.write_time, addrs, threads)
            race = self._first(bad, addrs, before, threads, "write/read", self.write_time)
        self.read_thread[addrs] = threads
        self.read_time[addrs] = self.last_read = self.clock.now
        return race

    def write(self, threads: np.ndarray, addrs: np.ndarray) -> Race | None:
        """Checks against earlier steps; two writers within this step are
        `same_step`'s business (static per step, so the caller computes it once)."""
        race = None
        for prev, when, last, kind in (
                (self.write_thread, self.write_time, self.last_write, "write/write"),
                (self.read_thread, self.read_time, self.last_read, "read/write")):
            if race is None and last >= self.clock.last_full:
                before = prev[addrs]
                bad = self._unordered(before, when, addrs, threads)
                race = self._first(bad, addrs, before, threads, kind, when)
        self.write_thread[addrs] = threads
        self.write_time[addrs] = self.last_write = self.clock.now
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

    def _first(self, bad: np.ndarray, addrs, before, after, kind, when) -> Race | None:
        """The race at the first of the unordered positions `bad`, if any."""
        if not len(bad):
            return None
        i = bad[0]
        spans = self.clock.spans
        return Race(int(addrs[i]), int(before[i]), int(after[i]), kind,
                    spans.get(int(when[addrs[i]])), spans.get(self.clock.now))


class SharedBuffer:
    """An ordinary shared buffer: values, which elements were ever written, and its
    accesses' order (`races`, over the block's clock)."""

    def __init__(self, size: int, np_dtype: np.dtype, clock: Clock):
        self.values = np.zeros(size, dtype=np_dtype)
        self.written = np.zeros(size, dtype=bool)
        self.races = RaceTracker(size, clock.threads, clock)
        # per element, the asynchronous copies (a pipeline's cp.async) that will write
        # it and have not landed
        self.pending = np.zeros(size, dtype=np.int32)
