"""The `verify-reducer` command's entry point (pyproject's script, `python -m
verify_reducer`): `--version` and `--help` are answered from the parser alone — argparse
and a few light modules of ours, no numpy, z3 or rich — so they answer at once; every
other command line goes to verify.cli.commands, imported then."""
from __future__ import annotations

import sys

from verify_reducer.verify.cli.parser import build_parser, normalize_argv
from verify_reducer.verify.oracle.exit_codes import EXIT_INTERRUPTED

ONLY_THE_PARSER = ("-h", "--help", "--version")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if any(a in ONLY_THE_PARSER for a in argv):
            # argparse prints the help or the version and exits 0 (or 2 on a bad flag)
            build_parser().parse_args(normalize_argv(argv))
        from verify_reducer.verify.cli.commands import main as run_command
    except KeyboardInterrupt:      # while the heavy modules load
        print("verify-reducer: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    return run_command(argv)
