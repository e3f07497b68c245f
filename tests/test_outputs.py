"""Issue 24: every file the CLI writes goes through verify.cli.outputs — checked before
any work (exit 2), never through a symbolic link, never over the program or an input,
written atomically. Each finding of the campaign is here as it was found: `run --output`
and `check --html` followed a link and overwrote its target, `check P --html P`
overwrote the program, `--html` to an unwritable place failed only after the whole
check ran, `emit --what cuda --out FILE` ignored --out."""
from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.spec.source import read_source_file
from verify_reducer.verify.cli import outputs
from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.fuzzing.bugreport import BugReport, save_report
from verify_reducer.verify.oracle import pipeline

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "minimal_legacy.py"
UTF7 = ROOT / "tests" / "programs" / "encoding" / "utf7_hidden_update.py"


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def program(tmp_path) -> Path:
    copy = tmp_path / "prog.py"
    shutil.copy(MINIMAL, copy)
    return copy


@pytest.fixture
def no_work(monkeypatch):
    """Fails the test if a program is checked, run or emitted: the destination must be
    refused first."""
    def refuse(*args, **kwargs):
        raise AssertionError("the work ran before the destination was checked")
    for name in ("check", "load"):
        monkeypatch.setattr(pipeline, name, refuse)


@pytest.mark.parametrize("flag, name", [
    ("--output", "res.npz"), ("--html", "report.html"), ("--json-file", "doc.json"),
    ("--svg", "plan.svg"), ("--out", "kernel.cu"),
], ids=["run-output", "check-html", "json-file", "run-svg", "emit-out"])
def test_a_symbolic_link_is_refused_and_its_target_untouched(tmp_path, capsys, program,
                                                             no_work, flag, name):
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    link = tmp_path / name
    link.symlink_to(target)
    command = {"--output": ["run"], "--html": ["check"], "--json-file": ["check"],
               "--svg": ["run", "--backend", "sim"],
               "--out": ["emit", "--what", "cuda"]}[flag]
    code, _, err = _cli(capsys, command[0], program, *command[1:], flag, link)
    assert code == 2 and "is a symbolic link" in err, err
    assert target.read_text() == "precious\n" and link.is_symlink()


@pytest.mark.parametrize("argv", [
    ["check", "{p}", "--html", "{p}"],
    ["check", "{p}", "--json-file", "{p}"],
    ["emit", "{p}", "--what", "ir", "--out", "{p}"],
    ["emit", "{p}", "--what", "svg", "--out", "{p}"],
    ["run", "{p}", "--inputs", "{i}", "--output", "{i}"],
    ["check", "{d}", "--html", "{p}"],
], ids=["html", "json-file", "emit-out", "emit-svg", "output-over-inputs", "folder"])
def test_an_input_of_the_run_is_never_overwritten(tmp_path, capsys, program, no_work,
                                                  argv):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.arange(8, dtype=np.float32))
    before = {p: p.read_bytes() for p in (program, inputs)}
    argv = [a.format(p=program, i=inputs, d=tmp_path) for a in argv]
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and "is an input of this run" in err, err
    assert {p: p.read_bytes() for p in before} == before


def test_an_unwritable_place_is_refused_before_the_check(capsys, program, no_work):
    """/proc passes os.access for root; creating a file there fails. The probe finds
    it before the first program is parsed."""
    code, _, err = _cli(capsys, "check", program, "--html", "/proc/report.html")
    assert code == 2 and "--html /proc/report.html: cannot write in /proc" in err


@pytest.mark.parametrize("flag", ["--html", "--json-file"])
def test_a_device_is_not_a_file_to_replace(capsys, program, no_work, flag):
    code, _, err = _cli(capsys, "check", program, flag, "/dev/null")
    assert code == 2 and "is not a regular file" in err


@pytest.mark.parametrize("what, says", [("cuda", "__global__"), ("ir", "prim_func"),
                                        ("plan", "finalize"), ("layout", "thread")])
def test_emit_out_writes_every_form(tmp_path, capsys, program, what, says):
    """`emit --what cuda --out FILE` printed the kernel and ignored --out."""
    target = tmp_path / f"form.{what}"
    code, out, _ = _cli(capsys, "emit", program, "--what", what, "--out", target)
    assert code == 0 and out.strip() == f"wrote {target}"
    assert says in target.read_text()
    code, printed, _ = _cli(capsys, "emit", program, "--what", what)
    assert printed == target.read_text()        # the same text, in the file


def test_emit_out_names_one_file(tmp_path, capsys, program):
    code, _, err = _cli(capsys, "emit", program, MINIMAL, "--what", "cuda", "--out",
                        tmp_path / "k.cu")
    assert code == 2 and "--out names one file" in err
    assert not (tmp_path / "k.cu").exists()


def test_a_replaced_file_keeps_its_mode_and_a_new_one_the_umask(tmp_path, capsys, program):
    kept = tmp_path / "kept.npz"
    kept.write_bytes(b"old")
    kept.chmod(0o640)
    assert _cli(capsys, "run", program, "--output", kept)[0] == 0
    assert kept.stat().st_mode & 0o777 == 0o640
    with np.load(kept) as data:
        assert data["out"].tolist() == [36.0]
    fresh = tmp_path / "fresh.npz"
    umask = os.umask(0o022)
    try:
        assert _cli(capsys, "run", program, "--output", fresh)[0] == 0
    finally:
        os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o644


def test_a_write_that_fails_leaves_the_old_file_whole(tmp_path, capsys, program,
                                                      monkeypatch):
    report = tmp_path / "report.html"
    report.write_text("the old report\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(outputs.os, "fsync", full)
    code, _, err = _cli(capsys, "check", program, "--html", report)
    assert code == 2 and "No space left on device" in err
    assert report.read_text() == "the old report\n"
    assert sorted(os.listdir(tmp_path)) == ["prog.py", "report.html"]   # no temporary


def test_json_file_is_written_whole(tmp_path, capsys, program):
    doc = tmp_path / "doc.json"
    assert _cli(capsys, "check", program, "--json-file", doc)[0] == 0
    assert json.loads(doc.read_text())["verdict"] == "verified"


def test_a_bug_report_keeps_the_program_s_encoding(tmp_path):
    """program.py is written in the encoding its coding declaration names: written as
    UTF-8 under `coding: utf-7` it would be read back as another program."""
    text = read_source_file(str(UTF7))
    folder = save_report(BugReport("case", {"program.py": text, "report.md": "é\n"},
                                   {"inputs.npz": {"x": np.arange(8.0)}}), str(tmp_path))
    assert read_source_file(os.path.join(folder, "program.py")) == text
    assert Path(folder, "report.md").read_text(encoding="utf-8") == "é\n"
    with np.load(os.path.join(folder, "inputs.npz")) as data:
        assert data["x"].tolist() == list(np.arange(8.0))


def test_a_bug_report_folder_that_is_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "case").write_text("")
    with pytest.raises(pipeline.UsageError, match="exists and is not a directory"):
        save_report(BugReport("case", {"report.md": "x"}), str(tmp_path))
