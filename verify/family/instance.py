"""The program at a family's smallest counterexample sizes, run to show the failure
concretely (docs/design.md §21).

The ordinary check stops at the first error: at a counterexample that is the
interpreter's (an out-of-bounds read is R102 there), so the simulator never runs. Here
every executor — the interpreter and the simulator of each plan `check` would simulate —
runs on its own until its own first error, and the report shows what each found (the
simulator's R102 or R505 on the GPU model, a violation, a mismatch, or nothing).

The cost stays that of an ordinary check: the same blocks (the classes and the seeded
sample when the blocks are proved independent, verify.oracle.blocks), each against its
own window of every tensor, the same run-size limit and the same memory estimate and
limit (over it, nothing runs and the instance says why). Blocks run one after another
and an executor that stopped is not run on the later blocks, so a failure in the first
block ends the run there. The instance runs even where the static checks reject the
program at these sizes: the interpreter and the simulator refuse at run time what has
no meaning (a read of a reducer never finalized is R200 in both), and that is the
concrete failure to show."""
from __future__ import annotations

from dataclasses import dataclass, field

from verify_reducer.interp import logical
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.diagnostics import Diagnostic, DiagnosticError
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.run_cost import check_run_size

from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_canonical import plan_canonical
from verify_reducer.codegen.plan_fast import FastPlanRefused, plan_partition
from verify_reducer.codegen.plan_sites import gather_reducers
from verify_reducer.spec.physical import PhysicalPlan
from verify_reducer.verify.oracle import blocks as blocks_mod
from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle.cost import estimate
from verify_reducer.verify.oracle.pipeline import (BackendRun, CheckReport, Comparison,
                                                   Loaded, compare_outputs, format_bytes,
                                                   loaded_layouts, make_plan, plan_notes,
                                                   plan_over_limits, static_diagnostics)
from verify_reducer.codegen.proofs.fast import search_fast
from verify_reducer.verify.proofs.monoid import op_reports

OK, STOPPED, VIOLATIONS, MISMATCH, NOT_RUN = "ok", "stopped", "violations", "mismatch", "not run"


@dataclass
class Execution:
    """What one executor found at the instance. status: ok (ran every chosen block and,
    for a simulator, agreed with the interpreter), stopped (an error ended it: its
    diagnostics), violations (a simulated plan committed R500–R505: its diagnostics),
    mismatch (outputs differ from the interpreter's: comparisons), not run (why)."""
    label: str                                   # interp, sim/auto, sim/canonical
    status: str = OK
    diagnostics: list[Diagnostic] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    why: str | None = None                       # not run: why; ok: what it did

    def to_json(self) -> dict:
        return {"label": self.label, "status": self.status,
                "diagnostics": [d.to_json() for d in self.diagnostics],
                "mismatches": sum(c.mismatches for c in self.comparisons),
                "why": self.why}


@dataclass
class Instance:
    """The family's program at sizes: the verdict the ordinary check gives there
    (report) and what each executor found (executions)."""
    sizes: dict[str, int]
    report: CheckReport
    executions: list[Execution] = field(default_factory=list)
    not_run: str | None = None          # why nothing ran (run size, memory limit)

    @property
    def verdict(self) -> str:
        """The ordinary check's verdict there; `not run` when the run was refused before
        anything found an error (over the memory limit)."""
        if self.not_run and self.report.exit_code == 0:
            return NOT_RUN
        return self.report.verdict

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.report.diagnostics if d.is_error]

    @property
    def sampled(self) -> tuple[int, int] | None:
        """(blocks run, blocks in the grid) when a sample ran, not the whole grid."""
        sel = self.report.selection
        if sel is None or sel.blocks is None:
            return None
        return len(sel.blocks), sel.total

    def to_json(self) -> dict:
        sampled, est = self.sampled, self.report.estimate
        return {"sizes": dict(self.sizes), "verdict": self.verdict,
                "diagnostics": [d.to_json() for d in self.errors],
                "violations": [v.to_json() for v in self.report.violations],
                "runs": [e.to_json() for e in self.executions],
                "sampled": None if sampled is None else
                {"blocks": sampled[0], "total": sampled[1]},
                "memory": None if est is None else est.total,
                "not_run": self.not_run}


def check_instance(loaded: Loaded, sizes: dict[str, int], seed: int,
                   max_memory: int | None) -> Instance:
    """The program of loaded at sizes (its `# input:` lines dropped: they fit the file's
    sizes), checked with every executor run to its own end."""
    key = next(k for k, f in loaded.program.funcs.items() if f is loaded.func)
    try:
        program = parse_source(loaded.source, loaded.path, dict(sizes), loaded.params)
    except DiagnosticError as err:
        return Instance(sizes, CheckReport(None, err.diagnostics, seed=seed),
                        not_run="the program does not lower at these sizes")
    member = Loaded(loaded.path, loaded.source, program, program.funcs[key], {},
                    params=loaded.params, target=loaded.target)
    report = CheckReport(member, static_diagnostics(member), seed=seed)
    report.reducer_ops = op_reports(member.func)
    instance = Instance(sizes, report)
    func = member.func
    selection = report.selection = blocks_mod.select(func, None, seed)
    too_long = check_run_size(func, selection.blocks, selection.why_all or "the sample")
    if too_long is not None:
        report.diagnostics.append(too_long)
        instance.not_run = too_long.message
        return instance
    boxes = None if selection.blocks is None else \
        [blocks_mod.windows(func, selection.accesses, b) for b in selection.blocks]
    report.estimate = estimate(func, boxes)
    if max_memory is not None and report.estimate.total > max_memory:
        instance.not_run = (f"it would need about {report.estimate.describe()}, over "
                            f"--max-memory {format_bytes(max_memory)}")
        return instance
    _execute(instance, loaded, boxes)
    return instance


def _plans(instance: Instance, file: Loaded) -> tuple[dict, list[Execution]]:
    """The plans check would simulate (auto; canonical too when auto chose a fast plan
    somewhere), the plan of the file's sizes where it differs (FILE_PLAN), and an
    execution `not run` for each that cannot be made."""
    member = instance.report.loaded
    try:
        auto = make_plan(member, "auto")
    except DiagnosticError as err:
        return {}, [Execution("sim/auto", NOT_RUN, list(err.diagnostics),
                              why="no plan at these sizes")]
    plans = {"auto": auto}
    instance.report.plans = plans
    instance.report.resources = auto.resources
    unplanned = []
    if any(rp.planner != "canonical" for rp in auto.reducers):
        try:
            plans["canonical"] = plan_over_limits(member, "canonical")
        except DiagnosticError as err:
            unplanned.append(Execution("sim/canonical", NOT_RUN, list(err.diagnostics),
                                       why="no plan at these sizes"))
    try:
        found = _file_plan(file, member)
    except FastPlanRefused as refused:
        unplanned.append(Execution(f"sim/{FILE_PLAN}", NOT_RUN, [refused.diagnostic],
                                   why="the file's plan cannot be made at these sizes"))
    else:
        if found is not None:
            plans[FILE_PLAN] = found
    return plans, unplanned


# The plan chosen at the file's sizes, made for the member: a kernel compiled for the
# family is that one kernel, so where the member's own search picks another partition
# the file's is simulated too (a fast path that only the file's sizes made legal fails
# here concretely).
FILE_PLAN = "file-plan"


def _file_plan(file: Loaded, member: Loaded) -> PhysicalPlan | None:
    """The file's plan for member, or None where it is the member's own. Raises
    FastPlanRefused when the file's partition cannot be planned there."""
    chosen = {rs.reducer.name: search_fast(rs).chosen
              for rs in gather_reducers(file.func, loaded_layouts(file))}
    layouts = loaded_layouts(member)
    differs = False
    for rs in gather_reducers(member.func, layouts):
        mine, own = chosen.get(rs.reducer.name), search_fast(rs).chosen
        if mine is not None and (own is None or (own.partition, own.storage) !=
                                 (mine.partition, mine.storage)):
            differs = True
    if not differs:
        return None

    def planner(sites):
        attempt = chosen.get(sites.reducer.name)
        return plan_partition(sites, attempt) if attempt is not None else \
            plan_canonical(sites)
    return plan_func(member.func, planner, layouts, member.arch)


def _execute(instance: Instance, file: Loaded, boxes) -> None:
    report = instance.report
    member, seed = report.loaded, report.seed
    plans, unplanned = _plans(instance, file)
    interp = Execution("interp")
    sims = {name: Execution(f"sim/{name}") for name in plans}
    runs = {name: BackendRun("sim", name, {}, None, [], plan_notes(plan))
            for name, plan in plans.items()}
    epochs: list = []
    if boxes is None:
        work = [(None, None, member.inputs(seed))]
    else:
        given = member.given()
        work = [([block], windows, None) for block, windows in
                zip(report.selection.blocks, boxes)]
    for chosen, windows, values in work:
        if values is None:
            values = inputs_mod.in_windows(member.func, seed, given,
                                           {n: w.box for n, w in windows.items()})
        reference = None
        if interp.status == OK:
            try:
                reference = logical.run(member.func, values, chosen, windows)
                epochs += reference.epochs
            except DiagnosticError as err:
                interp.status, interp.diagnostics = STOPPED, list(err.diagnostics)
        for name, plan in plans.items():
            sim = sims[name]
            if sim.status == STOPPED:
                continue
            try:
                result = simulate(plan, values, chosen, windows)
            except DiagnosticError as err:
                sim.status, sim.diagnostics = STOPPED, list(err.diagnostics)
                continue
            runs[name].violations += result.violations
            if reference is not None:
                found = compare_outputs(result.outputs, reference, result.written, windows)
                sim.comparisons = found if not sim.comparisons else \
                    [a.merged(b) for a, b in zip(sim.comparisons, found)]
        if interp.status == STOPPED and all(s.status == STOPPED for s in sims.values()):
            break                  # nothing left running: the later blocks add nothing
    for name, sim in sims.items():
        if sim.status == STOPPED:
            continue
        violations = runs[name].violations
        if violations:
            sim.status, sim.diagnostics = VIOLATIONS, list(violations)
        elif any(not c.ok for c in sim.comparisons):
            sim.status = MISMATCH
        elif interp.status != OK:
            sim.why = "ran; the interpreter stopped, so there is nothing to compare with"
        report.runs.append(runs[name])
        if sim.comparisons:
            report.comparisons[f"sim/{name}"] = sim.comparisons
    if interp.status == OK:
        report.reference = logical.Result({}, {}, epochs)
        interp.why = f"{len(epochs)} epoch(s) finalized"
    instance.executions = [interp] + list(sims.values()) + unplanned
    if not instance.errors:
        # the verdict the ordinary check gives: it stops at the interpreter's error,
        # else at the first simulator's
        stopped = [e for e in [interp, *sims.values()] if e.status == STOPPED]
        if stopped:
            report.diagnostics += stopped[0].diagnostics

