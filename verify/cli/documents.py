"""What every `--json` document shares, in a module of its own that imports only the
standard library: the schema version, the verdict names of exit codes, the summary of
several programs and the strict JSON text. A check answered from the cache
(verify.cli.cache) prints its document through here without loading numpy or the
verifier; verify.cli.json_doc builds the documents themselves.

Every document starts with `schema_version`. It changes only when a field is renamed or
removed or changes meaning; a new field does not change it."""
from __future__ import annotations

import json
import math
import sys

SCHEMA_VERSION = 1

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


def summary_json(command: str, codes: list[int], exit_code: int) -> dict:
    """The counts per verdict of several programs and the exit code they make."""
    names = [verdict(command, code) for code in codes]
    order = [*VERDICT_ORDER, *names]
    counts = {name: names.count(name) for name in sorted(set(names), key=order.index)}
    return {"programs": len(codes), "verdicts": counts, "exit_code": exit_code}


def jsonable(value):
    """value with numpy types made plain and non-finite floats made strings (the rule of
    verify.oracle.judge.json_number)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    # a numpy value exists only where numpy was imported: a document read back from the
    # cache is plain JSON, and answering it must not load numpy
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray):
        return jsonable(value.tolist())
    if numpy is not None and isinstance(value, numpy.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        from verify_reducer.verify.oracle.judge import json_number
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
