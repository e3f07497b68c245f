"""Robustness: mangled programs (verify.fuzzing.mangle) get an answer, never an internal error
or a hang. The corpus test checks a fixed corpus of 2,000 through the CLI's own
`check --json`, two at a time (`pytest -m robustness` runs it alone); the unit tests pin
the generator's determinism and the runner's classification, time limit and shrinking."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from verify_reducer.verify.fuzzing import mangle

from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.expect import parse_expectation
from verify_reducer.verify.fuzzing.mangle import EDITS, mangle_corpus, mangle_one, seed_programs
from verify_reducer.verify.fuzzing.mangle_run import (OVER_TIME, format_summary, minimize, minimize_classes,
                               run_one, run_programs, summarize)

ROOT = Path(__file__).resolve().parent.parent
SEEDS = seed_programs(ROOT)
CORPUS_SIZE = 2000
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
    """2,000 mangled programs through `check --json`: exits 0–3 only, each within the
    time limit. A failure lists every crash class with a shrunk reproducer."""
    corpus = mangle_corpus(SEEDS, CORPUS_SIZE, base=CORPUS_SEED)
    sources = [m.source for m in corpus]
    outcomes = run_programs(sources, jobs=2, time_limit=TIME_LIMIT_S)
    summary = summarize(outcomes, slow_seconds=TIME_LIMIT_S)
    if summary.classes:
        minimize_classes(summary, sources, TIME_LIMIT_S, max_runs=80)
    firsts = {c.name: corpus[c.first] for c in summary.classes.values()}
    origin = "\n".join(f"  {name}: #{m.number} from {m.seed_name} by {'; '.join(m.edits)}"
                       for name, m in firsts.items())
    if summary.classes:
        pytest.fail(format_summary(summary, TIME_LIMIT_S) + "\n" + origin, pytrace=False)
    assert summary.total == CORPUS_SIZE and summary.over_time == 0


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
        assert expected.declared and (expected.ok or expected.errors), path.name
