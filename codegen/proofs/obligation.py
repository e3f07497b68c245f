"""Running one Z3 proof obligation: the three-valued result, its timing, its minimized
counterexample and its SMT-LIB2 text.

An obligation is stated as a *counterexample query* (`Query`): constraints that are
satisfiable exactly when the fact fails. unsat -> "proved"; sat -> "refuted" with a
model; unknown (timeout, incompleteness) -> "unknown", which is never a pass.

Every query gets a fresh `z3.Solver` with its own timeout. A refuting model is
minimized before it is shown (Alive2 style): the query's objectives — thread ids first,
then indices, in the order the query lists them — are pushed down one at a time by
binary search with the same solver, each fixed at its least value before the next.
The counterexample text is the query's own sentence about that model."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import z3

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
DEFAULT_TIMEOUT_MS = 2000


@dataclass(frozen=True)
class ProofResult:
    name: str
    result: str                       # "proved" | "refuted" | "unknown"
    ms: float
    counterexample: str | None        # the minimized refutation, or why unknown
    # the constraints of every query behind the result; the SMT-LIB text is written from
    # them only when asked (`emit --what smt2`): rendering costs more than many checks
    queries: tuple[tuple, ...] = field(default=(), repr=False, compare=False)
    witness: dict | None = None       # the minimized model's objective values
    line: int | None = None           # the source line the counterexample points at
    # the counterexample as data, for a picture (spec.diagnostics.Counterexample)
    evidence: object = field(default=None, repr=False, compare=False)

    @property
    def proved(self) -> bool:
        return self.result == PROVED

    @property
    def smt2(self) -> str:
        """The SMT-LIB2 text of the queries, one `(check-sat)` each."""
        return "".join(_smt2(constraints) for constraints in self.queries)

    def to_json(self) -> dict:
        return {"name": self.name, "result": self.result, "ms": round(self.ms, 3),
                "counterexample": self.counterexample}


@dataclass
class Query:
    """A counterexample query. objectives: (label, Int term) to minimize, in priority
    order; explain turns their minimized values into the counterexample sentence."""
    name: str
    constraints: list
    objectives: list[tuple[str, object]]
    explain: Callable[[dict[str, int]], str]
    line: int | None = None
    # the minimized values as a spec.diagnostics.Counterexample (None: not drawn)
    evidence: Callable[[dict[str, int]], object] | None = None
    # terms whose values the explanation shows without minimizing them
    reported: list[tuple[str, object]] = field(default_factory=list)


def decided(name: str, holds: bool, why: str, line: int | None = None) -> ProofResult:
    """A fact with nothing left for a solver (e.g. two participant sets differ): the
    query is the constant `not holds`, so the result is still three-valued data."""
    return ProofResult(name, PROVED if holds else REFUTED, 0.0, None if holds else why,
                       ((z3.BoolVal(not holds),),), None, line)


def solve(query: Query, timeout_ms: int = DEFAULT_TIMEOUT_MS,
          minimize: bool = True, lean: bool = False) -> ProofResult:
    """Decide query. minimize=False skips the minimization of a refuting model (a search
    that only needs to know *whether* a candidate fails re-solves the one failure it
    shows). lean: ask Z3's plain solver first (`_lean_answer`), for the many small
    queries of the fast plan's search; what it cannot settle is asked as before."""
    start = time.perf_counter()
    text = (tuple(query.constraints),)
    if _proved_before(text[0]):
        return ProofResult(query.name, PROVED, _ms(start), None, text, None, query.line)
    if lean:
        settled = _lean_answer(query, timeout_ms, minimize)
        if settled == PROVED:
            _remember_proved(text[0])
            return ProofResult(query.name, PROVED, _ms(start), None, text, None, query.line)
        if isinstance(settled, dict):
            drawn = query.evidence(settled) if query.evidence is not None else None
            return ProofResult(query.name, REFUTED, _ms(start), query.explain(settled), text,
                               settled, query.line, drawn)
    solver = z3.Solver()
    solver.set(timeout=max(1, int(timeout_ms)))
    solver.add(*query.constraints)
    verdict = solver.check()
    if verdict == z3.unsat:
        _remember_proved(text[0])
        return ProofResult(query.name, PROVED, _ms(start), None, text, None, query.line)
    if verdict == z3.unknown:
        reason = solver.reason_unknown()
        return ProofResult(query.name, UNKNOWN, _ms(start), f"solver gave up: {reason}",
                           text, None, query.line)
    values = _minimize(solver, query.objectives if minimize else [],
                       query.objectives + query.reported)
    drawn = query.evidence(values) if query.evidence is not None else None
    return ProofResult(query.name, REFUTED, _ms(start), query.explain(values), text,
                       values, query.line, drawn)


# A lean first answer. z3.Solver() is Z3's combined solver: a query asked once, with no
# push, goes through the tactic its logic selects (probes, preprocessing), and a fresh
# solver is made and freed for each — for the fast search's small linear queries
# several times the cost of the check itself. The plain SMT core (z3.SimpleSolver, the
# solver the combined one hands over to after a push) decides them directly, one kept
# per thread and each query asked inside a push/pop, so nothing of one query stays for
# the next but the terms it has already taken in. Its answers are the same facts: unsat
# is the theorem, a model is a refutation. Only an unknown is not an answer, so the
# query is then asked the usual way (an unknown stays what the usual solver says). A
# refutation whose counterexample is shown is asked the usual way too, so the minimized
# model — and every value the text names beyond the minimized objectives — is the one
# the combined solver gives.
# The lean solver has LEAN_TIMEOUT_MS: the search's queries take about a millisecond,
# and one it cannot settle that fast is asked the usual way. That also keeps every
# verdict the usual solver's where the two could differ: on a hard query the plain
# core can prove what the combined solver gives up on (fuzz kernel 113 of seed 7: its
# injective query proved in 85 ms where the combined solver times out at 2 s, so the
# fast plan was refused), and such a query is decided as it always was. The kept
# solver is made afresh every LEAN_QUERIES queries, so a long campaign does not grow it
# without bound.
LEAN_TIMEOUT_MS = 20
LEAN_QUERIES = 512
_lean = threading.local()


def _lean_answer(query: Query, timeout_ms: int, minimize: bool):
    """PROVED, the model's values (a refutation that will not be minimized), or None:
    ask the usual way. A refutation already found for the same terms (`_REFUTED`) is
    the same model's values."""
    looked = tuple(query.constraints) + tuple(t for _, t in query.objectives + query.reported)
    if not minimize:
        kept = _REFUTED.get(_key(looked))
        if kept is not None and all(a.eq(b) for a, b in zip(kept[0], looked)):
            return dict(kept[1])
    asked = getattr(_lean, "asked", LEAN_QUERIES)
    if asked >= LEAN_QUERIES:
        _lean.solver, asked = z3.SimpleSolver(), 0
    _lean.asked = asked + 1
    solver = _lean.solver
    solver.push()
    try:
        solver.set(timeout=max(1, min(int(timeout_ms), LEAN_TIMEOUT_MS)))
        solver.add(*query.constraints)
        verdict = solver.check()
        if verdict == z3.unsat:
            return PROVED
        if verdict == z3.sat and not minimize:
            values = _minimize(solver, [], query.objectives + query.reported)
            _remember(_REFUTED, looked, (looked, dict(values)))
            return values
        return None
    finally:
        solver.pop()


# Refutations the lean solver found, by the ids of their terms (constraints, then the
# terms whose values are read), with the values: the search asks a refuted candidate's
# question again for every reducer whose sites ask it, and a model of those constraints
# is a refutation of them all. Only unminimized ones — a shown counterexample is always
# asked the usual way.
_REFUTED: dict[tuple, tuple] = {}


# The terms of queries by their content. Building a query's Z3 terms through z3's Python
# API costs more than deciding it (about half of the fast search), and reducers whose
# sites ask one question (codegen.proofs.signature.Site.question) build the same
# queries again: `shared_terms` makes them once per process. Only the terms are shared;
# each query keeps its own name, line and sentences, which name its own site. The
# key must hold everything the terms are made of (a site's question, a partition, a
# storage layout), never a site's identity or line.
_TERMS: dict[tuple, tuple] = {}
_TERMS_KEPT = 4096


def shared_terms(key: tuple, build: Callable[[], tuple]) -> tuple:
    """What build() makes (constraints, objectives, the terms the sentences read) for
    the query whose content is key: made the first time, then the same terms."""
    found = _TERMS.get(key)
    if found is None:
        found = _kept(_TERMS, key, build(), _TERMS_KEPT)
    return found


# Constraint sets already proved unsatisfiable in this process, by the ids of their terms
# (Z3 hash-conses terms, so one structure is one id while the term lives): two reducers
# with one layout and one participant set, or two sites of one shape, ask the same
# questions. The entry holds the terms themselves, so no id is reused while it is kept,
# and a hit is confirmed term by term. Only proofs are kept: unsat of the same set is
# the same theorem; a refutation's counterexample speaks of its own query.
_PROVED: dict[tuple[int, ...], tuple] = {}
_PROVED_KEPT = 4096


def _key(constraints: tuple) -> tuple:
    """Ids are per Z3 context: the context is part of the key."""
    return tuple((id(c.ctx), c.get_id()) for c in constraints)


def _proved_before(constraints: tuple) -> bool:
    kept = _PROVED.get(_key(constraints))
    return kept is not None and all(a.eq(b) for a, b in zip(kept, constraints))


def _remember_proved(constraints: tuple) -> None:
    _remember(_PROVED, constraints, constraints)


def _remember(table: dict, terms: tuple, entry) -> None:
    """entry under the ids of terms; it must hold the terms, so no id is reused while
    it is kept."""
    _kept(table, _key(terms), entry, _PROVED_KEPT)


def _kept(table: dict, key: tuple, entry, limit: int):
    """table[key] = entry, the oldest entry dropped first at `limit` (a plain FIFO
    bound: a long campaign does not grow a table without end); entry."""
    if len(table) >= limit:
        table.pop(next(iter(table)))
    table[key] = entry
    return entry


def _minimize(solver: z3.Solver, objectives, reported) -> dict[str, int]:
    """Least values of the objectives, lexicographically, then the model's values of
    the other reported terms. Each search step is one more check on the same solver; a
    step that does not come back sat keeps the model found so far (the counterexample
    is still a real one, just not the least)."""
    model = solver.model()
    values: dict[str, int] = {}
    for label, term in objectives:
        best = model.eval(term, model_completion=True).as_long()
        low = min(0, best)         # thread ids and indices: the least is 0
        while low < best:
            mid = (low + best) // 2
            solver.push()
            solver.add(term <= mid)
            if solver.check() == z3.sat:
                model = solver.model()
                best = model.eval(term, model_completion=True).as_long()
            else:
                low = mid + 1
            solver.pop()
        solver.add(term == best)
        values[label] = best
    if objectives and solver.check() == z3.sat:
        model = solver.model()
    for label, term in reported:
        values.setdefault(label, model.eval(term, model_completion=True).as_long())
    return values


def _smt2(constraints: tuple) -> str:
    solver = z3.Solver()
    solver.add(*constraints)
    return solver.sexpr() + "(check-sat)\n"


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


# ----------------------------------------------------------------------------- encoding

def within(term, low: int, high: int):
    """low <= term < high."""
    return z3.And(term >= low, term < high)


def group_of(t, width: int, scale: int):
    """The butterfly group of relative thread t: threads differing from t only in the
    bits of scale*[0, width). Numbered (t div (scale*width))*scale + t mod scale."""
    t, span = _int(t), width * scale
    return (t / span) * scale + t % scale


def group_member(g, lane, width: int, scale: int):
    """Relative thread of lane `lane` of group g (inverse of group_of)."""
    g, span = _int(g), width * scale
    return (g / scale) * span + g % scale + lane * scale


def _int(term):
    """Python ints as Z3 Ints, so `/` is Z3's integer division, not Python's."""
    return z3.IntVal(term) if isinstance(term, int) else term
