"""User-declared reducer ops (`@T.reducer_op`, docs/design.md §22): the declaration is
read into one op-table entry whose three faces agree (numpy, the C function, Z3); the
laws are proved or refuted with a concrete counterexample (R601), an undecided law is
R602 and never a pass; a reducer using the op is combined by the interpreter, the
simulator and the CUDA renderer from that one entry."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import z3
from hypothesis import given, strategies as st

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.ops import reducer_monoid
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.proofs import monoid as proofs_monoid
from verify_reducer.verify.epochs.checker import check_func

ROOT = Path(__file__).resolve().parent.parent
ARGMAX = ROOT / "examples" / "argmax_packed.py"

KERNEL = '''
@T.prim_func
def main(x: T.Tensor((N,), T.{dtype}), out: T.Tensor((1,), T.{dtype})):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.{dtype})
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.{rdtype}, op={op})
        T.reducer_init(acc)
        for j in T.Parallel(N):
            {update}
        out_frag = T.alloc_fragment((1,), T.{rdtype})
        T.finalize_reducer(acc, out_frag)
        T.copy(out_frag, out)
'''


def program(decl: str, dtype: str = "int32", op: str = '"f"', rdtype: str | None = None,
            update: str = "T.reducer_update(acc[0], x_frag[j])") -> str:
    return ("import tilelang.language as T\n\nN = 64\n\n" + decl.strip() + "\n\n"
            + KERNEL.format(dtype=dtype, rdtype=rdtype or dtype, op=op, update=update))


def declared(decl: str, dtype: str = "int32"):
    """The function and the op its reducer combines with."""
    func = parse_source(program(decl, dtype)).func()
    acc = next(b for b in _buffers(func) if b.is_reducer)
    return func, reducer_monoid(acc.reducer)


def _buffers(func):
    from verify_reducer.spec import ir
    return [s.buffer for s in ir.walk(func.kernel.body) if isinstance(s, ir.Alloc)]


def errors(source: str) -> list:
    try:
        func = parse_source(source).func()
    except DiagnosticError as err:
        return err.diagnostics
    return [d for d in check_func(func) if d.is_error]


# ----------------------------------------------------------------------------- laws

FIRST_NONZERO = '''
@T.reducer_op(dtype=T.int32, identity=0)
def f(a, b):
    return a if a != 0 else b
'''


def test_a_non_commutative_op_is_refused_with_two_operands():
    # associative, with identity 0 on both sides, but the left operand wins: a butterfly
    # lane and its partner would end with different totals
    [d] = errors(program(FIRST_NONZERO))
    assert d.code == "R601" and "is not commutative" in d.message
    assert "1 ⊕ -1 = 1 but -1 ⊕ 1 = -1" in d.message
    assert d.span.line == 6 and d.notes and "reducer `acc`" in d.notes[0].message


def test_a_wrong_identity_is_refuted_on_each_side():
    decl = '''
@T.reducer_op(dtype=T.int32, identity=0)
def f(a, b):
    return T.max(a, b)
'''
    found = errors(program(decl))
    assert [d.code for d in found] == ["R601", "R601"]
    assert "fails on the left" in found[0].message and "fails on the right" in found[1].message
    # the counterexample is the least negative operand: max(0, -1) = 0
    assert "0 ⊕ -1 = 0, not -1" in found[0].message


def test_saturating_add_shows_the_issue_counterexample():
    report = pipeline.check(str(ROOT / "examples" / "refused" / "saturating_add.py"))
    [d] = [d for d in report.diagnostics if d.is_error]
    assert d.code == "R601"
    assert "(127 ⊕ 1) ⊕ -1 = 126 but 127 ⊕ (1 ⊕ -1) = 127" in d.message
    [op] = report.reducer_ops
    assert [p.result for p in op.laws] == ["proved", "proved", "refuted", "proved"]
    assert all(p.ms >= 0 for p in op.laws)


def test_an_undecided_law_is_R602_never_a_pass(monkeypatch):
    # 64-bit multiplication: no solver decides its associativity in a millisecond
    decl = '''
@T.reducer_op(dtype=T.int64, identity=0)
def f(a, b):
    return (a * b) ^ (a + b)
'''
    monkeypatch.setattr(proofs_monoid, "TIMEOUT_MS", 1)
    proofs_monoid.prove_laws.cache_clear()
    try:
        found = errors(program(decl, "int64"))
    finally:
        proofs_monoid.prove_laws.cache_clear()
    assert found and {d.code for d in found} == {"R602"}
    assert "not proved" in found[0].message


def test_lawful_ops_are_proved():
    func, m = declared(FIRST_NONZERO.replace("a if a != 0 else b", "a ^ b"))
    assert [p.result for p in proofs_monoid.prove_laws(m)] == ["proved"] * 4
    report = pipeline.check(str(ARGMAX))
    assert report.verdict == "verified"
    [op] = report.reducer_ops
    assert op.name == "argmax_packed" and op.reducers == ["acc"]
    assert [p.result for p in op.laws] == ["proved"] * 4


# ----------------------------------------------------------------------------- uses

def test_the_op_is_named_or_quoted():
    decl = FIRST_NONZERO.replace("a if a != 0 else b", "a | b")
    for op in ('"f"', "f"):
        func = parse_source(program(decl, op=op)).func()
        acc = next(b for b in _buffers(func) if b.is_reducer)
        assert reducer_monoid(acc.reducer).is_user and acc.reducer.op == "f"


def test_a_reducer_of_another_dtype_is_R212():
    decl = FIRST_NONZERO.replace("a if a != 0 else b", "a | b")
    [d] = errors(program(decl, "int64"))       # the op is int32, the reducer int64
    assert d.code == "R212" and "declared for int32" in d.message


def test_a_legacy_form_on_a_declared_op_is_R206():
    decl = FIRST_NONZERO.replace("a if a != 0 else b", "a | b")
    [d] = errors(program(decl, update="acc[0] += x_frag[j]"))
    assert d.code == "R206"


def test_an_unknown_op_name_is_still_R212():
    [d] = errors(program("", op='"argmax"'))
    assert d.code == "R212" and "@T.reducer_op" in d.hint


def test_the_tilelang_backend_refuses_a_declared_op():
    loaded = pipeline.load(str(ARGMAX))
    with pytest.raises(pipeline.UsageError, match="reducer_op"):
        pipeline.run_tilelang_backend(loaded, loaded.inputs(0))


def test_check_json_lists_the_laws():
    from verify_reducer.verify.cli.json_doc import check_json
    doc = check_json(str(ARGMAX), pipeline.check(str(ARGMAX)))
    [op] = doc["reducer_ops"]
    assert op["dtype"] == "int64" and len(op["laws"]) == 4
    assert {p["name"] for p in op["laws"]} == {
        f"argmax_packed: {law}" for law in proofs_monoid.LAWS}


# ----------------------------------------------------------------------------- faces

FACES = {
    "argmax": (ARGMAX.read_text().split("@T.prim_func")[0]
               .replace("argmax_packed", "f"), "int64"),
    "saturating": ('''
@T.reducer_op(dtype=T.int8, identity=0)
def f(a, b):
    return T.cast(T.max(T.min(T.cast(a, T.int16) + T.cast(b, T.int16), 127), -128), T.int8)
''', "int8"),
    "mix_u16": ('''
@T.reducer_op(dtype=T.uint16, identity=0)
def f(a, b):
    return (a * 3 - ~b) ^ (a >> 3) | T.cast(a < b, T.uint16) << 15 if not (a == b) else -a
''', "uint16"),
    "signed_shifts": ('''
@T.reducer_op(dtype=T.int32, identity=0)
def f(a, b):
    return T.if_then_else(a > 0 and b < -5 or a == 7, (a << 31) >> 30, T.min(a, b) - b * b)
''', "int32"),
}


def _op(name: str):
    decl, dtype = FACES[name]
    text = program(decl.split("import tilelang.language as T")[-1], dtype)
    func = parse_source(text).func()
    return reducer_monoid(next(b for b in _buffers(func) if b.is_reducer).reducer)


def _z3_value(m, a: int, b: int) -> int:
    bits = m.dtype.bits
    term = z3.simplify(m.z3_combine(m.dtype, z3.BitVecVal(a % 2 ** bits, bits),
                                    z3.BitVecVal(b % 2 ** bits, bits)))
    v = term.as_long()
    return v - 2 ** bits if m.dtype.kind == "int" and v >= 2 ** (bits - 1) else v


def _values(m, n: int, seed: int) -> np.ndarray:
    info = np.iinfo(m.dtype.np)
    rng = np.random.default_rng(seed)
    edges = [info.min, info.min + 1, -1, 0, 1, 7, info.max - 1, info.max]
    edges = [v for v in edges if info.min <= v <= info.max]
    return np.concatenate([np.array(edges, m.dtype.np),
                           rng.integers(info.min, info.max, n, dtype=m.dtype.np, endpoint=True)])


@pytest.mark.parametrize("name", sorted(FACES))
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_numpy_and_z3_faces_agree(name, seed):
    m = _op(name)
    a, b = _values(m, 8, seed), _values(m, 8, seed + 1)
    got = m.combine(m.dtype, a, b)
    assert got.dtype == m.dtype.np
    for x, y, g in zip(a.tolist(), b.tolist(), got.tolist()):
        assert _z3_value(m, x, y) == g, (x, y)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
@pytest.mark.parametrize("name", sorted(FACES))
def test_the_c_function_agrees_with_numpy(name, tmp_path):
    """The op's __device__ function, compiled for the host, on edge and random values."""
    m = _op(name)
    a, b = _values(m, 200, 1), _values(m, 200, 2)
    b = np.roll(b, 3)
    t = m.dtype.c_name
    rows = ", ".join(f"{{({t}){int(x) % 2 ** m.dtype.bits}ull, ({t}){int(y) % 2 ** m.dtype.bits}ull}}"
                     for x, y in zip(a, b))
    source = (f"#include <cstdio>\n#define __device__\n#define __forceinline__ inline\n"
              f"{m.c_definition()}\n"
              f"static const {t} pairs[][2] = {{{rows}}};\n"
              f"int main() {{ for (const auto& p : pairs) "
              f"std::printf(\"%lld\\n\", (long long){m.c_function}(p[0], p[1])); }}\n")
    (tmp_path / "op.cpp").write_text(source)
    subprocess.run(["g++", "-O2", "-fno-strict-aliasing", "-o", str(tmp_path / "op"),
                    str(tmp_path / "op.cpp")], check=True, capture_output=True)
    out = subprocess.run([str(tmp_path / "op")], check=True, capture_output=True, text=True)
    got = [int(v) for v in out.stdout.split()]
    want = m.combine(m.dtype, a, b).astype(np.int64).tolist() if m.dtype.bits < 64 or \
        m.dtype.kind == "int" else m.combine(m.dtype, a, b).view(np.int64).tolist()
    assert got == want


@given(st.lists(st.integers(0, 5), min_size=0, max_size=40), st.integers(0, 2 ** 32 - 1))
def test_ufunc_at_and_reduce_fold_like_a_loop(index, seed):
    """The CombineUfunc's grouped pairwise combine gives a left fold's bits (the op is
    lawful: any grouping and order agree)."""
    m = _op("argmax")
    values = _values(m, len(index), seed)[-len(index):] if index else np.zeros(0, np.int64)
    acc = np.full(6, m.identity_value, np.int64)
    m.ufunc.at(acc, np.array(index, np.int64), values)
    want = np.full(6, m.identity_value, np.int64)
    for i, v in zip(index, values):
        want[i] = m.combine(m.dtype, want[i], v)
    assert acc.tolist() == want.tolist()
    folded = m.ufunc.reduce(values.reshape(-1, 1), axis=0)
    expect = np.array([m.identity_value], np.int64)
    for v in values:
        expect = m.combine(m.dtype, expect, np.array([v]))
    assert folded.tolist() == expect.tolist()


@given(st.lists(st.integers(-3, 3), min_size=64, max_size=64))
def test_the_interpreter_computes_numpys_argmax(xs):
    from verify_reducer.interp.logical import run
    func = parse_source(ARGMAX.read_text(), str(ARGMAX)).func()
    x = np.array(xs, np.int32).reshape(4, 16)
    result = run(func, {"x": x, "arg": np.zeros(4, np.int32), "best": np.zeros(4, np.int32)})
    assert result.outputs["arg"].tolist() == np.argmax(x, axis=1).tolist()
    assert result.outputs["best"].tolist() == x.max(axis=1).tolist()


@pytest.mark.parametrize("name", sorted(FACES))
def test_the_ir_prints_the_declaration_and_it_reads_back_the_same(name):
    # `emit --what ir` shows the op as the IR holds it: typed, constants resolved; read
    # back by the frontend, the printed declaration is the same op
    from verify_reducer.spec.printer import format_user_op
    op = _op(name)
    printed = format_user_op(op)
    assert printed.startswith(f"@T.reducer_op(dtype=T.{op.dtype}, "
                              f"identity={op.identity_value})  # declared at line ")
    again = parse_source(program(printed, op.dtype.name)).func()
    back = reducer_monoid(next(b for b in _buffers(again) if b.is_reducer).reducer)
    assert back.body == op.body and back.identity_value == op.identity_value


def test_emit_ir_shows_the_declared_op(capsys):
    from verify_reducer.verify.cli.commands import main
    assert main(["emit", str(ARGMAX), "--what", "ir"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("@T.reducer_op(dtype=T.int64, identity=-9223372032559808513)"
                          "  # declared at line 23\ndef argmax_packed(a, b):\n"
                          "    return T.if_then_else(a >> 32 > b >> 32 or ")
    assert 'acc = T.alloc_reducer((4,), T.int64, op="argmax_packed")' in out
    assert out.index("def argmax_packed") < out.index("@T.prim_func")
