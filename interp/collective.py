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
R502; conflicting workspace accesses between barriers are R504."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from spec.indexexpr import IndexExpr
from spec.physical import K, S, T, Barrier, FinalizePlan, FromWorkspace, Guard, \
    ReduceWorkspace, Shuffle, ToWorkspace
from spec.source import Span

from .shared import Race, RaceTracker
from .violations import Violations, threads_text

WARP = 32


@dataclass
class Channel:
    cells: np.ndarray                      # [participants, slots, ...]
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray]
    workspace: np.ndarray | None = None    # [words, ...], made by the exchange


@dataclass
class Checks:
    """What the checked run needs beyond the data: poison, races, where to report."""
    written: np.ndarray                    # [participants, slots] partial not poisoned
    races: RaceTracker
    violations: Violations
    span: Span
    what: str                              # "finalize of acc (line 20)"


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
        for chunk in self.plan.chunks:
            slots = np.arange(chunk.first, chunk.first + chunk.count, dtype=np.int64)
            for step in chunk.steps:
                if self.checks is not None:
                    self.checks.races.tick()
                run = getattr(self, "_" + type(step).__name__.lower())
                run(step, slots)

    # ------------------------------------------------------------------ helpers

    def active(self, guards: tuple[Guard, ...]) -> np.ndarray:
        """Relative threads satisfying every guard."""
        keep = np.ones(self.count, dtype=bool)
        for g in guards:
            value = np.broadcast_to(g.expr.evaluate({T: self.t}), (self.count,))
            keep &= (value == g.value) if g.op == "==" else (value < g.value)
        return self.t[keep]

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

    def addresses(self, expr: IndexExpr, env: dict, shape) -> np.ndarray | None:
        addrs = np.broadcast_to(expr.evaluate(env), shape).astype(np.int64)
        bad = (addrs < 0) | (addrs >= self.words)
        if bad.any():
            if self.checks is not None:
                self.report("R504", f"workspace address {int(addrs[bad][0])} is outside "
                            f"the {self.words}-word workspace", key="bounds")
            return None
        return addrs

    def poisoned(self, rel: np.ndarray, slots: np.ndarray, what: str) -> None:
        """R502 if any partial P[rel, slots] is poisoned."""
        if self.checks is None:
            return
        ok = self.checks.written[np.ix_(rel, slots)]
        if not ok.all():
            bad_t, bad_s = np.nonzero(~ok)
            self.report("R502", f"{what} reads the poisoned partial slot "
                        f"{int(slots[bad_s[0]])} of {threads_text(rel[bad_t] + self.offset)}",
                        key=("poison", what))

    def unwritten(self, addrs: np.ndarray, readers: np.ndarray, what: str) -> bool:
        """R502 for workspace words never written in this finalize; True if any."""
        missing = ~self.ws_written[addrs]
        if missing.any() and self.checks is not None:
            where = np.nonzero(missing)
            self.report("R502", f"{what}: thread {int(readers[where][0]) + self.offset} "
                        f"reads workspace word {int(addrs[where][0])}, which this finalize "
                        "never wrote", key=("unwritten", what))
        return bool(missing.any())

    # ------------------------------------------------------------------ steps

    def _shuffle(self, step: Shuffle, slots: np.ndarray) -> None:
        rel = self.active(step.guards)
        absolute = rel + self.offset
        partner = (absolute ^ step.mask) - self.offset
        member = np.zeros(self.threads, dtype=bool)
        member[absolute] = True
        warps = np.unique(absolute // WARP)
        lanes = (warps[:, None] * WARP + np.arange(WARP)).reshape(-1)
        inactive = lanes[(lanes >= self.threads) | ~member[np.minimum(lanes, self.threads - 1)]]
        if len(inactive) and self.checks is not None:
            self.report("R501", f"shfl_xor(mask {step.mask}) with inactive lanes: "
                        f"{threads_text(inactive)} do not execute it, but their warps "
                        f"({', '.join(str(int(w)) for w in warps)}) do",
                        key=("shuffle", step.mask))
        # a lane whose partner is inactive reads an undefined value: it keeps its own
        ok = (partner >= 0) & (partner < self.count)
        ok[ok] &= member[partner[ok] + self.offset]
        rel, partner = rel[ok], partner[ok]
        self.poisoned(partner, slots, f"shfl_xor(mask {step.mask})")
        index = np.ix_(rel, slots)
        for ch in self.channels:
            theirs = ch.cells[np.ix_(partner, slots)]
            ch.cells[index] = ch.combine(ch.cells[index], theirs)
        if self.checks is not None:
            w = self.checks.written
            w[index] = w[index] & w[np.ix_(partner, slots)]

    def _barrier(self, step: Barrier, slots: np.ndarray) -> None:
        arrived = self.active(step.guards) + self.offset
        if self.checks is None:
            return
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

    def _toworkspace(self, step: ToWorkspace, slots: np.ndarray) -> None:
        rel = self.active(step.guards)
        if not len(rel):
            return
        shape = (len(rel), len(slots))
        addrs = self.addresses(step.addr, {T: rel[:, None], S: slots[None, :]}, shape)
        if addrs is None:
            return
        self.poisoned(rel, slots, "a store to the workspace")
        index = np.ix_(rel, slots)
        writers = np.broadcast_to(rel[:, None], shape).reshape(-1)
        flat = addrs.reshape(-1)
        if self.checks is not None:
            self.race(self.checks.races.write(writers + self.offset, flat), step)
        for ch in self.channels:
            ch.workspace[flat] = ch.cells[index].reshape((-1,) + ch.cells.shape[2:])
        self.ws_written[flat] = True

    def _reduceworkspace(self, step: ReduceWorkspace, slots: np.ndarray) -> None:
        rel = self.active(step.guards)
        if not len(rel):
            return
        k = np.arange(step.terms, dtype=np.int64)
        shape = (len(rel), step.terms)
        src = self.addresses(step.src, {T: rel[:, None], K: k[None, :]}, shape)
        dst = self.addresses(step.dst, {T: rel}, (len(rel),))
        if src is None or dst is None:
            return
        readers = np.broadcast_to(rel[:, None], shape)
        complete = ~self.unwritten(src, readers, "a workspace reduction")
        if self.checks is not None:
            races = self.checks.races
            self.race(races.read(readers.reshape(-1) + self.offset, src.reshape(-1)), step)
            self.race(races.write(rel + self.offset, dst), step)
        for ch in self.channels:
            acc = ch.workspace[src[:, 0]]
            for term in range(1, step.terms):
                acc = ch.combine(acc, ch.workspace[src[:, term]])
            ch.workspace[dst] = acc
        self.ws_written[dst] = complete or self.ws_written[src].all(axis=1)

    def _fromworkspace(self, step: FromWorkspace, slots: np.ndarray) -> None:
        rel = self.active(step.guards)
        if not len(rel):
            return
        k = np.arange(step.terms, dtype=np.int64)
        shape = (len(rel), len(slots), step.terms)
        addrs = self.addresses(step.addr, {T: rel[:, None, None], S: slots[None, :, None],
                                           K: k[None, None, :]}, shape)
        if addrs is None:
            return
        readers = np.broadcast_to(rel[:, None, None], shape)
        self.unwritten(addrs, readers, "a load from the workspace")
        if self.checks is not None:
            self.race(self.checks.races.read(readers.reshape(-1) + self.offset,
                                             addrs.reshape(-1)), step)
        index = np.ix_(rel, slots)
        for ch in self.channels:
            acc = ch.workspace[addrs[..., 0]]
            for term in range(1, step.terms):
                acc = ch.combine(acc, ch.workspace[addrs[..., term]])
            ch.cells[index] = acc
        if self.checks is not None:
            self.checks.written[index] = self.ws_written[addrs].all(axis=-1)
