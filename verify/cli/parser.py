"""The `verify-reducer` command line as argparse sees it: the subcommands, their flags and
the flags' own parsers (sizes, probabilities, block counts, `--tilelang-config`), and the
argv normalization (a bare program means `check`). verify.cli.commands runs what it parses."""
from __future__ import annotations

import argparse
import difflib
import os
import sys

# Only the standard library and light modules of ours: `--version` and `--help` are
# answered from this module alone (verify.cli.entry), before numpy, z3 or rich load.
# What a flag's parser needs beyond that is imported when the flag is parsed.
from verify_reducer import __version__
from verify_reducer.verify.fuzzing import FAMILIES, MINIMIZE_BUDGET
from verify_reducer.verify.oracle.exit_codes import EXIT_USAGE, UsageError

SUBCOMMANDS = ("check", "run", "emit", "fuzz", "compare")
BACKENDS = ("interp", "sim", "cuda", "tilelang")
EMITS = ("ir", "layout", "plan", "threads", "smt2", "cuda", "svg")
PLANS = ("auto", "canonical", "fast", "legacy")
COLOR_MODES = ("auto", "always", "never")
FORMATS = ("text", "json", "sarif", "junit")
INPUTS_HELP = (".npz of inputs keyed by parameter name, or `witness` (inputs under which "
               "every contribution shows in the exact result), or `seeded`")
# what each `fuzz --backend` runs every program on
FUZZ_BACKENDS = {"sim": ("sim",), "nvcc": ("sim", "nvcc"), "cuda": ("sim", "cuda"),
                 "tilelang": ("sim", "tilelang")}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 on usage errors, as our contract says
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _natural(text: str) -> int:
    """A non-negative integer flag (--seed, --count): argparse reports anything else."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") \
            from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="verify-reducer", description=(
        "Check that every contribution of a TileLang deferred reduction enters its output "
        "exactly once. `verify-reducer PROG.py` is `verify-reducer check PROG.py`."))
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(p):
        p.add_argument("programs", nargs="+", metavar="PROG",
                       help="TileLang source files (parsed, never executed, except by "
                            "`run --backend tilelang`), directories (their .py files, "
                            "sorted, recursively) or - (the program on stdin)")
        p.add_argument("--func", help="prim_func to use (default: main, or the only one)")
        json_flags(p)
        output_flags(p)

    p = sub.add_parser("check", help="parse, verify, interpret and compare (the default)")
    common(p)
    p.add_argument("--jobs", "-j", type=_natural, default=1, metavar="N",
                   help="check N programs at a time, each in a worker process (0: one "
                        "per core); the output is printed in the programs' order")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="the report: text (default), json (as --json), sarif (SARIF "
                        "2.1.0 for code scanning) or junit (JUnit XML for CI), one "
                        "document for every program; --json-file FILE writes it to FILE")
    param_flag(p)
    p.add_argument("--seed", type=_natural, default=0, help="seed of generated inputs")
    p.add_argument("--inputs", help=INPUTS_HELP)
    p.add_argument("--blocks", type=_blocks_flag, default=None, metavar="all|N",
                   help="blocks to run: all, or the block classes plus N random blocks "
                        "(default: the classes plus 2, when blocks are proved "
                        "independent)")
    arch_flag(p)
    p.add_argument("--no-cache", action="store_true",
                   help="check every program now: neither read nor keep answers in the "
                        "cache of earlier checks (docs/performance.md; `cache = false` in "
                        "[tool.verify-reducer] is the same for a project)")
    p.add_argument("--html", metavar="REPORT.html",
                   help="also write one self-contained HTML report of every program "
                        "checked: source with diagnostics, plans, proofs, pictures, "
                        "comparisons (needs the report and pictures extras)")
    p.add_argument("--for-all", action="append", default=[], metavar="NAME=LO..HI",
                   help="prove for every value of the size NAME (a module constant or a "
                        "factory parameter) in [LO, HI] "
                        "(repeatable; adds to the file's `# for-all:` lines)")
    p.add_argument("--assume", action="append", default=[], metavar="EXPR",
                   help="an integer condition the family's sizes satisfy "
                        "(repeatable; e.g. 'M %% BLOCK_M == 0')")
    memory_flag(p)

    p = sub.add_parser("run", help="run the kernel on one backend")
    common(p)
    param_flag(p)
    p.add_argument("--backend", choices=BACKENDS, default="interp",
                   help="tilelang imports the file and runs it through TileLang on the "
                        "GPU, then compares with the interpreter")
    p.add_argument("--plan", choices=PLANS, default="auto",
                   help="physical plan for sim/cuda (default auto: fast where proved)")
    arch_flag(p)
    p.add_argument("--inputs", help=INPUTS_HELP)
    p.add_argument("--output", help="write every tensor parameter after the run to this "
                   ".npz (.npz is appended when missing)")
    p.add_argument("--no-verify", action="store_true",
                   help="run a program the verifier rejects (the output says so)")
    p.add_argument("--seed", type=_natural, default=0, help="seed of generated inputs")
    memory_flag(p)
    tilelang_flags(p)
    p.add_argument("--bug-report", metavar="DIR",
                   help="with --backend tilelang: write each disagreement as a "
                        "self-contained bug report folder under DIR")
    p.add_argument("--svg", metavar="PATH",
                   help="with --backend sim: draw the plan that ran and the counterexample "
                        "of every violation (one SVG file, or a folder ending in / for one "
                        "file per picture)")

    p = sub.add_parser("fuzz", help="differentially fuzz the lowerings on random kernels")
    p.add_argument("--count", type=_natural, default=20, help="number of programs")
    p.add_argument("--seed", type=_natural, default=0, help="seed of the program generator")
    p.add_argument("--backend", choices=tuple(FUZZ_BACKENDS), default="sim",
                   help="nvcc also compiles every plan's CUDA; cuda also runs every program "
                        "on the GPU; tilelang also runs it through TileLang (with "
                        "--tilelang-config) and writes a bug report for each disagreement")
    p.add_argument("--family", choices=FAMILIES, default=FAMILIES[0],
                   help="the programs drawn: reducer kernels of the grammar (default), or "
                        "split-K kernels whose blocks add their partials into the output "
                        "with T.atomic_add")
    p.add_argument("--jobs", type=_natural, default=0, help="worker processes (0: one per CPU)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on this Dask distributed scheduler (pip install -e '.[campaign]')")
    p.add_argument("--corpus", metavar="DIR",
                   help="record finished cases in DIR; the same seed resumes from it")
    p.add_argument("--out", default="fuzz-findings", help="folder for the findings")
    p.add_argument("--minimize-budget", type=_natural, default=MINIMIZE_BUDGET, metavar="N",
                   help=f"checks one finding's minimization may spend (default "
                        f"{MINIMIZE_BUDGET}; 0: keep findings as generated)")
    p.add_argument("--user-ops", type=_probability, default=0.0, metavar="P",
                   help="chance that each eligible int32/uint32 reducer declares its op "
                        "with @T.reducer_op (default 0; TileLang skips such programs)")
    tilelang_flags(p)
    json_flags(p)
    output_flags(p)

    p = sub.add_parser("compare", help="judge another backend's outputs (.npz) against "
                       "the oracle")
    common(p)
    p.add_argument("--outputs", required=True, metavar="THEIRS.npz",
                   help="the backend's outputs, keyed by parameter name (at least every "
                        "tensor the kernel writes)")
    p.add_argument("--inputs", default="witness", metavar="IN.npz|witness|seeded",
                   help="the inputs the outputs were computed from (default: witness; "
                        "an .npz leaves the rest to the `# input:` lines and --seed, as "
                        "`run` does)")
    p.add_argument("--seed", type=_natural, default=0,
                   help="seed of the witness or of generated inputs")
    memory_flag(p)

    p = sub.add_parser("emit", help="print an intermediate form")
    common(p)
    param_flag(p)
    p.add_argument("--what", choices=EMITS, default="ir")
    p.add_argument("--plan", choices=PLANS, default="auto",
                   help="physical plan for --what plan, threads, cuda and svg")
    arch_flag(p)
    p.add_argument("--out", metavar="PATH",
                   help="write the form to PATH instead of printing it (atomically; "
                        "never over the program or through a link); with --what svg "
                        "also an existing folder (or a path ending in /) for one file "
                        "per picture")
    p.add_argument("--ptxas", action="store_true",
                   help="with --what plan: compile the kernel (nvcc -Xptxas -v) and "
                        "append ptxas's registers, shared memory, stack and spills")
    p.add_argument("--no-verify", action="store_true",
                   help="emit a program the verifier rejects (the output says so)")
    memory_flag(p)
    return parser


def param_flag(p) -> None:
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="bind the factory parameter NAME (repeatable; before the file's "
                        "`# params:` line, calls and defaults): a Python constant "
                        "(4096, 2**12, T.float16, 'sum') or a bare word taken as a string "
                        "(op=sum, dtype=float16)")


def arch_flag(p) -> None:
    p.add_argument("--arch", type=_arch_flag, default=None, metavar="sm_NN",
                   help="the GPU architecture to plan for: sm_80, sm_86, sm_89, sm_90 or "
                        "sm_100 (its shared memory, threads and blocks per SM, cp.async, "
                        "vector atomics; docs/design.md §27). Default sm_90; `run "
                        "--backend cuda` without it plans for the device it runs on")


def _arch_flag(text: str) -> str:
    from verify_reducer.spec.target import TARGETS
    if text not in TARGETS:
        raise argparse.ArgumentTypeError(f"unknown architecture {text!r}; known: "
                                         f"{', '.join(TARGETS)}")
    return text


def json_flags(p) -> None:
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (verify_reducer/schemas/) instead of the report")
    p.add_argument("--json-file", metavar="FILE",
                   help="write the JSON document to FILE (implies --json; --json=FILE "
                        "is the same; with check --format sarif|junit, that document)")
    p.add_argument("--values", action="store_true",
                   help="with --json: every tensor's values in full (default: a tensor "
                        "over 64 elements is its shape, dtype, first 8 values and a "
                        "sha256 digest)")


def output_flags(p) -> None:
    """--color, -q and -v: how much is said, and in colour or not."""
    p.add_argument("--color", choices=COLOR_MODES, default="auto",
                   help="colour the report and diagnostics: auto (a terminal, unless "
                        "NO_COLOR is set; any stream if FORCE_COLOR is), always or never")
    amount = p.add_mutually_exclusive_group()
    amount.add_argument("-q", "--quiet", action="store_true",
                        help="only each program's verdict and the summary")
    amount.add_argument("-v", "--verbose", action="store_true",
                        help="more detail: every proof, more output values, timings")


def _config_flag(text: str) -> tuple[str, str]:
    from verify_reducer.codegen.tilelang_backend import parse_config_assignment
    try:
        return parse_config_assignment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def tilelang_flags(p) -> None:
    """--tilelang-config KEY=VALUE, repeatable (run and fuzz with --backend tilelang)."""
    p.add_argument("--tilelang-config", type=_config_flag, action="append", default=[],
                   metavar="KEY=VALUE",
                   help="a TileLang pass config for compile, e.g. "
                        "tl.reducer_force_baseline=true (repeatable; true/false, "
                        "numbers, JSON or text, converted to the key's type)")


def tilelang_config(args) -> dict[str, str]:
    """The --tilelang-config pairs as KEY -> VALUE text; a key given twice is a usage
    error (which one was meant?)."""
    config: dict[str, str] = {}
    for key, text in args.tilelang_config:
        if key in config and config[key] != text:
            raise UsageError(f"--tilelang-config {key} given twice ({config[key]!r} and "
                             f"{text!r})")
        config[key] = text
    return config


def flag_value(flag: str, text: str, where: str):
    """A configuration file's value for flag, converted and checked as the command line
    converts it (verify.cli.config); a bad one is a usage error naming where."""
    convert = {"--seed": _natural, "--jobs": _natural, "--blocks": _blocks_flag,
               "--max-memory": _size_flag, "--color": _color_flag, "--arch": _arch_flag}[flag]
    try:
        return convert(text)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _color_flag(text: str) -> str:
    if text not in COLOR_MODES:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(COLOR_MODES)}, "
                                         f"not {text!r}")
    return text


def _blocks_flag(text: str) -> str | int:
    if text == "all":
        return "all"
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected all or a count, not {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a count >= 0, not {n}")
    return n


def _size_flag(text: str) -> int:
    """A byte count of at least 1 (`1e999` and `inf` overflow: refused like `x`)."""
    from verify_reducer.verify.oracle.cost import parse_size
    try:
        size = parse_size(text)
    except (ValueError, OverflowError):
        size = 0
    if size < 1:
        raise argparse.ArgumentTypeError(
            f"expected a size like 512M or 4G, not {text!r}") from None
    return size


def memory_flag(p) -> None:
    p.add_argument("--max-memory", type=_size_flag, default=None, metavar="SIZE",
                   help="refuse a run whose estimated memory is over SIZE (512M, 4G; "
                        "default: half of physical memory, or of ulimit -v where lower)")


def max_memory(args) -> int | None:
    from verify_reducer.verify.oracle.cost import physical_memory
    if args.max_memory is not None:
        return args.max_memory
    physical = physical_memory()
    return None if physical is None else physical // 2


def mistyped_command(argv: list[str]) -> str | None:
    """Why the first word is a mistyped command rather than a program (`chek prog.py`),
    or None. A bare program means `check PROG` (normalize_argv), so a typo would be read
    as a file name and reported as a missing file: a word that is no file, has no
    extension or folder, and is close to a command is a typo instead."""
    first = next((a for a in argv if a == "-" or not a.startswith("-")), None)
    if first is None or first in SUBCOMMANDS or first == "-" or os.path.exists(first) \
            or os.sep in first or "." in first:
        return None
    close = difflib.get_close_matches(first, SUBCOMMANDS, n=1, cutoff=0.6)
    if not close:
        return None
    return (f"unknown command {first!r}: did you mean {close[0]!r}? (commands: "
            f"{', '.join(SUBCOMMANDS)}; a program is a file, and {first!r} is none)")


def normalize_argv(argv: list[str]) -> list[str]:
    """`verify-reducer PROG.py [flags]` means `verify-reducer check PROG.py [flags]` (`-`,
    stdin, is a program too); `--json=FILE` is `--json-file FILE`."""
    argv = [part for a in argv for part in
            (["--json-file", a[len("--json="):]] if a.startswith("--json=") else [a])]
    first = next((a for a in argv if a == "-" or not a.startswith("-")), None)
    if first is not None and first not in SUBCOMMANDS and "-h" not in argv \
            and "--help" not in argv and "--version" not in argv:
        return ["check", *argv]
    return argv





def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1], got {text!r}")
    return value
