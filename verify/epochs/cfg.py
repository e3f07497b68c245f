"""The control-flow graph of a kernel body, as a networkx DiGraph.

Every statement is a node (its nested bodies hang below it); synthetic nodes mark the
entry and exit of the kernel, the join after an `if`, and a loop's body start, latch and
exit. Edges that correspond to a decision carry a label, so that a path through the graph
can be told back to the user ("when `bx < 2` is false", "when the loop at line 7 runs
another iteration").

Loops. A loop's body is entered from the loop statement, runs to the latch, and the
latch either goes round again (the back edge) or leaves. The trip count decides which
edges exist, so that neither a zero-trip nor a repeated run is invented:
- a `T.Parallel` loop has its constant iteration count (its body runs once per iteration,
  so it loops too);
- a serial loop's count comes from the intervals of its bounds (verify.epochs.bounds). A loop
  that certainly runs at least once has no edge that skips it; one that runs at most once
  has no back edge; one that certainly runs zero times is never entered. When the bounds
  are unknown (they read memory, or depend on a value with an unknown range) the loop may
  run zero times and may run again: both edges exist.
An `if` has both arms, unless its condition is a constant. A `T.ws` block is a plain
sequence: which warp group runs it is a question of participants (R208), not of paths."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterator, Mapping

import networkx as nx

from verify_reducer.spec import ir

from verify_reducer.verify.epochs.bounds import trip_range
from verify_reducer.verify.epochs.scopes import Context, Frame, kernel_context

Label = tuple[str, ir.Stmt] | None   # ("then"|"else"|"skip"|"again", the control statement)


@dataclass
class CFG:
    graph: nx.DiGraph
    entry: int
    exit: int

    def stmt_nodes(self) -> Iterator[tuple[int, ir.Stmt, Context]]:
        """Statement nodes in source order (reachable or not)."""
        nodes = [(n, d["stmt"], d["ctx"]) for n, d in self.graph.nodes(data=True)
                 if d["kind"] == "stmt"]
        return iter(sorted(nodes, key=lambda t: (t[1].span.line, t[1].span.col, t[0])))

    def labels_on_path(self, src: int, dst: int, avoid: set[int]) -> list[tuple[str, ir.Stmt]] | None:
        """The decisions along a shortest path that leaves src and reaches dst without
        passing through avoid (src == dst asks for a cycle). None if there is none."""
        parent: dict[int, tuple[int, Label]] = {}
        queue: deque[int] = deque()
        for succ in self.graph.successors(src):
            if succ not in parent and (succ == dst or succ not in avoid):
                parent[succ] = (src, self.graph.edges[src, succ]["label"])
                queue.append(succ)
        while queue and dst not in parent:
            n = queue.popleft()
            for succ in self.graph.successors(n):
                if succ in parent or (succ in avoid and succ != dst):
                    continue
                parent[succ] = (n, self.graph.edges[n, succ]["label"])
                queue.append(succ)
        if dst not in parent:
            return None
        labels, n = [], dst
        while True:
            prev, label = parent[n]
            if label is not None:
                labels.append(label)
            if prev == src:
                break
            n = prev
        return labels[::-1]


Trips = Mapping[ir.SerialFor, tuple[float, float]]


def build(kernel: ir.Kernel, trips: Trips | None = None) -> CFG:
    """trips: (fewest, most) iterations of some serial loops, in place of their
    intervals (a size family asks for each trip-count case it can reach: verify.family.checker)."""
    b = _Builder(trips)
    entry = b.add("entry")
    last, label = b.seq(kernel.body, kernel_context(kernel), entry, None)
    exit_ = b.add("exit")
    b.edge(last, exit_, label)
    return CFG(b.graph, entry, exit_)


class _Builder:
    def __init__(self, trips: Trips | None = None):
        self.graph = nx.DiGraph()
        self.trips = trips or {}

    def add(self, kind: str, stmt: ir.Stmt | None = None, ctx: Context | None = None) -> int:
        n = self.graph.number_of_nodes()
        self.graph.add_node(n, kind=kind, stmt=stmt, ctx=ctx)
        return n

    def edge(self, a: int, b: int, label: Label = None) -> None:
        self.graph.add_edge(a, b, label=label)

    def seq(self, body: ir.Body, ctx: Context, prev: int, label: Label) -> tuple[int, Label]:
        for stmt in body:
            prev, label = self.stmt(stmt, ctx, prev, label)
            if isinstance(stmt, ir.Let):
                ctx = ctx.bind_let(stmt)
        return prev, label

    def stmt(self, s: ir.Stmt, ctx: Context, prev: int, label: Label) -> tuple[int, Label]:
        node = self.add("stmt", s, ctx)
        self.edge(prev, node, label)
        if isinstance(s, ir.If):
            return self.branch(s, ctx, node), None
        if isinstance(s, ir.ParallelFor):
            n = 1
            for e in s.extents:
                n *= e
            return self.loop(s, ctx, node, n, n), None
        if isinstance(s, ir.SerialFor):
            given = self.trips.get(s)
            return self.loop(s, ctx, node, *(given or trip_range(s, ctx))), None
        if isinstance(s, ir.WarpGroup):
            return self.seq(s.body, ctx.enter(Frame(s, "body")), node, None)
        return node, None

    def branch(self, s: ir.If, ctx: Context, node: int) -> int:
        known = _constant_truth(s.cond)
        join = self.add("join")
        for arm, body, taken in (("then", s.then, known is not False),
                                 ("else", s.orelse, known is not True)):
            # an arm that can never run is still built (its statements get their local
            # checks) but is not connected
            start = node if taken else self.add("dead")
            last, label = self.seq(body, ctx.enter(Frame(s, arm)), start, (arm, s))
            if taken:
                self.edge(last, join, label)
        return join

    def loop(self, s: ir.ParallelFor | ir.SerialFor, ctx: Context, node: int,
             fewest: float, most: float) -> int:
        start = self.add("body-start")
        exit_ = self.add("loop-exit")
        last, label = self.seq(s.body, ctx.enter(Frame(s, "body")), start, None)
        if most > 0:
            self.edge(node, start)
            latch = self.add("latch")
            self.edge(last, latch, label)
            if most > 1:
                self.edge(latch, start, ("again", s))
            self.edge(latch, exit_)
        if fewest == 0:
            self.edge(node, exit_, ("skip", s))
        return exit_


def _constant_truth(cond: ir.Expr) -> bool | None:
    if isinstance(cond, ir.Const):
        return bool(cond.value)
    return None
