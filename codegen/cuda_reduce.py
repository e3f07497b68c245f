"""`T.reduce_*` as CUDA. A fragment into a fragment where codegen.lower.reduce finds
the shuffle form: each thread folds its own terms, then `__shfl_xor_sync` over the lanes
that share each output (no shared memory, no barrier). Otherwise through shared memory:
replica 0 of each source element
stores it into the statement's rows (declared by codegen.cuda, named by
codegen.cuda_collectives), then every holder of an output element combines its row in
order, starting from the row's first term (clear) or the output's old value (in shared
or global memory: its replica 0 only, the one that writes it). `body` is
the codegen.cuda_stmts.KernelBody rendering the kernel."""
from __future__ import annotations

import math

from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import Const, Var
from verify_reducer.spec.layout import default_partition
from verify_reducer.spec.ops import REDUCE_KINDS, reduce_monoid

from . import cuda_collectives as collectives
from .cuda_access import TERM, Frame, flat_offset
from .cuda_exprs import C, combine, convert, from_float, is_half_like, literal, to_float
from .cuda_text import term_loop
from .cuda_unsupported import Unsupported
from .layout_rules import reduce_kept
from .lower.reduce import ShuffleReduce, lower_reduce


def render_reduce(body, stmt: ir.Reduce, frame: Frame) -> None:
    kind = REDUCE_KINDS[stmt.kind]
    monoid = reduce_monoid(stmt)
    src, dst = stmt.src, stmt.dst
    dim = stmt.dim + len(src.shape) if stmt.dim < 0 else stmt.dim
    kept = reduce_kept(src.shape, dim, dst.shape)
    if src.scope == "local" and dst.scope == "local":
        _render_private(body, stmt, monoid, dim)
        return
    if src.scope not in ("fragment", "shared") or kept is None:
        raise Unsupported(f"line {stmt.span.line}: T.reduce_{stmt.kind} of a "
                          f"{src.scope} buffer")
    shuffled = lower_reduce(body.plan, stmt)

    def term_value(value: C) -> C:
        """A source element as the term it adds: |x| for the abs kinds (in the
        source's dtype), converted to the destination's dtype."""
        if kind.absolute:
            value = _abs(value, src.dtype)
        return convert(value, src.dtype, dst.dtype)

    if shuffled is not None:
        _render_shuffled(body, stmt, shuffled, monoid, term_value)
        return
    if src.scope == "fragment":
        scratch = collectives.reduce_rows_name(body, stmt)   # declared by codegen.cuda
        _stage_rows(body, stmt, frame, scratch, term_value)

        def term(row, inner) -> C:
            return C(f"{scratch}[{flat_offset(src.shape, row, inner, body.var).text}]")
    else:
        # a shared tile is already where every holder of an output can read its row
        body.fence(stmt, "before")
        body.out.comment(f"line {stmt.span.line}: T.reduce_{stmt.kind}({src.name}, "
                         f"{dst.name}, dim={stmt.dim}) from shared memory in place")

        def term(row, inner) -> C:
            return term_value(body.element(src, row, inner))
    if dst.scope == "fragment":
        dst_layout = body.layouts.fragment(dst)
    else:
        dst_layout = default_partition(dst.shape, *reversed(frame.participants))
    # combining into the old value of memory: one holder per output (replica 0), else
    # another copy's write races with this one's read (interp.simulate: R504)
    one_writer = not stmt.clear and dst.scope != "fragment" and dst_layout.replicate > 1
    with body.cells(dst_layout, frame, with_replica=one_writer) as inner, \
            body.maybe_block("if (rep == 0)" if one_writer else None):
        inner.c_names[TERM] = "term"
        out_ix = tuple(Var(n) for n in dst_layout.index_vars)
        row = [out_ix[kept.index(d)] if d != dim else Var(TERM)
               for d in range(len(src.shape))]
        target = body.place(dst, out_ix, inner)
        if stmt.clear:
            first = tuple(row[:dim]) + (Const(0),) + tuple(row[dim + 1:])
            start, begin = term(first, inner).text, 1
        else:
            start, begin = target.read.text, 0
        body.out.line(f"{dst.dtype.c_name} value = {start};")
        with body.maybe_block(term_loop(body.out, begin, src.shape[dim])):
            element = term(tuple(row), inner)
            body.out.line(f"value = {combine(monoid, dst.dtype, C('value'), element).text};")
        body.out.line(target.assign("value"))
    body.fence(stmt, "after")


def _render_shuffled(body, stmt: ir.Reduce, low: ShuffleReduce, monoid, term_value) -> None:
    """The plan's shuffle form, one block per destination slot: the thread's own terms
    in order, then x = x ⊕ shfl_xor(x, m) for each mask, then the store (or the
    combination with the old value)."""
    src, dst = stmt.src, stmt.dst
    out, dtype = body.out, dst.dtype
    array, target = body.buffer(src), body.buffer(dst)
    out.comment(f"line {stmt.span.line}: T.reduce_{stmt.kind}({src.name}, {dst.name}, "
                f"dim={stmt.dim}): {low.describe()}")
    for slot, terms in zip(low.slots, low.terms):
        with body.maybe_block(""):
            out.line(f"{dtype.c_name} value = {term_value(C(f'{array}[{terms[0]}]')).text};")
            for t in terms[1:]:
                value = combine(monoid, dtype, C("value"), term_value(C(f"{array}[{t}]")))
                out.line(f"value = {value.text};")
            for m in low.masks:
                other = collectives.xor_shuffle(C("value"), m, dtype)
                out.line(f"value = {combine(monoid, dtype, C('value'), other).text};")
            old = C(f"{target}[{slot}]")
            result = "value" if stmt.clear else combine(monoid, dtype, old, C("value")).text
            out.line(f"{target}[{slot}] = {result};")


def _render_private(body, stmt: ir.Reduce, monoid, dim: int) -> None:
    """A local source into a local destination: the executing thread combines its own
    copy along dim, from the identity (or the old value without clear) in index order,
    TileLang's LowerLocal loop (interp.simulate runs the same)."""
    src, dst = stmt.src, stmt.dst
    extent = src.shape[dim]
    inner = math.prod(src.shape[dim + 1:])
    body.out.comment(f"line {stmt.span.line}: T.reduce_{stmt.kind}({src.name}, "
                     f"{dst.name}, dim={stmt.dim}) of the thread's own copy")
    with body.maybe_block(f"for (int out = 0; out < {dst.size}; ++out)"):
        start = f"{dst.name}[out]" if not stmt.clear else \
            literal(monoid.identity(dst.dtype), dst.dtype).text
        body.out.line(f"{dst.dtype.c_name} value = {start};")
        with body.maybe_block(f"for (int term = 0; term < {extent}; ++term)"):
            offset = f"(out / {inner}) * {extent * inner} + term * {inner} + out % {inner}"
            element = C(f"{src.name}[{offset}]")
            if REDUCE_KINDS[stmt.kind].absolute:
                element = _abs(element, src.dtype)
            element = convert(element, src.dtype, dst.dtype)
            body.out.line(f"value = {combine(monoid, dst.dtype, C('value'), element).text};")
        body.out.line(f"{dst.name}[out] = value;")


def _stage_rows(body, stmt: ir.Reduce, frame: Frame, scratch: str, term_value) -> None:
    """Replica 0 of each element of a fragment source stores its term into the rows."""
    src = stmt.src
    src_layout = body.layouts.fragment(src)
    body.out.comment(f"line {stmt.span.line}: T.reduce_{stmt.kind}({src.name}, "
                     f"{stmt.dst.name}, dim={stmt.dim}) through shared memory")
    body.fence(stmt, "before", rows=scratch)
    with body.cells(src_layout, frame, with_replica=True) as inner:
        loop = tuple(Var(n) for n in src_layout.index_vars)
        value = term_value(body.element(src, loop, inner))
        offset = flat_offset(src.shape, loop, inner, body.var).text
        guard = "rep == 0" if src_layout.replicate > 1 else None
        with body.maybe_block(f"if ({guard})" if guard else None):
            body.out.line(f"{scratch}[{offset}] = {value.text};")
    body.fence(stmt, "staged", rows=scratch)


def _abs(value: C, dtype) -> C:
    if not dtype.is_float:
        return C(f"abs({value.text})") if dtype.kind == "int" else value
    if is_half_like(dtype):
        return from_float(C(f"fabsf({to_float(value, dtype).text})"), dtype)
    return C(f"{'fabs' if dtype.name == 'float64' else 'fabsf'}({value.text})")
