"""TileLang's everyday builtins (issue 25): each lowers to IR we already had, with the
meaning TileLang's own definition gives it (tilelang/language/*.py at the corpus
commit), and each misuse or unmodelled relative is refused by name.

- T.clamp(x, lo, hi) is T.min(T.max(x, lo), hi) (language/customize.py): the upper
  bound wins when lo > hi; a NaN x gives min(lo, hi), because T.max/T.min ignore NaN;
- x.astype(dtype) is T.cast(x, dtype);
- T.Serial, T.Unroll, T.Vectorized are aliases (language/loop.py); T.vectorized is a
  serial loop, accepted where TVM's vectorizer cannot change its meaning;
- T.infinity exists for float dtypes only (src/op/math.cc: "Cannot decide infinity");
- batch= of T.reduce_* is a code-generation hint (only batch >= 1 is checked upstream);
  nan_propagate=True changes nothing into float32 (TileLang's MaxOpNan applies to a
  float16/bfloat16 accumulator only, where a NaN term makes the result NaN);
- the dtypes we do not model (the fnuz and e8m0 float8 formats, float4, int4,
  tfloat32) are refused by name (T.reshape/T.view: tests/test_views.py).

The expected values are computed here by hand, never by the code under test."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import REFUSED_DTYPES
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.oracle import pipeline

ROOT = Path(__file__).resolve().parent.parent

HEADER = "import tilelang.language as T\n\nN = 8\n\n\n"


def _kernel(body: str, params: str = "x: T.Tensor((N,), T.float32), "
                                     "y: T.Tensor((N,), T.float32)") -> str:
    lines = "\n".join("        " + line for line in body.strip("\n").splitlines())
    return (HEADER + "@T.prim_func\n"
            f"def main({params}):\n"
            "    with T.Kernel(1, threads=32) as bx:\n" + lines + "\n")


def _errors(source: str) -> list[tuple[str, str]]:
    try:
        parse_source(source, "builtin.py")
    except DiagnosticError as exc:
        return [(d.code, d.message) for d in exc.diagnostics]
    return []


def _stores(source: str) -> list[ir.Store]:
    func = parse_source(source, "builtin.py").func()
    return [s for s in ir.walk(func.kernel.body) if isinstance(s, ir.Store)]


def _run(tmp_path: Path, source: str, inputs: dict[str, np.ndarray]):
    path = tmp_path / "builtin.py"
    path.write_text("# expect: ok\n" + source)
    report = pipeline.check(str(path), given=inputs, blocks="all")
    assert report.exit_code == pipeline.EXIT_OK, [d.message for d in report.diagnostics]
    return report.reference.outputs


# ----------------------------------------------------------------------------- T.clamp

def test_clamp_is_min_of_max():
    (store,) = _stores(_kernel("for j in T.Parallel(N):\n"
                               "    y[j] = T.clamp(x[j], min_val=0.25, max_val=0.75)"))
    outer = store.value
    assert isinstance(outer, ir.Call) and outer.func == "min"
    inner, hi = outer.args
    assert isinstance(inner, ir.Call) and inner.func == "max"
    assert inner.args[1].value == 0.25 and hi.value == 0.75
    assert outer.dtype.name == "float32"


def test_clamp_nan_and_crossed_bounds(tmp_path):
    x = np.array([math.nan, -1.0, 0.5, 2.0, math.inf, -math.inf, 0.25, 0.75], np.float32)
    out = _run(tmp_path, _kernel(
        "for j in T.Parallel(N):\n"
        "    y[j] = T.clamp(x[j], 0.25, 0.75)\n"
        "    z[j] = T.clamp(x[j], 0.75, 0.25)",
        "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32), "
        "z: T.Tensor((N,), T.float32)"), {"x": x})
    # NaN: max(NaN, 0.25) = 0.25 (NaN ignored), then min(0.25, 0.75)
    assert out["y"].tolist() == [0.25, 0.25, 0.5, 0.75, 0.75, 0.25, 0.25, 0.75]
    # lo > hi: min(max(x, 0.75), 0.25) = 0.25 for every x, NaN included
    assert out["z"].tolist() == [0.25] * 8


def test_clamp_integer_in_index_is_proved(tmp_path):
    x = np.arange(8, dtype=np.float32) * 10
    out = _run(tmp_path, _kernel("for j in T.Parallel(N):\n"
                                 "    y[j] = x[T.clamp(j - 2, 0, N - 1)]"), {"x": x})
    assert out["y"].tolist() == [0.0, 0.0, 0.0, 10.0, 20.0, 30.0, 40.0, 50.0]


def test_clamp_in_cuda(tmp_path, capsys):
    path = tmp_path / "clamp.py"
    path.write_text(_kernel("for j in T.Parallel(N):\n"
                            "    y[j] = T.clamp(x[j], 0.25, 0.75)"))
    assert main(["emit", str(path), "--what", "cuda", "--no-verify"]) == 0
    assert "fminf(fmaxf(x[j], 0.25f), 0.75f)" in capsys.readouterr().out


# ----------------------------------------------------------------------------- astype

def test_astype_is_cast():
    a, b = _stores(_kernel("for j in T.Parallel(N):\n"
                           "    y[j] = x[j].astype(T.float16)\n"
                           "    y[j] = T.cast(x[j], T.float16)"))
    for store in (a, b):
        assert isinstance(store.value, ir.Cast) and store.value.dtype.name == "float16"


def test_astype_rounds_and_truncates(tmp_path):
    x = np.array([-2.75, -0.5, 0.5, 2.5, 65519.0, 65520.0, 1e9, 3.0], np.float32)
    out = _run(tmp_path, _kernel(
        "for j in T.Parallel(N):\n"
        "    h[j] = x[j].astype(T.float16)\n"
        "    n[j] = x[j].astype('int8')",
        "x: T.Tensor((N,), T.float32), h: T.Tensor((N,), T.float16), "
        "n: T.Tensor((N,), T.int8)"), {"x": x})
    # float16: nearest even; 65519 -> 65504 (below the 65520 midpoint), 65520 -> inf
    assert out["h"].tolist() == [-2.75, -0.5, 0.5, 2.5, 65504.0, math.inf, math.inf, 3.0]
    # int8: toward zero, then (through int32, saturated) the low 8 bits
    # (docs/semantics.md §8): 65519 -> 0xFFEF -> -17, 65520 -> -16, 1e9 -> 0x3B9ACA00 -> 0
    assert out["n"].tolist() == [-2, 0, 0, 2, -17, -16, 0, 3]


def test_astype_on_a_python_number_is_refused():
    errors = _errors(_kernel("for j in T.Parallel(N):\n"
                             "    y[j] = N.astype(T.float32)"))
    assert [c for c, _ in errors] == ["R102"]
    assert "`.astype` needs a kernel value" in errors[0][1]


# ----------------------------------------------------------------------------- loops

@pytest.mark.parametrize("spelling,kind", [("T.serial", "serial"), ("T.Serial", "serial"),
                                           ("T.unroll", "unroll"), ("T.Unroll", "unroll"),
                                           ("T.vectorized", "serial"),
                                           ("T.Vectorized", "serial")])
def test_loop_spellings(spelling, kind):
    func = parse_source(_kernel(f"for k in {spelling}(2, N):\n    y[k] = x[k]"),
                        "loop.py").func()
    (loop,) = [s for s in func.kernel.body if isinstance(s, ir.SerialFor)]
    assert loop.kind == kind and loop.start.value == 2 and loop.stop.value == 8


def test_vectorized_takes_no_step():
    errors = _errors(_kernel("for k in T.vectorized(0, N, 2):\n    y[k] = x[k]"))
    assert errors == [("R102", "`T.vectorized` takes at most 2 positional argument(s), "
                               "got 3")]


def test_vectorized_accepts_stores_one_element_per_iteration():
    assert not _errors(_kernel("for i in T.Parallel(2):\n"
                               "    for k in T.vectorized(4):\n"
                               "        t = x[i * 4 + k]\n"
                               "        y[i * 4 + k] = t * 2.0\n"
                               "        y[(i * 4 + 1) - 1 + k] = t\n"
                               "        y[i] = x[i]"))


def test_vectorized_accepts_a_read_of_the_element_it_writes():
    assert not _errors(_kernel("p = T.alloc_shared((N,), T.float32)\n"
                               "T.copy(x, p)\n"
                               "for k in T.vectorized(N):\n"
                               "    p[k] = p[k] * 2.0\n"
                               "    if k > 2:\n"
                               "        y[k] = p[k]"))


@pytest.mark.parametrize("body,fragment", [
    ("for k in T.vectorized(1, N):\n    p[k] = p[k - 1]", "also writes at another index"),
    ("for k in T.vectorized(N):\n    for m in T.serial(2):\n        p[k] = x[m]",
     "a nested loop inside `T.vectorized`"),
    ("for k in T.vectorized(N):\n    T.fill(p, 0.0)", "T.fill/T.clear inside"),
    ("for k in T.vectorized(N):\n    p[0] = p[0] + x[k]",
     "into an element of `p` that does not"),
    ("for k in T.vectorized(N):\n    y[0] = x[k]", "into an element of `y` that does not"),
    ("for k in T.vectorized(N // 2):\n    t = x[k] * 2.0\n    y[k * 2] = t",
     "into an element of `y` that does not"),
    ("for k in T.vectorized(N):\n    y[N - 1 - k] = x[k]",
     "into an element of `y` that does not"),
])
def test_vectorized_refusals(body, fragment):
    errors = _errors(_kernel("p = T.alloc_shared((N,), T.float32)\nT.copy(x, p)\n" + body))
    assert [c for c, _ in errors] == ["R100"] and fragment in errors[0][1], errors


# ----------------------------------------------------------------------------- infinity

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_infinity_every_float_dtype(tmp_path, dtype):
    out = _run(tmp_path, _kernel(
        "for j in T.Parallel(N):\n"
        f"    y[j] = T.if_then_else(j < 4, T.infinity(T.{dtype}), -T.infinity('{dtype}'))",
        f"x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.{dtype})"),
        {"x": np.zeros(8, np.float32)})
    assert out["y"].astype(np.float64).tolist() == [math.inf] * 4 + [-math.inf] * 4


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint64", "bool"])
def test_infinity_of_an_integer_dtype_is_refused(dtype):
    errors = _errors(_kernel(f"for j in T.Parallel(N):\n    y[j] = T.infinity(T.{dtype})"))
    assert [c for c, _ in errors] == ["R102"]
    assert f"T.infinity needs a float dtype, got {dtype}" in errors[0][1]
    assert "TileLang has no integer infinity" in errors[0][1]


# ----------------------------------------------------------------------------- reduce batch

def test_reduce_batch_changes_nothing():
    body = ("f = T.alloc_fragment((N,), T.float32)\nT.copy(x, f)\n"
            "r = T.alloc_fragment((1,), T.float32)\n"
            "T.reduce_sum(f, r, dim=0{})\nT.copy(r, y[0:1])")
    plain = parse_source(_kernel(body.format("")), "a.py").func()
    batched = parse_source(_kernel(body.format(", batch=8")), "a.py").func()
    (a,) = [s for s in plain.kernel.body if isinstance(s, ir.Reduce)]
    (b,) = [s for s in batched.kernel.body if isinstance(s, ir.Reduce)]
    assert (a.kind, a.dim, a.clear) == (b.kind, b.dim, b.clear)


@pytest.mark.parametrize("batch,message", [
    ("0", "T.reduce_sum: batch must be at least 1, got 0"),
    ("-2", "T.reduce_sum: batch must be at least 1, got -2"),
    ("1.5", "batch must be an integer, got 1.5"),
])
def test_reduce_batch_misuse(batch, message):
    errors = _errors(_kernel("f = T.alloc_fragment((N,), T.float32)\nT.copy(x, f)\n"
                             "r = T.alloc_fragment((1,), T.float32)\n"
                             f"T.reduce_sum(f, r, dim=0, batch={batch})"))
    assert errors == [("R102", message)]


def test_reduce_abssum_has_no_clear():
    errors = _errors(_kernel("f = T.alloc_fragment((N,), T.float32)\nT.copy(x, f)\n"
                             "r = T.alloc_fragment((1,), T.float32)\n"
                             "T.reduce_abssum(f, r, 0, clear=False)"))
    assert errors == [("R102", "`T.reduce_abssum` got an unexpected keyword `clear`")]


@pytest.mark.parametrize("kind", ["max", "min", "absmax"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduce_nan_propagate_into_16_bit_floats_makes_nan(tmp_path, kind, dtype):
    """Into float16/bfloat16 the flag is TileLang's MaxOpNan/MinOpNan (__hmax_nan): a
    NaN term makes the result NaN; without it the NaN is ignored."""
    x = np.array([1.0, math.nan, -6.0, 7.0, 0.5, 0.5, 2.0, 3.0], np.float32)
    want = {"max": 7.0, "min": -6.0, "absmax": 7.0}[kind]
    for flag, nan in (("True", True), ("False", False)):
        out = _run(tmp_path, _kernel(
            f"f = T.alloc_fragment((N,), T.{dtype})\n"
            "for i in T.Parallel(N):\n"
            f"    f[i] = T.cast(x[i], T.{dtype})\n"
            f"r = T.alloc_fragment((1,), T.{dtype})\n"
            f"T.reduce_{kind}(f, r, dim=0, nan_propagate={flag})\n"
            "for i in T.Parallel(1):\n    y[i] = T.cast(r[i], T.float32)"), {"x": x})
        assert math.isnan(out["y"][0]) if nan else out["y"][0] == want


@pytest.mark.parametrize("kind,want", [("max", 7.0), ("min", -6.0), ("absmax", 7.0)])
def test_reduce_nan_propagate_into_float32_changes_nothing(tmp_path, kind, want):
    """TileLang uses __hmax_nan only for a float16/bfloat16 accumulator; into float32
    the flag leaves fmaxf/fminf, which ignore NaN."""
    x = np.array([1.0, math.nan, -6.0, 7.0, math.nan, 0.5, 2.0, 3.0], np.float32)
    out = _run(tmp_path, _kernel(
        "f = T.alloc_fragment((N,), T.float32)\nT.copy(x, f)\n"
        "r = T.alloc_fragment((1,), T.float32)\n"
        f"T.reduce_{kind}(f, r, dim=0, nan_propagate=True)\n"
        "for i in T.Parallel(1):\n    y[i] = r[i]"), {"x": x})
    assert out["y"][0] == want


def test_reduce_sum_takes_no_nan_propagate():
    errors = _errors(_kernel("f = T.alloc_fragment((N,), T.float32)\nT.copy(x, f)\n"
                             "r = T.alloc_fragment((1,), T.float32)\n"
                             "T.reduce_sum(f, r, dim=0, nan_propagate=False)"))
    assert errors == [("R102", "`T.reduce_sum` got an unexpected keyword `nan_propagate`")]


def test_reduce_of_a_local_source_is_refused_by_name():
    errors = _errors(_kernel("p = T.alloc_local((N,), T.float32)\n"
                             "r = T.alloc_fragment((1,), T.float32)\n"
                             "T.reduce_max(p, r, dim=0, batch=1)"))
    assert [c for c, _ in errors] == ["R100"]
    assert "T.reduce_max of the local buffer `p` is not supported" in errors[0][1]


def test_reduce_of_a_shared_source(tmp_path, capsys):
    """Read in place: every holder of an output combines its row of the shared tile
    after a barrier, |x| in the source dtype, then converted to the destination's."""
    x = np.array([-1.5, 2.0, -3.0, 4.0, 0.5, -0.5, 8.0, -8.0], np.float32)
    source = _kernel("p = T.alloc_shared((2, 4), T.float16)\n"
                     "for i, j in T.Parallel(2, 4):\n"
                     "    p[i, j] = T.cast(x[i * 4 + j], T.float16)\n"
                     "r = T.alloc_fragment((2,), T.float32)\n"
                     "T.reduce_absmax(p, r, dim=1)\n"
                     "for i in T.Parallel(2):\n"
                     "    y[i] = r[i]")
    out = _run(tmp_path, source, {"x": x})
    assert out["y"][:2].tolist() == [4.0, 8.0]
    path = tmp_path / "shared.py"
    path.write_text(source)
    assert main(["emit", str(path), "--what", "cuda", "--no-verify"]) == 0
    cuda = capsys.readouterr().out
    assert "from shared memory in place" in cuda
    assert "__half2float" in cuda and "p_rows" not in cuda


# ----------------------------------------------------------------------------- refused

@pytest.mark.parametrize("name", sorted(REFUSED_DTYPES))
@pytest.mark.parametrize("spelling", ["T.{}", "'{}'"])
def test_unmodelled_dtypes_are_refused_by_name(name, spelling):
    dtype = spelling.format(name)
    errors = _errors(_kernel(f"f = T.alloc_fragment((N,), {dtype})"))
    assert errors == [("R102", f"the dtype {name} is not supported: "
                               f"{REFUSED_DTYPES[name]} (docs/limits.md)")]


@pytest.mark.parametrize("use", ["y[0] = T.float8_e5m2fnuz(x[0])",
                                 "y[0] = T.cast(x[0], T.float8_e4m3fnuz)",
                                 "y[0] = x[0].astype('float8_e8m0fnu')"])
def test_unmodelled_float8_conversions_are_refused_by_name(use):
    errors = _errors(_kernel(use))
    assert [c for c, _ in errors] == ["R102"]
    assert "the dtype float8_e" in errors[0][1] and "not supported" in errors[0][1]


def test_unmodelled_float8_tensor_parameter_is_refused_by_name():
    errors = _errors(_kernel("y[0] = 1.0", "x: T.Tensor((N,), T.float8_e4m3fnuz), "
                                           "y: T.Tensor((N,), T.float32)"))
    assert [c for c, _ in errors] == ["R102"]
    assert errors[0][1].startswith("the dtype float8_e4m3fnuz is not supported")
    assert "CUDA has no such type" in errors[0][1]


def test_an_alias_of_a_refused_dtype_is_refused_by_name():
    """`dtype = T.float8_e4m3fnuz` is a compile-time constant like any dtype; each use of
    it as a dtype, or as a value, names the dtype (not "not a compile-time constant")."""
    source = _kernel("f = T.alloc_fragment((N,), dtype)\n"
                     "for j in T.Parallel(N):\n"
                     "    y[j] = T.cast(x[j], D2)\n"
                     "    y[j] = dtype + 1",
                     "x: T.Tensor((N,), dtype), y: T.Tensor((N,), T.float32)")
    source = source.replace("N = 8\n", "N = 8\ndtype = T.float8_e4m3fnuz\nD2 = 'float8_e8m0fnu'\n")
    errors = _errors(source)
    assert [c for c, _ in errors] == ["R102"] * 4, errors
    names = [m.split(" is not supported")[0] for _, m in errors]
    assert names == ["the dtype float8_e4m3fnuz", "the dtype float8_e4m3fnuz",
                     "the dtype float8_e8m0fnu", "the dtype float8_e4m3fnuz"]


def test_a_dtype_used_as_a_value_says_so():
    errors = _errors(_kernel("d = T.float16\nfor j in T.Parallel(N):\n    y[j] = d"))
    assert errors == [("R102", "the dtype float16 is not a value (write T.float16(x))")]

