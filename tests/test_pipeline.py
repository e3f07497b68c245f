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
    # the tile is read once, into A_frag (line 35): the stage is refilled right there with
    # iteration i + 2, and the T.Parallel computes with two tiles in flight
    assert (pipe.stages, pipe.ahead, pipe.pending) == (2, 2, 1)
    assert pipe.refill_after.span.line == 35
    assert [c.dst.buffer.name for c in pipe.copies] == ["A_shared"]
    assert plan.pipeline(pipe.loop) is pipe
    [a_shared] = [a for a in plan.resources.shared if a.name == "A_shared"]
    assert a_shared.elements == 2 * 32 * 64            # one tile per stage
    assert [c.dst.buffer.name for c in pipe.prefetched] == ["x_frag"]
    assert "a 2-stage cp.async pipeline of line 34 A -> A_shared" in format_plan(plan)
    assert "line 36 x -> x_frag prefetched one iteration ahead" in format_plan(plan)
    assert ("x_frag_next", "prefetch", 4) in [(r.name, r.what, r.words)
                                               for r in plan.resources.registers]
    doc = plan_json(plan)["pipelines"]
    assert doc == [{"line": 33, "stages": 2, "ahead": 2, "pending": 1, "refill_after": 35,
                    "copies": [{"line": 34, "src": "A", "dst": "A_shared"}],
                    "prefetched": [{"line": 36, "src": "x", "dst": "x_frag"}],
                    "plain": None}]


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


def test_the_renderer_prefetches_registers_an_iteration_ahead():
    source = render(_plan(GEMV)).source
    assert "half x_frag_next[8];" in source
    body = source.split("for (int ko = 0; ko < 8; ++ko)")[1]
    move = body.index("x_frag[slot] = x_frag_next[slot];")
    assert body.index("if (ko + 1 < 8) {\n      const int ko_next = ko + 1;", move) > move
    assert "x_frag_next[lane] = run_elements[lane];" in body


def test_a_prefetch_whose_source_the_kernel_writes_is_not_made():
    text = GEMV.replace("        T.copy(y_frag, y[bx * BLOCK_M])\n",
                        "        T.copy(y_frag, y[bx * BLOCK_M])\n"
                        "        T.copy(A_frag[0, 0:64], x[0:64])\n")
    pipe = _only(_plan(text))
    assert pipe.prefetched == () and pipe.copies


def test_a_prefetch_over_the_register_budget_is_dropped():
    """A 64 x 1024 fp16 fragment prefetched would double 256 registers a thread."""
    text = _gemv(M=64, K=2048, BLOCK_M=64, BLOCK_K=1024, THREADS=256).replace(
        "            T.copy(x[ko * BLOCK_K], x_frag)\n",
        "            T.copy(x[ko * BLOCK_K], x_frag)\n"
        "            T.copy(A[bx * BLOCK_M, ko * BLOCK_K], A_frag)\n")
    plan = _plan(text)
    assert _only(plan).prefetched == ()
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
    {"pending": 2},                 # waits too little: the stage has not landed
])
def test_a_schedule_that_reads_a_stage_in_flight_is_r504(fault):
    plan = _plan(GEMV)
    pipe = _only(plan)
    if fault.get("refill_after") == "the staged copy":
        fault = {"refill_after": pipe.copies[0]}
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
