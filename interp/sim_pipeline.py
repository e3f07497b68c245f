"""The simulator's pipelined `T.Pipelined` loops (spec.physical.Pipeline), executed in
the schedule the plan gives and the renderer emits (codegen.cuda_pipeline):

- the tiles of iteration j are issued when the plan says (the first `ahead` before the
  loop, then iteration i issues i + ahead: at its top, or right after `refill_after`
  when the plan releases the stage early): their source is read then, their
  destination elements (in stage j % stages of the shared buffer) become *pending*
  (counted: two copies in flight to one element are two);
- each iteration commits one group (empty past the end) and then completes every group
  but the newest `pending`: their values land, as the wait returns;
- the rest of the body runs with the staged buffers read at their stage's offset; a read
  of a pending element (a stage read before its copy completed) is R504;
- a prefetched copy of iteration j runs (into a second register array of its fragment)
  before the loop for j = 0, else where the copy stands in iteration j - 1; where it
  stands in iteration j, that array's registers move into the fragment;
- a staged read's tile is issued with the staged copies (into its stage buffer, which
  the pipeline allocates: no statement of the program does), and where its copy stands
  the fragment is read from the stage (a read before the tile landed is R504 too);
- the plan's barriers of the loop are passed where the renderer prints them: after the
  wait ("landed"), after refill_after ("refill"), at the iteration's end ("released");
  a tile's writes are checked for races when issued (a cp.async may write at once) and
  stamped again when they land (what follows is ordered against the landing; a write
  by another thread while the tile is in flight is not checked).

A mixin of interp.simulate's block, like interp.sim_copies."""
from __future__ import annotations

import copy as copy_module
from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.physical import Pipeline

from .evaluate import convert, serial_iterations
from .registers import Registers
from .shared import SharedBuffer
from .values import Lanes, Val


@dataclass
class _Issued:
    """One copy's elements in flight: they land when their group completes."""
    buffer: ir.Buffer
    threads: np.ndarray | None
    flat: np.ndarray
    values: np.ndarray
    copy: ir.Copy


class PipelineExecution:
    """Pipelined loops for interp.simulate._Block."""

    def run_pipeline(self, pipe: Pipeline, lanes: Lanes) -> None:
        loop = pipe.loop
        iterations = list(self.body_runs.count(loop, serial_iterations(loop, lanes, self)))
        groups: list[list[_Issued]] = []           # committed, oldest first
        # the plan's barriers of the loop's iterations (None where it has none)
        landed, refill, released = (self.s.plan.barriers.at(loop, where)
                                    for where in ("landed", "refill", "released"))
        self.iter_names.append(loop.var.name)
        for staged in pipe.staged_reads:       # fresh, never written storage
            self.shared[staged.buffer] = SharedBuffer(pipe.stages * staged.buffer.size,
                                                      staged.buffer.dtype.np, self.clock)
        try:
            for j in range(pipe.ahead if pipe.issues else 0):
                groups.append(self._issue(pipe, iterations, j))
            spare = {c: self._prefetch(c, iterations, 0, None) for c in pipe.prefetched}
            early = pipe.refill_after is not None
            for i, bound in enumerate(iterations):
                if pipe.issues:
                    if not early:
                        groups.append(self._issue(pipe, iterations, i + pipe.ahead))
                    self.clock.tick()
                    while len(groups) > pipe.pending:     # the wait
                        self._land(groups.pop(0))
                if landed is not None:
                    self.pass_barrier(landed, bound)
                previous = dict(self.stage_of)
                self.stage_of.update((b, (i % pipe.stages) * b.size) for b in pipe.buffers)
                for stmt in loop.body:
                    if bound.n > 0 and stmt in spare:
                        self._move(stmt, spare[stmt])
                        spare[stmt] = self._prefetch(stmt, iterations, i + 1, spare[stmt])
                    elif bound.n > 0 and stmt not in pipe.copies:    # staged: issued ahead
                        bound = self.step(pipe.stand_in(stmt), bound)
                    if stmt is pipe.refill_after:      # the stage just read, refilled
                        if refill is not None:
                            self.pass_barrier(refill, bound)
                        groups.append(self._issue(pipe, iterations, i + pipe.ahead))
                if released is not None:
                    self.pass_barrier(released, bound)
                self.stage_of = previous
        finally:
            self.iter_names.pop()
        # what is still in flight after the loop should be empty (issued past the end):
        # the kernel never waits for it
        left = [item for group in groups for item in group]
        if left:
            self.report.add("R504", f"shared-memory race: the pipeline ends with copies "
                            f"into {left[0].buffer.name} still in flight; they land "
                            f"after the loop, unordered with what follows" + self.block_text,
                            loop.span, key="pipeline-tail")
            for group in groups:
                self._land(group)

    def _issue(self, pipe: Pipeline, iterations: list[Lanes], j: int) -> list[_Issued]:
        """The copies of iteration j (none past the end), into stage j % stages."""
        if j >= len(iterations):
            return []
        lanes = iterations[j]
        issued = []
        for copy in pipe.issues:
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
            stage = (j % pipe.stages) * dst.size
            flat = slice(moves.dst.start + stage, moves.dst.stop + stage) \
                if isinstance(moves.dst, slice) else moves.dst + stage
            self.shared_buffer(dst, copy.span).pending[flat] += 1
            if moves.dst_threads is not None:
                # the cp.async may write as soon as it is issued: ordered after every
                # earlier reader of the stage, or a race
                self.track_writes(dst, moves.dst_threads, flat, copy.span)
            issued.append(_Issued(dst, moves.dst_threads, flat, values, copy))
        return issued

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
            sb = self.shared_buffer(item.buffer, item.copy.span)
            sb.pending[item.flat] -= 1
            self.write(item.buffer, None, item.flat, item.values, item.copy.span)
            if item.threads is not None:        # checked at its issue; done now
                self.clock.note(item.copy.span)
                sb.races.landed(item.threads, item.flat)
