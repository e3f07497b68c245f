"""Nesting: the deepest program the frontend accepts (expressions MAX_EXPR_DEPTH deep in
statements MAX_STMT_DEPTH deep) goes through every stage without a RecursionError; one
level more is R100 naming the depth; long flat `and` chains, comparison chains and Let
chains are not nesting at all."""
from __future__ import annotations

import ast
import json

import pytest

from verify_reducer.spec.frontend.sizes import _deepest
from verify_reducer.spec.limits import MAX_EXPR_DEPTH, MAX_STMT_DEPTH
from verify_reducer.verify.cli.commands import main


def _select_chain(n: int) -> str:
    expr = "x[j]"
    for k in range(n):
        expr = f"(x[j] if j < {k % 8} else {expr})"
    return expr


def _sum_chain(n: int) -> str:
    expr = "x[j]"
    for _ in range(n):
        expr = f"({expr} + 1.0)"
    return expr


def _program(value: str, loops: int = 0, cond: str = "j >= 0") -> str:
    """A reducer update of `value` under `if cond`, in a T.Parallel inside `loops`
    serial loops (its statement depth is loops + 3)."""
    lines = ["import tilelang.language as T", "", "", "@T.prim_func",
             "def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):",
             "    with T.Kernel(1, threads=32) as bx:",
             '        acc = T.alloc_reducer((1,), T.float32, op="sum")']
    indent = "        "
    for d in range(loops):
        lines.append(f"{indent}for s{d} in T.serial(1):")
        indent += "    "
    lines += [f"{indent}for j in T.Parallel(8):", f"{indent}    if {cond}:",
              f"{indent}        T.reducer_update(acc, 0, {value})",
              "        r = T.alloc_fragment((1,), T.float32)",
              "        T.finalize_reducer(acc, r)", "        T.copy(r, out)"]
    return "\n".join(lines) + "\n"


def _depth_of_update(source: str) -> int:
    """The depth the frontend measures for the reducer_update statement."""
    update = next(n for n in ast.walk(ast.parse(source))
                  if isinstance(n, ast.Expr) and "reducer_update" in ast.unparse(n))
    return _deepest(update.value)[0]


def _deepest_chain(make) -> str:
    n = 1
    while _depth_of_update(_program(make(n + 1))) <= MAX_EXPR_DEPTH:
        n += 1
    return make(n)


def _cli(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize("make", [_select_chain, _sum_chain], ids=["select", "sum"])
def test_the_deepest_accepted_program_passes_every_stage(tmp_path, capsys, make):
    source = _program(_deepest_chain(make), loops=MAX_STMT_DEPTH - 3)
    assert _depth_of_update(source) == MAX_EXPR_DEPTH
    path = tmp_path / "deep.py"
    path.write_text(source)
    code, out = _cli(capsys, "check", str(path), "--json")
    assert code == 0, out
    assert json.loads(out)["verdict"] == "verified"
    for what in ("ir", "layout", "plan", "smt2", "cuda"):
        code, out = _cli(capsys, "emit", str(path), "--what", what)
        assert code == 0, (what, out[-2000:])
    for backend in ("interp", "sim"):
        code, out = _cli(capsys, "run", str(path), "--backend", backend)
        assert code == 0, (backend, out[-2000:])


def test_one_level_deeper_expression_is_r100_naming_the_depth(tmp_path, capsys):
    deepest = _deepest_chain(_select_chain)
    deeper = f"(x[j] if j < 1 else {deepest})"
    path = tmp_path / "deeper.py"
    path.write_text(_program(deeper))
    code, out = _cli(capsys, "check", str(path), "--json")
    doc = json.loads(out)
    assert code == 1
    assert [d["code"] for d in doc["diagnostics"]] == ["R100"]
    assert f"nested {MAX_EXPR_DEPTH + 1} levels deep" in doc["diagnostics"][0]["message"]


def test_250_nested_conditionals_in_an_update_are_r100(tmp_path, capsys):
    path = tmp_path / "nested.py"
    path.write_text(_program(_select_chain(250)))
    code, out = _cli(capsys, "check", str(path), "--json")
    assert code == 1
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["R100"]


def test_one_level_deeper_statement_is_r100_naming_the_depth(tmp_path, capsys):
    path = tmp_path / "deeper.py"
    path.write_text(_program("x[j]", loops=MAX_STMT_DEPTH - 2))
    code, out = _cli(capsys, "check", str(path), "--json")
    doc = json.loads(out)
    assert code == 1
    assert [d["code"] for d in doc["diagnostics"]] == ["R100"]
    assert f"nested {MAX_STMT_DEPTH + 1} deep" in doc["diagnostics"][0]["message"]


@pytest.mark.parametrize("cond", [
    " and ".join(f"j != {k + 8}" for k in range(400)),          # every term holds
    " or ".join(["j > 100"] * 399 + ["j >= 0"]),                  # the last term holds
    " < ".join(["-1", "j"] + [str(k + 8) for k in range(400)]),   # a 401-link chain
], ids=["and", "or", "compare"])
def test_long_flat_chains_are_exact(tmp_path, capsys, cond):
    path = tmp_path / "chain.py"
    path.write_text(_program("x[j]", cond=cond))
    code, out = _cli(capsys, "run", str(path), "--backend", "sim", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["outputs"]["out"]["values"] == [pytest.approx(sum(doc["outputs"]["x"]["values"]))]
    for what in ("ir", "smt2", "cuda"):
        assert _cli(capsys, "emit", str(path), "--what", what)[0] == 0


def test_a_300_let_chain_on_the_thread_index(tmp_path, capsys):
    lines = ["import tilelang.language as T", "", "", "@T.prim_func",
             "def main(y: T.Tensor((128,), T.int32)):",
             "    with T.Kernel(1, threads=128) as bx:",
             "        t0 = T.get_thread_binding()"]
    lines += [f"        t{k} = t{k - 1} + 1" for k in range(1, 300)]
    lines.append("        y[t299 - 299] = t299")
    path = tmp_path / "lets.py"
    path.write_text("\n".join(lines) + "\n")
    code, out = _cli(capsys, "run", str(path), "--json", "--values")
    assert code == 0, out
    assert json.loads(out)["outputs"]["y"]["values"] == list(range(299, 299 + 128))
    assert _cli(capsys, "check", str(path))[0] == 0
