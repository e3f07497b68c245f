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
        """A barrier instance passed by the distinct threads `arrived`."""
        self.tick()
        if len(arrived) == self.threads:
            # None: every thread of the block passed it (membership needs no lookup)
            self.barriers.append((self.now, None))
            self.last_full = self.now
            return
        members = np.zeros(self.threads, dtype=bool)
        members[arrived] = True
        self.barriers.append((self.now, members))

    def note(self, span) -> None:
        """The statement whose accesses the current step makes (a step is one
        statement), for a race's message."""
        self.spans[self.now] = span


class RaceTracker:
    def __init__(self, words: int, threads: int, clock: Clock | None = None):
        self.clock = clock if clock is not None else Clock(threads)
        # per word, the thread and time of its newest write and read (-1: none); one
        # allocation for the four (a pipeline makes its staged buffers afresh per block)
        (self.write_thread, self.write_time,
         self.read_thread, self.read_time) = np.full((4, words), -1, dtype=np.int64)
        # the newest write and read of any word: older than the newest barrier of every
        # thread, no access since can race with them, and the check is skipped
        self.last_write = self.last_read = -1
        # accesses not yet entered into the arrays above, (threads, addrs, time) in
        # order: entered only when a check needs them, dropped once a barrier of every
        # thread orders them all (the usual case: most reads are never entered)
        self.unsettled_writes: list = []
        self.unsettled_reads: list = []

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
        times = when[_positions(addrs)[pending]]
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
        full = self.clock.last_full
        if self.last_write >= full:
            self._settle(self.unsettled_writes, self.write_thread, self.write_time)
            race = self._check(self.write_thread, self.write_time, addrs, threads,
                               "write/read")
        self.last_read = self._defer(self.unsettled_reads, self.last_read, threads, addrs,
                                     self.read_thread, self.read_time)
        return race

    def write(self, threads: np.ndarray, addrs: np.ndarray) -> Race | None:
        """Checks against earlier steps; two writers within this step are
        `same_step`'s business (static per step, so the caller computes it once)."""
        race = None
        full = self.clock.last_full
        if self.last_write >= full:
            self._settle(self.unsettled_writes, self.write_thread, self.write_time)
            race = self._check(self.write_thread, self.write_time, addrs, threads,
                               "write/write")
        if race is None and self.last_read >= full:
            self._settle(self.unsettled_reads, self.read_thread, self.read_time)
            race = self._check(self.read_thread, self.read_time, addrs, threads,
                               "read/write")
        self.last_write = self._defer(self.unsettled_writes, self.last_write, threads,
                                      addrs, self.write_thread, self.write_time)
        return race

    def landed(self, threads: np.ndarray, addrs) -> None:
        """A write checked when it was issued (a cp.async) completes now: later
        accesses are ordered against this time."""
        self.last_write = self._defer(self.unsettled_writes, self.last_write, threads,
                                      addrs, self.write_thread, self.write_time)

    def _defer(self, unsettled: list, last: int, threads, addrs, thread_of, time_of) -> int:
        """Records an access for later; returns its time (the new `last`). Accesses
        older than the newest barrier of every thread are dropped unentered: that
        barrier orders them before everything after it, so no check needs them."""
        if last < self.clock.last_full:
            unsettled.clear()
        unsettled.append((threads, addrs, self.clock.now))
        if len(unsettled) > 32:                  # a long stretch without such a barrier
            self._settle(unsettled, thread_of, time_of)
        return self.clock.now

    @staticmethod
    def _settle(unsettled: list, thread_of: np.ndarray, time_of: np.ndarray) -> None:
        """Enters the recorded accesses into the arrays, in order."""
        for threads, addrs, time in unsettled:
            thread_of[addrs] = threads
            time_of[addrs] = time
        unsettled.clear()

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

    def _check(self, prev: np.ndarray, when: np.ndarray, addrs, threads,
               kind: str) -> Race | None:
        """The first access of threads to addrs unordered with the earlier access
        recorded in (prev, when)."""
        before = prev[addrs]
        return self._first(self._unordered(before, when, addrs, threads), addrs, before,
                           threads, kind, when)

    def _first(self, bad: np.ndarray, addrs, before, after, kind, when) -> Race | None:
        """The race at the first of the unordered positions `bad`, if any."""
        if not len(bad):
            return None
        i = bad[0]
        addrs = _positions(addrs)
        spans = self.clock.spans
        return Race(int(addrs[i]), int(before[i]), int(after[i]), kind,
                    spans.get(int(when[addrs[i]])), spans.get(self.clock.now))


def _positions(addrs: np.ndarray | slice) -> np.ndarray:
    """Word addresses given as an array, or as a slice (a contiguous run: recording it
    is a fast slice assignment; only a check needs the positions)."""
    return np.arange(addrs.start, addrs.stop) if isinstance(addrs, slice) else addrs


class SharedBuffer:
    """An ordinary shared buffer: values, which elements were ever written, and its
    accesses' order (`races`, over the block's clock)."""

    def __init__(self, size: int, np_dtype: np.dtype, clock: Clock):
        self.values = np.zeros(size, dtype=np_dtype)
        self.written = np.zeros(size, dtype=bool)
        self.races = RaceTracker(size, clock.threads, clock)
        # the asynchronous copies (a pipeline's cp.async) issued into it that have not
        # landed, oldest first (empty: no check needed)
        self.outstanding: list[InFlight] = []

    def issue(self, flat, threads: np.ndarray | None, time: int,
              window: tuple[int, int]) -> "InFlight":
        """A cp.async to elements flat (by threads[i] each, None: unnamed) at clock
        time, all inside window [lo, hi) (its stage); it is outstanding until `land`."""
        found = InFlight(flat, threads, time, window)
        self.outstanding.append(found)
        return found

    def land(self, copy: "InFlight") -> None:
        self.outstanding.remove(copy)

    def near(self, window: tuple[int, int]) -> list["InFlight"]:
        """The outstanding cp.async copies whose stage window meets [lo, hi). Hot: every
        shared access in a pipeline asks, and a correct pipeline reads one stage while
        it fills another, so the windows settle nearly every question without touching
        an element."""
        lo, hi = window
        return [c for c in self.outstanding if c.window[0] < hi and lo < c.window[1]]

    def in_flight(self, flat, near: list["InFlight"]) -> tuple[int, "InFlight", int, int] | None:
        """(i, copy, address, j): the first position i of flat (an array or a slice)
        whose address one of the copies `near` (self.near of flat's window) has yet to
        write, as its element j; None when there is none."""
        pending = np.zeros(len(self.values), dtype=bool)
        for copy in near:
            pending[copy.flat] = True
        hits = pending[flat]
        if not hits.any():
            return None
        i = int(np.argmax(hits))
        address = flat.start + i if isinstance(flat, slice) else int(np.ravel(flat)[i])
        for copy in reversed(near):                        # the newest that writes it
            hit = np.flatnonzero(_positions(copy.flat) == address)
            if len(hit):
                return i, copy, address, int(hit[0])
        raise AssertionError("a pending element without an outstanding copy")


@dataclass(eq=False)
class InFlight:
    """One cp.async's elements, issued at clock `time` by threads[i] to flat[i]."""
    flat: object
    threads: np.ndarray | None
    time: int
    window: tuple[int, int]          # [lo, hi): the stage its elements lie in
