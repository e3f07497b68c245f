"""`verify-reducer compare PROG --outputs THEIRS.npz [--inputs IN.npz|witness|seeded]`
(its flags are verify.cli.parser's):
another backend's outputs judged against the oracle. Exit 0 when every output is exact
or within its bound, 3 on a mismatch (the report lists the mismatching elements), 5 when
nothing is refuted but some element cannot be judged (its bound is infinite or admits
every value: the report lists those elements; never a match), 2 on
a usage problem (a tensor missing from the .npz or of another shape, an unreadable
file), 1 when the verifier rejects the program (there is no reference then).

Also the `--inputs witness|seeded` keywords of check and run (verify.oracle.witness)."""
from __future__ import annotations


import numpy as np

from verify_reducer.spec.diagnostics import DiagnosticError

from verify_reducer.verify.cli import parser as cli_parser
from verify_reducer.verify.cli.batch import print_json
from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle import judge
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.pipeline import EXIT_INCONCLUSIVE, EXIT_MISMATCH, EXIT_OK, OutputsError, UsageError
from verify_reducer.verify.oracle.witness import witness

# `--inputs` keywords (anything else is an .npz path)
INPUT_KEYWORDS = judge.INPUT_KINDS


def keyword_inputs(keyword: str, args) -> dict[str, np.ndarray] | None:
    """The inputs `--inputs witness|seeded` gives check and run: the witness's (every
    parameter) or None (seeded: the commands' default). A program that cannot be loaded
    gets None: the command itself then reports why."""
    if keyword != "witness":
        return None
    try:
        loaded = pipeline.load(args.program, args.func)
    except (UsageError, DiagnosticError):
        return None
    return witness(loaded, args.seed, cli_parser.max_memory(args)).inputs


def cmd_compare(args) -> int:
    loaded = pipeline.load(args.program, args.func)
    try:
        theirs = inputs_mod.load_npz(args.outputs, loaded.func, "output")
    except inputs_mod.InputError as exc:
        raise UsageError(f"--outputs {args.outputs}: {exc}") from None
    fill = "seeded"                     # an .npz is completed as `run --inputs` does
    ref = judge.reference(loaded, args.inputs, args.seed, fill, cli_parser.max_memory(args))
    try:
        report = judge.judge(ref, theirs, backend=args.outputs)
    except OutputsError as exc:
        raise UsageError(f"--outputs {args.outputs}: {exc}") from None
    code = VERDICT_EXIT[report.verdict]
    if args.json:
        print_json({"command": "compare", "exit_code": code, **report.to_json()}, args)
        return code
    # the report is coloured (--color, NO_COLOR, FORCE_COLOR) and left out under -q,
    # where the verdict line (verify.cli.batch) and the error below say it all
    args.ui.report(str(report))
    if report.verdict == "mismatch":
        args.ui.error(f"{args.outputs} does not match the oracle")
    elif report.inconclusive:
        args.ui.error(f"{args.outputs} could not be judged: {report.unchecked} element(s) "
                      f"have no usable bound")
    return code


# the exit code of each verdict of a judged report (verify.oracle.judge.Report)
VERDICT_EXIT = {"match": EXIT_OK, "mismatch": EXIT_MISMATCH,
                "inconclusive": EXIT_INCONCLUSIVE}
