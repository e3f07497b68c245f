"""The programs one command line names: a file as given, a directory as its `.py` files
(sorted, recursively, hidden ones left out), `-` as the text of stdin (once). Only the
standard library and spec.source are imported here: a check answered from the cache (verify.cli.cache)
expands its arguments before anything heavy is loaded."""
from __future__ import annotations

import os
import sys
from typing import NamedTuple

from verify_reducer.spec.source import SourceDecodeError, decode_source

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


def is_batch(paths: list[str]) -> bool:
    """Several programs asked for: more than one argument, or a directory (the output's
    shape follows the command line, not what a directory happens to hold)."""
    return len(paths) > 1 or any(p != "-" and os.path.isdir(p) for p in paths)


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
