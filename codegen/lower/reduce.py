"""A T.reduce_* of a fragment into a fragment, the way TileLang lowers it when the
layouts allow (src/op/reduce.cc: a thread-local fold, then an AllReduce of
`__shfl_xor_sync` over the lanes that share an output): no shared memory, no barrier.

Contract. `lower_reduce(plan, stmt) -> ShuffleReduce | None`, a pure function of the
plan's layouts (and kept with them), None where the statement goes through shared rows instead
(codegen.cuda_reduce's staged form: a shared or global destination, a replicated
source, holders that are not one xor-closed set of lanes of a warp, a destination
that is not held by exactly those lanes, or terms that do not sit in the same slots on
every thread). Where it returns one:

- every participant holds, in each of `slots` (its destination slot s, the same on every
  thread), one output element, and `terms[s]`: the source slots of that output's terms
  it holds itself, in term order, as many on every thread;
- the holders of an output are exactly {t xor m : m in the span of `masks`} (lanes of
  one warp) and are its destination's holders, every replica;
- each thread folds its own terms in order, then combines with `__shfl_xor_sync` of
  each mask in order (`x = x ⊕ shfl_xor(x, m)`), so every holder ends with every term
  once; the result is stored (clear) or combined into the old value.

interp.simulate EXECUTES it (registers read through the checked accessors, the exchange
lane by lane), codegen.cuda_reduce PRINTS it; one of the orders the interpreter's bound
admits (docs/semantics.md §9)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir

WARP = 32


@dataclass(frozen=True, eq=False)
class ShuffleReduce:
    stmt: ir.Reduce
    participants: tuple[int, int]       # offset, count
    slots: tuple[int, ...]              # the destination slots every thread holds
    terms: tuple[tuple[int, ...], ...]  # per slot: the source slots of its terms, in order
    masks: tuple[int, ...]              # the lane xor masks, in order
    # the same by element, for the checked register accessors: per (thread relative to
    # the participants, slot index, term) the source element, per (thread, slot index)
    # the destination element
    src_elements: np.ndarray
    dst_elements: np.ndarray

    def describe(self) -> str:
        lanes = 1 << len(self.masks)
        xor = ", ".join(str(m) for m in self.masks) or "none"
        return (f"within each thread ({len(self.terms[0])} term(s) per output, slots "
                f"{list(self.slots)}), then __shfl_xor_sync over lanes xor {xor} (the "
                f"{lanes} thread(s) holding each output): no shared memory")


def lower_reduce(plan, stmt: ir.Reduce) -> ShuffleReduce | None:
    """The decision, kept with the layouts it follows from (LayoutMap.reduces)."""
    kept = plan.layouts.reduces
    if stmt not in kept:
        kept[stmt] = _decide(plan.layouts, stmt)
    return kept[stmt]


def _decide(layouts, stmt: ir.Reduce) -> ShuffleReduce | None:
    src, dst = stmt.src, stmt.dst
    if src.scope != "fragment" or dst.scope != "fragment":
        return None
    src_l, dst_l = layouts.fragments.get(src), layouts.fragments.get(dst)
    participants = layouts.participants.get(stmt)
    if src_l is None or dst_l is None or participants is None or src_l.replicate != 1:
        return None
    offset, count = participants
    if count % WARP or offset % WARP or any(
            (lay.offset, lay.count) != participants for lay in (src_l, dst_l)):
        return None
    dim = stmt.dim + len(src.shape) if stmt.dim < 0 else stmt.dim
    extent = src.shape[dim]
    if dst.size * extent != src.size:
        return None
    # rows[o, k]: the flat source element of term k of output o (dst's flat order)
    rows = np.moveaxis(np.arange(src.size).reshape(src.shape), dim, -1).reshape(-1, extent)
    src_thread = src_l.threads_of()[0]
    src_slot = src_l.slots_of()
    holders = np.sort(src_thread[rows], axis=1)                 # outputs × extent
    dst_threads = np.sort(dst_l.threads_of(), axis=0).T         # outputs × replicas
    masks = _masks(holders, dst_threads)
    if masks is None:
        return None
    # each (thread, output): its own terms' source slots, in term order
    owner = src_thread[rows]                                    # outputs × extent
    dst_slot = dst_l.slots_of()
    per_slot: dict[int, tuple[int, ...]] = {}
    output_at = np.full((count, dst_l.slots_per_thread), -1)
    for o in range(dst.size):
        s = int(dst_slot[o])
        for t in dst_threads[o]:
            mine = tuple(int(x) for x in src_slot[rows[o][owner[o] == t]])
            if per_slot.setdefault(s, mine) != mine:
                return None        # the terms sit in other slots on another thread
            output_at[t - offset, s] = o
    slots = tuple(sorted(per_slot))
    dst_elements = output_at[:, list(slots)]
    if (dst_elements < 0).any() or len({len(per_slot[s]) for s in slots}) != 1:
        return None                # a thread without an output at a slot, or uneven terms
    # term i of slot s on thread t: the element of row dst_elements[t, s] that t holds
    mine = owner[dst_elements] == (np.arange(count) + offset)[:, None, None]
    src_elements = rows[dst_elements][mine].reshape(count, len(slots), -1)
    return ShuffleReduce(stmt, participants, slots, tuple(per_slot[s] for s in slots),
                         masks, src_elements, dst_elements)


def _masks(holders: np.ndarray, dst_threads: np.ndarray) -> tuple[int, ...] | None:
    """The xor masks whose span, from any holder, gives every output's holders (the same
    set of distinct lanes for every output, each once, within one warp), when the
    destination's holders are exactly those threads; else None."""
    extent = holders.shape[1]
    first = np.unique(holders[0])
    group = sorted(int(x) for x in first ^ first[0])
    size = len(group)
    if size & (size - 1) or group[-1] >= WARP or extent % size:
        return None
    masks: list[int] = []
    span = {0}
    for g in group:
        if g not in span:
            masks.append(g)
            span |= {x ^ g for x in span}
    if sorted(span) != group:
        return None                # not closed under xor
    for h, d in zip(holders, dst_threads):
        lanes, terms = np.unique(h, return_counts=True)
        if sorted(int(x) for x in lanes ^ lanes[0]) != group or \
                (terms != extent // size).any() or not np.array_equal(d, lanes):
            return None
    return tuple(masks)
