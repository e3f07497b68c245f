"""The statements of a kernel body as CUDA, placed by the plan's layouts.

- A T.Parallel loop is a loop over the executing thread's slots of the loop layout:
  each (thread, slot) computes its iteration (and replica) from the layout's inverse
  (codegen.cuda_layouts); unused pairs are guarded off. Fragment accesses are register
  slots, shared/global accesses flat memory (codegen.cuda_access).
- A statement outside T.Parallel runs in every participant (one logical iteration,
  replicated), exactly as layout inference placed it.
- Copies loop over their layout (LayoutMap.copies: a fragment side's, or the
  cooperative partition of a global/shared copy, codegen.layout_copy), with border
  guards on global tensors: reads outside give 0, writes outside are dropped (the
  interpreter's rule). Where a thread moves runs of 16 contiguous, provably aligned
  bytes, each run is one 128-bit access (codegen.cuda_vector). A copy or fill that writes shared memory is fenced by barriers before (readers
  of the old contents are done) and after (the new contents are visible).
- `T.reduce_*` goes through shared memory: replica 0 of each source element stores it,
  every holder of an output combines its row in order.
- Reducer statements are codegen.cuda_collectives (the plan's steps)."""
from __future__ import annotations

import re
from typing import Callable
from contextlib import contextmanager

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import border_guards, region_indices, statement_ranges
from verify_reducer.spec.indexexpr import Const, IndexExpr, Var
from verify_reducer.spec.layout import Layout, default_partition, index_names
from verify_reducer.spec.ops import MONOIDS, REDUCE_KINDS
from verify_reducer.spec.physical import PhysicalPlan
from . import cuda_collectives as collectives
from .cuda_pipeline import plain_reason, render_pipeline
from verify_reducer.spec.addressing import affine
from .cuda_access import (FLAT, LANE, REP, TERM, Frame, Index, Place, flat_offset,
                          register_place, render_index)
from .cuda_exprs import ADD, C, ExprRenderer, combine, convert, from_float, is_half_like, literal, \
    to_float
from .cuda_layouts import S, T, Inverse, inverse_of, table_literal, table_type
from .cuda_vector import copy_runs, vector_type
from .layout_copy import vector_elements
from .cuda_text import Names, Writer, term_loop
from .layout_rules import reduce_kept

WARP_GROUP = 128


class Unsupported(ValueError):
    """A construct the CUDA renderer does not lower (the message names it and its line)."""


class KernelBody:
    """Renders the statements of plan.func's kernel into `out`; collects the file-scope
    tables and the shared arrays the body needs."""

    def __init__(self, plan: PhysicalPlan, names: Names, out: Writer):
        self.plan = plan
        self.layouts = plan.layouts
        self.func = plan.func
        self.names = names
        self.out = out
        self.tables: dict[Layout, str] = {}          # layout -> its inverse tables' stem
        self.table_text: list[str] = []              # their file-scope declarations
        self.shared: dict[str, str] = {}             # C name -> declaration
        # what each statement's integer names are known to range over (border guards)
        self.scopes = statement_ranges(plan.func)
        # a pipeline's issue of a later iteration: its loop variable's C name then
        self.rebound: dict[str, str] = {}
        # a pipelined shared buffer: the C variable of the element offset of the stage
        # being accessed (codegen.cuda_pipeline)
        self.stage_base: dict[ir.Buffer, str] = {}
        # a fragment written under another name (a pipeline's prefetch into `_next`)
        self.redirected: dict[ir.Buffer, str] = {}
        self.declared: list[set[str]] = [set()]
        self.divergent = 0                           # depth of thread-dependent ifs
        self.reducer_plans = {rp.reducer: rp for rp in plan.reducers}
        self.seeded = collectives.seeded_reducers(plan.func)
        self.barrier_ids = {fp.barrier_id: rp.participants for rp in plan.reducers
                            for fp in rp.finalizes}

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
        return ExprRenderer(self.var, lambda load: self.element(load.buffer, load.indices,
                                                               frame))

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
        if buffer.is_reducer:
            storage = self.reducer_plans[buffer].storage
            return register_place(collectives.partial_name(self, buffer), storage, ix, frame,
                                  self.var)
        if buffer.scope == "fragment":
            return register_place(name, self.layouts.fragment(buffer), ix, frame, self.var)
        flat = flat_offset(buffer.shape, ix, frame, self.var)
        base = self.stage_base.get(buffer)
        if base is not None:
            flat = C(f"{base} + {flat.text}", ADD)
        return Place(name, flat)

    def element(self, buffer: ir.Buffer, indices, frame: Frame) -> C:
        """The value of buffer[indices] for the executing thread, as C."""
        return self.place(buffer, indices, frame).read

    # --- barriers --------------------------------------------------------------------

    def sync(self, participants: tuple[int, int], why: str) -> None:
        """A barrier over the participant set (skipped twice in a row, and under a
        thread-dependent if, where not every participant could arrive)."""
        if self.divergent:
            return
        offset, count = participants
        if count == self.func.kernel.threads:
            text = "__syncthreads();"
        else:
            text = f"reducer_barrier({self.barrier_for(participants)}, {count});"
        last = self.out.lines[-1].strip() if self.out.lines else ""
        if last in ("__syncthreads();",) or last.startswith("reducer_barrier(") and \
                last == text:
            return
        self.out.line(f"{text}  // {why}")

    def barrier_for(self, participants: tuple[int, int]) -> int:
        """A named barrier for ordinary work of a warp-group participant set: one its own
        finalizes use (those threads run them one after the other), else a free one."""
        for bid, owner in sorted(self.barrier_ids.items()):
            if owner == participants:
                return bid
        for bid in range(1, 16):
            if bid not in self.barrier_ids:
                self.barrier_ids[bid] = participants
                return bid
        raise Unsupported(f"no named barrier left for threads {participants}")

    # --- slot loops ------------------------------------------------------------------

    @contextmanager
    def cells(self, layout: Layout, frame: Frame, used_vars: set[str] | None = None,
              with_replica: bool = False):
        """A loop over the executing thread's slots of layout; yields the frame in
        which the layout's index variables name the cell's logical iteration."""
        inverse = inverse_of(layout)
        slots = layout.slots_per_thread
        ranges = {T: (0, layout.count - 1), S: (0, slots - 1)}
        thread = "tid" if layout.offset == 0 else f"tid - {layout.offset}"
        c_names = {T: thread, S: "slot", FLAT: "flat", REP: "rep"}
        wanted = set(layout.index_vars) if used_vars is None else used_vars
        if slots > 1:
            self.out.line("#pragma unroll")
            header = f"for (int slot = 0; slot < {slots}; ++slot)"
        else:
            header = ""                      # a block of its own: its names stay local
        with self._maybe_block(header):
            declarations: dict[str, str] = {}
            if inverse.table is not None:
                loop_vars, extra, declarations = self._table_cells(layout, inverse, frame,
                                                                   c_names)
                ranges.update(extra)
            else:
                loop_vars = dict(zip(layout.index_vars, inverse.indices))
                if inverse.replica is not None:
                    loop_vars[layout.rep_var] = inverse.replica
            inner = frame.inner(layout, {}, ranges, c_names)
            guard = self._cell_guard(layout, inverse, inner)
            ranges.update((v, (0, e - 1)) for v, e in zip(layout.index_vars, layout.shape))
            with self._maybe_block(f"if ({guard})" if guard else None):
                for name in layout.index_vars:
                    if name in wanted:
                        declarations[self.var(name)] = render_index(loop_vars[name], inner,
                                                                    self.var).text
                        c_names[name] = self.var(name)
                if with_replica and layout.replicate > 1:
                    if inverse.table is None:
                        declarations["rep"] = render_index(loop_vars[layout.rep_var], inner,
                                                           self.var).text
                    c_names[layout.rep_var] = "rep"
                start = len(self.out.lines)
                yield frame.inner(layout, loop_vars, ranges, c_names)
                self._declare_used(start, declarations)

    def _declare_used(self, at: int, declarations: dict[str, str]) -> None:
        """Declare, before line `at`, the cell variables the lines after it use."""
        body = "\n".join(self.out.lines[at:])
        indent = "  " * self.out.depth
        lines = [f"{indent}const int {name} = {text};" for name, text in declarations.items()
                 if re.search(rf"\b{name}\b", body)]
        self.out.lines[at:at] = lines

    @contextmanager
    def _maybe_block(self, header: str | None):
        """A C block under header; None: none; "": a bare block for local names, unless
        a block has just been opened anyway."""
        opened = self.out.lines and self.out.lines[-1].endswith("{")
        if header is None or header == "" and opened:
            yield
        else:
            with self.out.block(header):
                self.declared.append(set())
                yield
                self.declared.pop()

    def _cell_guard(self, layout: Layout, inverse: Inverse, frame: Frame) -> str | None:
        if inverse.table is not None:
            return "flat >= 0"
        if inverse.used is None:
            return None
        return f"{render_index(inverse.cell(), frame, self.var).text} < {inverse.used}"

    def _table_cells(self, layout: Layout, inverse: Inverse, frame: Frame, c_names):
        """The inverse as constant tables indexed by the cell: flat index and replica."""
        stem = self.tables.get(layout)
        flat_table, rep_table = inverse.table
        if stem is None:
            stem = self.names.get(("table", layout), f"layout{len(self.tables)}")
            text = (f"// {layout.describe()}: the flat index (-1: unused) and replica "
                    f"of each cell slot*{layout.count} + thread\n"
                    f"__device__ const {table_type(flat_table)} {stem}_flat"
                    f"[{len(flat_table)}] = {table_literal(flat_table)};")
            if layout.replicate > 1:
                text += (f"\n__device__ const {table_type(rep_table)} {stem}_rep"
                         f"[{len(rep_table)}] = {table_literal(rep_table)};")
            self.tables[layout] = stem
            self.table_text.append(text)
        cell = render_index(inverse.cell(), frame.inner(layout, {}, inverse.ranges, c_names),
                            self.var).text
        self.out.line(f"const int flat = {stem}_flat[{cell}];")
        loop_vars: dict[str, IndexExpr] = {}
        stride = layout.size
        flat = Var(FLAT)
        for name, extent in zip(layout.index_vars, layout.shape):
            stride //= extent
            loop_vars[name] = (flat // stride) % extent
        declarations = {}
        if layout.replicate > 1:
            loop_vars[layout.rep_var] = Var(REP)
            declarations["rep"] = f"{stem}_rep[{cell}]"
        return loop_vars, {FLAT: (0, layout.size - 1), REP: (0, layout.replicate - 1)}, \
            declarations

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
        divergent = any(isinstance(s, ir.ThreadBinding) for s in ir.subexprs(stmt.cond))
        cond = self.exprs(frame).operand(stmt.cond, ir.BOOL).text
        self.divergent += divergent
        self.out.comment(f"line {stmt.span.line}: if")
        with self._maybe_block(f"if ({cond})"):
            self.body(stmt.then, frame)
        if stmt.orelse:
            with self._maybe_block("else"):
                self.body(stmt.orelse, frame)
        self.divergent -= divergent

    def _serialfor(self, stmt: ir.SerialFor, frame: Frame) -> None:
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
        with self._maybe_block(f"for ({ctype} {var} = {start}; {var} {test} {stop}; {step})"):
            self.body(stmt.body, frame)

    def _warpgroup(self, stmt: ir.WarpGroup, frame: Frame) -> None:
        offset, count = self.layouts.participants[stmt.body[0]] if stmt.body else (0, 0)
        groups = ", ".join(str(g) for g in stmt.groups)
        self.out.comment(f"line {stmt.span.line}: T.ws({groups}): threads "
                         f"{offset}..{offset + count - 1}")
        low = f"tid >= {offset} && " if offset else ""
        with self._maybe_block(f"if ({low}tid < {offset + count})"):
            self.body(stmt.body, Frame((offset, count)))
        if _writes_shared(stmt.body):
            self.sync(frame.participants, "the warp group's shared writes are visible")

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
        shared = _writes_shared(stmt.body)
        if shared:
            self.sync(frame.participants, "earlier readers of shared memory are done")
        with self.cells(layout, frame, used, with_replica=needs_rep) as inner:
            self.declared.append(set())
            self.body(stmt.body, inner)
            self.declared.pop()
        if shared:
            self.sync(frame.participants, "the shared writes are visible")

    def _store(self, stmt: ir.Store, frame: Frame) -> None:
        if not frame.loop_vars:
            self.out.comment(f"line {stmt.span.line}: {stmt.buffer.name}[...] = ...")
        target = self.place(stmt.buffer, stmt.indices, frame)
        value = self.exprs(frame).operand(stmt.value, stmt.buffer.dtype).text
        self.out.line(target.assign(value))

    # --- copies and fills --------------------------------------------------------------

    def _copy(self, stmt: ir.Copy, frame: Frame) -> None:
        if frame.loop_vars:
            raise Unsupported(f"line {stmt.span.line}: a T.copy inside a T.Parallel")
        src, dst = stmt.src, stmt.dst
        layout = self._copy_layout(stmt, frame)
        # memory takes one write per element, by replica 0 (as the simulator does)
        one_writer = dst.buffer.scope in ("global", "shared") and layout.replicate > 1
        self.out.comment(f"line {stmt.span.line}: T.copy {src.buffer.name} -> "
                         f"{dst.buffer.name}: {layout.describe()}")
        writes_shared = dst.buffer.scope == "shared"
        if writes_shared:
            self.sync(frame.participants, "earlier readers of shared memory are done")
        if not self._vector_copy(stmt, layout, frame, one_writer):
            self._scalar_copy(stmt, layout, frame, one_writer)
        if writes_shared:
            self.sync(frame.participants, "the copy into shared memory is visible")

    def _scalar_copy(self, stmt: ir.Copy, layout: Layout, frame: Frame,
                     one_writer: bool) -> None:
        """One element per (thread, slot) of the copy's layout."""
        src, dst = stmt.src, stmt.dst
        with self.cells(layout, frame, with_replica=one_writer) as inner:
            loop = tuple(Var(n) for n in layout.index_vars)
            src_ix = _region_indices(src, layout.shape, loop)
            dst_ix = _region_indices(dst, layout.shape, loop)
            value = self.element(src.buffer, src_ix, inner)
            inside_src = self._inside(stmt, src, src_ix, layout.shape, inner)
            if inside_src:
                value = C(f"{inside_src} ? {value.text} : {literal(0, src.buffer.dtype).text}",
                          10)
            value = convert(value, src.buffer.dtype, dst.buffer.dtype)
            target = self.place(dst.buffer, dst_ix, inner)
            writes = [test for test in ("rep == 0" if one_writer else None,
                                        self._inside(stmt, dst, dst_ix, layout.shape, inner))
                      if test]
            with self._maybe_block(f"if ({' && '.join(writes)})" if writes else None):
                self.out.line(target.assign(value.text))

    def _vector_copy(self, stmt: ir.Copy, layout: Layout, frame: Frame,
                     one_writer: bool) -> bool:
        """The copy as 128-bit accesses, one per run of V elements a thread moves, when
        codegen.cuda_vector's conditions hold; False (nothing written) otherwise."""
        src, dst = stmt.src, stmt.dst
        dtype = dst.buffer.dtype
        v = vector_elements(dtype)
        runs = copy_runs(stmt, layout, self.scopes[stmt])
        if runs is None:
            return False
        first = tuple(Var(n) for n in runs.index_vars[:-1]) + (Var(runs.index_vars[-1]) * v,)
        ctype = dtype.c_name
        vec, zero = vector_type(ctype)
        with self.cells(runs, frame, with_replica=one_writer) as inner:
            src_ix = _region_indices(src, layout.shape, first)
            dst_ix = _region_indices(dst, layout.shape, first)
            self.out.comment(f"{v} consecutive {dtype.name} elements as one 128-bit {vec}")
            if src.buffer.scope == "fragment":
                self.out.line(f"{vec} run;")
                self.out.line(f"{ctype}* run_elements = reinterpret_cast<{ctype}*>(&run);")
                self._lanes(src, layout.shape, first, v, inner,
                            lambda place: f"run_elements[lane] = {place.read.text};")
            else:
                address = self.element(src.buffer, src_ix, inner).text
                load = f"*reinterpret_cast<const {vec}*>(&{address})"
                inside = self._inside(stmt, src, src_ix, layout.shape, inner)
                if inside:
                    self.out.line(f"{vec} run = {zero};")
                    with self._maybe_block(f"if ({inside})"):
                        self.out.line(f"run = {load};")
                else:
                    self.out.line(f"const {vec} run = {load};")
            writes = [test for test in ("rep == 0" if one_writer else None,
                                        self._inside(stmt, dst, dst_ix, layout.shape, inner))
                      if test]
            with self._maybe_block(f"if ({' && '.join(writes)})" if writes else None):
                if dst.buffer.scope == "fragment":
                    self.out.line(f"const {ctype}* run_elements = "
                                  f"reinterpret_cast<const {ctype}*>(&run);")
                    self._lanes(dst, layout.shape, first, v, inner,
                                lambda place: place.assign("run_elements[lane]"))
                else:
                    target = self.element(dst.buffer, dst_ix, inner).text
                    self.out.line(f"*reinterpret_cast<{vec}*>(&{target}) = run;")
        return True

    def _lanes(self, region: ir.Region, shape: tuple[int, ...], first, v: int,
               frame: Frame, statement: Callable[[Place], str]) -> None:
        """The statement for the register of each of a run's v elements, in an unrolled
        loop over the lanes."""
        loop = first[:-1] + (first[-1] + Var(LANE),)
        inner = Frame(frame.participants, frame.loop_vars,
                      dict(frame.ranges, **{LANE: (0, v - 1)}),
                      dict(frame.c_names, **{LANE: "lane"}))
        self.out.line("#pragma unroll")
        with self._maybe_block(f"for (int lane = 0; lane < {v}; ++lane)"):
            ix = _region_indices(region, shape, loop)
            self.out.line(statement(self.place(region.buffer, ix, inner)))

    def _copy_layout(self, stmt: ir.Copy, frame: Frame) -> Layout:
        if stmt in self.layouts.copies:
            return self.layouts.copies[stmt]
        extents = tuple(stmt.dst.extents)
        for side in (stmt.src.buffer, stmt.dst.buffer):
            if side.is_reducer:
                storage = self.reducer_plans[side].storage
                if [e for e in storage.shape if e != 1] == [e for e in extents if e != 1] \
                        and storage.shape == extents:
                    return storage.rename(index_names(len(extents)))
                if storage.replicate == storage.count:
                    break                  # every thread holds every element
                raise Unsupported(f"line {stmt.span.line}: copy of reducer {side.name} "
                                  f"over a region its storage layout does not cover")
        offset, count = frame.participants
        return default_partition(extents, count, offset)

    def _guards(self, stmt, region: ir.Region, loop_shape) -> tuple[tuple[bool, bool], ...]:
        """Which border tests the elements of a global region need
        (spec.addressing.border_guards: the simulator asks the same question)."""
        return border_guards(region, _affine_starts(region), loop_shape, self.scopes[stmt])

    def _inside(self, stmt, region: ir.Region, indices, loop_shape, frame: Frame) -> str | None:
        """The border test of a global region's element, None when it always holds."""
        if region.buffer.scope != "global":
            return None
        tests = []
        for ix, extent, (low, high) in zip(indices, region.buffer.shape,
                                           self._guards(stmt, region, loop_shape)):
            text = render_index(ix, frame, self.var, ranges={}).text
            if low:
                tests.append(f"{text} >= 0")
            if high:
                tests.append(f"{text} < {extent}")
        return " && ".join(tests) or None

    def _fill(self, stmt: ir.Fill, frame: Frame) -> None:
        region = stmt.region
        buffer = region.buffer
        value = self.exprs(frame).operand(stmt.value, buffer.dtype).text
        self.out.comment(f"line {stmt.span.line}: T.fill {buffer.name}")
        if buffer.scope == "local":
            with self._maybe_block(f"for (int element = 0; element < {buffer.size}; "
                                   f"++element)"):
                self.out.line(f"{self.buffer(buffer)}[element] = {value};")
            return
        if buffer.scope == "fragment":
            layout = self.layouts.fragment(buffer)
        else:
            layout = default_partition(tuple(region.extents), *reversed(frame.participants))
        whole = tuple(region.extents) == buffer.shape and \
            all(isinstance(s, ir.Const) and s.value == 0 for s in region.starts)
        writes_shared = buffer.scope == "shared"
        if writes_shared:
            self.sync(frame.participants, "earlier readers of shared memory are done")
        with self.cells(layout, frame) as inner:
            loop = tuple(Var(n) for n in layout.index_vars)
            if buffer.scope == "fragment":
                ix = loop
                inside = None if whole else self._in_region(region, loop, inner)
            else:
                ix = _region_indices(region, layout.shape, loop)
                inside = self._inside(stmt, region, ix, layout.shape, inner)
            target = self.place(buffer, ix, inner)
            with self._maybe_block(f"if ({inside})" if inside else None):
                self.out.line(target.assign(value))
        if writes_shared:
            self.sync(frame.participants, "the fill of shared memory is visible")

    def _in_region(self, region: ir.Region, loop, frame: Frame) -> str:
        tests = []
        for var, start, extent in zip(loop, region.starts, region.extents):
            s = self.exprs(frame).render(start).text
            v = render_index(var, frame, self.var).text
            tests.append(f"{v} >= {s} && {v} < {s} + {extent}")
        return " && ".join(tests)

    # --- T.reduce_* ------------------------------------------------------------------

    def _reduce(self, stmt: ir.Reduce, frame: Frame) -> None:
        kind = REDUCE_KINDS[stmt.kind]
        monoid = MONOIDS[kind.monoid]
        src, dst = stmt.src, stmt.dst
        dim = stmt.dim + len(src.shape) if stmt.dim < 0 else stmt.dim
        kept = reduce_kept(src.shape, dim, dst.shape)
        if src.scope != "fragment" or kept is None:
            raise Unsupported(f"line {stmt.span.line}: T.reduce_{stmt.kind} of a "
                              f"{src.scope} buffer")
        scratch = collectives.reduce_rows_name(self, stmt)   # declared by codegen.cuda
        src_layout = self.layouts.fragment(src)
        self.out.comment(f"line {stmt.span.line}: T.reduce_{stmt.kind}({src.name}, "
                         f"{dst.name}, dim={stmt.dim}) through shared memory")
        self.sync(frame.participants, f"earlier readers of {scratch} are done")
        with self.cells(src_layout, frame, with_replica=True) as inner:
            loop = tuple(Var(n) for n in src_layout.index_vars)
            value = self.element(src, loop, inner)
            if kind.absolute:
                value = _abs(value, src.dtype)
            value = convert(value, src.dtype, dst.dtype)
            offset = flat_offset(src.shape, loop, inner, self.var).text
            guard = "rep == 0" if src_layout.replicate > 1 else None
            with self._maybe_block(f"if ({guard})" if guard else None):
                self.out.line(f"{scratch}[{offset}] = {value.text};")
        self.sync(frame.participants, f"{scratch} is complete")
        if dst.scope == "fragment":
            dst_layout = self.layouts.fragment(dst)
        else:
            dst_layout = default_partition(dst.shape, *reversed(frame.participants))
        with self.cells(dst_layout, frame) as inner:
            inner.c_names[TERM] = "term"
            out_ix = tuple(Var(n) for n in dst_layout.index_vars)
            row = [out_ix[kept.index(d)] if d != dim else Var(TERM)
                   for d in range(len(src.shape))]
            target = self.place(dst, out_ix, inner)
            if stmt.clear:
                first = flat_offset(src.shape, tuple(row[:dim]) + (Const(0),) +
                                    tuple(row[dim + 1:]), inner, self.var).text
                start, begin = f"{scratch}[{first}]", 1
            else:
                start, begin = target.read.text, 0
            self.out.line(f"{dst.dtype.c_name} value = {start};")
            with self._maybe_block(term_loop(self.out, begin, src.shape[dim])):
                element = C(f"{scratch}[{flat_offset(src.shape, tuple(row), inner, self.var).text}]")
                self.out.line(f"value = {combine(monoid, dst.dtype, C('value'), element).text};")
            self.out.line(target.assign("value"))
        if dst.scope == "shared":
            self.sync(frame.participants, f"{dst.name} is visible")

    # --- reducers --------------------------------------------------------------------

    def _reducerinit(self, stmt: ir.ReducerInit, frame: Frame) -> None:
        collectives.init(self, stmt, frame)

    def _reducerupdate(self, stmt: ir.ReducerUpdate, frame: Frame) -> None:
        collectives.update(self, stmt, frame)

    def _reducerfinalize(self, stmt: ir.ReducerFinalize, frame: Frame) -> None:
        collectives.finalize(self, stmt, frame)


def _abs(value: C, dtype) -> C:
    if not dtype.is_float:
        return C(f"abs({value.text})") if dtype.kind == "int" else value
    if is_half_like(dtype):
        return from_float(C(f"fabsf({to_float(value, dtype).text})"), dtype)
    return C(f"{'fabs' if dtype.name == 'float64' else 'fabsf'}({value.text})")


def _affine_starts(region: ir.Region) -> tuple[IndexExpr, ...]:
    starts = tuple(affine(s) for s in region.starts)
    if any(s is None for s in starts):
        raise Unsupported(f"line {region.span.line}: a region start of "
                          f"{region.buffer.name} that is not an integer affine expression")
    return starts


def _region_indices(region: ir.Region, loop_shape: tuple[int, ...],
                    loop: tuple[Var, ...]) -> tuple[Index, ...]:
    """The element of region touched by loop iteration `loop` (over loop_shape):
    spec.addressing.region_indices over the region's starts as IndexExprs."""
    return region_indices(_affine_starts(region), region.extents, loop_shape, loop)


def used_vars(body: ir.Body) -> set[str]:
    names = set()
    for stmt in ir.walk(body):
        for e in ir.stmt_exprs(stmt):
            names |= {s.name for s in ir.subexprs(e) if isinstance(s, ir.Var)}
        if isinstance(stmt, (ir.Store,)):
            names |= {s.name for i in stmt.indices for s in ir.subexprs(i)
                      if isinstance(s, ir.Var)}
    return names


def _writes_shared(body: ir.Body) -> bool:
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Store) and stmt.buffer.scope == "shared":
            return True
        if isinstance(stmt, ir.Copy) and stmt.dst.buffer.scope == "shared":
            return True
        if isinstance(stmt, ir.Fill) and stmt.region.buffer.scope == "shared":
            return True
        if isinstance(stmt, ir.ReducerFinalize) and stmt.dst is not None and \
                stmt.dst.scope == "shared":
            return True
    return False
