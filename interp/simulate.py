"""The SIMT simulator: a physical plan (spec.physical) executed for every thread of every
block, vectorized across threads with numpy (docs/design.md §6, §12).

    result = simulate(plan, inputs)      # inputs: every tensor parameter by name
    result.outputs / result.violations / result.finalizes

Ordinary work is placed by the plan's LayoutMap. A statement outside any T.Parallel
runs on every participant (one lane per thread). A T.Parallel runs on every used
(thread, slot) pair of its loop layout, every replica included, one lane per pair; a
fragment access reads or writes the lane's thread's own register, which that thread must
hold. Expressions are evaluated by interp.evaluate, the logical interpreter's own
evaluator, with the lane's physical thread bound so `T.get_thread_binding()` works.

Reducers follow their ReducerPlan: identity partials at init (poisoned registers
elsewhere), each site's contributions from the replicas its guard admits into the
executing thread's storage slot, and at finalize the plan's collective
(interp.collective), the seed once, the destination write. Accounting (interp.accounting)
checks that every logically enabled contribution entered every observed copy of its
output exactly once. Every address is the one the kernel computes (spec.addressing,
the layouts' slot expressions, the plan's step expressions) and is checked against its
allocation (R505). Violations (R300, R500–R505) are collected, never raised; a
program the logical semantics refuses (R1xx/R2xx) raises DiagnosticError as
interp.logical does.

This module holds the kernel and the block's statements. The block's parts are mixins:
its checked memory interp.sim_memory, its copies interp.sim_copies, its pipelined
loops interp.sim_pipeline, its reducer statements interp.sim_reducers (a reducer's
partials and accounting entries: interp.sim_partials); what every run of one plan
shares is interp.sim_statics."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verify_reducer.codegen.lower import copies as lowered
from verify_reducer.codegen.lower.reduce import lower_reduce
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Diagnostic, DiagnosticError, error
from verify_reducer.spec.dtypes import BOOL, INT64
from verify_reducer.spec.ops import REDUCE_KINDS, reduce_monoid
from verify_reducer.spec.layout import default_partition
from verify_reducer.spec.physical import BodyBarrier, PhysicalPlan

from .evaluate import convert, operand, serial_iterations, stored
from .memory import Window, WindowArray, kernel_inputs
from .registers import LocalBuffer, Registers, tables
from .runs import BodyRuns, blocks_to_run
from .sim_cells import report_cells
from .sim_copies import CopyExecution, in_box, outside_message
from .sim_gemm import GemmExecution
from .sim_memory import MemoryAccess
from .sim_partials import Partials
from .sim_pipeline import PipelineExecution
from .sim_reducers import FinalizeSummary, ReducerExecution
from .sim_atomics import AtomicExecution
from .sim_statics import PlanStatics
from .shared import Clock, SharedBuffer
from .values import ITER, REP, THREAD, Lanes, Val
from .violations import Violations, threads_text


@dataclass
class SimResult:
    outputs: dict[str, np.ndarray]         # in the tensor's shape, or its window's
    violations: list[Diagnostic]
    finalizes: list[FinalizeSummary] = field(default_factory=list)
    written: dict[str, np.ndarray] | None = None   # with windows: what the run wrote

    @property
    def contributions(self) -> int:
        return sum(f.contributions for f in self.finalizes)

    @property
    def ok(self) -> bool:
        return not self.violations


def simulate(plan: PhysicalPlan, inputs: dict[str, np.ndarray], blocks=None,
             windows: dict[str, Window] | None = None, progress=None) -> SimResult:
    """Simulates blocks (default: every block of the grid, in order), with each global
    tensor held whole or, given windows, as its window (inputs then hold the windows).
    progress(done, total) is called after each block."""
    chosen, total = blocks_to_run(plan.func, blocks)
    kernel = _Kernel(plan, inputs, windows)     # its BodyRuns count over all the blocks
    for done, block in enumerate(chosen, 1):
        _Block(kernel, tuple(int(b) for b in block)).run()
        if progress is not None:
            progress(done, total)
    params = plan.func.params
    if windows is None:
        outputs = {p.name: kernel.globals[p].reshape(p.shape).copy() for p in params}
        return SimResult(outputs, kernel.violations.items, kernel.finalizes)
    shape = {p.name: windows[p.name].shape for p in params}
    outputs = {p.name: kernel.globals[p].values.reshape(shape[p.name]).copy() for p in params}
    written = {p.name: kernel.globals[p].wrote.reshape(shape[p.name]) for p in params}
    return SimResult(outputs, kernel.violations.items, kernel.finalizes, written)


# ============================================================================ the kernel

class _Kernel:
    """One simulation: global tensors and findings, over the plan's shared cache."""

    def __init__(self, plan: PhysicalPlan, inputs: dict[str, np.ndarray],
                 windows: dict[str, Window] | None = None):
        self.static = PlanStatics.of(plan)
        self.globals = _global_arrays(plan.func, inputs, windows)
        self.violations = Violations()
        self.finalizes: list[FinalizeSummary] = []
        self.body_runs = BodyRuns()


def _global_arrays(func: ir.PrimFunc, inputs: dict[str, np.ndarray],
                   windows: dict[str, Window] | None = None) -> dict:
    arrays = {p: p.dtype.quantize(arr).reshape(-1).copy()
              for p, arr in kernel_inputs(func, inputs, windows).items()}
    if windows is None:
        return arrays
    return {p: WindowArray(arr, windows[p.name]) for p, arr in arrays.items()}


# ============================================================================ a block

# statement type -> the _Block method that runs it (`_parallelfor` for ir.ParallelFor)
_RUNNERS: dict[type, object] = {}


class _Block(MemoryAccess, CopyExecution, PipelineExecution, ReducerExecution,
             AtomicExecution, GemmExecution):
    def __init__(self, kernel: _Kernel, block: tuple[int, ...]):
        self.k = kernel
        self.s = kernel.static
        self.block = block
        self.block_key = int(np.ravel_multi_index(block, self.s.func.kernel.grid))
        self.regs: dict[ir.Buffer, Registers] = {}
        self.shared: dict[ir.Buffer, SharedBuffer] = {}
        # a T.reduce_* of a fragment's shared rows (codegen.cuda_reduce): their order
        self.rows: dict[ir.Reduce, SharedBuffer] = {}
        self.local: dict[ir.Buffer, LocalBuffer] = {}
        self.partials: dict[ir.Buffer, Partials] = {}
        self.visits: dict[ir.ReducerUpdate, int] = {}
        self.loop_envs: dict[ir.ParallelFor, tuple] = {}
        self.iter_names: list[str] = []      # loop variables in scope, for messages
        self.body_runs = kernel.body_runs
        # a pipelined loop's staged shared buffers: the element offset of the stage
        # the current iteration reads (interp.sim_pipeline)
        self.stage_of: dict[ir.Buffer, int] = {}
        self.report = kernel.violations
        self._first: tuple[Lanes, Lanes] | None = None
        # orders the accesses to every shared buffer: a step per statement, and the
        # plan's barriers (interp.shared)
        self.clock = Clock(self.s.threads)

    def run(self) -> None:
        kernel = self.s.func.kernel
        n = self.s.threads
        env = {var.name: Val(var.dtype.quantize(np.full(n, b)), var.dtype)
               for var, b in zip(kernel.block_vars, self.block)}
        env[THREAD] = Val(np.arange(n, dtype=np.int64), INT64)
        self.body(kernel.body, Lanes(n, env))

    @property
    def block_text(self) -> str:
        grid = self.s.func.kernel.grid
        if all(g == 1 for g in grid):
            return ""
        return f" in block {self.block if len(self.block) > 1 else self.block[0]}"

    # ------------------------------------------------------------------ statements

    def body(self, stmts: ir.Body, lanes: Lanes) -> None:
        for stmt in stmts:
            if lanes.n == 0:
                return
            lanes = self.step(stmt, lanes)

    def step(self, stmt: ir.Stmt, lanes: Lanes) -> Lanes:
        """One statement, a step of the block's clock, between the plan's barriers
        before and after it; the lanes after it (a Let binds a name)."""
        self.clock.now += 1                        # Clock.tick, inlined: every statement
        run = _RUNNERS.get(stmt.__class__)
        if run is None:                            # _<statement type>, found once per type
            run = _RUNNERS[stmt.__class__] = getattr(_Block, "_" + type(stmt).__name__.lower())
        fences = self.s.plan.barriers.around.get(stmt)
        if fences is None:
            return run(self, stmt, lanes) or lanes
        before, after = fences
        if before is not None:
            self.pass_barrier(before, lanes)
        lanes = run(self, stmt, lanes) or lanes
        if after is not None:
            self.pass_barrier(after, lanes)
        return lanes

    def pass_barrier(self, barrier: BodyBarrier, lanes: Lanes) -> None:
        """The plan's barrier (spec.physical.BodyBarrier), passed by the running threads:
        every participant must arrive (R500 otherwise: the others wait forever); it
        orders their shared-memory accesses before it with theirs after it."""
        arrived = lanes.env[THREAD].v
        if ITER in lanes.env:
            arrived = np.unique(arrived)
        offset, count = barrier.participants
        if len(arrived) != count:
            missing = np.setdiff1d(np.arange(offset, offset + count), arrived)
            self.report.add("R500", f"the barrier {barrier.where} this statement (ordering: "
                            f"{barrier.why.replace('{rows}', 'its rows')}) expects {count} "
                            f"threads but only {len(arrived)} arrive; "
                            f"{threads_text(missing)} never arrive (deadlock)",
                            barrier.stmt.span, key=barrier.where)
        self.clock.barrier(arrived)

    def _alloc(self, stmt: ir.Alloc, lanes: Lanes):
        # an allocation executed again (in a loop body) is fresh, poisoned storage
        buffer = stmt.buffer
        if buffer.is_reducer:
            rplan = self.s.plan.reducer_plan(buffer)
            self.partials[buffer] = Partials(buffer, rplan, self.s.threads)
        elif buffer.scope == "shared":
            # a pipeline's staged buffer: one copy per stage
            size = self.s.plan.stages_of(buffer) * buffer.size
            self.shared[buffer] = SharedBuffer(size, buffer.dtype.np, self.clock)
        elif buffer.scope == "local":
            self.local[buffer] = LocalBuffer(self.s.threads, buffer.size, buffer.dtype.np)
        elif buffer.scope == "fragment":
            self.regs[buffer] = Registers(self.s.layouts.fragments[buffer],
                                          buffer.dtype.np, buffer.shape)

    def _let(self, stmt: ir.Let, lanes: Lanes) -> Lanes:
        return lanes.bind(stmt.var.name, operand(stmt.value, stmt.var.dtype, lanes, self))

    def _alias(self, stmt: ir.Alias, lanes: Lanes):
        """The frontend resolves the new name to the same Buffer: nothing to run."""

    def _warpgroup(self, stmt: ir.WarpGroup, lanes: Lanes):
        if not stmt.body:
            return
        offset, count = self.s.layouts.participants[stmt.body[0]]
        threads = lanes.env[THREAD].v
        inside = (threads >= offset) & (threads < offset + count)
        self.body(stmt.body, lanes if inside.all() else lanes.select(inside))

    def _parallelfor(self, stmt: ir.ParallelFor, lanes: Lanes):
        if ITER in lanes.env:
            raise DiagnosticError(error(
                "R100", "a T.Parallel nested in a T.Parallel is not supported by the "
                "simulator", stmt.span))
        findings = self.s.loop_lanes(stmt).cells.findings
        if findings:        # the kernel's cell loop disagrees with the loop's layout
            report_cells(self.report, self.s.loop_lanes(stmt).cells,
                         f"T.Parallel({', '.join(map(str, stmt.extents))})", stmt.span)
        outer, env = self.loop_env(stmt, lanes.env[THREAD].v)
        env = dict(env)
        for name, val in lanes.env.items():
            if name != THREAD:
                env[name] = val.take(outer)
        self.iter_names.extend(v.name for v in stmt.vars)
        loop_lanes = Lanes(len(outer), env, True)
        if stmt in self.s.plan.one_writer_loops:        # replica 0 alone runs it
            loop_lanes = loop_lanes.select(env[REP].v == 0)
        try:
            self.body(stmt.body, loop_lanes)
        finally:
            del self.iter_names[-len(stmt.vars):]

    def loop_env(self, stmt: ir.ParallelFor, threads: np.ndarray):
        """(outer lane of each loop lane, the loop's own variables) for the loop's
        lanes on the running threads: the same threads array (a block's, through its
        serial loops) gives the same answer, so it is derived once per block."""
        found = self.loop_envs.get(stmt)
        if found is not None and found[0] is threads:
            return found[1], found[2]
        loop = self.s.loop_lanes(stmt)
        lane_of = np.full(self.s.threads, -1, dtype=np.int64)
        lane_of[threads] = np.arange(len(threads))
        outer = lane_of[loop.threads]
        env = loop.env
        if (outer < 0).any():
            keep = outer >= 0
            outer = outer[keep]
            env = {k: v.take(keep) for k, v in env.items()}
        self.loop_envs[stmt] = (threads, outer, env)     # keeps threads alive
        return outer, env

    def _serialfor(self, stmt: ir.SerialFor, lanes: Lanes):
        pipe = self.s.plan.pipeline(stmt)
        if pipe is not None:
            self.run_pipeline(pipe, lanes)
            return
        self.iter_names.append(stmt.var.name)
        try:
            for bound in self.body_runs.count(stmt, serial_iterations(stmt, lanes, self)):
                self.body(stmt.body, bound)
        finally:
            self.iter_names.pop()

    def _if(self, stmt: ir.If, lanes: Lanes):
        cond = operand(stmt.cond, BOOL, lanes, self).v
        for mask, branch in ((cond, stmt.then), (~cond, stmt.orelse)):
            if branch and mask.any():
                self.body(branch, lanes if mask.all() else lanes.select(mask))

    def _store(self, stmt: ir.Store, lanes: Lanes):
        flat = self.flat_of(stmt.buffer, self.indices(stmt.indices, lanes), stmt.span)
        value = operand(stmt.value, stmt.buffer.dtype, lanes, self).v
        if stmt.buffer.scope in ("global", "shared"):
            self.check_store_conflict(stmt.buffer, lanes.env[THREAD].v, flat,
                                       stored(stmt.buffer.dtype, value), stmt.span)
        self.write(stmt.buffer, lanes.env[THREAD].v, flat, value, stmt.span)

    def _fill(self, stmt: ir.Fill, lanes: Lanes):
        region = stmt.region
        buffer = region.buffer
        value = operand(stmt.value, buffer.dtype, lanes, self).v
        starts = self.starts(region, lanes)
        if buffer.scope in ("fragment", "reducer"):
            # every holder of every element in the region writes its own copy
            regs = self.registers(buffer, stmt.span)
            tab = regs.tables
            threads = tab.pair_thread + regs.layout.offset
            inside = in_box(tab.pair_index, buffer.shape, starts, region.extents)
            lane_of = np.full(self.s.threads, -1, dtype=np.int64)
            lane_of[lanes.env[THREAD].v] = np.arange(lanes.n)
            inside &= lane_of[threads] >= 0
            self.write_registers(buffer, threads[inside], tab.pair_index[inside],
                                 value[lane_of[threads[inside]]], stmt.span)
            return
        e = np.arange(int(np.prod(region.extents)))
        participants = self.s.layouts.participants[stmt]
        moves = lowered.lower_fill(self.s.plan, stmt, participants)   # the kernel's fill
        index = self.index_values(stmt, moves.loop, moves.shape, moves.hoisted,
                                  moves.index, e, lanes)
        flat, guarded, beyond = self.region_flat(region, starts, index, len(e), moves.guards)
        inside = ~guarded
        if beyond is not None:
            offset, count = participants
            fault = outside_message("write", region.buffer, flat, beyond, offset + e % count)
            self.report.add("R505", fault + self.block_text, stmt.span, key="fill")
            inside &= ~beyond
        if buffer.scope == "shared":
            # every holder of the lowered partition writes its elements
            self.track_partition(buffer, moves.partition, flat, inside, stmt.span)
        if buffer.scope == "local":
            for lane, thread in enumerate(lanes.env[THREAD].v):
                self.write(buffer, np.full(int(inside.sum()), thread), flat[inside],
                           np.full(int(inside.sum()), value[lane]), stmt.span)
            return
        self.write(buffer, None, flat[inside], np.full(int(inside.sum()), value[0]),
                   stmt.span)

    # ------------------------------------------------------------------ T.reduce_*

    def _reduce_private(self, stmt: ir.Reduce, mono, absolute: bool, dim: int,
                        threads: np.ndarray) -> None:
        """A local source into a local destination (the frontend admits no other):
        every thread that runs the statement combines its own copy along dim, from the
        identity (or dst's old value without clear) in index order, as TileLang's
        LowerLocal loop does (codegen.cuda_reduce renders the same loop)."""
        src, dst = stmt.src, stmt.dst
        dtype = dst.dtype
        rows, cols = threads[:, None], np.arange(src.size)[None, :]
        values = self.read_local(src, rows, cols, stmt.span)        # threads × size
        if absolute:
            values = src.dtype.quantize(np.abs(values))
        values = convert(Val(values.reshape(-1), src.dtype), dtype).v
        terms = np.moveaxis(values.reshape((len(threads),) + src.shape), dim + 1, -1)
        terms = terms.reshape(len(threads), -1, src.shape[dim])
        out = np.arange(dst.size)[None, :]
        # from the identity (clear) or the old value, as LowerLocal's loop starts
        acc = self.read_local(dst, rows, out, stmt.span) if not stmt.clear else \
            dtype.quantize(np.full(terms.shape[:2], mono.identity(dtype)))
        for k in range(src.shape[dim]):
            acc = mono.combine(dtype, acc, terms[:, :, k])
        self.write(dst, np.broadcast_to(rows, acc.shape), np.broadcast_to(out, acc.shape),
                   acc, stmt.span)

    def _reduce_shuffled(self, stmt: ir.Reduce, low, mono, absolute: bool,
                         lanes: Lanes) -> None:
        """codegen.lower.reduce's shuffle form, lane by lane: each thread folds the terms
        it holds (read through the checked register accessor) in order, then takes its
        xor partner's value for each mask — every participant must be there, as
        __shfl_xor_sync over the full warp needs — and stores into (or combines with) the
        destination element it holds at that slot."""
        src, dst = stmt.src, stmt.dst
        offset, count = low.participants
        if not self.all_arrive(stmt, low.participants, lanes,
                               f"T.reduce_{stmt.kind} is combined by warp shuffles among"):
            return
        threads = np.arange(offset, offset + count)
        shape = low.src_elements.shape
        values = self.read_registers(src, np.repeat(threads, shape[1] * shape[2]),
                                     low.src_elements.reshape(-1), stmt.span)
        if absolute:
            values = src.dtype.quantize(np.abs(values))
        values = convert(Val(values, src.dtype), dst.dtype).v.reshape(shape)
        acc = values[:, :, 0]
        for k in range(1, shape[2]):
            acc = mono.combine(dst.dtype, acc, values[:, :, k])
        lane = np.arange(count)
        for mask in low.masks:          # x = x ⊕ shfl_xor(x, mask)
            acc = mono.combine(dst.dtype, acc, acc[lane ^ mask])
        holders = np.repeat(threads, shape[1])
        outputs = low.dst_elements.reshape(-1)
        acc = acc.reshape(-1)
        if not stmt.clear:
            acc = mono.combine(dst.dtype, self.read_registers(dst, holders, outputs,
                                                              stmt.span), acc)
        self.write_registers(dst, holders, outputs, acc, stmt.span)

    def all_arrive(self, stmt: ir.Stmt, participants: tuple[int, int], lanes: Lanes,
                   what: str) -> bool:
        """Whether every participant of a block-level statement (a gemm, a shuffled
        reduction) runs it; R500 naming the missing threads otherwise."""
        offset, count = participants
        arrived = lanes.env[THREAD].v
        if len(arrived) == count:
            return True
        missing = np.setdiff1d(np.arange(offset, offset + count), arrived)
        self.report.add("R500", f"{what} threads {offset}..{offset + count - 1}, but "
                        f"{threads_text(missing)} never arrive", stmt.span,
                        key=(type(stmt).__name__, stmt))
        return False

    def output_holders(self, stmt: ir.Reduce) -> tuple[np.ndarray, np.ndarray]:
        """(thread, output element) of each holder of each output of a T.reduce_*: the
        destination fragment's layout, else the participants' partition of it, as
        codegen.cuda_reduce combines a row in every holder (in replica 0 only where it
        combines into memory's old value)."""
        dst = stmt.dst
        if dst.scope == "fragment":
            layout = self.registers(dst, stmt.span).layout
        else:
            offset, count = self.s.layouts.participants[stmt]
            layout = default_partition(dst.shape, count, offset)
        cells = self.placed(layout, stmt, f"T.reduce_{stmt.kind}")
        threads, outputs = cells.thread + layout.offset, cells.index
        if dst.scope != "fragment" and not stmt.clear:
            first = cells.replica == 0
            threads, outputs = threads[first], outputs[first]
        return threads, outputs

    def placed(self, layout, stmt: ir.Stmt, head: str):
        """The cells of the kernel's loop over layout for stmt (interp.sim_cells: the
        CellLoop executed), its disagreements with the layout reported."""
        cells = self.s.cells(layout)
        if cells.findings:
            report_cells(self.report, cells, head, stmt.span, carried=True)
        return cells

    def through_rows(self, stmt: ir.Reduce, writers: np.ndarray, rows: np.ndarray,
                     lanes: Lanes) -> None:
        """The accesses of a fragment source's trip through the statement's shared rows
        (codegen.cuda_reduce): element e written by writers[e] (its replica 0), the
        plan's "staged" barrier, then row r read by every holder of output r. The values
        themselves go straight from the registers: only the order is checked here."""
        found = self.rows.get(stmt)
        if found is None:
            found = self.rows[stmt] = SharedBuffer(stmt.src.size, stmt.src.dtype.np,
                                                   self.clock)
        where = f"the shared rows of line {stmt.span.line}"
        self.clock.note(stmt.span)
        self.shared_race(stmt.src, found.races.write(writers, np.arange(stmt.src.size)),
                         stmt.span, where)
        staged = self.s.plan.barriers.at(stmt, "staged")
        if staged is not None:
            self.pass_barrier(staged, lanes)
        holders, outputs = self.output_holders(stmt)
        self.clock.note(stmt.span)
        self.shared_race(stmt.src, found.races.read(np.repeat(holders, rows.shape[1]),
                                                    rows[outputs].reshape(-1)),
                         stmt.span, where)

    def track_partition(self, buffer: ir.Buffer, layout, flat: np.ndarray,
                        inside: np.ndarray, span) -> None:
        """The writes of element e (at flat[e], where inside[e]) of a shared buffer by
        every thread the layout puts e on."""
        tab = tables(layout)
        keep = inside[tab.pair_index]
        self.track_writes(buffer, tab.pair_thread[keep] + layout.offset,
                          flat[tab.pair_index[keep]], span)

    def _reduce(self, stmt: ir.Reduce, lanes: Lanes):
        """dst = ⊕ over dim of src: each src element read from its replica-0 holder (a
        written register), combined in order along dim, delivered to every holder of
        each dst element (combined with its old value unless clear)."""
        kind = REDUCE_KINDS[stmt.kind]
        mono = reduce_monoid(stmt)
        src, dst = stmt.src, stmt.dst
        dtype = dst.dtype
        dim = stmt.dim + len(src.shape) if stmt.dim < 0 else stmt.dim
        if src.scope == "local":
            self._reduce_private(stmt, mono, kind.absolute, dim, lanes.env[THREAD].v)
            return
        shuffled = lower_reduce(self.s.plan, stmt)
        if shuffled is not None:
            self._reduce_shuffled(stmt, shuffled, mono, kind.absolute, lanes)
            return
        rows = np.moveaxis(np.arange(src.size).reshape(src.shape), dim, -1)
        rows = rows.reshape(-1, src.shape[dim])
        if src.scope == "fragment":
            src_regs = self.registers(src, stmt.span)
            holders = src_regs.layout.threads_of(absolute=True)[0]
            values = self.read_registers(src, holders, np.arange(src.size), stmt.span)
            self.through_rows(stmt, holders, rows, lanes)
        else:       # a shared tile, read in place after a barrier (codegen.cuda_reduce)
            holders, outputs = self.output_holders(stmt)
            values = self.read_any(src, stmt.span, np.repeat(holders, rows.shape[1]),
                                   rows[outputs].reshape(-1))
        if kind.absolute:
            values = src.dtype.quantize(np.abs(values))
        values = convert(Val(values, src.dtype), dtype).v
        terms = np.moveaxis(values.reshape(src.shape), dim, -1).reshape(-1, src.shape[dim])
        acc = terms[:, 0]
        for k in range(1, terms.shape[1]):
            acc = mono.combine(dtype, acc, terms[:, k])
        if dst.scope in ("shared", "global"):
            # every holder of an output element (the renderer's partition) writes it
            holders, outputs = self.output_holders(stmt)
            if not stmt.clear:
                acc = mono.combine(dtype, self.read_any(dst, stmt.span, holders, outputs),
                                   acc)
            self.write(dst, holders, outputs, acc[outputs], stmt.span)
            return
        threads, outputs = self.output_holders(stmt)       # every holder, every replica
        result = acc[outputs]
        if not stmt.clear:
            old = self.read_registers(dst, threads, outputs, stmt.span)
            result = mono.combine(dtype, old, result)
        self.write_registers(dst, threads, outputs, result, stmt.span)

