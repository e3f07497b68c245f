"""A pipelined `T.Pipelined` loop as CUDA: the events of its cp.async schedule
(codegen.lower.pipeline.AsyncSchedule, which interp.sim_pipeline executes), printed in
order; this module decides none of them. For the usual schedule:

    // prologue: iterations 0 .. ahead-1 issue their tiles, one commit group each
    for (ko = start; ko < stop; ++ko) {
      if (ko + ahead < stop) issue the tiles of iteration ko + ahead;  // its stage
      commit;                       // one group per iteration, empty past the end
      wait until at most `pending` groups of this thread are outstanding;
      __syncthreads();              // every thread's copies of this stage landed
      the rest of the body, reading stage (ko - start) % stages;
      __syncthreads();              // every read of the stage is done before a refill
    }

A tile goes out as one cp.async of 16 bytes per run of the copy's lowered vector
(codegen.lower.copies), into the stage's copy of the shared buffer at element offset
stage × the elements a stage occupies (PhysicalPlan.shared_elements: padded rows
included). A staged
read's tile goes out the same way, into its stage buffer; where its copy stands, the
body reads the fragment from that stage. The barriers are the plan's."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.physical import Pipeline, PhysicalPlan

from .cuda_access import Frame
from .lower.pipeline import (Advance, AsyncSchedule, Commit, EnterStage, Fence, Issue,
                             LeaveStage, Prefetch, Run, Wait, WhileRunning, lower_pipeline)
from .lower.copies import lower_copy
from .plan_text import pipeline_summary


def plain_reason(plan: PhysicalPlan, loop: ir.SerialFor) -> str:
    """`: why` for a T.Pipelined loop that runs plainly (the plan says why)."""
    found = next((p for p in plan.pipelines if p.loop is loop), None)
    return f" ({found.plain})" if found is not None and found.plain else ""


def render_pipeline(body, pipe: Pipeline, frame: Frame) -> None:
    schedule = lower_pipeline(body.plan, pipe)
    loop = pipe.loop
    var = body.var(loop.var.name)
    ctype = loop.var.dtype.c_name
    body.out.comment(f"line {loop.span.line}: T.Pipelined (num_stages={pipe.stages}) as a "
                     f"software pipeline: {pipeline_summary(pipe)}")
    printer = _Printer(body, schedule, frame, ctype)
    printer.events(schedule.prologue)
    with body.maybe_block(f"for ({ctype} {var} = {schedule.start}; {var} < {printer.stop}; "
                          f"++{var})"):
        printer.events(schedule.iteration)
    printer.events(schedule.epilogue)


class _Printer:
    """The events of one schedule as C, into body (codegen.cuda_stmts.KernelBody)."""

    def __init__(self, body, schedule: AsyncSchedule, frame: Frame, ctype: str):
        self.body, self.schedule, self.frame, self.ctype = body, schedule, frame, ctype
        stop = schedule.stop
        # a stop read at run time: its C expression (block indices and names bound
        # before the loop), the same the plain loop would test
        self.stop = str(stop) if isinstance(stop, int) else \
            body.exprs(frame).operand(stop, schedule.loop.var.dtype).text
        self.names = {schedule.loop.var.name: body.var(schedule.loop.var.name)}
        self.saved: list[dict] = []

    def c(self, iteration) -> str:
        return iteration.to_c(self.names)

    def events(self, events) -> None:
        body = self.body
        for event in events:
            kind = event.__class__
            if kind is Fence:
                body.fence(event.barrier.stmt, event.barrier.where)
            elif kind is Issue:
                self.issue(event)
            elif kind is Commit:
                body.out.line("reducer_cp_async_commit();")
            elif kind is Wait:
                body.out.line(f"reducer_cp_async_wait<{event.pending}>();")
            elif kind is EnterStage:
                self.saved.append(dict(body.stage_base))
                self.stage_bases(self.c(event.iteration), "stage")
            elif kind is LeaveStage:
                body.stage_base = self.saved.pop()
            elif kind is Run:
                body.stmt(event.stmt, self.frame)
            elif kind is Prefetch:
                body.out.comment(f"prologue: the registers of iteration "
                                 f"{event.iteration.value - self.schedule.start}")
                with body.maybe_block(""):
                    self.prefetch(event)
            elif kind is Advance:
                self.advance(event)
            elif kind is WhileRunning:
                # the gemm's renderer prints them after issuing its wgmmas
                body.while_in_flight = lambda inner=event.events: self.events(inner)
                body.stmt(event.run.stmt, self.frame)
                assert body.while_in_flight is None, "the statement printed no wait"
            # Drained: the kernel waits for nothing after the loop (the simulator
            # checks that nothing is in flight there)

    def issue(self, event: Issue) -> None:
        """The copies of one later iteration into its stage."""
        body = self.body
        if event.ordinal is not None:
            body.out.comment(f"prologue: the tiles of iteration {event.ordinal}")
        if event.empty:
            return
        guard = f"if ({self.c(event.iteration)} < {self.stop})" if event.guarded \
            else ""
        with body.maybe_block(guard):
            ahead = f"{self.names[self.schedule.loop.var.name]}_ahead"
            body.out.line(f"const {self.ctype} {ahead} = {self.c(event.iteration)};")
            previous = dict(body.stage_base), dict(body.rebound)
            body.rebound[self.schedule.loop.var.name] = ahead
            self.stage_bases(ahead, "fill")
            for copy in event.copies:
                _async_copy(body, copy, self.frame)
            body.stage_base, body.rebound = previous

    def stage_bases(self, iteration: str, role: str) -> None:
        """Declares `<buffer>_<role>`, the element offset of iteration's stage (the
        schedule's stage_offset) of every staged buffer, and makes the buffers'
        accesses use it."""
        body, s = self.body, self.schedule
        for buffer in s.buffers:
            base = f"{body.buffer(buffer)}_{role}"
            body.out.line(f"const int {base} = (({iteration} - {s.start}) % {s.stages}) * "
                          f"{body.plan.shared_elements(buffer)};")
            body.stage_base[buffer] = base

    def prefetch(self, event: Prefetch) -> None:
        """The prefetched copies of one iteration into the `_next` registers."""
        body = self.body
        name = self.schedule.loop.var.name
        ahead = f"{self.names[name]}_next"
        body.out.line(f"const {self.ctype} {ahead} = {self.c(event.iteration)};")
        previous = dict(body.redirected), dict(body.rebound)
        body.rebound[name] = ahead
        for copy in event.copies:
            body.redirected[copy.dst.buffer] = body.next_tile(copy.dst.buffer)
            body.stmt(copy, self.frame)
        body.redirected, body.rebound = previous

    def advance(self, event: Advance) -> None:
        """Where a prefetched copy stands: its registers, loaded an iteration ago, move
        into the fragment, and the next iteration's load goes out."""
        body, copy = self.body, event.copy
        dst = copy.dst.buffer
        name, spare = body.buffer(dst), body.next_tile(dst)
        slots = body.layouts.fragment(dst).slots_per_thread
        body.out.comment(f"line {copy.span.line}: T.copy {copy.src.buffer.name} -> "
                         f"{dst.name}, loaded an iteration ago into {spare}")
        body.out.line("#pragma unroll")
        with body.maybe_block(f"for (int slot = 0; slot < {slots}; ++slot)"):
            body.out.line(f"{name}[slot] = {spare}[slot];")
        with body.maybe_block(f"if ({self.c(event.prefetch.iteration)} < {self.stop})"):
            self.prefetch(event.prefetch)


def _async_copy(body, copy: ir.Copy, frame: Frame) -> None:
    """One staged copy as cp.async of 16 bytes per run of its lowered vector
    (codegen.lower.copies: the partition, its runs and the one writer are the copy's)."""
    moves = lower_copy(body.plan, copy, frame.participants)
    run = moves.vector
    assert run is not None, "codegen.pipeline stages only copies of 16-byte runs"
    body.out.comment(f"line {copy.span.line}: T.copy {copy.src.buffer.name} -> "
                     f"{copy.dst.buffer.name} as cp.async of {run.elements} elements: "
                     f"{moves.partition.describe()}")
    with body.cells(run.runs, frame, with_replica=moves.one_writer) as inner:
        src = body.element(copy.src.buffer, run.src_index, inner).text
        dst = body.place(copy.dst.buffer, run.dst_index, inner).read.text
        with body.maybe_block("if (rep == 0)" if moves.one_writer else None):
            body.out.line(f"reducer_cp_async16(&{dst}, &{src});")
