"""Facts about one update site's loop layout, as Z3 queries — what the canonical plan
relies on (docs/design.md §8, "Canonical obligations"):

1. `injective`: the layout is injective on (iteration, replica) -> (thread, slot), every
   replica lands on a participant, and the replicas of an iteration are exact copies
   (distinct threads, one slot: the slot is a function of the iteration alone, so
   only the threads can collide);
2. `guard`: the canonical guard `replica == 0` selects exactly one (thread, replica)
   per logical iteration on a participant.

`SiteTerms` is the encoding every query of a site shares: bounded Int variables for the
iteration (one per loop variable) and the replica, the predicate's affine part as
assumptions, and the thread (relative to the participant offset), slot and output
index as Z3 terms (spec.indexexpr.to_z3)."""
from __future__ import annotations

import z3

from verify_reducer.codegen.proofs.obligation import (DEFAULT_TIMEOUT_MS, ProofResult, Query,
                                                     shared_terms, solve, within)
from verify_reducer.codegen.proofs.signature import Site

OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def size_var(name: str) -> z3.ArithRef:
    """A family's size as a Z3 Int (docs/design.md §21): one name for the family's
    own queries (verify.family) and a site's symbolic constraints, so both speak of
    the same variable."""
    return z3.Int(f"size!{name}")


class SiteTerms:
    """One copy of a site's variables in a query (tag keeps two copies apart). A
    family's sizes are shared by every copy: both iterations live in one member.
    Immutable once built: `of` gives the one copy per (site's question, tag, in_range),
    since the search asks every candidate partition's questions of the same sites —
    and reducers whose sites ask one question (Site.question) ask them again — and
    rebuilding the terms was a fifth of a cold check. The terms read nothing of the site
    but its question, so the copy made for one such site serves them all."""

    _made: dict = {}
    _KEPT = 1024

    @classmethod
    def of(cls, site: Site, tag: str, in_range: bool = True) -> "SiteTerms":
        key = (site.question, tag, in_range)
        found = cls._made.get(key)
        if found is None:
            if len(cls._made) >= cls._KEPT:
                cls._made.clear()
            found = cls._made[key] = cls(site, tag, in_range)
        return found

    def __init__(self, site: Site, tag: str, in_range: bool = True):
        self.site = site
        layout = site.layout
        self.vars = {v: z3.Int(f"{tag}_{v}") for v in layout.index_vars}
        env = dict(self.vars)
        env.update({name: size_var(name) for name in site.sizes})
        self.rep = z3.Int(f"{tag}_{layout.rep_var}")
        self.domain = [within(self.vars[v], 0, e) for v, e in zip(layout.index_vars,
                                                                   layout.shape)]
        self.domain += [within(self.rep, 0, layout.replicate)]
        self.domain += [OPS[c.op](c.a.to_z3(env), c.b.to_z3(env))
                        for c in site.constraints]
        if site.output is not None:
            self.output = [e.to_z3(env) for e in site.output]
            self.domain += [within(o, 0, s) for o, s in zip(self.output, site.reducer_shape)]
        self.thread = self.thread_of(self.rep)
        self.slot = layout.slot.to_z3(self.vars)
        if in_range:
            # proved by `injective`; stated here it guides the solver through div/mod
            self.domain.append(within(self.thread, 0, site.participants[1]))

    def thread_of(self, rep):
        """The relative thread of replica rep (a term or an int) of this iteration."""
        if isinstance(rep, int):
            return z3.substitute(self.thread, (self.rep, z3.IntVal(rep)))
        env = dict(self.vars)
        env[self.site.layout.rep_var] = rep
        return self.site.layout.thread.to_z3(env) + self.site.shift

    def per_replica(self, term) -> list:
        """term, which speaks of this iteration's replica, for each replica in turn:
        the replica substituted in (z3.substitute makes the term the direct encoding
        would, in one call instead of one per operator — the search asks it of every
        candidate partition)."""
        return [z3.substitute(term, (self.rep, z3.IntVal(r)))
                for r in range(self.site.layout.replicate)]

    def values(self, model_values: dict[str, int], prefix: str) -> dict[str, int]:
        """The iteration variables' values from a minimized witness."""
        return {v: model_values[f"{prefix}{v}"] for v in self.site.layout.index_vars}

    def objectives(self, prefix: str) -> list[tuple[str, object]]:
        return [(f"{prefix}{v}", self.vars[v]) for v in self.site.layout.index_vars]

    def same_output(self, other: "SiteTerms"):
        return z3.And(*[a == b for a, b in zip(self.output, other.output)])


def injective_query(site: Site) -> Query:
    a, b = SiteTerms.of(site, "a", False), SiteTerms.of(site, "b", False)
    offset, count = site.participants

    def build():
        distinct = z3.Or(a.rep != b.rep, *[a.vars[v] != b.vars[v] for v in a.vars])
        collide = z3.And(distinct, a.thread == b.thread, a.slot == b.slot)
        outside = z3.Or(a.thread < 0, a.thread >= count)
        # b mirrors a when only a's range is at stake, so the model stays one iteration
        mirror = z3.And(b.rep == a.rep, *[a.vars[v] == b.vars[v] for v in a.vars])
        return (a.domain + b.domain + [z3.Or(collide, z3.And(outside, mirror))],
                [("t", a.thread)] + a.objectives("a_") + [("ra", a.rep)] +
                b.objectives("b_") + [("rb", b.rep)])
    constraints, objectives = shared_terms(("injective", site.question), build)

    def explain(w: dict[str, int]) -> str:
        xa, xb = a.values(w, "a_"), b.values(w, "b_")
        ra, rb = w["ra"], w["rb"]
        if (xa, ra) == (xb, rb):
            return (f"the site at line {site.line} puts replica {ra} of iteration "
                    f"{site.iteration_text(xa)} on thread {w['t'] + offset}, outside the "
                    f"participants {offset}..{offset + count - 1}")
        return (f"the site at line {site.line} puts replica {ra} of iteration "
                f"{site.iteration_text(xa)} and replica {rb} of iteration "
                f"{site.iteration_text(xb)} on thread {w['t'] + offset}, one slot")
    return Query(f"injective line {site.line}", constraints, objectives, explain, site.line)


def guard_query(site: Site) -> Query:
    """Exactly one replica r of each iteration has r == 0 and runs on a participant."""
    a = SiteTerms.of(site, "a", False)
    layout = site.layout
    count = site.participants[1]

    def build():
        chosen = a.per_replica(z3.If(z3.And(a.rep == 0, a.thread >= 0, a.thread < count),
                                     1, 0))
        return a.domain + [a.rep == 0, z3.Sum(chosen) != 1], a.objectives("a_")
    constraints, objectives = shared_terms(("guard", site.question), build)

    def explain(w: dict[str, int]) -> str:
        return (f"the guard `{layout.rep_var} == 0` does not select exactly one executor "
                f"of iteration {site.iteration_text(a.values(w, 'a_'))} of the site at "
                f"line {site.line}")
    return Query(f"guard line {site.line}", constraints, objectives, explain, site.line)


def prove_site(site: Site, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> list[ProofResult]:
    """Obligations 1 and 2 for one site."""
    return [solve(injective_query(site), timeout_ms), solve(guard_query(site), timeout_ms)]
