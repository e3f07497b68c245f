"""T.Pipelined as a software pipeline (spec.physical.Pipeline): which loops codegen.pipeline
stages and why the others run plainly, the CUDA it renders, and the simulator executing
the schedule: equal to the interpreter when the schedule is right, R504 when a planted
fault reads a stage before its copy landed."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_text import format_plan, plan_json
from verify_reducer.interp.accept import within_bound
from verify_reducer.interp.logical import run
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.oracle.inputs import prepare

ROOT = Path(__file__).resolve().parent.parent
GEMV = (ROOT / "examples" / "gemv_pipelined.py").read_text()


def _gemv(**sizes) -> str:
    """examples/gemv_pipelined.py with some module constants changed."""
    text = GEMV
    for name, value in sizes.items():
        head, sep, tail = text.partition(f"\n{name} = ")
        assert sep, name
        text = head + sep + str(value) + tail[tail.index("\n"):]
    return text


def _plan(text: str, planner: str = "auto"):
    return plan_func(parse_source(text, "<test>").func(), planner)


def _only(plan):
    [pipe] = plan.pipelines
    return pipe


def _agrees(plan) -> list:
    """The simulator's violations; asserts its outputs equal the interpreter's."""
    inputs = prepare(plan.func, seed=0)
    reference = run(plan.func, inputs)
    sim = simulate(plan, inputs)
    if not sim.violations:
        for name, want in reference.outputs.items():
            assert within_bound(sim.outputs[name], want, reference.bounds[name]).all(), name
    return sim.violations


def test_the_gemv_is_a_two_stage_pipeline_of_its_a_tile():
    plan = _plan(GEMV)
    pipe = _only(plan)
    # the A tile is read once, into A_frag (line 35), the x tile, staged too, into x_frag
    # (line 36): the stages are refilled right there with iteration i + 2, and the
    # T.Parallel computes with two tiles in flight
    assert (pipe.stages, pipe.ahead, pipe.pending) == (2, 2, 1)
    assert pipe.refill_after.span.line == 36
    assert [c.dst.buffer.name for c in pipe.copies] == ["A_shared"]
    assert plan.pipeline(pipe.loop) is pipe
    shared = {a.name: a for a in plan.resources.shared}
    assert shared["A_shared"].elements == 2 * 32 * 64            # one tile per stage
    [staged] = pipe.staged_reads
    assert (staged.copy.span.line, staged.buffer.name) == (36, "x_frag_stage")
    assert shared["x_frag_stage"].elements == 2 * 64 and shared["x_frag_stage"].dtype.name == "float16"
    assert pipe.prefetched == () and pipe.issues == (pipe.copies[0], staged.issue)
    text = format_plan(plan)
    assert "a 2-stage cp.async pipeline of line 34 A -> A_shared, line 36 x -> x_frag_stage" in text
    assert "line 36 x_frag read from the stage of x_frag_stage" in text
    assert not any(r.what == "prefetch" for r in plan.resources.registers)
    doc = plan_json(plan)["pipelines"]
    assert doc == [{"line": 33, "stages": 2, "ahead": 2, "pending": 1, "refill_after": 36,
                    "refill_at_landed": False,
                    "copies": [{"line": 34, "src": "A", "dst": "A_shared"}],
                    "prefetched": [],
                    "staged_reads": [{"line": 36, "src": "x", "dst": "x_frag",
                                      "buffer": "x_frag_stage", "elements": 64}],
                    "plain": None}]


def test_the_staged_read_has_the_plans_layouts_and_the_copys_ranges():
    plan = _plan(GEMV)
    [staged] = _only(plan).staged_reads
    layouts, ranges = plan.layouts, plan.statement_ranges()
    # 64 fp16 elements: 8 runs of 16 bytes, threads 0..7 issue them, the rest sit out
    issue = layouts.copies[staged.issue]
    assert (issue.shape, layouts.participants[staged.issue]) == ((64,), (0, 128))
    assert layouts.copies[staged.read] is layouts.copies[staged.copy]
    assert ranges[staged.issue] == ranges[staged.read] == ranges[staged.copy]
    # the LayoutMap given to plan_func is not changed: it may serve other plans
    from verify_reducer.codegen.layout import infer_layouts
    given = infer_layouts(plan.func)
    again = plan_func(plan.func, "canonical", layouts=given)
    assert staged.issue not in given.copies
    assert _only(again).staged_reads[0].issue in again.layouts.copies


# the GEMV with the T.Parallel reading the shared tile itself: the last read of the stage
# is the body's last statement, so iteration i issues i + stages - 1 at its top
READS_SHARED = GEMV.replace("            T.copy(A_shared, A_frag)\n", "").replace(
    "T.cast(A_frag[i, k], accum_dtype)", "T.cast(A_shared[i, k], accum_dtype)")


@pytest.mark.parametrize("stages, tiles", [(2, 8), (3, 8), (4, 2), (3, 1)])
@pytest.mark.parametrize("source", [GEMV, READS_SHARED], ids=["early-refill", "top-issue"])
def test_the_simulator_runs_the_schedule_and_equals_the_interpreter(stages, tiles, source):
    """More stages than iterations included: the prologue issues only what exists."""
    text = source.replace("K = 512", f"K = {64 * tiles}").replace(
        "num_stages=2", f"num_stages={stages}")
    for planner in ("auto", "canonical"):
        plan = _plan(text, planner)
        pipe = _only(plan)
        assert pipe.stages == stages and pipe.copies
        early = source is GEMV
        assert (pipe.refill_after is not None, pipe.ahead) == \
            (early, stages if early else stages - 1)
        assert _agrees(plan) == []


def test_the_renderer_reads_the_staged_tile_from_its_stage():
    source = render(_plan(GEMV)).source
    assert "x_frag_next" not in source
    assert "half* const x_frag_stage" in source or "half x_frag_stage[128]" in source
    body = source.split("for (int ko = 0; ko < 8; ++ko)")[1]
    read = body.index("// line 36: T.copy x_frag_stage -> x_frag")
    refill = body.index("__syncthreads();  // every read of this stage is done: refill it now")
    issue = body.index("// line 36: T.copy x -> x_frag_stage as cp.async of 8 elements")
    assert read < refill < issue < body.index("reducer_cp_async_commit();") < \
        body.index("// line 37")
    assert "if (tid < 8) {" in body[issue:]          # 8 runs: threads 0..7 issue them


def test_a_tile_that_cannot_be_staged_is_prefetched_into_registers():
    # K = 500: the last x tile reads past x, which the kernel guards: no cp.async for it
    plan = _plan(_gemv(K=500))
    pipe = _only(plan)
    assert [c.dst.buffer.name for c in pipe.prefetched] == ["x_frag"]
    assert pipe.staged_reads == ()
    source = render(plan).source
    assert "half x_frag_next[8];" in source
    body = source.split("for (int ko = 0; ko < 8; ++ko)")[1]
    move = body.index("x_frag[slot] = x_frag_next[slot];")
    following = body.index("if (ko + 1 < 8) {\n      const int ko_next = ko + 1;", move)
    assert "x_frag_next[" in body[following:]     # element by element, border-guarded
    assert _agrees(plan) == []


def test_staged_reads_become_prefetches_when_their_stages_do_not_fit():
    """prefetch_instead: the fallback plan_func takes when the stages are over the
    shared memory a block may have; the stage is then released after line 35."""
    from verify_reducer.codegen.pipeline import prefetch_instead
    plan = _plan(GEMV)
    pipe = prefetch_instead(_only(plan))
    assert (pipe.staged_reads, [c.span.line for c in pipe.prefetched]) == ((), [36])
    assert (pipe.refill_after.span.line, pipe.ahead) == (35, 2)
    assert _agrees(replace(plan, pipelines=(pipe,))) == []


def test_a_loop_that_only_reads_global_tiles_into_fragments_is_pipelined():
    """No shared buffer in the program: both tiles are staged reads, and the pipeline
    stages them through buffers of its own."""
    text = GEMV.replace("            T.copy(A[bx * BLOCK_M, ko * BLOCK_K], A_shared)\n", "") \
        .replace("T.copy(A_shared, A_frag)", "T.copy(A[bx * BLOCK_M, ko * BLOCK_K], A_frag)")
    for planner in ("auto", "canonical"):
        plan = _plan(text, planner)
        pipe = _only(plan)
        assert pipe.copies == () and pipe.plain == "its body has no global -> shared copy"
        assert [s.buffer.name for s in pipe.staged_reads] == ["A_frag_stage", "x_frag_stage"]
        assert (pipe.refill_after.span.line, pipe.ahead) == (35, 2)    # the x copy
        assert _agrees(plan) == []
    assert "reducer_cp_async16(&A_frag_stage[" in render(plan).source


def test_a_prefetch_whose_source_the_kernel_writes_is_not_made():
    text = GEMV.replace("        T.copy(y_frag, y[bx * BLOCK_M])\n",
                        "        T.copy(y_frag, y[bx * BLOCK_M])\n"
                        "        T.copy(A_frag[0, 0:64], x[0:64])\n")
    pipe = _only(_plan(text))
    assert pipe.prefetched == () and pipe.staged_reads == () and pipe.copies


def test_a_prefetch_over_the_register_budget_is_dropped():
    """A 64 x 1024 fp16 fragment prefetched would double 256 registers a thread (and
    its stages, 256 KB, do not fit shared memory either)."""
    text = _gemv(M=64, K=2048, BLOCK_M=64, BLOCK_K=1024, THREADS=256).replace(
        "            T.copy(x[ko * BLOCK_K], x_frag)\n",
        "            T.copy(x[ko * BLOCK_K], x_frag)\n"
        "            T.copy(A[bx * BLOCK_M, ko * BLOCK_K], A_frag)\n")
    plan = _plan(text)
    assert _only(plan).prefetched == () and _only(plan).staged_reads == ()
    assert plan.resources.register_words <= plan.resources.register_budget or \
        not any(r.what == "prefetch" for r in plan.resources.registers)


def test_the_renderer_issues_ahead_commits_and_waits():
    source = render(_plan(GEMV.replace("num_stages=2", "num_stages=3"))).source
    assert source.count("reducer_cp_async_commit();") == 4      # three in the prologue
    assert "reducer_cp_async_wait<2>();" in source
    assert "reducer_cp_async16(&A_shared[A_shared_fill + " in source
    assert "const int A_shared_stage = ((ko - 0) % 3) * 2048;" in source
    assert "half A_shared[6144]" in source
    # the refill follows the read of the stage (line 35) behind a barrier
    body = source.split("for (int ko = 0; ko < 8; ++ko)")[1]
    read = body.index("// line 35: T.copy A_shared -> A_frag")
    refill = body.index("__syncthreads();  // every read of this stage is done: refill it now")
    assert read < refill < body.index("if (ko + 3 < 8)") < body.index("// line 37")


def test_the_top_issue_schedule_renders_a_trailing_barrier():
    source = render(_plan(READS_SHARED.replace("num_stages=2", "num_stages=3"))).source
    assert source.count("reducer_cp_async_commit();") == 3      # two in the prologue
    body = source.split("for (int ko = 0; ko < 8; ++ko)")[1]
    assert body.index("if (ko + 2 < 8)") < body.index("reducer_cp_async_wait<2>();")
    assert "every read of this stage is done before it is refilled" in body


@pytest.mark.parametrize("fault", [
    # issues i + 2 at the top, into the stage iteration i is about to read
    {"refill_after": None},
    # refills the stage before line 35 has read it
    {"refill_after": "the staged copy"},
    # refills the stages after line 35, before line 36 has read the x tile's stage
    {"refill_after": "line 35"},
    {"pending": 2},                 # waits too little: the stage has not landed
])
def test_a_schedule_that_reads_a_stage_in_flight_is_r504(fault):
    plan = _plan(GEMV)
    pipe = _only(plan)
    if fault.get("refill_after") == "the staged copy":
        fault = {"refill_after": pipe.copies[0]}
    elif fault.get("refill_after") == "line 35":
        fault = {"refill_after": next(s for s in pipe.loop.body if s.span.line == 35)}
    broken = replace(plan, pipelines=(replace(pipe, **fault),))
    codes = {d.code for d in _agrees(broken)}
    assert "R504" in codes
    message = next(d.message for d in _agrees(broken) if d.code == "R504")
    assert "before the cp.async that writes it completed" in message


# ----------------------------------------------------------------------------- refusals

def _plain(text: str) -> str:
    """Why the loop stages nothing (it may still prefetch registers)."""
    pipe = _only(_plan(text))
    assert pipe.copies == ()
    return pipe.plain


def test_one_stage_is_a_plain_loop():
    assert _plain(GEMV.replace("num_stages=2", "num_stages=1")) == "num_stages is below 2"


def test_a_copy_that_needs_a_border_guard_is_not_staged():
    # K = 500: the last tile reads past each row of A, which the kernel guards
    assert "needs a border guard" in _plain(_gemv(K=500)) or \
        "cannot move 16 bytes" in _plain(_gemv(K=500))


def test_a_staged_buffer_read_after_the_loop_is_not_staged():
    text = GEMV.replace("        y_frag = T.alloc_fragment((BLOCK_M,), accum_dtype)\n",
                        "        y_frag = T.alloc_fragment((BLOCK_M,), accum_dtype)\n"
                        "        T.copy(A_shared, A_frag)\n")
    assert _plain(text).startswith("A_shared is read outside the loop")


def test_a_source_the_kernel_writes_is_not_staged():
    text = GEMV.replace("        T.copy(y_frag, y[bx * BLOCK_M])\n",
                        "        T.copy(y_frag, y[bx * BLOCK_M])\n"
                        "        T.copy(A_shared, A[bx * BLOCK_M, 0])\n")
    assert "A is written by the kernel" in _plain(text) or "read outside" in _plain(text)


def test_stages_that_do_not_fit_shared_memory_run_plainly():
    # a 64 x 1024 fp16 tile is 128 KB: two stages would be 256 KB, over 227 KB
    text = _gemv(M=64, K=2048, BLOCK_M=64, BLOCK_K=1024, THREADS=256)
    plan = _plan(text)
    assert "over the 227 KB one block may use" in _only(plan).plain
    assert not any(d.is_error for d in plan.notes)
    assert _agrees(plan) == []


def test_the_plain_reason_is_in_the_kernel_comment():
    source = render(_plan(GEMV.replace("num_stages=2", "num_stages=1"))).source
    assert "T.Pipelined (num_stages=1) as a plain loop (num_stages is below 2)" in source
    assert "cp_async" not in source.split("// ---- end of reducer_runtime.cuh")[-1]


def test_staged_values_match_numpy():
    """The pipeline's y against numpy directly (not only against the interpreter)."""
    plan = _plan(GEMV)
    inputs = prepare(plan.func, seed=3)
    sim = simulate(plan, inputs)
    assert sim.violations == []
    a = np.asarray(inputs["A"], dtype=np.float64)
    x = np.asarray(inputs["x"], dtype=np.float64)
    assert np.allclose(sim.outputs["y"], a @ x, rtol=1e-5, atol=1e-4)
