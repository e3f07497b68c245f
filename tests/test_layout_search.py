"""Layout inference's search (TileLang's free mode): when placing a component of ops in
program order conflicts, every op is tried as the first free one, so a whole-tile copy
adopts the layout a loop needs; R300 stays only when no root gives a clean placement,
naming the two demands that cannot both hold."""
import numpy as np
import pytest

from verify_reducer.codegen.layout import _Inference, infer_layouts
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_source
from test_layout_infer import assert_injective, by_name, kernel, rows_into_one_sum


def serial_rows(rows: int, columns: int, threads: int):
    """Issue #12: x_frag copied whole, row `it` read inside a T.Parallel over columns."""
    return kernel(f"""
x_frag = T.alloc_fragment(({rows}, {columns}), T.float32)
T.copy(x, x_frag)
acc = T.alloc_reducer((1,), T.float32, op="sum")
result = T.alloc_fragment((1,), T.float32)
for it in T.serial({rows}):
    T.reducer_init(acc)
    for j in T.Parallel({columns}):
        T.reducer_update(acc[0], x_frag[it, j])
    T.finalize_reducer(acc, result)
    out[it] = result[0]
""", params=f"x: T.Tensor(({rows}, {columns}), T.float32), "
            f"out: T.Tensor(({rows},), T.float32)", threads=threads)


@pytest.mark.parametrize("rows, columns, threads", [(3, 32, 64), (4, 64, 128), (2, 48, 96)])
def test_serial_rows_place_the_fragment_by_the_loop(rows, columns, threads):
    func = serial_rows(rows, columns, threads)
    layouts = infer_layouts(func)
    x_frag = by_name(layouts, "x_frag")
    replicas = threads // columns
    assert x_frag.describe() == (f"thread = {columns}*rep + j, slot = i, replicate "
                                 f"{replicas} (threads 0..{threads - 1})")
    (loop,) = layouts.loops.values()
    for it in range(rows):                 # every thread running j holds x_frag[it, j]
        runs = loop.threads_of()
        holds = x_frag.threads_of((np.full(columns, it), np.arange(columns)))
        assert (np.sort(runs, axis=0) == np.sort(holds, axis=0)).all()
    # the copy adopted x_frag's layout, so it writes every replica
    (copy,) = layouts.copies.values()
    assert copy == x_frag
    assert_injective(layouts)


def test_program_order_placement_is_kept_when_it_checks_clean():
    # the copy places x_frag by its default partition; the loop follows it
    layouts = infer_layouts(rows_into_one_sum(4, 128, "x_frag"))
    assert by_name(layouts, "x_frag").describe() == \
        "thread = j, slot = i, replicate 1 (threads 0..127)"


def _three_fragments(b_index: str):
    """a_frag and b_frag copied whole, c_frag[j] = a_frag[j] + b_frag[b_index]."""
    return kernel(f"""
a_frag = T.alloc_fragment((8,), T.float32)
b_frag = T.alloc_fragment((16,), T.float32)
c_frag = T.alloc_fragment((8,), T.float32)
T.copy(a, a_frag)
T.copy(b, b_frag)
for j in T.Parallel(8):
    c_frag[j] = a_frag[j] + b_frag[{b_index}]
T.copy(c_frag, out)
""", params="a: T.Tensor((8,), T.float32), b: T.Tensor((16,), T.float32), "
             "out: T.Tensor((8,), T.float32)")


def test_a_later_copy_can_be_the_root():
    # a_frag's copy first (program order) places a_frag and the loop follows it, but
    # b_frag[j % 3] has no inverse (3 splits no digit off j < 8), so the loop cannot
    # place b_frag: its own copy's default is left, which the loop does not match; with
    # b_frag's copy as the root the loop follows b_frag and places a_frag and c_frag
    func = _three_fragments("j % 3")
    layouts = infer_layouts(func)
    assert by_name(layouts, "b_frag").describe() == \
        "thread = 16*rep + i, slot = 0, replicate 8 (threads 0..127)"
    (loop,) = layouts.loops.values()
    assert loop.describe() == \
        "thread = 16*rep + j % 3, slot = j, replicate 8 (threads 0..127)"
    assert by_name(layouts, "a_frag") == by_name(layouts, "c_frag")
    assert_injective(layouts)


def test_a_loop_reading_part_of_a_fragment_places_all_of_it():
    # b_frag[j] over j < 8 touches half of b_frag: the loop (following a_frag) places
    # b_frag through the inverse of its index, and the elements it never touches sit on
    # the same threads one slot up, so b_frag's copy still writes every element once
    func = _three_fragments("j")
    layouts = infer_layouts(func)
    (loop,) = layouts.loops.values()
    assert loop.describe() == "thread = 8*rep + j, slot = 0, replicate 16 (threads 0..127)"
    assert by_name(layouts, "b_frag").describe() == \
        "thread = 8*rep + i % 8, slot = i // 8, replicate 16 (threads 0..127)"
    assert_injective(layouts)


def test_a_write_from_every_column_runs_on_every_holder():
    # y_frag[i] written from every j: with y_frag's copy as the root, y_frag[i] lives on
    # 32 threads and each of them runs every (i, j), so no replica goes stale
    func = kernel("""
a_frag = T.alloc_fragment((4, 32), T.float32)
y_frag = T.alloc_fragment((4,), T.float32)
T.copy(a, a_frag)
for i, j in T.Parallel(4, 32):
    y_frag[i] = a_frag[i, j]
T.copy(y_frag, out)
""", params="a: T.Tensor((4, 32), T.float32), out: T.Tensor((4,), T.float32)")
    layouts = infer_layouts(func)
    y_frag = by_name(layouts, "y_frag")
    (loop,) = layouts.loops.values()
    runs = loop.threads_of()                       # (replica, iteration)
    for n in range(4 * 32):
        i = n // 32
        assert set(runs[:, n]) == set(y_frag.threads_of((np.array([i]),)).ravel())
    assert_injective(layouts)


def test_a_fragment_read_outside_t_parallel_is_replicated_on_every_participant():
    # program order (the copy's default partition) leaves x_frag[0] on 16 of the 128
    # threads that run `out[0] = ...`; rooted at that statement, x_frag is placed on all
    func = kernel("""
x_frag = T.alloc_fragment((8,), T.float32)
T.copy(x, x_frag)
out[0] = x_frag[0]
""")
    layouts = infer_layouts(func)
    assert by_name(layouts, "x_frag").describe() == \
        "thread = rep, slot = i, replicate 128 (threads 0..127)"


SEARCHED = [
    serial_rows(3, 32, 64),
    serial_rows(2, 48, 96),
    parse_source(open("tests/programs/valid/serial_row_accumulate.py").read()).func(),
    parse_source(open("tests/programs/valid/serial_row_write.py").read()).func(),
]


@pytest.mark.parametrize("func", SEARCHED, ids=["3x32", "2x48", "accumulate", "write"])
def test_the_chosen_root_is_the_cheapest_clean_one(func):
    """Each component keeps program order when that checks clean, else the clean root
    with the fewest slots per thread over its fragments (TileLang's register count)."""
    chosen = infer_layouts(func)
    search = _Inference(func)
    search.run()
    searched = 0
    for ops in search.components():
        buffers = search.buffers(ops)
        if not search.attempt(ops, ops[0]):
            continue
        costs = [sum(search.result.fragments[b].slots_per_thread for b in buffers)
                 for root in ops[1:] if not search.attempt(ops, root)]
        assert costs, "a valid program has a clean root"
        assert sum(chosen.fragments[b].slots_per_thread for b in buffers) == min(costs)
        searched += 1
    assert searched >= 1


def test_every_loop_free_dimension_is_kept_whole_by_each_holder():
    # x_frag[a, b, j] in two nested serial loops: column j on threads j and 32 + j,
    # the six (a, b) rows of it in consecutive slots
    func = parse_source(open("tests/programs/valid/serial_row_3d.py").read()).func()
    layouts = infer_layouts(func)
    assert by_name(layouts, "x_frag").describe() == \
        "thread = 32*rep + k, slot = 3*i + j, replicate 2 (threads 0..63)"
    assert by_name(layouts, "x_frag").slots_per_thread == 6


def test_each_rule_question_is_decided_once_across_the_roots(monkeypatch):
    import verify_reducer.codegen.layout as layout_module
    asked, attempts = [], []
    real_check, real_follow = layout_module.check, layout_module.follow
    real_attempt = _Inference.attempt

    def counting_check(loop, frag, access):
        asked.append(("check", loop, frag, id(access)))
        return real_check(loop, frag, access)

    def counting_follow(frag, access, shape, names, participants):
        asked.append(("follow", frag, id(access), shape, names, participants))
        return real_follow(frag, access, shape, names, participants)

    def counting_attempt(self, ops, root, first_only=False):
        attempts.append(root)
        return real_attempt(self, ops, root, first_only)

    monkeypatch.setattr(layout_module, "check", counting_check)
    monkeypatch.setattr(layout_module, "follow", counting_follow)
    monkeypatch.setattr(_Inference, "attempt", counting_attempt)
    infer_layouts(serial_rows(3, 32, 64))
    assert len(attempts) >= 3                   # program order, then other roots
    assert len(asked) == len(set(asked))


def _refusals(path: str) -> list:
    """The diagnostics layout inference refuses the program at path with."""
    func = parse_source(open(path).read(), path).func()
    with pytest.raises(DiagnosticError) as info:
        infer_layouts(func)
    return info.value.diagnostics


def test_an_index_without_an_inverse_keeps_r300_naming_both_demands():
    # x_frag[it, i + k] over 2x2 touches column 1 twice: the loop cannot place x_frag,
    # the copy's default moves the holders with the row, and no root is clean
    path = "tests/programs/layout/r300_sum_index_overlaps.py"
    (diag,) = _refusals(path)
    assert diag.code == "R300" and (diag.span.line, diag.span.col) == (24, 42)
    assert diag.message == (
        "layout conflict: T.Parallel(2, 2) at line 23: iteration (i=1, k=0, it=0) runs on "
        "thread 2, which does not hold x_frag[0, 1] (held by threads 1, 10, ..., 55 "
        "(7 threads)); x_frag was placed by T.copy at line 18")
    loop, placed = diag.notes
    assert loop.message == ("T.Parallel(2, 2) at line 23 runs as thread = 4*rep + 2*i + k, "
                            "slot = 0, replicate 16 (threads 0..63)")
    assert placed.message == ("x_frag was placed here: thread = 9*rep + 3*i + j, slot = 0, "
                              "replicate 7 (threads 0..63)")
    assert placed.span.line == 18                   # the copy


def split_rows(rows: int, cells: int, width: int, cuts: tuple[int, ...], threads: int):
    """Issue #12's split class: row `it` of x_frag read as x_frag[it, width*i + k] by
    one T.Parallel per part of each cell's width (cut at cuts), all in one epoch."""
    bounds = (0, *cuts, width)
    loops = "".join(f"""
    for i, k in T.Parallel({cells}, {hi - lo}):
        T.reducer_update(acc[i], x_frag[it, {width}*i + k + {lo}])"""
                    for lo, hi in zip(bounds, bounds[1:]))
    return kernel(f"""
x_frag = T.alloc_fragment(({rows}, {cells * width}), T.float32)
T.copy(x, x_frag)
acc = T.alloc_reducer(({cells},), T.float32, op="sum")
result = T.alloc_fragment(({cells},), T.float32)
for it in T.serial({rows}):
    T.reducer_init(acc){loops}
    T.finalize_reducer(acc, result)
    for i in T.Parallel({cells}):
        out[it, i] = result[i]
""", params=f"x: T.Tensor(({rows}, {cells * width}), T.float32), "
            f"out: T.Tensor(({rows}, {cells}), T.float32)", threads=threads)


SPLIT = {
    "2x12 cut at 5 on 32": (3, 2, 12, (5,), 32),
    "2x24 cut at 11 on 32": (2, 2, 24, (11,), 32),
    "three parts on 64": (3, 2, 20, (7, 13), 64),
    "four cells on 128": (3, 4, 24, (10,), 128),
    "a gap in whole multiples on 96": (2, 3, 16, (8,), 96),
}


@pytest.mark.parametrize("shape", SPLIT.values(), ids=SPLIT.keys())
def test_split_serial_rows_place_the_fragment_by_one_loop_the_others_follow(shape):
    rows, cells, width, cuts, threads = shape
    func = split_rows(*shape)
    layouts = infer_layouts(func)
    x_frag = by_name(layouts, "x_frag")
    bounds = (0, *cuts, width)
    update_loops = [loop for loop in layouts.loops.values() if len(loop.shape) == 2]
    assert len(update_loops) == len(bounds) - 1
    for loop, lo in zip(update_loops, bounds):
        runs = loop.threads_of()                    # (replica, iteration)
        i, k = np.unravel_index(np.arange(loop.size), loop.shape)
        for it in range(rows):                      # every runner holds what it reads
            holds = x_frag.threads_of((np.full(loop.size, it), width * i + k + lo))
            assert (runs[:, None, :] == holds[None, :, :]).any(axis=1).all()
    # x_frag's holders stay put from row to row, and the copy writes every replica
    holders = [np.sort(x_frag.threads_of((np.full(cells * width, r),
                                          np.arange(cells * width))), axis=0)
               for r in range(rows)]
    assert all((h == holders[0]).all() for h in holders)
    (copy,) = [c for node, c in layouts.copies.items() if c.shape == (rows, cells * width)]
    assert copy == x_frag
    assert_injective(layouts)


def test_r300_names_both_demands_after_every_root_was_tried(monkeypatch):
    # the split shape written by warp group 0 and read by warp group 1: the writer needs
    # exactly its own threads to hold x_frag, the readers need theirs to; no layout
    # does both, whichever of the three loops is the root
    path = "tests/programs/layout/r300_split_rows_written_in_another_warp_group.py"
    roots = []
    real_attempt = _Inference.attempt

    def recording_attempt(self, ops, root, first_only=False):
        roots.append(root.what)
        return real_attempt(self, ops, root, first_only)

    monkeypatch.setattr(_Inference, "attempt", recording_attempt)
    first, second = _refusals(path)
    assert {"T.Parallel(3, 24) at line 21", "T.Parallel(2, 5) at line 26",
            "T.Parallel(2, 7) at line 28"} <= set(roots)
    assert first.message == (
        "layout conflict: T.Parallel(2, 5) at line 26: iteration (i=0, k=0, it=0) runs on "
        "thread 128, which does not hold x_frag[0, 0] (held by threads 0); x_frag was "
        "placed by T.Parallel(3, 24) at line 21")
    assert second.message.startswith("layout conflict: T.Parallel(2, 7) at line 28: ")
    assert second.message.endswith("; x_frag was placed by T.Parallel(3, 24) at line 21")
    for diag in (first, second):
        loop, placed = diag.notes
        assert "(threads 128..255)" in loop.message
        assert placed.message.startswith("x_frag was placed here: ") and \
            placed.message.endswith("(threads 0..127)")
        assert placed.span.line == 22                  # the writer's store


def test_a_loop_following_another_fragment_says_so_in_r300():
    path = "tests/programs/layout/r300_index_no_layout_places.py"
    (diag,) = _refusals(path)
    assert diag.message == (
        "layout conflict: T.Parallel(8) at line 17, following k_frag: x_frag[...] is not "
        "an affine function of the loop variables; x_frag has the default partition of "
        "its shape (no op placed it)")
