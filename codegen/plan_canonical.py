"""The canonical planner (docs/design.md §7): correct for every reducer region, with no
proof of ownership — and built for speed.

- storage: in the update loop's layout (codegen.storage): a thread keeps a partial only
  for the outputs its replica-0 iterations touch; a region whose sites cannot share such
  a layout keeps every output in every participant;
- each update site contributes from replica 0 of its loop only — the guard is on the
  update alone, ordinary replicated work in the same loop stays unguarded. An update
  outside T.Parallel is one iteration replicated over every participant, so it too
  contributes once;
- each finalize is the segmented all-reduce (codegen.segmented): shuffles inside each
  warp over the lanes that share an output, one store per lane group into a workspace of
  (lane groups x slots) words, one barrier, then the publication of every output into
  the destination's layout. When that workspace would not fit, the storage becomes
  fully replicated and the finalize the participant-wide transpose all-reduce (any
  participant count, each partial touched once). The barrier count is the participant
  count either way;
- the consumers combine `ReducerInit.seed` once per output and write the destination in
  its own layout."""
from __future__ import annotations

from verify_reducer.spec.layout import fully_replicated
from verify_reducer.spec.physical import ReducerPlan
from .collectives import chunk_size, transpose_chunk_limit, transpose_reduce
from .plan_sites import ReducerSites, finalize_plan, site_plans
from .segmented import NoSegments, segmented
from .storage import canonical_storage

REPRESENTATIVE = 0


def plan_canonical(sites: ReducerSites) -> ReducerPlan:
    storage = canonical_storage(sites)
    try:
        collectives = [segmented(storage, storage.replicate, sites.barrier_ids[f],
                                 sites.word_bytes) for f in sites.finalizes]
    except NoSegments:
        return plan_transpose(sites)
    finalizes = [finalize_plan(sites, f, c, width=storage.replicate, scale=1,
                               dst_layout=sites.dst_layout(f))
                 for f, c in zip(sites.finalizes, collectives)]
    words = max((c.workspace_words for c in collectives), default=0)
    return ReducerPlan(sites.reducer, "canonical", sites.participants, storage,
                       site_plans(sites, REPRESENTATIVE), tuple(finalizes), words)


def plan_transpose(sites: ReducerSites) -> ReducerPlan:
    """Every participant keeps every output; each finalize is the transpose all-reduce,
    in chunks that fit the workspace (a finalize's batch= hint picks the chunk)."""
    offset, count = sites.participants
    storage = fully_replicated(sites.reducer.shape, count, offset)
    slots = storage.slots_per_thread
    limit = transpose_chunk_limit(count, sites.word_bytes)
    finalizes, words = [], 0
    for finalize in sites.finalizes:
        chunk = chunk_size(slots, limit, finalize.batch)
        collective = transpose_reduce(count, slots, chunk, sites.barrier_ids[finalize])
        words = max(words, collective.workspace_words)
        finalizes.append(finalize_plan(sites, finalize, collective, width=count, scale=1,
                                       dst_layout=sites.dst_layout(finalize)))
    return ReducerPlan(sites.reducer, "canonical", sites.participants, storage,
                       site_plans(sites, REPRESENTATIVE), tuple(finalizes), words)
