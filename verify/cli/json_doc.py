"""The `--json` documents: explicit, documented field names (verify_reducer/schemas/), never a
dataclass dump, and strict JSON that any parser accepts.

Every document starts with `schema_version`. It changes only when a field is renamed or
removed or changes meaning; a new field does not change it.

JSON has no NaN or infinity (a strict parser refuses Python's `NaN`/`Infinity`), so a
non-finite float is written as the string "nan", "inf" or "-inf" wherever a number may
stand: output values, bounds, a comparison's got/expected/bound."""
from __future__ import annotations

import hashlib
import json

import numpy as np

from verify_reducer.codegen.plan_text import resources_json
from verify_reducer.interp.accept import unjudged_reason

from verify_reducer.verify.fuzzing.command import Finding
from verify_reducer.verify.oracle.judge import json_number

SCHEMA_VERSION = 1
NON_FINITE = ("nan", "inf", "-inf")

# the verdict of a program by command and exit code (summary counts use these names)
VERDICTS = {"check": {0: "verified", 1: "rejected", 3: "mismatch", 5: "inconclusive"},
            "run": {0: "ok", 1: "rejected", 3: "mismatch", 5: "inconclusive"},
            "emit": {0: "emitted", 1: "rejected"},
            # outputs judged against the oracle: they match it (nothing was verified)
            "compare": {0: "match", 1: "rejected", 3: "mismatch", 5: "inconclusive"}}
COMMON_VERDICTS = {2: "usage_error", 4: "internal_error"}
VERDICT_ORDER = ("verified", "ok", "emitted", "match", "inconclusive", "mismatch", "rejected",
                 "usage_error", "internal_error")


def verdict(command: str, code: int) -> str:
    """The verdict name of one program's exit code under command."""
    return VERDICTS.get(command, {}).get(code) or COMMON_VERDICTS.get(code) \
        or VERDICTS["check"].get(code, f"exit_{code}")


def jsonable(value):
    """value with numpy types made plain and non-finite floats made strings."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float):
        return json_number(value)
    if value is None or isinstance(value, (str, int, float)):
        return value        # (bool is an int)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def document(doc: dict) -> dict:
    """doc as a document: schema_version first (a program's document inside the one of
    several programs carries it too, so each stands alone)."""
    return {"schema_version": SCHEMA_VERSION, **doc}


def dumps(doc: dict) -> str:
    """The document as strict JSON text, schema_version first."""
    return json.dumps(jsonable(document(doc)), indent=2, allow_nan=False)


# a tensor over this many elements is summarized unless --values asks for every value
# (a 1024² GEMV's document with every block was 26.8 MB of inputs, one number a line)
SUMMARY_ELEMENTS = 64
HEAD = 8


def array_json(array: np.ndarray, full: bool = False) -> dict:
    """A tensor: its shape, dtype and values; past SUMMARY_ELEMENTS (unless full) its
    element count, its first HEAD values (row-major) and the digest of all of them."""
    doc = {"shape": list(array.shape), "dtype": str(array.dtype)}
    if full or array.size <= SUMMARY_ELEMENTS:
        doc["values"] = array.tolist()
        return doc
    doc.update(elements=int(array.size), head=array.reshape(-1)[:HEAD].tolist(),
               digest=array_digest(array))
    return doc


def array_digest(array: np.ndarray) -> str:
    """`sha256:HEX` of the array's bytes in row-major order in its dtype (numpy's
    `np.ascontiguousarray(a).tobytes()`): equal digests, equal tensors, bit for bit."""
    return "sha256:" + hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def comparison_json(c) -> dict:
    """One output judged against the interpreter (pipeline.Comparison)."""
    unchecked_first = None if c.unchecked_index is None else {
        "index": list(c.unchecked_index), "expected": c.unchecked_expected,
        "bound": c.unchecked_bound,
        "why": unjudged_reason(c.unchecked_expected, c.unchecked_bound)}
    return {"name": c.name, "ok": c.ok, "status": c.status, "mismatches": c.mismatches,
            "unchecked": c.unchecked, "unchecked_first": unchecked_first,
            "overflow": c.overflow, "compared": c.compared,
            "first_index": None if c.first_index is None else list(c.first_index),
            "got": c.got, "expected": c.expected, "bound": c.bound}


def comparisons_json(by_label: dict[str, list]) -> dict:
    return {label: [comparison_json(c) for c in comps] for label, comps in by_label.items()}


def finding_json(f: Finding) -> dict:
    """One fuzz finding (verify.fuzzing.campaign.Finding)."""
    return {"case": f.case, "seed": f.seed, "kind": f.kind, "summary": f.summary,
            "signature": dict(zip(("kind", "code", "stage", "backend"), f.signature)),
            "path": f.path, "original": f.original, "report": f.report or None}


def check_json(program: str, report, full_values: bool = False) -> dict:
    """`check`'s document for one program (pipeline.CheckReport); full_values: every
    tensor's values (--values), else large ones summarized (array_json)."""
    doc = {"command": "check", "program": program,
           "func": report.loaded.func.name if report.loaded else None,
           "verdict": report.verdict, "exit_code": report.exit_code, "seed": report.seed,
           "diagnostics": [d.to_json() for d in report.diagnostics]}
    if report.reference is not None:
        doc["finalized"] = [{"reducer": e.reducer, "line": e.span.line if e.span else None,
                             "block": list(e.block), "contributions": int(e.counts.sum())}
                            for e in report.reference.epochs]
        doc["outputs"] = {n: array_json(v, full_values)
                          for n, v in report.reference.outputs.items()}
    doc["resources"] = resources_json(report.resources) if report.resources else None
    if report.selection is not None:
        doc["blocks"] = report.selection.to_json()
    if report.estimate is not None:
        doc["memory_estimate"] = report.estimate.to_json()
    doc["reducer_ops"] = [op.to_json() for op in report.reducer_ops]
    doc["epochs"] = [e.to_json() for e in report.epochs]
    doc["violations"] = [d.to_json() for d in report.violations]
    doc["suppressed"] = [s.to_json() for s in report.suppressed]
    doc["comparisons"] = comparisons_json(report.comparisons)
    if report.family is not None:
        doc["family"] = report.family.to_json()
    return doc


def summary_json(command: str, codes: list[int], exit_code: int) -> dict:
    """The counts per verdict of several programs and the exit code they make."""
    names = [verdict(command, code) for code in codes]
    order = [*VERDICT_ORDER, *names]
    counts = {name: names.count(name) for name in sorted(set(names), key=order.index)}
    return {"programs": len(codes), "verdicts": counts, "exit_code": exit_code}
