"""Compiler-style rendering of diagnostics."""
from verify_reducer.spec.diagnostics import Diagnostic, Note
from verify_reducer.spec.source import Span
from verify_reducer.verify.cli.report import format_diagnostic


def test_caret_under_the_span_with_notes_and_hint():
    source = "a = 1\nT.finalize_reducer(acc)\n"
    diag = Diagnostic("R203", "error", "finalized twice", Span(2, 1, 2, 24),
                      (Note("first finalized here", Span(1, 1, 1, 6)),), "remove one")
    text = format_diagnostic(diag, "p.py", source).splitlines()
    assert text[0] == "p.py:2:1: error[R203]: finalized twice"
    assert text[2].endswith("| " + "^" + "~" * 22)
    assert text[3] == "p.py:1:1: note: first finalized here"
    assert text[-1] == "  = help: remove one"


def test_long_lines_are_shown_as_a_window_around_the_span():
    line = "x = " + "(" * 300 + "oops" + ")" * 300
    col = line.index("oops") + 1
    diag = Diagnostic("R100", "error", "bad", Span(1, col, 1, col + 4))
    shown, caret = format_diagnostic(diag, "p.py", line).splitlines()[1:3]
    assert len(shown) < 130 and "..." in shown
    position = caret.index("^") - caret.index("|") + shown.index("|")
    assert shown[position:position + 4] == "oops"
