"""Diagnostics as people read them: compiler-style text with the source line and a caret
span. Tools get the JSON objects of docs/design.md §16 from `Diagnostic.to_json`."""
from __future__ import annotations

from verify_reducer.spec.diagnostics import Diagnostic
from verify_reducer.spec.source import Span


def _caret_block(lines: list[str], span: Span, width: int = 100) -> list[str]:
    """The source line of span and a caret line under the spanned columns; a line longer
    than `width` is shown as a window around the span, elided with `...`."""
    if not (1 <= span.line <= len(lines)):
        return []
    text = lines[span.line - 1].rstrip("\n").expandtabs(4)
    end_col = span.end_col if span.end_line == span.line else len(text) + 1
    start, stop = span.col - 1, max(span.col, end_col - 1)
    first = 0
    if len(text) > width:
        first = max(0, min(start - 20, len(text) - width))
        shown = text[first:first + width]
        text = ("..." if first else "") + shown + ("..." if first + width < len(text) else "")
        first -= 3 if first else 0
        stop = min(stop, first + width + (3 if first else 0))
    caret = "^" + "~" * max(0, stop - start - 1)
    gutter = f"{span.line:>5} | "
    return [f"{gutter}{text}",
            " " * (len(gutter) - 2) + "| " + " " * (start - first) + caret]


def _location(path: str, span: Span | None) -> str:
    return f"{path}:{span.line}:{span.col}" if span else path


def format_diagnostic(diag: Diagnostic, path: str, source: str) -> str:
    lines = source.splitlines()
    out = [f"{_location(path, diag.span)}: {diag.severity}[{diag.code}]: {diag.message}"]
    if diag.span:
        out += _caret_block(lines, diag.span)
    for note in diag.notes:
        out.append(f"{_location(path, note.span)}: note: {note.message}")
        if note.span:
            out += _caret_block(lines, note.span)
    if diag.hint:
        out.append(f"  = help: {diag.hint}")
    return "\n".join(out)


def format_diagnostics(diags: list[Diagnostic], path: str, source: str) -> str:
    return "\n\n".join(format_diagnostic(d, path, source) for d in diags)
