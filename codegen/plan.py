"""Choose the physical plan of a kernel: one ReducerPlan per reducer, by the planner
asked for. Ordinary work needs no choice here: it is placed by the LayoutMap the plan
carries (spec.physical).

    plan_func(func, planner, layouts=None, target="sm_90") -> PhysicalPlan

A planner is a function ReducerSites -> ReducerPlan registered in PLANNERS; the shared
gathering (participants, update sites, barrier ids) is codegen.plan_sites and the
collectives are codegen.collectives, so a new planner only decides storage, guards and
the collective. The kernel body's barriers are codegen.plan_barriers, from the final
plan. The text and JSON forms are codegen.plan_text."""
from __future__ import annotations

import dataclasses
from typing import Callable

from verify_reducer.spec import ir
from verify_reducer.spec.physical import PhysicalPlan, ReducerPlan
from verify_reducer.spec.target import DEFAULT_TARGET, target as target_named
from .layout import LayoutMap, infer_layouts
from .plan_canonical import plan_canonical, plan_transpose
from .plan_fast import plan_auto, plan_fast
from .plan_legacy import plan_legacy
from .pipeline import plan_pipelines, prefetch_instead
from .plan_barriers import one_writer_loops, plan_barriers
from .plan_pitch import plan_pitches
from .plan_raster import plan_raster
from .plan_swizzle import plan_swizzles
from .plan_sites import ReducerSites, gather_reducers
from .occupancy import plan_occupancy
from .resources import kib, plan_resources, resource_diagnostics

Planner = Callable[[ReducerSites], ReducerPlan]

PLANNERS: dict[str, Planner] = {
    "canonical": plan_canonical,
    # the canonical plan's fallback forced: every output everywhere, the transpose
    # all-reduce in chunks (a batch= hint picks them); for tests and comparisons
    "transpose": plan_transpose,
    "legacy": plan_legacy,
    # fast raises codegen.plan_fast.FastPlanRefused when no partition is proved;
    # auto (the default) is fast per reducer when proved, else canonical with R400
    "fast": plan_fast,
    "auto": plan_auto,
}


def plan_func(func: ir.PrimFunc, planner: str | Planner = "auto",
              layouts: LayoutMap | None = None, target: str = DEFAULT_TARGET) -> PhysicalPlan:
    """The physical plan of func under planner (a name of PLANNERS, or a Planner
    itself: the plan is named "custom"), with its resources on target. Raises
    ValueError for a planner or target that is not registered, DiagnosticError (R300)
    from layout inference or when an update runs outside its reducer's participant set.
    A plan over the target's limits is still returned, with R506 among its notes (an
    error note for a hard limit: verify.oracle.pipeline.make_plan refuses it)."""
    if callable(planner):
        plan_reducer, planner = planner, "custom"
    elif planner not in PLANNERS:
        raise ValueError(f"unknown planner {planner!r}; available: "
                         f"{', '.join(PLANNERS)}")
    else:
        plan_reducer = PLANNERS[planner]
    if layouts is None:
        layouts = infer_layouts(func, target)
    reducers = tuple(plan_reducer(sites) for sites in gather_reducers(func, layouts))
    limits = target_named(target)
    pipelines, planned_layouts = plan_pipelines(func, layouts, limits)
    swizzles = plan_swizzles(func, planned_layouts, limits)
    raster, raster_why = plan_raster(func.kernel)
    plan = PhysicalPlan(func, planner, planned_layouts, reducers, pipelines=pipelines,
                        pitches=plan_pitches(func, tuple(b for b, _ in swizzles)),
                        swizzles=swizzles, raster=raster, raster_why=raster_why)
    resources = plan_resources(plan, limits)
    if resources.shared_bytes > limits.dynamic_shared_bytes and \
            any(p.staged_reads for p in plan.pipelines):
        # the staged reads' tiles do not fit: into registers instead
        plan = dataclasses.replace(plan, pipelines=tuple(
            prefetch_instead(p) for p in plan.pipelines))
        resources = plan_resources(plan, limits)
    if resources.shared_bytes > limits.dynamic_shared_bytes and \
            any(p.copies for p in plan.pipelines):
        # the stages do not fit: plain loops, which may (resource_diagnostics says)
        why = (f"its stages would take the block to {kib(resources.shared_bytes)} of "
               f"shared memory, over the {kib(limits.dynamic_shared_bytes)} one block "
               f"may use")
        plan = dataclasses.replace(plan, pipelines=tuple(
            dataclasses.replace(p, copies=(), prefetched=(), staged_reads=(), plain=why)
            if p.active else p
            for p in plan.pipelines))
        resources = plan_resources(plan, limits)
    if resources.register_words > resources.register_budget and \
            any(p.prefetched for p in plan.pipelines):
        # the next tiles do not fit the registers: load them where the copies stand
        plan = dataclasses.replace(plan, pipelines=tuple(
            dataclasses.replace(p, prefetched=(), plain=p.plain or
                                "its prefetched tiles would not fit the register budget")
            for p in plan.pipelines))
        resources = plan_resources(plan, limits)
    # the occupancy of the final plan only: its pipelines and shared memory are settled
    resources = dataclasses.replace(resources,
                                    occupancy=plan_occupancy(plan, resources, limits))
    # the barriers of the final plan: they follow its pipelines
    return dataclasses.replace(plan, resources=resources, barriers=plan_barriers(plan),
                               one_writer_loops=one_writer_loops(plan),
                               notes=plan.notes + resource_diagnostics(func, resources, limits))
