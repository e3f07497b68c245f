"""The legacy planner: TileLang's old reducer lowering, reproduced on purpose (the RFC's
wrong-code example, TileLang #2408) for teaching and for mutation tests of the checkers.
Never the default.

- storage as the old LayoutReducer had it: `replication="all"` (and every reducer of the
  v2 surface, which has no policy) fully replicated over the participants;
  `replication="none"`: the layout the update loop projects onto the reducer's indices
  (fully replicated when there is no single such projection);
- updates unguarded: every replica of a loop contributes;
- finalize: `AllReduce<width, 1>` with width = the storage's replicate extent, as
  FinalizeReducerLowerer did. For x = [1..8] on 128 threads: width 128, 16 replicas of
  each contribution, 576 instead of 36. A replicate extent that is not a power of two
  cannot be an XOR butterfly (TileLang #2542 dropped lanes silently there); legacy uses
  the largest power-of-two width that divides it and the participant count, so groups
  stay well formed and the lost contributions show up as exactly-once violations."""
from __future__ import annotations

import math

from verify_reducer.spec.layout import Layout, fully_replicated
from verify_reducer.spec.physical import ReducerPlan
from .collectives import butterfly, butterfly_chunk_limit, chunk_size
from .layout_rules import project
from .storage import kept_dims
from .plan_sites import ReducerSites, finalize_plan, site_plans


def plan_legacy(sites: ReducerSites) -> ReducerPlan:
    offset, count = sites.participants
    storage = legacy_storage(sites)
    slots = storage.slots_per_thread
    width = _power_of_two_part(math.gcd(storage.replicate, count))
    limit = butterfly_chunk_limit(count, sites.word_bytes)
    finalizes, words = [], 0
    for finalize in sites.finalizes:
        chunk = chunk_size(slots, limit, finalize.batch)
        collective = butterfly(width, 1, count, sites.barrier_ids[finalize], slots, chunk,
                               offset)
        words = max(words, collective.workspace_words)
        finalizes.append(finalize_plan(sites, finalize, collective, width=width, scale=1,
                                       dst_layout=sites.dst_layout(finalize)))
    return ReducerPlan(sites.reducer, "legacy", sites.participants, storage,
                       site_plans(sites, None), tuple(finalizes), words)


def legacy_storage(sites: ReducerSites) -> Layout:
    reducer = sites.reducer
    offset, count = sites.participants
    replicated = fully_replicated(reducer.shape, count, offset)
    info = reducer.reducer
    if info.replication != "none" or len(sites.updates) != 1:
        return replicated
    update = sites.updates[0]
    loop = sites.loop(update)
    kept = kept_dims(update, loop)
    if kept is None or loop.participants != sites.participants:
        return replicated
    found = project(loop, kept, reducer.shape)
    return found if isinstance(found, Layout) else replicated


def _power_of_two_part(n: int) -> int:
    """The largest power of two dividing n."""
    return n & -n
