"""Diagnostics as people and tools read them: compiler-style text with the source line
and a caret span, or the JSON objects of DESIGN §5."""
from __future__ import annotations

from spec.diagnostics import Diagnostic
from spec.source import Span


def _source_lines(source: str) -> list[str]:
    return source.splitlines()


def _caret_block(lines: list[str], span: Span) -> list[str]:
    """The source line of span and a caret line under the spanned columns."""
    if not (1 <= span.line <= len(lines)):
        return []
    text = lines[span.line - 1].rstrip("\n").expandtabs(4)
    end_col = span.end_col if span.end_line == span.line else len(text) + 1
    width = max(1, end_col - span.col)
    gutter = f"{span.line:>5} | "
    return [f"{gutter}{text}",
            " " * (len(gutter) - 2) + "| " + " " * (span.col - 1) + "^" + "~" * (width - 1)]


def _location(path: str, span: Span | None) -> str:
    return f"{path}:{span.line}:{span.col}" if span else path


def format_diagnostic(diag: Diagnostic, path: str, source: str) -> str:
    lines = _source_lines(source)
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


def diagnostic_json(diag: Diagnostic) -> dict:
    return diag.to_json()
