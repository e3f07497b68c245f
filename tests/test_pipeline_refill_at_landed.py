"""A pipelined K loop that ends with T.gemm on its tiles refills right after its "landed"
barrier (spec.physical.Pipeline.refill_at_landed): one barrier per iteration publishes
stage i and releases stage i - 1, the one refilled, and the trailing barrier is gone.
Where wgmma runs the gemm, the refill goes out while it runs. The plan says so, the renderer prints that order, the simulator runs it and agrees with
the interpreter, and each way of getting the order wrong is caught on the CPU."""
from __future__ import annotations

from dataclasses import replace

import pytest

from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.lower.pipeline import lower_pipeline
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_text import format_plan, plan_json
from verify_reducer.interp.accept import within_bound
from verify_reducer.interp.logical import run
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.oracle.inputs import prepare

GEMM = """
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 128), T.float16), B: T.Tensor((128, 64), T.float16),
         C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 16), T.float16)
        B_s = T.alloc_shared((16, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        T.clear(acc)
        for k in T.Pipelined(8, num_stages=STAGES):
            T.copy(A[0, k * 16], A_s)
            T.copy(B[k * 16, 0], B_s)
            T.gemm(A_s, B_s, acc)
        T.copy(acc, C)
"""


def _plan(stages: int = 3, target: str = "sm_90"):
    func = parse_source(GEMM.replace("STAGES", str(stages)), "<gemm>").func()
    return plan_func(func, "auto", target=target)


def _violations(plan) -> list:
    """The simulator's violations; where there are none, its C equals the interpreter's."""
    inputs = prepare(plan.func, seed=0)
    reference = run(plan.func, inputs)
    sim = simulate(plan, inputs)
    if not sim.violations:
        assert within_bound(sim.outputs["C"], reference.outputs["C"],
                            reference.bounds["C"]).all()
    return sim.violations


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_gemm_loop_refills_after_its_landed_barrier(stages, target):
    plan = _plan(stages, target)
    [pipe] = plan.pipelines
    assert pipe.refill_at_landed and pipe.refill_after is None
    assert (pipe.ahead, pipe.pending) == (stages - 1, stages - 2)
    loop = pipe.loop
    assert plan.barriers.at(loop, "landed") is not None
    assert plan.barriers.at(loop, "released") is None          # one barrier per iteration
    assert "then issues iteration i + %d after the landed barrier" % (stages - 1) \
        in format_plan(plan)
    assert plan_json(plan)["pipelines"][0]["refill_at_landed"] is True
    body = render(plan).source.split("for (int k = 0; k < 8; ++k)")[1]
    wait = body.index(f"reducer_cp_async_wait<{stages - 2}>();")
    landed = body.index("__syncthreads();  // every thread's tiles of this stage have landed, "
                        "and the stage refilled next is no longer read")
    issue = body.index(f"if (k + {stages - 1} < 8)")
    gemm = body.index("// line 16: T.gemm")
    if target == "sm_90":
        # wgmma: the refill goes out while the tensor cores run, between the gemm's
        # commit and its wait (codegen.lower.pipeline.WhileRunning)
        assert wait < landed < gemm < body.index("reducer_wgmma_commit();") < issue \
            < body.index("reducer_wgmma_wait_all();")
        assert "and while it runs: issue iteration k + %d" % (stages - 1) in \
            lower_pipeline(plan, pipe).describe()
    else:
        assert wait < landed < issue < gemm             # mma.sync: synchronous
    assert body.count("__syncthreads()") == 1
    assert _violations(plan) == []


def test_a_loop_that_only_moves_its_tiles_keeps_the_refill_before_the_wait():
    """A GEMV copies its tile into registers and computes after: it refills early
    (refill_after), not at the landed barrier."""
    text = GEMM.replace("            T.gemm(A_s, B_s, acc)\n",
                        "            for i, j in T.Parallel(64, 16):\n"
                        "                acc[i, j] += T.cast(A_s[i, j], T.float32)\n")
    func = parse_source(text.replace("STAGES", "3"), "<copy>").func()
    [pipe] = plan_func(func, "auto").pipelines
    assert not pipe.refill_at_landed and pipe.pending == 2


def test_tiles_an_earlier_statement_reads_are_issued_at_the_top():
    """An attention's loop: its first gemm reads one staged tile, its last gemm the
    other. Refilled at the last gemm, the next iteration's first tile would go out only
    as the iteration ends (the 2-stage flash attention lost 9 % on the H200 that way),
    so the loop keeps the top-issue order and its trailing barrier."""
    text = GEMM.replace("        B_s = T.alloc_shared((16, 64), T.float16)\n",
                        "        B_s = T.alloc_shared((16, 64), T.float16)\n"
                        "        A2_s = T.alloc_shared((64, 16), T.float16)\n"
                        "        acc2 = T.alloc_fragment((64, 64), T.float32)\n"
                        "        T.clear(acc2)\n")
    text = text.replace("            T.gemm(A_s, B_s, acc)\n",
                        "            T.gemm(A_s, B_s, acc2)\n"
                        "            T.copy(A[0, k * 16], A2_s)\n"
                        "            T.gemm(A2_s, B_s, acc)\n")
    plan = plan_func(parse_source(text.replace("STAGES", "2"), "<two>").func(), "auto")
    [pipe] = plan.pipelines
    assert len(pipe.copies) == 3 and not pipe.refill_at_landed
    assert (pipe.ahead, pipe.pending) == (1, 1)
    assert plan.barriers.at(pipe.loop, "released") is not None
    assert _violations(plan) == []


def _faulty(plan, **fault):
    [pipe] = plan.pipelines
    return replace(plan, pipelines=(replace(pipe, **fault),))


@pytest.mark.parametrize("fault, why", [
    # waits as the top-issue order does: stage i has not landed when it is read
    ({"pending": 2}, "waits too little"),
    # refills the stage iteration i is about to read
    ({"ahead": 3}, "refills the stage being read"),
])
def test_a_refill_at_landed_that_reads_a_stage_in_flight_is_r504(fault, why):
    violations = _violations(_faulty(_plan(3), **fault))
    assert "R504" in {v.code for v in violations}, why
    message = next(v.message for v in violations if v.code == "R504")
    assert "before the cp.async that writes it completed" in message


def test_without_the_landed_barrier_the_refill_races_the_last_iterations_reads():
    plan = _plan(3)
    [pipe] = plan.pipelines
    broken = replace(plan, barriers=plan.barriers.without(plan.barriers.at(pipe.loop, "landed")))
    races = [v.message for v in _violations(broken) if v.code == "R504"]
    # a refill (line 14) writing a stage another thread still reads (line 16)
    assert any("reads it at line 16" in m and "writes it at line 14" in m for m in races), races


@pytest.mark.gpu
@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_gpu_the_refill_at_landed_gemm_equals_the_interpreter(stages, target):
    """The rendered order on the H200, 8 K tiles through 2, 3 and 4 stages."""
    import numpy as np
    from cuda_env import gpu_problem
    from verify_reducer.codegen.runner import run_cuda
    problem = gpu_problem()
    if problem is not None:
        pytest.skip(problem)
    plan = _plan(stages, target)
    inputs = prepare(plan.func, seed=0)
    reference = run(plan.func, {k: v.copy() for k, v in inputs.items()})
    got = run_cuda(plan, {k: v.copy() for k, v in inputs.items()})
    assert within_bound(np.asarray(got["C"]), reference.outputs["C"],
                        reference.bounds["C"]).all()


def test_tiles_a_gemm_reads_after_the_loop_are_not_staged():
    """tests/programs/valid/gemm_read_after_pipeline.py: a gemm after the loop reads the
    last tiles. Staged, it would read stage 0 (the simulator found it a mismatch); a
    gemm's operands are reads (spec.ir.read_buffers), so the loop runs plainly."""
    from pathlib import Path
    text = (Path(__file__).parent / "programs" / "valid" /
            "gemm_read_after_pipeline.py").read_text()
    plan = plan_func(parse_source(text, "<after>").func(), "auto")
    [pipe] = plan.pipelines
    assert pipe.copies == () and pipe.plain.startswith("A_s is read outside the loop")
    assert _violations(plan) == []
