"""The oracle API: load a program, check it, run it on a backend. The CLI is a thin
shell over these functions; other tools (fuzzers, backend test suites) call them directly."""
from __future__ import annotations

import dataclasses
import importlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from verify_reducer.spec.diagnostics import ERROR, Diagnostic, DiagnosticError
from verify_reducer.spec.frontend import ParamError, parse_source
from verify_reducer.spec.frontend.family import DirectiveError, FamilyDecl
from verify_reducer.spec.run_cost import check_run_size
from verify_reducer.spec import ir
from verify_reducer.spec.ir import PrimFunc, Program
from verify_reducer.spec.source import SourceDecodeError, read_source_file
from verify_reducer.spec.target import DEFAULT_TARGET
from verify_reducer.interp import logical
from verify_reducer.interp.accept import judge

from verify_reducer.codegen.layout import LayoutMap, infer_layouts
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_fast import FastPlanRefused
from verify_reducer.codegen.proofs.obligation import ProofResult
from verify_reducer.verify.proofs.monoid import OpReport, op_reports, user_ops
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.physical import PhysicalPlan, Resources

from verify_reducer.verify.oracle import blocks as blocks_mod
from verify_reducer.verify.oracle.block_races import block_races
from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle.cost import Estimate, estimate
from verify_reducer.verify.epochs.checker import check_func
from verify_reducer.verify.oracle.expect import ExpectationSyntaxError, parse_expectation
from verify_reducer.verify.oracle import suppressions

# the exit codes and the usage error live in a light module the parser imports too
from verify_reducer.verify.oracle.exit_codes import (  # noqa: F401  (re-exported)
    EXIT_INCONCLUSIVE, EXIT_INTERNAL, EXIT_MISMATCH, EXIT_OK, EXIT_REJECTED, EXIT_USAGE,
    UsageError)

if TYPE_CHECKING:                    # annotations only: imported when TileLang runs
    from verify_reducer.codegen.tilelang_backend import TileLangSetup

# The backends that run elsewhere are imported when one runs: codegen.runner brings the
# whole CUDA renderer (about 10 ms and 16 modules), codegen.tilelang_backend TileLang's
# bridge, and a check needs neither. Their names stay readable here (`pipeline.
# TileLangFailed`, `pipeline.CudaUnavailable`), as they were when imported at the top.
_BACKEND_NAMES = {"CudaUnavailable": "runner", "PassConfigError": "tilelang_backend",
                  "PrimFuncNotFound": "tilelang_backend", "TileLangFailed": "tilelang_backend",
                  "TileLangSetup": "tilelang_backend",
                  "TileLangUnavailable": "tilelang_backend"}


def __getattr__(name: str):
    module = _BACKEND_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"verify_reducer.codegen.{module}"), name)


def run_cuda(plan: PhysicalPlan, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """codegen.runner.run_cuda, imported on the first run (the tests stand in for it
    here)."""
    from verify_reducer.codegen.runner import run_cuda as run
    return run(plan, values)


def device_target() -> str | None:
    """codegen.runner.device_target, imported when asked."""
    from verify_reducer.codegen.runner import device_target as target
    return target()


class OutputsError(ValueError):
    """A backend's outputs that cannot be judged: a tensor missing, one the program does
    not have, another shape, not numbers. The message names the tensor."""


@dataclass
class Loaded:
    path: str
    source: str
    program: Program
    func: PrimFunc
    default_inputs: dict[str, np.ndarray] = field(default_factory=dict)  # `# input:` lines
    layouts: LayoutMap | None = None                                       # inferred once
    # the factory parameters the caller bound (--param, params=): every lowering of the
    # program again (a size family's members) binds them too
    params: dict[str, object] = field(default_factory=dict)
    # --arch: the spec.target the program is planned for; None when none was chosen
    # (DEFAULT_TARGET, or for the cuda backend the device's own: run_backend)
    target: str | None = None

    @property
    def arch(self) -> str:
        """The architecture every plan of the program is made for."""
        return self.target or DEFAULT_TARGET

    def inputs(self, seed: int, given: dict[str, np.ndarray] | None = None,
               origin: str = "inputs") -> dict[str, np.ndarray]:
        """Every parameter's initial value: given ones first, then the program's own
        `# input:` lines, then values generated from seed."""
        return inputs_mod.prepare(self.func, seed, self._with_defaults(given), origin)

    def given(self, given: dict[str, np.ndarray] | None = None,
              origin: str = "inputs") -> dict[str, np.ndarray]:
        """The given and `# input:` values alone, conformed (nothing generated)."""
        return inputs_mod.conform_given(self.func, self._with_defaults(given), origin)

    def _with_defaults(self, given: dict[str, np.ndarray] | None) -> dict[str, np.ndarray]:
        names = {p.name for p in self.func.params}
        merged = {k: v for k, v in self.default_inputs.items() if k in names}
        merged.update(given or {})
        return merged


def read_source(path: str) -> str:
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory, not a program file")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    try:        # as Python decodes it: what is verified is what TileLang imports
        return read_source_file(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except SourceDecodeError as exc:
        raise UsageError(f"{path}:{exc.line}:{exc.col}: cannot read the program as "
                         f"Python does: {exc.reason}") from None


def load(path: str, func_name: str | None = None, source: str | None = None,
         meaningful: bool = True, params: dict[str, object] | None = None,
         target: str | None = None) -> Loaded:
    """Parse path (never executing it) and pick the prim_func. Raises DiagnosticError for
    a program the frontend rejects (and, meaningful, for one whose reducer op has no
    meaning: `check` asks not to, it reports the R212 in its full report) and UsageError
    for a missing file or function, or a param that binds no factory parameter.
    params: factory parameters (spec.frontend.factories: values, or ParamText as
    `--param` gives them). target: the architecture to plan for (a spec.target name,
    checked by the caller: --arch)."""
    source = read_source(path) if source is None else source
    params = dict(params or {})
    try:
        program = parse_source(source, path, None, params)
    except ParamError as exc:
        raise UsageError(f"{path}: {exc}") from None
    try:
        func = program.func(func_name)
    except KeyError:
        names = ", ".join(program.funcs) or "none"
        wanted = f"no prim_func named {func_name!r}" if func_name else \
            "several prim_funcs and none is called main; pick one with --func"
        raise UsageError(f"{path}: {wanted} (found: {names})") from None
    if meaningful:
        _refuse_meaningless_ops(func)
    try:
        defaults = parse_expectation(source, path).inputs
    except ExpectationSyntaxError as exc:
        raise UsageError(str(exc)) from None
    return Loaded(path, source, program, func, defaults, params=params, target=target)


# Epoch-verifier codes that leave a program with no execution at all: an op with no
# combine operation for its dtype (R212), a finalize into a destination of another shape
# or dtype (R214: the partials have nowhere to go; the simulator indexed past the
# destination, issue 24's campaign #2581).
UNEXECUTABLE = frozenset({"R212", "R214"})


def _refuse_meaningless_ops(func: PrimFunc) -> None:
    """A program with an UNEXECUTABLE error has no meaning: no witness, interpreter,
    simulator or CUDA kernel can run it, not even under --no-verify. Refused here, where
    every path loads the program, with every diagnostic of the epoch verifier, as `check`
    says them. The verifier runs only where a reducer could carry such an error."""
    if not any(isinstance(stmt, ir.Alloc) and stmt.buffer.reducer is not None
               for stmt in ir.walk(func.kernel.body)):
        return
    diagnostics = check_func(func)
    if any(d.is_error and d.code in UNEXECUTABLE for d in diagnostics):
        raise DiagnosticError(diagnostics)


def static_diagnostics(loaded: Loaded) -> list[Diagnostic]:
    """Everything the static checkers report about the function (errors and notes):
    the epoch verifier first; layouts only for a program whose epochs are sound (a
    broken epoch often breaks layout inference too, and one cause deserves one error)."""
    diagnostics = check_func(loaded.func) + block_races(loaded.func)
    if any(d.is_error for d in diagnostics):
        return diagnostics
    try:
        loaded_layouts(loaded)
    except DiagnosticError as err:
        diagnostics += err.diagnostics
    return diagnostics


def loaded_layouts(loaded: Loaded) -> LayoutMap:
    """The layouts of the loaded function (inferred once)."""
    if loaded.layouts is None:
        loaded.layouts = infer_layouts(loaded.func, loaded.arch)
    return loaded.layouts


@dataclass
class Comparison:
    """One output tensor of a backend judged against the interpreter."""
    name: str
    ok: bool                         # no element refuted (see `inconclusive`)
    mismatches: int
    unchecked: int = 0               # elements the bound cannot judge: not verified
    first_index: tuple[int, ...] | None = None
    got: float | int | None = None
    expected: float | int | None = None
    bound: float | None = None
    compared: int = 0                # elements compared
    overflow: int = 0                # judged elements where some order may give ±inf
    unchecked_index: tuple[int, ...] | None = None   # the first element not judged
    unchecked_expected: float | int | None = None
    unchecked_bound: float | None = None

    @property
    def inconclusive(self) -> bool:
        """Nothing refuted, but some element was not checked: never a pass."""
        return self.ok and self.unchecked > 0

    @property
    def status(self) -> str:
        return "mismatch" if not self.ok else \
            "inconclusive" if self.unchecked else "match"

    def merged(self, other: "Comparison") -> "Comparison":
        """This comparison and one of the same output over other elements."""
        first = self if not self.ok else other
        unjudged = self if self.unchecked else other
        return dataclasses.replace(first, ok=self.ok and other.ok,
                                   mismatches=self.mismatches + other.mismatches,
                                   unchecked=self.unchecked + other.unchecked,
                                   compared=self.compared + other.compared,
                                   overflow=self.overflow + other.overflow,
                                   unchecked_index=unjudged.unchecked_index,
                                   unchecked_expected=unjudged.unchecked_expected,
                                   unchecked_bound=unjudged.unchecked_bound)


def compare_outputs(got: dict[str, np.ndarray], reference: logical.Result,
                    written: dict[str, np.ndarray] | None = None,
                    windows: dict[str, blocks_mod.Window] | None = None,
                    required=None) -> list[Comparison]:
    """Each output judged against the interpreter: every element, or with `written`
    (window runs) exactly the elements either side wrote, reported at their index in
    the whole tensor. Only the tensors in `got` are judged (a backend need not return
    its inputs); those named in `required` (the outputs a backend must return) raise
    OutputsError when missing, and so does a tensor the reference does not have or one
    of another shape."""
    unknown = sorted(set(got) - set(reference.outputs))
    if unknown:
        raise OutputsError(f"no tensor named {', '.join(unknown)} in the program (it has "
                           f"{', '.join(reference.outputs)})")
    missing = [n for n in (required or ()) if n not in got]
    if missing:
        raise OutputsError(f"output {', '.join(missing)} missing (the program writes "
                           f"{', '.join(required)})")
    out = []
    for name, exact in reference.outputs.items():
        if name not in got:
            continue
        bound = reference.bounds[name]
        mask = None if written is None else written[name] | reference.written[name]
        try:
            accepted, unjudged, overflow = judge(got[name], exact, bound, mask)
        except ValueError as exc:
            raise OutputsError(f"output {name}: {exc}") from None
        compared = exact.size if mask is None else int(mask.sum())
        origin = (lambda i: windows[name].origin(i)) if windows is not None else \
            (lambda i: i)
        facts = {"compared": compared, "overflow": int(overflow.sum())}
        if unjudged.any():
            first = tuple(int(i) for i in np.argwhere(unjudged)[0])
            facts.update(unchecked_index=origin(first),
                         unchecked_expected=exact[first].item(),
                         unchecked_bound=float(np.broadcast_to(bound, exact.shape)[first]))
        unchecked = int(unjudged.sum())
        bad = np.argwhere(~accepted)
        if len(bad) == 0:
            out.append(Comparison(name, True, 0, unchecked, **facts))
            continue
        idx = tuple(int(i) for i in bad[0])
        out.append(Comparison(name, False, len(bad), unchecked, origin(idx),
                              got[name][idx].item(), exact[idx].item(),
                              float(np.broadcast_to(bound, exact.shape)[idx]), **facts))
    return out


@dataclass
class BackendRun:
    """What one backend produced: every tensor parameter, the bounds when the backend is
    the interpreter, and the violations a simulated plan committed (R500–R504)."""
    backend: str
    plan: str | None
    outputs: dict[str, np.ndarray]
    bounds: dict[str, np.ndarray] | None = None
    violations: list[Diagnostic] = field(default_factory=list)
    notes: list[Diagnostic] = field(default_factory=list)   # e.g. R400 from planning


@dataclass
class CheckReport:
    loaded: Loaded | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reference: logical.Result | None = None
    runs: list[BackendRun] = field(default_factory=list)
    comparisons: dict[str, list[Comparison]] = field(default_factory=dict)  # by run label
    epochs: list[EpochReport] = field(default_factory=list)
    seed: int = 0
    resources: Resources | None = None          # the default (auto) plan's
    selection: blocks_mod.Selection | None = None
    estimate: Estimate | None = None       # memory of the run check made (or refused)
    plans: dict[str, PhysicalPlan] = field(default_factory=dict)   # simulated, by name
    family: "FamilyResult | None" = None   # the proofs for every size (verify.family.checker)
    reducer_ops: list[OpReport] = field(default_factory=list)   # declared ops' laws
    # findings accepted by a suppression comment or the configuration, with the reason
    # (verify.oracle.suppressions): reported, never dropped
    suppressed: list = field(default_factory=list)

    @property
    def violations(self) -> list[Diagnostic]:
        return [v for run in self.runs for v in run.violations]

    @property
    def exit_code(self) -> int:
        if any(d.is_error for d in self.diagnostics):
            return EXIT_REJECTED
        return comparisons_exit(self.violations, [c for cs in self.comparisons.values()
                                                  for c in cs])

    @property
    def verdict(self) -> str:
        return {EXIT_OK: "verified", EXIT_REJECTED: "rejected",
                EXIT_MISMATCH: "mismatch",
                EXIT_INCONCLUSIVE: "inconclusive"}[self.exit_code]


def comparisons_exit(violations, comparisons: list[Comparison]) -> int:
    """The exit code of a backend judged against the interpreter: 3 on a violation or a
    refuted element, else 5 when some element could not be judged, else 0."""
    if violations or any(not c.ok for c in comparisons):
        return EXIT_MISMATCH
    if any(c.unchecked for c in comparisons):
        return EXIT_INCONCLUSIVE
    return EXIT_OK


def run_label(run: BackendRun) -> str:
    return f"{run.backend}/{run.plan}" if run.plan else run.backend


@dataclass
class EpochReport:
    """One reducer's plan decision and the proofs behind it (all epochs of a reducer
    share one plan)."""
    reducer: str
    line: int
    plan: str
    width: int | None
    proofs: list[ProofResult]
    notes: list[Diagnostic]

    def to_json(self) -> dict:
        return {"reducer": self.reducer, "line": self.line, "plan": self.plan,
                "width": self.width, "proofs": [p.to_json() for p in self.proofs],
                "notes": [n.to_json() for n in self.notes]}


def epoch_reports(plan: PhysicalPlan) -> list[EpochReport]:
    """Each reducer's plan decision with the proofs it was chosen by, read from the
    plan (spec.physical.ChosenBy; the auto planner records them for every reducer)."""
    out = []
    for rp in plan.reducers:
        widths = {fp.width for fp in rp.finalizes}
        proofs = list(rp.chosen_by.proofs) if rp.chosen_by is not None else []
        out.append(EpochReport(rp.reducer.name, rp.reducer.span.line, rp.planner,
                               widths.pop() if len(widths) == 1 else None, proofs,
                               list(rp.notes)))
    return out


def check(path: str, func_name: str | None = None, seed: int = 0,
          given: dict[str, np.ndarray] | None = None, blocks: str | int | None = None,
          max_memory: int | None = None, source: str | None = None,
          family: FamilyDecl | None = None,
          params: dict[str, object] | None = None,
          ignored: dict[str, str] | None = None,
          target: str | None = None) -> CheckReport:
    """Parse, verify, then run the reference interpreter on seeded inputs and simulate
    every plan that applies, comparing each with the interpreter. Rejections come back as
    diagnostics and violations, not raises.

    blocks: None (the block classes and a small random sample, each block against its
    own window of every tensor, when the blocks are proved independent; verify.oracle.blocks),
    "all" (the whole grid in one run) or N (the classes and N random blocks).
    max_memory: refuse (UsageError) when the run's memory estimate is over it.
    source: the program's text when it was not read from path (stdin); path names it.
    family: sizes and assumptions from the command line, added to the file's own
    `# for-all:`/`# assume:` lines; with any, the file's instance is checked and then
    the family is proved for every size (verify.family.checker).
    params: the factory parameters bound (as `load` takes them).
    ignored: codes the configuration accepts (code -> where it says so); they and the
    source's suppression comments are applied last (verify.oracle.suppressions).
    target: the architecture planned for (--arch; default spec.target.DEFAULT_TARGET)."""
    try:
        loaded = load(path, func_name, source, meaningful=False, params=params,
                      target=target)
    except DiagnosticError as err:
        report = CheckReport(None, err.diagnostics, seed=seed)
        suppressions.accept(report, _source_text(path, source), ignored or {})
        return report
    report = check_loaded(loaded, seed, given, blocks, max_memory)
    from verify_reducer.verify.family.checker import check_family     # the family proofs call check_loaded again
    try:
        check_family(report, family, seed=seed, max_memory=max_memory)
    except DirectiveError as exc:
        raise UsageError(str(exc)) from None
    suppressions.accept(report, loaded.source, ignored or {})
    return report


def _source_text(path: str, source: str | None) -> str | None:
    """The program's text for its suppression comments when it did not load (None when
    it cannot be read or decoded: nothing to honour then)."""
    if source is not None:
        return source
    try:
        return read_source_file(path)
    except (OSError, SourceDecodeError):
        return None


def check_loaded(loaded: Loaded, seed: int = 0, given: dict[str, np.ndarray] | None = None,
                 blocks: str | int | None = None,
                 max_memory: int | None = None) -> CheckReport:
    """`check` of a program already loaded (the file's instance, or a family member)."""
    report = CheckReport(loaded, static_diagnostics(loaded), seed=seed)
    report.reducer_ops = op_reports(loaded.func)
    if any(d.is_error for d in report.diagnostics):
        return report
    selection = report.selection = blocks_mod.select(loaded.func, blocks, seed)
    too_long = check_run_size(loaded.func, selection.blocks, selection.why_all or "the sample")
    if too_long is not None:
        report.diagnostics.append(too_long)
        return report
    boxes = None if selection.blocks is None else \
        [blocks_mod.windows(loaded.func, selection.accesses, b) for b in selection.blocks]
    report.estimate = estimate(loaded.func, boxes)
    refuse_over(report.estimate, max_memory, "check",
                "let check sample blocks (drop --blocks all)"
                if selection.why_all == "--blocks all" else None)
    try:
        # planned first: a kernel over the target's limits (R506) is rejected before
        # the interpreter runs its grid, however large
        auto = make_plan(loaded, "auto")
        report.resources = auto.resources
        report.diagnostics += [d for d in auto.notes if d.code == "R506"]
        report.epochs = epoch_reports(auto)
        # Simulate the default plan, and canonical too when the default chose a fast
        # plan somewhere (canonical is the always-correct baseline it must agree with;
        # it is simulated even where it would not fit the target).
        plans = report.plans = {"auto": auto}
        if any(rp.planner != "canonical" for rp in auto.reducers):
            plans["canonical"] = plan_over_limits(loaded, "canonical")
        if selection.blocks is None:
            _check_whole(report, plans, loaded.inputs(seed, given))
        else:
            _check_windows(report, plans, loaded.given(given), boxes)
    except DiagnosticError as err:
        report.diagnostics += err.diagnostics
    return report


def verifier_errors(loaded: Loaded, values: dict[str, np.ndarray],
                    interpret: bool = True) -> tuple[list[Diagnostic], logical.Result | None]:
    """The errors `check` would reject the program with on these inputs: the static
    checkers' first, else (when interpret) the interpreter's; and the interpreter's
    result when it ran and accepted the program (a caller that compares a backend with
    it need not run it again). `run` and `emit` refuse such a program (one gate: no
    backend runs or prints what the verifier rejects)."""
    errors = [d for d in static_diagnostics(loaded) if d.is_error]
    if errors or not interpret:
        return errors, None
    try:
        return [], oracle(loaded, values)
    except DiagnosticError as err:
        return [d for d in err.diagnostics if d.is_error], None


def _check_whole(report: CheckReport, plans: dict[str, PhysicalPlan],
                 values: dict[str, np.ndarray]) -> None:
    report.reference = oracle(report.loaded, values)
    for name, plan in plans.items():
        run = simulate_plan(plan, name, values)
        report.runs.append(run)
        report.comparisons[run_label(run)] = compare_outputs(run.outputs, report.reference)


def _check_windows(report: CheckReport, plans: dict[str, PhysicalPlan],
                   given: dict[str, np.ndarray],
                   boxes: list[dict[str, blocks_mod.Window]]) -> None:
    """Each chosen block alone, against its own window of every tensor (independence
    makes that the value it computes inside the whole run). The reference keeps every
    block's epochs; outputs stay per window, judged where either side wrote. Blocks
    are independent, so large ones run side by side in worker processes."""
    job = _WindowJob(report.loaded.func, report.seed, given, plans)
    results = _map_blocks(job, list(zip(report.selection.blocks, boxes)))
    epochs: list = []
    runs = {name: BackendRun("sim", name, {}, None, [], plan_notes(plan))
            for name, plan in plans.items()}
    for block_epochs, per_plan in results:
        epochs += block_epochs
        for name, (violations, found) in per_plan.items():
            runs[name].violations += violations
            label = run_label(runs[name])
            before = report.comparisons.get(label)
            report.comparisons[label] = found if before is None else \
                [a.merged(b) for a, b in zip(before, found)]
    report.reference = logical.Result({}, {}, epochs)
    report.runs = list(runs.values())


@dataclass
class _WindowJob:
    """What every block of a window check shares (inherited by forked workers)."""
    func: PrimFunc
    seed: int
    given: dict[str, np.ndarray]
    plans: dict[str, PhysicalPlan]

    def run(self, block: tuple[int, ...], windows: dict[str, blocks_mod.Window]):
        """(the block's epochs, {plan: (violations, comparisons)})."""
        values = inputs_mod.in_windows(self.func, self.seed, self.given,
                                       {n: w.box for n, w in windows.items()})
        reference = logical.run(self.func, values, [block], windows)
        per_plan = {}
        for name, plan in self.plans.items():
            result = simulate(plan, values, [block], windows)
            per_plan[name] = (result.violations, compare_outputs(
                result.outputs, reference, result.written, windows))
        return reference.epochs, per_plan


# Window elements over which running blocks in worker processes pays for the fork (a
# fork costs tens of milliseconds; four sampled blocks of a split-K GEMM's 128×128 tiles,
# 2 M window elements, take seconds each in the interpreter's exact gemm).
PARALLEL_ELEMENTS = 1 << 20
_JOB: _WindowJob | None = None      # the job a forked worker runs (set before the fork)


def _map_blocks(job: _WindowJob, work: list) -> list:
    """job.run over (block, windows) pairs, in order: in this process, or in up to
    one worker per CPU when the windows are large and fork is available."""
    import multiprocessing      # here: a check whose blocks are small never needs it
    from concurrent.futures import ProcessPoolExecutor
    elements = sum(w.size for _, windows in work for w in windows.values())
    workers = min(len(work), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                  else os.cpu_count() or 1)
    if workers < 2 or elements < PARALLEL_ELEMENTS or \
            "fork" not in multiprocessing.get_all_start_methods():
        return [job.run(block, windows) for block, windows in work]
    global _JOB
    _JOB = job
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) \
                as pool:
            return list(pool.map(_run_forked, work))
    finally:
        _JOB = None


def _run_forked(item):
    block, windows = item
    return _JOB.run(block, windows)


def refuse_over(est: Estimate, max_memory: int | None, what: str,
                instead: str | None = None) -> None:
    """UsageError (exit 2) when the estimate is over the limit, before anything runs;
    `instead` names another way out than a larger limit."""
    if max_memory is not None and est.total > max_memory:
        raise UsageError(f"{what} would need about {est.describe()}, over --max-memory "
                         f"{format_bytes(max_memory)}; raise --max-memory"
                         + (f" or {instead}" if instead else ""))


def format_bytes(n: float) -> str:
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}iB"
    return f"{int(n)} B"


def make_plan(loaded: Loaded, planner: str) -> PhysicalPlan:
    """The physical plan of the loaded function, which must fit the target: a plan over
    a hard limit raises DiagnosticError with its R506 errors (plan_over_limits for
    the rest)."""
    plan = plan_over_limits(loaded, planner)
    over = [d for d in plan.notes if d.is_error]
    if over:
        raise DiagnosticError(over)
    return plan


def plan_over_limits(loaded: Loaded, planner: str) -> PhysicalPlan:
    """The physical plan of the loaded function, even where it does not fit the target
    (R506 errors stay among its notes). R300 from layouts raises DiagnosticError; a
    fast plan that is not proved legal raises DiagnosticError with the R400 refusal as
    an error (the user asked for it by name)."""
    try:
        return plan_func(loaded.func, planner, loaded_layouts(loaded), loaded.arch)
    except FastPlanRefused as refused:
        raise DiagnosticError(dataclasses.replace(refused.diagnostic, severity=ERROR)) \
            from None


def run_backend(loaded: Loaded, backend: str, values: dict[str, np.ndarray],
                planner: str = "canonical", progress=None,
                tilelang: TileLangSetup | None = None) -> BackendRun:
    """progress(done, total): called after each block by interp and sim. tilelang: the
    TileLang setup (pass configs) for the tilelang backend (default: none given)."""
    if backend == "interp":
        result = logical.run(loaded.func, values, progress=progress)
        return BackendRun("interp", None, result.outputs, result.bounds)
    if backend == "sim":
        return simulate_plan(make_plan(loaded, planner), planner, values, progress)
    if backend == "cuda":
        if loaded.target is None:           # no --arch: planned for the GPU it runs on
            loaded = dataclasses.replace(loaded, target=_device_target())
        from verify_reducer.codegen.runner import CudaUnavailable
        plan = make_plan(loaded, planner)
        try:
            outputs = run_cuda(plan, values)
        except CudaUnavailable as exc:
            raise UsageError(f"the cuda backend cannot run here: {exc}") from None
        return BackendRun("cuda", planner, outputs, None, [], plan_notes(plan))
    if backend == "tilelang":
        return run_tilelang_backend(loaded, values, tilelang)
    raise UsageError(f"backend {backend!r} is not available")


def _device_target() -> str | None:
    """The GPU's architecture, or None where no device answers (the default target is
    planned for, and run_cuda says why it cannot run)."""
    from verify_reducer.codegen.runner import CudaUnavailable
    try:
        return device_target()
    except CudaUnavailable:
        return None


def tilelang_setup(config: dict[str, str] | None = None) -> TileLangSetup:
    """TileLang's version and the pass configs of config (KEY -> VALUE text, from
    --tilelang-config); UsageError (exit 2) when TileLang cannot run here or does not
    take a key or value."""
    from verify_reducer.codegen.tilelang_backend import (PassConfigError, TileLangUnavailable,
                                                         prepare)
    try:
        return prepare(config)
    except TileLangUnavailable as exc:
        raise UsageError(f"the tilelang backend cannot run here: {exc}") from None
    except PassConfigError as exc:
        raise UsageError(str(exc)) from None


def run_tilelang_backend(loaded: Loaded, values: dict[str, np.ndarray],
                         setup: TileLangSetup | None = None) -> BackendRun:
    """Run the program through TileLang itself, compiled with setup's pass configs. The
    only path that executes the user's file, so it first requires that our verifier
    accepts the program (DiagnosticError otherwise): TileLang's answer is only judged,
    and the file only run, where the oracle has an answer. TileLangFailed (TileLang
    refused or crashed) propagates: the caller reports it as a mismatch."""
    errors = [d for d in static_diagnostics(loaded) if d.is_error]
    if errors:
        raise DiagnosticError(errors)
    declared = sorted(m.name for m in user_ops(loaded.func))
    if declared:
        # TileLang has no `T.reducer_op`: importing the file would fail in TileLang's
        # frontend, which is not a disagreement about the program's meaning
        raise UsageError(f"{loaded.path}: the tilelang backend cannot run a program with "
                         f"a declared reducer op ({', '.join(declared)}): TileLang has no "
                         f"`T.reducer_op`; use --backend cuda")
    from verify_reducer.codegen.tilelang_backend import (PrimFuncNotFound, TileLangUnavailable,
                                                         run_tilelang)
    setup = setup if setup is not None else tilelang_setup()
    try:
        outputs = run_tilelang(loaded.path, loaded.func, values, setup.pass_configs)
    except TileLangUnavailable as exc:
        raise UsageError(f"the tilelang backend cannot run here: {exc}") from None
    except PrimFuncNotFound as exc:
        raise UsageError(f"{loaded.path}: {exc}") from None
    return BackendRun("tilelang", None, outputs)


def oracle(loaded: Loaded, values: dict[str, np.ndarray]) -> logical.Result:
    """The interpreter's answer, which a foreign backend's outputs are compared with."""
    return logical.run(loaded.func, values)


def simulate_plan(plan: PhysicalPlan, planner: str, values: dict[str, np.ndarray],
                  progress=None) -> BackendRun:
    result = simulate(plan, values, progress=progress)
    return BackendRun("sim", planner, result.outputs, None, result.violations,
                      plan_notes(plan))


def plan_notes(plan: PhysicalPlan) -> list[Diagnostic]:
    return list(plan.notes) + [n for r in plan.reducers for n in r.notes]
