"""The collectives every planner lowers a finalize to, as spec.physical step sequences.

Both builders return a `Collective`: the chunks (each a run of partial slots reduced
together, all slots covered exactly once) and the shared workspace they need. Thread
names in the step expressions are relative to the participant offset (`t`), `s` is the
slot being processed and `k` the term of a reduction (spec.physical).

- `transpose_reduce`: the all-reduce over ANY participant count. Per chunk of C slots
  every partial is written once, C threads each combine one slot's P partials, and the
  C results are broadcast back. Each partial is touched once, whatever P is.
- `butterfly`: XOR-butterfly groups of `width` threads at distance `scale` (both powers
  of two): shuffles for the lane bits of the group, one shared-memory exchange for the
  warp bits. Cheap, but only a power-of-two group is reduced completely (TileLang #2542).

`chunk_size` chooses the chunk for either, honouring a finalize's `batch=` hint when it
is usable (a hint only picks among equivalent lowerings: docs/semantics.md §4)."""
from __future__ import annotations

from dataclasses import dataclass

from verify_reducer.spec.indexexpr import Var
from verify_reducer.spec.physical import K, S, T, Barrier, Chunk, FromWorkspace, Guard, Publish, \
    ReduceWorkspace, Shuffle, Step, ToWorkspace

WARP = 32
# Shared memory one collective may use: well under the 48 KiB of static shared memory a
# CUDA block gets without opting in, leaving the kernel's own shared buffers room.
WORKSPACE_BYTES = 32 * 1024

t, s, k = Var(T), Var(S), Var(K)


@dataclass(frozen=True)
class Collective:
    chunks: tuple[Chunk, ...]
    workspace_words: int             # elements of the reducer dtype
    publish: Publish | None = None   # the result read from the workspace (codegen.segmented)


def is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


# ----------------------------------------------------------------------------- chunks

def transpose_chunk_limit(participants: int, word_bytes: int) -> int:
    """The widest chunk transpose_reduce can take: one reducing thread per slot (C <= P)
    and the P*C transposed partials within WORKSPACE_BYTES (the C results come on top)."""
    return max(1, min(participants, WORKSPACE_BYTES // word_bytes // participants))


def butterfly_chunk_limit(participants: int, word_bytes: int) -> int:
    """The widest chunk a cross-warp butterfly exchange can take: P*C words."""
    return max(1, WORKSPACE_BYTES // word_bytes // participants)


def hint_problem(hint: int | None, slots: int, limit: int) -> str | None:
    """Why a batch hint cannot be used as the chunk size (None: usable, or no hint)."""
    if hint is None:
        return None
    if hint < 1:
        return f"batch={hint} is not a positive slot count"
    if min(hint, slots) > limit:
        return f"batch={hint} needs chunks wider than the {limit} slots this collective " \
               f"allows (participants and workspace)"
    return None


def chunk_size(slots: int, limit: int, hint: int | None = None) -> int:
    """The chunk size: the hint when usable (a hint wider than the partials is one
    chunk), else the fewest chunks the limit allows, balanced so that no chunk is a
    sliver (32 slots under a limit of 31: two chunks of 16, not 31 + 1)."""
    if hint is not None and hint_problem(hint, slots, limit) is None:
        return min(hint, slots)
    count = -(-slots // limit)
    return -(-slots // count)


def _chunk_ranges(slots: int, size: int) -> list[tuple[int, int]]:
    return [(first, min(size, slots - first)) for first in range(0, slots, size)]


# ----------------------------------------------------------------------------- transpose

def transpose_reduce(participants: int, slots: int, chunk: int,
                     barrier_id: int) -> Collective:
    """All-reduce of `slots` partial slots over `participants` threads, any count.

    Per chunk [first, first + C), with P participants:
        W[t*C + (s - first)] = P[t, s]                  every participant, every slot
        bar.sync id, P
        W[P*C + t] = ⊕_k W[k*C + t]   for t < C         one thread per slot
        bar.sync id, P
        P[t, s] = W[P*C + (s - first)]                  broadcast
    and one closing bar.sync after the last chunk. No barrier is needed between chunks:
    chunk n+1's stores hit W[0, P*C') while chunk n's broadcast still reads
    W[P*C, P*C + C), and chunk n+1's reducers write the broadcast words only after its
    first barrier, which every thread reaches after its chunk-n broadcast. The closing
    barrier frees the whole workspace for whatever collective uses it next."""
    chunks = []
    for first, count in _chunk_ranges(slots, chunk):
        sync = Barrier(barrier_id, participants)
        base = participants * count
        reducers = () if count >= participants else (Guard(t, "<", count),)
        steps: list[Step] = [
            ToWorkspace(t * count + s - first),
            sync,
            ReduceWorkspace(base + t, k * count + t, participants, reducers),
            sync,
            FromWorkspace(base + s - first),
        ]
        chunks.append(Chunk(first, count, tuple(steps)))
    chunks[-1] = _close(chunks[-1], Barrier(barrier_id, participants))
    return Collective(tuple(chunks), participants * chunk + chunk)


# ----------------------------------------------------------------------------- butterfly

def butterfly(width: int, scale: int, participants: int, barrier_id: int, slots: int,
              chunk: int | None = None, offset: int = 0) -> Collective:
    """All-reduce inside the groups {t - ((t//scale) % width)*scale + k*scale : k < width}.

    The group's lane bits (distances below 32) are shuffles `P ⊕= shfl_xor(P, mask)`;
    its warp bits go through the workspace: every participant stores its partial, then
    reads and combines the members of its cross-warp group (itself included). Shuffles
    need every lane of each warp, so a participant set that does not start and end on a
    warp boundary does the whole group through the workspace. Groups must tile the
    participants (participants % (width*scale) == 0) so every member exists."""
    if not (is_power_of_two(width) and is_power_of_two(scale)):
        raise ValueError(f"a butterfly needs power-of-two width and scale, got "
                         f"width {width}, scale {scale}")
    if participants % (width * scale):
        raise ValueError(f"butterfly groups of {width} at distance {scale} do not tile "
                         f"{participants} participants")
    lanes_aligned = offset % WARP == 0 and participants % WARP == 0
    shuffles: list[Step] = []
    distance, remaining = scale, width
    while lanes_aligned and remaining > 1 and distance < WARP:
        shuffles.append(Shuffle(distance))
        distance, remaining = distance * 2, remaining // 2
    if remaining == 1:
        return Collective((Chunk(0, slots, tuple(shuffles)),), 0)
    chunk = slots if chunk is None else chunk
    chunks = []
    for first, count in _chunk_ranges(slots, chunk):
        member = t - ((t // distance) % remaining) * distance + k * distance
        steps = shuffles + [
            ToWorkspace(t * count + s - first),
            Barrier(barrier_id, participants),
            FromWorkspace(member * count + s - first, remaining),
            # every member must have read before the next chunk's stores overwrite
            Barrier(barrier_id, participants),
        ]
        chunks.append(Chunk(first, count, tuple(steps)))
    return Collective(tuple(chunks), participants * chunk)


def _close(chunk: Chunk, barrier: Barrier) -> Chunk:
    return Chunk(chunk.first, chunk.count, chunk.steps + (barrier,))

