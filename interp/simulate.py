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

This module holds the kernel, its per-plan statics and the block's statements and
memory; the block's copies are interp.sim_copies, its reducer statements
interp.sim_reducers, and a reducer's partials and accounting entries interp.sim_partials."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import affine, border_guards, statement_ranges
from verify_reducer.spec.diagnostics import Counterexample, Diagnostic, DiagnosticError, error
from verify_reducer.spec.dtypes import BOOL, INT64
from verify_reducer.spec.ops import REDUCE_KINDS, MONOIDS
from verify_reducer.spec.physical import FinalizePlan, PhysicalPlan, SitePlan
from verify_reducer.spec.source import Span

from .accounting import iteration_hashes
from .evaluate import convert, evaluate, operand, serial_iterations, stored
from .memory import Window, WindowArray, kernel_inputs
from .registers import LocalBuffer, Registers, tables
from .sim_copies import CopyExecution, Moves, in_box, outside_message
from .sim_partials import Partials
from .sim_pipeline import PipelineExecution
from .sim_reducers import FinalizeSummary, ReducerExecution
from .shared import SharedBuffer
from .values import ITER, REP, SLOT, THREAD, Lanes, Val
from .violations import (Violations, register_array, slot_outside, store_conflict,
                         threads_text)



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
    kernel = _Kernel(plan, inputs, windows)
    grid = plan.func.kernel.grid
    chosen = list(np.ndindex(*grid)) if blocks is None else list(blocks)
    for done, block in enumerate(chosen, 1):
        _Block(kernel, tuple(int(b) for b in block)).run()
        if progress is not None:
            progress(done, len(chosen))
    params = plan.func.params
    if windows is None:
        outputs = {p.name: kernel.globals[p].reshape(p.shape).copy() for p in params}
        return SimResult(outputs, kernel.violations.items, kernel.finalizes)
    shape = {p.name: windows[p.name].shape for p in params}
    outputs = {p.name: kernel.globals[p].values.reshape(shape[p.name]).copy() for p in params}
    written = {p.name: kernel.globals[p].wrote.reshape(shape[p.name]) for p in params}
    return SimResult(outputs, kernel.violations.items, kernel.finalizes, written)


# ============================================================================ the kernel

@dataclass(frozen=True)
class _LoopLanes:
    """A T.Parallel's lanes, the same in every block: one per used (thread, slot)."""
    threads: np.ndarray                 # absolute
    env: dict[str, Val]                 # THREAD, SLOT, ITER, REP and the loop variables



class _Kernel:
    """One simulation: global tensors and findings, over the plan's shared cache."""

    def __init__(self, plan: PhysicalPlan, inputs: dict[str, np.ndarray],
                 windows: dict[str, Window] | None = None):
        self.static = _Static.of(plan)
        self.globals = _global_arrays(plan.func, inputs, windows)
        self.violations = Violations()
        self.finalizes: list[FinalizeSummary] = []


class _Static:
    """What every simulation of one plan shares, whatever its inputs: the plan's
    lookups and every index array derived from its layouts and region starts.
    simulate runs once per input, so these are built on the first run only."""

    _BY_PLAN: dict[int, "_Static"] = {}

    @classmethod
    def of(cls, plan: PhysicalPlan) -> "_Static":
        found = cls._BY_PLAN.get(id(plan))
        if found is not None and found.plan is plan:
            return found
        if len(cls._BY_PLAN) > 64:
            cls._BY_PLAN.clear()
        made = cls._BY_PLAN[id(plan)] = cls(plan)      # keeps the plan alive
        return made

    def __init__(self, plan: PhysicalPlan):
        func = plan.func
        self.plan = plan
        self.func = func
        self.layouts = plan.layouts
        self.threads = func.kernel.threads
        self.sites: dict[ir.ReducerUpdate, tuple[int, SitePlan]] = {}
        self.finals: dict[ir.ReducerFinalize, FinalizePlan] = {}
        for rplan in plan.reducers:
            for site in rplan.sites:
                self.sites[site.update] = (len(self.sites), site)
            for fplan in rplan.finalizes:
                self.finals[fplan.finalize] = fplan
        self.loop_cache: dict[ir.ParallelFor, _LoopLanes] = {}
        self.copy_cache: dict[ir.Copy, tuple] = {}
        self.copy_vars: dict[ir.Copy, tuple[str, ...] | None] = {}
        self.moves: dict[tuple, Moves] = {}
        self.moves_lanes = 0      # lanes held by moves: the cache is bounded by memory
        self.entries: dict[tuple, tuple] = {}
        self.readers: dict[ir.ReducerFinalize, tuple] = {}
        self.iteration_hashes: dict[tuple, tuple] = {}
        self.flat_memo: dict = {}
        self.uniform_memo: dict = {}
        self.vars_of: dict[ir.Expr, tuple[str, ...] | None] = {}
        self.scopes = statement_ranges(func)
        self.guards_memo: dict[tuple, tuple] = {}

    def guards(self, stmt: ir.Stmt, region: ir.Region, loop_shape) -> tuple:
        """The border tests the kernel makes on a global region's elements
        (spec.addressing.border_guards, as the renderer asks it); a start that is no
        affine expression is tested on both sides of every dimension."""
        key = (stmt, region, tuple(loop_shape))
        found = self.guards_memo.get(key)
        if found is None:
            starts = tuple(affine(e) for e in region.starts)
            if any(e is None for e in starts):
                found = tuple((True, True) for _ in region.buffer.shape)
            else:
                found = border_guards(region, starts, loop_shape, self.scopes[stmt])
            self.guards_memo[key] = found
        return found

    def pure_vars(self, expr: ir.Expr) -> tuple[str, ...] | None:
        """The variables expr reads, or None if it reads memory or the thread."""
        if expr not in self.vars_of:
            subs = list(ir.subexprs(expr))
            impure = any(isinstance(e, (ir.Load, ir.ThreadBinding)) for e in subs)
            self.vars_of[expr] = None if impure else \
                tuple(sorted({e.name for e in subs if isinstance(e, ir.Var)}))
        return self.vars_of[expr]

    def hashes(self, site: int, block: int, iterations: np.ndarray) -> np.ndarray:
        """The iteration hashes of a site in a block: a loop's iterations are the same
        array in every block and every run, so each (site, block) is hashed once."""
        key = (site, block, id(iterations))
        found = self.iteration_hashes.get(key)
        if found is not None and found[0] is iterations:
            return found[1]
        made = iteration_hashes(site, block, iterations)
        if len(self.iteration_hashes) > 4096:
            self.iteration_hashes.clear()
        self.iteration_hashes[key] = (iterations, made)      # keeps iterations alive
        return made

    def starts_vars(self, stmt: ir.Copy) -> tuple[str, ...] | None:
        """The variables both regions' starts read, or None if one reads memory or
        the thread: the key of the copy's moves."""
        if stmt not in self.copy_vars:
            names: set[str] = set()
            for start in stmt.src.starts + stmt.dst.starts:
                found = self.pure_vars(start)
                if found is None:
                    self.copy_vars[stmt] = None
                    return None
                names.update(found)
            self.copy_vars[stmt] = tuple(sorted(names))
        return self.copy_vars[stmt]

    def loop_lanes(self, loop: ir.ParallelFor) -> _LoopLanes:
        found = self.loop_cache.get(loop)
        if found is not None:
            return found
        layout = self.layouts.loops[loop]
        tab = tables(layout)
        threads = tab.pair_thread + layout.offset
        env = {THREAD: Val(threads, INT64), SLOT: Val(tab.pair_slot, INT64),
               ITER: Val(tab.pair_index, INT64), REP: Val(tab.pair_replica, INT64)}
        coords = np.unravel_index(tab.pair_index, loop.extents)
        for var, c in zip(loop.vars, coords):
            env[var.name] = Val(var.dtype.quantize(c), var.dtype)
        made = _LoopLanes(threads, env)
        self.loop_cache[loop] = made
        return made

    def site(self, update: ir.ReducerUpdate) -> tuple[int, SitePlan]:
        found = self.sites.get(update)
        if found is None:
            raise ValueError(f"the plan has no SitePlan for the update at line "
                             f"{update.span.line}")
        return found

    def finalize_plan(self, finalize: ir.ReducerFinalize) -> FinalizePlan:
        found = self.finals.get(finalize)
        if found is None:
            raise ValueError(f"the plan has no FinalizePlan for the finalize at line "
                             f"{finalize.span.line}")
        return found


def _global_arrays(func: ir.PrimFunc, inputs: dict[str, np.ndarray],
                   windows: dict[str, Window] | None = None) -> dict:
    arrays = {p: p.dtype.quantize(arr).reshape(-1).copy()
              for p, arr in kernel_inputs(func, inputs, windows).items()}
    if windows is None:
        return arrays
    return {p: WindowArray(arr, windows[p.name]) for p, arr in arrays.items()}


# ============================================================================ reducers

class _Block(CopyExecution, PipelineExecution, ReducerExecution):
    def __init__(self, kernel: _Kernel, block: tuple[int, ...]):
        self.k = kernel
        self.s = kernel.static
        self.block = block
        self.block_key = int(np.ravel_multi_index(block, self.s.func.kernel.grid))
        self.regs: dict[ir.Buffer, Registers] = {}
        self.shared: dict[ir.Buffer, SharedBuffer] = {}
        self.local: dict[ir.Buffer, LocalBuffer] = {}
        self.partials: dict[ir.Buffer, Partials] = {}
        self.visits: dict[ir.ReducerUpdate, int] = {}
        self.loop_envs: dict[ir.ParallelFor, tuple] = {}
        self.iter_names: list[str] = []      # loop variables in scope, for messages
        # a pipelined loop's staged shared buffers: the element offset of the stage
        # the current iteration reads (interp.sim_pipeline)
        self.stage_of: dict[ir.Buffer, int] = {}
        self.report = kernel.violations
        self._first: tuple[Lanes, Lanes] | None = None

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

    # ------------------------------------------------------------------ memory

    def flat_of(self, buffer: ir.Buffer, indices: list[Val], span: Span,
                code: str = "R102") -> np.ndarray:
        """flat() of evaluated indices, memoized on the identity of their arrays: a
        loop's variables are the same arrays every time it runs, so are the positions."""
        arrays = [i.v for i in indices]
        key = (buffer, *map(id, arrays))
        found = self.s.flat_memo.get(key)
        if found is not None and all(map(operator.is_, found[0], arrays)):
            return found[1]
        for i in indices:
            if i.dtype.is_float:
                raise DiagnosticError(error("R102", "a buffer index must be an integer",
                                            span))
        flat = self.flat(buffer, [a.astype(np.int64) for a in arrays], span, code)
        if len(self.s.flat_memo) > 256:
            self.s.flat_memo.clear()
        self.s.flat_memo[key] = (arrays, flat)      # keeps the arrays alive
        return flat

    def indices(self, exprs, lanes: Lanes) -> list[Val]:
        return [evaluate(e, lanes, self) for e in exprs]

    def flat(self, buffer: ir.Buffer, idx: list[np.ndarray], span: Span,
             code: str = "R102") -> np.ndarray:
        """Row-major positions; an index outside the buffer is refused as the logical
        interpreter refuses it."""
        if len(idx) != len(buffer.shape):
            raise DiagnosticError(error(
                "R102", f"{buffer.name} has {len(buffer.shape)} dimensions, indexed with "
                f"{len(idx)}", span))
        flat = np.zeros(len(idx[0]) if idx else 1, dtype=np.int64)
        for dim, (i, extent) in enumerate(zip(idx, buffer.shape)):
            bad = (i < 0) | (i >= extent)
            if bad.any():
                point = ", ".join(str(int(x[np.argmax(bad)])) for x in idx)
                raise DiagnosticError(error(
                    code, f"index [{point}] is out of bounds of {buffer.name} "
                    f"{list(buffer.shape)} (dimension {dim})", span))
            flat = flat * extent + i.astype(np.int64)
        return flat

    def registers(self, buffer: ir.Buffer, span: Span) -> Registers:
        if buffer.is_reducer:
            p = self.partials.get(buffer)
            if p is None or not p.readable:
                raise DiagnosticError(error(
                    "R200", f"read of reducer {buffer.name} before it is finalized in "
                    "place", span))
            return p.regs
        found = self.regs.get(buffer)
        if found is None:
            raise DiagnosticError(error(
                "R102", f"buffer {buffer.name} is used before its allocation", span))
        return found

    def element(self, buffer: ir.Buffer, flat) -> str:
        point = np.unravel_index(int(flat), buffer.shape)
        return f"{buffer.name}[{', '.join(str(int(p)) for p in point)}]"

    def read_registers(self, buffer: ir.Buffer, threads: np.ndarray, flat: np.ndarray,
                       span: Span) -> np.ndarray:
        """Each thread reads its own register of element flat."""
        regs = self.registers(buffer, span)
        beyond = self.slots_beyond(buffer, regs, threads, flat, "read", span)
        index, held = regs.window(threads, flat)
        if held is None:
            out = regs.flat_values[index]
            if index.__class__ is slice:
                out = out.copy()     # a view; the value may outlive the next write
            if regs.flat_written[index].all():
                return out
            poisoned = ~regs.flat_written[index]
        else:
            self.not_held(buffer, regs, threads, flat, held, beyond, "reads", span)
            out = np.zeros(len(flat), dtype=regs.values.dtype)
            out[held] = regs.flat_values[index[held]]
            poisoned = held & ~regs.flat_written[index]
        if poisoned.any():
            i = int(np.argmax(poisoned))
            self.report.add("R502", f"thread {int(threads[i])} reads "
                            f"{self.element(buffer, flat[i])}, whose register was never "
                            f"written (poisoned; {threads_text(threads[poisoned])})", span,
                            key=buffer)
        return out

    def write_registers(self, buffer: ir.Buffer, threads: np.ndarray, flat: np.ndarray,
                        values: np.ndarray, span: Span) -> None:
        regs = self.registers(buffer, span)
        beyond = self.slots_beyond(buffer, regs, threads, flat, "write", span)
        index, held = regs.window(threads, flat)
        if held is not None:
            self.not_held(buffer, regs, threads, flat, held, beyond, "writes", span)
            index, values = index[held], values[held]
        regs.flat_values[index] = stored(buffer.dtype, values)
        regs.flat_written[index] = True

    def not_held(self, buffer, regs, threads, flat, held, beyond, verb, span) -> None:
        """R300 for the first lane that does not hold its element (a slot past the
        array is R505, reported by slots_beyond, not this)."""
        unheld = ~held if beyond is None else ~held & ~beyond
        if not unheld.any():
            return
        i = int(np.argmax(unheld))
        holders = regs.tables.holders(int(flat[i]))
        element = self.element(buffer, flat[i])
        index = tuple(int(x) for x in np.unravel_index(int(flat[i]), buffer.shape))
        grid = ("storage", buffer.name) if buffer.is_reducer else ("fragment", buffer.name)
        drawn = Counterexample(grid, f"thread {int(threads[i])} {verb} {element}, which "
                               f"it does not hold; its holders are marked",
                               ((index, "holder"),), ((int(threads[i]), "unheld"),))
        self.report.add("R300", f"thread {int(threads[i])} {verb} {element}, which it "
                        f"does not hold: {buffer.name} puts it on {threads_text(holders)} "
                        f"({regs.layout.describe()})", span, key=(buffer, verb),
                        counterexample=drawn)

    def slots_beyond(self, buffer: ir.Buffer, regs: Registers, threads: np.ndarray,
                     flat: np.ndarray, verb: str, span: Span) -> np.ndarray | None:
        """R505 when an element's slot is past the thread's register array (a layout
        that does not fit its buffer): which lanes, or None."""
        beyond = regs.beyond(flat)
        if beyond is not None:
            i = int(np.argmax(beyond))
            self.report.add("R505", slot_outside(
                f"register {verb} of {self.element(buffer, flat[i])}", int(threads[i]),
                int(regs.slot_of[flat[i]]), register_array(buffer), regs,
                threads[beyond]), span, key=(buffer, verb, "slot"))
        return beyond

    def load(self, load: ir.Load, indices: list[Val], lanes: Lanes) -> Val:
        """Memory for interp.evaluate: a Load in every lane."""
        buffer = load.buffer
        flat = self.flat_of(buffer, indices, load.span)
        if buffer.scope == "global":
            return Val(self.k.globals[buffer][flat], buffer.dtype)
        if buffer.scope == "shared":
            return Val(self.read_shared(buffer, flat, load.span), buffer.dtype)
        threads = lanes.env[THREAD].v
        if buffer.scope == "local":
            return Val(self.read_local(buffer, threads, flat, load.span), buffer.dtype)
        return Val(self.read_registers(buffer, threads, flat, load.span), buffer.dtype)

    def shared_buffer(self, buffer: ir.Buffer, span: Span) -> SharedBuffer:
        found = self.shared.get(buffer)
        if found is None:
            raise DiagnosticError(error(
                "R102", f"buffer {buffer.name} is used before its allocation", span))
        return found

    def read_shared(self, buffer: ir.Buffer, flat: np.ndarray, span: Span) -> np.ndarray:
        sb = self.shared_buffer(buffer, span)
        logical = flat
        stage = self.stage_of.get(buffer)
        if stage is not None:                    # a pipeline's stage of the buffer
            flat = flat + stage
            in_flight = sb.pending[flat] > 0
            if in_flight.any():
                self.report.add("R504", f"shared-memory race: read of "
                                f"{self.element(buffer, logical[in_flight][0])} (stage "
                                f"{stage // buffer.size}) before the cp.async that writes "
                                f"it completed" + self.block_text, span,
                                key="pipeline-stage")
        written = sb.written[flat]
        if not written.all():
            missing = ~written
            self.report.add("R502", f"read of {self.element(buffer, logical[missing][0])}, "
                            "which was never written (shared memory starts "
                            "uninitialized)", span, key=buffer)
        return sb.values[flat]

    def read_local(self, buffer, threads, flat, span) -> np.ndarray:
        regs = self.local[buffer]
        if not regs.written[threads, flat].all():
            self.report.add("R502", f"read of local {buffer.name} before it is written",
                            span, key=buffer)
        return regs.values[threads, flat]

    def write(self, buffer: ir.Buffer, threads: np.ndarray | None, flat: np.ndarray,
              values: np.ndarray, span: Span) -> None:
        """A store of values by threads to any kind of buffer."""
        values = stored(buffer.dtype, values)
        if buffer.scope == "global":
            self.k.globals[buffer][flat] = values
        elif buffer.scope == "shared":
            sb = self.shared_buffer(buffer, span)
            sb.values[flat] = values
            sb.written[flat] = True
        elif buffer.scope == "local":
            regs = self.local[buffer]
            regs.values[threads, flat] = values
            regs.written[threads, flat] = True
        else:
            self.write_registers(buffer, threads, flat, values, span)

    def _check_store_conflict(self, buffer, threads, flat, values, span) -> None:
        flat, values, threads = (a.reshape(-1) for a in np.broadcast_arrays(
            np.asarray(flat), np.asarray(values), np.asarray(threads)))
        conflict = store_conflict(flat, values, threads)
        if conflict is None:
            return
        address, (t1, v1), (t2, v2) = conflict
        self.report.add("R504", f"{buffer.scope}-memory race: one store writes "
                        f"{buffer.name}[{address}] (flat) from thread {t1} ({v1!r}) and "
                        f"thread {t2} ({v2!r}); which value stays is undefined"
                        + self.block_text, span, key="store-conflict")

    # ------------------------------------------------------------------ statements

    def body(self, stmts: ir.Body, lanes: Lanes) -> None:
        for stmt in stmts:
            if lanes.n == 0:
                return
            run = getattr(self, "_" + type(stmt).__name__.lower())
            lanes = run(stmt, lanes) or lanes

    def _alloc(self, stmt: ir.Alloc, lanes: Lanes):
        # an allocation executed again (in a loop body) is fresh, poisoned storage
        buffer = stmt.buffer
        if buffer.is_reducer:
            rplan = self.s.plan.reducer_plan(buffer)
            self.partials[buffer] = Partials(buffer, rplan, self.s.threads)
        elif buffer.scope == "shared":
            # a pipeline's staged buffer: one copy per stage
            size = self.s.plan.stages_of(buffer) * buffer.size
            self.shared[buffer] = SharedBuffer(size, buffer.dtype.np)
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
        outer, env = self.loop_env(stmt, lanes.env[THREAD].v)
        env = dict(env)
        for name, val in lanes.env.items():
            if name != THREAD:
                env[name] = val.take(outer)
        self.iter_names.extend(v.name for v in stmt.vars)
        try:
            self.body(stmt.body, Lanes(len(outer), env, True))
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
            for bound in serial_iterations(stmt, lanes, self):
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
            self._check_store_conflict(stmt.buffer, lanes.env[THREAD].v, flat,
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
        flat, guarded, beyond = self.region_flat(stmt, region, starts, region.extents, e)
        inside = ~guarded
        if beyond is not None:
            offset, count = self.s.layouts.participants[stmt]
            fault = outside_message("write", region.buffer, flat, beyond, offset + e % count)
            self.report.add("R505", fault + self.block_text, stmt.span, key="fill")
            inside &= ~beyond
        if buffer.scope == "local":
            for lane, thread in enumerate(lanes.env[THREAD].v):
                self.write(buffer, np.full(int(inside.sum()), thread), flat[inside],
                           np.full(int(inside.sum()), value[lane]), stmt.span)
            return
        self.write(buffer, None, flat[inside], np.full(int(inside.sum()), value[0]),
                   stmt.span)

    # ------------------------------------------------------------------ copies

    def sync(self, stmt: ir.Stmt, lanes: Lanes) -> None:
        """The barrier after a cooperative shared-memory copy: __syncthreads for the
        whole block, a named barrier over the warp group inside T.ws — all the
        statement's participants must arrive."""
        offset, count = self.s.layouts.participants[stmt]
        arrived = lanes.env[THREAD].v
        if len(arrived) != count:
            missing = np.setdiff1d(np.arange(offset, offset + count), arrived)
            self.report.add("R500", f"the barrier after this copy expects {count} threads "
                            f"but only {len(arrived)} arrive; {threads_text(missing)} "
                            "never arrive (deadlock)", stmt.span)

    # ------------------------------------------------------------------ T.reduce_*

    def _reduce(self, stmt: ir.Reduce, lanes: Lanes):
        """dst = ⊕ over dim of src: each src element read from its replica-0 holder (a
        written register), combined in order along dim, delivered to every holder of
        each dst element (combined with its old value unless clear)."""
        kind = REDUCE_KINDS[stmt.kind]
        mono = MONOIDS[kind.monoid]
        src, dst = stmt.src, stmt.dst
        dtype = dst.dtype
        dim = stmt.dim + len(src.shape) if stmt.dim < 0 else stmt.dim
        src_regs = self.registers(src, stmt.span)
        holders = src_regs.layout.threads_of(absolute=True)[0]
        flat = np.arange(src.size)
        values = self.read_registers(src, holders, flat, stmt.span)
        if kind.absolute:
            values = src.dtype.quantize(np.abs(values))
        values = convert(Val(values, src.dtype), dtype).v
        terms = np.moveaxis(values.reshape(src.shape), dim, -1).reshape(-1, src.shape[dim])
        acc = terms[:, 0]
        for k in range(1, terms.shape[1]):
            acc = mono.combine(dtype, acc, terms[:, k])
        if dst.scope in ("shared", "global"):
            if not stmt.clear:
                acc = mono.combine(dtype, self.read_any(dst, stmt.span), acc)
            self.write(dst, None, np.arange(dst.size), acc, stmt.span)
            return
        regs = self.registers(dst, stmt.span)
        tab = regs.tables
        threads = tab.pair_thread + regs.layout.offset
        result = acc[tab.pair_index]
        if not stmt.clear:
            old = self.read_registers(dst, threads, tab.pair_index, stmt.span)
            result = mono.combine(dtype, old, result)
        self.write_registers(dst, threads, tab.pair_index, result, stmt.span)

    def read_any(self, buffer: ir.Buffer, span: Span) -> np.ndarray:
        if buffer.scope == "global":
            return self.k.globals[buffer].copy()
        return self.read_shared(buffer, np.arange(buffer.size), span)

    # ------------------------------------------------------------------ reducers
