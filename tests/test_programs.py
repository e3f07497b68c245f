"""One runner for every program that carries its verdict (docs/design.md §17): examples/
(examples/refused/ too) and tests/programs/**. Each file's header says ok, the errors (code and line) it must
get, and the results the interpreter must produce on the inputs it gives."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verify_reducer.interp.accept import within_bound
from verify_reducer.spec.source import read_source_file
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.expect import parse_expectation, unmatched

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted([*ROOT.glob("examples/*.py"), *ROOT.glob("examples/refused/*.py"),
                   *ROOT.glob("tests/programs/**/*.py")])


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", PROGRAMS, ids=_id)
def test_program_verdict(path: Path):
    source = read_source_file(str(path))    # as Python reads it (tests/programs/encoding)
    expected = parse_expectation(source, str(path))
    assert expected.declared, f"{_id(path)} carries no '# expect:' verdict"

    # a result line pins whole outputs: every block runs
    report = pipeline.check(str(path), given=expected.inputs or None,
                            blocks="all" if expected.results else None)
    errors = [(d.code, d.span.line, d.span.col) if d.span else (d.code, 0, 0)
              for d in report.diagnostics if d.is_error]
    shown = "\n".join(f"  {d.code} at {d.span.line}:{d.span.col}: {d.message}" if d.span
                      else f"  {d.code}: {d.message}" for d in report.diagnostics)
    missing, unexpected = unmatched(expected.errors, errors)
    assert not missing and not unexpected, (
        f"{_id(path)}: expected errors {expected.errors}, got:\n{shown or '  none'}")
    if expected.errors:
        assert report.exit_code == pipeline.EXIT_REJECTED
        return

    assert report.reference is not None, f"{_id(path)}: the interpreter did not run"
    for name, want in expected.results.items():
        got = report.reference.outputs[name]
        bound = report.reference.bounds[name]
        want = np.asarray(want).reshape(got.shape)
        ok = within_bound(want.astype(got.dtype), got, bound)
        assert ok.all(), (f"{_id(path)}: {name} = {got.tolist()}, header says "
                          f"{want.tolist()} (bound {bound.tolist()})")
    if expected.inconclusive:
        assert report.exit_code == pipeline.EXIT_INCONCLUSIVE, (report.verdict, shown)
        return
    assert report.exit_code == pipeline.EXIT_OK, shown
