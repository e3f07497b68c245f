"""Reducer statements as CUDA: exactly the plan's decisions (spec.physical), rendered.

- init: every partial slot of the executing thread becomes the op's identity; a seed is
  remembered in `<reducer>_seed` and combined once per output at finalize;
- update: `partial[slot] = partial[slot] ⊕ value`, the slot from the plan's storage
  layout, guarded by `rep == r` when the plan says only replica r of the loop
  contributes (canonical);
- finalize: the plan's chunks, each step as the simulator runs it — step after step,
  each per-slot step over the chunk's slots (ReduceWorkspace once per thread): warp
  shuffles `__shfl_xor_sync`, workspace stores, reductions and loads in the reducer's
  shared workspace, named barriers `bar.sync id, count`; then the seed combined once and
  the result written to the destination in the destination's own layout (in place: the
  partials themselves; shared or global: by replica 0 of the storage layout).

The step expressions are over the plan's names t (thread relative to the participant
offset), s (slot) and k (term)."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import Const, IndexExpr, Var
from verify_reducer.spec.layout import index_names
from verify_reducer.spec.ops import reducer_monoid
from verify_reducer.spec.physical import K, S, T, TERM, Barrier, FinalizePlan, FromWorkspace, Guard, \
    ReduceWorkspace, ReducerPlan, Shuffle, ToWorkspace
from .cuda_access import Frame, register_place, render_index
from .cuda_exprs import C, combine, from_float, literal, narrow_int, to_float
from .cuda_text import term_loop

FULL_MASK = "0xffffffff"


# ----------------------------------------------------------------------------- names

def partial_name(body, reducer: ir.Buffer) -> str:
    return body.names.get(("partial", reducer), f"{reducer.name}_partial")


def workspace_name(body, reducer: ir.Buffer) -> str:
    return body.names.get(("workspace", reducer), f"{reducer.name}_workspace")


def reduce_rows_name(body, stmt: ir.Reduce) -> str:
    """The shared rows a T.reduce_* statement goes through (codegen.cuda_reduce)."""
    return body.names.get(("scratch", stmt), f"{stmt.src.name}_{stmt.kind}_rows")


def seed_name(body, reducer: ir.Buffer) -> str:
    return body.names.get(("seed", reducer), f"{reducer.name}_seed")


def effective_seed(init: ir.ReducerInit) -> ir.Expr | None:
    """The value combined once at finalize (interp.logical's rule): the seed, and for a
    legacy fill of an idempotent op with a value that is not the identity, that value
    too (filling every partial with v means seeding v once). A fill with the identity
    adds nothing; any other fill of a non-idempotent op is rejected (R213)."""
    reducer = init.reducer
    monoid = reducer_monoid(reducer.reducer)
    fill = init.fill_value
    if fill is None or not monoid.idempotent:
        return init.seed
    if isinstance(fill, ir.Const) and fill.value == monoid.identity(reducer.dtype):
        return init.seed
    if init.seed is None:
        return fill
    return _Combined(init.seed, fill)


class _Combined:
    """seed ⊕ fill, rendered by init (not an IR node: it never leaves this module)."""

    def __init__(self, seed: ir.Expr, fill: ir.Expr):
        self.seed, self.fill = seed, fill


def seeded_reducers(func: ir.PrimFunc) -> set[ir.Buffer]:
    return {s.reducer for s in ir.walk(func.kernel.body)
            if isinstance(s, ir.ReducerInit) and effective_seed(s) is not None}


# ----------------------------------------------------------------------------- declarations

def declarations(body, rp: ReducerPlan, seeded: bool) -> list[str]:
    """The reducer's registers: its partials and its seed. Its workspace is declared
    with the other shared arrays, from the plan's resource model (codegen.cuda)."""
    reducer = rp.reducer
    ctype = reducer.dtype.c_name
    lines = [f"{ctype} {partial_name(body, reducer)}[{rp.storage.slots_per_thread}];"
             f"  // {rp.planner} plan: {rp.storage.describe()}"]
    if seeded:
        lines.append(f"{ctype} {seed_name(body, reducer)};")
    return lines


# ----------------------------------------------------------------------------- init

def init(body, stmt: ir.ReducerInit, frame: Frame) -> None:
    reducer = stmt.reducer
    rp = body.reducer_plans[reducer]
    dtype = reducer.dtype
    monoid = reducer_monoid(reducer.reducer)
    identity = literal(monoid.identity(dtype), dtype).text
    partial = partial_name(body, reducer)
    body.out.comment(f"line {stmt.span.line}: init of {reducer.name}: every partial "
                     f"starts at the {monoid.name} identity")
    _over_slots(body, 0, rp.storage.slots_per_thread,
                lambda slot: body.out.line(f"{partial}[{slot}] = {identity};"))
    if reducer not in body.seeded:
        return
    seed = effective_seed(stmt)
    ex = body.exprs(frame)
    if seed is None:
        value = identity
    elif isinstance(seed, _Combined):
        value = combine(monoid, dtype, ex.operand(seed.seed, dtype),
                        ex.operand(seed.fill, dtype)).text
    else:
        value = ex.operand(seed, dtype).text
    body.out.line(f"{seed_name(body, reducer)} = {value};  // combined once, at finalize")


# ----------------------------------------------------------------------------- update

def site_guard(body, stmt: ir.ReducerUpdate) -> str | None:
    """The C condition under which this thread's cell contributes, None: always."""
    rp = body.reducer_plans[stmt.reducer]
    site = next(s for s in rp.sites if s.update is stmt)
    if site.guard_replica is None or site.loop.replicate == 1:
        return None
    return f"rep == {site.guard_replica}"


def update(body, stmt: ir.ReducerUpdate, frame: Frame) -> None:
    reducer = stmt.reducer
    rp = body.reducer_plans[reducer]
    dtype = reducer.dtype
    monoid = reducer_monoid(reducer.reducer)
    guard = site_guard(body, stmt)
    if not frame.loop_vars:
        body.out.comment(f"line {stmt.span.line}: update of {reducer.name} outside "
                         f"T.Parallel: one logical contribution, every participant runs it")
        if guard is not None:
            offset = rp.participants[0]
            site = next(s for s in rp.sites if s.update is stmt)
            guard = f"tid == {offset + site.guard_replica}"
    target = body.place(reducer, stmt.indices, frame)
    value = body.exprs(frame).operand(stmt.value, dtype)
    with body.maybe_block(f"if ({guard})" if guard else None):
        body.out.line(target.assign(combine(monoid, dtype, target.read, value).text))


# ----------------------------------------------------------------------------- finalize

def finalize(body, stmt: ir.ReducerFinalize, frame: Frame) -> None:
    reducer = stmt.reducer
    rp = body.reducer_plans[reducer]
    fp = next(f for f in rp.finalizes if f.finalize is stmt)
    dst = stmt.dst.name if stmt.dst is not None else "in place"
    body.out.comment(f"line {stmt.span.line}: finalize {reducer.name} -> {dst}: "
                     f"all-reduce width {fp.width}, scale {fp.scale}, named barrier "
                     f"{fp.barrier_id} ({fp.barrier_count} threads), "
                     f"{len(fp.chunks)} chunk{'s' if len(fp.chunks) != 1 else ''}")
    for chunk in fp.chunks:
        if len(fp.chunks) > 1:
            body.out.comment(f"chunk: slots {chunk.first}..{chunk.first + chunk.count - 1}")
        for step in chunk.steps:
            _step(body, rp, step, chunk.first, chunk.count)
    _write_result(body, rp, fp, frame)


def _names(rp: ReducerPlan) -> dict[str, str]:
    offset = rp.participants[0]
    return {T: "tid" if offset == 0 else f"tid - {offset}", S: "slot", K: "term"}


def _c(expr: IndexExpr, rp: ReducerPlan, first: int, count: int, terms: int = 1) -> str:
    """A step expression as C; a chunk of one slot has its slot number folded in."""
    ranges = {T: (0, rp.participants[1] - 1), S: (first, first + count - 1),
              K: (0, max(terms, 1) - 1)}
    return expr.simplify(ranges).to_c(_names(rp), ranges)


def _guards(guards: tuple[Guard, ...], rp: ReducerPlan, first: int, count: int) -> str | None:
    if not guards:
        return None
    return " && ".join(f"{_c(g.expr, rp, first, count)} {g.op} {g.value}" for g in guards)


def _over_slots(body, first: int, count: int, emit) -> None:
    """emit(slot_text) once per slot of [first, first + count)."""
    if count == 1:
        emit(str(first))
        return
    body.out.line("#pragma unroll")
    with body.maybe_block(f"for (int slot = {first}; slot < {first + count}; ++slot)"):
        emit("slot")


def _step(body, rp: ReducerPlan, step, first: int, count: int) -> None:
    reducer = rp.reducer
    dtype = reducer.dtype
    monoid = reducer_monoid(reducer.reducer)
    partial = partial_name(body, reducer)
    workspace = workspace_name(body, reducer)
    guard = _guards(step.guards, rp, first, count)
    with body.maybe_block(f"if ({guard})" if guard else None):
        if isinstance(step, Barrier):
            body.out.line(f"reducer_barrier({step.id}, {step.arrivals});")
        elif isinstance(step, Shuffle):
            def shuffle(slot: str) -> None:
                mine = C(f"{partial}[{slot}]")
                other = xor_shuffle(mine, step.mask, dtype)
                body.out.line(f"{mine.text} = {combine(monoid, dtype, mine, other).text};")
            _over_slots(body, first, count, shuffle)
        elif isinstance(step, ToWorkspace):
            def store(slot: str) -> None:
                addr = _c(step.addr, rp, first, count)
                body.out.line(f"{workspace}[{addr}] = {partial}[{slot}];")
            _over_slots(body, first, count, store)
        elif isinstance(step, ReduceWorkspace):
            src = step.src
            _fold(body, rp, f"{workspace}[{_c(step.dst, rp, first, count)}]",
                  lambda k: f"{workspace}[{_c(src.substitute({K: k}), rp, first, count, step.terms)}]",
                  step.terms, dtype, monoid)
        elif isinstance(step, FromWorkspace):
            def load(slot: str) -> None:
                _fold(body, rp, f"{partial}[{slot}]",
                      lambda k: f"{workspace}[{_c(step.addr.substitute({K: k}), rp, first, count, step.terms)}]",
                      step.terms, dtype, monoid)
            _over_slots(body, first, count, load)


def _fold(body, rp: ReducerPlan, target: str, term, terms: int, dtype, monoid) -> None:
    """target = ⊕_{k < terms} term(k), folded left to right."""
    if terms == 1:
        body.out.line(f"{target} = {term(Const(0))};")
        return
    with body.maybe_block(""):
        body.out.line(f"{dtype.c_name} value = {term(Const(0))};")
        with body.maybe_block(term_loop(body.out, 1, terms)):
            folded = combine(monoid, dtype, C("value"), C(term(Var(K))))
            body.out.line(f"value = {folded.text};")
        body.out.line(f"{target} = value;")


def xor_shuffle(value: C, mask: int, dtype) -> C:
    if dtype.is_float8:
        # no __shfl_xor_sync for CUDA's fp8 types: exchange the float (exact both ways)
        return from_float(C(f"__shfl_xor_sync({FULL_MASK}, {to_float(value, dtype).text}, "
                            f"{mask})"), dtype)
    if narrow_int(dtype):
        return C(f"({dtype.c_name})__shfl_xor_sync({FULL_MASK}, (int){value.text}, {mask})")
    return C(f"__shfl_xor_sync({FULL_MASK}, {value.text}, {mask})")


# ----------------------------------------------------------------------------- result

def _write_result(body, rp: ReducerPlan, fp: FinalizePlan, frame: Frame) -> None:
    stmt = fp.finalize
    reducer = rp.reducer
    dtype = reducer.dtype
    monoid = reducer_monoid(reducer.reducer)
    partial = partial_name(body, reducer)
    seeded = reducer in body.seeded
    seed = C(seed_name(body, reducer))

    def seeded_text(value: C) -> str:
        return combine(monoid, dtype, seed, value).text if seeded else value.text

    def stored(red_ix, inner: Frame) -> str:
        """The result of the reducer element at red_ix, read from the executing
        thread's storage slot."""
        return seeded_text(register_place(partial, rp.storage, red_ix, inner, body.var).read)

    dst = stmt.dst
    if fp.publish is not None:
        _write_published(body, rp, fp, frame, seeded_text)
        return
    if dst is None:
        if seeded:
            body.out.comment("the seed, once per output")
            _over_slots(body, 0, rp.storage.slots_per_thread,
                        lambda slot: body.out.line(f"{partial}[{slot}] = "
                                                   f"{seeded_text(C(f'{partial}[{slot}]'))};"))
        return
    if dst.scope == "fragment":
        layout = fp.dst_layout or body.layouts.fragment(dst)
        body.out.comment(f"{dst.name} in its own layout: {layout.describe()}"
                         + (", seeded once" if seeded else ""))
        with body.cells(layout, frame) as inner:
            out_ix = tuple(Var(n) for n in layout.index_vars)
            red_ix = _reshape(out_ix, dst.shape, reducer.shape)
            body.out.line(body.place(dst, out_ix, inner).assign(stored(red_ix, inner)))
        return
    storage = rp.storage.rename(index_names(len(reducer.shape)))
    body.out.comment(f"{dst.name} ({dst.scope}) written by replica 0 of the storage layout"
                     + (", seeded once" if seeded else ""))
    if dst.scope == "shared":
        body.fence(stmt, "before")
    with body.cells(storage, frame, with_replica=True) as inner:
        red_ix = tuple(Var(n) for n in storage.index_vars)
        out_ix = _reshape(red_ix, reducer.shape, dst.shape)
        target = body.place(dst, out_ix, inner)
        with body.maybe_block("if (rep == 0)" if storage.replicate > 1 else None):
            body.out.line(target.assign(stored(red_ix, inner)))
    if dst.scope == "shared":
        body.fence(stmt, "after")


def _reshape(ix: tuple[IndexExpr, ...], src_shape, dst_shape) -> tuple[IndexExpr, ...]:
    """The same element in a buffer of another shape with the same row-major order
    (the reducer and its destination differ only in unit dimensions)."""
    flat: IndexExpr = Const(0)
    for i, extent in zip(ix, src_shape):
        flat = flat * extent + i
    out = []
    stride = 1
    for extent in dst_shape:
        stride *= extent
    for extent in dst_shape:
        stride //= extent
        out.append((flat // stride) % extent if extent > 1 else Const(0))
    return tuple(out)


# ----------------------------------------------------------------------------- publication

# A publication folds few words (the lane groups holding one output): up to this many
# are written out one after the other, more go through a rolled loop (cuda_text.term_loop).
STRAIGHT_FOLD = 8


def _write_published(body, rp: ReducerPlan, fp: FinalizePlan, frame: Frame,
                     seeded_text) -> None:
    """The result read from the workspace words the collective wrote (spec.physical
    Publish): into the destination fragment's holders, every storage copy (in place), or
    a shared/global destination by storage replica 0; then the publication's barrier."""
    stmt, reducer = fp.finalize, rp.reducer
    dst = stmt.dst
    pub = fp.publish
    seed_note = " (seeded once)" if reducer in body.seeded else ""
    if dst is not None and dst.scope == "fragment":
        layout = fp.dst_layout or body.layouts.fragment(dst)
        body.out.comment(f"publication: {dst.name} in its own layout, {layout.describe()}, "
                         f"each output combined from {pub.terms} workspace word(s){seed_note}")
        with body.cells(layout, frame) as inner:
            out_ix = tuple(Var(n) for n in layout.index_vars)
            red_ix = _reshape(out_ix, dst.shape, reducer.shape)
            value = _published_value(body, rp, pub, red_ix, inner)
            body.out.line(body.place(dst, out_ix, inner).assign(seeded_text(value)))
    else:
        storage = rp.storage.rename(index_names(len(reducer.shape)))
        first_only = dst is not None and storage.replicate > 1
        readers = f"every copy of {reducer.name}" if dst is None else \
            f"{dst.name} by storage replica 0"
        body.out.comment(f"publication: {readers}, each output combined from {pub.terms} "
                         f"workspace word(s){seed_note}")
        if dst is not None and dst.scope == "shared":
            body.fence(stmt, "before")
        with body.cells(storage, frame, with_replica=first_only) as inner:
            red_ix = tuple(Var(n) for n in storage.index_vars)
            with body.maybe_block("if (rep == 0)" if first_only else None):
                value = _published_value(body, rp, pub, red_ix, inner)
                if dst is None:
                    target = register_place(partial_name(body, reducer), rp.storage, red_ix,
                                            inner, body.var)
                else:
                    target = body.place(dst, _reshape(red_ix, reducer.shape, dst.shape), inner)
                body.out.line(target.assign(seeded_text(value)))
        if dst is not None and dst.scope == "shared":
            body.fence(stmt, "after")
    body.out.comment("every publication read is done before the workspace is reused")
    body.out.line(f"reducer_barrier({pub.barrier.id}, {pub.barrier.arrivals});")


def _published_value(body, rp: ReducerPlan, pub, red_ix, frame: Frame) -> C:
    """Declares `published`, the fold of W[addr(x, term)] for term < terms (left to
    right, as the simulator folds), and returns it."""
    reducer = rp.reducer
    dtype = reducer.dtype
    monoid = reducer_monoid(reducer.reducer)
    workspace = workspace_name(body, reducer)
    addr = pub.addr.substitute(dict(zip(pub.index_vars, red_ix)))
    ranges = dict(frame.ranges)
    ranges[TERM] = (0, pub.terms - 1)
    inner = Frame(frame.participants, frame.loop_vars, ranges,
                  dict(frame.c_names, **{TERM: "term"}))

    def word(term: IndexExpr) -> C:
        at = addr.substitute({TERM: term}).simplify(ranges)
        return C(f"{workspace}[{render_index(at, inner, body.var).text}]")

    value = C("published")
    body.out.line(f"{dtype.c_name} published = {word(Const(0)).text};")
    if pub.terms <= STRAIGHT_FOLD:
        for term in range(1, pub.terms):
            body.out.line(f"published = {combine(monoid, dtype, value, word(Const(term))).text};")
    else:
        with body.maybe_block(term_loop(body.out, 1, pub.terms)):
            body.out.line(f"published = {combine(monoid, dtype, value, word(Var(TERM))).text};")
    return value
