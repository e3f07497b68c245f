"""The simulator's atomics: the thread program's decision for each T.atomic_add /
atomic_max / atomic_min (codegen.lower.atomics.AtomicIssue) executed, lane by lane.

Who issues is the lowering's: inside a T.Parallel the lanes of the replica it names
(every lane when it names none), outside one every thread that reaches the statement.
Accounting (docs/design.md §25): inside a T.Parallel each logical iteration the lanes
hold must be issued exactly once — an iteration issued by several lanes is R503 (its
contribution, the element and how many times: the RFC's replicated update, moved to the
grid), one the guard leaves out is R502. Outside a loop each thread's execution is its
own contribution, which the interpreter counts the same way (docs/semantics.md §12).

The contributions are then applied as the hardware applies them: one at a time, in lane
order, each step rounded into the destination's dtype (a `float16` atomic rounds at
every step); the interpreter's bound covers every order (interp.atomics). A shared
destination's accesses join its race tracking as writes: atomics of one statement do
not race with each other, but one not ordered by a barrier after another thread's plain
store, or before its read, is R504 with both accesses. A T.atomic_addxN's lanes are
element atomics, each accounted as above; its one instruction needs the address aligned
to the lanes, or the GPU faults: R505 names the element and the thread. A mixin of
interp.simulate's block."""
from __future__ import annotations

import numpy as np

from verify_reducer.codegen.lower.atomics import issue_of
from verify_reducer.spec import ir
from verify_reducer.spec.ops import MONOIDS

from .evaluate import operand, stored
from .values import ITER, REP, THREAD, Lanes
from .violations import threads_text


class AtomicExecution:
    """T.atomic_* statements for interp.simulate._Block."""

    def _atomicupdate(self, stmt: ir.AtomicUpdate, lanes: Lanes):
        issue = issue_of(self.s.plan, stmt)
        if issue.in_loop and ITER in lanes.env:
            issuing = np.ones(lanes.n, dtype=bool) if issue.guard_replica is None else \
                lanes.env[REP].v == issue.guard_replica
            self._account(stmt, lanes, issuing)
            lanes = lanes if issuing.all() else lanes.select(issuing)
        if lanes.n == 0:
            return
        flat = self.flat_of(stmt.buffer, self.indices(stmt.indices, lanes), stmt.span)
        if issue.vector > 1:
            self._check_aligned(stmt, issue, lanes, flat)
        values = stored(stmt.buffer.dtype, operand(stmt.value, stmt.buffer.dtype, lanes,
                                                   self).v)
        threads = lanes.env[THREAD].v
        if stmt.buffer.scope == "shared":
            sb = self.shared_buffer(stmt.buffer, stmt.span)
            unwritten = ~sb.written[flat]
            if unwritten.any():
                self.report.add("R502", f"atomic update of "
                                f"{self.element(stmt.buffer, flat[unwritten][0])}, which "
                                f"was never written (shared memory starts uninitialized)"
                                + self.block_text, stmt.span, key=stmt.buffer)
            _apply_in_order(sb.values, flat, values, stmt)
            self.track_writes(stmt.buffer, threads, flat, stmt.span, sb)
        else:
            _apply_in_order(self.k.globals[stmt.buffer], flat, values, stmt)

    def _check_aligned(self, stmt: ir.AtomicUpdate, issue, lanes: Lanes,
                       flat: np.ndarray) -> None:
        """A T.atomic_addxN's one instruction needs its address aligned to its lanes:
        lane k of it at an element offset ≡ k (mod n), a tensor's first element being
        aligned (cudaMalloc's 256 bytes). Else the GPU faults (misaligned address): R505."""
        lane = lanes.env[issue.lane_var].v
        bad = flat % issue.vector != lane
        if not bad.any():
            return
        k = int(np.argmax(bad))
        first = int(flat[k]) - int(lane[k])
        size = issue.vector * stmt.buffer.dtype.bits // 8
        self.report.add(
            "R505", f"misaligned vector atomic: T.atomic_addx{issue.vector} adds "
            f"{issue.vector} lanes from {self.element(stmt.buffer, first)} (thread "
            f"{int(lanes.env[THREAD].v[k])}), element offset {first}, not a multiple of "
            f"{issue.vector}: the {issue.operand_type} instruction needs an address aligned "
            f"to {size} bytes" + self.block_text, stmt.span, key="atomic-misaligned")

    def _account(self, stmt: ir.AtomicUpdate, lanes: Lanes, issuing: np.ndarray) -> None:
        """Every iteration the lanes hold issued exactly once (R503 / R502)."""
        iters = lanes.env[ITER].v
        held, index = np.unique(iters, return_inverse=True)
        times = np.bincount(index[issuing], minlength=len(held))
        if (times == 1).all():
            return
        threads = lanes.env[THREAD].v
        bad = int(np.argmax(times != 1))
        lane_of = np.flatnonzero(index == bad)
        where = ", ".join(f"{n}={int(lanes.env[n].v[lane_of[0]])}"
                          for n in self.iter_names if n in lanes.env)
        element = self.element(stmt.buffer, self.flat_of(
            stmt.buffer, self.indices(stmt.indices, lanes.select(index == bad)),
            stmt.span)[0])
        if times[bad] > 1:
            who = threads[lane_of[issuing[lane_of]]]
            self.report.add(
                "R503", f"the atomic contribution of iteration ({where}) to {element} is "
                f"applied {int(times[bad])} times, by {threads_text(np.unique(who))} (the "
                f"loop's layout replicates it {int(len(lane_of))}×; only one replica may "
                f"issue an atomic)" + self.block_text, stmt.span, key="atomic-replicated")
        else:
            self.report.add(
                "R502", f"the atomic contribution of iteration ({where}) to {element} is "
                f"never applied: no lane holding it issues it" + self.block_text,
                stmt.span, key="atomic-missing")


def _apply_in_order(target, flat: np.ndarray, values: np.ndarray,
                    stmt: ir.AtomicUpdate) -> None:
    """values[k] combined into target[flat[k]] one at a time, k in order, each result
    stored in the destination's dtype (rounded, or wrapped): round r applies every
    element's r-th contribution, so the work is the largest count, not the lane count."""
    dtype = stmt.buffer.dtype
    monoid = MONOIDS[stmt.op]
    ufunc = monoid.float_ufunc if dtype.is_float else monoid.ufunc
    order = np.argsort(flat, kind="stable")
    f, v = flat[order], values[order]
    first = np.ones(len(f), dtype=bool)
    first[1:] = f[1:] != f[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(len(f)), 0))
    rank = np.arange(len(f)) - start
    for r in range(int(rank.max()) + 1 if len(rank) else 0):
        pick = rank == r
        at, add = f[pick], v[pick]
        current = target[at]
        wide = np.float64 if dtype.is_float else current.dtype
        target[at] = stored(dtype, ufunc(current.astype(wide), add.astype(wide)))
