"""The differential fuzzer: its programs are valid TileLang whose expected results come
from the generator's own description, the tool agrees with them, and planted bugs are
found, minimized, grouped and saved; campaigns run in a pool, on Dask, and resume; a
TileLang campaign (TileLang faked: tests/fake_tilelang.py) finds TileLang's planted
wrong results and refusals and writes each as a bug report."""
import io
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from cuda_env import requires_nvcc
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.cli.output import fuzz_meter
from verify_reducer.verify.oracle.expect import parse_expectation
from verify_reducer.verify.fuzzing.command import fuzz, groups
from verify_reducer.verify.fuzzing import campaign, model
from verify_reducer.verify.fuzzing import judge as judge_mod
from verify_reducer.verify.fuzzing.grammar import GEMV_TILES, Kernel, Reducer, draw
from verify_reducer.verify.fuzzing.judge import judge, judge_file, program_text
from verify_reducer.verify.fuzzing.minimize import minimize
from verify_reducer.verify.fuzzing.program import render
from verify_reducer.verify.fuzzing.tilelang_target import failure_key

from fake_tilelang import FakeTileLang

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
    assert findings, "the legacy plan duplicates contributions; fuzzing must notice"
    assert {f.kind for f in findings} <= {"violation", "mismatch"}
    f = findings[0]
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


def test_the_progress_is_a_bar_on_a_terminal_and_lines_elsewhere(tmp_path):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    lines, tty = io.StringIO(), Tty()
    fuzz(1, 6, str(tmp_path), meter=fuzz_meter(lines, color=False))
    fuzz(2, 6, str(tmp_path), meter=fuzz_meter(tty, color=False))
    assert lines.getvalue().splitlines()[0] == "fuzz: 0/1 programs, 0 finding(s), 0 s"
    assert lines.getvalue().splitlines()[-1].startswith("fuzz: 1/1 programs, 0 finding(s)")
    assert "\r" not in lines.getvalue() and "\x1b" not in lines.getvalue()
    assert "2/2" in tty.getvalue() and "programs, 0 finding(s)" in tty.getvalue()
    assert "\x1b[" in tty.getvalue()            # drawn in place: cursor control


def test_a_dask_cluster_runs_the_campaign(tmp_path):
    distributed = pytest.importorskip(
        "distributed", reason="dask[distributed] is not installed (the `campaign` extra)")
    # worker processes, not threads: Z3 must not run in a second thread of this process.
    # Seed 0's first two cases are a serial-epoch kernel and a pipelined one; whatever
    # their verdicts, Dask must give the local ones.
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
    assert doc["findings"] == [] and code == pipeline.EXIT_OK


def _open_finding(path: Path):
    """A reproducer as a strict xfail whose reason is its `# Open fuzz finding` line: once
    the tool is fixed it passes, the xfail fails, and the file moves to
    tests/programs/valid."""
    reason = next(line[2:] for line in path.read_text().splitlines()
                  if line.startswith("# Open fuzz finding"))
    return pytest.param(path, marks=pytest.mark.xfail(reason=reason, strict=True),
                        id=path.name)


FOUND = [_open_finding(p) for p in sorted((Path(__file__).parent / "fuzz_findings")
                                          .glob("*.py"))]


@pytest.mark.parametrize("path", FOUND)
def test_minimized_tool_findings_get_the_verdict_a_correct_tool_gives(path):
    """Minimized reproducers of open tool bugs the fuzzer found, with the verdict a
    correct tool gives (tests/programs runs them once the fix lands)."""
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
    from verify_reducer.codegen.runner import CudaUnavailable

    def no_context(plan, values):
        raise CudaUnavailable("make_default_context() wasn't able to create a context")
    monkeypatch.setattr(pipeline, "run_cuda", no_context)
    code = main(["fuzz", "--count", "3", "--seed", "1", "--backend", "cuda", "--jobs", "1",
                 "--out", str(tmp_path)])
    assert code == 2
    assert "cuda backend cannot run here" in capsys.readouterr().err
    assert not list(tmp_path.glob("finding-*"))


# ----------------------------------------------------------------------------- 2-D reducers
# and update loops split over the columns

def test_the_grammar_draws_2d_reducers_and_several_loops_per_epoch():
    kernels = _draws(3, 400)
    two_d = [k for k in kernels if k.kept]
    split = [k for k in kernels if k.splits]
    assert {k.mode for k in two_d} == {"direct", "staged"}
    assert {len(k.splits) for k in split} == {1, 2}
    assert {k.mode for k in split} >= {"direct", "staged", "pipelined"}
    text = render(next(k for k in two_d if k.rows > 1 and k.kept > 1))
    assert re.search(r"T\.alloc_reducer\(\(\d+, \d+\), ", text)
    assert re.search(r"for i, c, k in T\.Parallel\(\d+, \d+, \d+\):", text)
    k = next(k for k in split if len(k.reducers) == 1 and not k.kept)
    assert len(re.findall(r"acc0\[|reducer_update\(acc0", render(k))) == len(k.splits) + 1
    for k in two_d[:10] + split[:10]:
        parse_source(render(k))


def test_a_2d_reducer_and_split_loops_in_the_model():
    # cell (i, c) of block b sums columns c * 5 .. c * 5 + 4 of input row 2 b + i; the
    # columns are fed by three loops (0, 1-2, 3-4) and the seed 2 is added once
    k = _kernel([_plain(seed=2)], grid=(2,), rows=2, cols=5, valid=5, kept=3, splits=(1, 3))
    given = model.inputs(k)
    assert given["a0"].shape == (4, 15)
    want = model.expected(k, given)["o0"]
    assert np.array_equal(want, given["a0"].reshape(4, 3, 5).sum(axis=2) + 2)
    text = render(k)
    assert "T.alloc_reducer((2, 3), T.float32" in text
    assert "for i, c, k in T.Parallel(2, 3, 2):" in text
    assert "T.reducer_update(acc0[i, c], a0[(bx * 2) + i, (c * 5) + (k + 1)])" in text


@pytest.mark.parametrize("kernel", [
    _kernel([_plain(), _plain(op="max", surface="rfc")], kept=2, splits=(1,), fused=True),
    _kernel([_plain(op="min", surface="legacy", in_place=True, output="loop", batch=2),
             _plain(value="consume", consumes=0)], mode="staged", rows=4, cols=6,
            valid=6, kept=3, splits=(2, 5)),
    _kernel([_plain(dtype="int32", in_dtype="int8", op="bitxor", predicate="select")],
            rows=3, cols=8, valid=5, kept=2, splits=(4,)),
    _kernel([_plain(value="gemv")], mode="pipelined", rows=2, cols=8, valid=8, tiles=3,
            tail=3, splits=(5,)),
    _kernel([_plain()], rows=4, cols=6, valid=6, interleave=True, splits=(3,)),
], ids=["direct-fused", "staged-consumer", "direct-tail", "pipelined-tail", "interleaved"])
def test_the_interpreter_equals_the_model_on_2d_and_split_programs(kernel):
    given = model.inputs(kernel)
    want = model.expected(kernel, given)
    with_file = program_text(kernel, given, want)
    assert "T.Parallel" in with_file
    assert judge(kernel) is None, render(kernel)


def test_drawn_2d_and_split_programs_verify_against_their_descriptions():
    # serial epochs with split loops included (issue #12's split serial rows)
    drawn = [k for k in _draws(12, 120) if k.kept or k.splits]
    assert sum(bool(k.kept) for k in drawn) >= 3 and sum(bool(k.splits) for k in drawn) >= 3
    assert sum(k.mode == "serial" and bool(k.splits) for k in drawn[:10]) >= 2
    for k in drawn[:10]:
        assert judge(k) is None, render(k)


def test_minimize_drops_the_second_dimension_and_the_splits():
    big = _kernel([_plain()], rows=4, cols=8, valid=8, kept=3, splits=(2, 5))

    def signature_of(k):        # "the bug": any reducer at all
        return ("rejected", "R999", "x", "-")
    small = minimize(big, ("rejected", "R999", "x", "-"), signature_of, budget=200)
    assert small.kept == 0 and small.splits == ()


# ----------------------------------------------------------------------------- TileLang

BASELINE = "tl.reducer_force_baseline"
BASELINE_LABEL = f"tilelang/{BASELINE}=true"


def _counting_twice_under_baseline() -> FakeTileLang:
    """A fake TileLang that is right under its default plan and, under the forced
    baseline, counts every contribution twice (gemv_pipelined on TileLang 0.1.15, as
    measured): each output is twice the interpreter's."""
    fake = FakeTileLang()

    def respond(arrays):
        truth = pipeline.oracle(pipeline.load(fake.program),
                                {n: a.copy() for n, a in arrays.items()}).outputs
        twice = bool((fake.compiled[-1]["pass_configs"] or {}).get(BASELINE))
        return {n: v * 2 if twice and n.startswith("o") else v for n, v in truth.items()}
    fake.respond = respond
    return fake


def _body_size(path: str) -> int:
    """A program's size without its header (a small program's inputs are inline)."""
    return sum(len(line) for line in Path(path).read_text().splitlines()
               if not line.startswith("#"))


def test_a_tilelang_campaign_finds_minimizes_groups_and_reports_a_wrong_result(
        tmp_path, monkeypatch):
    _counting_twice_under_baseline().install(monkeypatch)
    setup = pipeline.tilelang_setup({BASELINE: "true"})
    findings = fuzz(2, 1, str(tmp_path), ("sim", "tilelang"), budget=6, tilelang=setup)
    planted = [f for f in findings if f.signature[3] == BASELINE_LABEL]
    assert planted and all(f.signature == ("mismatch", "o0", "backend", BASELINE_LABEL)
                           for f in planted)
    f = planted[0]
    assert _body_size(f.path) < _body_size(f.original)
    folder = Path(f.report)
    assert folder.parent == tmp_path and folder.name.startswith("tilelang-main-mismatch-")
    assert {"program.py", "original.py", "inputs.npz", "expected.npz", "got.npz",
            "report.md", "report.json"} <= {p.name for p in folder.iterdir()}
    facts = json.loads((folder / "report.json").read_text())
    assert facts["pass_configs"] == {BASELINE: True}
    assert facts["tilelang_version"] == "0.1.15"
    assert facts["original_program"] == f"case {f.case} of `verify-reducer fuzz --seed 1`"
    assert facts["outputs"][-1]["common_ratio"] == 2.0
    md = (folder / "report.md").read_text()
    assert "TileLang version: 0.1.15" in md and f"--tilelang-config {BASELINE}=true" in md
    assert "got = 2 x expected" in md
    doc = json.loads((tmp_path / "findings.json").read_text())
    (group,) = [g for g in doc["groups"] if g["signature"]["backend"] == BASELINE_LABEL]
    assert group["count"] == len(planted) and group["report"] in {g.report for g in planted}

    # the same TileLang under its default plan is right: no TileLang finding
    right = fuzz(2, 1, str(tmp_path / "default"), ("sim", "tilelang"), budget=6,
                 tilelang=pipeline.tilelang_setup())
    assert not [f for f in right if f.signature[3].startswith("tilelang")]


XOR_BUTTERFLY = ("InternalError: Traceback (most recent call last):\n"
                 "  3: tvm::tl::ReduceOpNode::Lower(...)\n"
                 '  File "/src/op/reduce.cc", line 412\n'
                 "InternalError: Check failed: (IsPow2(96)) is false: XOR-butterfly "
                 "AllReduce requires logical_width 96 to be a power of two")


def test_a_tilelang_refusal_is_reported_with_its_message(tmp_path, monkeypatch):
    fake = FakeTileLang(fail_at="compile", failure=RuntimeError(XOR_BUTTERFLY))
    fake.install(monkeypatch)
    findings = fuzz(1, 1, str(tmp_path), ("sim", "tilelang"), budget=3,
                    tilelang=pipeline.tilelang_setup())
    (f,) = [f for f in findings if f.signature[3] == "tilelang/default"]
    # grouped by TileLang's message (its check, not the traceback; any width)
    assert f.signature == ("refused", failure_key(XOR_BUTTERFLY), "compile",
                           "tilelang/default")
    folder = Path(f.report)
    assert folder.name.startswith("tilelang-main-refused-")
    assert not (folder / "got.npz").exists()
    facts = json.loads((folder / "report.json").read_text())
    assert facts["tilelang_error"]["stage"] == "compile"
    assert "XOR-butterfly AllReduce requires logical_width 96" in \
        facts["tilelang_error"]["message"]
    assert "TileLang failed at its compile stage" in (folder / "report.md").read_text()


def test_failure_keys_ignore_frames_and_numbers():
    assert failure_key(XOR_BUTTERFLY) == ("InternalError: Check failed: (IsPowN(N)) is "
                                          "false: XOR-butterfly AllReduce requires "
                                          "logical_width N ")
    assert failure_key(XOR_BUTTERFLY) == failure_key(XOR_BUTTERFLY.replace("96", "160"))
    assert failure_key("RuntimeError: Check failed: reducer plan") == \
        "RuntimeError: Check failed: reducer plan"
    assert len(failure_key("ValueError: " + "x" * 500)) == 100


def test_the_tilelang_config_reaches_worker_processes(tmp_path, monkeypatch, capsys):
    fake = _counting_twice_under_baseline()
    fake.install(monkeypatch)           # inherited by the forked workers
    code = main(["fuzz", "--backend", "tilelang", "--tilelang-config", f"{BASELINE}=true",
                 "--count", "2", "--seed", "1", "--jobs", "2", "--minimize-budget", "1",
                 "--out", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 3 and doc["tilelang"] == {"version": "0.1.15",
                                             "pass_configs": {BASELINE: True}}
    planted = [f for f in doc["findings"] if f["signature"]["backend"] == BASELINE_LABEL]
    assert planted and all(Path(f["report"]).is_dir() for f in planted)
    # every compile ran in a worker: the wrong results prove the config got there
    assert fake.compiled == []


def test_fuzz_without_tilelang_stops_before_the_first_program(tmp_path, monkeypatch,
                                                              capsys):
    from verify_reducer.codegen import tilelang_backend

    def missing():
        raise tilelang_backend.TileLangUnavailable("TileLang is not installed")
    drawn = []
    monkeypatch.setattr(tilelang_backend, "_runtime", missing)
    monkeypatch.setattr(campaign, "kernel_of", lambda seed, case: drawn.append(case))
    code = main(["fuzz", "--backend", "tilelang", "--count", "3", "--jobs", "2",
                 "--out", str(tmp_path)])
    assert code == 2 and drawn == [] and list(tmp_path.iterdir()) == []
    assert "the tilelang backend cannot run here: TileLang is not installed" in \
        capsys.readouterr().err


def test_fuzz_tilelang_config_needs_the_tilelang_backend_and_a_known_key(
        tmp_path, monkeypatch, capsys):
    code = main(["fuzz", "--tilelang-config", f"{BASELINE}=true", "--out", str(tmp_path)])
    assert code == 2 and "applies to --backend tilelang only" in capsys.readouterr().err
    FakeTileLang().install(monkeypatch)
    code = main(["fuzz", "--backend", "tilelang", "--tilelang-config", "tl.reducer_force=1",
                 "--out", str(tmp_path)])
    assert code == 2 and f"did you mean {BASELINE}?" in capsys.readouterr().err
