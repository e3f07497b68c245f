"""The cache of `check`'s answers (verify.cli.cache, issue 29): an unchanged program
checked again with the same flags and tool is answered from disk and says so; any
change the verdict can depend on is a new key; a bad entry is removed with a warning;
the cache stays within its size, least recently used first; --no-cache and
`cache = false` leave it alone; an answer from it never loads numpy."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from verify_reducer.verify.cli import cache
from verify_reducer.verify.cli.judged import CACHED_LINE, STDERR, STDOUT, Judged
from verify_reducer.verify.oracle import pipeline

from test_cli_conventions import ROOT, cli
from test_factories import KERNEL

EXAMPLE = ROOT / "examples" / "minimal_rfc.py"
REFUSED = ROOT / "examples" / "refused" / "saturating_add.py"


@pytest.fixture
def answers(tmp_path, monkeypatch):
    """The cache on (tests/conftest.py turns it off), in a folder of this test's own;
    yields its answers/ folder."""
    monkeypatch.delenv("VERIFY_REDUCER_NO_CACHE", raising=False)
    monkeypatch.setenv("VERIFY_REDUCER_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "answers"


@pytest.fixture
def program(tmp_path):
    """A copy of an example that a test may edit."""
    path = tmp_path / "prog.py"
    shutil.copy(EXAMPLE, path)
    return str(path)


def no_judging(monkeypatch):
    """From here on, a program that is judged fails the test (an answer must come from
    the cache)."""
    def judged(*args, **kwargs):
        raise AssertionError("judged, not answered from the cache")
    monkeypatch.setattr(pipeline, "check", judged)


def untimed(report: str) -> str:
    """A text report without the proofs' timings (they differ from run to run)."""
    return re.sub(r"in \d+ ms", "in N ms", report)


def entries(folder) -> list:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


# ----------------------------------------------------------------------------- hits

def test_an_unchanged_program_is_answered_from_the_cache_and_says_so(answers, program,
                                                                     capsys, monkeypatch):
    code, out, err = cli(capsys, "check", program)
    assert code == 0 and CACHED_LINE not in out and len(entries(answers)) == 1
    no_judging(monkeypatch)
    again = cli(capsys, "check", program)
    assert again == (0, out + CACHED_LINE + "\n", err)


def test_a_rejection_is_answered_with_its_diagnostics(answers, capsys, monkeypatch):
    code, out, err = cli(capsys, "check", str(REFUSED))
    assert code == 1 and "R601" in err
    no_judging(monkeypatch)
    assert cli(capsys, "check", str(REFUSED)) == (1, out + CACHED_LINE + "\n", err)


def test_quiet_says_cached_after_the_verdict(answers, capsys, monkeypatch):
    cli(capsys, "check", "-q", str(REFUSED))
    no_judging(monkeypatch)
    code, out, _ = cli(capsys, "check", "-q", str(REFUSED))
    assert code == 1 and out == f"{REFUSED}: rejected (R601 at 16:1; cached)\n"


def test_the_json_document_says_cached_and_fits_the_schema(answers, program, capsys):
    pytest.importorskip("jsonschema")
    from verify_reducer.json_schemas import validator
    code, out, _ = cli(capsys, "check", "--json", program)
    first = json.loads(out)
    assert code == 0 and first["cached"] is False
    with pytest.MonkeyPatch.context() as patch:
        no_judging(patch)
        code, out, _ = cli(capsys, "check", "--json", program)
    again = json.loads(out)
    assert code == 0 and again == {**first, "cached": True}
    validator("check").validate(first)
    validator("check").validate(again)
    code, out, _ = cli(capsys, "check", "--json", program, str(REFUSED))
    several = json.loads(out)      # one cached, one judged now
    assert [d["cached"] for d in several["programs"]] == [True, False]
    validator("check").validate(several)


def test_jobs_judge_only_what_the_cache_lacks(answers, program, capsys):
    cli(capsys, "check", "-q", program)
    code, out, _ = cli(capsys, "check", "-q", "--jobs", "2", program, str(REFUSED))
    assert code == 1 and out.splitlines()[:2] == [
        f"{program}: verified (cached)", f"{REFUSED}: rejected (R601 at 16:1)"]
    assert len(entries(answers)) == 2


def test_several_programs_all_cached_end_with_the_same_summary(answers, program, capsys,
                                                                monkeypatch):
    first = cli(capsys, "check", "-q", program, str(REFUSED))
    assert first[0] == 1 and first[1].endswith("2 programs: 1 verified, 1 rejected; exit 1\n")
    no_judging(monkeypatch)
    again = cli(capsys, "check", "-q", program, str(REFUSED))
    assert again[0] == 1 and again[1].splitlines() == [
        f"{program}: verified (cached)", f"{REFUSED}: rejected (R601 at 16:1; cached)",
        "2 programs: 1 verified, 1 rejected; exit 1"]


@pytest.mark.parametrize("form", ["sarif", "junit"])
def test_documents_made_from_cached_answers_are_the_same(answers, program, capsys,
                                                         monkeypatch, tmp_path, form):
    written = tmp_path / f"report.{form}"
    argv = ["check", "--format", form, "--json-file", str(written), program, str(REFUSED)]
    assert cli(capsys, *argv)[0] == 1
    first = written.read_text()
    no_judging(monkeypatch)
    assert cli(capsys, *argv)[0] == 1
    assert written.read_text() == first


def test_the_ci_workflows_junit_step_is_answered_from_its_sarif_step(answers, program,
                                                                     capsys, monkeypatch,
                                                                     tmp_path):
    """docs/ci.md runs check twice, for SARIF then JUnit: one answer serves both."""
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    assert cli(capsys, "check", "--format", "sarif", "--json-file", str(sarif), program)[0] == 0
    no_judging(monkeypatch)
    assert cli(capsys, "check", "--format", "junit", "--json-file", str(junit), program)[0] == 0
    assert "<testcase" in junit.read_text()


def test_a_program_on_stdin_is_cached_by_its_text(answers, capsys, monkeypatch):
    import io
    source = EXAMPLE.read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(source))
    cli(capsys, "check", "-q", "-")
    monkeypatch.setattr(sys, "stdin", io.StringIO(source))
    no_judging(monkeypatch)
    assert cli(capsys, "check", "-q", "-")[1] == "<stdin>: verified (cached)\n"


def test_an_answer_from_the_cache_loads_neither_numpy_nor_the_verifier(answers, program):
    env = {**os.environ, "VERIFY_REDUCER_CACHE_DIR": str(answers.parent)}
    env.pop("VERIFY_REDUCER_NO_CACHE", None)
    probe = ("import sys; from verify_reducer.verify.cli.entry import main; "
             f"code = main(['check', '-q', {program!r}]); "
             "print(code, sorted(m for m in ('numpy', 'z3', 'ml_dtypes', 'networkx', "
             "'verify_reducer.verify.oracle.pipeline') if m in sys.modules))")
    first = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                           text=True, timeout=300)
    assert first.stdout.splitlines()[-1] != "0 []"          # judged: the verifier loaded
    again = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                           text=True, timeout=300)
    assert again.stdout.splitlines() == [f"{program}: verified (cached)", "0 []"]


def test_a_played_answer_keeps_the_order_of_its_streams(answers):
    """stdout and stderr merged into one pipe: the diagnostics (stderr) come before the
    report (stdout), as written, judged now and from the cache alike."""
    env = {**os.environ, "VERIFY_REDUCER_CACHE_DIR": str(answers.parent)}
    env.pop("VERIFY_REDUCER_NO_CACHE", None)
    argv = [sys.executable, "-m", "verify_reducer", "check", str(REFUSED)]

    def merged() -> str:
        return subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=300).stdout

    first, again = merged(), merged()
    assert first.index("error[R601]") < first.index("verdict: rejected")
    assert untimed(again) == untimed(first) + CACHED_LINE + "\n"


# ----------------------------------------------------------------------------- misses

def test_an_edited_source_is_judged_again(answers, program, capsys):
    cli(capsys, "check", "-q", program)
    with open(program, "a") as f:
        f.write("# an edit\n")
    assert cli(capsys, "check", "-q", program)[1] == f"{program}: verified\n"
    assert len(entries(answers)) == 2


@pytest.mark.parametrize("flags", [["--seed", "1"], ["--blocks", "all"],
                                   ["--max-memory", "1G"], ["--values", "--json"]])
def test_a_flag_the_answer_depends_on_is_a_new_key(answers, program, capsys, flags):
    cli(capsys, "check", "-q", program)
    code, out, _ = cli(capsys, "check", "-q", program, *flags)
    assert "(cached)" not in out and '"cached": true' not in out
    assert len(entries(answers)) == 2


def test_a_bound_parameter_is_part_of_the_key(answers, tmp_path, capsys):
    kernel = tmp_path / "row_sum.py"
    kernel.write_text(KERNEL)
    bound = ["--param", "M=64", "--param", "N=64"]
    cli(capsys, "check", "-q", str(kernel), *bound)
    assert cli(capsys, "check", "-q", str(kernel), *bound)[1].endswith("(cached)\n")
    other = cli(capsys, "check", "-q", str(kernel), "--param", "M=128", "--param", "N=64")
    assert other[1] == f"{kernel}: verified\n"


def test_accepted_codes_of_the_configuration_are_part_of_the_key(answers, program, capsys,
                                                                 monkeypatch, tmp_path):
    cli(capsys, "check", "-q", program)
    (tmp_path / "pyproject.toml").write_text('[tool.verify-reducer]\nignore = ["R400"]\n')
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "check", "-q", program)[1] == f"{program}: verified\n"


def test_a_change_of_the_tools_source_is_a_new_tool(answers, program, capsys, monkeypatch,
                                                    tmp_path):
    extra = tmp_path / "tool_part.py"
    extra.write_text("A = 1\n")
    files = cache._source_files() + [("verify/tool_part.py", extra)]
    monkeypatch.setattr(cache, "_source_files", lambda: files)
    monkeypatch.setattr(cache, "_FINGERPRINT", [])
    cli(capsys, "check", "-q", program)
    assert cli(capsys, "check", "-q", program)[1].endswith("(cached)\n")
    extra.write_text("A = 2\n")
    monkeypatch.setattr(cache, "_FINGERPRINT", [])
    assert cli(capsys, "check", "-q", program)[1] == f"{program}: verified\n"


def test_another_version_never_reads_an_entry(answers, program, capsys, monkeypatch):
    cli(capsys, "check", "-q", program)
    [entry] = entries(answers)
    monkeypatch.setattr(cache, "__version__", "0.0.0-other")
    monkeypatch.setattr(cache, "_FINGERPRINT", [])
    assert cli(capsys, "check", "-q", program)[1] == f"{program}: verified\n"
    # an entry that claims the right key but another tool's fingerprint is not trusted
    moved = entries(answers)
    new = next(p for p in moved if p != entry)
    doc = json.loads(new.read_text())
    new.write_text(json.dumps({**doc, "tool": "another tool"}))
    code, out, err = cli(capsys, "check", "-q", program)
    assert (code, out) == (0, f"{program}: verified\n")
    assert f"the cache entry {new} is unreadable" in err and "was removed" in err


def test_a_usage_error_is_never_kept(answers, capsys):
    assert cli(capsys, "check", "-q", "no_such_file.py")[0] == 2
    assert entries(answers) == []
    assert cache.Store(answers).put("k", Judged(4, "crash")) is None
    assert entries(answers) == []


def test_an_answer_resting_on_an_unknown_proof_is_never_kept(answers, program, capsys,
                                                              monkeypatch):
    from verify_reducer.verify.cli import commands
    report = pipeline.check(program, None, 0)
    assert not commands.undecided(report)
    epoch = report.epochs[0]
    epoch.proofs[0] = dataclasses.replace(epoch.proofs[0], result="unknown")
    assert commands.undecided(report)
    monkeypatch.setattr(commands, "undecided", lambda report: True)
    cli(capsys, "check", "-q", program)
    assert cli(capsys, "check", "-q", program)[1] == f"{program}: verified\n"
    assert entries(answers) == []


# ----------------------------------------------------------------------------- bad entries

@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b'{"format": 1}',
                                     b'{"format": 99, "key": "x"}', b"[]", b""])
def test_a_corrupted_entry_is_removed_with_a_warning_and_the_program_judged(
        answers, program, capsys, content):
    cli(capsys, "check", "-q", program)
    [entry] = entries(answers)
    entry.write_bytes(content)
    code, out, err = cli(capsys, "check", "-q", program)
    assert (code, out) == (0, f"{program}: verified\n")
    assert err.count("warning: the cache entry") == 1 and "checked again" in err
    assert json.loads(entry.read_text())["code"] == 0       # written again, whole


def test_an_entry_with_a_malformed_field_is_not_played(answers, program, capsys):
    cli(capsys, "check", "-q", program)
    [entry] = entries(answers)
    doc = json.loads(entry.read_text())
    for bad in ({"code": 4}, {"code": True}, {"chunks": [[3, "x"]]}, {"detail": 1},
                {"document": []}):
        entry.write_text(json.dumps({**doc, **bad}))
        code, out, err = cli(capsys, "check", "-q", program)
        assert (code, out) == (0, f"{program}: verified\n") and "unreadable" in err


def test_a_cache_that_cannot_be_written_is_warned_of_and_the_check_goes_on(
        program, capsys, monkeypatch, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.delenv("VERIFY_REDUCER_NO_CACHE", raising=False)
    monkeypatch.setenv("VERIFY_REDUCER_CACHE_DIR", str(blocker))
    code, out, err = cli(capsys, "check", "-q", program)
    assert (code, out) == (0, f"{program}: verified\n")
    assert "warning: the cache at" in err and "not kept" in err


# ----------------------------------------------------------------------------- the bound

def _judged(n: int) -> Judged:
    return Judged(0, "", [(STDOUT, "x" * 1000 + f"{n:03d}"), (STDERR, "e")])


def test_the_cache_stays_within_its_limit_least_recently_used_first(tmp_path):
    probe = cache.Store(tmp_path / "probe")
    probe.put("k00", _judged(0))
    size = probe.path("k00").stat().st_size
    store = cache.Store(tmp_path / "answers", limit=20 * size + size // 2)  # 20 fit
    for n in range(20):
        store.put(f"k{n:02d}", _judged(n))
        os.utime(store.path(f"k{n:02d}"), ns=((n + 1) * 10**9, (n + 1) * 10**9))
    assert len(entries(tmp_path / "answers")) == 20
    assert store.get("k00") is not None           # read: now the most recently used
    for n in range(20, 25):
        store.put(f"k{n:02d}", _judged(n))
    kept = {p.stem for p in entries(tmp_path / "answers")}
    total = sum(p.stat().st_size for p in entries(tmp_path / "answers"))
    assert total <= store.limit and len(kept) == 20
    assert {"k00", "k06", "k24"} <= kept          # the one read stays
    assert not {"k01", "k02", "k03", "k04", "k05"} & kept    # the oldest unread go
    assert store.get("k24").chunks == _judged(24).chunks


def test_an_answer_over_a_sixteenth_of_the_limit_is_not_kept(tmp_path):
    store = cache.Store(tmp_path / "answers", limit=16 * 500)
    store.put("big", _judged(0))
    assert store.get("big") is None


def test_entries_are_written_atomically(answers, program, capsys):
    cli(capsys, "check", "-q", program)
    assert [p.name for p in answers.iterdir() if not p.name.endswith(".json")] == []
    [entry] = entries(answers)
    assert entry.stem == json.loads(entry.read_text())["key"]


# ----------------------------------------------------------------------------- turned off

def test_no_cache_neither_reads_nor_keeps(answers, program, capsys):
    code, out, err = cli(capsys, "check", program)
    before = {p: p.read_bytes() for p in entries(answers)}
    again = cli(capsys, "check", "--no-cache", program)[1]
    assert untimed(again) == untimed(out) and CACHED_LINE not in again
    assert {p: p.read_bytes() for p in entries(answers)} == before
    cli(capsys, "check", "--no-cache", "-q", program)
    assert list(before) == entries(answers)


def test_the_configuration_can_turn_the_cache_off(answers, program, capsys, monkeypatch,
                                                  tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.verify-reducer]\ncache = false\n")
    monkeypatch.chdir(project)
    cli(capsys, "check", "-q", program)
    assert cli(capsys, "check", "-q", program)[1] == f"{program}: verified\n"
    assert entries(answers) == []


def test_a_cache_setting_that_is_not_a_boolean_is_a_usage_error(answers, program, capsys,
                                                                monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.verify-reducer]\ncache = "no"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "check", program)
    assert code == 2 and "cache: 'no' is not true or false" in err


@pytest.mark.parametrize("flags", [["-v"], ["--html", "REPORT"]])
def test_verbose_and_html_runs_are_judged_now(answers, program, capsys, flags, tmp_path):
    if "--html" in flags:
        pytest.importorskip("jinja2")
        pytest.importorskip("drawsvg")
        flags = ["--html", str(tmp_path / "report.html")]
    cli(capsys, "check", program, *flags)
    cli(capsys, "check", program, *flags)
    assert entries(answers) == []


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("VERIFY_REDUCER_CACHE_DIR", str(tmp_path / "here"))
    assert cache.cache_dir() == tmp_path / "here"
    monkeypatch.delenv("VERIFY_REDUCER_CACHE_DIR")
    platformdirs = pytest.importorskip("platformdirs")
    assert cache.cache_dir() == cache.Path(
        platformdirs.user_cache_dir("verify-reducer", appauthor=False))
