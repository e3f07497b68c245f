"""The fast path's legality as proof obligations (docs/design.md §8), one counterexample
query each, for a candidate partition (codegen.proofs.partition), and the narrow storage
they prove (`group_storage`).

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
  threads, and that count is the participant count."""
from __future__ import annotations

import math

import numpy as np
import z3

from verify_reducer.codegen.collectives import WARP, butterfly, is_power_of_two, transpose_reduce
from verify_reducer.codegen.storage import compacted_slot
from verify_reducer.spec.diagnostics import Counterexample
from verify_reducer.spec.indexexpr import IndexExpr, Var
from verify_reducer.spec.layout import Layout, flat_index, index_names
from verify_reducer.spec.physical import Barrier
from verify_reducer.codegen.proofs.obligation import (Query, group_member, group_of,
                                                     shared_terms, within)
from verify_reducer.codegen.proofs.layout import SiteTerms
from verify_reducer.codegen.proofs.signature import Site, output_values, preimage
from verify_reducer.codegen.proofs.partition import Partition, group_numbers


# ----------------------------------------------------------------------------- queries

def duplicate_query(site: Site, part: Partition) -> Query:
    a = SiteTerms.of(site, "a")

    def build():
        r2 = z3.Int("a_rep2")
        t2 = a.thread_of(r2)
        lower = z3.If(a.thread < t2, a.thread, t2)
        return (a.domain + [within(r2, 0, site.layout.replicate), a.rep < r2,
                            group_of(a.thread, part.width, part.scale) ==
                            group_of(t2, part.width, part.scale)],
                [("low", lower), ("t", a.thread)] + a.objectives("x_") +
                [("r1", a.rep), ("r2", r2), ("t2", t2)])
    constraints, objectives = shared_terms(("exactly-once", site.question, part), build)
    offset = part.participants[0]

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
    a, b = SiteTerms.of(site, "x"), SiteTerms.of(other, "y")

    def build():
        g = group_of(b.thread, part.width, part.scale)
        missing = [group != g for group in a.per_replica(
            group_of(a.thread, part.width, part.scale))]
        # the group first, then the missing iteration, then the one that is there
        return (a.domain + b.domain + [a.same_output(b)] + missing,
                [("u", b.thread)] + a.objectives("x_") + b.objectives("y_") +
                [("ry", b.rep)])
    constraints, objectives = shared_terms(
        ("sites agree", site.question, other.question, part), build)

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
    def build():
        as_site = Site(None, 0, storage, part.participants, None)
        a, b = SiteTerms.of(as_site, "a"), SiteTerms.of(as_site, "b")
        distinct = z3.Or(a.rep != b.rep, *[a.vars[v] != b.vars[v] for v in a.vars])
        return (a.domain + b.domain + [distinct, a.thread == b.thread, a.slot == b.slot],
                [("t", a.thread), ("s", a.slot)] + a.objectives("a_") + b.objectives("b_"))
    constraints, objectives = shared_terms(("slots", storage, part), build)
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
    a = SiteTerms.of(site, "x")

    def build():
        out_vars = {v: o for v, o in zip(storage.index_vars, a.output)}
        kept = [t != a.thread for t in _storage_threads(storage, out_vars, part)]
        return a.domain + kept, [("t", a.thread)] + a.objectives("x_") + [("r", a.rep)]
    constraints, objectives = shared_terms(("writes held", site.question, storage, part),
                                           build)
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
    a = SiteTerms.of(site, "x")

    def build():
        q = z3.Int("q")
        env = {v: o for v, o in zip(storage.index_vars, a.output)}
        env[storage.rep_var] = q
        keeper = storage.thread.to_z3(env) + (storage.offset - part.participants[0])
        g = group_of(keeper, part.width, part.scale)
        missing = [group != g for group in a.per_replica(
            group_of(a.thread, part.width, part.scale))]
        return (a.domain + [within(q, 0, storage.replicate)] + missing,
                [("u", keeper)] + a.objectives("x_"))
    constraints, objectives = shared_terms(
        ("storage complete", site.question, storage, part), build)
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

    def build():
        o = {v: z3.Int(f"d_{v}") for v in dst.index_vars}
        rep = z3.Int("d_rep")
        env = dict(o)
        env[dst.rep_var] = rep
        thread = dst.thread.to_z3(env) + (dst.offset - offset)
        out_vars = {sv: o[dv] for sv, dv in zip(storage.index_vars, dst.index_vars)}
        missing = [t != thread for t in _storage_threads(storage, out_vars, part)]
        return ([within(o[v], 0, e) for v, e in zip(dst.index_vars, dst.shape)] +
                [within(rep, 0, dst.replicate)] + missing,
                [("t", thread)] + [(f"o_{v}", o[v]) for v in dst.index_vars])
    constraints, objectives = shared_terms(("destination", dst, storage, part), build)

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
    powers = is_power_of_two(part.width) and is_power_of_two(part.scale) and \
        count % (part.width * part.scale) == 0

    def build():
        t, lane, u = z3.Int("t"), z3.Int("lane"), z3.Int("u")
        member = group_member(group_of(t, part.width, part.scale), lane, part.width,
                              part.scale)
        escapes = z3.And(within(t, 0, count), within(lane, 0, part.width),
                         z3.Not(within(member, 0, count)))
        lanes = z3.And(z3.BoolVal(_uses_shuffles(part)), u >= 0,
                       z3.Not(within(u, offset, offset + count)),
                       z3.Or(u / WARP == z3.IntVal(offset) / WARP,
                             u / WARP == z3.IntVal(offset + count - 1) / WARP))
        return [z3.Or(z3.BoolVal(not powers), escapes, lanes)], \
            [("t", t), ("lane", lane), ("u", u)]
    constraints, objectives = shared_terms(("collective shape", part), build)

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

    def build():
        wrong = []
        for b in barriers:
            arriving = z3.Sum([z3.If(_guards_hold(b.guards, t), 1, 0)
                               for t in range(count)]) if b.guards else z3.IntVal(count)
            wrong.append(z3.Or(arriving != b.count, z3.IntVal(b.count) != count))
        return ([z3.Or(*wrong)] if wrong else [z3.BoolVal(False)],)
    # the barriers as the collective places them: what the terms are made of
    (constraints,) = shared_terms(("barrier count", tuple(barriers), count), build)

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


def _storage_threads(storage: Layout, out_vars: dict, part: Partition) -> list:
    """The thread keeping each copy q of the outputs out_vars: one term with the copy
    symbolic, then each copy substituted in (z3.substitute makes the term the direct
    encoding would, in one call instead of one per operator)."""
    q = z3.Int("storage!rep")            # no name of a site or a size has a `!rep`
    env = dict(out_vars)
    env[storage.rep_var] = q
    thread = storage.thread.to_z3(env) + (storage.offset - part.participants[0])
    return [z3.substitute(thread, (q, z3.IntVal(c))) for c in range(storage.replicate)]


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
