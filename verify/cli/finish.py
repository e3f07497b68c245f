"""The end of a command over programs: each program's answer played in order (verify.cli
.judged), -q's verdict lines, the summary of several programs and the worst exit code
(verify.cli.output.WORST_FIRST), and the one machine document (--json, --format sarif or
junit) printed or written to --json-file. Light modules only: a check answered from the
cache ends here without loading the verifier."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Iterable

from verify_reducer.verify.cli import documents as cli_json
from verify_reducer.verify.cli import outputs
from verify_reducer.verify.cli.judged import Judged, play
from verify_reducer.verify.cli.output import worst
from verify_reducer.verify.cli.programs import Program, is_batch
from verify_reducer.verify.oracle.exit_codes import EXIT_OK, EXIT_USAGE, UsageError

# `check --format` documents made from the programs' JSON documents (text and json are
# the ordinary report and the JSON document): format -> (module, function)
DOCUMENT_FORMATS = {"sarif": ("verify_reducer.verify.cli.sarif", "sarif_text"),
                    "junit": ("verify_reducer.verify.cli.junit", "junit_xml")}


def finish(args, judged: Iterable[tuple[Program, Judged]]) -> int:
    """Play each program's answer as it comes, then the summary or the document; the
    worst exit code. judged is consumed here, after --json-file was checked, so a
    destination that cannot be written stops the command before any program is judged."""
    out = args.ui
    if not json_file_writable(args):
        return EXIT_USAGE
    if out.json:
        out.documents = []
    codes: list[int] = []
    for program, answer in judged:
        play(answer, args)
        codes.append(answer.code)
        if out.quiet and not out.json:
            out.verdict_line(program.label, cli_json.verdict(args.command, answer.code),
                             answer.quiet_detail())
    code = worst(codes)
    batch = is_batch(args.programs)
    if out.json:
        docs, out.documents = out.documents, None
        made = DOCUMENT_FORMATS.get(getattr(args, "format", "json"))
        if made is not None:
            module, function = made
            text = getattr(importlib.import_module(module), function)(docs, code)
            return deliver_text(args, text, code)
        doc = {"command": args.command, "programs": docs,
               "summary": cli_json.summary_json(args.command, codes, code)} \
            if batch else docs[0]
        return deliver_json(args, doc, code)
    if batch:
        out.summary(args.command, codes, code)
    return code


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


def stdout_closed() -> int:
    """The reader went away (`| head`): nothing left to say, and nothing went wrong;
    stdout goes to /dev/null so the interpreter's last flush cannot fail either."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK
