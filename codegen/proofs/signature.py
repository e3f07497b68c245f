"""Per update site its ThreadGroupSignature (the reducer RFC's compatible subgroup
signatures; docs/design.md §8).

An update site is a `ReducerUpdate` with the layout of the loop around it. What the fast
plan needs to know about it is written down as a `Site` in the vocabulary the Z3 proofs
speak (spec.indexexpr): the loop's thread and slot expressions over the iteration
variables and the replica, the logical output index as expressions of the same
variables, the affine part of the predicate, and the reasons (if any) why no proof can
speak for it (an output index that depends on data, a predicate that depends on the
thread).

Its signature is the normalized summary the RFC describes:

    participants   (offset, count) of the reducer's participant set
    steps          the reduction group as butterfly steps (extent, scale, lower): a
                   group is the threads that hold one copy (replica) of every
                   contribution to one output; the steps are the runs of thread-id bits
                   that vary inside it
    exact          whether the groups ARE those butterfly groups (not just inside them)
    projection     output -> (holder threads, slot): a Layout over the reducer's shape,
                   or None when the output index is not a projection of loop variables
    predicate      the required uniform predicate, as text

Two signatures written differently but meaning the same have equal normalized steps and
participants; their projections are compared by a Z3 proof (codegen.proofs.fast.
same_signature), since two expressions can name one holder set."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.codegen.layout_rules import project
from verify_reducer.codegen.storage import kept_of
from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import Const, IndexExpr, Var
from verify_reducer.spec.operators import OPERATORS, UNARY_OPERATORS
from verify_reducer.spec.layout import Layout, index_names
from verify_reducer.spec.printer import format_expr
from verify_reducer.spec.symbolic import SizeInt

NUMPY_OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
             "==": np.equal, "!=": np.not_equal}
NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


@dataclass(frozen=True)
class Constraint:
    """`a op b` over the loop's iteration variables: an affine piece of the predicate."""
    a: IndexExpr
    op: str
    b: IndexExpr

    def __str__(self) -> str:
        return f"{self.a} {self.op} {self.b}"


@dataclass(frozen=True)
class Site:
    """One update site as the proofs see it. `shift` moves the loop's threads (relative
    to the loop's own offset) to threads relative to the participant offset."""
    update: ir.ReducerUpdate | None
    line: int
    layout: Layout
    participants: tuple[int, int]
    output: tuple[IndexExpr, ...] | None     # None: not affine in the loop variables
    constraints: tuple[Constraint, ...] = ()
    opaque: tuple[str, ...] = ()             # data-dependent conditions (uniform)
    problems: tuple[str, ...] = ()           # why no proof can speak for this site
    reducer_name: str = "acc"
    reducer_shape: tuple[int, ...] = (1,)
    # the family's sizes (docs/design.md §21) the constraints or the output mention,
    # when the site was built with sizes symbolic; the queries read them as the family
    # space's variables (codegen.proofs.layout.size_var)
    sizes: tuple[str, ...] = ()

    @property
    def shift(self) -> int:
        return self.layout.offset - self.participants[0]

    @property
    def question(self) -> tuple:
        """What every proof query reads of the site (all but its update, line and
        reducer's name, which only the sentences name): two sites with one question ask
        the same queries, whichever reducer or line they belong to."""
        return (self.layout, self.participants, self.output, self.constraints, self.opaque,
                self.problems, self.reducer_shape, self.sizes)

    def active(self) -> np.ndarray:
        """[N]: which iterations the affine part of the predicate lets contribute."""
        layout = self.layout
        env = {v: ix for v, ix in zip(layout.index_vars, layout.all_indices())}
        keep = np.ones(layout.size, dtype=bool)
        for c in self.constraints:
            keep &= np.broadcast_to(NUMPY_OPS[c.op](c.a.evaluate(env), c.b.evaluate(env)),
                                    keep.shape)
        return keep

    def iteration_text(self, values: dict[str, int]) -> str:
        """`k=8` or `i=0, k=3`: an iteration as the loop names it."""
        return ", ".join(f"{v}={values[v]}" for v in self.layout.index_vars)

    def output_text(self, values: dict[str, int]) -> str:
        """`acc[0]`: the logical output an iteration updates."""
        if self.output is None:
            return f"{self.reducer_name}[?]"
        env = {v: np.int64(values[v]) for v in self.layout.index_vars}
        idx = [int(e.evaluate(env)) for e in self.output]
        return f"{self.reducer_name}[{', '.join(map(str, idx))}]"


# ----------------------------------------------------------------------------- building

def update_sites(updates, layouts, participants: tuple[int, int],
                 sizes: bool = False) -> list[Site]:
    """The sites of updates (one reducer's, in source order) under layouts (a
    codegen.layout.LayoutMap). sizes: read a family lowering's sizes as symbols."""
    conditions = enclosing_conditions(layouts)
    return [site_of(u, layouts.update(u), participants, conditions.get(u, ()), sizes)
            for u in updates]


def site_of(update: ir.ReducerUpdate, layout: Layout, participants: tuple[int, int],
            conditions: tuple[tuple[ir.Expr, bool], ...] = (), sizes: bool = False) -> Site:
    """The Site of update under its loop layout; conditions are the enclosing `if`s
    (condition, whether the update is in its then-branch). sizes: a constant of a
    family lowering that carries a size's symbol (spec.symbolic.SizeInt) is read as
    that symbol, so `k < K` stays a constraint over the loop variable and the size K;
    otherwise it is the file's value."""
    loop_vars = layout.index_vars
    problems: list[str] = []
    output = tuple(index_expr(e, loop_vars, sizes) for e in update.indices)
    if any(e is None for e in output):
        bad = next(format_expr(e) for e, c in zip(update.indices, output) if c is None)
        problems.append(f"the output index `{bad}` is not an affine expression of the "
                        f"loop variables {', '.join(loop_vars)}")
        output = None
    if _mentions_thread(update.value) or any(_mentions_thread(i) for i in update.indices):
        problems.append("the update depends on T.get_thread_binding(): its replicas "
                        "are not copies of one contribution")
    constraints: list[Constraint] = []
    opaque: list[str] = []
    for cond, positive in conditions:
        for part, pos in _conjuncts(cond, positive):
            if _mentions_thread(part):
                problems.append(f"the predicate `{format_expr(part)}` depends on the thread: "
                                f"replicas of one iteration may disagree")
                continue
            found = _constraint(part, pos, loop_vars, sizes)
            if found is not None:
                constraints.append(found)
            else:
                opaque.append(format_expr(part) if pos else f"not ({format_expr(part)})")
    mentioned = {name for c in constraints for e in (c.a, c.b) for name in e.free_vars()}
    mentioned |= {name for e in output or () for name in e.free_vars()}
    return Site(update, update.span.line, layout, participants, output, tuple(constraints),
                tuple(opaque), tuple(problems), update.reducer.name,
                tuple(update.reducer.shape), tuple(sorted(mentioned - set(loop_vars))))


def index_expr(e: ir.Expr, loop_vars: tuple[str, ...],
               sizes: bool = False) -> IndexExpr | None:
    """e as an index expression over loop_vars (and, with sizes, a family's size
    symbols), or None when it is not one (data, other variables, non-constant
    divisors)."""
    if isinstance(e, ir.Const):
        if sizes and isinstance(e.value, SizeInt):
            return e.value.sym
        return Const(int(e.value)) if isinstance(e.value, int) else None
    if isinstance(e, ir.Var):
        return Var(e.name) if e.name in loop_vars else None
    if isinstance(e, ir.Cast) and e.dtype.kind in ("int", "uint"):
        return index_expr(e.a, loop_vars, sizes)
    if isinstance(e, ir.Binary) and OPERATORS[e.op].index is not None:
        a, b = index_expr(e.a, loop_vars, sizes), index_expr(e.b, loop_vars, sizes)
        if a is None or b is None:
            return None
        c = b.value if isinstance(b, Const) else None
        # the operator's index form (spec.operators); integer `/` is one only for a
        # numerator known >= 0, which nothing here bounds
        return OPERATORS[e.op].index(a, b, c, False)
    if isinstance(e, ir.Unary) and UNARY_OPERATORS[e.op].index is not None:
        a = index_expr(e.a, loop_vars, sizes)
        return None if a is None else UNARY_OPERATORS[e.op].index(a, None, None, False)
    return None


def _constraint(cond: ir.Expr, positive: bool, loop_vars,
                sizes: bool = False) -> Constraint | None:
    if not isinstance(cond, ir.Compare):
        return None
    a, b = index_expr(cond.a, loop_vars, sizes), index_expr(cond.b, loop_vars, sizes)
    if a is None or b is None:
        return None
    return Constraint(a, cond.op if positive else NEGATED[cond.op], b)


def _conjuncts(cond: ir.Expr, positive: bool):
    """The parts of a condition that must all hold: `a and b` taken, `not (a or b)`
    split; anything else is one part."""
    if isinstance(cond, ir.Logical) and (cond.op == "and") == positive:
        yield from _conjuncts(cond.a, positive)
        yield from _conjuncts(cond.b, positive)
    elif isinstance(cond, ir.Unary) and cond.op == "not":
        yield from _conjuncts(cond.a, not positive)
    else:
        yield cond, positive


def _mentions_thread(e: ir.Expr) -> bool:
    return any(isinstance(s, ir.ThreadBinding) for s in ir.subexprs(e))


def enclosing_conditions(layouts) -> dict:
    """update -> the (condition, in its then-branch) of every `if` around it. The
    LayoutMap records every statement it placed, ifs included, so the kernel need not
    be walked again: each `if` claims the updates inside its branches."""
    out: dict = {}
    for stmt in layouts.participants:
        if isinstance(stmt, ir.If):
            for branch, positive in ((stmt.then, True), (stmt.orelse, False)):
                for inner in ir.walk(branch):
                    if isinstance(inner, ir.ReducerUpdate):
                        out[inner] = out.get(inner, ()) + ((stmt.cond, positive),)
    return out


# ----------------------------------------------------------------------------- signature

@dataclass(frozen=True)
class ReductionStep:
    """One butterfly step of a reduction group: members differ in the thread-id bits
    of `scale * [0, extent)`. `lower` is how many independent groups interleave below
    it (scale over the span of the steps beneath): 1 for contiguous steps."""
    extent: int
    scale: int
    lower: int


@dataclass(frozen=True)
class ThreadGroupSignature:
    participants: tuple[int, int]
    steps: tuple[ReductionStep, ...] | None   # None: the groups are not all alike
    exact: bool                               # the groups are exactly the butterfly groups
    projection: Layout | None                 # output -> holders and slot
    predicate: str                            # "" when unconditional
    problems: tuple[str, ...] = ()
    hull: int = 1                             # threads spanned by the bits any group varies

    @property
    def width(self) -> int | None:
        if self.steps is None:
            return None
        width = 1
        for step in self.steps:
            width *= step.extent
        return width

    def describe(self) -> str:
        offset, count = self.participants
        steps = "none" if self.steps is None else \
            ", ".join(f"({s.extent}, {s.scale}, {s.lower})" for s in self.steps) or "()"
        proj = self.projection.describe() if self.projection is not None else "not a projection"
        pred = self.predicate or "true"
        return (f"participants {offset}..{offset + count - 1}; steps (extent, scale, lower): "
                f"{steps}{'' if self.exact else ' (hull)'}; projection: {proj}; "
                f"predicate: {pred}")


def signature(site: Site) -> ThreadGroupSignature:
    """The signature of a site. The steps come from the thread ids of each group
    (contributions to one output from one replica): the bits in which its members
    differ from its first member, as runs of consecutive bits."""
    predicate = " and ".join([str(c) for c in site.constraints] + list(site.opaque))
    if site.output is None:
        return ThreadGroupSignature(site.participants, None, False, None, predicate,
                                    site.problems)
    groups = natural_groups(site)
    masks = {_xor_hull(members) for members in groups}
    union = 0
    for mask in masks:
        union |= mask
    steps = _steps(masks.pop()) if len(masks) == 1 else None
    exact = steps is not None and all(
        len(members) == _group_size(steps) for members in groups)
    return ThreadGroupSignature(site.participants, steps, exact, projection(site),
                                predicate, site.problems, _group_size(_steps(union)))


def natural_groups(site: Site) -> list[np.ndarray]:
    """Per (output, replica) the sorted distinct threads (relative to the participant
    offset) holding that replica's contributions to that output."""
    layout = site.layout
    threads = layout.threads_of() + site.shift                     # [R, N]
    outputs = output_values(site)                                  # [N]
    groups = []
    for o in np.unique(outputs):
        cols = outputs == o
        for r in range(layout.replicate):
            groups.append(np.unique(threads[r, cols]))
    return groups


def output_values(site: Site) -> np.ndarray:
    """[N]: the flat logical output of every iteration (row-major over the reducer)."""
    layout = site.layout
    env = {v: ix for v, ix in zip(layout.index_vars, layout.all_indices())}
    n = layout.size
    dims = [np.broadcast_to(e.evaluate(env), (n,)) for e in site.output]
    return np.ravel_multi_index(tuple(np.clip(d, 0, s - 1) for d, s in
                                      zip(dims, site.reducer_shape)), site.reducer_shape)


def _xor_hull(members: np.ndarray) -> int:
    mask = 0
    for t in members:
        mask |= int(t) ^ int(members[0])
    return mask


def _steps(mask: int) -> tuple[ReductionStep, ...]:
    steps: list[ReductionStep] = []
    bit, below = 0, 1            # below: the thread span the lower steps cover
    while mask >> bit:
        if not (mask >> bit) & 1:
            bit += 1
            continue
        start = bit
        while (mask >> bit) & 1:
            bit += 1
        scale, extent = 1 << start, 1 << (bit - start)
        steps.append(ReductionStep(extent, scale, scale // below))
        below = scale * extent
    return tuple(steps)


def _group_size(steps: tuple[ReductionStep, ...]) -> int:
    size = 1
    for s in steps:
        size *= s.extent
    return size


def kept_dims(site: Site) -> tuple[int | None, ...] | None:
    """Which loop dimension each output dimension is (codegen.storage.kept_of)."""
    if site.output is None:
        return None
    return kept_of(site.output, site.reducer_shape, site.layout)


def preimage(site: Site) -> dict[str, IndexExpr] | None:
    """A closed-form iteration for every output (output variables i, j, ... of the
    reducer): kept loop variables take the output's value, the others 0."""
    kept = kept_dims(site)
    if kept is None:
        return None
    names = index_names(len(site.reducer_shape))
    mapping: dict[str, IndexExpr] = {v: Const(0) for v in site.layout.index_vars}
    for d, dim in enumerate(kept):
        if dim is not None:
            mapping[site.layout.index_vars[dim]] = Var(names[d])
    return mapping


def projection(site: Site) -> Layout | None:
    """Output -> the threads (relative to the participant offset) where the site puts
    that output's contributions, and the slot: replica q enumerates (site replica,
    dropped loop index). None when the output is not a projection of loop variables."""
    kept = kept_dims(site)
    if kept is None:
        return None
    found = project(site.layout, kept, site.reducer_shape)
    return found if isinstance(found, Layout) else None
