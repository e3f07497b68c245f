"""The simulator's reducer statements: init, each site's contributions into the
executing thread's storage slot (the plan's guard), and finalize through the plan's
collective, with exactly-once accounting of every contribution (interp.accounting).
A mixin of interp.simulate's block."""
from __future__ import annotations


from dataclasses import dataclass
from typing import Callable

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Counterexample, DiagnosticError, Note, error
from verify_reducer.spec.physical import FinalizePlan, Publish, SitePlan
from verify_reducer.spec.step_cells import publish_words

from .accounting import UpdateEvent, contribution_ids, describe, replay_counts, \
    wrong_contributions
from .collective import Channel, Checks, Exchange, add_fold
from .evaluate import operand
from .registers import tables
from .sim_partials import Entry, Partials
from .values import ITER, REP, THREAD, Lanes
from .violations import register_array, slot_outside



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


class ReducerExecution:
    """Reducer statements for interp.simulate._Block."""

    def _reducerinit(self, stmt: ir.ReducerInit, lanes: Lanes):
        p = self.partials[stmt.reducer]
        dtype = stmt.reducer.dtype
        seed = None
        if stmt.seed is not None:
            seed = operand(stmt.seed, dtype, lanes, self).v[0]
        if stmt.fill_value is not None:
            seed = self.legacy_fill_seed(p, stmt, seed, lanes)
        p.open(seed)

    def legacy_fill_seed(self, p: Partials, stmt: ir.ReducerInit, seed, lanes: Lanes):
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
            site.loop.replicate > 1, cells, e_ids, iterations, p.plan.storage.offset,
            tuple(site.loop.shape)))

    def entry(self, stmt: ir.ReducerUpdate, site: SitePlan, p: "Partials",
              threads: np.ndarray, outputs: np.ndarray, replica: np.ndarray) -> "Entry":
        """Where an update's lanes enter the partials, memoized on the identity of the
        lane arrays: a loop presents the same arrays at every visit."""
        key = (stmt, id(threads), id(outputs), id(replica))
        found = self.s.entries.get(key)
        if found is not None and found[0] is threads and found[1] is outputs and \
                found[2] is replica:
            return found[3]
        made = Entry.derive(site, p, threads, outputs, replica)
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
        exchange = Exchange(fplan, p.plan.participants, self.s.threads,
                            p.plan.workspace_words, channels, checks)
        with np.errstate(over="ignore"):
            exchange.run()
        cells, outputs, threads = self.observed(stmt, fplan, p)
        if fplan.publish is None:
            used = p.tables.index >= 0
            if p.seed is not None:
                p.regs.values[used] = p.combine(p.seed, p.regs.values[used])
            copies = Copies.of_partials(p, cells)
        else:
            copies = published(fplan.publish, exchange, p, outputs, threads,
                               self.s.publish_memo)
            if p.seed is not None:
                copies.values = p.combine(p.seed, copies.values)
        p.ledger.expect()
        mismatched = self.account(stmt, fplan, p, copies, outputs)
        self.deliver(stmt, p, cells, outputs, threads, copies.values)
        self.k.finalizes.append(FinalizeSummary(
            self.block, stmt.reducer.name, stmt.span.line, stmt.reducer.size,
            p.ledger.contributions, len(outputs), mismatched))
        p.ledger = None

    def observed(self, stmt: ir.ReducerFinalize, fplan: FinalizePlan, p: Partials):
        """The partial cells the result is taken from: (cell, output, absolute reader
        thread) — every copy for an in-place finalize, the copy in each
        holder of a destination fragment element, replica 0 for shared/global."""
        tab = p.tables
        offset = p.plan.storage.offset
        dst = stmt.dst
        if dst is None:
            return tab.pair_cell, tab.pair_index, tab.pair_thread + offset
        if dst.scope == "fragment" and fplan.publish is not None:
            # published from the workspace: the holders need no partial of their own
            layout = fplan.dst_layout or self.s.layouts.fragments[dst]
            dtab = tables(layout)
            return None, dtab.pair_index, dtab.pair_thread + layout.offset
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

    def account(self, stmt: ir.ReducerFinalize, fplan: FinalizePlan, p: Partials,
                copies: "Copies", outputs) -> int:
        """Compare every observed copy's (id-sum, count) with the expected pair; name the
        wrong contributions of each mismatched output by a replay. Returns how many
        outputs mismatched."""
        ledger = p.ledger
        poisoned = ~copies.written
        if poisoned.any():
            i = int(np.argmax(poisoned))
            self.report.add("R502", f"the result of {self.element(stmt.reducer, outputs[i])}"
                            f" in thread {int(copies.threads[i])} is poisoned "
                            "(a partial the collective never wrote)", stmt.span,
                            key="result")
        bad = (copies.ids != ledger.expected_ids[outputs]) | \
              (copies.counts != ledger.expected_counts[outputs])
        if not bad.any():
            return 0
        bad_outputs, first = np.unique(outputs[bad], return_index=True)
        targets = np.nonzero(bad)[0][first]
        for output, copy in list(zip(bad_outputs, targets))[:4]:
            self.name_wrong(stmt, fplan, p, int(output), copies, int(copy))
        if len(bad_outputs) > 4:
            self.report.add("R503", f"{len(bad_outputs)} outputs of {stmt.reducer.name} "
                            "violate exactly-once in all (the first 4 are named above)",
                            stmt.span, key="summary")
        return len(bad_outputs)

    def name_wrong(self, stmt, fplan, p: Partials, output: int, copies: "Copies",
                   copy: int) -> None:
        ledger = p.ledger
        slots = p.regs.values.shape[1]
        counts = replay_counts(ledger, fplan, p.plan.participants, self.s.threads,
                               max(p.plan.workspace_words, 1), slots, copies.observe(copy))
        wrong = wrong_contributions(ledger, output, counts)
        target = self.element(stmt.reducer, output)
        thread = int(copies.threads[copy])
        if not wrong:
            self.report.add("R503", f"the copy of {target} in thread {thread} carries an "
                            "accounting pair no set of contributions explains", stmt.span,
                            key=output)
            return
        event, lane, times = wrong[0]
        what = describe(event, lane, self.block_text)
        message = (f"{what} entered {target} {times} times (in the copy of thread "
                   f"{thread}; exactly once expected)")
        notes = [Note(f"{describe(e, l, self.block_text)} entered {times_} times")
                 for e, l, times_ in wrong[1:4]]
        if len(wrong) > 4:
            notes.append(Note(f"{len(wrong)} contributions to {target} are wrong in all"))
        notes.append(Note("the update", event.update.span))
        self.report.add("R503", message, stmt.span, *notes, key=(self.block, output),
                        counterexample=entered_picture(event, lane, slots, thread,
                                                       f"{what}: entered {target} {times} "
                                                       f"times in the copy of thread "
                                                       f"{thread}"))

    def deliver(self, stmt: ir.ReducerFinalize, p: Partials, cells, outputs,
                threads, values) -> None:
        """Write the result to the destination (in place: the partials become it)."""
        dst = stmt.dst
        if dst is None:
            p.regs.flat_values[cells] = values
            p.regs.flat_written[cells] = True
            p.readable = True
            return
        if dst.scope == "fragment":
            self.write_registers(dst, threads, outputs, values, stmt.span)
        elif dst.scope == "shared":
            # storage replica 0 writes each output (codegen.cuda_collectives): ordered
            # after every earlier access of another thread, or a race (R504)
            self.write(dst, threads, outputs, values, stmt.span)
        else:
            self.write(dst, None, outputs, values, stmt.span)


def entered_picture(event, lane: int, slots: int, copy_thread: int,
                    caption: str) -> Counterexample:
    """R503 on the update loop's grid: the contribution's iteration (every replica of
    it), the threads whose partials it entered, and the copy that counted it."""
    loop = event.update
    cid = event.ids[lane]
    threads = sorted({int(c) // slots + event.offset
                      for c in event.cells[event.cell_ids == cid]})
    flat = 0 if event.iterations is None else int(event.iterations[lane])
    shape = event.loop_shape
    index = tuple(int(x) for x in np.unravel_index(flat, shape))
    marks = tuple((t, "entered") for t in threads if t != copy_thread)
    return Counterexample(("update", loop.reducer.name, loop.span.line), caption,
                          ((index, "contribution"),), marks + ((copy_thread, "copy"),))


# ----------------------------------------------------------------------------- copies

@dataclass
class Copies:
    """The observed copies of the result, one per (reader thread, output): value,
    accounting pair, whether it was written, and how a replay observes it."""
    values: np.ndarray
    ids: np.ndarray
    counts: np.ndarray
    written: np.ndarray
    threads: np.ndarray                    # absolute reader thread per copy
    observe: Callable[[int], Callable[[Channel], np.ndarray]]

    @staticmethod
    def of_partials(p: Partials, cells: np.ndarray) -> "Copies":
        slots = p.regs.values.shape[1]
        offset = p.plan.storage.offset

        def observe(copy: int):
            cell = int(cells[copy])
            return lambda ch: ch.cells[cell // slots, cell % slots]
        return Copies(p.regs.flat_values[cells], p.ids.reshape(-1)[cells],
                      p.counts.reshape(-1)[cells], p.regs.flat_written[cells],
                      cells // slots + offset, observe)


def published(pub: Publish, exchange: Exchange, p: Partials, outputs: np.ndarray,
              threads: np.ndarray, memo: dict) -> Copies:
    """Each reader's combine of W[addr(x, k)] for k < terms, read after the collective's
    last barrier, in every channel (so the accounting sees the publication), then the
    publication's own barrier."""
    addrs = publish_addresses(pub, p.buffer.shape, outputs, memo)
    inside = (addrs >= 0) & (addrs < exchange.words)
    if not inside.all():
        i = np.argwhere(~inside)[0]
        exchange.report("R505", f"the publication reads workspace word {int(addrs[tuple(i)])} "
                        f"for thread {int(threads[i[0]])} (term {int(i[1])}), outside "
                        f"{p.buffer.name}_workspace[{exchange.words}]", key="publish")
        addrs = np.clip(addrs, 0, max(exchange.words - 1, 0))
    readers = np.repeat(threads - exchange.offset, pub.terms)
    exchange.unwritten(addrs.reshape(-1), readers, "the publication")   # R502
    races = p.races
    exchange.race(races.read(readers + exchange.offset, addrs.reshape(-1)), pub)
    races.tick()
    races.barrier(np.arange(exchange.offset, exchange.offset + exchange.count))
    values, ids, counts = (ch.reduce(ch.workspace[addrs], 1) for ch in exchange.channels)
    written = exchange.ws_written[addrs].all(axis=1) & inside.all(axis=1)

    def observe(copy: int):
        return lambda ch: add_fold(ch.workspace[addrs[copy]], 0)
    return Copies(values, ids, counts, written, threads, observe)


def publish_addresses(pub: Publish, shape, outputs: np.ndarray, memo: dict) -> np.ndarray:
    """[copies, terms]: the workspace words each copy of output `outputs[n]` combines —
    the same at every block and epoch, so computed once per (publication, outputs
    array) into memo (the plan's PlanStatics.publish_memo); the entry keeps both
    alive, so their ids stay unique while it lasts."""
    key = (id(pub), id(outputs))
    found = memo.get(key)
    if found is not None and found[0] is pub and found[1] is outputs:
        return found[2]
    if len(memo) > 1024:
        memo.clear()
    addrs = publish_words(pub, shape, outputs)
    memo[key] = (pub, outputs, addrs)
    return addrs

