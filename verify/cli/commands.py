"""`verify-reducer`: check, run, emit, fuzz and compare (docs/design.md §15). Exit codes: 0 verified, 1 rejected,
2 usage error, 3 mismatch, 4 internal error (reported, never a bare traceback), 5
inconclusive (an element its bound cannot judge, never a pass); several
programs exit with the worst of theirs (verify.cli.output.WORST_FIRST). Output goes
through verify.cli.output (colour, -q/-v, progress) and verify.cli.json_doc (--json)."""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.verify.cli import json_doc as cli_json
from verify_reducer.verify.cli import config as cli_config
from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.cli.batch import first_error, run_programs
from verify_reducer.verify.cli.entry import main  # noqa: F401 (the entry point, as before)
from verify_reducer.verify.cli.finish import deliver_json, json_file_writable, stdout_closed
from verify_reducer.verify.cli.programs import is_batch
from verify_reducer.verify.cli.batch import guarded as _guarded
from verify_reducer.verify.cli import outputs
from verify_reducer.verify.cli.batch import print_json as _print_json, report_usage as _report_usage
from verify_reducer.verify.cli.batch import safe_source as _safe_source, stdin_source as _stdin_source
from verify_reducer.verify.cli.output import Output, fuzz_meter, numpy_warnings_kept
from verify_reducer.verify.cli.text import VERBOSE_VALUES, check_text
from verify_reducer.verify.cli.text import comparison_status as _comparison_status
from verify_reducer.verify.cli.text import values_text as _summary
from verify_reducer.verify.oracle.cost import estimate
from verify_reducer.spec.frontend.family import DirectiveError, parse_cli
from verify_reducer.spec.frontend.factories import ParamError, parse_param_flags
from verify_reducer.verify.oracle.pipeline import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, UsageError
from verify_reducer.verify.oracle.exit_codes import EXIT_INTERRUPTED  # noqa: F401 (tests read it here)
from verify_reducer.verify.cli.parser import FUZZ_BACKENDS, max_memory, tilelang_config

# What only some commands use is imported where they run (emit's renderers, fuzz's
# campaign, run's TileLang comparison, compare, --html, --svg): a check, which a hook or
# an editor runs on every save, loads none of it (benchmarks/cli_latency.py).

def _given_inputs(path: str | None, args, loaded=None) -> dict[str, np.ndarray] | None:
    """--inputs: a keyword's inputs, or the .npz read against the program's parameters
    (inputs_mod.load_npz bounds what it reads by them). check has not loaded the program
    yet: it is loaded here for its parameters; one that cannot be gets None, and the
    check then says why."""
    if not path:
        return None
    from verify_reducer.verify.cli import compare as cli_compare
    if path in cli_compare.INPUT_KEYWORDS:
        return cli_compare.keyword_inputs(path, args)
    if loaded is None:
        try:
            loaded = pipeline.load(args.program, args.func, _stdin_source(args),
                                   meaningful=False, params=_params(args))
        except (UsageError, DiagnosticError):
            return None
    return inputs_mod.load_npz(path, loaded.func)


def _params(args) -> dict:
    """--param flags as factory parameters (a malformed one is a usage error)."""
    try:
        return parse_param_flags(getattr(args, "param", None) or [])
    except ParamError as exc:
        raise UsageError(str(exc)) from None


# ----------------------------------------------------------------------------- check

def cmd_check(args) -> int:
    start = time.perf_counter()
    given = _given_inputs(args.inputs, args)
    try:
        family = parse_cli(args.for_all, args.assume) \
            if args.for_all or args.assume else None
    except DirectiveError as exc:
        raise UsageError(str(exc)) from None
    report = pipeline.check(args.program, args.func, args.seed, given, args.blocks,
                            max_memory(args), _stdin_source(args), family, _params(args),
                            getattr(args, "config", cli_config.Config()).ignored_for(
                                args.program), target=args.arch)
    source = report.loaded.source if report.loaded else _safe_source(args)
    # generated values are finite: only the given ones (and `# input:` lines) can hold
    # NaN or inf, and materializing every input here would undo the block windows
    notes = inputs_mod.special_values(report.loaded.given(given)) \
        if report.reference is not None else []
    args.detail = first_error(report.diagnostics)
    args.undecided = undecided(report)         # such an answer is not cached
    doc = cli_json.check_json(args.program, report, args.values) if args.json else None
    if getattr(args, "html_sections", None) is not None:
        from verify_reducer.verify.cli import html as cli_html
        cli_html.add_section(args, report, source, start, doc)     # --html reuses doc
    if args.json:
        # judged now: an answer played from the cache says `"cached": true` (verify.cli.judged)
        _print_json({**doc, "input_notes": notes, "cached": False}, args)
        return report.exit_code
    args.ui.diagnostics(report.diagnostics + report.violations, args.program, source)
    _print_notes(notes, args)
    if report.loaded is not None:
        args.ui.report(check_text(report, args.ui.verbose))
    _print_elapsed(args, start)
    return report.exit_code


def undecided(report: pipeline.CheckReport) -> bool:
    """Whether a proof the answer rests on came back `unknown` (Z3 ran out of its time or
    the plan search out of its budget): on a less loaded machine the same check may
    decide it, so the answer is not a function of its inputs and verify.cli.cache does
    not keep it."""
    proofs = [p for epoch in report.epochs for p in epoch.proofs] + \
        [p for op in report.reducer_ops for p in op.laws] + \
        (list(report.family.proofs) if report.family is not None else [])
    return any(p.result == "unknown" for p in proofs)


def _print_notes(notes: list[str], args=None) -> None:
    for note in notes:
        if args is not None and getattr(args, "ui", None) is not None:
            args.ui.note(note)
        else:
            print(f"verify-reducer: note: {note}", file=sys.stderr)


def _print_elapsed(args, start: float) -> None:
    """-v: the program's wall time, on stderr."""
    if args.ui.verbose:
        args.ui.note(f"{args.program}: {args.command} took "
                     f"{time.perf_counter() - start:.2f} s")


NO_VERIFY_NOTE = ("--no-verify: the verifier was not consulted; this output may belong "
                  "to a program `check` rejects")


def _gate(args, loaded, values, interpret: bool = True):
    """`run` and `emit` refuse what `check` rejects (DiagnosticError: exit 1 with the
    same diagnostics), unless --no-verify, which the output then states. interpret=False
    where the caller runs the interpreter anyway (its errors raise there). Returns the
    interpreter's result when the gate ran it, else None."""
    if args.no_verify:
        if not args.json:
            _print_notes([NO_VERIFY_NOTE], args)
        return None
    errors, reference = pipeline.verifier_errors(loaded, values, interpret)
    if errors:
        raise DiagnosticError(errors)
    return reference


def _output_path(args) -> str | None:
    """Where `run --output` writes (.npz appended when missing), checked before the
    run (verify.cli.outputs: never over the program or an input, never through a link)."""
    if args.output is None:
        return None
    return outputs.check_file("--output", outputs.npz_name(args.output),
                              outputs.run_inputs(args), given=args.output)


# ----------------------------------------------------------------------------- run

def cmd_run(args) -> int:
    from verify_reducer.verify.cli.svg import emit_svg, require_drawsvg, svg_destination
    start = time.perf_counter()
    output = _output_path(args)
    if args.backend != "tilelang" and (args.tilelang_config or args.bug_report):
        flag = "--tilelang-config" if args.tilelang_config else "--bug-report"
        raise UsageError(f"{flag} applies to --backend tilelang only")
    if args.svg and args.backend != "sim":
        raise UsageError("--svg draws the simulated plan: it applies to --backend sim only")
    if args.svg:
        require_drawsvg("--svg")
    if args.backend == "tilelang" and _stdin_source(args) is not None:
        raise UsageError("--backend tilelang imports the program's file: give its path, "
                         "not - (stdin)")
    if args.bug_report:
        outputs.check_folder("--bug-report", args.bug_report)
    if args.svg:
        svg_destination(args, args.svg, "--svg")
    loaded = pipeline.load(args.program, args.func, _stdin_source(args),
                           params=_params(args), target=args.arch)
    # every backend's inputs and outputs are whole tensors here (and the interpreter runs
    # the whole grid): estimated before the first array is made
    pipeline.refuse_over(estimate(loaded.func), max_memory(args), "this run",
                         "use `check`, which runs a sample of the blocks")
    values = loaded.inputs(args.seed, _given_inputs(args.inputs, args, loaded),
                           args.inputs or "inputs")
    reference = _gate(args, loaded, values, interpret=args.backend != "interp")
    notes = inputs_mod.special_values(values)
    if args.backend == "tilelang":
        return _run_tilelang(args, loaded, values, notes, output)
    progress = _progress(args.backend) if sys.stderr.isatty() and not args.ui.quiet \
        else None
    run = pipeline.run_backend(loaded, args.backend, values, args.plan, progress)
    comparisons = None
    if args.backend == "cuda":
        # the GPU's outputs are judged like TileLang's: against the interpreter, a
        # disagreement beyond the bound is a mismatch (exit 3)
        reference = reference or pipeline.oracle(loaded, values)
        comparisons = pipeline.compare_outputs(run.outputs, reference)
    code = _report_run(args, loaded, run, notes, output, comparisons=comparisons)
    if args.svg:
        written = emit_svg(pipeline.make_plan(loaded, args.plan), args.svg, args.program,
                           run.violations, "--svg", protected=outputs.run_inputs(args))
        if not args.json and not args.ui.quiet:
            for path in written.splitlines():
                args.ui.out(f"wrote {path}")
    _print_elapsed(args, start)
    return code


def _save_output(args, output: str, arrays: dict[str, np.ndarray]) -> str:
    """Write `run --output` (checked before the run; a write that fails anyway, say the
    disk is full, is a usage error naming the path too)."""
    return outputs.write_npz("--output", args.output, arrays, outputs.run_inputs(args))


def _report_run(args, loaded, run: pipeline.BackendRun, notes: list[str],
                output: str | None, tilelang: dict | None = None,
                comparisons: list[pipeline.Comparison] | None = None) -> int:
    """Print one backend's run (and, for TileLang, its comparison with the interpreter
    and its setup); exit 3 on a violation or a comparison that failed."""
    code = pipeline.comparisons_exit(run.violations, comparisons or [])
    if output:
        output = _save_output(args, output, run.outputs)
    args.detail = first_error(run.violations)
    if args.json:
        doc = {"command": "run", "program": args.program, "func": loaded.func.name,
               "backend": args.backend, "plan": run.plan,
               "verdict": cli_json.verdict("run", code), "exit_code": code,
               "verified": not args.no_verify, "input_notes": notes,
               "output_file": output,
               "outputs": {n: cli_json.array_json(v, args.values)
                           for n, v in run.outputs.items()},
               "violations": [d.to_json() for d in run.violations],
               "notes": [d.to_json() for d in run.notes]}
        if run.bounds is not None:
            doc["bounds"] = {n: cli_json.array_json(b, args.values)
                             for n, b in run.bounds.items()}
        if comparisons is not None:
            doc["comparisons"] = cli_json.comparisons_json({pipeline.run_label(run):
                                                            comparisons})
        if tilelang is not None:
            doc.update(tilelang)
        _print_json(doc, args)
        return code
    out = args.ui
    _print_notes(notes, args)
    out.diagnostics(run.notes + run.violations, args.program, loaded.source)
    if out.quiet:
        return code
    limit = VERBOSE_VALUES if out.verbose else 8
    lines = [f"{name} = {_summary(value, limit)}" for name, value in run.outputs.items()]
    if out.verbose and run.bounds is not None:
        lines += [f"bound of {name} = {_summary(b, limit)}" for name, b in run.bounds.items()]
    if out.verbose:
        lines.append(f"ran on {pipeline.run_label(run)}")
    if comparisons is not None:
        lines.append(f"{pipeline.run_label(run)} {_comparison_status(comparisons)}")
    out.report("\n".join(lines))
    if tilelang is not None:
        _print_tilelang_setup(tilelang, out)
    if output:
        out.out(f"wrote {output}")
    return code


def _run_tilelang(args, loaded, values, notes: list[str], output: str | None) -> int:
    """TileLang is the backend this oracle exists to judge: its outputs are compared
    with the interpreter's, and a disagreement (a wrong value, or TileLang refusing the
    program) is a mismatch, exit 3, written as a bug report with --bug-report."""
    from verify_reducer.verify.fuzzing import bugreport
    setup = pipeline.tilelang_setup(tilelang_config(args))
    outcome = bugreport.compare_with_tilelang(loaded, values, setup)
    facts = {"tilelang": {"version": setup.version, "pass_configs": setup.pass_configs}}
    if outcome.disagrees and args.bug_report:
        facts["bug_report"] = bugreport.write_report(outcome, args.bug_report)
    if outcome.failure is not None:
        return _report_tilelang_failure(args, loaded, outcome.reference, outcome.failure,
                                        facts)
    run = pipeline.BackendRun("tilelang", None, outcome.got)
    return _report_run(args, loaded, run, notes, output, facts, outcome.comparisons)


def _print_tilelang_setup(facts: dict, out: Output | None = None) -> None:
    configs = ", ".join(f"{k}={v!r}" for k, v in facts["tilelang"]["pass_configs"].items())
    lines = [f"tilelang {facts['tilelang']['version']}; pass configs: "
             f"{configs or 'none (defaults)'}"]
    if "bug_report" in facts:
        lines.append(f"bug report: {facts['bug_report']}")
    for line in lines:
        if out is not None:
            out.out(line)
        else:
            print(line)


def _progress(backend: str, lines: int = 100):
    """A stderr line about every 1/lines of the blocks (for a terminal only)."""
    def show(done: int, total: int) -> None:
        if done == total or done % max(1, total // lines) == 0:
            end = "\n" if done == total else ""
            print(f"\r{backend}: block {done} of {total}", end=end, file=sys.stderr,
                  flush=True)
    return show


def _report_tilelang_failure(args, loaded, reference, failed, facts: dict) -> int:
    """TileLang refused or crashed on a program the oracle accepts and answers: a
    disagreement, so exit 3 (codegen.tilelang_backend says why), with TileLang's message
    and the answer it should have given."""
    args.detail = f"TileLang failed at {failed.stage}"
    if args.json:
        _print_json({"command": "run", "program": args.program, "func": loaded.func.name,
                     "backend": "tilelang", "plan": None, "verdict": "mismatch",
                     "exit_code": EXIT_MISMATCH,
                     "tilelang_error": {"stage": failed.stage, "message": failed.detail},
                     "expected": {n: cli_json.array_json(v, args.values)
                                  for n, v in reference.outputs.items()},
                     **facts}, args)
        return EXIT_MISMATCH
    out = args.ui
    out.error(str(failed))
    if out.quiet:
        return EXIT_MISMATCH
    out.report("\n".join(
        [f"interpreter: {name} = {_summary(value)}" for name, value in reference.outputs.items()]
        + ["tilelang MISMATCH: TileLang failed on a program the interpreter accepts"]))
    _print_tilelang_setup(facts, out)
    return EXIT_MISMATCH


# ----------------------------------------------------------------------------- emit

def cmd_emit(args) -> int:
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.layout_text import format_layouts
    from verify_reducer.codegen.lower.program import lower, program_json
    from verify_reducer.codegen.plan_text import format_plan, plan_json
    from verify_reducer.codegen.proofs.fast import smt2_queries
    from verify_reducer.spec.printer import format_func
    from verify_reducer.verify.cli.svg import emit_rejected_svg, emit_svg, svg_destination
    start = time.perf_counter()
    if args.out and args.what == "svg":
        svg_destination(args, args.out, "--out")
    elif args.out:
        outputs.check_file("--out", args.out, outputs.run_inputs(args))
    loaded = pipeline.load(args.program, args.func, _stdin_source(args),
                           params=_params(args), target=args.arch)
    if not args.no_verify:      # the gate's interpreter runs the whole grid
        pipeline.refuse_over(estimate(loaded.func), max_memory(args), "emit's verification",
                             "`check` it (a sample of the blocks), then emit --no-verify")
    try:
        # the gate judges the program as `check` does by default: on the inputs of seed 0
        # (--no-verify: no inputs are made at all)
        _gate(args, loaded, None if args.no_verify else loaded.inputs(0))
        plan = pipeline.make_plan(loaded, args.plan) \
            if args.what in ("plan", "threads", "cuda", "svg") else None
        if args.what == "smt2":
            # the queries the plan decisions ran: the auto plan records them all
            plan = pipeline.plan_over_limits(loaded, "auto")
    except DiagnosticError as err:
        if args.what == "svg":
            emit_rejected_svg(args, err, loaded.func.name)
        raise
    head = {"command": "emit", "program": args.program, "func": loaded.func.name,
            "what": args.what, "verdict": "emitted", "exit_code": EXIT_OK,
            "verified": not args.no_verify}
    doc = None
    if args.what == "layout":
        text = format_layouts(pipeline.loaded_layouts(loaded), loaded.func)
    elif args.what == "plan":
        figures = _ptxas_figures(plan) if args.ptxas else None
        doc = {**head, "plan": plan_json(plan, figures)}
        text = None if args.json and not args.out else format_plan(plan, figures)
    elif args.what == "threads":
        program = lower(plan)
        doc = {**head, "threads": program_json(program)}
        text = program.describe()
    elif args.what == "cuda":
        text = render(plan).translation_unit()
    elif args.what == "svg":
        text = emit_svg(plan, args.out, args.program, protected=outputs.run_inputs(args))
    elif args.what == "smt2":
        queries = smt2_queries(plan)
        doc = {**head, "queries": [{"name": n, "smt2": t} for n, t in queries]}
        text = "\n".join(f"; ---- {name}\n{smt2}" for name, smt2 in queries)
    else:
        text = format_func(loaded.func)
    written = args.out if args.out and args.what != "svg" else None
    if written:                 # --out: the text the command would print, in the file
        outputs.write_text("--out", written, text + "\n", outputs.run_inputs(args))
    if args.json:
        _print_json(doc or {**head, "text": text}, args)
    elif written and not args.ui.quiet:
        args.ui.out(f"wrote {written}")
    elif not args.ui.quiet:
        print(text, flush=True)
    if args.ui.verbose:
        args.ui.note(f"{args.program}: emitted {args.what} of {loaded.func.name}"
                     + (f" (plan {args.plan})" if args.what in ("plan", "cuda") else "")
                     + ("; not verified (--no-verify)" if args.no_verify else
                        "; the verifier accepts it"))
    _print_elapsed(args, start)
    return EXIT_OK


def _ptxas_figures(plan):
    """ptxas's figures for the plan's kernel (codegen.ptxas); UsageError without nvcc."""
    from verify_reducer.codegen import ptxas
    from verify_reducer.codegen.cuda import render
    source = render(plan)
    try:
        return ptxas.compile_figures(source.translation_unit(),
                                     plan.resources.target)[source.kernel_name]
    except ptxas.PtxasUnavailable as exc:
        raise UsageError(f"--ptxas: {exc}") from None


# ----------------------------------------------------------------------------- fuzz

def cmd_fuzz(args) -> int:
    from verify_reducer.verify.fuzzing.command import fuzz, groups
    from verify_reducer.verify.fuzzing.tilelang_target import prepare_setup
    out = args.ui
    if args.backend != "tilelang" and args.tilelang_config:
        raise UsageError("--tilelang-config applies to --backend tilelang only")
    outputs.check_folder("--out", args.out)
    if args.corpus:
        outputs.check_folder("--corpus", args.corpus)
    # TileLang must be able to run here before the first program is drawn
    setup = prepare_setup(tilelang_config(args)) if args.backend == "tilelang" else None
    facts = {} if setup is None else \
        {"tilelang": {"version": setup.version, "pass_configs": setup.pass_configs}}
    if facts and not args.json and not out.quiet:
        _print_tilelang_setup(facts, out)

    if args.user_ops > 0 and args.backend == "tilelang" and not args.json \
            and not out.quiet:
        out.out("note: programs that declare a reducer op skip TileLang "
                "(it refuses T.reducer_op)")

    def progress(case, verdict):
        if args.json or out.quiet:
            return
        if verdict is not None:
            out.out(f"case {case}: {verdict[0]}: {verdict[1][:200]}")
        elif out.verbose:
            out.out(f"case {case}: ok")

    meter = None if out.quiet else fuzz_meter(sys.stderr, out.color_err)
    findings = fuzz(args.count, args.seed, args.out, FUZZ_BACKENDS[args.backend],
                    progress, jobs=args.jobs, scheduler=args.scheduler, corpus=args.corpus,
                    budget=args.minimize_budget, meter=meter, tilelang=setup,
                    user_ops=args.user_ops, family=args.family)
    code = EXIT_MISMATCH if findings else EXIT_OK
    if args.json:
        doc = {"command": "fuzz", "count": args.count, "seed": args.seed,
               "family": args.family, "user_ops": args.user_ops,
               "backend": args.backend, "out": args.out, "exit_code": code, **facts,
               "findings": [cli_json.finding_json(f) for f in findings],
               "groups": groups(findings)}
        return deliver_json(args, doc, code)
    out.out(f"{args.count} programs, {len(findings)} finding(s)"
            + (f", saved in {args.out}/" if findings else ""))
    reports = sorted({f.report for f in findings if f.report})
    if reports and not out.quiet:
        out.out(f"{len(reports)} TileLang bug report(s): " + ", ".join(reports))
    return code


def cmd_compare(args) -> int:
    from verify_reducer.verify.cli import compare as cli_compare
    return cli_compare.cmd_compare(args)


COMMANDS = {"check": cmd_check, "run": cmd_run, "emit": cmd_emit, "fuzz": cmd_fuzz,
            "compare": cmd_compare}


def run(args) -> int:
    """A prepared command line (verify.cli.entry.prepare), run; its exit code. The
    command's entry point is verify.cli.entry.main (imported here as main)."""
    with numpy_warnings_kept() as kept:
        code = _dispatch(args)
    if kept and args.ui.verbose and not args.json:
        for line in kept.lines():
            args.ui.note(line)
    return code


def _dispatch(args) -> int:
    try:
        if args.command == "fuzz":
            return _guarded(args, cmd_fuzz) if json_file_writable(args) else EXIT_USAGE
        if getattr(args, "output", None) and len(args.programs) > 1:
            return _report_usage(args, "--output names one file: give one program")
        if args.command == "emit" and args.out and is_batch(args.programs) and not \
                (args.what == "svg" and (args.out.endswith("/") or os.path.isdir(args.out))):
            return _report_usage(args, "--out names one file: give one program (or, with "
                                       "--what svg, a folder ending in /)")
        if args.command == "check" and args.html:
            from verify_reducer.verify.cli import html as cli_html
            return cli_html.with_report(args, lambda: run_programs(args, cmd_check))
        return run_programs(args, COMMANDS[args.command])
    except BrokenPipeError:
        return stdout_closed()


if __name__ == "__main__":
    sys.exit(main())
