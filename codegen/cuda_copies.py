"""T.copy and T.fill as CUDA, placed by the plan's layouts.

Copies loop over their layout (LayoutMap.copies: a fragment side's, or the cooperative
partition of a global/shared copy, codegen.layout_copy), with border guards on global
tensors: reads outside give 0, writes outside are dropped (the interpreter's rule).
Where a thread moves runs of 16 contiguous, provably aligned bytes, each run is one
128-bit access (codegen.cuda_vector). A copy or fill that writes shared memory is fenced
by the plan's barriers before (readers of the old contents are done) and after (the new
contents are visible): codegen.plan_barriers decides them. `body` is the codegen.cuda_stmts.KernelBody rendering the kernel."""
from __future__ import annotations

import dataclasses
from typing import Callable

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import affine, border_guards, region_indices
from verify_reducer.spec.indexexpr import IndexExpr, Var
from verify_reducer.spec.layout import Layout, default_partition, index_names

from .cuda_access import LANE, Frame, Index, Place, render_index
from .cuda_exprs import C, convert, literal
from .cuda_unsupported import Unsupported
from .cuda_vector import copy_runs, vector_type
from .layout_copy import vector_elements


def render_copy(body, stmt: ir.Copy, frame: Frame) -> None:
    if frame.loop_vars:
        raise Unsupported(f"line {stmt.span.line}: a T.copy inside a T.Parallel")
    src, dst = stmt.src, stmt.dst
    layout = _copy_layout(body, stmt, frame)
    # memory takes one write per element, by replica 0 (as the simulator does)
    one_writer = dst.buffer.scope in ("global", "shared") and layout.replicate > 1
    body.out.comment(f"line {stmt.span.line}: T.copy {src.buffer.name} -> "
                     f"{dst.buffer.name}: {layout.describe()}")
    body.fence(stmt, "before")
    hoisted = _hoist_starts(body, stmt, frame)
    if hoisted is not stmt:
        _scalar_copy(body, hoisted, layout, frame, one_writer)
    elif not _vector_copy(body, stmt, layout, frame, one_writer):
        _scalar_copy(body, stmt, layout, frame, one_writer)
    body.fence(stmt, "after")


def _hoist_starts(body, stmt: ir.Copy, frame: Frame) -> ir.Copy:
    """A copy whose region starts are not affine in the kernel's integer names (one
    that reads memory: `X[row_offset + ..., ...]` with row_offset a T.alloc_var) as
    the same copy from C locals holding those starts, declared here; unknown to the
    border analysis, they are tested on both sides, as the simulator tests such a
    region (interp.sim_statics). The copy itself when every start is affine."""
    regions = []
    for region in (stmt.src, stmt.dst):
        starts = list(region.starts)
        for d, start in enumerate(starts):
            if affine(start) is None:
                body.hoisted_starts = getattr(body, "hoisted_starts", 0) + 1
                name = f"{region.buffer.name}_start_{body.hoisted_starts}"
                value = body.exprs(frame).operand(start, start.dtype).text
                body.out.line(f"const {start.dtype.c_name} {name} = {value};")
                starts[d] = ir.Var(name, start.span, start.dtype)
        regions.append(dataclasses.replace(region, starts=tuple(starts)))
    if all(a.starts == b.starts for a, b in zip(regions, (stmt.src, stmt.dst))):
        return stmt
    hoisted = dataclasses.replace(stmt, src=regions[0], dst=regions[1])
    body.scopes[hoisted] = body.scopes[stmt]
    return hoisted


def _copy_layout(body, stmt: ir.Copy, frame: Frame) -> Layout:
    if stmt in body.layouts.copies:
        return body.layouts.copies[stmt]
    extents = tuple(stmt.dst.extents)
    for side in (stmt.src.buffer, stmt.dst.buffer):
        if side.is_reducer:
            storage = body.reducer_plans[side].storage
            if storage.shape == extents:
                return storage.rename(index_names(len(extents)))
            if storage.replicate == storage.count:
                break                  # every thread holds every element
            raise Unsupported(f"line {stmt.span.line}: copy of reducer {side.name} "
                              f"over a region its storage layout does not cover")
    offset, count = frame.participants
    return default_partition(extents, count, offset)


def _vector_copy(body, stmt: ir.Copy, layout: Layout, frame: Frame,
                 one_writer: bool) -> bool:
    """The copy as 128-bit accesses, one per run of V elements a thread moves, when
    codegen.cuda_vector's conditions hold; False (nothing written) otherwise."""
    src, dst = stmt.src, stmt.dst
    dtype = dst.buffer.dtype
    v = vector_elements(dtype)
    runs = copy_runs(stmt, layout, body.scopes[stmt])
    if runs is None:
        return False
    first = run_start(runs, v)
    ctype = dtype.c_name
    vec, zero = vector_type(ctype)
    with body.cells(runs, frame, with_replica=one_writer) as inner:
        src_ix = region_element(src, layout.shape, first)
        dst_ix = region_element(dst, layout.shape, first)
        body.out.comment(f"{v} consecutive {dtype.name} elements as one 128-bit {vec}")
        if src.buffer.scope == "fragment":
            body.out.line(f"{vec} run;")
            body.out.line(f"{ctype}* run_elements = reinterpret_cast<{ctype}*>(&run);")
            _lanes(body, src, layout.shape, first, v, inner,
                   lambda place: f"run_elements[lane] = {place.read.text};")
        else:
            address = body.element(src.buffer, src_ix, inner).text
            load = f"*reinterpret_cast<const {vec}*>(&{address})"
            inside = _inside(body, stmt, src, src_ix, layout.shape, inner)
            if inside:
                body.out.line(f"{vec} run = {zero};")
                with body.maybe_block(f"if ({inside})"):
                    body.out.line(f"run = {load};")
            else:
                body.out.line(f"const {vec} run = {load};")
        with body.maybe_block(_write_test(body, stmt, one_writer, dst_ix, layout.shape,
                                          inner)):
            if dst.buffer.scope == "fragment":
                body.out.line(f"const {ctype}* run_elements = "
                              f"reinterpret_cast<const {ctype}*>(&run);")
                _lanes(body, dst, layout.shape, first, v, inner,
                       lambda place: place.assign("run_elements[lane]"))
            else:
                target = body.element(dst.buffer, dst_ix, inner).text
                body.out.line(f"*reinterpret_cast<{vec}*>(&{target}) = run;")
    return True


def run_start(runs: Layout, v: int) -> tuple[IndexExpr, ...]:
    """The loop iteration of a run's first element: runs (codegen.cuda_vector) counts
    runs of v elements along the last dimension."""
    return tuple(Var(n) for n in runs.index_vars[:-1]) + (Var(runs.index_vars[-1]) * v,)


def _lanes(body, region: ir.Region, shape: tuple[int, ...], first, v: int,
           frame: Frame, statement: Callable[[Place], str]) -> None:
    """The statement for the register of each of a run's v elements, in an unrolled
    loop over the lanes."""
    loop = first[:-1] + (first[-1] + Var(LANE),)
    inner = Frame(frame.participants, frame.loop_vars,
                  dict(frame.ranges, **{LANE: (0, v - 1)}),
                  dict(frame.c_names, **{LANE: "lane"}))
    body.out.line("#pragma unroll")
    with body.maybe_block(f"for (int lane = 0; lane < {v}; ++lane)"):
        ix = region_element(region, shape, loop)
        body.out.line(statement(body.place(region.buffer, ix, inner)))


def _scalar_copy(body, stmt: ir.Copy, layout: Layout, frame: Frame,
                 one_writer: bool) -> None:
    """One element per (thread, slot) of the copy's layout."""
    src, dst = stmt.src, stmt.dst
    with body.cells(layout, frame, with_replica=one_writer) as inner:
        loop = tuple(Var(n) for n in layout.index_vars)
        src_ix = region_element(src, layout.shape, loop)
        dst_ix = region_element(dst, layout.shape, loop)
        value = body.element(src.buffer, src_ix, inner)
        inside_src = _inside(body, stmt, src, src_ix, layout.shape, inner)
        if inside_src:
            value = C(f"{inside_src} ? {value.text} : {literal(0, src.buffer.dtype).text}",
                      10)
        value = convert(value, src.buffer.dtype, dst.buffer.dtype)
        target = body.place(dst.buffer, dst_ix, inner)
        with body.maybe_block(_write_test(body, stmt, one_writer, dst_ix, layout.shape,
                                          inner)):
            body.out.line(target.assign(value.text))


def render_fill(body, stmt: ir.Fill, frame: Frame) -> None:
    region = stmt.region
    buffer = region.buffer
    value = body.exprs(frame).operand(stmt.value, buffer.dtype).text
    body.out.comment(f"line {stmt.span.line}: T.fill {buffer.name}")
    if buffer.scope == "local":
        with body.maybe_block(f"for (int element = 0; element < {buffer.size}; "
                               f"++element)"):
            body.out.line(f"{body.buffer(buffer)}[element] = {value};")
        return
    if buffer.scope == "fragment":
        layout = body.layouts.fragment(buffer)
    else:
        layout = default_partition(tuple(region.extents), *reversed(frame.participants))
    whole = tuple(region.extents) == buffer.shape and \
        all(isinstance(s, ir.Const) and s.value == 0 for s in region.starts)
    body.fence(stmt, "before")
    with body.cells(layout, frame) as inner:
        loop = tuple(Var(n) for n in layout.index_vars)
        if buffer.scope == "fragment":
            ix = loop
            inside = None if whole else _in_region(body, region, loop, inner)
        else:
            ix = region_element(region, layout.shape, loop)
            inside = _inside(body, stmt, region, ix, layout.shape, inner)
        target = body.place(buffer, ix, inner)
        with body.maybe_block(f"if ({inside})" if inside else None):
            body.out.line(target.assign(value))
    body.fence(stmt, "after")


def _write_test(body, stmt: ir.Copy, one_writer: bool, dst_ix, loop_shape,
                frame: Frame) -> str | None:
    """The `if` a copy's store sits under: replica 0 only where memory takes one write
    per element, and the destination's border test; None when neither applies."""
    tests = [test for test in ("rep == 0" if one_writer else None,
                               _inside(body, stmt, stmt.dst, dst_ix, loop_shape, frame))
             if test]
    return f"if ({' && '.join(tests)})" if tests else None


def _in_region(body, region: ir.Region, loop, frame: Frame) -> str:
    tests = []
    for var, start, extent in zip(loop, region.starts, region.extents):
        s = body.exprs(frame).render(start).text
        v = render_index(var, frame, body.var).text
        tests.append(f"{v} >= {s} && {v} < {s} + {extent}")
    return " && ".join(tests)


def _inside(body, stmt, region: ir.Region, indices, loop_shape, frame: Frame) -> str | None:
    """The border test of a global region's element, None when it always holds."""
    if region.buffer.scope != "global":
        return None
    tests = []
    for ix, extent, (low, high) in zip(indices, region.buffer.shape,
                                       _guards(body, stmt, region, loop_shape)):
        text = render_index(ix, frame, body.var, ranges={}).text
        if low:
            tests.append(f"{text} >= 0")
        if high:
            tests.append(f"{text} < {extent}")
    return " && ".join(tests) or None


def _guards(body, stmt, region: ir.Region, loop_shape) -> tuple[tuple[bool, bool], ...]:
    """Which border tests the elements of a global region need
    (spec.addressing.border_guards: the simulator asks the same question)."""
    return border_guards(region, _affine_starts(region), loop_shape, body.scopes[stmt])


def region_element(region: ir.Region, loop_shape: tuple[int, ...],
                   loop: tuple[IndexExpr, ...]) -> tuple[Index, ...]:
    """The element of region touched by loop iteration `loop` (over loop_shape):
    spec.addressing.region_indices over the region's starts as IndexExprs."""
    return region_indices(_affine_starts(region), region.extents, loop_shape, loop)


def _affine_starts(region: ir.Region) -> tuple[IndexExpr, ...]:
    starts = tuple(affine(s) for s in region.starts)
    if any(s is None for s in starts):
        raise Unsupported(f"line {region.span.line}: a region start of "
                          f"{region.buffer.name} that is not an integer affine expression")
    return starts
