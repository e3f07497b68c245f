"""Barriers are plan data (issue 26): codegen.plan_barriers decides every barrier of the
kernel body into PhysicalPlan.barriers, the renderer prints exactly those and the
simulator passes exactly those, tracking the order of every access to every shared
buffer. So a barrier removed from the plan (the planted fault: what a lowering mistake
would do) is a race the simulator reports on the CPU — R504 naming both accesses — and
it is gone from the CUDA, which has no barrier logic of its own."""
from __future__ import annotations

import dataclasses
import difflib
import re
from pathlib import Path

import pytest

from verify_reducer.codegen.cuda import render
from verify_reducer.interp.simulate import simulate
from verify_reducer.verify.oracle import pipeline

ROOT = Path(__file__).resolve().parent.parent

# (program, where, line of the barrier's statement): barriers real kernels need, each
# ordering a shared-memory write of one thread with an access of another
NEEDED = [
    ("examples/warp_group.py", "after", 21),             # a T.ws group's shared writes
    ("examples/gemv_pipelined.py", "landed", 33),        # a pipeline stage has landed
    ("examples/gemv_pipelined.py", "refill", 33),        # a stage read before its refill
    ("tests/programs/valid/reduce_shared_source.py", "after", 31),    # T.Parallel
    ("tests/programs/valid/reduce_shared_source.py", "before", 36),   # T.reduce_* into shared
    ("tests/programs/valid/rows_of_three.py", "after", 23),
    ("tests/programs/valid/builtin_reshape.py", "staged", 19),        # T.reduce_*'s rows
    ("tests/programs/valid/factory_trace_time.py", "after", 19),
    ("tests/programs/valid/gemv_shared_vector.py", "landed", 33),
]

RACE = re.compile(r"shared-memory race on (\w+\[[\d, ]+\])[^:]*: thread (\d+) (writes|reads) it "
                  r"at line (\d+) and thread (\d+) (writes|reads) it at line (\d+), with no "
                  r"barrier both passed in between")
BARRIER_LINE = re.compile(r"^\s*(__syncthreads\(\);|reducer_barrier\(\d+, \d+\);)  // ")


def _load(name: str):
    loaded = pipeline.load(str(ROOT / name))
    return loaded, pipeline.make_plan(loaded, "canonical")


def _simulate(loaded, plan):
    return pipeline.simulate_plan(plan, "canonical", loaded.inputs(0, None))


def _without(plan, where: str, line: int):
    barrier = next(b for b in plan.barriers.items
                   if b.where == where and b.stmt.span.line == line)
    return barrier, dataclasses.replace(plan, barriers=plan.barriers.without(barrier))


@pytest.mark.parametrize("name,where,line", NEEDED)
def test_a_barrier_removed_from_the_plan_is_a_race_naming_both_accesses(name, where, line):
    loaded, plan = _load(name)
    assert _simulate(loaded, plan).violations == []
    _, faulty = _without(plan, where, line)
    races = [d for d in _simulate(loaded, faulty).violations if d.code == "R504"]
    assert races, f"{name}: no R504 without the barrier {where} line {line}"
    found = RACE.search(races[0].message)
    assert found, races[0].message
    element, first, first_verb, first_line, second, second_verb, second_line = \
        found.groups()
    assert first != second                            # two threads
    assert "writes" in (first_verb, second_verb)      # one of them writes
    assert races[0].span.line == int(second_line)     # reported at the later access


@pytest.mark.parametrize("name", sorted({case[0] for case in NEEDED}))
def test_the_renderer_prints_exactly_the_plans_barriers(name):
    """Every barrier line of the kernel body is a plan barrier (the collectives' own
    named barriers are printed bare, as steps), and a barrier removed from the plan is
    exactly one line less in the CUDA: the renderer places none of its own."""
    _, plan = _load(name)
    source = render(plan).source.splitlines()
    assert sum(bool(BARRIER_LINE.match(text)) for text in source) == len(plan.barriers.items)
    for barrier in plan.barriers.items:
        _, faulty = _without(plan, barrier.where, barrier.stmt.span.line)
        changed = [d for d in difflib.ndiff(source, render(faulty).source.splitlines())
                   if d[:2] in ("- ", "+ ")]
        assert len(changed) == 1 and changed[0].startswith("- "), changed
        assert BARRIER_LINE.match(changed[0][2:])


def test_a_barrier_not_every_participant_reaches_is_r500():
    """The simulator passes the plan's barrier with the threads that run the
    statement: a barrier over more threads than arrive deadlocks (R500)."""
    loaded, plan = _load("examples/warp_group.py")
    barrier = next(b for b in plan.barriers.items if b.where == "after")
    offset, count = barrier.participants
    wider = dataclasses.replace(barrier, participants=(offset, count + 32))
    items = tuple(wider if b is barrier else b for b in plan.barriers.items)
    faulty = dataclasses.replace(plan, barriers=dataclasses.replace(plan.barriers,
                                                                    items=items))
    messages = [d.message for d in _simulate(loaded, faulty).violations if d.code == "R500"]
    assert messages and "never arrive (deadlock)" in messages[0]
    assert f"expects {count + 32} threads but only {count} arrive" in messages[0]


def test_the_plan_text_lists_the_barriers():
    _, plan = _load("examples/gemv_pipelined.py")
    from verify_reducer.codegen.plan_text import format_plan
    text = format_plan(plan)
    assert f"barriers of the kernel body: {len(plan.barriers.items)}" in text
    assert "line 33 SerialFor, landed: __syncthreads, threads 0..127: every thread's " \
        "tiles of this stage have landed" in text


def test_a_replicated_parallel_that_updates_shared_memory_runs_in_replica_0():
    """rms_norm_splitk's `A_shared[i, j] *= A_powsum[i]` under a loop layout replicated
    128 times: every replica would read-modify-write each element (a race the simulator
    reports); the plan gives the body to replica 0 alone, and both executors follow."""
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    import test_upstream
    path = ROOT / "tests/upstream/rms_norm_splitk.py"
    loaded = pipeline.load(str(path), None, test_upstream.bound_source(path))
    plan = pipeline.make_plan(loaded, "canonical")
    assert [loop.span.line for loop in plan.one_writer_loops] == [39]
    assert "if (rep == 0) {" in render(plan).source
    everyone = dataclasses.replace(plan, one_writer_loops=())
    values = test_upstream.reference_inputs(path, loaded)
    # the first block shows it (every block runs the same loop): the whole grid is seconds
    races = [d.message for d in simulate(everyone, values, blocks=[(0,)]).violations
             if d.code == "R504"]
    assert races and RACE.search(races[0])
