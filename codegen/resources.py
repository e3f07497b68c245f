"""The resource model of a physical plan: the shared memory, registers, threads and grid
one block of the generated kernel asks for, measured against the target's limits.

    resources = plan_resources(plan, target)        # spec.physical.Resources
    diagnostics = resource_diagnostics(plan.func, resources, target)   # R506

It is computed once, by codegen.plan.plan_func, and stored on the plan; the CUDA renderer
declares shared memory at exactly these offsets and the runner launches with exactly
these bytes (neither computes a size again), padded where the plan caps the blocks per
SM (codegen.occupancy, decided once the plan's resources are final). Shared memory holds, in program order,
every `T.alloc_shared` buffer, the stages a pipelined loop adds for the tiles it reads
into fragments, every reducer's finalize workspace and the rows every `T.reduce_*` goes
through; each array starts 16-byte aligned and the total is padded to
16 bytes, which is also how ptxas counts static arrays. Over the static limit (48 KB) the
arrays live in one dynamic buffer instead, which the launch opts into.

Registers are an estimate, for the R506 warning: every reducer partial, seed and local
element gets 32-bit words of its own (they live across loops), a fragment its slots'
bytes packed in words (ptxas forwards values that flow from a copy into arithmetic, and
often keeps no more), plus a fixed overhead for indices, addresses and loop counters.
ptxas decides; its own count is codegen.ptxas (`emit --what plan --ptxas`), and over the
budget it puts arrays in local memory (its stack frame) or spills."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import WARNING, Diagnostic, error
from verify_reducer.spec.physical import PhysicalPlan, RegisterUse, Resources, SharedArray
from verify_reducer.spec.target import Target
from .cuda_collectives import seeded_reducers
from .lower import gemm
from .lower.reduce import lower_reduce

ALIGN = 16                       # bytes: a float4/uint4 access needs it
REGISTER_OVERHEAD = 24           # words for thread/block indices, addresses, loop counters


def element_bytes(dtype) -> int:
    return max(1, dtype.bits // 8)


def plan_resources(plan: PhysicalPlan, target: Target) -> Resources:
    func = plan.func
    kernel = func.kernel
    shared = _shared_arrays(plan)
    total = _align(shared[-1].offset + shared[-1].bytes) if shared else 0
    registers = _register_uses(plan, target)
    grid = tuple(kernel.grid) + (1,) * (3 - len(kernel.grid))
    return Resources(
        target=target.name, threads=kernel.threads, grid=grid, shared=shared,
        shared_bytes=total, dynamic=total > target.static_shared_bytes,
        registers=registers,
        register_words=REGISTER_OVERHEAD + sum(r.words for r in registers),
        register_budget=target.register_budget(kernel.threads))


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def _shared_arrays(plan: PhysicalPlan) -> tuple[SharedArray, ...]:
    reducer_plans = {rp.reducer: rp for rp in plan.reducers}
    wanted = []                                  # (name, what, owner, dtype, elements)
    for stmt in ir.walk(plan.func.kernel.body):
        if isinstance(stmt, ir.Alloc):
            buffer = stmt.buffer
            rp = reducer_plans.get(buffer)
            if buffer.scope == "shared" and not buffer.is_reducer:
                # a pipelined loop's staged buffer: one copy per stage
                stages = plan.stages_of(buffer)
                wanted.append((buffer.name, "shared buffer", buffer, buffer.dtype,
                               stages * plan.shared_elements(buffer)))
            elif rp is not None and rp.workspace_words:
                wanted.append((f"{buffer.name} workspace", "reducer workspace", buffer,
                               buffer.dtype, rp.workspace_words))
        elif isinstance(stmt, ir.SerialFor):
            # a pipeline's stages of the tiles it reads into fragments (StagedRead)
            for buffer in plan.staged_buffers(stmt):
                wanted.append((buffer.name, "shared buffer", buffer, buffer.dtype,
                               plan.stages_of(buffer) * plan.shared_elements(buffer)))
        elif isinstance(stmt, ir.Reduce) and stmt.src.scope == "fragment" and \
                lower_reduce(plan, stmt) is None:
            # every holder of an output reads a whole row: the source goes through
            # shared memory in the destination's dtype (codegen.cuda_reduce); a shared
            # source is read where it is
            wanted.append((f"{stmt.src.name} {stmt.kind} rows", "reduce rows", stmt,
                           stmt.dst.dtype, stmt.src.size))
    # a swizzled buffer (wgmma's operands) first, on a multiple of its swizzle's period:
    # the hardware swizzles absolute addresses (codegen.lower.wgmma)
    wanted.sort(key=lambda w: plan.swizzle(w[2]) is None)
    arrays, offset = [], 0
    for name, what, owner, dtype, elements in wanted:
        size = elements * element_bytes(dtype)
        swizzle = plan.swizzle(owner)
        if swizzle is not None:
            offset = -(-offset // swizzle.align) * swizzle.align
        arrays.append(SharedArray(name, what, owner, dtype, elements, size, offset))
        offset = _align(offset + size)
    return tuple(arrays)


def _register_uses(plan: PhysicalPlan, target: Target) -> tuple[RegisterUse, ...]:
    reducer_plans = {rp.reducer: rp for rp in plan.reducers}
    seeded = seeded_reducers(plan.func)
    uses = []
    for stmt in ir.walk(plan.func.kernel.body):
        if isinstance(stmt, ir.Gemm):
            uses.extend(_mma_operands(plan, stmt, target))
        if not isinstance(stmt, ir.Alloc):
            continue
        buffer = stmt.buffer
        words = -(-element_bytes(buffer.dtype) // 4)
        rp = reducer_plans.get(buffer)
        if rp is not None:
            uses.append(RegisterUse(buffer.name, "reducer partials",
                                    rp.storage.slots_per_thread * words))
            if buffer in seeded:
                uses.append(RegisterUse(buffer.name, "reducer seed", words))
        elif buffer.scope == "fragment" and not buffer.is_reducer:
            # narrow elements counted packed: ptxas keeps fp16 pairs in one register
            # where the values flow straight from a copy into arithmetic
            slots = plan.layouts.fragment(buffer).slots_per_thread
            packed = -(-slots * element_bytes(buffer.dtype) // 4)
            uses.append(RegisterUse(buffer.name, "fragment", packed))
            if plan.prefetched(buffer):     # a pipeline's next tile, in flight
                uses.append(RegisterUse(f"{buffer.name}_next", "prefetch", packed))
        elif buffer.scope == "local":
            uses.append(RegisterUse(buffer.name, "local", buffer.size * words))
    return tuple(uses)


def _mma_operands(plan: PhysicalPlan, stmt: ir.Gemm, target: Target) -> list[RegisterUse]:
    """A tensor-core gemm's registers for one step's shared operands: 4 words per A tile
    and 2 per B tile of the warp (a fragment operand is its own registers, counted with
    the fragment)."""
    try:
        mma = gemm.lower_gemm(plan, stmt, target).mma
    except gemm.Unlowerable:       # refused where the plan is checked (R100)
        return []
    if mma is None:
        return []
    words = sum(op.tiles * op.registers // op.packed for op in (mma.a, mma.b)
                if op.slot is None)
    return [RegisterUse(f"{stmt.a.name}·{stmt.b.name}", "mma operands", words)] if words else []


# ----------------------------------------------------------------------------- limits

def resource_diagnostics(func: ir.PrimFunc, res: Resources,
                         target: Target) -> tuple[Diagnostic, ...]:
    """R506 for what the plan adds to a block: an error when its shared memory is over
    the target's, a warning when the register estimate is over the per-thread budget.
    (Threads and grid extents are the program's own: the frontend checks them against
    the same target table, spec.limits, before anything is planned.)"""
    kernel = func.kernel
    out = []
    if res.shared_bytes > target.dynamic_shared_bytes:
        out.append(_shared_too_large(res, target))
    if res.register_words > res.register_budget:
        biggest = sorted(res.registers, key=lambda r: -r.words)[:3]
        parts = ", ".join(f"{r.name} {r.what} {r.words}" for r in biggest)
        out.append(Diagnostic(
            "R506", WARNING,
            f"about {res.register_words} registers per thread ({parts}, ...) exceed the "
            f"budget of {res.register_budget} for {res.threads} threads on {target.name}: "
            f"expect ptxas to keep arrays in local memory or spill (correct, but slower)",
            kernel.span,
            hint="fewer elements per thread: smaller tiles or more threads"))
    return tuple(out)


def _shared_too_large(res: Resources, target: Target) -> Diagnostic:
    biggest = max(res.shared, key=lambda a: a.bytes)
    parts = ", ".join(f"{a.name} {kib(a.bytes)}" for a in
                      sorted(res.shared, key=lambda a: -a.bytes))
    return error(
        "R506", f"shared memory {kib(res.shared_bytes)} ({parts}) exceeds the "
                f"{kib(target.dynamic_shared_bytes)} a block can have on {target.name}",
        biggest.owner.span,
        hint="use smaller tiles (the shapes of the shared buffers and of the reducers "
             "whose finalize goes through a workspace)")


def kib(n: int) -> str:
    """Bytes as people read them: `300 KB`, `32.1 KB`, `640 bytes`."""
    if n < 1024:
        return f"{n} bytes"
    if n >= 2**60:                      # past float's exact range: whole kilobytes
        return f"{n // 1024} KB"
    value = n / 1024
    return f"{value:.0f} KB" if value == int(value) else f"{value:.1f} KB"
