"""Problem sizes that stay symbolic: the integers of a size family (docs/design.md §21).

A program that declares `# for-all: M in 1..1048576` is lowered twice. The ordinary
lowering sees `M` as the plain integer the file assigns, and every stage works on that
concrete kernel exactly as before. The *family* lowering binds `M` to a `SizeInt`: an
`int` with the file's value, so every stage that computes with it computes what the
concrete lowering computes, that also carries its symbolic value, an index expression
(spec.indexexpr) over the size names. Arithmetic the index-expression language speaks
(`+`, `-`, `*`, floor division and modulo by a positive constant, negation) keeps the
symbol: `T.ceildiv(M, 2)` folds to a SizeInt whose symbol is `(M + 1) // 2`. Anything
else (a true division, a power, a bit operation, `int(...)`, a division by a size)
falls back to the plain int, and the family check notices: it lowers the program at a
second point of the family and requires every plain integer to be the same at both
(verify.family.checker).

Ordering comparisons (`<`, `<=`, `>`, `>=`, `bool()`) are compile-time *decisions*:
`threads = 256 if M > 4096 else 128` picks a kernel by the size. While `recording()` is
active each one is recorded with its outcome, and the family proof must show that it
comes out the same for every size in range. Equality is not recorded: dictionaries
compare keys with `==`, and a decision made by `==` shows as a difference between the
two lowerings."""
from __future__ import annotations

import ast
import contextlib
import contextvars
import sys
from dataclasses import dataclass
from typing import Iterator

from .indexexpr import Const, IndexExpr, var


@dataclass(frozen=True)
class Decision:
    """`a op b` was evaluated on sizes at compile time and came out `outcome`."""
    a: IndexExpr
    op: str
    b: IndexExpr
    outcome: bool
    line: int | None = None          # where the frontend made it, when known
    col: int | None = None


_DECISIONS: contextvars.ContextVar[list[Decision] | None] = \
    contextvars.ContextVar("size_decisions", default=None)


@contextlib.contextmanager
def recording() -> Iterator[list[Decision]]:
    """Record every ordering comparison made on a SizeInt inside the block."""
    found: list[Decision] = []
    token = _DECISIONS.set(found)
    try:
        yield found
    finally:
        _DECISIONS.reset(token)


def symbol_of(value) -> IndexExpr | None:
    """The symbolic value of an integer: its symbol for a SizeInt, a constant for a
    plain int, None for anything else."""
    if isinstance(value, SizeInt):
        return value.sym
    if isinstance(value, int) and not isinstance(value, bool):
        return Const(int(value))
    return None


def is_symbolic(value) -> bool:
    """Whether value depends on a size (a SizeInt whose symbol is not a constant)."""
    return isinstance(value, SizeInt) and not isinstance(value.sym, Const)


class SizeInt(int):
    """An int carrying its symbolic value over the declared sizes."""
    sym: IndexExpr

    def __new__(cls, value: int, sym: IndexExpr):
        self = super().__new__(cls, int(value))
        self.sym = sym
        return self

    def __repr__(self) -> str:
        return f"SizeInt({int(self)}, {self.sym})"

    def __reduce__(self):
        return SizeInt, (int(self), self.sym)

    # --- arithmetic the index-expression language keeps ------------------------------

    def _lift(self, other, value, build):
        sym = symbol_of(other)
        if sym is None or isinstance(other, bool):
            return value
        try:
            return SizeInt(value, build(sym))
        except ValueError:          # a divisor that is not a positive constant
            return value

    def __add__(self, other):
        value = int.__add__(self, other)
        return value if value is NotImplemented else self._lift(other, value,
                                                                lambda s: self.sym + s)

    def __radd__(self, other):
        value = int.__radd__(self, other)
        return value if value is NotImplemented else self._lift(other, value,
                                                                lambda s: s + self.sym)

    def __sub__(self, other):
        value = int.__sub__(self, other)
        return value if value is NotImplemented else self._lift(other, value,
                                                                lambda s: self.sym - s)

    def __rsub__(self, other):
        value = int.__rsub__(self, other)
        return value if value is NotImplemented else self._lift(other, value,
                                                                lambda s: s - self.sym)

    def __mul__(self, other):
        value = int.__mul__(self, other)
        return value if value is NotImplemented else self._lift(other, value,
                                                                lambda s: self.sym * s)

    def __rmul__(self, other):
        value = int.__rmul__(self, other)
        return value if value is NotImplemented else self._lift(other, value,
                                                                lambda s: s * self.sym)

    def __floordiv__(self, other):
        value = int.__floordiv__(self, other)
        if value is NotImplemented or isinstance(other, SizeInt):
            return value            # a size as divisor: not an index expression
        return self._lift(other, value, lambda s: self.sym // s)

    def __mod__(self, other):
        value = int.__mod__(self, other)
        if value is NotImplemented or isinstance(other, SizeInt):
            return value
        return self._lift(other, value, lambda s: self.sym % s)

    def __neg__(self):
        return SizeInt(-int(self), -self.sym)

    def __pos__(self):
        return self

    # --- decisions ---------------------------------------------------------------

    def _decide(self, op: str, other, outcome):
        found = _DECISIONS.get()
        sym = symbol_of(other) if not isinstance(other, bool) else None
        if found is not None and outcome is not NotImplemented and sym is not None:
            found.append(Decision(self.sym, op, sym, bool(outcome), *_where()))
        return outcome

    def __lt__(self, other):
        return self._decide("<", other, int.__lt__(self, other))

    def __le__(self, other):
        return self._decide("<=", other, int.__le__(self, other))

    def __gt__(self, other):
        return self._decide(">", other, int.__gt__(self, other))

    def __ge__(self, other):
        return self._decide(">=", other, int.__ge__(self, other))

    def __bool__(self):
        return bool(self._decide("!=", 0, int(self) != 0))

    # equality and hashing stay the int's own (see the module docstring)
    __eq__ = int.__eq__
    __ne__ = int.__ne__
    __hash__ = int.__hash__


def _where() -> tuple[int | None, int | None]:
    """The source position of the construct being lowered: the innermost caller with
    an AST node in hand (recorded decisions are few; the frame walk is cheap)."""
    frame = sys._getframe(3)
    for _ in range(16):
        if frame is None:
            break
        for value in frame.f_locals.values():
            node = value if isinstance(value, ast.AST) else getattr(value, "node", None)
            if isinstance(node, ast.AST) and hasattr(node, "lineno"):
                return node.lineno, node.col_offset + 1
        frame = frame.f_back
    return None, None


def size(name: str, value: int) -> SizeInt:
    """The SizeInt a declared size is bound to in the family lowering."""
    return SizeInt(value, var(name))
