"""Factories whose parameters have no defaults (spec.frontend.factories): bound by
--param (check, run, emit), by the oracle API's and the pytest plugin's params=, by a
`# params:` line, by a call with constant arguments or by a default, in that order;
quantified by --for-all where they are sizes; and the message of each way it fails."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from verify_reducer import oracle
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import ParamError, ParamText, parse_source
from verify_reducer.spec.frontend.factories import parse_param_flags
from verify_reducer.verify.cli.commands import main

KERNEL = textwrap.dedent("""\
    import tilelang
    import tilelang.language as T


    @tilelang.jit(out_idx=[-1])
    def row_sum(M, N, block_M=16, block_N=4, dtype="float32"):
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
            with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
                a = T.alloc_fragment((block_M, block_N), dtype)
                b = T.alloc_fragment((block_M,), dtype)
                T.clear(b)
                for k in T.serial(T.ceildiv(N, block_N)):
                    T.copy(A[bx * block_M, k * block_N], a)
                    T.reduce_sum(a, b, dim=1, clear=False)
                T.copy(b, B[bx * block_M])

        return main
    """)


@pytest.fixture
def kernel(tmp_path: Path) -> str:
    path = tmp_path / "row_sum.py"
    path.write_text(KERNEL)
    return str(path)


def shape(source: str, **params):
    return parse_source(source, "k.py", None, params).func().params[0].shape


def test_check_binds_a_factory_without_defaults_from_param_flags(kernel, capsys):
    assert main(["check", kernel, "--param", "M=4096", "--param", "N=4096"]) == 0
    out = capsys.readouterr().out
    assert "grid 256" in out and "verdict: verified" in out


def test_run_and_emit_take_param_flags(kernel, capsys):
    assert main(["run", kernel, "--param", "M=64", "--param", "N=8",
                 "--param", "dtype=float16"]) == 0
    capsys.readouterr()
    assert main(["emit", kernel, "--param", "M=2**6", "--param", "N=8",
                 "--param", "dtype=T.float16"]) == 0
    assert "A: T.Tensor((64, 8), T.float16)" in capsys.readouterr().out


def test_without_params_the_missing_parameters_are_r102_naming_them(kernel, capsys):
    assert main(["check", kernel]) == 1
    err = capsys.readouterr().err
    assert "row_sum.py:6:13: error[R102]: factory `row_sum` parameters `M`, `N` have no " \
           "value: bind them with `--param M=VALUE`" in err
    assert "`# params: M=VALUE` line" in err


def test_for_all_quantifies_a_factory_parameter(kernel, capsys):
    code = main(["check", kernel, "--param", "M=64", "--param", "N=8",
                 "--for-all", "M=16..4096", "--assume", "M % 16 == 0"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "verified for all M in [16, 4096] (assuming M % 16 == 0)" in out


def test_for_all_refutes_a_factory_parameter_at_its_smallest_counterexample(kernel, capsys):
    assert main(["check", kernel, "--param", "M=64", "--param", "N=8",
                 "--for-all", "M=1..4096"]) == 1
    assert "the smallest counterexample sizes are M=1" in capsys.readouterr().err


def test_for_all_on_a_parameter_that_is_no_integer_is_a_usage_error(kernel, capsys):
    assert main(["check", kernel, "--param", "M=64", "--param", "N=8",
                 "--for-all", "dtype=1..8"]) == 2
    assert "`dtype` is not an integer module constant or factory parameter" in \
        capsys.readouterr().err


@pytest.mark.parametrize("flags, message", [
    (["--param", "M"], "--param 'M': expected NAME=VALUE"),
    (["--param", "M=4", "--param", "M=8"], "--param names M twice"),
    (["--param", "Q=4"], "no factory in the file has a parameter `Q` to bind (factory "
                         "parameters: M, N, block_M, block_N, dtype)"),
    (["--param", "M=unknown_fn(3)", "--param", "N=4"],
     "--param M=unknown_fn(3): not a compile-time value"),
])
def test_bad_param_flags_are_usage_errors(kernel, capsys, flags, message):
    assert main(["check", kernel, *flags]) == 2
    assert message in capsys.readouterr().err


def test_precedence_param_directive_call_default():
    source = "# params: M=32, N=8\n" + KERNEL + "\nprog = row_sum(48, 4)\n"
    assert shape(source) == (32, 8)                        # the directive before the call
    assert shape(source, M=ParamText("64")) == (64, 8)     # --param before the directive
    assert shape(KERNEL + "\nprog = row_sum(48, N=4)\n") == (48, 4)        # the call
    assert shape(KERNEL.replace("N, block_M", "N=8, block_M"), M=16) == (16, 8)  # default


def test_param_text_is_folded_in_the_file_s_scope():
    source = KERNEL.replace("import tilelang.language as T\n",
                            "import tilelang.language as T\nROWS = 128\n")
    assert shape(source, M=ParamText("ROWS // 2"), N=ParamText("2**3")) == (64, 8)
    func = parse_source(source, "k.py", None, {"M": ParamText("16"), "N": ParamText("4"),
                                               "dtype": ParamText("float16")}).func()
    assert func.params[0].dtype.name == "float16"     # a bare word is the string it spells


def test_param_that_names_no_factory_parameter_raises_param_error():
    with pytest.raises(ParamError, match="no factory in the file has a parameter `K`"):
        parse_source(KERNEL, "k.py", None, {"M": 4, "N": 4, "K": 4})


def test_a_missing_parameter_is_one_diagnostic_at_the_first():
    with pytest.raises(DiagnosticError) as err:
        parse_source(KERNEL, "k.py", None, {"N": 4})
    [d] = err.value.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("R102", 6, 13)
    assert "parameter `M` has no value: bind it with `--param M=VALUE`" in d.message


def test_parse_param_flags():
    assert parse_param_flags(["M=4096", "op = sum", "t=(1, 2)"]) == {
        "M": ParamText("4096"), "op": ParamText("sum"), "t": ParamText("(1, 2)")}


def test_oracle_load_binds_params(kernel):
    prog = oracle.load(kernel, params={"M": 64, "N": 8, "dtype": "float16"})
    assert prog.params["A"] == ((64, 8), "float16")
    assert oracle.check(prog, oracle.backend("sim")).ok
    with pytest.raises(oracle.ProgramError, match="parameter `Z`"):
        oracle.load(kernel, params={"M": 64, "N": 8, "Z": 1})
    with pytest.raises(oracle.ProgramError, match="pass them with the path"):
        oracle.load(prog, params={"M": 8})
    with pytest.raises(oracle.ProgramRejected):
        oracle.load(kernel)


def test_pytest_plugin_marker_takes_params(kernel):
    from verify_reducer.pytest_plugin import ReducerCase, _marker_settings

    class Marker:
        args = ("interp",)
        kwargs = {"programs": kernel, "params": {"M": 32, "N": 4}}
    settings = _marker_settings(Marker())
    case = ReducerCase(Path(kernel), settings["backend"], params=settings["params"])
    assert case.program.params["A"] == ((32, 4), "float32")
    assert case.report.ok



# ----------------------------------------------------------------------------- trace time

REDUCE = textwrap.dedent("""\
    import tilelang
    import tilelang.language as T


    def kernel(M, N, op):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
            with T.Kernel(1, threads=128):
                src = T.alloc_fragment((M, N), "float32")
                if op == "sum":
                    dst = T.alloc_fragment((M,), "float32")
                    T.copy(A, src)
                    T.reduce_sum(src, dst, dim=1)
                elif op == "max":
                    dst = T.alloc_shared((M,), "float32")
                    T.copy(A, src)
                    T.reduce_max(src, dst, dim=1)
                T.copy(dst, B)

        return main
    """)


def lowered(source: str, **params) -> str:
    from verify_reducer.spec.printer import format_func
    return format_func(parse_source(source, "k.py", None, params).func())


def errors(source: str, **params) -> list[tuple[str, int, int, str]]:
    with pytest.raises(DiagnosticError) as err:
        parse_source(source, "k.py", None, params)
    return [(d.code, d.span.line, d.span.col, d.message) for d in err.value.diagnostics]


def test_if_on_a_factory_argument_builds_only_the_branch_taken():
    text = lowered(REDUCE, M=8, N=4, op="max")
    assert "T.alloc_shared((8,)" in text and "T.reduce_max" in text
    assert "reduce_sum" not in text and "alloc_fragment((8,)" not in text
    text = lowered(REDUCE, M=8, N=4, op="sum")
    assert "T.reduce_sum" in text and "reduce_max" not in text


def test_a_branch_not_taken_leaves_its_names_unbound():
    [(code, line, _, message)] = errors(REDUCE, M=8, N=4, op="min")
    assert (code, line, message) == ("R101", 18, "unknown name `dst`")


def test_ternaries_tuples_and_in_on_trace_time_values():
    source = REDUCE.replace('if op == "sum":', 'if op in ("sum", "add"):') \
        .replace("(M, N), \"float32\"), B", "shape, \"float32\"), B") \
        .replace("    @T.prim_func", "    shape = (M, N) if op != \"none\" else (1, 1)\n"
                                     "    M, N = shape\n\n    @T.prim_func", 1)
    assert "T.Tensor((8, 4), T.float32)" in lowered(source, M=8, N=4, op="add")


def test_a_comparison_python_refuses_is_r102():
    source = REDUCE.replace('if op == "sum":', 'if op < 3:')
    [(code, line, _, message)] = errors(source, M=8, N=4, op="sum")
    assert (code, line, message) == ("R102", 10, "cannot compare 'sum' with 3")


def test_a_function_parameter_is_the_tilelang_function(kernel, capsys, tmp_path):
    source = REDUCE.replace("def kernel(M, N, op):", "def kernel(M, N, op, fn):") \
        .replace("T.reduce_max(src, dst, dim=1)", "fn(src, dst, dim=1)")
    path = tmp_path / "fn.py"
    path.write_text(source)
    assert main(["emit", str(path), "--param", "M=8", "--param", "N=4",
                 "--param", "op=max", "--param", "fn=T.reduce_min"]) == 0
    assert "T.reduce_min(src, dst, dim=1" in capsys.readouterr().out
    path.write_text(source + "\n_k = kernel(8, 4, 'max', T.reduce_absmax)\n")
    assert main(["emit", str(path)]) == 0
    assert "T.reduce_absmax(src, dst, dim=1" in capsys.readouterr().out


def test_buffer_dtype_and_shape_are_values():
    source = REDUCE.replace('dst = T.alloc_shared((M,), "float32")',
                            "dst = T.alloc_shared((src.shape[0],), A.dtype)")
    assert "T.alloc_shared((8,), T.float32)" in lowered(source, M=8, N=4, op="max")


HELPERS = textwrap.dedent("""\
    import tilelang.language as T


    def _reduce(T, op, src, dst, dim, clear=True):
        kwargs = {} if clear else {"clear": False}
        if op == "sum":
            T.reduce_sum(src, dst, dim=dim, **kwargs)
        else:
            T.reduce_max(src, dst, dim=dim, **kwargs)
        return dst


    def _half(m):
        assert m % 2 == 0
        h = m // 2
        return h


    def kernel(op, M=8, N=4):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
            with T.Kernel(_half(M) // 2, threads=128):
                src = T.alloc_fragment((M, N), "float32")
                dst = T.alloc_fragment((M,), "float32")
                T.clear(dst)
                T.copy(A, src)
                _reduce(T, op, src, dst, dim=1, clear=op == "sum")
                T.copy(dst, B)

        return main
    """)


def test_a_helper_statement_is_inlined_with_its_keyword_dict():
    text = lowered(HELPERS, op="max")
    assert "T.Kernel(2" in text
    assert "T.reduce_max(src, dst, dim=1, clear=False)" in text
    assert "T.reduce_sum(src, dst, dim=1, clear=True)" in lowered(HELPERS, op="sum")


@pytest.mark.parametrize("edit, where, message", [
    (("_reduce(T, op, src, dst, dim=1, clear=op == \"sum\")",
      "_reduce(T, op, src, dst, axis=1)"), (27, 38),
     "helper `_reduce` got an unexpected keyword `axis`"),
    (("_reduce(T, op, src, dst, dim=1, clear=op == \"sum\")",
      "_reduce(T.copy, op, src, dst, dim=1)"), (27, 21),
     "R101"),
    (("_half(M) // 2", "_half(M + 1)"), (14, 5),
     "helper `_half`'s assertion `m % 2 == 0` fails"),
    (("    h = m // 2\n", "    h = m // 2\n    print(h)\n"), (16, 5),
     "helper `_half` cannot be evaluated at trace time: `print(h)` (a call for its "
     "effect)"),
])
def test_helper_messages(edit, where, message):
    found = errors(HELPERS.replace(*edit), op="sum")
    assert any((line, col) == where and (message in text or code == message)
               for code, line, col, text in found), found


def test_a_recursive_helper_stops_at_the_nesting_limit():
    source = HELPERS.replace("    h = m // 2\n", "    h = _half(m)\n")
    [(code, _, _, message)] = errors(source, op="sum")
    assert code == "R102" and "nested more than 16 deep" in message


def test_a_params_line_after_the_first_line_of_code_is_r102():
    source = KERNEL.replace("import tilelang.language as T\n",
                            "import tilelang.language as T\n# params: M=8, N=4\n")
    found = errors(source)        # the line binds nothing: M and N stay missing too
    assert ("R102", 3, 1) in [f[:3] for f in found]
    assert any("must be in the comment block at the top of the file" in f[3] for f in found)
    assert any("parameters `M`, `N` have no value" in f[3] for f in found)


def test_a_param_for_a_file_without_a_factory_says_so():
    source = textwrap.dedent("""\
        import tilelang.language as T


        @T.prim_func
        def main(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=32):
                T.clear(A)
        """)
    with pytest.raises(ParamError, match="the file has no factory"):
        parse_source(source, "k.py", None, {"M": 8})


def test_assert_matches_binds_params(kernel, reducer_oracle):
    report = reducer_oracle.assert_matches(kernel, "sim:canonical",
                                           params={"M": 32, "N": 8})
    assert report.ok


# ----------------------------------------------------------------------------- eager style

EAGER = textwrap.dedent("""\
    import tilelang
    import tilelang.language as T


    @tilelang.jit
    def scale_rows(X, W: T.Tensor[[M], T.float32], blk_m=16):
        X: T.Tensor([M, N], T.float32)
        Y = T.empty([M, N], T.float32)
        S = T.empty([M], T.float32)

        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            x = T.alloc_fragment((blk_m, N), T.float32)
            s = T.alloc_fragment((blk_m,), T.float32)
            T.copy(X[bx * blk_m, 0], x)
            T.reduce_sum(x, s, dim=1)
            for i, j in T.Parallel(blk_m, N):
                x[i, j] = x[i, j] * W[bx * blk_m + i]
            T.copy(x, Y[bx * blk_m, 0])
            T.copy(s, S[bx * blk_m])

        return Y, S
    """)


def test_an_eager_kernel_takes_its_tensors_then_its_outputs(tmp_path, capsys):
    func = parse_source(EAGER, "k.py", None, {"M": 32, "N": 8}).func()
    assert [(b.name, b.shape) for b in func.params] == \
        [("X", (32, 8)), ("W", (32,)), ("Y", (32, 8)), ("S", (32,))]
    path = tmp_path / "eager.py"
    path.write_text(EAGER)
    assert main(["check", str(path), "--param", "M=4096", "--param", "N=64"]) == 0
    assert "verdict: verified" in capsys.readouterr().out


def test_an_eager_kernel_s_sizes_are_parameters_to_bind():
    [(code, line, col, message)] = errors(EAGER)
    assert (code, line, col) == ("R102", 6, 32)          # M, first used in W's annotation
    assert "factory `scale_rows` parameters `M`, `N` have no value" in message


@pytest.mark.parametrize("edit, where, message", [
    (('    X: T.Tensor([M, N], T.float32)\n',
      '    M, K = T.const("M, N")\n    X: T.Tensor([M, N], T.float32)\n'), (7, 5),
     "T.const declares M, N but binds M, K: name them alike"),
    (('    Y = T.empty', '    Z: T.Tensor([M], T.float32)\n    Y = T.empty'), (8, 5),
     "only a parameter may be annotated with T.Tensor in an eager kernel"),
    (('    return Y, S', '    return S, Y'), (21, 5),
     "an eager kernel returns its `T.empty` outputs (Y, S), in the order created"),
    (('    Y = T.empty', '    print(M)\n    Y = T.empty'), (8, 5),
     "Expr statements before `with T.Kernel(...)` are not supported in an eager kernel"),
])
def test_eager_messages(edit, where, message):
    found = errors(EAGER.replace(*edit), M=32, N=8)
    assert any((line, col) == where and message in text for _, line, col, text in found), \
        found


# ----------------------------------------------------------------------------- autotune

_AUTOTUNED = '''\
import itertools

import tilelang
import tilelang.language as T
from {module} import *


def get_configs():
    return [dict(block=b) for b in itertools.product([32, 64])]


@autotune(configs=get_configs(), warmup=10, rep=10)
@tilelang.jit(out_idx=[1])
def scale(n, block=32):
    @T.prim_func
    def main(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.float32)):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                Y[bx * block + i] = X[bx * block + i] * 2.0
    return main
'''


def test_autotune_from_a_star_import_is_ignored_like_jit():
    """TileLang's flash-attention examples import `autotune` by `from tilelang.autotuner
    import *`: the names that module exports are known without importing it, and the
    factory's defaults (or --param) are verified, not the configs it would tune over."""
    func = parse_source(_AUTOTUNED.format(module="tilelang.autotuner"), "tuned.py",
                        params={"n": 128}).func()
    assert func.kernel.grid == (4,) and func.kernel.threads == 32


def test_a_star_import_of_another_module_binds_nothing_we_know():
    with pytest.raises(DiagnosticError) as found:
        parse_source(_AUTOTUNED.format(module="mytuner"), "tuned.py",
                     params={"n": 128}).func()
    (d,) = found.value.diagnostics
    assert (d.code, d.message) == ("R101", "unknown decorator `@autotune`")
