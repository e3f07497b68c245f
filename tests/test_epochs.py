"""verify.epochs.checker: every reducer rule R200-R214 pinned at its exact line, on TileLang
source parsed by the frontend. A program marks each line that must get an error with a
trailing `# <- RXXX` comment; the test derives the expected (code, line) pairs from those
markers, so a program and its expectation cannot drift apart."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
import z3

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.epochs.checker import check_func
from verify_reducer.verify.oracle.expect import parse_expectation

ROOT = Path(__file__).resolve().parent.parent
HEADER = "import tilelang.language as T\n\n\n"


def check(src: str):
    source = HEADER + textwrap.dedent(src)
    return source, check_func(parse_source(source, "prog.py").func())


def expected(source: str) -> list[tuple[str, int]]:
    return sorted((code, n) for n, line in enumerate(source.splitlines(), start=1)
                  for code in re.findall(r"<- (R\d{3})", line))


def errors(diags) -> list[tuple[str, int]]:
    return sorted((d.code, d.span.line) for d in diags if d.is_error)


def assert_pinned(src: str):
    """The program gets exactly the errors its markers name; returns the diagnostics."""
    source, diags = check(src)
    shown = "\n".join(f"{d.code}@{d.span.line}: {d.message}" for d in diags)
    assert errors(diags) == expected(source), shown
    return diags


def only(diags, code: str):
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, [d.code for d in diags]
    return found[0]


def kernel(body: str, params: str = "x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)",
           threads: int = 128, grid: str = "1") -> str:
    """A prim_func with x_frag = x already loaded; body is indented by 8 spaces."""
    return (f"@T.prim_func\ndef main({params}):\n"
            f"    with T.Kernel({grid}, threads={threads}) as bx:\n"
            f"        x_frag = T.alloc_fragment((8,), T.float32)\n"
            f"        T.copy(x, x_frag)\n"
            + textwrap.indent(textwrap.dedent(body), " " * 8))


# ----------------------------------------------------------------------------- R200

def test_r200_read_before_finalize():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[j])
        y = T.alloc_fragment((1,), T.float32)
        y[0] = acc[0] * 2.0  # <- R200
        T.finalize_reducer(acc, y)
    """))
    diag = only(d, "R200")
    assert "`acc`" in diag.message and "before it is finalized" in diag.message
    assert diag.hint and "T.finalize_reducer(acc" in diag.hint


def test_r200_read_after_finalize_into_destination_points_at_it():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, res)
        y = T.alloc_fragment((1,), T.float32)
        y[0] = acc[0]  # <- R200
    """))
    assert "`res[0]`" in only(d, "R200").hint


def test_legacy_in_place_finalize_makes_the_reducer_readable():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for j in T.Parallel(8):
            acc[0] += x_frag[j]
        T.finalize_reducer(acc)
        y = T.alloc_fragment((1,), T.float32)
        y[0] = acc[0] * 0.5
        T.copy(acc, out)
    """))


def test_update_form_after_in_place_finalize_is_one_r201():
    """The frontend reads `acc[0] = acc[0] * 0.5` as a product update; after the in-place
    finalize it is an update of no epoch (R201), and its form is moot (no R206)."""
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(acc)
        T.finalize_reducer(acc)
        acc[0] = acc[0] * 0.5  # <- R201
    """))
    assert "finalize into a buffer" in only(d, "R201").hint


# ----------------------------------------------------------------------------- R201

def test_r201_update_after_finalize():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, res)
        T.reducer_update(acc[0], x_frag[0])  # <- R201
    """))
    diag = only(d, "R201")
    assert [n.span.line for n in diag.notes][:1] == [d[0].span.line - 1]
    assert "T.reducer_init(acc)" in diag.hint


def test_r201_around_a_loop_back_edge():
    """The update is before the finalize in the text; only the path round the serial
    loop's back edge reaches it after a finalize. The finalize in the loop is R208."""
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        T.reducer_init(acc)
        for k in T.serial(3):
            for j in T.Parallel(8):
                T.reducer_update(acc[0], x_frag[j])  # <- R201
            T.finalize_reducer(acc, res)  # <- R208
    """))
    diag = only(d, "R201")
    assert any("another iteration" in n.message for n in diag.notes)
    assert "finalize after the loop" in diag.hint


def test_a_loop_of_one_iteration_has_no_back_edge():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        for k in T.serial(1):
            T.reducer_init(acc)
            T.reducer_update(acc[0], x_frag[k])
            T.finalize_reducer(acc, res)
    """))


# ----------------------------------------------------------------------------- R202

def test_r202_never_finalized():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")  # <- R202
        for j in T.Parallel(8):
            T.reducer_update(acc, (0,), x_frag[j])
    """))
    assert "T.finalize_reducer(acc" in only(d, "R202").hint


def test_r202_finalize_on_one_arm_of_a_branch():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        T.reducer_init(acc)  # <- R202
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[j])
        if bx < 2:
            T.finalize_reducer(acc, res)
    """, grid="4"))
    notes = [n.message for n in only(d, "R202").notes]
    assert any("`bx < 2` is false" in m for m in notes), notes


def test_r202_epoch_reopened_with_its_contributions_each_iteration():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        for k in T.serial(4):
            T.reducer_init(acc)  # <- R202
            T.reducer_update(acc[0], x_frag[k])
        T.finalize_reducer(acc, res)  # <- R208
    """))
    assert "opened again" in only(d, "R202").message


def test_finalize_inside_a_loop_that_certainly_runs_is_no_r202():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        for k in T.serial(4):
            T.clear(acc)
            acc[0] += x_frag[k]
            T.finalize_reducer(acc)
            out[0] = acc[0]
    """))


def test_a_loop_of_unknown_extent_may_run_zero_times():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        for k in T.serial(n[0]):
            T.clear(acc)
            acc[0] += x_frag[0]
            T.finalize_reducer(acc)
        T.copy(acc, out)  # <- R211
    """, params="x: T.Tensor((8,), T.float32), n: T.Tensor((1,), T.int32), "
                "out: T.Tensor((1,), T.float32)"))
    assert any("runs zero times" in n.message for n in only(d, "R211").notes)


# ------------------------------------------------- R202 refined: a finalize a path may skip
# A path that skips the finalize loses nothing when no update can have run on it since the
# init (docs/semantics.md §4); the condition that skips it must be block-uniform (R207).

MASKED = ("x: T.Tensor((8,), T.float32), s: T.Tensor((2,), T.int32), "
          "out: T.Tensor((2,), T.float32)")


def test_finalize_under_a_uniform_if_whose_other_arm_contributes_nothing():
    """vLLM's sum_smaller_probs pattern, in both surfaces: the epoch opens at block scope,
    the updates and the finalize sit in one arm of a condition on global memory at the
    block index."""
    assert_pinned(kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        if s[bx] < 0:
            out[bx] = 0.0
        else:
            for j in T.Parallel(8):
                T.reducer_update(acc[0], x_frag[j])
            res = T.alloc_fragment((1,), T.float32)
            T.finalize_reducer(acc, res)
            out[bx] = res[0]
        total = T.alloc_reducer((1,), T.float32, replication="all")
        T.fill(total, 0.0)
        if s[bx] >= 0:
            for j in T.Parallel(8):
                total[0] += x_frag[j]
            T.finalize_reducer(total)
            out[bx] = total[0]
    """, params=MASKED, grid="2"))


def test_an_epoch_nobody_contributed_to_may_stay_open():
    """Nothing is lost: an init (with a seed: a seed is not a contribution) or the RFC's
    implicit init at the allocation, never finalized and never updated; and an init
    that reopens an epoch before any update."""
    assert_pinned(kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        seeded = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(seeded, 5.0)
        again = T.alloc_reducer((1,), T.float32, op="max")
        T.reducer_init(again)
        T.reducer_init(again)
        res = T.alloc_fragment((1,), T.float32)
        T.reducer_update(again[0], x_frag[0])
        T.finalize_reducer(again, res)
    """))


def test_a_path_that_skips_the_finalize_after_contributions_is_lossy():
    d = assert_pinned(kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)  # <- R202
        if s[bx] < 0:
            out[bx] = 0.0
        else:
            for j in T.Parallel(8):
                T.reducer_update(acc[0], x_frag[j])
        if s[bx] >= 0:
            res = T.alloc_fragment((1,), T.float32)
            T.finalize_reducer(acc, res)
            out[bx] = res[0]
    """, params=MASKED, grid="2"))
    diag = only(d, "R202")
    assert "contributions that were never finalized" in diag.message
    lines = {n.span.line: n.message for n in diag.notes}
    init = diag.span.line
    # the lossy path: the else arm, its update, the `s[bx] >= 0` false arm. The two
    # conditions are not correlated (docs/semantics.md §4): a may-analysis.
    assert "is false" in lines[init + 1] and "`s[bx] < 0`" in lines[init + 1]
    assert "receives a contribution" in lines[init + 5]
    assert "`s[bx] >= 0` is false" in lines[init + 6]
    assert "not on every path that contributes" in lines[init + 8]
    assert "put the updates under the same condition" in diag.hint


def test_an_update_that_may_run_counts_as_a_contribution():
    """A predicated update may contribute (its predicate is data), so the path that skips
    the finalize after it is lossy, whatever the data."""
    assert_pinned(kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)  # <- R202
        for j in T.Parallel(8):
            if x_frag[j] > 100.0:
                T.reducer_update(acc[0], x_frag[j])
        if s[bx] >= 0:
            res = T.alloc_fragment((1,), T.float32)
            T.finalize_reducer(acc, res)
    """, params=MASKED, grid="2"))


def test_a_divergent_condition_is_r207_not_also_r202():
    """The skip path contributes nothing either way; a thread-dependent condition is
    what is wrong (directly, or through a name)."""
    d = assert_pinned(kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        T.reducer_init(acc)
        tid = T.get_thread_binding()
        if tid < 64:
            for j in T.Parallel(8):
                T.reducer_update(acc[0], x_frag[j])
            T.finalize_reducer(acc, res)  # <- R207
        lossy = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(lossy)
        for j in T.Parallel(8):
            T.reducer_update(lossy[0], x_frag[j])
        if x_frag[0] > 0:
            T.finalize_reducer(lossy, res)  # <- R207
    """))
    assert "`tid` is the thread index" in d[0].message


def test_epochs_of_a_serial_loop_under_a_uniform_condition():
    """Each iteration opens an epoch; one whose condition fails contributes nothing, so
    the next init reopens it and the last may reach the end: legal. With the updates
    outside the condition, the reopening discards contributions: R202, the path going
    round the loop."""
    params = ("x: T.Tensor((8,), T.float32), m: T.Tensor((4,), T.int32), "
              "out: T.Tensor((4,), T.float32)")
    assert_pinned(kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        for k in T.serial(4):
            T.reducer_init(acc)
            keep = m[k]
            if keep > 0:
                T.reducer_update(acc[0], x_frag[k])
                T.finalize_reducer(acc, res)
                out[k] = res[0]
    """, params=params))
    d = assert_pinned(kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        for k in T.serial(4):
            T.reducer_init(acc)  # <- R202
            T.reducer_update(acc[0], x_frag[k])
            if m[k] > 0:
                T.finalize_reducer(acc, res)
    """, params=params))
    diag = only(d, "R202")
    assert "opened again" in diag.message
    assert any("another iteration" in n.message for n in diag.notes)
    assert any("receives a contribution" in n.message for n in diag.notes)


def test_reading_the_reducer_after_a_skipped_in_place_finalize_is_r200():
    """Skipping the finalize loses nothing, but it does not make the reducer readable:
    after the `if`, the path that skipped it reads an unfinalized epoch."""
    d = assert_pinned(kernel("""\
        total = T.alloc_reducer((1,), T.float32, replication="all")
        T.fill(total, 0.0)
        if s[bx] >= 0:
            for j in T.Parallel(8):
                total[0] += x_frag[j]
            T.finalize_reducer(total)
        out[bx] = total[0]  # <- R200
    """, params=MASKED, grid="2"))
    assert any("`s[bx] >= 0` is false" in n.message for n in only(d, "R200").notes)


# The interpreter enforces the same rule on the path it executes (interp.epochs).

def _interpret(src: str, **inputs):
    from verify_reducer.interp.logical import run
    return run(parse_source(HEADER + textwrap.dedent(src), "prog.py").func(), inputs)


SUM_SMALLER = kernel("""    acc = T.alloc_reducer((1,), T.float32, op="sum")
    T.reducer_init(acc)
    if s[bx] < 0:
        out[bx] = -1.0
    else:
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[j])
        res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, res)
        out[bx] = res[0]
""", params=MASKED, grid="2")


def test_the_interpreter_runs_the_path_that_skips_an_empty_finalize():
    result = _interpret(SUM_SMALLER, x=np.arange(1, 9, dtype=np.float32),
                        s=np.array([-1, 1], np.int32), out=np.zeros(2, np.float32))
    assert result.outputs["out"].tolist() == [-1.0, 36.0]
    assert [e.block for e in result.epochs] == [(1,)]      # block 0 finalized nothing


def test_the_interpreter_refuses_contributions_a_path_leaves_unfinalized():
    lossy = kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[j])
        if s[bx] >= 0:
            res = T.alloc_fragment((1,), T.float32)
            T.finalize_reducer(acc, res)
            out[bx] = res[0]
    """, params=MASKED, grid="2")
    x, out = np.arange(1, 9, dtype=np.float32), np.zeros(2, np.float32)
    # on data where no block skips the finalize, nothing is lost on the path it runs
    assert _interpret(lossy, x=x, s=np.array([1, 1], np.int32), out=out) \
        .outputs["out"].tolist() == [36.0, 36.0]
    with pytest.raises(DiagnosticError) as info:
        _interpret(lossy, x=x, s=np.array([1, -1], np.int32), out=out)
    diag = info.value.diagnostics[0]
    assert diag.code == "R202" and "8 contribution(s) never finalized" in diag.message
    assert diag.notes[0].message == "the first contribution"


def test_the_interpreter_lets_an_empty_epoch_be_reopened_but_not_a_full_one():
    params = ("x: T.Tensor((8,), T.float32), m: T.Tensor((4,), T.int32), "
              "out: T.Tensor((4,), T.float32)")
    src = kernel("""        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        for k in T.serial(4):
            T.reducer_init(acc)
            if m[k] > 0:
                T.reducer_update(acc[0], x_frag[k])
            if m[k] > 1:
                T.finalize_reducer(acc, res)
                out[k] = res[0]
    """, params=params)
    x, out = np.arange(1, 9, dtype=np.float32), np.zeros(4, np.float32)
    # m = 0 (no contribution, no finalize) and m = 2 (both): every epoch loses nothing
    assert _interpret(src, x=x, m=np.array([2, 0, 2, 0], np.int32), out=out) \
        .outputs["out"].tolist() == [1.0, 0.0, 3.0, 0.0]
    with pytest.raises(DiagnosticError) as info:    # m = 1: a contribution, no finalize
        _interpret(src, x=x, m=np.array([2, 1, 2, 0], np.int32), out=out)
    diag = info.value.diagnostics[0]
    assert diag.code == "R202" and "is opened again" in diag.message
    assert [n.message for n in diag.notes] == ["the first contribution",
                                               "a new epoch starts here"]


# ----------------------------------------------------------------------------- R203

def test_r203_finalized_twice():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        r1 = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, r1)
        T.finalize_reducer(acc, r1)  # <- R203
    """))


def test_r203_finalize_on_one_arm_then_again_after_the_branch():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        if bx == 0:
            T.finalize_reducer(acc, res)
        T.finalize_reducer(acc, res)  # <- R203
    """, grid="2"))
    first = only(d, "R203").notes[0]
    assert "first finalized" in first.message and first.span.line == d[0].span.line - 1


def test_finalize_on_both_arms_of_a_uniform_branch_is_fine():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        T.reducer_update(acc[0], x_frag[0])
        if bx == 0:
            T.finalize_reducer(acc, res)
        else:
            T.finalize_reducer(acc, res)
    """, grid="2"))


# ----------------------------------------------------------------------------- R204

def test_r204_legacy_update_before_fill_and_finalize_without_epoch():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        acc[0] += x_frag[0]  # <- R204
        T.clear(acc)
        T.finalize_reducer(acc)
        other = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.finalize_reducer(other)  # <- R204
    """))


def test_r204_update_before_reducer_init():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        T.reducer_update(acc[0], x_frag[0])  # <- R204
        T.reducer_init(acc)
        T.finalize_reducer(acc, res)
    """))


# ----------------------------------------------------------------------------- R205

def test_r205_plain_store_and_its_own_read_is_one_error():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        acc[0] = acc[0] * 2.0 + x_frag[0]  # <- R205
        T.finalize_reducer(acc, res)
    """))
    assert "T.reducer_update(acc" in only(d, "R205").hint


# ----------------------------------------------------------------------------- R206

def test_r206_max_store_on_a_sum_reducer():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for j in T.Parallel(8):
            acc[0] = T.max(acc[0], x_frag[j])  # <- R206
        T.finalize_reducer(acc)
    """))
    diag = only(d, "R206")
    assert "max update" in diag.message and "sum reducer" in diag.message
    assert "op=\"max\"" in diag.hint


# ----------------------------------------------------------------------------- R207

def test_r207_finalize_under_thread_dependent_branches():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        tx = T.get_thread_binding()
        if tx < 64:
            T.finalize_reducer(acc, res)  # <- R207
        else:
            T.finalize_reducer(acc, res)  # <- R207
        b = T.alloc_reducer((1,), T.float32, op="sum")
        if x_frag[0] > 0:
            T.finalize_reducer(b, res)  # <- R207
        c = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(c[0], x_frag[j])
            T.finalize_reducer(c, res)  # <- R207
    """))


def test_block_uniform_conditions_are_not_divergent():
    assert_pinned(kernel("""\
        res = T.alloc_fragment((1,), T.float32)
        for k in T.serial(4):
            if k < 2:
                acc = T.alloc_reducer((1,), T.float32, op="sum")
                T.reducer_update(acc[0], x_frag[k])
                T.finalize_reducer(acc, res)
        if bx < 2:
            b = T.alloc_reducer((1,), T.float32, op="sum")
            T.finalize_reducer(b, res)
    """, grid="4"))


# ----------------------------------------------------------------------------- R208

def test_r208_init_in_a_warp_group_finalize_outside():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        res = T.alloc_fragment((1,), T.float32)
        with T.ws(1):
            T.reducer_init(acc)
            for j in T.Parallel(8):
                T.reducer_update(acc[0], x_frag[j])
        T.finalize_reducer(acc, res)  # <- R208
    """, threads=256))
    diag = only(d, "R208")
    assert "threads 128..255" in diag.message and "all 256 threads" in diag.message


# ----------------------------------------------------------------------------- R209

def test_r209_interval_proof_out_of_bounds():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((4,), T.float32, op="sum")
        res = T.alloc_fragment((4,), T.float32)
        for j in T.Parallel(8):
            T.reducer_update(acc[j], x_frag[j])  # <- R209
        T.finalize_reducer(acc, res)
    """))
    assert "outside 0..3" in only(d, "R209").message


def test_r209_in_bounds_only_z3_can_prove():
    """i*3 - i*2 is i: intervals see [-14, 21] (they forget that both terms are the same
    i); Z3 proves 0..7. The guarded update is in bounds only because of its guard."""
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((8,), T.float32, op="sum")
        wide = T.alloc_reducer((32,), T.float32, op="sum")
        res = T.alloc_fragment((8,), T.float32)
        wres = T.alloc_fragment((32,), T.float32)
        for i in T.Parallel(8):
            T.reducer_update(acc[i * 3 - i * 2], x_frag[i])
        for i, j in T.Parallel(8, 8):
            if i * 4 + j < 32:
                T.reducer_update(wide[i * 4 + j], x_frag[j])
        for i, j in T.Parallel(8, 4):
            T.reducer_update(wide[i * 4 + j], x_frag[j])
        T.finalize_reducer(acc, res)
        T.finalize_reducer(wide, wres)
    """))


def test_r209_z3_counterexample_in_the_message():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((32,), T.float32, op="sum")
        res = T.alloc_fragment((32,), T.float32)
        for i, j in T.Parallel(8, 5):
            T.reducer_update(acc[i * 4 + j], x_frag[j])  # <- R209
        T.finalize_reducer(acc, res)
    """))
    msg = only(d, "R209").message
    m = re.search(r"i = (\d+), j = (\d+) gives index (\d+), outside 0\.\.31", msg)
    assert m, msg
    i, j, idx = map(int, m.groups())
    assert i * 4 + j == idx and idx >= 32 and i < 8 and j < 5


def test_r209_an_inconclusive_proof_is_not_a_pass(monkeypatch):
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((32,), T.float32, op="sum")
        res = T.alloc_fragment((32,), T.float32)
        for i, j in T.Parallel(8, 8):
            if i * 4 + j < 32:
                T.reducer_update(acc[i * 4 + j], x_frag[j])  # <- R209
        T.finalize_reducer(acc, res)
    """))
    assert "inconclusive" in only(d, "R209").message


# ----------------------------------------------------------------------------- R210

def test_r210_float_into_integer_needs_a_cast():
    d = assert_pinned(kernel("""\
        cnt = T.alloc_reducer((1,), T.int32, op="sum")
        res = T.alloc_fragment((1,), T.int32)
        for j in T.Parallel(8):
            T.reducer_update(cnt[0], x_frag[j])  # <- R210
            T.reducer_update(cnt[0], T.cast(x_frag[j], T.int32))
            T.reducer_update(cnt[0], 1)
            T.reducer_update(cnt[0], 0.5)  # <- R210
        T.finalize_reducer(cnt, res)
    """))
    assert all("T.cast" in x.hint for x in d if x.code == "R210")


# ----------------------------------------------------------------------------- R211

def test_r211_copy_reduce_and_alias():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        part = T.alloc_fragment((1,), T.float32)
        T.copy(acc, part)  # <- R211
        T.reduce_sum(acc, part, dim=0)  # <- R211
        other = acc  # <- R211
        T.finalize_reducer(acc, part)
    """))


# ----------------------------------------------------------------------------- R212

def test_r212_bitwise_on_float_and_unknown_op():
    assert_pinned(kernel("""\
        a = T.alloc_reducer((1,), T.float32, op="bitxor")  # <- R212
        b = T.alloc_reducer((1,), T.float32, op="mean")  # <- R212
        res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(a, res)
        T.finalize_reducer(b, res)
    """))


# ----------------------------------------------------------------------------- R213

def test_r213_legacy_sum_fill_depends_on_the_participant_count():
    d = assert_pinned(kernel("""\
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(acc, 1.0)  # <- R213
        acc[0] += x_frag[0]
        T.finalize_reducer(acc)
        mx = T.alloc_reducer((1,), T.float32, op="max", replication="all")
        T.fill(mx, 0.0)
        mx[0] = T.max(mx[0], x_frag[0])
        T.finalize_reducer(mx)
    """))
    diag = only(d, "R213")
    assert "P · 1.0" in diag.message
    assert "T.reducer_init(acc, 1.0)" in diag.hint


# ----------------------------------------------------------------------------- R214

def test_r214_destination_shape_and_dtype():
    assert_pinned(kernel("""\
        acc = T.alloc_reducer((4,), T.float32, op="sum")
        small = T.alloc_fragment((2,), T.float32)
        half = T.alloc_fragment((4,), T.float16)
        T.reducer_init(acc)
        T.finalize_reducer(acc, small)  # <- R214
        T.reducer_init(acc)
        T.finalize_reducer(acc, half)  # <- R214
    """))


# ----------------------------------------------------------------------------- together

def test_independent_errors_are_each_reported_at_their_own_line():
    assert_pinned(kernel("""\
        a = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(a, 2.0)  # <- R213
        a[0] += x_frag[0]
        T.finalize_reducer(a)
        b = T.alloc_reducer((1,), T.int32, op="sum")
        bres = T.alloc_fragment((1,), T.int32)
        T.reducer_update(b[0], x_frag[0])  # <- R210
        T.finalize_reducer(b, bres)
        c = T.alloc_reducer((1,), T.float32, op="sum")
        cres = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(c, cres)
        T.reducer_update(c[0], x_frag[1])  # <- R201
        d = T.alloc_reducer((2,), T.float32, op="max")
        dres = T.alloc_fragment((2,), T.float32)
        for j in T.Parallel(8):
            T.reducer_update(d[j], x_frag[j])  # <- R209
        T.finalize_reducer(d, dres)
    """))


def _program_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).glob("**/*.py"))


@pytest.mark.parametrize("path", _program_files("tests/programs/invalid") +
                         _program_files("examples/refused"), ids=lambda p: p.name)
def test_invalid_programs_get_their_errors_with_a_name_and_a_hint(path: Path):
    source = path.read_text()
    expected_errors = parse_expectation(source, str(path)).errors
    want = sorted((code, line) for code, line, _ in expected_errors)
    try:
        program = parse_source(source, str(path))
    except DiagnosticError as refused:
        # refused by the frontend (a factory parameter with no value, ...): its errors
        # are the expected ones, and the epoch verifier never sees the program
        assert errors(refused.diagnostics) == want
        return
    diags = check_func(program.func())
    assert errors(diags) == want
    for d in diags:
        names = re.findall(r"`([A-Za-z_]\w*)`", d.message)
        assert names, d.message          # the message names the reducer it is about
        assert d.hint, d.message


@pytest.mark.parametrize("path", [p for p in _program_files("examples")
                                  if "refused" not in p.parts] +
                         _program_files("tests/programs/valid"), ids=lambda p: p.name)
def test_valid_programs_get_no_errors(path: Path):
    source = path.read_text()
    diags = check_func(parse_source(source, str(path)).func())
    assert errors(diags) == []
