"""Faults planted into correct canonical plans (dataclasses.replace of one piece), each
caught by the simulator with its own code (docs/design.md §12): a wrong barrier count
(R500), a shuffle under a guard (R501), reads before writes (R502), racing workspace
accesses (R504), a missing update guard and a batch covering only the first chunk (R503).
The faults go into the transpose all-reduce (planner "transpose", the canonical plan's
fallback), whose chunks, workspace reductions and broadcasts have the most to break; the
segmented finalize's own faults are in test_segmented."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from verify_reducer.codegen.plan import plan_func
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.frontend import parse_file, parse_source
from verify_reducer.spec.indexexpr import Var
from verify_reducer.spec.physical import S, T, Barrier, FromWorkspace, Guard, Shuffle, ToWorkspace
from verify_reducer.verify.oracle.inputs import prepare

ROOT = Path(__file__).resolve().parent.parent
t, s = Var(T), Var(S)


def _plan(name: str):
    func = parse_file(str(ROOT / name)).func()
    return func, plan_func(func, "transpose")


def _with_reducer(plan, change, index: int = 0):
    reducers = list(plan.reducers)
    reducers[index] = change(reducers[index])
    return replace(plan, reducers=tuple(reducers))


def _with_finalize(plan, change, index: int = 0):
    def on_reducer(rp):
        return replace(rp, finalizes=(change(rp.finalizes[0]),) + rp.finalizes[1:])
    return _with_reducer(plan, on_reducer, index)


def _with_steps(plan, change, chunk: int = 0):
    def on_finalize(fp):
        chunks = list(fp.chunks)
        chunks[chunk] = replace(chunks[chunk], steps=tuple(change(list(chunks[chunk].steps))))
        return replace(fp, chunks=tuple(chunks))
    return _with_finalize(plan, on_finalize)


def _codes(func, plan, seed: int = 0) -> tuple[list[str], object]:
    result = simulate(plan, prepare(func, seed))
    return [d.code for d in result.violations], result


def _minimal():
    func = parse_file(str(ROOT / "examples/minimal_v2.py")).func()
    plan = plan_func(func, "transpose")
    inputs = {"x": np.arange(1, 9, dtype=np.float32), "out": np.zeros(1, np.float32)}
    return func, plan, inputs


def test_unplanted_plans_are_clean():
    for name in ("examples/minimal_v2.py", "tests/programs/valid/batch_hint.py",
                 "examples/gemv_pipelined.py"):
        func, plan = _plan(name)
        assert _codes(func, plan)[0] == []


def test_wrong_barrier_count_is_r500():
    func, plan = _plan("examples/minimal_v2.py")
    faulty = _with_steps(plan, lambda steps: [replace(st, count=st.count - 1)
                                              if isinstance(st, Barrier) else st
                                              for st in steps])
    codes, result = _codes(func, faulty)
    assert "R500" in codes
    message = next(d.message for d in result.violations if d.code == "R500")
    assert "expects 127 threads but 128 arrive" in message
    assert "threads 0..127" in message


def test_barrier_reached_by_half_the_participants_is_a_deadlock():
    func, plan = _plan("examples/minimal_v2.py")
    half = (Guard(t, "<", 64),)
    faulty = _with_steps(plan, lambda steps: [replace(st, guards=half)
                                              if isinstance(st, Barrier) else st
                                              for st in steps])
    codes, result = _codes(func, faulty)
    message = next(d.message for d in result.violations if d.code == "R500")
    assert "deadlock" in message and "threads 64..127" in message


def test_shuffle_under_a_guard_is_r501():
    func, plan = _plan("examples/minimal_v2.py")
    guarded = Shuffle(1, guards=(Guard(t, "<", 8),))
    codes, result = _codes(func, _with_steps(plan, lambda steps: [guarded] + steps))
    assert "R501" in codes
    message = next(d.message for d in result.violations if d.code == "R501")
    assert "threads 8..31" in message and "inactive" in message


def test_load_from_workspace_before_any_store_is_r502():
    func, plan = _plan("examples/minimal_v2.py")
    early = FromWorkspace(t)
    codes, result = _codes(func, _with_steps(plan, lambda steps: [early] + steps))
    assert "R502" in codes
    message = next(d.message for d in result.violations if d.code == "R502")
    assert "never wrote" in message


def test_read_of_a_poisoned_register_is_r502():
    source = '''
import tilelang.language as T

@T.prim_func
def main(x: T.Tensor((8,), T.float32), out: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_fragment((8,), T.float32)
        b = T.alloc_fragment((8,), T.float32)
        T.copy(x, a)
        for j in T.Parallel(8):
            out[j] = a[j] + b[j]
'''
    func = parse_source(source, "poison.py").func()
    codes, result = _codes(func, plan_func(func, "transpose"))
    assert codes == ["R502"]
    assert "b[0]" in result.violations[0].message
    assert result.violations[0].span.line == 11


def test_partial_poisoned_by_a_wrong_store_is_r502():
    """A store guarded to half the threads leaves the other half's broadcast words
    unwritten: their partials are poisoned and the result read from them too."""
    func, plan = _plan("examples/minimal_v2.py")
    def half(steps):
        return [replace(st, guards=(Guard(t, "<", 64),)) if isinstance(st, ToWorkspace)
                else st for st in steps]
    codes, _ = _codes(func, _with_steps(plan, half))
    assert "R502" in codes


def test_dropped_barrier_between_store_and_reduce_is_r504():
    func, plan = _plan("examples/minimal_v2.py")
    def drop_first_barrier(steps):
        first = next(i for i, st in enumerate(steps) if isinstance(st, Barrier))
        return steps[:first] + steps[first + 1:]
    codes, result = _codes(func, _with_steps(plan, drop_first_barrier))
    assert "R504" in codes
    message = next(d.message for d in result.violations if d.code == "R504")
    assert "write/read" in message and "threads" in message


def test_two_threads_storing_one_word_is_r504():
    func, plan = _plan("examples/gemv_pipelined.py")
    collide = ToWorkspace(s)          # every thread stores slot s to the same word
    faulty = _with_steps(plan, lambda steps: [collide if isinstance(st, ToWorkspace)
                                              else st for st in steps])
    codes, result = _codes(func, faulty)
    assert "R504" in codes
    message = next(d.message for d in result.violations if d.code == "R504")
    assert "write/write by threads 0 and 1" in message


def test_missing_update_guard_is_r503():
    func, plan, inputs = _minimal()
    def unguard(rp):
        return replace(rp, sites=tuple(replace(site, guard_replica=None) for site in rp.sites))
    result = simulate(_with_reducer(plan, unguard), inputs)
    assert result.outputs["out"][0] == 576.0
    (r503,) = [d for d in result.violations if d.code == "R503"]
    assert "entered total[0] 16 times" in r503.message


def test_guard_no_replica_passes_names_omissions():
    func, plan, inputs = _minimal()
    def nobody(rp):
        return replace(rp, sites=tuple(replace(site, guard_replica=99) for site in rp.sites))
    result = simulate(_with_reducer(plan, nobody), inputs)
    assert result.outputs["out"][0] == 0.0
    (r503,) = [d for d in result.violations if d.code == "R503"]
    assert "entered total[0] 0 times" in r503.message


def test_batch_covering_only_the_first_chunk_is_r503():
    func, plan = _plan("tests/programs/valid/batch_hint.py")
    first_only = _with_finalize(plan, lambda fp: replace(fp, chunks=fp.chunks[:1]))
    codes, result = _codes(func, first_only)
    assert set(codes) == {"R503"}
    messages = " ".join(d.message for d in result.violations)
    assert "acc[4]" in messages            # the first uncovered output is named
    assert "acc[0]" not in messages        # the covered chunk is right


def test_every_violation_has_a_span():
    func, plan = _plan("examples/minimal_v2.py")
    faulty = _with_steps(plan, lambda steps: [Shuffle(3, guards=(Guard(t, "<", 4),))] +
                         [replace(st, count=7) if isinstance(st, Barrier) else st
                          for st in steps])
    _, result = _codes(func, faulty)
    assert result.violations
    assert all(d.span is not None and d.severity == "error" for d in result.violations)


def test_reduction_of_unwritten_words_leaves_its_result_unwritten():
    # Regression: the "every source word written" flag of a workspace reduction was
    # computed with `~` on a Python bool (always truthy), so the reduction's result was
    # marked written even when it reduced never-written words, and the broadcast that
    # read it went unreported. Dropping the store must poison the whole chain.
    func, plan, inputs = _minimal()
    planted = _with_steps(plan, lambda steps: [st for st in steps
                                               if not isinstance(st, ToWorkspace)])
    result = simulate(planted, inputs)
    poisoned = [d.message for d in result.violations if d.code == "R502"]
    assert any("workspace reduction" in m for m in poisoned)
    assert len(poisoned) >= 2, poisoned
