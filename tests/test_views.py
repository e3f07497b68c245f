"""T.reshape / T.view (spec/frontend/views.py): a view is a second shape over a
fragment's or shared buffer's elements in row-major order, read as a copy made where
the view is created; a write to either buffer after it is refused, and so are views of
global, local and reducer buffers, views that change the dtype, and a view used inside
an expression. The expected values are computed here with numpy's reshape."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.oracle import pipeline

HEADER = "import tilelang.language as T\n\n"


def _kernel(body: str, shape=(4, 24), scope="fragment") -> str:
    lines = "\n".join("        " + line for line in body.strip("\n").splitlines())
    return (HEADER + "@T.prim_func\n"
            f"def main(x: T.Tensor({shape}, T.float32), y: T.Tensor((4, 2), T.float32)):\n"
            "    with T.Kernel(1, threads=64) as bx:\n"
            f"        f = T.alloc_{scope}({shape}, T.float32)\n"
            "        T.copy(x, f)\n" + lines + "\n")


def _errors(source: str) -> list[tuple[str, str]]:
    try:
        parse_source(source, "view.py")
    except DiagnosticError as exc:
        return [(d.code, d.message) for d in exc.diagnostics]
    return []


def _outputs(tmp_path: Path, source: str, x: np.ndarray) -> dict:
    path = tmp_path / "view.py"
    path.write_text("# expect: ok\n" + source)
    report = pipeline.check(str(path), given={"x": x}, blocks="all")
    assert report.exit_code == pipeline.EXIT_OK, [d.message for d in report.diagnostics]
    return report.reference.outputs


@pytest.mark.parametrize("scope", ["fragment", "shared"])
@pytest.mark.parametrize("call", ["T.reshape(f, (4, 2, 12))", "T.view(f, (4, 2, 12))",
                                  "T.view(f, shape=[4, 2, 12], dtype=T.float32)"])
def test_a_view_is_the_row_major_reshape(tmp_path, scope, call):
    """The groups of 12 straddle nothing here; the next test's do."""
    x = np.arange(96, dtype=np.float32).reshape(4, 24)
    source = _kernel(f"v = {call}\n"
                     "r = T.alloc_fragment((4, 2), T.float32)\n"
                     "T.reduce_sum(v, r, dim=2)\n"
                     "T.copy(r, y)", scope=scope)
    got = _outputs(tmp_path, source, x)["y"]
    assert np.array_equal(got, x.reshape(4, 2, 12).sum(axis=2))


def test_a_view_whose_rows_straddle_the_source_rows(tmp_path):
    """(4, 24) viewed as (2, 4, 12): view row 0 holds source rows 0 and 1."""
    x = (np.arange(96, dtype=np.float32) % 7).reshape(4, 24)
    source = _kernel("v = T.reshape(f, (2, 4, 12))\n"
                     "r = T.alloc_fragment((2, 4), T.float32)\n"
                     "T.reduce_max(v, r, dim=2)\n"
                     "for i, j in T.Parallel(2, 4):\n"
                     "    y[2 * i + j // 2, j % 2] = r[i, j]")
    got = _outputs(tmp_path, source, x)["y"]
    assert np.array_equal(got.reshape(2, 4), x.reshape(2, 4, 12).max(axis=2))


def test_a_view_of_a_view(tmp_path):
    x = np.arange(96, dtype=np.float32).reshape(4, 24)
    source = _kernel("v = T.reshape(f, (96,))\n"
                     "w = T.reshape(v, (4, 2, 12))\n"
                     "r = T.alloc_fragment((4, 2), T.float32)\n"
                     "T.reduce_sum(w, r, dim=2)\n"
                     "T.copy(r, y)")
    assert np.array_equal(_outputs(tmp_path, source, x)["y"],
                          x.reshape(4, 2, 12).sum(axis=2))


@pytest.mark.parametrize("write, line", [
    ("f[0, 0] = 1.0", "`f` is written after the view"),
    ("v[0, 0, 0] = 1.0", "`v` is written after the view"),
    ("T.fill(f, 0.0)", "`f` is written after the view"),
])
def test_a_write_after_the_view_is_refused(write, line):
    errors = _errors(_kernel("v = T.reshape(f, (4, 2, 12))\n" + write))
    assert [c for c, _ in errors] == ["R101"]
    assert errors[0][1].startswith(line)


def test_a_write_before_the_view_in_a_loop_is_the_next_iteration_s():
    """The view is made again each iteration, after the write: nothing is stale."""
    assert _errors(_kernel("r = T.alloc_fragment((4, 2), T.float32)\n"
                           "for k in T.serial(2):\n"
                           "    for i, j in T.Parallel(4, 24):\n"
                           "        f[i, j] = f[i, j] + 1.0\n"
                           "    v = T.reshape(f, (4, 2, 12))\n"
                           "    T.reduce_sum(v, r, dim=2)\n"
                           "T.copy(r, y)")) == []


@pytest.mark.parametrize("body, code, start", [
    ("v = T.reshape(f, (5, 24))", "R102", "T.reshape of `f` (4, 24) (96 elements) to (5, 24)"),
    ("v = T.reshape(x, (96,))", "R100", "T.reshape of the global tensor `x`"),
    ("l = T.alloc_local((4,), T.float32)\nv = T.reshape(l, (2, 2))", "R100",
     "T.reshape of the thread-private local buffer `l`"),
    ("v = T.view(f, (4, 24), T.int32)", "R100", "`T.view` of `f` as int32"),
    ("T.reduce_sum(T.reshape(f, (4, 2, 12)), y, dim=2)", "R101",
     "`T.reshape` is supported only assigned to a name"),
])
def test_views_that_have_no_meaning_here_are_refused_by_name(body, code, start):
    errors = _errors(_kernel(body))
    assert [c for c, _ in errors] == [code], errors
    assert errors[0][1].startswith(start), errors[0][1]
