"""`check --jobs N` (issue 29): programs checked in worker processes, their output and
documents printed in the programs' order, as one process prints them."""
from __future__ import annotations

import json

import pytest

from test_cli_conventions import ROOT, cli

PROGRAMS = [str(ROOT / "examples" / "minimal_legacy.py"),
            str(ROOT / "tests" / "programs" / "invalid" / "r201_update_after_finalize.py"),
            str(ROOT / "examples" / "bitwise.py"), "no_such_file.py"]


def _untimed(doc):
    """doc without the proofs' timings (they differ from run to run)."""
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if k != "ms"}
    if isinstance(doc, list):
        return [_untimed(v) for v in doc]
    return doc


def test_jobs_print_what_one_process_prints(capsys):
    one = cli(capsys, "check", "-q", *PROGRAMS)
    two = cli(capsys, "check", "--jobs", "2", "-q", *PROGRAMS)
    assert one == two and one[0] == 2


def test_jobs_make_the_same_json_document(capsys):
    code1, out1, _ = cli(capsys, "check", "--json", *PROGRAMS)
    code2, out2, _ = cli(capsys, "check", "--json", "-j", "0", *PROGRAMS)
    assert code1 == code2 == 2
    assert _untimed(json.loads(out1)) == _untimed(json.loads(out2))
    assert [d["verdict"] for d in json.loads(out2)["programs"]] == \
        ["verified", "rejected", "verified", "usage_error"]


def test_jobs_keep_every_section_of_the_html_report(capsys, tmp_path):
    pytest.importorskip("jinja2")
    pytest.importorskip("drawsvg")
    report = tmp_path / "report.html"
    code, _, _ = cli(capsys, "check", "-j", "2", "-q", "--html", str(report), *PROGRAMS[:3])
    assert code == 1
    html = report.read_text()
    positions = [html.index(p) for p in PROGRAMS[:3]]
    assert positions == sorted(positions)


def test_a_worker_that_dies_is_an_internal_error_not_a_hang(capsys, monkeypatch):
    """A --jobs worker killed mid-way (here: it exits at its first program) never leaves
    the parent waiting for answers that will not come: the program it took is an
    internal error naming the worker's exit code, and the parent judges the rest."""
    import os
    from verify_reducer.verify.cli import batch
    parent, real = os.getpid(), batch.judge_captured

    def dying(pargs, command):
        if os.getpid() != parent:
            os._exit(3)
        return real(pargs, command)
    monkeypatch.setattr(batch, "judge_captured", dying)
    code, out, err = cli(capsys, "check", "--jobs", "2", "-q", *PROGRAMS[:3], *PROGRAMS[:3])
    assert code == 4, (out, err)
    assert "ended without an answer (worker exit codes 3)" in err
    lines = out.splitlines()
    assert len([line for line in lines if ".py: " in line]) == 6, out   # one per program
    assert any(line.endswith("verified") for line in lines), out
