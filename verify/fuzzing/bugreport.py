"""TileLang judged against the oracle, and each disagreement written as a bug report
that stands alone.

    outcome = compare_with_tilelang(loaded, values, setup)
    if outcome.disagrees:
        folder = write_report(outcome, "reports/")

A disagreement is TileLang giving an output outside the interpreter's bound, or TileLang
refusing or crashing on a program our verifier accepts (the oracle has an answer, so a
refusal is TileLang's disagreement too). The report folder holds everything a TileLang
developer needs without this project's context:

    program.py      the program (the shrunk one when a shrinker ran; original.py beside)
    inputs.npz      every parameter's initial value, keyed by parameter name
    expected.npz    the interpreter's outputs; bounds.npz their error bounds
    got.npz         TileLang's outputs (wrong outputs only)
    report.md       what went wrong: first mismatching indices and counts per output, or
                    TileLang's own message and stage; TileLang's version, the pass
                    configs, and the exact command that reproduces it
    report.json     the same facts for tools

The folder is named for what it holds (function, kind, a digest of program, inputs and
configs), so the same disagreement found twice lands in one folder.

Minimization belongs elsewhere: write_report accepts a shrink callback that is handed
the outcome and returns a smaller outcome that still disagrees (or None). A fuzzing
campaign builds the folder's content where TileLang ran (`build_report`: plain data, sent
from a worker process) and saves it where files are written (`save_report`)."""
from __future__ import annotations

import hashlib
import json
import os
import shlex
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from verify_reducer.interp import logical
from verify_reducer.interp.accept import within_bound

from verify_reducer.spec.source import encode_source
from verify_reducer.verify.cli import outputs
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.pipeline import Comparison, Loaded, TileLangFailed, TileLangSetup

FIRST_MISMATCHES = 10          # mismatching indices listed per output


@dataclass
class TileLangOutcome:
    """One run of TileLang on one program and inputs, judged against the interpreter."""
    loaded: Loaded
    inputs: dict[str, np.ndarray]
    reference: logical.Result
    setup: TileLangSetup
    got: dict[str, np.ndarray] | None        # None when TileLang failed
    comparisons: list[Comparison]            # empty when TileLang failed
    failure: TileLangFailed | None = None

    @property
    def disagrees(self) -> bool:
        return self.failure is not None or any(not c.ok for c in self.comparisons)

    @property
    def kind(self) -> str:
        """mismatch (a wrong output), refused (TileLang raised while building or
        compiling) or crashed (its kernel failed at run time)."""
        if self.failure is None:
            return "mismatch"
        return "crashed" if self.failure.stage == "run" else "refused"

    def summary(self) -> str:
        if self.failure is not None:
            first = (self.failure.detail.splitlines() or [""])[0]
            return f"tilelang {self.kind} ({self.failure.stage} stage): {first[:200]}"
        bad = [c for c in self.comparisons if not c.ok]
        if not bad:
            unjudged = sum(c.unchecked for c in self.comparisons)
            return "tilelang == interpreter" if not unjudged else \
                f"tilelang inconclusive: {unjudged} element(s) not judged (bound)"
        c = bad[0]
        return (f"tilelang: {c.name}{list(c.first_index)} = {c.got}, expected "
                f"{c.expected} (bound {c.bound:g}), {c.mismatches} element(s)")


Shrinker = Callable[[TileLangOutcome], "TileLangOutcome | None"]


def compare_with_tilelang(loaded: Loaded, values: dict[str, np.ndarray],
                          setup: TileLangSetup,
                          reference: logical.Result | None = None) -> TileLangOutcome:
    """TileLang's run of the loaded program on values, judged against the interpreter
    (its result on values: reference when the caller has it already). TileLang failing
    is an outcome (failure set), not a raise; a program our verifier rejects raises
    DiagnosticError and a missing TileLang UsageError (pipeline)."""
    run = None
    failure = None
    try:
        run = pipeline.run_tilelang_backend(loaded, values, setup)
    except TileLangFailed as failed:
        failure = failed
    if reference is None:
        reference = pipeline.oracle(loaded, values)
    if run is None:
        return TileLangOutcome(loaded, values, reference, setup, None, [], failure)
    comparisons = pipeline.compare_outputs(run.outputs, reference)
    return TileLangOutcome(loaded, values, reference, setup, run.outputs, comparisons)


# ----------------------------------------------------------------------------- the folder

@dataclass
class BugReport:
    """A report folder's content as plain data (picklable): its name, its text files
    and its .npz files (each a dict of arrays), by file name."""
    name: str
    texts: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)


def write_report(outcome: TileLangOutcome, root: str,
                 shrink: Shrinker | None = None) -> str:
    """Write outcome (which must disagree) as a report folder under root and return the
    folder's path. With shrink, the shrunk outcome is the report and the original
    program is kept beside it as original.py."""
    if not outcome.disagrees:
        raise ValueError("TileLang agrees with the interpreter: nothing to report")
    shrunk = shrink(outcome) if shrink is not None else None
    if shrunk is not None and shrunk.disagrees:
        return save_report(build_report(shrunk, original=outcome), root)
    return save_report(build_report(outcome), root)


def build_report(outcome: TileLangOutcome, original: TileLangOutcome | None = None,
                 origin: str | None = None) -> BugReport:
    """The report folder of outcome (which must disagree). original: the outcome it was
    shrunk from (kept as original.py when its program differs); origin: where the
    original program came from, when not a file the reader has (a fuzzing case)."""
    if original is not None and original.loaded.source == outcome.loaded.source:
        original = None
    report = BugReport(_folder_name(outcome), {"program.py": outcome.loaded.source})
    if original is not None:
        report.texts["original.py"] = original.loaded.source
    report.arrays = {"inputs.npz": outcome.inputs,
                     "expected.npz": outcome.reference.outputs,
                     "bounds.npz": outcome.reference.bounds}
    if outcome.got is not None:
        report.arrays["got.npz"] = outcome.got
    facts = report_facts(outcome, shrunk_from=original, origin=origin)
    report.texts["report.json"] = json.dumps(facts, indent=2) + "\n"
    report.texts["report.md"] = format_report(facts)
    return report


def save_report(report: BugReport, root: str, flag: str = "--bug-report") -> str:
    """Write report as a folder under root; returns the folder's path. Each file is
    written atomically (verify.cli.outputs; a UsageError naming flag when it cannot be),
    a program in the encoding its own coding declaration names, so that Python reads
    the same program from the copy (spec.source.encode_source)."""
    folder = os.path.join(root, report.name)
    outputs.check_folder(flag, folder)
    for name, text in report.texts.items():
        encoded = encode_source(text) if name.endswith(".py") else None
        outputs.write_text(flag, os.path.join(folder, name), text, encoded=encoded)
    for name, arrays in report.arrays.items():
        outputs.write_npz(flag, os.path.join(folder, name), arrays)
    return folder


def _folder_name(outcome: TileLangOutcome) -> str:
    digest = hashlib.sha256(outcome.loaded.source.encode())
    digest.update(json.dumps(outcome.setup.given, sort_keys=True).encode())
    for name in sorted(outcome.inputs):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(outcome.inputs[name]).tobytes())
    return f"tilelang-{outcome.loaded.func.name}-{outcome.kind}-{digest.hexdigest()[:10]}"


def reproduce_command(outcome: TileLangOutcome) -> str:
    """The command, run inside the report folder, that reproduces the disagreement."""
    words = ["verify-reducer", "run", "program.py", "--func", outcome.loaded.func.name,
             "--backend", "tilelang", "--inputs", "inputs.npz"]
    for key, text in outcome.setup.given.items():
        words += ["--tilelang-config", f"{key}={text}"]
    return " ".join(shlex.quote(w) for w in words)


def report_facts(outcome: TileLangOutcome, shrunk_from: TileLangOutcome | None = None,
                 origin: str | None = None) -> dict:
    """Everything the report says, as plain data (report.json; report.md renders it).
    origin names where the program came from (default: its file)."""
    func = outcome.loaded.func
    facts = {
        "kind": outcome.kind,
        "summary": outcome.summary(),
        "program": "program.py",
        "original_program": origin or outcome.loaded.path,
        "shrunk": shrunk_from is not None,
        "func": func.name,
        "grid": list(func.kernel.grid),
        "threads": func.kernel.threads,
        "tilelang_version": outcome.setup.version,
        "pass_configs": {k: _plain(v) for k, v in outcome.setup.pass_configs.items()},
        "inputs": {n: {"shape": list(v.shape), "dtype": str(v.dtype)}
                   for n, v in outcome.inputs.items()},
        "command": reproduce_command(outcome),
    }
    if outcome.failure is not None:
        facts["tilelang_error"] = {"stage": outcome.failure.stage,
                                   "message": outcome.failure.detail}
    else:
        facts["outputs"] = [_output_facts(outcome, c) for c in outcome.comparisons]
    return facts


def _plain(value):
    return value if isinstance(value, (bool, int, float, str, list, dict)) else str(value)


def _output_facts(outcome: TileLangOutcome, comparison: Comparison) -> dict:
    """One output: its mismatch count and first mismatching elements, and the ratio
    got/expected when every mismatch shares one (a value counted k times)."""
    name = comparison.name
    got, exact = outcome.got[name], outcome.reference.outputs[name]
    bound = outcome.reference.bounds[name]
    bad = np.argwhere(~within_bound(got, exact, bound))
    first = [{"index": [int(i) for i in idx], "got": got[tuple(idx)].item(),
              "expected": exact[tuple(idx)].item(),
              "bound": float(np.broadcast_to(bound, exact.shape)[tuple(idx)])}
             for idx in bad[:FIRST_MISMATCHES]]
    facts = {"name": name, "ok": comparison.ok, "elements": int(exact.size),
             "mismatches": int(len(bad)), "first_mismatches": first,
             "zeros_among_mismatches": int(np.count_nonzero(got[tuple(bad.T)] == 0))
             if len(bad) else 0}
    ratio = _common_ratio(got, exact, bad)
    if ratio is not None:
        facts["common_ratio"] = ratio
    return facts


def _common_ratio(got, exact, bad) -> float | None:
    if len(bad) == 0:
        return None
    rows = tuple(bad.T)
    g = got[rows].astype(np.float64)
    e = exact[rows].astype(np.float64)
    if np.any(e == 0) or not np.all(np.isfinite(g)):
        return None
    ratios = g / e
    if ratios[0] == 0:                    # all zeros: the zero count says it already
        return None
    return float(ratios[0]) if np.allclose(ratios, ratios[0], rtol=1e-6, atol=0) else None


def format_report(facts: dict) -> str:
    """report.md: the facts for a person, the command first-class."""
    configs = ", ".join(f"`{k}={json.dumps(v)}`" for k, v in facts["pass_configs"].items())
    lines = [f"# TileLang disagrees with the reference interpreter ({facts['kind']})", "",
             facts["summary"], "",
             f"- program: `program.py`, prim_func `{facts['func']}` (grid "
             f"{'x'.join(map(str, facts['grid']))}, {facts['threads']} threads)"
             + (f"; shrunk from `original.py` ({facts['original_program']})"
                if facts["shrunk"] else f"; from {facts['original_program']}"),
             f"- TileLang version: {facts['tilelang_version']}",
             f"- pass configs: {configs or 'none (TileLang defaults)'}",
             "- inputs: `inputs.npz` (keyed by parameter name: "
             + ", ".join(f"{n} {tuple(i['shape'])} {i['dtype']}"
                         for n, i in facts["inputs"].items()) + ")",
             "- expected: `expected.npz`, the reference interpreter's exact outputs "
             "(rounded once); `bounds.npz`, the error bound each element of TileLang's "
             "output may differ by (any summation order)", ""]
    if "tilelang_error" in facts:
        error = facts["tilelang_error"]
        lines += [f"## TileLang failed at its {error['stage']} stage", "",
                  "The reference interpreter accepts this program and computes "
                  "`expected.npz`; TileLang raised:", "", "```text",
                  error["message"], "```", ""]
    else:
        lines += ["## Wrong outputs (`got.npz`)", ""]
        for out in facts["outputs"]:
            if out["ok"]:
                lines.append(f"- `{out['name']}`: all {out['elements']} elements within "
                             f"bound")
                continue
            ratio = f"; got = {out['common_ratio']:g} x expected at every mismatch" \
                if "common_ratio" in out else ""
            lines.append(f"- `{out['name']}`: {out['mismatches']} of {out['elements']} "
                         f"elements wrong ({out['zeros_among_mismatches']} of them 0)"
                         f"{ratio}")
        for out in facts["outputs"]:
            if out["ok"]:
                continue
            lines += ["", f"First mismatches of `{out['name']}`:", "",
                      "| index | got | expected | bound |", "|---|---|---|---|"]
            lines += [f"| {tuple(m['index'])} | {m['got']} | {m['expected']} | "
                      f"{m['bound']:g} |" for m in out["first_mismatches"]]
        lines.append("")
    lines += ["## Reproduce", "", "In this folder (verify-reducer installed, a CUDA GPU "
              "and the TileLang above):", "", "```sh", facts["command"], "```", "",
              "It exits 3 while TileLang disagrees and 0 once it agrees.", ""]
    return "\n".join(lines)
