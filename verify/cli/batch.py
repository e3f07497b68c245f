"""Programs under the exit-code contract, one or several: `check`/`run`/`emit` take
files, directories (their `.py` files, sorted, recursively) and `-` (the program on
stdin), judge each (a rejection is 1, a usage error 2, a mismatch 3, a crash of ours 4
with a report, never a bare traceback), and end with one summary and the worst exit
code (verify.cli.output.WORST_FIRST). The paths the CLI writes are checked and
written by verify.cli.outputs."""
from __future__ import annotations

import argparse
import sys
import tempfile
import traceback
from typing import Callable

from verify_reducer.codegen.cuda_unsupported import Unsupported   # the class alone: no renderer
from verify_reducer.spec.diagnostics import DiagnosticError

from verify_reducer.verify.cli import cache
from verify_reducer.verify.cli import json_doc as cli_json
from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.cli.finish import finish
from verify_reducer.verify.cli.judged import Judged, recording
from verify_reducer.verify.cli.output import Output
from verify_reducer.verify.cli.programs import Program, expand_programs, is_batch
from verify_reducer.verify.cli.workers import job_count, judge_in_workers
from verify_reducer.verify.oracle.pipeline import EXIT_INTERNAL, EXIT_REJECTED, EXIT_USAGE, UsageError

def first_error(diagnostics) -> str:
    """`R100 at 6:9`: the first error of a rejection, for quiet mode's verdict line."""
    for d in diagnostics:
        if d.is_error:
            return d.code + (f" at {d.span.line}:{d.span.col}" if d.span else "")
    return ""


def run_programs(args, command: Callable[[argparse.Namespace], int]) -> int:
    """command(pargs) for each program, guarded (pargs: args with `program`, `source`
    and `detail` set), then the summary; the worst exit code (verify.cli.finish). With
    --json the documents of several programs make one: {command, programs: [...],
    summary}."""
    return finish(args, _judge_each(args, command))


def _judge_each(args, command):
    """(program, Judged) in order. `check` records each program's answer as data
    (verify.cli.judged): read from the cache where it holds one (verify.cli.cache),
    else judged here or in --jobs workers and then kept in the cache; the other
    commands print as they go (a run's progress on a terminal)."""
    out = args.ui
    batch = is_batch(args.programs)
    programs = expand_programs(args.programs)

    def pargs_of(program: Program) -> argparse.Namespace:
        pargs = argparse.Namespace(**vars(args))
        pargs.program, pargs.source, pargs.detail = program.label, program.source, ""
        pargs.problem = program.problem
        return pargs

    if args.command != "check":
        for program in programs:
            pargs = pargs_of(program)
            if batch and not out.json and not out.quiet:
                out.out(f"==> {program.label} <==")
            mark = len(out.documents) if out.documents is not None else 0
            code = report_usage(pargs, program.problem) if program.problem else \
                guarded(pargs, command)
            if out.documents is not None:       # one document per program: the last said
                del out.documents[mark:-1]
            yield program, Judged(code, pargs.detail)
        return
    store = cache.for_command(args)
    keys = [cache.program_key(args, p) if store else None for p in programs]
    answers = [store.get(k) if k else None for k in keys]
    todo = [p for p, answer in zip(programs, answers) if answer is None]
    jobs = min(job_count(args), len(todo))
    judged = judge_in_workers(pargs_of, command, todo, jobs) if jobs > 1 else \
        (judge_captured(pargs_of(p), command) for p in todo)
    for program, key, answer in zip(programs, keys, answers):
        if answer is None:
            answer = next(judged)
            # kept only when the file still reads as it did when the key was made
            if key is not None and key == cache.program_key(args, program):
                store.put(key, answer)
        yield program, answer


def judge_captured(pargs: argparse.Namespace, command: Callable) -> Judged:
    """command(pargs), guarded, its output and documents recorded (verify.cli.judged).
    The Output is the command line's own (pargs copies args): its list of documents is
    set aside while this program says its own, and given back after."""
    ui = pargs.ui
    kept, ui.documents = ui.documents, ([] if ui.json else None)
    if getattr(pargs, "html_sections", None) is not None:
        pargs.html_sections = []
    try:
        with recording() as chunks:
            code = report_usage(pargs, pargs.problem) if pargs.problem else \
                guarded(pargs, command)
        documents = None if ui.documents is None else \
            [cli_json.jsonable(d) for d in ui.documents]
    finally:
        ui.documents = kept
    return Judged(code, pargs.detail, chunks, documents,
                  getattr(pargs, "html_sections", None) or [],
                  decided=not getattr(pargs, "undecided", False))


# ------------------------------------------------------------------------- sources and paths

def stdin_source(args) -> str | None:
    """The program's text when it came on stdin (`-`), else None (read from its path)."""
    return getattr(args, "source", None)


def safe_source(args) -> str:
    """The program's text for showing a diagnostic ("" when it cannot be read)."""
    if stdin_source(args) is not None:
        return args.source
    try:
        return pipeline.read_source(args.program)
    except UsageError:
        return ""


def print_json(doc: dict, args=None) -> None:
    """One JSON document (schema_version first, strict JSON: verify.cli.json_doc); with
    args, through its Output (which keeps several programs' documents for one)."""
    if args is not None and getattr(args, "ui", None) is not None:
        args.ui.json_document(doc)
    else:
        print(cli_json.dumps(doc), flush=True)


# ----------------------------------------------------------------------------- errors

def report_rejection(args, err: DiagnosticError) -> int:
    args.detail = first_error(err.diagnostics)
    if getattr(args, "json", False):
        print_json({"command": args.command, "program": args.program, "verdict": "rejected",
                    "exit_code": EXIT_REJECTED,
                    "diagnostics": [d.to_json() for d in err.diagnostics]}, args)
    else:
        _output(args).diagnostics(err.diagnostics, args.program, safe_source(args))
    return EXIT_REJECTED


def report_usage(args, message: str) -> int:
    if getattr(args, "json", False):
        print_json({"command": args.command, "program": getattr(args, "program", None),
                    "verdict": "usage_error", "exit_code": EXIT_USAGE, "error": message},
                   args)
    else:
        _output(args).error(message)
    return EXIT_USAGE


def report_internal(args, exc: BaseException) -> int:
    with tempfile.NamedTemporaryFile("w", prefix="verify-reducer-crash-", suffix=".txt",
                                     delete=False) as f:
        traceback.print_exception(exc, file=f)
        crash_file = f.name
    message = (f"internal error of verify-reducer ({type(exc).__name__}: {exc}); "
               f"this is our bug, not your program's. Details: {crash_file}")
    if getattr(args, "json", False):
        print_json({"command": getattr(args, "command", None),
                    "program": getattr(args, "program", None), "verdict": "internal_error",
                    "exit_code": EXIT_INTERNAL, "error": message,
                    "crash_report": crash_file}, args)
    else:
        print(f"verify-reducer: {message}", file=sys.stderr)
    return EXIT_INTERNAL


def _output(args) -> Output:
    return getattr(args, "ui", None) or Output()


def guarded(args, command) -> int:
    """command(args) with the exit-code contract: a rejection is 1, a usage error 2, a
    crash of ours 4 with a report, never a bare traceback."""
    try:
        return command(args)
    except BrokenPipeError:
        raise
    except DiagnosticError as err:
        return report_rejection(args, err)
    except (UsageError, inputs_mod.InputError) as err:
        return report_usage(args, str(err))
    except Unsupported as err:
        # a construct the verifier accepts but the CUDA renderer does not lower: the
        # backend cannot run this program (like a missing device), not a crash of ours
        return report_usage(args, f"{getattr(args, 'program', '')}: the CUDA backend does "
                                  f"not lower this program: {err}")
    except Exception as exc:  # the contract: exit 4 with a report, never a bare traceback
        return report_internal(args, exc)
