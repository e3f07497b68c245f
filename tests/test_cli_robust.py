"""Bad input never crashes, hangs or silently changes the answer: inputs that do not fit
their parameter, bad flags and output paths are usage errors (exit 2) naming what is
wrong; `run` and `emit` refuse what `check` rejects unless --no-verify."""
from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.verify.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "minimal_legacy.py")            # x: (8,) float32
MISSING_FINALIZE = str(ROOT / "tests" / "programs" / "invalid" / "r202_missing_finalize.py")

INT8_PROGRAM = """import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.int8), out: T.Tensor((8,), T.int8)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(8):
            out[j] = x[j]
"""


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys, *argv) -> tuple[int, dict]:
    code, out, _ = _cli(capsys, *argv, "--json")
    return code, json.loads(out)


def _npz(tmp_path, **arrays) -> str:
    path = tmp_path / "in.npz"
    np.savez(path, **arrays)
    return str(path)


# ----------------------------------------------------------------------------- inputs

@pytest.mark.parametrize("value, says", [
    (np.array(["a"] * 8), "strings"),
    (np.array([b"a"] * 8), "bytes"),
    (np.zeros(8, dtype=[("a", "f4"), ("b", "i4")]), "structured"),
    (np.zeros(8, dtype="V4"), "structured"),
    (np.ones(8, dtype=complex), "complex"),
    (np.array(["2026-01-01"] * 8, dtype="datetime64[D]"), "datetimes"),
    (np.arange(8.0).reshape(2, 4), "shape (2, 4)"),
    (np.arange(4.0), "shape (4,)"),
    (np.full(8, 1e300), "beyond the range of float32"),
], ids=["str", "bytes", "structured", "void", "complex", "datetime", "2x4", "short",
        "1e300"])
@pytest.mark.parametrize("command", ["check", "run"])
def test_an_input_that_does_not_fit_is_exit_2_naming_the_parameter(
        tmp_path, capsys, command, value, says):
    code, doc = _json(capsys, command, MINIMAL, "--inputs", _npz(tmp_path, x=value))
    assert code == 2 and doc["exit_code"] == 2
    assert "x" in doc["error"] and says in doc["error"], doc["error"]


@pytest.mark.parametrize("value, says", [
    (np.full(8, 1e300), "does not fit in int8"),
    (np.full(8, 300), "does not fit in int8"),
    (np.full(8, 2**64 - 1, dtype=np.uint64), "does not fit in int8"),
    (np.full(8, 1.5), "not an integer"),
    (np.full(8, np.nan), "has no int8 value"),
], ids=["1e300", "300", "uint64-max", "1.5", "nan"])
def test_no_integer_input_wraps(tmp_path, capsys, value, says):
    program = tmp_path / "int8.py"
    program.write_text(INT8_PROGRAM)
    code, doc = _json(capsys, "run", str(program), "--inputs", _npz(tmp_path, x=value))
    assert code == 2
    assert "x[0]" in doc["error"], doc["error"]
    assert says in doc["error"]


def test_a_pickled_npz_is_never_unpickled(tmp_path, capsys):
    victim = tmp_path / "victim"

    class Payload:
        def __reduce__(self):
            return (open, (str(victim), "w"))

    objects = np.empty(8, dtype=object)
    objects[0] = Payload()
    path = tmp_path / "pickled.npz"
    np.savez(path, x=objects)
    code, doc = _json(capsys, "check", MINIMAL, "--inputs", str(path))
    assert code == 2 and "allow_pickle" in doc["error"]
    assert not victim.exists()


def test_an_npz_array_beyond_the_element_cap_is_refused_before_it_is_read(tmp_path, capsys):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (2**40,)})
    path = tmp_path / "huge.npz"
    with zipfile.ZipFile(path, "w") as archive:            # the header, not the data
        archive.writestr("x.npy", header.getvalue())
    code, doc = _json(capsys, "run", MINIMAL, "--inputs", str(path))
    assert code == 2 and "1099511627776 elements" in doc["error"]


@pytest.mark.parametrize("line, says", [
    ("x=arange(0, 99999999999)", "99999999999 elements"),
    ("x=['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']", "strings"),
    ("x=[{1: 2}] * 8", "not a literal list"),
    ("x=[{1: 2}, {3: 4}, 5, 6, 7, 8, 9, 10]", "Python objects"),
    ("x=[1j, 2, 3, 4, 5, 6, 7, 8]", "complex"),
    ("x=[[1, 2, 3, 4], [5, 6, 7, 8]]", "shape (2, 4)"),
], ids=["huge-arange", "strings", "expression", "dicts", "complex", "2x4"])
def test_a_header_input_that_does_not_fit_is_exit_2(tmp_path, capsys, line, says):
    program = tmp_path / "prog.py"
    own = [t for t in Path(MINIMAL).read_text().splitlines(keepends=True)
           if not t.startswith(("# input:", "# expect: result"))]
    program.write_text(f"# input: {line}\n" + "".join(own))
    for command in ("check", "run"):
        code, doc = _json(capsys, command, str(program))
        assert code == 2, doc
        assert "x" in doc["error"] and says in doc["error"], doc["error"]


def test_nan_and_inf_inputs_are_noted(tmp_path, capsys):
    x = np.arange(8, dtype=np.float32)
    x[1], x[2], x[3] = np.nan, np.inf, -np.inf
    inputs = _npz(tmp_path, x=x)
    code, doc = _json(capsys, "check", MINIMAL, "--inputs", inputs)
    assert doc["input_notes"] == ["input x has 1 NaN and 2 infinite element(s)"]
    code, doc = _json(capsys, "run", MINIMAL, "--inputs", inputs)
    assert code == 0 and doc["input_notes"] == ["input x has 1 NaN and 2 infinite element(s)"]
    code, _, err = _cli(capsys, "run", MINIMAL, "--inputs", inputs)
    assert "note: input x has 1 NaN and 2 infinite element(s)" in err


# ----------------------------------------------------------------------------- flags

@pytest.mark.parametrize("argv", [
    ("check", MINIMAL, "--seed", "-1"),
    ("run", MINIMAL, "--seed", "-1"),
    ("fuzz", "--count", "-3"),
    ("fuzz", "--seed", "-1"),
    ("check", MINIMAL, "--seed", "x"),
])
def test_negative_numbers_are_usage_errors(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    assert info.value.code == 2
    assert "non-negative integer" in capsys.readouterr().err


def test_fuzz_out_must_be_a_writable_folder(tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("")
    code, doc = _json(capsys, "fuzz", "--count", "1", "--out", str(a_file))
    assert code == 2 and "not a directory" in doc["error"]
    code, doc = _json(capsys, "fuzz", "--count", "1", "--out", str(a_file / "sub"))
    assert code == 2 and "cannot create" in doc["error"]
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if not os.access(locked, os.W_OK):        # (root may write anywhere)
        code, doc = _json(capsys, "fuzz", "--count", "1", "--out", str(locked))
        assert code == 2 and "cannot write" in doc["error"]


def test_run_output_into_a_missing_folder_is_exit_2_before_the_run(tmp_path, capsys):
    code, doc = _json(capsys, "run", MINIMAL, "--output", str(tmp_path / "no" / "res"))
    assert code == 2 and "no such directory" in doc["error"]


def test_run_output_reports_the_file_written(tmp_path, capsys):
    target = tmp_path / "res"
    code, out, _ = _cli(capsys, "run", MINIMAL, "--output", str(target))
    assert code == 0 and f"wrote {target}.npz" in out
    assert (tmp_path / "res.npz").exists() and not target.exists()
    code, doc = _json(capsys, "run", MINIMAL, "--output", str(tmp_path / "again.npz"))
    assert doc["output_file"] == str(tmp_path / "again.npz")


# ----------------------------------------------------------------------------- the gate

@pytest.mark.parametrize("argv", [
    ("run", MISSING_FINALIZE, "--backend", "sim"),
    ("run", MISSING_FINALIZE, "--backend", "interp"),
    ("emit", MISSING_FINALIZE, "--what", "cuda"),
    ("emit", MISSING_FINALIZE, "--what", "plan"),
])
def test_run_and_emit_refuse_what_check_rejects(capsys, argv):
    _, checked = _json(capsys, "check", MISSING_FINALIZE)
    code, doc = _json(capsys, *argv)
    assert code == 1 and doc["verdict"] == "rejected"
    assert [d["code"] for d in doc["diagnostics"]] == \
        [d["code"] for d in checked["diagnostics"]] == ["R202"]


def test_no_verify_runs_and_says_so(capsys):
    code, out, err = _cli(capsys, "emit", MISSING_FINALIZE, "--what", "cuda", "--no-verify")
    assert code == 0 and "__global__" in out and "--no-verify" in err
    code, doc = _json(capsys, "run", MISSING_FINALIZE, "--backend", "sim", "--no-verify")
    assert code == 0 and doc["verified"] is False


def test_the_legacy_plan_is_not_a_verifier_error(capsys):
    code, doc = _json(capsys, "run", MINIMAL, "--backend", "sim", "--plan", "legacy")
    assert code == 3 and doc["verified"] is True
    assert doc["outputs"]["out"]["values"] != [36.0]


# ----------------------------------------------------------------------------- issue 24

OP_SUB = str(ROOT / "tests" / "programs" / "invalid" / "r212_op_sub.py")
BITWISE_FLOAT = str(ROOT / "tests" / "programs" / "invalid" / "r212_bitwise_on_float.py")
SHAPE_IN_LOOP = str(ROOT / "tests" / "programs" / "invalid" / "r214_destination_shape_in_loop.py")
UTF7 = ROOT / "tests" / "programs" / "encoding" / "utf7_hidden_update.py"


@pytest.mark.parametrize("program, refusal", [(OP_SUB, "R212"), (BITWISE_FLOAT, "R212"),
                                              (SHAPE_IN_LOOP, "R214")],
                         ids=["sub", "bitxor-float", "dst-shape"])
@pytest.mark.parametrize("argv", [
    ("check", "--inputs", "witness"),
    ("compare", "--outputs", "OUT"),
    ("compare", "--outputs", "OUT", "--inputs", "seeded"),
    ("run", "--no-verify", "--backend", "sim"),
    ("run", "--no-verify", "--backend", "interp"),
    ("emit", "--no-verify", "--what", "cuda"),
    ("emit", "--no-verify", "--what", "plan"),
], ids=["check-witness", "compare", "compare-seeded", "sim", "interp", "cuda", "plan"])
def test_a_program_without_meaning_is_refused_on_every_path(tmp_path, capsys, program,
                                                           refusal, argv):
    """An unknown op= (or a bitwise op on floats) crashed the witness, compare and the
    simulator under --no-verify (exit 4), and so did a finalize into a destination of
    another shape: the program has no meaning to run, so it is refused where it is
    loaded, with the verifier's R212 / R214 (exit 1)."""
    argv = [a if a != "OUT" else _npz(tmp_path, out=np.zeros(1, np.float32))
            for a in argv]
    code, doc = _json(capsys, argv[0], program, *argv[1:])
    assert code == 1 and doc["verdict"] == "rejected", doc
    assert refusal in [d["code"] for d in doc["diagnostics"]]


class _BytesStdin:
    """stdin as a terminal or a pipe gives it: bytes under a text wrapper."""
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def test_stdin_is_decoded_as_a_file_is(capsys, monkeypatch):
    import sys
    monkeypatch.setattr(sys, "stdin", _BytesStdin(UTF7.read_bytes()))
    code, doc = _json(capsys, "run", "-")
    assert code == 0 and doc["outputs"]["out"]["values"] == [72.0]


def test_an_undecodable_coding_declaration_is_exit_2_with_its_place(tmp_path, capsys):
    program = tmp_path / "nope.py"
    program.write_bytes(b"# -*- coding: nope -*-\n" + Path(MINIMAL).read_bytes())
    code, doc = _json(capsys, "check", str(program))
    assert code == 2 and f"{program}:1:15:" in doc["error"]
    assert "unknown encoding: nope" in doc["error"]


@pytest.mark.parametrize("size", ["1e999", "inf", "nan", "0.1", "-1", "x"])
def test_a_max_memory_that_is_no_size_is_a_usage_error(capsys, size):
    """`--max-memory 1e999` ended in a bare OverflowError traceback (exit 1)."""
    with pytest.raises(SystemExit) as info:
        main(["check", MINIMAL, "--max-memory", size])
    assert info.value.code == 2
    assert f"not {size!r}" in capsys.readouterr().err


@pytest.mark.parametrize("line, says", [
    ("[1, 2]", "AttributeError"),
    ('{"seed": 0, "case": "x"}', "is not a number"),
    ('{"seed": 0}', "KeyError"),
    ('{"seed": 0, "case": 1, "finding": {"a": 1}}', "KeyError"),
    ('{"seed": 0, "case": 1, "finding": {"signature": [], "a": 1}}', "TypeError"),
], ids=["list", "case-text", "no-case", "finding-no-signature", "finding-fields"])
def test_a_malformed_corpus_line_is_a_usage_error_naming_it(tmp_path, capsys, line, says):
    """A corpus line of another version (or an edited one) crashed `fuzz --corpus`."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "results.jsonl").write_text('{"seed": 0, "case": 0, "finding": null}\n'
                                          + line + "\n")
    code, doc = _json(capsys, "fuzz", "--count", "2", "--corpus", str(corpus),
                      "--out", str(tmp_path / "findings"), "--jobs", "1")
    assert code == 2, doc
    assert "line 2 of" in doc["error"] and says in doc["error"], doc["error"]


# ----------------------------------------------------------------------------- warnings

RFC = ROOT / "examples" / "minimal_rfc.py"


def test_no_numpy_warning_reaches_stderr_under_json(tmp_path, capsys):
    """A NaN contribution (the log of a negative) made the witness audit's
    np.maximum.at print `RuntimeWarning: invalid value encountered in maximum` on
    stderr under `compare --json`."""
    program = tmp_path / "log_negative.py"
    program.write_text(RFC.read_text().replace(
        "T.reducer_update(total, (0,), x_frag[j])",
        "T.reducer_update(total, (0,), T.log(x_frag[j] - 100.0))"))
    outputs = _npz(tmp_path, out=np.array([3e38], np.float32))
    for argv in (["compare", program, "--outputs", outputs],
                 ["check", program, "--inputs", "witness"],
                 ["run", program, "--backend", "sim"]):
        code, out, err = _cli(capsys, *map(str, argv), "--json")
        assert code in (0, 3, 5) and err == "", (argv, err)
        json.loads(out)


def test_numpy_warnings_are_kept_and_shown_with_verbose(monkeypatch, capsys):
    """Whatever floating-point edge numpy warns about inside a command stays off stderr
    (under --json and in text mode); -v lists where it happened."""
    from verify_reducer.verify.oracle import pipeline
    real = pipeline.check

    def warns(*args, **kwargs):
        np.log(np.array([-1.0]))            # invalid value encountered in log
        return real(*args, **kwargs)
    monkeypatch.setattr(pipeline, "check", warns)
    code, _, err = _cli(capsys, "check", MINIMAL, "--json")
    assert code == 0 and err == ""
    code, _, err = _cli(capsys, "check", MINIMAL)
    assert code == 0 and "Warning" not in err
    code, _, err = _cli(capsys, "check", MINIMAL, "-v")
    assert code == 0 and "numpy warned at test_cli_robust.py:" in err
    assert "invalid value encountered in log" in err


# ----------------------------------------------------------------------------- whole tensors

HUGE_OUTPUT = """import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 32), T.float32), out: T.Tensor((3, 2**31), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((3, 32), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((16,), T.float32, op="sum")
        pairs = T.alloc_fragment((16,), T.float32)
        for it in T.serial(3):
            T.reducer_init(acc)
            for j, k in T.Parallel(16, 2):
                T.reducer_update(acc[j], x_frag[it, 2 * j + k])
            T.finalize_reducer(acc, pairs)
            T.copy(pairs, out[it, 0:16])
"""


def test_emit_no_verify_makes_no_inputs_and_every_whole_tensor_path_is_estimated(
        tmp_path, capsys):
    """A mangled program with a (3, 2**31) output: `emit --what cuda --no-verify` built
    the gate's seed-0 inputs anyway (24 GiB, MemoryError, exit 4). --no-verify makes
    none; emit's gate and `run --backend cuda` (whole tensors both) are refused over
    --max-memory before the first array, like `run --backend interp`."""
    program = tmp_path / "huge_output.py"
    program.write_text(HUGE_OUTPUT)
    code, out, _ = _cli(capsys, "emit", str(program), "--what", "cuda", "--no-verify")
    assert code == 0 and "__global__" in out
    for argv in (("emit", "--what", "cuda"), ("run", "--backend", "cuda", "--no-verify"),
                 ("run", "--backend", "sim", "--no-verify")):
        code, doc = _json(capsys, argv[0], str(program), *argv[1:], "--max-memory", "1G")
        assert code == 2 and "over --max-memory" in doc["error"], (argv, doc)
