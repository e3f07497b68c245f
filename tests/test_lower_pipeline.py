"""A pipelined loop's cp.async schedule is lowered once (codegen.lower.pipeline): the
ordered events of the prologue, one iteration and the epilogue, with the stage index as
an index expression. The CUDA renderer prints exactly these events, the simulator
executes exactly these: a schedule changed in one place changes both."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.lower import pipeline as lowered
from verify_reducer.codegen.lower.pipeline import (
    Advance, Commit, Drained, EnterStage, Fence, Issue, LeaveStage, Prefetch, Run, Wait,
    lower_pipeline)
from verify_reducer.codegen.plan import plan_func
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.indexexpr import Const, var
from verify_reducer.verify.oracle.inputs import prepare

ROOT = Path(__file__).resolve().parent.parent
GEMV = (ROOT / "examples" / "gemv_pipelined.py").read_text()


def _plan(text: str = GEMV):
    return plan_func(parse_source(text, "<test>").func(), "canonical")


def _schedule(plan):
    [pipe] = [p for p in plan.pipelines if p.active]
    return pipe, lower_pipeline(plan, pipe)


def _shape(events) -> list[str]:
    return [type(e).__name__ + (f"@{e.stmt.span.line}" if isinstance(e, Run) else "")
            for e in events]


def test_the_schedule_of_the_streaming_gemv():
    plan = _plan()
    pipe, s = _schedule(plan)
    assert (s.start, s.stop, s.stages) == (0, 8, 2)
    assert [b.name for b in s.buffers] == ["A_shared", "x_frag_stage"]
    assert _shape(s.prologue) == ["Fence", "Issue", "Commit", "Issue", "Commit"]
    # the stage is released right after line 36 reads it: refilled there
    assert _shape(s.iteration) == ["Wait", "Fence", "EnterStage", "Run@35", "Run@36",
                                   "Fence", "Issue", "Commit", "Run@37", "LeaveStage"]
    assert _shape(s.epilogue) == ["Drained"]
    first, second = (e for e in s.prologue if isinstance(e, Issue))
    assert (first.iteration, first.ordinal, first.guarded) == (Const(0), 0, False)
    assert second.iteration == Const(1) and second.copies == pipe.issues
    refill = next(e for e in s.iteration if isinstance(e, Issue))
    assert refill.iteration == var("ko") + 2 and refill.guarded and refill.ordinal is None
    assert next(e for e in s.iteration if isinstance(e, Wait)).pending == pipe.pending
    # the barriers are the plan's own objects, placed where the plan names them
    fences = [e.barrier for e in s.prologue + s.iteration if isinstance(e, Fence)]
    assert [b.where for b in fences] == ["before", "landed", "refill"]
    assert all(any(b is p for p in plan.barriers.items) for b in fences)


def test_the_stage_index_is_an_index_expression():
    _, s = _schedule(_plan())
    ko = np.arange(8)
    issued = var("ko") + 2
    assert np.array_equal(s.stage(issued).evaluate({"ko": ko}), (ko + 2) % 2)
    a = s.buffers[0]
    assert np.array_equal(s.stage_offset(a, var("ko")).evaluate({"ko": ko}),
                          (ko % 2) * a.size)
    assert s.stage(Const(3)).evaluate({}) == 1


def test_a_top_issue_schedule_refills_before_the_wait_and_releases_at_the_end():
    plan = _plan()
    pipe, _ = _schedule(plan)
    top = replace(plan, pipelines=(replace(pipe, refill_after=None, ahead=1),))
    _, s = _schedule(top)
    assert _shape(s.iteration)[:4] == ["Issue", "Commit", "Wait", "Fence"]
    assert _shape(s.iteration)[-1] == "LeaveStage"      # the plan has no "released" here


def test_past_the_end_the_prologue_issues_nothing_but_still_commits():
    # two iterations, three stages: the prologue's third group is empty
    text = GEMV.replace("num_stages=2", "num_stages=3").replace("K = 512", "K = 128")
    plan = _plan(text)
    _, s = _schedule(plan)
    assert s.stop == 2
    issues = [e for e in s.prologue if isinstance(e, Issue)]
    assert [e.empty for e in issues] == [False, False, True]
    assert sum(isinstance(e, Commit) for e in s.prologue) == 3
    source = render(plan).source
    assert "// prologue: the tiles of iteration 2\n  reducer_cp_async_commit();" in source
    assert simulate(plan, prepare(plan.func, seed=0)).violations == []


def test_prefetched_registers_advance_where_the_copy_stands():
    plan = _plan()
    pipe, _ = _schedule(plan)
    copy = next(s for s in pipe.loop.body if s.span.line == 36)
    prefetching = replace(plan, pipelines=(replace(pipe, prefetched=(copy,)),))
    _, s = _schedule(prefetching)
    assert isinstance(s.prologue[-1], Prefetch) and s.prologue[-1].iteration == Const(0)
    advance = next(e for e in s.iteration if isinstance(e, Advance))
    assert advance.copy is copy
    assert advance.prefetch.iteration == var("ko") + 1 and advance.prefetch.guarded


def test_describe_names_every_event():
    _, s = _schedule(_plan())
    text = s.describe()
    assert "stage(iteration) = iteration % 2" in text
    assert "issue iteration ko + 2 if it is below the stop as cp.async into its stage: " \
        "line 34 A -> A_shared, line 36 x -> x_frag_stage" in text
    assert "wait_group 1" in text and "commit group" in text
    assert "barrier (landed, threads 0..127)" in text
    assert "nothing in flight" in text


def _reordered(schedule, move, before):
    """The schedule with the steady-state event `move` placed before the event
    `before` (both given by their index in schedule.iteration)."""
    events = list(schedule.iteration)
    item = events.pop(move)
    events.insert(before if before < move else before - 1, item)
    return replace(schedule, iteration=tuple(events))


def test_the_renderer_prints_the_events_in_the_schedules_order(monkeypatch):
    """The printer has no schedule of its own: the wait moved in the schedule moves in
    the CUDA, and nothing else changes."""
    plan = _plan()
    _, s = _schedule(plan)
    source = render(plan).source
    loop = source.split("for (int ko = 0; ko < 8; ++ko)")[1]
    assert loop.index("reducer_cp_async_wait<1>();") < loop.index("// line 35")
    wait = _shape(s.iteration).index("Wait")
    after_read = _shape(s.iteration).index("Run@36")
    moved = _reordered(s, wait, after_read)
    monkeypatch.setattr("verify_reducer.codegen.cuda_pipeline.lower_pipeline",
                        lambda plan, pipe: moved)
    changed = render(plan).source.split("for (int ko = 0; ko < 8; ++ko)")[1]
    assert changed.index("// line 35") < changed.index("reducer_cp_async_wait<1>();")
    assert sorted(changed.splitlines()) == sorted(loop.splitlines())


def test_the_simulator_executes_the_same_schedule(monkeypatch):
    """The same moved wait in the simulator: the stage is read before it landed."""
    plan = _plan()
    _, s = _schedule(plan)
    moved = _reordered(s, _shape(s.iteration).index("Wait"),
                       _shape(s.iteration).index("Run@36"))
    monkeypatch.setattr(lowered, "lower_pipeline", lambda plan, pipe: moved)
    sim = simulate(plan, prepare(plan.func, seed=0))
    assert "R504" in {d.code for d in sim.violations}


def test_every_event_kind_is_printed_and_executed():
    """Each event class of the module is handled by both executors (a new kind that
    one of them skipped would print nothing or run nothing)."""
    import inspect
    from verify_reducer.codegen import cuda_pipeline
    from verify_reducer.interp import sim_pipeline
    kinds = {Fence, Issue, Commit, Wait, EnterStage, LeaveStage, Run, Prefetch, Advance,
             Drained, lowered.WhileRunning}
    assert set(lowered.Event.__args__) == kinds
    printer = inspect.getsource(cuda_pipeline._Printer.events)
    runner = inspect.getsource(sim_pipeline.PipelineExecution._events)
    for kind in kinds:
        assert kind.__name__ in printer, kind
        assert f"lowered.{kind.__name__}" in runner, kind


def test_the_printer_has_no_partition_or_schedule_of_its_own():
    """cuda_pipeline reads a staged copy's runs from the copy's lowering and the order
    of events from the schedule: no layout, run or stage arithmetic of its own."""
    import inspect
    from verify_reducer.codegen import cuda_pipeline
    source = inspect.getsource(cuda_pipeline)
    code = source.split('"""', 2)[2]             # past the module docstring
    for decided_elsewhere in ("copy_runs", "layouts.copies", "vector_elements",
                              "pipe.ahead", "pipe.pending", "pipe.refill_after",
                              "pipe.issues", "pipe.copies", "pipe.prefetched", " range(",
                              "pipe.refill_at_landed"):
        assert decided_elsewhere not in code, decided_elsewhere
