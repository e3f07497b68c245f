"""The exit codes of every command (README, "Exit codes") and the usage error that means
exit 2, in a module of their own: the command line's parser needs them before anything
heavy is imported (`--version` and `--help` answer from argparse alone)."""

EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_MISMATCH, EXIT_INTERNAL = 0, 1, 2, 3, 4
# Some compared element could not be judged (its bound is infinite or admits every
# value, docs/semantics.md §9): nothing refuted, nothing verified either.
EXIT_INCONCLUSIVE = 5
# the shell's code for a command ended by SIGINT (128 + 2): Ctrl-C
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad flags, an unreadable file, an unknown function: exit 2."""
