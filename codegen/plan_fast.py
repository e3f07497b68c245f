"""The fast planner (docs/design.md §7, §8): when Z3 proves that a butterfly partition
of the participants gives every reduction group each contribution exactly once, the
updates need no guard and each group all-reduces only its own outputs.

- storage: narrow — each thread keeps only the outputs its group reduces, one slot per
  output (codegen.proofs.fast_obligations.group_storage, proved by the `slots` obligations);
- updates unguarded: every replica contributes, into its own group;
- finalize: `AllReduce<width, scale, offset>` inside each group
  (codegen.collectives.butterfly), batched in chunks like canonical, the barrier count
  the participant count.

`plan_fast` raises `FastPlanRefused` (carrying the R400 diagnostic with the
counterexample of the most promising candidate) when no candidate is proved;
`plan_auto` — the default — falls back to the canonical plan with that note. Either
way the plan records what it was chosen by (spec.physical.ChosenBy: the search's
proofs, and the refusal when there is one), so a report reads them from the plan.
The obligations sit below this module (codegen.proofs); nothing here imports the
verifier."""
from __future__ import annotations

import dataclasses

from verify_reducer.spec.diagnostics import NOTE, Diagnostic, Note
from verify_reducer.spec.physical import ChosenBy, ReducerPlan
from .proofs.fast import Attempt, FastSearch, search_fast
from .proofs.partition import group_numbers
from .proofs.signature import signature
from .collectives import butterfly, butterfly_chunk_limit, chunk_size
from .plan_canonical import plan_canonical
from .plan_sites import ReducerSites, finalize_plan, site_plans
from .segmented import NoSegments, segmented


class FastPlanRefused(Exception):
    """No butterfly partition is proved legal (or the chosen one cannot publish its
    result); `diagnostic` is the R400 note, `chosen_by` the search's proofs with it."""

    def __init__(self, diagnostic: Diagnostic, proofs: tuple = ()):
        self.diagnostic = diagnostic
        self.chosen_by = ChosenBy(tuple(proofs), diagnostic)
        super().__init__(diagnostic.message)


def plan_fast(sites: ReducerSites) -> ReducerPlan:
    search = search_fast(sites)
    proofs = tuple(search.proofs())
    if not search.legal:
        raise FastPlanRefused(refusal(sites, search), proofs)
    try:
        return plan_partition(sites, search.chosen, ChosenBy(proofs))
    except FastPlanRefused as refused:      # proved, but the result cannot be published
        raise FastPlanRefused(refused.diagnostic, proofs) from None


def plan_partition(sites: ReducerSites, chosen: Attempt,
                   chosen_by: ChosenBy | None = None) -> ReducerPlan:
    """The fast plan of a proved attempt (its partition, storage and whether the
    result is published), recording chosen_by. A size family's instance
    (verify.family.instance) plans another member with the attempt proved at the
    file's sizes: the one kernel a family compiles to."""
    partition, storage = chosen.partition, chosen.storage
    collectives = [_collective(sites, f, partition, storage, chosen.needs_publish)
                   for f in sites.finalizes]
    finalizes = [finalize_plan(sites, f, c, width=partition.width, scale=partition.scale,
                               dst_layout=sites.dst_layout(f))
                 for f, c in zip(sites.finalizes, collectives)]
    words = max((c.workspace_words for c in collectives), default=0)
    return ReducerPlan(sites.reducer, "fast", sites.participants, storage,
                       site_plans(sites, None), tuple(finalizes), words,
                       chosen_by=chosen_by)


def _collective(sites: ReducerSites, finalize, partition, storage, needs_publish: bool):
    """A butterfly inside each group when it needs no workspace and the groups hold
    what the destination needs; otherwise the segmented all-reduce over one group's
    copies, published into the destination (a redistribution when the destination's
    layout differs from the groups)."""
    offset, count = sites.participants
    slots = storage.slots_per_thread
    if not needs_publish and partition.shuffles_only:
        return butterfly(partition.width, partition.scale, count,
                         sites.barrier_ids[finalize], slots, None, offset)
    if first_replicas_form_a_group(storage, partition):
        try:
            return segmented(storage, partition.width, sites.barrier_ids[finalize],
                             sites.word_bytes)
        except NoSegments as why:
            if needs_publish:
                raise FastPlanRefused(_no_publication(sites, str(why))) from None
    elif needs_publish:
        raise FastPlanRefused(_no_publication(
            sites, f"the storage's first {partition.width} copies of an output are not "
            f"one group of {partition.describe()}"))
    limit = butterfly_chunk_limit(count, sites.word_bytes)
    chunk = chunk_size(slots, limit, finalize.batch)
    return butterfly(partition.width, partition.scale, count, sites.barrier_ids[finalize],
                     slots, chunk, offset)


def first_replicas_form_a_group(storage, partition) -> bool:
    """Replicas [0, width) of every output lie in one group of the partition (the
    storage is proved injective, so they are width distinct threads: the whole group):
    the publication then reads one complete reduction of each output."""
    if storage.replicate % partition.width:
        return False
    groups = group_numbers(storage.threads_of()[:partition.width], partition)
    return bool((groups == groups[:1]).all())


def _no_publication(sites: ReducerSites, why: str) -> Diagnostic:
    return Diagnostic("R400", NOTE, f"fast plan refused for {sites.reducer.name}: the "
                      f"groups do not hold what the destination needs and the result "
                      f"cannot be published into it: {why}", sites.reducer.span, (),
                      no_picture="every obligation of the partition was proved; it is the "
                                 "publication into the destination that cannot be built, "
                                 "so no iteration or group is refuted to draw")


def plan_auto(sites: ReducerSites) -> ReducerPlan:
    """Fast when proved, otherwise canonical with the R400 note; either records the
    search's proofs (and the refusal) it was chosen by."""
    try:
        return plan_fast(sites)
    except FastPlanRefused as refused:
        canonical = plan_canonical(sites)
        note = dataclasses.replace(refused.diagnostic, message=refused.diagnostic.message +
                                   "; the canonical plan is used")
        return dataclasses.replace(canonical, notes=canonical.notes + (note,),
                                   chosen_by=refused.chosen_by)


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
    return Diagnostic("R400", NOTE, message, span, notes,
                      counterexample=search.refusal_evidence,
                      no_picture=search.refusal_unpictured)
