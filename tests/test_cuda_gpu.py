"""Generated kernels run on the GPU agree with the interpreter and the simulator.

For every program and plan, on seeded inputs:
- canonical, fast, auto: every tensor parameter after the kernel lies within the logical
  interpreter's bound (docs/semantics.md §9: exact for integers, the reassociation bound
  for float sums);
- legacy (wrong on purpose where replicas contribute twice): where the simulator agrees
  with the interpreter, so must CUDA; where it does not, CUDA must reproduce the
  simulator's wrong value — exactly for integers, for floats within the interpreter's
  bound scaled by threads² (a legacy sum has at most `threads` times the terms, each
  counted at most `threads` times);
- every plan the simulator runs: CUDA within the same acceptance of the simulator.
The RFC's minimal example under legacy gives 576 on hardware, as the simulator says."""
from __future__ import annotations

import numpy as np
import pytest

from cuda_env import ROOT, TILINGS, cases, gpu_problem, load, plan, tiling_source

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")]

# Simulator findings after which registers or shared memory hold undefined values: the
# hardware result is then not comparable element by element.
UNDEFINED = {"R500", "R501", "R502", "R504", "R505"}


def _inputs(func):
    from verify_reducer.verify.oracle.inputs import prepare
    return prepare(func, seed=0)


def _simulate(physical, inputs):
    try:
        from verify_reducer.interp.simulate import simulate
    except ImportError:
        return None
    return simulate(physical, inputs)


def _mismatch(name, got, want, ok) -> str:
    bad = np.argwhere(~ok)[:5]
    rows = [f"  {name}{list(map(int, i))}: cuda {got[tuple(i)]!r}, expected "
            f"{want[tuple(i)]!r}" for i in bad]
    return f"{name}: {int((~ok).sum())} of {ok.size} elements differ\n" + "\n".join(rows)


@pytest.mark.parametrize("path, planner", cases())
def test_cuda_matches_interpreter_and_simulator(path, planner):
    from verify_reducer.codegen.runner import run_cuda
    from verify_reducer.interp.accept import within_bound
    from verify_reducer.interp.logical import run
    physical = plan(path, planner)
    func = physical.func
    inputs = _inputs(func)
    reference = run(func, inputs)
    got = run_cuda(physical, inputs)
    sim = _simulate(physical, inputs)
    undefined = sim is not None and any(d.code in UNDEFINED for d in sim.violations)
    if undefined:
        pytest.skip(f"the simulator finds undefined values in this {planner} plan: "
                    f"{sorted({d.code for d in sim.violations})}")
    scale = float(func.kernel.threads) ** 2
    failures = []
    for p in func.params:
        out, exact, bound = got[p.name], reference.outputs[p.name], reference.bounds[p.name]
        if planner != "legacy":
            ok = within_bound(out, exact, bound)
            if not ok.all():
                failures.append(_mismatch(p.name, out, exact, ok))
            if sim is not None:
                ok = within_bound(out, sim.outputs[p.name], 2 * bound)
                if not ok.all():
                    failures.append("vs simulator: " + _mismatch(p.name, out,
                                                                  sim.outputs[p.name], ok))
            continue
        if sim is None:
            continue
        simulated = sim.outputs[p.name]
        right = within_bound(simulated, exact, bound)
        ok = np.where(right, within_bound(out, exact, bound),
                      within_bound(out, simulated, bound * scale))
        if not ok.all():
            failures.append("legacy vs simulator: " + _mismatch(p.name, out, simulated, ok))
    assert not failures, f"{path.name} ({planner}):\n" + "\n".join(failures)


def test_legacy_minimal_example_gives_576_on_hardware():
    from verify_reducer.codegen.plan import plan_func
    from verify_reducer.codegen.runner import run_cuda
    path = ROOT / "examples" / "minimal_legacy.py"
    physical = plan_func(load(path), "legacy")
    inputs = {"x": np.arange(1, 9, dtype=np.float32), "out": np.zeros(1, np.float32)}
    got = run_cuda(physical, inputs)
    assert got["out"][0] == 576.0
    sim = _simulate(physical, inputs)
    if sim is not None:
        assert sim.outputs["out"][0] == got["out"][0]
    canonical = run_cuda(plan_func(load(path), "canonical"), inputs)
    assert canonical["out"][0] == 36.0


@pytest.mark.parametrize("planner", ["canonical", "auto"])
@pytest.mark.parametrize("tiling", TILINGS, ids=[f"{m}x{k}_{t}" for m, k, t in TILINGS])
def test_gemv_tilings_equal_the_interpreter_at_4096(tiling, planner):
    """examples/gemv_pipelined.py at M = K = 4096 at each of TileLang's GEMV tilings
    (issue 9: with the transposed workspace they needed more than 48 KB of shared memory
    and did not compile; the segmented finalize fits them in static shared memory, and
    tests/programs/valid/gemv_dynamic_shared.py keeps the dynamic path): y equals the
    interpreter's within its bound."""
    from verify_reducer.codegen.plan import plan_func
    from verify_reducer.codegen.runner import run_cuda
    from verify_reducer.interp.accept import within_bound
    from verify_reducer.interp.logical import run
    from verify_reducer.spec.frontend import parse_source
    func = parse_source(tiling_source(*tiling), "gemv_tiling.py").func()
    inputs = _inputs(func)
    reference = run(func, inputs)
    got = run_cuda(plan_func(func, planner), inputs)
    ok = within_bound(got["y"], reference.outputs["y"], reference.bounds["y"])
    assert ok.all(), _mismatch("y", got["y"], reference.outputs["y"], ok)


EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("planner", ["auto", "canonical"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_cuda_equals_the_numpy_reference(path, planner):
    """Each example on the GPU against its numpy reference (tests/references.py) on the
    reference's own inputs where it has them (e.g. argmax_packed's tied maxima and int32
    extremes): integers exactly, floats within the interpreter's bound (plus the ulp of
    rounding numpy's float64 value to the output's dtype)."""
    from verify_reducer.codegen.runner import run_cuda
    from verify_reducer.interp.accept import within_bound
    from verify_reducer.interp.logical import run
    from references import REFERENCES
    reference = REFERENCES[path.stem]
    physical = plan(path, planner)
    inputs = _inputs(physical.func)
    if reference.inputs is not None:
        inputs.update(reference.inputs(np.random.default_rng(0)))
    got = run_cuda(physical, inputs)
    bounds = run(physical.func, inputs).bounds
    for name, want in reference.outputs(inputs).items():
        out, want = np.asarray(got[name]), np.asarray(want)
        if want.dtype.kind in "iub":
            ok = out.astype(np.int64) == want.astype(np.int64)
        else:       # numpy's float64 value rounded to the output's dtype: one more ulp
            want = want.astype(out.dtype)
            ok = within_bound(out, want, bounds[name] + np.spacing(np.abs(want)))
        assert ok.all(), f"{path.name} ({planner}): " + _mismatch(name, out, want, ok)


def test_a_cached_module_runs_after_another_context_was_current():
    """Regression (GPU run of 2026-12-03, test_gpu_reinterpret's canonical cases): a
    module compiled before TileLang ran in the same process failed to launch after it
    ("cuFuncSetBlockShape failed: invalid resource handle"), the runtime having made the
    primary context current over pycuda's own. The runner now works in the primary
    context, pushed for each call: a cached module launches under any other current
    context, and that context is current again afterwards."""
    import pycuda.driver as driver
    from verify_reducer.codegen.runner import run_cuda
    physical = plan(ROOT / "examples" / "minimal_legacy.py", "canonical")
    inputs = _inputs(physical.func)
    first = run_cuda(physical, inputs)
    other = driver.Device(0).make_context()        # pushed: current from here on
    try:
        again = run_cuda(physical, inputs)          # the cached module, in its context
        assert driver.Context.get_current() == other
    finally:
        other.pop()
        other.detach()
    for name, values in first.items():
        assert np.array_equal(values, again[name], equal_nan=True), name
