"""Judging a backend's outputs against the interpreter: the reference (outputs with a
bound per element, on witness, seeded or given inputs) and a report per tensor that says
exact / within the bound / mismatch, with the mismatching indices and values.

verify_reducer.oracle is the public face of this module; `verify-reducer compare` is
its command line."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.interp.accept import judgeable, overflow_sides, unjudged_reason, within_bound

from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.cost import estimate
from verify_reducer.verify.oracle.pipeline import Loaded, OutputsError
from verify_reducer.verify.oracle.witness import Witness, witness

# what `inputs` may say besides a mapping or an .npz path
INPUT_KINDS = ("witness", "seeded")
# how missing inputs are made when some are given
FILLS = ("witness", "seeded")
# mismatches listed per tensor in the text and JSON (every index is in mismatch_indices)
LISTED = 20

REPORT_FIELDS = ("program", "func", "backend", "inputs", "seed", "ok", "verdict",
                 "tensors", "violations", "witness")
TENSOR_FIELDS = ("name", "output", "status", "shape", "dtype", "got_dtype", "compared", "exact",
                 "within_bound", "mismatches", "unchecked", "unchecked_listed", "overflow",
                 "max_error", "listed")
UNCHECKED_FIELDS = ("index", "got", "expected", "bound", "why")
MISMATCH_FIELDS = ("index", "got", "expected", "bound", "error")


def written_params(func: ir.PrimFunc) -> tuple[str, ...]:
    """The parameters the kernel writes (a backend must return these), in signature
    order."""
    params = set(func.params)
    written = {b for stmt in ir.walk(func.kernel.body) for b in ir.written_buffers(stmt)}
    return tuple(p.name for p in func.params if p in written & params)


# ----------------------------------------------------------------------------- inputs

def make_inputs(loaded: Loaded, inputs=None, seed: int = 0, fill: str = "witness",
                max_memory: int | None = None):
    """(every parameter's initial value, what they are, the witness when one was made).

    inputs: None or "witness" (witness inputs of seed), "seeded" (the program's
    `# input:` lines, the rest generated from seed: `run`'s default), a path to an .npz
    or a mapping name -> array. Parameters a path or mapping leaves out are made as fill
    says: "witness" or "seeded". Raises verify.oracle.inputs.InputError (a ValueError) for an
    input that does not fit its parameter or names none; pipeline.UsageError when the
    witness's memory estimate is over max_memory (before anything is built)."""
    if fill not in FILLS:
        raise ValueError(f"fill must be one of {', '.join(FILLS)}, not {fill!r}")
    if inputs is None or (isinstance(inputs, str) and inputs == "witness"):
        made = witness(loaded, seed, max_memory)
        return made.inputs, "witness", made
    if isinstance(inputs, str) and inputs == "seeded":
        return loaded.inputs(seed), "seeded", None
    origin = "inputs"
    if isinstance(inputs, (str, os.PathLike)):
        origin = os.fspath(inputs)
        inputs = inputs_mod.load_npz(origin, loaded.func)
    if not isinstance(inputs, Mapping):
        raise TypeError(f"inputs must be None, 'witness', 'seeded', an .npz path or a "
                        f"mapping of arrays, not {type(inputs).__name__}")
    given = inputs_mod.conform_given(loaded.func, dict(inputs), origin)
    missing = [p.name for p in loaded.func.params if p.name not in given]
    if not missing:
        return given, "given", None
    if fill == "seeded":
        return loaded.inputs(seed, given, origin), "given, the rest seeded", None
    made = witness(loaded, seed, max_memory)
    return {**made.inputs, **given}, "given, the rest witness", made


@dataclass
class Reference:
    """The interpreter's answer: every parameter after the run, with a bound per element
    (0: a backend must reproduce the value exactly; inf: it cannot be judged)."""
    program: str
    func: str
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    bounds: dict[str, np.ndarray]
    written: tuple[str, ...]
    inputs_kind: str
    seed: int
    witness: Witness | None = None
    dtypes: dict[str, str] = field(default_factory=dict)   # each parameter's dtype name

    @property
    def exact(self) -> bool:
        """Whether every written output must be reproduced bit for bit."""
        return all(not np.any(self.bounds[n]) for n in self.written)


def reference(loaded: Loaded, inputs=None, seed: int = 0, fill: str = "witness",
              max_memory: int | None = None) -> Reference:
    """Run the interpreter over the whole grid; DiagnosticError when the verifier (static
    checks or the interpreter) rejects the program on these inputs: the oracle has no
    answer then. The run's memory is estimated first (verify.oracle.cost, whole tensors:
    every output is judged whole), and a run over max_memory is refused with
    pipeline.UsageError before any input, witness or .npz, is built."""
    pipeline.refuse_over(estimate(loaded.func), max_memory, "the reference run",
                         "use `check`, which runs a sample of the blocks")
    values, kind, made = make_inputs(loaded, inputs, seed, fill)
    errors, result = pipeline.verifier_errors(loaded, values)
    if errors:
        raise DiagnosticError(errors)
    return Reference(loaded.path, loaded.func.name, values, result.outputs, result.bounds,
                     written_params(loaded.func), kind, seed, made,
                     {p.name: p.dtype.name for p in loaded.func.params})


# ----------------------------------------------------------------------------- reports

@dataclass(frozen=True)
class Mismatch:
    index: tuple[int, ...]
    got: float | int
    expected: float | int
    bound: float
    error: float            # |got - expected| (inf/NaN where one side is not finite)

    def to_json(self) -> dict:
        return {"index": list(self.index), "got": json_number(self.got),
                "expected": json_number(self.expected), "bound": json_number(self.bound),
                "error": json_number(self.error)}

    def describe(self, name: str) -> str:
        bound = "exact expected" if self.bound == 0 else f"bound {self.bound:.3g}"
        return (f"{name}{list(self.index)} = {self.got!r}, expected {self.expected!r} "
                f"({bound}; off by {self.error:.6g})")


@dataclass(frozen=True)
class Unchecked:
    """An element the reference cannot judge: its bound is infinite or admits every
    finite value (docs/semantics.md §9). Neither a match nor a mismatch."""
    index: tuple[int, ...]
    got: float | int
    expected: float | int
    bound: float

    @property
    def why(self) -> str:
        return unjudged_reason(self.expected, self.bound)

    def to_json(self) -> dict:
        return {"index": list(self.index), "got": json_number(self.got),
                "expected": json_number(self.expected), "bound": json_number(self.bound),
                "why": self.why}

    def describe(self, name: str) -> str:
        return f"{name}{list(self.index)} = {self.got!r}, expected {self.expected!r}: " \
               f"not judged, {self.why}"


@dataclass
class TensorReport:
    """One tensor judged: status exact (every element equal), within_bound (none
    outside its bound, some not equal), inconclusive (none refuted, but some element
    could not be judged: `unchecked`) or mismatch."""
    name: str
    status: str
    shape: tuple[int, ...]
    dtype: str
    got_dtype: str
    compared: int
    exact: int                       # elements equal to the reference
    within_bound: int                # elements not equal but inside their bound
    mismatches: int
    unchecked: int                   # elements the bound cannot judge (not verified)
    max_error: float                 # over the judged elements
    listed: list[Mismatch] = field(default_factory=list)
    output: bool = True              # the kernel writes it (else an input, unchanged)
    mismatch_indices: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64),
                                         repr=False)
    unchecked_listed: list[Unchecked] = field(default_factory=list)
    overflow: int = 0                # judged elements where some order may give ±inf

    @property
    def ok(self) -> bool:
        """Every element checked and none refuted (inconclusive is not ok)."""
        return self.status in ("exact", "within_bound")

    def to_json(self) -> dict:
        return {"name": self.name, "output": self.output, "status": self.status, "shape": list(self.shape),
                "dtype": self.dtype, "got_dtype": self.got_dtype, "compared": self.compared,
                "exact": self.exact, "within_bound": self.within_bound,
                "mismatches": self.mismatches, "unchecked": self.unchecked,
                "unchecked_listed": [u.to_json() for u in self.unchecked_listed],
                "overflow": self.overflow,
                "max_error": json_number(self.max_error),
                "listed": [m.to_json() for m in self.listed]}

    def lines(self) -> list[str]:
        unchecked = f", {self.unchecked} not judged" if self.unchecked else ""
        if self.overflow:
            unchecked += (f", {self.overflow} where some order overflows (±inf legal "
                          f"there)")
        if self.status == "inconclusive":
            out = [f"{self.name}: INCONCLUSIVE: {self.unchecked} of {self.compared} "
                   f"element(s) not judged ({self.exact} exact, {self.within_bound} "
                   f"within their bound)"]
            out += ["  " + u.describe(self.name) for u in self.unchecked_listed]
            if self.unchecked > len(self.unchecked_listed):
                out.append(f"  ... and {self.unchecked - len(self.unchecked_listed)} more")
            return out
        if self.status == "exact" and not self.output:
            return [f"{self.name} (input): unchanged"]
        if self.status == "exact":
            return [f"{self.name}: exact ({self.compared} element(s) equal the exact "
                    f"result{unchecked})"]
        if self.status == "within_bound":
            return [f"{self.name}: within the bound ({self.exact} exact, "
                    f"{self.within_bound} within their bound, max error "
                    f"{self.max_error:.3g}{unchecked})"]
        out = [f"{self.name}: MISMATCH in {self.mismatches} of {self.compared} element(s) "
               f"({self.exact} exact, {self.within_bound} within their bound{unchecked})"]
        out += ["  " + m.describe(self.name) for m in self.listed]
        if self.mismatches > len(self.listed):
            out.append(f"  ... and {self.mismatches - len(self.listed)} more")
        out += ["  " + u.describe(self.name) for u in self.unchecked_listed]
        return out


@dataclass
class Report:
    """A backend's outputs judged against the oracle. `ok`: every tensor exact or within
    its bound, every element judged, and no violation; verdict "match", "mismatch" or
    "inconclusive" (nothing refuted, but some element could not be judged: not ok).
    `str(report)` reads as text, `to_json()` has the stable fields of REPORT_FIELDS."""
    program: str
    func: str
    inputs_kind: str
    seed: int
    tensors: list[TensorReport]
    backend: str | None = None
    violations: list[str] = field(default_factory=list)
    witness: Witness | None = None

    @property
    def ok(self) -> bool:
        return self.verdict == "match"

    @property
    def inconclusive(self) -> bool:
        return self.verdict == "inconclusive"

    @property
    def unchecked(self) -> int:
        """Elements not judged, over every tensor."""
        return sum(t.unchecked for t in self.tensors)

    @property
    def verdict(self) -> str:
        if self.violations or any(t.status == "mismatch" for t in self.tensors):
            return "mismatch"
        return "inconclusive" if self.unchecked else "match"

    def tensor(self, name: str) -> TensorReport:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(f"no tensor {name!r} in this report (it has "
                       f"{', '.join(t.name for t in self.tensors)})")

    def to_json(self) -> dict:
        return {"program": self.program, "func": self.func, "backend": self.backend,
                "inputs": self.inputs_kind, "seed": self.seed, "ok": self.ok,
                "verdict": self.verdict, "tensors": [t.to_json() for t in self.tensors],
                "violations": list(self.violations),
                "witness": self.witness.to_json() if self.witness is not None else None}

    def __str__(self) -> str:
        who = f" from {self.backend}" if self.backend else ""
        head = (f"{self.program} ({self.func}): outputs{who} judged on inputs: "
                f"{self.inputs_kind} (seed {self.seed})")
        lines = [head]
        for t in self.tensors:
            lines += ["  " + line for line in t.lines()]
        lines += [f"  violation: {v}" for v in self.violations]
        if self.witness is not None and self.verdict == "mismatch":
            lines.append("  witness inputs:")
            lines += ["    " + line for line in self.witness.lines()]
        lines.append(f"verdict: {self.verdict}")
        return "\n".join(lines)


def json_number(value):
    """A number for strict JSON (the one rule of every --json document and report,
    verify_reducer/schemas/defs.schema.json "number"): non-finite floats as the strings "nan",
    "inf", "-inf"."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def check_outputs(ref: Reference, outputs: Mapping) -> dict[str, np.ndarray]:
    """The outputs as arrays, or OutputsError naming the tensor: every written one must
    be there, no unknown one, each in its parameter's shape and numeric."""
    if not isinstance(outputs, Mapping):
        raise OutputsError(f"outputs must map tensor names to arrays, not "
                           f"{type(outputs).__name__}")
    unknown = [n for n in outputs if n not in ref.outputs]
    if unknown:
        raise OutputsError(f"no tensor named {', '.join(map(str, unknown))} in "
                           f"{ref.func} (its parameters: {', '.join(ref.outputs)})")
    missing = [n for n in ref.written if n not in outputs]
    if missing:
        raise OutputsError(f"output {', '.join(missing)} missing (the kernel writes "
                           f"{', '.join(ref.written)})")
    arrays = {}
    for name in ref.outputs:
        if name not in outputs:
            continue
        try:
            got = np.asarray(outputs[name])
        except (TypeError, ValueError) as exc:
            raise OutputsError(f"output {name}: not an array of numbers ({exc})") from None
        if got.dtype.kind not in "biuf":
            raise OutputsError(f"output {name}: holds {got.dtype} values, not numbers")
        want = ref.outputs[name].shape
        if got.shape != want:
            raise OutputsError(f"output {name} has shape {tuple(got.shape)}, the program "
                               f"declares {tuple(want)}")
        arrays[name] = got
    return arrays


def judge(ref: Reference, outputs: Mapping, backend: str | None = None,
          violations: list[str] | None = None, listed: int = LISTED) -> Report:
    """Every tensor of outputs against the reference (written tensors must be there)."""
    arrays = check_outputs(ref, outputs)
    tensors = [_judge_tensor(name, got, ref.outputs[name], ref.bounds[name], listed,
                             ref.dtypes.get(name), name in ref.written)
               for name, got in arrays.items()]
    return Report(ref.program, ref.func, ref.inputs_kind, ref.seed, tensors, backend,
                  list(violations or []), ref.witness)


def _judge_tensor(name: str, got: np.ndarray, want: np.ndarray, bound: np.ndarray,
                  listed: int, dtype: str | None = None,
                  output: bool = True) -> TensorReport:
    accepted = within_bound(got, want, bound)
    bound = np.broadcast_to(bound, want.shape)
    g = got.astype(np.float64) if got.dtype.kind == "f" or want.dtype.kind == "f" else got
    w = want.astype(np.float64) if g.dtype.kind == "f" else want
    equal = (g == w)
    if g.dtype.kind == "f":
        equal |= np.isnan(g) & np.isnan(w)
    # an element the bound cannot judge is not judged even where the values agree:
    # agreeing with a reference whose bound admits anything proves nothing
    unjudged = ~judgeable(want, bound)
    up, down = overflow_sides(want, bound)
    with np.errstate(all="ignore"):
        error = np.abs(g.astype(np.float64) - w.astype(np.float64))
    finite = np.isfinite(error) & ~unjudged
    bad = np.argwhere(~accepted)
    mismatches = len(bad)
    exact = int((equal & ~unjudged).sum())
    unchecked = int(unjudged.sum())
    status = "mismatch" if mismatches else "inconclusive" if unchecked else \
        ("exact" if exact == want.size else "within_bound")
    shown = [Mismatch(tuple(int(i) for i in idx), got[tuple(idx)].item(),
                      want[tuple(idx)].item(), float(bound[tuple(idx)]),
                      float(error[tuple(idx)])) for idx in bad[:listed]]
    not_judged = [Unchecked(tuple(int(i) for i in idx), got[tuple(idx)].item(),
                            want[tuple(idx)].item(), float(bound[tuple(idx)]))
                  for idx in np.argwhere(unjudged)[:listed]]
    return TensorReport(name, status, tuple(want.shape), dtype or str(want.dtype),
                        str(got.dtype),
                        int(want.size), exact, int((accepted & ~equal & ~unjudged).sum()),
                        mismatches, unchecked,
                        float(error[finite].max()) if finite.any() else 0.0, shown,
                        output, bad.astype(np.int64), not_judged,
                        int(((up | down) & ~unjudged).sum()))
