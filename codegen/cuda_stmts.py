"""The statements of a kernel body as CUDA, placed by the plan's layouts.

- A T.Parallel loop is a loop over the executing thread's cells of the loop layout
  (codegen.cuda_cells). Fragment accesses are register slots, shared/global accesses
  flat memory (codegen.cuda_access).
- A statement outside T.Parallel runs in every participant (one logical iteration,
  replicated), exactly as layout inference placed it.
- Copies and fills are codegen.cuda_copies, `T.reduce_*` codegen.cuda_reduce,
  pipelined loops codegen.cuda_pipeline, reducer statements codegen.cuda_collectives
  (the plan's steps); each takes this KernelBody."""
from __future__ import annotations

from typing import Callable

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import affine
from verify_reducer.spec.layout import Layout
from verify_reducer.spec.physical import PhysicalPlan

from . import cuda_collectives as collectives
from .cuda_access import Frame, Index, Place, flat_offset, register_place, swizzled_offset
from .cuda_cells import CellLoops
from .lower import cells as cells_lowering
from .lower.cells import CellLoop
from .cuda_copies import render_copy, render_fill
from .cuda_atomics import render_atomic, render_vector_atomic
from .lower import atomics as atomics_lowering
from .cuda_gemm import render_gemm
from .lower.gemm import lower_gemm
from .cuda_exprs import ADD, C, ExprRenderer
from .cuda_warp import WarpExprRenderer
from .cuda_pipeline import plain_reason, render_pipeline
from .cuda_reduce import render_reduce
from .cuda_text import Names, Writer
from .cuda_unsupported import Unsupported


class KernelBody(CellLoops):
    """Renders the statements of plan.func's kernel into `out`; collects the file-scope
    tables and the shared arrays the body needs."""

    def __init__(self, plan: PhysicalPlan, names: Names, out: Writer):
        self.plan = plan
        self.layouts = plan.layouts
        self.func = plan.func
        self.names = names
        self.out = out
        self.tables: dict[Layout, str] = {}          # layout -> its inverse tables' stem
        self.rep_tables: set[Layout] = set()         # those whose replica table is declared
        self.register_slots: dict[str, int] = {}     # register array -> its slots
        self.table_text: list[str] = []              # their file-scope declarations
        self.shared: dict[str, str] = {}             # C name -> declaration
        # what each statement's integer names are known to range over (border guards)
        self.scopes = plan.statement_ranges()
        # a pipeline's issue of a later iteration: its loop variable's C name then
        self.rebound: dict[str, str] = {}
        # a pipelined shared buffer: the C variable of the element offset of the stage
        # being accessed (codegen.cuda_pipeline)
        self.stage_base: dict[ir.Buffer, str] = {}
        # a fragment written under another name (a pipeline's prefetch into `_next`)
        self.redirected: dict[ir.Buffer, str] = {}
        # what a pipeline issues while the next statement (a wgmma) runs: printed by
        # that statement between its issue and its wait (codegen.cuda_wgmma)
        self.while_in_flight: Callable[[], None] | None = None
        self.declared: list[set[str]] = [set()]
        self.reducer_plans = {rp.reducer: rp for rp in plan.reducers}
        self.seeded = collectives.seeded_reducers(plan.func)

    # --- names -----------------------------------------------------------------------

    def var(self, name: str) -> str:
        found = self.rebound.get(name)
        return found if found is not None else self.names.get(("var", name), name)

    def buffer(self, buffer: ir.Buffer) -> str:
        found = self.redirected.get(buffer)
        return found if found is not None else self.names.get(buffer, buffer.name)

    def next_tile(self, buffer: ir.Buffer) -> str:
        """The register array a pipeline prefetches a fragment's next tile into."""
        return self.names.get(("next", buffer), f"{buffer.name}_next")

    def exprs(self, frame: Frame) -> ExprRenderer:
        return WarpExprRenderer(self.var, lambda load: self.element(load.buffer,
                                                                   load.indices, frame))

    def index(self, e: ir.Expr, frame: Frame) -> Index:
        found = affine(e)
        return found if found is not None else self.exprs(frame).render(e)

    # --- elements --------------------------------------------------------------------

    def place(self, buffer: ir.Buffer, indices, frame: Frame) -> Place:
        """Where buffer[indices] lives for the executing thread; indices are IR
        expressions or already Index values."""
        ix = tuple(self.index(e, frame) if isinstance(e, tuple(ir.Expr.__args__)) else e
                   for e in indices)
        name = self.buffer(buffer)
        layout = None
        if buffer.is_reducer:
            name = collectives.partial_name(self, buffer)
            layout = self.reducer_plans[buffer].storage
        elif buffer.scope == "fragment":
            layout = self.layouts.fragment(buffer)
        if layout is not None:                       # a register array
            self.register_slots[name] = layout.slots_per_thread
            return register_place(name, layout, ix, frame, self.var)
        swizzle = self.plan.swizzle(buffer)
        if swizzle is not None:                  # the plan's swizzled chunks (wgmma)
            flat = swizzled_offset(swizzle, ix, frame, self.var)
        else:
            pitch = self.plan.pitch(buffer)
            shape = buffer.shape if pitch is None else (buffer.shape[0], pitch)
            flat = flat_offset(shape, ix, frame, self.var)   # the plan's padded rows
        base = self.stage_base.get(buffer)
        if base is not None:
            flat = C(f"{base} + {flat.text}", ADD)
        return Place(name, flat)

    def element(self, buffer: ir.Buffer, indices, frame: Frame) -> C:
        """The value of buffer[indices] for the executing thread, as C."""
        return self.place(buffer, indices, frame).read

    # --- barriers --------------------------------------------------------------------

    def fence(self, stmt: ir.Stmt, where: str, rows: str = "") -> None:
        """The plan's barrier at stmt, if it has one there (spec.physical.BodyBarriers,
        decided by codegen.plan_barriers: the renderer places none of its own); rows:
        a T.reduce_*'s shared rows, as its reason names them."""
        barrier = self.plan.barriers.at(stmt, where)
        if barrier is None:
            return
        if barrier.id is None:
            raise Unsupported(f"no named barrier left for threads {barrier.participants}")
        text = "__syncthreads();" if barrier.id == 0 else \
            f"reducer_barrier({barrier.id}, {barrier.arrivals});"
        if barrier.async_proxy:
            text = "reducer_fence_async_proxy(); " + text
        self.out.line(f"{text}  // {barrier.why.replace('{rows}', rows)}")

    # --- statements ------------------------------------------------------------------

    def body(self, stmts: ir.Body, frame: Frame) -> None:
        for stmt in stmts:
            self.stmt(stmt, frame)

    def stmt(self, stmt: ir.Stmt, frame: Frame) -> None:
        getattr(self, "_" + type(stmt).__name__.lower())(stmt, frame)

    def _alloc(self, stmt: ir.Alloc, frame: Frame) -> None:
        """Declared at the top of the kernel (registers and shared memory are static)."""

    def _alias(self, stmt: ir.Alias, frame: Frame) -> None:
        """The frontend resolved the new name to the same buffer: nothing to run."""

    def _let(self, stmt: ir.Let, frame: Frame) -> None:
        name = self.var(stmt.var.name)
        value = self.exprs(frame).operand(stmt.value, stmt.var.dtype).text
        if name in self.declared[-1]:
            self.out.line(f"{name} = {value};")
        else:
            self.declared[-1].add(name)
            self.out.line(f"{stmt.var.dtype.c_name} {name} = {value};")

    def _if(self, stmt: ir.If, frame: Frame) -> None:
        cond = self.exprs(frame).operand(stmt.cond, ir.BOOL).text
        self.out.comment(f"line {stmt.span.line}: if")
        with self.maybe_block(f"if ({cond})"):
            self.body(stmt.then, frame)
        if stmt.orelse:
            with self.maybe_block("else"):
                self.body(stmt.orelse, frame)

    def _serialfor(self, stmt: ir.SerialFor, frame: Frame) -> None:
        lane = atomics_lowering.vector_lanes(stmt)
        issue = atomics_lowering.issue_of(self.plan, lane) if lane is not None else None
        if issue is not None and issue.vector > 1:   # T.atomic_addxN: one instruction
            render_vector_atomic(self, stmt, issue, frame)
            return
        if issue is not None and issue.per_lane:     # ... or a loop of element atomics
            self.out.comment(f"line {lane.span.line}: T.atomic_addx{lane.vector} into "
                             f"{lane.buffer.name}[...]: {issue.per_lane}")
        pipe = self.plan.pipeline(stmt)
        if pipe is not None:
            render_pipeline(self, pipe, frame)
            return
        var = self.var(stmt.var.name)
        ctype = stmt.var.dtype.c_name
        ex = self.exprs(frame)
        start = ex.operand(stmt.start, stmt.var.dtype).text
        stop = ex.operand(stmt.stop, stmt.var.dtype).text
        kind = {"pipelined": f"T.Pipelined (num_stages={stmt.num_stages}) as a plain loop"
                             f"{plain_reason(self.plan, stmt)}",
                "unroll": "T.unroll", "serial": "T.serial", "range": "range"}[stmt.kind]
        self.out.comment(f"line {stmt.span.line}: {kind}")
        if stmt.kind == "unroll":
            self.out.line("#pragma unroll")
        test, step = ("<", f"{var} += {stmt.step}") if stmt.step > 0 else \
            (">", f"{var} -= {-stmt.step}")
        if abs(stmt.step) == 1:
            step = f"++{var}" if stmt.step > 0 else f"--{var}"
        with self.maybe_block(f"for ({ctype} {var} = {start}; {var} {test} {stop}; {step})"):
            self.body(stmt.body, frame)

    def _warpgroup(self, stmt: ir.WarpGroup, frame: Frame) -> None:
        offset, count = self.layouts.participants[stmt.body[0]] if stmt.body else (0, 0)
        groups = ", ".join(str(g) for g in stmt.groups)
        self.out.comment(f"line {stmt.span.line}: T.ws({groups}): threads "
                         f"{offset}..{offset + count - 1}")
        low = f"tid >= {offset} && " if offset else ""
        with self.maybe_block(f"if ({low}tid < {offset + count})"):
            self.body(stmt.body, Frame((offset, count)))
        self.fence(stmt, "after")

    def _parallelfor(self, stmt: ir.ParallelFor, frame: Frame) -> None:
        if frame.loop_vars:
            raise Unsupported(f"line {stmt.span.line}: a T.Parallel nested in another "
                              f"T.Parallel")
        layout = self.layouts.loop(stmt)
        names = tuple(v.name for v in stmt.vars)
        extents = ", ".join(str(e) for e in stmt.extents)
        self.out.comment(f"line {stmt.span.line}: T.Parallel({extents}): "
                         f"{layout.describe()}")
        used = used_vars(stmt.body)
        needs_rep = any(isinstance(s, ir.ReducerUpdate) and
                        self.reducer_plans[s.reducer].sites and
                        collectives.site_guard(self, s) is not None
                        for s in ir.walk(stmt.body))
        layout = layout.rename(names) if layout.index_vars != names else layout
        one_writer = stmt in self.plan.one_writer_loops
        needs_rep = needs_rep or atomics_lowering.guards_replica(self.plan, stmt)
        self.fence(stmt, "before")
        def render_cells(loop: CellLoop) -> None:
            with self.cells(layout, frame, used, with_replica=needs_rep or one_writer,
                            loop=loop) as inner, \
                    self.maybe_block("if (rep == 0)" if one_writer else None):
                self.declared.append(set())
                self.body(stmt.body, inner)
                self.declared.pop()

        start = len(self.out.lines)
        render_cells(cells_lowering.cell_loop(layout))
        # the lowering decides from the body's selects whether the loop is rolled; if
        # so, it is rendered again: the same statements, each select once per iteration
        loop = cells_lowering.cell_loop(layout, self.last_selects)
        if loop.rolled is not None:
            del self.out.lines[start:]
            render_cells(loop)
        self.fence(stmt, "after")

    def _store(self, stmt: ir.Store, frame: Frame) -> None:
        if not frame.loop_vars:
            self.out.comment(f"line {stmt.span.line}: {stmt.buffer.name}[...] = ...")
        target = self.place(stmt.buffer, stmt.indices, frame)
        value = self.exprs(frame).operand(stmt.value, stmt.buffer.dtype).text
        self.fence(stmt, "before")
        self.out.line(target.assign(value))
        self.fence(stmt, "after")

    # --- copies, fills, T.reduce_*, reducers: their own modules ----------------------

    def _copy(self, stmt: ir.Copy, frame: Frame) -> None:
        render_copy(self, stmt, frame)

    def _fill(self, stmt: ir.Fill, frame: Frame) -> None:
        render_fill(self, stmt, frame)

    def _reduce(self, stmt: ir.Reduce, frame: Frame) -> None:
        render_reduce(self, stmt, frame)

    def _gemm(self, stmt: ir.Gemm, frame: Frame) -> None:
        render_gemm(self, stmt, lower_gemm(self.plan, stmt), frame)

    def _atomicupdate(self, stmt: ir.AtomicUpdate, frame: Frame) -> None:
        render_atomic(self, stmt, atomics_lowering.issue_of(self.plan, stmt), frame)

    def _reducerinit(self, stmt: ir.ReducerInit, frame: Frame) -> None:
        collectives.init(self, stmt, frame)

    def _reducerupdate(self, stmt: ir.ReducerUpdate, frame: Frame) -> None:
        collectives.update(self, stmt, frame)

    def _reducerfinalize(self, stmt: ir.ReducerFinalize, frame: Frame) -> None:
        collectives.finalize(self, stmt, frame)


def used_vars(body: ir.Body) -> set[str]:
    """The variable names body's statements read: a cell loop, and the kernel's block
    indices, are declared only when read."""
    names = set()
    for stmt in ir.walk(body):
        for e in ir.stmt_exprs(stmt):
            names |= {s.name for s in ir.subexprs(e) if isinstance(s, ir.Var)}
        if isinstance(stmt, (ir.Store,)):
            names |= {s.name for i in stmt.indices for s in ir.subexprs(i)
                      if isinstance(s, ir.Var)}
    return names

