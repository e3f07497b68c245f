"""The fast planner: Z3-proved butterfly partitions, the R400 refusal, and the fast plan
simulated against the canonical plan and the logical interpreter."""
from __future__ import annotations

import glob
import os

import pytest

from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_fast import FastPlanRefused
from verify_reducer.codegen.plan_sites import gather_reducers
from verify_reducer.spec.frontend import parse_file
from verify_reducer.codegen.proofs.fast import search_fast, smt2_queries

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))

def _func(name: str):
    return parse_file(os.path.join(ROOT, "examples", name)).func()


def _only(plan):
    (reducer,) = plan.reducers
    return reducer


def test_two_sites_get_canonical_with_a_counterexample_note():
    plan = plan_func(_func("two_sites_8_16.py"), "auto")
    rp = _only(plan)
    assert rp.planner == "canonical"
    (note,) = [d for d in rp.notes if d.code == "R400"]
    assert note.severity == "note"
    assert ("width 8: the site at line 34 puts iterations k=0 and k=8 of acc[0] in groups "
            "{0..7} and {8..15}: k=8 is missing from group {0..7}") in note.message
    assert note.span.line == 34


def test_the_plan_records_the_refusal_and_the_proofs_it_was_chosen_by():
    """The canonical fallback carries the search's record: every proof it ran (the
    refuted one among them, with its minimized counterexample) and the R400 refusal
    whose counterexample the report draws; the note is the refusal, used."""
    rp = _only(plan_func(_func("two_sites_8_16.py"), "auto"))
    chosen_by = rp.chosen_by
    assert chosen_by.refusal is not None and chosen_by.refusal.code == "R400"
    assert chosen_by.refusal.counterexample is not None
    (note,) = [d for d in rp.notes if d.code == "R400"]
    assert note.message == chosen_by.refusal.message + "; the canonical plan is used"
    refuted = [p for p in chosen_by.proofs if p.result == "refuted"]
    assert refuted and "k=8 is missing" in refuted[-1].counterexample
    assert all(p.ms >= 0 for p in chosen_by.proofs)
    fast = _only(plan_func(_func("minimal_v2.py"), "fast"))
    assert fast.chosen_by.refusal is None and all(p.proved for p in fast.chosen_by.proofs)
    assert _only(plan_func(_func("minimal_v2.py"), "canonical")).chosen_by is None


def test_reports_read_the_proofs_from_the_plan_without_searching(monkeypatch):
    """`check`'s epoch reports and `emit --what smt2` read the plan's record: once the
    plan is made, nothing is solved again."""
    from verify_reducer.codegen.proofs import fast as proofs_fast
    from verify_reducer.verify.oracle.pipeline import epoch_reports
    plan = plan_func(_func("minimal_rfc.py"), "auto")

    def search_again(*args):
        raise AssertionError("a report ran the fast search again")
    monkeypatch.setattr(proofs_fast, "_search", search_again)
    monkeypatch.setattr(proofs_fast, "solve", search_again)
    (report,) = epoch_reports(plan)
    assert report.plan == "fast" and report.proofs == list(_only(plan).chosen_by.proofs)
    assert [name for name, _ in smt2_queries(plan)] == \
        [f"total: {p.name}" for p in report.proofs]


def test_fast_planner_refuses_with_the_diagnostic():
    with pytest.raises(FastPlanRefused) as refused:
        plan_func(_func("two_sites_8_16.py"), "fast")
    assert refused.value.diagnostic.code == "R400"
    assert "k=8 is missing" in str(refused.value)


@pytest.mark.parametrize("name", ["minimal_v2.py", "minimal_rfc.py", "minimal_legacy.py"])
def test_minimal_example_is_fast_with_width_8(name):
    rp = _only(plan_func(_func(name)))
    assert rp.planner == "fast"
    assert all(site.guard_replica is None for site in rp.sites)
    (fp,) = rp.finalizes
    assert (fp.width, fp.scale, fp.barrier_count) == (8, 1, 128)
    assert rp.storage.replicate == 128 and rp.storage.slots_per_thread == 1


def test_gemv_is_fast_with_the_width_its_layouts_prove():
    # the update loop runs vectorized as thread = 8*(i % 16) + k // 8, slot =
    # 8*(i // 16) + k % 8: output i lives in the 8 threads of one lane group, so width 8
    # is exactly-once. y_frag is placed as thread = 32*rep + i, so thread 32 must write
    # y_frag[0], which only group {0..7} reduces: the destination is refuted and the
    # plan publishes into it (a redistribution through the workspace) instead of
    # widening to 128
    func = _func("gemv_pipelined.py")
    layouts = infer_layouts(func)
    (rs,) = gather_reducers(func, layouts)
    search = search_fast(rs)
    assert search.chosen.partition.width == 8 and search.chosen.needs_publish
    (refuted,) = search.chosen.destination
    assert "does not reduce that output" in refuted.counterexample
    rp = _only(plan_func(func, "fast", layouts))
    assert rp.finalizes[0].width == 8 and rp.sites[0].guard_replica is None
    assert rp.finalizes[0].publish is not None and rp.storage.slots_per_thread == 2


def test_proof_results_carry_name_time_and_smt2():
    func = _func("minimal_v2.py")
    layouts = infer_layouts(func)
    (rs,) = gather_reducers(func, layouts)
    plan = plan_func(func, "auto", layouts)
    proofs = _only(plan).chosen_by.proofs
    names = {p.name.split(" line")[0].split(" width")[0] for p in proofs}
    assert {"injective", "guard", "exactly-once", "sites agree", "slots", "destination result",
            "collective shape", "barrier count transpose"} <= names
    assert all(p.result == "proved" for p in proofs)
    assert all(set(p.to_json()) == {"name", "result", "ms", "counterexample"} for p in proofs)
    queries = smt2_queries(plan)
    assert len(queries) == len(proofs)
    assert all("(check-sat)" in text for _, text in queries)


def test_every_proof_on_every_example_is_decided():
    """No query of the examples comes back unknown (an unknown is never a pass, and on
    these programs it would mean a weak encoding). How long they take is a benchmark's
    business (timed unit tests fail on a loaded machine), not this test's."""
    for path in EXAMPLES:
        func = parse_file(path).func()
        layouts = infer_layouts(func)
        for rs in gather_reducers(func, layouts):
            for proof in search_fast(rs).proofs():
                assert proof.result != "unknown", (path, proof.name)


def _simulator():
    try:
        from verify_reducer.interp.simulate import simulate
    except ImportError as exc:  # the simulator is written alongside this planner
        pytest.skip(f"interp.simulate is not importable yet: {exc}")
    return simulate


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_fast_equals_canonical_equals_interpreter(path):
    simulate = _simulator()
    from verify_reducer.interp.accept import within_bound
    from verify_reducer.interp.logical import run
    from verify_reducer.verify.oracle.inputs import prepare
    func = parse_file(path).func()
    layouts = infer_layouts(func)
    auto = plan_func(func, "auto", layouts)
    if not any(rp.planner == "fast" for rp in auto.reducers):
        pytest.skip("no reducer of this example has a proved fast plan")
    inputs = prepare(func, 0)
    reference = run(func, inputs)
    for plan in (auto, plan_func(func, "canonical", layouts)):
        result = simulate(plan, inputs)
        assert not result.violations, [v.message for v in result.violations]
        for name, exact in reference.outputs.items():
            assert within_bound(result.outputs[name], exact, reference.bounds[name]).all(), name


# ----------------------------------------------------------------------------- cost

def _repeated_update(times: int) -> str:
    """examples/minimal_v2.py with its update line written `times` times."""
    with open(os.path.join(ROOT, "examples", "minimal_v2.py")) as f:
        lines = f.read().splitlines(keepends=True)
    (at,) = [i for i, line in enumerate(lines) if "T.reducer_update(total" in line]
    lines[at:at + 1] = [lines[at]] * times
    return "".join(line for line in lines if not line.startswith("# expect"))


def test_identical_sites_are_proved_once():
    from verify_reducer.spec.frontend import parse_source
    one = parse_source(_repeated_update(1), "one.py").func()
    many = parse_source(_repeated_update(40), "many.py").func()
    proofs = {}
    for name, func in (("one", one), ("many", many)):
        rp = _only(plan_func(func, "auto", infer_layouts(func)))
        proofs[name] = rp.chosen_by.proofs
        assert rp.planner == "fast"
    assert [p.name for p in proofs["many"]] == [p.name for p in proofs["one"]]
    assert all(p.proved for p in proofs["many"])


def test_a_spent_proof_budget_falls_back_to_canonical_with_a_note(monkeypatch):
    import verify_reducer.codegen.proofs.fast as proofs_fast
    monkeypatch.setattr(proofs_fast, "DEFAULT_BUDGET_S", 0.0)
    plan = plan_func(_func("minimal_v2.py"), "auto")
    rp = _only(plan)
    assert rp.planner == "canonical"
    (note,) = [d for d in rp.notes if d.code == "R400"]
    assert "the proof budget of 0 s for total ran out after 0 queries" in note.message
    assert "never a pass" in note.message and "the canonical plan is used" in note.message
    with pytest.raises(FastPlanRefused, match="proof budget"):
        plan_func(_func("minimal_v2.py"), "fast")


def test_smt2_text_is_written_only_when_asked(monkeypatch):
    import z3
    func = _func("minimal_v2.py")
    layouts = infer_layouts(func)

    def refuse(self):
        raise AssertionError("SMT-LIB text written while planning")
    real = z3.Solver.sexpr
    monkeypatch.setattr(z3.Solver, "sexpr", refuse)
    proofs = _only(plan_func(func, "auto", layouts)).chosen_by.proofs
    assert proofs and all(p.proved for p in proofs)
    monkeypatch.setattr(z3.Solver, "sexpr", real)
    text = proofs[0].smt2
    assert "(declare-fun" in text and text.endswith("(check-sat)\n")
