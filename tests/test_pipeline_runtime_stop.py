"""A `T.Pipelined` loop whose stop is read at run time from the block indices (a causal
attention's `T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M,
block_N))`): spec.addressing bounds its variable by the largest stop over the grid,
codegen.pipeline pipelines it, every issue of its schedule is guarded against the stop
(the prologue's too), the simulator equals the interpreter, and the H200 equals both. A
stop read from memory stays a plain loop and says why."""
from __future__ import annotations

from pathlib import Path

import pytest

from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.lower.pipeline import Issue, lower_pipeline
from verify_reducer.codegen.plan import plan_func
from verify_reducer.spec import ir
from verify_reducer.spec.addressing import statement_ranges
from verify_reducer.spec.frontend import parse_file, parse_source
from verify_reducer.verify.oracle.pipeline import check

ROOT = Path(__file__).resolve().parent.parent
TRIANGULAR = ROOT / "tests" / "programs" / "valid" / "gemm_triangular_pipelined.py"
ATTENTION = ROOT / "tests" / "upstream" / "mha_fwd_bshd.py"

FROM_MEMORY = '''
import tilelang.language as T


@T.prim_func
def main(lens: T.Tensor((4,), T.int32), a: T.Tensor((128, 64), T.float32),
         out: T.Tensor((4, 64), T.float32)):
    with T.Kernel(4, threads=64) as bx:
        a_s = T.alloc_shared((32, 64), T.float32)
        for k in T.Pipelined(lens[bx], num_stages=2):
            T.copy(a[k * 32, 0], a_s)
            for j in T.Parallel(64):
                out[bx, j] = a_s[0, j]
'''


def _loop(func) -> ir.SerialFor:
    return next(s for s in ir.walk(func.kernel.body) if isinstance(s, ir.SerialFor))


def _attention(tmp_path: Path, seq_len: int = 512) -> Path:
    path = tmp_path / "mha_causal_s2.py"
    path.write_text(ATTENTION.read_text() + (
        f"\n_bound = flashattn(batch=1, heads=2, seq_len={seq_len}, dim=64, is_causal=True, "
        f"block_M=64, block_N=64, num_stages=2, threads=128)\n"))
    return path


def test_the_loop_variable_is_bounded_by_the_largest_stop_over_the_grid():
    func = parse_file(str(TRIANGULAR)).func()
    loop = _loop(func)
    assert not isinstance(loop.stop, ir.Const)
    assert statement_ranges(func)[loop.body[0]][loop.var.name] == (0, 3)


@pytest.mark.parametrize("planner", ["canonical", "fast"])
def test_a_stop_read_from_the_block_indices_is_pipelined_with_every_issue_guarded(planner):
    plan = plan_func(parse_file(str(TRIANGULAR)).func(), planner)
    (pipe,) = plan.pipelines
    assert pipe.active and pipe.stages == 2 and not pipe.plain
    schedule = lower_pipeline(plan, pipe)
    assert schedule.stop is pipe.loop.stop and schedule.stop_bound == 4
    issues = [e for e in schedule.prologue + schedule.iteration if isinstance(e, Issue)]
    assert issues and all(e.guarded and not e.empty for e in issues)
    source = render(plan).source
    # block 0 runs one iteration: the prologue's tile is guarded as the refills are
    assert "if (0 < min(4, bx + 1))" in source and "k + 1 < min(4, bx + 1)" in source
    assert "if (k * 32" not in source       # no border guard: k < 4 over the grid


def test_a_stop_read_from_memory_stays_a_plain_loop_and_says_why():
    plan = plan_func(parse_source(FROM_MEMORY, "from_memory.py").func(), "canonical")
    (pipe,) = plan.pipelines
    assert not pipe.active
    assert pipe.plain == ("the loop's stop is read at run time and not bounded by the "
                          "block indices")


def test_the_triangular_gemm_verifies(tmp_path):
    report = check(str(TRIANGULAR))
    assert report.exit_code == 0, report.comparisons


def test_the_causal_attention_with_two_stages_is_pipelined_and_verifies(tmp_path):
    """TileLang's causal flash attention (BSHD example) at num_stages=2: its K and V
    copies become a 2-stage pipeline (it ran as a plain loop before, 2026-12-04), and
    the simulated plans equal the interpreter."""
    path = _attention(tmp_path)
    plan = plan_func(parse_file(str(path)).func(), "fast")
    (pipe,) = plan.pipelines
    assert pipe.active and {c.dst.buffer.name for c in pipe.copies} == {"K_shared",
                                                                       "V_shared"}
    report = check(str(path))
    assert report.exit_code == 0, report.comparisons


@pytest.mark.gpu
@pytest.mark.parametrize("planner", ["canonical", "fast"])
def test_gpu_the_causal_attention_with_two_stages_equals_the_interpreter(planner, tmp_path):
    from cuda_env import cuda_within_the_interpreters_bound
    cuda_within_the_interpreters_bound(_attention(tmp_path), planner)


def test_past_stop_blocks_the_stop_is_not_evaluated_and_the_loop_stays_plain():
    """spec.addressing evaluates a stop over at most STOP_BLOCKS blocks (numpy over the
    grid); a larger grid leaves the variable bounded from below only (docs/limits.md)."""
    from verify_reducer.spec.addressing import STOP_BLOCKS
    source = TRIANGULAR.read_text().replace(
        "T.Kernel(4, threads=128)", f"T.Kernel({2 * STOP_BLOCKS}, threads=128)").replace(
        "(128, 128), T.float16), b", f"({64 * STOP_BLOCKS}, 128), T.float16), b").replace(
        "c: T.Tensor((128, 64)", f"c: T.Tensor(({64 * STOP_BLOCKS}, 64)")
    func = parse_source(source, "wide.py").func()
    loop = _loop(func)
    assert statement_ranges(func)[loop.body[0]][loop.var.name][1] == float("inf")
    (pipe,) = plan_func(func, "canonical").pipelines
    assert not pipe.active and "not bounded by the block indices" in pipe.plain
