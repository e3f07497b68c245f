"""Robustness: mangled programs (verify.fuzzing.mangle) get an answer, never an internal error
or a hang. The corpus test runs a fixed corpus of 800 (VERIFY_ROBUSTNESS_CORPUS sets
another size: 2,000 nightly) round-robin through the campaign's five commands (the CLI's own code paths), two at a time (`pytest -m
robustness` runs it alone); the unit tests pin
the generator's determinism and the runner's classification, time limit and shrinking,
the campaign's other commands, and the deep, planted-code and probe generators with
their ground truth (the full campaign, benchmarks/mangle_campaign.py, is not a test)."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

import pytest

from verify_reducer.verify.fuzzing import mangle

from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.expect import parse_expectation
from verify_reducer.verify.fuzzing.mangle import EDITS, mangle_corpus, mangle_one, seed_programs
from verify_reducer.verify.fuzzing.mangle_run import (COMMANDS, EXECUTED, OVER_TIME, Job, Outcome,
                                                      format_summary, minimize, minimize_classes,
                                                      run_jobs, run_one, run_programs, summarize)
from verify_reducer.verify.fuzzing import deep, planted, probes
from verify_reducer.spec import limits

ROOT = Path(__file__).resolve().parent.parent
SEEDS = seed_programs(ROOT)
# the default suite's corpus (about 80 s on two cores); a nightly run sets
# VERIFY_ROBUSTNESS_CORPUS=2000 or more (README, "Run the tests")
CORPUS_SIZE = int(os.environ.get("VERIFY_ROBUSTNESS_CORPUS", "800"))
CORPUS_SEED = 0
TIME_LIMIT_S = 60.0          # a program still running after this is a hang


def test_seeds_are_the_examples_and_valid_programs():
    names = [name for name, _ in SEEDS]
    assert "examples/minimal_v2.py" in names
    assert any(n.startswith("tests/programs/valid/") for n in names)
    assert names == sorted(names)


def test_a_seed_gives_the_same_corpus_every_time():
    first = mangle_corpus(SEEDS, 50, base=7)
    again = mangle_corpus(SEEDS, 50, base=7)
    assert first == again
    other = mangle_corpus(SEEDS, 50, base=8)
    assert [m.source for m in first] != [m.source for m in other]
    assert mangle_one(SEEDS, 7, 13) == first[13]


def test_every_edit_kind_is_used_and_changes_programs():
    corpus = mangle_corpus(SEEDS, 400, base=CORPUS_SEED)
    words = {e.split()[0] for m in corpus for e in m.edits}
    for word in ("insert", "truncate", "prepend", "constant", "dtype", "op", "repeat",
                 "nest", "delete", "duplicate", "swap", "replace"):
        assert word in words, word
    seeds = dict(SEEDS)
    changed = sum(m.source != seeds[m.seed_name] for m in corpus)
    assert changed >= 390


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_each_edit_is_deterministic_and_describes_itself(kind):
    import random
    source = dict(SEEDS)["examples/minimal_v2.py"]
    edit = EDITS[kind][1]
    a = edit(source, random.Random(5))
    b = edit(source, random.Random(5))
    assert a == b
    assert isinstance(a[0], bytes) and a[1]


def test_the_extreme_constants_and_deep_nesting_are_written():
    import random
    source = dict(SEEDS)["examples/minimal_v2.py"]
    constants = {mangle.constant_swap(source, random.Random(i))[1].split("-> ")[1]
                 for i in range(200)}
    assert {"0", "-1", "2**31", "2**40", "2**63", "2**256"} <= constants
    nested = [mangle.nest_expression(source, random.Random(i)) for i in range(200)]
    deepest = max(nested, key=lambda n: len(n[0]))
    assert len(deepest[0]) > len(source) + 5000


def test_an_answer_is_not_a_failure():
    outcome = run_one(dict(SEEDS)["examples/minimal_v2.py"], time_limit=60)
    assert outcome.exit_code == pipeline.EXIT_OK and not outcome.failed
    assert outcome.peak_rss_mb > 10 and outcome.seconds > 0
    rejected = run_one(b"def main(:\n", time_limit=60)
    assert rejected.exit_code == pipeline.EXIT_REJECTED and not rejected.failed


def _planted_crash(path, *args, **kwargs):
    source = Path(path).read_bytes()
    if b"BOOM" in source:
        raise ZeroDivisionError("planted")
    if b"HANG" in source:
        time.sleep(30)
    return real_check(path, *args, **kwargs)


real_check = pipeline.check


def test_internal_errors_are_classified_by_exception_and_frame(monkeypatch):
    # the children are forked from this process, so they inherit the planted bug
    monkeypatch.setattr(pipeline, "check", _planted_crash)
    outcomes = run_programs([b"x = 1  # BOOM\n", b"y = 2\n"], jobs=2, time_limit=60)
    assert outcomes[0].exit_code == pipeline.EXIT_INTERNAL
    assert outcomes[0].crash == "ZeroDivisionError in verify/cli/commands.py:cmd_check"
    assert "planted" in outcomes[0].detail
    assert not outcomes[1].failed


def test_a_hang_is_killed_at_the_time_limit(monkeypatch):
    monkeypatch.setattr(pipeline, "check", _planted_crash)
    start = time.monotonic()
    outcome = run_one(b"# HANG\n", time_limit=1.0)
    assert outcome.crash == OVER_TIME and outcome.exit_code is None
    assert time.monotonic() - start < 20


def test_a_failure_is_shrunk_to_what_still_fails_the_same_way(monkeypatch):
    monkeypatch.setattr(pipeline, "check", _planted_crash)
    source = b"".join(b"line %d = %d\n" % (i, i) for i in range(12)) + b"a = 'BOOM'\n"
    crash = run_one(source).crash
    small = minimize(source, crash, time_limit=60, max_runs=150)
    assert b"BOOM" in small and len(small) <= 8


def test_the_summary_counts_exits_and_names_each_class(monkeypatch):
    monkeypatch.setattr(pipeline, "check", _planted_crash)
    sources = [b"# BOOM one\n", b"ok = 1\n", b"# BOOM two\n"]
    outcomes = run_programs(sources, jobs=2, time_limit=60)
    summary = summarize(outcomes)
    assert summary.exit_codes[pipeline.EXIT_INTERNAL] == 2
    (cls,) = summary.classes.values()
    assert cls.count == 2 and cls.first == 0
    minimize_classes(summary, sources, time_limit=60, max_runs=60)
    assert cls.reproducer == b"BOOM"
    text = format_summary(summary)
    assert "ZeroDivisionError in verify/cli/commands.py:cmd_check: 2 program(s)" in text
    assert "    BOOM" in text


@pytest.mark.robustness
def test_mangled_corpus_gets_answers_not_crashes_or_hangs():
    """CORPUS_SIZE mangled programs, program k through campaign command k mod 5 (`check
    --json`, `run --no-verify --backend sim`, `emit --what cuda --no-verify`, `compare`
    on witness inputs, `check --inputs witness`): exits 0–3 or 5 only, each within the
    time limit, no memory kill. A failure lists every crash class with a shrunk
    reproducer."""
    corpus = mangle_corpus(SEEDS, CORPUS_SIZE, base=CORPUS_SEED)
    commands = list(COMMANDS)
    jobs = [Job(m.source, commands[m.number % len(commands)]) for m in corpus]
    outcomes = run_jobs(jobs, jobs=2, time_limit=TIME_LIMIT_S)
    summary = summarize(outcomes, slow_seconds=TIME_LIMIT_S)
    if summary.classes:
        minimize_classes(summary, jobs, TIME_LIMIT_S, max_runs=80)
    firsts = {c.name: corpus[c.first] for c in summary.classes.values()}
    origin = "\n".join(f"  {name}: #{m.number} from {m.seed_name} by {'; '.join(m.edits)}"
                       for name, m in firsts.items())
    if summary.classes:
        pytest.fail(format_summary(summary, TIME_LIMIT_S) + "\n" + origin, pytrace=False)
    assert summary.total == CORPUS_SIZE and summary.over_time == 0
    assert summary.memory_kills == 0 and set(summary.by_command) == set(commands)


def test_the_reproducers_carry_the_verdict_a_correct_tool_gives():
    """tests/programs/robustness/: the campaign's findings, each with the answer a
    correct tool gives (tests/test_programs.py checks that the tool gives it)."""
    folder = ROOT / "tests/programs/robustness"
    files = sorted(folder.glob("**/*.py"))
    assert folder / "product_zero_overflow.py" in files
    assert folder / "huge_grid_classes.py" in files
    assert len(files) >= 10
    for path in files:
        expected = parse_expectation(path.read_text(), str(path))
        assert expected.declared and (expected.ok or expected.inconclusive or expected.errors), \
            path.name


# ----------------------------------------------------------------------------- commands

@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_campaign_command_answers_a_valid_program(command):
    outcome = run_one(dict(SEEDS)["examples/minimal_v2.py"], time_limit=60, command=command)
    assert not outcome.failed, outcome
    assert outcome.exit_code == pipeline.EXIT_OK and outcome.command == command
    assert len(outcome.steps) == len(COMMANDS[command])


def test_compare_reaches_the_oracle_when_the_simulator_wrote_nothing():
    # a program the verifier rejects: the simulator step writes no outputs, compare
    # still runs (on the empty .npz the job starts with) and rejects the program
    rejected = dict(SEEDS)["examples/minimal_v2.py"].replace(b"T.reducer_init(total)\n", b"")
    outcome = run_one(rejected, time_limit=60, command="compare")
    assert not outcome.failed and outcome.exit_code == pipeline.EXIT_REJECTED
    assert [s["argv"][0] for s in outcome.steps] == ["run", "compare"]


def _raise_memory(path, *args, **kwargs):
    raise MemoryError("planted allocation")


def test_a_memory_error_is_a_memory_kill_not_just_a_crash(monkeypatch):
    monkeypatch.setattr(pipeline, "check", _raise_memory)
    outcome = run_one(b"x = 1\n", time_limit=60, command="witness")
    assert outcome.memory and outcome.crash.startswith("MemoryError")
    summary = summarize([outcome, run_one(b"y = 1\n", time_limit=60, command="sim")])
    assert summary.memory_kills == 1 and summary.signals == 0
    (cls,) = summary.classes.values()
    assert cls.name.startswith("witness: MemoryError") and cls.command == "witness"
    assert "memory kills: 1" in format_summary(summary)


def _touch_canary(path, *args, **kwargs):
    Path(os.environ["CANARY_FOR_TEST"]).write_text("ran")
    return real_check(path, *args, **kwargs)


def test_a_canary_written_during_a_command_is_a_failure(monkeypatch, tmp_path):
    canary = tmp_path / "canary"
    monkeypatch.setenv("CANARY_FOR_TEST", str(canary))
    monkeypatch.setattr(pipeline, "check", _touch_canary)
    source = dict(SEEDS)["examples/minimal_v2.py"]
    outcome = run_one(Job(source, "check", canary=str(canary)), time_limit=60)
    assert outcome.crash == EXECUTED and not canary.exists()


# ----------------------------------------------------------------------------- planted code

def test_planted_programs_are_deterministic_and_name_their_own_canary(tmp_path):
    first = planted.planted_programs(str(tmp_path))
    assert first == planted.planted_programs(str(tmp_path))
    assert len(first) >= 31 and len({p.canary for p in first}) == len(first)
    assert all(p.canary.encode() in p.source or p.kind == "utf7_cookie" for p in first)
    kinds = {p.kind for p in first}
    assert {"dunder_import", "exec", "decorator", "default_argument", "class_body", "fstring",
            "walrus", "getattr_builtins", "utf7_cookie", "import_os"} <= kinds


# kinds whose payload runs when Python imports the file (the rest run only when TileLang
# traces main): each must really create its canary, or the campaign proves nothing
LIVE_AT_IMPORT = ("statement", "import_os", "dunder_import", "exec", "eval", "compile",
                  "decorator", "decorator_expression", "default_argument", "annotation",
                  "shape_call", "constant_call", "class_body", "fstring", "walrus", "lambda",
                  "comprehension", "getattr_builtins", "getattr_module", "builtins_dict",
                  "with_statement", "try_finally", "assert", "utf7_cookie")


def test_the_planted_payloads_are_live_under_python(tmp_path):
    stub = tmp_path / "stub" / "tilelang"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("")
    (stub / "language.py").write_text(
        "class _Any:\n"
        "    def __call__(self, *a, **k):\n"
        "        return a[0] if len(a) == 1 and callable(a[0]) and not k else self\n"
        "    def __getattr__(self, name):\n        return _Any()\n"
        "    def __getitem__(self, key):\n        return self\n"
        "    def __enter__(self):\n        return 0\n"
        "    def __exit__(self, *a):\n        return False\n"
        "def __getattr__(name):\n    return _Any()\n")
    by_kind = {p.kind: p for p in planted.planted_programs(str(tmp_path / "canaries"))}
    (tmp_path / "canaries").mkdir()
    for kind in LIVE_AT_IMPORT:
        path = tmp_path / f"{kind}.py"
        path.write_bytes(by_kind[kind].source)
        subprocess.run([sys.executable, str(path)], env={**os.environ,
                       "PYTHONPATH": str(tmp_path / "stub")}, capture_output=True, timeout=60)
        assert Path(by_kind[kind].canary).exists(), kind


def test_the_tool_never_runs_planted_code(tmp_path):
    chosen = {"dunder_import", "decorator", "utf7_cookie", "shape_call"}
    programs = [p for p in planted.planted_programs(str(tmp_path)) if p.kind in chosen]
    for p in programs:
        for command in ("check", "sim"):
            outcome = run_one(Job(p.source, command, canary=p.canary), time_limit=60)
            assert not outcome.failed, (p.kind, command, outcome.crash)
            assert not Path(p.canary).exists()


# ----------------------------------------------------------------------------- deep programs

def test_deep_programs_reach_each_limit_and_past_it():
    programs = deep.deep_programs()
    assert programs == deep.deep_programs()
    names = [p.name for p in programs]
    assert len(set(names)) == len(names) >= 60
    it, blocks = limits.MAX_ITERATIONS, limits.MAX_BLOCKS
    for name in (f"expr_depth_{limits.MAX_EXPR_DEPTH}", f"expr_depth_{limits.MAX_EXPR_DEPTH + 1}",
                 f"stmt_depth_if_{limits.MAX_STMT_DEPTH}",
                 f"stmt_depth_if_{limits.MAX_STMT_DEPTH + 1}", f"serial_{it}", f"serial_{it + 1}",
                 f"runtime_serial_{it + 1}", "serial_1048576", f"grid_{blocks + 1}",
                 "grid_2147483647", "update_sites_300", "let_chain_5000",
                 f"reducer_{limits.MAX_ELEMENTS + 1}"):
        assert name in names


def test_a_deep_program_past_the_expression_limit_is_refused_quickly():
    program = {p.name: p for p in deep.deep_programs()}["expr_depth_65"]
    outcome = run_one(program.source, time_limit=60)
    assert outcome.exit_code == pipeline.EXIT_REJECTED and outcome.seconds < 20


# ----------------------------------------------------------------------------- probes

def test_the_ground_truth_rules_on_known_cases():
    f2i = probes.float_to_int
    assert f2i(1.5e19, "uint64") == 15_000_000_000_000_000_000     # in range, exact
    assert f2i(1e19, "int64") == 2**63 - 1 and f2i(-1e19, "int64") == -2**63
    assert f2i(2.0**64 + 8192, "int32") == 2**31 - 1
    assert f2i(3e9, "int32") == 2**31 - 1 and f2i(3e9, "uint32") == 3_000_000_000
    assert f2i(math.nan, "int8") == 0 and f2i(-math.inf, "uint32") == 0
    assert f2i(math.inf, "uint64") == 2**64 - 1 and f2i(-0.5, "uint8") == 0
    # narrow targets convert through 32 bits and keep their own bits (the H200's rule)
    assert f2i(-129.5, "int8") == 127 and f2i(255.9, "uint8") == 255
    assert f2i(300.0, "uint8") == 44 and f2i(3e9, "int16") == -1
    assert f2i(math.nan, "int64") == -2**63 and f2i(math.nan, "uint64") == 2**63
    assert f2i(math.nan, "uint32", "float32") == 0 and f2i(math.nan, "uint32") == 2**31
    cmp = probes.compare
    assert cmp(">", 5, "uint32", -1, None) is None                     # no single meaning
    assert cmp(">", 5, "uint32", 2**32 - 1, "uint32") is False
    assert cmp("<", -1, "int32", 1, "uint32") is False                 # in uint32
    assert cmp("<", -1, "int64", 1, "uint32") is True                  # int64 is wider
    assert cmp("<", -1, "int64", 1, "uint64") is False
    assert cmp("<", -1, "int8", 1, "uint8") is False                   # TVM: uint8, not int
    assert cmp("<", 7, "int32", 2**31, None) is True                   # folded, exact
    assert math.copysign(1, probes.ieee_max(-0.0, 0.0)) == 1
    assert math.copysign(1, probes.ieee_min(0.0, -0.0)) == -1
    assert probes.int_to_float(65520, "float16") == math.inf          # ties to even: 65536
    assert probes.int_to_float(65519, "float16") == 65504.0
    assert probes.int_to_float(2**53 + 1, "float64") == 2.0**53
    assert probes.int_to_float(2**24 + 3, "float32") == 2.0**24 + 4
    assert probes.int_to_float(2**64 - 1, "bfloat16") == 2.0**64     # float32 rounds up
    assert probes.int_to_float(2**31 + 2**23 + 1, "bfloat16") == 2.0**31     # via float32
    assert probes.int_to_float(65519, "bfloat16") == 65280.0           # cut (the H200)
    assert probes.int_to_float(-65520, "bfloat16") == -65280.0
    assert probes.truncate_float(1.0 + 2**-8, "bfloat16") == 1.0
    assert probes.int_to_float(2**31 + 2**23 + 1, "float32") == 2.0**31 + 2**23
    assert probes.exact_sum([3e38, 3e38, -3e38], "float32") == float(np.float32(3e38))
    assert math.isnan(probes.stays_nan(1.0, "bfloat16"))
    assert set(probes.RULES) == {"float_to_int", "int_to_float", "compare", "max_min", "nan",
                                 "float_sum", "float_to_float8"}
    e4, e5 = "float8_e4m3fn", "float8_e5m2"
    assert [probes.to_float8(v, e4) for v in (1.0625, 1.1875, 2.0**-10, 3 * 2.0**-10)] == \
        [1.0, 1.25, 0.0, 2.0**-8]                      # ties to even, subnormals kept
    assert [probes.to_float8(v, e4) for v in (449.0, 464.0, 465.0, math.inf, -1e300)] == \
        [448.0, 448.0, 448.0, 448.0, -448.0]           # saturated, never NaN
    assert [probes.to_float8(v, e5) for v in (61440.0, math.inf, 2.0**-17)] == \
        [57344.0, 57344.0, 0.0]
    assert probes.to_float8(1 + 2.0**-4 + 2.0**-40, e4) == 1.0    # through float32
    assert math.isnan(probes.to_float8(math.nan, e5))


def test_round_float_agrees_with_numpy_where_numpy_is_trusted():
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(0, 1e3, 300), rng.normal(0, 1e-6, 100),
                             [6.1e-5, 5.96e-8, 1e-8, 65519.99, 65520.0, -65536.0]])
    for dtype in ("float16", "float32"):
        for v in values:
            with np.errstate(over="ignore"):          # 65520 -> inf in float16 is the point
                want = float(np.asarray(v, np.float64).astype(dtype))
            got = probes.round_float(Fraction(float(v)), dtype)
            assert got == want, (dtype, v, got, want)


def test_probes_are_deterministic_and_cover_every_class():
    first, again = probes.all_probes(), probes.all_probes()
    assert [(p.name, p.source, p.truth) for p in first] == \
        [(p.name, p.source, p.truth) for p in again]
    assert all(np.array_equal(a.inputs[k], b.inputs[k], equal_nan=True)
               for a, b in zip(first, again) for k in a.inputs)
    assert len({p.name for p in first}) == len(first)
    assert {p.cls for p in first} == {"cast", "nan_payload", "signed_zero", "mixed_sign",
                                      "int_to_float", "overflow_sum", "long_sum",
                                      "float8_cast"}
    assert all(p.rule in probes.RULES for p in first)
    cast = {p.name: p for p in first}["cast_float64_to_uint64"]
    assert 15_000_000_000_000_000_000 in cast.truth
    bf16 = {p.name: p for p in first}["long_sum_bfloat16_256"]
    assert len(bf16.inputs["x"]) == 256 and not bf16.exact and bf16.wrong != bf16.truth


def _outcome(*steps) -> Outcome:
    return Outcome(0, 1.0, 10.0, command="probe", steps=[
        {"argv": argv, "exit_code": code, "stdout": json_text} for argv, code, json_text in steps])


def _doc(values, unchecked=0) -> str:
    import json
    return json.dumps({"outputs": {"out": {"values": values}},
                       "comparisons": {"sim/auto": [{"unchecked": unchecked}]}})


def test_the_probe_judge_tells_wrong_from_honest():
    probe = {p.name: p for p in probes.all_probes()}["zero_max_reducer_float32"]
    truth = list(probe.truth)
    run, check = ["run", "{prog}", "--backend"], ["check", "{prog}"]
    ok = probes.judge(probe, _outcome((run, 0, _doc(truth)), (check, 0, _doc(truth))))
    assert ok.status == "ok"
    flipped = [-v for v in truth]                  # the signs of the zeros are the answer
    wrong = probes.judge(probe, _outcome((run, 0, _doc(flipped)), (check, 0, _doc(truth))))
    assert wrong.status == "silently wrong" and "run --backend" in wrong.notes[0]
    unchecked = probes.judge(probe, _outcome((check, 0, _doc(truth, unchecked=2))))
    assert unchecked.status == "silently wrong" and "unchecked" in unchecked.notes[0]
    assert probes.judge(probe, _outcome((check, 5, _doc(flipped)))).status == "ok"
    assert probes.judge(probe, _outcome((check, 3, _doc(truth)))).status == "false alarm"
    assert probes.judge(probe, _outcome((check, 1, "{}"))).status == "refused"
    no_meaning = {p.name: p for p in probes.all_probes()}["sign_uint32_gt_minus1"]
    assert no_meaning.truth == ()                   # u > -1 must be refused
    assert probes.judge(no_meaning, _outcome((check, 1, "{}"))).status == "ok"
    assert probes.judge(no_meaning, _outcome((check, 0, _doc([0] * 4)))).status == \
        "silently wrong"
    summed = {p.name: p for p in probes.all_probes()}["overflow_sum_float32"]
    matched = probes.judge(summed, _outcome((["compare", "{prog}", "{dir}/wrong.npz"], 0, "{}")))
    assert matched.status == "silently wrong"


def test_a_probe_runs_through_the_tool_and_is_judged():
    probe = {p.name: p for p in probes.all_probes()}["int_int64_to_float64"]
    (verdict,), (outcome,) = probes.run_probes([probe], time_limit=60)
    assert not outcome.failed and [s["argv"][0] for s in outcome.steps] == ["run", "check", "run"]
    # int64 -> float64 rounds to nearest even in the interpreter and the simulator
    assert verdict.status == "ok" and verdict.probe == probe.name, verdict.notes
