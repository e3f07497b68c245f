"""Every program compiles for every target, and ptxas agrees with the plan made for it
(issue 29, "Done when"; docs/design.md §27).

Each program of examples/ and tests/programs/valid/ is planned for sm_80, sm_89, sm_90
and sm_100 (spec.target), in the canonical and the default (auto) plan, rendered, and
compiled with `nvcc -arch=<target> -cubin -fmad=false -Xptxas -v` (codegen.ptxas), the
kernels of one target batched in a few translation units (namespaces keep their
file-scope tables apart). For every kernel, ptxas must agree with the plan's resources:
- it compiled for the plan's target;
- its static shared memory is the model's static bytes (0 for a dynamic kernel, whose
  bytes are the launch's), or the model trimmed of an unread workspace tail, as
  tests/test_resources_ptxas.py allows for sm_90;
- its registers are within the plan's register budget for its threads on that target
  (`__launch_bounds__` tells ptxas the same budget: over it ptxas spills instead);
- the launch's dynamic bytes are within what the target gives one block.
A plan over a target's shared memory is not compiled: it is refused with R506 (the
programs of more than 99 KB on sm_89, e.g. tests/programs/valid/register_budget_warning.py
at 129 KB), which must then be its only error, and it must fit sm_90's 227 KB.

The whole sweep (~1,300 kernels) runs at night (VERIFY_NIGHTLY=1, tests/cuda_env.py).
The default run compiles SAMPLE, the programs whose CUDA differs by target or that
stress its limits, for the targets other than sm_90 (tests/test_resources_ptxas.py
compiles sm_90's sample), in the default plan: a few seconds on two cores."""
from __future__ import annotations

import multiprocessing
import re
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from cuda_env import NIGHTLY, PROGRAMS, ROOT, batch_unit, case_id, requires_nvcc

pytestmark = [pytest.mark.nvcc, requires_nvcc]

TARGETS = ("sm_80", "sm_89", "sm_90", "sm_100") if NIGHTLY else ("sm_80", "sm_89", "sm_100")
PLANNERS = ("canonical", "auto") if NIGHTLY else ("auto",)
# vector atomics (one instruction on sm_90+, per lane below), cp.async pipelines into
# dynamic shared memory, float8 conversions (software below sm_89), a GEMV near the
# limits, warp shuffles
SAMPLE = [ROOT / "tests/programs/valid" / name for name in (
    "atomic_addx2_addx4_lanes.py", "gemv_dynamic_shared.py", "float8_sum_fp8_accumulator.py",
    "edge_to_float8.py", "gpu_bf16_sum_pipelined.py", "simt_warp_shuffles.py")] + \
    [ROOT / "examples/gemv_pipelined.py"]
BATCHES = 4 if NIGHTLY else 1


def _plan_and_render(job: tuple[str, str]) -> list[tuple[str, object, str, str, int]]:
    """Every plan of one program for one target: (case id, Resources, the kernel's
    source under a name of its own, that name, the launch's dynamic bytes). Runs in a
    worker process."""
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.plan import plan_func
    from verify_reducer.spec.frontend import parse_source
    path, arch = job
    func = parse_source((ROOT / path).read_text(), path).func()
    out = []
    for planner in PLANNERS:
        plan = plan_func(func, planner, target=arch)
        errors = [d for d in plan.notes if d.is_error]
        if errors:               # over the target's limits: refused, nothing to compile
            out.append((f"{case_id(ROOT / path)}-{planner}-{arch}", plan.resources, None,
                        errors, 0))
            continue
        kernel = re.sub(r"\W", "_", f"{case_id(ROOT / path)}_{planner}_{arch}")
        source = render(plan, kernel_name=kernel)
        out.append((f"{case_id(ROOT / path)}-{planner}-{arch}", plan.resources,
                    source.source, kernel, source.dynamic_shared_bytes))
    return out


@pytest.fixture(scope="module")
def compiled():
    """case id -> (Resources, PtxasFigures, the launch's dynamic bytes)."""
    from verify_reducer.codegen.ptxas import compile_figures
    programs = PROGRAMS if NIGHTLY else SAMPLE
    jobs = [(str(p.relative_to(ROOT)), arch) for arch in TARGETS for p in programs]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        rows = [row for rows in pool.map(_plan_and_render, jobs) for row in rows]
    refused = {r[0]: (r[1], r[3]) for r in rows if r[2] is None}
    rows = [r for r in rows if r[2] is not None]
    groups = [(arch, [r for r in rows if r[0].endswith(f"-{arch}")][b::BATCHES])
              for arch in TARGETS for b in range(BATCHES)]
    with ThreadPoolExecutor(2) as pool:
        batches = list(pool.map(
            lambda g: compile_figures(batch_unit([r[2] for r in g[1]]), g[0]), groups))
    return {cid: (resources, figures[kernel], launch)
            for (_, group), figures in zip(groups, batches)
            for cid, resources, _, kernel, launch in group}, refused


def test_every_program_compiles_for_every_target_it_fits(compiled):
    """Every (program, plan, target) compiled, one kernel each in ptxas's report, or
    refused for the target's shared memory alone (R506), fitting sm_90's."""
    kernels, refused = compiled
    programs = PROGRAMS if NIGHTLY else SAMPLE
    assert len(kernels) + len(refused) == len(programs) * len(PLANNERS) * len(TARGETS)
    from verify_reducer.spec.target import target
    for cid, (resources, errors) in refused.items():
        assert [d.code for d in errors] == ["R506"], (cid, errors)
        assert "shared memory" in errors[0].message, (cid, errors)
        assert target(resources.target).dynamic_shared_bytes < resources.shared_bytes <= \
            target("sm_90").dynamic_shared_bytes, cid


def test_ptxas_agrees_with_each_targets_plan(compiled):
    from verify_reducer.spec.target import target
    wrong = []
    for cid, (resources, figures, launch) in compiled[0].items():
        limits = target(resources.target)
        model = resources.static_shared_bytes
        trimmed = resources.shared and resources.shared[-1].what == "reducer workspace" \
            and model - resources.shared[-1].bytes <= figures.shared_bytes < model
        if figures.arch != resources.target:
            wrong.append(f"{cid}: compiled for {figures.arch}")
        if figures.shared_bytes != model and not trimmed:
            wrong.append(f"{cid}: ptxas {figures.shared_bytes} bytes static shared, the "
                         f"model {model}")
        if figures.registers > resources.register_budget:
            wrong.append(f"{cid}: ptxas {figures.registers} registers, over the budget "
                         f"{resources.register_budget}")
        if launch > limits.dynamic_shared_bytes:
            wrong.append(f"{cid}: launches {launch} dynamic bytes, over "
                         f"{limits.dynamic_shared_bytes}")
    assert not wrong, "\n".join(wrong)
