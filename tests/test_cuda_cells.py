"""Cell loops as C: a loop over part of a row inverts through the row's full window with a
guard (codegen.lower.cells.Window), so its slots stay constants; a cell loop's slots are
unrolled unless its run-time register selects would expand past
codegen.lower.cells.SELECT_LIMIT (nvcc took minutes, or crashed, on such kernels); the
replica table of a tabled layout is declared only where a loop reads it (nvcc warns of a
table no one reads). tests/test_cuda_compile.py compiles every program's kernel, the
rolled ones included, and the GPU suite runs them."""
from __future__ import annotations

import re

import numpy as np
import pytest

from cuda_env import ROOT, plan
from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.cuda_cells import select_count
from verify_reducer.codegen.lower.cells import SELECT_LIMIT
from verify_reducer.codegen.lower.cells import inverse_of
from verify_reducer.spec.indexexpr import Var
from verify_reducer.spec.layout import Layout

VALID = ROOT / "tests" / "programs" / "valid"
ROLLED = VALID / "histogram_rolled_loop.py"
WINDOWS = VALID / "fuzz_row_split_windows.py"


def _loop(source: str, line: int) -> list[str]:
    """The lines of the cell loop of T.Parallel at source line `line`, up to the next
    statement comment."""
    lines = source.split("\n")
    start = next(n for n, text in enumerate(lines)
                 if text.strip().startswith(f"// line {line}: T.Parallel"))
    end = next(n for n in range(start + 1, len(lines))
               if re.match(r"\s*// line \d+:", lines[n]))
    return lines[start:end]


def test_select_count_weighs_each_select_by_its_array():
    lines = ["reducer_set(acc, i, reducer_get(acc, i) + reducer_get(a_frag, j));",
             "x[slot] = reducer_get(unknown, k);"]
    assert select_count(lines, {"acc": 64, "a_frag": 256}) == 64 + 64 + 256 + 1


def _row_part(extent: int, shift: int) -> Layout:
    """`for i, k in T.Parallel(64, extent)` over columns k + shift of a 64 x 128 tile on
    32 threads: thread = 8*(i % 4) + (k + shift) // 16, slot = 16*(i // 4) + (k + shift) % 16."""
    i, k = Var("i"), Var("k") + shift
    return Layout((64, extent), ("i", "k"), 8 * (i % 4) + k // 16, 16 * (i // 4) + k % 16, 32)


@pytest.mark.parametrize("extent, shift", [(93, 0), (35, 93), (80, 13), (128, 0)])
def test_a_part_of_a_row_inverts_through_the_row(extent, shift):
    layout = _row_part(extent, shift)
    inverse = inverse_of(layout)
    assert inverse.table is None
    if extent == 128:
        assert inverse.window is None and inverse.used is None
        return
    window = inverse.window
    assert (window.dim, window.low, window.high, window.wide) == (1, shift, shift + extent, 128)
    # the formulas, evaluated on every cell, give exactly the layout's own inverse
    index, _ = layout.inverse()                        # [threads, slots]
    t, s = np.meshgrid(np.arange(32), np.arange(layout.slots_per_thread), indexing="ij")
    env = {"$t": t, "$s": s}
    wide = window.index.evaluate(env)
    used = (wide >= window.low) & (wide < window.high)
    assert np.array_equal(used, index >= 0)
    i, k = (np.broadcast_to(e.evaluate(env), t.shape) for e in inverse.indices)
    assert np.array_equal((i * extent + k)[used], index[used])


def test_a_window_keeps_the_loop_s_own_slot_count():
    """k < 13 uses slots 0..252 of each thread: its window would need 256, a longer loop,
    so the inverse stays a table."""
    layout = _row_part(13, 0)
    assert layout.slots_per_thread == 253
    assert inverse_of(layout).table is not None


def test_row_parts_render_with_constant_slots():
    source = render(plan(WINDOWS, "canonical")).source
    assert "__device__ const" not in source.split("__global__")[0].split("reducer_runtime")[-1]
    updates = [n for n, text in enumerate(WINDOWS.read_text().split("\n"), 1)
               if "T.Parallel(" in text]
    guards = []
    for line in updates:
        text = "\n".join(_loop(source, line))
        assert "#pragma unroll\n" in text + "\n" and "unroll 1" not in text, text
        assert "reducer_get" not in text and "reducer_set" not in text, text
        assert "acc0_partial[slot / 16]" in text and "a0_frag[slot]" in text, text
        guards += re.findall(r"if \((.*)\)", text)
    assert guards == ["16*(tid % 8) + slot % 16 < 93", "16*(tid % 8) + slot % 16 >= 93"]


@pytest.mark.parametrize("planner", ["canonical", "legacy"])
def test_loops_past_the_limit_are_rolled(planner):
    source = render(plan(ROLLED, planner)).source
    (line,) = [n for n, text in enumerate(ROLLED.read_text().split("\n"), 1)
               if "T.Parallel(" in text]
    loop = _loop(source, line)
    text = "\n".join(loop)
    assert "#pragma unroll 1" in text, text
    found = re.search(r"not unrolled: unrolling its 128 slots would expand its run-time "
                      r"register slots into (\d+) selects \(limit (\d+)\)", text)
    assert found, text
    assert int(found.group(1)) > SELECT_LIMIT == int(found.group(2))
    # rolled, the slot is a run-time value: no register array is indexed by it
    assert "reducer_get(a0_frag, slot)" in text
    assert not re.search(r"\w+_frag\[slot\]|_partial\[slot\]", text), text
    # the loops with constant slots (the copy into a0_frag, the finalize) stay unrolled
    assert source.count("not unrolled") == 1


def test_loops_at_the_limit_stay_unrolled():
    """canonical_batched_in_place's update loop expands into exactly SELECT_LIMIT selects."""
    source = render(plan(VALID / "canonical_batched_in_place.py", "canonical")).source
    assert "not unrolled" not in source
    assert "#pragma unroll 1" not in source.split("__global__")[1].split("reducer_fold")[0]


@pytest.mark.parametrize("name", ["fuzz_interleaved_consumer.py", "fuzz_interleaved_gemv.py",
                                  "fuzz_serial_row_two_loops.py"])
@pytest.mark.parametrize("planner", ["canonical", "fast", "legacy"])
def test_every_table_is_read(name, planner):
    """These programs' tabled loop layouts are replicated, and no loop reads the replica:
    their replica tables were declared unread (nvcc warning #177-D)."""
    source = render(plan(VALID / name, planner)).source
    tables = re.findall(r"__device__ const \w+ (\w+)\[", source)
    assert tables, "the program no longer has a tabled layout"
    unread = [t for t in tables if len(re.findall(rf"\b{t}\b", source)) < 2]
    assert not unread, unread
