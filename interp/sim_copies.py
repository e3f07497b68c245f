"""The simulator's copies (T.copy), executing the copy's lowering
(codegen.lower.copies.CopyMoves, the one the CUDA renderer prints): the partition's
thread moves each element, replica 0 alone stores where the lowering says one writer,
the lowered border tests drop reads and writes, and an address that leaves its buffer
untested is R505. Every copy moves by its threads, so shared-memory race tracking and
register ownership follow the kernel's accesses (its barriers are the plan's, passed by
interp.simulate). Derived once per pair of region starts and cached. A mixin of
interp.simulate's block: it reads and writes the block's memory through
interp.sim_memory's checked accessors."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.codegen.lower import copies as lowered
from verify_reducer.spec import ir
from verify_reducer.spec.addressing import flat_offset
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.indexexpr import linear_in
from verify_reducer.spec.source import Span

from .evaluate import convert, operand
from .registers import tables
from .values import ITER, Lanes, Val


MOVES_CACHE_LANES = 1 << 21                    # about 100 MB of cached copy moves


@dataclass(frozen=True)
class Moves:
    """What one T.copy moves at one pair of region starts, derived once: a pipelined
    copy meets the same few starts in every block and every simulation of the plan."""
    threads: np.ndarray               # absolute thread per lane
    src: np.ndarray                   # flat source position per lane
    src_outside: np.ndarray | None    # lanes reading past a global tensor's border
    dst_lanes: np.ndarray | None      # the lanes that store (None: all of them)
    dst: np.ndarray | slice           # flat destination per storing lane (see _window)
    dst_threads: np.ndarray | None
    faults: tuple[str, ...] = ()      # R505: accesses outside their buffer (not made)


class CopyExecution:
    """T.copy for interp.simulate._Block."""

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

    def region_flat(self, region: ir.Region, starts: list[int], index: list[np.ndarray],
                    n: int, guards) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(flat offset, guarded, beyond) of n elements of region at the values `index`
        of the lowered index expressions (one per dimension of the buffer, from
        `index_values`): the addresses the kernel computes. `guarded` elements fail a lowered border test
        (guards, per dimension) of a global tensor (read as 0, not written: TileLang's
        rule); `beyond` ones (None: none) pass every test the kernel makes yet lie
        outside the buffer (R505: the kernel would touch another allocation; the caller
        makes no such access). Guarded offsets are clamped so the caller may still
        gather. The region itself (at starts, its start values) must lie inside a
        non-global buffer (the logical rule, R102)."""
        buffer = region.buffer
        _region_inside(region, starts)
        guarded = np.zeros(n, dtype=bool)
        if buffer.scope == "global":
            for ix, extent, (low, high) in zip(index, buffer.shape, guards):
                if low:
                    guarded |= ix < 0
                if high:
                    guarded |= ix >= extent
        flat = flat_offset(buffer.shape, index) if index else np.zeros(n, np.int64)
        flat = np.asarray(flat, dtype=np.int64)
        beyond = ~guarded & ((flat < 0) | (flat >= buffer.size))
        if guarded.any() or beyond.any():
            flat = np.where(guarded, np.clip(flat, 0, buffer.size - 1), flat)
        return flat, guarded, (beyond if beyond.any() else None)

    def index_values(self, key, loop: tuple[str, ...], shape, hoisted, index,
                     e: np.ndarray, lanes: Lanes) -> list[np.ndarray]:
        """The lowered index expressions' values for iterations e (flat over shape) of
        their element loop (`index_parts`)."""
        return _values(*self.index_parts(key, loop, shape, hoisted, index, e, lanes))

    def index_parts(self, key, loop: tuple[str, ...], shape, hoisted, index,
                    e: np.ndarray, lanes: Lanes):
        """The lowered index expressions for iterations e (flat over shape) of their
        element loop, whose variables they read with the uniform names: each hoisted
        start's value and the names the starts read (block indices, serial loop
        variables, integer names a Let binds). An expression affine in the uniform names
        (spec.indexexpr.linear_in) is evaluated over the loop once per `key` (one
        statement's lowering) with those names at 0: its value is that base shifted by
        Σ c·name, the same integers exactly (a pipelined copy moves the same elements
        to new starts every iteration). Returns ((expression, base) per expression, the
        shift per expression — None where it is not affine —, and a function that
        evaluates an expression in full)."""
        uniform = {start.name: self.uniform_int(start.value, lanes) for start in hoisted}
        for ix in index:
            for name in ix.free_vars():
                if name not in uniform and name not in loop:
                    uniform[name] = int(lanes.env[name].v[0])
        found = self.s.index_bases.get(key)
        if found is None:
            loop_env = dict(zip(loop, np.unravel_index(e, tuple(shape))))
            at_zero = {**loop_env, **{name: 0 for name in uniform}}
            parts = []
            for ix in index:
                coefficients = linear_in(ix, uniform)
                base = None if coefficients is None else \
                    np.broadcast_to(ix.evaluate(at_zero), (len(e),))
                parts.append((ix, coefficients, base))
            found = self.s.index_bases[key] = (loop_env, parts)
        loop_env, parts = found
        shifts = [None if coefficients is None else
                  sum(k * uniform[name] for name, k in coefficients)
                  for _, coefficients, _ in parts]

        def full(ix):
            return np.broadcast_to(ix.evaluate({**loop_env, **uniform}), (len(e),))
        return [(ix, base) for ix, _, base in parts], shifts, full

    def lowered_copy(self, stmt: ir.Copy) -> tuple:
        """(the copy's lowering, absolute thread, replica and iteration of each of its
        partition's (thread, slot) pairs), once per plan."""
        found = self.s.copy_cache.get(stmt)
        if found is not None:
            return found
        offset, count = self.s.layouts.participants[stmt]
        try:
            moves = lowered.lower_copy(self.s.plan, stmt, (offset, count))
        except lowered.Unlowerable as e:
            raise DiagnosticError(error("R100", str(e), stmt.span)) from None
        tab = tables(moves.partition)
        threads = tab.pair_thread + moves.partition.offset
        found = (moves, threads, tab.pair_replica, tab.pair_index)
        runs = (threads >= offset) & (threads < offset + count)
        if not runs.all():
            # a thread that does not run the statement moves nothing: its elements
            # stay unmoved, as on the GPU (a later read finds them unwritten)
            found = (moves, threads[runs], tab.pair_replica[runs], tab.pair_index[runs])
        self.s.copy_cache[stmt] = found
        return found

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
            values[kept] = self.read_on_chip(src, moves.threads[kept], moves.src[kept],
                                             stmt.span)
        values = convert(Val(values, src.dtype), dst.dtype).v
        if moves.dst_lanes is not None:
            values = values[moves.dst_lanes]
        self.write(dst, moves.dst_threads, moves.dst, values, stmt.span)

    def read_on_chip(self, buffer: ir.Buffer, threads: np.ndarray, flat: np.ndarray,
                     span: Span):
        """A copy's reads of a shared buffer or a fragment by the moving threads."""
        if buffer.scope == "shared":
            return self.read_shared(buffer, flat, span, threads)
        return self.read_registers(buffer, threads, flat, span)

    def copy_moves(self, stmt: ir.Copy, lanes: Lanes) -> Moves:
        """The copy's moves at the current starts, memoized on the values of the
        variables the starts read (block indices, serial loop variables)."""
        names = self.s.starts_vars(stmt)
        key = None
        if names is not None and all(n in lanes.env for n in names):
            key = (stmt,) + tuple(int(lanes.env[n].v[0]) for n in names)
            found = self.s.moves.get(key)
            if found is not None:
                return found
        made, shifted = self.derive_moves(stmt, lanes)
        if key is not None and not shifted:
            # a copy whose starts read the block index meets new keys in every block:
            # bounded by lanes, not entries, memory stays flat however many blocks run
            if len(self.s.moves) > 4096 or self.s.moves_lanes > MOVES_CACHE_LANES:
                self.s.moves.clear()
                self.s.moves_lanes = 0
            self.s.moves[key] = made
            self.s.moves_lanes += len(made.src)
        return made

    def derive_moves(self, stmt: ir.Copy, lanes: Lanes) -> tuple[Moves, bool]:
        """The copy's moves at the current starts, and whether they are its template's
        shifted (one addition: not worth the memory of caching them)."""
        src, dst = stmt.src, stmt.dst
        lowering, threads, replica, e = self.lowered_copy(stmt)
        partition = lowering.partition
        parts, shifts, full = self.index_parts(
            stmt, partition.index_vars, partition.shape, lowering.hoisted,
            lowering.src_index + lowering.dst_index, e, lanes)
        src_starts, dst_starts = self.starts(src, lanes), self.starts(dst, lanes)
        template = self.s.move_templates.get(stmt)
        if template is not None:
            shifted = template.at(shifts)
            if shifted is not None:
                _region_inside(src, src_starts)
                _region_inside(dst, dst_starts)
                return shifted, True
        index = _values(parts, shifts, full)
        split = len(lowering.src_index)
        s_flat, s_guarded, s_beyond = self.region_flat(
            src, src_starts, index[:split], len(e), lowering.src_guards)
        d_flat, d_guarded, d_beyond = self.region_flat(
            dst, dst_starts, index[split:], len(e), lowering.dst_guards)
        moves = self._moves(stmt, lowering, threads, replica, s_flat, s_guarded, s_beyond,
                            d_flat, d_guarded, d_beyond)
        if template is None and _Template.applies(lowering, shifts, s_beyond, d_beyond):
            self.s.move_templates[stmt] = _Template.of(stmt, shifts, moves, s_flat, d_flat)
        return moves, False

    def _moves(self, stmt, lowering, threads, replica, s_flat, s_guarded, s_beyond,
               d_flat, d_guarded, d_beyond) -> Moves:
        src, dst = stmt.src, stmt.dst
        writers = ~d_guarded
        if lowering.one_writer:
            writers &= replica == 0          # one write per element, by replica 0
        faults = []
        skipped = s_guarded
        if s_beyond is not None:
            faults.append(outside_message("read", src.buffer, s_flat, s_beyond, threads))
            skipped = skipped | s_beyond
            s_flat = np.where(s_beyond, 0, s_flat)
        if d_beyond is not None and (d_beyond & writers).any():
            faults.append(outside_message("write", dst.buffer, d_flat, d_beyond & writers,
                                          threads))
            writers &= ~d_beyond
        outside = np.flatnonzero(skipped) if skipped.any() else None
        if writers.all():
            return Moves(threads, s_flat, outside, None, _window(dst.buffer, d_flat),
                          threads, tuple(faults))
        keep = np.flatnonzero(writers)
        return Moves(threads, s_flat, outside, keep, _window(dst.buffer, d_flat[keep]),
                      threads[keep], tuple(faults))


def _window(buffer: ir.Buffer, flat: np.ndarray) -> np.ndarray | slice:
    """flat as a slice when it is consecutive and the buffer is shared or global: a
    scatter through a slice costs a fraction of one through an array. (Registers keep
    arrays: their ownership checks look positions up by the array.)"""
    if buffer.scope in ("shared", "global") and len(flat) > 1 and \
            (np.diff(flat) == 1).all():
        return slice(int(flat[0]), int(flat[-1]) + 1)
    return flat


def _values(parts, shifts, full) -> list[np.ndarray]:
    """index_parts' expressions as values: each base shifted, or evaluated in full."""
    return [full(ix) if shift is None else (base + shift if shift else base)
            for (ix, base), shift in zip(parts, shifts)]


def _region_inside(region: ir.Region, starts: list[int]) -> None:
    """R102 unless the region (at starts) lies inside its buffer, when the buffer is not
    a global tensor (the logical rule; a global one is guarded at its border)."""
    buffer = region.buffer
    if buffer.scope == "global":
        return
    for s, extent, size in zip(starts, region.extents, buffer.shape):
        if s < 0 or s + extent > size:
            raise DiagnosticError(error(
                "R102", f"region {starts} + {list(region.extents)} is out of "
                f"bounds of {buffer.name} {list(buffer.shape)}", region.span))


@dataclass(frozen=True)
class _Template:
    """A copy's moves at one set of index shifts, from which its moves at any other are
    one addition: every index expression affine in the uniform names (so an offset is
    its base plus Σ strideᵈ·shiftᵈ), no border test in the lowering and no access
    outside its buffer at the template (so no lane is skipped, every writer stays
    one). At other shifts the same holds while both sides' offsets, moved by their
    constant, stay inside their buffers — checked on the template's extremes, else the
    moves are derived in full (and the faults found there)."""
    shifts: tuple[int, ...]
    moves: Moves
    src_strides: tuple[int, ...]
    dst_strides: tuple[int, ...]
    src_range: tuple[int, int, int]     # least and greatest offset, the buffer's size
    dst_range: tuple[int, int, int]     # (over every lane, writer or not)

    @staticmethod
    def applies(lowering, shifts, s_beyond, d_beyond) -> bool:
        tested = any(low or high for low, high in lowering.src_guards + lowering.dst_guards)
        return not tested and None not in shifts and s_beyond is None and d_beyond is None

    @staticmethod
    def of(stmt: ir.Copy, shifts, moves: Moves, s_flat, d_flat) -> "_Template":
        def strides(shape):
            return tuple(int(np.prod(shape[d + 1:], dtype=np.int64))
                         for d in range(len(shape)))

        def extent(flat, buffer):
            return (int(flat.min()), int(flat.max()), buffer.size) if len(flat) else \
                (0, -1, buffer.size)
        return _Template(tuple(shifts), moves, strides(stmt.src.buffer.shape),
                         strides(stmt.dst.buffer.shape), extent(s_flat, stmt.src.buffer),
                         extent(d_flat, stmt.dst.buffer))

    def at(self, shifts) -> Moves | None:
        if None in shifts:
            return None
        split = len(self.src_strides)
        moved = [k - k0 for k, k0 in zip(shifts, self.shifts)]
        ds = sum(st * m for st, m in zip(self.src_strides, moved[:split]))
        dd = sum(st * m for st, m in zip(self.dst_strides, moved[split:]))
        for (low, high, size), delta in ((self.src_range, ds), (self.dst_range, dd)):
            if low + delta < 0 or high + delta >= size:
                return None
        m = self.moves
        dst = slice(m.dst.start + dd, m.dst.stop + dd) if isinstance(m.dst, slice) \
            else m.dst + dd
        return Moves(m.threads, m.src + ds, None, m.dst_lanes, dst, m.dst_threads, ())


def outside_message(verb: str, buffer: ir.Buffer, flat: np.ndarray, bad: np.ndarray,
             threads: np.ndarray | None) -> str:
    """The R505 message of the first access marked bad: the flat offset the kernel
    computes, the thread, and the buffer's extent."""
    i = int(np.argmax(bad))
    who = "the block" if threads is None else f"thread {int(threads[i])}"
    return (f"{buffer.scope} {verb} {buffer.name}[{int(flat[i])}] by {who} is outside "
            f"{buffer.name}[{buffer.size}] ({int(bad.sum())} access"
            f"{'es' if bad.sum() > 1 else ''} of this statement)")


def in_box(flat: np.ndarray, shape, starts, extents) -> np.ndarray:
    coords = np.unravel_index(flat, shape)
    inside = np.ones(len(flat), dtype=bool)
    for c, s, e in zip(coords, starts, extents):
        inside &= (c >= s) & (c < s + e)
    return inside

