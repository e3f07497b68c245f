"""Diagnostics: the stable codes of docs/design.md §16 (listed in docs/codes.md) and the
objects every stage reports with.

Rendering (human and JSON) lives in verify.cli.report; stages only build Diagnostic values."""
from __future__ import annotations

from dataclasses import dataclass

from .layout import Layout
from .source import Span

CODES: dict[str, str] = {
    "R100": "syntax the frontend does not support",
    "R101": "unknown name or unsupported T. call",
    "R102": "shape, arity or dtype error in an ordinary statement",
    "R110": "bad size-family directive",
    "R111": "bad or stale suppression comment",
    "R200": "reducer read before finalize",
    "R201": "update after finalize",
    "R202": "contributions never finalized",
    "R203": "finalized twice",
    "R204": "update outside an open epoch",
    "R205": "store to a reducer that is not a recognized update",
    "R206": "update whose form does not match the reducer's op",
    "R207": "finalize under thread-divergent control flow",
    "R208": "init and finalize in different scopes",
    "R209": "logical index out of bounds",
    "R210": "contribution dtype incompatible with the reducer",
    "R211": "reducer aliased or escaping",
    "R212": "combine op not associative / not supported",
    "R213": "legacy fill whose value is not the identity for a sum",
    "R214": "finalize destination shape/dtype mismatch",
    "R220": "not verified for every size of the family",
    "R300": "layout conflict",
    "R400": "fast plan refused",
    "R500": "simulated barrier deadlock or participant mismatch",
    "R501": "shuffle with inactive lanes",
    "R502": "read of a poisoned register or uninitialized shared memory",
    "R503": "exactly-once violated",
    "R504": "shared-memory race",
    "R505": "simulated access outside its allocation",
    "R506": "kernel over a target resource limit",
    "R600": "malformed reducer op declaration",
    "R601": "reducer op law refuted",
    "R602": "reducer op law not proved",
}

ERROR, WARNING, NOTE = "error", "warning", "note"


@dataclass(frozen=True)
class Note:
    message: str
    span: Span | None = None


# What a counterexample's marks mean (codegen.counterexample_svg gives each its colour).
ROLES = {
    "holder": "a thread that holds the element",
    "unheld": "the thread that accesses an element it does not hold",
    "stale": "a thread that holds the element but does not run the iteration writing it",
    "iteration": "the iteration that accesses the element, where the loop runs it",
    "missing": "the iteration missing from the group",
    "present": "an iteration of the same output that the group has",
    "duplicate": "a replica the group would count a second time",
    "contribution": "the contribution, in every replica of its iteration",
    "entered": "a thread whose partial the contribution entered",
    "copy": "the copy of the result that counted it",
}
GRIDS = ("fragment", "storage", "update", "loop")


@dataclass(frozen=True)
class Counterexample:
    """A counterexample as data, to be drawn on a layout grid
    (codegen.counterexample_svg) and written into the JSON diagnostic.

    `grid` names the layout: ("fragment", buffer name), ("storage", reducer name),
    ("update", reducer name, line of the update site) — grids of the plan — or ("loop",
    the loop as `T.Parallel(2, 5)`, its line). `elements` are logical indices of that
    layout (a fragment's element, a loop's iteration) with their role; every cell the
    layout puts the element in is marked. `threads` are absolute thread ids with their
    role, `groups` the absolute threads of each group outlined.

    `layout` is the grid's layout when no plan holds it: an R300 of layout inference is
    found before any plan exists, so it carries the fragment as placed and the loop's
    demand itself. `also` holds more grids of the same counterexample, drawn below this
    one on the same rows of threads."""
    grid: tuple
    caption: str
    elements: tuple[tuple[tuple[int, ...], str], ...] = ()
    threads: tuple[tuple[int, str], ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()
    layout: Layout | None = None
    also: tuple[Counterexample, ...] = ()

    def __post_init__(self):
        assert self.grid and self.grid[0] in GRIDS, self.grid
        assert all(role in ROLES for _, role in self.elements + self.threads)

    def views(self) -> tuple[Counterexample, ...]:
        """This grid and the ones in `also`, in drawing order."""
        return (self,) + self.also

    def to_json(self) -> dict:
        kind, name, *line = self.grid
        return {"grid": {"kind": kind, "buffer": name, "line": line[0] if line else None},
                "caption": self.caption,
                "elements": [{"index": list(ix), "role": r} for ix, r in self.elements],
                "threads": [{"thread": t, "role": r} for t, r in self.threads],
                "groups": [list(g) for g in self.groups],
                "layout": None if self.layout is None else self.layout.to_json(),
                "also": [cx.to_json() for cx in self.also]}


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    message: str
    span: Span | None
    notes: tuple[Note, ...] = ()
    hint: str | None = None
    counterexample: Counterexample | None = None
    # why a diagnostic of a kind that is drawn (R300, R400) has no counterexample to
    # draw: the report says so instead of leaving the picture out silently
    no_picture: str | None = None

    def __post_init__(self):
        assert self.code in CODES, self.code
        assert self.severity in (ERROR, WARNING, NOTE), self.severity

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def to_json(self) -> dict:
        """The JSON object of docs/design.md §16 (with the hint)."""
        return {"code": self.code, "severity": self.severity, "message": self.message,
                **span_json(self.span),
                "notes": [{"message": n.message, **span_json(n.span)} for n in self.notes],
                "hint": self.hint,
                "counterexample": None if self.counterexample is None
                else self.counterexample.to_json(),
                "no_picture": self.no_picture}


def span_json(span: Span | None) -> dict:
    keys = ("line", "col", "end_line", "end_col")
    if span is None:
        return dict.fromkeys(keys)
    return {"line": span.line, "col": span.col, "end_line": span.end_line,
            "end_col": span.end_col}


def error(code: str, message: str, span: Span | None, *notes: Note,
          hint: str | None = None, counterexample: Counterexample | None = None,
          no_picture: str | None = None) -> Diagnostic:
    return Diagnostic(code, ERROR, message, span, tuple(notes), hint, counterexample,
                      no_picture)


class DiagnosticError(Exception):
    """Raised by a stage that cannot go on; carries every diagnostic it found."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__("; ".join(f"{d.code}: {d.message}" for d in self.diagnostics))

    def __reduce__(self):               # pickled by value (a worker process raises it)
        return DiagnosticError, (self.diagnostics,)
