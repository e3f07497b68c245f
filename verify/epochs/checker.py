"""The reducer epoch verifier: `check_func(func)` returns every reducer error of a kernel.

It builds the control-flow graph (verify.epochs.cfg), solves the epoch state machine on it
(verify.epochs.states) and judges each statement against the states that reach it on **some**
path, then adds the rules that need no state (verify.epochs.rules).

State rules (docs/semantics.md §4), with the definitions chosen where the reducer RFC is
silent (docs/decisions.md):

- R200 read: any load of a reducer's element as a value, unless on every path the reducer
  was finalized *in place* (legacy `T.finalize_reducer(acc)` makes it readable). After a
  finalize into a destination the reducer stays unreadable: the result is in the
  destination.
- R201 update after finalize (or after an in-place finalize: the frontend turns
  `acc[i] += v` into an update whatever precedes it).
- R202 contributions that are never finalized: a path from an epoch's init through an
  update reaches the end of the kernel, or an init that reopens the reducer, with no
  finalize (the contributions are lost). Only the `updated` facts count: a path on which
  no update can have run since the init loses nothing, so it may skip the finalize (a
  finalize under a block-uniform `if` whose other arm contributes nothing, vLLM's
  `sum_smaller_probs` pattern; the destination is then simply not written), and
  reopening an epoch with no contribution yet (`T.clear` twice, an implicit init followed
  by `T.reducer_init`) is fine. "Can have run" is the dataflow's may-analysis: the
  decisions of two `if`s are not correlated, so a path that updates under one condition
  and skips the finalize under another is lossy even if the conditions agree. Reported
  once per epoch start, at the init that opened it (the allocation for the RFC's implicit
  init), with notes that follow one lossy path: the decisions to an update, the update,
  the decisions from it to the end (or the reopening init).
- R203 a finalize reached by an already finalized reducer (e.g. a finalize on one arm
  followed by another after the `if`).
- R204 an update or finalize while no epoch was ever opened (legacy reducer without
  `T.fill`/`T.clear`, or before the `T.reducer_init`).
- R205 a store to a reducer that no update form matched, unless on every path it was
  finalized in place (then it is an ordinary fragment). Reads of the same reducer in
  that store (`acc[0] = acc[0] * 2 + v`) are part of the unrecognized form, not a
  separate R200.
- R208 scope: a finalize whose epoch may have been opened by an init in a different epoch
  scope (verify.epochs.scopes: the enclosing loops and `T.ws` blocks; `if` arms are not scopes).
  An init before a loop and a finalize inside it is R208 at the finalize; the update of the
  next iteration is still R201 at its own line (a different statement, a path the program
  really takes), but the finalize is not also R203 (one mistake, one line). A finalize
  on one arm of a uniform `if` is R202 when the path that misses it may carry
  contributions; on both arms, correct.
- R207 divergence: verify.epochs.divergence. A divergent finalize leaves the epoch's state
  thread-dependent; the state machine stops following the reducer there (`recovered`),
  the path that misses a divergent finalize on one arm is not also R202,
  so a finalize inside a `T.Parallel` body is one R207, not also an R201/R203/R208 for
  the "next iteration" of a loop whose iterations run side by side.
- R211 for `T.copy` and `T.reduce_*` touching a reducer that is not finalized in place on
  every path; the state-free R211 cases (alias, `T.fill` region, reducer destination of a
  finalize) are in verify.epochs.rules.

Legacy fill of a max/min/bitand/bitor reducer with a value that is not the identity: x ⊕ x
= x for those ops, so the old meaning was `v ⊕ contributions` whatever the thread count —
a seed applied once. It is accepted (the value must be treated as the epoch's seed).
For sum, product and bitxor it was participant-dependent: R213 (verify.epochs.rules).

After an error the reducer moves to a `recovered` state that accepts everything until the
next init/finalize, so one mistake gives one diagnostic (verify.epochs.states)."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Diagnostic, Note, error
from verify_reducer.spec.printer import format_expr

from verify_reducer.verify.epochs import rules
from verify_reducer.verify.epochs.cfg import CFG, build
from verify_reducer.verify.epochs.divergence import divergence
from verify_reducer.verify.proofs.monoid import law_diagnostics
from verify_reducer.verify.epochs.scopes import (Context, Frame, describe_epoch_scope, describe_participants,
                     epoch_scope, participants, same_epoch_scope)
from verify_reducer.verify.epochs.states import (ALLOCATED, CLOSED_STATES, FINALIZED, FINALIZED_IN_PLACE, OPEN_STATES,
                     RECOVERED, UPDATED, Fact, solve)


def check_func(func: ir.PrimFunc, trips=None) -> list[Diagnostic]:
    """Every reducer error of func, sorted by position. trips: (fewest, most) iterations
    of serial loops to assume instead of their intervals (verify.epochs.cfg.build)."""
    cfg = build(func.kernel, trips)
    # a finalize under divergent control flow (R207) leaves the epoch in a different
    # state in different threads: the state machine stops following it there
    divergent = frozenset(n for n, s, ctx in cfg.stmt_nodes()
                          if isinstance(s, ir.ReducerFinalize) and divergence(ctx))
    before = solve(cfg, divergent)
    judge = _EpochJudge(cfg, before)
    diags: list[Diagnostic] = []
    for node, stmt, ctx in cfg.stmt_nodes():
        diags += rules.check_stmt(stmt, ctx)
        if before[node] is not None:
            diags += judge.statement(node, stmt, ctx, before[node])
    diags += judge.kernel_end(before[cfg.exit])
    diags += judge.open_epochs()
    diags += law_diagnostics(func)          # the laws of the declared ops it uses (R6xx)
    # an update after finalize belongs to no epoch: whether its form fits the op is moot
    # (`acc[0] = acc[0] * 0.5` after a legacy in-place finalize is one mistake, not two)
    closed = {id(d.span) for d in diags if d.code == "R201"}
    diags = [d for d in diags if not (d.code == "R206" and id(d.span) in closed)]
    return sorted(diags, key=_position)


def _position(d: Diagnostic):
    s = d.span
    return (s.line, s.col, d.code) if s else (0, 0, d.code)


def _readable(facts: frozenset[Fact]) -> bool:
    return all(f.state in (FINALIZED_IN_PLACE, RECOVERED) for f in facts)


def _finalize_text(b: ir.Buffer) -> str:
    return f"T.finalize_reducer({b.name})" if b.reducer.legacy else \
        f"T.finalize_reducer({b.name}, {b.name}_out)"


def _init_text(b: ir.Buffer) -> str:
    return f"T.clear({b.name})" if b.reducer.legacy else f"T.reducer_init({b.name})"


class _EpochJudge:
    def __init__(self, cfg: CFG, before):
        self.cfg = cfg
        self.before = before
        # the epochs that can stay open: init node -> [(why, the node that shows it)]
        self.unfinished: dict[int, list[tuple[str, int]]] = {}
        self.divergently_finalized: set[int] = set()   # init nodes: R207 already said it

    # ------------------------------------------------------------------ helpers

    def stmt(self, node: int) -> ir.Stmt:
        return self.cfg.graph.nodes[node]["stmt"]

    def scope(self, node: int):
        return self.cfg.graph.nodes[node]["ctx"].scope

    def nodes_of(self, buf: ir.Buffer, *kinds) -> set[int]:
        out = set()
        for n, d in self.cfg.graph.nodes(data=True):
            s = d["stmt"]
            if isinstance(s, kinds) and (getattr(s, "reducer", None) is buf or
                                         (isinstance(s, ir.Alloc) and s.buffer is buf)):
                out.add(n)
        return out

    def path_notes(self, src: int, dst: int, avoid: set[int]) -> list[Note]:
        return self.label_notes(self.cfg.labels_on_path(src, dst, avoid - {src, dst}) or [])

    def label_notes(self, labels) -> list[Note]:
        """Each decision of a path, told back in the program's terms."""
        notes = []
        for kind, s in labels:
            if kind == "then":
                text = f"on the path where `{format_expr(s.cond)}` is true"
            elif kind == "else":
                text = f"on the path where `{format_expr(s.cond)}` is false"
            elif kind == "skip":
                text = (f"when the loop over {s.var.name} runs zero times (its bounds are "
                        f"not known to give at least one iteration)")
            else:
                text = f"when {Frame(s, 'body').describe()} runs another iteration"
            notes.append(Note(text, s.span))
        return notes

    def origins(self, facts, states) -> list[int]:
        return sorted({f.origin for f in facts if f.state in states and f.origin is not None})

    # ------------------------------------------------------------------ statements

    def statement(self, node: int, s: ir.Stmt, ctx: Context, state) -> list[Diagnostic]:
        out = self.reads(node, s, state)
        if isinstance(s, ir.ReducerUpdate):
            out += self.update(node, s, state[s.reducer])
        elif isinstance(s, ir.ReducerFinalize):
            out += self.finalize(node, s, ctx, state[s.reducer])
        elif isinstance(s, ir.ReducerInit):
            for o in self.origins(state.get(s.reducer, ()), (UPDATED,)):
                self.unfinished.setdefault(o, []).append(("reopened", node))
        return out

    def reads(self, node: int, s: ir.Stmt, state) -> list[Diagnostic]:
        out, seen = [], set()
        if isinstance(s, ir.Store) and s.buffer.is_reducer:
            out += self.store(s, state.get(s.buffer, frozenset()))
            if out:
                seen.add(s.buffer)
        for e in ir.stmt_exprs(s):
            for sub in ir.subexprs(e):
                if isinstance(sub, ir.Load) and sub.buffer.is_reducer and \
                        sub.buffer not in seen:
                    seen.add(sub.buffer)
                    out += self.read(node, s, sub, state.get(sub.buffer, frozenset()))
        if isinstance(s, ir.Copy):
            for region, role in ((s.src, "from"), (s.dst, "into")):
                if region.buffer.is_reducer:
                    out += self.handed_to_op(node, s, region.buffer, f"`T.copy` copies {role}",
                                             state.get(region.buffer, frozenset()))
        if isinstance(s, ir.Reduce):
            for buf, role in ((s.src, "source"), (s.dst, "destination")):
                if buf.is_reducer:
                    out += self.handed_to_op(node, s, buf,
                                             f"`T.reduce_{s.kind}` takes as its {role}",
                                             state.get(buf, frozenset()))
        return out

    def read(self, node, s, load: ir.Load, facts) -> list[Diagnostic]:
        if _readable(facts):
            return []
        b = load.buffer
        finals = self.origins(facts, (FINALIZED,))
        opens = self.origins(facts, OPEN_STATES)
        if finals and not opens and not any(f.state == ALLOCATED for f in facts):
            dst = self.stmt(finals[0]).dst
            return [error("R200", f"`{format_expr(load)}` reads reducer `{b.name}` after it was "
                          f"finalized into `{dst.name}`: the result is in `{dst.name}`; the "
                          f"reducer itself holds per-thread partial values and is never "
                          f"readable", load.span,
                          Note(f"`{b.name}` is finalized into `{dst.name}` here",
                               self.stmt(finals[0]).span),
                          hint=f"read `{dst.name}[{', '.join(map(format_expr, load.indices))}]` "
                               f"instead")]
        notes = []
        if opens:
            notes.append(Note(f"the epoch of `{b.name}` is opened here", self.stmt(opens[0]).span))
        notes += self.unreadable_path(node, b, facts)
        return [error("R200", f"`{format_expr(load)}` reads reducer `{b.name}` before it is "
                      f"finalized: until `T.finalize_reducer` a reducer holds each thread's "
                      f"partial value, not the result", load.span, *notes,
                      hint=f"read the result after `{_finalize_text(b)}`"
                           + ("" if b.reducer.legacy else f", from `{b.name}_out`"))]

    def store(self, s: ir.Store, facts) -> list[Diagnostic]:
        if _readable(facts):
            return []
        b = s.buffer
        idx = ", ".join(format_expr(i) for i in s.indices)
        return [error("R205", f"`{b.name}[{idx}] = {format_expr(s.value)}` stores into reducer "
                      f"`{b.name}`, but it is not an update: a reducer only accepts values "
                      f"combined with its op ({rules.op_name(b)}), and a plain store would "
                      f"overwrite other contributions", s.span,
                      hint=rules.update_hint(b))]

    def handed_to_op(self, node: int, s, b: ir.Buffer, role: str, facts) -> list[Diagnostic]:
        if _readable(facts):
            return []
        finals = self.origins(facts, (FINALIZED,))
        if finals and len(finals) == len(facts):
            dst = self.stmt(finals[0]).dst
            hint = f"use `{dst.name}`, the buffer `{b.name}` was finalized into"
        else:
            hint = (f"finalize first with `{_finalize_text(b)}` and use the result"
                    if "source" in role or "from" in role else
                    f"write an ordinary buffer; contribute to `{b.name}` with "
                    f"`T.reducer_update`")
        return [error("R211", f"{role} reducer `{b.name}`, which is not finalized: a reducer "
                      f"is a deferred reduction whose partial values live in the threads "
                      f"that contributed them, not a buffer that other operations may read "
                      f"or write", s.span,
                      Note(f"`{b.name}` is allocated here", b.span),
                      *self.unreadable_path(node, b, facts), hint=hint)]

    def unreadable_path(self, node: int, b: ir.Buffer, facts) -> list[Note]:
        """When the reducer is readable on some paths only: the decisions of one path on
        which it is not."""
        if not any(f.state == FINALIZED_IN_PLACE for f in facts):
            return []
        for f in sorted(facts, key=lambda f: (f.origin is None, f.origin or 0)):
            if f.state not in (FINALIZED_IN_PLACE, RECOVERED) and f.origin is not None:
                return self.path_notes(f.origin, node, self.kills(b))
        return []

    def kills(self, b: ir.Buffer) -> set[int]:
        """Nodes that end every fact of b (a path through them explains nothing)."""
        return self.nodes_of(b, ir.Alloc, ir.ReducerInit, ir.ReducerFinalize)

    def update(self, node: int, u: ir.ReducerUpdate, facts) -> list[Diagnostic]:
        b = u.reducer
        out = []
        closed = self.origins(facts, CLOSED_STATES)
        if closed:
            fin = closed[0]
            avoid = self.kills(b) | self.nodes_of(b, ir.ReducerUpdate)
            path = self.path_notes(fin, node, avoid)
            around_loop = any("another iteration" in n.message for n in path)
            in_place = self.stmt(fin).dst is None
            hint = (f"after `T.finalize_reducer({b.name})` the reducer holds the result and "
                    f"accumulates nothing more: to change the result, finalize into a "
                    f"buffer (`T.finalize_reducer({b.name}, res)`) and write that; to start "
                    f"a new reduction, open a new epoch first with `T.clear({b.name})`"
                    if in_place and not around_loop else
                    f"finalize after the loop, once every iteration has contributed, or open "
                    f"a new epoch at the top of each iteration with `T.reducer_init({b.name})`"
                    if around_loop else
                    f"move the update before the finalize, or open a new epoch with "
                    f"`T.reducer_init({b.name})` before it")
            out.append(error("R201", f"update of reducer `{b.name}` after it was finalized: "
                             f"its epoch is closed, so this contribution would be lost",
                             u.span, Note(f"`{b.name}` is finalized here",
                                          self.stmt(fin).span), *path, hint=hint))
        allocs = self.origins(facts, (ALLOCATED,))
        if allocs:
            path = self.path_notes(allocs[0], node, self.kills(b) | self.nodes_of(b, ir.ReducerUpdate))
            out.append(error("R204", f"update of reducer `{b.name}` while no epoch is open: "
                             f"`{b.name}` has not been initialized yet, so its partial values "
                             f"are undefined", u.span,
                             Note(f"`{b.name}` is allocated here", b.span), *path,
                             hint=f"open the epoch before the first update with "
                                  f"`{_init_text(b)}`"))
        return out

    def finalize(self, node: int, f: ir.ReducerFinalize, ctx: Context, facts) -> list[Diagnostic]:
        b = f.reducer
        out = []
        div = divergence(ctx)
        if div is not None:
            # the paths that miss a divergent finalize are the same mistake
            self.divergently_finalized.update(self.origins(facts, OPEN_STATES))
            out.append(error("R207", f"`{b.name}` is finalized inside {div.frame.describe()}, "
                             f"which is thread-divergent: {div.why}. A finalize is a "
                             f"collective (an all-reduce) that every thread must reach "
                             f"together", f.span,
                             Note("the divergent region starts here", div.frame.stmt.span),
                             hint="move the finalize out of it, so that every thread reaches "
                                  "it; put the condition on the updates instead (a "
                                  "predicated update contributes only where it runs)"))
        misplaced = [] if div else self.scope_mismatch(node, f, facts)
        out += misplaced
        closed = self.origins(facts, CLOSED_STATES)
        if closed and not misplaced:
            first = closed[0]
            path = self.path_notes(first, node, self.kills(b) | self.nodes_of(b, ir.ReducerUpdate))
            out.append(error("R203", f"reducer `{b.name}` is finalized twice: it was already "
                             f"finalized and no new epoch was opened since", f.span,
                             Note(f"`{b.name}` is first finalized here", self.stmt(first).span),
                             *path,
                             hint=f"remove this finalize, or open a new epoch with "
                                  f"`T.reducer_init({b.name})` before it"))
        if self.origins(facts, (ALLOCATED,)):
            out.append(error("R204", f"reducer `{b.name}` is finalized while no epoch is open: "
                             f"it was never initialized, so there are no partial values to "
                             f"combine", f.span, Note(f"`{b.name}` is allocated here", b.span),
                             hint=f"open the epoch before its updates with `{_init_text(b)}`"))
        return out

    def scope_mismatch(self, node: int, f: ir.ReducerFinalize, facts) -> list[Diagnostic]:
        b = f.reducer
        here = self.scope(node)
        for o in self.origins(facts, OPEN_STATES):
            there = self.scope(o)
            if same_epoch_scope(here, there):
                continue
            init = self.stmt(o)
            opened = "allocated (which opens its epoch)" if init.form == "implicit" else \
                "opened"
            threads = self.cfg.graph.nodes[node]["ctx"].kernel.threads
            if participants(here, threads) != participants(there, threads):
                msg = (f"reducer `{b.name}` is finalized "
                       f"{describe_participants(here, threads)}, but its epoch was {opened} "
                       f"{describe_participants(there, threads)} (line {init.span.line}): "
                       f"the finalize's collective would combine the partials of a "
                       f"different set of threads than the epoch was opened for")
                hint = ("open and finalize the epoch in the same warp group: put "
                        "`T.finalize_reducer` in the same `with T.ws(...)` block as the "
                        "init, or both outside it")
            else:
                why, hint = _loop_consequence(b, here, there)
                msg = (f"reducer `{b.name}` is finalized {describe_epoch_scope(here)}, but its "
                       f"epoch was {opened} {describe_epoch_scope(there)} (line "
                       f"{init.span.line}): {why}")
            return [error("R208", msg, f.span,
                          Note(f"the epoch of `{b.name}` is opened here", init.span),
                          hint=hint)]
        return []

    # ------------------------------------------------------------------ the end

    def kernel_end(self, state) -> list[Diagnostic]:
        # an epoch still open with no contribution on the path (`open`, not `updated`)
        # loses nothing: its finalize was skipped on a path that had nothing to combine
        for buf, facts in (state or {}).items():
            for o in self.origins(facts, (UPDATED,)):
                self.unfinished.setdefault(o, []).append(("end", self.cfg.exit))
        return []

    def open_epochs(self) -> list[Diagnostic]:
        out = []
        for origin, reasons in sorted(self.unfinished.items()):
            if origin in self.divergently_finalized:
                reasons = [r for r in reasons if r[0] == "reopened"]
            if reasons:
                out.append(self.never_finalized(origin, reasons))
        return out

    def never_finalized(self, origin: int, reasons) -> Diagnostic:
        init = self.stmt(origin)
        b = init.reducer
        finals = self.nodes_of(b, ir.ReducerFinalize)
        where = "allocated" if init.form == "implicit" else "opened"
        kind, at = reasons[0]
        if kind == "end" and not finals:
            return error("R202", f"reducer `{b.name}` is never finalized: the epoch {where} "
                         f"here is never closed, so what it accumulates never becomes a "
                         f"result", init.span,
                         hint=f"add `{_finalize_text(b)}` after the last update")
        notes = self.lossy_path(origin, at, b)
        if kind == "reopened":
            reopen = self.stmt(at)
            if at == origin:
                msg = (f"the epoch of reducer `{b.name}` opened here is opened again by this "
                       f"same statement on the next iteration, before it is finalized, which "
                       f"discards its contributions")
            else:
                msg = (f"the epoch of reducer `{b.name}` {where} here is opened again at line "
                       f"{reopen.span.line} before it is finalized, which discards its "
                       f"contributions")
                notes.insert(0, Note("the epoch is opened again here", reopen.span))
            hint = "finalize the epoch with `T.finalize_reducer` before opening the next one"
        else:
            msg = (f"the epoch of reducer `{b.name}` {where} here can reach the end of the "
                   f"kernel with contributions that were never finalized, so they are lost")
            notes += [Note(f"`{b.name}` is finalized here, but not on every path that "
                           f"contributes", self.stmt(n).span) for n in sorted(finals)[:1]]
            hint = ("finalize on every path that contributes: move the finalize after the "
                    "branch or loop, where every path passes, or put the updates under the "
                    "same condition as the finalize (a path that contributes nothing may "
                    "skip it)")
        return error("R202", msg, init.span, *notes, hint=hint)

    def lossy_path(self, origin: int, at: int, b: ir.Buffer) -> list[Note]:
        """Notes that follow one path from the init at `origin` through an update of b to
        `at` (the exit, or the init that reopens the epoch) with no finalize or init of b
        between: the decisions that lead to the contribution, the contribution, the
        decisions that then miss the finalize."""
        avoid = self.kills(b)
        for u in sorted(self.nodes_of(b, ir.ReducerUpdate)):
            before = self.cfg.labels_on_path(origin, u, avoid - {origin, u})
            after = self.cfg.labels_on_path(u, at, avoid - {u, at}) if before is not None \
                else None
            if after is None:
                continue
            notes = self.label_notes(before)
            notes.append(Note(f"`{b.name}` receives a contribution here", self.stmt(u).span))
            shown = {(n.message, n.span) for n in notes}
            notes += [n for n in self.label_notes(after) if (n.message, n.span) not in shown]
            return notes
        return self.path_notes(origin, at, avoid)


def _loop_consequence(b: ir.Buffer, fin, init) -> tuple[str, str]:
    """What it means that the finalize and the init sit in different loops, and what to
    do about it."""
    fin, init = epoch_scope(fin), epoch_scope(init)
    common = 0
    while common < min(len(fin), len(init)) and fin[common].key() == init[common].key():
        common += 1
    if common == len(init):          # the finalize is inside a loop the init is not in
        return ("the finalize runs on every iteration of that loop, while the epoch is "
                "opened once before it",
                f"finalize after the loop, once every iteration has contributed, or open a "
                f"new epoch at the top of each iteration with `T.reducer_init({b.name})`")
    return ("every iteration of that loop opens the epoch again, but it is finalized "
            "outside the loop",
            "open the epoch before the loop, or finalize it inside the loop, after the "
            "iteration's updates")
