"""The copies and fills of the thread program (codegen.lower.copies): one lowering,
printed by codegen.cuda_copies and executed by interp.sim_copies / the simulator's fill.

- the printer holds no partition, vector, guard or one-writer logic (an AST check), and
  a partition planted into the lowering (lower_copy monkeypatched) changes the rendered
  CUDA and the simulator's per-thread moves alike;
- faults planted into a lowered copy are caught by the simulator on the CPU: an element
  stored by two threads (R504, both accesses named), an element left to a thread that
  does not run the copy (R502 where it is read);
- the lowering's decisions, as describe() states them: where the partition comes from,
  the vector run or why none, the border tests, hoisted starts, one writer."""
from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.lower import copies as lowered
from verify_reducer.codegen.plan import plan_func
from verify_reducer.interp.sim_statics import PlanStatics
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_file
from verify_reducer.spec.layout import default_partition
from verify_reducer.verify.oracle.inputs import prepare

ROOT = Path(__file__).resolve().parent.parent
TAIL = "tests/programs/valid/copy_tail_not_vectorized.py"   # x -> s (shared) -> out

# what chooses a partition, a vector run, a border test or a writer: only the lowering
# may call these
DECIDERS = {"default_partition", "copy_runs", "vector_runs", "runs_of", "multiple_of",
            "cooperative_layout", "run_partition", "run_length", "border_guards",
            "region_indices", "region_element", "affine", "vector_elements", "index_names",
            "fragment", "rename", "statement_ranges"}
DECIDING_MODULES = ("spec.layout", "spec.addressing", "layout_copy")


def _called_and_imported(path: Path) -> tuple[set[str], set[str], set[str]]:
    """(names called or referenced as attributes, names imported, modules imported
    from) in a module's source."""
    tree = ast.parse(path.read_text())
    called, names, modules = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called.add(func.attr if isinstance(func, ast.Attribute) else
                       getattr(func, "id", ""))
        elif isinstance(node, ast.Attribute):
            called.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            modules.add(node.module or "")
            names.update(a.name for a in node.names)
    return called, names, modules


@pytest.mark.parametrize("module", ["codegen/cuda_copies.py", "interp/sim_copies.py"])
def test_the_executors_decide_nothing_of_a_copy(module):
    called, names, modules = _called_and_imported(ROOT / module)
    assert not (called | names) & DECIDERS, (called | names) & DECIDERS
    if module.startswith("codegen"):
        assert not [m for m in modules if m.endswith(DECIDING_MODULES)], modules
    assert "lower_copy" in called                      # the one place a copy is decided
    # and the printer's last piece of vector knowledge is C spelling
    vector = _called_and_imported(ROOT / "codegen/cuda_vector.py")
    assert vector[2] == {"__future__"}


def _tail():
    func = parse_file(str(ROOT / TAIL)).func()
    plan = plan_func(func, "canonical")
    copy = next(s for s in plan.layouts.participants if isinstance(s, ir.Copy)
                and s.src.buffer.name == "x")
    return func, plan, copy


def _planted(monkeypatch, change):
    """lower_copy with `change` applied to the lowering of the copy x -> s (both
    executors call codegen.lower.copies.lower_copy, so both see it)."""
    real = lowered.lower_copy

    def lower_copy(plan, stmt, participants):
        moves = real(plan, stmt, participants)
        return change(moves) if stmt.src.buffer.name == "x" else moves
    monkeypatch.setattr(lowered, "lower_copy", lower_copy)


def _per_element(func, plan, copy) -> dict[int, list[int]]:
    """The simulator's writers of each element of copy's destination, from the moves
    it executed (block 0)."""
    simulate(plan, prepare(func, 0), blocks=[(0,)])
    statics = PlanStatics.of(plan)
    moves = next(m for key, m in statics.moves.items() if key[0] is copy
                 and key[1:] == (0,))
    flat = np.arange(moves.dst.start, moves.dst.stop) if isinstance(moves.dst, slice) \
        else moves.dst
    writers: dict[int, list[int]] = {}
    for thread, element in zip(moves.dst_threads, flat):
        writers.setdefault(int(element), []).append(int(thread))
    return writers


def test_a_planted_partition_changes_the_cuda_and_the_simulator_alike(monkeypatch):
    func, plan, copy = _tail()
    base = render(plan).source
    # the plan's partition: 2 runs of 4 floats, thread c moves run c
    assert _per_element(func, plan, copy) == {e: [e // 4] for e in range(8)}
    moves = lowered.lower_copy(plan, copy, plan.layouts.participants[copy])
    assert moves.source == "layout map" and not moves.one_writer
    # planted: the participants' default partition, replicated 16 times over 128
    # threads, replica 0 storing (thread e moves element e)
    planted = default_partition((8,), 128, 0, moves.partition.index_vars)
    assert planted.replicate == 16
    _planted(monkeypatch, lambda m: replace(m, partition=planted, one_writer=True))
    func, plan, copy = _tail()                                   # fresh per-plan caches
    text = render(plan).source
    assert text != base
    assert f"T.copy x -> s: {planted.describe()}" in text
    assert f"T.copy x -> s: {moves.partition.describe()}" in base
    section = text[text.index("T.copy x -> s"):text.index("T.copy s -> out")]
    assert "rep == 0" in section and "rep == 0" not in \
        base[base.index("T.copy x -> s"):base.index("T.copy s -> out")]
    assert _per_element(func, plan, copy) == {e: [e] for e in range(8)}


def test_replicas_store_only_where_the_lowering_says_one_writer(monkeypatch):
    """The one-writer rule is the lowering's: left off on a replicated partition, every
    replica stores the element (16 writers each, the same value: a benign broadcast,
    interp.violations.store_conflict), exactly as the printed kernel would."""
    func, plan, copy = _tail()
    planted = default_partition((8,), 128, 0, lowered.lower_copy(
        plan, copy, plan.layouts.participants[copy]).partition.index_vars)
    _planted(monkeypatch, lambda m: replace(m, partition=planted, one_writer=False))
    func, plan, copy = _tail()
    assert "rep == 0" not in render(plan).source
    writers = _per_element(func, plan, copy)
    assert writers == {e: [e + 8 * r for r in range(16)] for e in range(8)}


def test_a_store_past_the_tile_is_r505(monkeypatch):
    """A lowering whose destination index runs 8 elements on: every store leaves the
    shared tile s[8]; the simulator makes none of them and names the first."""
    from verify_reducer.spec.indexexpr import Const
    _planted(monkeypatch, lambda m: replace(
        m, dst_index=tuple(ix + Const(8) for ix in m.dst_index), vector=None))
    func, plan, _ = _tail()
    result = simulate(plan, prepare(func, 0))
    faults = [d for d in result.violations if d.code == "R505"]
    assert faults and faults[0].span.line == 16
    assert faults[0].message.startswith("shared write s[8] by thread 0 is outside s[8]")


def test_an_element_left_to_no_thread_is_read_unwritten(monkeypatch):
    """A partition whose threads are not those that run the copy (shifted past the
    block's 128): no thread stores the tile, and the copy that reads it back finds
    shared memory uninitialized (R502) — on the CPU."""
    func, plan, copy = _tail()
    _planted(monkeypatch, lambda m: replace(m, partition=replace(m.partition, offset=128)))
    func, plan, copy = _tail()
    result = simulate(plan, prepare(func, 0))
    codes = {d.code for d in result.violations}
    assert "R502" in codes, codes
    (first,) = [d for d in result.violations if d.code == "R502"][:1]
    assert first.span.line == 17 and "s" in first.message


def test_unplanted_copies_are_clean():
    func, plan, _ = _tail()
    inputs = prepare(func, 0)
    result = simulate(plan, inputs)
    assert not result.violations
    x = np.concatenate([np.asarray(inputs["x"]).reshape(-1), np.zeros(2, np.float32)])
    assert result.outputs["out"].tolist() == [x[0:8].tolist(), x[4:12].tolist()]


def _lowered_copies(name: str, planner: str = "canonical"):
    func = parse_file(str(ROOT / name)).func()
    plan = plan_func(func, planner)
    return plan, [lowered.lower_copy(plan, s, p) for s, p in plan.layouts.participants.items()
                  if isinstance(s, ir.Copy)]


def test_describe_states_each_decision():
    _, (into, out) = _lowered_copies(TAIL)
    text = into.describe()
    assert "partition from the layout map" in text
    assert "element by element: a border test of x could split a run" in text
    assert "src border tests: dim 0: < extent" in text      # x[4*bx + i], i < 8
    assert "border tests" not in out.describe()             # out[bx, i]: always inside
    _, copies = _lowered_copies("tests/programs/valid/gemv_shared_vector.py")
    vectors = [m for m in copies if m.vector is not None]
    assert vectors and all(m.vector.elements == 4 for m in vectors)
    assert "4 elements per 128-bit access" in vectors[0].describe()


def test_a_non_affine_start_is_hoisted_and_kept_scalar():
    _, copies = _lowered_copies("tests/programs/valid/simt_copy_var_start.py")
    (moves,) = [m for m in copies if m.hoisted]
    assert moves.vector is None and moves.no_vector == "a region start is hoisted (not affine)"
    names = {h.name for h in moves.hoisted}
    index_vars = {v for ix in moves.src_index + moves.dst_index for v in ix.free_vars()}
    assert names <= index_vars                    # the indices read the hoisted local
    assert "hoisted (not affine)" in moves.describe()


def test_a_reducer_held_whole_copies_by_the_participants_partition():
    """A reducer every thread holds whole, copied over a region its storage does not
    match: the participants' default partition, replica 0 storing — the GPU's moves,
    which the simulator now executes (it used to move every holder's copy)."""
    name = "tests/programs/valid/serial_row_replicated.py"
    plan, copies = _lowered_copies(name)
    (moves,) = [m for m in copies if m.source == "participants"]
    assert moves.one_writer and moves.partition.replicate == 32
    func = parse_file(str(ROOT / name)).func()
    plan = plan_func(func, "canonical")
    result = simulate(plan, prepare(func, 0))
    assert not result.violations
    statics = PlanStatics.of(plan)
    executed = [m for key, m in statics.moves.items() if key[0] is moves.stmt or
                key[0].span == moves.stmt.span]
    assert executed and all(list(m.dst_threads) == [0] for m in executed)


def test_fills_are_lowered_once():
    plan, _ = _lowered_copies(TAIL)
    func = parse_file(str(ROOT / "examples/gemv_pipelined.py")).func()
    plan = plan_func(func, "canonical")
    fills = [lowered.lower_fill(plan, s, p) for s, p in plan.layouts.participants.items()
             if isinstance(s, ir.Fill)]
    for fill in fills:
        assert fill.describe().startswith(f"line {fill.stmt.span.line}: T.fill")
        if fill.partition is not None and fill.source == "participants":
            region = fill.stmt.region
            assert fill.partition.shape == tuple(region.extents)


def test_an_unlowerable_copy_is_named():
    """A reducer side whose storage covers part of the region and not every thread:
    no thread program moves it (the renderer's Unsupported, the simulator's R100)."""
    from verify_reducer.spec.indexexpr import Var
    from verify_reducer.spec.layout import Layout
    name = "tests/programs/valid/serial_row_replicated.py"
    func = parse_file(str(ROOT / name)).func()
    plan = plan_func(func, "canonical")
    copy = next(s for s in plan.layouts.participants if isinstance(s, ir.Copy)
                and s.src.buffer.is_reducer)
    rp = plan.reducers[0]
    # storage of 2 elements that threads 0..15 hold: the copy's 1 element is part of it
    narrow = Layout((2,), ("i",), Var("rep") + Var("i") * 0, Var("i"), 32, 16)
    planted = replace(plan, reducers=(replace(rp, storage=narrow),) + plan.reducers[1:])
    with pytest.raises(lowered.Unlowerable, match="storage layout does not cover"):
        lowered.lower_copy(planted, copy, plan.layouts.participants[copy])


def test_the_simulator_names_an_unlowerable_copy(monkeypatch):
    def refuse(plan, stmt, participants):
        raise lowered.Unlowerable(f"line {stmt.span.line}: planted")
    monkeypatch.setattr(lowered, "lower_copy", refuse)
    func, plan, _ = _tail()
    with pytest.raises(DiagnosticError) as caught:
        simulate(plan, prepare(func, 0))
    (refused,) = caught.value.diagnostics
    assert (refused.code, refused.message, refused.span.line) == ("R100", "line 16: planted", 16)
