"""The TileLang-source frontend: Python's `ast` → the logical IR (spec.ir), with a span on
every node. The user's file is parsed, never imported or executed.

    parse_source(source, path="<string>", overrides=None) -> Program
    parse_file(path) -> Program      (the file decoded as Python decodes it)

overrides binds module constants and factory parameters to other values than the file
gives them (a size family at another size, or its symbolic sizes: spec.symbolic); params
binds factory parameters as `--param` does (spec.frontend.factories: Python values, or
ParamText folded in the file's scope). Both raise spec.diagnostics.DiagnosticError
carrying every R100/R101/R102 found, and ParamError for a param that binds nothing."""
from __future__ import annotations

import ast

from ..diagnostics import DiagnosticError, error
from ..ir import Program
from ..source import NO_SPAN, Span, read_source_file
from .factories import ParamError, ParamText, read_params
from .funcs import lower_prim_func
from .module import ModuleScan, collect_imports

__all__ = ["parse_source", "parse_file", "ParamError", "ParamText"]


def parse_source(source: str, path: str = "<string>",
                 overrides: dict[str, object] | None = None,
                 params: dict[str, object] | None = None) -> Program:
    # a UTF-8 byte-order mark is an encoding detail, not a character of the program
    source = source.removeprefix("\ufeff")
    try:
        return _parse(source, path, overrides, params)
    except (DiagnosticError, ParamError):
        raise
    except RecursionError:
        raise DiagnosticError(error("R100", "the program is nested too deeply", NO_SPAN)) \
            from None
    except Exception as exc:  # the last guard: no input may end in a traceback
        raise DiagnosticError(error("R100", f"internal frontend error: {exc!r}", NO_SPAN)) \
            from exc


def parse_file(path: str) -> Program:
    """Read path as Python's import system does (spec.source.read_source_file: its
    coding declaration, a BOM) and parse it. OSError and spec.source.SourceDecodeError
    propagate: they are usage errors, not diagnostics about the program."""
    return parse_source(read_source_file(path), path)


def _parse(source: str, path: str, overrides: dict[str, object] | None = None,
           params: dict[str, object] | None = None) -> Program:
    tree = _syntax_tree(source, path)
    directives, diagnostics = read_params(source)
    scan = ModuleScan(tree, collect_imports(tree), overrides, params, directives)
    scan.run()
    diagnostics += scan.diagnostics
    funcs = {}
    for site in scan.sites:
        func, found = lower_prim_func(site.imports, site.env, site.node, site.key)
        diagnostics.extend(found)
        if func is not None:
            funcs[site.key] = func
    if not scan.sites and not diagnostics:
        diagnostics.append(error("R100", "no `@T.prim_func` found in the file "
                                 "(import tilelang.language as T and decorate a function)",
                                 NO_SPAN))
    if diagnostics:
        diagnostics.sort(key=lambda d: (d.span.line, d.span.col) if d.span else (0, 0))
        raise DiagnosticError(diagnostics)
    return Program(path, source, funcs, scan.constants())


def _syntax_tree(source: str, path: str) -> ast.Module:
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        end_line = getattr(exc, "end_lineno", None) or line
        end_col = getattr(exc, "end_offset", None) or col + 1
        if (end_line, end_col) <= (line, col):
            end_line, end_col = line, col + 1
        raise DiagnosticError(error("R100", f"syntax error: {exc.msg}",
                                    Span(line, col, end_line, end_col))) from None
    except (ValueError, MemoryError, RecursionError) as exc:
        raise DiagnosticError(error("R100", f"cannot parse the file: {exc}", NO_SPAN)) \
            from None
