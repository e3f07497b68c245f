"""Layout inference: where every fragment element and every T.Parallel iteration runs.

TileLang's rules (docs/design.md §5), decided exactly. The kernel is read into ops
(T.Parallel loops, copies, reductions, statements outside T.Parallel) in program order;
then layouts are placed the way TileLang's LayoutInference does: an op infers as soon as a
fragment it touches is placed, and each newly placed fragment wakes its users ("common"
level); when nothing can propagate, the first op left in program order takes its default
("free" level). So a fragment is placed by whichever op reaches it first through that
propagation — not necessarily its first writer in the text (an 8-wide loop writing
m_new[i] does not pin m_new when (8, 64) loops that follow x_frag also read it). Every
access is checked once all is placed. When a check fails, the ops that share fragments
(one component) are placed again from each of their ops as the first free one, and the
clean placement with the fewest slots per thread wins (TileLang's InferInFreeMode): so a
whole-tile `T.copy` adopts the layout a loop needs, replicated ones included. R300 remains
only when no root gives a clean placement.

- Participants: all `kernel.threads` threads; inside `T.ws(g, ...)` the contiguous warp
  groups' threads [128·g, 128·(g_last+1)).
- A T.Parallel loop follows a placed fragment it touches — preferring one indexed by
  every loop variable, then source order (TileLang's ParallelOp) — or, free, takes the
  vectorized partition of its extents (TileLang's PlanLoopPartition: each thread runs
  V consecutive iterations of the innermost variable, V from the loop's accesses by
  codegen.layout_vector; V = 1 is the default partition). Every other fragment access must agree with the
  loop (`layout_rules.check`: readers hold what they read, writers are exactly the
  holders); a disagreement, or an index no layout can place (data-dependent, thread
  binding), is an R300 layout conflict naming both demands: the loop (and the fragment
  it follows) with an iteration and a thread, and the op that placed the fragment. The
  R300 carries both layouts as its counterexample (spec.diagnostics.Counterexample), so
  the conflict is drawn before any plan exists.
- A loop places the unplaced fragments whose index it can invert (codegen.layout_inverse:
  affine sums of digits of loop variables with mixed-radix coefficients, gaps allowed,
  `x_frag[it, 2*j + k]`, `x_frag[it, 12*i + k]`, `x_frag[it, (k % 2)*8 + k // 2]`), so
  that a loop over other columns of the row follows it: element y lives where the
  loop runs the iterations that touch y, replicated over the variables and digits the
  index does not use; a dimension indexed without loop variables (a serial loop
  variable, a constant) is kept whole by every holder, one slot per index
  (`x_frag[it, j]` in a serial loop over `it`). A `T.copy` places an unplaced
  fragment side by the vectorized partition of the fragment's shape when the side is
  the copy's whole index space (V from both sides), else the default one (a whole
  fragment-to-fragment copy keeps the source's layout). A fragment first reached by a
  statement outside T.Parallel (one iteration run by every participant) is placed fully
  replicated. A copy between global and shared memory has no fragment side: its
  partition is codegen.layout_copy's (runs of 16 bytes per thread where the regions
  allow, else the default partition), recorded with the other copies. `T.fill` and
  finalize destinations are not sources: both lower to any layout, as in TileLang. A
  fragment never placed gets the default partition of its shape over the participants
  where it was allocated.
- `T.reduce_*`: dst follows src with the reduced dimension removed, replicated across
  the threads that held the reduced elements; when those cannot share one replica
  numbering, dst sits on one holder of each element (sound: every thread of the group
  receives the result, dst just keeps fewer copies). A dst placed otherwise may only use
  threads the reduction delivers to.
- Reducer buffers are never layout sources (their partial storage is a plan decision);
  local buffers are per thread and have none. A reducer update takes the layout of its
  innermost T.Parallel, or outside one a single iteration replicated over all participants.

R300 diagnostics are collected over the whole kernel and raised together as one
DiagnosticError."""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import (Counterexample, Diagnostic, DiagnosticError,
                                              Note, error)
from verify_reducer.spec.indexexpr import Var
from verify_reducer.spec.layout import (Layout, default_partition, fully_replicated, index_names,
                         vectorized_partition)
from verify_reducer.spec.source import Span
from verify_reducer.spec.target import DEFAULT_TARGET, target as target_named
from .lower.gemm import (accumulator_layout, gemm_split, operand_layout_a,
                         operand_layout_b)
from .lower.wgmma import wgmma_refusal
from .layout_copy import cooperative_layout, is_cooperative
from .layout_access import (Access, Scope, bind_let, memory_accesses, region_access,
                            serial_scope, stmt_accesses)
from .layout_inverse import invert_access
from .layout_rules import (Mismatch, TooManyCells, bound_cells, check, compose, follow,
                           holders_contain, project, reduce_kept)
from .layout_vector import vector_width

WARP_GROUP = 128
SCALAR_VAR = "_i"


@dataclass
class LayoutMap:
    """The result, keyed by IR node identity (IR nodes compare by identity)."""
    fragments: dict[ir.Buffer, Layout] = field(default_factory=dict)
    loops: dict[ir.ParallelFor, Layout] = field(default_factory=dict)
    updates: dict[ir.ReducerUpdate, Layout] = field(default_factory=dict)
    # every copy with a fragment side, and every cooperative global/shared copy
    # (codegen.layout_copy: runs of 16 bytes where the regions allow)
    copies: dict[ir.Copy, Layout] = field(default_factory=dict)
    participants: dict[object, tuple[int, int]] = field(default_factory=dict)  # every stmt
    sources: dict[ir.Buffer, Span] = field(default_factory=dict)  # where a fragment was placed
    # each gemm's warps (along M, along N) as its accumulator layout splits them
    # (codegen.lower.gemm.gemm_split: the target's wgmma or mma split)
    gemm_splits: dict[ir.Gemm, tuple[int, int]] = field(default_factory=dict)
    # the fast planner's search per reducer under these layouts (codegen.proofs.fast):
    # every plan made from them (auto, fast, a size family's member) is chosen by the
    # same proofs, run once and dropped with the layouts; a copy starts empty
    searches: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    # codegen.lower.reduce's decision per T.reduce_* under these layouts: the planner,
    # the renderer and the simulator all ask, and it is derived once
    reduces: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def fragment(self, buffer: ir.Buffer) -> Layout:
        return self.fragments[buffer]

    def loop(self, node: ir.ParallelFor) -> Layout:
        return self.loops[node]

    def update(self, node: ir.ReducerUpdate) -> Layout:
        return self.updates[node]


def scalar_layout(participants: tuple[int, int]) -> Layout:
    """A statement outside any T.Parallel: one iteration, run by every participant."""
    offset, count = participants
    return Layout((1,), (SCALAR_VAR,), Var("rep"), 0, count, count, offset)


def infer_layouts(func: ir.PrimFunc, target: str | None = None) -> LayoutMap:
    """The layouts of every fragment, T.Parallel loop and reducer update of func, for
    the target architecture (a spec.target name: a gemm's accumulator is split as that
    target's tensor-core instruction wants; None: the default target). Raises
    DiagnosticError with every R300 found."""
    return _Inference(func, target_named(target or DEFAULT_TARGET)).run()


def _wgmma_accumulators(func: ir.PrimFunc, target) -> set[ir.Buffer]:
    """The accumulators every gemm into which can run as wgmma over the whole block (a
    gemm inside a T.ws group stays on mma.sync): one layout serves every gemm into an
    accumulator, so one gemm that cannot keeps them all on TileLang's mma split."""
    grouped = {id(s) for g in ir.walk(func.kernel.body) if isinstance(g, ir.WarpGroup)
               for s in ir.walk(g.body)}
    block = (0, func.kernel.threads)
    able, unable = set(), set()
    for stmt in ir.walk(func.kernel.body):
        if isinstance(stmt, ir.Gemm):
            fits = id(stmt) not in grouped and not wgmma_refusal(stmt, target, block)
            (able if fits else unable).add(stmt.c)
    return able - unable


@dataclass(eq=False)
class _Op:
    """A statement that places or uses fragments: a T.Parallel loop, a copy (a loop over
    its destination region), a reduction, or a statement outside T.Parallel (one
    iteration run by every participant)."""
    kind: str                               # "loop" | "copy" | "reduce" | "gemm" | "scalar"
    node: ir.Stmt
    participants: tuple[int, int]
    shape: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    accesses: list[Access] = field(default_factory=list)
    updates: list[ir.ReducerUpdate] = field(default_factory=list)
    memory: list[Access] = field(default_factory=list)  # every buffer, for the vector width
    layout: Layout | None = None
    source: Access | None = None            # the access the loop layout follows
    fixed: tuple = ()                       # a gemm's (fragment, layout) pairs (strict)

    @property
    def head(self) -> str:
        """The op without its line: `T.Parallel(2, 5)`, `T.copy`, `the statement`."""
        if self.kind == "loop":
            return f"T.Parallel({', '.join(map(str, self.shape))})"
        if self.kind == "copy":
            return "T.copy"
        if self.kind == "reduce":
            return f"T.reduce_{self.node.kind}"
        if self.kind == "gemm":
            return "T.gemm"
        return "the statement"

    @property
    def what(self) -> str:
        return f"{self.head} at line {self.node.span.line}"

    def buffers(self) -> list[ir.Buffer]:
        if self.kind == "reduce":
            return [b for b in (self.node.src, self.node.dst) if b.scope == "fragment"]
        if self.kind == "gemm":
            return [buffer for buffer, _ in self.fixed]
        return [a.buffer for a in self.accesses]


class _Inference:
    """Collect the ops in program order, then place layouts as TileLang's LayoutInference
    does: an op infers as soon as a fragment it touches is placed ("common" level, with
    a queue propagating each newly placed fragment to its users); when nothing can
    propagate, the first op left in program order takes its default ("free" level).
    Checks run once everything is placed, so program order never causes a conflict
    that some propagation order avoids. When they find a conflict, the ops that share
    fragments (one component) are placed again from each of their ops as the first free
    one (TileLang's InferInFreeMode): a whole-tile copy then adopts the layout a loop
    needs instead of imposing its default partition."""

    def __init__(self, func: ir.PrimFunc, target=None):
        self.func = func
        self.target = target or target_named(DEFAULT_TARGET)
        self.wgmma_accumulators = _wgmma_accumulators(func, target)
        self.result = LayoutMap()
        self.allocated: dict[ir.Buffer, tuple[int, int]] = {}
        self.ops: list[_Op] = []
        self.diagnostics: list[Diagnostic] = []
        # the search places a component once per root and meets the same (layout,
        # access) questions again: both rules are pure, so each is decided once
        self.followed: dict[tuple, Layout | str] = {}
        self.checked: dict[tuple, str | None] = {}
        # the op that placed each fragment (None: no op did), named in an R300
        self.placed_by: dict[ir.Buffer, _Op | None] = {}

    def run(self) -> LayoutMap:
        try:
            return self.infer_all()
        except TooManyCells as exc:
            raise DiagnosticError([error("R102", exc.message, exc.span or
                                         self.func.kernel.span)]) from None

    def infer_all(self) -> LayoutMap:
        kernel = self.func.kernel
        scope = Scope((0, kernel.threads))
        for v, extent in zip(kernel.block_vars, kernel.grid):
            scope.env[v.name] = Var(v.name)
            scope.domains[v.name] = range(extent)
        self.block(kernel.body, scope)
        self.users: dict[ir.Buffer, list[_Op]] = {}
        for op in self.ops:
            for buffer in op.buffers():
                self.users.setdefault(buffer, []).append(op)
        self.queue: deque[_Op] = deque()
        for component in self.components():
            self.settle(component)
        for buffer in self.allocated:
            if buffer not in self.result.fragments:
                self.place_unreached(buffer)
        for op in self.ops:
            self.record(op)
        if self.diagnostics:
            raise DiagnosticError(self.diagnostics)
        return self.result

    # --- bookkeeping -----------------------------------------------------------------

    def place(self, buffer: ir.Buffer, layout: Layout, span: Span, by: _Op | None) -> None:
        self.result.fragments[buffer] = layout.rename(index_names(len(buffer.shape)))
        self.result.sources[buffer] = span
        self.placed_by[buffer] = by
        self.queue.extend(op for op in self.users.get(buffer, ()) if op.layout is None)

    def place_unreached(self, buffer: ir.Buffer) -> None:
        """A fragment no op placed (only filled, or only indexed by values no layout can
        place) gets the default partition of its shape where it was allocated."""
        offset, count = self.allocated.get(buffer, (0, self.func.kernel.threads))
        bound_cells(max(buffer.size, count), f"fragment {buffer.name}", buffer.span)
        self.place(buffer, default_partition(buffer.shape, count, offset), buffer.span, None)

    def placed(self, buffer: ir.Buffer) -> bool:
        return buffer in self.result.fragments

    def conflict(self, message: str, span: Span | None, *notes: Note,
                 counterexample: Counterexample | None = None,
                 no_picture: str | None = None) -> Diagnostic:
        return error("R300", f"layout conflict: {message}", span, *notes,
                     counterexample=counterexample, no_picture=no_picture)

    def placed_note(self, buffer: ir.Buffer) -> Note:
        layout = self.result.fragments[buffer]
        return Note(f"{buffer.name} was placed here: {layout.describe()}",
                    self.result.sources.get(buffer))

    def placement(self, buffer: ir.Buffer) -> str:
        """The demand behind a fragment's layout, as a conflict names it: the op that
        placed it, or its default partition when no op did."""
        by = self.placed_by.get(buffer)
        if by is None:
            return f"{buffer.name} has the default partition of its shape (no op placed it)"
        return f"{buffer.name} was placed by {by.what}"

    # --- collecting ops --------------------------------------------------------------

    def block(self, body: ir.Body, scope: Scope) -> None:
        scope = scope.child()               # a Let binds for the rest of its block only
        for stmt in body:
            self.stmt(stmt, scope)

    def stmt(self, stmt: ir.Stmt, scope: Scope) -> None:
        self.result.participants[stmt] = scope.participants
        if isinstance(stmt, ir.ParallelFor):
            self.parallel(stmt, scope)
        elif isinstance(stmt, ir.Copy):
            self.copy(stmt, scope)
        elif isinstance(stmt, ir.Reduce):
            if stmt.src.scope == "fragment":
                self.ops.append(_Op("reduce", stmt, scope.participants))
        elif isinstance(stmt, ir.Gemm):
            self.gemm(stmt, scope)
        elif isinstance(stmt, ir.WarpGroup):
            self.block(stmt.body, scope.child(participants=self.warp_groups(stmt, scope)))
        elif isinstance(stmt, ir.SerialFor):
            self.scalar(stmt, scope)
            self.block(stmt.body, serial_scope(scope, stmt))
        elif isinstance(stmt, ir.If):
            self.scalar(stmt, scope)
            self.block(stmt.then, scope)
            self.block(stmt.orelse, scope)
        else:
            if isinstance(stmt, ir.Alloc) and stmt.buffer.scope == "fragment":
                self.allocated[stmt.buffer] = scope.participants
            if isinstance(stmt, ir.ReducerUpdate):
                self.result.updates[stmt] = scalar_layout(scope.participants)
            if not isinstance(stmt, (ir.Fill, ir.ReducerFinalize, ir.Alloc, ir.Alias)):
                self.scalar(stmt, scope)
            if isinstance(stmt, ir.Let):
                bind_let(scope, stmt)

    def warp_groups(self, stmt: ir.WarpGroup, scope: Scope) -> tuple[int, int]:
        groups = sorted(set(stmt.groups))
        offset, count = WARP_GROUP * groups[0], WARP_GROUP * len(groups)
        if groups != list(range(groups[0], groups[-1] + 1)):
            self.diagnostics.append(self.conflict(
                f"warp groups {groups} are not contiguous: a participant set is one range "
                f"of threads", stmt.span,
                no_picture="the groups are not one range of threads, so there is no "
                "participant range to lay a grid over"))
            return scope.participants
        if offset + count > self.func.kernel.threads:
            self.diagnostics.append(self.conflict(
                f"warp groups {groups} need threads {offset}..{offset + count - 1}, the "
                f"kernel has {self.func.kernel.threads}", stmt.span,
                no_picture="the threads asked for lie past the kernel's last thread, "
                "outside every grid"))
            return scope.participants
        return offset, count

    def gemm(self, stmt: ir.Gemm, scope: Scope) -> None:
        """A gemm's accumulator takes the mma layout of its warp split, and a 16-bit A in
        a fragment (TileLang's gemm_rs) the mma's A operand layout (codegen.lower.gemm:
        TileLang's strict level, placed before any other op of its component), and a
        16-bit B in one (gemm_sr, gemm_rr) the B operand layout, transposed or not. An
        8-bit operand in a fragment (the mma's k32 tiles) has no physical plan here yet."""
        a_fragment, b_fragment = stmt.a.scope == "fragment", stmt.b.scope == "fragment"
        unplanned = stmt.a if a_fragment and stmt.a.dtype.bits != 16 \
            else stmt.b if b_fragment and stmt.b.dtype.bits != 16 else None
        if unplanned is not None:
            self.diagnostics.append(error(
                "R101", f"T.gemm reading the fragment {unplanned.name}: the physical plan "
                f"(layouts, simulator, CUDA) takes an operand from a fragment only when it "
                f"is 16-bit so far (docs/limits.md); copy it into shared memory, or run "
                f"the interpreter alone (`run --interp`)", stmt.span))
            return
        offset, count = scope.participants
        m, n, _ = stmt.mnk
        split = gemm_split(stmt, scope.participants, self.target,
                           wgmma=stmt.c in self.wgmma_accumulators)
        if isinstance(split, str):
            self.diagnostics.append(error("R102", split, stmt.span))
            return
        self.result.gemm_splits[stmt] = split
        bound_cells(max(m * n, count), f"the accumulator {stmt.c.name}", stmt.span)
        fixed = ((stmt.c, accumulator_layout(m, n, *split, offset)),)
        k = stmt.mnk[2]
        for name, operand, is_fragment in (("A", stmt.a, a_fragment),
                                           ("B", stmt.b, b_fragment)):
            if is_fragment and k % 16:
                self.diagnostics.append(error(
                    "R102", f"T.gemm reading {name} from the fragment {operand.name} needs "
                    f"K a multiple of 16 (the mma's {name} tile), not {k}", stmt.span))
                return
        if a_fragment:
            bound_cells(max(m * k * split[1], count), f"the operand {stmt.a.name}",
                        stmt.span)
            fixed += ((stmt.a, operand_layout_a(m, k, *split, offset, stmt.transpose_a)),)
        if b_fragment:
            bound_cells(max(k * n * split[0], count), f"the operand {stmt.b.name}",
                        stmt.span)
            fixed += ((stmt.b, operand_layout_b(k, n, *split, offset, stmt.transpose_b)),)
        self.ops.append(_Op("gemm", stmt, scope.participants, (m, n), index_names(2),
                            fixed=fixed))

    def scalar(self, stmt: ir.Stmt, scope: Scope) -> None:
        accesses = list(stmt_accesses(stmt, scope))
        if accesses:
            self.ops.append(_Op("scalar", stmt, scope.participants, (1,), (SCALAR_VAR,),
                                accesses))

    def parallel(self, loop: ir.ParallelFor, scope: Scope) -> None:
        names = tuple(v.name for v in loop.vars)
        inner = scope.child()
        for v, extent in scope.loop.items():      # an enclosing loop's variables are
            inner.domains[v] = range(extent)      # context to this one
        inner.loop = dict(zip(names, loop.extents))
        for v in names:
            inner.env[v] = Var(v)
            inner.domains.pop(v, None)
        op = _Op("loop", loop, scope.participants, tuple(loop.extents), names)
        self.ops.append(op)
        deferred: list[tuple[ir.Stmt, Scope]] = []
        self.collect(loop.body, inner, op, deferred)
        for stmt, stmt_scope in deferred:
            self.stmt(stmt, stmt_scope)

    def collect(self, body: ir.Body, scope: Scope, op: _Op, deferred: list) -> None:
        """The fragment accesses of a loop body, through serial loops and ifs; nested
        loops, copies and reductions are ops of their own."""
        scope = scope.child()
        for stmt in body:
            self.result.participants[stmt] = scope.participants
            if isinstance(stmt, (ir.ParallelFor, ir.Copy, ir.Reduce, ir.WarpGroup, ir.Alloc)):
                deferred.append((stmt, scope.child()))
                continue
            if not isinstance(stmt, (ir.Fill, ir.ReducerFinalize, ir.Alias)):
                op.accesses.extend(stmt_accesses(stmt, scope))
                op.memory.extend(memory_accesses(stmt, scope))
            if isinstance(stmt, ir.ReducerUpdate):
                op.updates.append(stmt)
            elif isinstance(stmt, ir.Let):
                bind_let(scope, stmt)
            elif isinstance(stmt, ir.SerialFor):
                self.collect(stmt.body, serial_scope(scope, stmt), op, deferred)
            elif isinstance(stmt, ir.If):
                self.collect(stmt.then, scope, op, deferred)
                self.collect(stmt.orelse, scope, op, deferred)

    def copy(self, stmt: ir.Copy, scope: Scope) -> None:
        extents = tuple(stmt.dst.extents)
        names = index_names(len(extents))
        sides = [region_access(r, extents, names, write, stmt.span, scope)
                 for r, write in ((stmt.dst, True), (stmt.src, False))
                 if r.buffer.scope == "fragment"]
        if sides:
            memory = [region_access(r, extents, names, write, stmt.span, scope)
                      for r, write in ((stmt.dst, True), (stmt.src, False))
                      if r.buffer.scope != "local"]
            self.ops.append(_Op("copy", stmt, scope.participants, extents, names, sides,
                                memory=memory))
        elif is_cooperative(stmt):
            bound_cells(max(math.prod(extents), scope.participants[1]), "this T.copy",
                        stmt.span)
            self.result.copies[stmt] = cooperative_layout(stmt, scope.participants)

    # --- searching -------------------------------------------------------------------

    def components(self) -> list[list[_Op]]:
        """The ops grouped by the fragments they share (no two groups touch one fragment,
        so each is placed on its own), each in program order, groups by their first op."""
        parent = list(range(len(self.ops)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        first_user: dict[ir.Buffer, int] = {}
        for i, op in enumerate(self.ops):
            for buffer in op.buffers():
                j = first_user.setdefault(buffer, i)
                parent[root(i)] = root(j)
        groups: dict[int, list[_Op]] = {}       # inserted in order of their first op
        for i, op in enumerate(self.ops):
            groups.setdefault(root(i), []).append(op)
        return list(groups.values())

    def settle(self, ops: list[_Op]) -> None:
        """Place one component. Its first op as the first free one (plain propagation in
        program order) is kept when it checks clean; otherwise every other op is tried
        as the first free one, and the clean placement with the fewest registers per
        thread (summed slots of its fragments; ties: the earlier op) wins, as in
        TileLang. When none is clean, the program-order placement and its conflicts
        stand: each names the two demands (a loop's layout, a fragment's placement)
        that cannot both hold."""
        conflicts = self.attempt(ops, ops[0])
        if not conflicts:
            return
        best = None
        for root in ops[1:]:
            if self.attempt(ops, root, first_only=True):
                continue
            cost = sum(self.result.fragments[b].slots_per_thread for b in self.buffers(ops))
            if best is None or cost < best[0]:
                best = (cost, self.snapshot(ops))
        if best is None:
            self.attempt(ops, ops[0])
            self.diagnostics.extend(conflicts)
        else:
            self.restore(ops, best[1])

    def attempt(self, ops: list[_Op], root: _Op, first_only: bool = False) -> list[Diagnostic]:
        """Place the component with root as its first free op; its conflicts (only the
        first one with first_only: a root that has one is discarded anyway)."""
        for op in ops:
            op.layout, op.source = None, None
        for buffer in self.buffers(ops):
            self.result.fragments.pop(buffer, None)
            self.result.sources.pop(buffer, None)
            self.placed_by.pop(buffer, None)
        self.queue.clear()
        for op in ops:                   # TileLang's strict level: a gemm's accumulator
            if op.kind == "gemm":
                self.infer(op, free=True)
        self.infer(root, free=True)
        self.propagate(ops)
        for buffer in self.buffers(ops):
            if not self.placed(buffer):
                self.place_unreached(buffer)
        conflicts = []
        for op in ops:
            conflicts.extend(self.check(op))
            if conflicts and first_only:
                break
        return conflicts

    def buffers(self, ops: list[_Op]) -> set[ir.Buffer]:
        return {b for op in ops for b in op.buffers()}

    def snapshot(self, ops: list[_Op]):
        placed = {b: (self.result.fragments[b], self.result.sources[b], self.placed_by[b])
                  for b in self.buffers(ops)}
        return placed, [(op.layout, op.source) for op in ops]

    def restore(self, ops: list[_Op], state) -> None:
        placed, chosen = state
        for buffer, (layout, span, by) in placed.items():
            self.result.fragments[buffer], self.result.sources[buffer] = layout, span
            self.placed_by[buffer] = by
        for op, (layout, source) in zip(ops, chosen):
            op.layout, op.source = layout, source

    # --- placing ---------------------------------------------------------------------

    def propagate(self, ops: list[_Op]) -> None:
        """Common level until nothing moves, then the first waiting op in program order
        takes its default (free level); until every op has a layout."""
        self.queue.extend(ops)
        while True:
            while self.queue:
                op = self.queue.popleft()
                if op.layout is None:
                    self.infer(op, free=False)
            waiting = [op for op in ops if op.layout is None]
            if not waiting:
                return
            self.infer(waiting[0], free=True)

    def infer(self, op: _Op, free: bool) -> None:
        """Give op its layout if it can (always when free), placing the unplaced
        fragments it touches."""
        if op.kind == "reduce":
            self.infer_reduce(op, free)
            return
        if op.kind == "gemm":
            op.layout = op.fixed[0][1]
            for buffer, layout in op.fixed:
                if not self.placed(buffer):
                    self.place(buffer, layout, op.node.span, op)
            return
        if op.kind == "scalar":
            if free or all(self.placed(a.buffer) for a in op.accesses):
                op.layout = scalar_layout(op.participants)
                for access in op.accesses:
                    if not self.placed(access.buffer):
                        bound_cells(access.buffer.size * op.participants[1],
                                    f"{access.buffer.name}, read by every thread outside "
                                    f"T.Parallel,", access.span)
                        self.place(access.buffer, fully_replicated(
                            access.buffer.shape, op.participants[1], op.participants[0]),
                            access.span, op)
            return
        if op.kind == "copy":
            self.place_copy_sides(op, free)
        if op.kind == "loop" and not op.accesses and _stores_only_private(op.node.body):
            # TileLang spreads a T.Parallel over the threads only when it touches a
            # fragment or stores to a non-local buffer (lower_tile_op.cc,
            # parallel_loop): otherwise every thread runs every iteration, writing its
            # own copy of the locals (docs/semantics.md §2)
            offset, count = op.participants
            bound_cells(math.prod(op.shape) * count, f"{op.what}, run by every thread",
                        op.node.span)
            op.layout = fully_replicated(op.shape, count, offset, op.names)
            return
        layout, source = self.follow_placed(op)
        if layout is None:
            if not free:
                return
            layout = self.free_partition(op, op.shape)
        op.layout, op.source = layout, source
        for access in op.accesses:
            buffer = access.buffer
            if self.placed(buffer):
                continue
            inverse = invert_access(access, layout.index_vars, layout.shape)
            found = compose(layout, inverse, buffer.shape) if inverse is not None else None
            if isinstance(found, Layout):       # otherwise its own source places it
                self.place(buffer, found, access.span, op)

    def follow_placed(self, op: _Op) -> tuple[Layout | None, Access | None]:
        """Follow a placed fragment, preferring one indexed by every loop variable."""
        placed = [a for a in op.accesses if self.placed(a.buffer)]
        names = set(op.names)
        covers = [a.index is not None and names <= {v for e in a.index for v in e.free_vars()}
                  for a in placed]
        # a stable partition (covering first), linear in the accesses: a membership
        # test against the covering list made every search step quadratic in them
        ordered = [a for a, c in zip(placed, covers) if c] + \
            [a for a, c in zip(placed, covers) if not c]
        for access in ordered:
            frag = self.result.fragments[access.buffer]
            key = (frag, id(access), op.shape, op.names, op.participants)
            if key not in self.followed:
                self.followed[key] = follow(frag, access, op.shape, op.names, op.participants)
            found = self.followed[key]
            if isinstance(found, Layout):
                return found, access
        return None, None

    def place_copy_sides(self, op: _Op, free: bool) -> None:
        """A whole-fragment to whole-fragment copy keeps the source's layout; when free,
        a copy places its unplaced fragment sides by the default partition of their
        shape (the loop over the region then follows them)."""
        node = op.node
        whole = all(a.index is not None and tuple(map(str, a.index)) == op.names and
                    tuple(a.buffer.shape) == op.shape for a in op.accesses)
        src, dst = node.src.buffer, node.dst.buffer
        if len(op.accesses) == 2 and whole and self.placed(src) and not self.placed(dst):
            self.place(dst, self.result.fragments[src], node.span, op)
        if free:
            for access in op.accesses:
                if not self.placed(access.buffer):
                    self.place(access.buffer, self.free_partition(op, access.buffer.shape),
                               node.span, op)

    def free_partition(self, op: _Op, shape: tuple[int, ...]) -> Layout:
        """The free-level partition of an op's loop, or of a fragment a free copy
        places (shape): vectorized by the op's vector width (codegen.layout_vector)
        when shape is the op's own index space, else the default partition."""
        offset, count = op.participants
        bound_cells(max(math.prod(shape), count), f"the partition of {op.what}",
                    op.node.span)
        if tuple(shape) != op.shape:
            return default_partition(shape, count, offset)
        vec = vector_width(op.shape, op.names, op.memory, count)
        return vectorized_partition(shape, count, offset, op.names, vec)

    def infer_reduce(self, op: _Op, free: bool) -> None:
        """dst follows src with the reduced dimension removed."""
        node = op.node
        src, dst = node.src, node.dst
        if not self.placed(src):
            if not free:
                return
            bound_cells(max(src.size, op.participants[1]), f"fragment {src.name}",
                        node.span)
            self.place(src, default_partition(src.shape, op.participants[1],
                                              op.participants[0]), node.span, op)
        source = self.result.fragments[src]
        op.layout = source
        kept = reduce_kept(src.shape, node.dim, dst.shape)
        if dst.scope == "fragment" and kept is not None and not self.placed(dst):
            self.place(dst, project(source, kept, dst.shape, single_holder_fallback=True),
                       node.span, op)

    # --- results and checks ----------------------------------------------------------

    def record(self, op: _Op) -> None:
        if op.kind == "loop":
            self.result.loops[op.node] = op.layout
            for update in op.updates:
                self.result.updates[update] = op.layout
        elif op.kind == "copy":
            self.result.copies[op.node] = op.layout

    def check(self, op: _Op) -> list[Diagnostic]:
        if op.kind == "reduce":
            return self.check_reduce(op)
        if op.kind == "gemm":
            return self.check_gemm(op)
        found = []
        for access in op.accesses:
            if access is op.source:
                continue
            frag = self.result.fragments[access.buffer]
            key = (op.layout, frag, id(access))
            if key not in self.checked:
                self.checked[key] = check(op.layout, frag, access)
            mismatch = self.checked[key]
            if mismatch is None:
                continue
            if op.source is not None:
                demand = f"{op.what}, following {op.source.buffer.name}"
                how = Note(f"{op.what} follows {op.source.buffer.name}: "
                           f"{op.layout.describe()}", op.source.span)
            else:
                demand = op.what
                how = Note(f"{op.what} runs as {op.layout.describe()}", op.node.span)
            found.append(self.conflict(
                f"{demand}: {mismatch.why}; {self.placement(access.buffer)}",
                access.span, how, self.placed_note(access.buffer),
                counterexample=self.conflict_picture(op, access.buffer, mismatch),
                no_picture=None if mismatch.element is not None else
                "the access names no single element (its index is not an affine function "
                "of the loop variables, or leaves the fragment): there is no cell to mark"))
        return found

    def conflict_picture(self, op: _Op, buffer: ir.Buffer,
                         mismatch: Mismatch) -> Counterexample | None:
        """The R300 drawn (codegen.counterexample_svg): the fragment as placed with the
        element's holders, and below it the loop's layout with the iteration where the
        loop runs it, the thread in question marked on both. None when the mismatch
        names no element (an index that is not affine, or leaves the shape)."""
        if mismatch.element is None:
            return None
        frag = self.result.fragments[buffer]
        role = "stale" if mismatch.write else "unheld"
        element = f"{buffer.name}[{', '.join(map(str, mismatch.element))}]"
        at = ", ".join(f"{v}={i}" for v, i in
                       list(zip(op.layout.index_vars, mismatch.iteration)) + list(mismatch.context))
        if mismatch.write:
            caption = (f"thread {mismatch.thread} holds {element} but does not run "
                       f"iteration ({at}) of {op.what}, which writes it")
        else:
            caption = (f"thread {mismatch.thread} runs iteration ({at}) of {op.what} "
                       f"but does not hold {element}")
        thread = ((mismatch.thread, role),)
        loop = Counterexample(("loop", op.head, op.node.span.line),
                              f"{op.what}: iteration ({at}) where the loop runs it",
                              ((mismatch.iteration, "iteration"),), thread,
                              layout=op.layout)
        return Counterexample(("fragment", buffer.name), caption,
                              ((mismatch.element, "holder"),), thread,
                              layout=frag, also=(loop,))

    def check_gemm(self, op: _Op) -> list[Diagnostic]:
        """The accumulator (and a fragment A) must hold the layout of this gemm's warp
        split (two gemms with different policies or thread ranges cannot share one)."""
        return [self.conflict(f"{op.what} needs {buffer.name} as {layout.describe()}; "
                              f"{self.placement(buffer)}", op.node.span,
                              self.placed_note(buffer),
                              no_picture="two whole layouts of the fragment differ; the "
                              "message names both")
                for buffer, layout in op.fixed if self.result.fragments[buffer] != layout]

    def check_reduce(self, op: _Op) -> list[Diagnostic]:
        node = op.node
        src, dst = node.src, node.dst
        source = self.result.fragments[src]
        if source.participants != op.participants:
            return [self.conflict(f"{op.what} runs on threads {_range(op.participants)} "
                                  f"but {src.name} lives on threads "
                                  f"{_range(source.participants)}; {self.placement(src)}",
                                  node.span, self.placed_note(src),
                                  no_picture="the conflict is between two thread ranges "
                                  "as wholes, not one element a thread fails to hold")]
        if dst.scope != "fragment":
            return []
        kept = reduce_kept(src.shape, node.dim, dst.shape)
        if kept is None:
            return [self.conflict(f"{op.what}: {dst.name}{list(dst.shape)} is not "
                                  f"{src.name}{list(src.shape)} without dimension "
                                  f"{node.dim}", node.span,
                                  no_picture="the conflict is between two shapes; no "
                                  "thread or element is at fault")]
        why = holders_contain(source, kept, self.result.fragments[dst])
        if why:
            return [self.conflict(f"{op.what} into {dst.name}: {why}; "
                                  f"{self.placement(dst)}", node.span,
                                  self.placed_note(dst), self.placed_note(src),
                                  no_picture="the reduction's holder rule is checked over "
                                  "the layouts' formulas, which name no single thread "
                                  "and element")]
        return []


def _stores_only_private(body: ir.Body) -> bool:
    """Whether a loop body's only effects are stores to thread-private buffers."""
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Store) and stmt.buffer.scope == "local":
            continue
        if not isinstance(stmt, (ir.Let, ir.SerialFor, ir.If)):
            return False
    return True


def _range(participants: tuple[int, int]) -> str:
    offset, count = participants
    return f"{offset}..{offset + count - 1}"
