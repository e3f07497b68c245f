"""`check --format sarif`: the check documents of one run (verify.cli.json_doc's, one per
program) as one SARIF 2.1.0 log, the format code-scanning services read (GitHub's
upload-sarif among them).

One run, tool verify-reducer with every diagnostic code of docs/codes.md as a rule; one
result per diagnostic and per simulator violation (a finding with a code and a place),
at its file, line and column (columns count characters: columnKind unicodeCodePoints),
its notes as related locations, its hint in the message; a finding suppressed in the
source (`# verify-reducer: ignore[R400] reason`) carries the suppression and its reason,
as SARIF wants, rather than vanishing. A program that could not be judged (a usage or
internal error) is a tool execution notification of the invocation, which is marked
unsuccessful: code scanning then shows the run as failed, not as clean."""
from __future__ import annotations

import json
import re
from pathlib import PurePath
from urllib.parse import quote

from verify_reducer import __version__
from verify_reducer.spec.diagnostics import CODES

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULES = tuple(CODES)
UNJUDGED = ("usage_error", "internal_error")


def sarif_text(documents: list[dict], exit_code: int) -> str:
    """The log as strict JSON (a SARIF log has no schema_version of ours)."""
    return json.dumps(sarif_log(documents, exit_code), indent=2, ensure_ascii=False)


def sarif_log(documents: list[dict], exit_code: int) -> dict:
    results, notifications = [], []
    for doc in documents:
        if doc.get("verdict") in UNJUDGED:
            notifications.append(_notification(doc))
            continue
        for finding in [*doc.get("diagnostics", []), *doc.get("violations", []),
                        *doc.get("suppressed", [])]:
            if finding.get("code") in CODES:
                results.append(_result(doc["program"], finding))
    rules = [{"id": code, "name": _rule_name(CODES[code]),
              "shortDescription": {"text": CODES[code]}} for code in RULES]
    run = {"tool": {"driver": {"name": "verify-reducer", "version": __version__,
                               "semanticVersion": __version__, "rules": rules}},
           "columnKind": "unicodeCodePoints",
           "invocations": [{"executionSuccessful": not notifications,
                            "exitCode": exit_code,
                            "toolExecutionNotifications": notifications}],
           "results": results}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _rule_name(title: str) -> str:
    """A rule's name is an identifier in SARIF's convention: PascalCase words."""
    return "".join(w[0].upper() + w[1:] for w in re.findall(r"[A-Za-z0-9]+", title))


def _result(program: str, finding: dict) -> dict:
    message = finding["message"]
    if finding.get("hint"):
        message += f" (hint: {finding['hint']})"
    result = {"ruleId": finding["code"], "ruleIndex": RULES.index(finding["code"]),
              "level": {"error": "error", "warning": "warning"}.get(
                  finding.get("severity", "error"), "note"),
              "message": {"text": message}}
    location = _location(program, finding)
    if location is not None:
        result["locations"] = [location]
    related = [loc for i, note in enumerate(finding.get("notes", []) or [])
               if (loc := _location(program, note, note["message"], i)) is not None]
    if related:
        result["relatedLocations"] = related
    if finding.get("suppressed"):
        result["suppressions"] = [{"kind": "inSource",
                                   "justification": finding["suppressed"]}]
    return result


def _location(program: str, where: dict, message: str | None = None,
              index: int | None = None) -> dict | None:
    """A physical location of program at where's line/col span; None for the program
    read from stdin (no file to point at) or a finding without a line."""
    if program == "-" or not where.get("line"):
        return None
    region = {"startLine": where["line"]}
    if where.get("col"):
        region["startColumn"] = where["col"]
    if where.get("end_line"):
        region["endLine"] = where["end_line"]
    if where.get("end_col"):
        region["endColumn"] = where["end_col"]
    location = {"physicalLocation": {
        "artifactLocation": {"uri": quote(PurePath(program).as_posix())},
        "region": region}}
    if message is not None:
        location["id"] = index
        location["message"] = {"text": message}
    return location


def _notification(doc: dict) -> dict:
    text = f"{doc.get('program')}: {doc.get('verdict', '').replace('_', ' ')}: " \
           f"{doc.get('error', '')}"
    return {"level": "error", "message": {"text": text.strip()}}
