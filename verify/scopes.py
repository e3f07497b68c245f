"""Where a statement sits: the chain of control regions around it and the names bound there.

A **scope** is the tuple of frames from the kernel body down to the statement list that
holds the statement. A frame is one control region: the body of a `T.Parallel` or serial
loop, one arm of an `if` (then and else are different frames), or a `T.ws` block. Two
statements are in the same scope exactly when they sit in the same statement list. This
is the notion R208 compares for a reducer's init and finalize."""
from __future__ import annotations

from dataclasses import dataclass, field

from spec import ir

from .exprtext import show


@dataclass(frozen=True, eq=False)
class Frame:
    stmt: ir.ParallelFor | ir.SerialFor | ir.If | ir.WarpGroup
    arm: str                       # "body" | "then" | "else"

    def key(self) -> tuple[int, str]:
        return (id(self.stmt), self.arm)

    def describe(self) -> str:
        """The region in the program's terms: "the `if bx < 2` branch at line 9"."""
        s = self.stmt
        line = s.span.line
        if isinstance(s, ir.ParallelFor):
            names = ", ".join(v.name for v in s.vars)
            return f"the T.Parallel loop over {names} at line {line}"
        if isinstance(s, ir.SerialFor):
            return f"the loop over {s.var.name} at line {line}"
        if isinstance(s, ir.If):
            if self.arm == "then":
                return f"the `if {show(s.cond)}` branch at line {line}"
            return f"the `else` branch of the `if {show(s.cond)}` at line {line}"
        groups = ", ".join(str(g) for g in s.groups)
        return f"the `with T.ws({groups})` block at line {line}"


Scope = tuple[Frame, ...]


def same_scope(a: Scope, b: Scope) -> bool:
    return [f.key() for f in a] == [f.key() for f in b]


def describe_scope(scope: Scope) -> str:
    if not scope:
        return "at the top level of the kernel"
    return f"inside {scope[-1].describe()}"


@dataclass(frozen=True)
class Binding:
    """What a variable name denotes at a program point."""
    kind: str                      # "block" | "parallel" | "serial" | "let"
    var: ir.Var
    extent: int | None = None      # block and T.Parallel variables: 0 <= v < extent
    loop: ir.SerialFor | None = None
    let: ir.Let | None = None


@dataclass(frozen=True)
class Context:
    """Everything the local checks need about a statement's position."""
    kernel: ir.Kernel
    scope: Scope
    bindings: dict[str, Binding] = field(default_factory=dict)

    def lookup(self, var: ir.Var) -> Binding | None:
        return self.bindings.get(var.name)

    def guards(self) -> list[tuple[ir.Expr, bool]]:
        """The `if` conditions that hold here, each with the polarity of its arm."""
        return [(f.stmt.cond, f.arm == "then") for f in self.scope if isinstance(f.stmt, ir.If)]

    def enter(self, frame: Frame) -> "Context":
        bindings = dict(self.bindings)
        s = frame.stmt
        if isinstance(s, ir.ParallelFor):
            for v, n in zip(s.vars, s.extents):
                bindings[v.name] = Binding("parallel", v, extent=n)
        elif isinstance(s, ir.SerialFor):
            bindings[s.var.name] = Binding("serial", s.var, loop=s)
        return Context(self.kernel, self.scope + (frame,), bindings)

    def bind_let(self, let: ir.Let) -> "Context":
        bindings = dict(self.bindings)
        bindings[let.var.name] = Binding("let", let.var, let=let)
        return Context(self.kernel, self.scope, bindings)


def kernel_context(kernel: ir.Kernel) -> Context:
    bindings = {v.name: Binding("block", v, extent=n)
                for v, n in zip(kernel.block_vars, kernel.grid)}
    return Context(kernel, (), bindings)
