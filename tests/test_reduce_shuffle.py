"""T.reduce_* of a fragment into a fragment by warp shuffles (codegen.lower.reduce):
the decision (which statements take it, which keep the shared rows), the plan's
resources and barriers without rows, the CUDA, and planted faults the simulator
catches. The GPU runs these programs in tests/test_cuda_gpu.py (every valid program)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.lower import reduce as lowered
from verify_reducer.spec import ir
from verify_reducer.spec.frontend import parse_file

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "programs" / "valid"


def _plan(name: str, planner: str = "fast"):
    from verify_reducer.codegen.plan import plan_func
    return plan_func(parse_file(str(VALID / name)).func(), planner)


def _reduces(plan):
    return [s for s in ir.walk(plan.func.kernel.body) if isinstance(s, ir.Reduce)]


def test_attention_rows_fold_within_the_quad():
    """gemm_row_max: each row of the m16n8 accumulator is on the 4 lanes of a quad, and
    the row max and sum are held by those 4 lanes: xor 1, then xor 2."""
    plan = _plan("gemm_row_max.py")
    for stmt in _reduces(plan):
        low = lowered.lower_reduce(plan, stmt)
        assert low is not None and low.masks == (1, 2)
        # 64 rows × 32 columns on 128 threads: a thread holds 2 rows, 8 terms of each
        assert len(low.slots) == 2 and all(len(t) == 8 for t in low.terms)
        # every term of every output once over the 4 holders
        dst_rows = low.dst_elements
        for o in range(stmt.dst.size):
            holders = np.argwhere(dst_rows == o)
            assert len(holders) == 4
            terms = np.concatenate([low.src_elements[t, s] for t, s in holders])
            assert sorted(terms.tolist()) == list(range(o * 32, o * 32 + 32))


def test_shuffled_reduce_has_no_rows_and_no_barriers():
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.lower.program import lower
    from verify_reducer.codegen.resources import plan_resources
    from verify_reducer.spec.target import target
    plan = _plan("gemm_row_max.py")
    shared = plan_resources(plan, target()).shared
    assert shared and not [a for a in shared if a.what == "reduce rows"]
    for stmt in _reduces(plan):
        for where in ("before", "staged", "after"):
            assert plan.barriers.at(stmt, where) is None
    cuda = render(plan).source
    assert "_rows" not in cuda and "value = max(value, __shfl_xor_sync(0xffffffff, value, 2));" in cuda
    assert "| reduce: within each thread (8 term(s) per output" in lower(plan).describe()


@pytest.mark.parametrize("name, kind", [("factory_trace_time.py", "max"),
                                        ("reduce_ops_no_reducer.py", "sum")])
def test_other_reduces_keep_the_shared_rows(name, kind):
    """A shared source, or a destination whose holders are not the source's lanes of a
    row, goes through the rows (and their barriers) as before."""
    plan = _plan(name)
    stmt = next(s for s in _reduces(plan) if s.kind == kind)
    assert lowered.lower_reduce(plan, stmt) is None
    assert plan.barriers.at(stmt, "before") is not None


def _planted(monkeypatch, **change):
    real = lowered._decide

    def planted(layouts, stmt):
        low = real(layouts, stmt)
        return None if low is None else dataclasses.replace(
            low, **{name: fn(getattr(low, name)) for name, fn in change.items()})

    monkeypatch.setattr(lowered, "_decide", planted)


def test_planted_missing_shuffle_leaves_partial_rows_the_check_refutes(monkeypatch):
    """The xor-2 step dropped: each lane ends with half its row; the row sums and
    maxima differ from the interpreter's and the check says which element."""
    from verify_reducer.verify.oracle import pipeline
    _planted(monkeypatch, masks=lambda masks: masks[:1])
    report = pipeline.check(str(VALID / "gemm_row_max.py"))
    wrong = [c for label, cs in report.comparisons.items() for c in cs
             if label != "interp" and not c.ok]
    assert report.exit_code != pipeline.EXIT_OK
    assert {c.name for c in wrong} >= {"row_sum"}, wrong


def test_planted_term_of_another_lane_is_r300(monkeypatch):
    """A term read from a slot this thread does not hold: the checked register
    accessor refuses it (R300, the holders drawn)."""
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    _planted(monkeypatch, src_elements=lambda e: (e + 2) % e.max())
    plan = _plan("gemm_row_max.py")
    result = simulate(plan, prepare(plan.func, seed=0))
    found = [d for d in result.violations if d.code == "R300"]
    assert found and found[0].span.line == 22, [d.message for d in result.violations]
