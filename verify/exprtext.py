"""Expressions of the logical IR written back as TileLang source, for diagnostics.

The verifier gets the IR, not the source text, so a message that quotes an index or a
condition ("`i * 4 + j`", "`tx < 64`") renders it here. Parentheses follow Python's
precedence so the text reads like what the user wrote."""
from __future__ import annotations

import math

from spec import ir

# Python's binding strength, loosest first: a child that binds looser than its parent
# needs parentheses.
_PRECEDENCE = {
    "or": 1, "and": 2, "not": 3,
    "<": 4, "<=": 4, ">": 4, ">=": 4, "==": 4, "!=": 4,
    "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8,
    "+": 9, "-": 9, "*": 10, "/": 10, "//": 10, "%": 10,
    "neg": 11, "invert": 11,
}
_ATOM = 12


def show(expr: ir.Expr) -> str:
    return _show(expr)[0]


def _show(e: ir.Expr) -> tuple[str, int]:
    """The text of e and how tightly it binds."""
    if isinstance(e, ir.Const):
        return _const(e), _ATOM
    if isinstance(e, ir.Var):
        return e.name, _ATOM
    if isinstance(e, ir.ThreadBinding):
        return "T.get_thread_binding()", _ATOM
    if isinstance(e, ir.Load):
        return f"{e.buffer.name}[{', '.join(show(i) for i in e.indices)}]", _ATOM
    if isinstance(e, (ir.Binary, ir.Compare, ir.Logical)):
        p = _PRECEDENCE.get(e.op, 0)
        left = _wrap(e.a, p, strict=False)
        right = _wrap(e.b, p, strict=True)
        return f"{left} {e.op} {right}", p
    if isinstance(e, ir.Unary):
        p = _PRECEDENCE[e.op]
        sign = {"neg": "-", "not": "not ", "invert": "~"}[e.op]
        return sign + _wrap(e.a, p, strict=False), p
    if isinstance(e, ir.Call):
        return f"T.{e.func}({', '.join(show(a) for a in e.args)})", _ATOM
    if isinstance(e, ir.Cast):
        return f"T.cast({show(e.a)}, T.{e.dtype.name})", _ATOM
    if isinstance(e, ir.Select):
        return f"T.if_then_else({show(e.cond)}, {show(e.a)}, {show(e.b)})", _ATOM
    return repr(e), _ATOM


def _wrap(e: ir.Expr, parent: int, strict: bool) -> str:
    text, p = _show(e)
    # the right operand of a left-associative operator needs parentheses at equal
    # strength too: a - (b - c)
    if p < parent or (strict and p == parent):
        return f"({text})"
    return text


def _const(c: ir.Const) -> str:
    v = c.value
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return f"{'-' if v < 0 else ''}T.infinity(T.{c.dtype.name})"
        text = repr(v)
    else:
        text = str(v)
    return text if c.weak else f"T.{c.dtype.name}({text})"
