"""The `--json` documents: explicit, documented field names (verify_reducer/schemas/), never a
dataclass dump, and strict JSON that any parser accepts.

What every document shares (schema_version, the verdict names, the summary, the strict
JSON text) is verify.cli.documents, which answers from the cache need without numpy; it
is re-exported here for the commands that build documents.

JSON has no NaN or infinity (a strict parser refuses Python's `NaN`/`Infinity`), so a
non-finite float is written as the string "nan", "inf" or "-inf" wherever a number may
stand: output values, bounds, a comparison's got/expected/bound."""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

from verify_reducer.codegen.plan_text import resources_json
from verify_reducer.interp.accept import unjudged_reason

from verify_reducer.verify.cli.documents import SCHEMA_VERSION, VERDICTS, document, dumps, jsonable, \
    summary_json, verdict  # noqa: F401 (re-exported: cli_json.dumps, cli_json.verdict, ...)

if TYPE_CHECKING:     # a check does not load the fuzzer
    from verify_reducer.verify.fuzzing.command import Finding

NON_FINITE = ("nan", "inf", "-inf")


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
