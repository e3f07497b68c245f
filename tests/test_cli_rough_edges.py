"""The command line's rough edges a new user met (issue 29), each pinned: Ctrl-C, a
mistyped command, FORCE_COLOR, `compare` under -q / --color and its verdict name, and a
kernel with no reducer."""
from __future__ import annotations

import io

import numpy as np
import pytest

from verify_reducer.verify.cli import commands
from verify_reducer.verify.cli.commands import EXIT_INTERRUPTED, main
from verify_reducer.verify.cli.output import wants_color

from test_cli_conventions import ANSI, MINIMAL, ROOT, cli

GEMV = str(ROOT / "examples" / "gemv_pipelined.py")
NO_REDUCER = str(ROOT / "tests" / "programs" / "valid" / "reduce_ops_no_reducer.py")


def test_ctrl_c_is_one_line_and_exit_130(capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(commands, "_dispatch", interrupted)
    code, out, err = cli(capsys, "check", MINIMAL)
    assert code == EXIT_INTERRUPTED == 130
    assert err == "verify-reducer: interrupted\n" and out == ""


def test_a_mistyped_command_is_named_not_read_as_a_file(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["chek", MINIMAL])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown command 'chek': did you mean 'check'?" in err
    assert "no such file" not in err


def test_a_file_named_like_a_command_is_still_a_program(capsys, tmp_path, monkeypatch):
    (tmp_path / "chek").write_text((ROOT / "examples" / "minimal_legacy.py").read_text())
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "chek")
    assert code == 0 and out.rstrip().endswith("verdict: verified")


def test_a_word_far_from_every_command_is_still_a_missing_program(capsys):
    code, _, err = cli(capsys, "zzzzzz")
    assert code == 2 and "zzzzzz: no such file" in err


class _Pipe(io.StringIO):
    def isatty(self):
        return False


@pytest.mark.parametrize("environ, colored", [
    ({}, False),
    ({"FORCE_COLOR": "1"}, True),
    ({"FORCE_COLOR": ""}, False),                      # empty: unset, as NO_COLOR's rule
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),    # the standing refusal wins
    ({"FORCE_COLOR": "1", "TERM": "dumb"}, True),
])
def test_force_color_colours_a_pipe(environ, colored):
    assert wants_color("auto", _Pipe(), environ) is colored
    assert wants_color("never", _Pipe(), environ) is False


def test_force_color_reaches_the_report(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    _, out, _ = cli(capsys, "check", MINIMAL)
    assert ANSI.search(out)


@pytest.fixture
def real(tmp_path, capsys):
    path = tmp_path / "real.npz"
    assert main(["run", GEMV, "--backend", "sim", "--inputs", "witness", "--output",
                 str(path)]) == 0
    capsys.readouterr()
    return path


def test_compare_quiet_prints_only_the_verdict_line(real, capsys):
    code, out, err = cli(capsys, "compare", GEMV, "--outputs", str(real), "-q")
    assert code == 0
    assert out == f"{GEMV}: match\n" and err == ""


def test_compare_colours_on_request_and_calls_a_match_a_match(real, capsys):
    code, out, _ = cli(capsys, "compare", GEMV, "--outputs", str(real), "--color", "always")
    assert code == 0 and ANSI.search(out)
    assert ANSI.sub("", out).rstrip().endswith("verdict: match")
    code, out, _ = cli(capsys, "compare", GEMV, GEMV, "--outputs", str(real))
    assert out.rstrip().endswith("2 programs: 2 match; exit 0")


def test_compare_mismatch_error_goes_through_the_output(real, tmp_path, capsys):
    arrays = dict(np.load(real))
    arrays["y"] = arrays["y"] + 1
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, **arrays)
    code, out, err = cli(capsys, "compare", GEMV, "--outputs", str(wrong), "-q")
    assert code == 3
    assert out == f"{GEMV}: mismatch\n"
    assert err == f"verify-reducer: error: {wrong} does not match the oracle\n"


def test_a_kernel_without_reducers_says_no_exactly_once_claim_was_made(capsys):
    code, out, _ = cli(capsys, "check", NO_REDUCER)
    assert code == 0
    assert "reducers       none: no deferred reduction, so no exactly-once claim" in out
    _, out, _ = cli(capsys, "check", MINIMAL)
    assert "reducers       none" not in out


HEAVY = ("numpy", "z3", "rich", "networkx", "ml_dtypes")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["check", "--help"],
                                  ["emit", "-h"]])
def test_version_and_help_load_nothing_heavy(argv):
    """`--version` and `--help` are answered by the entry point from the parser alone:
    none of numpy, z3, rich, networkx or ml_dtypes is imported (issue 29: they took a
    second; the time itself is benchmarks/cli_latency.py's to measure)."""
    import subprocess
    import sys
    probe = ("import sys\nfrom verify_reducer.verify.cli.entry import main\n"
             f"try:\n    main({argv!r})\nexcept SystemExit as e:\n    code = e.code\n"
             f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
             "print('HEAVY', heavy, 'EXIT', code, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert "HEAVY [] EXIT 0" in done.stderr, done.stderr
    assert ("verify-reducer" in done.stdout) and ("usage:" in done.stdout or
                                                 argv == ["--version"])


def test_the_entry_point_runs_every_other_command(capsys):
    from verify_reducer.verify.cli.entry import main as entry
    assert entry(["check", MINIMAL, "-q"]) == 0
    assert capsys.readouterr().out == f"{MINIMAL}: verified\n"
