"""The collectives' own proof, independent of the simulator: a tiny numpy evaluation of
step sequences on symbolic partials.

Every (thread, slot) partial starts as a count vector: a one-hot of its thread followed
by a one-hot of its slot. Combining adds vectors, so after the steps a partial says how
many times each thread's partial entered it, and from which slots. A correct all-reduce
leaves, in every participant and slot s, exactly one count per member of its group and
only slot s. The evaluator also checks what the simulator would refuse: barrier counts,
full warps at shuffles, workspace bounds, reads of unwritten words, and conflicting
accesses by different threads between two barriers.

`run_chunks` is shared with test_plan.py (which feeds it real values too)."""
from __future__ import annotations

import numpy as np
import pytest

from verify_reducer.codegen.collectives import butterfly, chunk_size, hint_problem, \
    transpose_chunk_limit, transpose_reduce
from verify_reducer.spec.physical import Barrier, FromWorkspace, ReduceWorkspace, Shuffle, ToWorkspace


class _Workspace:
    """Words of vectors, with the accesses of the current barrier interval."""

    def __init__(self, words: int, dim: int):
        self.values = np.zeros((words, dim), dtype=np.int64)
        self.written = np.zeros(words, dtype=bool)
        self.new_interval()

    def new_interval(self):
        self.writers: dict[int, set[int]] = {}
        self.readers: dict[int, set[int]] = {}

    def _bounds(self, addr: int):
        assert 0 <= addr < len(self.values), f"workspace address {addr} out of range"

    def read(self, thread: int, addr: int) -> np.ndarray:
        self._bounds(addr)
        assert self.written[addr], f"thread {thread} reads unwritten W[{addr}]"
        others = self.writers.get(addr, set()) - {thread}
        assert not others, f"race: thread {thread} reads W[{addr}] written by {others}"
        self.readers.setdefault(addr, set()).add(thread)
        return self.values[addr]

    def write(self, thread: int, addr: int, value: np.ndarray) -> None:
        self._bounds(addr)
        others = (self.writers.get(addr, set()) | self.readers.get(addr, set())) - {thread}
        assert not others, f"race: thread {thread} writes W[{addr}] accessed by {others}"
        self.writers.setdefault(addr, set()).add(thread)
        self.values[addr] = value
        self.written[addr] = True


def _active(guards, threads: np.ndarray) -> np.ndarray:
    keep = np.ones(len(threads), dtype=bool)
    for g in guards:
        value = np.broadcast_to(g.expr.evaluate({"t": threads}), threads.shape)
        keep &= (value == g.value) if g.op == "==" else (value < g.value)
    return threads[keep]


def run_chunks(chunks, partials: np.ndarray, workspace_words: int, offset: int = 0,
               publish=None, storage=None):
    """Execute chunks on partials [P, slots, D] (sum as the combine); returns the result:
    the partials, or with a publication (and the storage layout) every storage copy
    replaced by the words the publication combines for its output. Raises
    AssertionError on anything the simulator would report."""
    values = partials.copy()
    count, slots, dim = values.shape
    threads = np.arange(count)
    workspace = _Workspace(max(workspace_words, 1), dim)
    covered = np.zeros(slots, dtype=np.int64)
    for chunk in chunks:
        covered[chunk.first:chunk.first + chunk.count] += 1
        chunk_slots = range(chunk.first, chunk.first + chunk.count)
        for step in chunk.steps:
            active = _active(step.guards, threads)
            if isinstance(step, Barrier):
                assert step.count == len(active), \
                    f"bar.sync {step.id}, {step.count} reached by {len(active)} threads"
                workspace.new_interval()
            elif isinstance(step, Shuffle):
                lanes = (active + offset)
                warps = np.unique(lanes // 32)
                assert len(active) == 32 * len(warps), "shuffle with inactive lanes"
                partner = (lanes ^ step.mask) - offset
                for s in chunk_slots:
                    values[active, s] = values[active, s] + values[partner, s]
            elif isinstance(step, ToWorkspace):
                for t in active:
                    for s in chunk_slots:
                        addr = int(step.addr.evaluate({"t": t, "s": s}))
                        workspace.write(int(t), addr, values[t, s])
            elif isinstance(step, ReduceWorkspace):
                for t in active:
                    total = sum(workspace.read(int(t), int(step.src.evaluate(
                        {"t": t, "k": k}))) for k in range(step.terms))
                    workspace.write(int(t), int(step.dst.evaluate({"t": t})), total)
            elif isinstance(step, FromWorkspace):
                for t in active:
                    for s in chunk_slots:
                        values[t, s] = sum(workspace.read(int(t), int(step.addr.evaluate(
                            {"t": t, "s": s, "k": k}))) for k in range(step.terms))
            else:
                raise AssertionError(f"unknown step {step!r}")
    assert (covered == 1).all(), f"slots covered {covered.tolist()} times"
    if publish is not None:
        _publish(publish, storage, values, workspace)
    return values


def _publish(publish, storage, values: np.ndarray, workspace: "_Workspace") -> None:
    index, _ = storage.inverse()
    for t, s in zip(*np.nonzero(index >= 0)):
        output = np.unravel_index(int(index[t, s]), storage.shape)
        env = {v: int(i) for v, i in zip(publish.index_vars, output)}
        values[t, s] = sum(workspace.read(int(t), int(publish.addr.evaluate(
            dict(env, term=k)))) for k in range(publish.terms))


def symbolic_partials(count: int, slots: int) -> np.ndarray:
    """[P, slots, P + slots]: one-hot of the thread, then one-hot of the slot."""
    out = np.zeros((count, slots, count + slots), dtype=np.int64)
    t, s = np.meshgrid(np.arange(count), np.arange(slots), indexing="ij")
    out[t, s, t] = 1
    out[t, s, count + s] = 1
    return out


def expect_groups(result: np.ndarray, groups: list[np.ndarray]) -> None:
    """Every participant holds, in every slot s, each member of its group once, and only
    slot s's partials."""
    count, slots, _ = result.shape
    for group in groups:
        want_threads = np.zeros(count, dtype=np.int64)
        want_threads[group] = 1
        for t in group:
            for s in range(slots):
                assert (result[t, s, :count] == want_threads).all(), \
                    f"thread {t} slot {s}: counts {result[t, s, :count].tolist()}"
                want_slots = np.zeros(slots, dtype=np.int64)
                want_slots[s] = len(group)
                assert (result[t, s, count:] == want_slots).all(), \
                    f"slots mixed at {t}, {s}"


def all_one_group(count: int) -> list[np.ndarray]:
    return [np.arange(count)]


def butterfly_groups(count: int, width: int, scale: int) -> list[np.ndarray]:
    t = np.arange(count)
    base = t - ((t // scale) % width) * scale
    return [t[base == b] for b in np.unique(base)]


# ----------------------------------------------------------------------------- transpose

@pytest.mark.parametrize("count, slots, chunk", [
    (128, 1, 1), (128, 4, 4), (96, 5, 2), (48, 3, 3), (33, 7, 3), (1, 2, 1), (128, 8, 128),
])
def test_transpose_reduce_combines_every_partial_once(count, slots, chunk):
    chunk = min(chunk, slots, count)
    collective = transpose_reduce(count, slots, chunk, barrier_id=3)
    result = run_chunks(collective.chunks, symbolic_partials(count, slots),
                        collective.workspace_words)
    expect_groups(result, all_one_group(count))


def test_transpose_reduce_barriers_count_every_participant():
    collective = transpose_reduce(96, 4, 2, barrier_id=7)
    barriers = [s for c in collective.chunks for s in c.steps if isinstance(s, Barrier)]
    assert barriers and all((b.id, b.count) == (7, 96) for b in barriers)
    # two per chunk, one closing barrier before the workspace is reused
    assert len(barriers) == 2 * len(collective.chunks) + 1
    assert collective.workspace_words == 96 * 2 + 2


# ----------------------------------------------------------------------------- butterfly

@pytest.mark.parametrize("count, width, scale, offset", [
    (128, 128, 1, 0), (128, 8, 1, 0), (128, 16, 8, 0), (256, 4, 32, 0), (128, 64, 2, 128),
    (96, 32, 1, 0), (96, 2, 16, 0), (64, 8, 2, 16), (48, 16, 1, 0), (128, 1, 1, 0),
])
def test_butterfly_combines_exactly_its_group(count, width, scale, offset):
    slots = 3
    collective = butterfly(width, scale, count, barrier_id=2, slots=slots, chunk=2,
                           offset=offset)
    result = run_chunks(collective.chunks, symbolic_partials(count, slots),
                        collective.workspace_words, offset)
    expect_groups(result, butterfly_groups(count, width, scale))


def test_butterfly_inside_a_warp_is_shuffles_only():
    collective = butterfly(8, 2, 128, barrier_id=1, slots=4)
    steps = [s for c in collective.chunks for s in c.steps]
    assert [s.mask for s in steps] == [2, 4, 8]
    assert all(isinstance(s, Shuffle) for s in steps)
    assert collective.workspace_words == 0


def test_butterfly_across_warps_uses_the_workspace_with_participant_barriers():
    collective = butterfly(128, 1, 256, barrier_id=4, slots=1)
    steps = collective.chunks[0].steps
    assert [s.mask for s in steps if isinstance(s, Shuffle)] == [1, 2, 4, 8, 16]
    reads = [s for s in steps if isinstance(s, FromWorkspace)]
    assert len(reads) == 1 and reads[0].terms == 4
    assert {(s.id, s.count) for s in steps if isinstance(s, Barrier)} == {(4, 256)}


def test_butterfly_refuses_what_it_cannot_reduce():
    with pytest.raises(ValueError, match="power-of-two"):
        butterfly(48, 1, 96, 1, 1)
    with pytest.raises(ValueError, match="tile"):
        butterfly(64, 1, 96, 1, 1)


def test_a_butterfly_over_a_non_power_of_two_count_loses_partials():
    """The canonical plan never uses one: 32-wide groups over 96 threads leave each
    participant with a third of the partials (the #2542 shape of failure)."""
    collective = butterfly(32, 1, 96, 1, 1)
    result = run_chunks(collective.chunks, symbolic_partials(96, 1), 0)
    assert (result[:, 0, :96].sum(axis=1) == 32).all()


# ----------------------------------------------------------------------------- chunks

def test_chunk_size_honours_a_usable_hint_and_balances_otherwise():
    assert chunk_size(32, 63, hint=4) == 4
    assert chunk_size(32, 63, hint=1000) == 32         # one chunk holds everything
    assert chunk_size(32, 31) == 16                     # two even chunks, not 31 + 1
    assert chunk_size(256, 64, hint=200) == 64          # unusable hint: the default
    assert hint_problem(200, 256, 64) and hint_problem(0, 4, 4)
    assert hint_problem(None, 4, 4) is None


def test_transpose_chunk_limit_keeps_one_reducer_per_slot_and_the_workspace_small():
    assert transpose_chunk_limit(4, 4) == 4
    assert transpose_chunk_limit(128, 4) == 64
    assert transpose_chunk_limit(1024, 8) == 4


# ----------------------------------------------------------------------------- the checker

def _without(chunks, index: int):
    """The chunks with step `index` of the first chunk removed."""
    first = chunks[0]
    steps = first.steps[:index] + first.steps[index + 1:]
    return (type(first)(first.first, first.count, steps),) + tuple(chunks[1:])


@pytest.mark.parametrize("fault, message", [
    ("no barrier before the reduce", "race"),
    ("no barrier before the broadcast", "race"),
    ("a chunk dropped", "covered"),
    ("wrong barrier count", "reached by"),
])
def test_the_checker_catches_planted_faults(fault, message):
    collective = transpose_reduce(64, 4, 2, barrier_id=1)
    chunks = collective.chunks
    if fault == "no barrier before the reduce":
        chunks = _without(chunks, 1)
    elif fault == "no barrier before the broadcast":
        chunks = _without(chunks, 3)
    elif fault == "a chunk dropped":
        chunks = chunks[:1]
    else:
        first = chunks[0]
        steps = tuple(Barrier(1, 128) if isinstance(s, Barrier) else s for s in first.steps)
        chunks = (type(first)(first.first, first.count, steps),) + chunks[1:]
    with pytest.raises(AssertionError, match=message):
        run_chunks(chunks, symbolic_partials(64, 4), collective.workspace_words)
