"""The oracle as a library: the exact meaning of a TileLang deferred-reduction kernel,
and a judge of any other backend's outputs.

    from verify_reducer import oracle

    prog = oracle.load("examples/gemv_pipelined.py")      # parsed, never executed
    ins = oracle.witness_inputs(prog)                       # every contribution visible
    ref = oracle.reference(prog, ins)                       # outputs + per-element bounds
    report = oracle.compare(prog, my_backend(prog, ins), ins)
    assert report.ok, str(report)                           # or report.to_json()
    # report.verdict: "match", "mismatch" or "inconclusive" (some element's bound cannot
    # judge it: never ok; report.tensor(name).unchecked_listed names them)

    report = oracle.check(prog, my_backend)                 # the same in one call
    report = oracle.check(prog, oracle.backend("sim:fast"))

A backend is any callable `backend(program, inputs) -> {name: array}` (`Backend`): it
receives every parameter's initial value (numpy arrays, copies it may keep) and returns
at least every tensor the kernel writes (`Program.outputs`), in the declared shapes; any
other parameter it returns is judged too (it must come back unchanged). Built-in
backends: `backend("interp")`, `backend("sim:PLAN")`, `backend("cuda:PLAN")` (PLAN: auto,
canonical, fast, legacy), `backend("tilelang")`.

Inputs (`inputs=` everywhere): None or "witness" (the default: `witness_inputs`, under
which a dropped or duplicated contribution changes the exact result; see
`verify.oracle.witness` for exactly what is guaranteed), "seeded" (the program's `# input:`
lines, the rest generated from `seed`: what `verify-reducer run` uses by default), a
mapping name -> array or an .npz path. Parameters a mapping leaves out are made as
`fill` says ("witness" or "seeded"); nothing ever raises a bare KeyError.

A factory (`def kernel(M, N, ...)` returning a prim_func) is bound by `load(path,
params={"M": 4096, "N": 4096})`, then the Program is passed on.

Errors: `ProgramError` (no such file, no such function, a `# input:` line that does not
parse, a param that names no factory parameter), `ProgramRejected` (the verifier rejects the program: it has no meaning, so no
reference; `.diagnostics`), `OutputsError` (a missing, unknown, misshapen or non-numeric
output: the message names the tensor), `InputError` (an input that does not fit its
parameter), `TooLarge` (the run's memory estimate is over `max_memory`: refused before
any input or witness is built), `BackendUnavailable` (pycuda, a GPU or TileLang
missing), `BackendFailed` (TileLang refused or crashed on the program). All but the
last three are ValueErrors.

`max_memory=` (reference, compare, check): bytes a run may take by its estimate
(verify.oracle.cost: the whole grid, the witness included); "auto" (the default) is half
of physical memory, as on the command line; None sets no limit."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Protocol, Union, runtime_checkable

import numpy as np

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.codegen.plan import PLANNERS
from verify_reducer.verify.oracle import judge as judge_mod
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle import witness as witness_mod
from verify_reducer.verify.oracle.cost import physical_memory
from verify_reducer.verify.oracle.inputs import InputError
from verify_reducer.verify.oracle.judge import (Mismatch, Reference, Report, TensorReport, REPORT_FIELDS,
                          TENSOR_FIELDS, MISMATCH_FIELDS, UNCHECKED_FIELDS, Unchecked)
from verify_reducer.verify.oracle.pipeline import OutputsError
from verify_reducer.verify.cli.report import format_diagnostics
from verify_reducer.verify.oracle.witness import ReducerAudit, Witness

__all__ = [
    "Program", "Reference", "Report", "TensorReport", "Mismatch", "Unchecked", "Witness",
    "ReducerAudit",
    "Backend", "BuiltinBackend", "Inputs",
    "load", "witness", "witness_inputs", "reference", "compare", "check", "backend",
    "BACKENDS", "PLANS", "REPORT_FIELDS", "TENSOR_FIELDS", "MISMATCH_FIELDS",
    "UNCHECKED_FIELDS",
    "OracleError", "ProgramError", "ProgramRejected", "OutputsError", "InputError",
    "TooLarge", "BackendUnavailable", "BackendFailed",
]

BACKENDS = ("interp", "sim", "cuda", "tilelang")
PLANS = ("auto",) + tuple(p for p in PLANNERS if p != "auto")

# what `inputs=` accepts
Inputs = Union[None, str, "os.PathLike[str]", Mapping[str, np.ndarray]]


class OracleError(Exception):
    """Base of the oracle's own errors."""


class ProgramError(OracleError, ValueError):
    """The program cannot be loaded: no such file, no such prim_func, a bad `# input:`."""


class ProgramRejected(OracleError, ValueError):
    """The verifier rejects the program (or the frontend cannot parse it): it has no
    meaning, so there is no reference to judge a backend by."""

    def __init__(self, diagnostics, path: str = "<source>", source: str = ""):
        self.diagnostics = list(diagnostics)
        super().__init__(format_diagnostics(self.diagnostics, path, source))


class TooLarge(OracleError):
    """The run's memory estimate is over max_memory: refused before anything is built
    (the message has the estimate)."""


class BackendUnavailable(OracleError):
    """A built-in backend that cannot run here (no pycuda, GPU, TileLang or nvcc)."""


class BackendFailed(OracleError):
    """A built-in backend refused or crashed on a program the oracle accepts (TileLang):
    a disagreement, like a mismatch. `stage` says where."""

    def __init__(self, message: str, stage: str | None = None):
        self.stage = stage
        super().__init__(message)


@dataclass
class Program:
    """A loaded program: one prim_func, parsed from TileLang source (never executed).
    params: name -> (shape, dtype name) in signature order; outputs: the parameters the
    kernel writes (what a backend must return)."""
    path: str
    source: str
    func: str
    params: dict[str, tuple[tuple[int, ...], str]]
    outputs: tuple[str, ...]
    loaded: pipeline.Loaded = field(repr=False)

    def __str__(self) -> str:
        return f"{self.path} ({self.func})"


ProgramLike = Union[Program, str, "os.PathLike[str]"]


@runtime_checkable
class Backend(Protocol):
    """Anything that runs a program: `backend(program, inputs) -> {name: array}`."""

    def __call__(self, program: Program,
                 inputs: Mapping[str, np.ndarray]) -> Mapping[str, np.ndarray]: ...


def load(path_or_source: ProgramLike, func: str | None = None,
         params: Mapping[str, object] | None = None) -> Program:
    """A program from a file path or from TileLang source text (text with a newline or
    `prim_func` in it is source; it is then named `<source>`). func picks the prim_func
    (default main, or the only one). params binds a factory's parameters as `--param`
    does, with Python values (`{"M": 4096, "op": "sum", "dtype": "float16"}`): before
    the file's `# params:` line, its calls and the defaults; a name no factory has is a
    ProgramError. A Program is returned as it is (params must then be None)."""
    if isinstance(path_or_source, Program):
        if params:
            raise ProgramError("params bind a factory when it is loaded: pass them with "
                               "the path or the source, not with a loaded Program")
        return path_or_source
    text = os.fspath(path_or_source)
    is_source = isinstance(path_or_source, str) and ("\n" in text or "prim_func" in text) \
        and not os.path.isfile(text)
    try:
        if is_source:
            loaded = pipeline.load("<source>", func, source=text, params=params)
        else:
            loaded = pipeline.load(text, func, params=params)
    except pipeline.UsageError as exc:
        raise ProgramError(str(exc)) from None
    except DiagnosticError as err:
        raise ProgramRejected(err.diagnostics, "<source>" if is_source else text,
                              text if is_source else _read_or_empty(text)) from None
    f = loaded.func
    return Program(loaded.path, loaded.source, f.name,
                   {p.name: (tuple(p.shape), p.dtype.name) for p in f.params},
                   judge_mod.written_params(f), loaded)


def _read_or_empty(path: str) -> str:
    try:
        return pipeline.read_source(path)
    except pipeline.UsageError:
        return ""


def witness(program: ProgramLike, seed: int = 0, *,
            max_memory: int | None | str = "auto") -> Witness:
    """Witness inputs with their audit: per reducer, how many contributions would change
    their output if dropped or duplicated, whether every output is exact in every order
    and whether the contributions of each output are distinct (`Witness.lines()`).
    TooLarge when building them would take more than max_memory by the estimate."""
    try:
        return witness_mod.witness(load(program).loaded, seed, _limit(max_memory))
    except pipeline.UsageError as exc:
        raise TooLarge(str(exc)) from None


def witness_inputs(program: ProgramLike, seed: int = 0) -> dict[str, np.ndarray]:
    """Every parameter's witness value: inputs under which each contribution is visible
    in the exact result (distinct small integers for sum/max/min with headroom to stay
    exact in any order, one-hot bits for bitwise ops, powers of two or odd integers for
    products, odd × power-of-two factors for products of two inputs)."""
    return witness(program, seed).inputs


def reference(program: ProgramLike, inputs: Inputs = None, *, seed: int = 0,
              fill: str = "witness", max_memory: int | None | str = "auto") -> Reference:
    """The interpreter's outputs (every parameter after the run) with a bound per
    element, on witness inputs by default. ProgramRejected when the verifier rejects the
    program on these inputs; TooLarge when the run's memory estimate is over
    max_memory."""
    prog = load(program)
    try:
        return judge_mod.reference(prog.loaded, inputs, seed, fill, _limit(max_memory))
    except DiagnosticError as err:
        raise ProgramRejected(err.diagnostics, prog.path, prog.source) from None
    except pipeline.UsageError as exc:
        raise TooLarge(str(exc)) from None


def _limit(max_memory: int | None | str) -> int | None:
    """"auto": half of physical memory (unknown: no limit); None: no limit."""
    if max_memory == "auto":
        physical = physical_memory()
        return None if physical is None else physical // 2
    return max_memory


def compare(program: ProgramLike, outputs: Mapping[str, np.ndarray], inputs: Inputs = None,
            *, seed: int = 0, fill: str = "witness", backend: str | None = None,
            ref: Reference | None = None,
            max_memory: int | None | str = "auto") -> Report:
    """Judge outputs (name -> array: at least every tensor the kernel writes) against the
    reference on inputs (the same inputs the outputs were computed from; witness inputs
    by default). ref: a reference already computed (its inputs are used). Raises
    OutputsError naming a missing, unknown or misshapen tensor."""
    if ref is None:
        ref = reference(program, inputs, seed=seed, fill=fill, max_memory=max_memory)
    return judge_mod.judge(ref, outputs, backend)


def check(program: ProgramLike, run: Backend, inputs: Inputs = None, *, seed: int = 0,
          fill: str = "witness", name: str | None = None,
          max_memory: int | None | str = "auto") -> Report:
    """Run a backend on the inputs (witness by default) and judge what it returns. The
    backend gets copies of the inputs. A built-in backend's violations (R500-R504 of the
    simulator) are part of the report."""
    prog = load(program)
    ref = reference(prog, inputs, seed=seed, fill=fill, max_memory=max_memory)
    outputs = run(prog, {k: v.copy() for k, v in ref.inputs.items()})
    label = name or getattr(run, "name", None) or getattr(run, "__name__", None) \
        or type(run).__name__
    violations = list(getattr(run, "violations", []) or [])
    return judge_mod.judge(ref, outputs, label, violations)


@dataclass
class BuiltinBackend:
    """One of the project's own backends as a `Backend`. violations: the simulator's
    R500-R504 of the last call (text), which `check` reports."""
    kind: str
    plan: str = "auto"
    tilelang_config: dict[str, str] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.plan}" if self.kind in ("sim", "cuda") else self.kind

    def __call__(self, program: Program,
                 inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        prog = load(program)
        values = prog.loaded.inputs(0, dict(inputs))
        setup = None
        try:
            if self.kind == "tilelang":
                if not os.path.isfile(prog.path):
                    raise BackendUnavailable("the tilelang backend imports the program "
                                             "file: load it from a path, not from text")
                setup = pipeline.tilelang_setup(self.tilelang_config)
            run = pipeline.run_backend(prog.loaded, self.kind, values, self.plan,
                                       tilelang=setup)
        except pipeline.UsageError as exc:
            raise BackendUnavailable(str(exc)) from None
        except pipeline.TileLangFailed as exc:
            raise BackendFailed(str(exc), exc.stage) from None
        except DiagnosticError as err:
            raise ProgramRejected(err.diagnostics, prog.path, prog.source) from None
        self.violations = [f"{d.code}: {d.message}" for d in run.violations]
        return run.outputs


def backend(spec: str, **tilelang_config: str) -> BuiltinBackend:
    """A built-in backend: "interp", "sim", "sim:PLAN", "cuda", "cuda:PLAN" or "tilelang"
    (PLAN: auto, canonical, fast, legacy; default auto). Keyword arguments are TileLang
    pass configs for "tilelang" (`backend("tilelang", **{"tl.reducer_force_baseline":
    "true"})`)."""
    kind, _, plan = spec.partition(":")
    if kind not in BACKENDS:
        raise ValueError(f"unknown backend {spec!r} (one of interp, sim:PLAN, cuda:PLAN, "
                         f"tilelang)")
    if plan and kind not in ("sim", "cuda"):
        raise ValueError(f"backend {kind} takes no plan ({spec!r})")
    plan = plan or "auto"
    if plan not in PLANS:
        raise ValueError(f"unknown plan {plan!r} in {spec!r} (one of {', '.join(PLANS)})")
    if tilelang_config and kind != "tilelang":
        raise ValueError("pass configs apply to the tilelang backend only")
    return BuiltinBackend(kind, plan, dict(tilelang_config))
