"""The size-family directives of a program (docs/design.md §21), read from its leading
comment block like the `# expect:` lines, never executed:

    # for-all: M in 1..1048576, K in 1..2**20
    # assume: M % BLOCK_M == 0

`for-all` names module constants or factory parameters that are *sizes* (the proofs
hold for every value in the inclusive range); `assume` restricts the family by an
integer condition over them. The command line adds the same (`--for-all NAME=LO..HI`, `--assume EXPR`).
A directive that cannot mean anything — a syntax error, an empty range, a name that is
unknown or not an integer module constant, an assumption that is not an integer
condition — is R110 at the directive. Whether a size ends up as a tile size or a thread
count (which must stay concrete) is only known after lowering: verify.family.checker says so,
also as R110 at the name."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..diagnostics import Diagnostic, error
from ..source import Span, comments
from .constants import ConstFolder, NotConstant
from .errors import FrontendError
from .names import Imports

_FOR_ALL = re.compile(r"#\s*for-all\s*:\s*(.*?)\s*$")
_ASSUME = re.compile(r"#\s*assume\s*:\s*(.*?)\s*$")
_RANGE = re.compile(r"\s*([A-Za-z_]\w*)\s+in\s+(.+?)\s*\.\.\s*(.+?)\s*$")
_CLI_RANGE = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*(.+?)\s*\.\.\s*(.+?)\s*$")

# what an assumption may be made of: integer arithmetic and conditions
_ASSUME_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
                 ast.Name, ast.Constant, ast.Load, ast.Add, ast.Sub, ast.Mult,
                 ast.FloorDiv, ast.Mod, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or,
                 ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


@dataclass(frozen=True)
class SizeRange:
    """`NAME in LO..HI`: NAME takes every integer of [lo, hi]."""
    name: str
    lo: int
    hi: int
    span: Span | None            # None: from the command line

    def __str__(self) -> str:
        return f"{self.name} in [{self.lo}, {self.hi}]"


@dataclass(frozen=True)
class Assumption:
    text: str
    tree: ast.expr
    span: Span | None

    def names(self) -> list[str]:
        return [n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)]


@dataclass(frozen=True)
class FamilyDecl:
    sizes: tuple[SizeRange, ...] = ()
    assumptions: tuple[Assumption, ...] = ()

    @property
    def declared(self) -> bool:
        return bool(self.sizes)

    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sizes)

    def merged(self, other: "FamilyDecl") -> "FamilyDecl":
        """other's ranges replace ours for the names both give; its assumptions add."""
        given = {s.name for s in other.sizes}
        return FamilyDecl(tuple(s for s in self.sizes if s.name not in given) + other.sizes,
                          self.assumptions + other.assumptions)

    def describe(self) -> str:
        """`M in [1, 1048576], K in [1, 1048576] (assuming M % 2 == 0)`."""
        text = ", ".join(str(s) for s in self.sizes)
        if self.assumptions:
            text += " (assuming " + ", ".join(a.text for a in self.assumptions) + ")"
        return text


class DirectiveError(ValueError):
    """A bad --for-all/--assume flag (exit 2: the command line, not the program)."""


# ----------------------------------------------------------------------------- reading

def read_family(source: str, path: str = "<string>") -> tuple[FamilyDecl, list[Diagnostic]]:
    """The directives of the leading comment block, and R110 for each bad one. A
    `for-all`/`assume` comment after the first line of code is R110 too (it would be
    silently ignored otherwise)."""
    sizes: list[SizeRange] = []
    assumptions: list[Assumption] = []
    found: list[Diagnostic] = []
    for line, col, text, leading in comments(source):
        m_for, m_assume = _FOR_ALL.match(text), _ASSUME.match(text)
        if not (m_for or m_assume):
            continue
        if not leading:
            found.append(_r110("a size-family directive must be in the comment block at "
                               "the top of the file, before the first line of code",
                               Span(line, col, line, col + len(text))))
            continue
        try:
            if m_for:
                body_col = col + m_for.start(1)
                sizes += _ranges(m_for.group(1), line, body_col)
            else:
                body_col = col + m_assume.start(1)
                assumptions.append(parse_assumption(m_assume.group(1),
                                                    Span(line, body_col, line,
                                                         body_col + len(m_assume.group(1)))))
        except FrontendError as exc:
            found.append(exc.diagnostic)
    seen: set[str] = set()
    for s in sizes:
        if s.name in seen:
            found.append(_r110(f"`{s.name}` is declared twice in for-all", s.span))
        seen.add(s.name)
    return FamilyDecl(tuple(sizes), tuple(assumptions)), found


def parse_cli(for_all: list[str], assume: list[str]) -> FamilyDecl:
    """The family the flags declare; DirectiveError names the bad flag."""
    sizes, assumptions = [], []
    for text in for_all:
        m = _CLI_RANGE.match(text)
        if not m:
            raise DirectiveError(f"--for-all {text!r}: expected NAME=LO..HI "
                                 f"(e.g. M=1..1048576)")
        try:
            sizes.append(_size_range(m.group(1), m.group(2), m.group(3), None))
        except FrontendError as exc:
            raise DirectiveError(f"--for-all {text!r}: {exc.diagnostic.message}") from None
    for text in assume:
        try:
            assumptions.append(parse_assumption(text, None))
        except FrontendError as exc:
            raise DirectiveError(f"--assume {text!r}: {exc.diagnostic.message}") from None
    names = [s.name for s in sizes]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DirectiveError(f"--for-all names {twice[0]} twice")
    return FamilyDecl(tuple(sizes), tuple(assumptions))


def check_names(decl: FamilyDecl, source: str,
                constants: dict[str, object]) -> list[tuple[str, Span | None]]:
    """(message, span) for each name that cannot be a size or appear in an assumption:
    unknown at module level and not a factory parameter, or not an integer. constants:
    the program's (module constants and the factories' parameters as bound)."""
    defined = _module_names(source) | set(constants)
    problems = []

    def integer(name: str) -> bool:
        value = constants.get(name)
        return isinstance(value, int) and not isinstance(value, bool)

    for s in decl.sizes:
        if name_problem := _name_problem(s.name, defined, integer, "a size"):
            problems.append((name_problem, s.span))
    for a in decl.assumptions:
        for name in a.names():
            if name_problem := _name_problem(name, defined, integer, "used in an assumption"):
                problems.append((name_problem, a.span))
    return problems


def _name_problem(name: str, defined: set[str], integer, role: str) -> str | None:
    if name not in defined:
        return (f"unknown name `{name}`: a size must be a module constant assigned in this "
                f"file or a factory parameter")
    if not integer(name):
        return (f"`{name}` is not an integer module constant or factory parameter (a plain "
                f"`{name} = <integer>` at module level, or a parameter bound to an integer) "
                f"and cannot be {role}")
    return None


# ----------------------------------------------------------------------------- pieces

def _ranges(body: str, line: int, col: int) -> list[SizeRange]:
    out = []
    offset = 0
    for part in body.split(","):
        part_col = col + offset + (len(part) - len(part.lstrip()))
        offset += len(part) + 1
        span = Span(line, part_col, line, part_col + len(part.strip()))
        m = _RANGE.match(part)
        if not m:
            _fail(f"expected `NAME in LO..HI`, got {part.strip()!r}", span)
        name_span = Span(line, part_col, line, part_col + len(m.group(1)))
        out.append(_size_range(m.group(1), m.group(2), m.group(3), name_span, span))
    return out


def _size_range(name: str, lo_text: str, hi_text: str, span: Span | None,
                where: Span | None = None) -> SizeRange:
    where = where or span               # a bad bound is reported on the whole range
    lo, hi = _bound(lo_text, where), _bound(hi_text, where)
    if lo > hi:
        _fail(f"the range of `{name}` is empty: {lo}..{hi}", where)
    if hi >= 2 ** 31:
        _fail(f"the range of `{name}` passes 2**31 - 1 (indices are 32-bit): {hi}", where)
    return SizeRange(name, lo, hi, span)


def _bound(text: str, span: Span | None) -> int:
    folder = ConstFolder(Imports(), _no_names)
    try:
        value = folder.fold(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, NotConstant, FrontendError, RecursionError, ValueError):
        value = None
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(f"a range bound must be an integer literal (such as 1048576 or 2**20), "
              f"got {text.strip()!r}", span)
    return value


def _no_names(name: str, node: ast.AST):
    raise NotConstant(node, f"`{name}` in a range bound")


def parse_assumption(text: str, span: Span | None) -> Assumption:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        _fail(f"cannot parse the assumption {text.strip()!r}", span)
    for node in ast.walk(tree):
        if not isinstance(node, _ASSUME_NODES) or (
                isinstance(node, ast.Constant)
                and (isinstance(node.value, bool) or not isinstance(node.value, int))):
            _fail(f"an assumption is an integer condition over module constants "
                  f"(+ - * // % comparisons and/or/not); {ast.unparse(node)!r} is not "
                  f"part of one", span)
    body = tree.body
    if not isinstance(body, (ast.Compare, ast.BoolOp)) and not (
            isinstance(body, ast.UnaryOp) and isinstance(body.op, ast.Not)):
        _fail(f"an assumption must be a condition (a comparison), got {text.strip()!r}",
              span)
    return Assumption(text.strip(), body, span)


def _module_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    names = set()
    for stmt in tree.body:
        for node in ast.walk(stmt) if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else ():
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            names.add(getattr(stmt, "name", ""))
    return names


def _r110(message: str, span: Span | None) -> Diagnostic:
    return error("R110", message, span)


def _fail(message: str, span: Span | None):
    raise FrontendError(_r110(message, span))
