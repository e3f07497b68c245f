"""Race tracking of what used to escape it (issue 26): a cp.async in flight against an
ordinary access of its element — a read of a stage before the wait_group that lands it,
a write into it — and a finalize's write into a shared destination. Each planted fault
is R504 on the CPU, naming both accesses; and the plan's barriers are in its JSON."""
from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from verify_reducer.codegen.lower import pipeline as lowered
from verify_reducer.codegen.lower.pipeline import Issue, Wait, lower_pipeline
from verify_reducer.codegen.plan_text import plan_json
from verify_reducer.verify.oracle import pipeline

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from test_barrier_faults import RACE  # noqa: E402

IN_FLIGHT = re.compile(
    r"shared-memory race on (\w+)\[[\d, ]+\] \(stage (\d+)\): thread (\d+) writes it at "
    r"line (\d+) \(a cp\.async\) and thread (\d+) (reads|writes) it at line (\d+), before "
    r"the cp\.async that writes it completed")


def _load(name: str):
    loaded = pipeline.load(str(ROOT / name))
    return loaded, pipeline.make_plan(loaded, "canonical")


def _races(loaded, plan) -> list[str]:
    found = pipeline.simulate_plan(plan, "canonical", loaded.inputs(0, None)).violations
    return [d.message for d in found if d.code == "R504"]


def _with_schedule(monkeypatch, change):
    """The simulator runs the plan's pipeline schedule changed by `change` (a planted
    lowering fault: the renderer would print the same)."""
    original = lower_pipeline
    monkeypatch.setattr(lowered, "lower_pipeline",
                        lambda plan, pipe: change(original(plan, pipe)))


def _kinds(events) -> list[str]:
    return [type(e).__name__ for e in events]


def test_the_pipelined_gemv_has_no_race():
    loaded, plan = _load("examples/gemv_pipelined.py")
    assert _races(loaded, plan) == []


def test_a_wait_group_moved_after_the_first_read_of_the_stage_is_r504(monkeypatch):
    def late_wait(s):
        events = list(s.iteration)
        wait = events.pop(_kinds(events).index("Wait"))
        first_read = next(i for i, e in enumerate(events)
                          if type(e).__name__ == "Run" and e.stmt.span.line == 35)
        events.insert(first_read + 1, wait)
        return dataclasses.replace(s, iteration=tuple(events))
    _with_schedule(monkeypatch, late_wait)
    loaded, plan = _load("examples/gemv_pipelined.py")
    races = _races(loaded, plan)
    assert races, "a stage read before its wait_group passed the simulator"
    found = IN_FLIGHT.search(races[0])
    assert found, races[0]
    buffer, stage, writer, write_line, reader, verb, read_line = found.groups()
    assert (buffer, stage, write_line, verb, read_line) == ("A_shared", "0", "34", "reads",
                                                            "35")


def test_a_wait_group_count_raised_is_r504(monkeypatch):
    def lax(s):
        return dataclasses.replace(s, iteration=tuple(
            Wait(e.pending + 1) if isinstance(e, Wait) else e for e in s.iteration))
    _with_schedule(monkeypatch, lax)
    loaded, plan = _load("examples/gemv_pipelined.py")
    races = _races(loaded, plan)
    assert races and IN_FLIGHT.search(races[0]), races


def test_a_cp_async_into_a_stage_still_in_flight_is_r504(monkeypatch):
    """The refill issued before the wait: iteration 2's tile goes into stage 0 while
    iteration 0's cp.async into it has not landed (two writes, unordered)."""
    def early_refill(s):
        events = list(s.iteration)
        refill = next(i for i, e in enumerate(events) if isinstance(e, Issue))
        issue, commit = events.pop(refill), events.pop(refill)
        return dataclasses.replace(s, iteration=(issue, commit, *events))
    _with_schedule(monkeypatch, early_refill)
    loaded, plan = _load("examples/gemv_pipelined.py")
    races = _races(loaded, plan)
    found = [IN_FLIGHT.search(m) for m in races]
    writes = [f for f in found if f is not None and f.group(6) == "writes"]
    assert writes, races
    assert writes[0].group(4) == writes[0].group(7) == "34"   # both the cp.async of line 34


# ----------------------------------------------------------------- a finalize into shared

def _without(plan, where: str, line: int):
    barrier = next(b for b in plan.barriers.items
                   if b.where == where and b.stmt.span.line == line)
    return dataclasses.replace(plan, barriers=plan.barriers.without(barrier))


def test_a_finalize_into_shared_memory_is_race_tracked():
    """The barrier after a finalize into a shared destination removed from the plan:
    the T.copy out of it reads what other threads wrote, unordered — R504."""
    loaded, plan = _load("tests/programs/valid/finalize_to_shared.py")
    assert _races(loaded, plan) == []
    races = _races(loaded, _without(plan, "after", 23))
    assert races
    found = RACE.search(races[0])
    assert found, races[0]
    element, first, first_verb, first_line, second, second_verb, second_line = \
        found.groups()
    assert element.startswith("res_shared[") and first != second
    assert (first_verb, first_line, second_verb, second_line) == ("writes", "23", "reads",
                                                                   "24")


def test_a_finalize_into_shared_memory_after_unfinished_readers_is_r504():
    """The barrier before it removed: an earlier reader of the destination is not done
    when the finalize writes (a second finalize into the same buffer)."""
    text = (ROOT / "tests/programs/valid/finalize_to_shared.py").read_text()
    twice = text.replace("        T.copy(res_shared, out)\n",
                         "        T.copy(res_shared, out)\n"
                         "        T.reducer_init(acc)\n"
                         "        for i, j in T.Parallel(R, C):\n"
                         "            T.reducer_update(acc[i], x_frag[i, j])\n"
                         "        T.finalize_reducer(acc, res_shared)\n"
                         "        T.copy(res_shared, out)\n")
    from verify_reducer.codegen.plan import plan_func
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.spec.frontend import parse_source
    from verify_reducer.verify.oracle.inputs import prepare
    plan = plan_func(parse_source(twice, "<test>").func(), "canonical")
    inputs = prepare(plan.func, seed=0)
    assert [d for d in simulate(plan, inputs).violations if d.code == "R504"] == []
    faulty = _without(plan, "before", 28)
    races = [d.message for d in simulate(faulty, inputs).violations if d.code == "R504"]
    assert races and RACE.search(races[0]), races
    assert "reads it at line 24 and thread" in races[0] and "writes it at line 28" in races[0]


# ----------------------------------------------------------------- the barriers in JSON

def test_the_plan_json_lists_every_barrier_and_follows_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    _, plan = _load("examples/gemv_pipelined.py")
    doc = json.loads(json.dumps(plan_json(plan)))
    barriers = doc["barriers"]
    assert len(barriers) == len(plan.barriers.items)
    for got, b in zip(barriers, plan.barriers.items):
        assert (got["line"], got["where"], got["id"]) == (b.stmt.span.line, b.where, b.id)
        assert (got["participants"]["offset"], got["participants"]["count"]) == \
            b.participants
    assert {"line": 33, "statement": "SerialFor", "where": "landed",
            "participants": {"offset": 0, "count": 128}, "id": 0, "arrivals": 128,
            "why": "every thread's tiles of this stage have landed",
            "async_proxy": False} in barriers
    from verify_reducer.json_schemas import validator
    validator = validator("emit.schema.json#/$defs/plan")
    validator.validate(doc)
    doc["barriers"][0]["where"] = "somewhere"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(doc)
