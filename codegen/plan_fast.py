"""The fast planner (DESIGN §3, Appendix A): when Z3 proves that a butterfly partition
of the participants gives every reduction group each contribution exactly once, the
updates need no guard and each group all-reduces only its own outputs.

- storage: narrow — each thread keeps only the outputs its group reduces, one slot per
  output (verify.proofs_fast.group_storage, proved by the `slots` obligations);
- updates unguarded: every replica contributes, into its own group;
- finalize: `AllReduce<width, scale, offset>` inside each group
  (codegen.collectives.butterfly), batched in chunks like canonical, the barrier count
  the participant count.

`plan_fast` raises `FastPlanRefused` (carrying the R400 diagnostic with the
counterexample of the most promising candidate) when no candidate is proved;
`plan_auto` — the default — falls back to the canonical plan with that note."""
from __future__ import annotations

import dataclasses

from spec.diagnostics import NOTE, Diagnostic, Note
from spec.physical import ReducerPlan
from verify.proofs_fast import FastSearch, search_fast
from verify.signature import signature
from .collectives import butterfly, butterfly_chunk_limit, chunk_size
from .plan_canonical import plan_canonical
from .plan_sites import ReducerSites, finalize_plan, site_plans


class FastPlanRefused(Exception):
    """No butterfly partition is proved legal; `diagnostic` is the R400 note."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(diagnostic.message)


def plan_fast(sites: ReducerSites) -> ReducerPlan:
    search = search_fast(sites)
    if not search.legal:
        raise FastPlanRefused(refusal(sites, search))
    partition, storage = search.chosen.partition, search.chosen.storage
    offset, count = sites.participants
    slots = storage.slots_per_thread
    limit = butterfly_chunk_limit(count, sites.word_bytes)
    finalizes, words = [], 0
    for finalize in sites.finalizes:
        chunk = chunk_size(slots, limit, finalize.batch)
        collective = butterfly(partition.width, partition.scale, count,
                               sites.barrier_ids[finalize], slots, chunk, offset)
        words = max(words, collective.workspace_words)
        finalizes.append(finalize_plan(sites, finalize, collective, width=partition.width,
                                       scale=partition.scale,
                                       dst_layout=sites.dst_layout(finalize)))
    return ReducerPlan(sites.reducer, "fast", sites.participants, storage,
                       site_plans(sites, None), tuple(finalizes), words)


def plan_auto(sites: ReducerSites) -> ReducerPlan:
    """Fast when proved, otherwise canonical with the R400 note."""
    try:
        return plan_fast(sites)
    except FastPlanRefused as refused:
        canonical = plan_canonical(sites)
        note = dataclasses.replace(refused.diagnostic, message=refused.diagnostic.message +
                                   "; the canonical plan is used")
        return dataclasses.replace(canonical, notes=canonical.notes + (note,))


def refusal(sites: ReducerSites, search: FastSearch) -> Diagnostic:
    """The R400 note: the counterexample, at the site it speaks about (or the reducer's
    allocation), with each site's signature as a note."""
    reducer = sites.reducer
    line = search.refusal_line
    at = next((s for s in search.sites if s.line == line), None)
    span = at.update.span if at is not None and at.update is not None else reducer.span
    notes = tuple(Note(f"update at line {s.line}: {signature(s).describe()}", s.update.span)
                  for s in search.sites if s.update is not None)
    message = f"fast plan refused for {reducer.name}: {search.refusal}"
    return Diagnostic("R400", NOTE, message, span, notes)
