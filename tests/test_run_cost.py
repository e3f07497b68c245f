"""What a run will execute, counted before its first block (spec.run_cost) and as it goes
over all its blocks (interp.runs.BodyRuns): docs/limits.md "Sizes this tool runs", R102.

The defect these pin: a causal attention's loop bound is read from the block index, so it
counted one trip before the run and the run held it to the limit in each block alone;
`emit` of the program at seq_len 4096 ran 66 560 bodies of two T.gemm each for 69 minutes
of CPU before it answered (tests/programs/limits/causal_attention_16384.py is that
program at one head and seq_len 16384)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verify_reducer.interp import logical, simulate as simulate_mod
from verify_reducer.spec import limits, run_cost
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.ir import SerialFor, walk
from verify_reducer.verify.oracle import pipeline

ROOT = Path(__file__).resolve().parent.parent
CAUSAL = ROOT / "tests/programs/limits/causal_attention_16384.py"
BLOCK_INDEX = ROOT / "tests/programs/limits/block_index_trip_count.py"


def _func(source: str):
    return parse_source(source, "cost.py").func()


def _runs_counted(monkeypatch) -> list:
    """Every block the interpreter or the simulator starts, appended as it starts."""
    started = []
    for cls in (logical.Block, simulate_mod._Block):
        original = cls.run

        def counted(self, original=original):
            started.append(self.block)
            return original(self)
        monkeypatch.setattr(cls, "run", counted)
    return started


# ----------------------------------------------------------------------------- up front

def test_the_causal_attention_bound_is_counted_per_block_exactly():
    func = pipeline.load(str(CAUSAL)).func
    count = run_cost.count_run(func, None)
    # one head, 1 + 2 + ... + 256 runs of the pipelined loop's body
    assert count.body_runs == sum(bx + 1 for bx in range(256)) == 32896
    assert count.read_at_run_time
    assert run_cost.count_run(func, [(0, 0, 0), (255, 0, 0)]).body_runs == 1 + 256


def test_emit_of_the_causal_attention_is_refused_before_any_block_runs(monkeypatch):
    started = _runs_counted(monkeypatch)
    loaded = pipeline.load(str(CAUSAL))
    # emit's gate: the interpreter on every block of the grid
    [diag], reference = pipeline.verifier_errors(loaded, loaded.inputs(0), True)
    assert reference is None
    assert diag.code == "R102" and diag.span.line == loaded.func.kernel.span.line
    assert "32896 times" in diag.message and "--no-verify" in diag.message
    assert started == []


def test_the_simulator_refuses_the_causal_attention_before_any_block_runs(monkeypatch):
    started = _runs_counted(monkeypatch)
    loaded = pipeline.load(str(CAUSAL))
    plan = pipeline.make_plan(loaded, "canonical")
    with pytest.raises(DiagnosticError) as caught:
        simulate_mod.simulate(plan, loaded.inputs(0))
    assert caught.value.diagnostics[0].code == "R102" and started == []


def test_the_per_block_count_equals_what_the_interpreter_runs():
    """The bound evaluated before the run (min, a Let, a select, floor division, a cast)
    counts exactly the bodies the interpreter then runs, block by block."""
    source = """
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(6, 3, threads=32) as (bx, by):
        n = T.min(bx + 1, 4) + T.if_then_else(by == 1, 2, 0)
        for k in T.serial(T.Cast("int32", n) // 2, n + by):
            for j in T.serial(bx % 3):
                x[k % 8] = x[j % 8] + 1.0
"""
    func = _func(source)
    outer = inner = 0
    for bx, by in np.ndindex(6, 3):
        n = min(bx + 1, 4) + (2 if by == 1 else 0)
        trips = max(n + by - n // 2, 0)
        outer += trips
        inner += trips * (bx % 3)
    count = run_cost.count_run(func, None)
    assert count.body_runs == max(outer, inner)
    counter = logical.BodyRuns()          # one for the run, as logical.run keeps it
    storage = logical._global_storage(func, {"x": np.zeros(8, np.float32)})
    for block in np.ndindex(6, 3):
        logical.Block(func.kernel, block, storage, [], None, counter).run()
    assert sorted(counter.runs.values()) == sorted([outer, inner])


def test_work_past_the_limit_is_refused_before_the_run_though_body_runs_are_few():
    """4096 runs of a body are within MAX_ITERATIONS; each stores 2**16 lanes, far more
    work than MAX_WORK allows."""
    source = """
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((65536,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for k in T.serial(4096):
            for i in T.Parallel(65536):
                x[i] = x[i] + 1.0
"""
    func = _func(source)
    count = run_cost.count_run(func, None)
    assert count.body_runs == 4096 <= limits.MAX_ITERATIONS < count.work
    diag = run_cost.check_run_size(func, None, "a run executes every block of the grid")
    assert diag.code == "R102" and diag.span == func.kernel.span
    assert f"{count.work} units of work" in diag.message


def test_a_gemm_weighs_its_multiply_adds():
    source = """
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 128), T.float16), B: T.Tensor((128, 64), T.float16),
         C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_shared((64, 128), T.float16)
        b = T.alloc_shared((128, 64), T.float16)
        c = T.alloc_fragment((64, 64), T.float32)
        T.copy(A, a)
        T.copy(B, b)
        T.clear(c)
        for k in T.serial(3):
            T.gemm(a, b, c)
        T.copy(c, C)
"""
    func = _func(source)
    loop = next(s for s in func.kernel.body if isinstance(s, SerialFor))
    per_run = run_cost.body_work(loop)
    assert per_run == 1 + 64 * 64 * 128 // limits.ELEMENTS_PER_WORK
    assert run_cost.count_run(func, None).work >= 3 * per_run


# ----------------------------------------------------------------------------- as it goes

RUNTIME_TRIPS = """# input: n=[{n}]
import tilelang.language as T


@T.prim_func
def main(n: T.Tensor((1,), T.int32), x: T.Tensor((8,), T.float32),
         y: T.Tensor((4,), T.float32)):
    with T.Kernel(4, threads=32) as bx:
        for k in T.serial(n[0]):
            y[bx] = x[k % 8] + 1.0
"""


@pytest.mark.parametrize("executor", ["interp", "sim"])
def test_the_counter_as_it_goes_spans_every_block_of_the_run(tmp_path, monkeypatch,
                                                             executor):
    """Each block runs 5000 bodies, within the limit alone; the run's four blocks run
    20 000, past it: refused in the fourth block, at the loop."""
    path = tmp_path / "runtime.py"
    path.write_text(RUNTIME_TRIPS.format(n=5000))
    started = _runs_counted(monkeypatch)
    loaded = pipeline.load(str(path))
    values = loaded.inputs(0)
    assert run_cost.check_run_size(loaded.func, None, "all") is None   # 1 trip each here
    with pytest.raises(DiagnosticError) as caught:
        if executor == "interp":
            logical.run(loaded.func, values)
        else:
            simulate_mod.simulate(pipeline.make_plan(loaded, "canonical"), values)
    [diag] = caught.value.diagnostics
    assert diag.code == "R102" and diag.span.line == 9
    assert "in this run (all its blocks)" in diag.message
    assert len(started) == 4


def test_the_counter_as_it_goes_weighs_work():
    """A body read from memory whose runs stay within MAX_ITERATIONS but whose work
    passes MAX_WORK is refused as the run goes, at the run that passes it (counted
    directly: the interpreter would spend seconds on the lanes first)."""
    lanes = 2**20
    source = f"""
import tilelang.language as T


@T.prim_func
def main(n: T.Tensor((1,), T.int32), x: T.Tensor(({lanes},), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for k in T.serial(n[0]):
            for i in T.Parallel({lanes}):
                x[i] = 1.0
"""
    loop = _func(source).kernel.body[0]
    per_run = run_cost.body_work(loop)
    assert per_run == 1 + 1 + lanes // limits.ELEMENTS_PER_WORK   # the T.Parallel, its store
    runs = limits.MAX_WORK // per_run + 1
    assert runs <= limits.MAX_ITERATIONS
    counter = logical.BodyRuns()
    with pytest.raises(DiagnosticError) as caught:
        list(counter.count(loop, range(runs)))
    [diag] = caught.value.diagnostics
    assert diag.code == "R102" and diag.span == loop.span and "units of work" in diag.message
    assert counter.runs[loop] == runs - 1 == limits.MAX_WORK // per_run


def test_the_block_index_program_is_refused_by_check_at_the_kernel():
    report = pipeline.check(str(BLOCK_INDEX))
    [diag] = [d for d in report.diagnostics if d.is_error]
    assert diag.code == "R102" and "30752 times" in diag.message
    assert "evaluated per block" in diag.message and report.reference is None


def test_a_branch_on_the_block_index_counts_the_blocks_that_take_it():
    source = """
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(100, threads=32) as bx:
        if bx < 10:
            for k in T.serial(1000):
                x[k % 8] = 1.0
        else:
            for k in T.serial(bx):
                x[k % 8] = 2.0
"""
    func = _func(source)
    loops = [s for s in walk(func.kernel.body) if isinstance(s, SerialFor)]
    count = run_cost.count_run(func, None)
    # both branches in every block would be 100 × 1000; the else loop runs
    # 10 + 11 + ... + 99 = 4905 bodies
    assert count.body_runs == 10 * 1000 and count.loop is loops[0]
    only_else = run_cost.count_run(func, [(b,) for b in range(10, 100)])
    assert only_else.body_runs == sum(range(10, 100)) and only_else.loop is loops[1]
