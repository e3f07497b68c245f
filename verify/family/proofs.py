"""The obligations of a size family, as counterexample queries over symbolic sizes
(docs/design.md §21). Every query ranges over the sizes (their declared ranges and the
assumptions: `FamilySpace`) and over the kernel's own variables; `sat` is a family
member where the fact fails, minimized lexicographically in the sizes first (the
smallest counterexample size), then in the kernel variables.

- `decision`: a comparison the frontend made on sizes at compile time comes out the same
  for every member (else the kernel is lowered differently, or refused, there);
- `bounds`: every global load and store of the kernel stays inside its tensor, with the
  enclosing `if` conditions and `T.if_then_else` selections as assumptions (copies are
  clipped at a tensor's border, so they never leave it);
- `trips`: which trip-count cases (0, 1, 2 or more iterations) of a serial loop whose
  bounds are sizes some member reaches: the epoch verifier then runs per case;
- `exactly-once`: the grid, the tiles and the predicates partition the reduction's
  iteration space — each element of the global tensor that drives a reducer's
  contributions (verify.family.sources) enters the reducer exactly once.

The encoder is verify.epochs.bounds' (`_Encoder`), with the integers of the family lowering
read as their symbols (spec.symbolic.SizeInt)."""
from __future__ import annotations

import ast
from dataclasses import dataclass

import z3

from verify_reducer.spec import ir
from verify_reducer.spec.frontend.family import FamilyDecl
from verify_reducer.spec.printer import format_expr
from verify_reducer.spec.symbolic import Decision, SizeInt, symbol_of

from verify_reducer.verify.epochs.bounds import _Encoder
from verify_reducer.codegen.proofs.layout import size_var
from verify_reducer.codegen.proofs.obligation import Query
from verify_reducer.verify.epochs.scopes import Context, statements

OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


class AssumptionError(ValueError):
    """An assumption that does not translate (a name neither size nor constant)."""


@dataclass
class FamilySpace:
    """The sizes as Z3 Ints and the facts that bound them."""
    decl: FamilyDecl
    vars: dict[str, z3.ArithRef]
    facts: list

    @staticmethod
    def of(decl: FamilyDecl, constants: dict[str, object]) -> "FamilySpace":
        sizes = {s.name: size_var(s.name) for s in decl.sizes}
        facts = [z3.And(sizes[s.name] >= s.lo, sizes[s.name] <= s.hi) for s in decl.sizes]
        facts += [assumption_term(a.tree, sizes, constants) for a in decl.assumptions]
        return FamilySpace(decl, sizes, facts)

    def objectives(self) -> list[tuple[str, z3.ArithRef]]:
        return [(name, v) for name, v in self.vars.items()]

    def term(self, value) -> z3.ArithRef:
        """An integer of the family lowering as a Z3 term."""
        sym = symbol_of(value)
        if sym is None:
            raise TypeError(f"not an integer: {value!r}")
        return sym.to_z3(self.vars)


def assumption_term(node, sizes: dict, constants: dict[str, object]):
    """An assumption's AST (checked by spec.frontend.family) as a Z3 term."""
    if isinstance(node, ast.Constant):
        return z3.IntVal(node.value)
    if isinstance(node, ast.Name):
        if node.id in sizes:
            return sizes[node.id]
        value = constants.get(node.id)
        if isinstance(value, int) and not isinstance(value, bool):
            return z3.IntVal(int(value))
        raise AssumptionError(f"`{node.id}` is not an integer module constant")
    if isinstance(node, ast.UnaryOp):
        a = assumption_term(node.operand, sizes, constants)
        if isinstance(node.op, ast.Not):
            return z3.Not(a)
        return -a if isinstance(node.op, ast.USub) else a
    if isinstance(node, ast.BinOp):
        a = assumption_term(node.left, sizes, constants)
        b = assumption_term(node.right, sizes, constants)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            # Python's floor semantics for any divisor sign; a zero divisor is false
            q = z3.If(b > 0, a / b, -((-a) / b))
            return q if isinstance(node.op, ast.FloorDiv) else a - b * q
        return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}[type(node.op)]
    if isinstance(node, ast.BoolOp):
        parts = [assumption_term(v, sizes, constants) for v in node.values]
        return z3.And(*parts) if isinstance(node.op, ast.And) else z3.Or(*parts)
    if isinstance(node, ast.Compare):
        parts, left = [], assumption_term(node.left, sizes, constants)
        for op, right_node in zip(node.ops, node.comparators):
            right = assumption_term(right_node, sizes, constants)
            parts.append(OPS[{ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
                              ast.Eq: "==", ast.NotEq: "!="}[type(op)]](left, right))
            left = right
        return z3.And(*parts)
    raise AssumptionError(f"{ast.unparse(node)!r} is not an integer condition")


class FamilyEncoder(_Encoder):
    """verify.epochs.bounds' encoder, reading sizes as their symbols."""

    def __init__(self, ctx: Context, space: FamilySpace):
        super().__init__(ctx)
        self.space = space

    def term(self, e: ir.Expr, depth: int = 0):
        if isinstance(e, ir.Const) and isinstance(e.value, SizeInt):
            return self.space.term(e.value)
        return super().term(e, depth)

    def var(self, v: ir.Var, depth: int):
        b = self.ctx.lookup(v)
        if b is not None and b.kind in ("block", "parallel"):
            if v.name not in self.vars:
                t = z3.Int(v.name)
                self.vars[v.name] = t
                self.facts += [t >= 0, t < self.space.term(b.extent)]
            return self.vars[v.name]
        return super().var(v, depth)


def loads_with_conditions(e: ir.Expr, conds: tuple = ()):
    """(Load, the Select conditions under which it is evaluated) of e."""
    if isinstance(e, ir.Load):
        yield e, conds
        for i in e.indices:
            yield from loads_with_conditions(i, conds)
    elif isinstance(e, ir.Select):
        yield from loads_with_conditions(e.cond, conds)
        yield from loads_with_conditions(e.a, conds + ((e.cond, True),))
        yield from loads_with_conditions(e.b, conds + ((e.cond, False),))
    elif isinstance(e, (ir.Binary, ir.Compare, ir.Logical)):
        yield from loads_with_conditions(e.a, conds)
        yield from loads_with_conditions(e.b, conds)
    elif isinstance(e, (ir.Unary, ir.Cast)):
        yield from loads_with_conditions(e.a, conds)
    elif isinstance(e, ir.Call):
        for a in e.args:
            yield from loads_with_conditions(a, conds)


def size_text(values: dict[str, int], space: FamilySpace) -> str:
    return ", ".join(f"{name}={values[name]}" for name in space.vars)


def kernel_text(values: dict[str, int], names) -> str:
    return ", ".join(f"{n}={values[n]}" for n in names if n in values)


# ----------------------------------------------------------------------------- decisions

def decision_query(d: Decision, where: str, space: FamilySpace, line: int | None) -> Query:
    a, b = d.a.to_z3(space.vars), d.b.to_z3(space.vars)
    holds = OPS[d.op](a, b)
    flipped = z3.Not(holds) if d.outcome else holds

    def explain(w: dict[str, int]) -> str:
        return (f"at {size_text(w, space)} the compile-time comparison `{d.a} {d.op} {d.b}`"
                f"{where} is {not d.outcome}, not {d.outcome} as at the file's sizes: the "
                f"kernel is lowered differently (or refused) there")
    return Query(f"decision {d.a} {d.op} {d.b}", space.facts + [flipped],
                 space.objectives(), explain, line)


# ----------------------------------------------------------------------------- bounds

@dataclass(frozen=True)
class Access:
    buffer: ir.Buffer
    indices: tuple[ir.Expr, ...]
    conds: tuple
    ctx: Context
    span: object
    kind: str                 # "reads" | "writes"


def global_accesses(kernel: ir.Kernel) -> list[Access]:
    out = []
    for stmt, ctx in statements(kernel):
        if isinstance(stmt, (ir.Store, ir.AtomicUpdate)) and stmt.buffer.scope == "global":
            out.append(Access(stmt.buffer, stmt.indices, (), ctx, stmt.span, "writes"))
        for e in ir.stmt_exprs(stmt):
            for load, conds in loads_with_conditions(e):
                if load.buffer.scope == "global":
                    out.append(Access(load.buffer, load.indices, conds, ctx, load.span,
                                      "reads"))
    return out


def bounds_query(access: Access, space: FamilySpace) -> Query:
    enc = FamilyEncoder(access.ctx, space)
    idx = [enc.term(i) for i in access.indices]
    shape = [space.term(n) for n in access.buffer.shape]
    outside = z3.Or(*[z3.Or(i < 0, i >= n) for i, n in zip(idx, shape)])
    # the guards first: encoding them may meet variables (and add their ranges to
    # enc.facts) that no index mentions
    assumptions = enc.guards() + enc.assumed(access.conds)
    constraints = space.facts + enc.facts + assumptions + [outside]
    written = f"{access.buffer.name}[{', '.join(format_expr(i) for i in access.indices)}]"
    kernel_vars = list(enc.vars.items())
    reported = kernel_vars + [(f"#idx{d}", t) for d, t in enumerate(idx)] + \
        [(f"#dim{d}", t) for d, t in enumerate(shape)]

    def explain(w: dict[str, int]) -> str:
        point = ", ".join(str(w[f"#idx{d}"]) for d in range(len(idx)))
        dims = ", ".join(str(w[f"#dim{d}"]) for d in range(len(shape)))
        return (f"at {size_text(w, space)} `{written}` (line {access.span.line}) "
                f"{access.kind} {access.buffer.name}[{point}] outside its shape "
                f"[{dims}] ({kernel_text(w, [n for n, _ in kernel_vars])})")
    return Query(f"bounds {written} line {access.span.line}", constraints,
                 space.objectives(), explain, access.span.line, reported=reported)


# ----------------------------------------------------------------------------- trips

CASES = ((0, "runs zero times"), (1, "runs once"), (2, "runs two or more times"))


def trip_case_term(loop: ir.SerialFor, enc: FamilyEncoder, case: int):
    """The condition that loop runs `case` times (0, 1, or 2 meaning two or more)."""
    start, stop = enc.term(loop.start), enc.term(loop.stop)
    span = stop - start if loop.step > 0 else start - stop
    step = abs(loop.step)
    if case == 0:
        return span <= 0
    if case == 1:
        return z3.And(span > 0, span <= step)
    return span > step


def size_loops(kernel: ir.Kernel) -> list[tuple[ir.SerialFor, Context]]:
    """The serial loops whose bounds depend on a size."""
    out = []
    for stmt, ctx in statements(kernel):
        if isinstance(stmt, ir.SerialFor) and any(
                isinstance(x, ir.Const) and isinstance(x.value, SizeInt)
                and symbol_of(x.value).free_vars()
                for e in (stmt.start, stmt.stop) for x in ir.subexprs(e)):
            out.append((stmt, ctx))
    return out
