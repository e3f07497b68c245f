"""The CLI's conventions (issue 13): --version, several programs (files, directories,
stdin) with one summary and the worst exit code, colour (NO_COLOR, --color), -q/-v,
progress on long work, unwritable output paths as usage errors, and --json documents
that follow the published schemas (verify_reducer/schemas/) and stay strict JSON with NaN in them."""
from __future__ import annotations

import errno
import io
import json
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import verify_reducer
from verify_reducer.verify.cli import json_doc as cli_json
from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.cli.output import LineMeter, worst

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "minimal_legacy.py")
GEMV = str(ROOT / "examples" / "gemv_nondividing.py")
MISSING_FINALIZE = str(ROOT / "tests" / "programs" / "invalid" / "r202_missing_finalize.py")
NAN_PROGRAM = str(ROOT / "tests" / "programs" / "valid" / "nan_output_inf_minus_inf.py")
ROW_MAX = str(ROOT / "tests" / "programs" / "valid" / "replicated_loop_row_max.py")
SCHEMAS = ROOT / "verify_reducer" / "schemas"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refuse_constant(name):
    raise ValueError(f"not strict JSON: {name}")


def strict_json(text: str) -> dict:
    """json.loads that refuses NaN, Infinity and -Infinity, as strict parsers do."""
    return json.loads(text, parse_constant=refuse_constant)


def _validator(command: str):
    from verify_reducer.json_schemas import validator
    return validator(command)


def assert_valid(doc: dict) -> None:
    errors = list(_validator(doc["command"]).iter_errors(doc))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}"
                                 for e in errors)


# ----------------------------------------------------------------------------- version

def test_version_prints_the_one_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"verify-reducer {verify_reducer.__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+", verify_reducer.__version__)
    # pyproject reads it from verify_reducer/__init__.py: no second copy to drift
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = {attr = "verify_reducer.__version__"}' in pyproject
    assert not re.search(r'^version\s*=\s*"', pyproject, re.M)


# ----------------------------------------------------------------------------- several

def _tree(tmp_path) -> Path:
    """a/ok.py (verifies), a/sub/bad.py (rejected), plus what a directory walk skips."""
    top = tmp_path / "a"
    (top / "sub").mkdir(parents=True)
    (top / ".hidden").mkdir()
    shutil.copy(MINIMAL, top / "ok.py")
    shutil.copy(MISSING_FINALIZE, top / "sub" / "bad.py")
    shutil.copy(MINIMAL, top / ".hidden" / "skipped.py")
    (top / "notes.txt").write_text("not a program")
    return top


def test_several_files_end_with_one_summary_and_the_worst_exit_code(capsys):
    code, out, err = cli(capsys, "check", MINIMAL, MISSING_FINALIZE)
    assert code == 1
    assert out.count("verdict: ") == 2
    assert out.rstrip().splitlines()[-1] == "2 programs: 1 verified, 1 rejected; exit 1"
    assert "error[R202]" in err


def test_a_directory_means_its_py_files_sorted_recursively(capsys, tmp_path):
    top = _tree(tmp_path)
    code, out, _ = cli(capsys, "check", "-q", str(top))
    assert code == 1
    assert out.splitlines() == [f"{top}/ok.py: verified",
                                f"{top}/sub/bad.py: rejected (R202 at 15:9)",
                                "2 programs: 1 verified, 1 rejected; exit 1"]


@pytest.mark.parametrize("programs, code", [
    ((MINIMAL, MISSING_FINALIZE), 1),                      # rejected over verified
    ((MISSING_FINALIZE, MINIMAL, "MISMATCH"), 3),          # mismatch over rejected
    (("MISMATCH", "/no/such/file.py"), 2),                 # usage error over mismatch
])
def test_the_worst_exit_code_wins(capsys, monkeypatch, programs, code):
    """`run --plan legacy` on minimal_legacy.py is a mismatch (R503); the same flags on
    the other programs keep their own verdicts."""
    argv = [MINIMAL if p == "MISMATCH" else p for p in programs]
    plan = ["--backend", "sim", "--plan", "legacy"] if "MISMATCH" in programs else []
    got, out, _ = cli(capsys, "run", "-q", *argv, *plan)
    assert got == code
    assert out.rstrip().splitlines()[-1].endswith(f"; exit {code}")


def test_the_ranking_of_exit_codes():
    assert worst([0, 1, 3]) == 3 and worst([1, 0]) == 1 and worst([3, 2]) == 2
    assert worst([2, 4, 1]) == 4 and worst([0, 0]) == 0 and worst([]) == 0


def test_several_programs_make_one_json_document(capsys, tmp_path):
    top = _tree(tmp_path)
    code, out, _ = cli(capsys, "check", str(top), "/no/such/file.py", "--json")
    doc = strict_json(out)
    assert code == 2
    assert [p["program"] for p in doc["programs"]] == [f"{top}/ok.py", f"{top}/sub/bad.py",
                                                       "/no/such/file.py"]
    assert [p["verdict"] for p in doc["programs"]] == ["verified", "rejected", "usage_error"]
    assert doc["summary"] == {"programs": 3, "exit_code": 2, "verdicts": {
        "verified": 1, "rejected": 1, "usage_error": 1}}
    assert_valid(doc)


def test_emit_several_programs_names_each(capsys):
    code, out, _ = cli(capsys, "emit", MINIMAL, ROW_MAX, "--what", "ir")
    assert code == 0
    assert f"==> {MINIMAL} <==" in out and f"==> {ROW_MAX} <==" in out
    assert out.rstrip().splitlines()[-1] == "2 programs: 2 emitted; exit 0"


def test_output_takes_one_program(capsys, tmp_path):
    code, out, err = cli(capsys, "run", MINIMAL, ROW_MAX, "--output", str(tmp_path / "o"))
    assert code == 2 and "--output names one file" in err and out == ""


# ----------------------------------------------------------------------------- stdin

def test_dash_reads_the_program_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(Path(MINIMAL).read_text()))
    code, out, _ = cli(capsys, "-")
    assert code == 0
    assert out.startswith("<stdin>: main (grid 1, 128 threads")
    assert "verdict: verified" in out


def test_a_rejection_on_stdin_shows_the_source_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(Path(MISSING_FINALIZE).read_text()))
    code, _, err = cli(capsys, "run", "-")
    assert code == 1
    assert "<stdin>:15:9: error[R202]" in err
    assert 'acc = T.alloc_reducer((1,), T.float32, op="sum")' in err


def test_stdin_beside_files_and_given_twice(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(Path(MINIMAL).read_text()))
    code, out, err = cli(capsys, "check", "-q", "-", MISSING_FINALIZE, "-")
    assert code == 2
    assert out.splitlines() == ["<stdin>: verified",
                                f"{MISSING_FINALIZE}: rejected (R202 at 15:9)",
                                "<stdin>: usage error",
                                "3 programs: 1 verified, 1 rejected, 1 usage error; exit 2"]
    assert "- (stdin) is given more than once" in err


def test_tilelang_needs_a_file_not_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(Path(MINIMAL).read_text()))
    code, _, err = cli(capsys, "run", "-", "--backend", "tilelang")
    assert code == 2 and "--backend tilelang imports the program's file" in err


# ----------------------------------------------------------------------------- colour

class Tty(io.StringIO):
    def isatty(self):
        return True


def _colour_run(monkeypatch, *argv, no_color: str | None = None) -> tuple[int, str, str]:
    """argv with stdout and stderr on a terminal, NO_COLOR as given."""
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.delenv("TERM", raising=False)
    out, err = Tty(), Tty()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_colour_on_a_terminal_and_plain_text_otherwise(capsys, monkeypatch):
    code, out, err = cli(capsys, "check", MISSING_FINALIZE)         # not a terminal
    assert code == 1 and not ANSI.search(out + err)
    code, tty_out, tty_err = _colour_run(monkeypatch, "check", MISSING_FINALIZE)
    assert code == 1 and ANSI.search(tty_err) and ANSI.search(tty_out)
    # the colours only colour: without them the text is the same
    assert ANSI.sub("", tty_err) == err and ANSI.sub("", tty_out) == out


@pytest.mark.parametrize("argv, no_color", [(("--color", "never"), None),
                                            ((), "1"),
                                            (("--color", "auto"), "yes")])
def test_no_color_and_color_never_give_no_escapes(monkeypatch, argv, no_color):
    code, out, err = _colour_run(monkeypatch, "check", MISSING_FINALIZE, *argv,
                                 no_color=no_color)
    assert code == 1 and "error[R202]" in err and "verdict: rejected" in out
    assert "\x1b" not in out + err


def test_color_always_colours_a_pipe_even_with_no_color(capsys, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = cli(capsys, "check", MISSING_FINALIZE, "--color", "always")
    assert code == 1
    assert "\x1b[1;31merror[R202]\x1b[0m" in err
    assert ANSI.search(out)


def test_an_empty_no_color_does_not_disable_colour(monkeypatch):
    _, _, err = _colour_run(monkeypatch, "check", MISSING_FINALIZE, no_color="")
    assert ANSI.search(err)


# ----------------------------------------------------------------------------- -q, -v

def test_quiet_prints_only_the_verdict(capsys):
    code, out, err = cli(capsys, "check", "-q", MINIMAL)
    assert (code, out, err) == (0, f"{MINIMAL}: verified\n", "")
    code, out, err = cli(capsys, "check", "--quiet", MISSING_FINALIZE)
    assert (code, out, err) == (1, f"{MISSING_FINALIZE}: rejected (R202 at 15:9)\n", "")
    code, out, err = cli(capsys, "run", "-q", MINIMAL, "--backend", "sim", "--plan", "legacy")
    assert (code, out, err) == (3, f"{MINIMAL}: mismatch (R503 at 26:9)\n", "")
    code, out, err = cli(capsys, "emit", "-q", MINIMAL, "--what", "cuda")
    assert (code, out, err) == (0, f"{MINIMAL}: emitted\n", "")


def test_quiet_still_says_why_a_program_was_not_judged(capsys, tmp_path):
    code, out, err = cli(capsys, "check", "-q", str(tmp_path / "nope.py"))
    assert code == 2
    assert out == f"{tmp_path / 'nope.py'}: usage error\n"
    assert "no such file" in err


def test_verbose_lists_every_proof_and_the_time(capsys):
    code, out, _ = cli(capsys, "check", MINIMAL, "--json")
    proofs = json.loads(out)["epochs"][0]["proofs"]
    code, out, err = cli(capsys, "check", "-v", MINIMAL)
    assert code == 0
    shown = [line.strip() for line in out.splitlines() if line.strip().startswith("proof ")]
    assert [s.split(":")[0] for s in shown] == [f"proof {p['name']}" for p in proofs]
    assert re.search(rf"note: {re.escape(MINIMAL)}: check took \d+\.\d\d s", err)


def test_verbose_run_shows_the_bounds_and_more_values(capsys, tmp_path):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.arange(1, 9, dtype=np.float32))
    code, out, _ = cli(capsys, "run", MINIMAL, "--inputs", str(inputs))
    assert code == 0 and "bound of" not in out
    code, out, _ = cli(capsys, "run", "-v", MINIMAL, "--inputs", str(inputs))
    assert code == 0
    assert "out = [36.0]" in out and "bound of out = [" in out and "ran on interp" in out


def test_quiet_and_verbose_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "-q", "-v", MINIMAL])
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_fuzz_quiet_and_verbose(capsys, tmp_path):
    code, out, err = cli(capsys, "fuzz", "--count", "1", "--seed", "6", "-q",
                         "--out", str(tmp_path))
    assert (code, out, err) == (0, "1 programs, 0 finding(s)\n", "")
    code, out, _ = cli(capsys, "fuzz", "--count", "1", "--seed", "6", "-v",
                       "--out", str(tmp_path))
    assert code == 0 and out.splitlines()[0] == "case 0: ok"


# ----------------------------------------------------------------------------- progress

def test_fuzz_off_a_terminal_prints_progress_lines(capsys, tmp_path):
    code, out, err = cli(capsys, "fuzz", "--count", "2", "--seed", "6", "--out", str(tmp_path))
    assert code == 0 and out == "2 programs, 0 finding(s)\n"
    lines = err.splitlines()
    assert lines[0] == "fuzz: 0/2 programs, 0 finding(s), 0 s"
    assert lines[-1].startswith("fuzz: 2/2 programs, 0 finding(s), ")
    assert "\r" not in err and "\x1b" not in err


def test_progress_lines_come_every_5_percent_or_every_few_seconds():
    now = [0.0]
    stream = io.StringIO()
    meter = LineMeter(stream, seconds=10.0, clock=lambda: now[0])
    meter.start(200, 0, 0)                  # a line every 10 programs or 10 s
    for n in range(1, 26):
        now[0] += 0.2
        meter.step(findings=n // 20)
    now[0] += 30.0                          # one slow program: shown when it ends
    meter.step(findings=1)
    meter.close()
    done = [int(re.match(r"fuzz: (\d+)/200", line).group(1))
            for line in stream.getvalue().splitlines()]
    assert done == [0, 10, 20, 26]
    assert stream.getvalue().splitlines()[-1] == "fuzz: 26/200 programs, 1 finding(s), 35 s"


# ----------------------------------------------------------------------------- paths

def test_an_output_name_too_long_is_a_usage_error(capsys, tmp_path):
    target = str(tmp_path / ("o" * 300))
    code, out, err = cli(capsys, "run", MINIMAL, "--output", target)
    assert code == 2 and out == ""
    assert f"--output {target}: the file name is longer than" in err
    assert "internal error" not in err


def test_an_output_that_fails_to_write_is_a_usage_error(capsys, tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    from verify_reducer.verify.cli import outputs
    monkeypatch.setattr(outputs.os, "fsync", full)        # the disk fills at the flush
    target = str(tmp_path / "res.npz")
    code, _, err = cli(capsys, "run", MINIMAL, "--output", target)
    assert code == 2
    assert f"--output {target}: cannot write {target}: No space left on device" in err
    assert os.listdir(tmp_path) == []           # no file, no temporary left behind


@pytest.mark.parametrize("where, says", [("missing/doc.json", "no such directory"),
                                         ("folder", "is a directory")])
def test_a_bad_json_file_is_a_usage_error(capsys, tmp_path, where, says):
    (tmp_path / "folder").mkdir()
    target = str(tmp_path / where)
    for argv in (["check", MINIMAL], ["fuzz", "--count", "1", "--out", str(tmp_path / "f")]):
        code, out, err = cli(capsys, *argv, "--json-file", target)
        assert code == 2 and out == "", argv
        assert f"--json-file {target}: " in err and says in err, argv


def test_json_file_writes_the_document(capsys, tmp_path):
    for flag in (["--json-file", str(tmp_path / "a.json")], [f"--json={tmp_path / 'b.json'}"]):
        code, out, _ = cli(capsys, "check", MINIMAL, *flag)
        assert code == 0 and out == ""
    for name in ("a.json", "b.json"):
        doc = strict_json((tmp_path / name).read_text())
        assert doc["verdict"] == "verified"
        assert_valid(doc)


# ----------------------------------------------------------------------------- schemas

def test_the_schemas_are_valid_and_versioned():
    for path in SCHEMAS.glob("*.schema.json"):
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$id"].endswith(f"/v{cli_json.SCHEMA_VERSION}/{path.name}")
    defs = json.loads((SCHEMAS / "defs.schema.json").read_text())["$defs"]
    assert defs["schema_version"]["const"] == cli_json.SCHEMA_VERSION
    assert defs["number"]["anyOf"][1] == {"enum": ["nan", "inf", "-inf"]}


@pytest.mark.parametrize("argv", [
    ("check", MINIMAL),
    ("check", GEMV),                                          # blocks on windows
    ("check", str(ROOT / "examples" / "two_sites_8_16.py")),  # an R400 note, a refuted proof
    ("check", MISSING_FINALIZE),
    ("check", MINIMAL, "--blocks", "all", "--seed", "3"),
    ("run", MINIMAL),
    ("run", MINIMAL, "--backend", "sim", "--plan", "legacy"),
    ("run", MISSING_FINALIZE),
    ("run", MINIMAL, "--func", "nope"),
    ("emit", MINIMAL),
    ("emit", MINIMAL, "--what", "plan"),
    ("emit", str(ROOT / "examples" / "gemv_pipelined.py"), "--what", "plan"),
    ("emit", MINIMAL, "--what", "smt2"),
    ("emit", MINIMAL, ROW_MAX, "--what", "layout"),
], ids=lambda a: " ".join(Path(x).name if "/" in x else x for x in a))
def test_every_document_follows_its_schema(capsys, argv):
    code, out, _ = cli(capsys, *argv, "--json")
    doc = strict_json(out)
    assert doc["schema_version"] == cli_json.SCHEMA_VERSION
    assert list(doc)[0] == "schema_version"
    assert doc.get("exit_code", doc.get("summary", {}).get("exit_code")) == code
    assert_valid(doc)


def test_fuzz_and_error_documents_follow_their_schemas(capsys, tmp_path, monkeypatch):
    code, out, _ = cli(capsys, "fuzz", "--count", "1", "--seed", "6", "--out",
                       str(tmp_path), "--json")
    assert code == 0
    assert_valid(strict_json(out))
    code, out, _ = cli(capsys, "fuzz", "--out", str(Path(MINIMAL)), "--json")
    assert code == 2 and strict_json(out)["verdict"] == "usage_error"
    assert_valid(strict_json(out))
    from verify_reducer.verify.oracle import pipeline
    def boom(*a, **k):
        raise RuntimeError("planted")
    monkeypatch.setattr(pipeline, "check", boom)
    code, out, _ = cli(capsys, "check", MINIMAL, "--json")
    doc = strict_json(out)
    assert code == 4 and doc["verdict"] == "internal_error" and "planted" in doc["error"]
    assert_valid(doc)


def test_a_field_the_schema_does_not_document_is_refused(capsys):
    _, out, _ = cli(capsys, "check", MINIMAL, "--json")
    doc = strict_json(out)
    doc["comparisons"]["sim/auto"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        _validator("check").validate(doc)


def test_fuzz_findings_are_explicit_documented_objects(tmp_path):
    from verify_reducer.verify.fuzzing.command import Finding
    finding = Finding(3, "p.py", "mismatch", "x", ("mismatch", "R503", "sim", "sim/fast"),
                      7, "p.original.py", "")
    assert cli_json.finding_json(finding) == {
        "case": 3, "seed": 7, "kind": "mismatch", "summary": "x",
        "signature": {"kind": "mismatch", "code": "R503", "stage": "sim",
                      "backend": "sim/fast"},
        "path": "p.py", "original": "p.original.py", "report": None}


# ----------------------------------------------------------------------------- NaN

def test_a_nan_output_is_strict_json(capsys):
    code, out, err = cli(capsys, "check", NAN_PROGRAM, "--json")
    assert code == 0
    with pytest.raises(ValueError):                 # what Python's json.dumps would write
        strict_json('{"a": NaN}')
    doc = strict_json(out)
    assert doc["outputs"]["out"]["values"] == ["nan"]
    assert doc["outputs"]["x"]["values"][:2] == ["inf", "-inf"]
    assert doc["input_notes"] == ["input x has 2 infinite element(s)"]
    assert_valid(doc)
    code, out, _ = cli(capsys, "run", NAN_PROGRAM, "--json")
    doc = strict_json(out)
    assert doc["outputs"]["out"]["values"] == ["nan"] and doc["bounds"]["out"]["values"]
    assert_valid(doc)


def test_a_max_over_a_nan_input_is_strict_json(capsys, tmp_path):
    x = np.zeros((4, 8), dtype=np.float32)
    x[0, 0] = np.nan
    np.savez(tmp_path / "in.npz", x=x)
    code, out, _ = cli(capsys, "run", ROW_MAX, "--inputs", str(tmp_path / "in.npz"), "--json")
    doc = strict_json(out)
    assert code == 0 and doc["outputs"]["x"]["values"][0][0] == "nan"
    assert_valid(doc)


def test_a_nan_in_a_comparison_is_strict_json(capsys, monkeypatch):
    """A backend that answers NaN where the interpreter has 36: the mismatch's `got` is
    "nan" (a stand-in run_cuda, as tests/test_cli.py does for the GPU)."""
    from verify_reducer.interp.logical import run
    from verify_reducer.verify.oracle import pipeline
    def nan_cuda(plan, inputs):
        outputs = {k: np.array(v, copy=True) for k, v in run(plan.func, inputs).outputs.items()}
        outputs["out"][:] = np.nan
        return outputs
    monkeypatch.setattr(pipeline, "run_cuda", nan_cuda)
    code, out, _ = cli(capsys, "run", MINIMAL, "--backend", "cuda", "--json")
    doc = strict_json(out)
    (bad,) = [c for c in doc["comparisons"]["cuda/auto"] if not c["ok"]]
    assert code == 3 and bad["got"] == "nan" and bad["expected"] == 36.0
    assert_valid(doc)


def test_jsonable_writes_non_finite_numbers_as_strings():
    value = {"a": np.array([1.5, np.nan, np.inf, -np.inf], dtype=np.float32),
             "b": np.float64("nan"), "c": [float("inf"), 2], "d": np.int8(3), "e": None}
    assert cli_json.jsonable(value) == {"a": [1.5, "nan", "inf", "-inf"], "b": "nan",
                                        "c": ["inf", 2], "d": 3, "e": None}
    assert strict_json(cli_json.dumps({"command": "check", "x": value}))["x"]["b"] == "nan"


def test_every_reference_of_the_shipped_schemas_resolves():
    """Regression (issue 29): the schemas shipped with the package, and every `$ref` in
    them resolves through verify_reducer.json_schemas' registry (relative references to
    defs.schema.json are unresolvable without it)."""
    from verify_reducer import json_schemas
    registry = json_schemas.registry()
    refs = []

    def walk(node, base):
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.append((base, node["$ref"]))
            for value in node.values():
                walk(value, base)
        elif isinstance(node, list):
            for value in node:
                walk(value, base)
    for name in json_schemas.NAMES:
        doc = json_schemas.schema(name)
        walk(doc, doc["$id"])
    assert len(refs) > 50
    for base, ref in refs:
        registry.resolver(base_uri=base).lookup(ref)      # raises when unresolvable
    toml = (ROOT / "pyproject.toml").read_text()
    assert '"verify_reducer" = ["py.typed", "schemas/*.schema.json"]' in toml
    assert sorted(p.name for p in SCHEMAS.glob("*.json")) == \
        sorted(f"{n}.schema.json" for n in json_schemas.NAMES)
