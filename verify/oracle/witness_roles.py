"""How a kernel's reducer updates read its parameters (for verify.oracle.witness): through
copies, stores, casts and selects, each parameter reaches each reducer's contributions
`direct`ly (the contribution is its element), as the `varying` or `scale` factor of a
product of two parameters, or `opaque`ly (any other expression); parameters that reach
an index, a region start or a loop bound are kept out of the design."""
from __future__ import annotations

from dataclasses import dataclass

from verify_reducer.spec import ir
from verify_reducer.spec.dtypes import DType
from verify_reducer.spec.ops import reducer_monoid


@dataclass(frozen=True)
class Use:
    """How one reducer update reads a parameter: `direct` (the contribution is the
    element, maybe cast, negated or abs'd), `varying`/`scale` (the larger / smaller
    factor of a product of two parameters), `opaque` (any other expression)."""
    reducer: str
    op: str                     # the monoid's name
    acc: DType                  # the reducer's dtype (contributions are converted to it)
    kind: str
    partner: str | None = None  # the other factor of a product
    factor: float = 1.0         # direct: the contribution is factor * element + offset
    offset: float = 0.0         # (a constant multiplier or addend of the element)


@dataclass
class Roles:
    uses: dict[str, list[Use]]            # parameter -> its uses by updates
    index: set[str]                       # parameters that reach an index or a bound
    seeded: set[str]                      # reducers whose init has a seed


def roles(func: ir.PrimFunc) -> Roles:
    """How each parameter reaches the contributions of each reducer (statically)."""
    prov = _provenance(func)
    uses: dict[str, list[Use]] = {p.name: [] for p in func.params}
    index: set[str] = set()
    seeded: set[str] = set()
    sizes = {p.name: p.size for p in func.params}
    for stmt in ir.walk(func.kernel.body):
        for e in _index_exprs(stmt):
            for load in _loads(e, into_indices=True):
                index |= set(prov.get(load.buffer, {}))
        for e in ir.stmt_exprs(stmt):
            for load in _loads(e, into_indices=False):
                for inner in load.indices:
                    for sub in _loads(inner, into_indices=True):
                        index |= set(prov.get(sub.buffer, {}))
        if isinstance(stmt, ir.ReducerInit) and stmt.seed is not None:
            seeded.add(stmt.reducer.name)
        if not isinstance(stmt, ir.ReducerUpdate):
            continue
        red = stmt.reducer
        op = reducer_monoid(red.reducer).name if red.reducer else "sum"

        for kind, name, partner, factor, offset in _classify(stmt.value, prov, sizes):
            uses[name].append(Use(red.name, op, red.dtype, kind, partner, factor, offset))
    return Roles(uses, index, seeded)


def _provenance(func: ir.PrimFunc) -> dict[ir.Buffer, dict[str, bool]]:
    """buffer -> {parameter whose values flow into it: whether only plainly (copies,
    casts, stores of a load), not through other arithmetic}. A fixpoint over the body."""
    prov: dict[ir.Buffer, dict[str, bool]] = {p: {p.name: True} for p in func.params}

    def flow(dst: ir.Buffer, src: dict[str, bool], plain: bool) -> bool:
        into = prov.setdefault(dst, {})
        changed = False
        for name, was_plain in src.items():
            now = was_plain and plain
            if name not in into:
                into[name] = now
                changed = True
            elif into[name] and not now:
                into[name] = False
                changed = True
        return changed

    def of_expr(e: ir.Expr) -> tuple[dict[str, bool], bool]:
        leaf = _leaf(e)
        src: dict[str, bool] = {}
        for load in _loads(e, into_indices=False):
            for name, plain in prov.get(load.buffer, {}).items():
                src[name] = src.get(name, True) and plain
        return src, leaf is not None

    changed = True
    while changed:
        changed = False
        for stmt in ir.walk(func.kernel.body):
            if isinstance(stmt, ir.Copy):
                changed |= flow(stmt.dst.buffer, prov.get(stmt.src.buffer, {}), True)
            elif isinstance(stmt, ir.Store):
                src, plain = of_expr(stmt.value)
                changed |= flow(stmt.buffer, src, plain)
            elif isinstance(stmt, ir.Fill):
                src, plain = of_expr(stmt.value)
                changed |= flow(stmt.region.buffer, src, plain)
            elif isinstance(stmt, ir.Reduce):
                changed |= flow(stmt.dst, prov.get(stmt.src, {}), False)
            elif isinstance(stmt, ir.ReducerUpdate):
                src, _ = of_expr(stmt.value)
                changed |= flow(stmt.reducer, src, False)
            elif isinstance(stmt, ir.AtomicUpdate):     # a sum (max, min) of the values
                src, _ = of_expr(stmt.value)
                changed |= flow(stmt.buffer, src, False)
            elif isinstance(stmt, ir.ReducerFinalize):
                changed |= flow(stmt.dst or stmt.reducer, prov.get(stmt.reducer, {}), False)
    return prov


def _index_exprs(stmt: ir.Stmt):
    """Expressions that pick elements or iterations (not values)."""
    if isinstance(stmt, (ir.Store, ir.ReducerUpdate, ir.AtomicUpdate)):
        yield from stmt.indices
    elif isinstance(stmt, ir.SerialFor):
        yield stmt.start
        yield stmt.stop
    elif isinstance(stmt, ir.Copy):
        yield from stmt.src.starts
        yield from stmt.dst.starts
    elif isinstance(stmt, ir.Fill):
        yield from stmt.region.starts


def _loads(e: ir.Expr, into_indices: bool):
    """The Loads of e; with into_indices False, not those inside another Load's indices."""
    if isinstance(e, ir.Load):
        yield e
        if into_indices:
            for i in e.indices:
                yield from _loads(i, True)
        return
    for sub in _children(e):
        yield from _loads(sub, into_indices)


def _children(e: ir.Expr):
    if isinstance(e, (ir.Binary, ir.Compare, ir.Logical)):
        return (e.a, e.b)
    if isinstance(e, (ir.Unary, ir.Cast)):
        return (e.a,)
    if isinstance(e, ir.Call):
        return e.args
    if isinstance(e, ir.Select):
        return (e.cond, e.a, e.b)
    return ()


def _leaf(e: ir.Expr) -> ir.Load | None:
    """The Load e is, up to casts, negation, abs and a select against a constant."""
    while True:
        if isinstance(e, ir.Cast) or (isinstance(e, ir.Unary) and e.op == "neg"):
            e = e.a
        elif isinstance(e, ir.Call) and e.func == "abs":
            e = e.args[0]
        elif isinstance(e, ir.Select) and isinstance(e.b, ir.Const):
            e = e.a
        elif isinstance(e, ir.Select) and isinstance(e.a, ir.Const):
            e = e.b
        else:
            return e if isinstance(e, ir.Load) else None


def _affine(e: ir.Expr) -> tuple[ir.Load, float, float] | None:
    """(load, factor, offset) when e is factor * load + offset up to casts, negation,
    abs and selects against a constant (a leaf times, plus or minus a constant)."""
    e = _strip_casts(e)
    if isinstance(e, ir.Select) and isinstance(_strip_casts(e.b), ir.Const):
        return _affine(e.a)
    if isinstance(e, ir.Select) and isinstance(_strip_casts(e.a), ir.Const):
        return _affine(e.b)
    leaf = _leaf(e)
    if leaf is not None:
        return leaf, 1.0, 0.0
    if not isinstance(e, ir.Binary) or e.op not in ("+", "-", "*"):
        return None
    a, b = _strip_casts(e.a), _strip_casts(e.b)
    if isinstance(b, ir.Const) and isinstance(b.value, (int, float)):
        inner, c = _affine(e.a), float(b.value)
    elif isinstance(a, ir.Const) and isinstance(a.value, (int, float)) and e.op != "-":
        inner, c = _affine(e.b), float(a.value)
    else:
        return None
    if inner is None:
        return None
    load, factor, offset = inner
    if e.op == "*":
        return (load, factor * c, offset * c) if c != 0 else None
    return load, factor, offset + (c if e.op == "+" else -c)


def _classify(value: ir.Expr, prov, sizes):
    """[(kind, parameter, partner, factor, offset)] for one update's value expression."""
    def params(load: ir.Load) -> tuple[list[str], list[str]]:
        found = prov.get(load.buffer, {})
        return [n for n, p in found.items() if p], [n for n, p in found.items() if not p]

    affine = _affine(value)
    if affine is not None:
        load, factor, offset = affine
        plain, other = params(load)
        return [("direct", n, None, factor, offset) for n in plain] + \
            [("opaque", n, None, 1.0, 0.0) for n in other]
    stripped = value
    while isinstance(stripped, ir.Cast) or (isinstance(stripped, ir.Unary)
                                            and stripped.op == "neg"):
        stripped = stripped.a
    if isinstance(stripped, ir.Binary) and stripped.op == "*":
        a, b = _leaf(stripped.a), _leaf(stripped.b)
        if a is not None and b is not None:
            pa, oa = params(a)
            pb, ob = params(b)
            if len(pa) == 1 and len(pb) == 1 and pa != pb:
                (na,), (nb,) = pa, pb
                big, small = (na, nb) if sizes[na] >= sizes[nb] else (nb, na)
                return [("varying", big, small, 1.0, 0.0), ("scale", small, big, 1.0, 0.0)] \
                    + [("opaque", n, None, 1.0, 0.0) for n in oa + ob]
    names = {n for load in _loads(value, into_indices=False)
             for n in prov.get(load.buffer, {})}
    return [("opaque", n, None, 1.0, 0.0) for n in sorted(names)]


def _strip_casts(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast):
        e = e.a
    return e
