"""Fast-path legality as proof obligations (docs/design.md §8), and the search for the
cheapest butterfly partition that meets them.

A candidate `Partition` (width w = 2^k, scale 2^m over the participants) groups relative
thread t with the threads that differ from it only in the bits of 2^m * [0, w). For an
epoch's update sites it is legal when Z3 proves, as unsat counterexample queries:

- `exactly-once` (obligation 1, per site): no two replicas of one iteration fall into
  one group (duplicate), and
- `sites agree` (obligations 1 and 3, per ordered pair of sites, a site with itself
  included): wherever site s' puts a contribution to output o, every iteration of site s
  updating o has a replica in that group (no omission). With both, every group that
  holds o receives each contribution to o exactly once;
- `slots` (obligation 2): the narrow storage — each thread keeps the outputs of its group
  — gives one slot per output, the same in every thread (injective), and every site
  writes its outputs where the storage keeps them;
- `destination` (not needed for legality): every thread the finalize destination places
  an output on keeps that output (its group reduced it); an in-place finalize needs every
  participant. When it is refuted the plan publishes the result into the destination's
  layout through the workspace (codegen.segmented) instead of reading it in place;
- `storage complete`: every group the storage keeps an output in receives each
  contribution to it (a predicate may switch iterations off: no copy stays at the
  identity);
- `collective shape` (obligation 3): the groups tile the participants, and when the
  butterfly uses shuffles every lane of each warp involved is a participant;
- `barrier count` (obligation 5, for every candidate width and for the canonical
  transpose): every named barrier of the collective is reached by exactly its count of
  threads, and that count is the participant count.

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

import numpy as np
import z3

from verify_reducer.codegen.collectives import WARP, butterfly, is_power_of_two, transpose_reduce
from verify_reducer.codegen.layout import LayoutMap, infer_layouts
from verify_reducer.codegen.plan_sites import ReducerSites, gather_reducers
from verify_reducer.codegen.storage import compacted_slot
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Counterexample
from verify_reducer.spec.indexexpr import IndexExpr, Var
from verify_reducer.spec.layout import Layout, flat_index, fully_replicated, index_names
from verify_reducer.spec.physical import Barrier
from verify_reducer.verify.proofs.obligation import DEFAULT_TIMEOUT_MS, PROVED, UNKNOWN, ProofResult, Query, \
    decided, group_member, group_of, solve, within
from verify_reducer.verify.proofs.layout import guard_query, injective_query
from verify_reducer.verify.proofs.layout import SiteTerms
from verify_reducer.verify.proofs.signature import Site, output_values, preimage, signature, update_sites


@dataclass(frozen=True)
class Partition:
    width: int
    scale: int
    participants: tuple[int, int]

    @property
    def groups(self) -> int:
        return self.participants[1] // self.width

    @property
    def shuffles_only(self) -> bool:
        offset, count = self.participants
        aligned = offset % WARP == 0 and count % WARP == 0
        return self.width == 1 or (aligned and self.width * self.scale <= WARP)

    def group_text(self, t: int) -> str:
        """`{0..7}` (contiguous) or `{1, 5, 9, ...}`, in absolute thread ids."""
        members = self.members(t)
        if self.scale == 1:
            return f"{{{members[0]}..{members[-1]}}}"
        shown = ", ".join(map(str, members[:3]))
        return f"{{{shown}, ..., {members[-1]}}}" if len(members) > 3 else f"{{{shown}}}"

    def describe(self) -> str:
        return f"width {self.width}" + (f", scale {self.scale}" if self.scale > 1 else "")

    def members(self, t: int) -> tuple[int, ...]:
        """The absolute threads of relative thread t's group."""
        offset = self.participants[0]
        base = t - ((t // self.scale) % self.width) * self.scale
        return tuple(offset + base + k * self.scale for k in range(self.width))


def candidates(participants: tuple[int, int]) -> list[Partition]:
    """Every butterfly partition that tiles the participants, cheapest first: shuffles
    only before a workspace exchange, then narrower before wider, then smaller scale."""
    count = participants[1]
    found = [Partition(1, 1, participants)]
    width = 2
    while width <= count:
        scale = 1
        while width * scale <= count:
            if count % (width * scale) == 0:
                found.append(Partition(width, scale, participants))
            scale *= 2
        width *= 2
    return sorted(found, key=lambda p: (not p.shuffles_only, p.width, p.scale))


# ----------------------------------------------------------------------------- queries

def duplicate_query(site: Site, part: Partition) -> Query:
    a = SiteTerms(site, "a")
    r2 = z3.Int("a_rep2")
    t2 = a.thread_of(r2)
    constraints = a.domain + [within(r2, 0, site.layout.replicate), a.rep < r2,
                              group_of(a.thread, part.width, part.scale) ==
                              group_of(t2, part.width, part.scale)]
    offset = part.participants[0]
    lower = z3.If(a.thread < t2, a.thread, t2)
    objectives = [("low", lower), ("t", a.thread)] + a.objectives("x_") + \
        [("r1", a.rep), ("r2", r2), ("t2", t2)]

    def evidence(w: dict[str, int]) -> Counterexample:
        x = a.values(w, "x_")
        return Counterexample(
            ("update", site.reducer_name, site.line), explain(w),
            ((_iteration(site, x), "duplicate"),),
            ((w["t"] + offset, "duplicate"), (w["t2"] + offset, "duplicate")),
            (part.members(w["t"]),))

    def explain(w: dict[str, int]) -> str:
        x = a.values(w, "x_")
        return (f"{part.describe()}: the site at line {site.line} puts replicas {w['r1']} "
                f"and {w['r2']} of iteration {site.iteration_text(x)} "
                f"({site.output_text(x)}) on threads {w['t'] + offset} and "
                f"{w['t2'] + offset}, both in group {part.group_text(w['t'])}: "
                f"the group would count it twice")
    return Query(f"exactly-once line {site.line} {part.describe()}", constraints,
                 objectives, explain, site.line, evidence)


def omission_query(site: Site, other: Site, part: Partition) -> Query:
    """Site `other` puts a contribution to output o in group g (thread u); an iteration
    x of `site` updating o has no replica in g."""
    a, b = SiteTerms(site, "x"), SiteTerms(other, "y")
    g = group_of(b.thread, part.width, part.scale)
    missing = [group_of(a.thread_of(r), part.width, part.scale) != g
               for r in range(site.layout.replicate)]
    constraints = a.domain + b.domain + [a.same_output(b)] + missing
    # the group first, then the missing iteration, then the one that is there
    objectives = [("u", b.thread)] + a.objectives("x_") + b.objectives("y_") + \
        [("ry", b.rep)]

    def evidence(w: dict[str, int]) -> Counterexample:
        """On the loop of `site`: the missing iteration and the group; the iteration the
        group has on the same loop, or on the other site's below it."""
        x, y = a.values(w, "x_"), b.values(w, "y_")
        elements = ((_iteration(site, x), "missing"),)
        group = (part.members(w["u"]),)
        also = ()
        if other is site:
            elements += ((_iteration(site, y), "present"),)
        else:               # the iteration the group has lies on the other site's loop
            also = (Counterexample(
                ("update", other.reducer_name, other.line),
                f"the site at line {other.line} puts iteration {other.iteration_text(y)} "
                f"in group {part.group_text(w['u'])}", ((_iteration(other, y), "present"),),
                (), group),)
        return Counterexample(("update", site.reducer_name, site.line), explain(w),
                              elements, (), group, also=also)

    def explain(w: dict[str, int]) -> str:
        x, y = a.values(w, "x_"), b.values(w, "y_")
        group = part.group_text(w["u"])
        elsewhere = part.group_text(_thread_int(site, x, 0))
        if other is site:
            return (f"{part.describe()}: the site at line {site.line} puts iterations "
                    f"{site.iteration_text(y)} and {site.iteration_text(x)} of "
                    f"{site.output_text(x)} in groups {group} and {elsewhere}: "
                    f"{site.iteration_text(x)} is missing from group {group}")
        return (f"{part.describe()}: the site at line {other.line} puts iteration "
                f"{other.iteration_text(y)} of {other.output_text(y)} in group {group}; "
                f"the site at line {site.line} puts its iteration "
                f"{site.iteration_text(x)} of {site.output_text(x)} in group {elsewhere} "
                f"but in no replica in group {group}: it is missing there")
    return Query(f"sites agree line {site.line}/{other.line} {part.describe()}",
                 constraints, objectives, explain, site.line, evidence)


def _iteration(site: Site, values: dict[str, int]) -> tuple[int, ...]:
    """An iteration of the site's loop as a logical index of its layout."""
    return tuple(int(values[v]) for v in site.layout.index_vars)


def storage_query(storage: Layout, part: Partition) -> Query:
    """The storage keeps every output at most once per thread, each in its own slot."""
    as_site = Site(None, 0, storage, part.participants, None)
    a, b = SiteTerms(as_site, "a"), SiteTerms(as_site, "b")
    distinct = z3.Or(a.rep != b.rep, *[a.vars[v] != b.vars[v] for v in a.vars])
    constraints = a.domain + b.domain + [distinct, a.thread == b.thread, a.slot == b.slot]
    objectives = [("t", a.thread), ("s", a.slot)] + a.objectives("a_") + b.objectives("b_")
    offset = part.participants[0]
    names = storage.index_vars

    def explain(w: dict[str, int]) -> str:
        oa = [w[f"a_{v}"] for v in names]
        ob = [w[f"b_{v}"] for v in names]
        return (f"{part.describe()}: thread {w['t'] + offset} would keep outputs {oa} and "
                f"{ob} in one slot {w['s']}")
    return Query(f"slots {part.describe()}", constraints, objectives, explain)


def writes_held_query(site: Site, storage: Layout, part: Partition) -> Query:
    """Every replica writes its output into a thread that keeps that output."""
    a = SiteTerms(site, "x")
    out_vars = {v: o for v, o in zip(storage.index_vars, a.output)}
    kept = [_storage_thread(storage, out_vars, q, part) != a.thread
            for q in range(storage.replicate)]
    constraints = a.domain + kept
    objectives = [("t", a.thread)] + a.objectives("x_") + [("r", a.rep)]
    offset = part.participants[0]

    def explain(w: dict[str, int]) -> str:
        x = a.values(w, "x_")
        return (f"{part.describe()}: the site at line {site.line} writes "
                f"{site.output_text(x)} (iteration {site.iteration_text(x)}, replica "
                f"{w['r']}) on thread {w['t'] + offset}, which does not keep it")

    def evidence(w: dict[str, int]) -> Counterexample:
        """On the site's loop: the iteration, the thread that writes it without
        keeping its output, and that thread's group."""
        return Counterexample(("update", site.reducer_name, site.line), explain(w),
                              ((_iteration(site, a.values(w, "x_")), "contribution"),),
                              ((w["t"] + offset, "unheld"),), (part.members(w["t"]),))
    return Query(f"slots line {site.line} {part.describe()}", constraints, objectives,
                 explain, site.line, evidence)


def storage_complete_query(site: Site, storage: Layout, part: Partition) -> Query:
    """Every group the storage keeps an output in receives each of the site's
    contributions to it: no kept copy is left at the identity."""
    a = SiteTerms(site, "x")
    q = z3.Int("q")
    out_vars = {v: o for v, o in zip(storage.index_vars, a.output)}
    env = dict(out_vars)
    env[storage.rep_var] = q
    keeper = storage.thread.to_z3(env) + (storage.offset - part.participants[0])
    g = group_of(keeper, part.width, part.scale)
    missing = [group_of(a.thread_of(r), part.width, part.scale) != g
               for r in range(site.layout.replicate)]
    constraints = a.domain + [within(q, 0, storage.replicate)] + missing
    objectives = [("u", keeper)] + a.objectives("x_")
    offset = part.participants[0]

    def explain(w: dict[str, int]) -> str:
        x = a.values(w, "x_")
        return (f"{part.describe()}: thread {w['u'] + offset} keeps {site.output_text(x)} "
                f"but its group {part.group_text(w['u'])} gets no replica of iteration "
                f"{site.iteration_text(x)} of the site at line {site.line}")

    def evidence(w: dict[str, int]) -> Counterexample:
        """On the site's loop: the iteration missing from the keeper's group."""
        return Counterexample(("update", site.reducer_name, site.line), explain(w),
                              ((_iteration(site, a.values(w, "x_")), "missing"),),
                              ((w["u"] + offset, "holder"),), (part.members(w["u"]),))
    return Query(f"storage complete line {site.line} {part.describe()}", constraints,
                 objectives, explain, site.line, evidence)


def destination_query(dst: Layout, storage: Layout, part: Partition, what: str,
                      line: int) -> Query:
    """Every (output, replica) of the destination is on a thread that keeps the output."""
    offset = part.participants[0]
    o = {v: z3.Int(f"d_{v}") for v in dst.index_vars}
    rep = z3.Int("d_rep")
    env = dict(o)
    env[dst.rep_var] = rep
    thread = dst.thread.to_z3(env) + (dst.offset - offset)
    out_vars = {sv: o[dv] for sv, dv in zip(storage.index_vars, dst.index_vars)}
    missing = [_storage_thread(storage, out_vars, q, part) != thread
               for q in range(storage.replicate)]
    constraints = [within(o[v], 0, e) for v, e in zip(dst.index_vars, dst.shape)] + \
        [within(rep, 0, dst.replicate)] + missing
    objectives = [("t", thread)] + [(f"o_{v}", o[v]) for v in dst.index_vars]

    def explain(w: dict[str, int]) -> str:
        idx = ", ".join(str(w[f"o_{v}"]) for v in dst.index_vars)
        return (f"{part.describe()}: thread {w['t'] + offset} must write {what}[{idx}] but "
                f"its group {part.group_text(w['t'])} does not reduce that output")

    def evidence(w: dict[str, int]) -> Counterexample:
        """On the candidate's storage (no plan has it: it carries the layout): the
        output where the groups that reduce it keep it, the thread that must write it
        and that thread's group."""
        return Counterexample(("storage", what), explain(w),
                              ((tuple(w[f"o_{v}"] for v in dst.index_vars), "holder"),),
                              ((w["t"] + offset, "unheld"),), (part.members(w["t"]),),
                              layout=storage)
    return Query(f"destination {what} {part.describe()}", constraints, objectives, explain,
                 line, evidence)


def shape_query(part: Partition) -> Query:
    """Groups tile the participants; the lanes of every warp that shuffles are all
    participants."""
    offset, count = part.participants
    t, lane, u = z3.Int("t"), z3.Int("lane"), z3.Int("u")
    member = group_member(group_of(t, part.width, part.scale), lane, part.width, part.scale)
    powers = is_power_of_two(part.width) and is_power_of_two(part.scale) and \
        count % (part.width * part.scale) == 0
    escapes = z3.And(within(t, 0, count), within(lane, 0, part.width),
                     z3.Not(within(member, 0, count)))
    lanes = z3.And(z3.BoolVal(_uses_shuffles(part)), u >= 0,
                   z3.Not(within(u, offset, offset + count)),
                   z3.Or(u / WARP == z3.IntVal(offset) / WARP,
                         u / WARP == z3.IntVal(offset + count - 1) / WARP))
    constraints = [z3.Or(z3.BoolVal(not powers), escapes, lanes)]
    objectives = [("t", t), ("lane", lane), ("u", u)]

    def explain(w: dict[str, int]) -> str:
        if not powers:
            return (f"{part.describe()}: width and scale must be powers of two whose "
                    f"product divides the {count} participants")
        return (f"{part.describe()}: thread {w['u']} shares a warp with the participants "
                f"but does not take part in the shuffle")
    return Query(f"collective shape {part.describe()}", constraints, objectives, explain)


def barrier_query(part: Partition | None, participants: tuple[int, int],
                  barrier_id: int = 1) -> Query:
    """Every barrier of the collective (butterfly of part, or the canonical transpose
    when part is None) is reached by exactly its count, and the count is the
    participant count."""
    offset, count = participants
    if part is None:
        collective, what = transpose_reduce(count, 1, 1, barrier_id), "transpose"
    else:
        collective = butterfly(part.width, part.scale, count, barrier_id, 1, 1, offset)
        what = part.describe()
    barriers = [s for c in collective.chunks for s in c.steps if isinstance(s, Barrier)]
    wrong = []
    for b in barriers:
        arriving = z3.Sum([z3.If(_guards_hold(b.guards, t), 1, 0) for t in range(count)]) \
            if b.guards else z3.IntVal(count)
        wrong.append(z3.Or(arriving != b.count, z3.IntVal(b.count) != count))
    constraints = [z3.Or(*wrong)] if wrong else [z3.BoolVal(False)]

    def explain(w: dict[str, int]) -> str:
        return (f"{what}: a named barrier's count differs from the {count} threads that "
                f"reach it")
    return Query(f"barrier count {what}", constraints, [], explain)


def _guards_hold(guards, t: int):
    conds = []
    for g in guards:
        value = g.expr.to_z3({"t": z3.IntVal(t)})
        conds.append(value == g.value if g.op == "==" else value < g.value)
    return z3.And(*conds)


def _uses_shuffles(part: Partition) -> bool:
    offset, count = part.participants
    return part.width > 1 and part.scale < WARP and offset % WARP == 0 and count % WARP == 0


def _storage_thread(storage: Layout, out_vars: dict, q: int, part: Partition):
    env = dict(out_vars)
    env[storage.rep_var] = z3.IntVal(q)
    return storage.thread.to_z3(env) + (storage.offset - part.participants[0])


def _thread_int(site: Site, x: dict[str, int], rep: int) -> int:
    """The relative thread of replica rep of iteration x, evaluated."""
    env = {v: np.int64(x[v]) for v in site.layout.index_vars}
    env[site.layout.rep_var] = np.int64(rep)
    return int(site.layout.thread.evaluate(env)) + site.shift


# ----------------------------------------------------------------------------- storage

def group_storage(sites: list[Site], part: Partition, shape: tuple[int, ...]) -> Layout | str:
    """The narrow partial storage of a partition: output o lives in every thread of
    every group that receives a contribution to o, at one slot per output. Returns the
    Layout, or why none could be written down. The Z3 obligations then prove it
    (`slots`, `destination`); here it is only built and checked against the numbers."""
    offset, count = part.participants
    names = index_names(len(shape))
    held = _held(sites, part, shape)
    if len(held) == part.groups * math.prod(shape):
        # every group reduces every output: each thread keeps them all
        thread: IndexExpr = Var("rep")
        replicate = count
    else:
        site = sites[0]
        mapping = preimage(site)
        if mapping is None:
            return (f"{part.describe()}: the groups keep different outputs and the output "
                    f"index of the site at line {site.line} is not a projection of loop "
                    f"variables, so no storage layout can name them")
        q = Var("rep")
        mapping[site.layout.rep_var] = q // part.width
        t = site.layout.thread.substitute(mapping) + site.shift
        span = part.width * part.scale
        group = (t // span) * part.scale + t % part.scale
        member = (group // part.scale) * span + group % part.scale + \
            (q % part.width) * part.scale
        thread = member
        replicate = site.layout.replicate * part.width
    ranges = {v: (0, e - 1) for v, e in zip(names, shape)}
    ranges["rep"] = (0, replicate - 1)
    slots = [flat_index(shape, names)]
    mapping = preimage(sites[0])
    if mapping is not None:
        loop_slot = sites[0].layout.slot.substitute(mapping).simplify(ranges)
        compact = compacted_slot(loop_slot, shape, names)
        slots[:0] = [loop_slot] + ([compact] if compact is not None else [])
    found = []
    for slot in slots:
        layout = Layout(shape, names, thread.simplify(ranges), slot.simplify(ranges),
                        count, replicate, offset)
        if layout.is_injective() and _holds(layout, part, shape) == held:
            found.append(layout)
    if found:       # the fewest partial registers (the first of equals)
        return min(found, key=lambda layout: layout.slots_per_thread)
    return f"{part.describe()}: no storage layout keeps exactly the outputs of each group"


def _held(sites: list[Site], part: Partition, shape) -> set[tuple[int, int]]:
    """(group, flat output) for every contribution of every site (those the affine
    predicate switches off contribute nowhere)."""
    pairs: set[tuple[int, int]] = set()
    for site in sites:
        active = site.active()
        threads = (site.layout.threads_of() + site.shift)[:, active]
        outputs = np.broadcast_to(output_values(site)[active], threads.shape)
        groups = group_numbers(threads, part)
        pairs.update(zip(groups.reshape(-1).tolist(), outputs.reshape(-1).tolist()))
    return pairs


def _holds(storage: Layout, part: Partition, shape) -> set[tuple[int, int]]:
    """(group, flat output) the storage keeps, when it keeps each output in whole
    groups; an incomplete group makes the set wrong on purpose (never equal)."""
    threads = storage.threads_of()
    outputs = np.broadcast_to(np.arange(storage.size), threads.shape)
    pairs = set(zip(group_numbers(threads, part).reshape(-1).tolist(),
                    outputs.reshape(-1).tolist()))
    full = len(set(zip(threads.reshape(-1).tolist(), outputs.reshape(-1).tolist())))
    return pairs if full == len(pairs) * part.width else set()


def group_numbers(threads: np.ndarray, part: Partition) -> np.ndarray:
    """The partition's group of each (relative) thread."""
    span = part.width * part.scale
    return (threads // span) * part.scale + threads % part.scale


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
        result = solve(query, min(self.timeout_ms, left_ms), minimize)
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
    within budget_s seconds (default DEFAULT_BUDGET_S, read at call time). The planner
    and the report both ask; the answer is computed once per (layouts, reducer) and
    kept while those objects live."""
    budget_s = DEFAULT_BUDGET_S if budget_s is None else budget_s
    key = (id(sites_of.layouts), id(sites_of.reducer), timeout_ms, budget_s)
    found = _SEARCHES.get(key)
    if found is not None and found[0] is sites_of.layouts:
        return found[1]
    search = _search(sites_of, Budget(budget_s, timeout_ms))
    _SEARCHES[key] = (sites_of.layouts, search)
    while len(_SEARCHES) > _KEEP:
        _SEARCHES.pop(next(iter(_SEARCHES)))
    return search


_SEARCHES: dict = {}
_KEEP = 64


def distinct_sites(sites: list[Site]) -> list[Site]:
    """The first of every group of structurally identical sites, in source order: every
    query of the search reads a site only through these fields, so identical sites
    ask identical questions."""
    seen: dict = {}
    for site in sites:
        key = (site.layout, site.participants, site.output, site.constraints, site.opaque,
               site.problems, site.reducer_shape)
        seen.setdefault(key, site)
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


def prove_reducer(func: ir.PrimFunc, layouts: LayoutMap, reducer: ir.Buffer,
                  timeout_ms: int = DEFAULT_TIMEOUT_MS) -> list[ProofResult]:
    """Every proof behind the plan decision for reducer (`check --json` proofs)."""
    return search_fast(reducer_sites(func, layouts, reducer), timeout_ms).proofs()


def smt2_queries(func: ir.PrimFunc, layouts: LayoutMap | None = None,
                 timeout_ms: int = DEFAULT_TIMEOUT_MS) -> list[tuple[str, str]]:
    """(name, SMT-LIB2 text) of every query the plan decisions of func ran, reducer by
    reducer (`emit --what smt2`)."""
    layouts = layouts if layouts is not None else infer_layouts(func)
    out = []
    for rs in gather_reducers(func, layouts):
        for proof in search_fast(rs, timeout_ms).proofs():
            out.append((f"{rs.reducer.name}: {proof.name}", proof.smt2))
    return out


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
