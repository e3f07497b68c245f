"""One program's answer as data: its exit code, what it wrote on stdout and stderr in the
order it wrote it, its JSON document and its HTML report section — recorded while the
command runs (in this process or a --jobs worker), kept by the cache
(verify.cli.cache), and played back as the program's output.

Played back, the bytes are the ones the command wrote, stream by stream and in order, so
a program's output is the same whether it ran here, in a worker or came from the cache;
an answer from the cache then says so (CACHED_LINE, a `cached` detail in -q's verdict
line, `"cached": true` in its document). Only the standard library is imported here."""
from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass, field
from typing import Iterator

STDOUT, STDERR = 1, 2
CACHED_LINE = ("cached: the answer of an earlier check of the same source, flags and tool "
               "(--no-cache checks again)")


@dataclass
class Judged:
    code: int
    detail: str = ""                     # -q's detail (the first error's code and place)
    chunks: list[tuple[int, str]] = field(default_factory=list)  # (STDOUT|STDERR, text)
    documents: list | None = None        # the JSON documents said (the last one counts)
    html_sections: list = field(default_factory=list)
    cached: bool = False                 # played from the cache, not judged now
    decided: bool = True                 # False: a proof came back unknown (not cached)

    def quiet_detail(self) -> str:
        """-q's parenthesized detail: the first error, and whether it came from the cache."""
        return "; ".join(part for part in (self.detail, "cached" * self.cached) if part)


class _Recorder(io.TextIOBase):
    """A text stream that appends what is written to a shared list, tagged by stream."""

    def __init__(self, chunks: list[tuple[int, str]], stream: int):
        super().__init__()
        self._chunks, self._stream = chunks, stream

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            if self._chunks and self._chunks[-1][0] == self._stream:
                self._chunks[-1] = (self._stream, self._chunks[-1][1] + text)
            else:
                self._chunks.append((self._stream, text))
        return len(text)


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[int, str]]]:
    """sys.stdout and sys.stderr recorded, in order, into the list yielded."""
    chunks: list[tuple[int, str]] = []
    with contextlib.redirect_stdout(_Recorder(chunks, STDOUT)), \
            contextlib.redirect_stderr(_Recorder(chunks, STDERR)):
        yield chunks


def play(judged: Judged, args) -> None:
    """A program's recorded output written out, its document kept for the command's one
    (marked `cached` when it came from the cache), its HTML section added."""
    out = args.ui
    for stream, text in judged.chunks:
        # each chunk flushed: stdout and stderr merged into one pipe keep their order
        target = sys.stdout if stream == STDOUT else sys.stderr
        target.write(text)
        target.flush()
    if judged.cached and not out.json and not out.quiet:
        out.out(CACHED_LINE)
    if out.documents is not None and judged.documents:
        document = judged.documents[-1]
        out.documents.append({**document, "cached": True} if judged.cached else document)
    if getattr(args, "html_sections", None) is not None:
        args.html_sections.extend(judged.html_sections)
