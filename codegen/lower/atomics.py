"""Atomics in the thread program: which thread issues which contribution of a
T.atomic_add / atomic_max / atomic_min, and with which instruction.

    issue = atomic_issue(plan, stmt)     # an AtomicIssue, plain data
    issue.describe()                     # one line for `emit --what threads`
    atomic_lowering(plan)                # (stmt, AtomicIssue) for every atomic

Contract. Decided here, once:

- *who issues* (the one-writer rule): an atomic inside a T.Parallel is issued once per
  logical iteration — by replica 0 of the loop's layout when the layout replicates, as
  the canonical plan guards reducer updates (codegen.plan_sites); every other replica
  holds the same iteration and must not add it again (the RFC's 16× bug, moved to the
  grid). Outside a T.Parallel every thread that reaches the atomic issues it (TileLang's
  meaning, which the interpreter shares: docs/semantics.md §12);
- *the instruction*: CUDA's native read-modify-write for the destination dtype on
  every target of spec.target (`atomicAdd` on float, double, half, __nv_bfloat16, 32-
  and 64-bit integers; `atomicMax` / `atomicMin` on 32- and 64-bit integers), with the
  operand type the call takes (`unsigned long long` for a 64-bit integer add: two's
  complement adds alike). Where
  there is none — float max/min, any op on 8/16-bit integers — a compare-and-swap loop
  (`function="atomicCAS"`, operand_type the swapped word): on the element itself for 16,
  32 and 64 bits, on the aligned 32-bit word holding it for 8 bits (`subword`; refused
  when the buffer does not fill its last word). The rest (bool, float8) is
  `function=None` and its reason, which the renderer reports as unsupported;
- *vector lanes* (`T.atomic_addx2/x4`, an unrolled loop over the lanes of one element
  atomic marked `vector`): the loop is one instruction — `atomicAdd` on `half2`,
  `__nv_bfloat162`, `float2`, `float4`, or PTX's `atom.global.add.noftz.v4.f16/bf16` —
  whose address must be aligned to the lanes (the first element's offset a multiple of
  them), which the simulator checks. A target without the vector instruction
  (Target.vector_float_atomics: float2/float4 and the 4-lane atom need sm_90) gets one
  element atomicAdd per lane instead (`per_lane` says why), as TileLang's
  AtomicAddx2/x4 fall back below sm_90: the unrolled loop stays a loop, each lane's
  atomic is an ordinary one and needs no alignment;
- *the ordering*: `relaxed` (and no memory_order, TileLang's default) is the bare
  instruction; an acquire side gets a `__threadfence()` after it, a release side one
  before — stronger than the C++ order asks, never weaker.

Consumed by interp.sim_atomics (executes: which lanes issue, one contribution each) and
codegen.cuda_atomics (prints: the guard, the call, the fences). Neither decides any of
it again. Imports only spec (tests/test_layering.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from verify_reducer.spec import ir
from verify_reducer.spec.physical import PhysicalPlan
from verify_reducer.spec.target import Target, target as target_named

_FUNCTION = {"sum": "atomicAdd", "max": "atomicMax", "min": "atomicMin"}
_FLOAT_ADD = ("float16", "bfloat16", "float32", "float64")
_INTS = {"int32": "int", "uint32": "unsigned int", "int64": "long long",
         "uint64": "unsigned long long"}
_ACQUIRE = ("consume", "acquire", "acq_rel", "seq_cst")
_RELEASE = ("release", "acq_rel", "seq_cst")


@dataclass(frozen=True)
class AtomicIssue:
    """What the thread program does for one atomic statement."""
    stmt: ir.AtomicUpdate
    in_loop: bool                  # inside a T.Parallel (else: every reaching thread)
    replicas: int                  # the loop layout's replication (1 outside a loop)
    guard_replica: int | None      # the one replica that issues; None: every lane
    function: str | None           # the CUDA function; None: no native instruction
    operand_type: str | None       # the C type of the call's pointer target and operand
    fence_before: bool
    fence_after: bool
    unsupported: str | None = None  # why function is None
    vector: int = 1                # T.atomic_addxN: the lanes one instruction adds
    lane_var: str | None = None    # the unrolled loop's variable over those lanes
    subword: bool = False          # a CAS loop on the aligned 32-bit word holding the
                                   # (8-bit) element, not on the element itself
    per_lane: str | None = None    # a T.atomic_addxN's lane issued alone: why (the
                                   # target has no vector instruction for it)

    @property
    def cas(self) -> bool:
        """No native read-modify-write: a compare-and-swap loop on operand_type words."""
        return self.function == "atomicCAS"

    @property
    def ptx(self) -> bool:
        """The instruction is inline PTX (`atom.global.add.noftz.v4.f16`), not a call."""
        return self.function is not None and self.function.startswith("atom.")

    def describe(self) -> str:
        who = ("every thread that reaches it issues one contribution" if not self.in_loop
               else "each iteration issued once" + (
                   f" by replica {self.guard_replica} of the loop's {self.replicas} "
                   f"replicas" if self.guard_replica is not None else ""))
        how = self.unsupported if self.function is None else \
            f"{self.function} on {self.operand_type}"
        if self.cas:
            how = (f"a compare-and-swap loop (atomicCAS) on the {self.operand_type} "
                   + ("word holding the element" if self.subword else "element")
                   + f" (no native {_FUNCTION[self.stmt.op]} for "
                     f"{self.stmt.buffer.dtype})")
        if self.vector > 1:
            how += (f" ({self.vector} lanes in one instruction; the first element's "
                    f"offset a multiple of {self.vector})")
        if self.per_lane:
            how += f" ({self.per_lane})"
        fences = [f for f, on in (("__threadfence() before", self.fence_before),
                                  ("__threadfence() after", self.fence_after)) if on]
        return f"{self.stmt.buffer.name}: {who}; {how}" + \
            (f"; {', '.join(fences)}" if fences else "")


def atomic_issue(plan: PhysicalPlan, stmt: ir.AtomicUpdate,
                 loop: ir.ParallelFor | None, lanes: ir.SerialFor | None = None
                 ) -> AtomicIssue:
    """The decision for stmt, whose innermost enclosing T.Parallel is loop (or None);
    lanes: the unrolled loop of a T.atomic_addxN that stmt is the lane of."""
    replicas = plan.layouts.loop(loop).replicate if loop is not None else 1
    limits = plan_target(plan)
    vector, per_lane = stmt.vector, None
    if lanes is not None:
        function, operand, why = _vector_instruction(stmt.buffer.dtype.name, stmt.vector,
                                                     limits)
        if function is None and why is None:
            # no vector instruction on this target: each lane its own element atomic
            vector, lanes = 1, None
            per_lane = (f"{limits.name} has no {stmt.vector}-lane atomic add of "
                        f"{stmt.buffer.dtype}: one atomicAdd per lane")
    if lanes is None:
        function, operand, why = _instruction(stmt.op, stmt.buffer.dtype.name)
        if function is None and why is None:
            function, operand, why = _cas(stmt.op, stmt.buffer)
    order = stmt.memory_order or "relaxed"
    return AtomicIssue(stmt, loop is not None, replicas, 0 if replicas > 1 else None,
                       function, operand, order in _RELEASE, order in _ACQUIRE, why,
                       vector, lanes.var.name if lanes is not None else None,
                       function == "atomicCAS" and stmt.buffer.dtype.bits == 8, per_lane)


def plan_target(plan: PhysicalPlan) -> Target:
    """The target the plan was made for: its resources name it (codegen.plan.plan_func
    measures them before anything lowers the plan)."""
    return target_named(plan.resources.target)


# TileLang's AtomicAddx2/x4 on sm_90 (src/tl_templates/cuda/atomic.h): the packed
# half2/bfloat162 atomicAdd (sm_80 and later: every target), CUDA 12's float2/float4
# atomicAdd and for four 16-bit lanes the vector atom of PTX 8.1 (TileLang's
# tl_atomic_add_v4_f16/bf16), both sm_90 and later: the third field says so
_VECTOR = {("float16", 2): ("atomicAdd", "half2", False),
           ("bfloat16", 2): ("atomicAdd", "__nv_bfloat162", False),
           ("float32", 2): ("atomicAdd", "float2", True),
           ("float32", 4): ("atomicAdd", "float4", True),
           ("float16", 4): ("atom.global.add.noftz.v4.f16", "unsigned short", True),
           ("bfloat16", 4): ("atom.global.add.noftz.v4.bf16", "unsigned short", True)}


def _vector_instruction(dtype: str, lanes: int, limits: Target
                        ) -> tuple[str | None, str | None, str | None]:
    """The one instruction of a T.atomic_addxN; (None, None, None) where the target lacks
    it (one atomic per lane instead), a reason where no target has it."""
    found = _VECTOR.get((dtype, lanes))
    if found is None:
        return None, None, f"no {lanes}-lane atomic add of {dtype} on any target"
    function, operand, needs_vector_atomics = found
    if needs_vector_atomics and not limits.vector_float_atomics:
        return None, None, None
    return function, operand, None


def vector_lanes(stmt: ir.Stmt) -> ir.AtomicUpdate | None:
    """The lane atomic when stmt is the unrolled loop of a T.atomic_addxN (its one
    statement an AtomicUpdate with vector > 1), else None."""
    if isinstance(stmt, ir.SerialFor) and len(stmt.body) == 1 and \
            isinstance(stmt.body[0], ir.AtomicUpdate) and stmt.body[0].vector > 1:
        return stmt.body[0]
    return None


def _instruction(op: str, dtype: str) -> tuple[str | None, str | None, str | None]:
    """CUDA's native read-modify-write for op on dtype; (None, None, None) where there
    is none (then _cas decides)."""
    if op == "sum" and dtype in _FLOAT_ADD:
        return _FUNCTION[op], {"float16": "half", "bfloat16": "__nv_bfloat16",
                               "float32": "float", "float64": "double"}[dtype], None
    if dtype in _INTS:
        operand = "unsigned long long" if op == "sum" and dtype == "int64" else _INTS[dtype]
        return _FUNCTION[op], operand, None
    return None, None, None


# the word a compare-and-swap loop swaps, by the element's width: 16-bit elements swap
# themselves (CUDA's 16-bit atomicCAS, as TileLang's AtomicMax on half does), so no word
# reaches past a buffer; 8-bit ones the aligned 32-bit word that holds them
_CAS_WORD = {8: "unsigned int", 16: "unsigned short", 32: "unsigned int",
             64: "unsigned long long"}
_CAS_DTYPES = ("int8", "uint8", "int16", "uint16", "float16", "bfloat16", "float32",
               "float64")


def _cas(op: str, buffer: ir.Buffer) -> tuple[str | None, str | None, str | None]:
    """The compare-and-swap loop where CUDA has no instruction: float max/min (the
    interpreter's maximumNumber/minimumNumber with +0 > -0: fmaxf/fminf, fmax/fmin,
    __hmax/__hmin on every target, docs/semantics.md §12) and every op on 8/16-bit
    integers."""
    dtype = buffer.dtype
    if dtype.name not in _CAS_DTYPES:
        return None, None, (f"no atomic {_FUNCTION[op][6:].lower()} of {dtype} on any target "
                            f"(native instructions, or a compare-and-swap loop, for "
                            f"{', '.join(_CAS_DTYPES)}, 32/64-bit integers)")
    elements = 1
    for extent in buffer.shape:
        elements *= extent
    if dtype.bits == 8 and elements % 4:
        return None, None, (f"an 8-bit atomic swaps the aligned 32-bit word that holds its "
                            f"element, and `{buffer.name}` ({elements} elements) does not "
                            f"fill its last word: the word would reach past the buffer")
    return "atomicCAS", _CAS_WORD[dtype.bits], None


def atomic_lowering(plan: PhysicalPlan) -> Iterator[tuple[ir.AtomicUpdate, AtomicIssue]]:
    """Every atomic of the kernel with its decision, in source order."""
    def visit(body: ir.Body, loop: ir.ParallelFor | None):
        for stmt in body:
            lane = vector_lanes(stmt)
            if lane is not None:
                yield lane, atomic_issue(plan, lane, loop, stmt)
                continue
            if isinstance(stmt, ir.AtomicUpdate):
                yield stmt, atomic_issue(plan, stmt, loop)
            inner = stmt if isinstance(stmt, ir.ParallelFor) else loop
            for sub in ir.children(stmt):
                yield from visit(sub, inner)
    yield from visit(plan.func.kernel.body, None)


def guards_replica(plan: PhysicalPlan, loop: ir.ParallelFor) -> bool:
    """Whether an atomic directly in loop's body is issued by one replica only (the
    renderer then declares the replica index in the loop's cells)."""
    return bool(loop.extents) and plan.layouts.loop(loop).replicate > 1 and \
        any(isinstance(s, ir.AtomicUpdate) for s in ir.walk(loop.body))


def issues(plan: PhysicalPlan) -> dict[ir.AtomicUpdate, AtomicIssue]:
    """Every atomic's decision, keyed by statement (what both executors look up)."""
    return dict(atomic_lowering(plan))


_RECENT: list[tuple[PhysicalPlan, dict]] = []      # the last plans' tables (a plan is
_RECENT_PLANS = 4                                  # unhashable: looked up by identity)


def issue_of(plan: PhysicalPlan, stmt: ir.AtomicUpdate) -> AtomicIssue:
    """stmt's decision, the plan's table made once and kept for the few plans in use
    (a renderer and a simulator each look it up per statement)."""
    for held, table in _RECENT:
        if held is plan:
            return table[stmt]
    table = issues(plan)
    _RECENT.insert(0, (plan, table))
    del _RECENT[_RECENT_PLANS:]
    return table[stmt]
