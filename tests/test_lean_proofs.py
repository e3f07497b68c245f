"""The fast search's cheaper way to the same proofs (issue 29: a cold check under half a
second): queries asked first of a kept plain Z3 solver (codegen.proofs.obligation's
lean answer), a query's terms made once per content (`shared_terms`, keyed by
Site.question) and a lean refutation kept for the same terms. None of it may change
what the search decides or shows: the proofs, the refusal and its counterexample, the
SMT-LIB text — compared here with the usual solver alone, program by program."""
from __future__ import annotations

import z3

import pytest

from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.codegen.plan_sites import gather_reducers
from verify_reducer.codegen.proofs import obligation
from verify_reducer.codegen.proofs.fast import search_fast
from verify_reducer.codegen.proofs.layout import SiteTerms, injective_query
from verify_reducer.codegen.proofs.obligation import PROVED, REFUTED, UNKNOWN, Query, solve
from verify_reducer.codegen.proofs.signature import update_sites
from verify_reducer.spec.frontend import parse_file

from test_cli_conventions import ROOT

# verified ones, one reducer or several asking one question, and refusals whose
# counterexample is shown (a minimized refutation, and a destination's)
PROGRAMS = ("examples/minimal_rfc.py", "examples/seeded_init.py", "examples/bitwise.py",
            "examples/two_sites_8_16.py", "examples/gemv_pipelined.py",
            "examples/gemv_nondividing.py", "tests/programs/valid/iters48_on_128.py",
            "tests/programs/valid/in_place_fast_keeps_every_output.py",
            "tests/programs/valid/gpu_f16_sum_flat_loop.py",
            "tests/programs/invalid/r209_legacy_offset_index.py")


def _forget() -> None:
    """Nothing kept from an earlier search: every query is built and asked anew."""
    for table in (obligation._PROVED, obligation._REFUTED, obligation._TERMS,
                  SiteTerms._made):
        table.clear()


def _outcomes(path: str) -> list:
    """Everything a search decides and shows, for each reducer of the program."""
    func = parse_file(str(ROOT / path)).func()
    layouts = infer_layouts(func)
    out = []
    for rs in gather_reducers(func, layouts):
        search = search_fast(rs)
        out.append((rs.reducer.name,
                    [(p.name, p.result, p.counterexample, p.witness, p.line, p.smt2,
                      repr(p.evidence)) for p in search.proofs()],
                    None if search.legal else search.refusal,
                    repr(search.refusal_evidence), search.refusal_unpictured,
                    search.chosen.partition if search.chosen else None,
                    search.chosen.needs_publish if search.chosen else None,
                    [p.result for p in search.chosen.destination] if search.chosen else None))
    return out


@pytest.mark.parametrize("path", PROGRAMS)
def test_the_lean_way_decides_and_shows_what_the_usual_solver_does(path, monkeypatch):
    _forget()
    lean = _outcomes(path)
    _forget()
    monkeypatch.setattr(obligation, "_lean_answer", lambda *args: None)
    usual = _outcomes(path)
    _forget()
    assert lean == usual


class _GivesUp:
    """A plain solver that never settles a query (a planted fault): every query must
    then be asked the usual way, and the answers are the usual ones."""

    def __init__(self):
        self.solver = z3.Solver()

    def __getattr__(self, name):
        return getattr(self.solver, name)

    checks = 0

    def check(self, *args):
        _GivesUp.checks += 1
        return z3.unknown


def test_an_unsettled_lean_query_is_asked_the_usual_way(monkeypatch):
    _forget()
    usual = _outcomes("examples/two_sites_8_16.py")
    _forget()
    monkeypatch.setattr(obligation.z3, "SimpleSolver", _GivesUp)
    obligation._lean.asked = obligation.LEAN_QUERIES     # the next query makes one
    try:
        assert _outcomes("examples/two_sites_8_16.py") == usual
        assert _GivesUp.checks > 0                         # every lean query gave up
    finally:
        _forget()
        monkeypatch.undo()
        obligation._lean.asked = obligation.LEAN_QUERIES  # a real solver again


def test_an_unknown_stays_unknown():
    # x^3 + y^3 = z^3 has no positive solution, which neither solver proves: the lean
    # one's unknown is no answer, and the usual one's unknown is never a pass
    x, y, z = z3.Ints("x y z")
    query = Query("fermat", [x > 0, y > 0, z > 0, x * x * x + y * y * y == z * z * z],
                  [], lambda w: "a cube sum")
    assert solve(query, 200, lean=True).result == UNKNOWN


def test_a_refutation_kept_for_the_same_terms_is_a_model_of_them():
    _forget()
    x = z3.Int("x")
    query = Query("small", [x >= 3, x < 10], [("x", x)], lambda w: f"x={w['x']}")
    first = solve(query, minimize=False, lean=True)
    kept = solve(Query("again", [x >= 3, x < 10], [("x", x)], lambda w: f"x is {w['x']}"),
                 minimize=False, lean=True)
    assert first.result == kept.result == REFUTED and kept.witness == first.witness
    assert kept.counterexample == f"x is {first.witness['x']}"       # its own sentence
    assert 3 <= kept.witness["x"] < 10
    # a shown counterexample is minimized by the usual solver, never taken from the table
    assert solve(query, lean=True).witness == {"x": 3}
    _forget()


def test_sites_with_one_question_share_terms_and_keep_their_own_lines():
    # seeded_init's two reducers: one layout, one participant set, two lines
    _forget()
    func = parse_file(str(ROOT / "examples/seeded_init.py")).func()
    layouts = infer_layouts(func)
    first, second = gather_reducers(func, layouts)
    (a,) = update_sites(first.updates, layouts, first.participants)
    (b,) = update_sites(second.updates, layouts, second.participants)
    assert a.line != b.line and a.question == b.question
    qa, qb = injective_query(a), injective_query(b)
    assert qa.constraints is qb.constraints                     # made once
    assert (qa.name, qb.name) == (f"injective line {a.line}", f"injective line {b.line}")
    searches = [search_fast(rs) for rs in (first, second)]
    assert all(p.result == PROVED for s in searches for p in s.proofs())
    lines = {p.line for p in searches[1].proofs()}          # its site's, its finalize's
    assert b.line in lines and a.line not in lines
    _forget()


def test_a_query_the_plain_core_needs_long_for_is_decided_the_usual_way():
    # the regression the render snapshot found: fuzz kernel 113 of seed 7 (a 16384-
    # iteration loop) has an injective query the plain core proves in about 85 ms and
    # the combined solver gives up on; taken from the lean solver it turned the refused
    # fast plan into a proved one and changed the program's CUDA. Past LEAN_TIMEOUT_MS
    # the query is the usual solver's, whatever it answers on this machine.
    from verify_reducer.spec.frontend import parse_source
    from verify_reducer.verify.fuzzing.campaign import kernel_of
    from verify_reducer.verify.fuzzing.program import render
    func = parse_source(render(kernel_of(7, 113)), "fuzz113.py").func()
    layouts = infer_layouts(func)
    (rs,) = gather_reducers(func, layouts)
    (site,) = update_sites(rs.updates, layouts, rs.participants)
    _forget()
    lean = solve(injective_query(site), 500, lean=True).result
    _forget()
    assert lean == solve(injective_query(site), 500).result
