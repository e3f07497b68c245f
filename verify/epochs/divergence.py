"""R207: is a finalize reached by every thread of its participant set together?

A finalize is a collective: every participant must reach it, or the all-reduce waits for
threads that never come (or combines partials of threads that left). Control flow is
**thread-divergent** when different threads of one block can take different paths:

- a condition (or loop bound) that depends on `T.get_thread_binding()`;
- one that depends on a `T.Parallel` variable: its iterations are spread over threads;
- one that reads a fragment, local or reducer buffer: those hold per-thread values;
- one that reads a `Let` name or serial loop variable whose value is divergent;
- the body of a `T.Parallel` loop itself.

Block-uniform values are fine: block indices, constants, serial loop variables with
uniform bounds, and shared or global memory read at a uniform index. A `T.ws` block is
not divergent: the warp group it names is the participant set of what is inside it."""
from __future__ import annotations

from dataclasses import dataclass

from verify_reducer.spec import ir
from verify_reducer.spec.printer import format_expr

from verify_reducer.verify.epochs.scopes import Context, Frame

_PER_THREAD_SCOPES = ("fragment", "local", "reducer")


@dataclass(frozen=True)
class Divergence:
    frame: Frame           # the region whose entry is divergent
    why: str               # what makes it divergent, in the program's terms


def divergent_cause(e: ir.Expr, ctx: Context, depth: int = 0) -> str | None:
    """Why e can differ between the threads of a block, or None if it cannot."""
    if depth > 32:
        return None
    for sub in ir.subexprs(e):
        if isinstance(sub, ir.ThreadBinding):
            return "it depends on the thread index `T.get_thread_binding()`"
        if isinstance(sub, ir.Load) and sub.buffer.scope in _PER_THREAD_SCOPES:
            return (f"it reads `{format_expr(sub)}`, and {sub.buffer.scope} buffer "
                    f"`{sub.buffer.name}` holds per-thread values")
        if isinstance(sub, ir.Var):
            why = _var_cause(sub, ctx, depth)
            if why:
                return why
    return None


def _var_cause(v: ir.Var, ctx: Context, depth: int) -> str | None:
    b = ctx.lookup(v)
    if b is None or b.kind == "block":
        return None
    if b.kind == "parallel":
        return (f"it depends on `{v.name}`, a T.Parallel loop variable whose iterations "
                f"run on different threads")
    if b.kind == "let":
        if isinstance(b.let.value, ir.ThreadBinding):
            return f"`{v.name}` is the thread index `T.get_thread_binding()`"
        inner = divergent_cause(b.let.value, ctx, depth + 1)
        return f"`{v.name}` is `{format_expr(b.let.value)}`, and {inner}" if inner else None
    for bound in (b.loop.start, b.loop.stop):
        inner = divergent_cause(bound, ctx, depth + 1)
        if inner:
            return f"the bounds of loop variable `{v.name}` are divergent: {inner}"
    return None


def divergence(ctx: Context) -> Divergence | None:
    """The outermost divergent region around a statement, or None if it is uniform."""
    for frame in ctx.scope:
        s = frame.stmt
        if isinstance(s, ir.ParallelFor):
            return Divergence(frame, "each iteration of a T.Parallel loop may run on a "
                                     "different thread")
        if isinstance(s, ir.If):
            why = divergent_cause(s.cond, ctx)
            if why:
                return Divergence(frame, f"its condition `{format_expr(s.cond)}` is not the "
                                         f"same for all threads: {why}")
        if isinstance(s, ir.SerialFor):
            for bound in (s.start, s.stop):
                why = divergent_cause(bound, ctx)
                if why:
                    return Divergence(frame, f"its trip count can differ between "
                                             f"threads: {why}")
    return None
