"""Every file in tests/programs/malformed/ is a program the frontend must refuse with
exactly the R100/R101/R102 diagnostics its header names (`# expect: error R101 at 11`),
each at the right line and column — and never with any other exception."""
from __future__ import annotations

from pathlib import Path

import pytest

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.oracle.expect import parse_expectation, unmatched

FOLDER = Path(__file__).resolve().parent / "programs" / "malformed"
FILES = sorted(FOLDER.glob("*.py"))
def test_the_folder_is_populated():
    assert len(FILES) >= 15


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_malformed_program_gets_exactly_its_diagnostics(path: Path):
    source = path.read_text(encoding="utf-8")
    expected = parse_expectation(source, str(path)).errors
    assert expected, f"{path.name} has no '# expect: error R10X at LINE:COL' header"
    assert all(col is not None for _, _, col in expected), "pin the column too"
    try:
        parse_source(source, str(path))
    except DiagnosticError as err:
        got = [(d.code, d.span.line, d.span.col) for d in err.diagnostics]
        shown = "\n".join(f"  {d.code} {d.span.line}:{d.span.col} {d.message}"
                          for d in err.diagnostics)
        assert unmatched(expected, got) == ([], []), f"{path.name}:\n{shown}"
        for d in err.diagnostics:
            assert d.span.col >= 1 and (d.span.end_line, d.span.end_col) >= \
                (d.span.line, d.span.col), d
            assert "internal" not in d.message, d.message
    else:
        pytest.fail(f"{path.name} was accepted")
