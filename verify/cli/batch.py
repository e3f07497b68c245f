"""Programs under the exit-code contract, one or several: `check`/`run`/`emit` take
files, directories (their `.py` files, sorted, recursively) and `-` (the program on
stdin), judge each (a rejection is 1, a usage error 2, a mismatch 3, a crash of ours 4
with a report, never a bare traceback), and end with one summary and the worst exit
code (verify.cli.output.WORST_FIRST). The paths the CLI writes are checked and
written by verify.cli.outputs."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from typing import Callable, NamedTuple

from verify_reducer.codegen.cuda import Unsupported
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.source import SourceDecodeError, decode_source

from verify_reducer.verify.cli import json_doc as cli_json
from verify_reducer.verify.cli import outputs
from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.cli.junit import junit_xml
from verify_reducer.verify.cli.output import Output, worst
from verify_reducer.verify.cli.sarif import sarif_text
from verify_reducer.verify.cli.workers import Judged, job_count, judge_in_workers
from verify_reducer.verify.oracle.pipeline import EXIT_INTERNAL, EXIT_REJECTED, EXIT_USAGE, UsageError

STDIN_LABEL = "<stdin>"


class Program(NamedTuple):
    label: str                  # the path, or <stdin>
    source: str | None          # the text when it was read here (stdin)
    problem: str | None = None  # why it cannot be judged (a usage error of its own)


def expand_programs(paths: list[str], stdin=None) -> list[Program]:
    """The programs the arguments name, in order: a file as given (read later, where a
    missing one is reported), a directory as its `.py` files in sorted order (hidden
    folders and files left out), `-` as the text of stdin (once)."""
    stdin = sys.stdin if stdin is None else stdin
    out: list[Program] = []
    read_stdin = False
    for path in paths:
        if path == "-":
            if read_stdin:
                out.append(Program(STDIN_LABEL, None, "- (stdin) is given more than once"))
                continue
            read_stdin = True
            try:
                out.append(Program(STDIN_LABEL, _stdin_text(stdin)))
            except (OSError, UnicodeDecodeError, SourceDecodeError) as exc:
                out.append(Program(STDIN_LABEL, None, f"cannot read stdin: {exc}"))
        elif os.path.isdir(path):
            files = _python_files(path)
            out += [Program(f, None) for f in files] or \
                [Program(path, None, f"{path}: no .py files in the directory")]
        else:
            out.append(Program(path, None))
    return out


def _stdin_text(stdin) -> str:
    """The program on stdin, its bytes decoded as a file's are (spec.source.decode_source:
    its coding declaration, a BOM); a text stream without bytes (a test's StringIO) is
    already decoded."""
    raw = getattr(stdin, "buffer", None)
    if raw is not None:
        return decode_source(raw.read())
    return stdin.read().removeprefix("\ufeff")


def _python_files(folder: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [os.path.join(root, f) for f in sorted(files)
                  if f.endswith(".py") and not f.startswith(".")]
    return found


def is_batch(paths: list[str]) -> bool:
    """Several programs asked for: more than one argument, or a directory (the output's
    shape follows the command line, not what a directory happens to hold)."""
    return len(paths) > 1 or any(p != "-" and os.path.isdir(p) for p in paths)


def json_file_writable(args) -> bool:
    """--json-file checked before the work; one that cannot be written is said on
    stderr (the document has nowhere to go), and the command exits 2."""
    if getattr(args, "json_file", None):
        try:
            outputs.check_file("--json-file", args.json_file, outputs.run_inputs(args))
        except UsageError as err:
            args.ui.error(str(err))
            return False
    return True


def deliver_json(args, doc: dict, code: int) -> int:
    """Print the document, or write it to --json-file; code, or 2 when that fails."""
    return deliver_text(args, cli_json.dumps(doc), code)


def deliver_text(args, text: str, code: int) -> int:
    """Print a machine document, or write it to --json-file; code, or 2 when that
    fails."""
    if not getattr(args, "json_file", None):
        print(text, flush=True)
        return code
    try:
        outputs.write_text("--json-file", args.json_file, text + "\n",
                           outputs.run_inputs(args))
    except UsageError as err:
        args.ui.error(str(err))
        return worst([code, EXIT_USAGE])
    return code


def first_error(diagnostics) -> str:
    """`R100 at 6:9`: the first error of a rejection, for quiet mode's verdict line."""
    for d in diagnostics:
        if d.is_error:
            return d.code + (f" at {d.span.line}:{d.span.col}" if d.span else "")
    return ""


# `check --format` documents made from the programs' JSON documents (text and json are
# the ordinary report and the JSON document)
DOCUMENT_FORMATS = {"sarif": sarif_text, "junit": junit_xml}


def run_programs(args, command: Callable[[argparse.Namespace], int]) -> int:
    """command(pargs) for each program, guarded (pargs: args with `program`, `source`
    and `detail` set), then the summary; the worst exit code. With --json the documents
    of several programs make one: {command, programs: [...], summary}. With --jobs N
    the programs run in N worker processes (verify.cli.workers), their output printed
    in order."""
    out = args.ui
    batch = is_batch(args.programs)
    if not json_file_writable(args):
        return EXIT_USAGE
    if out.json:
        out.documents = []
    programs = expand_programs(args.programs)
    codes: list[int] = []
    for program, judged in _judge_each(args, command, programs):
        codes.append(judged.code)
        if out.quiet and not out.json:
            out.verdict_line(program.label, cli_json.verdict(args.command, judged.code),
                             judged.detail)
    code = worst(codes)
    if out.json:
        docs, out.documents = out.documents, None
        made = DOCUMENT_FORMATS.get(getattr(args, "format", "json"))
        if made is not None:
            return deliver_text(args, made(docs, code), code)
        doc = {"command": args.command, "programs": docs,
               "summary": cli_json.summary_json(args.command, codes, code)} \
            if batch else docs[0]
        return deliver_json(args, doc, code)
    if batch:
        out.summary(args.command, codes, code)
    return code


def _judge_each(args, command, programs: list[Program]):
    """(program, Judged) in order: here, printing as it goes, or in --jobs workers,
    whose captured output is printed here as each program's turn comes."""
    out = args.ui
    batch = is_batch(args.programs)

    def pargs_of(program: Program) -> argparse.Namespace:
        pargs = argparse.Namespace(**vars(args))
        pargs.program, pargs.source, pargs.detail = program.label, program.source, ""
        pargs.problem = program.problem
        return pargs

    def header(program: Program) -> None:
        if batch and not out.json and not out.quiet and args.command != "check":
            out.out(f"==> {program.label} <==")

    jobs = min(job_count(args), len(programs))
    if jobs <= 1:
        for program in programs:
            pargs = pargs_of(program)
            header(program)
            mark = len(out.documents) if out.documents is not None else 0
            code = report_usage(pargs, program.problem) if program.problem else \
                guarded(pargs, command)
            if out.documents is not None:       # one document per program: the last said
                del out.documents[mark:-1]
            yield program, Judged(code, pargs.detail)
        return
    for program, judged in zip(programs, judge_in_workers(pargs_of, command, programs,
                                                          jobs)):
        header(program)
        sys.stdout.write(judged.stdout)
        sys.stderr.write(judged.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        if out.documents is not None and judged.documents:
            out.documents.append(judged.documents[-1])
        if getattr(args, "html_sections", None) is not None:
            args.html_sections.extend(judged.html_sections)
        yield program, judged


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
