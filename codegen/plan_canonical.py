"""The canonical planner (DESIGN §3): correct for every reducer region, without any
ownership analysis.

- storage: every participant holds every output (one partial slot per output);
- each update site contributes from replica 0 of its loop only — the guard is on the
  update alone, ordinary replicated work in the same loop stays unguarded. An update
  outside T.Parallel is one iteration replicated over every participant, so it too
  contributes once;
- each finalize is a participant-wide transpose all-reduce (any participant count, each
  partial touched once), outside every guard, with the barrier count = participants;
- the consumers combine `ReducerInit.seed` once per output and write the destination in
  its own layout."""
from __future__ import annotations

from spec.layout import fully_replicated
from spec.physical import ReducerPlan
from .collectives import chunk_size, transpose_chunk_limit, transpose_reduce
from .plan_sites import ReducerSites, finalize_plan, site_plans

REPRESENTATIVE = 0


def plan_canonical(sites: ReducerSites) -> ReducerPlan:
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
