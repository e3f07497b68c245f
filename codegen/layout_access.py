"""What layout inference sees of a statement: the fragment elements it reads and writes,
with each index as an integer IndexExpr over the loop variables and the context
variables (serial loop variables, block indices) whose values it may take.

An index that is not an affine function of known integer variables (it loads from a
buffer, uses T.get_thread_binding(), a float, ...) is kept as None: such an access cannot
be placed by a layout, and the inference reports it when it matters."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterator, Mapping

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import integer_index
from verify_reducer.spec.indexexpr import Const, IndexExpr, Var
from verify_reducer.spec.source import Span


@dataclass
class Scope:
    """Where a statement runs: its participant range, the integer variables it can name
    (as IndexExprs: a Let-bound name stands for its value), the values each context
    variable takes (a `range`: a block index over a grid of 2**31 - 1 blocks costs nothing
    until a rule enumerates it, and codegen.layout_rules bounds that), and the variables
    of the innermost T.Parallel with their extents."""
    participants: tuple[int, int]
    env: dict[str, IndexExpr] = field(default_factory=dict)
    domains: dict[str, range] = field(default_factory=dict)
    loop: dict[str, int] = field(default_factory=dict)

    def child(self, **changes) -> "Scope":
        copy = replace(self, env=dict(self.env), domains=dict(self.domains),
                       loop=dict(self.loop))
        return replace(copy, **changes) if changes else copy

    def ranges(self) -> dict[str, tuple[int, int]]:
        out = {v: domain_bounds(d) for v, d in self.domains.items() if len(d)}
        out.update({v: (0, e - 1) for v, e in self.loop.items()})
        return out


def domain_bounds(values: range) -> tuple[int, int]:
    """The least and greatest value of a non-empty range, without walking it."""
    return min(values[0], values[-1]), max(values[0], values[-1])


@dataclass(frozen=True)
class Access:
    buffer: ir.Buffer
    index: tuple[IndexExpr, ...] | None
    write: bool
    span: Span
    domains: Mapping[str, range]           # values of the context variables of index

    @property
    def text(self) -> str:
        if self.index is None:
            return f"{self.buffer.name}[...]"
        return f"{self.buffer.name}[{', '.join(str(e) for e in self.index)}]"


# ----------------------------------------------------------------------------- indices

def index_expr(e: ir.Expr, scope: Scope) -> IndexExpr | None:
    """e as an IndexExpr over the scope's variables, or None."""
    return integer_index(e, scope.env.get, scope.ranges())


def _context_domains(index: tuple[IndexExpr, ...] | None, scope: Scope):
    if index is None:
        return {}
    names = {v for e in index for v in e.free_vars()}
    return {v: scope.domains[v] for v in names if v in scope.domains}


def _access(buffer: ir.Buffer, indices, write: bool, span: Span, scope: Scope) -> Access:
    index = tuple(index_expr(i, scope) for i in indices)
    if any(i is None for i in index) or len(index) != len(buffer.shape):
        index = None
    return Access(buffer, index, write, span, _context_domains(index, scope))


def region_access(region: ir.Region, loop_extents: tuple[int, ...], loop_vars: tuple[str, ...],
                  write: bool, span: Span, scope: Scope) -> Access:
    """The element of region touched by iteration (loop_vars) of a copy over
    loop_extents: the non-unit dimensions of both are matched in order; a unit dimension
    of the region stays at its start."""
    loop_dims = [d for d, e in enumerate(loop_extents) if e > 1]
    region_dims = [d for d, e in enumerate(region.extents) if e > 1]
    starts = [index_expr(s, scope) for s in region.starts]
    matched = [loop_extents[a] == region.extents[b] for a, b in zip(loop_dims, region_dims)]
    if len(loop_dims) != len(region_dims) or not all(matched) or None in starts:
        return Access(region.buffer, None, write, span, {})
    index = list(starts)
    for a, b in zip(loop_dims, region_dims):
        index[b] = starts[b] + Var(loop_vars[a])
    index = tuple(index)
    return Access(region.buffer, index, write, span, _context_domains(index, scope))


# ----------------------------------------------------------------------------- statements

def _fragment(buffer: ir.Buffer) -> bool:
    return buffer.scope == "fragment"


def expr_accesses(expr: ir.Expr, scope: Scope) -> Iterator[Access]:
    """Every fragment element an expression reads."""
    for sub in ir.subexprs(expr):
        if isinstance(sub, ir.Load) and _fragment(sub.buffer):
            yield _access(sub.buffer, sub.indices, False, sub.span, scope)


def stmt_accesses(stmt: ir.Stmt, scope: Scope) -> Iterator[Access]:
    """The fragment accesses a statement makes itself (not in nested bodies). Copies,
    fills and reductions are placed by their own rules; only their start expressions
    are read here."""
    for e in ir.stmt_exprs(stmt):
        yield from expr_accesses(e, scope)
    if isinstance(stmt, ir.Store) and _fragment(stmt.buffer):
        yield _access(stmt.buffer, stmt.indices, True, stmt.span, scope)


def memory_accesses(stmt: ir.Stmt, scope: Scope) -> Iterator[Access]:
    """Every element a statement reads or writes in memory that is laid out (fragments,
    shared and global memory) and the reducer element it updates: what the vector
    width of its loop depends on (codegen.layout_vector). Local buffers are one
    thread's registers and constrain nothing."""
    for e in ir.stmt_exprs(stmt):
        for sub in ir.subexprs(e):
            if isinstance(sub, ir.Load) and sub.buffer.scope != "local":
                yield _access(sub.buffer, sub.indices, False, sub.span, scope)
    if isinstance(stmt, ir.Store) and stmt.buffer.scope != "local":
        yield _access(stmt.buffer, stmt.indices, True, stmt.span, scope)
    elif isinstance(stmt, ir.ReducerUpdate):
        yield _access(stmt.reducer, stmt.indices, True, stmt.span, scope)


def bind_let(scope: Scope, let: ir.Let) -> None:
    """`name = value` names value for the rest of the block, or hides an outer name."""
    value = index_expr(let.value, scope)
    if value is None:
        scope.env.pop(let.var.name, None)
    else:
        scope.env[let.var.name] = value
    scope.domains.pop(let.var.name, None)
    scope.loop.pop(let.var.name, None)


def serial_scope(scope: Scope, loop: ir.SerialFor) -> Scope:
    """The scope of a serial loop's body: its variable is a context variable taking
    range(start, stop, step), or a superset from bounds when start/stop are not
    constant (a superset only makes the checks more conservative)."""
    inner = scope.child()
    name = loop.var.name
    inner.env.pop(name, None)
    inner.domains.pop(name, None)
    inner.loop.pop(name, None)
    start, stop = index_expr(loop.start, scope), index_expr(loop.stop, scope)
    if start is None or stop is None:
        return inner
    ranges = scope.ranges()
    (slo, shi), (tlo, thi) = start.bounds(ranges), stop.bounds(ranges)
    if isinstance(start, Const) and isinstance(stop, Const):
        values = range(start.value, stop.value, loop.step)
    elif loop.step > 0 and math.isfinite(slo) and math.isfinite(thi):
        values = range(int(slo), int(thi))
    elif loop.step < 0 and math.isfinite(shi) and math.isfinite(tlo):
        values = range(int(tlo) + 1, int(shi) + 1)
    else:
        return inner
    inner.env[name] = Var(name)
    inner.domains[name] = values
    return inner
