"""A cell loop's slots are unrolled unless its run-time register selects would expand past
codegen.cuda_cells.SELECT_LIMIT (nvcc took minutes, or crashed, on such kernels); the
replica table of a tabled layout is declared only where a loop reads it (nvcc warns of a
table no one reads). tests/test_cuda_compile.py compiles every program's kernel, the
rolled ones included, and the GPU suite runs them."""
from __future__ import annotations

import re

import pytest

from cuda_env import ROOT, plan
from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.cuda_cells import SELECT_LIMIT, select_count

VALID = ROOT / "tests" / "programs" / "valid"
ROLLED = VALID / "fuzz_rolled_cell_loop.py"


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


@pytest.mark.parametrize("planner", ["canonical", "fast"])
def test_loops_past_the_limit_are_rolled(planner):
    source = render(plan(ROLLED, planner)).source
    updates = [n for n, text in enumerate(ROLLED.read_text().split("\n"), 1)
               if "T.Parallel(" in text]
    assert len(updates) == 2
    for line in updates:
        loop = _loop(source, line)
        text = "\n".join(loop)
        assert "#pragma unroll 1" in text, text
        found = re.search(r"not unrolled: unrolling its 256 slots would expand its run-time "
                          r"register slots into (\d+) selects \(limit (\d+)\)", text)
        assert found, text
        assert int(found.group(1)) > SELECT_LIMIT == int(found.group(2))
        # rolled, the slot is a run-time value: no register array is indexed by it
        assert not re.search(r"\w+_frag\[slot\]|_partial\[slot\]", text), text
    # the loops with constant slots (the copy into a0_frag, the finalize) stay unrolled
    assert source.count("#pragma unroll 1") == 2


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
