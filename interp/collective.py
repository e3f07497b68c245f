"""The finalize collective: a FinalizePlan's chunks of steps (spec.physical) run on the
partials of one block, every participant at once.

What travels is a list of `Channel`s, each an array `[participant, slot, ...]` with its
own combine: the reducer's values (the monoid), the accounting id-sums (wrapping add)
and counts (add) — or, when accounting replays an output to name a contribution, one
count vector per partial (add). Every step moves every channel the same way, so the
accounting sees exactly the data flow the values see.

Checks (only on the checked run, `Checks` given): a shuffle needs all 32 lanes of each
warp it touches (R501); a named barrier completes only when exactly `count` threads
arrive (R500); a poisoned partial or a workspace word this finalize never wrote is
R502; conflicting workspace accesses between barriers are R504; a workspace address
outside [0, words) or a chunk slot outside the partial array is R505 (the step, or the
part of the chunk, is then not executed: on a GPU it would touch another allocation)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from verify_reducer.spec.physical import Barrier, FinalizePlan, FromWorkspace, \
    ReduceWorkspace, Shuffle, ToWorkspace
from verify_reducer.spec.source import Span
from verify_reducer.spec.step_cells import active, load_words, reduce_words, store_words

from .shared import Race, RaceTracker
from .violations import Violations, threads_text

WARP = 32


@dataclass
class Channel:
    cells: np.ndarray                      # [participants, slots, ...]
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray]
    # combine of terms along axis `axis`, left to right; None: term by term
    fold: Callable[[np.ndarray, int], np.ndarray] | None = None
    workspace: np.ndarray | None = None    # [words, ...], made by the exchange

    def reduce(self, terms: np.ndarray, axis: int) -> np.ndarray:
        if self.fold is not None:
            return self.fold(terms, axis)
        terms = np.moveaxis(terms, axis, 0)
        acc = terms[0]
        for term in terms[1:]:
            acc = self.combine(acc, term)
        return acc


def add_fold(terms: np.ndarray, axis: int) -> np.ndarray:
    """A wrapping integer sum of terms (ids, counts): any order gives the same bits."""
    return np.add.reduce(terms, axis=axis, dtype=terms.dtype)


@dataclass
class Checks:
    """What the checked run needs beyond the data: poison, races, where to report."""
    written: np.ndarray                    # [participants, slots] partial not poisoned
    races: RaceTracker
    violations: Violations
    span: Span
    what: str                              # "finalize of acc (line 20)"
    reducer: str                           # names the arrays: acc_partial, acc_workspace


@dataclass
class _Where:
    """A step's static geometry in one chunk — who takes part, which words, which
    lanes are missing — the same in every block, so computed once per step."""
    rel: np.ndarray                        # active participants (relative)
    rows: object                           # rel as an index: slice(None) when everyone
    addrs: np.ndarray | None = None        # the step's word addresses (None: out of range)
    bad: str | None = None                 # the first address outside: "read W[9] by ..."
    partner: np.ndarray | None = None      # shuffle: the lanes read, per row of rel
    inactive: np.ndarray | None = None     # shuffle: lanes of touched warps left out
    warps: np.ndarray | None = None
    same_step: Race | None = None          # two threads storing one word in this step


@dataclass(frozen=True)
class _At:
    """Where a step runs, to name an access in a message."""
    step: object
    index: int                             # its position in the chunk
    first: int
    count: int
    threads: np.ndarray                    # absolute, per row of the addresses
    slots: np.ndarray
    terms: np.ndarray

    def describe(self, verb: str, addrs: np.ndarray, bad: np.ndarray, axes: str) -> str:
        """`read {ws}[1060] by thread 0 (slot 2, chunk slots 0..3, step 3:
        FromWorkspace)` for the first address marked bad; axes names the array's axes
        (t: thread, s: slot, k: term)."""
        pos = tuple(int(p) for p in np.argwhere(bad)[0])
        axis = dict(zip(axes, pos))
        where = []
        if "s" in axis:
            where.append(f"slot {int(self.slots[axis['s']])}")
        if "k" in axis:
            where.append(f"term {int(self.terms[axis['k']])}")
        where.append(f"chunk slots {self.first}..{self.first + self.count - 1}")
        where.append(f"step {self.index}: {type(self.step).__name__}")
        return (f"{verb} {{ws}}[{int(addrs[pos])}] by thread "
                f"{int(self.threads[axis['t']])} ({', '.join(where)})")


# Where each step of a chunk acts, by the step's value and the collective's geometry:
# the same at every block and epoch (and in every plan with an equal step). Bounded: a
# process that simulates many programs keeps only the recent ones.
_WHERE: dict = {}


class Exchange:
    def __init__(self, plan: FinalizePlan, participants: tuple[int, int], threads: int,
                 words: int, channels: list[Channel], checks: Checks | None = None):
        self.plan = plan
        self.offset, self.count = participants
        self.threads = threads
        self.channels = channels
        self.checks = checks
        self.t = np.arange(self.count, dtype=np.int64)
        self.words = words
        for ch in channels:
            ch.workspace = np.zeros((words,) + ch.cells.shape[2:], dtype=ch.cells.dtype)
        # which workspace words this finalize wrote: stale words of an earlier
        # collective are as good as uninitialized for this one
        self.ws_written = np.zeros(words, dtype=bool)

    def run(self) -> None:
        for number, chunk in enumerate(self.plan.chunks):
            first, count = self.inside_partials(number, chunk.first, chunk.count)
            if count <= 0:
                continue
            slots = slice(first, first + count)
            for index, step in enumerate(chunk.steps):
                if self.checks is not None:
                    self.checks.races.tick()
                where = self.where(step, index, first, count)
                run = getattr(self, "_" + type(step).__name__.lower())
                run(step, slots, where)

    def inside_partials(self, number: int, first: int, count: int) -> tuple[int, int]:
        """The part of a chunk's slots [first, first + count) inside the partial array
        (R505 for the rest: the renderer's loop over them would run past it)."""
        slots = self.channels[0].cells.shape[1]
        low, high = max(first, 0), min(first + count, slots)
        if (low, high) != (first, first + count) and self.checks is not None:
            bad = first if first < 0 or first >= slots else slots
            everyone = np.arange(self.offset, self.offset + self.count)
            self.report("R505", f"chunk {number} (slots {first}..{first + count - 1}) "
                        f"by thread {self.offset} reaches partial slot {bad}, outside "
                        f"{self.checks.reducer}_partial[{slots}] (slots per thread; "
                        f"{threads_text(everyone)})", key=("chunk", number))
        return low, high - low

    # ------------------------------------------------------------------ geometry

    def where(self, step, index: int, first: int, count: int) -> _Where:
        key = (step, index, first, count, self.offset, self.count, self.threads, self.words)
        found = _WHERE.get(key)
        if found is not None:
            return found
        rel = active(step.guards, self.count)
        rows = slice(None) if len(rel) == self.count else rel
        where = _Where(rel, rows)
        slots = np.arange(first, first + count, dtype=np.int64)
        k = np.arange(getattr(step, "terms", 1), dtype=np.int64)
        at = _At(step, index, first, count, rel + self.offset, slots, k)
        if isinstance(step, Shuffle):
            self.shuffle_lanes(step, where)
        elif isinstance(step, ToWorkspace):
            where.addrs = self.inside(store_words(step, rel, slots), where, at, "write",
                                      "ts")
            if where.addrs is not None:
                writers = np.repeat(rel + self.offset, count)
                where.same_step = RaceTracker.same_step(writers, where.addrs.reshape(-1))
        elif isinstance(step, ReduceWorkspace):
            words, written = reduce_words(step, rel)
            src = self.inside(words, where, at, "read", "tk")
            dst = self.inside(written, where, at, "write", "t")
            if src is not None and dst is not None:
                where.addrs = (src, dst)
                where.same_step = RaceTracker.same_step(rel + self.offset, dst)
        elif isinstance(step, FromWorkspace):
            where.addrs = self.inside(load_words(step, rel, slots), where, at, "read",
                                      "tsk")
        if len(_WHERE) > 4096:
            _WHERE.clear()
        _WHERE[key] = where
        return where

    def inside(self, addrs: np.ndarray, where: _Where, at: "_At", verb: str, axes: str):
        """The step's addresses over its (thread, slot, term) axes (spec.step_cells);
        None, with the first one outside the workspace described in where.bad, if any
        is."""
        bad = (addrs < 0) | (addrs >= self.words)
        if bad.any():
            if where.bad is None:
                where.bad = at.describe(verb, addrs, bad, axes)
            return None
        return addrs

    def shuffle_lanes(self, step: Shuffle, where: _Where) -> None:
        """The lanes a shuffle reads, and the lanes of its warps that do not run it."""
        absolute = where.rel + self.offset
        member = np.zeros(self.threads, dtype=bool)
        member[absolute] = True
        where.warps = np.unique(absolute // WARP)
        lanes = (where.warps[:, None] * WARP + np.arange(WARP)).reshape(-1)
        where.inactive = lanes[(lanes >= self.threads) |
                               ~member[np.minimum(lanes, self.threads - 1)]]
        partner = (absolute ^ step.mask) - self.offset
        # a lane whose partner is inactive reads an undefined value: it keeps its own
        ok = (partner >= 0) & (partner < self.count)
        ok[ok] &= member[partner[ok] + self.offset]
        where.rel, where.partner = where.rel[ok], partner[ok]
        where.rows = slice(None) if len(where.rel) == self.count and \
            (where.partner == (self.t ^ step.mask)).all() else where.rel

    # ------------------------------------------------------------------ reports

    def report(self, code: str, message: str, key=None) -> None:
        c = self.checks
        c.violations.add(code, f"{c.what}: {message}", c.span, key=key)

    def race(self, race: Race | None, step) -> None:
        if race is None or self.checks is None:
            return
        self.report("R504", f"shared-memory race on workspace word {race.address}: "
                    f"{race.kind} by threads {race.first} and {race.second} with no "
                    f"barrier both passed in between ({type(step).__name__})",
                    key=("race", race.kind))

    def out_of_range(self, where: _Where) -> bool:
        if where.addrs is not None:
            return False
        if where.bad is not None and self.checks is not None:
            ws = f"{self.checks.reducer}_workspace"
            self.report("R505", f"workspace {where.bad.format(ws=ws)} is outside "
                        f"{ws}[{self.words}]", key="bounds")
        return True

    def poisoned(self, rows, slots: slice, what: str) -> None:
        """R502 if any partial P[rows, slots] is poisoned."""
        if self.checks is None:
            return
        ok = self.checks.written[rows, slots]
        if not ok.all():
            bad_t, bad_s = np.nonzero(~ok)
            rel = self.t[rows][bad_t]
            self.report("R502", f"{what} reads the poisoned partial slot "
                        f"{slots.start + int(bad_s[0])} of {threads_text(rel + self.offset)}",
                        key=("poison", what))

    def unwritten(self, addrs: np.ndarray, readers: np.ndarray, what: str) -> bool:
        """R502 for workspace words never written in this finalize; True if any."""
        missing = ~self.ws_written[addrs]
        if not missing.any():
            return False
        if self.checks is not None:
            where = np.nonzero(missing)
            self.report("R502", f"{what}: thread {int(readers[where[0][0]]) + self.offset} "
                        f"reads workspace word {int(addrs[where][0])}, which this finalize "
                        "never wrote", key=("unwritten", what))
        return True

    # ------------------------------------------------------------------ steps

    def _shuffle(self, step: Shuffle, slots: slice, where: _Where) -> None:
        if len(where.inactive) and self.checks is not None:
            self.report("R501", f"shfl_xor(mask {step.mask}) with inactive lanes: "
                        f"{threads_text(where.inactive)} do not execute it, but their "
                        f"warps ({', '.join(str(int(w)) for w in where.warps)}) do",
                        key=("shuffle", step.mask))
        self.poisoned(where.partner, slots, f"shfl_xor(mask {step.mask})")
        for ch in self.channels:
            theirs = ch.cells[where.partner, slots]
            ch.cells[where.rows, slots] = ch.combine(ch.cells[where.rows, slots], theirs)
        if self.checks is not None:
            w = self.checks.written
            w[where.rows, slots] = w[where.rows, slots] & w[where.partner, slots]

    def _barrier(self, step: Barrier, slots: slice, where: _Where) -> None:
        if self.checks is None:
            return
        arrived = where.rel + self.offset
        if len(arrived) != step.count:
            everyone = np.arange(self.offset, self.offset + self.count)
            missing = np.setdiff1d(everyone, arrived)
            if len(arrived) < step.count:
                how = (f"only {len(arrived)} arrive ({threads_text(arrived)}); it never "
                       f"completes (deadlock)")
                if len(missing):
                    how += f"; {threads_text(missing)} of the participants never arrive"
            else:
                how = (f"{len(arrived)} arrive ({threads_text(arrived)}): it completes "
                       f"with the first {step.count} and the rest wait on the next "
                       "barrier (participant mismatch)")
            self.report("R500", f"named barrier {step.id} expects {step.count} threads "
                        f"but {how}", key=("barrier", step.id, step.count))
        # synchronize the threads that did arrive, so one fault is reported once
        # rather than again as races downstream
        self.checks.races.barrier(arrived)

    def _toworkspace(self, step: ToWorkspace, slots: slice, where: _Where) -> None:
        if not len(where.rel) or self.out_of_range(where):
            return
        self.poisoned(where.rows, slots, "a store to the workspace")
        flat = where.addrs.reshape(-1)
        if self.checks is not None:
            self.race(where.same_step, step)
            writers = np.repeat(where.rel + self.offset, where.addrs.shape[1])
            self.race(self.checks.races.write(writers, flat), step)
        for ch in self.channels:
            ch.workspace[flat] = ch.cells[where.rows, slots].reshape(
                (-1,) + ch.cells.shape[2:])
        self.ws_written[flat] = True

    def _reduceworkspace(self, step: ReduceWorkspace, slots: slice, where: _Where) -> None:
        if not len(where.rel) or self.out_of_range(where):
            return
        src, dst = where.addrs
        readers = np.repeat(where.rel, step.terms)
        complete = not self.unwritten(src.reshape(-1), readers, "a workspace reduction")
        if self.checks is not None:
            races = self.checks.races
            self.race(races.read(readers + self.offset, src.reshape(-1)), step)
            self.race(where.same_step, step)
            self.race(races.write(where.rel + self.offset, dst), step)
        for ch in self.channels:
            ch.workspace[dst] = ch.reduce(ch.workspace[src], 1)
        # a result word is written only when every word it reduced was
        self.ws_written[dst] = True if complete else self.ws_written[src].all(axis=1)

    def _fromworkspace(self, step: FromWorkspace, slots: slice, where: _Where) -> None:
        if not len(where.rel) or self.out_of_range(where):
            return
        addrs = where.addrs
        readers = np.repeat(where.rel, addrs.shape[1] * addrs.shape[2])
        flat = addrs.reshape(-1)
        self.unwritten(flat, readers, "a load from the workspace")
        if self.checks is not None:
            self.race(self.checks.races.read(readers + self.offset, flat), step)
        single = addrs[..., 0] if step.terms == 1 else None
        for ch in self.channels:
            ch.cells[where.rows, slots] = ch.workspace[single] if single is not None \
                else ch.reduce(ch.workspace[addrs], 2)
        if self.checks is not None:
            self.checks.written[where.rows, slots] = \
                self.ws_written[single] if single is not None \
                else self.ws_written[addrs].all(axis=-1)
