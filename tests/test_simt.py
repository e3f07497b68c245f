"""SIMT-style kernels (issue 25): `threads=` as TileLang reads it and
T.get_thread_binding(d) of every thread dimension.

- threads= is one integer or a tuple/list of 1 to 3 extents (tilelang/language/kernel.py
  `_normalize_threads`); the block has their product of threads, numbered x fastest
  (x + X·(y + Y·z)), the order CUDA forms warps in;
- T.get_thread_binding(d) is threadIdx.x, .y, .z: a function of that one linear index
  (`t % X`, `t // X % Y`, `t // (X·Y)`), 0 for a dimension of extent 1;
- a 4-tuple, a non-integer extent, a zero extent, a dimension other than 0..2 are
  R102; more than 64 threads in z (CUDA's blockDim.z) is R506.

The expected values are computed here by hand, never by the code under test."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.printer import format_expr
from verify_reducer.verify.oracle import pipeline

HEADER = "import tilelang.language as T\n\nN = 8\n\n\n"


def _kernel(body: str, threads: str = "32",
            params: str = "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)") -> str:
    lines = "\n".join("        " + line for line in body.strip("\n").splitlines())
    return (HEADER + "@T.prim_func\n"
            f"def main({params}):\n"
            f"    with T.Kernel(1, threads={threads}) as bx:\n" + lines + "\n")


def _errors(source: str) -> list[tuple[str, str]]:
    try:
        parse_source(source, "simt.py")
    except DiagnosticError as exc:
        return [(d.code, d.message) for d in exc.diagnostics]
    return []


def _check(tmp_path: Path, source: str, inputs: dict | None = None):
    """check of source (the given inputs, or seeded ones): verified means the
    interpreter and every simulated plan agree."""
    path = tmp_path / "simt.py"
    path.write_text(source)
    return pipeline.check(str(path), given=inputs)


# ----------------------------------------------------------------------------- threads=

@pytest.mark.parametrize("threads, count", [("64", 64), ("(64,)", 64), ("[8, 4]", 32),
                                            ("(4, 2, 2)", 16), ("(128, 1)", 128)])
def test_threads_is_the_product_of_its_extents(threads, count):
    func = parse_source(_kernel("y[0] = x[0]", threads), "simt.py").func()
    assert func.kernel.threads == count


@pytest.mark.parametrize("threads, message", [
    ("(4, 2, 2, 2)", "threads must be an integer or a tuple of 1 to 3 integers, got "
                     "(4, 2, 2, 2)"),
    ("(4, 2.0)", "threads must be an integer or a tuple of 1 to 3 integers, got (4, 2.0)"),
    ("(4, 0)", "threads must be positive, got (4, 0)"),
    ("()", "threads must be an integer or a tuple of 1 to 3 integers, got ()"),
])
def test_a_malformed_threads_tuple_is_r102(threads, message):
    assert _errors(_kernel("y[0] = x[0]", threads)) == [("R102", message)]


def test_more_than_64_threads_in_z_is_r506():
    errors = _errors(_kernel("y[0] = x[0]", "(1, 1, 128)"))
    assert errors == [("R506", "threads=(1, 1, 128) has 128 threads in z; CUDA allows at "
                               "most 64 (blockDim.z)")]


def test_more_than_1024_threads_in_all_is_r506():
    errors = _errors(_kernel("y[0] = x[0]", "(64, 32)"))
    assert errors == [("R506", "threads=2048 exceeds 1024 threads per block on sm_90")]


# ----------------------------------------------------------------------------- bindings

def _bindings(threads: str) -> list[str]:
    source = _kernel("tx = T.get_thread_binding(0)\nty = T.get_thread_binding(1)\n"
                     "tz = T.get_thread_binding(2)\ny[0] = x[tx + ty + tz]", threads)
    func = parse_source(source, "simt.py").func()
    return [format_expr(s.value) for s in func.kernel.body if isinstance(s, ir.Let)]


def test_each_dimension_is_an_expression_of_the_linear_thread_index():
    t = "T.get_thread_binding()"
    assert _bindings("(4, 2, 2)") == [f"{t} % 4", f"{t} // 4 % 2", f"{t} // 8"]
    assert _bindings("(8, 4)") == [f"{t} % 8", f"{t} // 8", "T.int32(0)"]
    assert _bindings("32") == [t, "T.int32(0)", "T.int32(0)"]


def test_a_thread_dimension_other_than_0_1_2_is_r102():
    errors = _errors(_kernel("t = T.get_thread_binding(3)\ny[0] = x[t]"))
    assert errors == [("R102", "T.get_thread_binding(3): the thread dimension is 0, 1 or 2 "
                               "(threadIdx.x, .y, .z)")]


def test_every_thread_of_a_3d_block_stores_its_own_element(tmp_path):
    """out[z, y, x] = x + 10·y + 100·z: the linear numbering, x fastest."""
    source = _kernel("tx = T.get_thread_binding(0)\nty = T.get_thread_binding(1)\n"
                     "tz = T.get_thread_binding(2)\n"
                     "o[tz, ty, tx] = T.cast(tx + 10 * ty + 100 * tz, T.float32)",
                     "(4, 2, 3)", params="o: T.Tensor((3, 2, 4), T.float32)")
    report = _check(tmp_path, source)
    assert report.verdict == "verified", [d.message for d in report.diagnostics]
    z, y, x = np.indices((3, 2, 4))
    np.testing.assert_array_equal(report.reference.outputs["o"], (x + 10 * y + 100 * z))
