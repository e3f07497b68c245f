"""The search for the cheapest butterfly partition whose fast-path obligations
(codegen.proofs.fast_obligations) are all proved (docs/design.md §8), which the planner
(codegen.plan_fast) runs and records in the plan it makes (spec.physical.ChosenBy).

The search tries candidates from the cheapest (shuffles only, narrowest) up and stops at
the first one with everything proved; otherwise the refusal carries the counterexample of
the most promising candidate (the one that proved the most obligations before failing).

Cost: sites that are structurally identical (one update line written many times: same
layout, output index, predicate and participants) have identical queries, so each
obligation is asked once per distinct site, under the first one's line. What is left is
quadratic in the number of distinct sites (`sites agree` is per pair), so one reducer's
whole search runs under a time budget (`DEFAULT_BUDGET_S`): each query gets the
per-query timeout or what is left of the budget, and a search that runs out refuses
the fast plan with that reason (an unfinished proof is never a pass)."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from verify_reducer.codegen.layout import LayoutMap
from verify_reducer.codegen.plan_sites import ReducerSites, gather_reducers
from verify_reducer.spec import ir
from verify_reducer.spec.layout import Layout, fully_replicated
from verify_reducer.spec.physical import PhysicalPlan
from verify_reducer.codegen.proofs.obligation import (DEFAULT_TIMEOUT_MS, PROVED, UNKNOWN,
                                                     ProofResult, Query, decided, solve)
from verify_reducer.codegen.proofs.layout import guard_query, injective_query
from verify_reducer.codegen.proofs.signature import Site, signature, update_sites
from verify_reducer.codegen.proofs.partition import Partition, candidates
from verify_reducer.codegen.proofs.fast_obligations import (
    barrier_query, destination_query, duplicate_query, group_storage, omission_query,
    shape_query, storage_complete_query, storage_query, writes_held_query)


# ----------------------------------------------------------------------------- the search

@dataclass
class Attempt:
    """One candidate's obligations, in the order they were tried (stopping at the first
    that is not proved)."""
    partition: Partition
    proofs: list[ProofResult] = field(default_factory=list)
    storage: Layout | None = None
    failed: Query | None = None          # the query that refuted it, for re-solving
    # `destination` refuted: the groups do not hold what the destination's layout needs,
    # so the finalize must publish the result into it (codegen.segmented)
    needs_publish: bool = False
    destination: list[ProofResult] = field(default_factory=list)

    @property
    def legal(self) -> bool:
        return bool(self.proofs) and all(p.proved for p in self.proofs)

    @property
    def failure(self) -> ProofResult | None:
        return next((p for p in self.proofs if not p.proved), None)

    @property
    def progress(self) -> int:
        return sum(p.proved for p in self.proofs)


@dataclass
class FastSearch:
    """Everything the fast path decided for one reducer, with every proof it ran."""
    reducer: ir.Buffer
    participants: tuple[int, int]
    sites: list[Site]
    site_proofs: list[ProofResult]           # obligations 1 and 2 of every site
    barrier_proofs: list[ProofResult]        # obligation 5, every width and canonical
    chosen: Attempt | None                   # the first legal candidate
    best: Attempt | None                     # the most promising one, when none is legal
    reason: str | None = None                # why no candidate could even be tried
    budget_spent: bool = False               # the reason is the proof budget

    @property
    def legal(self) -> bool:
        return self.chosen is not None

    @property
    def refusal(self) -> str:
        """The R400 text: the counterexample of the most promising candidate."""
        if self.reason is not None:
            return self.reason
        failure = self.best.failure if self.best is not None else None
        if failure is None:
            return "no butterfly partition tiles the participants"
        if failure.result == UNKNOWN:
            return (f"{self.best.partition.describe()}: `{failure.name}` could not be "
                    f"proved ({failure.counterexample}); unknown is never a pass")
        return failure.counterexample

    @property
    def refusal_evidence(self):
        """The refusal's counterexample as data (spec.diagnostics.Counterexample), when
        the failed obligation draws one."""
        failure = self.best.failure if self.best is not None else None
        return failure.evidence if failure is not None and self.reason is None else None

    @property
    def refusal_unpictured(self) -> str | None:
        """Why the refusal has no picture (None when refusal_evidence draws one): the
        report says so rather than leaving the picture out silently."""
        if self.refusal_evidence is not None:
            return None
        if self.budget_spent:
            return ("the proof budget ran out before any candidate partition was refuted: "
                    "there is no counterexample to draw")
        if self.reason is not None:
            return ("no candidate partition could be tried, so no group or iteration is "
                    "refuted to draw (the reason is in the message)")
        failure = self.best.failure if self.best is not None else None
        if failure is None:
            return "no butterfly partition tiles the participants: there is no group to draw"
        if failure.result == UNKNOWN:
            return (f"`{failure.name}` was not decided (unknown): there is no "
                    f"counterexample to draw")
        return (f"`{failure.name}` is refuted by a fact about the collective, not by a cell "
                f"of a layout: no grid shows it")

    @property
    def refusal_line(self) -> int | None:
        failure = self.best.failure if self.best is not None else None
        return failure.line if failure is not None else None

    def proofs(self) -> list[ProofResult]:
        """The proofs of the plan decision: the sites' own, the chosen (or most
        promising) candidate's, and the barrier counts."""
        attempt = self.chosen or self.best
        if attempt is None:
            return self.site_proofs + self.barrier_proofs
        # a refuted destination is no failure (the plan publishes), so only a proved one
        # is listed: it is why the result is read from the groups' own partials
        held = [p for p in attempt.destination if p.proved]
        return self.site_proofs + attempt.proofs + held + self.barrier_proofs


DEFAULT_BUDGET_S = 30.0


class BudgetSpent(Exception):
    """The reducer's proof budget ran out before the search could decide."""


class Budget:
    """What one reducer's search may still spend in the solver. Each query gets the
    per-query timeout or what is left, whichever is less; none starts once it is
    spent."""

    def __init__(self, seconds: float, timeout_ms: int):
        self.seconds, self.timeout_ms = seconds, timeout_ms
        self.deadline = time.monotonic() + seconds
        self.asked = 0

    def solve(self, query: Query, minimize: bool = True) -> ProofResult:
        left_ms = (self.deadline - time.monotonic()) * 1000
        if left_ms <= 0:
            raise BudgetSpent()
        self.asked += 1
        result = solve(query, min(self.timeout_ms, left_ms), minimize, lean=True)
        if result.result == UNKNOWN and time.monotonic() >= self.deadline:
            raise BudgetSpent()         # the budget, not the query, cut it short
        return result

    def reason(self, reducer: ir.Buffer) -> str:
        return (f"the proof budget of {self.seconds:g} s for {reducer.name} ran out after "
                f"{self.asked} queries, before a partition was proved or refuted "
                f"(an unfinished proof is never a pass)")


def search_fast(sites_of: ReducerSites, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                budget_s: float | None = None) -> FastSearch:
    """Try every candidate partition of the reducer's participants, cheapest first,
    within budget_s seconds (default DEFAULT_BUDGET_S, read at call time). Run once per
    reducer, timeout and budget under the same layouts: the layouts keep the answer
    (LayoutMap.searches), so it lives as long as the program's layouts do."""
    budget_s = DEFAULT_BUDGET_S if budget_s is None else budget_s
    kept = sites_of.layouts.searches
    key = (sites_of.reducer, timeout_ms, budget_s)
    if key not in kept:
        kept[key] = _search(sites_of, Budget(budget_s, timeout_ms))
    return kept[key]


def distinct_sites(sites: list[Site]) -> list[Site]:
    """The first of every group of structurally identical sites, in source order: every
    query of the search reads a site only through these fields, so identical sites
    ask identical questions."""
    seen: dict = {}
    for site in sites:
        seen.setdefault(site.question, site)
    return list(seen.values())


def _search(sites_of: ReducerSites, budget: Budget) -> FastSearch:
    reducer, participants = sites_of.reducer, sites_of.participants
    sites = update_sites(sites_of.updates, sites_of.layouts, participants)
    search = FastSearch(reducer, participants, sites, [], [], None, None)
    try:
        _decide(search, sites_of, distinct_sites(sites), budget)
    except BudgetSpent:
        search.chosen, search.best = None, None
        search.reason = budget.reason(reducer)
        search.budget_spent = True
    return search


def _decide(search: FastSearch, sites_of: ReducerSites, distinct: list[Site],
            budget: Budget) -> None:
    participants = sites_of.participants
    for site in distinct:
        search.site_proofs += [budget.solve(injective_query(site)),
                               budget.solve(guard_query(site))]
    parts = candidates(participants)
    search.barrier_proofs.append(budget.solve(barrier_query(None, participants)))
    for p in parts:
        if p.width > 1:
            search.barrier_proofs.append(budget.solve(barrier_query(p, participants)))
    search.reason = _unprovable(distinct, search.site_proofs, search.barrier_proofs)
    if search.reason is not None:
        return
    destinations = finalize_destinations(sites_of)
    attempts = []
    for part in parts:
        attempt = attempt_partition(distinct, part, destinations, search.reducer, budget)
        if attempt.legal:
            search.chosen = attempt
            return
        attempts.append(attempt)
    search.best = max(attempts, key=_promise(distinct)) if attempts else None
    if search.best is not None and search.best.failed is not None:
        # only the counterexample that is shown is worth minimizing
        search.best.proofs[-1] = budget.solve(search.best.failed)


def _promise(sites: list[Site]):
    """How promising a failed candidate is: the most obligations proved before the
    failure; among equals, the width closest to a site's own reduction groups (the
    counterexample then speaks about the partition the user's layout suggests), then
    the cheapest."""
    hull = signature(sites[0]).hull

    def key(attempt: Attempt):
        distance = abs(math.log2(attempt.partition.width) - math.log2(hull))
        return attempt.progress, -distance
    return key          # max() keeps the first, i.e. cheapest, of equals


def attempt_partition(sites: list[Site], part: Partition, destinations, reducer: ir.Buffer,
                      budget: Budget | None = None) -> Attempt:
    """The obligations of one candidate, cheapest and likeliest to fail first."""
    attempt = Attempt(part)
    budget = budget or Budget(DEFAULT_BUDGET_S, DEFAULT_TIMEOUT_MS)

    def run(query: Query) -> bool:
        attempt.proofs.append(budget.solve(query, minimize=False))
        if not attempt.proofs[-1].proved:
            attempt.failed = query
        return attempt.proofs[-1].proved

    if not all(run(duplicate_query(site, part)) for site in sites):
        return attempt
    if not all(run(omission_query(s, o, part)) for s, o in _site_pairs(sites)):
        return attempt
    storage = group_storage(sites, part, tuple(reducer.shape))
    if isinstance(storage, str):
        attempt.proofs.append(ProofResult(f"slots {part.describe()}", UNKNOWN, 0.0, storage))
        return attempt
    attempt.storage = storage
    if not run(storage_query(storage, part)):
        return attempt
    if not all(run(writes_held_query(site, storage, part)) for site in sites):
        return attempt
    if not all(run(storage_complete_query(site, storage, part)) for site in sites):
        return attempt
    for dst, what, line, in_place in destinations:
        query = destination_query(dst, storage, part, what, line)
        if in_place:
            # in place: the reducer is read afterwards in its storage layout by any
            # participant, so every one must keep every output — a hard obligation
            if not run(query):
                return attempt
            continue
        # a fragment destination the groups do not hold is published into (the
        # workspace redistributes), at the cost of a barrier: not an obligation
        attempt.destination.append(budget.solve(query, minimize=False))
    attempt.needs_publish = not all(p.proved for p in attempt.destination)
    run(shape_query(part))
    return attempt


def _site_pairs(sites: list[Site]) -> list[tuple[Site, Site]]:
    """Every ordered pair of sites for `sites agree`, each site with itself first."""
    return [(s, s) for s in sites] + [(s, o) for s in sites for o in sites if o is not s]


def legality_queries(sites: list[Site], attempt: Attempt, destinations) -> list[Query]:
    """The obligations that make a chosen attempt's plan (its partition and its storage)
    legal, all in one list: what attempt_partition proved for it, asked again of other
    sites — a size family's, with the sizes symbolic (verify.family.checker), where the
    plan chosen at the file's sizes must hold for every member. A fragment destination
    the plan reads in place (proved, so nothing is published) must keep holding."""
    part, storage = attempt.partition, attempt.storage
    out = [duplicate_query(site, part) for site in sites]
    out += [omission_query(s, o, part) for s, o in _site_pairs(sites)]
    out.append(storage_query(storage, part))
    out += [writes_held_query(site, storage, part) for site in sites]
    out += [storage_complete_query(site, storage, part) for site in sites]
    out += [destination_query(dst, storage, part, what, line)
            for dst, what, line, in_place in destinations
            if in_place or not attempt.needs_publish]
    out.append(shape_query(part))
    return out


def _unprovable(sites: list[Site], site_proofs, barrier_proofs) -> str | None:
    """Why no candidate can be tried at all: a site the proofs cannot speak for, or a
    layout fact that failed."""
    for site in sites:
        if site.problems:
            return f"the site at line {site.line}: {site.problems[0]}"
    for proof in site_proofs + barrier_proofs[:1]:
        if not proof.proved:
            return proof.counterexample or f"`{proof.name}` is {proof.result}"
    if not sites:
        return "the reducer has no update site"
    return None


def finalize_destinations(sites_of: ReducerSites) -> list[tuple[Layout, str, int, bool]]:
    """What each finalize must be able to write: a fragment destination in its own
    layout; an in-place finalize leaves the reducer readable everywhere, so every
    participant must keep every output. Shared and global destinations are written
    from one copy of the storage, which any legal partition has."""
    reducer = sites_of.reducer
    offset, count = sites_of.participants
    out = []
    for finalize in sites_of.finalizes:
        if finalize.dst is None:
            out.append((fully_replicated(reducer.shape, count, offset), reducer.name,
                        finalize.span.line, True))
        else:
            layout = sites_of.dst_layout(finalize)
            if layout is not None:
                out.append((layout, finalize.dst.name, finalize.span.line, False))
    return out


# ----------------------------------------------------------------------------- for the lead

def reducer_sites(func: ir.PrimFunc, layouts: LayoutMap, reducer: ir.Buffer) -> ReducerSites:
    return next(rs for rs in gather_reducers(func, layouts) if rs.reducer is reducer)


def smt2_queries(plan: PhysicalPlan) -> list[tuple[str, str]]:
    """(name, SMT-LIB2 text) of every query the plan's reducers were chosen by, reducer
    by reducer (`emit --what smt2`), read from the plan's record (spec.physical.ChosenBy):
    nothing is solved again."""
    return [(f"{rp.reducer.name}: {proof.name}", proof.smt2)
            for rp in plan.reducers if rp.chosen_by is not None
            for proof in rp.chosen_by.proofs]


def same_signature(a: Site, b: Site, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ProofResult:
    """Whether two sites have the same ThreadGroupSignature, however their layouts are
    written: the same participants and, under the butterfly partition a's signature
    names, each site's contributions exactly once per group and the two sites' groups
    holding the same outputs (so the projections agree). The first refutation, with its
    minimized counterexample, or one proved result."""
    if a.participants != b.participants:
        return decided("same signature", False,
                       f"participants {a.participants} and {b.participants} differ")
    steps = signature(a).steps
    if not steps or len(steps) != 1:
        return decided("same signature", False,
                       f"the site at line {a.line} has no single butterfly step")
    part = Partition(steps[0].extent, steps[0].scale, a.participants)
    queries = [duplicate_query(a, part), duplicate_query(b, part),
               omission_query(a, a, part), omission_query(b, b, part),
               omission_query(a, b, part), omission_query(b, a, part)]
    results = []
    for query in queries:
        results.append(solve(query, timeout_ms))
        if not results[-1].proved:
            return results[-1]
    return ProofResult("same signature", PROVED, sum(r.ms for r in results), None,
                       tuple(q for r in results for q in r.queries))
