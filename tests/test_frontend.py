"""Unit tests of spec.frontend (TileLang source → logical IR) and spec.printer."""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import DTYPES
from verify_reducer.spec.frontend import parse_file, parse_source
from verify_reducer.spec.printer import format_expr, format_func, format_program

ROOT = Path(__file__).resolve().parent.parent

HEADER = "import tilelang.language as T\n"


def program(body: str, params: str = "x: T.Tensor((8,), T.float32), "
                                     "out: T.Tensor((1,), T.float32)",
            consts: str = "", threads: int = 128) -> ir.Program:
    """A one-kernel program; `body` is the kernel body at its natural indentation."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    source = (f"{HEADER}{textwrap.dedent(consts)}\n"
              f"@T.prim_func\ndef main({params}):\n"
              f"    with T.Kernel(1, threads={threads}) as bx:\n{body}\n")
    return parse_source(source, "<test>")


def kernel_body(*args, **kwargs) -> tuple[ir.Stmt, ...]:
    return program(*args, **kwargs).func().kernel.body


def stmts_of(body, kind) -> list:
    return [s for s in ir.walk(body) if isinstance(s, kind)]


def errors(source: str) -> list[tuple[str, int]]:
    with pytest.raises(DiagnosticError) as info:
        parse_source(source, "<test>")
    return [(d.code, d.span.line) for d in info.value.diagnostics]


F32 = DTYPES["float32"]
F16 = DTYPES["float16"]
I32 = DTYPES["int32"]


# ----------------------------------------------------------------------------- surfaces

SUM_SURFACES = {
    "v2": "T.reducer_update(acc[0], x_frag[j])",
    "rfc-tuple": "T.reducer_update(acc, (0,), x_frag[j])",
    "rfc-scalar": "T.reducer_update(acc, 0, x_frag[j])",
    "rfc-list": "T.reducer_update(acc, [0], x_frag[j])",
    "rfc-constant-tuple": "T.reducer_update(acc, ORIGIN, x_frag[j])",
    "plus-eq": "acc[0] += x_frag[j]",
    "store-add": "acc[0] = acc[0] + x_frag[j]",
    "store-add-swapped": "acc[0] = x_frag[j] + acc[0]",
}


@pytest.mark.parametrize("surface", SUM_SURFACES)
def test_every_sum_surface_is_one_update(surface):
    body = kernel_body(f"""
        x_frag = T.alloc_fragment((8,), T.float32)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            {SUM_SURFACES[surface]}
        T.finalize_reducer(acc, out)
    """, consts="ORIGIN = (0,)\n")
    (update,) = stmts_of(body, ir.ReducerUpdate)
    assert update.reducer.name == "acc" and update.reducer.is_reducer
    assert [format_expr(i) for i in update.indices] == ["0"]
    assert isinstance(update.value, ir.Load) and update.value.buffer.name == "x_frag"
    assert update.form_op == "sum"
    expected_form = {"plus-eq": "+=", "store-add": "store-add",
                     "store-add-swapped": "store-add"}.get(surface, "reducer_update")
    assert update.form == expected_form
    assert not stmts_of(body, ir.Store)


def test_minus_eq_is_a_sum_of_the_negation():
    body = kernel_body("""
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(acc, 0)
        for j in T.Parallel(8):
            acc[0] -= x[j]
        T.finalize_reducer(acc)
    """)
    (update,) = stmts_of(body, ir.ReducerUpdate)
    assert update.form == "-=" and update.form_op == "sum"
    assert isinstance(update.value, ir.Unary) and update.value.op == "neg"
    assert update.value.a.buffer.name == "x"


@pytest.mark.parametrize("statement,form,form_op", [
    ("acc[0] = T.max(acc[0], x[j])", "store-max", "max"),
    ("acc[0] = T.max(x[j], acc[0])", "store-max", "max"),
    ("acc[0] = T.min(acc[0], x[j])", "store-min", "min"),
    ("acc[0] *= x[j]", "*=", "product"),
    ("acc[0] = acc[0] * x[j]", "store-mul", "product"),
    ("acc[0] = acc[0] - x[j]", "store-sub", "sum"),
])
def test_legacy_forms_denote_their_own_op(statement, form, form_op):
    # the reducer is a sum: a max form on it is the verifier's R206, not ours
    body = kernel_body(f"""
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for j in T.Parallel(8):
            {statement}
        T.finalize_reducer(acc)
    """)
    (update,) = stmts_of(body, ir.ReducerUpdate)
    assert (update.form, update.form_op) == (form, form_op)
    assert form in ir.UPDATE_FORMS


@pytest.mark.parametrize("op,form_op", [("&=", "bitand"), ("|=", "bitor"), ("^=", "bitxor")])
def test_bitwise_augmented_updates(op, form_op):
    body = kernel_body(f"""
        acc = T.alloc_reducer((1,), T.int32, op="{form_op}", replication="all")
        T.fill(acc, 0)
        for j in T.Parallel(8):
            acc[0] {op} x[j]
        T.finalize_reducer(acc)
    """, params="x: T.Tensor((8,), T.int32), out: T.Tensor((1,), T.int32)")
    (update,) = stmts_of(body, ir.ReducerUpdate)
    assert (update.form, update.form_op) == (op, form_op)


@pytest.mark.parametrize("statement", ["acc[0] = 5", "acc[0] = acc[0] * 2 + x[j]",
                                       "acc[0] /= x[j]"])
def test_other_stores_to_a_reducer_stay_plain_stores(statement):
    body = kernel_body(f"""
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            {statement}
    """)
    assert not stmts_of(body, ir.ReducerUpdate)
    (store,) = stmts_of(body, ir.Store)
    assert store.buffer.is_reducer


def test_reads_and_copies_of_a_reducer_stay_loads_and_copies():
    body = kernel_body("""
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        out[0] = acc[0]
        T.copy(acc, out)
    """)
    assert isinstance(stmts_of(body, ir.Store)[0].value, ir.Load)
    assert stmts_of(body, ir.Copy)[0].src.buffer.is_reducer


# ----------------------------------------------------------------------------- epochs

def test_rfc_reducer_gets_an_implicit_init_right_after_its_alloc():
    body = kernel_body("""
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(acc, (0,), x[j])
        T.finalize_reducer(acc, out)
    """)
    alloc, init = body[0], body[1]
    assert isinstance(alloc, ir.Alloc) and isinstance(init, ir.ReducerInit)
    assert init.form == "implicit" and init.reducer is alloc.buffer
    assert init.span == alloc.span and init.seed is None


def test_explicit_init_anywhere_suppresses_the_implicit_one():
    body = kernel_body("""
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for k in T.serial(2):
            T.reducer_init(acc, 1.5)
            for j in T.Parallel(8):
                T.reducer_update(acc[0], x[j])
            T.finalize_reducer(acc, out)
    """)
    (init,) = stmts_of(body, ir.ReducerInit)
    assert init.form == "reducer_init"
    assert isinstance(init.seed, ir.Const) and init.seed.value == 1.5
    assert init.seed.dtype == F32


def test_legacy_reducer_never_gets_an_implicit_init():
    body = kernel_body("""
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        for j in T.Parallel(8):
            acc[0] += x[j]
        T.finalize_reducer(acc)
    """)
    assert not stmts_of(body, ir.ReducerInit)
    assert body[0].buffer.reducer.legacy and body[0].buffer.reducer.replication == "all"


def test_legacy_fill_and_clear_open_the_epoch():
    body = kernel_body("""
        a = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        b = T.alloc_reducer((1,), T.float32, op="max", replication="none")
        T.fill(a, 2.0)
        T.clear(b)
    """)
    fill, clear = stmts_of(body, ir.ReducerInit)
    assert (fill.form, fill.fill_value.value, fill.seed) == ("fill", 2.0, None)
    assert (clear.form, clear.fill_value.value) == ("clear", 0)
    assert clear.fill_value.dtype == F32


def test_finalize_in_place_and_to_a_destination():
    body = kernel_body("""
        a = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(a)
        T.finalize_reducer(a, batch=4)
        b = T.alloc_reducer((1,), T.float32, op="sum")
        T.finalize_reducer(b, out)
    """)
    in_place, to_dst = stmts_of(body, ir.ReducerFinalize)
    assert in_place.dst is None and in_place.batch == 4
    assert to_dst.dst.name == "out" and to_dst.batch is None


def test_op_aliases_are_canonical_and_unknown_ops_are_left_to_the_verifier():
    body = kernel_body("""
        a = T.alloc_reducer((1,), T.float32, op="add")
        b = T.alloc_reducer((1,), T.float32, op="mean")
        c = T.alloc_reducer((1,), T.float32)
    """)
    ops = [s.buffer.reducer.op for s in stmts_of(body, ir.Alloc)]
    assert ops == ["sum", "mean", "sum"]


def test_reducer_update_weak_literal_adopts_the_reducer_dtype():
    body = kernel_body("""
        cnt = T.alloc_reducer((1,), T.int32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(cnt[0], 1)
    """)
    (update,) = stmts_of(body, ir.ReducerUpdate)
    assert update.value.dtype == I32 and update.value.value == 1


def test_alias_of_a_buffer():
    body = kernel_body("""
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        b = acc
        b[0] += x[0]
    """)
    (alias,) = stmts_of(body, ir.Alias)
    assert alias.name == "b" and alias.buffer.name == "acc"
    assert stmts_of(body, ir.ReducerUpdate)[0].reducer is alias.buffer


# ----------------------------------------------------------------------------- constants

def test_module_constants_fold():
    prog = program("""
        tile = T.alloc_fragment((BLOCK[0], N // 2 + 1), dtype)
        acc = T.alloc_fragment((T.ceildiv(N, BLOCK[1]),), accum_dtype)
        for i in T.Parallel(max(2, SCALE * 2)):
            out[0] = x[i]
    """, consts="""
        N = 100
        BLOCK = (16, 32)
        dtype = "float16"
        accum_dtype = T.float32
        SCALE = int(1.5 * 2)
        UNUSED = 9 ** 9 ** 9
        DIVZERO = 1 // 0
        import os
        OPAQUE = os.getcwd()
    """)
    tile, acc = stmts_of(prog.func().kernel.body, ir.Alloc)
    assert tile.buffer.shape == (16, 51) and tile.buffer.dtype == F16
    assert acc.buffer.shape == (4,) and acc.buffer.dtype == F32
    (loop,) = stmts_of(prog.func().kernel.body, ir.ParallelFor)
    assert loop.extents == (6,)
    assert prog.constants["N"] == 100 and prog.constants["BLOCK"] == (16, 32)
    assert "OPAQUE" not in prog.constants and "UNUSED" not in prog.constants


def test_kernel_local_constants_are_usable_as_shapes():
    body = kernel_body("""
        W = 4
        frag = T.alloc_fragment((W * 2,), T.float32)
        for i in T.Parallel(W):
            frag[i] = 0
    """)
    assert stmts_of(body, ir.Alloc)[0].buffer.shape == (8,)
    assert not stmts_of(body, ir.Let)


def test_constant_if_is_resolved_at_parse_time():
    body = kernel_body("""
        if FAST:
            out[0] = 1.0
        else:
            out[0] = 2.0
    """, consts="FAST = False\n")
    assert not stmts_of(body, ir.If)
    assert stmts_of(body, ir.Store)[0].value.value == 2.0


def test_non_constant_module_name_used_in_a_shape_is_r102():
    source = HEADER + textwrap.dedent("""
        import os
        N = os.cpu_count()

        @T.prim_func
        def main(x: T.Tensor((N,), T.float32)):
            with T.Kernel(1) as bx:
                x[0] = 1.0
    """)
    assert errors(source) == [("R102", 7)]


# ----------------------------------------------------------------------------- copies

def test_point_takes_the_other_sides_extents():
    body = kernel_body("""
        a_s = T.alloc_shared((32, 64), T.float16)
        for k in T.serial(4):
            T.copy(A[bx * 32, k * 64], a_s)
    """, params="A: T.Tensor((128, 256), T.float16)")
    (copy,) = stmts_of(body, ir.Copy)
    assert copy.src.extents == (32, 64) and copy.dst.extents == (32, 64)
    assert format_expr(copy.src.starts[0]) == "bx * 32"
    assert format_expr(copy.src.starts[1]) == "k * 64"
    assert [format_expr(s) for s in copy.dst.starts] == ["0", "0"]


def test_slices_and_symbolic_slice_extents():
    body = kernel_body("""
        f = T.alloc_fragment((2,), T.float32)
        g = T.alloc_fragment((4, 8), T.float32)
        T.copy(f, out[0:2])
        T.copy(X[bx * 4:(bx + 1) * 4, :], g)
        T.copy(X[1:3, 0:8], g[2:, :])
    """, params="X: T.Tensor((16, 8), T.float32), out: T.Tensor((4,), T.float32)")
    c1, c2, c3 = stmts_of(body, ir.Copy)
    assert c1.dst.extents == (2,)
    assert c2.src.extents == (4, 8)
    assert c3.dst.extents == (2, 8) and format_expr(c3.dst.starts[0]) == "2"


def test_rank_differences_use_leading_extents_of_one():
    body = kernel_body("""
        row = T.alloc_fragment((8,), T.float32)
        tile = T.alloc_fragment((1, 8), T.float32)
        T.copy(row, M[3, 0])
        T.copy(tile, v[0])
        T.copy(M[2:3, 0:8], row)
    """, params="M: T.Tensor((4, 8), T.float32), v: T.Tensor((8,), T.float32)")
    to_matrix, to_vector, squeeze = stmts_of(body, ir.Copy)
    assert to_matrix.dst.extents == (1, 8)
    assert to_vector.dst.extents == (8,)
    assert squeeze.src.extents == (1, 8) and squeeze.dst.extents == (8,)


@pytest.mark.parametrize("statement", [
    "T.copy(x[0:4], f)",          # 4 vs 8
    "T.copy(x[4], f)",            # [4, 12) of 8
    "T.copy(x[0], f[0])",         # two points: no extent to take
    "T.copy(g, x[0])",            # a (2, 4) box does not fit a 1-index point
])
def test_bad_copies_are_r102(statement):
    source = HEADER + textwrap.dedent(f"""
        @T.prim_func
        def main(x: T.Tensor((8,), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                f = T.alloc_fragment((8,), T.float32)
                g = T.alloc_fragment((2, 4), T.float32)
                {statement}
    """)
    assert errors(source) == [("R102", 8)]


def test_fill_region_and_clear():
    body = kernel_body("""
        f = T.alloc_fragment((8,), T.float16)
        T.fill(f[0:4], 1)
        T.clear(f)
    """)
    fill, clear = stmts_of(body, ir.Fill)
    assert fill.region.extents == (4,) and fill.value.dtype == F16
    assert clear.region.extents == (8,) and clear.value.value == 0


def test_reduce_ops():
    body = kernel_body("""
        f = T.alloc_fragment((4, 8), T.float32)
        r = T.alloc_fragment((4,), T.float32)
        T.reduce_sum(f, r)
        T.reduce_absmax(f, r, dim=1, clear=False)
    """)
    a, b = stmts_of(body, ir.Reduce)
    assert (a.kind, a.dim, a.clear) == ("sum", 1, True)
    assert (b.kind, b.dim, b.clear) == ("absmax", 1, False)


# ----------------------------------------------------------------------------- dtypes

def _value(expr_text: str, params: str = "h: T.Tensor((8,), T.float16), "
                                         "i: T.Tensor((8,), T.int32), "
                                         "l: T.Tensor((8,), T.int64), "
                                         "out: T.Tensor((8,), T.float32)") -> ir.Expr:
    body = kernel_body(f"""
        for j in T.Parallel(8):
            out[j] = {expr_text}
    """, params=params)
    return stmts_of(body, ir.Store)[0].value


@pytest.mark.parametrize("text,dtype", [
    ("h[j] * 2", "float16"),           # a weak int literal adopts float16
    ("h[j] * 2.5", "float16"),         # so does a weak float
    ("i[j] * 0.5", "float32"),         # a float literal meeting an int: float32
    ("i[j] + 1", "int32"),
    ("i[j] + l[j]", "int64"),
    ("h[j] + T.float32(1)", "float32"),
    ("T.max(h[j], T.cast(i[j], T.float32))", "float32"),
    ("T.exp(h[j])", "float16"),
    ("T.exp(1)", "float32"),
    ("h[j] < 1", "bool"),
    ("j < 4 and j > 1", "bool"),
    ("T.if_then_else(j < 4, h[j], 0)", "float16"),
    ("h[j] if j < 4 else 0", "float16"),
    ("T.infinity(T.float16)", "float16"),
    ("T.max_value(\"int8\")", "int8"),
    ("j // 2 + j % 3", "int32"),
    ("i[j] & 3 | i[j] << 1", "int32"),
    ("T.get_thread_binding()", "int32"),
])
def test_expression_dtypes(text, dtype):
    assert _value(text).dtype.name == dtype


def test_literals_weak_and_typed():
    weak = _value("h[j] * 2").b
    assert isinstance(weak, ir.Const) and weak.weak and weak.dtype == F16
    typed = _value("T.float32(1)")
    assert isinstance(typed, ir.Const) and not typed.weak and typed.value == 1.0
    assert _value("T.max_value(T.int8)").value == 127
    assert math.isinf(_value("T.infinity(T.float32)").value)
    folded = _value("3 * 4 + 1")
    assert isinstance(folded, ir.Const) and folded.value == 13 and folded.weak


def test_python_division_of_constants_is_python_division():
    assert _value("7 / 2").value == 3.5
    assert _value("-7 // 2").value == -4


def test_let_bindings_get_fresh_unique_names():
    body = kernel_body("""
        for j in T.Parallel(8):
            t = x[j] * 2
            t = t + 1
            out[0] = t
    """)
    first, second = stmts_of(body, ir.Let)
    assert (first.var.name, second.var.name) == ("t", "t_1")
    assert second.value.a is first.var
    assert stmts_of(body, ir.Store)[0].value is second.var


@pytest.mark.parametrize("text", ["h[j] & 1", "T.exp(i[j])", "T.infinity(T.int32)",
                                  "T.cast(h[j], \"float7\")"])
def test_dtype_errors_are_r102(text):
    with pytest.raises(DiagnosticError) as info:
        _value(text)
    assert [d.code for d in info.value.diagnostics] == ["R102"]


# ----------------------------------------------------------------------------- structure

def test_loops_kernel_and_warp_groups():
    source = HEADER + textwrap.dedent("""
        @T.prim_func
        def main(x: T.Tensor((4, 64), T.float32)):
            with T.Kernel(2, 3, 4, threads=256) as (bx, by, bz):
                with T.ws(1):
                    for k in T.Pipelined(4, num_stages=3):
                        for a in T.serial(1, 9, 2):
                            for b in range(2, 4):
                                for u in T.unroll(2):
                                    x[u, k] = 1.0
    """)
    k = parse_source(source).func().kernel
    assert k.grid == (2, 3, 4) and k.threads == 256
    assert [v.name for v in k.block_vars] == ["bx", "by", "bz"]
    (ws,) = k.body
    assert isinstance(ws, ir.WarpGroup) and ws.groups == (1,)
    loops = stmts_of(k.body, ir.SerialFor)
    assert [(l.kind, l.step, l.num_stages) for l in loops] == [
        ("pipelined", 1, 3), ("serial", 2, None), ("range", 1, None), ("unroll", 1, None)]
    assert [format_expr(loops[1].start), format_expr(loops[1].stop)] == ["1", "9"]


def test_kernel_without_as_and_default_threads():
    source = HEADER + textwrap.dedent("""
        @T.prim_func
        def main(x: T.Tensor((4,), T.float32)):
            with T.Kernel(4):
                x[0] = 1.0
    """)
    k = parse_source(source).func().kernel
    assert k.threads == 128 and [v.name for v in k.block_vars] == ["_bx"]


def test_if_elif_else():
    body = kernel_body("""
        for j in T.Parallel(8):
            if j < 2:
                out[0] = 1.0
            elif j < 4:
                out[0] = 2.0
            else:
                out[0] = 3.0
    """)
    outer = stmts_of(body, ir.If)[0]
    assert isinstance(outer.orelse[0], ir.If) and outer.orelse[0].orelse


FACTORY = """
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemv(M, K, block_m=16, dtype="float16"):
    accum = "float32"

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), y: T.Tensor((M,), accum)):
        with T.Kernel(T.ceildiv(M, block_m), threads=128) as bx:
            acc = T.alloc_reducer((block_m,), accum, op="sum")
            for i, k in T.Parallel(block_m, K):
                T.reducer_update(acc[i], T.cast(A[bx * block_m + i, k], accum))
            y_frag = T.alloc_fragment((block_m,), accum)
            T.finalize_reducer(acc, y_frag)
            T.copy(y_frag, y[bx * block_m:(bx + 1) * block_m])

    return main
"""


def test_factory_pattern_takes_the_first_constant_call():
    source = FACTORY + "\n\ndef run(n):\n    return gemv(n, 4)\n\nprog = gemv(64, K=32)\n"
    func = parse_source(source).func()
    A, y = func.params
    assert A.shape == (64, 32) and A.dtype == F16 and y.dtype == F32
    assert func.kernel.grid == (4,)


def test_factory_pattern_uses_defaults():
    source = FACTORY.replace("def gemv(M, K,", "def gemv(M=32, K=8,")
    func = parse_source(source).func()
    assert func.params[0].shape == (32, 8) and func.kernel.grid == (2,)


@pytest.mark.parametrize("imports,prefix", [
    ("import tilelang\n", "tilelang.language."),
    ("from tilelang import language as TL\n", "TL."),
    ("import tilelang.language as T\nimport tilelang\n", "T."),
    ("from tilelang.language import Kernel, Parallel, Tensor, prim_func, "
     "alloc_fragment, float32\n", ""),
])
def test_import_spellings(imports, prefix):
    p = prefix
    source = imports + textwrap.dedent(f"""
        @{p}prim_func
        def main(x: {p}Tensor((8,), {p}float32)):
            with {p}Kernel(1, threads=32) as bx:
                f = {p}alloc_fragment((8,), {p}float32)
                for j in {p}Parallel(8):
                    f[j] = x[j]
    """)
    func = parse_source(source).func()
    assert func.params[0].dtype == F32
    assert stmts_of(func.kernel.body, ir.ParallelFor)[0].extents == (8,)


def test_several_prim_funcs():
    source = HEADER + textwrap.dedent("""
        @T.prim_func
        def first(x: T.Tensor((8,), T.float32)):
            with T.Kernel(1) as bx:
                x[0] = 1.0

        @T.prim_func
        def second(x: T.Tensor((8,), T.float32)):
            with T.Kernel(2) as bx:
                x[0] = 2.0
    """)
    prog = parse_source(source)
    assert list(prog.funcs) == ["first", "second"]
    assert prog.func("second").kernel.grid == (2,)


# ----------------------------------------------------------------------------- spans

def test_spans_are_one_based_and_exact():
    source = HEADER + textwrap.dedent("""
        @T.prim_func
        def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
                T.fill(acc, 0)
                for j in T.Parallel(8):
                    acc[0] += x[j]
                T.finalize_reducer(acc)
    """)
    func = parse_source(source).func()
    (update,) = stmts_of(func.kernel.body, ir.ReducerUpdate)
    assert (update.span.line, update.span.col) == (9, 13)
    assert (update.span.end_line, update.span.end_col) == (9, 27)
    assert (func.params[1].span.line, func.params[1].span.col) == (4, 40)
    (fin,) = stmts_of(func.kernel.body, ir.ReducerFinalize)
    assert (fin.span.line, fin.span.col) == (10, 9)


def test_diagnostics_point_at_the_construct_and_several_are_collected():
    source = HEADER + textwrap.dedent("""
        @T.prim_func
        def main(x: T.Tensor((8,), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                f = T.alloc_fragment((8,), "float24")
                for j in T.Parallel(8):
                    f[j] = x[j] + mystery
                T.wgmma_gemm(f, f, f)
    """)
    with pytest.raises(DiagnosticError) as info:
        parse_source(source)
    got = [(d.code, d.span.line, d.span.col) for d in info.value.diagnostics]
    # f's failed allocation poisons f: its uses are not reported a second time
    assert got == [("R102", 6, 36), ("R101", 9, 9)]


def test_syntax_error_position():
    with pytest.raises(DiagnosticError) as info:
        parse_source("import tilelang.language as T\nx = (1,\n", "<test>")
    (d,) = info.value.diagnostics
    assert d.code == "R100" and d.span.line == 2


# ----------------------------------------------------------------------------- printer

def test_printer_shows_the_canonical_update_and_its_source_form():
    text = format_func(parse_file(str(ROOT / "examples" / "minimal_legacy.py")).func())
    assert "reducer_update(total, (0,), x_frag[j])  # from: total[0] += x_frag[j]" in text
    assert "reducer_init(total)  # from: T.fill(total, 0.0)" in text
    assert "finalize_reducer(total)" in text
    assert text.startswith("@T.prim_func\ndef main(x: T.Tensor((8,), T.float32)")


def test_printer_round_trips_through_the_frontend():
    for path in sorted((ROOT / "examples").glob("*.py")):
        prog = parse_file(str(path))
        text = format_program(prog)
        assert "# from:" in text or "reducer_update(" in text or "T.reduce_" in text, path


def test_printer_expression_parentheses():
    assert format_expr(_value("(j + 1) * 2 - (j - 3)")) == "(j + 1) * 2 - (j - 3)"
    assert format_expr(_value("-(h[j] * 2)")) == "-(h[j] * 2.0)"


# ----------------------------------------------------------------------------- examples

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_parses(path):
    prog = parse_file(str(path))
    assert prog.funcs
    for func in prog.funcs.values():
        assert format_func(func)


def test_names_never_clash_for_later_stages():
    body = kernel_body("""
        for j in T.Parallel(8):
            j = j * 2
            for j in T.serial(2):
                out[0] = j
        for j in T.Parallel(8):
            out[0] = j
    """)
    outer, second = stmts_of(body, ir.ParallelFor)
    (let,) = stmts_of(body, ir.Let)
    (inner,) = stmts_of(body, ir.SerialFor)
    assert outer.vars[0].name == "j" and second.vars[0].name == "j"
    assert let.var.name != "j" and inner.var.name not in ("j", let.var.name)


def test_tensor_spelled_buffer_and_string_dtypes():
    func = program("out[0] = x[0, 1]", params="x: T.Buffer((4, 2), \"half\"), "
                                          "out: T.Buffer([1], dtype)",
                   consts="dtype = 'float'\n").func()
    assert [(p.shape, p.dtype.name) for p in func.params] == [((4, 2), "float16"),
                                                              ((1,), "float32")]
