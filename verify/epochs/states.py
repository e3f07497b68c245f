"""The per-reducer epoch state machine, solved as a dataflow problem over the CFG.

    Allocated --init--> Open --update*--> Open(updated) --finalize--> Finalized
    Finalized --init--> Open                      (a new epoch: T.reducer_init, legacy fill)

At every program point each reducer has the **set** of facts that hold on some path to
it; a fact is a state plus the node that put the reducer there (the alloc, the init that
opened the epoch, the finalize that closed it), so that a diagnostic can point at it.
The sets only grow and are finite, so the fixpoint is reached.

An event in a state that is an error (an update after finalize, ...) is reported by
verify.epochs.checker; here it moves the reducer to `recovered`, a state that accepts every
event silently until the next init or finalize. One mistake then gives one diagnostic:
an update after finalize does not also make the kernel end "with an open epoch"."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from verify_reducer.spec import ir

from verify_reducer.verify.epochs.cfg import CFG

ALLOCATED = "allocated"
OPEN = "open"                  # epoch open, no update yet on this path
UPDATED = "updated"            # epoch open with contributions
FINALIZED = "finalized"        # finalized into a destination: the reducer stays opaque
FINALIZED_IN_PLACE = "finalized-in-place"   # legacy: the reducer is now readable
RECOVERED = "recovered"        # after a reported error; silent until init/finalize

OPEN_STATES = (OPEN, UPDATED)
CLOSED_STATES = (FINALIZED, FINALIZED_IN_PLACE)


@dataclass(frozen=True)
class Fact:
    state: str
    origin: int | None          # the CFG node that produced the state


State = dict[ir.Buffer, frozenset[Fact]]


def reducer_of(stmt: ir.Stmt) -> ir.Buffer | None:
    """The reducer whose epoch state the statement changes, if any."""
    if isinstance(stmt, ir.Alloc) and stmt.buffer.is_reducer:
        return stmt.buffer
    if isinstance(stmt, (ir.ReducerInit, ir.ReducerUpdate, ir.ReducerFinalize)):
        return stmt.reducer
    return None


def transfer(stmt: ir.Stmt, node: int, facts: frozenset[Fact]) -> frozenset[Fact]:
    if isinstance(stmt, ir.Alloc):
        return frozenset({Fact(ALLOCATED, node)})
    if isinstance(stmt, ir.ReducerInit):
        return frozenset({Fact(OPEN, node)})
    if isinstance(stmt, ir.ReducerFinalize):
        return frozenset({Fact(FINALIZED if stmt.dst is not None else FINALIZED_IN_PLACE,
                               node)})
    out = set()
    for f in facts:   # an update
        if f.state in OPEN_STATES:
            out.add(Fact(UPDATED, f.origin))
        else:
            out.add(Fact(RECOVERED, None))
    return frozenset(out)


def solve(cfg: CFG, unsettled: frozenset[int] = frozenset()) -> dict[int, State | None]:
    """The facts at the entry of every node; None for a node no path reaches.

    `unsettled` are the nodes whose effect is not one state for all threads (a finalize
    under thread-divergent control flow, R207): after them the reducer is `recovered`."""
    g = cfg.graph
    before: dict[int, State | None] = {n: None for n in g.nodes}
    after: dict[int, State | None] = {n: None for n in g.nodes}
    before[cfg.entry] = {}
    work = deque([cfg.entry])
    while work:
        n = work.popleft()
        incoming = before[n] if n == cfg.entry else _join(after[p] for p in g.predecessors(n))
        before[n] = incoming
        out = _apply(g.nodes[n]["stmt"], n, incoming, n in unsettled)
        if out != after[n]:
            after[n] = out
            work.extend(g.successors(n))
    return before


def _apply(stmt: ir.Stmt | None, node: int, state: State | None,
           unsettled: bool) -> State | None:
    if state is None or stmt is None:
        return state
    buf = reducer_of(stmt)
    if buf is None:
        return state
    out = dict(state)
    out[buf] = frozenset({Fact(RECOVERED, None)}) if unsettled else \
        transfer(stmt, node, state.get(buf, frozenset()))
    return out


def _join(states) -> State | None:
    result: State | None = None
    for s in states:
        if s is None:
            continue
        if result is None:
            result = dict(s)
            continue
        for buf, facts in s.items():
            result[buf] = result.get(buf, frozenset()) | facts
    return result
