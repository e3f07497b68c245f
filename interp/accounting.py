"""Exactly-once accounting (docs/design.md §12).

Every logical contribution gets a 64-bit id: a hash of its update site, block and
iteration of the T.Parallel, multiplied by an odd number drawn from the site's visit
(the how-many-th time the block runs that statement: serial-loop iterations differ).
Odd multipliers are invertible mod 2^64, so two visits never give one iteration the same
id, and the per-iteration hashes are computed once per site and block. Replicas of one
iteration share the id. Each partial carries beside its value a wrapping sum of the ids that entered it
and their count; every collective step combines them with the value. At finalize every
observed copy of output o must show (Σ ids, count) of exactly the contributions the
sites logically enabled for o — one vector comparison. Only on a mismatch is the output
replayed with one count per partial cell (`replay_counts`), which names the
contribution and how often it entered, omissions (0 times) included."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.physical import FinalizePlan
from verify_reducer.spec.printer import format_expr

from .collective import Channel, Exchange, add_fold

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MASK = (1 << 64) - 1


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer on a uint64 array (wrapping arithmetic)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def iteration_hashes(site: int, block: int, iterations: np.ndarray) -> np.ndarray:
    base = ((site * 0x100000001B3) ^ (block << 24)) & _MASK
    with np.errstate(over="ignore"):
        key = _mix(np.array([base], dtype=np.uint64))[0]
        return _mix(iterations.astype(np.uint64) ^ key)


def _mix_int(x: int) -> int:
    """_mix on one Python int: the per-visit multiplier costs no numpy calls."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def contribution_ids(hashes: np.ndarray, visit: int) -> np.ndarray:
    # uint64 array times uint64 scalar wraps silently, as the id arithmetic must
    return hashes * np.uint64(_mix_int(visit) | 1)


@dataclass
class UpdateEvent:
    """One execution of an update site: what it enabled and where it went."""
    update: ir.ReducerUpdate
    visit: int
    names: tuple[str, ...]                 # iteration variables shown in messages
    values: tuple[np.ndarray, ...]         # their value per enabled lane
    ids: np.ndarray                        # per enabled lane
    outputs: np.ndarray                    # flat output per enabled lane
    replicated: bool                       # lanes may be replicas of one iteration
    cells: np.ndarray                      # per entered lane: its partial cell
    cell_ids: np.ndarray                   # (thread * slots + slot) and its id
    iterations: np.ndarray | None = None   # per enabled lane: its flat loop iteration
    offset: int = 0                        # the storage's participant offset (cells'
                                           # threads are relative to it)
    loop_shape: tuple[int, ...] = (1,)     # the update loop's shape (iterations index it)


@dataclass
class Ledger:
    """One epoch's update events, and from them the expected pair per output."""
    size: int
    events: list[UpdateEvent] = field(default_factory=list)
    expected_ids: np.ndarray | None = None
    expected_counts: np.ndarray | None = None

    def expect(self) -> None:
        """Each enabled iteration once: lanes of one iteration (replicas) share an id,
        so an event whose loop is replicated counts each id once. Visits of one loop
        share their outputs array, so their ids are summed lane by lane first (a
        wrapping sum: any grouping gives the same bits) and scattered once per array."""
        groups: dict[int, tuple[np.ndarray, list[np.ndarray]]] = {}
        for event in self.events:
            if event.replicated and len(event.ids):
                unique, first = np.unique(event.ids, return_index=True)
                ids, outputs = unique, event.outputs[first]
            else:
                ids, outputs = event.ids, event.outputs
            groups.setdefault(id(outputs), (outputs, []))[1].append(ids)
        self.expected_ids = np.zeros(self.size, dtype=np.uint64)
        self.expected_counts = np.zeros(self.size, dtype=np.int64)
        for outputs, id_lists in groups.values():
            lane_sums = id_lists[0] if len(id_lists) == 1 else \
                np.add.reduce(np.stack(id_lists), axis=0, dtype=np.uint64)
            np.add.at(self.expected_ids, outputs, lane_sums)
            self.expected_counts += len(id_lists) * np.bincount(outputs,
                                                                minlength=self.size)

    @property
    def contributions(self) -> int:
        return int(self.expected_counts.sum())


# ----------------------------------------------------------------------------- replay

def replay_counts(ledger: Ledger, plan: FinalizePlan, participants: tuple[int, int],
                  threads: int, words: int, slots: int, observe,
                  batch: int = 256) -> dict[int, int]:
    """How many times each contribution id entered the observed copy after the
    collective: the collective run again with one count vector per partial cell, batch
    cells at a time; observe(channel) reads the copy's count vector (a partial cell, or
    the workspace words a publication combines)."""
    entered_cells = np.concatenate([e.cells for e in ledger.events] or
                                   [np.zeros(0, np.int64)])
    ids = np.concatenate([e.cell_ids for e in ledger.events] or [np.zeros(0, np.uint64)])
    count = participants[1]
    cells, which = np.unique(entered_cells, return_inverse=True)
    multiplicity = np.zeros(len(cells), dtype=np.int64)
    for start in range(0, len(cells), batch):
        part = cells[start:start + batch]
        vectors = np.zeros((count, slots, len(part)), dtype=np.int64)
        vectors[part // slots, part % slots, np.arange(len(part))] = 1
        channel = Channel(vectors, np.add, add_fold)
        Exchange(plan, participants, threads, words, [channel]).run()
        multiplicity[start:start + len(part)] = observe(channel)
    entered = multiplicity[which]
    unique, inverse = np.unique(ids, return_inverse=True)
    totals = np.bincount(inverse, weights=entered, minlength=len(unique))
    return {int(i): int(round(c)) for i, c in zip(unique, totals)}


def wrong_contributions(ledger: Ledger, output: int,
                        counts: dict[int, int]) -> list[tuple[UpdateEvent, int, int]]:
    """(event, lane, times) for every contribution to `output` that did not enter
    exactly once, and every other contribution that entered it at all."""
    wrong, seen = [], set()
    for event in ledger.events:
        for lane in np.nonzero(event.outputs == output)[0]:
            cid = int(event.ids[lane])
            if cid in seen:
                continue
            seen.add(cid)
            times = counts.get(cid, 0)
            if times != 1:
                wrong.append((event, int(lane), times))
    for event in ledger.events:
        for lane in np.nonzero(event.outputs != output)[0]:
            cid = int(event.ids[lane])
            if cid in seen or counts.get(cid, 0) == 0:
                continue
            seen.add(cid)
            wrong.append((event, int(lane), counts[cid]))
    return wrong


def describe(event: UpdateEvent, lane: int, block_text: str) -> str:
    """`contribution x_frag[j] with j=0 (line 14)`."""
    where = ", ".join(f"{n}={int(v[lane])}" for n, v in zip(event.names, event.values))
    text = f"contribution {format_expr(event.update.value)}"
    if where:
        text += f" with {where}"
    return f"{text}{block_text} (line {event.update.span.line})"
