"""The thread program: every per-thread decision of one kernel, gathered in one value.

    program = lower(plan)            # a ThreadProgram
    program.of(stmt, "copy")         # what one concern decided for one statement
    print(program.describe())        # `verify-reducer emit --what threads`

Each concern of this package lowers the statements it owns; LOWERINGS is their
registered list, in the order their notes print under a statement. An entry is a
function of the plan giving (statement, concern, decision, text) for each statement it
decides something for: the decision is the concern's plain data (what the simulator
executes and the renderer prints), the text its one-line description. The kernel body
is then printed as the program's IR, each statement followed by what the thread program
does for it, so a reader sees per statement: its barriers, the cells each thread
visits, the elements a copy moves and how, the pipeline's events, the atomics issued."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from verify_reducer.spec import ir
from verify_reducer.spec.physical import PhysicalPlan
from verify_reducer.spec.printer import headline

from . import atomics, cells, copies, gemm, pipeline, reduce

INDENT = "    "


@dataclass(frozen=True)
class Lowered:
    """One concern's decision for one statement."""
    stmt: ir.Stmt
    concern: str
    decision: object
    text: str


Lowering = Callable[[PhysicalPlan], Iterator[Lowered]]


def _barriers(plan: PhysicalPlan) -> Iterator[Lowered]:
    """The plan's barriers (decided by codegen.plan_barriers), each under its statement."""
    for b in plan.barriers.items:
        first, count = b.participants
        who = "__syncthreads()" if b.id == 0 else \
            f"bar.sync {b.id}, {b.arrivals}" if b.id is not None else "no free named barrier"
        yield Lowered(b.stmt, "barrier", b,
                      f"{b.where}: {who}, threads {first}..{first + count - 1}: "
                      f"{b.why.replace('{rows}', 'the rows')}")


def _one_writer(plan: PhysicalPlan) -> Iterator[Lowered]:
    for loop in plan.one_writer_loops:
        yield Lowered(loop, "one writer", True,
                      "only replica 0 of the loop's layout runs the body (a replicated "
                      "layout would write each shared element several times)")


def _reducer_sites(plan: PhysicalPlan) -> Iterator[Lowered]:
    """Each update site's contributors (the reducer's plan, codegen.plan_sites)."""
    for rp in plan.reducers:
        for site in rp.sites:
            who = "every replica contributes" if site.guard_replica is None else \
                f"only replica {site.guard_replica} of the loop's layout contributes"
            yield Lowered(site.update, "update", site,
                          f"{rp.planner}: {who}; partials {rp.storage.describe()}")


def _step_kind(step) -> str:
    return type(step).__name__


def _finalizes(plan: PhysicalPlan) -> Iterator[Lowered]:
    """Each finalize's steps (spec.physical: shuffles, workspace, barriers, the
    publication), which interp.collective executes and codegen.cuda_collectives prints."""
    for rp in plan.reducers:
        for fp in rp.finalizes:
            steps = [s for c in fp.chunks for s in c.steps]
            kinds = ", ".join(f"{n}× {k}" for k, n in sorted(
                {k: sum(_step_kind(s) == k for s in steps) for k in map(_step_kind, steps)}
                .items()))
            publish = "; published from the workspace" if fp.publish is not None else ""
            yield Lowered(fp.finalize, "finalize", fp,
                          f"{len(fp.chunks)} chunk(s) over groups of {fp.width} (scale "
                          f"{fp.scale}), barrier {fp.barrier_id}: {kinds or 'no steps'}"
                          f"{publish}")


def _gemms(plan: PhysicalPlan) -> Iterator[Lowered]:
    """Each gemm's accumulator slots and operand reads (codegen.lower.gemm)."""
    for stmt in ir.walk(plan.func.kernel.body):
        if isinstance(stmt, ir.Gemm):
            decision = gemm.lower_gemm(plan, stmt)
            yield Lowered(stmt, "gemm", decision, decision.describe())


def _reduces(plan: PhysicalPlan) -> Iterator[Lowered]:
    """Each T.reduce_* of a fragment into a fragment folded by warp shuffles
    (codegen.lower.reduce); the others go through shared rows (their barriers above)."""
    for stmt in ir.walk(plan.func.kernel.body):
        if isinstance(stmt, ir.Reduce):
            decision = reduce.lower_reduce(plan, stmt)
            if decision is not None:
                yield Lowered(stmt, "reduce", decision, decision.describe())


def _atomics(plan: PhysicalPlan) -> Iterator[Lowered]:
    """Each atomic's issuers and instruction (codegen.lower.atomics)."""
    for stmt, issue in atomics.atomic_lowering(plan):
        yield Lowered(stmt, "atomic", issue, issue.describe())


def _cell_loops(plan: PhysicalPlan) -> Iterator[Lowered]:
    """Each T.Parallel's cells: which iteration each (thread, slot) runs
    (codegen.lower.cells)."""
    for loop, cells_of in cells.loop_cells(plan):
        yield Lowered(loop, "cells", cells_of, cells_of.describe())


def _copies_and_fills(plan: PhysicalPlan) -> Iterator[Lowered]:
    """Each T.copy's and T.fill's partition, accesses and border tests
    (codegen.lower.copies); a copy no thread program can move says why."""
    participants = plan.layouts.participants
    for stmt in ir.walk(plan.func.kernel.body):
        if not isinstance(stmt, (ir.Copy, ir.Fill)) or stmt not in participants:
            continue
        lowering = copies.lower_copy if isinstance(stmt, ir.Copy) else copies.lower_fill
        try:
            moves = lowering(plan, stmt, participants[stmt])
        except copies.Unlowerable as why:
            yield Lowered(stmt, "copy", None, f"not lowered: {why}")
            continue
        yield Lowered(stmt, "copy" if isinstance(stmt, ir.Copy) else "fill", moves,
                      moves.describe())


def _pipelines(plan: PhysicalPlan) -> Iterator[Lowered]:
    """Each pipelined loop's cp.async schedule (codegen.lower.pipeline)."""
    for pipe in plan.pipelines:
        if pipe.active:
            schedule = pipeline.lower_pipeline(plan, pipe)
            yield Lowered(pipe.loop, "pipeline", schedule, schedule.describe())


LOWERINGS: list[tuple[str, Lowering]] = [
    ("barrier", _barriers),
    ("one writer", _one_writer),
    ("pipeline", _pipelines),
    ("cells", _cell_loops),
    ("copy", _copies_and_fills),
    ("update", _reducer_sites),
    ("finalize", _finalizes),
    ("gemm", _gemms),
    ("reduce", _reduces),
    ("atomic", _atomics),
]


@dataclass(frozen=True)
class ThreadProgram:
    plan: PhysicalPlan
    items: tuple[Lowered, ...]

    def __post_init__(self):
        index: dict = {}
        for item in self.items:
            index.setdefault(item.stmt, []).append(item)
        object.__setattr__(self, "_by_stmt", index)

    def at(self, stmt: ir.Stmt) -> list[Lowered]:
        """Every decision for stmt, in LOWERINGS order."""
        return self._by_stmt.get(stmt, [])

    def of(self, stmt: ir.Stmt, concern: str):
        """The decision of one concern for stmt (None: it decided nothing for it)."""
        return next((i.decision for i in self.at(stmt) if i.concern == concern), None)

    def describe(self) -> str:
        func, plan = self.plan.func, self.plan
        k = func.kernel
        lines = [f"thread program of {func.name}: grid {tuple(k.grid)}, {k.threads} threads, "
                 f"plan {plan.planner} (each statement by its line, then what every thread "
                 f"does for it)"]
        self._body(k.body, 0, lines)
        return "\n".join(lines)

    def _body(self, body: ir.Body, depth: int, lines: list[str]) -> None:
        for stmt in body:
            pad = INDENT * depth
            lines.append(f"{stmt.span.line:>5}  {pad}{headline(stmt)}")
            for item in self.at(stmt):
                first, *more = item.text.splitlines() or [""]
                lines.append(f"       {pad}  | {item.concern}: {first}")
                lines += [f"       {pad}  |   {line}" for line in more]
            for sub in ir.children(stmt):
                self._body(sub, depth + 1, lines)


def lower(plan: PhysicalPlan) -> ThreadProgram:
    """Every concern's decisions for the plan's kernel."""
    items = [item for _, lowering in LOWERINGS for item in lowering(plan)]
    return ThreadProgram(plan, tuple(items))


def program_json(program: ThreadProgram) -> list[dict]:
    """`emit --what threads --json`: every decision, in kernel order, with its
    statement's line and text."""
    return [{"line": stmt.span.line, "statement": headline(stmt), "concern": item.concern,
             "text": item.text}
            for stmt in ir.walk(program.plan.func.kernel.body) for item in program.at(stmt)]
