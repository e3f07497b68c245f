"""The segmented all-reduce: a finalize whose cost follows the storage layout, for any
participant count, with the result published straight into the destination's layout.

Storage keeps output x in the threads `thread(x, q)`, q < R, at slot `slot(x)`; the
replicas q < span hold one complete reduction of x (canonical: all of them; fast: one
group). The collective:

1. **Shuffles** over every lane bit b whose partner `t ^ 2^b` holds the same output as t
   in every slot (or nothing in both): `P ⊕= shfl_xor(P, 2^b)`. Afterwards the lanes
   that differ only in those bits — a *coset* of L = 2^bits lanes — hold the coset's
   total. Shuffles need whole warps, so a participant set that does not start and end
   on a warp boundary shuffles nothing (L = 1).
2. **One store per coset**: its leader (the lane with those bits 0) writes its slots to
   `W[cell(t) * S + s]`, cell(t) the thread's number with the shuffled bits removed;
   one named barrier. The workspace is (threads / L) x S words: warps x outputs when a
   warp shares its outputs.
3. **Publication** (spec.physical.Publish): each holder of x in the destination's layout
   combines `W[cell(thread(x, k*L)) * S + slot(x)]` for k < span / L, then a barrier
   frees the workspace. The destination keeps no partial: this is the redistribution.

Exactly once: the builder checks on every (output, replica) that replicas k*L ..
k*L + L - 1 of x are one coset and distinct k distinct cosets, and that L divides span,
so the publication reads each copy in [0, span) once and no coset adds a copy from
outside it; it shuffles fewer bits until that holds (at worst none: L = 1, every thread
its own coset, which always holds). The simulator runs the same steps with accounting
(interp.collective, interp.sim_reducers)."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec.indexexpr import Const, IndexExpr, Var
from verify_reducer.spec.layout import Layout
from verify_reducer.spec.physical import S, T, TERM, Barrier, Chunk, Guard, Publish, Shuffle, ToWorkspace
from .collectives import WARP, WORKSPACE_BYTES, Collective

LANE_BITS = 5                        # log2(WARP)


class NoSegments(Exception):
    """The segmented collective does not fit (its workspace is over the budget)."""


def segmented(storage: Layout, span: int, barrier_id: int, word_bytes: int,
              workspace_bytes: int = WORKSPACE_BYTES) -> Collective:
    """The collective and its publication for `storage`, reducing replicas [0, span) of
    each output. Raises NoSegments when the workspace would pass workspace_bytes."""
    count = storage.count
    if storage.replicate % span:
        raise ValueError(f"span {span} does not divide the {storage.replicate} replicas")
    bits = coset_bits(storage, span)
    lanes = 1 << len(bits)
    cells = count // lanes
    slots = storage.slots_per_thread
    # whole 16-byte rows: the array then occupies what ptxas allocates for it
    words = -(-cells * slots * word_bytes // 16) * 16 // word_bytes
    if words * word_bytes > workspace_bytes:
        raise NoSegments(f"the segmented finalize needs {words} workspace words "
                         f"({cells} lane groups x {slots} slots), over the "
                         f"{workspace_bytes // word_bytes}-word budget")
    sync = Barrier(barrier_id, count)
    steps = [Shuffle(1 << b) for b in bits]
    steps += [ToWorkspace(cell_of(Var(T), bits) * slots + Var(S), leader_guard(bits)), sync]
    leader = storage.thread.substitute({storage.rep_var: Var(TERM) * lanes})
    ranges = {v: (0, e - 1) for v, e in zip(storage.index_vars, storage.shape)}
    ranges[TERM] = (0, span // lanes - 1)
    addr = (cell_of(leader, bits) * slots + storage.slot).simplify(ranges)
    publish = Publish(storage.index_vars, addr, span // lanes, sync)
    return Collective((Chunk(0, slots, tuple(steps)),), words, publish)


def coset_bits(storage: Layout, span: int) -> tuple[int, ...]:
    """The shuffled lane bits: the most of shuffle_bits (lowest first) whose cosets are
    blocks of the replica numbering inside [0, span) — a coset must never add the copy
    of another group (the fast plan's groups each hold a complete reduction)."""
    bits = shuffle_bits(storage)
    for n in range(len(bits), 0, -1):
        if span % (1 << n) == 0 and cosets_match_replicas(storage, bits[:n]):
            return bits[:n]
    return ()


def shuffle_bits(storage: Layout) -> tuple[int, ...]:
    """The lane bits b whose partner t ^ 2^b holds, in every slot, what t holds (the same
    output, or nothing): a shuffle over them combines only copies of one output."""
    offset, count = storage.participants
    if offset % WARP or count % WARP:
        return ()
    index, _ = storage.inverse()                   # [count, slots]: flat output or -1
    t = np.arange(count)
    return tuple(b for b in range(LANE_BITS)
                 if np.array_equal(index[t ^ (1 << b)], index))


def cosets_match_replicas(storage: Layout, bits: tuple[int, ...]) -> bool:
    """For every output: replicas k*L .. k*L + L - 1 lie in one coset (one cell) and
    distinct k in distinct cosets, so reading the leaders of k < R / L reads each copy
    once."""
    lanes = 1 << len(bits)
    if storage.replicate % lanes:
        return False
    threads = storage.threads_of()                 # [R, N]
    cells = _cells(threads, bits)
    blocks = cells.reshape(storage.replicate // lanes, lanes, -1)
    if not (blocks == blocks[:, :1, :]).all():
        return False
    heads = np.sort(blocks[:, 0, :], axis=0)
    return not (np.diff(heads, axis=0) == 0).any()


def cell_of(t: IndexExpr, bits: tuple[int, ...]) -> IndexExpr:
    """The thread's number with the shuffled lane bits removed."""
    if not bits:
        return t
    if bits == tuple(range(len(bits))):           # the low bits: a plain division
        return t // (1 << len(bits))
    kept = [b for b in range(LANE_BITS) if b not in bits]
    cell: IndexExpr = (t // WARP) * (1 << len(kept))
    for j, b in enumerate(kept):
        cell = cell + ((t // (1 << b)) % 2) * (1 << j)
    return cell


def leader_guard(bits: tuple[int, ...]) -> tuple[Guard, ...]:
    """The coset's leader: the lane with every shuffled bit 0."""
    if not bits:
        return ()
    if bits == tuple(range(len(bits))):
        return (Guard(Var(T) % (1 << len(bits)), "==", 0),)
    ones: IndexExpr = Const(0)
    for b in bits:
        ones = ones + (Var(T) // (1 << b)) % 2
    return (Guard(ones, "==", 0),)


def _cells(threads: np.ndarray, bits: tuple[int, ...]) -> np.ndarray:
    return np.asarray(cell_of(Var(T), bits).evaluate({T: threads.astype(np.int64)}))
