"""The frontend reads a program; it never runs it. A file whose module body deletes a
file and exits the process is parsed with no effect, and no input — however broken —
ends in anything but a DiagnosticError."""
from __future__ import annotations

import ast
import builtins
import sys
from pathlib import Path

import pytest

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_file, parse_source
from verify_reducer.spec.source import SourceDecodeError, decode_source, encode_source, read_source_file

ROOT = Path(__file__).resolve().parent.parent

HOSTILE = '''\
import os
import shutil
import sys
import tilelang.language as T

os.remove({victim!r})
shutil.rmtree({folder!r})
N = __import__("os").remove({victim!r}) or 8
sys.exit(3)
os._exit(4)
raise SystemExit(5)


def sneaky(n=os.remove({victim!r})):
    os._exit(6)


@T.prim_func
def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        total = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(total, (0,), x[j])
        T.finalize_reducer(total, out)


sneaky()
os.remove({victim!r})
'''


@pytest.fixture
def no_execution(monkeypatch):
    """exec/eval are forbidden while parsing, and compile only ever builds an AST."""
    def refuse(*args, **kwargs):
        raise AssertionError("the frontend executed code")

    real_compile = builtins.compile

    def ast_only(source, filename, mode, flags=0, *args, **kwargs):
        assert flags & ast.PyCF_ONLY_AST, "compile() was asked for code, not an AST"
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "exec", refuse)
    monkeypatch.setattr(builtins, "eval", refuse)
    monkeypatch.setattr(builtins, "compile", ast_only)


def test_hostile_module_body_has_no_effect(tmp_path, no_execution):
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    folder = tmp_path / "folder"
    folder.mkdir()
    program_path = tmp_path / "hostile_prog.py"
    program_path.write_text(HOSTILE.format(victim=str(victim), folder=str(folder)))
    modules_before = set(sys.modules)

    program = parse_file(str(program_path))

    # we are still running (no sys.exit / os._exit), and nothing was touched
    assert victim.read_text() == "keep me"
    assert folder.is_dir()
    assert "hostile_prog" not in sys.modules
    assert set(sys.modules) - modules_before == set()
    func = program.func()
    assert [p.name for p in func.params] == ["x", "out"]


def test_hostile_factory_defaults_are_not_called(tmp_path, no_execution):
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    source = f'''\
import os
import tilelang.language as T


def kernel(n=8, hook=os.remove({str(victim)!r})):
    @T.prim_func
    def main(x: T.Tensor((n,), T.float32)):
        with T.Kernel(1) as bx:
            x[0] = 1.0
    return main


prog = kernel(os.remove({str(victim)!r}))
'''
    program = parse_source(source, "factory.py")
    assert victim.exists()
    assert program.func().params[0].shape == (8,)


def test_huge_constants_do_not_hang(no_execution):
    source = ("import tilelang.language as T\nN = 9 ** 9 ** 9\n"
              "@T.prim_func\ndef main(x: T.Tensor((N,), T.float32)):\n"
              "    with T.Kernel(1) as bx:\n        x[0] = 1.0\n")
    with pytest.raises(DiagnosticError) as info:
        parse_source(source)
    assert [d.code for d in info.value.diagnostics] == ["R102"]


def _mutants(source: str):
    lines = source.splitlines(keepends=True)
    for i in range(len(lines)):                       # drop one line
        yield "".join(lines[:i] + lines[i + 1:])
    for cut in range(0, len(source), max(1, len(source) // 20)):   # truncate
        yield source[:cut]
    for i, line in enumerate(lines):                  # damage one line in three
        if line.strip() and i % 3 == 0:
            yield "".join(lines[:i] + [line.replace("(", "[", 1).replace(":", "", 1)]
                          + lines[i + 1:])


EXAMPLES = sorted((ROOT / "examples").glob("*.py")) + \
    sorted((ROOT / "tests" / "programs").glob("**/*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_no_mutant_ends_in_a_traceback(path):
    """Damaged versions of every known program: each parses or gets frontend diagnostics
    (R1xx, and R600/R602 for a declared reducer op)."""
    for mutant in _mutants(read_source_file(str(path))):
        try:
            parse_source(mutant, "mutant.py")
        except DiagnosticError as err:
            for d in err.diagnostics:
                # R506: launch limits; R600/R602: a damaged @T.reducer_op declaration
                assert d.code in ("R100", "R101", "R102", "R506", "R600", "R602"), d
                assert "internal" not in d.message, (d.message, mutant)


@pytest.mark.parametrize("source", [
    "", "\x00", "import tilelang.language as T\n" + "(" * 200 + ")" * 200,
    "import tilelang.language as T\nx = " + "+".join(["1"] * 5000) + "\n",
    "def f(:\n", "\ufeffimport tilelang.language as T\n",
])
def test_degenerate_inputs(source):
    with pytest.raises(DiagnosticError):
        parse_source(source)


# ----------------------------------------------------------------------------- reading

ENCODING = ROOT / "tests" / "programs" / "encoding"


def _latin1_program(folder: Path) -> Path:
    """The BOM program declared Latin-1, with Latin-1 bytes in a comment: a UTF-8 reader
    cannot decode it, Python can. (Made here, not kept under tests/programs: tools that
    read every test file as UTF-8 would trip on it.)"""
    text = (ENCODING / "utf8_bom.py").read_text(encoding="utf-8-sig")
    path = folder / "latin1_cookie.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9, \xb5s\n" +
                     text.encode("latin-1"))
    return path


@pytest.mark.parametrize("name", ["utf7_hidden_update.py", "utf8_bom.py",
                                  "latin1_cookie.py"])
def test_the_text_read_is_the_text_python_compiles(name, tmp_path):
    """Issue 24: a `coding: utf-7` file hid a second update from the verifier (36 where
    Python, TileLang and `run --backend tilelang` see 72). Every reader decodes as the
    import system does: the same syntax tree, spans included, as compile() of the bytes."""
    path = _latin1_program(tmp_path) if name.startswith("latin1") else ENCODING / name
    data = path.read_bytes()
    python = compile(data, str(path), "exec", ast.PyCF_ONLY_AST)
    ours = ast.parse(read_source_file(str(path)))
    assert ast.dump(ours, include_attributes=True) == \
        ast.dump(python, include_attributes=True)
    updates = sum(1 for line in parse_file(str(path)).source.splitlines()
                  if line.strip().startswith("T.reducer_update"))
    assert updates == (2 if "utf7" in name else 1)


@pytest.mark.parametrize("data, line, col, words", [
    (b"# coding: nope\nx = 1\n", 1, 11, "unknown encoding: nope"),
    (b"#!/usr/bin/env python\n# -*- coding: nope -*-\n", 2, 15, "unknown encoding"),
    (b"\xef\xbb\xbf# coding: latin-1\n", 1, 11, "byte-order mark"),
    (b"x = 1\ny = '\xff'\n", 2, 6, "utf-8 has no character"),
    (b"# coding: hex\nx = 1\n", 1, 11, "hex"),
])
def test_a_file_python_cannot_decode_is_refused_with_its_place(data, line, col, words):
    with pytest.raises(SourceDecodeError) as caught:
        decode_source(data)
    assert (caught.value.line, caught.value.col) == (line, col)
    assert words in str(caught.value)
    with pytest.raises(SyntaxError):        # Python refuses each of them too
        compile(data, "f.py", "exec", ast.PyCF_ONLY_AST)


def test_newlines_are_universal_as_python_reads_them():
    assert decode_source(b"x = 1\r\ny = 2\rz = 3\n") == "x = 1\ny = 2\nz = 3\n"


@pytest.mark.parametrize("name", ["utf7_hidden_update.py", "latin1_cookie.py",
                                  "utf8_bom.py"])
def test_a_program_written_back_reads_as_the_same_program(name, tmp_path):
    """Bug reports write the program's text: in the encoding its declaration names, so
    that Python reads the same program from the copy."""
    path = _latin1_program(tmp_path) if name.startswith("latin1") else ENCODING / name
    text = read_source_file(str(path))
    assert "café" in text or not name.startswith("latin1")
    assert decode_source(encode_source(text)) == text


def test_a_latin1_program_checks_through_the_cli(tmp_path, capsys):
    from verify_reducer.verify.cli.commands import main
    import json
    code = main(["run", str(_latin1_program(tmp_path)), "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["outputs"]["out"]["values"] == [36.0]
