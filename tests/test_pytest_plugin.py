"""The pytest plugin (verify_reducer.pytest_plugin), run in pytester sessions: the
marker parametrizes a test over programs and fails it with the oracle's report when the
backend disagrees; the fixture asserts with the same report."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy  # noqa: F401  (imported here: pytester's in-process runs drop modules
import pytest  # that they import first, and numpy cannot be imported twice)

import verify_reducer.verify.oracle.expect  # noqa: F401
from verify_reducer import oracle  # noqa: F401

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = "verify_reducer.pytest_plugin"


@pytest.fixture
def session(pytester, monkeypatch):
    """A pytester folder with two good programs and one the verifier rejects; the
    plugin loaded by name (autoloading off, so an installed copy does not load twice).
    The files made there have names no module of this suite has (pytester runs in
    this process, where tests/test_examples.py is already imported)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    progs = pytester.path / "progs"
    progs.mkdir()
    for name in ("minimal_v2.py", "gemv_pipelined.py"):
        shutil.copy(ROOT / "examples" / name, progs / name)
    shutil.copy(ROOT / "tests" / "programs" / "invalid" / "r201_update_after_finalize.py",
                progs / "r201.py")
    pytester.makepyfile(vrp_backends='''
        import numpy as np
        from verify_reducer import oracle

        def honest(program, inputs):
            return oracle.backend("interp")(program, inputs)

        def drop_first(program, inputs):
            """Loses one contribution: x[0] of the sum, A[0, 0] * x[0] of the GEMV."""
            out = honest(program, inputs)
            if "out" in out:
                out["out"] = out["out"] - inputs["x"][0]
            else:
                out["y"][0] -= np.float32(inputs["A"][0, 0]) * np.float32(inputs["x"][0])
            return out
    ''')
    return pytester


def run(pytester, *args):
    return pytester.runpytest("-p", PLUGIN, "-p", "no:cacheprovider", *args)


def test_the_marker_passes_an_honest_backend_and_fails_a_dropping_one(session):
    session.makepyfile(test_vrp_marked='''
        import pytest
        from vrp_backends import honest, drop_first

        @pytest.mark.reducer_backend(honest, programs="progs")
        def test_honest(reducer_case):
            assert reducer_case.report.ok
            assert reducer_case.report.inputs_kind == "witness"

        @pytest.mark.reducer_backend(drop_first, programs="progs")
        def test_dropping():
            pass
    ''')
    result = run(session, "-rA")
    # r201.py expects an error: it is left out, so two cases per test
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "*PASSED test_vrp_marked.py::test_honest[[]gemv_pipelined[]]*",
        "*PASSED test_vrp_marked.py::test_honest[[]minimal_v2[]]*",
        "*FAILED test_vrp_marked.py::test_dropping[[]gemv_pipelined[]]*",
        "*FAILED test_vrp_marked.py::test_dropping[[]minimal_v2[]]*",
    ])
    text = result.stdout.str()
    # the failure is the oracle's report: the element, the values, the witness audit
    assert "y: MISMATCH in 1 of 128 element(s)" in text
    assert "out: MISMATCH in 1 of 1 element(s)" in text
    assert "exact expected" in text and "witness inputs:" in text


def test_the_marker_takes_builtin_backends_and_reports_their_violations(session):
    session.makepyfile(test_vrp_builtin='''
        import pytest

        @pytest.mark.reducer_backend("sim:canonical", programs="progs/minimal_v2.py")
        def test_canonical(reducer_case):
            assert reducer_case.report.tensor("out").status == "exact"

        @pytest.mark.reducer_backend("sim:legacy", programs=["progs/minimal_v2.py"])
        def test_legacy(reducer_case):
            pass
    ''')
    result = run(session)
    result.assert_outcomes(passed=1, failed=1)
    assert "violation: R503" in result.stdout.str()


def test_a_program_the_oracle_rejects_is_skipped_when_named(session):
    session.makepyfile(test_vrp_rejected='''
        import pytest
        from vrp_backends import honest

        @pytest.mark.reducer_backend(honest, programs="progs/r201.py")
        def test_it(reducer_case):
            pass
    ''')
    result = run(session, "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*the oracle rejects*r201.py*"])


def test_the_fixture_asserts_with_the_report(session):
    session.makepyfile(test_vrp_fixture='''
        import numpy as np
        from vrp_backends import honest, drop_first

        def test_backend_matches(reducer_oracle):
            report = reducer_oracle.assert_matches("progs/gemv_pipelined.py", honest)
            assert report.tensor("y").status == "exact"

        def test_outputs_match(reducer_oracle):
            ins = reducer_oracle.witness_inputs("progs/minimal_v2.py")
            total = np.float32(ins["x"].astype(np.float64).sum())
            reducer_oracle.assert_matches("progs/minimal_v2.py", {"out": [total]}, ins)

        def test_dropping_fails(reducer_oracle):
            reducer_oracle.assert_matches("progs/minimal_v2.py", drop_first)

        def test_programs(reducer_oracle):
            names = [p.name for p in reducer_oracle.programs("progs")]
            assert names == ["gemv_pipelined.py", "minimal_v2.py"]
            assert len(reducer_oracle.programs()) >= 10      # the project's examples
    ''')
    result = run(session)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*test_dropping_fails*", "*out: MISMATCH*"])


def test_the_default_programs_are_the_projects_examples(session):
    session.makepyfile(test_vrp_examples='''
        import pytest

        @pytest.mark.reducer_backend("interp")
        def test_interp(reducer_case):
            assert reducer_case.report.ok
    ''')
    result = run(session, "--collect-only", "-q")
    expected = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
    for stem in expected:
        result.stdout.fnmatch_lines([f"*test_interp[[]{stem}[]]*"])


def test_marker_misuse_is_a_usage_error(session):
    session.makepyfile(test_vrp_bad='''
        import pytest

        @pytest.mark.reducer_backend(programs="progs")
        def test_no_backend(reducer_case):
            pass
    ''')
    result = run(session)
    assert result.ret != 0
    assert "needs a backend" in result.stderr.str() + result.stdout.str()


def test_an_inconclusive_comparison_fails_never_passes(session):
    """Issue 24: the bfloat16 sum of 256 terms on its own `# input:` values has no
    usable bound; the honest interpreter's answer is not a pass, in the marker and in
    the fixture."""
    shutil.copy(ROOT / "tests" / "programs" / "inconclusive" / "bf16_sum_256.py",
                session.path / "progs" / "bf16_256.py")
    session.makepyfile(test_vrp_inconclusive='''
        import pytest
        from vrp_backends import honest

        @pytest.mark.reducer_backend(honest, programs="progs/bf16_256.py",
                                     inputs="seeded")
        def test_marked(reducer_case):
            pass

        def test_fixture(reducer_oracle):
            reducer_oracle.assert_matches("progs/bf16_256.py", honest, "seeded")
    ''')
    result = run(session, "-rA")
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    # each test fails for that reason (the short summary repeats the message in full
    # where pytest sees CI=true, so count the FAILED lines, not the message)
    failed = [line for line in text.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 2 and all("inconclusive" in line for line in failed), failed
    assert "inconclusive: 1 element(s) could not be judged" in text
    assert "out[0] = " in text and "not judged, its bound is infinite" in text
    assert "verdict: inconclusive" in text and "verdict: match" not in text


def test_the_fixture_and_the_marker_read_paths_from_the_test_file(session):
    """Regression (issue 29): the fixture read relative paths from the folder pytest was
    started in, the marker from the test file's; both read from the test file's now, so
    a suite answers the same from anywhere."""
    session.syspathinsert()                   # vrp_backends, from the test in suite/
    sub = session.path / "suite"
    sub.mkdir()
    shutil.copytree(session.path / "progs", sub / "kernels")
    (sub / "test_vrp_where.py").write_text('''
import pytest
from vrp_backends import honest

@pytest.mark.reducer_backend(honest, programs="kernels/minimal_v2.py")
def test_marked(reducer_case):
    assert reducer_case.path.parent.name == "kernels"

def test_fixture(reducer_oracle):
    reducer_oracle.assert_matches("kernels/gemv_pipelined.py", honest)
    ins = reducer_oracle.witness_inputs("kernels/minimal_v2.py")
    assert list(ins) == ["x", "out"]
    assert [p.name for p in reducer_oracle.programs("kernels")] == \\
        ["gemv_pipelined.py", "minimal_v2.py"]
''')
    result = run(session, str(sub))           # started from the session's root
    result.assert_outcomes(passed=2)


def test_a_backend_breaking_the_contract_fails_with_one_line(session):
    """Regression (issue 29): a backend returning an output the kernel does not have
    showed a traceback through the plugin; it fails with the oracle's reason now."""
    session.makepyfile(test_vrp_contract='''
        import pytest
        from vrp_backends import honest

        def misnamed(program, inputs):
            out = honest(program, inputs)
            out["not_there"] = out.pop("out")
            return out

        @pytest.mark.reducer_backend(misnamed, programs="progs/minimal_v2.py")
        def test_marked(reducer_case):
            pass

        def test_fixture(reducer_oracle):
            reducer_oracle.assert_matches("progs/minimal_v2.py", misnamed)
    ''')
    result = run(session)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*minimal_v2.py: OutputsError: no tensor named not_there*"])
    assert "pytest_plugin.py" not in result.stdout.str()
