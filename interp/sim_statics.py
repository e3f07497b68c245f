"""What every simulation of one physical plan shares, whatever its inputs
(interp.simulate runs once per input): the plan's lookups by statement, the lanes of
each T.Parallel, and the memos of index arrays derived from its layouts and region
starts, all built on the first run only."""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.warp import is_warp_call
from verify_reducer.spec.dtypes import INT64
from verify_reducer.spec.layout import Layout
from verify_reducer.spec.physical import FinalizePlan, PhysicalPlan, SitePlan
from verify_reducer.codegen.lower import cells as cells_lowering

from .accounting import iteration_hashes
from .sim_cells import Cells, run_cells
from .sim_copies import Moves
from .values import ITER, REP, SLOT, THREAD, Val


@dataclass(frozen=True)
class LoopLanes:
    """A T.Parallel's lanes, the same in every block: one per (thread, slot) its cell
    loop runs, and what the check of that loop against the layout found."""
    threads: np.ndarray                 # absolute
    env: dict[str, Val]                 # THREAD, SLOT, ITER, REP and the loop variables
    cells: Cells


class PlanStatics:
    """One plan's statics, built on the plan's first simulation and dropped with the
    plan: the statics hold it weakly and their entry goes when it dies, so a process
    that simulates many programs keeps the statics of the live plans only."""

    _LIVE: dict[int, "PlanStatics"] = {}            # id(plan) of a live plan -> its statics

    @classmethod
    def of(cls, plan: PhysicalPlan) -> "PlanStatics":
        found = cls._LIVE.get(id(plan))
        if found is not None and found.plan is plan:
            return found
        made = cls._LIVE[id(plan)] = cls(plan)
        # runs when the plan dies, before its id can be reused
        weakref.finalize(plan, cls._LIVE.pop, id(plan), None)
        return made

    @property
    def plan(self) -> PhysicalPlan | None:
        return self._plan()

    def __init__(self, plan: PhysicalPlan):
        func = plan.func
        self._plan = weakref.ref(plan)          # a strong one would keep the plan alive
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
        self.loop_cache: dict[ir.ParallelFor, LoopLanes] = {}
        # each layout's cell loop (codegen.lower.cells), executed: by layout value
        self.cell_runs: dict[Layout, Cells] = {}
        # each copy's lowering and its partition's pairs (interp.sim_copies.lowered_copy)
        self.copy_cache: dict[ir.Copy, tuple] = {}
        self.copy_vars: dict[ir.Copy, tuple[str, ...] | None] = {}
        self.moves: dict[tuple, Moves] = {}
        # each lowering's index expressions over its element loop, the uniform names at 0
        # (interp.sim_copies.index_values): by statement
        self.index_bases: dict[ir.Stmt, tuple] = {}
        # each copy's moves at one start, shifted to the others (interp.sim_copies._Template)
        self.move_templates: dict[ir.Copy, object] = {}
        self.moves_lanes = 0      # lanes held by moves: the cache is bounded by memory
        self.entries: dict[tuple, tuple] = {}
        self.readers: dict[ir.ReducerFinalize, tuple] = {}
        self.iteration_hashes: dict[tuple, tuple] = {}
        self.flat_memo: dict = {}
        self.uniform_memo: dict = {}
        self.vars_of: dict[ir.Expr, tuple[str, ...] | None] = {}
        # the workspace words each publication combines, per (publication, outputs
        # array): interp.sim_reducers.publish_addresses
        self.publish_memo: dict[tuple, tuple] = {}

    def pure_vars(self, expr: ir.Expr) -> tuple[str, ...] | None:
        """The variables expr reads, or None if it reads memory or the thread."""
        if expr not in self.vars_of:
            subs = list(ir.subexprs(expr))
            impure = any(isinstance(e, (ir.Load, ir.ThreadBinding))
                         or (isinstance(e, ir.Call) and is_warp_call(e.func))   # other lanes
                         for e in subs)
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

    def cells(self, layout: Layout) -> Cells:
        """The cells the kernel's loop over layout runs (its CellLoop, executed and
        checked: interp.sim_cells), once per layout value."""
        found = self.cell_runs.get(layout)
        if found is None:
            found = self.cell_runs[layout] = run_cells(cells_lowering.cell_loop(layout))
        return found

    def loop_lanes(self, loop: ir.ParallelFor) -> LoopLanes:
        found = self.loop_cache.get(loop)
        if found is not None:
            return found
        layout = self.layouts.loops[loop]
        cells = self.cells(layout)
        threads = cells.thread + layout.offset
        env = {THREAD: Val(threads, INT64), SLOT: Val(cells.slot, INT64),
               ITER: Val(cells.index, INT64), REP: Val(cells.replica, INT64)}
        for var, c in zip(loop.vars, cells.coords):
            env[var.name] = Val(var.dtype.quantize(c), var.dtype)
        made = LoopLanes(threads, env, cells)
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
