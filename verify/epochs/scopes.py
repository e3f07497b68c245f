"""Where a statement sits: the chain of control regions around it and the names bound there.

The chain (`Scope`) is the tuple of frames from the kernel body down to the statement
list that holds the statement. A frame is one control region: the body of a `T.Parallel`
or serial loop, one arm of an `if` (then and else are different frames), or a `T.ws`
block.

The **scope R208 compares** is the statement's *epoch scope*: the chain of enclosing loops
(`T.Parallel`, `T.serial`, `T.Pipelined`, `T.unroll`, `range`) and `T.ws` blocks, each
identified by the statement that opens it. Init and finalize of one epoch must have the
same epoch scope: a loop between them makes one run a different number of times than the
other (finalized every iteration of an epoch opened once, or opened every iteration and
finalized once), and a `T.ws` block between them makes the finalize's collective run over
a different set of threads than the one whose partials the init reset.

`if` arms are not part of it. A block-uniform `if` changes neither how often nor by which
threads a statement runs; whether every path through it finalizes exactly once is decided
path by path by the state machine (a finalize on one arm only is R202 when the other path
may carry contributions, and legal when it cannot; a finalize on both arms is correct). A
thread-divergent `if` around a finalize is R207.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from verify_reducer.spec import ir
from verify_reducer.spec.printer import format_expr


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
                return f"the `if {format_expr(s.cond)}` branch at line {line}"
            return f"the `else` branch of the `if {format_expr(s.cond)}` at line {line}"
        groups = ", ".join(str(g) for g in s.groups)
        return f"the `with T.ws({groups})` block at line {line}"


Scope = tuple[Frame, ...]


def epoch_scope(scope: Scope) -> tuple[Frame, ...]:
    """The loops and `T.ws` blocks of a scope (R208 compares these)."""
    return tuple(f for f in scope if not isinstance(f.stmt, ir.If))


def same_epoch_scope(a: Scope, b: Scope) -> bool:
    return [f.key() for f in epoch_scope(a)] == [f.key() for f in epoch_scope(b)]


def describe_epoch_scope(scope: Scope) -> str:
    frames = epoch_scope(scope)
    return f"inside {frames[-1].describe()}" if frames else "outside every loop and T.ws block"


def participant_frame(scope: Scope) -> Frame | None:
    """The innermost `T.ws` block around a statement, or None (the whole block)."""
    for frame in reversed(scope):
        if isinstance(frame.stmt, ir.WarpGroup):
            return frame
    return None


def participants(scope: Scope, threads: int) -> tuple[int, ...]:
    """The thread indices that execute a statement of this scope together."""
    frame = participant_frame(scope)
    if frame is None:
        return tuple(range(threads))
    return tuple(t for g in sorted(set(frame.stmt.groups))
                 for t in range(128 * g, min(128 * g + 128, threads)))


def describe_participants(scope: Scope, threads: int) -> str:
    frame = participant_frame(scope)
    if frame is None:
        return f"by all {threads} threads of the block"
    ts = participants(scope, threads)
    groups = ", ".join(str(g) for g in frame.stmt.groups)
    span = f"threads {ts[0]}..{ts[-1]}" if ts else "no thread"
    return f"by warp group {groups} ({span}) in {frame.describe()}"


@dataclass(frozen=True)
class Binding:
    """What a variable name denotes at a program point."""
    kind: str                      # "block" | "parallel" | "serial" | "let"
    var: ir.Var
    extent: int | None = None      # block and T.Parallel variables: 0 <= v < extent
    loop: ir.SerialFor | None = None
    let: ir.Let | None = None


RECENT_LETS = 32


@dataclass(frozen=True)
class Context:
    """Everything the local checks need about a statement's position."""
    kernel: ir.Kernel
    scope: Scope
    bindings: dict[str, Binding] = field(default_factory=dict)
    # Let bindings made since `bindings` was last copied, newest last: a chain of 5,000
    # Lets would copy the whole dict at each one (quadratic, seconds); this way each
    # Let copies at most RECENT_LETS pairs and the dict once every RECENT_LETS Lets
    recent: tuple[tuple[str, Binding], ...] = ()

    def lookup(self, var: ir.Var) -> Binding | None:
        for name, binding in reversed(self.recent):
            if name == var.name:
                return binding
        return self.bindings.get(var.name)

    def _all_bindings(self) -> dict[str, Binding]:
        return {**self.bindings, **dict(self.recent)} if self.recent else dict(self.bindings)

    def guards(self) -> list[tuple[ir.Expr, bool]]:
        """The `if` conditions that hold here, each with the polarity of its arm."""
        return [(f.stmt.cond, f.arm == "then") for f in self.scope if isinstance(f.stmt, ir.If)]

    def enter(self, frame: Frame) -> "Context":
        bindings = self._all_bindings()
        s = frame.stmt
        if isinstance(s, ir.ParallelFor):
            for v, n in zip(s.vars, s.extents):
                bindings[v.name] = Binding("parallel", v, extent=n)
        elif isinstance(s, ir.SerialFor):
            bindings[s.var.name] = Binding("serial", s.var, loop=s)
        return Context(self.kernel, self.scope + (frame,), bindings)

    def bind_let(self, let: ir.Let) -> "Context":
        binding = (let.var.name, Binding("let", let.var, let=let))
        if len(self.recent) < RECENT_LETS:
            return Context(self.kernel, self.scope, self.bindings, self.recent + (binding,))
        bindings = self._all_bindings()
        bindings[binding[0]] = binding[1]
        return Context(self.kernel, self.scope, bindings)


def kernel_context(kernel: ir.Kernel) -> Context:
    bindings = {v.name: Binding("block", v, extent=n)
                for v, n in zip(kernel.block_vars, kernel.grid)}
    return Context(kernel, (), bindings)


def statements(kernel: ir.Kernel):
    """(statement, its Context) for every statement of the kernel, in source order (a
    statement before the ones it holds; a Let's binding in force after it)."""
    def seq(body, ctx):
        for s in body:
            yield s, ctx
            if isinstance(s, ir.Let):
                ctx = ctx.bind_let(s)
            elif isinstance(s, ir.If):
                yield from seq(s.then, ctx.enter(Frame(s, "then")))
                yield from seq(s.orelse, ctx.enter(Frame(s, "else")))
            elif isinstance(s, (ir.ParallelFor, ir.SerialFor, ir.WarpGroup)):
                yield from seq(s.body, ctx.enter(Frame(s, "body")))
    yield from seq(kernel.body, kernel_context(kernel))
