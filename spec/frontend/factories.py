"""Factories: `def kernel(M, N, block_M=128, ...)` returning a prim_func, read without
being called. Each parameter is bound, first match wins, from

1. the caller's params (`--param NAME=VALUE` on the command line, `params=` in the
   oracle API and the pytest plugin), or a size family's override (spec.symbolic);
2. a `# params: M=4096, N=4096` line in the file's leading comment block;
3. the first call of the factory in the file whose arguments are all constants
   (`prog = kernel(1024, 128)`);
4. the parameter's default.

A parameter left without a value is R102 naming it and the three ways to bind it.

A value is a compile-time Python value: an int, float, bool, string or dtype. The
caller's params are either such values (the API: `params={"M": 4096, "op": "sum"}`) or
`ParamText`, the text of a Python expression folded in the file's module scope as a
`# params:` value is (`4096`, `2**12`, `T.float16`, `"sum"`, a module constant); a bare
word that names nothing there is the string it spells (`--param op=sum`,
`--param dtype=float16`), as a shell user means it."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..diagnostics import Diagnostic, error
from ..source import Span, comments
from .constants import NotConstant
from .errors import FrontendError

_PARAMS = re.compile(r"#\s*params\s*:\s*(.*?)\s*$")
_FLAG = re.compile(r"\s*([A-Za-z_]\w*)\s*=(.*)$", re.S)


@dataclass(frozen=True)
class ParamText:
    """A parameter's value as written on the command line: folded in the file's scope."""
    text: str


@dataclass(frozen=True)
class TileLangFunction:
    """A parameter bound to a TileLang function (`reduce_fn=T.reduce_max`): in the
    factory's kernels the parameter's name is that function (an import alias)."""
    path: str                       # tilelang.language.reduce_max


class ParamError(ValueError):
    """A --param (or API params=) that cannot bind anything: a malformed flag, a name
    that is no factory parameter, a value that is not a compile-time constant. A usage
    error (exit 2), not a diagnostic about the program."""


@dataclass(frozen=True)
class Directive:
    """One `NAME=VALUE` of a `# params:` line."""
    name: str
    value: ast.expr
    span: Span


# ----------------------------------------------------------------------------- flags

def parse_param_flags(flags: list[str]) -> dict[str, ParamText]:
    """`--param NAME=VALUE` flags (repeatable) as params; ParamError names a bad one."""
    out: dict[str, ParamText] = {}
    for flag in flags:
        m = _FLAG.match(flag)
        if not m or not m.group(2).strip():
            raise ParamError(f"--param {flag!r}: expected NAME=VALUE (e.g. M=4096, "
                             f"dtype=float16, op=sum)")
        name = m.group(1)
        if name in out:
            raise ParamError(f"--param names {name} twice")
        out[name] = ParamText(m.group(2).strip())
    return out


def text_expression(text: str) -> ast.expr | str:
    """The expression a ParamText holds, or the text itself when it is not one (then
    it is a string: `--param op=sum` with a value that Python would not parse)."""
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return text.strip()


# ----------------------------------------------------------------------------- directive

def read_params(source: str) -> tuple[list[Directive], list[Diagnostic]]:
    """The `# params:` lines of the leading comment block, and R102 for each one that
    does not read as `NAME=VALUE, ...` or stands after the first line of code (it would
    be silently ignored there)."""
    found: list[Directive] = []
    problems: list[Diagnostic] = []
    for line, col, text, leading in comments(source):
        m = _PARAMS.match(text)
        if not m:
            continue
        body_col = col + m.start(1)
        where = Span(line, col, line, col + len(text))
        if not leading:
            problems.append(error("R102", "a `# params:` line must be in the comment block "
                                  "at the top of the file, before the first line of code",
                                  where))
            continue
        try:
            found += _directive_items(m.group(1), line, body_col, where)
        except FrontendError as exc:
            problems.append(exc.diagnostic)
    seen: set[str] = set()
    for d in found:
        if d.name in seen:
            problems.append(error("R102", f"`{d.name}` is given twice in `# params:`",
                                  d.span))
        seen.add(d.name)
    return found, problems


def _directive_items(body: str, line: int, col: int, where: Span) -> list[Directive]:
    # read as the keyword arguments of a call: values may hold commas ("a, b"), tuples;
    # the newline ends a trailing comment (`# params: M=64  # why`) before the paren
    try:
        call = ast.parse(f"f({body}\n)", mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        call = None
    if not isinstance(call, ast.Call) or call.args or \
            any(kw.arg is None for kw in call.keywords) or not call.keywords:
        raise FrontendError(error("R102", f"a `# params:` line reads `NAME=VALUE, ...` "
                                  f"(e.g. `# params: M=4096, dtype=\"float16\"`), got "
                                  f"{body!r}", where))
    out = []
    for kw in call.keywords:
        start = col + kw.col_offset - 2          # the `f(` the body was wrapped in
        end = col + kw.end_col_offset - 2
        out.append(Directive(kw.arg, kw.value, Span(line, start, line, end)))
    return out


# ----------------------------------------------------------------------------- binding

def parameters(node: ast.FunctionDef) -> list[ast.arg]:
    args = node.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def defaults(node: ast.FunctionDef) -> dict[str, ast.expr]:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    out = dict(zip([p.arg for p in positional[len(positional) - len(args.defaults):]],
                   args.defaults))
    out.update({p.arg: d for p, d in zip(args.kwonlyargs, args.kw_defaults)
                if d is not None})
    return out


def missing_message(factory: str, missing: list[str]) -> str:
    names = ", ".join(f"`{n}`" for n in missing)
    first = missing[0]
    what = "parameter" if len(missing) == 1 else "parameters"
    return (f"factory `{factory}` {what} {names} {'has' if len(missing) == 1 else 'have'} "
            f"no value: bind {'it' if len(missing) == 1 else 'them'} with "
            f"`--param {first}=VALUE` (check, run, emit; `params=` in the oracle API), a "
            f"`# params: {first}=VALUE` line at the top of the file, a call "
            f"`{factory}({first}=...)` with constant arguments, or a default")


def fold_given(fold, lookup_free, name: str, value) -> object:
    """The value of a caller's param: ParamText folded by fold (the module's folder);
    lookup_free(word) says whether a bare word names something in the file (otherwise
    the word is a string). ParamError when the text is not a compile-time value."""
    if not isinstance(value, ParamText):
        return value
    node = text_expression(value.text)
    if isinstance(node, str):
        return node
    if isinstance(node, ast.Name) and not lookup_free(node.id):
        return node.id
    try:
        return fold(node)
    except NotConstant as exc:
        raise ParamError(f"--param {name}={value.text}: not a compile-time value "
                         f"({exc.why})") from None
    except FrontendError as exc:
        raise ParamError(f"--param {name}={value.text}: {exc.diagnostic.message}") \
            from None
