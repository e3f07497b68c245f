"""A pipelined `T.Pipelined` loop as CUDA (the schedule is spec.physical.Pipeline's,
decided by codegen.pipeline; interp.simulate executes the same one).

    // prologue: iterations 0 .. ahead-1 issue their tiles, one commit group each
    for (ko = start; ko < stop; ++ko) {
      if (ko + ahead < stop) issue the tiles of iteration ko + ahead;  // its stage
      commit;                       // one group per iteration, empty past the end
      wait until at most `pending` groups of this thread are outstanding;
      __syncthreads();              // every thread's copies of this stage landed
      the rest of the body, reading stage (ko - start) % stages;
      __syncthreads();              // every read of the stage is done before a refill
    }

or, with `refill_after` (the stage released as soon as it has been read; ahead = stages):

    for (ko = start; ko < stop; ++ko) {
      wait until at most `pending` groups are outstanding; __syncthreads();
      the body up to and including refill_after, reading stage (ko - start) % stages;
      __syncthreads();              // every read of the stage is done
      if (ko + ahead < stop) issue iteration ko + ahead into that stage; commit;
      the rest of the body, with `stages` tiles in flight
    }

A tile goes out as one cp.async of 16 bytes per run of the copy's layout (the runs
codegen.cuda_vector proves aligned), into the stage's copy of the shared buffer at
element offset stage * buffer.size. A staged read's tile goes out the same way, into its
stage buffer; where its copy stands, the body reads the fragment from that stage.
The barriers are the plan's (codegen.plan_barriers places them as drawn above)."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.physical import Pipeline, PhysicalPlan

from .cuda_access import Frame
from .lower.copies import region_element, run_start
from .plan_text import pipeline_summary
from .lower.copies import copy_runs
from .layout_copy import vector_elements


def plain_reason(plan: PhysicalPlan, loop: ir.SerialFor) -> str:
    """`: why` for a T.Pipelined loop that runs plainly (the plan says why)."""
    found = next((p for p in plan.pipelines if p.loop is loop), None)
    return f" ({found.plain})" if found is not None and found.plain else ""


def render_pipeline(body, pipe: Pipeline, frame: Frame) -> None:
    loop = pipe.loop
    start, stop = int(loop.start.value), int(loop.stop.value)
    var = body.var(loop.var.name)
    ctype = loop.var.dtype.c_name
    body.out.comment(f"line {loop.span.line}: T.Pipelined (num_stages={pipe.stages}) as a "
                     f"software pipeline: {pipeline_summary(pipe)}")
    body.fence(loop, "before")
    for i in range(pipe.ahead if pipe.issues else 0):
        body.out.comment(f"prologue: the tiles of iteration {i}")
        if start + i < stop:
            with body.maybe_block(""):
                _issue(body, pipe, frame, f"{start + i}", ctype)
        body.out.line("reducer_cp_async_commit();")
    if pipe.prefetched:
        body.out.comment("prologue: the registers of iteration 0")
        with body.maybe_block(""):
            _prefetch(body, pipe, frame, f"{start}", ctype)
    early = pipe.refill_after is not None
    with body.maybe_block(f"for ({ctype} {var} = {start}; {var} < {stop}; ++{var})"):
        if pipe.issues:
            if not early:
                _refill(body, pipe, frame, var, ctype, stop)
            body.out.line(f"reducer_cp_async_wait<{pipe.pending}>();")
            body.fence(loop, "landed")
        previous = dict(body.stage_base)
        _stage_bases(body, pipe, var, "stage")
        for stmt in loop.body:
            if stmt in pipe.copies:
                continue                  # issued ahead
            if stmt in pipe.prefetched:
                _advance(body, pipe, stmt, frame, f"{var} + 1", ctype, stop)
            else:
                body.stmt(pipe.stand_in(stmt), frame)
            if stmt is pipe.refill_after:
                body.fence(loop, "refill")
                _refill(body, pipe, frame, var, ctype, stop)
        body.stage_base = previous
        body.fence(loop, "released")


def _refill(body, pipe: Pipeline, frame: Frame, var: str, ctype: str, stop: int) -> None:
    """Iteration var + ahead's tiles issued, then this iteration's commit group."""
    with body.maybe_block(f"if ({var} + {pipe.ahead} < {stop})"):
        _issue(body, pipe, frame, f"{var} + {pipe.ahead}", ctype)
    body.out.line("reducer_cp_async_commit();")


def _prefetch(body, pipe: Pipeline, frame: Frame, iteration: str, ctype: str,
              copies=None) -> None:
    """The prefetched copies of one iteration (`iteration`, C text) into the `_next`
    registers."""
    loop = pipe.loop
    ahead = f"{body.var(loop.var.name)}_next"
    body.out.line(f"const {ctype} {ahead} = {iteration};")
    previous = dict(body.redirected), dict(body.rebound)
    body.rebound[loop.var.name] = ahead
    for copy in copies or pipe.prefetched:
        body.redirected[copy.dst.buffer] = body.next_tile(copy.dst.buffer)
        body.stmt(copy, frame)
    body.redirected, body.rebound = previous


def _advance(body, pipe: Pipeline, copy: ir.Copy, frame: Frame, following: str,
             ctype: str, stop: int) -> None:
    """Where a prefetched copy stands: its registers, loaded an iteration ago, move into
    the fragment, and the next iteration's load goes out."""
    dst = copy.dst.buffer
    name, spare = body.buffer(dst), body.next_tile(dst)
    slots = body.layouts.fragment(dst).slots_per_thread
    body.out.comment(f"line {copy.span.line}: T.copy {copy.src.buffer.name} -> {dst.name}, "
                     f"loaded an iteration ago into {spare}")
    body.out.line("#pragma unroll")
    with body.maybe_block(f"for (int slot = 0; slot < {slots}; ++slot)"):
        body.out.line(f"{name}[slot] = {spare}[slot];")
    with body.maybe_block(f"if ({following} < {stop})"):
        _prefetch(body, pipe, frame, following, ctype, (copy,))


def _stage_bases(body, pipe: Pipeline, iteration: str, role: str) -> None:
    """Declares `<buffer>_<role>`, the element offset of iteration's stage of every
    staged buffer, and makes the buffers' accesses use it."""
    start = int(pipe.loop.start.value)
    for buffer in pipe.buffers:
        base = f"{body.buffer(buffer)}_{role}"
        body.out.line(f"const int {base} = (({iteration} - {start}) % {pipe.stages}) * "
                      f"{buffer.size};")
        body.stage_base[buffer] = base


def _issue(body, pipe: Pipeline, frame: Frame, iteration: str, ctype: str) -> None:
    """The copies of one later iteration (`iteration`, C text) into its stage."""
    loop = pipe.loop
    ahead = f"{body.var(loop.var.name)}_ahead"
    body.out.line(f"const {ctype} {ahead} = {iteration};")
    previous = dict(body.stage_base), dict(body.rebound)
    body.rebound[loop.var.name] = ahead
    _stage_bases(body, pipe, ahead, "fill")
    for copy in pipe.issues:
        _async_copy(body, copy, frame)
    body.stage_base, body.rebound = previous


def _async_copy(body, copy: ir.Copy, frame: Frame) -> None:
    layout = body.layouts.copies[copy]
    runs = copy_runs(copy, layout, body.scopes[copy])
    assert runs is not None, "codegen.pipeline stages only copies of 16-byte runs"
    v = vector_elements(copy.dst.buffer.dtype)
    one_writer = layout.replicate > 1
    body.out.comment(f"line {copy.span.line}: T.copy {copy.src.buffer.name} -> "
                     f"{copy.dst.buffer.name} as cp.async of {v} elements: "
                     f"{layout.describe()}")
    first = run_start(runs, v)
    with body.cells(runs, frame, with_replica=one_writer) as inner:
        src = body.element(copy.src.buffer, region_element(copy.src, layout.shape, first),
                           inner).text
        dst = body.place(copy.dst.buffer, region_element(copy.dst, layout.shape, first),
                         inner).read.text
        with body.maybe_block("if (rep == 0)" if one_writer else None):
            body.out.line(f"reducer_cp_async16(&{dst}, &{src});")
