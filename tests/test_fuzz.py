"""The differential fuzzer: its programs are valid TileLang whose expected results come
from the generator's own description, the tool agrees with them, and planted bugs are
found, minimized, grouped and saved; campaigns run in a pool, on Dask, and resume."""
import io
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from cuda_env import requires_nvcc
from spec.frontend import parse_source
from verify import pipeline
from verify.cli import main
from verify.expect import parse_expectation
from verify.fuzz import fuzz, groups
from verify.fuzzing import campaign, model
from verify.fuzzing import judge as judge_mod
from verify.fuzzing.grammar import GEMV_TILES, Kernel, Reducer, draw
from verify.fuzzing.judge import judge, judge_file, program_text
from verify.fuzzing.minimize import minimize
from verify.fuzzing.program import render

# The serial-epoch class (x_frag[it, j] inside T.Parallel inside T.serial) is rejected
# with a false R300 until the layout fix for exactly that class lands; its programs are
# generated anyway and this is the one finding the tests tolerate, only on them.
KNOWN_FALSE_R300 = ("rejected", "R300", "layout", "-")


def _draws(seed, n):
    return [draw(np.random.default_rng([seed, i])) for i in range(n)]


def _plain(**kw) -> Reducer:
    base = dict(surface="v2", dtype="float32", op="sum", in_dtype="float32",
                value="plain", predicate=None, seed=None, in_place=False, batch=None,
                output="copy", magnitude=4)
    return Reducer(**{**base, **kw})


def _kernel(reducers, **kw) -> Kernel:
    base = dict(grid=(1,), threads=64, ws=False, mode="direct", rows=2, cols=4, valid=4,
                tiles=1, fused=False, input_seed=7)
    return Kernel(**{**base, **kw}, reducers=tuple(reducers))


def test_the_grammar_covers_real_kernels():
    kernels = _draws(3, 400)
    reducers = [r for k in kernels for r in k.reducers]
    assert {k.mode for k in kernels} == {"direct", "staged", "pipelined", "serial"}
    assert {r.surface for r in reducers} == {"v2", "rfc", "legacy"}
    assert {"float16", "bfloat16", "uint32", "int32"} <= {r.dtype for r in reducers}
    assert "int8" in {r.in_dtype for r in reducers}
    assert {1, 2, 3} == {len(k.grid) for k in kernels}
    assert {96, 160} <= {k.threads for k in kernels}
    assert any(k.ws for k in kernels)
    assert {(k.rows, k.cols) for k in kernels if k.mode == "pipelined"} >= set(GEMV_TILES)
    assert {"if", "select"} <= {r.predicate for r in reducers}
    assert {True, False} == {r.in_place for r in reducers}
    assert any(r.batch for r in reducers) and any(r.seed is not None for r in reducers)
    assert any(r.consumes is not None for r in reducers)
    assert {"gemv", "abs", "plus1"} <= {r.value for r in reducers}
    for k in kernels[:40]:
        parse_source(render(k))


def test_the_model_is_the_description_evaluated():
    # rows of a (4, 3) input with a tail: only columns < 3 of the 4-wide loop count,
    # the reducer is seeded with 2, and there are two blocks of two rows each
    k = _kernel([_plain(seed=2, predicate="if")], grid=(2,), rows=2, cols=4, valid=3)
    given = model.inputs(k)
    assert given["a0"].shape == (4, 3)
    want = model.expected(k, given)
    assert np.array_equal(want["o0"], given["a0"].sum(axis=1) + 2)
    prod = _kernel([_plain(op="product", magnitude=1)], mode="staged", cols=5, valid=5)
    given = model.inputs(prod)
    assert set(np.unique(given["a0"])) <= {-1.0, 1.0}
    assert np.array_equal(model.expected(prod, given)["o0"], given["a0"].prod(axis=1))


def test_integer_wrap_and_casts_in_the_model():
    k = _kernel([_plain(dtype="uint32", in_dtype="int8", op="max", value="plus1")],
                rows=1, cols=6, valid=6)
    given = {"a0": np.array([[-1, 3, -8, 0, 2, 1]], dtype=np.int8)}
    # -1 cast to uint32 is 2**32 - 1, plus one wraps to 0; -8 + 1 is 2**32 - 7, the max
    assert model.expected(k, given)["o0"].tolist() == [2 ** 32 - 7]


def test_small_programs_carry_their_expected_result():
    k = _kernel([_plain(), _plain(op="max", surface="legacy", in_place=True)])
    given = model.inputs(k)
    text = program_text(k, given, model.expected(k, given))
    exp = parse_expectation(text)
    assert exp.ok and set(exp.results) == {"o0", "o1"} and set(exp.inputs) == {"a0", "a1"}


def test_generated_programs_verify_against_their_descriptions():
    seen = Counter()
    for k in _draws(11, 14):
        outcome = judge(k)
        seen[k.mode] += 1
        if k.mode == "serial" and outcome is not None:
            assert outcome.signature == KNOWN_FALSE_R300, outcome.summary
        else:
            assert outcome is None, (render(k), outcome)
    assert len(seen) >= 3


def test_an_interpreter_that_disagrees_with_the_description_is_a_finding(tmp_path):
    k = _kernel([_plain()])
    given = model.inputs(k)
    want = model.expected(k, given)
    path = tmp_path / "p.py"
    path.write_text(program_text(k, given, want))
    assert judge_file(str(path), given, want) is None
    wrong = {"o0": want["o0"] + 1}
    outcome = judge_file(str(path), given, wrong)
    assert outcome.signature == ("oracle", "o0", "interp", "interp")


def test_a_crash_is_a_finding_with_its_place(monkeypatch):
    def broken(loaded, planner):
        raise ZeroDivisionError("planted")
    monkeypatch.setattr(pipeline, "make_plan", broken)
    outcome = judge(_kernel([_plain()]))
    assert outcome.kind == "crash" and outcome.code == "ZeroDivisionError"
    assert outcome.stage.endswith(":broken")


def test_minimize_keeps_the_signature_and_shrinks():
    big = _kernel([_plain(), _plain(op="max", seed=3, batch=2),
                   _plain(value="consume", consumes=0)],
                  grid=(2, 1, 2), rows=8, cols=16, valid=16, mode="staged", fused=True)

    def signature_of(k):        # "the bug": any max reducer
        return ("rejected", "R999", "x", "-") if any(r.op == "max" for r in k.reducers) \
            else None
    small = minimize(big, ("rejected", "R999", "x", "-"), signature_of, budget=200)
    assert [r.op for r in small.reducers] == ["max"]
    assert small.grid == (1,) and small.rows == 1 and small.cols == 1
    assert small.reducers[0].seed is None and small.reducers[0].batch is None
    assert len(render(small)) < len(render(big)) / 2


def _legacy_everywhere(monkeypatch):
    real = pipeline.make_plan

    def legacy(loaded, planner):
        return real(loaded, "legacy")
    monkeypatch.setattr(pipeline, "make_plan", legacy)


def test_a_planted_lowering_bug_is_found_minimized_and_grouped(tmp_path, monkeypatch):
    _legacy_everywhere(monkeypatch)
    findings = fuzz(1, 1, str(tmp_path), budget=8)
    planted = [f for f in findings if f.signature != KNOWN_FALSE_R300]
    assert planted, "the legacy plan duplicates contributions; fuzzing must notice"
    assert {f.kind for f in planted} <= {"violation", "mismatch"}
    f = planted[0]
    assert (tmp_path / f.path.split("/")[-1]).read_text().startswith("# fuzz finding")
    assert len(open(f.path).read()) <= len(open(f.original).read())
    doc = json.loads((tmp_path / "findings.json").read_text())
    assert sum(g["count"] for g in doc["groups"]) == len(findings)
    assert doc["groups"] == groups(findings)


def test_a_pool_finds_what_one_process_finds(tmp_path, monkeypatch):
    _legacy_everywhere(monkeypatch)       # inherited by the forked workers
    one = fuzz(2, 1, str(tmp_path / "one"), budget=1)
    two = fuzz(2, 1, str(tmp_path / "two"), jobs=2, budget=1)
    assert one
    assert [(f.case, f.signature) for f in one] == [(f.case, f.signature) for f in two]


def test_a_corpus_resumes_a_campaign(tmp_path, monkeypatch):
    _legacy_everywhere(monkeypatch)
    corpus, out = str(tmp_path / "corpus"), str(tmp_path / "out")
    first = fuzz(2, 1, out, corpus=corpus, budget=1)
    ran = []
    again = fuzz(3, 1, out, corpus=corpus, budget=1,
                 progress=lambda case, verdict: ran.append(case))
    assert ran == [2]                                # cases 0 and 1 are not run again
    assert first and [f.case for f in first] == [f.case for f in again if f.case < 2]


def test_the_progress_bar_draws_only_on_a_terminal(tmp_path, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    quiet, tty = io.StringIO(), Tty()
    monkeypatch.setattr(sys, "stderr", quiet)
    fuzz(1, 6, str(tmp_path), bar=True)
    monkeypatch.setattr(sys, "stderr", tty)
    fuzz(2, 6, str(tmp_path), bar=True)
    assert quiet.getvalue() == ""
    assert "2/2 cases" in tty.getvalue() and "finding(s)" in tty.getvalue()


def test_a_dask_cluster_runs_the_campaign(tmp_path):
    distributed = pytest.importorskip(
        "distributed", reason="dask[distributed] is not installed (the `campaign` extra)")
    # worker processes, not threads: Z3 must not run in a second thread of this process.
    # Seed 0's first two cases are a serial-epoch kernel (the known false R300 while it
    # lasts) and a pipelined one; whatever their verdicts, Dask must give the local ones.
    ran = []
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        on_dask = fuzz(2, 0, str(tmp_path / "dask"), scheduler=cluster.scheduler_address,
                       budget=1, progress=lambda case, verdict: ran.append(case))
    local = fuzz(2, 0, str(tmp_path / "local"), budget=1)
    assert sorted(ran) == [0, 1]
    assert [(f.case, f.signature) for f in on_dask] == [(f.case, f.signature) for f in local]


def test_run_case_is_a_function_of_seed_and_case():
    a, b = campaign.run_case(5, 1), campaign.run_case(5, 1)
    assert a.outcome == b.outcome and campaign.kernel_of(5, 1) == campaign.kernel_of(5, 1)


def test_cli_fuzz_json(tmp_path, capsys):
    code = main(["fuzz", "--count", "2", "--seed", "6", "--out", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["count"] == 2
    assert all(tuple(f["signature"]) == KNOWN_FALSE_R300 for f in doc["findings"])
    assert code == (pipeline.EXIT_MISMATCH if doc["findings"] else pipeline.EXIT_OK)


FOUND = sorted((Path(__file__).parent / "fuzz_findings").glob("*.py"))


@pytest.mark.parametrize("path", FOUND, ids=lambda p: p.name)
@pytest.mark.xfail(reason="an open tool bug; once fixed, move the file to tests/programs/valid",
                   strict=True)
def test_minimized_tool_findings_get_the_verdict_a_correct_tool_gives(path):
    """Minimized reproducers of open tool bugs the fuzzer found, with the verdict a
    correct tool gives (tests/programs runs them once the fix lands). None is open now:
    the folder keeps only its README, and this test is skipped."""
    expected = parse_expectation(path.read_text(), str(path))
    report = pipeline.check(str(path), given=expected.inputs, blocks="all")
    assert report.exit_code == pipeline.EXIT_OK, [d.message for d in report.diagnostics]
    for name, want in expected.results.items():
        assert np.array_equal(report.reference.outputs[name], want)


@pytest.mark.nvcc
@requires_nvcc
def test_nvcc_compiles_every_plan_and_a_refused_unit_is_a_finding(monkeypatch):
    k = _kernel([_plain(), _plain(op="max", surface="legacy", in_place=True)])
    assert judge(k, ("sim", "nvcc")) is None

    class Broken:
        def translation_unit(self):
            return "__global__ void main_kernel() { undeclared_name = 1; }\n"
    monkeypatch.setattr(judge_mod, "render_cuda", lambda plan: Broken())
    outcome = judge(k, ("sim", "nvcc"))
    assert outcome.signature[:3] == ("compile", "nvcc", "codegen")
    assert "undeclared_name" in outcome.summary


def test_a_backend_that_cannot_run_stops_the_campaign(tmp_path, monkeypatch, capsys):
    # GPU finding (2026-12-01): 16 fuzz campaigns under compute-sanitizer at once ran the
    # device out of memory at context creation, and every case became a "crash" finding.
    # No context says nothing about the program: the campaign stops with exit 2.
    from codegen.runner import CudaUnavailable

    def no_context(plan, values):
        raise CudaUnavailable("make_default_context() wasn't able to create a context")
    monkeypatch.setattr(pipeline, "run_cuda", no_context)
    code = main(["fuzz", "--count", "3", "--seed", "1", "--backend", "cuda", "--jobs", "1",
                 "--out", str(tmp_path)])
    assert code == 2
    assert "cuda backend cannot run here" in capsys.readouterr().err
    assert not list(tmp_path.glob("finding-*"))
