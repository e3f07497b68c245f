"""`check --format junit`: the check documents of one run as a JUnit XML report, the
format CI servers (GitLab, Jenkins, GitHub actions' test reporters) show as tests.

One test suite, one test case per program (classname `verify-reducer.check`, name the
program); only a verified program passes. A rejected program or a mismatch is a <failure> (type its first code, or the verdict; the text
lists every error and violation with its place); an inconclusive one is a <failure> too
(a claim nobody could check is never a pass); a usage or internal error is an <error>
(the program was not judged)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

UNJUDGED = ("usage_error", "internal_error")
PASSED = ("verified",)


def junit_xml(documents: list[dict], exit_code: int) -> str:
    cases = [_case(doc) for doc in documents]
    failures = sum(c.find("failure") is not None for c in cases)
    errors = sum(c.find("error") is not None for c in cases)
    suite = ET.Element("testsuite", name="verify-reducer check", tests=str(len(cases)),
                       failures=str(failures), errors=str(errors), skipped="0")
    props = ET.SubElement(suite, "properties")         # before the cases, as JUnit's XSD
    ET.SubElement(props, "property", name="exit_code", value=str(exit_code))
    suite.extend(cases)
    root = ET.Element("testsuites", name="verify-reducer", tests=str(len(cases)),
                      failures=str(failures), errors=str(errors))
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _case(doc: dict) -> ET.Element:
    program = str(doc.get("program"))
    case = ET.Element("testcase", classname="verify-reducer.check", name=program)
    verdict = doc.get("verdict", "")
    if verdict in PASSED:
        return case
    if verdict in UNJUDGED:
        error = ET.SubElement(case, "error", type=verdict,
                              message=str(doc.get("error", verdict)))
        error.text = str(doc.get("error", ""))
        return case
    findings = [f for f in [*doc.get("diagnostics", []), *doc.get("violations", [])]
                if f.get("severity", "error") == "error" and not f.get("suppressed")]
    lines = [f"{program}:{f.get('line', '?')}:{f.get('col', '?')}: {f.get('code')}: "
             f"{f.get('message')}" for f in findings]
    if verdict == "inconclusive":
        lines.append("inconclusive: some element could not be judged (its bound is "
                     "infinite or admits every value); nothing was verified there")
    elif verdict == "mismatch" and not findings:
        lines.append("mismatch: a lowering disagrees with the interpreter")
    first = findings[0]["code"] if findings else verdict
    failure = ET.SubElement(case, "failure", type=first,
                            message=lines[0] if lines else verdict)
    failure.text = "\n".join(lines)
    return case
