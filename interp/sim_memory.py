"""A simulated block's memory, every access checked: buffer indices against their
shapes (as the logical interpreter refuses them), fragment elements against the
threads that hold them (R300), register slots, shared and local words against their
allocation and their writes (R502, R504, R505), and every access to a shared buffer
against the accesses of other threads: one not ordered by a barrier of the plan both
threads passed, one of them a write, is a race (R504, naming both accesses; see
interp.shared). A mixin of interp.simulate's block, as interp.sim_copies is; every
other part of the block reads and writes through it."""
from __future__ import annotations

import operator

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Counterexample, DiagnosticError, error
from verify_reducer.spec.source import Span

from .evaluate import evaluate, stored
from .memory import flat_positions, unallocated
from .registers import Registers
from .shared import SharedBuffer
from .values import THREAD, Lanes, Val
from .violations import register_array, slot_outside, store_conflict, threads_text


class MemoryAccess:
    """Loads, stores and their checks for interp.simulate._Block."""

    def load(self, load: ir.Load, indices: list[Val], lanes: Lanes) -> Val:
        """Memory for interp.evaluate: a Load in every lane."""
        buffer = load.buffer
        flat = self.flat_of(buffer, indices, load.span)
        if buffer.scope == "global":
            return Val(self.k.globals[buffer][flat], buffer.dtype)
        threads = lanes.env[THREAD].v
        if buffer.scope == "shared":
            return Val(self.read_shared(buffer, flat, load.span, threads), buffer.dtype)
        if buffer.scope == "local":
            return Val(self.read_local(buffer, threads, flat, load.span), buffer.dtype)
        return Val(self.read_registers(buffer, threads, flat, load.span), buffer.dtype)

    def flat_of(self, buffer: ir.Buffer, indices: list[Val], span: Span,
                code: str = "R102") -> np.ndarray:
        """interp.memory.flat_positions of evaluated indices, memoized on the identity
        of their arrays: a loop's variables are the same arrays every time it runs, so
        are the positions."""
        arrays = [i.v for i in indices]
        key = (buffer, *map(id, arrays))
        found = self.s.flat_memo.get(key)
        if found is not None and all(map(operator.is_, found[0], arrays)):
            return found[1]
        for i in indices:
            if i.dtype.is_float:
                raise DiagnosticError(error("R102", "a buffer index must be an integer",
                                            span))
        flat = flat_positions(buffer, [a.astype(np.int64) for a in arrays], span, code)
        if len(self.s.flat_memo) > 256:
            self.s.flat_memo.clear()
        self.s.flat_memo[key] = (arrays, flat)      # keeps the arrays alive
        return flat

    def indices(self, exprs, lanes: Lanes) -> list[Val]:
        return [evaluate(e, lanes, self) for e in exprs]

    def element(self, buffer: ir.Buffer, flat) -> str:
        point = np.unravel_index(int(flat), buffer.shape)
        return f"{buffer.name}[{', '.join(str(int(p)) for p in point)}]"

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
            raise unallocated(buffer, span)
        return found

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

    def shared_buffer(self, buffer: ir.Buffer, span: Span) -> SharedBuffer:
        found = self.shared.get(buffer)
        if found is None:
            raise unallocated(buffer, span)
        return found

    def read_shared(self, buffer: ir.Buffer, flat: np.ndarray, span: Span,
                    threads: np.ndarray) -> np.ndarray:
        """Each of threads reads its element flat."""
        sb = self.shared_buffer(buffer, span)
        logical = flat
        stage = self.stage_of.get(buffer)
        if stage is not None:                    # a pipeline's stage of the buffer
            flat = flat + stage
        written = sb.written[flat]
        if not written.all():
            missing = ~written
            self.report.add("R502", f"read of {self.element(buffer, logical[missing][0])}, "
                            "which was never written (shared memory starts "
                            "uninitialized)", span, key=buffer)
        if threads.shape != flat.shape:
            threads = np.broadcast_to(threads, flat.shape)
        lo = stage or 0
        self.order_access(buffer, sb, threads, flat, "reads", span, (lo, lo + buffer.size))
        return sb.values[flat]

    def read_local(self, buffer, threads, flat, span) -> np.ndarray:
        regs = self.local[buffer]
        if not regs.written[threads, flat].all():
            self.report.add("R502", f"read of local {buffer.name} before it is written",
                            span, key=buffer)
        return regs.values[threads, flat]

    def read_any(self, buffer: ir.Buffer, span: Span, threads: np.ndarray,
                 flat: np.ndarray) -> np.ndarray:
        """The whole buffer, where threads[i] reads element flat[i] (its accesses: a
        shared buffer's races are tracked, and they may read an element several times
        or not at all)."""
        if buffer.scope == "global":
            return self.k.globals[buffer].copy()
        self.read_shared(buffer, flat, span, threads)
        return self.shared_buffer(buffer, span).values[:buffer.size].copy()

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
            if threads is not None:
                self.track_writes(buffer, threads, flat, span, sb)
        elif buffer.scope == "local":
            regs = self.local[buffer]
            regs.values[threads, flat] = values
            regs.written[threads, flat] = True
        else:
            self.write_registers(buffer, threads, flat, values, span)

    def track_writes(self, buffer: ir.Buffer, threads: np.ndarray, flat, span: Span,
                     sb: SharedBuffer | None = None,
                     window: tuple[int, int] | None = None) -> None:
        """threads[i] writes shared element flat[i] (flat a position array or a slice):
        ordered after every other thread's earlier access, or a race. A statement that
        writes values without naming their threads (every holder of an element writes
        it) calls this itself with the renderer's writers."""
        sb = sb or self.shared_buffer(buffer, span)
        addrs = flat if flat.__class__ is slice or np.ndim(flat) == 1 else \
            np.asarray(flat).reshape(-1)
        if np.ndim(threads) != 1:
            shape = (flat.stop - flat.start,) if isinstance(flat, slice) else np.shape(flat)
            threads = np.broadcast_to(threads, shape).reshape(-1)
        self.order_access(buffer, sb, threads, addrs, "writes", span, window)

    def order_access(self, buffer: ir.Buffer, sb: SharedBuffer, threads: np.ndarray, flat,
                     verb: str, span: Span, window: tuple[int, int] | None = None) -> None:
        """threads[i] reads or writes (verb) shared element flat[i] at this step: R504 when
        a cp.async has yet to write it, or when an earlier access of another thread is not
        ordered before it. window: [lo, hi), where flat lies (a pipeline stage; None: the
        whole buffer, every stage)."""
        if sb.outstanding:
            near = sb.near(window or (0, len(sb.values)))
            if near:
                self.async_race(buffer, sb, flat, threads, verb, span, near)
        clock = self.clock
        clock.spans[clock.now] = span              # Clock.note, inlined: every access
        race = (sb.races.read if verb == "reads" else sb.races.write)(threads, flat)
        if race is not None:
            self.shared_race(buffer, race, span)

    def async_race(self, buffer: ir.Buffer, sb: SharedBuffer, flat, threads: np.ndarray,
                   verb: str, span: Span, near: list) -> None:
        """R504 when threads[i] reads or writes an element flat[i] that one of the
        cp.async copies `near` still has to write (the wait_group that completes it not
        reached): names both."""
        found = sb.in_flight(flat, near)
        if found is None:
            return
        i, copy, address, j = found
        stage, element = divmod(address, buffer.size)
        staged = f" (stage {stage})" if len(sb.values) > buffer.size else ""
        who = "a thread" if copy.threads is None else \
            f"thread {int(np.ravel(copy.threads)[j])}"
        line = self.clock.spans[copy.time].line
        thread = int(np.ravel(threads)[i])
        self.report.add("R504", f"shared-memory race on {self.element(buffer, element)}"
                        f"{staged}: {who} writes it at line {line} (a cp.async) and thread "
                        f"{thread} {verb} it at line {span.line}, before the cp.async that "
                        f"writes it completed (no wait_group for it in between)"
                        + self.block_text, span, key=("pipeline-stage", verb))

    def shared_race(self, buffer: ir.Buffer, race, span: Span, where: str = "") -> None:
        """R504 naming both accesses: their threads, statements and the element (of
        buffer, or as held in `where`: a T.reduce_*'s shared rows)."""
        if race is None:
            return
        first_verb, second_verb = {"write/write": ("writes", "writes"),
                                   "read/write": ("reads", "writes"),
                                   "write/read": ("writes", "reads")}[race.kind]
        first, second = race.first_span, race.second_span
        stage, address = divmod(race.address, buffer.size)
        staged = f" (stage {stage})" if buffer in self.stage_of else ""
        held = f" in {where}" if where else ""
        self.report.add("R504", f"shared-memory race on {self.element(buffer, address)}"
                        f"{held}{staged}: thread {race.first} {first_verb} it at line {first.line} "
                        f"and thread {race.second} {second_verb} it at line {second.line}, "
                        f"with no barrier both passed in between" + self.block_text, span,
                        key=("race", buffer))

    def check_store_conflict(self, buffer, threads, flat, values, span) -> None:
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
