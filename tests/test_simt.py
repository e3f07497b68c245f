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


# ----------------------------------------------------------------------------- private

X8 = {"x": np.arange(1, 9, dtype=np.float32), "y": np.zeros(8, np.float32)}


def _private(tmp_path: Path, body: str, threads: str = "8"):
    report = _check(tmp_path, _kernel(body, threads), dict(X8))
    errors = [(d.code, d.message) for d in report.diagnostics if d.is_error]
    return report, errors


def test_each_thread_keeps_its_own_copy_of_a_local(tmp_path):
    """gemv_naive's shape: acc[0] += ... under the thread index is no race."""
    report, errors = _private(tmp_path, "t = T.get_thread_binding(0)\n"
                              "acc = T.alloc_local((1,), T.float32)\n"
                              "T.clear(acc)\n"
                              "for k in T.serial(3):\n"
                              "    acc[0] += x[t]\n"
                              "y[t] = acc[0]")
    assert errors == [] and report.verdict == "verified"
    np.testing.assert_array_equal(report.reference.outputs["y"], 3 * X8["x"])


def test_a_block_level_write_sets_every_copy(tmp_path):
    """p[0] = 2.5 outside any thread dependence: every thread reads 2.5, inside a
    T.Parallel too (the copies agree, so which thread runs an iteration cannot matter)."""
    report, errors = _private(tmp_path, "p = T.alloc_local((1,), T.float32)\n"
                              "p[0] = 2.5\n"
                              "for i in T.Parallel(N):\n"
                              "    y[i] = x[i] + p[0]")
    assert errors == [] and report.verdict == "verified"
    np.testing.assert_array_equal(report.reference.outputs["y"], X8["x"] + 2.5)


def test_a_read_of_differing_copies_inside_t_parallel_is_r100(tmp_path):
    _, errors = _private(tmp_path, "t = T.get_thread_binding(0)\n"
                         "p = T.alloc_local((1,), T.float32)\n"
                         "p[0] = x[t]\n"
                         "for i in T.Parallel(N):\n"
                         "    y[i] = p[0]")
    assert errors == [("R100", "read of thread-private p[0] inside a T.Parallel (its "
                       "iterations are spread over the threads), where the threads' copies "
                       "differ (threads 0 and 1): which thread's copy it means is a "
                       "physical choice")]


def test_a_name_bound_to_differing_copies_is_r100(tmp_path):
    _, errors = _private(tmp_path, "t = T.get_thread_binding(0)\n"
                         "p = T.alloc_local((1,), T.float32)\n"
                         "p[0] = x[t]\n"
                         "v = p[0]\n"
                         "y[t] = v")
    assert [c for c, _ in errors] == ["R100"]
    assert errors[0][1].startswith("read of thread-private p[0] bound to a name")


def test_an_if_on_a_private_value_is_thread_divergent(tmp_path):
    """if p[0] > 4: each thread decides on its own copy."""
    report, errors = _private(tmp_path, "t = T.get_thread_binding(0)\n"
                              "p = T.alloc_local((1,), T.float32)\n"
                              "p[0] = x[t]\n"
                              "y[t] = 0.0\n"
                              "if p[0] > 4:\n"
                              "    y[t] = p[0]")
    assert errors == [] and report.verdict == "verified"
    np.testing.assert_array_equal(report.reference.outputs["y"],
                                  np.where(X8["x"] > 4, X8["x"], 0))


def test_a_copy_written_by_some_threads_only_is_r502_where_another_reads_it(tmp_path):
    _, errors = _private(tmp_path, "t = T.get_thread_binding(0)\n"
                         "p = T.alloc_local((1,), T.float32)\n"
                         "if t == 0:\n"
                         "    p[0] = 1.0\n"
                         "y[t] = p[0]")
    assert errors == [("R502", "read of p[0] by thread 1, which never wrote it (local "
                               "memory starts uninitialized)")]


def test_threads_storing_their_own_copies_are_no_race_but_iterations_are(tmp_path):
    """In a T.Parallel that reads the thread index each iteration runs on every thread;
    two iterations storing different values to one thread's element still race."""
    _, errors = _private(tmp_path, "t = T.get_thread_binding(0)\n"
                         "p = T.alloc_local((1,), T.float32)\n"
                         "for i in T.Parallel(N):\n"
                         "    p[0] = x[i] + T.cast(t, T.float32)\n"
                         "y[0] = x[0]")
    assert [c for c, _ in errors] == ["R102"]
    assert errors[0][1].startswith("iterations of the T.Parallel store different values")


# ----------------------------------------------------------------------------- alloc_var

def _lowered(body: str) -> list:
    func = parse_source(_kernel(body, "8"), "simt.py").func()
    return list(ir.walk(func.kernel.body))


@pytest.mark.parametrize("call, init", [
    ("T.alloc_var(T.int32)", None), ("T.alloc_var(T.int32, 3)", 3),
    ("T.alloc_var(T.int32, 'local.var')", None), ("T.alloc_var(T.int32, 3, 'local.var')", 3),
    ("T.alloc_var(T.int32, 'local.var', init=3)", 3), ("T.alloc_var(dtype=T.int32, init=3)", 3),
])
def test_alloc_var_is_a_one_element_local_with_its_init(call, init):
    """allocate.py's argument rules: a lone string is the scope, else the init."""
    stmts = _lowered(f"v = {call}\ny[0] = T.cast(v, T.float32)")
    alloc = stmts[0]
    assert isinstance(alloc, ir.Alloc)
    assert (alloc.buffer.shape, alloc.buffer.scope, alloc.buffer.dtype.name) == \
        ((1,), "local", "int32")
    stores = [s for s in stmts if isinstance(s, ir.Store) and s.buffer is alloc.buffer]
    assert [s.value.value for s in stores] == ([] if init is None else [init])


def test_a_var_name_reads_and_assigns_its_element():
    stmts = _lowered("v = T.alloc_var(T.float32)\nv = x[0]\nv += 2.0\ny[0] = v")
    buf = stmts[0].buffer
    first, second, out = stmts[1:]
    assert first.buffer is buf and format_expr(first.value) == "x[0]"
    assert second.buffer is buf and format_expr(second.value) == f"{buf.name}[0] + 2.0"
    assert format_expr(out.value) == f"{buf.name}[0]"


@pytest.mark.parametrize("call, message", [
    ("T.alloc_var()", "T.alloc_var needs a dtype"),
    ("T.alloc_var(T.int32, 1, init=2)", "T.alloc_var's init is given twice"),
    ("T.alloc_var(T.int32, 1, 2)", "T.alloc_var takes (dtype, init, scope) with a string "
                                   "scope"),
    ("T.alloc_var(T.int32, align=4)", "`T.alloc_var` got an unexpected keyword `align`"),
])
def test_a_malformed_alloc_var_is_r102(call, message):
    assert _errors(_kernel(f"v = {call}\ny[0] = x[0]")) == [("R102", message)]


def test_each_thread_has_its_own_var(tmp_path):
    """s starts at 1.5 in every thread; thread t adds x[0..t]."""
    report, errors = _private(tmp_path, "t = T.get_thread_binding(0)\n"
                              "s = T.alloc_var(T.float32, 1.5)\n"
                              "for k in T.serial(t + 1):\n"
                              "    s += x[k]\n"
                              "y[t] = s")
    assert errors == [] and report.verdict == "verified"
    t = np.arange(8)
    np.testing.assert_array_equal(report.reference.outputs["y"], 1.5 + (t + 1) * (t + 2) / 2)


# ----------------------------------------------------------------------------- reduce of a local

def test_each_thread_reduces_its_own_local_copy(tmp_path):
    """clear=False combines into the destination's old value: y[t] = 10 + x[t] + x[t]·2."""
    report, errors = _private(tmp_path, "t = T.get_thread_binding(0)\n"
                              "p = T.alloc_local((2,), T.float32)\n"
                              "p[0] = x[t]\n"
                              "p[1] = x[t] * 2.0\n"
                              "d = T.alloc_var(T.float32, 10.0)\n"
                              "T.reduce_sum(p, d, dim=0, clear=False)\n"
                              "y[t] = d")
    assert errors == [] and report.verdict == "verified"
    np.testing.assert_array_equal(report.reference.outputs["y"], 10 + 3 * X8["x"])


def test_a_reduction_of_agreeing_copies_runs_once_for_the_block(tmp_path):
    """Every copy of p holds x: the block-level reduction's result is every thread's."""
    report, errors = _private(tmp_path, "p = T.alloc_local((N,), T.float32)\n"
                              "for k in T.serial(N):\n"
                              "    p[k] = x[k]\n"
                              "d = T.alloc_local((1,), T.float32)\n"
                              "T.reduce_absmax(p, d, dim=0)\n"
                              "for i in T.Parallel(N):\n"
                              "    y[i] = d[0]")
    assert errors == [] and report.verdict == "verified"
    np.testing.assert_array_equal(report.reference.outputs["y"], np.full(8, 8.0))


@pytest.mark.parametrize("body, error", [
    ("p = T.alloc_local((N,), T.float32)\nd = T.alloc_local((1,), T.float16)\n"
     "T.reduce_sum(p, d, dim=0)",
     ("R102", "T.reduce_sum of the local buffer `p` (float32) into `d` (float16): "
              "TileLang's per-thread reduction needs one dtype on both sides")),
    ("p = T.alloc_local((N,), T.float32)\nd = T.alloc_local((1,), T.float32)\n"
     "T.reduce_max(p, d, dim=0, batch=2)",
     ("R102", "T.reduce_max of the local buffer `p` takes no batch (TileLang: a local "
              "reduction does not support batch), got batch=2")),
    ("p = T.alloc_local((N,), T.float32)\nd = T.alloc_shared((1,), T.float32)\n"
     "T.reduce_sum(p, d, dim=0)",
     ("R100", "T.reduce_sum of the local buffer `p` is not supported into the shared "
              "buffer `d`: TileLang reduces a thread-private source only into a "
              "thread-private destination (T.alloc_local, T.alloc_var)")),
])
def test_a_local_reduction_tilelang_cannot_lower_is_refused(body, error):
    assert _errors(_kernel(body)) == [error]


# ----------------------------------------------------------------------------- warp builtins

def _warp(tmp_path: Path, body: str, threads: str = "32", n: int = 32):
    source = _kernel(body, threads, params=f"x: T.Tensor(({n},), T.int32), "
                                            f"y: T.Tensor(({n},), T.int32)")
    report = _check(tmp_path, source, {"x": np.arange(n, dtype=np.int32),
                                       "y": np.zeros(n, np.int32)})
    return report, [(d.code, d.message) for d in report.diagnostics if d.is_error]


@pytest.mark.parametrize("call, expected", [
    # CUDA's rule, by hand: the source lane, or the lane itself past its segment
    ("T.shfl_xor(x[t], 5)", [t ^ 5 for t in range(32)]),
    # width 4: lane ^ 8 in a later segment gives the lane itself, in an earlier one the
    # lane is read (CUDA: "groups ... can access elements from earlier groups")
    ("T.shfl_xor(x[t], 8, 4)", [t ^ 8 if t & 8 else t for t in range(32)]),
    ("T.shfl_xor(x[t], 2, 4)", [t ^ 2 for t in range(32)]),
    ("T.shfl_down(x[t], 1)", [min(t + 1, 31) for t in range(32)]),
    ("T.shfl_down(x[t], 33)", [min(t + 1, 31) for t in range(32)]),   # PTX reads b[4:0]
    ("T.shfl_up(x[t], 4, 8)", [t - 4 if t % 8 >= 4 else t for t in range(32)]),
    ("T.shfl_sync(x[t], 9, 16)", [t - t % 16 + 9 for t in range(32)]),
    ("T.shfl_sync(x[t], 3 * t % 32)", [3 * t % 32 for t in range(32)]),
    ("T.warp_reduce_bitor(x[t])", [31] * 32),
    ("T.warp_reduce_min(x[t] - 7)", [-7] * 32),
])
def test_each_lane_reads_the_lane_cuda_picks(tmp_path, call, expected):
    report, errors = _warp(tmp_path, f"t = T.get_thread_binding(0)\ny[t] = {call}")
    assert errors == [] and report.verdict == "verified"
    assert report.reference.outputs["y"].tolist() == expected


def test_warp_reduce_sum_is_the_butterfly_in_the_value_dtype(tmp_path):
    """float32: each step rounds; the expected value is the butterfly written here."""
    x = np.ones(32, np.float32)
    x[0] = 2.0 ** 24          # every 1 added to it alone is lost: 2**24 + 1 ties to even
    v = x.copy()
    for mask in (16, 8, 4, 2, 1):
        v = (v + v[np.arange(32) ^ mask]).astype(np.float32)
    source = _kernel("t = T.get_thread_binding(0)\ny[t] = T.warp_reduce_sum(x[t])", "32",
                     params="x: T.Tensor((32,), T.float32), y: T.Tensor((32,), T.float32)")
    report = _check(tmp_path, source, {"x": x, "y": np.zeros(32, np.float32)})
    assert report.verdict == "verified"
    np.testing.assert_array_equal(report.reference.outputs["y"], v)
    assert v[0] != np.float32(x.astype(np.float64).sum())     # the order shows


def test_a_shuffle_a_lane_of_the_warp_does_not_reach_is_r501(tmp_path):
    _, errors = _warp(tmp_path, "t = T.get_thread_binding(0)\n"
                                "if t < 16:\n"
                                "    y[t] = T.shfl_xor(x[t], 1)")
    assert errors == [("R501", "T.shfl_xor is reached by 16 of the 32 threads of warp 0 "
                               "(threads 0..31): a full-warp shuffle needs every lane of the "
                               "warp (a block of fewer threads than a warp, or a branch that "
                               "leaves lanes out, is undefined in CUDA)")]


def test_a_shuffle_in_a_block_smaller_than_a_warp_is_r501(tmp_path):
    _, errors = _warp(tmp_path, "t = T.get_thread_binding(0)\ny[t] = T.warp_reduce_sum(x[t])",
                      "16", n=16)
    assert [c for c, _ in errors] == ["R501"]
    assert errors[0][1].startswith("T.warp_reduce_sum is reached by 16 of the 32 threads")


def test_a_shuffle_inside_t_parallel_is_r100(tmp_path):
    _, errors = _warp(tmp_path, "for i in T.Parallel(32):\n"
                                "    y[i] = T.shfl_xor(x[i], 1)")
    assert errors == [("R100", "T.shfl_xor inside a T.Parallel is not supported: which "
                               "thread runs an iteration is the loop layout's choice, so "
                               "which lane a value comes from has no logical meaning (call "
                               "it outside the loop)")]


@pytest.mark.parametrize("call, error", [
    ("T.shfl_xor(x[0], 1, 3)",
     ("R102", "T.shfl_xor: width must be a power of two up to 32, got 3")),
    ("T.shfl_xor(x[0], 1, mask=0xFFFF)",
     ("R100", "T.shfl_xor with a lane mask other than the full warp (0xFFFFFFFF) is not "
              "supported")),
    ("T.shfl_down(x[0], 1.5)",
     ("R102", "T.shfl_down's delta needs integer operands, got float32")),
    ("T.shfl_xor(1.0, 1)",
     ("R102", "T.shfl_xor of an untyped literal: give it a dtype (`T.float32(1)`)")),
    ("T.shfl_xor(x[0] > 0, 1)", ("R102", "T.shfl_xor of a bool value is not supported")),
    ("T.warp_reduce_bitand(x[0])",
     ("R102", "T.warp_reduce_bitand needs an integer value, not float32")),
    ("T.warp_reduce_max(T.cast(x[0], T.float64))",
     ("R102", "T.warp_reduce_max of a float64 value is not supported: TileLang compares "
              "doubles with `a < b ? b : a`, which treats NaN unlike T.max")),
])
def test_a_warp_builtin_we_cannot_give_cudas_meaning_is_refused(call, error):
    assert _errors(_kernel(f"y[0] = T.cast({call}, T.float32)")) == [error]


# ----------------------------------------------------------------------------- per-thread names

def test_a_per_thread_name_whose_buffer_is_written_before_its_use_is_r100(tmp_path):
    """w = T.shfl_xor(v, 1) is evaluated where w is used, per thread; v changed since:
    the binding's value is not kept, so the use is refused, naming both."""
    _, errors = _warp(tmp_path, "t = T.get_thread_binding(0)\n"
                                "v = T.alloc_var(T.int32)\n"
                                "v = x[t]\n"
                                "w = T.shfl_xor(v, 1)\n"
                                "v = 0\n"
                                "y[t] = w")
    assert errors == [("R100", "`w` is bound to a value that depends on the thread and "
                               "reads v, which is written after the binding and before this "
                               "use: per-thread values bound to a name are not kept; read v "
                               "where the value is used, or bind it after the write")]


def test_a_stale_per_thread_name_that_is_not_used_is_no_error(tmp_path):
    report, errors = _warp(tmp_path, "t = T.get_thread_binding(0)\n"
                                     "a = x[t] + 1\n"
                                     "y[t] = a\n"
                                     "x[t] = 5\n"
                                     "y[t] = y[t] + x[t]")
    assert errors == [] and report.verdict == "verified"
    assert report.reference.outputs["y"].tolist() == [t + 6 for t in range(32)]


def test_a_local_too_large_to_keep_per_thread_is_r102():
    errors = _errors(_kernel("p = T.alloc_local((2048,), T.float32)\np[0] = x[0]\n"
                             "y[0] = p[0]", "1024"))
    assert errors == [("R102", "local buffer p has 2048 elements in each of 1024 threads, "
                               "2097152 cells; at most 1048576 (2**20) are supported "
                               "(docs/limits.md)")]
