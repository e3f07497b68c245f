"""The cell loops of the thread program (codegen.lower.cells): one CellLoop per layout,
printed by codegen.cuda_cells and executed by the simulator (interp.sim_cells), which
checks it against the layout's forward tables. Faults planted into a CellLoop — a wrong
digit of the inverse, a wrong table entry, a guard too strict — are caught on the CPU
with a counterexample (thread, slot, iteration), at a T.Parallel store and at a reducer
update site; the printer holds no inverse logic, and replacing `cell_loop` changes the
CUDA and the simulation together."""
from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.lower import cells as lowering
from verify_reducer.codegen.lower.cells import (S, SELECT_LIMIT, T, Bound, CellTables,
                                                cell_loop)
from verify_reducer.codegen.plan import plan_func
from verify_reducer.interp.sim_cells import run_cells
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.frontend import parse_file
from verify_reducer.spec.indexexpr import Var
from verify_reducer.spec.layout import Layout
from verify_reducer.verify.oracle.inputs import prepare

ROOT = Path(__file__).resolve().parent.parent
t, s = Var(T), Var(S)


def _program(name: str):
    func = parse_file(str(ROOT / name)).func()
    return func, plan_func(func, "canonical")


def _loop_at(plan, line: int):
    """(the T.Parallel at source line `line`, its layout)."""
    return next((loop, layout) for loop, layout in plan.layouts.loops.items()
                if loop.span.line == line)


def _plant(monkeypatch, plan, line: int, change):
    """cell_loop replaced: the loop at `line` gets change(its CellLoop); every other
    layout its own. The printer sees the loop's layout with the loop's own names."""
    loop, layout = _loop_at(plan, line)
    targets = {layout, layout.rename(tuple(v.name for v in loop.vars))}
    real = lowering.cell_loop

    def planted(of, selects=None):
        found = real(of, selects)
        return change(found) if of in targets else found
    monkeypatch.setattr(lowering, "cell_loop", planted)
    return layout


def _violations(func, plan):
    # a copy of the plan: its statics (and their executed cell loops) are its own
    return simulate(replace(plan), prepare(func, 0), blocks=[(0,)]).violations


def _one(violations, code: str, what: str):
    found = [d for d in violations if d.code == code and "cell loop" in d.message]
    assert found, [(d.code, d.message) for d in violations]
    diag = found[0]
    assert diag.counterexample is not None and diag.counterexample.grid[0] == "loop"
    return diag


# ---------------------------------------------------------------- at a T.Parallel store

GEMV = "examples/gemv_nondividing.py"       # line 38: x_frag[k] = ... over k < 24 on 128


def test_the_unplanted_loops_agree_with_their_layouts():
    func, plan = _program(GEMV)
    assert not _violations(func, plan)
    _, layout = _loop_at(plan, 38)
    loop = cell_loop(layout)
    assert loop.indices == (t % 24,) and loop.replica == t // 24
    assert loop.guard == (Bound(t, None, 96),)
    assert run_cells(loop).findings == ()


def test_a_wrong_digit_at_a_store_is_caught(monkeypatch):
    func, plan = _program(GEMV)
    _plant(monkeypatch, plan, 38, lambda c: replace(c, indices=(t % 12,)))
    found = _violations(func, plan)
    diag = _one(found, "R503", "missing")
    # k = 12 of replica 0 lives at thread 12, which now runs k = 0 again
    assert "thread 12, slot 0" in diag.message and "iteration (12,)" in diag.message
    assert diag.counterexample.threads == ((12, "stale"),)
    assert diag.counterexample.elements == (((12,), "iteration"),)
    twice = [d for d in found if d.code == "R503" and "both run" in d.message]
    assert twice and "thread 0, slot 0" in twice[0].message and \
        "runs 2 times" in twice[0].message


def test_a_guard_too_strict_at_a_store_is_caught(monkeypatch):
    func, plan = _program(GEMV)
    _plant(monkeypatch, plan, 38, lambda c: replace(c, guard=(Bound(t, None, 72),)))
    diag = _one(_violations(func, plan), "R503", "missing")
    assert "thread 72, slot 0: the cell guard drops this cell" in diag.message
    assert "iteration (0,) (replica 3), which runs 0 times" in diag.message
    assert diag.counterexample.threads == ((72, "stale"),)


def test_an_iteration_outside_the_loop_is_r505(monkeypatch):
    func, plan = _program(GEMV)
    _plant(monkeypatch, plan, 38, lambda c: replace(c, indices=(t % 32,)))
    diag = _one(_violations(func, plan), "R505", "outside")
    assert "iteration (24,) (replica 1) at thread 24, slot 0, outside" in diag.message


# ----------------------------------------------------------- at a reducer update site

MINIMAL = "examples/minimal_v2.py"       # line 23: reducer_update over j < 8 on 128


def test_a_wrong_digit_at_an_update_site_is_caught(monkeypatch):
    func, plan = _program(MINIMAL)
    assert not _violations(func, plan)
    _plant(monkeypatch, plan, 23, lambda c: replace(c, replica=t // 16))
    found = _violations(func, plan)
    diag = _one(found, "R503", "missing")
    # replicas 8..15 of j = 0 live on threads 64.., which now run replicas 4..7
    assert "thread 64, slot 0: this cell runs iteration (0,) (replica 4) instead of the " \
        "layout's iteration (0,) (replica 8), which runs 0 times" in diag.message
    # the simulator ran the planted loop: contributions entered twice, and the
    # accounting says so too
    assert any(d.code == "R503" and "cell loop" not in d.message for d in found)


TABLED = "tests/programs/valid/fuzz_interleaved_consumer.py"   # line 40: a tabled inverse


def test_a_wrong_table_entry_at_an_update_site_is_caught(monkeypatch):
    func, plan = _program(TABLED)
    assert not _violations(func, plan)
    _, layout = _loop_at(plan, 40)
    real = cell_loop(layout)
    assert real.tables is not None
    flat, replica = real.tables.flat, real.tables.replica
    # a used cell b that repeats the first used cell a's entries
    a = next(u for u, f in enumerate(flat) if f >= 0)
    b = next(u for u in range(a + 1, len(flat)) if flat[u] >= 0 and flat[u] != flat[a])

    def wrong_entry(c):
        entries = list(flat), list(replica)
        for table in entries:
            table[b] = table[a]
        return replace(c, tables=CellTables(*map(tuple, entries)))
    _plant(monkeypatch, plan, 40, wrong_entry)
    found = _violations(func, plan)
    thread, slot = b % layout.count, b // layout.count
    diag = _one(found, "R503", "missing")
    assert f"thread {thread}, slot {slot}: this cell runs iteration ({flat[a]},) " \
        f"(replica {replica[a]}) instead of the layout's iteration ({flat[b]},)" in diag.message
    twice = [d for d in found if d.code == "R503" and "both run" in d.message]
    assert twice and f"thread {a % layout.count}, slot {a // layout.count}" in \
        twice[0].message


WINDOWS = "tests/programs/valid/fuzz_row_split_windows.py"     # line 36: a window, k < 93


def test_a_window_too_narrow_at_an_update_site_is_caught(monkeypatch):
    func, plan = _program(WINDOWS)
    _, layout = _loop_at(plan, 36)
    real = cell_loop(layout)
    assert real.window is not None and real.guard[0].high == 93
    _plant(monkeypatch, plan, 36,
           lambda c: replace(c, guard=(replace(c.guard[0], high=92),)))
    diag = _one(_violations(func, plan), "R503", "missing")
    # k = 92 of row 0: thread 8*(0 % 4) + 92 // 16 = 5, slot 16*(0 // 4) + 92 % 16 = 12
    assert "thread 5, slot 12: the cell guard drops this cell" in diag.message
    assert "iteration (0, 92)" in diag.message


# ------------------------------------------------------- at a T.reduce_* destination

# a destination the rows form writes through its cell loop (a reduction folded by warp
# shuffles writes its registers by slot: codegen.lower.reduce)
REDUCE = "tests/programs/valid/serial_row_then_reduce.py"   # T.reduce_sum(row, s_frag)


def test_a_wrong_digit_at_a_reduce_destination_is_caught(monkeypatch):
    func, plan = _program(REDUCE)
    assert not _violations(func, plan)
    layout = next(l for b, l in plan.layouts.fragments.items() if b.name == "s_frag")
    assert cell_loop(layout).replica == t
    real = lowering.cell_loop
    monkeypatch.setattr(lowering, "cell_loop", lambda of, selects=None: replace(
        real(of, selects), replica=t % 32) if of == layout else real(of, selects))
    found = [d for d in _violations(func, plan) if "cell loop" in d.message]
    diag = next(d for d in found if d.code == "R503" and d.span.line == 27)
    assert "thread 32, slot 0: this cell runs iteration (0,) (replica 0) instead of the " \
        "layout's iteration (0,) (replica 32)" in diag.message, diag.message
    assert diag.counterexample.layout == layout       # drawn on the layout's own grid


# ------------------------------------------------- one CellLoop, printed and executed

def test_the_printer_holds_no_inverse_logic():
    """codegen/cuda_cells.py imports no numpy, calls no inverse, tests no selects against
    a limit: from codegen.lower.cells it takes the CellLoop and the variable names."""
    tree = ast.parse((ROOT / "codegen" / "cuda_cells.py").read_text())
    imported = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update((a.name, None) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.update((f"{node.module}.{a.name}", None) for a in node.names)
    assert not any(name.split(".")[0] == "numpy" for name in imported)
    from_lowering = {n for n in imported if n.startswith("lower.cells.")}
    assert from_lowering <= {"lower.cells.FLAT", "lower.cells.REP", "lower.cells.S",
                             "lower.cells.T", "lower.cells.CellLoop"}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not names & {"inverse_of", "inverse", "threads_of", "SELECT_LIMIT", "Window",
                        "window", "np", "floordiv", "mod", "simplify"}
    assert "cell_loop" in names                # it asks the lowering, and only it


def test_replacing_cell_loop_changes_the_cuda_and_the_simulation(monkeypatch):
    func, plan = _program(MINIMAL)
    before = render(plan).translation_unit()
    assert "const int rep = tid / 8;" in before
    _plant(monkeypatch, plan, 23, lambda c: replace(c, replica=t // 16))
    after = render(plan).translation_unit()
    assert "const int rep = tid / 16;" in after and "const int rep = tid / 8;" not in after
    assert _one(_violations(func, plan), "R503", "missing")


def test_the_rolled_decision_is_made_from_slots_and_selects():
    windows = Layout((64, 93), ("i", "k"), 8 * (Var("i") % 4) + Var("k") // 16,
                     16 * (Var("i") // 4) + Var("k") % 16, 32)
    assert windows.slots_per_thread == 256
    assert cell_loop(windows, SELECT_LIMIT // 256).rolled is None
    rolled = cell_loop(windows, SELECT_LIMIT // 256 + 1).rolled
    assert rolled == (f"unrolling its 256 slots would expand its run-time register slots "
                      f"into {SELECT_LIMIT + 256} selects (limit {SELECT_LIMIT})")
    one_slot = Layout((32,), ("j",), Var("j"), Var("j") * 0, 32)
    assert cell_loop(one_slot, 10 * SELECT_LIMIT).rolled is None   # nothing to roll


def test_describe_says_what_the_loop_decided():
    windows = Layout((64, 93), ("i", "k"), 8 * (Var("i") % 4) + Var("k") // 16,
                     16 * (Var("i") // 4) + Var("k") % 16, 32)
    text = cell_loop(windows, 0).describe()
    assert "256 slots per thread of 32, inverse by a window; unrolled\n" in text
    assert "; unrolled unless its body's run-time register selects, times 256, pass " \
        "8192" in cell_loop(windows).describe()
    assert "i = t // 8 + 4*(s // 16)" in text and "k = 16*(t % 8) + s % 16" in text
    assert "guard: 16*(t % 8) + s % 16 < 93" in text


def test_the_thread_program_gets_every_loop_s_cells():
    func, plan = _program(TABLED)
    found = list(lowering.loop_cells(plan))
    assert [loop.span.line for loop, _ in found] == [31, 40]
    assert all(c == cell_loop(plan.layouts.loops[loop]) for loop, c in found)
    assert found[1][1].tables is not None and "inverse by tables" in found[1][1].describe()


@pytest.mark.parametrize("extent, shift", [(93, 0), (35, 93), (13, 0), (128, 0)])
def test_every_kind_of_inverse_executes_as_the_forward_tables(extent, shift):
    """Window, shifted window, table, full: the executed loop is the layout's own
    placement, cell for cell, in the order the simulator's lanes take."""
    i, k = Var("i"), Var("k") + shift
    layout = Layout((64, extent), ("i", "k"), 8 * (i % 4) + k // 16, 16 * (i // 4) + k % 16,
                    32)
    cells = run_cells(cell_loop(layout))
    assert cells.findings == ()
    index, _ = layout.inverse()
    rel, slot = np.nonzero(index >= 0)
    assert np.array_equal(cells.thread, rel) and np.array_equal(cells.slot, slot)
    assert np.array_equal(cells.index, index[rel, slot])
