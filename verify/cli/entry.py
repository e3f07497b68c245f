"""The `verify-reducer` command's entry point (pyproject's script, `python -m
verify_reducer`), and the command line's preparation (prepare), each step loading no
more than it needs:
- `--version` and `--help` are answered from the parser (argparse and a few light
  modules of ours: no numpy, z3 or rich);
- a `check` whose every program has its answer in the cache is answered from there
  (verify.cli.cache: light modules and rich, still no numpy, z3 or the verifier);
- every other command line goes to verify.cli.commands, imported then."""
from __future__ import annotations

import atexit
import gc
import os
import sys

from verify_reducer.verify.cli.parser import build_parser, flag_value, mistyped_command, normalize_argv
from verify_reducer.verify.oracle.exit_codes import EXIT_INTERRUPTED, EXIT_USAGE, UsageError

ONLY_THE_PARSER = ("-h", "--help", "--version")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    one_blas_thread()
    try:
        if any(a in ONLY_THE_PARSER for a in argv):
            # argparse prints the help or the version and exits 0 (or 2 on a bad flag)
            build_parser().parse_args(normalize_argv(argv))
        # past --version and --help: what a cached answer needs (rich among it), no more
        from verify_reducer.verify.cli import cache
        from verify_reducer.verify.cli.finish import stdout_closed
        args = prepare(argv)
        if isinstance(args, int):
            return args
        try:
            code = cache.answer(args)
        except BrokenPipeError:
            return stdout_closed()
        if code is not None:
            return code
        return verifier().run(args)
    except KeyboardInterrupt:
        # Ctrl-C is the user's decision, not a crash: one line, no traceback; files
        # being written are left as they were (verify.cli.outputs writes atomically)
        print("verify-reducer: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED


def run() -> None:
    """The command as a process (`python -m verify_reducer`, the `verify-reducer`
    script): main's exit code, and the process ends there. Its atexit handlers run and
    its streams are flushed, as at any exit; the interpreter's teardown is skipped —
    freeing every object of numpy, Z3 (one ctypes call per term), networkx and ~800
    modules one by one, about 50 ms of a cold check's wall time, for memory the system
    takes back at once. (--help, --version and a bad command line leave through
    argparse's SystemExit, before anything heavy is imported.)"""
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:      # the reader went away after the last write: say nothing
        from verify_reducer.verify.cli.finish import stdout_closed
        stdout_closed()
    try:
        sys.stderr.flush()
    except OSError:
        pass                     # no one to tell
    atexit._run_exitfuncs()
    os._exit(code)


def verifier():
    """verify.cli.commands, and with it numpy, Z3, networkx and the verifier (~800
    modules), imported with Python's cyclic garbage collector paused. The imports make
    some 100,000 objects that live as long as the process (modules, classes, functions)
    and nothing the collector could free; the ~130 collections they set off only
    traversed them: about 30 ms of the 0.25 s every cold check spends before its first
    program, where --jobs workers cannot help (docs/performance.md). Once imported, the
    objects are frozen (gc.freeze: kept out of every later collection), so the
    collections during the check traverse what the check makes rather than the
    modules again. Done the first time only: a process that runs the command again (a
    test) keeps its own later objects collectable."""
    name = "verify_reducer.verify.cli.commands"
    if name in sys.modules:
        return sys.modules[name]
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        from verify_reducer.verify.cli import commands
    finally:
        if was_enabled:
            gc.enable()
    gc.freeze()
    return commands


def one_blas_thread() -> None:
    """One OpenBLAS thread for the command, unless the user chose (OPENBLAS_NUM_THREADS,
    or OMP_NUM_THREADS, which OpenBLAS reads too). numpy's OpenBLAS starts a thread per
    core when numpy is imported, and they spin waiting for work the verifier never gives
    them: it multiplies no matrices through BLAS (T.gemm's simulation is an einsum,
    numpy's own loop). On 2 cores they were about 0.1 s of every cold check's CPU time —
    time another process on a busy machine waits for. Set here, before anything imports
    numpy; the processes the command starts (--jobs workers) inherit it."""
    if "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def prepare(argv: list[str]):
    """The parsed command line, with [tool.verify-reducer]'s flags where argv gave none
    and its Output (args.ui); or the exit code of a command line that cannot run (a
    mistyped command, a bad flag: argparse exits 2; a bad configuration: 2)."""
    from verify_reducer.verify.cli import config as cli_config
    from verify_reducer.verify.cli.output import Output
    parser = build_parser()
    typo = mistyped_command(argv)
    if typo is not None:
        parser.error(typo)                   # exit 2 with the usage line
    args = parser.parse_args(normalize_argv(argv))
    try:                          # [tool.verify-reducer]: flags argv did not give
        args.config = cli_config.load()
        cli_config.apply_flags(args, argv, args.config, flag_value)
    except UsageError as exc:
        print(f"verify-reducer: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "format", "text") == "text" and getattr(args, "json", False):
        args.format = "json"
    if getattr(args, "json_file", None) or getattr(args, "format", "text") != "text":
        args.json = True       # sarif and junit are made from the JSON documents
    args.ui = Output.from_args(args)
    return args
