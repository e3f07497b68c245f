"""`verify-reducer`: check, run and emit (DESIGN §5). Exit codes: 0 verified, 1 rejected,
2 usage error, 3 mismatch, 4 internal error (reported, never a bare traceback)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import traceback
from collections import Counter

import numpy as np

from spec.diagnostics import DiagnosticError
from spec.ir import ReducerFinalize, walk
from spec.printer import format_func
from codegen.layout_text import format_layouts
from codegen.cuda import Unsupported, render
from codegen import ptxas
from codegen.plan_text import format_plan, plan_json, resources_json
from verify.proofs_fast import smt2_queries
from codegen.tilelang_backend import parse_config_assignment
from .fuzz import fuzz, groups
from .fuzzing.campaign import MINIMIZE_BUDGET
from .fuzzing.tilelang_target import prepare_setup

from . import bugreport
from . import cli_compare
from . import inputs as inputs_mod
from . import pipeline
from .cost import estimate, parse_size, physical_memory
from .pipeline import (EXIT_INTERNAL, EXIT_MISMATCH, EXIT_OK, EXIT_REJECTED, EXIT_USAGE,
                       UsageError)
from .report import format_diagnostics

SUBCOMMANDS = ("check", "run", "emit", "fuzz", "compare")
BACKENDS = ("interp", "sim", "cuda", "tilelang")
EMITS = ("ir", "layout", "plan", "smt2", "cuda")
PLANS = ("auto", "canonical", "fast", "legacy")
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
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(p):
        p.add_argument("program", help="TileLang source file (parsed, never executed, "
                       "except by `run --backend tilelang`)")
        p.add_argument("--func", help="prim_func to use (default: main, or the only one)")
        p.add_argument("--json", action="store_true", help="print one JSON document")

    p = sub.add_parser("check", help="parse, verify, interpret and compare (the default)")
    common(p)
    p.add_argument("--seed", type=_natural, default=0, help="seed of generated inputs")
    p.add_argument("--inputs", help=cli_compare.INPUTS_HELP)
    p.add_argument("--blocks", type=_blocks_flag, default=None, metavar="all|N",
                   help="blocks to run: all, or the block classes plus N random blocks "
                        "(default: the classes plus 2, when blocks are proved "
                        "independent)")
    memory_flag(p)

    p = sub.add_parser("run", help="run the kernel on one backend")
    common(p)
    p.add_argument("--backend", choices=BACKENDS, default="interp",
                   help="tilelang imports the file and runs it through TileLang on the "
                        "GPU, then compares with the interpreter")
    p.add_argument("--plan", choices=PLANS, default="auto",
                   help="physical plan for sim/cuda (default auto: fast where proved)")
    p.add_argument("--inputs", help=cli_compare.INPUTS_HELP)
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

    p = sub.add_parser("fuzz", help="differentially fuzz the lowerings on random kernels")
    p.add_argument("--count", type=_natural, default=20, help="number of programs")
    p.add_argument("--seed", type=_natural, default=0, help="seed of the program generator")
    p.add_argument("--backend", choices=tuple(FUZZ_BACKENDS), default="sim",
                   help="nvcc also compiles every plan's CUDA; cuda also runs every program "
                        "on the GPU; tilelang also runs it through TileLang (with "
                        "--tilelang-config) and writes a bug report for each disagreement")
    p.add_argument("--jobs", type=_natural, default=0, help="worker processes (0: one per CPU)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on this Dask distributed scheduler (pip install -e '.[campaign]')")
    p.add_argument("--corpus", metavar="DIR",
                   help="record finished cases in DIR; the same seed resumes from it")
    p.add_argument("--out", default="fuzz-findings", help="folder for the findings")
    p.add_argument("--minimize-budget", type=_natural, default=MINIMIZE_BUDGET, metavar="N",
                   help=f"checks one finding's minimization may spend (default "
                        f"{MINIMIZE_BUDGET}; 0: keep findings as generated)")
    tilelang_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON document")

    cli_compare.add_parser(sub, common, _natural)

    p = sub.add_parser("emit", help="print an intermediate form")
    common(p)
    p.add_argument("--what", choices=EMITS, default="ir")
    p.add_argument("--plan", choices=PLANS, default="auto",
                   help="physical plan for --what plan and --what cuda")
    p.add_argument("--ptxas", action="store_true",
                   help="with --what plan: compile the kernel (nvcc -Xptxas -v) and "
                        "append ptxas's registers, shared memory, stack and spills")
    p.add_argument("--no-verify", action="store_true",
                   help="emit a program the verifier rejects (the output says so)")
    return parser


def _config_flag(text: str) -> tuple[str, str]:
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
    try:
        return parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a size like 512M or 4G, not {text!r}") from None


def memory_flag(p) -> None:
    p.add_argument("--max-memory", type=_size_flag, default=None, metavar="SIZE",
                   help="refuse a run whose estimated memory is over SIZE (512M, 4G; "
                        "default: half of physical memory)")


def _max_memory(args) -> int | None:
    if args.max_memory is not None:
        return args.max_memory
    physical = physical_memory()
    return None if physical is None else physical // 2


def _normalize_argv(argv: list[str]) -> list[str]:
    """`verify-reducer PROG.py [flags]` means `verify-reducer check PROG.py [flags]`."""
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is not None and first not in SUBCOMMANDS and "-h" not in argv \
            and "--help" not in argv:
        return ["check", *argv]
    return argv


def _print_json(doc: dict) -> None:
    print(json.dumps(doc, indent=2, default=_json_default))


def _json_default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _array_json(array: np.ndarray) -> dict:
    return {"shape": list(array.shape), "dtype": str(array.dtype), "values": array.tolist()}


def _summary(array: np.ndarray, limit: int = 8) -> str:
    flat = array.reshape(-1)
    shown = ", ".join(str(v) for v in flat[:limit].tolist())
    more = f", ... ({flat.size} values)" if flat.size > limit else ""
    return f"[{shown}{more}]"


def _given_inputs(path: str | None, args=None) -> dict[str, np.ndarray] | None:
    if path in cli_compare.INPUT_KEYWORDS:
        return cli_compare.keyword_inputs(path, args)
    return inputs_mod.load_npz(path) if path else None


# ----------------------------------------------------------------------------- check

def cmd_check(args) -> int:
    given = _given_inputs(args.inputs, args)
    report = pipeline.check(args.program, args.func, args.seed, given, args.blocks,
                            _max_memory(args))
    source = report.loaded.source if report.loaded else _safe_source(args.program)
    # generated values are finite: only the given ones (and `# input:` lines) can hold
    # NaN or inf, and materializing every input here would undo the block windows
    notes = inputs_mod.special_values(report.loaded.given(given)) \
        if report.reference is not None else []
    if args.json:
        _print_json({**_check_json(args, report), "input_notes": notes})
        return report.exit_code
    shown = report.diagnostics + report.violations
    if shown:
        print(format_diagnostics(shown, args.program, source), file=sys.stderr)
    _print_notes(notes)
    if report.loaded is not None:
        print(_check_text(report))
    return report.exit_code


def _print_notes(notes: list[str]) -> None:
    for note in notes:
        print(f"verify-reducer: note: {note}", file=sys.stderr)


NO_VERIFY_NOTE = ("--no-verify: the verifier was not consulted; this output may belong "
                  "to a program `check` rejects")


def _gate(args, loaded, values, interpret: bool = True):
    """`run` and `emit` refuse what `check` rejects (DiagnosticError: exit 1 with the
    same diagnostics), unless --no-verify, which the output then states. interpret=False
    where the caller runs the interpreter anyway (its errors raise there). Returns the
    interpreter's result when the gate ran it, else None."""
    if args.no_verify:
        if not args.json:
            _print_notes([NO_VERIFY_NOTE])
        return None
    errors, reference = pipeline.verifier_errors(loaded, values, interpret)
    if errors:
        raise DiagnosticError(errors)
    return reference


def _output_path(path: str | None) -> str | None:
    """Where `run --output` writes (numpy appends .npz), checked before the run."""
    if path is None:
        return None
    written = path if path.endswith(".npz") else path + ".npz"
    folder = os.path.dirname(written) or "."
    if not os.path.isdir(folder):
        raise UsageError(f"--output {path}: no such directory {folder}")
    if os.path.isdir(written):
        raise UsageError(f"--output {path}: {written} is a directory")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"--output {path}: cannot write in {folder}")
    return written


def _safe_source(path: str) -> str:
    try:
        return pipeline.read_source(path)
    except UsageError:
        return ""


def _check_text(report: pipeline.CheckReport) -> str:
    func = report.loaded.func
    k = func.kernel
    grid = "×".join(str(g) for g in k.grid)
    finalizes = sum(isinstance(s, ReducerFinalize) for s in walk(k.body))
    errors = sum(d.is_error for d in report.diagnostics)
    lines = [f"{report.loaded.path}: {func.name} (grid {grid}, {k.threads} threads, "
             f"{finalizes} finalize site{'s' * (finalizes != 1)})"]
    lines.append(f"  verify         {'ok' if not errors else f'{errors} error(s)'}")
    if report.selection is not None:
        lines += _blocks_text(report)
    if report.reference is not None:
        per_epoch = report.reference.epochs
        lines.append(f"  interpret      ok: seed {report.seed}, {len(per_epoch)} epoch(s) "
                     f"finalized, {sum(int(e.counts.sum()) for e in per_epoch)} contributions")
        for name, value in report.reference.outputs.items():
            lines.append(f"                 {name} = {_summary(value)}")
    for epoch in report.epochs:
        results = Counter(p.result for p in epoch.proofs)
        tally = ", ".join(f"{results[r]} {r}" for r in ("proved", "refuted", "unknown")
                          if results[r])
        ms = sum(p.ms for p in epoch.proofs)
        width = f", all-reduce width {epoch.width}" if epoch.width else ""
        lines.append(f"  plan           {epoch.reducer} (line {epoch.line}): {epoch.plan}"
                     f"{width}; proofs: {tally or 'none'} in {ms:.0f} ms")
        for note in epoch.notes:
            lines.append(f"                 {note.code}: {note.message}")
    for label, comps in report.comparisons.items():
        lines.append(f"  {label:<14} {_comparison_status(comps)}")
    lines.append(f"verdict: {report.verdict}")
    return "\n".join(lines)


def _blocks_text(report: pipeline.CheckReport) -> list[str]:
    """Which blocks ran and why: the independence proof, the classes, the sample, the
    memory estimate, and how much of each output the comparisons covered."""
    sel = report.selection
    ind = sel.independence
    queries = f"{ind.queries} quer{'y' if ind.queries == 1 else 'ies'}, {ind.ms:.0f} ms"
    proof = (f"independence proved ({queries})" if ind.proved
             else f"independence NOT proved: {ind.reason}; every block runs")
    memory = f"memory estimate {report.estimate.describe()}" if report.estimate else ""
    if sel.total == 1:
        return [f"  blocks         1 of 1; {memory}"]
    if sel.blocks is None:
        why = "" if not ind.proved else f" ({sel.why_all})"
        return [f"  blocks         all {sel.total}{why}; {proof}",
                f"                 {memory}"]
    lines = [f"  blocks         {len(sel.blocks)} of {sel.total}: {_block_list(sel.blocks)}; "
             f"{proof}"]
    lines.append("                 classes: " + "; ".join(
        f"{c.first}" + (f" x{c.size}" if c.size else "") + f" {', '.join(c.traits)}"
        for c in sel.classes))
    notes = list(dict.fromkeys(c.note for c in sel.classes if c.note))
    lines += [f"                 classes approximate: {n}" for n in notes]
    if sel.sampled:
        lines.append(f"                 random sample (seed {report.seed}): "
                     f"{_block_list(sel.sampled)}")
    compared = [c for c in next(iter(report.comparisons.values()), []) if c.compared]
    if compared:
        sizes = {p.name: p.size for p in report.loaded.func.params}
        lines.append("                 compared " + ", ".join(
            f"{c.name}: {c.compared} of {sizes[c.name]} elements" for c in compared))
    lines.append(f"                 {memory}")
    return lines


def _block_list(blocks, limit: int = 8) -> str:
    shown = ", ".join(str(b) for b in blocks[:limit])
    return shown + (f", ... ({len(blocks)} blocks)" if len(blocks) > limit else "")


def _comparison_status(comps: list[pipeline.Comparison]) -> str:
    bad = [c for c in comps if not c.ok]
    unchecked = sum(c.unchecked for c in comps)
    caveat = f" ({unchecked} element(s) unchecked: infinite bound)" if unchecked else ""
    return "== interpreter" + caveat if not bad else "MISMATCH " + "; ".join(
        f"{c.name}{list(c.first_index)}: got {c.got}, expected {c.expected} "
        f"(bound {c.bound:g}), {c.mismatches} element(s)" for c in bad)


def _check_json(args, report: pipeline.CheckReport) -> dict:
    doc = {"command": "check", "program": args.program,
           "func": report.loaded.func.name if report.loaded else None,
           "verdict": report.verdict, "exit_code": report.exit_code, "seed": report.seed,
           "diagnostics": [d.to_json() for d in report.diagnostics]}
    if report.reference is not None:
        doc["finalized"] = [{"reducer": e.reducer, "line": e.span.line if e.span else None,
                             "block": list(e.block), "contributions": int(e.counts.sum())}
                            for e in report.reference.epochs]
        doc["outputs"] = {n: _array_json(v) for n, v in report.reference.outputs.items()}
    doc["resources"] = resources_json(report.resources) if report.resources else None
    if report.selection is not None:
        doc["blocks"] = report.selection.to_json()
    if report.estimate is not None:
        doc["memory_estimate"] = report.estimate.to_json()
    doc["epochs"] = [e.to_json() for e in report.epochs]
    doc["violations"] = [d.to_json() for d in report.violations]
    doc["comparisons"] = {b: [c.__dict__ for c in cs] for b, cs in report.comparisons.items()}
    return doc


# ----------------------------------------------------------------------------- run

def cmd_run(args) -> int:
    output = _output_path(args.output)
    if args.backend != "tilelang" and (args.tilelang_config or args.bug_report):
        flag = "--tilelang-config" if args.tilelang_config else "--bug-report"
        raise UsageError(f"{flag} applies to --backend tilelang only")
    if args.bug_report:
        _findings_folder(args.bug_report, "--bug-report")
    loaded = pipeline.load(args.program, args.func)
    if args.backend != "cuda":      # the interpreter runs the whole grid (tilelang: too)
        pipeline.refuse_over(estimate(loaded.func), _max_memory(args), "this run",
                             "use `check`, which runs a sample of the blocks")
    values = loaded.inputs(args.seed, _given_inputs(args.inputs, args), args.inputs or "inputs")
    reference = _gate(args, loaded, values, interpret=args.backend != "interp")
    notes = inputs_mod.special_values(values)
    if args.backend == "tilelang":
        return _run_tilelang(args, loaded, values, notes, output)
    progress = _progress(args.backend) if sys.stderr.isatty() else None
    run = pipeline.run_backend(loaded, args.backend, values, args.plan, progress)
    comparisons = None
    if args.backend == "cuda":
        # the GPU's outputs are judged like TileLang's: against the interpreter, a
        # disagreement beyond the bound is a mismatch (exit 3)
        reference = reference or pipeline.oracle(loaded, values)
        comparisons = pipeline.compare_outputs(run.outputs, reference)
    return _report_run(args, loaded, run, notes, output, comparisons=comparisons)


def _report_run(args, loaded, run: pipeline.BackendRun, notes: list[str],
                output: str | None, tilelang: dict | None = None,
                comparisons: list[pipeline.Comparison] | None = None) -> int:
    """Print one backend's run (and, for TileLang, its comparison with the interpreter
    and its setup); exit 3 on a violation or a comparison that failed."""
    bad = comparisons is not None and any(not c.ok for c in comparisons)
    code = EXIT_MISMATCH if run.violations or bad else EXIT_OK
    if output:
        output = inputs_mod.save_npz(output, run.outputs)
    if args.json:
        doc = {"command": "run", "program": args.program, "func": loaded.func.name,
               "backend": args.backend, "plan": run.plan, "exit_code": code,
               "verified": not args.no_verify, "input_notes": notes,
               "output_file": output,
               "outputs": {n: _array_json(v) for n, v in run.outputs.items()},
               "violations": [d.to_json() for d in run.violations],
               "notes": [d.to_json() for d in run.notes]}
        if run.bounds is not None:
            doc["bounds"] = {n: _array_json(b) for n, b in run.bounds.items()}
        if comparisons is not None:
            doc["comparisons"] = {pipeline.run_label(run): [c.__dict__ for c in comparisons]}
        if tilelang is not None:
            doc.update(tilelang)
        _print_json(doc)
        return code
    _print_notes(notes)
    if run.violations or run.notes:
        print(format_diagnostics(run.notes + run.violations, args.program, loaded.source),
              file=sys.stderr)
    for name, value in run.outputs.items():
        print(f"{name} = {_summary(value)}")
    if comparisons is not None:
        print(f"{pipeline.run_label(run)} {_comparison_status(comparisons)}")
    if tilelang is not None:
        _print_tilelang_setup(tilelang)
    if output:
        print(f"wrote {output}")
    return code


def _run_tilelang(args, loaded, values, notes: list[str], output: str | None) -> int:
    """TileLang is the backend this oracle exists to judge: its outputs are compared
    with the interpreter's, and a disagreement (a wrong value, or TileLang refusing the
    program) is a mismatch, exit 3, written as a bug report with --bug-report."""
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


def _print_tilelang_setup(facts: dict) -> None:
    configs = ", ".join(f"{k}={v!r}" for k, v in facts["tilelang"]["pass_configs"].items())
    print(f"tilelang {facts['tilelang']['version']}; pass configs: "
          f"{configs or 'none (defaults)'}")
    if "bug_report" in facts:
        print(f"bug report: {facts['bug_report']}")


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
    if args.json:
        _print_json({"command": "run", "program": args.program, "func": loaded.func.name,
                     "backend": "tilelang", "plan": None, "exit_code": EXIT_MISMATCH,
                     "tilelang_error": {"stage": failed.stage, "message": failed.detail},
                     "expected": {n: _array_json(v) for n, v in reference.outputs.items()},
                     **facts})
        return EXIT_MISMATCH
    print(f"verify-reducer: {failed}", file=sys.stderr)
    for name, value in reference.outputs.items():
        print(f"interpreter: {name} = {_summary(value)}")
    print("tilelang MISMATCH: TileLang failed on a program the interpreter accepts")
    _print_tilelang_setup(facts)
    return EXIT_MISMATCH


# ----------------------------------------------------------------------------- emit

def cmd_emit(args) -> int:
    loaded = pipeline.load(args.program, args.func)
    # the gate judges the program as `check` does by default: on the inputs of seed 0
    _gate(args, loaded, loaded.inputs(0))
    head = {"command": "emit", "program": args.program, "func": loaded.func.name,
            "what": args.what, "verified": not args.no_verify}
    if args.what == "layout":
        text = format_layouts(pipeline.loaded_layouts(loaded), loaded.func)
    elif args.what == "plan":
        plan = pipeline.make_plan(loaded, args.plan)
        figures = _ptxas_figures(plan) if args.ptxas else None
        if args.json:
            _print_json({**head, "plan": plan_json(plan, figures)})
            return EXIT_OK
        text = format_plan(plan, figures)
    elif args.what == "cuda":
        text = render(pipeline.make_plan(loaded, args.plan)).translation_unit()
    elif args.what == "smt2":
        queries = smt2_queries(loaded.func, pipeline.loaded_layouts(loaded))
        if args.json:
            _print_json({**head, "queries": [{"name": n, "smt2": t} for n, t in queries]})
            return EXIT_OK
        text = "\n".join(f"; ---- {name}\n{smt2}" for name, smt2 in queries)
    else:
        text = format_func(loaded.func)
    if args.json:
        _print_json({**head, "text": text})
    else:
        print(text)
    return EXIT_OK


def _ptxas_figures(plan):
    """ptxas's figures for the plan's kernel (codegen.ptxas); UsageError without nvcc."""
    source = render(plan)
    try:
        return ptxas.compile_figures(source.translation_unit())[source.kernel_name]
    except ptxas.PtxasUnavailable as exc:
        raise UsageError(f"--ptxas: {exc}") from None
def _findings_folder(path: str, flag: str = "--out") -> None:
    """`fuzz --out` (and `run --bug-report`) must be a folder we can write (made if
    missing), checked first."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{flag} {path}: exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot create the directory ({exc.strerror})") \
            from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: cannot write in the directory")


def cmd_fuzz(args) -> int:
    if args.backend != "tilelang" and args.tilelang_config:
        raise UsageError("--tilelang-config applies to --backend tilelang only")
    _findings_folder(args.out)
    if args.corpus:
        _findings_folder(args.corpus, "--corpus")
    # TileLang must be able to run here before the first program is drawn
    setup = prepare_setup(tilelang_config(args)) if args.backend == "tilelang" else None
    facts = {} if setup is None else \
        {"tilelang": {"version": setup.version, "pass_configs": setup.pass_configs}}
    if facts and not args.json:
        _print_tilelang_setup(facts)

    def progress(case, verdict):
        if not args.json and verdict is not None:
            print(f"case {case}: {verdict[0]}: {verdict[1][:200]}")

    findings = fuzz(args.count, args.seed, args.out, FUZZ_BACKENDS[args.backend], progress,
                    jobs=args.jobs, scheduler=args.scheduler, corpus=args.corpus,
                    budget=args.minimize_budget, bar=not args.json, tilelang=setup)
    code = EXIT_MISMATCH if findings else EXIT_OK
    if args.json:
        _print_json({"command": "fuzz", "count": args.count, "seed": args.seed,
                     "backend": args.backend, "out": args.out, "exit_code": code,
                     **facts, "findings": [f.__dict__ for f in findings],
                     "groups": groups(findings)})
    else:
        print(f"{args.count} programs, {len(findings)} finding(s)"
              + (f", saved in {args.out}/" if findings else ""))
        reports = sorted({f.report for f in findings if f.report})
        if reports:
            print(f"{len(reports)} TileLang bug report(s): " + ", ".join(reports))
    return code


COMMANDS = {"check": cmd_check, "run": cmd_run, "emit": cmd_emit, "fuzz": cmd_fuzz,
            "compare": cli_compare.cmd_compare}


def _report_rejection(args, err: DiagnosticError) -> int:
    if getattr(args, "json", False):
        _print_json({"command": args.command, "program": args.program, "verdict": "rejected",
                     "exit_code": EXIT_REJECTED,
                     "diagnostics": [d.to_json() for d in err.diagnostics]})
    else:
        print(format_diagnostics(err.diagnostics, args.program, _safe_source(args.program)),
              file=sys.stderr)
    return EXIT_REJECTED


def _report_usage(args, message: str) -> int:
    if getattr(args, "json", False):
        _print_json({"command": args.command, "exit_code": EXIT_USAGE, "error": message})
    else:
        print(f"verify-reducer: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _report_internal(args, exc: BaseException) -> int:
    with tempfile.NamedTemporaryFile("w", prefix="verify-reducer-crash-", suffix=".txt",
                                     delete=False) as f:
        traceback.print_exception(exc, file=f)
        crash_file = f.name
    message = (f"internal error of verify-reducer ({type(exc).__name__}: {exc}); "
               f"this is our bug, not your program's. Details: {crash_file}")
    if getattr(args, "json", False):
        _print_json({"command": getattr(args, "command", None), "exit_code": EXIT_INTERNAL,
                     "error": message, "crash_report": crash_file})
    else:
        print(f"verify-reducer: {message}", file=sys.stderr)
    return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    argv = _normalize_argv(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except BrokenPipeError:
        # the reader went away (`| head`): nothing left to say, and nothing went wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except DiagnosticError as err:
        return _report_rejection(args, err)
    except (UsageError, inputs_mod.InputError) as err:
        return _report_usage(args, str(err))
    except Unsupported as err:
        # a construct the verifier accepts but the CUDA renderer does not lower: the
        # backend cannot run this program (like a missing device), not a crash of ours
        return _report_usage(args, f"{getattr(args, 'program', '')}: the CUDA backend does not "
                                   f"lower this program: {err}")
    except Exception as exc:  # the contract: exit 4 with a report, never a bare traceback
        return _report_internal(args, exc)


if __name__ == "__main__":
    sys.exit(main())
