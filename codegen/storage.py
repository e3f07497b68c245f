"""Where a canonical plan keeps a reducer's partials: in the update loop's own layout.

A thread keeps a partial only for the outputs its own iterations touch, so its partial
registers equal the outputs per thread of the loop layout, not the reducer's size. For
`for i, k in T.Parallel(32, 64): acc[i] += ...` on 128 threads with the loop layout
`thread = 64*(i % 2) + k, slot = i // 2`, the storage is `thread = 64*(i % 2) + rep,
slot = i // 2, replicate 64`: 16 partials per thread instead of 32.

The storage is the projection of replica 0 of the loop (the only replica the canonical
guard lets contribute) onto the output index (codegen.layout_rules.project: the layout
TileLang gives a reduction's destination). It is used when every update site's replica-0
contributions land in cells it keeps — checked here on every iteration of every site —
and the output index of some site is its loop variables themselves. Where several sites
reach different parts of an output's threads, the projection with more replicas may
keep them all (`widened`). Otherwise, and for a
reducer finalized in place (read afterwards by anyone), the plan keeps every output in
every participant (spec.layout.fully_replicated), which covers any site."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import affine
from verify_reducer.spec.indexexpr import Const, IndexExpr, Var
from verify_reducer.spec.layout import Layout, flat_index, fully_replicated
from .layout_rules import project
from .plan_sites import ReducerSites


def canonical_storage(sites: ReducerSites) -> Layout:
    """The narrowest storage that keeps every replica-0 contribution of every site."""
    offset, count = sites.participants
    shape = tuple(sites.reducer.shape)
    if any(f.dst is None for f in sites.finalizes):
        # an in-place finalize leaves the reducer readable anywhere, in any layout a
        # later statement reads it in: every participant keeps (and gets) every output
        return fully_replicated(shape, count, offset)
    for update in sites.updates:
        storage = loop_storage(update, sites)
        if storage is None:
            continue
        for candidate in widened(storage):
            index, _ = candidate.inverse()             # [count, slots]
            if all(keeps(candidate, index, u, sites) for u in sites.updates):
                return candidate
    return fully_replicated(shape, count, offset)


# At most this many replicas are added to a projection (each try checks every site): a
# row split into parts needs a few more, the threads of the row's other parts.
MAX_WIDENING = 64


def widened(storage: Layout):
    """The storage, then the same with more replicas, as long as the layout stays
    injective inside the participant set. Loops over parts of a row reach parts of the
    threads that keep it: `k < 93` and `k + 93 < 128` under `thread = 8*(i % 4) + k // 16`
    project onto `8*(i % 4) + rep` with 6 and with 3 replicas (rep offset by 5); neither
    keeps the other's contributions, 8 replicas keep both. A replica no iteration reaches
    keeps the identity, which the finalize combines like any other partial."""
    yield storage
    last = min(storage.count, storage.replicate + MAX_WIDENING)
    for replicate in range(storage.replicate + 1, last + 1):
        try:
            candidate = dataclasses.replace(storage, replicate=replicate)
        except ValueError:                       # a thread outside the participant set
            return
        if not candidate.is_injective():
            return
        yield candidate


def loop_storage(update: ir.ReducerUpdate, sites: ReducerSites) -> Layout | None:
    """Replica 0 of the update's loop projected onto the reducer's outputs, over the
    participant set; None when the output index is not the loop variables themselves
    (or the projection has no replica numbering)."""
    loop = sites.loop(update)
    kept = kept_dims(update, loop)
    if kept is None:
        return None
    first = dataclasses.replace(loop, thread=loop.thread.substitute({loop.rep_var: Const(0)}),
                                replicate=1)
    found = project(first, kept, tuple(sites.reducer.shape))
    if not isinstance(found, Layout):
        return None
    offset, count = sites.participants
    shift = found.offset - offset            # the loop may run on a part of the set
    thread = found.thread + shift if shift else found.thread
    return min((Layout(found.shape, found.index_vars, thread, slot, count, found.replicate,
                       offset, found.rep_var) for slot in _slot_candidates(found)),
               key=lambda layout: (not layout.is_injective(), layout.slots_per_thread))


def _slot_candidates(layout: Layout):
    """The projection's slot, the same compacted, and the flat output index: the storage
    takes the fewest registers among the injective."""
    yield layout.slot
    compact = compacted_slot(layout.slot, layout.shape, layout.index_vars)
    if compact is not None:
        yield compact
    yield flat_index(layout.shape, layout.index_vars)


def kept_dims(update: ir.ReducerUpdate, loop: Layout) -> tuple[int | None, ...] | None:
    """Which loop dimension each output dimension of the update is (kept_of)."""
    return kept_of(tuple(affine(e) for e in update.indices), tuple(update.reducer.shape),
                   loop)


def kept_of(output, shape, loop: Layout) -> tuple[int | None, ...] | None:
    """Which loop dimension each output dimension is, when the output index (IndexExprs,
    None where not affine) is distinct bare loop variables (or 0 in a unit dimension);
    None otherwise. codegen.proofs.signature asks the same of a proof site."""
    kept: list[int | None] = []
    for index, extent in zip(output, shape):
        if isinstance(index, Const) and index.value == 0 and extent == 1:
            kept.append(None)
        elif isinstance(index, Var) and index.name in loop.index_vars:
            dim = loop.index_vars.index(index.name)
            if loop.shape[dim] != extent or dim in kept:
                return None
            kept.append(dim)
        else:
            return None
    return tuple(kept)


def compacted_slot(slot: IndexExpr, shape, names) -> IndexExpr | None:
    """The slot with the gaps of a stride divided out (a loop that puts two k of one
    output in a thread numbers its slots 0, 2, 4, ...: they become 0, 1, 2, ...), or
    None when the slots it uses have no common stride above 1."""
    size = math.prod(shape)
    points = np.unravel_index(np.arange(size), tuple(shape))
    used = np.unique(np.broadcast_to(slot.evaluate(dict(zip(names, points))), (size,)))
    stride = int(np.gcd.reduce(used)) if len(used) > 1 else 1
    if stride == 1:
        return None
    ranges = {v: (0, e - 1) for v, e in zip(names, shape)}
    return (slot // stride).simplify(ranges)


def keeps(storage: Layout, index: np.ndarray, update: ir.ReducerUpdate,
          sites: ReducerSites) -> bool:
    """Every iteration of the update's loop, replica 0, writes an output the storage
    (whose inverse's flat outputs are `index`) keeps in that thread (predicates ignored:
    a superset of what contributes)."""
    loop = sites.loop(update)
    kept = kept_dims(update, loop)
    if kept is None:
        return False
    indices = loop.all_indices()
    threads = loop.threads_of(indices, absolute=True)[0] - storage.offset
    shape = tuple(update.reducer.shape)
    output = tuple(indices[d] if d is not None else np.zeros_like(indices[0]) for d in kept)
    flat = np.ravel_multi_index(output, shape)
    slots = storage.slots_of(np.unravel_index(flat, shape))
    inside = (threads >= 0) & (threads < storage.count)
    if not inside.all():
        return False
    return bool((index[threads, slots] == flat).all())
