"""A pipelined `T.Pipelined` loop's cp.async schedule, as ordered events (issue 26).

    lower_pipeline(plan, pipe) -> AsyncSchedule
    schedule.describe() -> text

The plan's Pipeline (spec.physical, planned by codegen.pipeline) says what is pipelined:
which copies are staged, how many stages, how far ahead, how many groups a wait leaves
in flight, where a stage is released. This module decides once, in order, what happens:
the prologue before the loop, one iteration of the steady state (the loop variable free
in its expressions), and the epilogue after it. The events:

    Fence(barrier)                 the plan's BodyBarrier (codegen.plan_barriers) here
    Issue(iteration, ...)          the tiles of `iteration` as cp.async, into its stage
    Commit()                       closes this thread's open group of copies
    Wait(pending)                  wait_group: every group but the newest `pending` lands
    EnterStage(iteration)          the body from here reads stage(iteration)
    Run(stmt)                      a statement of the body (a staged read's stand-in)
    Prefetch(iteration, copies)    those copies of `iteration` into the `_next` registers
    Advance(copy, prefetch)        the registers loaded an iteration ago into the fragment,
                                   then the next iteration's load (`prefetch`)
    LeaveStage()                   the stage of the iteration is no longer read
    Drained()                      the claim that no copy is in flight after the loop
    WhileRunning(run, events)      a statement issued asynchronously (wgmma), and events
                                   issued before it waits (the refill of a gemm loop)

An iteration is a spec.indexexpr expression of the loop variable (a constant in the
prologue); a stage index is `stage(iteration) = (iteration - start) % stages`, and a
staged buffer's stage starts at element stage * buffer.size. A guarded event runs only
when its iteration is below the loop's stop (issued past the end, a group is empty). A
stop read at run time from the block indices guards the prologue's issues too: a block
whose loop runs fewer iterations than the prologue fills issues only those.

codegen.cuda_pipeline prints the events in order and decides none of them;
interp.sim_pipeline executes the same events (and checks the Drained claim: a copy
still in flight is R504). How a copy's elements are partitioned among the threads is a
copy's lowering (codegen.lower.copies), not this module's."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import loop_variable_range
from verify_reducer.spec.indexexpr import Const, IndexExpr, mod, var
from verify_reducer.spec.physical import BodyBarrier, Pipeline, PhysicalPlan

ITERATION = "iteration"            # the variable of AsyncSchedule.stage_index


@dataclass(frozen=True)
class Fence:
    barrier: BodyBarrier


@dataclass(frozen=True)
class Issue:
    """The copies of one iteration issued as cp.async into its stage. `ordinal` is the
    iteration counted from 0 when it is known before the loop (the prologue); `guarded`:
    tested against the loop's stop at run time; `empty`: known to be past the end, so
    nothing is issued (the group committed after it is empty)."""
    iteration: IndexExpr
    copies: tuple[ir.Copy, ...]
    ordinal: int | None = None
    guarded: bool = False
    empty: bool = False


@dataclass(frozen=True)
class Commit:
    pass


@dataclass(frozen=True)
class Wait:
    pending: int


@dataclass(frozen=True)
class EnterStage:
    iteration: IndexExpr


@dataclass(frozen=True)
class LeaveStage:
    pass


@dataclass(frozen=True)
class Run:
    stmt: ir.Stmt


@dataclass(frozen=True)
class Prefetch:
    """`copies` of `iteration` loaded into their fragments' second register arrays;
    guarded: only when iteration is below the loop's stop."""
    iteration: IndexExpr
    copies: tuple[ir.Copy, ...]
    guarded: bool = False


@dataclass(frozen=True)
class Advance:
    copy: ir.Copy
    prefetch: Prefetch


@dataclass(frozen=True)
class Drained:
    pass


@dataclass(frozen=True)
class WhileRunning:
    """A body statement that runs asynchronously (a T.gemm that wgmma issues) with
    `events` issued while it runs: after its instructions are issued, before it waits
    for them. The simulator runs the events first, so what they issue is in flight for
    the whole statement (a read of it by the statement is R504)."""
    run: Run
    events: tuple


Event = Union[Fence, Issue, Commit, Wait, EnterStage, LeaveStage, Run, Prefetch, Advance,
              Drained, WhileRunning]


@dataclass(frozen=True)
class AsyncSchedule:
    """The events of one pipelined loop: `prologue` before it, `iteration` once per
    iteration (the loop variable `loop.var.name` free in their iterations), `epilogue`
    after it. `buffers` are the staged shared buffers, `stages` copies of each."""
    loop: ir.SerialFor
    start: int
    stop: int | ir.Expr           # an expression where the loop's stop is read at run time
    stages: int
    buffers: tuple[ir.Buffer, ...]
    prologue: tuple[Event, ...]
    iteration: tuple[Event, ...]
    epilogue: tuple[Event, ...]
    stage_index: IndexExpr        # the stage of iteration ITERATION: (it - start) % stages
    stop_bound: int = 0           # the largest stop over the grid (= stop when constant)

    def stage(self, iteration: IndexExpr) -> IndexExpr:
        return self.stage_index.substitute({ITERATION: iteration})

    def stage_offset(self, buffer: ir.Buffer, iteration: IndexExpr) -> IndexExpr:
        """The element offset of iteration's stage of a staged buffer."""
        return self.stage(iteration) * buffer.size

    def describe(self) -> str:
        loop = self.loop
        stop = self.stop if isinstance(self.stop, int) else \
            f"a stop read at run time, at most {self.stop_bound}"
        lines = [f"line {loop.span.line}: T.Pipelined {loop.var.name} in "
                 f"[{self.start}, {stop}), {self.stages} stages of "
                 f"{', '.join(b.name for b in self.buffers) or 'no shared buffer'}; "
                 f"stage({ITERATION}) = {self.stage_index}"]
        for title, events in (("prologue", self.prologue),
                              (f"each iteration {loop.var.name}", self.iteration),
                              ("epilogue", self.epilogue)):
            lines.append(f"  {title}:")
            lines.extend(f"    {_event_text(e)}" for e in events)
        return "\n".join(lines)


def lower_pipeline(plan: PhysicalPlan, pipe: Pipeline) -> AsyncSchedule:
    """The schedule of an active pipeline (pipe.active) of plan."""
    loop = pipe.loop
    start = int(loop.start.value)
    # a stop read at run time (codegen.pipeline: bounded over the grid) guards every issue
    stop = int(loop.stop.value) if isinstance(loop.stop, ir.Const) else loop.stop
    known = isinstance(stop, int)
    bound = stop if known else _stop_bound(plan, loop)
    counter = var(loop.var.name)

    def fence(where: str) -> tuple[Event, ...]:
        found = plan.barriers.at(loop, where)
        return () if found is None else (Fence(found),)

    def refill(iteration: IndexExpr) -> tuple[Event, ...]:
        return Issue(iteration, pipe.issues, guarded=True), Commit()

    prologue: list[Event] = list(fence("before"))
    for i in range(pipe.ahead if pipe.issues else 0):
        prologue += [Issue(Const(start + i), pipe.issues, ordinal=i, guarded=not known,
                           empty=start + i >= bound), Commit()]
    if pipe.prefetched:
        prologue.append(Prefetch(Const(start), pipe.prefetched))

    early = pipe.refill_after is not None
    steady: list[Event] = []
    if pipe.issues:
        if not early and not pipe.refill_at_landed:
            steady += refill(counter + pipe.ahead)
        steady += [Wait(pipe.pending), *fence("landed")]
    # the landed barrier released stage i - 1: refilled while the gemm runs on stage i
    # where wgmma issues it (the tensor cores start right after the barrier), else at once
    during = _asynchronous(plan, loop.body[-1]) if pipe.refill_at_landed else None
    if pipe.refill_at_landed and during is None:
        steady += refill(counter + pipe.ahead)
    steady.append(EnterStage(counter))
    for stmt in loop.body:
        if stmt in pipe.prefetched:
            steady.append(Advance(stmt, Prefetch(counter + 1, (stmt,), guarded=True)))
        elif stmt is during:
            steady.append(WhileRunning(Run(stmt), refill(counter + pipe.ahead)))
        elif stmt not in pipe.copies:            # a staged copy is issued ahead
            steady.append(Run(pipe.stand_in(stmt)))
        if stmt is pipe.refill_after:
            steady += [*fence("refill"), *refill(counter + pipe.ahead)]
    steady += [LeaveStage(), *fence("released")]
    return AsyncSchedule(loop, start, stop, pipe.stages, pipe.buffers, tuple(prologue),
                         tuple(steady), (Drained(),),
                         mod(var(ITERATION) - start, pipe.stages), bound)


def _asynchronous(plan: PhysicalPlan, stmt: ir.Stmt) -> ir.Gemm | None:
    """stmt, where it is a T.gemm that wgmma issues asynchronously (codegen.lower.gemm)."""
    if not isinstance(stmt, ir.Gemm):
        return None
    from .gemm import Unlowerable, lower_gemm    # loaded only for a pipelined gemm
    try:
        return stmt if lower_gemm(plan, stmt).wgmma is not None else None
    except Unlowerable:                 # the renderer refuses the plan, not this schedule
        return None


def _stop_bound(plan: PhysicalPlan, loop: ir.SerialFor) -> int:
    """One past the largest value the loop variable takes over the grid (the range
    spec.addressing derives from a stop read from the block indices)."""
    low, high = loop_variable_range(plan.statement_ranges(), loop)
    return int(high) + 1


def _copies_text(copies: tuple[ir.Copy, ...]) -> str:
    return ", ".join(f"line {c.span.line} {c.src.buffer.name} -> {c.dst.buffer.name}"
                     for c in copies)


def _event_text(e: Event) -> str:
    if isinstance(e, Fence):
        b = e.barrier
        first, count = b.participants
        return f"barrier ({b.where}, threads {first}..{first + count - 1}): " \
               f"{b.why.replace('{rows}', 'the rows')}"
    if isinstance(e, Issue):
        if e.empty:
            return f"issue nothing: iteration {e.iteration} is past the end"
        guard = " if it is below the stop" if e.guarded else ""
        return f"issue iteration {e.iteration}{guard} as cp.async into its stage: " \
               f"{_copies_text(e.copies)}"
    if isinstance(e, Commit):
        return "commit group"
    if isinstance(e, Wait):
        return f"wait_group {e.pending} (every group but the newest {e.pending} lands)"
    if isinstance(e, EnterStage):
        return f"read the stage of iteration {e.iteration}"
    if isinstance(e, LeaveStage):
        return "done with the stage"
    if isinstance(e, Run):
        return f"run line {e.stmt.span.line} ({type(e.stmt).__name__})"
    if isinstance(e, Prefetch):
        guard = " if it is below the stop" if e.guarded else ""
        return f"prefetch iteration {e.iteration}{guard} into registers: " \
               f"{_copies_text(e.copies)}"
    if isinstance(e, WhileRunning):
        return f"{_event_text(e.run)}, and while it runs: " + \
            "; ".join(_event_text(inner) for inner in e.events)
    if isinstance(e, Advance):
        return f"line {e.copy.span.line}: the prefetched registers into " \
               f"{e.copy.dst.buffer.name}, then {_event_text(e.prefetch)}"
    return "nothing in flight: every group issued has landed"
