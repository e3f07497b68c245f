"""Source locations (Span: lines and columns are 1-based, as compilers print them;
`end_col` is exclusive) and the one way a program's bytes become its text
(decode_source: as Python's import system decodes them)."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int

    @staticmethod
    def of(node: ast.AST) -> "Span":
        line = getattr(node, "lineno", 1) or 1
        col = (getattr(node, "col_offset", 0) or 0) + 1
        end_line = getattr(node, "end_lineno", None) or line
        end_col = (getattr(node, "end_col_offset", None) or col) + 1
        return Span(line, col, end_line, end_col)

    def to(self, other: "Span") -> "Span":
        """The span from the start of self to the end of other."""
        return Span(self.line, self.col, other.end_line, other.end_col)


NO_SPAN = Span(1, 1, 1, 1)


# ----------------------------------------------------------------------------- reading

class SourceDecodeError(ValueError):
    """A program file Python itself could not decode (it would raise SyntaxError on
    import): an unknown encoding in its coding declaration, a BOM that contradicts it,
    bytes the declared encoding has no character for. line and col are 1-based; col
    counts bytes of the line, as Python's own message does."""

    def __init__(self, message: str, line: int, col: int):
        self.reason, self.line, self.col = message, line, col
        super().__init__(f"line {line}, column {col}: {message}")


# PEP 263's declaration, as the tokenizer matches it (tokenize.cookie_re)
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)


def decode_source(data: bytes) -> str:
    """The text Python's import system compiles from data (importlib's decode_source):
    the encoding its PEP 263 coding declaration names (on line 1 or 2), UTF-8 when there
    is none, a UTF-8 byte-order mark dropped; newlines made universal. Every reader of a
    program (the frontend, the `# expect:`/`# input:` directives, the reports quoting
    lines) goes through this, so what is verified is exactly what Python and TileLang
    run: a `# -*- coding: utf-7 -*-` file is read as UTF-7, where `+AAo-` is a newline
    that turns what a UTF-8 reader sees as a comment into a statement."""
    lines = data.splitlines(keepends=True)[:2]
    try:
        encoding, _ = tokenize.detect_encoding(iter(lines).__next__)
    except SyntaxError as exc:
        raise SourceDecodeError(_declaration_problem(exc, lines), *_cookie_place(lines)) \
            from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SourceDecodeError(f"{encoding} has no character for the byte(s) "
                                f"{data[exc.start:exc.end]!r} ({exc.reason}); Python "
                                f"refuses this file too", line, col) from None
    except LookupError as exc:          # a codec that exists but cannot decode text
        raise SourceDecodeError(f"cannot decode as {encoding}: {exc}",
                                *_cookie_place(lines)) from None
    text = text.removeprefix("\ufeff")
    return io.IncrementalNewlineDecoder(None, translate=True).decode(text, final=True)


def read_source_file(path: str) -> str:
    """decode_source of the file's bytes (OSError propagates)."""
    with open(path, "rb") as f:
        return decode_source(f.read())


def encode_source(text: str) -> bytes:
    """text as the bytes of a file Python reads back as text: in the encoding its own
    coding declaration names (UTF-8 without one). A program read from a UTF-7 file and
    written as UTF-8 under its `coding: utf-7` line would be read back as another
    program."""
    lines = text.encode("utf-8", "surrogateescape").splitlines(keepends=True)[:2]
    try:
        encoding, _ = tokenize.detect_encoding(iter(lines).__next__)
        return text.encode(encoding)
    except (SyntaxError, LookupError, UnicodeEncodeError):
        return text.encode("utf-8", "surrogateescape")


def _declaration_problem(exc: SyntaxError, lines: list[bytes]) -> str:
    """tokenize's complaint in words a user can act on."""
    message = str(exc.msg)
    if message.startswith("encoding problem"):
        return (f"the file starts with a UTF-8 byte-order mark but declares another "
                f"encoding ({message})")
    return f"{message} (the PEP 263 coding declaration on line 1 or 2)" \
        if any(_COOKIE.match(line) for line in lines) else message


def _cookie_place(lines: list[bytes]) -> tuple[int, int]:
    """(line, column) of the coding declaration, (1, 1) when there is none."""
    for number, line in enumerate(lines, 1):
        found = _COOKIE.match(line.removeprefix(b"\xef\xbb\xbf"))
        if found:
            return number, found.start(1) + 1
    return 1, 1


def comments(source: str):
    """(line, 1-based col, text, in the leading block) of every comment of the source: the
    directives (`# for-all:`, `# params:`) are comments, read with Python's own tokenizer
    so that a `#` inside a string is not one. Source that does not tokenize has none."""
    leading = True
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        tokens = []
    for tok in tokens:
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING,
                        tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.start[1] + 1, tok.string, leading
            continue
        leading = False
