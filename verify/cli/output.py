"""What the CLI writes, and how: colour (rich, NO_COLOR, --color), -q/-v, the summary of
several programs with its exit code, and the progress of long work (fuzz campaigns)."""
from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings

from rich.text import Text

# light modules only: a check answered from the cache writes through this class
# without loading numpy or the verifier (verify.cli.report is loaded with diagnostics)
from verify_reducer.verify.cli import documents as cli_json
from verify_reducer.verify.oracle.exit_codes import EXIT_INCONCLUSIVE, EXIT_INTERNAL, EXIT_MISMATCH, EXIT_OK, EXIT_REJECTED, EXIT_USAGE


# Several programs exit with the worst of their codes, worst first: an internal error
# (ours) or a usage error (a program that was not judged at all: the summary is
# incomplete) before a mismatch (a wrong answer from a lowering the verifier accepted),
# before inconclusive (an answer nobody could check: like a usage error, a claim left
# unjudged, so it is not hidden behind a rejection), before a rejection (the program's
# own error), before verified. README has the table.
WORST_FIRST = (EXIT_INTERNAL, EXIT_USAGE, EXIT_MISMATCH, EXIT_INCONCLUSIVE, EXIT_REJECTED,
               EXIT_OK)

VERDICT_STYLE = {"verified": "bold green", "ok": "bold green", "emitted": "bold green",
                 "match": "bold green",
                 "rejected": "bold red", "mismatch": "bold magenta",
                 "inconclusive": "bold yellow",
                 "usage_error": "bold yellow", "internal_error": "bold red"}


def worst(codes: list[int]) -> int:
    """The exit code of several programs: the worst of theirs (WORST_FIRST)."""
    return min(codes, key=WORST_FIRST.index, default=EXIT_OK)


def wants_color(mode: str, stream, environ=os.environ) -> bool:
    """--color always / never decide; auto colours a terminal, unless NO_COLOR is set
    (to anything but the empty string, https://no-color.org) or TERM is dumb; FORCE_COLOR
    set (to anything but the empty string, https://force-color.org) colours any stream,
    a pipe or a CI log too — NO_COLOR, the user's standing refusal, still wins."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    if environ.get("NO_COLOR", "") != "":
        return False
    if environ.get("FORCE_COLOR", "") != "":
        return True
    if environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def console(stream, color: bool):
    """A rich console on stream that writes exactly the text given: no wrapping, markup,
    emoji or highlighting; ANSI styles only when color. (rich.console is loaded here, for
    coloured text only: an answer from the cache in plain text never needs it.)"""
    from rich.console import Console
    return Console(file=stream, force_terminal=color, no_color=not color,
                   color_system="standard" if color else None, soft_wrap=True,
                   markup=False, emoji=False, highlight=False)


class Output:
    """The CLI's writer for one invocation: stdout for reports, stderr for diagnostics and
    notes, each coloured on its own terms; quiet keeps only verdicts and the summary."""

    def __init__(self, color: str = "auto", quiet: bool = False, verbose: bool = False,
                 json: bool = False):
        self.quiet, self.verbose, self.json = quiet, verbose, json
        self.color_out = wants_color(color, sys.stdout)
        self.color_err = wants_color(color, sys.stderr)
        self.documents: list[dict] | None = None     # collecting: several programs' JSON

    @classmethod
    def from_args(cls, args) -> "Output":
        return cls(getattr(args, "color", "auto"), getattr(args, "quiet", False),
                   getattr(args, "verbose", False), getattr(args, "json", False))

    def _write(self, text: str | Text, stream, color: bool) -> None:
        if color and isinstance(text, Text):
            console(stream, True).print(text)
        else:
            print(text.plain if isinstance(text, Text) else text, file=stream, flush=True)

    def out(self, text: str | Text) -> None:
        self._write(text, sys.stdout, self.color_out)

    def err(self, text: str | Text) -> None:
        self._write(text, sys.stderr, self.color_err)

    def report(self, text: str) -> None:
        """A program's report (not in quiet mode), its verdict and mismatches coloured."""
        if not self.quiet:
            self.out(highlight_report(text))

    def diagnostics(self, diags, path: str, source: str) -> None:
        if diags and not self.quiet:
            from verify_reducer.verify.cli.report import diagnostics_text
            self.err(diagnostics_text(diags, path, source))

    def note(self, message: str) -> None:
        if not self.quiet:
            self.err(_prefixed("note", message, "bold cyan"))

    def error(self, message: str) -> None:
        """An error message (shown in quiet mode too: it says why nothing else is)."""
        self.err(_prefixed("error", message, "bold red"))

    def verdict_line(self, program: str, name: str, detail: str = "") -> None:
        """`PROGRAM: VERDICT` (quiet mode's whole report of one program)."""
        line = Text(f"{program}: ")
        line.append(name.replace("_", " "), VERDICT_STYLE.get(name, "bold"))
        if detail:
            line.append(f" ({detail})")
        self.out(line)

    def summary(self, command: str, codes: list[int], exit_code: int) -> None:
        """`N programs: 2 verified, 1 rejected; exit 1` after several programs."""
        counts = cli_json.summary_json(command, codes, exit_code)["verdicts"]
        line = Text(f"{len(codes)} program{'s' * (len(codes) != 1)}: ")
        for i, (name, n) in enumerate(counts.items()):
            line.append(", " if i else "")
            line.append(f"{n} {name.replace('_', ' ')}", VERDICT_STYLE.get(name, "bold"))
        line.append(f"; exit {exit_code}")
        self.out(line)

    def json_document(self, doc: dict) -> None:
        """One JSON document: printed, or kept for the document of several programs."""
        if self.documents is not None:
            self.documents.append(cli_json.document(doc))
        else:
            print(cli_json.dumps(doc), flush=True)


def _prefixed(kind: str, message: str, style: str) -> Text:
    text = Text("verify-reducer: ")
    text.append(kind, style)
    text.append(f": {message}")
    return text


def highlight_report(text: str) -> Text:
    """The human report with its verdict, agreements and mismatches coloured."""
    styled = Text(text)
    styled.highlight_regex(r"(?<=verdict: )\w+", "bold")
    for name in ("verified", "match", "rejected", "mismatch", "inconclusive"):
        styled.highlight_regex(rf"(?<=verdict: ){name}\b", VERDICT_STYLE[name])
    styled.highlight_words(["MISMATCH"], "bold magenta")
    styled.highlight_words(["INCONCLUSIVE"], "bold yellow")
    styled.highlight_words(["== interpreter"], "green")
    return styled


# ----------------------------------------------------------------------------- progress

class BarMeter:
    """A rich progress bar on a terminal: programs done of total, the findings so far,
    the time spent and the time left. Lines printed to stdout while it is drawn appear
    above it when stdout is that terminal too."""

    def __init__(self, stream, color: bool):
        # rich's progress module is loaded here, for a campaign on a terminal only
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, \
            TimeElapsedColumn, TimeRemainingColumn
        self._progress = Progress(
            TextColumn("fuzz"), BarColumn(), MofNCompleteColumn(),
            TextColumn("programs, {task.fields[findings]} finding(s)"),
            TimeElapsedColumn(), TimeRemainingColumn(),
            console=Console(file=stream, force_terminal=True,
                            color_system="standard" if color else None, no_color=not color),
            redirect_stdout=bool(sys.stdout.isatty()), transient=False)
        self._task = None

    def start(self, total: int, done: int, findings: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task("fuzz", total=total, completed=done,
                                             findings=findings)

    def step(self, findings: int) -> None:
        self._progress.update(self._task, advance=1, findings=findings)

    def close(self) -> None:
        self._progress.stop()


class LineMeter:
    """Off a terminal: a line `fuzz: 40/200 programs, 1 finding(s), 16 s` when the
    campaign starts, every `every` programs (5 % of them), every `seconds` seconds
    (checked as each program finishes) and at the end."""

    def __init__(self, stream, seconds: float = 10.0, clock=time.monotonic):
        self.stream, self.seconds, self.clock = stream, seconds, clock

    def start(self, total: int, done: int, findings: int) -> None:
        self.total, self.done, self.findings = total, done, findings
        self.every = max(1, total // 20)
        self.t0 = self.clock()
        self._show()

    def step(self, findings: int) -> None:
        self.done, self.findings = self.done + 1, findings
        if self.done - self.shown >= self.every or \
                self.clock() - self.shown_at >= self.seconds:
            self._show()

    def close(self) -> None:
        if self.shown != self.done:
            self._show()

    def _show(self) -> None:
        self.shown, self.shown_at = self.done, self.clock()
        print(f"fuzz: {self.done}/{self.total} programs, {self.findings} finding(s), "
              f"{self.shown_at - self.t0:.0f} s", file=self.stream, flush=True)


def fuzz_meter(stream, color: bool):
    """The campaign's progress display on stream: a bar on a terminal, lines elsewhere."""
    isatty = getattr(stream, "isatty", None)
    return BarMeter(stream, color) if isatty and isatty() else LineMeter(stream)


# ----------------------------------------------------------------------------- warnings

class KeptWarnings(list):
    """The RuntimeWarnings numpy raised during a command (the first at each place),
    kept off stderr."""

    def lines(self) -> list[str]:
        """One note per place: `-v` shows them (text mode only)."""
        return [f"numpy warned at {os.path.basename(w.filename)}:{w.lineno}: {w.message} "
                f"(kept off stderr: an edge of floating-point arithmetic inside "
                f"verify-reducer)" for w in self]


@contextlib.contextmanager
def numpy_warnings_kept():
    """numpy's RuntimeWarnings (overflow, invalid value, divide by zero in a NaN or
    infinite value's arithmetic) never reach stderr: a --json document is the whole
    output, and in text mode a warning would read as a problem of the program. They are
    kept, the first at each place (the command's -v lists them); every other warning
    is shown as usual. Worker processes forked inside inherit the rule."""
    kept = KeptWarnings()
    shown = warnings.showwarning

    def keep(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, RuntimeWarning):
            kept.append(warnings.WarningMessage(message, category, filename, lineno))
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("default", RuntimeWarning)
        warnings.showwarning = keep
        yield kept
