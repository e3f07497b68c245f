"""The SIMT simulator: a physical plan (spec.physical) executed for every thread of every
block, vectorized across threads with numpy (DESIGN §3, §4).

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
interp.logical does."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from spec import ir
from spec.addressing import affine, border_guards, flat_offset, region_indices, statement_ranges
from spec.diagnostics import Diagnostic, DiagnosticError, Note, error
from spec.dtypes import BOOL, INT64
from spec.ops import REDUCE_KINDS, MONOIDS, monoid as monoid_named
from spec.physical import FinalizePlan, PhysicalPlan, ReducerPlan, SitePlan
from spec.source import Span

from .accounting import Ledger, UpdateEvent, contribution_ids, describe, \
    iteration_hashes, replay_counts, wrong_contributions
from .collective import Channel, Checks, Exchange, add_fold
from .evaluate import convert, evaluate, operand, serial_iterations, stored
from .memory import Window, WindowArray, kernel_inputs
from .registers import LayoutTables, LocalBuffer, Registers, tables
from .shared import RaceTracker, SharedBuffer
from .values import THREAD, Lanes, Val
from .violations import Violations, register_array, slot_outside, threads_text

SLOT, ITER, REP = "@slot", "@iter", "@rep"     # lane facts inside a T.Parallel
MOVES_CACHE_LANES = 1 << 21                    # about 100 MB of cached copy moves


@dataclass(frozen=True)
class FinalizeSummary:
    """The accounting of one executed finalize."""
    block: tuple[int, ...]
    reducer: str
    line: int
    outputs: int
    contributions: int          # logically enabled contributions (expected entries)
    copies_checked: int         # observed partial copies compared with the expectation
    mismatched_outputs: int


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


@dataclass(frozen=True)
class _Moves:
    """What one T.copy moves at one pair of region starts, derived once: a pipelined
    copy meets the same few starts in every block and every simulation of the plan."""
    threads: np.ndarray | None        # absolute thread per lane (None: cooperative)
    src: np.ndarray                   # flat source position per lane
    src_outside: np.ndarray | None    # lanes reading past a global tensor's border
    dst_lanes: np.ndarray | None      # the lanes that store (None: all of them)
    dst: np.ndarray | slice           # flat destination per storing lane (see _window)
    dst_threads: np.ndarray | None
    faults: tuple[str, ...] = ()      # R505: accesses outside their buffer (not made)


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
        self.moves: dict[tuple, _Moves] = {}
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

class _Partials:
    """One reducer's partials in one block: registers in its storage layout, the
    accounting pair beside every value, the open epoch's ledger and seed."""

    def __init__(self, buffer: ir.Buffer, rplan: ReducerPlan, threads: int):
        self.buffer = buffer
        self.plan = rplan
        self.monoid = monoid_named(buffer.reducer.op)
        dtype = buffer.dtype
        self.np_dtype = dtype.np
        self.ufunc = self.monoid.float_ufunc if dtype.is_float else self.monoid.ufunc
        self.direct = dtype.name != "bfloat16" and not dtype.is_bool
        self.regs = Registers(rplan.storage, buffer.dtype.np, buffer.shape)
        self.tables: LayoutTables = self.regs.tables
        self.ids = np.zeros(self.regs.values.shape, dtype=np.uint64)
        self.counts = np.zeros(self.regs.values.shape, dtype=np.int64)
        self.races = RaceTracker(max(rplan.workspace_words, 1), threads)
        # per _Entry id: [entry, wrapping id sum per entering lane, visits] not yet
        # added to ids / counts (see accumulate)
        self.pending: dict[int, list] = {}
        self.ledger: Ledger | None = None
        self.seed = None
        self.readable = False

    def combine(self, a, b):
        """a ⊕ b in the reducer's dtype (spec.ops), without conversions when both
        operands are already stored in it (numpy's integer ops wrap as the GPU's do)."""
        if self.direct and isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
                a.dtype == self.np_dtype and b.dtype == self.np_dtype:
            # inf - inf is NaN and a NaN input propagates, on the GPU too: no warning
            with np.errstate(invalid="ignore", over="ignore"):
                return self.ufunc(a, b)
        return self.monoid.combine(self.buffer.dtype, a, b)

    def fold(self, terms: np.ndarray, axis: int) -> np.ndarray:
        """The combine of terms along axis, left to right as a loop of combines would
        round them: exact ops reduce in any order; float sum and product accumulate
        sequentially; bfloat16 (rounded after every step) goes term by term."""
        dtype = self.buffer.dtype
        if dtype.name == "bfloat16":
            terms = np.moveaxis(terms, axis, 0)
            acc = terms[0]
            for term in terms[1:]:
                acc = self.combine(acc, term)
            return acc
        if dtype.is_float:
            if self.monoid.name in ("sum", "product"):
                with np.errstate(invalid="ignore", over="ignore"):   # inf × 0 is NaN here too
                    folded = self.ufunc.accumulate(terms, axis=axis, dtype=terms.dtype)
                return dtype.quantize(folded.take(-1, axis=axis))
            return dtype.quantize(self.ufunc.reduce(terms, axis=axis))
        return dtype.quantize(self.ufunc.reduce(terms, axis=axis, dtype=terms.dtype))

    def open(self, seed) -> None:
        # Every partial register of every participant starts at the identity, also the
        # (thread, slot) pairs the storage layout leaves unused: the partial array is one
        # register array per thread, and a narrow butterfly shuffles whole slots, so an
        # unused pair's identity meets its partner's partial (and changes nothing).
        identity = self.monoid.identity(self.buffer.dtype)
        self.regs.values[...] = self.buffer.dtype.quantize(np.array(identity))
        self.regs.written[...] = True
        self.ids[...] = 0
        self.counts[...] = 0
        self.pending = {}
        self.ledger = Ledger(self.buffer.size)
        self.seed = seed
        self.readable = False

    def accumulate(self, entry: "_Entry", values: np.ndarray, ids: np.ndarray) -> None:
        """Combine each entering lane's contribution into its cell, in order (the
        values' rounding depends on it). The accounting pair is a wrapping sum and a
        count, which no order changes: an entry's lanes always enter the same cells,
        so their ids are summed per lane across visits and added to the cells once,
        before the collective reads them (`settle`)."""
        vals = self.regs.flat_values
        if entry.rounds is None:               # every lane its own cell
            cells = entry.cells
            vals[cells] = self.combine(vals[cells], values)
        else:
            for lanes, cells in entry.rounds:
                vals[cells] = self.combine(vals[cells], values[lanes])
        found = self.pending.get(id(entry))
        if found is None:
            self.pending[id(entry)] = [entry, ids.copy(), 1]    # keeps entry alive
        else:
            found[1] += ids
            found[2] += 1

    def settle(self) -> None:
        """Add the pending id sums and counts to their cells."""
        id_sums, counts = self.ids.reshape(-1), self.counts.reshape(-1)
        for entry, lane_ids, visits in self.pending.values():
            if entry.rounds is None:
                id_sums[entry.cells] += lane_ids
                counts[entry.cells] += visits
            else:
                np.add.at(id_sums, entry.cells, lane_ids)
                counts += visits * entry.per_cell
        self.pending = {}


@dataclass(frozen=True)
class _Entry:
    """Where one update's lanes enter the partials — the same at every visit of a
    loop, so derived once per (site, lane arrays)."""
    lanes: np.ndarray | None       # the lanes that enter (guard admits, cell held); None: all
    threads: np.ndarray            # thread and output of every lane the guard admits
    outputs: np.ndarray
    unheld: int | None             # the first of those with no partial of its output
    beyond: np.ndarray | None      # those whose storage slot is past the partial array
    cells: np.ndarray              # per entering lane: its partial cell
    # a thread combines its lanes one after another in slot order (an unrolled loop),
    # so lanes sharing a cell go in rounds: the r-th lane of every cell in round r —
    # (lanes, cells) per round, None when no two lanes share a cell
    rounds: list[tuple[np.ndarray, np.ndarray]] | None
    per_cell: np.ndarray | None    # entering lanes per (flat) cell, with rounds

    @staticmethod
    def derive(site: SitePlan, p: _Partials, threads, outputs, replica) -> "_Entry":
        admitted = None if site.guard_replica is None else \
            np.flatnonzero(replica == site.guard_replica)
        e_threads = threads if admitted is None else threads[admitted]
        e_outputs = outputs if admitted is None else outputs[admitted]
        cells, held = p.regs.locate(e_threads, e_outputs)
        beyond = p.regs.beyond(e_outputs)
        unheld = None
        lanes = admitted
        if held is not None:
            missing = ~held if beyond is None else ~held & ~beyond
            unheld = int(np.argmax(missing)) if missing.any() else None
            kept = np.flatnonzero(held)
            cells = cells[kept]
            lanes = kept if admitted is None else admitted[kept]
        per_cell = np.bincount(cells, minlength=p.regs.values.size)
        if per_cell.max(initial=0) <= 1:
            return _Entry(lanes, e_threads, e_outputs, unheld, beyond, cells, None, None)
        order = np.argsort(cells, kind="stable")
        sorted_cells = cells[order]
        starts = np.r_[0, np.nonzero(sorted_cells[1:] != sorted_cells[:-1])[0] + 1]
        run = np.repeat(starts, np.diff(np.r_[starts, len(cells)]))
        rank = np.arange(len(cells)) - run
        rounds = []
        for r in range(int(rank.max()) + 1):
            members = order[rank == r]
            rounds.append((members, cells[members]))
        return _Entry(lanes, e_threads, e_outputs, unheld, beyond, cells, rounds, per_cell)


# ============================================================================ a block

class _Block:
    def __init__(self, kernel: _Kernel, block: tuple[int, ...]):
        self.k = kernel
        self.s = kernel.static
        self.block = block
        self.block_key = int(np.ravel_multi_index(block, self.s.func.kernel.grid))
        self.regs: dict[ir.Buffer, Registers] = {}
        self.shared: dict[ir.Buffer, SharedBuffer] = {}
        self.local: dict[ir.Buffer, LocalBuffer] = {}
        self.partials: dict[ir.Buffer, _Partials] = {}
        self.visits: dict[ir.ReducerUpdate, int] = {}
        self.loop_envs: dict[ir.ParallelFor, tuple] = {}
        self.iter_names: list[str] = []      # loop variables in scope, for messages
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
        self.report.add("R300", f"thread {int(threads[i])} {verb} "
                        f"{self.element(buffer, flat[i])}, which it does not hold: "
                        f"{buffer.name} puts it on {threads_text(holders)} "
                        f"({regs.layout.describe()})", span, key=(buffer, verb))

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
        written = sb.written[flat]
        if not written.all():
            missing = ~written
            self.report.add("R502", f"read of {self.element(buffer, flat[missing][0])}, "
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
            self.partials[buffer] = _Partials(buffer, rplan, self.s.threads)
        elif buffer.scope == "shared":
            self.shared[buffer] = SharedBuffer(buffer.size, buffer.dtype.np)
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
            inside = _in_box(tab.pair_index, buffer.shape, starts, region.extents)
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
            fault = _outside("write", region.buffer, flat, beyond, offset + e % count)
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

    def starts(self, region: ir.Region, lanes: Lanes) -> list[int]:
        """A region's start index: uniform over the participants, so evaluated in the
        first lane only."""
        return [self.uniform_int(s, lanes) for s in region.starts]

    def uniform_int(self, expr: ir.Expr, lanes: Lanes) -> int:
        """A uniform integer expression's value, memoized on the values of the
        variables it reads (block indices, serial loop variables)."""
        if isinstance(expr, ir.Const):
            return int(expr.value)
        names = self.s.pure_vars(expr)
        if names is None:
            return int(operand(expr, expr.dtype, self.first_lane(lanes), self).v[0])
        key = (expr, tuple(int(lanes.env[n].v[0]) for n in names))
        found = self.s.uniform_memo.get(key)
        if found is None:
            found = int(operand(expr, expr.dtype, self.first_lane(lanes), self).v[0])
            self.s.uniform_memo[key] = found
        return found

    def first_lane(self, lanes: Lanes) -> Lanes:
        if self._first is None or self._first[0] is not lanes:
            env = {k: Val(v.v[:1], v.dtype) for k, v in lanes.env.items()}
            self._first = (lanes, Lanes(1, env, lanes.parallel))
        return self._first[1]

    def region_flat(self, stmt: ir.Stmt, region: ir.Region, starts: list[int], loop_shape,
                    e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(flat offset, guarded, beyond) of the elements that iterations e (flat over
        loop_shape) touch, computed as the kernel computes them (spec.addressing):
        `guarded` elements fail a border test of a global tensor (read as 0, not
        written: TileLang's rule); `beyond` ones (None: none) pass every test the kernel
        makes yet lie outside the buffer (R505: the kernel would touch another
        allocation; the caller makes no such access). Guarded offsets are clamped so
        the caller may still gather. The region itself must lie inside a non-global
        buffer (the logical rule, R102)."""
        buffer = region.buffer
        if buffer.scope != "global":
            for s, extent, size in zip(starts, region.extents, buffer.shape):
                if s < 0 or s + extent > size:
                    raise DiagnosticError(error(
                        "R102", f"region {starts} + {list(region.extents)} is out of "
                        f"bounds of {buffer.name} {list(buffer.shape)}", region.span))
        loop = np.unravel_index(e, tuple(loop_shape))
        index = [np.broadcast_to(np.asarray(ix, dtype=np.int64), e.shape)
                 for ix in region_indices(starts, region.extents, loop_shape, loop)]
        guarded = np.zeros(len(e), dtype=bool)
        if buffer.scope == "global":
            for ix, extent, (low, high) in zip(index, buffer.shape,
                                               self.s.guards(stmt, region, loop_shape)):
                if low:
                    guarded |= ix < 0
                if high:
                    guarded |= ix >= extent
        flat = flat_offset(buffer.shape, index) if index else np.zeros(len(e), np.int64)
        flat = np.asarray(flat, dtype=np.int64)
        beyond = ~guarded & ((flat < 0) | (flat >= buffer.size))
        if guarded.any() or beyond.any():
            flat = np.where(guarded, np.clip(flat, 0, buffer.size - 1), flat)
        return flat, guarded, (beyond if beyond.any() else None)

    def copy_pairs(self, stmt: ir.Copy, starts: dict) -> tuple | None:
        """(absolute thread, replica, iteration, the iterations' shape) of every lane
        of the copy: by the copy's layout in the LayoutMap (a fragment side's, or the
        cooperative partition of a shared↔global copy — 16-byte runs where
        codegen.layout_copy allows); for a finalized reducer side, by the reducer's
        storage; None when there is neither."""
        found = self.s.copy_cache.get(stmt)
        if found is not None:
            return found
        layout = self.s.layouts.copies.get(stmt)
        if layout is not None:
            tab = tables(layout)
            pairs = (tab.pair_thread + layout.offset, tab.pair_replica, tab.pair_index,
                     layout.shape)
            self.s.copy_cache[stmt] = pairs
            return pairs
        for region in (stmt.src, stmt.dst):
            if region.buffer.is_reducer:
                regs = self.registers(region.buffer, stmt.span)
                tab = regs.tables
                coords = np.unravel_index(tab.pair_index, region.buffer.shape)
                rel = [c - s for c, s in zip(coords, starts[region])]
                keep = np.ones(len(tab.pair_index), dtype=bool)
                for r, extent in zip(rel, region.extents):
                    keep &= (r >= 0) & (r < extent)
                e = np.ravel_multi_index(tuple(r[keep] for r in rel), region.extents)
                return (tab.pair_thread[keep] + regs.layout.offset,
                        tab.pair_replica[keep], e, tuple(region.extents))
        return None

    def _copy(self, stmt: ir.Copy, lanes: Lanes):
        src, dst = stmt.src.buffer, stmt.dst.buffer
        if ITER in lanes.env:
            raise DiagnosticError(error(
                "R100", "a T.copy inside a T.Parallel is not supported by the simulator",
                stmt.span))
        moves = self.copy_moves(stmt, lanes)
        for fault in moves.faults:
            self.report.add("R505", fault + self.block_text, stmt.span,
                            key=" ".join(fault.split()[:2]))     # "global read"
        # the reads and writes still go through the checked accessors every time:
        # poison, ownership and read-before-finalize depend on the state, not the moves
        if src.scope == "global" and moves.src_outside is None:
            values = self.k.globals[src][moves.src]
        elif src.scope == "global":                # TileLang's guarded border reads 0
            values = np.zeros(len(moves.src), dtype=src.dtype.np)
            kept = np.setdiff1d(np.arange(len(moves.src)), moves.src_outside)
            # only the lanes that read: a guarded lane's clamped position may lie
            # outside the block's window of the tensor
            values[kept] = self.k.globals[src][moves.src[kept]]
        elif moves.src_outside is None:
            values = self.read_on_chip(src, moves.threads, moves.src, stmt.span)
        else:                                      # R505 lanes: not read, 0
            kept = np.setdiff1d(np.arange(len(moves.src)), moves.src_outside)
            values = np.zeros(len(moves.src), dtype=src.dtype.np)
            values[kept] = self.read_on_chip(
                src, None if moves.threads is None else moves.threads[kept],
                moves.src[kept], stmt.span)
        values = convert(Val(values, src.dtype), dst.dtype).v
        if moves.dst_lanes is not None:
            values = values[moves.dst_lanes]
        self.write(dst, moves.dst_threads, moves.dst, values, stmt.span)
        if "shared" in (src.scope, dst.scope):
            self.sync(stmt, lanes)

    def read_on_chip(self, buffer: ir.Buffer, threads, flat: np.ndarray, span: Span):
        if buffer.scope == "shared":
            return self.read_shared(buffer, flat, span)
        return self.read_registers(buffer, threads, flat, span)

    def copy_moves(self, stmt: ir.Copy, lanes: Lanes) -> _Moves:
        """The copy's moves at the current starts, memoized on the values of the
        variables the starts read (block indices, serial loop variables)."""
        names = self.s.starts_vars(stmt)
        key = None
        if names is not None and all(n in lanes.env for n in names):
            key = (stmt,) + tuple(int(lanes.env[n].v[0]) for n in names)
            found = self.s.moves.get(key)
            if found is not None:
                return found
        made = self.derive_moves(stmt, lanes)
        if key is not None:
            # a copy whose starts read the block index meets new keys in every block:
            # bounded by lanes, not entries, memory stays flat however many blocks run
            if len(self.s.moves) > 4096 or self.s.moves_lanes > MOVES_CACHE_LANES:
                self.s.moves.clear()
                self.s.moves_lanes = 0
            self.s.moves[key] = made
            self.s.moves_lanes += len(made.src)
        return made

    def derive_moves(self, stmt: ir.Copy, lanes: Lanes) -> _Moves:
        src, dst = stmt.src, stmt.dst
        starts = {src: self.starts(src, lanes), dst: self.starts(dst, lanes)}
        pairs = self.copy_pairs(stmt, starts)
        if pairs is None:
            threads, replica = None, None
            shape = tuple(dst.extents)
            e = np.arange(int(np.prod(shape)))
        else:
            threads, replica, e, shape = pairs
        s_flat, s_guarded, s_beyond = self.region_flat(stmt, src, starts[src], shape, e)
        d_flat, d_guarded, d_beyond = self.region_flat(stmt, dst, starts[dst], shape, e)
        writers = ~d_guarded
        if dst.buffer.scope in ("global", "shared") and threads is not None:
            writers &= replica == 0          # one write per element, by replica 0
        faults = []
        skipped = s_guarded
        if s_beyond is not None:
            faults.append(_outside("read", src.buffer, s_flat, s_beyond, threads))
            skipped = skipped | s_beyond
            s_flat = np.where(s_beyond, 0, s_flat)
        if d_beyond is not None and (d_beyond & writers).any():
            faults.append(_outside("write", dst.buffer, d_flat, d_beyond & writers, threads))
            writers &= ~d_beyond
        outside = np.flatnonzero(skipped) if skipped.any() else None
        if writers.all():
            return _Moves(threads, s_flat, outside, None, _window(dst.buffer, d_flat),
                          threads, tuple(faults))
        keep = np.flatnonzero(writers)
        return _Moves(threads, s_flat, outside, keep, _window(dst.buffer, d_flat[keep]),
                      None if threads is None else threads[keep], tuple(faults))

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

    def _reducerinit(self, stmt: ir.ReducerInit, lanes: Lanes):
        p = self.partials[stmt.reducer]
        dtype = stmt.reducer.dtype
        seed = None
        if stmt.seed is not None:
            seed = operand(stmt.seed, dtype, lanes, self).v[0]
        if stmt.fill_value is not None:
            seed = self.legacy_fill_seed(p, stmt, seed, lanes)
        p.open(seed)

    def legacy_fill_seed(self, p: _Partials, stmt: ir.ReducerInit, seed, lanes: Lanes):
        """interp.logical's rule: a legacy fill with the identity is no seed; for an
        idempotent op a fill value v is the seed v once; otherwise R213."""
        dtype = stmt.reducer.dtype
        fill = operand(stmt.fill_value, dtype, lanes, self).v[0]
        identity = dtype.quantize(np.array([p.monoid.identity(dtype)]))[0]
        if fill == identity:
            return seed
        if not p.monoid.idempotent:
            raise DiagnosticError(error(
                "R213", f"T.fill of {p.monoid.name} reducer {stmt.reducer.name} with "
                f"{fill}, not its identity {identity}: every participant would add it "
                "once", stmt.span))
        return fill if seed is None else p.combine(seed, fill)

    def _reducerupdate(self, stmt: ir.ReducerUpdate, lanes: Lanes):
        number, site = self.s.site(stmt)
        p = self.partials[stmt.reducer]
        if p.ledger is None:
            raise DiagnosticError(error(
                "R204", f"update of reducer {stmt.reducer.name} outside an open epoch",
                stmt.span))
        outputs = self.flat_of(stmt.reducer, self.indices(stmt.indices, lanes), stmt.span,
                               code="R209")
        values = operand(stmt.value, stmt.reducer.dtype, lanes, self).v
        threads = lanes.env[THREAD].v
        if ITER in lanes.env:
            iterations, replica = lanes.env[ITER].v, lanes.env[REP].v
        else:                                 # one iteration, replicated over threads
            iterations = np.zeros(lanes.n, dtype=np.int64)
            replica = threads - site.loop.offset
        visit = self.visits.get(stmt, 0)
        self.visits[stmt] = visit + 1
        ids = contribution_ids(self.s.hashes(number, self.block_key, iterations), visit)

        entry = self.entry(stmt, site, p, threads, outputs, replica)
        e_ids = ids if entry.lanes is None else ids[entry.lanes]
        values_in = values if entry.lanes is None else values[entry.lanes]
        if entry.unheld is not None:
            i = entry.unheld
            self.report.add("R503", f"thread {int(entry.threads[i])} has no partial of "
                            f"{self.element(stmt.reducer, entry.outputs[i])} in the "
                            f"storage layout ({p.plan.storage.describe()}): its "
                            "contribution is lost", stmt.span, key="unheld")
        if entry.beyond is not None:
            i = int(np.argmax(entry.beyond))
            self.report.add("R505", slot_outside(
                f"update of {self.element(stmt.reducer, entry.outputs[i])}",
                int(entry.threads[i]), int(p.regs.slot_of[entry.outputs[i]]),
                register_array(stmt.reducer), p.regs, entry.threads[entry.beyond]),
                stmt.span, key="slot")
        cells = entry.cells
        if not p.regs.flat_written[cells].all():
            self.report.add("R502", f"an update of {stmt.reducer.name} combines into a "
                            "poisoned partial register", stmt.span, key="poison")
        p.accumulate(entry, values_in, e_ids)
        names = tuple(self.iter_names)
        p.ledger.events.append(UpdateEvent(
            stmt, visit, names, tuple(lanes.env[n].v for n in names), ids, outputs,
            site.loop.replicate > 1, cells, e_ids))

    def entry(self, stmt: ir.ReducerUpdate, site: SitePlan, p: "_Partials",
              threads: np.ndarray, outputs: np.ndarray, replica: np.ndarray) -> "_Entry":
        """Where an update's lanes enter the partials, memoized on the identity of the
        lane arrays: a loop presents the same arrays at every visit."""
        key = (stmt, id(threads), id(outputs), id(replica))
        found = self.s.entries.get(key)
        if found is not None and found[0] is threads and found[1] is outputs and \
                found[2] is replica:
            return found[3]
        made = _Entry.derive(site, p, threads, outputs, replica)
        if len(self.s.entries) > 256:
            self.s.entries.clear()
        self.s.entries[key] = (threads, outputs, replica, made)    # keeps them alive
        return made

    def _reducerfinalize(self, stmt: ir.ReducerFinalize, lanes: Lanes):
        fplan = self.s.finalize_plan(stmt)
        p = self.partials[stmt.reducer]
        if p.ledger is None:
            raise DiagnosticError(error(
                "R203", f"finalize of reducer {stmt.reducer.name} outside an open epoch",
                stmt.span))
        what = f"finalize of {stmt.reducer.name} (line {stmt.span.line})"
        p.settle()
        channels = [Channel(p.regs.values, p.combine, p.fold),
                    Channel(p.ids, np.add, add_fold), Channel(p.counts, np.add, add_fold)]
        checks = Checks(p.regs.written, p.races, self.report, stmt.span, what,
                        stmt.reducer.name)
        with np.errstate(over="ignore"):
            Exchange(fplan, p.plan.participants, self.s.threads, p.plan.workspace_words,
                     channels, checks).run()
        used = p.tables.index >= 0
        if p.seed is not None:
            p.regs.values[used] = p.combine(p.seed, p.regs.values[used])
        cells, outputs, threads = self.observed(stmt, fplan, p)
        p.ledger.expect()
        mismatched = self.account(stmt, fplan, p, cells, outputs)
        self.deliver(stmt, p, cells, outputs, threads)
        self.k.finalizes.append(FinalizeSummary(
            self.block, stmt.reducer.name, stmt.span.line, stmt.reducer.size,
            p.ledger.contributions, len(cells), mismatched))
        p.ledger = None

    def observed(self, stmt: ir.ReducerFinalize, fplan: FinalizePlan, p: _Partials):
        """The partial cells the result is taken from: (cell, output, absolute reader
        thread) — every copy for an in-place finalize, the copy in each
        holder of a destination fragment element, replica 0 for shared/global."""
        tab = p.tables
        offset = p.plan.storage.offset
        dst = stmt.dst
        if dst is None:
            return tab.pair_cell, tab.pair_index, tab.pair_thread + offset
        if dst.scope == "fragment":
            found = self.s.readers.get(stmt)
            if found is None:
                # derived once: the same (stable) arrays then hit the register memos
                layout = fplan.dst_layout or self.s.layouts.fragments[dst]
                dtab = tables(layout)
                threads = dtab.pair_thread + layout.offset
                outputs = dtab.pair_index
                cells, held = p.regs.locate(threads, outputs)
                found = self.s.readers[stmt] = (cells, outputs, threads, held)
            cells, outputs, threads, held = found
            if held is None:
                return cells, outputs, threads
            beyond = p.regs.beyond(outputs)
            if beyond is not None:
                i = int(np.argmax(beyond))
                self.report.add("R505", slot_outside(
                    f"result read of {self.element(stmt.reducer, outputs[i])}",
                    int(threads[i]), int(p.regs.slot_of[outputs[i]]),
                    register_array(stmt.reducer), p.regs, threads[beyond]),
                    stmt.span, key="result-slot")
            missing = ~held if beyond is None else ~held & ~beyond
            if not missing.any():
                return cells[held], outputs[held], threads[held]
            i = int(np.argmax(missing))
            self.report.add("R503", f"thread {int(threads[i])} must write "
                            f"{self.element(dst, outputs[i])} but holds no partial of "
                            f"{self.element(stmt.reducer, outputs[i])}", stmt.span,
                            key="unheld-dst")
            return cells[held], outputs[held], threads[held]
        first = tab.pair_replica == 0
        return tab.pair_cell[first], tab.pair_index[first], tab.pair_thread[first] + offset

    def account(self, stmt: ir.ReducerFinalize, fplan: FinalizePlan, p: _Partials,
                cells, outputs) -> int:
        """Compare every observed copy's (id-sum, count) with the expected pair; name the
        wrong contributions of each mismatched output by a replay. Returns how many
        outputs mismatched."""
        ledger = p.ledger
        slots = p.regs.values.shape[1]
        poisoned = ~p.regs.flat_written[cells]
        if poisoned.any():
            i = int(np.argmax(poisoned))
            self.report.add("R502", f"the result of {self.element(stmt.reducer, outputs[i])}"
                            f" in thread {int(cells[i]) // slots + p.plan.storage.offset} is poisoned "
                            "(a partial the collective never wrote)", stmt.span,
                            key="result")
        bad = (p.ids.reshape(-1)[cells] != ledger.expected_ids[outputs]) | \
              (p.counts.reshape(-1)[cells] != ledger.expected_counts[outputs])
        if not bad.any():
            return 0
        bad_outputs, first = np.unique(outputs[bad], return_index=True)
        targets = cells[np.nonzero(bad)[0][first]]
        for output, cell in list(zip(bad_outputs, targets))[:4]:
            self.name_wrong(stmt, fplan, p, int(output), int(cell))
        if len(bad_outputs) > 4:
            self.report.add("R503", f"{len(bad_outputs)} outputs of {stmt.reducer.name} "
                            "violate exactly-once in all (the first 4 are named above)",
                            stmt.span, key="summary")
        return len(bad_outputs)

    def name_wrong(self, stmt, fplan, p: _Partials, output: int, cell: int) -> None:
        ledger = p.ledger
        slots = p.regs.values.shape[1]
        counts = replay_counts(ledger, fplan, p.plan.participants, self.s.threads,
                               max(p.plan.workspace_words, 1), slots, cell)
        wrong = wrong_contributions(ledger, output, counts)
        target = self.element(stmt.reducer, output)
        thread = cell // slots + p.plan.storage.offset
        if not wrong:
            self.report.add("R503", f"the copy of {target} in thread {thread} carries an "
                            "accounting pair no set of contributions explains", stmt.span,
                            key=output)
            return
        event, lane, times = wrong[0]
        message = (f"{describe(event, lane, self.block_text)} entered {target} {times} "
                   f"times (in the copy of thread {thread}; exactly once expected)")
        notes = [Note(f"{describe(e, l, self.block_text)} entered {times_} times")
                 for e, l, times_ in wrong[1:4]]
        if len(wrong) > 4:
            notes.append(Note(f"{len(wrong)} contributions to {target} are wrong in all"))
        notes.append(Note("the update", event.update.span))
        self.report.add("R503", message, stmt.span, *notes, key=(self.block, output))

    def deliver(self, stmt: ir.ReducerFinalize, p: _Partials, cells, outputs,
                threads) -> None:
        """Write the result to the destination (in place: the partials become it)."""
        dst = stmt.dst
        if dst is None:
            p.readable = True
            return
        values = p.regs.flat_values[cells]
        if dst.scope == "fragment":
            self.write_registers(dst, threads, outputs, values, stmt.span)
        else:
            self.write(dst, None, outputs, values, stmt.span)


def _window(buffer: ir.Buffer, flat: np.ndarray) -> np.ndarray | slice:
    """flat as a slice when it is consecutive and the buffer is shared or global: a
    scatter through a slice costs a fraction of one through an array. (Registers keep
    arrays: their ownership checks look positions up by the array.)"""
    if buffer.scope in ("shared", "global") and len(flat) > 1 and \
            (np.diff(flat) == 1).all():
        return slice(int(flat[0]), int(flat[-1]) + 1)
    return flat


def _outside(verb: str, buffer: ir.Buffer, flat: np.ndarray, bad: np.ndarray,
             threads: np.ndarray | None) -> str:
    """The R505 message of the first access marked bad: the flat offset the kernel
    computes, the thread, and the buffer's extent."""
    i = int(np.argmax(bad))
    who = "the block" if threads is None else f"thread {int(threads[i])}"
    return (f"{buffer.scope} {verb} {buffer.name}[{int(flat[i])}] by {who} is outside "
            f"{buffer.name}[{buffer.size}] ({int(bad.sum())} access"
            f"{'es' if bad.sum() > 1 else ''} of this statement)")


def _in_box(flat: np.ndarray, shape, starts, extents) -> np.ndarray:
    coords = np.unravel_index(flat, shape)
    inside = np.ones(len(flat), dtype=bool)
    for c, s, e in zip(coords, starts, extents):
        inside &= (c >= s) & (c < s + e)
    return inside
