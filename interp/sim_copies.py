"""The simulator's copies (T.copy): which lane moves which element, at the addresses
the kernel computes (spec.addressing), border-guarded where the kernel tests and R505
where an address leaves its buffer; derived once per pair of region starts and cached.
A copy without a layout moves its elements whole, but its shared-memory accesses are
tracked as the renderer's partition makes them (its barriers are the plan's, passed by
interp.simulate). A mixin of interp.simulate's block: it reads and writes the block's memory through
interp.sim_memory's checked accessors."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import flat_offset, region_indices
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.source import Span

from .evaluate import convert, operand
from verify_reducer.spec.layout import default_partition

from .registers import tables
from .values import ITER, Lanes, Val


MOVES_CACHE_LANES = 1 << 21                    # about 100 MB of cached copy moves


@dataclass(frozen=True)
class Moves:
    """What one T.copy moves at one pair of region starts, derived once: a pipelined
    copy meets the same few starts in every block and every simulation of the plan."""
    threads: np.ndarray | None        # absolute thread per lane (None: cooperative)
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
            values = self.read_on_chip(src, moves.threads, moves.src, stmt.span, stmt)
        else:                                      # R505 lanes: not read, 0
            kept = np.setdiff1d(np.arange(len(moves.src)), moves.src_outside)
            values = np.zeros(len(moves.src), dtype=src.dtype.np)
            values[kept] = self.read_on_chip(
                src, None if moves.threads is None else moves.threads[kept],
                moves.src[kept], stmt.span, stmt, kept)
        values = convert(Val(values, src.dtype), dst.dtype).v
        if moves.dst_lanes is not None:
            values = values[moves.dst_lanes]
        self.write(dst, moves.dst_threads, moves.dst, values, stmt.span)
        if dst.scope == "shared" and moves.threads is None:
            lane_threads = self.partition_threads(stmt)
            kept = lane_threads if moves.dst_lanes is None else lane_threads[moves.dst_lanes]
            self.track_writes(dst, kept, moves.dst, stmt.span)

    def read_on_chip(self, buffer: ir.Buffer, threads, flat: np.ndarray, span: Span,
                     stmt: ir.Copy, lanes: np.ndarray | None = None):
        """A copy's reads of a shared buffer or a fragment; threads None: a copy without
        a layout, whose lanes (all, or those of `lanes`) read by the renderer's
        partition."""
        if buffer.scope == "shared":
            if threads is None:
                threads = self.partition_threads(stmt)
                threads = threads if lanes is None else threads[lanes]
            return self.read_shared(buffer, flat, span, threads)
        return self.read_registers(buffer, threads, flat, span)

    def partition_threads(self, stmt: ir.Copy) -> np.ndarray:
        """The thread that moves each element of a copy without a layout (its replica 0
        in the participants' partition, codegen.cuda_copies' fallback)."""
        offset, count = self.s.layouts.participants[stmt]
        layout = default_partition(tuple(stmt.dst.extents), count, offset)
        tab = tables(layout)
        first = tab.pair_replica == 0
        threads = np.empty(int(np.prod(layout.shape)), dtype=np.int64)
        threads[tab.pair_index[first]] = tab.pair_thread[first] + layout.offset
        return threads

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

    def derive_moves(self, stmt: ir.Copy, lanes: Lanes) -> Moves:
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
                      None if threads is None else threads[keep], tuple(faults))


def _window(buffer: ir.Buffer, flat: np.ndarray) -> np.ndarray | slice:
    """flat as a slice when it is consecutive and the buffer is shared or global: a
    scatter through a slice costs a fraction of one through an array. (Registers keep
    arrays: their ownership checks look positions up by the array.)"""
    if buffer.scope in ("shared", "global") and len(flat) > 1 and \
            (np.diff(flat) == 1).all():
        return slice(int(flat[0]), int(flat[-1]) + 1)
    return flat


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

