"""The logical interpreter: the reference meaning of a kernel (docs/semantics.md §2), the
oracle every backend is judged against.

    result = run(func, inputs)   # inputs: every parameter, keyed by name
    result.outputs / result.bounds / result.epochs

Every block of the grid runs in order, its statements in order. A `T.Parallel` is a
logical for-all: its body runs statement by statement for all iterations at once (each
statement reads before it writes; two iterations storing different values to one
element are a race, R102). Serial loops iterate; an `if` splits the lanes. Reducers
accumulate every contribution exactly once per epoch and combine exactly at finalize
(`interp.exact`). Decisions the design leaves open are stated where they are made."""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, Note, error
from verify_reducer.spec.dtypes import BOOL, INT32
from verify_reducer.spec.ops import OP_ALIASES, REDUCE_KINDS, reduce_monoid
from verify_reducer.spec.source import Span

from . import bounds as B
from .block_order import Position, ordered_storage
from .atomics import apply_atomic
from .epochs import ReducerState
from .evaluate import convert, indices_of, operand, reads_thread, serial_iterations
from .exact import combine
from .gemm import run_gemm
from .memory import Storage, Window, WindowStorage, check_race, kernel_inputs, unallocated
from .private import Diverges, PrivateStorage, ThreadCopies, diverging_read
from .warp import ORIGIN
from .runs import BodyRuns, blocks_to_run
from .values import THREAD, Lanes, Val


@dataclass(frozen=True)
class EpochRecord:
    """One executed finalize: which block, which reducer, where, and how many logical
    contributions entered each output (the seed not counted)."""
    block: tuple[int, ...]
    reducer: str
    span: Span                 # the finalize
    init_span: Span            # the init that opened the epoch
    counts: np.ndarray         # int64, the reducer's shape


@dataclass(frozen=True)
class Contributions:
    """What one finalized epoch combined, for an observer of `run` (the witness audit of
    verify.oracle.witness): the output of each contribution (flat index into the reducer), its
    value in the reducer dtype, the reducer's op, and the result's bound per output."""
    record: EpochRecord
    op: str
    dtype: object              # spec.dtypes.DType of the reducer
    flat: np.ndarray
    values: np.ndarray
    bound: np.ndarray          # float64, the reducer's shape flattened
    monoid: object = None      # the op's table entry (spec.ops.Monoid), declared or built-in


@dataclass(frozen=True)
class Result:
    """Outputs and bounds in each tensor's shape, or in its window's shape when the run
    had windows; `written` then says which window elements the run wrote."""
    outputs: dict[str, np.ndarray]
    bounds: dict[str, np.ndarray]
    epochs: list[EpochRecord]
    written: dict[str, np.ndarray] | None = None


def run(func: ir.PrimFunc, inputs: dict[str, np.ndarray], blocks=None,
        windows: dict[str, Window] | None = None, progress=None,
        observe=None) -> Result:
    """Runs blocks (default: every block of the grid, in order). With windows, inputs
    hold each tensor's window only (verify.oracle.blocks proves that the chosen blocks cannot
    see each other's writes before a run is cut down this way). progress(done, total)
    is called after each block; observe(Contributions) after each finalize."""
    chosen, total = blocks_to_run(func, blocks)
    kernel = func.kernel
    position = None
    if windows is None and total > 1:
        # several blocks over whole tensors: blocks not proved independent, or a run of
        # the grid; an access another block's access makes a race stops it (R504)
        position = Position()
        written = {b for stmt in ir.walk(kernel.body) for b in ir.written_buffers(stmt)}
        globals_ = ordered_storage(kernel_inputs(func, inputs), kernel.grid, position,
                                   written)
    else:
        globals_ = _global_storage(func, inputs, windows)
    epochs: list[EpochRecord] = []
    body_runs = BodyRuns()          # counted over all the blocks of the run
    for done, block in enumerate(chosen, 1):
        runner = Block(kernel, block, globals_, epochs, observe, body_runs)
        if position is not None:
            position.block = int(np.ravel_multi_index(runner.block, kernel.grid))
            position.runner = runner
        runner.run()
        if progress is not None:
            progress(done, total)
    written = None if windows is None else \
        {p.name: globals_[p].wrote.reshape(windows[p.name].shape) for p in func.params}
    return Result({p.name: globals_[p].array() for p in func.params},
                  {p.name: globals_[p].bound_array() for p in func.params}, epochs, written)


def _global_storage(func: ir.PrimFunc, inputs: dict[str, np.ndarray],
                    windows: dict[str, Window] | None = None):
    # Storage copies its array: the caller's inputs are untouched
    arrays = kernel_inputs(func, inputs, windows)
    if windows is None:
        return {p: Storage(p, arr) for p, arr in arrays.items()}
    return {p: WindowStorage(p, arr, windows[p.name]) for p, arr in arrays.items()}


class Block:
    """One block's run: its on-chip buffers, its reducers, the global tensors."""

    def __init__(self, kernel: ir.Kernel, block: tuple[int, ...],
                 globals_: dict[ir.Buffer, Storage], epochs: list[EpochRecord],
                 observe, body_runs: BodyRuns):
        self.kernel = kernel
        self.observe = observe
        self.block = tuple(int(b) for b in block)
        self.globals = globals_
        self.epochs = epochs
        self.local: dict[ir.Buffer, Storage] = {}
        self.private: dict[ir.Buffer, PrivateStorage] = {}     # T.alloc_local / alloc_var
        self.reducers: dict[ir.Buffer, ReducerState] = {}
        self.body_runs = body_runs       # the run's, shared by its blocks
        self.stmt_span: Span | None = None
        # writes, counted: a Let deferred until the thread is known must not read a
        # buffer written after it (its value would be the later one)
        self.clock = 0
        self.written_at: dict[ir.Buffer, int] = {}
        self.deferred_at: dict[int, int] = {}           # id(Let) -> clock when bound

    def run(self) -> None:
        env = {var.name: Val(var.dtype.quantize(np.array([b])), var.dtype)
               for var, b in zip(self.kernel.block_vars, self.block)}
        self.body(self.kernel.body, Lanes(1, env))
        for state in self.reducers.values():
            state.check_nothing_lost("reaches the end of the kernel")

    # ------------------------------------------------------------------ memory

    def storage(self, buffer: ir.Buffer, span: Span,
                lanes: Lanes | None = None) -> Storage | ThreadCopies:
        """Where buffer lives; a thread-private buffer as the copies lanes reach."""
        if buffer.is_reducer:
            return self.reducer(buffer, span).storage
        if buffer.scope == "local":
            private = self.private.get(buffer)
            if private is None:
                raise unallocated(buffer, span)
            return private.copies(self._thread_rows(lanes))
        found = self.local.get(buffer) or self.globals.get(buffer)
        if found is None:
            raise unallocated(buffer, span)
        return found

    def reducer(self, buffer: ir.Buffer, span: Span) -> ReducerState:
        state = self.reducers.get(buffer)
        if state is None:
            raise unallocated(buffer, span)
        return state

    def readable(self, buffer: ir.Buffer, span: Span, whole: str | None = None,
                 lanes: Lanes | None = None):
        """Storage to read; `whole` names an op that takes the buffer as a whole (an
        unfinalized reducer passed to it escapes: R211, not a plain read R200)."""
        if buffer.is_reducer:
            self.reducer(buffer, span).check_readable(span, whole)
        return self.storage(buffer, span, lanes)

    def writable(self, buffer: ir.Buffer, span: Span, what: str, code: str,
                 lanes: Lanes | None = None):
        self._stamp(buffer)
        if buffer.is_reducer:
            self.reducer(buffer, span).check_writable(span, what, code)
        return self.storage(buffer, span, lanes)

    def _stamp(self, buffer: ir.Buffer) -> None:
        self.clock += 1
        self.written_at[buffer] = self.clock

    def _stale(self, let: ir.Let, stale: set[str]) -> bool:
        """Whether a deferred Let reads a buffer written since it was bound, or a
        deferred name that does."""
        bound_at = self.deferred_at.get(id(let), self.clock)
        return any((isinstance(sub, ir.Load)
                    and self.written_at.get(sub.buffer, -1) > bound_at)
                   or (isinstance(sub, ir.Var) and sub.name in stale)
                   for sub in ir.subexprs(let.value))

    def check_deferred(self, let: ir.Let) -> None:
        """A Let that reads the thread index is evaluated where it is used (per
        thread); the buffers it reads must not have been written since it was bound,
        or that evaluation would see the later values, not the binding's (R100)."""
        bound_at = self.deferred_at.get(id(let), self.clock)
        for sub in ir.subexprs(let.value):
            if isinstance(sub, ir.Load) and self.written_at.get(sub.buffer, -1) > bound_at:
                raise DiagnosticError(error(
                    "R100", f"`{let.var.name}` is bound to a value that depends on the "
                    f"thread and reads {sub.buffer.name}, which is written after the "
                    f"binding and before this use: per-thread values bound to a name are "
                    f"not kept; read {sub.buffer.name} where the value is used, or bind "
                    f"it after the write", self.stmt_span or let.span,
                    Note("bound here", let.span)))

    def _thread_rows(self, lanes: Lanes | None) -> np.ndarray:
        """(lanes × threads): the threads whose private copies each lane reads and
        writes — its own thread where the statement runs once per thread, else every
        thread that reaches it."""
        threads = self.kernel.threads
        if lanes is None:
            return np.ones((1, threads), dtype=bool)
        if THREAD in lanes.env:
            rows = np.zeros((lanes.n, threads), dtype=bool)
            rows[np.arange(lanes.n), lanes.env[THREAD].v.astype(np.int64)] = True
            return rows
        return lanes.thread_mask(threads)

    def load(self, load: ir.Load, indices: list[Val], lanes: Lanes) -> Val:
        """Memory for `evaluate`: a Load of every lane."""
        storage = self.readable(load.buffer, load.span, lanes=lanes)
        flat = storage.flat([i.v.astype(np.int64) for i in indices], load.span)
        val = storage.read(flat, load.span, self.stmt_span)
        moved = B.widest(*(i.b for i in indices))
        if moved is not None and moved.any():
            # an uncertain index may read any element
            val = Val(val.v, val.dtype, np.where(moved > 0, np.inf,
                                                 0.0 if val.b is None else val.b))
        return val

    # ------------------------------------------------------------------ statements

    def body(self, stmts: ir.Body, lanes: Lanes) -> None:
        for stmt in stmts:
            self.stmt_span = stmt.span
            lanes = self.statement(stmt, lanes)

    def statement(self, stmt: ir.Stmt, lanes: Lanes) -> Lanes:
        """Runs stmt; returns the lanes for the statements after it (a Let adds a name)."""
        run = getattr(self, "_" + type(stmt).__name__.lower())
        if THREAD not in lanes.env and reads_thread(ir.stmt_exprs(stmt), lanes):
            if isinstance(stmt, ir.Let):
                self.deferred_at[id(stmt)] = self.clock
                return lanes.defer(stmt.var.name, stmt)
            return self._once_per_thread(stmt, lanes, run)
        try:
            return run(stmt, lanes) or lanes
        except Diverges as exc:
            # a block-level statement read a private value the threads hold differently:
            # it means one run per thread (nothing was written before its reads)
            if lanes.parallel:
                raise diverging_read(exc, stmt.span, "inside a T.Parallel (its "
                                     "iterations are spread over the threads)") from None
            if isinstance(stmt, ir.Let):
                raise diverging_read(exc, stmt.span, "bound to a name (a `name = value` "
                                     "binding keeps one value for the block: read the "
                                     "buffer where the value is used)") from None
            return self._once_per_thread(stmt, lanes, run)

    def _once_per_thread(self, stmt: ir.Stmt, lanes: Lanes, run) -> Lanes:
        if isinstance(stmt, ir.If):
            self._thread_if(stmt, lanes)
        else:
            run(stmt, self._per_thread(lanes))
        return lanes

    # ------------------------------------------------------------------ the thread index
    # T.get_thread_binding() has a meaning at the logical level: a block-level statement
    # means the same whether one thread or all of them run it, so an `if` on the thread
    # index runs its branch once when some thread takes it (like a T.ws body), and only
    # a statement that reads the index itself runs once per thread that reaches it.
    # Finalizing under such an `if` is thread-divergent: R207.

    def _per_thread(self, lanes: Lanes) -> Lanes:
        lane, thread = np.nonzero(lanes.thread_mask(self.kernel.threads))
        forked = replace(lanes.gather(lane), parallel=True, threads=None, divergent=True)
        forked = forked.bind(THREAD, Val(INT32.quantize(thread), INT32))
        # the lanes a warp builtin exchanges values among: those forked from one logical
        # lane; inside a T.Parallel all of them, so a thread appearing once per
        # iteration is refused there by name (interp.warp)
        origin = np.zeros_like(lane) if lanes.parallel else lane
        forked = forked.bind(ORIGIN, Val(INT32.quantize(origin), INT32))
        # the deferred Lets, in the order they were defined, now that the thread is
        # known: each reads only earlier ones, so a chain of any length is this loop,
        # not a recursion through evaluate
        stale: set[str] = set()
        for let in list(lanes.deferred.values()):
            if self._stale(let, stale):
                stale.add(let.var.name)     # left deferred: a use of it is R100 (_var)
                continue
            value = operand(let.value, let.var.dtype, forked, self)
            forked = forked.bind(let.var.name, value)
        return forked

    def _thread_if(self, stmt: ir.If, lanes: Lanes) -> None:
        mask = lanes.thread_mask(self.kernel.threads)
        lane, thread = np.nonzero(mask)
        cond = operand(stmt.cond, BOOL, self._per_thread(lanes), self)
        taken = np.zeros_like(mask)
        taken[lane, thread] = cond.v
        for threads, branch in ((taken, stmt.then), (mask & ~taken, stmt.orelse)):
            rows = threads.any(axis=1)
            if branch and rows.any():
                sub = lanes.select(rows)
                self.body(branch, replace(sub, threads=threads[rows], divergent=True))

    def _alloc(self, stmt: ir.Alloc, lanes: Lanes):
        # TIR's meaning: an allocation executed again (in a loop body) is fresh storage.
        buffer = stmt.buffer
        if buffer.is_reducer:
            old = self.reducers.get(buffer)
            if old is not None:
                old.check_nothing_lost("is replaced by a fresh allocation",
                                       Note("allocated again here", stmt.span))
            self.reducers[buffer] = ReducerState(buffer)
        elif buffer.scope == "local":
            self.private[buffer] = PrivateStorage(buffer, self.kernel.threads)
        else:
            self.local[buffer] = Storage(buffer)

    def _let(self, stmt: ir.Let, lanes: Lanes) -> Lanes:
        return lanes.bind(stmt.var.name, operand(stmt.value, stmt.var.dtype, lanes, self))

    def _alias(self, stmt: ir.Alias, lanes: Lanes):
        """The frontend already resolves the new name to the same Buffer; reducer aliases
        are the static verifier's R211. Nothing to run."""

    def _warpgroup(self, stmt: ir.WarpGroup, lanes: Lanes):
        """A warp-group body runs once, logically, on the threads of its groups."""
        ids = np.arange(self.kernel.threads)
        member = np.isin(ids // 128, stmt.groups)
        if not member.any():
            raise DiagnosticError(error(
                "R102", f"T.ws{tuple(stmt.groups)} names no thread of a "
                f"{self.kernel.threads}-thread block", stmt.span))
        threads = lanes.thread_mask(self.kernel.threads) & member
        rows = threads.any(axis=1)
        if rows.any():
            self.body(stmt.body, replace(lanes.select(rows), threads=threads[rows]))

    def _parallelfor(self, stmt: ir.ParallelFor, lanes: Lanes):
        if 0 in stmt.extents:
            return
        inner = lanes.expand(tuple(v.name for v in stmt.vars), stmt.extents,
                             tuple(v.dtype for v in stmt.vars))
        self.body(stmt.body, inner)

    def _serialfor(self, stmt: ir.SerialFor, lanes: Lanes):
        for bound in self.body_runs.count(stmt, serial_iterations(stmt, lanes, self)):
            self.body(stmt.body, bound)

    def _if(self, stmt: ir.If, lanes: Lanes):
        cond = operand(stmt.cond, BOOL, lanes, self)
        if cond.b is not None:
            # Known gap: only the branch this lane takes is marked uncertain; the other
            # branch's effects, which a backend could perform instead, are not.
            lanes = lanes.tainted(cond.b > 0)
        for mask, branch in ((cond.v, stmt.then), (~cond.v, stmt.orelse)):
            if branch and mask.any():
                self.body(branch, lanes if mask.all() else lanes.select(mask))

    def _store(self, stmt: ir.Store, lanes: Lanes):
        storage = self.writable(stmt.buffer, stmt.span, "a store", "R205", lanes)
        idx, moved = indices_of(stmt.indices, lanes, self)
        flat = storage.flat(idx, stmt.span)
        val = _taint(operand(stmt.value, stmt.buffer.dtype, lanes, self), lanes)
        keys = storage.race_keys(flat) if isinstance(storage, ThreadCopies) else flat
        reads_itself = any(isinstance(e, ir.Load) and e.buffer is stmt.buffer
                           for e in ir.subexprs(stmt.value))
        check_race(storage, keys, val, stmt.span, reads_itself)
        storage.write(flat, val)
        if moved:
            storage.uncertain_everywhere()

    def _atomicupdate(self, stmt: ir.AtomicUpdate, lanes: Lanes):
        """docs/semantics.md §12 (interp.atomics). Outside a T.Parallel every thread that
        reaches an atomic issues it, as TileLang's CUDA does: one contribution each."""
        if not lanes.parallel:
            lanes = self._per_thread(lanes)
        storage = self.writable(stmt.buffer, stmt.span, "an atomic", "R205", lanes)
        idx, moved = indices_of(stmt.indices, lanes, self)
        flat = storage.flat(idx, stmt.span)
        value = _taint(operand(stmt.value, stmt.buffer.dtype, lanes, self), lanes)
        apply_atomic(storage, stmt.op, flat, value, stmt.span, self.stmt_span)
        if moved:
            storage.uncertain_everywhere()

    def _fill(self, stmt: ir.Fill, lanes: Lanes):
        region = stmt.region
        storage = self.writable(region.buffer, stmt.span, "T.fill", "R205", lanes)
        value = _taint(operand(stmt.value, region.buffer.dtype, lanes, self), lanes)
        starts = self._starts(region, lanes)
        for lane in range(lanes.n):
            flat, inside = self._box(region, starts[lane], stmt.span)
            count = int(inside.sum())
            _lane(storage, lane).write(flat[inside], Val(np.repeat(value.v[lane], count), value.dtype,
                                            None if value.b is None
                                            else np.repeat(value.b[lane], count)))

    def _copy(self, stmt: ir.Copy, lanes: Lanes):
        """TileLang guards copies at a global tensor's border (the tail tiles of shapes
        that do not divide): outside it a copy reads 0 and writes nothing. On-chip
        regions must fit their buffer (R102)."""
        src, dst = stmt.src, stmt.dst
        src_store = self.readable(src.buffer, stmt.span, "T.copy", lanes)
        dst_store = self.writable(dst.buffer, stmt.span, "T.copy", "R211", lanes)
        if [e for e in src.extents if e != 1] != [e for e in dst.extents if e != 1]:
            raise DiagnosticError(error(
                "R102", f"T.copy from a {list(src.extents)} region of {src.buffer.name} to "
                f"a {list(dst.extents)} region of {dst.buffer.name}: the extents differ",
                stmt.span))
        src_starts, dst_starts = self._starts(src, lanes), self._starts(dst, lanes)
        for lane in range(lanes.n):
            s_flat, s_inside = self._box(src, src_starts[lane], stmt.span)
            d_flat, d_inside = self._box(dst, dst_starts[lane], stmt.span)
            v = np.zeros(len(s_flat), dtype=src.buffer.dtype.np)
            b = np.zeros(len(s_flat))
            read = d_inside & s_inside
            if read.any():
                part = _lane(src_store, lane).read(s_flat[read], stmt.span)
                v[read] = part.v
                if part.b is not None:
                    b[read] = part.b
            val = Val(v[d_inside], src.buffer.dtype, b[d_inside] if b.any() else None)
            val = convert(val, dst.buffer.dtype)
            if lanes.taint is not None and lanes.taint[lane]:
                val = Val(val.v, val.dtype, np.full(len(val.v), np.inf))
            _lane(dst_store, lane).write(d_flat[d_inside], val)

    def _starts(self, region: ir.Region, lanes: Lanes) -> list[list[int]]:
        """A region's start index, per lane."""
        columns = [operand(s, s.dtype, lanes, self).v.astype(np.int64) for s in region.starts]
        return [[int(c[lane]) for c in columns] for lane in range(lanes.n)]

    def _box(self, region: ir.Region, starts: list[int],
             span: Span) -> tuple[np.ndarray, np.ndarray]:
        """Flat positions of a region's elements in row-major order, and which lie inside
        the buffer (clipped only for global tensors; elsewhere outside is an error)."""
        shape = region.buffer.shape
        if len(starts) != len(shape) or len(region.extents) != len(shape):
            raise DiagnosticError(error(
                "R102", f"a region of {region.buffer.name} needs {len(shape)} dimensions",
                region.span))
        if shape and all(0 <= s and s + e <= n
                         for s, e, n in zip(starts, region.extents, shape)):
            # the common case, a box inside its buffer: one add to cached offsets
            offsets, inside = _box_offsets(tuple(shape), tuple(region.extents))
            return offsets + int(np.ravel_multi_index(starts, shape)), inside
        coords = np.indices(region.extents).reshape(len(shape), -1) \
            + np.array(starts, dtype=np.int64)[:, None]
        inside = np.ones(coords.shape[1], dtype=bool)
        for dim, extent in enumerate(shape):
            inside &= (coords[dim] >= 0) & (coords[dim] < extent)
        if region.buffer.scope != "global" and not inside.all():
            raise DiagnosticError(error(
                "R102", f"region {starts} + {list(region.extents)} is out of bounds of "
                f"{region.buffer.name} {list(shape)}", region.span))
        clipped = np.where(inside, coords, 0)
        flat = np.ravel_multi_index(tuple(clipped), shape) if len(shape) else \
            np.zeros(coords.shape[1], dtype=np.int64)
        return flat, inside

    def _gemm(self, stmt: ir.Gemm, lanes: Lanes):
        run_gemm(self, stmt, lanes)          # interp.gemm: c (+)= a·b, exact products

    # ------------------------------------------------------------------ reducers

    def _reducerinit(self, stmt: ir.ReducerInit, lanes: Lanes):
        state = self.reducer(stmt.reducer, stmt.span)
        dtype = stmt.reducer.dtype
        seed = None
        if stmt.seed is not None:
            seed = operand(stmt.seed, dtype, lanes, self)
        if stmt.fill_value is not None:
            seed = self._legacy_fill_seed(state, stmt, seed, lanes)
        state.open(stmt.span, seed, _scope(lanes, self.kernel.threads))

    def _legacy_fill_seed(self, state: ReducerState, stmt: ir.ReducerInit,
                          seed: Val | None, lanes: Lanes) -> Val | None:
        """A legacy T.fill writes its value into every partial. The identity means no
        seed; for an idempotent op (max, min, and, or) filling every partial with v is the
        same as seeding v once; for sum/product/xor it would count once per participant,
        which has no logical meaning (R213)."""
        dtype = stmt.reducer.dtype
        fill = operand(stmt.fill_value, dtype, lanes, self)
        identity = dtype.quantize(np.array([state.monoid.identity(dtype)]))
        if (fill.v == identity).all():
            return seed
        if not state.monoid.idempotent:
            raise DiagnosticError(error(
                "R213", f"T.fill of {state.monoid.name} reducer {stmt.reducer.name} with "
                f"{fill.v[0]}, not its identity {identity[0]}: every participant would add "
                "it once", stmt.span, hint="fill with the identity and pass the value as "
                "T.reducer_init's seed"))
        if seed is None:
            return fill
        return Val(state.monoid.combine(dtype, seed.v, fill.v), dtype, B.widest(seed.b, fill.b))

    def _reducerupdate(self, stmt: ir.ReducerUpdate, lanes: Lanes):
        state = self.reducer(stmt.reducer, stmt.span)
        state.require_open(stmt.span, "update")
        if OP_ALIASES.get(stmt.form_op, stmt.form_op) != state.monoid.name:
            raise DiagnosticError(error(
                "R206", f"a {stmt.form} update ({stmt.form_op}) of {state.monoid.name} "
                f"reducer {stmt.reducer.name}", stmt.span))
        idx, moved = indices_of(stmt.indices, lanes, self)
        flat = state.storage.flat(idx, stmt.span, code="R209")
        val = _taint(operand(stmt.value, stmt.reducer.dtype, lanes, self), lanes)
        state.update(flat, val, stmt.span, moved)

    def _reducerfinalize(self, stmt: ir.ReducerFinalize, lanes: Lanes):
        if lanes.parallel or lanes.divergent:
            where = "inside a T.Parallel" if lanes.parallel else "under an if on the thread index"
            raise DiagnosticError(error(
                "R207", f"finalize of reducer {stmt.reducer.name} {where} "
                "(thread-divergent)", stmt.span))
        state = self.reducer(stmt.reducer, stmt.span)
        epoch = state.require_open(stmt.span, "finalize")
        if epoch.scope != _scope(lanes, self.kernel.threads):
            raise DiagnosticError(error(
                "R208", f"finalize of reducer {stmt.reducer.name} in another scope than its "
                "init (the threads that reach them differ)", stmt.span,
                Note("the epoch opened here", epoch.init_span)))
        if stmt.dst is not None:
            self._check_destination(stmt)
        result, bound, counts, init_span = state.close(stmt.span)
        if lanes.taint is not None:
            bound = np.full_like(bound, np.inf)
        if stmt.dst is None:
            self._stamp(stmt.reducer)
            state.storage.write_all(result, bound)
            state.readable = True
        else:
            self._stamp(stmt.dst)
            self.storage(stmt.dst, stmt.span, lanes).write_all(result, bound)
        record = EpochRecord(self.block, stmt.reducer.name, stmt.span, init_span,
                             counts.reshape(stmt.reducer.shape))
        self.epochs.append(record)
        if self.observe is not None:
            flat = np.concatenate(epoch.flats) if epoch.flats else np.zeros(0, np.int64)
            values = np.concatenate(epoch.values) if epoch.values else \
                np.zeros(0, stmt.reducer.dtype.np)
            self.observe(Contributions(record, state.monoid.name, stmt.reducer.dtype, flat,
                                       values, np.asarray(bound, np.float64).reshape(-1),
                                       state.monoid))

    def _check_destination(self, stmt: ir.ReducerFinalize) -> None:
        red, dst = stmt.reducer, stmt.dst
        if dst.is_reducer:
            raise DiagnosticError(error(
                "R211", f"finalize of {red.name} into reducer {dst.name}", stmt.span))
        same_shape = [e for e in dst.shape if e != 1] == [e for e in red.shape if e != 1]
        if not same_shape or dst.dtype != red.dtype:
            raise DiagnosticError(error(
                "R214", f"finalize of {red.name} ({list(red.shape)}, {red.dtype}) into "
                f"{dst.name} ({list(dst.shape)}, {dst.dtype})", stmt.span))

    def _reduce(self, stmt: ir.Reduce, lanes: Lanes):
        """T.reduce_<kind>(src, dst, dim, clear): dst = ⊕ over dim of (|src| for abs kinds),
        combined into dst's current values when clear=False; computed in dst's dtype with
        the reducer's exact rule."""
        kind = REDUCE_KINDS[stmt.kind]
        monoid = reduce_monoid(stmt)
        src, dst = stmt.src, stmt.dst
        dtype = dst.dtype
        if not monoid.supports(dtype):
            raise DiagnosticError(error(
                "R102", f"T.reduce_{stmt.kind} needs an integer buffer, not {dtype}",
                stmt.span))
        dim = stmt.dim + len(src.shape) if stmt.dim < 0 else stmt.dim
        if not 0 <= dim < len(src.shape):
            raise DiagnosticError(error(
                "R102", f"dim={stmt.dim} for {src.name} of {len(src.shape)} dimensions",
                stmt.span))
        kept = src.shape[:dim] + src.shape[dim + 1:]
        outputs = int(np.prod(kept, dtype=np.int64))
        if dst.size != outputs:
            raise DiagnosticError(error(
                "R102", f"T.reduce_{stmt.kind} of {src.name} {list(src.shape)} over dim "
                f"{dim} gives {list(kept)}, but {dst.name} is {list(dst.shape)}", stmt.span))
        src_store = self.readable(src, stmt.span, f"T.reduce_{stmt.kind}", lanes)
        dst_store = self.writable(dst, stmt.span, f"T.reduce_{stmt.kind}", "R211", lanes)
        # a block-level reduction runs once; one of a private source or destination
        # runs per lane, each lane (one thread, or the threads whose copies agree)
        # reducing the copies it reaches
        private = isinstance(src_store, ThreadCopies) or isinstance(dst_store, ThreadCopies)
        for lane in range(lanes.n if private else 1):
            tainted = lanes.taint is not None and bool(lanes.taint[lane if private else 0])
            self._reduce_once(stmt, monoid, kind.absolute, dim, outputs,
                              _lane(src_store, lane), _lane(dst_store, lane), tainted)

    def _reduce_once(self, stmt: ir.Reduce, monoid, absolute: bool, dim: int, outputs: int,
                     src_store, dst_store, tainted: bool) -> None:
        src, dst = stmt.src, stmt.dst
        dtype = dst.dtype
        val = src_store.read(np.arange(src.size), stmt.span)
        if absolute:
            val = Val(src.dtype.quantize(np.abs(val.v)), src.dtype, val.b)
        val = convert(val, dtype)
        if tainted:
            val = Val(val.v, dtype, np.full(len(val.v), np.inf))
        values = np.moveaxis(val.v.reshape(src.shape), dim, -1).reshape(-1)
        b = None if val.b is None else \
            np.moveaxis(val.b.reshape(src.shape), dim, -1).reshape(-1)
        flat = np.repeat(np.arange(outputs), src.shape[dim])
        seed = seed_bound = None
        if not stmt.clear:
            old = dst_store.read(np.arange(dst.size), stmt.span)
            seed, seed_bound = old.v, old.b
        result, bound, _ = combine(monoid, dtype, flat, values, b, outputs, seed, seed_bound)
        dst_store.write_all(result, bound)


@functools.lru_cache(maxsize=256)
def _box_offsets(shape: tuple[int, ...], extents: tuple[int, ...]):
    """Row-major offsets of a box's elements from its first, and an all-inside mask
    (read-only: shared by every call)."""
    rel = np.indices(extents).reshape(len(shape), -1)
    offsets = np.ravel_multi_index(tuple(rel), shape).astype(np.int64)
    inside = np.ones(offsets.shape[0], dtype=bool)
    offsets.flags.writeable = inside.flags.writeable = False
    return offsets, inside


def _lane(storage, lane: int):
    """The memory one lane of a statement reads or writes: a private buffer's copies of
    that lane's threads; any other storage as it is."""
    return storage.lane(lane) if isinstance(storage, ThreadCopies) else storage


def _scope(lanes: Lanes, threads: int) -> bytes:
    """Which threads reach a statement: an init and its finalize must agree (R208)."""
    return np.packbits(lanes.thread_mask(threads).any(axis=0)).tobytes()


def _taint(val: Val, lanes: Lanes) -> Val:
    """Effects of lanes whose control flow an uncertain float decided cannot be judged."""
    if lanes.taint is None:
        return val
    b = np.zeros(len(val.v)) if val.b is None else val.b
    return Val(val.v, val.dtype, np.where(lanes.taint, np.inf, b))
