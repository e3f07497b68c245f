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
    for mutant in _mutants(path.read_text(encoding="utf-8")):
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
