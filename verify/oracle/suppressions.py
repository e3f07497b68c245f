"""Findings a user has decided to accept, said in the source or in the project's
configuration, and never dropped silently.

In the source, a comment on the finding's line, or alone on the line above it:

    acc = T.alloc_fragment((BLOCK, 256), T.float32)   # verify-reducer: ignore[R506] spills are measured, fine

`ignore[R506]` (several codes: `ignore[R400, R506]`) then a reason, which is mandatory.
In pyproject.toml, `[tool.verify-reducer] ignore = ["R400"]` (verify.cli.config) for a
whole project or per path. Either way:

- only a warning or a note can be accepted. An error stays: the program has no meaning
  while it stands, so no comment can make it verify; a comment that names the code of
  an error on its line gets an R111 warning saying so;
- an accepted finding is reported as suppressed, with its reason, in every report (the
  text's `suppressed` lines, the JSON document's `suppressed`, SARIF's suppressions);
- a comment without a reason or with an unknown code is an R111 error; one that
  accepts nothing on its line an R111 warning (it is stale)."""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from verify_reducer.spec.diagnostics import CODES, WARNING, Diagnostic, error
from verify_reducer.spec.source import Span

DIRECTIVE = re.compile(r"#\s*verify-reducer\s*:\s*(?P<verb>\w+)?(?P<rest>.*)$")
IGNORE = re.compile(r"ignore\[(?P<codes>[^\]]*)\]\s*(?P<reason>.*)$")


@dataclass(frozen=True)
class Suppression:
    line: int                # the line whose findings it accepts
    codes: tuple[str, ...]
    reason: str
    span: Span               # the comment itself


@dataclass(frozen=True)
class Suppressed:
    """A finding accepted by a comment or by the configuration, and why."""
    diagnostic: Diagnostic
    reason: str
    by: str                  # "comment at LINE:COL" or "pyproject.toml PATH"

    def to_json(self) -> dict:
        return {**self.diagnostic.to_json(), "suppressed": self.reason, "by": self.by}


def parse(source: str) -> tuple[list[Suppression], list[Diagnostic]]:
    """The source's suppression comments, and R111 for each malformed one."""
    found, problems = [], []
    lines = source.splitlines()
    for tok in _comments(source):
        # the directive may follow another comment on the line (`# <- R201  # verify-...`)
        m = DIRECTIVE.search(tok.string)
        if m is None:
            continue
        (row, col), (_, end_col) = tok.start, tok.end
        span = Span(row, col + m.start() + 1, row, end_col + 1)
        alone = lines[row - 1][:col].strip() == ""
        ignore = IGNORE.match(f"{m.group('verb') or ''}{m.group('rest')}".strip()) \
            if m.group("verb") == "ignore" else None
        if ignore is None:
            problems.append(error("R111", "a verify-reducer comment must read "
                                  "`# verify-reducer: ignore[CODE] reason`", span))
            continue
        codes = tuple(c.strip() for c in ignore.group("codes").split(",") if c.strip())
        unknown = [c for c in codes if c not in CODES]
        # the reason is prose up to the end of the line or to a second comment
        reason = ignore.group("reason").split("#")[0].strip()
        if not codes or unknown:
            problems.append(error("R111", f"unknown diagnostic code(s) "
                                  f"{', '.join(unknown) or '(none given)'} in a suppression "
                                  f"(docs/codes.md lists them)", span))
        elif not reason:
            problems.append(error("R111", f"the suppression of {', '.join(codes)} gives no "
                                  f"reason: say why the finding is accepted after "
                                  f"`ignore[...]`", span))
        else:
            # alone on its line, it speaks for the next line of code
            target = _next_code_line(lines, row) if alone else row
            found.append(Suppression(target, codes, reason, span))
    return found, problems


def apply(diagnostics: list[Diagnostic], suppressions: list[Suppression],
          ignored: dict[str, str]) -> tuple[list[Diagnostic], list[Suppressed],
                                            list[Diagnostic]]:
    """(kept, suppressed, R111 findings about the suppressions). ignored: code -> where
    the configuration ignores it (its file and table)."""
    kept, accepted, used, refused = [], [], set(), []
    for d in diagnostics:
        line = d.span.line if d.span is not None else None
        comment = next((s for s in suppressions if s.line == line and d.code in s.codes),
                       None)
        if d.is_error:
            kept.append(d)
            if comment is not None:
                used.add(comment)
                refused.append(Diagnostic(
                    "R111", WARNING, f"{d.code} on line {line} is an error: a "
                    f"suppression cannot accept it (the program has no meaning while it "
                    f"stands)", comment.span))
            continue
        if comment is not None:
            used.add(comment)
            accepted.append(Suppressed(d, comment.reason,
                                       f"comment at {comment.span.line}:{comment.span.col}"))
        elif d.code in ignored:
            accepted.append(Suppressed(d, f"ignored by {ignored[d.code]}", ignored[d.code]))
        else:
            kept.append(d)
    stale = [Diagnostic("R111", WARNING, f"this suppression of {', '.join(s.codes)} accepts "
                        f"nothing on line {s.line}: remove it", s.span)
             for s in suppressions if s not in used]
    return kept, accepted, refused + stale


def _comments(source: str):
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                yield tok
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return                   # the frontend reports the broken source itself


def _next_code_line(lines: list[str], row: int) -> int:
    for number in range(row + 1, len(lines) + 1):
        text = lines[number - 1].strip()
        if text and not text.startswith("#"):
            return number
    return row


def accept(report, source: str | None, ignored: dict[str, str]) -> None:
    """The check report with its accepted findings moved to report.suppressed: its
    diagnostics and its plans' notes (R400), judged together so that a comment
    accepting either is not stale; R111 findings added to its diagnostics."""
    if source is None:
        return
    comments, problems = parse(source)
    findings = list(report.diagnostics) + [n for e in report.epochs for n in e.notes]
    kept, accepted, about = apply(findings, comments, ignored)
    kept_ids = {id(d) for d in kept}
    report.diagnostics = [d for d in report.diagnostics if id(d) in kept_ids] + \
        problems + about
    for e in report.epochs:
        e.notes = [n for n in e.notes if id(n) in kept_ids]
    report.suppressed = accepted
