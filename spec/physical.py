"""The physical plan: plain data that says how a kernel's reducers are lowered onto
threads. The simulator (interp.simulate) and the CUDA renderer (codegen.cuda) both
execute exactly this data; no lowering decision is made twice.

Ordinary work (copies, fragment writes, T.reduce_*) is placed by the layouts of
`layouts` (a LayoutMap: every fragment, T.Parallel loop, copy and update site's layout).
Its barriers (around shared-memory writes, a pipeline's) are `barriers` (BodyBarriers),
decided once by codegen.plan_barriers; the collectives' own are steps (below).
Reducer work is placed by one `ReducerPlan` per reducer buffer (all its epochs share it):

- `storage`: where the partials live — a Layout over the reducer's logical shape whose
  replicas are the partial copies (canonical/legacy: every participant holds every output;
  fast: the outputs of the thread's group only);
- one `SitePlan` per update site: whether only replica `guard_replica` of the site's loop
  contributes (canonical) or every replica does (fast, legacy);
- per finalize site a `FinalizePlan`: chunks of partial slots, each reduced by a sequence
  of `Step`s (shuffles, workspace stores/reduces/loads, named barriers); then the seed is
  combined once per output and the result is written to the destination;
- `chosen_by` (`ChosenBy`): the proofs and the refusal the plan was chosen by, which
  the reports read from the plan.

Steps speak about a thread `t` relative to the participant offset, a partial slot `s`
(the slot being processed: a step runs once per slot of its chunk unless it says
otherwise) and, inside a reduction, a term `k`. Their index expressions are
spec.indexexpr expressions over those names (constants for the rest), so both consumers
evaluate them the same way: numpy in the simulator, C in the renderer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .addressing import statement_ranges
from .diagnostics import Diagnostic
from .hashing import hashed_once
from .indexexpr import IndexExpr
from .ir import (Buffer, Copy, PrimFunc, Raster, ReducerFinalize, ReducerUpdate, SerialFor,
                 Stmt)
from .layout import Layout

# Names the step expressions may use.
T, S, K = "t", "s", "k"
# The term of a publication's address (its other names are the reducer's index
# variables i, j, k, ..., so it cannot be K).
TERM = "term"


@dataclass(frozen=True)
class Guard:
    """`expr(t) op value`, op "==" or "<": which participants take part in a step."""
    expr: IndexExpr
    op: str
    value: int


Guards = tuple[Guard, ...]           # a conjunction; () means every participant


@dataclass(frozen=True)
class Shuffle:
    """Every participant: P[t, s] = P[t, s] ⊕ shfl_xor(P[t, s], mask). All 32 lanes of
    each warp must execute it (R501 otherwise); mask < 32."""
    mask: int
    guards: Guards = ()


def warp_arrivals(threads: int) -> int:
    """The operand of `bar.sync id, n` for `threads` participants starting at a warp
    boundary: the hardware counts a barrier per warp, each arriving warp adding 32 whatever
    its active lanes, and n must be a multiple of 32. A block of 4 threads is one warp:
    `bar.sync id, 4` is an illegal instruction on the H200, `bar.sync id, 32` is right."""
    return -(-threads // 32) * 32


@dataclass(frozen=True)
class Barrier:
    """Named barrier `bar.sync id, count`: completes only when exactly `count` threads
    arrive (R500 otherwise). The participants satisfying guards arrive. The instruction
    names `arrivals` (count rounded up to whole warps, `warp_arrivals`)."""
    id: int
    count: int
    guards: Guards = ()

    @property
    def arrivals(self) -> int:
        return warp_arrivals(self.count)


@dataclass(frozen=True)
class ToWorkspace:
    """W[addr(t, s)] = P[t, s] for the participants satisfying guards."""
    addr: IndexExpr
    guards: Guards = ()


@dataclass(frozen=True)
class ReduceWorkspace:
    """W[dst(t)] = ⊕_{k < terms} W[src(t, k)] for the participants satisfying guards.
    Runs once per thread, not per slot (the thread picks its slot through t)."""
    dst: IndexExpr
    src: IndexExpr
    terms: int
    guards: Guards = ()


@dataclass(frozen=True)
class FromWorkspace:
    """P[t, s] = ⊕_{k < terms} W[addr(t, s, k)] for the participants satisfying guards
    (terms == 1: a plain load, the broadcast of a result)."""
    addr: IndexExpr
    terms: int = 1
    guards: Guards = ()


Step = Union[Shuffle, Barrier, ToWorkspace, ReduceWorkspace, FromWorkspace]


@dataclass(frozen=True)
class Chunk:
    """The steps that reduce partial slots [first, first + count) together."""
    first: int
    count: int
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Publish:
    """The result taken from the workspace rather than from the partials: after the
    chunks, every holder of output x in the destination's layout (in place: every
    storage copy; a shared or global destination: storage replica 0) combines
    W[addr(x, term)] for term < terms, left to right, then `barrier` frees the
    workspace. addr is over the reducer's index variables (i, j, ... as `index_vars`)
    and TERM. The
    destination need not keep any partial: this is the redistribution from the
    reducer's groups into the destination's layout (codegen.segmented)."""
    index_vars: tuple[str, ...]
    addr: IndexExpr
    terms: int
    barrier: Barrier


@dataclass(frozen=True)
class SitePlan:
    update: ReducerUpdate
    loop: Layout                     # the layout of the loop around the update
    guard_replica: int | None        # None: every replica contributes; r: only replica r


@dataclass(frozen=True)
class FinalizePlan:
    finalize: ReducerFinalize
    chunks: tuple[Chunk, ...]        # must cover every partial slot exactly once
    width: int                       # threads whose partials are combined per group
    scale: int                       # distance between group members (1: contiguous)
    barrier_id: int                  # the named barrier the steps use
    barrier_count: int               # the participant count, independent of width
    dst_layout: Layout | None        # the destination fragment's layout; None: in place,
                                     # or a shared/global destination written by replica 0
    publish: Publish | None = None   # the result read from the workspace (else: partials)


@dataclass(frozen=True)
class ChosenBy:
    """What a reducer's plan was chosen by: the fast planner's search
    (codegen.proofs.fast), recorded in the plan so that reports read it rather than
    search again. `proofs`: every obligation the decision rests on, in the order the
    reports list them, each a codegen.proofs.obligation.ProofResult — its name, its
    result ("proved" | "refuted" | "unknown"), how long it took (ms) and the minimized
    counterexample or why it is unknown. `refusal`: when no partition could be planned,
    the R400 note, with the refuted candidate's counterexample as data."""
    proofs: tuple = ()
    refusal: Diagnostic | None = None


@dataclass(frozen=True)
class ReducerPlan:
    reducer: Buffer
    planner: str                     # "canonical" | "fast" | "legacy"
    participants: tuple[int, int]    # (offset, count)
    storage: Layout                  # output index → (thread, slot) of every partial copy
    sites: tuple[SitePlan, ...]
    finalizes: tuple[FinalizePlan, ...]
    workspace_words: int             # shared workspace elements (of the reducer dtype)
    notes: tuple[Diagnostic, ...] = ()   # e.g. R400: why the fast plan was refused
    # the proofs and refusal the plan was chosen by (the auto and fast planners); None
    # for a plan asked for by name, which no proof chose. Timings differ from run to
    # run, so two plans compare without it.
    chosen_by: ChosenBy | None = field(default=None, compare=False)


@hashed_once
@dataclass(frozen=True)
class Pipeline:
    """A `T.Pipelined(n, num_stages=stages)` loop run as a software pipeline
    (codegen.pipeline decides; the simulator and the renderer execute it).

    Each of `copies` (global → shared copies among the loop body's statements) writes
    one of `stages` copies of its shared buffer: iteration i (counted from 0) uses stage
    i % stages, at element offset stage * buffer.size. The copies of iteration i are
    issued asynchronously (cp.async) `ahead` iterations early, as one commit group per
    iteration (the first `ahead` groups before the loop, then one per iteration, empty
    past the end). Iteration i then waits until at most `pending` of this thread's
    groups are outstanding, passes a barrier (every thread's copies of the stage are
    visible), runs the rest of the body (the staged copies left out) on its stage, and passes a second barrier (every
    read of the stage is done before a later issue refills it). A read of an element
    whose copy has not completed is R504 in the simulator.

    Each of `prefetched` (global → fragment copies at the top level of the body) loads
    the next iteration's tile into a second register array (`<fragment>_next`): the
    first before the loop, then iteration i, where the copy stands, moves the loaded
    registers into the fragment and loads iteration i + 1's. The loads are in flight
    while the iteration computes, as TileLang's pipeline puts them in an earlier stage.

    With `refill_after` set (a top-level statement of the body: the last one that reads a
    staged buffer), a stage is released as soon as it has been read rather than at the end
    of the iteration: iteration i passes a barrier right after that statement and issues
    iteration i + `ahead` there, into the stage it has just read (ahead = stages, so the
    stage is i's own), and the rest of the body computes with `stages` tiles in flight
    instead of stages - 1; the trailing barrier is then not needed. (TileLang's
    warp-specialized consumers release a stage the same way, right after copying it into
    registers.)

    Each of `staged_reads` (global → fragment copies at the top level of the body, see
    StagedRead) goes through a shared buffer of the plan's own: its tile is issued with
    the staged copies (`issues` = the copies and the staged reads' issue copies, one commit
    group per iteration), and where the copy stands, the fragment is read from the stage.
    The tile is then covered by the same wait as the shared tiles, and no register load is
    in flight across iterations.

    With `refill_at_landed` (a loop whose tiles feed T.gemm), iteration i refills right
    after its "landed" barrier, with iteration i + `ahead` (ahead = stages - 1) into
    the stage iteration i - 1 read: every thread passed that barrier after finishing
    iteration i - 1, so the one barrier per iteration both publishes stage i and
    releases stage i - 1, and the trailing barrier is not needed. Iteration i then waits
    with `pending` = stages - 2 groups in flight (its refill is not issued yet). The
    classic multistage order: one __syncthreads per iteration where there were two.

    When all are empty the loop runs as a plain loop, for the reason `plain` (which also
    says why nothing is staged when only registers are prefetched)."""
    loop: SerialFor
    stages: int
    ahead: int
    pending: int
    copies: tuple[Copy, ...]
    plain: str = ""
    prefetched: tuple[Copy, ...] = ()
    refill_after: Stmt | None = None
    staged_reads: tuple["StagedRead", ...] = ()
    refill_at_landed: bool = False

    @property
    def active(self) -> bool:
        return bool(self.copies or self.prefetched or self.staged_reads)

    @property
    def issues(self) -> tuple[Copy, ...]:
        """Every copy issued ahead as cp.async: the body's staged copies, then the
        staged reads' tiles."""
        return self.copies + tuple(s.issue for s in self.staged_reads)

    @property
    def buffers(self) -> tuple[Buffer, ...]:
        return tuple(c.dst.buffer for c in self.issues)

    def stand_in(self, stmt: Stmt) -> Stmt:
        """What runs where stmt stands: a staged read's copy from its stage, else stmt."""
        return next((s.read for s in self.staged_reads if s.copy is stmt), stmt)


@dataclass(frozen=True)
class StagedRead:
    """A global → fragment copy of a pipelined loop, staged through shared memory.

    `buffer` is the plan's shared buffer for the copy's tile (the copy's extents, the
    source's dtype; `stages` copies of it, like any staged buffer). `issue` (global →
    buffer) is issued ahead with the loop's staged copies, as cp.async of 16-byte runs;
    `read` (buffer → the fragment) runs where `copy` stands. Both are statements of the
    plan, not of the program: their layouts are in the plan's LayoutMap (`issue`'s the
    cooperative partition of codegen.layout_copy, `read`'s the copy's own) and their
    index ranges those of `copy` (PhysicalPlan.statement_ranges)."""
    copy: Copy
    buffer: Buffer
    issue: Copy
    read: Copy


@dataclass(frozen=True)
class BodyBarrier:
    """One barrier of the kernel body (codegen.plan_barriers decides every one; the
    renderer prints exactly these and the simulator passes exactly these).

    `where` places it at `stmt` (one of BARRIER_PLACES): "before" / "after" the
    statement, "staged" (a `T.reduce_*` from a fragment: between writing its shared rows
    and reading them), or inside a pipelined loop `stmt` (spec.physical.Pipeline):
    "landed" (every iteration, after its wait),
    "refill" (right after the pipeline's refill_after statement), "released" (the end
    of every iteration). `participants` (offset, count) arrive; `id` 0 is
    `__syncthreads()` (the whole block), another a named barrier `bar.sync id, n` with
    n = `arrivals`. `why` says what it orders (the renderer prints it as a comment; a
    `T.reduce_*`'s says `{rows}` for its shared rows, which get their name in the C)."""
    stmt: Stmt
    where: str
    participants: tuple[int, int]
    id: int
    why: str
    # the arriving threads first make their shared-memory writes visible to the async
    # proxy (fence.proxy.async): a wgmma after the barrier reads them through it
    async_proxy: bool = False

    @property
    def arrivals(self) -> int:
        return warp_arrivals(self.participants[1])


BARRIER_PLACES = ("before", "after", "staged", "landed", "refill", "released")


@dataclass(frozen=True)
class BodyBarriers:
    """Every barrier of a kernel body, in program order; `at(stmt, where)` finds one."""
    items: tuple[BodyBarrier, ...] = ()

    def __post_init__(self):
        # statements compare by identity (spec.ir), so they key the index as they are
        object.__setattr__(self, "_index", {(b.stmt, b.where): b for b in self.items})
        around = {}
        for b in self.items:
            if b.where in ("before", "after"):
                around[b.stmt] = (self._index.get((b.stmt, "before")),
                                  self._index.get((b.stmt, "after")))
        object.__setattr__(self, "around", around)   # stmt -> (before, after)

    def at(self, stmt: Stmt, where: str) -> BodyBarrier | None:
        return self._index.get((stmt, where))

    def without(self, barrier: BodyBarrier) -> "BodyBarriers":
        """These barriers less one (a planted fault: the kernel without it)."""
        return BodyBarriers(tuple(b for b in self.items if b is not barrier))


@dataclass(frozen=True)
class PhysicalPlan:
    func: PrimFunc
    planner: str                     # what was asked for ("auto" resolves per reducer)
    layouts: object                  # codegen.layout.LayoutMap (plain data of Layouts)
    reducers: tuple[ReducerPlan, ...]
    notes: tuple[Diagnostic, ...] = field(default=())
    resources: Resources | None = None    # codegen.resources: what the kernel occupies
    pipelines: tuple[Pipeline, ...] = ()  # every T.Pipelined loop (codegen.pipeline)
    # every barrier of the kernel body (codegen.plan_barriers, from the rest of the plan)
    barriers: BodyBarriers = BodyBarriers()
    # the T.Parallel loops whose replicated layout would make several threads update
    # one shared element: only replica 0 runs their body (codegen.plan_barriers)
    one_writer_loops: tuple[Stmt, ...] = ()
    # shared buffers whose rows are padded: (buffer, elements from one row's start to the
    # next), the rest row-major (codegen.plan_pitch: a tensor-core gemm's operands)
    pitches: tuple[tuple[Buffer, int], ...] = ()
    # shared buffers stored swizzled for Hopper's wgmma: (buffer, codegen.lower.wgmma.
    # Swizzle), every access through its element -> byte map (codegen.plan_swizzle)
    swizzles: tuple[tuple[Buffer, object], ...] = ()
    # the launch order of the blocks (codegen.plan_raster: T.use_swizzle, checked to
    # cover the grid once), or None: launch order, for the reason raster_why ("" when
    # the kernel asks for none)
    raster: Raster | None = None
    raster_why: str = ""

    def pitch(self, buffer: Buffer) -> int | None:
        """The padded row of a 2-D shared buffer (None: plain row-major)."""
        return next((p for b, p in self.pitches if b is buffer), None)

    def swizzle(self, buffer: Buffer):
        """The swizzled layout of a shared buffer (None: not swizzled)."""
        return next((z for b, z in self.swizzles if b is buffer), None)

    def shared_elements(self, buffer: Buffer) -> int:
        """The elements one stage of a shared buffer occupies, padding included."""
        pitch = self.pitch(buffer)
        return buffer.size if pitch is None else buffer.shape[0] * pitch

    def pipeline(self, loop: SerialFor) -> Pipeline | None:
        """The loop's pipeline when it runs as one (None: a plain loop)."""
        found = next((p for p in self.pipelines if p.loop is loop), None)
        return found if found is not None and found.active else None

    def prefetched(self, buffer: Buffer) -> bool:
        """Whether a pipeline prefetches this fragment (it then has `<name>_next`)."""
        return any(c.dst.buffer is buffer for p in self.pipelines for c in p.prefetched)

    def statement_ranges(self) -> dict:
        """spec.addressing.statement_ranges of the program, with the plan's own
        statements (the staged reads' copies) at the ranges of the copy they stand for."""
        ranges = statement_ranges(self.func)
        for pipe in self.pipelines:
            for staged in pipe.staged_reads:
                ranges[staged.issue] = ranges[staged.read] = ranges[staged.copy]
        return ranges

    def staged_buffers(self, loop: SerialFor) -> tuple[Buffer, ...]:
        """The shared buffers a pipeline of the loop adds for its staged reads."""
        found = next((p for p in self.pipelines if p.loop is loop), None)
        return () if found is None else tuple(s.buffer for s in found.staged_reads)

    def stages_of(self, buffer: Buffer) -> int:
        """How many copies of a shared buffer the kernel allocates (1 unless a pipeline
        stages it)."""
        return next((p.stages for p in self.pipelines if buffer in p.buffers), 1)

    def reducer_plan(self, reducer: Buffer) -> ReducerPlan:
        return next(p for p in self.reducers if p.reducer is reducer)


# ----------------------------------------------------------------------------- resources

@dataclass(frozen=True)
class SharedArray:
    """One array of the kernel's shared memory, at its byte offset (16-byte aligned: a
    vectorized copy moves 128 bits at a time)."""
    name: str                        # the buffer's name; "<reducer> workspace"; "<src> <kind> rows"
    what: str                        # "shared buffer" | "reducer workspace" | "reduce rows"
    owner: object                    # the ir.Buffer (its own, or the workspace's reducer)
                                     # or the ir.Reduce statement of the rows
    dtype: object                    # spec.dtypes.DType of the elements
    elements: int
    bytes: int
    offset: int


@dataclass(frozen=True)
class RegisterUse:
    """32-bit register words one thread needs for one array (an estimate: ptxas decides)."""
    name: str
    what: str                        # "fragment" | "local" | "reducer partials" | "reducer seed"
                                     # | "prefetch" (a pipeline's next tile)
    words: int


@dataclass(frozen=True)
class Occupancy:
    """How many blocks of the kernel an SM runs at once (codegen.occupancy decides).

    `resident` is what the block's threads and shared memory allow (ptxas's registers
    may allow fewer). A kernel whose pipelines keep `in_flight_bytes` of global loads in
    flight per block needs only `cap` blocks per SM to keep memory busy; where more would
    be resident, every launch asks for `launch_shared_bytes` of dynamic shared memory,
    more than the block uses, so that no more than `cap` fit (the padding is never
    addressed). Without a cap the launch passes exactly the plan's dynamic bytes.

    `min_blocks`, where set, is the blocks per SM the kernel's registers are held to:
    `__launch_bounds__(threads, min_blocks)` asks ptxas to fit that many blocks' registers
    in the SM's register file (codegen.occupancy says when)."""
    resident: int
    in_flight_bytes: int
    cap: int | None
    launch_shared_bytes: int
    reason: str
    min_blocks: int | None = None


@dataclass(frozen=True)
class Resources:
    """What the kernel asks of one block, and the target limits it was measured against.
    Shared arrays are static `__shared__` arrays when the total fits the static limit,
    otherwise one dynamic buffer at the same offsets (the launch passes the byte count,
    padded where `occupancy` caps the blocks per SM)."""
    target: str                      # spec.target name
    threads: int
    grid: tuple[int, int, int]
    shared: tuple[SharedArray, ...]
    shared_bytes: int                # the total, padding included
    dynamic: bool                    # one `extern __shared__` buffer, launched with shared_bytes
    registers: tuple[RegisterUse, ...]
    register_words: int              # the estimate per thread: arrays plus a fixed overhead
    register_budget: int             # min(registers per thread, registers per block / threads)
    occupancy: Occupancy | None = None    # set on the final plan (codegen.plan.plan_func)

    @property
    def launch_shared_bytes(self) -> int:
        """The dynamic shared memory every launch asks for."""
        return self.occupancy.launch_shared_bytes if self.occupancy else \
            self.dynamic_shared_bytes

    @property
    def static_shared_bytes(self) -> int:
        return 0 if self.dynamic else self.shared_bytes

    @property
    def dynamic_shared_bytes(self) -> int:
        return self.shared_bytes if self.dynamic else 0
