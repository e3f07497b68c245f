"""Every barrier of a kernel body, decided once, as plan data (spec.physical.BodyBarriers):
the first piece of the thread-level lowering. The CUDA renderer prints exactly these
(codegen.cuda_stmts.KernelBody.fence) and the simulator passes exactly these, feeding
its race tracking of every shared buffer (interp.simulate), so a barrier missing from
the plan is a race the simulator reports (R504), not one only the GPU would show.

    plan_barriers(plan) -> BodyBarriers
    one_writer_loops(plan) -> the T.Parallel loops run by their replica 0 only

The rules, statement by statement, with the participant set of the statement's frame
(the block, or a T.ws warp group's threads):

- a statement that writes shared memory (a T.Parallel whose body stores into it, a
  store into it outside any T.Parallel, a T.copy or T.fill into it, a T.ws group whose
  body writes it, a finalize into a shared destination) is fenced: a barrier before (earlier readers of the old contents are
  done) and after (the new contents are visible); a T.ws group only after (its body's
  statements fence themselves inside the group);
- `T.reduce_*` goes through shared memory: from a fragment, its rows are written after a
  barrier and read after another ("staged"); from a shared tile, a barrier first (the
  tile is complete); into a shared destination, a barrier after; a fragment folded
  into a fragment by warp shuffles (codegen.lower.reduce) has none;
- a pipelined loop (spec.physical.Pipeline) issuing cp.async: a barrier before its
  prologue, then per iteration one after the wait ("landed"), and one where the stage is
  released: after `refill_after` ("refill") or at the iteration's end ("released"),
  or, with `refill_at_landed`, by the landed barrier itself (it follows the previous
  iteration's reads, and the refill follows it);
- no barrier under a thread-dependent `if` (not every participant could arrive), except a
  pipeline's own, which runs for the whole block wherever it stands;
- in a plan that swizzles shared operands for wgmma (PhysicalPlan.swizzles), every
  barrier first fences its threads' shared writes for the async proxy, through which a
  wgmma reads (BodyBarrier.async_proxy): whichever write a wgmma after it reads, the
  barrier that orders the two is one of them;
- the whole block's barrier is `__syncthreads` (id 0); a warp group's is a named barrier:
  the one its own finalizes use when they are over the same threads (those threads run
  them one after the other), else the lowest free id (None when all 15 are taken: the
  renderer refuses the kernel, the simulator still passes it)."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.physical import BodyBarrier, BodyBarriers, PhysicalPlan

from .lower.reduce import lower_reduce

NAMED_BARRIERS = 16                   # the hardware's; 0 is __syncthreads


def plan_barriers(plan: PhysicalPlan) -> BodyBarriers:
    walk = _Walk(plan)
    walk.body(plan.func.kernel.body, (0, plan.func.kernel.threads))
    return BodyBarriers(tuple(walk.found))


class _Walk:
    """The kernel body in the renderer's order (which fixes the named barrier ids)."""

    def __init__(self, plan: PhysicalPlan):
        self.plan = plan
        self.threads = plan.func.kernel.threads
        self.found: list[BodyBarrier] = []
        self.divergent = 0                           # depth of thread-dependent ifs
        self.thread_names: set[str] = set()          # Let names that hold a thread index
        self.in_parallel = False     # inside a T.Parallel, which is fenced as a whole
        self.owners = {fp.barrier_id: rp.participants for rp in plan.reducers
                       for fp in rp.finalizes}

    def fence(self, stmt: ir.Stmt, where: str, participants: tuple[int, int],
              why: str, always: bool = False) -> None:
        if self.divergent and not always:
            return
        self.found.append(BodyBarrier(stmt, where, participants,
                                      self.barrier_id(participants), why,
                                      async_proxy=bool(self.plan.swizzles)))

    def barrier_id(self, participants: tuple[int, int]) -> int | None:
        if participants[1] == self.threads:
            return 0
        for bid, owner in sorted(self.owners.items()):
            if owner == participants:
                return bid
        for bid in range(1, NAMED_BARRIERS):
            if bid not in self.owners:
                self.owners[bid] = participants
                return bid
        return None

    def body(self, stmts: ir.Body, participants: tuple[int, int]) -> None:
        for stmt in stmts:
            self.stmt(stmt, participants)

    def stmt(self, stmt: ir.Stmt, participants: tuple[int, int]) -> None:
        if isinstance(stmt, ir.Let) and self.reads_thread(stmt.value):
            self.thread_names.add(stmt.var.name)     # `tk = T.get_thread_binding(1)`
        if isinstance(stmt, ir.If):
            divergent = self.reads_thread(stmt.cond)
            self.divergent += divergent
            self.body(stmt.then, participants)
            self.body(stmt.orelse, participants)
            self.divergent -= divergent
        elif isinstance(stmt, ir.SerialFor):
            pipe = self.plan.pipeline(stmt)
            if pipe is not None:
                self.pipeline(pipe, participants)
            else:
                self.body(stmt.body, participants)
        elif isinstance(stmt, ir.WarpGroup):
            if stmt.body:
                self.body(stmt.body, self.plan.layouts.participants[stmt.body[0]])
            if writes_shared(stmt.body):
                self.fence(stmt, "after", participants,
                           "the warp group's shared writes are visible")
        elif isinstance(stmt, ir.ParallelFor):
            shared = writes_shared(stmt.body)
            if shared:
                self.fence(stmt, "before", participants,
                           "earlier readers of shared memory are done")
            self.in_parallel = True
            self.body(stmt.body, participants)
            self.in_parallel = False
            if shared:
                self.fence(stmt, "after", participants, "the shared writes are visible")
        elif isinstance(stmt, (ir.Store, ir.AtomicUpdate)) and \
                stmt.buffer.scope == "shared" and not self.in_parallel:
            # every participant runs it (TileLang's ThreadSync fences it the same way)
            self.fence(stmt, "before", participants,
                       "earlier readers of shared memory are done")
            self.fence(stmt, "after", participants, "the shared write is visible")
        elif isinstance(stmt, ir.Copy) and stmt.dst.buffer.scope == "shared":
            self.fence(stmt, "before", participants,
                       "earlier readers of shared memory are done")
            self.fence(stmt, "after", participants, "the copy into shared memory is visible")
        elif isinstance(stmt, ir.Fill) and stmt.region.buffer.scope == "shared":
            self.fence(stmt, "before", participants,
                       "earlier readers of shared memory are done")
            self.fence(stmt, "after", participants, "the fill of shared memory is visible")
        elif isinstance(stmt, ir.Reduce):
            self.reduce(stmt, participants)
        elif isinstance(stmt, ir.ReducerFinalize) and stmt.dst is not None and \
                stmt.dst.scope == "shared":
            name = stmt.dst.name
            self.fence(stmt, "before", participants, f"earlier readers of {name} are done")
            self.fence(stmt, "after", participants, f"{name} is visible")

    def reads_thread(self, expr: ir.Expr) -> bool:
        return any(isinstance(s, ir.ThreadBinding) or
                   (isinstance(s, ir.Var) and s.name in self.thread_names)
                   for s in ir.subexprs(expr))

    def reduce(self, stmt: ir.Reduce, participants: tuple[int, int]) -> None:
        """codegen.cuda_reduce's shared memory: a fragment source's rows, or a shared
        source read in place; a shared destination."""
        src, dst = stmt.src, stmt.dst
        if lower_reduce(self.plan, stmt) is not None:
            return                    # registers and warp shuffles only
        if src.scope == "fragment":
            # {rows}: the rows' C name, which only the renderer gives (BodyBarrier)
            self.fence(stmt, "before", participants, "earlier readers of {rows} are done")
            self.fence(stmt, "staged", participants, "{rows} is complete")
        elif src.scope == "shared":
            self.fence(stmt, "before", participants, f"{src.name} is complete")
        else:
            return                    # a thread's own local copy: no shared memory
        if dst.scope == "shared":
            self.fence(stmt, "after", participants, f"{dst.name} is visible")

    def pipeline(self, pipe, participants: tuple[int, int]) -> None:
        loop = pipe.loop
        if pipe.issues:
            self.fence(loop, "before", participants, "earlier readers of the stages are done")
            self.fence(loop, "landed", (0, self.threads),
                       "every thread's tiles of this stage have landed, and the stage "
                       "refilled next is no longer read" if pipe.refill_at_landed else
                       "every thread's tiles of this stage have landed", always=True)
        for stmt in loop.body:
            if stmt not in pipe.copies and stmt not in pipe.prefetched:
                self.stmt(pipe.stand_in(stmt), participants)
            if stmt is pipe.refill_after:
                self.fence(loop, "refill", (0, self.threads),
                           "every read of this stage is done: refill it now", always=True)
        if pipe.issues and pipe.refill_after is None and not pipe.refill_at_landed:
            self.fence(loop, "released", (0, self.threads),
                       "every read of this stage is done before it is refilled", always=True)


def one_writer_loops(plan: PhysicalPlan) -> tuple[ir.ParallelFor, ...]:
    """The T.Parallel loops with a replicated layout whose body writes shared memory and
    nothing a replica holds of its own (only shared and global stores): every replica
    would update each shared element, and an update that reads it (`S[i] *= x`) would
    race with another replica's write. Replica 0 alone runs such a body, as a copy's
    replica 0 alone writes memory."""
    found = []
    for stmt in ir.walk(plan.func.kernel.body):
        if isinstance(stmt, ir.ParallelFor) and plan.layouts.loop(stmt).replicate > 1 and \
                writes_shared(stmt.body) and \
                all(isinstance(s, (ir.Store, ir.Let, ir.If)) for s in ir.walk(stmt.body)) and \
                all(s.buffer.scope in ("shared", "global") for s in ir.walk(stmt.body)
                    if isinstance(s, ir.Store)):
            found.append(stmt)
    return tuple(found)


def writes_shared(body: ir.Body) -> bool:
    for stmt in ir.walk(body):
        if isinstance(stmt, (ir.Store, ir.AtomicUpdate)) and stmt.buffer.scope == "shared":
            return True
        if isinstance(stmt, ir.Copy) and stmt.dst.buffer.scope == "shared":
            return True
        if isinstance(stmt, ir.Fill) and stmt.region.buffer.scope == "shared":
            return True
        if isinstance(stmt, ir.ReducerFinalize) and stmt.dst is not None and \
                stmt.dst.scope == "shared":
            return True
    return False
