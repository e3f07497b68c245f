"""The oracle API: load a program, check it, run it on a backend. The CLI is a thin
shell over these functions; other tools (fuzzers, backend test suites) call them directly."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from spec.diagnostics import Diagnostic, DiagnosticError
from spec.frontend import parse_source
from spec.ir import PrimFunc, Program
from interp import logical
from interp.accept import within_bound

from . import inputs as inputs_mod

EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_MISMATCH, EXIT_INTERNAL = 0, 1, 2, 3, 4


class UsageError(Exception):
    """Bad flags, an unreadable file, an unknown function: exit 2."""


@dataclass
class Loaded:
    path: str
    source: str
    program: Program
    func: PrimFunc


def read_source(path: str) -> str:
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from exc


def load(path: str, func_name: str | None = None, source: str | None = None) -> Loaded:
    """Parse path (never executing it) and pick the prim_func. Raises DiagnosticError for
    a program the frontend rejects and UsageError for a missing file or function."""
    source = read_source(path) if source is None else source
    program = parse_source(source, path)
    try:
        func = program.func(func_name)
    except KeyError:
        names = ", ".join(program.funcs) or "none"
        wanted = f"no prim_func named {func_name!r}" if func_name else \
            "several prim_funcs and none is called main; pick one with --func"
        raise UsageError(f"{path}: {wanted} (found: {names})") from None
    return Loaded(path, source, program, func)


def static_diagnostics(loaded: Loaded) -> list[Diagnostic]:
    """Everything the static checkers report about the function (errors and notes)."""
    return []


@dataclass
class Comparison:
    """One output tensor of a backend judged against the interpreter."""
    name: str
    ok: bool
    mismatches: int
    first_index: tuple[int, ...] | None = None
    got: float | int | None = None
    expected: float | int | None = None
    bound: float | None = None


def compare_outputs(got: dict[str, np.ndarray], reference: logical.Result) -> list[Comparison]:
    out = []
    for name, exact in reference.outputs.items():
        bound = reference.bounds[name]
        accepted = within_bound(got[name], exact, bound)
        bad = np.argwhere(~accepted)
        if len(bad) == 0:
            out.append(Comparison(name, True, 0))
            continue
        idx = tuple(int(i) for i in bad[0])
        out.append(Comparison(name, False, len(bad), idx, got[name][idx].item(),
                              exact[idx].item(), float(bound[idx])))
    return out


@dataclass
class CheckReport:
    loaded: Loaded | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reference: logical.Result | None = None
    comparisons: dict[str, list[Comparison]] = field(default_factory=dict)  # by backend/plan
    seed: int = 0

    @property
    def exit_code(self) -> int:
        if any(d.is_error for d in self.diagnostics):
            return EXIT_REJECTED
        if any(not c.ok for cs in self.comparisons.values() for c in cs):
            return EXIT_MISMATCH
        return EXIT_OK

    @property
    def verdict(self) -> str:
        return {EXIT_OK: "verified", EXIT_REJECTED: "rejected",
                EXIT_MISMATCH: "mismatch"}[self.exit_code]


def check(path: str, func_name: str | None = None, seed: int = 0,
          given: dict[str, np.ndarray] | None = None) -> CheckReport:
    """Parse, verify, then run the reference interpreter on seeded inputs (and every
    backend that applies) and compare. Rejections come back as diagnostics, not raises."""
    try:
        loaded = load(path, func_name)
    except DiagnosticError as err:
        return CheckReport(None, err.diagnostics, seed=seed)
    report = CheckReport(loaded, static_diagnostics(loaded), seed=seed)
    if any(d.is_error for d in report.diagnostics):
        return report
    values = inputs_mod.prepare(loaded.func, seed, given)
    try:
        report.reference = logical.run(loaded.func, values)
    except DiagnosticError as err:
        report.diagnostics += err.diagnostics
    return report


def run_backend(loaded: Loaded, backend: str, values: dict[str, np.ndarray],
                plan: str = "auto") -> logical.Result:
    if backend == "interp":
        return logical.run(loaded.func, values)
    raise UsageError(f"backend {backend!r} is not available")
