"""T.copy and T.fill as CUDA: the printer of codegen.lower.copies' CopyMoves and
FillMoves, deciding none of them (docs/design.md §13.2).

A copy loops over the cells of its lowered partition (or of its vector runs: one
128-bit access per run, codegen.cuda_vector's C type), under the lowered tests: replica
0 only where memory takes one write per element, and the border tests of global sides
(a read outside gives 0, a write outside is dropped). Hoisted starts become C locals
declared before the loop. A copy or fill that writes shared memory is fenced by the
plan's barriers before (readers of the old contents are done) and after (the new
contents are visible): codegen.plan_barriers decides them. `body` is the
codegen.cuda_stmts.KernelBody rendering the kernel."""
from __future__ import annotations

from typing import Callable

from verify_reducer.spec import ir

from .cuda_access import LANE, Frame, Place, render_index, swizzled_offset
from .cuda_exprs import C, convert, literal
from .cuda_unsupported import Unsupported
from .cuda_vector import vector_type
from .lower import copies as lowered


def render_copy(body, stmt: ir.Copy, frame: Frame) -> None:
    if frame.loop_vars:
        raise Unsupported(f"line {stmt.span.line}: a T.copy inside a T.Parallel")
    moves = _lowered(lowered.lower_copy, body, stmt, frame)
    layout = moves.partition
    body.out.comment(f"line {stmt.span.line}: T.copy {stmt.src.buffer.name} -> "
                     f"{stmt.dst.buffer.name}: {layout.describe()}")
    body.fence(stmt, "before")
    frame = _declare_hoisted(body, moves, frame)
    if moves.vector is not None:
        _vector_copy(body, moves, frame)
    else:
        _scalar_copy(body, moves, frame)
    body.fence(stmt, "after")


def _lowered(lower, body, stmt, frame: Frame):
    try:
        return lower(body.plan, stmt, frame.participants)
    except lowered.Unlowerable as e:
        raise Unsupported(str(e)) from None


def _declare_hoisted(body, moves: lowered.CopyMoves, frame: Frame) -> Frame:
    """The C locals holding the copy's hoisted starts, declared here; the frame in
    which the index expressions read them."""
    names = {}
    for start in moves.hoisted:
        region = getattr(moves.stmt, start.side)
        body.hoisted_starts = getattr(body, "hoisted_starts", 0) + 1
        name = f"{region.buffer.name}_start_{body.hoisted_starts}"
        value = body.exprs(frame).operand(start.value, start.value.dtype).text
        body.out.line(f"const {start.value.dtype.c_name} {name} = {value};")
        names[start.name] = name
    if not names:
        return frame
    return Frame(frame.participants, frame.loop_vars, frame.ranges,
                 dict(frame.c_names, **names), frame.unrolled)


def _vector_copy(body, moves: lowered.CopyMoves, frame: Frame) -> None:
    """The copy as 128-bit accesses, one per run of the lowered vector."""
    stmt, run = moves.stmt, moves.vector
    src, dst = stmt.src, stmt.dst
    dtype = dst.buffer.dtype
    v = run.elements
    ctype = dtype.c_name
    vec, zero = vector_type(ctype)
    with body.cells(run.runs, frame, with_replica=moves.one_writer) as inner:
        body.out.comment(f"{v} consecutive {dtype.name} elements as one 128-bit {vec}")
        if src.buffer.scope == "fragment":
            body.out.line(f"{vec} run;")
            body.out.line(f"{ctype}* run_elements = reinterpret_cast<{ctype}*>(&run);")
            _lanes(body, src, run.src_lanes, v, inner,
                   lambda place: f"run_elements[lane] = {place.read.text};")
        else:
            address = body.element(src.buffer, run.src_index, inner).text
            load = f"*reinterpret_cast<const {vec}*>(&{address})"
            inside = _inside(src, run.src_index, moves.src_guards, inner, body)
            if inside:
                body.out.line(f"{vec} run = {zero};")
                with body.maybe_block(f"if ({inside})"):
                    body.out.line(f"run = {load};")
            else:
                body.out.line(f"const {vec} run = {load};")
        with body.maybe_block(_write_test(moves, run.dst_index, inner, body)):
            if dst.buffer.scope == "fragment":
                body.out.line(f"const {ctype}* run_elements = "
                              f"reinterpret_cast<const {ctype}*>(&run);")
                _lanes(body, dst, run.dst_lanes, v, inner,
                       lambda place: place.assign("run_elements[lane]"))
            else:
                target = body.element(dst.buffer, run.dst_index, inner).text
                body.out.line(f"*reinterpret_cast<{vec}*>(&{target}) = run;")


def _lanes(body, region: ir.Region, lane_index, v: int, frame: Frame,
           statement: Callable[[Place], str]) -> None:
    """The statement for the register of each of a run's v elements (lane_index: the
    lowered index of element `lane` of the run), in an unrolled loop over the lanes."""
    inner = Frame(frame.participants, frame.loop_vars,
                  dict(frame.ranges, **{LANE: (0, v - 1)}),
                  dict(frame.c_names, **{LANE: "lane"}))
    body.out.line("#pragma unroll")
    with body.maybe_block(f"for (int lane = 0; lane < {v}; ++lane)"):
        body.out.line(statement(body.place(region.buffer, lane_index, inner)))


def _scalar_copy(body, moves: lowered.CopyMoves, frame: Frame) -> None:
    """One element per (thread, slot) of the copy's partition."""
    stmt = moves.stmt
    src, dst = stmt.src, stmt.dst
    with body.cells(moves.partition, frame, with_replica=moves.one_writer) as inner:
        value = body.element(src.buffer, moves.src_index, inner)
        inside_src = _inside(src, moves.src_index, moves.src_guards, inner, body)
        if inside_src:
            value = C(f"{inside_src} ? {value.text} : {literal(0, src.buffer.dtype).text}",
                      10)
        value = convert(value, src.buffer.dtype, dst.buffer.dtype)
        target = body.place(dst.buffer, moves.dst_index, inner)
        with body.maybe_block(_write_test(moves, moves.dst_index, inner, body)):
            body.out.line(target.assign(value.text))


def render_fill(body, stmt: ir.Fill, frame: Frame) -> None:
    region = stmt.region
    buffer = region.buffer
    value = body.exprs(frame).operand(stmt.value, buffer.dtype).text
    body.out.comment(f"line {stmt.span.line}: T.fill {buffer.name}")
    moves = _lowered(lowered.lower_fill, body, stmt, frame)
    if moves.refused:
        raise Unsupported(moves.refused)
    if moves.partition is None:
        with body.maybe_block(f"for (int element = 0; element < {buffer.size}; "
                               f"++element)"):
            pitch, swizzle = body.plan.pitch(buffer), body.plan.swizzle(buffer)
            at = "element" if pitch is None else \
                f"element / {buffer.shape[1]} * {pitch} + element % {buffer.shape[1]}"
            if swizzle is not None:
                at = swizzled_offset(swizzle, (C(f"element / {buffer.shape[1]}"),
                                               C(f"element % {buffer.shape[1]}")),
                                     None, None).text
            body.out.line(f"{body.buffer(buffer)}[{at}] = {value};")
        return
    body.fence(stmt, "before")
    with body.cells(moves.partition, frame) as inner:
        if moves.in_region:
            inside = _in_region(body, region, moves.index, inner)
        else:
            inside = _inside(region, moves.index, moves.guards, inner, body)
        target = body.place(buffer, moves.index, inner)
        with body.maybe_block(f"if ({inside})" if inside else None):
            body.out.line(target.assign(value))
    body.fence(stmt, "after")


def _write_test(moves: lowered.CopyMoves, dst_ix, frame: Frame, body) -> str | None:
    """The `if` a copy's store sits under: the lowered one-writer test (replica 0) and
    the destination's border test; None when neither applies."""
    tests = [test for test in ("rep == 0" if moves.one_writer else None,
                               _inside(moves.stmt.dst, dst_ix, moves.dst_guards, frame,
                                       body))
             if test]
    return f"if ({' && '.join(tests)})" if tests else None


def _in_region(body, region: ir.Region, loop, frame: Frame) -> str:
    tests = []
    for var, start, extent in zip(loop, region.starts, region.extents):
        s = body.exprs(frame).render(start).text
        v = render_index(var, frame, body.var).text
        tests.append(f"{v} >= {s} && {v} < {s} + {extent}")
    return " && ".join(tests)


def _inside(region: ir.Region, indices, guards, frame: Frame, body) -> str | None:
    """The lowered border tests of a region's element as C, None when there are none."""
    tests = []
    for ix, extent, (low, high) in zip(indices, region.buffer.shape, guards):
        text = render_index(ix, frame, body.var, ranges={}).text
        if low:
            tests.append(f"{text} >= 0")
        if high:
            tests.append(f"{text} < {extent}")
    return " && ".join(tests) or None
