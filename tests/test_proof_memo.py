"""A proof is asked once per process (codegen.proofs.obligation: constraint sets already
proved unsatisfiable are kept by their terms): the same question again is a proof without
the solver, a different one is solved, and a refutation is never reused — its
counterexample speaks of its own query."""
from __future__ import annotations

import z3

from verify_reducer.codegen.proofs import obligation
from verify_reducer.codegen.proofs.obligation import PROVED, REFUTED, Query, solve


def _query(name, *constraints):
    return Query(name, list(constraints), [], lambda values: f"{name}: {values}")


def test_the_same_question_is_answered_from_the_kept_proof(monkeypatch):
    x = z3.Int("memo_x")
    first = solve(_query("a", x > 3, x < 2))
    assert first.result == PROVED
    calls = []
    real = z3.Solver
    monkeypatch.setattr(z3, "Solver", lambda *a: calls.append(1) or real(*a))
    again = solve(_query("b", x > 3, x < 2), 100)       # rebuilt: the same terms
    assert again.result == PROVED and again.name == "b" and not calls
    other = solve(_query("c", x > 3, x < 5))             # another question: solved
    assert other.result == REFUTED and calls


def test_a_refutation_is_solved_every_time(monkeypatch):
    y = z3.Int("memo_y")
    assert solve(_query("d", y > 0)).result == REFUTED
    calls = []
    real = z3.Solver
    monkeypatch.setattr(z3, "Solver", lambda *a: calls.append(1) or real(*a))
    assert solve(_query("e", y > 0)).result == REFUTED and calls


def test_the_kept_proofs_are_bounded(monkeypatch):
    monkeypatch.setattr(obligation, "_PROVED_KEPT", 3)
    monkeypatch.setattr(obligation, "_PROVED", {})
    z = z3.Int("memo_z")
    for k in range(5):
        assert solve(_query(f"f{k}", z > k, z < k)).result == PROVED
    assert len(obligation._PROVED) == 3
