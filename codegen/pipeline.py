"""Which `T.Pipelined` loops run as software pipelines (spec.physical.Pipeline).

A `T.Pipelined(n, num_stages=s)` loop is pipelined, TileLang's way, when the global →
shared copies at the top of its body can be issued ahead of the iterations that read
them, as cp.async 16-byte copies, without changing what any statement reads:

- the target has asynchronous copies (sm_80 and later), s >= 2, the loop has a constant
  start, step 1 and a constant stop past the start or one read at run time from the
  block indices (bounded over the grid: a causal attention's), and it is not inside a
  `T.ws` warp group;
- each staged copy is a statement of the loop body (not nested) from a global tensor to
  a whole shared buffer that is allocated outside the loop, written by no other
  statement, and read only inside the loop after the copy (a later iteration's tile is
  then never read in place of an earlier one's);
- no statement of the kernel writes the global tensor (reading it early sees the same
  values);
- the copy runs over every thread of the block as 16-byte runs (codegen.cuda_vector:
  aligned for every block and loop index, no border guard inside a run), and needs no
  border guard at all: cp.async of a run past the tensor's border would fault.

A global → fragment copy at the top level of the loop body can be loaded ahead when the
kernel never writes its source, it fills the whole fragment, and its region starts read
only the loop variable and names fixed outside the loop (block indices, enclosing loop
variables). It is then **staged through shared memory** (spec.physical.StagedRead): its
tile goes out with the shared tiles as cp.async, into a stage buffer of the plan's own,
and where the copy stands the fragment is read from the stage. That needs what a staged
copy needs (16-byte runs over the block's threads, no border guard) and room in shared
memory; otherwise the tile is **prefetched** one iteration ahead into a second register
array. (Measured on the H200, docs/performance.md: a register load in flight across the
iteration made ptxas's schedule, and with it the GEMV, up to 20% slower for some dtypes
and tilings; through the stage, no load is in flight outside the cp.async groups.)

Anything else runs as a plain loop, and the plan says why. Copies that are not eligible
run where they stand; the eligible ones of the same loop are still staged. (codegen.plan
turns staged reads into prefetches, then drops the stages, when they would not fit shared
memory, and drops prefetches that would not fit the register budget.)

The schedule: `pending` = s - 1 groups left outstanding at the wait (s - 2 where the
refill waits for the "landed" barrier, below). Where the body's
last read of a staged buffer is followed by more statements (the GEMV copies its tile
into registers, then computes), the stage is released right after that read and refilled
with iteration i + s (`refill_after`; `ahead` = s), so the computation runs with s tiles
in flight, as TileLang's warp-specialized pipeline does; otherwise iteration i issues
i + s - 1 at its top (`ahead` = s - 1). Where the body ends with a T.gemm on the tiles,
that issue comes right after the "landed" barrier instead (`refill_at_landed`): the
barrier then also releases the stage of iteration i - 1, the one refilled, and the
iteration needs no second barrier. The simulator checks every order like everything
else: a read of a stage before its copies completed is R504 there, and a refill racing
a read of its stage is a race."""
from __future__ import annotations

import dataclasses
import math

from verify_reducer.spec import ir
from verify_reducer.spec.addressing import (affine, border_guards, loop_variable_range,
                                             statement_ranges)
from verify_reducer.spec.dtypes import INT32
from verify_reducer.spec.physical import Pipeline, StagedRead
from verify_reducer.spec.target import Target

from .lower.copies import copy_runs
from .layout import LayoutMap
from .layout_copy import cooperative_layout


def plan_pipelines(func: ir.PrimFunc, layouts: LayoutMap,
                   target: Target) -> tuple[tuple[Pipeline, ...], LayoutMap]:
    """A Pipeline for every T.Pipelined loop of func (empty `copies` and the reason when
    it runs as a plain loop), and the layouts with those of the staged reads' copies
    added (a new LayoutMap: the one given may serve other plans)."""
    scopes = statement_ranges(func)
    kernel = func.kernel
    outer = _enclosing(kernel.body)
    planned = LayoutMap(**{f.name: dict(getattr(layouts, f.name))
                           for f in dataclasses.fields(LayoutMap) if f.init})
    found = []
    for stmt in ir.walk(kernel.body):
        if isinstance(stmt, ir.SerialFor) and stmt.kind == "pipelined":
            found.append(_pipeline(func, stmt, planned, target, scopes, outer))
    return tuple(found), planned


def prefetch_instead(pipe: Pipeline) -> Pipeline:
    """pipe with its staged reads prefetched into registers instead (they take no
    shared memory then); the stage is released where the shared tiles' last read is."""
    copies = [s.copy for s in pipe.staged_reads]
    if not copies:
        return pipe
    refill = _release_point(pipe.loop.body, list(pipe.copies), ())
    return dataclasses.replace(
        pipe, staged_reads=(), prefetched=tuple(s for s in pipe.loop.body
                                                if s in copies or s in pipe.prefetched),
        refill_after=refill, ahead=pipe.stages if refill is not None else pipe.stages - 1)


def _pipeline(func, loop: ir.SerialFor, layouts: LayoutMap, target: Target, scopes,
              outer) -> Pipeline:
    stages = loop.num_stages or 1
    ahead = stages - 1

    def plain(why: str) -> Pipeline:
        return Pipeline(loop, stages, ahead, ahead, (), why)

    if not target.async_copy:
        return plain(f"{target.name} has no asynchronous copies (cp.async needs sm_80)")
    if stages < 2:
        return plain("num_stages is below 2")
    if not isinstance(loop.start, ir.Const) or loop.step != 1:
        return plain("the loop's start is not a constant, or its step is not 1")
    if isinstance(loop.stop, ir.Const) and int(loop.stop.value) <= int(loop.start.value):
        return plain("the loop has no iteration")
    if not isinstance(loop.stop, ir.Const) and not _bounded(loop, scopes):
        return plain("the loop's stop is read at run time and not bounded by the block "
                     "indices")
    if any(isinstance(s, ir.WarpGroup) for s in outer[loop]):
        return plain("the loop is inside a T.ws warp group")
    copies = []
    why = ""
    for n, stmt in enumerate(loop.body):
        if not (isinstance(stmt, ir.Copy) and stmt.src.buffer.scope == "global"
                and stmt.dst.buffer.scope == "shared"):
            continue
        refused = _refusal(func, loop, stmt, layouts, scopes, outer) or \
            _read_before(loop.body[:n], stmt)
        if refused:
            why = why or refused
        else:
            copies.append(stmt)
    why = why or "its body has no global -> shared copy"
    # registers are loaded ahead only over a constant stop: the prologue's load of the
    # first iteration is not guarded, and a block may run none
    loaded = [s for s in loop.body if isinstance(s, ir.Copy) and s not in copies
              and isinstance(loop.stop, ir.Const) and _prefetchable(func, loop, s, scopes)]
    staged = tuple(found for found in (_staged_read(func, s, layouts, scopes)
                                       for s in loaded) if found is not None)
    prefetched = tuple(s for s in loaded if all(r.copy is not s for r in staged))
    if not copies and not staged and not prefetched:
        return plain(why + "; no global -> fragment copy to prefetch")
    refill = _release_point(loop.body, copies, staged)
    if refill is not None:
        ahead = stages          # the stage just read is refilled with iteration i + stages
    # a staged read is read where its copy stands, like an earlier gemm's tile: top order
    at_landed = refill is None and not prefetched and not staged and \
        _feeds_gemm(loop.body, copies)
    # `plain` keeps why nothing is staged when only registers are prefetched
    return Pipeline(loop, stages, ahead, stages - 2 if at_landed else stages - 1,
                    tuple(copies), "" if copies else why, prefetched, refill, staged,
                    refill_at_landed=at_landed)


def _feeds_gemm(body: ir.Body, copies: list[ir.Copy]) -> bool:
    """Whether the tiles feed one T.gemm, the body's last statement, and nothing else
    reads them: the refill can then wait for the "landed" barrier
    (spec.physical.Pipeline.refill_at_landed), which spares the iteration its second
    barrier, and go out while that gemm runs. Where an earlier statement reads a tile
    (an attention's first gemm reads K, its last V), the next iteration needs its tiles
    early: issued at the top, they have the whole iteration to land (measured on the
    H200: refilled at the last gemm, the 2-stage attention lost 9 %); where the body
    only moves its tiles on (a GEMV's copy into registers), issuing before the wait
    keeps one more tile in flight."""
    staged = {c.dst.buffer for c in copies}
    if not body or not isinstance(body[-1], ir.Gemm) or not staged & {body[-1].a, body[-1].b}:
        return False
    return not any(staged & ir.read_buffers(s) for stmt in body[:-1] if stmt not in copies
                   for s in ir.walk((stmt,)))


def _bounded(loop: ir.SerialFor, scopes) -> bool:
    """Whether a loop whose stop is read at run time has a loop variable bounded on
    both sides (spec.addressing: the largest stop over the grid, where it reads only
    block indices): its iterations are then guarded against the stop at run time, and
    the copies' border guards are decided over that range. A block whose stop is at or
    below the start runs no iteration and issues nothing."""
    found = loop_variable_range(scopes, loop)
    return found is not None and math.isfinite(found[1])


def _staged_read(func, copy: ir.Copy, layouts: LayoutMap, scopes) -> StagedRead | None:
    """copy (a prefetchable global -> fragment copy) staged through a shared buffer of
    its tile, when the tile can go out as cp.async over every thread; its two copies'
    layouts and ranges are added to layouts and scopes."""
    threads = func.kernel.threads
    if layouts.participants.get(copy) != (0, threads):
        return None
    src, dst = copy.src, copy.dst
    extents = tuple(int(e) for e in src.extents)
    stage = ir.Buffer(f"{dst.buffer.name}_stage", extents, src.buffer.dtype, "shared",
                      copy.span)
    whole = ir.Region(stage, tuple(ir.Const(0, INT32, copy.span) for _ in extents),
                      extents, copy.span)
    issue = ir.Copy(src, whole, copy.span)
    read = ir.Copy(whole, dst, copy.span)
    layout = cooperative_layout(issue, (0, threads))
    scope = scopes[copy]
    if copy_runs(issue, layout, scope) is None:
        return None
    if any(any(g) for g in border_guards(src, tuple(affine(s) for s in src.starts),
                                         layout.shape, scope)):
        return None
    layouts.copies[issue], layouts.participants[issue] = layout, (0, threads)
    layouts.copies[read] = layouts.copies[copy]
    layouts.participants[read] = layouts.participants[copy]
    return StagedRead(copy, stage, issue, read)


def _release_point(body: ir.Body, copies: list[ir.Copy],
                   staged_reads: tuple[StagedRead, ...]) -> ir.Stmt | None:
    """The top-level statement of the body after which no statement reads a staged
    buffer (the stage can be refilled there), or None when that is the body's last
    statement (or nothing reads one): releasing it early would gain nothing. A staged
    read's copy reads its stage."""
    staged = {c.dst.buffer for c in copies}
    readers = [n for n, stmt in enumerate(body) if stmt not in copies and (
        any(r.copy is stmt for r in staged_reads) or
        any(staged & ir.read_buffers(s) for s in ir.walk((stmt,))))]
    if not readers or readers[-1] == len(body) - 1:
        return None
    return body[readers[-1]]


def _read_before(earlier: ir.Body, copy: ir.Copy) -> str:
    """Why a copy cannot be issued at the top of the iteration: a statement before it
    reads its buffer (and would then see this iteration's tile, not the last one's)."""
    for stmt in ir.walk(earlier):
        if copy.dst.buffer in ir.read_buffers(stmt) | ir.written_buffers(stmt):
            return (f"{copy.dst.buffer.name} is used at line {stmt.span.line}, before the "
                    f"copy at line {copy.span.line}")
    return ""


def _prefetchable(func, loop: ir.SerialFor, copy: ir.Copy, scopes) -> bool:
    src, dst = copy.src, copy.dst
    if src.buffer.scope != "global" or dst.buffer.scope != "fragment" or \
            dst.buffer.is_reducer or tuple(dst.extents) != tuple(dst.buffer.shape):
        return False
    if any(src.buffer in ir.written_buffers(s) for s in ir.walk(func.kernel.body)):
        return False
    # the starts of iteration i + 1 are those of i with the loop variable moved on
    known = set(scopes[loop]) | {loop.var.name}
    names = {e.name for x in src.starts for e in ir.subexprs(x) if isinstance(e, ir.Var)}
    return names <= known


def _refusal(func, loop: ir.SerialFor, copy: ir.Copy, layouts: LayoutMap, scopes,
             outer) -> str:
    """Why copy cannot be staged ahead (empty: it can)."""
    src, dst = copy.src, copy.dst
    line = f"the copy at line {copy.span.line}"
    if tuple(dst.extents) != tuple(dst.buffer.shape):
        return f"{line} does not fill the whole of {dst.buffer.name}"
    body = func.kernel.body
    alloc = next(s for s in ir.walk(body) if isinstance(s, ir.Alloc) and s.buffer is dst.buffer)
    if loop in outer[alloc]:
        return f"{dst.buffer.name} is allocated inside the loop"
    for stmt in ir.walk(body):
        if stmt is copy:
            continue
        if dst.buffer in ir.written_buffers(stmt):
            return f"{dst.buffer.name} is written by another statement (line {stmt.span.line})"
        if dst.buffer in ir.read_buffers(stmt) and loop not in outer[stmt]:
            return f"{dst.buffer.name} is read outside the loop (line {stmt.span.line})"
        if src.buffer in ir.written_buffers(stmt):
            return f"{src.buffer.name} is written by the kernel (line {stmt.span.line})"
    offset, count = layouts.participants[copy]
    if (offset, count) != (0, func.kernel.threads):
        return f"{line} does not run on every thread of the block"
    layout = layouts.copies.get(copy)
    if layout is None or copy_runs(copy, layout, scopes[copy]) is None:
        return f"{line} cannot move 16 bytes per access (cp.async)"
    starts = tuple(affine(s) for s in src.starts)
    if any(any(g) for g in border_guards(src, starts, layout.shape, scopes[copy])):
        return f"{line} needs a border guard on {src.buffer.name}"
    return ""


def _enclosing(body: ir.Body, around: tuple = ()) -> dict[ir.Stmt, tuple[ir.Stmt, ...]]:
    """Every statement's enclosing statements, outermost first."""
    out = {}
    for stmt in body:
        out[stmt] = around
        for sub in ir.children(stmt):
            out.update(_enclosing(sub, around + (stmt,)))
    return out

