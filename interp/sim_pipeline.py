"""The simulator's pipelined `T.Pipelined` loops: the events of the loop's cp.async
schedule (codegen.lower.pipeline.AsyncSchedule, the one codegen.cuda_pipeline prints),
executed in order:

- Issue: the tiles of an iteration (none past the end) go out: their source is read
  then, their destination elements (in the iteration's stage of the shared buffer)
  become *pending* (the copy is outstanding in its stage's window until it lands) and
  remember the issuing thread and statement; Commit closes this thread's open group;
- Wait: every group but the newest `pending` completes: their values land;
- EnterStage / LeaveStage: the body between them reads the staged buffers at the
  iteration's stage; a read of a pending element (a stage read before its cp.async
  completed), or a write into one (an ordinary store racing a cp.async in flight), is
  R504 naming both accesses (interp.sim_memory);
- Prefetch: a copy of a later iteration (none past the end) into a second register
  array of its fragment; Advance: that array's registers move into the fragment;
- Run: a body statement (a staged read's stand-in reads its fragment from the stage);
- Fence: the plan's barrier, passed; a tile's writes are checked for races when issued
  (a cp.async may write at once) and stamped again when they land (what follows is
  ordered against the landing);
- Drained: nothing may be in flight after the loop (R504 otherwise, and it lands);
- WhileRunning: its events first, then its statement: what they issue is in flight
  while the statement (a wgmma) runs, so a read of it there is R504.

A mixin of interp.simulate's block, like interp.sim_copies."""
from __future__ import annotations

import copy as copy_module
import weakref
from dataclasses import dataclass

import numpy as np

from verify_reducer.codegen.lower import pipeline as lowered
from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import IndexExpr
from verify_reducer.spec.physical import Pipeline

from .evaluate import convert, serial_iterations
from .registers import Registers
from .shared import InFlight, SharedBuffer
from .values import Lanes, Val

# each plan's schedules, lowered once per pipeline (the statics die with their plan)
_SCHEDULES: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


@dataclass
class _Issued:
    """One copy's elements in flight (in_flight: where, by which threads): they land,
    with these values, when their group completes."""
    copy: ir.Copy
    values: np.ndarray
    in_flight: InFlight


@dataclass(frozen=True)
class _Evaluated:
    """A schedule with its iterations evaluated once, for every iteration of the loop
    (numpy over the loop variable): per iteration expression, its value and its stage
    (the schedule's stage_index at that value) at each position of the loop."""
    schedule: lowered.AsyncSchedule
    values: dict
    stages: dict

    @staticmethod
    def of(schedule: lowered.AsyncSchedule) -> "_Evaluated":
        # every position any block's loop reaches (a stop read at run time: its largest)
        counter = np.arange(schedule.start, max(schedule.stop_bound, schedule.start + 1))
        values, stages = {}, {}
        for event in _flat(schedule.prologue + schedule.iteration):
            if isinstance(event, lowered.Advance):
                event = event.prefetch
            iteration = getattr(event, "iteration", None)
            if iteration is None or iteration in values:
                continue
            value = np.broadcast_to(iteration.evaluate({schedule.loop.var.name: counter}),
                                    counter.shape)
            values[iteration] = value.tolist()
            stages[iteration] = np.broadcast_to(schedule.stage_index.evaluate(
                {lowered.ITERATION: value}), counter.shape).tolist()
        return _Evaluated(schedule, values, stages)


def _flat(events):
    """The events, those issued while a statement runs in their place."""
    for event in events:
        if isinstance(event, lowered.WhileRunning):
            yield from event.events
        else:
            yield event


class _Run:
    """The state of one execution of a schedule: the iterations, the groups, the spare
    register arrays of the prefetched copies, the current iteration."""

    def __init__(self, evaluated: _Evaluated, iterations: list[Lanes]):
        self.schedule = evaluated.schedule
        self.evaluated = evaluated
        self.iterations = iterations
        self.position = 0                        # of the current iteration of the loop
        self.groups: list[list[_Issued]] = []    # committed, oldest first
        self.open: list[_Issued] = []            # issued, not yet committed
        self.spare: dict[ir.Copy, Registers | None] = {}
        self.outer: dict | None = None   # the block's stage_of before EnterStage

    def index(self, iteration: IndexExpr) -> int:
        """The iteration's position among the loop's iterations (counted from 0)."""
        return self.evaluated.values[iteration][self.position] - self.schedule.start

    def stage(self, iteration: IndexExpr) -> int:
        """The iteration's stage."""
        return self.evaluated.stages[iteration][self.position]


class PipelineExecution:
    """Pipelined loops for interp.simulate._Block."""

    def schedule_of(self, pipe: Pipeline) -> _Evaluated:
        found = _SCHEDULES.setdefault(self.s, {})
        evaluated = found.get(pipe)
        if evaluated is None:
            evaluated = found[pipe] = _Evaluated.of(lowered.lower_pipeline(self.s.plan, pipe))
        return evaluated

    def run_pipeline(self, pipe: Pipeline, lanes: Lanes) -> None:
        loop = pipe.loop
        evaluated = self.schedule_of(pipe)
        schedule = evaluated.schedule
        run = _Run(evaluated, list(self.body_runs.count(
            loop, serial_iterations(loop, lanes, self))))
        self.iter_names.append(loop.var.name)
        for staged in pipe.staged_reads:       # fresh, never written storage
            self.shared[staged.buffer] = SharedBuffer(pipe.stages * staged.buffer.size,
                                                      staged.buffer.dtype.np, self.clock)
        try:
            self._events(schedule.prologue, run, lanes)
            for i, bound in enumerate(run.iterations):
                run.position = i
                self._events(schedule.iteration, run, bound)
        finally:
            self.iter_names.pop()
            if run.outer is not None:
                self.stage_of = run.outer
        self._events(schedule.epilogue, run, lanes)

    def _events(self, events, run: _Run, bound: Lanes) -> None:
        """Executes events with the lanes `bound` (an iteration's, the loop's outside)."""
        for event in events:
            kind = event.__class__
            if kind is lowered.Run:
                if bound.n > 0:
                    bound = self.step(event.stmt, bound)
            elif kind is lowered.Issue:
                if not event.empty:
                    run.open += self._issue(run, event)
            elif kind is lowered.Commit:
                run.groups.append(run.open)
                run.open = []
            elif kind is lowered.Wait:
                self.clock.tick()
                while len(run.groups) > event.pending:
                    self._land(run.groups.pop(0))
            elif kind is lowered.Fence:
                self.pass_barrier(event.barrier, bound)
            elif kind is lowered.EnterStage:
                run.outer = dict(self.stage_of)
                stage = run.stage(event.iteration)
                self.stage_of.update((b, stage * b.size) for b in run.schedule.buffers)
            elif kind is lowered.LeaveStage:
                self.stage_of, run.outer = run.outer, None
            elif kind is lowered.Prefetch:
                self._prefetch_all(run, event)
            elif kind is lowered.Advance:
                if bound.n > 0:
                    self._move(event.copy, run.spare[event.copy])
                    self._prefetch_all(run, event.prefetch)
            elif kind is lowered.Drained:
                self._drained(run)
            elif kind is lowered.WhileRunning:
                # issued while the statement runs: in flight for all of it
                self._events(event.events, run, bound)
                if bound.n > 0:
                    bound = self.step(event.run.stmt, bound)

    def _drained(self, run: _Run) -> None:
        """What is still in flight after the loop should be empty (issued past the
        end): the kernel never waits for it."""
        left = [item for group in run.groups + [run.open] for item in group]
        if not left:
            return
        self.report.add("R504", f"shared-memory race: the pipeline ends with copies "
                        f"into {left[0].copy.dst.buffer.name} still in flight; they land "
                        f"after the loop, unordered with what follows" + self.block_text,
                        run.schedule.loop.span, key="pipeline-tail")
        for group in run.groups + [run.open]:
            self._land(group)
        run.groups, run.open = [], []

    def _issue(self, run: _Run, event: lowered.Issue) -> list[_Issued]:
        """The copies of the event's iteration (none past the end), into its stage."""
        j = run.index(event.iteration)
        if j >= len(run.iterations):
            return []
        lanes = run.iterations[j]
        stage = run.stage(event.iteration)
        issued = []
        for copy in event.copies:
            self.clock.tick()
            moves = self.copy_moves(copy, lanes)
            for fault in moves.faults:
                self.report.add("R505", fault + self.block_text, copy.span,
                                key=" ".join(fault.split()[:2]))
            src, dst = copy.src.buffer, copy.dst.buffer
            # codegen.pipeline stages only copies without border guards
            assert moves.src_outside is None, "a staged copy reads past a border"
            values = convert(Val(self.k.globals[src][moves.src], src.dtype), dst.dtype).v
            if moves.dst_lanes is not None:
                values = values[moves.dst_lanes]
            offset = stage * dst.size
            flat = slice(moves.dst.start + offset, moves.dst.stop + offset) \
                if isinstance(moves.dst, slice) else moves.dst + offset
            sb = self.shared_buffer(dst, copy.span)
            window = (offset, offset + dst.size)
            if moves.dst_threads is not None:
                # the cp.async may write as soon as it is issued: ordered after every
                # earlier access of the stage, or a race
                self.track_writes(dst, moves.dst_threads, flat, copy.span, sb, window)
            self.clock.note(copy.span)
            in_flight = sb.issue(flat, moves.dst_threads, self.clock.now, window)
            issued.append(_Issued(copy, values, in_flight))
        return issued

    def _prefetch_all(self, run: _Run, event: lowered.Prefetch) -> None:
        j = run.index(event.iteration)
        for copy in event.copies:
            run.spare[copy] = self._prefetch(copy, run.iterations, j, run.spare.get(copy))

    def _prefetch(self, copy: ir.Copy, iterations: list[Lanes], j: int,
                  spare: Registers | None) -> Registers | None:
        """Iteration j's copy (none past the end) into the fragment's second register
        array (spare, made on first use), which it returns."""
        if j >= len(iterations):
            return spare
        dst = copy.dst.buffer
        real = self.registers(dst, copy.span)
        if spare is None:
            spare = copy_module.copy(real)
            spare.values, spare.written = real.values.copy(), np.zeros_like(real.written)
        self.regs[dst] = spare
        try:
            self._copy(copy, iterations[j])
        finally:
            self.regs[dst] = real
        return spare

    def _move(self, copy: ir.Copy, spare: Registers) -> None:
        """The prefetched registers into the fragment, every slot."""
        real = self.registers(copy.dst.buffer, copy.span)
        real.values[...] = spare.values
        real.written[...] = spare.written

    def _land(self, group: list[_Issued]) -> None:
        for item in group:
            self.clock.tick()                  # each copy's accesses are a step of their own
            dst, span, copy = item.copy.dst.buffer, item.copy.span, item.in_flight
            sb = self.shared_buffer(dst, span)
            sb.land(copy)
            self.write(dst, None, copy.flat, item.values, span)
            if copy.threads is not None:        # checked at its issue; done now
                self.clock.note(span)
                sb.races.landed(copy.threads, copy.flat)
