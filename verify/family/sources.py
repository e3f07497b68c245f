"""Grid-level exactly-once for a size family (docs/design.md §21): the grid, the tiles
and the predicates partition a reduction's iteration space.

The iteration space of a reducer is the index box of the global tensor that *drives*
its contributions: the one of most dimensions that the contribution reads, directly
(`A[...]`) or through a fragment or shared buffer filled from it — by a store in a
`T.Parallel` loop whose indices are the loop's variables (`a_frag[i, k] = A[...]`, under
its `if`s and `T.if_then_else` choices), or by a `T.copy` of a region of it. For the
GEMV the driving tensor is A and the space is [0, M) x [0, K). Two obligations, for
every size of the family:

- `exactly-once unique`: no two distinct enabled iterations (block, loops) of the
  reducer's update sites read one element of the box;
- `exactly-once covered`: every element of the box is read by some enabled iteration
  (a quantified query: for some sizes, some element that no iteration reads).

Padding (an iteration whose element lies outside the box: a tail tile) is not part of
the space; that it reads nothing outside the tensor is the bounds obligation's job."""
from __future__ import annotations

from dataclasses import dataclass

import z3

from verify_reducer.spec import ir

from verify_reducer.verify.family.proofs import (FamilyEncoder, FamilySpace, kernel_text,
                            loads_with_conditions, size_text)
from verify_reducer.codegen.proofs.obligation import Query
from verify_reducer.verify.epochs.scopes import Context, statements


@dataclass
class Source:
    """One update site's driving read: tensor, its index terms, and the constraints
    under which the iteration is enabled and the element is real."""
    update: ir.ReducerUpdate
    buffer: ir.Buffer
    index: list
    constraints: list
    names: dict          # the kernel variables shown in a counterexample


def sources(kernel: ir.Kernel, space: FamilySpace, reducer: ir.Buffer) -> list[Source]:
    """The driving source of each update of reducer that has one."""
    placed = list(statements(kernel))
    out = []
    for stmt, ctx in placed:
        if isinstance(stmt, ir.ReducerUpdate) and stmt.reducer is reducer:
            found = _driving(stmt, ctx, placed, space)
            if found is not None:
                out.append(found)
    return out


def _driving(update: ir.ReducerUpdate, ctx: Context, placed, space: FamilySpace):
    enc = FamilyEncoder(ctx, space)
    base = enc.guards()
    candidates = []      # (buffer, index terms, extra constraints)
    for load, conds in loads_with_conditions(update.value):
        if load.buffer.scope == "global":
            candidates.append((load.buffer, [enc.term(i) for i in load.indices],
                               enc.assumed(conds)))
        elif load.buffer.scope in ("fragment", "shared", "local"):
            terms = [enc.term(i) for i in load.indices]
            candidates += _through(load.buffer, terms, ctx, placed, enc)
    if not candidates:
        return None
    rank = max(len(c[0].shape) for c in candidates)
    buffer, index, extra = next(c for c in candidates if len(c[0].shape) == rank)
    return Source(update, buffer, index, enc.facts + base + extra, dict(enc.vars))


def _prefix(outer: Context, inner: Context, drop: int) -> bool:
    """Whether outer's scope less its last `drop` frames encloses inner."""
    keys = [f.key() for f in outer.scope[:len(outer.scope) - drop]]
    return [f.key() for f in inner.scope[:len(keys)]] == keys


def _through(buffer: ir.Buffer, terms, ctx: Context, placed, enc: FamilyEncoder):
    """The global reads that filled buffer[terms], producer by producer."""
    out = []
    for stmt, pctx in placed:
        if isinstance(stmt, ir.Store) and stmt.buffer is buffer:
            out += _from_store(stmt, pctx, terms, ctx, enc)
        elif isinstance(stmt, ir.Copy) and stmt.dst.buffer is buffer \
                and stmt.src.buffer.scope == "global" and _prefix(pctx, ctx, 0):
            out += _from_copy(stmt, terms, enc)
    return out


def _from_store(store: ir.Store, pctx: Context, terms, ctx: Context, enc: FamilyEncoder):
    frames = [i for i, f in enumerate(pctx.scope) if isinstance(f.stmt, ir.ParallelFor)]
    if not frames:
        return []
    loop = pctx.scope[frames[-1]].stmt
    names = [v.name for v in loop.vars]
    idx = [i.name if isinstance(i, ir.Var) else None for i in store.indices]
    if sorted(n for n in idx if n is not None) != sorted(names) or None in idx:
        return []
    if not _prefix(pctx, ctx, len(pctx.scope) - frames[-1]):
        return []
    penc = FamilyEncoder(pctx, enc.space)
    penc.vars = dict(enc.vars)
    for name, term in zip(idx, terms):
        penc.vars[name] = term
    out = []
    for load, conds in loads_with_conditions(store.value):
        if load.buffer.scope == "global":
            index = [penc.term(i) for i in load.indices]
            extra = penc.guards() + penc.assumed(conds)
            out.append((load.buffer, index, penc.facts + extra))
    return out


def _from_copy(copy: ir.Copy, terms, enc: FamilyEncoder):
    src, dst = copy.src, copy.dst
    wide_src = [d for d, e in enumerate(src.extents) if e != 1]
    wide_dst = [d for d, e in enumerate(dst.extents) if e != 1]
    if len(wide_src) != len(wide_dst) or \
            any(src.extents[a] != dst.extents[b] for a, b in zip(wide_src, wide_dst)):
        return []
    index = [enc.term(s) for s in src.starts]
    inside = []
    for a, b in zip(wide_src, wide_dst):
        offset = terms[b] - enc.term(dst.starts[b])
        index[a] = index[a] + offset
        inside += [offset >= 0, offset < dst.extents[b]]
    return [(src.buffer, index, inside)]


# ----------------------------------------------------------------------------- queries

def _kernel_consts(exprs, sizes) -> list:
    """Every uninterpreted integer constant of exprs that is not a size."""
    sizes = {s.get_id() for s in sizes}
    seen, out, todo = set(), [], list(exprs)
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            if e.get_id() not in sizes:
                out.append(e)
        else:
            todo.extend(e.children())
    return out


def _renamed(source: Source, space: FamilySpace, tag: str):
    """A second, independent copy of source's variables."""
    consts = _kernel_consts(source.constraints + source.index, space.vars.values())
    pairs = [(c, z3.Int(f"{c}{tag}")) for c in consts]
    sub = (lambda e: z3.substitute(e, *pairs)) if pairs else (lambda e: e)
    return ([sub(c) for c in source.constraints], [sub(i) for i in source.index],
            {n: sub(t) for n, t in source.names.items()})


def _in_box(index, shape) -> list:
    return [z3.And(i >= 0, i < n) for i, n in zip(index, shape)]


def unique_query(a: Source, b: Source, space: FamilySpace) -> Query:
    shape = [space.term(n) for n in a.buffer.shape]
    cb, ib, nb = _renamed(b, space, "'")
    same = [x == y for x, y in zip(a.index, ib)]
    constraints = space.facts + a.constraints + cb + same + _in_box(a.index, shape)
    if a.update is b.update:
        constraints.append(z3.Or(*[a.names[n] != nb[n] for n in a.names]) if a.names
                           else z3.BoolVal(False))
    reported = [(f"a.{n}", t) for n, t in a.names.items()] + \
        [(f"b.{n}", t) for n, t in nb.items()] + \
        [(f"#idx{d}", t) for d, t in enumerate(a.index)]

    def explain(w: dict[str, int]) -> str:
        point = ", ".join(str(w[f"#idx{d}"]) for d in range(len(a.index)))
        first = kernel_text({n: w[f"a.{n}"] for n in a.names}, a.names)
        second = kernel_text({n: w[f"b.{n}"] for n in nb}, nb)
        return (f"at {size_text(w, space)} {a.buffer.name}[{point}] enters "
                f"{a.update.reducer.name} twice: at line {a.update.span.line} with {first} "
                f"and at line {b.update.span.line} with {second}")
    return Query(f"exactly-once unique {a.buffer.name} lines {a.update.span.line}/"
                 f"{b.update.span.line}", constraints, space.objectives(), explain,
                 a.update.span.line, reported=reported)


def covered_query(group: list[Source], space: FamilySpace) -> Query:
    buffer = group[0].buffer
    shape = [space.term(n) for n in buffer.shape]
    point = [z3.Int(f"{buffer.name}!{d}") for d in range(len(shape))]
    reads = []
    for s in group:
        consts = _kernel_consts(s.constraints + s.index, space.vars.values())
        body = z3.And(*s.constraints, *[i == p for i, p in zip(s.index, point)])
        reads.append(z3.Exists(consts, body) if consts else body)
    constraints = space.facts + _in_box(point, shape) + [z3.Not(z3.Or(*reads))]
    objectives = space.objectives() + [(f"#p{d}", p) for d, p in enumerate(point)]
    lines = ", ".join(str(s.update.span.line) for s in group)

    def explain(w: dict[str, int]) -> str:
        at = ", ".join(str(w[f"#p{d}"]) for d in range(len(point)))
        return (f"at {size_text(w, space)} {buffer.name}[{at}] never enters "
                f"{group[0].update.reducer.name}: no enabled iteration of the update "
                f"at line {lines} reads it")
    return Query(f"exactly-once covered {buffer.name}", constraints, objectives, explain,
                 group[0].update.span.line)
