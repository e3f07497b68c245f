"""Layout inference over whole kernels: the RFC's minimal example, loops following
fragments, propagation, reductions, warp groups, and R300 on genuine conflicts."""
import glob
import math

import numpy as np
import pytest

from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.codegen.layout_text import format_layouts
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import FLOAT32
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.source import Span

HEADER = "import tilelang.language as T\n\n"


def kernel(body: str, params: str = "x: T.Tensor((8,), T.float32), out: T.Tensor((8,), T.float32)",
           threads: int = 128) -> ir.PrimFunc:
    source = (HEADER + f"@T.prim_func\ndef main({params}):\n"
              f"    with T.Kernel(1, threads={threads}) as bx:\n"
              + "".join(f"        {line}\n" for line in body.strip("\n").splitlines()))
    return parse_source(source).func()


def rows_into_one_sum(rows: int, columns: int, name: str = "f") -> ir.PrimFunc:
    """Fragment `name` copied whole and summed into one reducer, row k (a serial loop)
    read inside a T.Parallel over the columns, on 128 threads."""
    return kernel(f"""
{name} = T.alloc_fragment(({rows}, {columns}), T.float32)
T.copy(x, {name})
acc = T.alloc_reducer((1,), T.float32, op="sum")
T.reducer_init(acc)
for k in T.serial({rows}):
    for j in T.Parallel({columns}):
        T.reducer_update(acc[0], {name}[k, j])
result = T.alloc_fragment((1,), T.float32)
T.finalize_reducer(acc, result)
T.copy(result, out[0:1])
""", params=f"x: T.Tensor(({rows}, {columns}), T.float32), out: T.Tensor((1,), T.float32)")


def by_name(layouts, name):
    return next(layout for buf, layout in layouts.fragments.items() if buf.name == name)


def loops(func):
    return [s for s in ir.walk(func.kernel.body) if isinstance(s, ir.ParallelFor)]


def assert_injective(layouts):
    for layout in [*layouts.fragments.values(), *layouts.loops.values(),
                   *layouts.updates.values(), *layouts.copies.values()]:
        assert layout.is_injective(), layout.describe()


MINIMAL = """
x_frag = T.alloc_fragment((8,), T.float32)
T.copy(x, x_frag)
total = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
T.fill(total, 0.0)
for j in T.Parallel(8):
    total[0] += x_frag[j]
T.finalize_reducer(total)
T.copy(total, out[0:1])
"""


def test_rfc_minimal_example():
    func = kernel(MINIMAL)
    layouts = infer_layouts(func)
    x_frag = by_name(layouts, "x_frag")
    assert x_frag.describe() == "thread = 8*rep + i, slot = 0, replicate 16 (threads 0..127)"
    (loop,) = loops(func)
    assert layouts.loop(loop).describe() == \
        "thread = 8*rep + j, slot = 0, replicate 16 (threads 0..127)"
    (update,) = [s for s in ir.walk(func.kernel.body) if isinstance(s, ir.ReducerUpdate)]
    assert layouts.update(update) is layouts.loop(loop)
    assert not any(b.name == "total" for b in layouts.fragments)     # reducers: no layout
    text = format_layouts(layouts, func)
    assert "line 10 T.Parallel(8): thread = 8*rep + j, slot = 0, replicate 16" in text
    assert "x_frag[8]: thread = 8*rep + i" in text


def test_rfc_minimal_example_built_by_hand():
    s = Span(1, 1, 1, 2)
    x = ir.Buffer("x", (8,), FLOAT32, "global", s)
    x_frag = ir.Buffer("x_frag", (8,), FLOAT32, "fragment", s)
    total = ir.Buffer("total", (1,), FLOAT32, "reducer", s, ir.ReducerInfo("sum", False))
    j = ir.Var("j", s)
    zero = ir.Const(0, ir.INT32, s)
    update = ir.ReducerUpdate(total, (zero,), ir.Load(x_frag, (j,), s), "reducer_update",
                              "sum", s)
    loop = ir.ParallelFor((j,), (8,), (update,), s)
    body = (ir.Alloc(x_frag, s),
            ir.Copy(ir.Region(x, (zero,), (8,), s), ir.Region(x_frag, (zero,), (8,), s), s),
            ir.Alloc(total, s), ir.ReducerInit(total, None, "implicit", s), loop,
            ir.ReducerFinalize(total, None, None, s))
    func = ir.PrimFunc("main", (x,), ir.Kernel((1,), 128, (ir.Var("bx", s),), body, s), s)
    layouts = infer_layouts(func)
    assert str(layouts.fragment(x_frag).thread) == "8*rep + i"
    assert layouts.fragment(x_frag).replicate == 16
    assert str(layouts.loop(loop).thread) == "8*rep + j"
    assert layouts.update(update) == layouts.loop(loop)


def test_update_outside_parallel_is_one_iteration_on_every_participant():
    func = kernel("""
acc = T.alloc_reducer((1,), T.float32, op="sum")
T.reducer_init(acc)
T.reducer_update(acc[0], x[0])
result = T.alloc_fragment((1,), T.float32)
T.finalize_reducer(acc, result)
T.copy(result, out[0:1])
""")
    layouts = infer_layouts(func)
    (update,) = layouts.updates.values()
    assert update.describe() == "thread = rep, slot = 0, replicate 128 (threads 0..127)"
    assert "outside T.Parallel" in format_layouts(layouts, func)


def test_loop_that_touches_no_fragment_takes_the_default_partition():
    func = kernel("""
acc = T.alloc_reducer((1,), T.float32, op="sum")
T.reducer_init(acc)
for i, j in T.Parallel(16, 3):
    T.reducer_update(acc[0], x[j])
result = T.alloc_fragment((1,), T.float32)
T.finalize_reducer(acc, result)
T.copy(result, out[0:1])
""", threads=32)
    layouts = infer_layouts(func)
    (loop,) = layouts.loops.values()
    assert loop.describe() == \
        "thread = (3*i + j) % 32, slot = (3*i + j) // 32, replicate 1 (threads 0..31)"


def test_loop_following_a_fragment_indexed_by_some_of_its_variables():
    # x_frag[j] in an (i, j) loop that follows a_frag: each thread runs 8 iterations of i
    func = kernel("""
a_frag = T.alloc_fragment((4, 32), T.float32)
x_frag = T.alloc_fragment((32,), T.float32)
y_frag = T.alloc_fragment((4, 32), T.float32)
T.copy(a, a_frag)
T.copy(x, x_frag)
for i, j in T.Parallel(4, 32):
    y_frag[i, j] = a_frag[i, j] * x_frag[j]
T.copy(y_frag, out)
""", params="a: T.Tensor((4, 32), T.float32), x: T.Tensor((32,), T.float32), "
             "out: T.Tensor((4, 32), T.float32)")
    layouts = infer_layouts(func)
    (loop,) = layouts.loops.values()
    assert loop == by_name(layouts, "a_frag").rename(("i", "j"))
    assert by_name(layouts, "y_frag") == by_name(layouts, "a_frag")
    assert_injective(layouts)


def test_fragment_placed_by_a_later_loop_through_propagation():
    # m_new is first written by an 8-wide loop but read by (8, 64) loops that follow
    # x_frag: propagation places m_new from x_frag's loop, so no conflict arises.
    func = parse_source(open("examples/online_softmax_stats.py").read()).func()
    layouts = infer_layouts(func)
    m_new = by_name(layouts, "m_new")
    # x_frag's vectorized partition gives each thread 4 consecutive j of one row
    assert m_new.describe() == \
        "thread = 16*i + rep, slot = 0, replicate 16 (threads 0..127)"
    assert_injective(layouts)


def test_reduce_destination_is_replicated_over_the_reduced_threads():
    func = kernel("""
x_frag = T.alloc_fragment((4, 64), T.float32)
s_frag = T.alloc_fragment((4,), T.float32)
T.copy(x, x_frag)
T.reduce_sum(x_frag, s_frag, dim=1)
T.copy(s_frag, out)
""", params="x: T.Tensor((4, 64), T.float32), out: T.Tensor((4,), T.float32)")
    layouts = infer_layouts(func)
    src, dst = by_name(layouts, "x_frag"), by_name(layouts, "s_frag")
    # the copy's vectorized partition runs 2 consecutive float32 per thread (4 would
    # leave threads idle), so 32 threads hold each row
    assert dst.replicate == 32
    # every holder of s_frag[i] held some x_frag[i, :], and all of them hold the result
    for i in range(4):
        want = set(src.threads_of((np.full(64, i), np.arange(64))).ravel())
        assert set(dst.threads_of((np.array([i]),)).ravel()) == want
    assert_injective(layouts)


def test_warp_group_participants():
    func = kernel("""
x_frag = T.alloc_fragment((64,), T.float32)
acc = T.alloc_reducer((1,), T.float32, op="sum")
result = T.alloc_fragment((1,), T.float32)
with T.ws(1):
    T.copy(x, x_frag)
    T.reducer_init(acc)
    for j in T.Parallel(64):
        T.reducer_update(acc[0], x_frag[j])
    T.finalize_reducer(acc, result)
    T.copy(result, out[0:1])
""", params="x: T.Tensor((64,), T.float32), out: T.Tensor((1,), T.float32)", threads=256)
    layouts = infer_layouts(func)
    (loop,) = layouts.loops.values()
    assert loop.participants == (128, 128)
    assert loop.describe() == "thread = 64*rep + j, slot = 0, replicate 2 (threads 128..255)"
    assert set(loop.threads_of(absolute=True).ravel()) == set(range(128, 256))


def test_genuine_conflict_is_r300_with_a_thread_and_spans():
    # a_frag is written in warp group 0, so exactly threads 0..127 hold it; the loop in
    # warp group 1 reads it on threads 128..255: no placement satisfies both
    func = kernel("""
a_frag = T.alloc_fragment((8,), T.float32)
with T.ws(0):
    for j in T.Parallel(8):
        a_frag[j] = a[j]
with T.ws(1):
    for j in T.Parallel(8):
        out[j] = a_frag[j]
""", params="a: T.Tensor((8,), T.float32), out: T.Tensor((8,), T.float32)", threads=256)
    with pytest.raises(DiagnosticError) as info:
        infer_layouts(func)
    (diag,) = info.value.diagnostics
    assert diag.code == "R300" and diag.span.line == 12
    assert "iteration (j=0) runs on thread 128, which does not hold a_frag[0]" in diag.message
    assert any("runs as thread = 8*rep + j" in n.message and "128..255" in n.message
               for n in diag.notes)
    assert any(n.span is not None and n.span.line == 9 for n in diag.notes)  # a_frag placed


def test_an_index_no_layout_can_place_is_r300():
    # x_frag indexed by a value loaded from another fragment: no root places it
    func = kernel("""
x_frag = T.alloc_fragment((8,), T.float32)
k_frag = T.alloc_fragment((8,), T.int32)
T.copy(x, x_frag)
T.copy(k, k_frag)
for j in T.Parallel(8):
    out[j] = x_frag[k_frag[j]]
""", params="x: T.Tensor((8,), T.float32), k: T.Tensor((8,), T.int32), "
             "out: T.Tensor((8,), T.float32)")
    with pytest.raises(DiagnosticError) as info:
        infer_layouts(func)
    (diag,) = info.value.diagnostics
    assert diag.code == "R300" and "not an affine function" in diag.message


def test_non_contiguous_warp_groups_are_refused():
    func = kernel("""
acc = T.alloc_reducer((1,), T.float32, op="sum")
result = T.alloc_fragment((1,), T.float32)
with T.ws(0, 2):
    T.reducer_init(acc)
    T.reducer_update(acc[0], x[0])
    T.finalize_reducer(acc, result)
    T.copy(result, out[0:1])
""", threads=384)
    with pytest.raises(DiagnosticError) as info:
        infer_layouts(func)
    assert "not contiguous" in info.value.diagnostics[0].message
    assert "no participant range" in info.value.diagnostics[0].no_picture


def test_warp_groups_past_the_kernel_are_refused_and_say_why_they_have_no_picture():
    func = kernel("""
acc = T.alloc_reducer((1,), T.float32, op="sum")
result = T.alloc_fragment((1,), T.float32)
with T.ws(1):
    T.reducer_init(acc)
    T.reducer_update(acc[0], x[0])
    T.finalize_reducer(acc, result)
    T.copy(result, out[0:1])
""", threads=128)
    with pytest.raises(DiagnosticError) as info:
        infer_layouts(func)
    (diag,) = info.value.diagnostics
    assert diag.code == "R300" and "need threads 128..255" in diag.message
    assert diag.counterexample is None and "past the kernel" in diag.no_picture


@pytest.mark.parametrize("path", sorted(glob.glob("examples/*.py")) +
                         sorted(glob.glob("tests/programs/valid/*.py")))
def test_every_valid_program_infers_injective_layouts(path):
    program = parse_source(open(path).read(), path)
    for func in program.funcs.values():
        layouts = infer_layouts(func)
        assert_injective(layouts)
        for loop in [s for s in ir.walk(func.kernel.body) if isinstance(s, ir.ParallelFor)]:
            layout = layouts.loop(loop)
            assert layout.shape == tuple(loop.extents)
            assert math.prod(layout.shape) * layout.replicate <= \
                layout.count * layout.slots_per_thread


def test_serial_variable_in_an_index_must_not_move_the_holders():
    # frag[k, j] with frag (4, 128) on 128 threads: thread = j for every k, slot = k
    ok = rows_into_one_sum(4, 128)
    (loop,) = infer_layouts(ok).loops.values()
    assert loop.describe() == "thread = j, slot = 0, replicate 1 (threads 0..127)"
    # frag (4, 8) on 128 threads: the copy's default would put frag[k, j] on thread
    # 8*k + j, which moves with k; the loop places frag instead (each of its 16
    # replicas of column j keeps all four rows) and the copy adopts that layout
    moving = rows_into_one_sum(4, 8)
    layouts = infer_layouts(moving)
    assert by_name(layouts, "f").describe() == \
        "thread = 8*rep + j, slot = i, replicate 16 (threads 0..127)"


def test_affine_index_follows_by_substitution():
    # x_frag[2*j + 1] in an 8-wide loop follows x_frag's layout (16 on 128)
    func = kernel("""
x_frag = T.alloc_fragment((16,), T.float32)
T.copy(x, x_frag)
acc = T.alloc_reducer((1,), T.float32, op="sum")
T.reducer_init(acc)
for j in T.Parallel(8):
    T.reducer_update(acc[0], x_frag[2 * j + 1])
result = T.alloc_fragment((1,), T.float32)
T.finalize_reducer(acc, result)
T.copy(result, out[0:1])
""", params="x: T.Tensor((16,), T.float32), out: T.Tensor((1,), T.float32)")
    (loop,) = infer_layouts(func).loops.values()
    assert loop.describe() == "thread = 16*rep + 2*j + 1, slot = 0, replicate 8 (threads 0..127)"
