"""The SIMT simulator (interp.simulate) against the logical interpreter: every example
under the canonical plan computes what the interpreter computes (integers exactly,
floats within the interpreter's own bound, interp.accept), with no violation; the RFC's
minimal example reproduces TileLang's 576 under the legacy plan and the exactly-once
check names the duplicated contribution."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.plan import plan_func
from verify_reducer.interp.accept import within_bound
from verify_reducer.interp.logical import run
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.frontend import parse_file
from verify_reducer.verify.oracle.expect import parse_expectation
from verify_reducer.verify.oracle.inputs import prepare

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(ROOT.glob("examples/*.py"))
VALID = sorted(ROOT.glob("tests/programs/valid/*.py"))


def _inputs(path: Path, func, seed: int):
    given = parse_expectation(path.read_text(), str(path)).inputs
    return prepare(func, seed, given if seed == 0 else None)


def _agree(path: Path, planner: str, seed: int) -> None:
    func = parse_file(str(path)).func()
    inputs = _inputs(path, func, seed)
    reference = run(func, inputs)
    result = simulate(plan_func(func, planner), inputs)
    assert not result.violations, [f"{d.code}: {d.message}" for d in result.violations]
    for p in func.params:
        got, want = result.outputs[p.name], reference.outputs[p.name]
        ok = within_bound(got, want, reference.bounds[p.name])
        assert ok.all(), (f"{p.name}: simulator {got[~ok][:4]} vs interpreter "
                          f"{want[~ok][:4]} (bound {reference.bounds[p.name][~ok][:4]})")
    assert result.contributions == sum(int(e.counts.sum()) for e in reference.epochs)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [0, 1])
def test_examples_canonical_equal_interpreter(path, seed):
    _agree(path, "canonical", seed)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_programs_canonical_equal_interpreter(path):
    _agree(path, "canonical", 0)


def _minimal(name: str, planner: str):
    func = parse_file(str(ROOT / "examples" / name)).func()
    x = np.arange(1, 9, dtype=np.float32)
    return simulate(plan_func(func, planner), {"x": x, "out": np.zeros(1, np.float32)})


@pytest.mark.parametrize("name", ["minimal_legacy.py", "minimal_v2.py"])
def test_rfc_minimal_legacy_plan_gives_576_and_r503(name):
    result = _minimal(name, "legacy")
    assert result.outputs["out"][0] == 576.0
    r503 = [d for d in result.violations if d.code == "R503"]
    assert len(r503) == 1, [d.message for d in result.violations]
    message = r503[0].message
    assert "contribution x_frag[j] with j=0" in message
    assert "entered total[0] 16 times" in message
    assert r503[0].span is not None and r503[0].severity == "error"
    assert any("8 contributions" in n.message for n in r503[0].notes)


@pytest.mark.parametrize("name", ["minimal_legacy.py", "minimal_v2.py", "minimal_rfc.py"])
def test_rfc_minimal_canonical_plan_gives_36(name):
    result = _minimal(name, "canonical")
    assert result.outputs["out"][0] == 36.0
    assert result.violations == []
    (summary,) = result.finalizes
    assert summary.contributions == 8 and summary.mismatched_outputs == 0
    assert summary.copies_checked >= 1


def test_legacy_duplicates_are_caught_for_idempotent_ops():
    """max/min hide a duplicate in the value; the accounting still sees it."""
    func = parse_file(str(ROOT / "examples" / "max_min.py")).func()
    result = simulate(plan_func(func, "legacy"), prepare(func, 0))
    messages = [d.message for d in result.violations if d.code == "R503"]
    assert any("entered mx[0] 4 times" in m for m in messages)
    assert any("entered mn[0] 4 times" in m for m in messages)


def test_thread_binding_runs_in_the_simulator():
    """T.get_thread_binding() has a physical meaning only: the simulator runs it."""
    func = parse_file(str(ROOT / "tests/programs/valid/store_thread0.py")).func()
    x = np.arange(1, 9, dtype=np.float32)
    result = simulate(plan_func(func, "canonical"), {"x": x, "out": np.zeros(1, np.float32)})
    assert result.outputs["out"][0] == 36.0 and result.violations == []


def test_inputs_are_not_modified():
    func = parse_file(str(ROOT / "examples" / "minimal_v2.py")).func()
    inputs = {"x": np.arange(1, 9, dtype=np.float32), "out": np.zeros(1, np.float32)}
    simulate(plan_func(func, "canonical"), inputs)
    assert inputs["out"][0] == 0.0


def test_store_of_different_values_from_several_threads_is_r504():
    # GPU finding (2026-12-01): the legacy plan of this program leaves each warp with its
    # own partial sum and every thread stores it to out[r]; on the H200 a different warp
    # won from run to run while the simulator kept the last lane's value. One store that
    # writes one address with different values is an undefined result (R504).
    func = parse_file(str(ROOT / "tests/programs/valid/serial_row_2x48_on_96.py")).func()
    result = simulate(plan_func(func, "legacy"), prepare(func, 0))
    races = [d for d in result.violations if d.code == "R504"]
    assert races and "global-memory race" in races[0].message
    assert "out[0]" in races[0].message and races[0].span.line == 22
    # the canonical plan stores one value from every replica: a benign broadcast
    canonical = simulate(plan_func(func, "canonical"), prepare(func, 0))
    assert canonical.ok, canonical.violations
