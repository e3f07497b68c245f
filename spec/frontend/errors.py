"""How the frontend fails: a FrontendError carries one R1xx diagnostic for the construct
being lowered; the statement loop records it and goes on with the next statement, so one
file reports every independent mistake at once."""
from __future__ import annotations

import ast
from typing import NoReturn

from ..diagnostics import Diagnostic, error
from ..source import Span


class FrontendError(Exception):
    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(f"{diagnostic.code}: {diagnostic.message}")


class Poisoned(Exception):
    """A statement uses a name whose definition already failed: its error is reported,
    so this statement is skipped silently instead of cascading a second diagnostic."""


def span_of(where: ast.AST | Span) -> Span:
    return where if isinstance(where, Span) else Span.of(where)


def fail(code: str, message: str, where: ast.AST | Span, hint: str | None = None) -> NoReturn:
    raise FrontendError(error(code, message, span_of(where), hint=hint))


def unsupported(message: str, where: ast.AST | Span) -> NoReturn:
    """R100: syntax the frontend does not support."""
    fail("R100", message, where)


def unknown(message: str, where: ast.AST | Span) -> NoReturn:
    """R101: an unknown name or an unsupported `T.` call."""
    fail("R101", message, where)


def shape_error(message: str, where: ast.AST | Span) -> NoReturn:
    """R102: shape, arity or dtype error in an ordinary statement."""
    fail("R102", message, where)


# Python constructs we name in R100 messages ("`while` loops are not supported").
CONSTRUCT_NAMES = {
    "While": "`while` loops", "Lambda": "`lambda` expressions", "ClassDef": "class definitions",
    "FunctionDef": "nested function definitions", "AsyncFunctionDef": "async functions",
    "Return": "`return` statements", "Break": "`break` statements", "Continue": "`continue` statements",
    "Try": "`try` statements", "TryStar": "`try` statements", "Raise": "`raise` statements",
    "Assert": "`assert` statements", "Delete": "`del` statements", "Global": "`global` statements",
    "Nonlocal": "`nonlocal` statements", "Import": "imports inside a kernel",
    "ImportFrom": "imports inside a kernel", "Match": "`match` statements",
    "AsyncFor": "`async for`", "AsyncWith": "`async with`", "AnnAssign": "annotated assignments",
    "ListComp": "list comprehensions", "SetComp": "set comprehensions",
    "DictComp": "dict comprehensions", "GeneratorExp": "generator expressions",
    "Dict": "dict literals", "Set": "set literals", "JoinedStr": "f-strings",
    "FormattedValue": "f-strings", "NamedExpr": "`:=` assignments", "Await": "`await` expressions",
    "Yield": "`yield` expressions", "YieldFrom": "`yield from` expressions", "Starred": "star-arguments",
    "Slice": "slices outside T.copy/T.fill regions", "List": "list values",
    "Tuple": "tuple values", "MatMult": "`@` matrix products",
}


def construct_name(node: ast.AST) -> str:
    return CONSTRUCT_NAMES.get(type(node).__name__, f"`{type(node).__name__}` constructs")
