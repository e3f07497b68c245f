"""Diagnostics as people read them: compiler-style text with the source line and a caret
span. Tools get the JSON objects of docs/design.md §16 from `Diagnostic.to_json`.

The text is built once as a rich `Text`: its `.plain` is the uncoloured report (what a
pipe, a file or NO_COLOR gets), its styles colour the same characters on a terminal."""
from __future__ import annotations

from rich.text import Text

from verify_reducer.spec.diagnostics import ERROR, WARNING, Diagnostic
from verify_reducer.spec.source import Span

SEVERITY_STYLE = {ERROR: "bold red", WARNING: "bold yellow"}
NOTE_STYLE = "bold cyan"
GUTTER_STYLE = "blue"


def _caret_block(lines: list[str], span: Span, width: int = 100) -> tuple[str, str] | None:
    """The source line of span and a caret line under the spanned columns; a line longer
    than `width` is shown as a window around the span, elided with `...`."""
    if not (1 <= span.line <= len(lines)):
        return None
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
    return text, " " * (start - first) + caret


def _append_caret(out: Text, lines: list[str], span: Span, style: str) -> None:
    block = _caret_block(lines, span)
    if block is None:
        return
    text, caret = block
    gutter = f"{span.line:>5} | "
    out.append("\n")
    out.append(gutter, GUTTER_STYLE)
    out.append(text)
    out.append("\n")
    out.append(" " * (len(gutter) - 2) + "| ", GUTTER_STYLE)
    out.append(caret, style)


def _location(path: str, span: Span | None) -> str:
    return f"{path}:{span.line}:{span.col}" if span else path


def diagnostic_text(diag: Diagnostic, path: str, source: str) -> Text:
    """One diagnostic as styled text (see the module docstring)."""
    lines = source.splitlines()
    style = SEVERITY_STYLE.get(diag.severity, NOTE_STYLE)
    out = Text()
    out.append(f"{_location(path, diag.span)}: ", "bold")
    out.append(f"{diag.severity}[{diag.code}]", style)
    out.append(": ")
    out.append(diag.message, "bold")
    if diag.span:
        _append_caret(out, lines, diag.span, style)
    for note in diag.notes:
        out.append("\n")
        out.append(f"{_location(path, note.span)}: ", "bold")
        out.append("note", NOTE_STYLE)
        out.append(f": {note.message}")
        if note.span:
            _append_caret(out, lines, note.span, NOTE_STYLE)
    if diag.hint:
        out.append("\n  ")
        out.append("= help:", NOTE_STYLE)
        out.append(f" {diag.hint}")
    return out


def diagnostics_text(diags: list[Diagnostic], path: str, source: str) -> Text:
    return Text("\n\n").join(diagnostic_text(d, path, source) for d in diags)


def format_diagnostic(diag: Diagnostic, path: str, source: str) -> str:
    return diagnostic_text(diag, path, source).plain


def format_diagnostics(diags: list[Diagnostic], path: str, source: str) -> str:
    return diagnostics_text(diags, path, source).plain
