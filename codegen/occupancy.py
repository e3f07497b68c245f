"""How many blocks per SM a kernel runs: the occupancy decision of a plan.

    occupancy = plan_occupancy(plan, resources, target)   # codegen.plan.plan_func, once

A streaming kernel needs enough bytes in flight per SM to cover the memory latency
(Little's law: bandwidth × latency / SMs, about 29 KB per SM on an H200 at 4.8 TB/s and
~0.8 µs). More blocks than that need do not make it faster; on the H200 they made it
slower. Measured side by side (benchmarks/occupancy_sweep.py, docs/performance.md): the
GEMV's 66 KB blocks (two stages of a 32 KB tile) run 3 per SM as they fit, and at 2 per
SM take 5-8 % less time at 65536 × 4096 (64×256/256, 128×128/256) and 16384² (32×512/256,
16×1024/256), and never more than the noise longer anywhere (30 configurations, fp16
and bf16); at 1 per SM they lose up to 5 % again (nothing overlaps one block's prologue
and finalize with another's loop).

The rule, for a kernel with a software pipeline (codegen.pipeline) whose stages keep B
bytes of global loads in flight per block: at most max(2, ceil(IN_FLIGHT_PER_SM / B))
blocks per SM, with IN_FLIGHT_PER_SM twice Little's figure. Where the block's threads and
shared memory would let more be resident, every launch asks for more dynamic shared
memory than the block uses (Target.shared_for), so that no more fit; the padding is
never addressed. A kernel without a pipeline runs as many blocks as fit: its loads are
not in flight across iterations, and more blocks are what hides their latency. Nor is a
kernel whose pipeline feeds a T.gemm (a GEMM, attention): the in-flight rule was
measured on a streaming kernel and says nothing of one that computes on every tile,
which TileLang runs with as many blocks as fit (the 4096³ GEMM ran capped at 2 of its 4
until 2026-12-03; which is faster there is not measured yet: docs/performance.md)."""
from __future__ import annotations

from dataclasses import replace

from verify_reducer.spec import ir
from verify_reducer.spec.physical import Occupancy, PhysicalPlan, Resources
from verify_reducer.spec.target import KIB, Target
from .resources import element_bytes

IN_FLIGHT_PER_SM = 64 * KIB      # bytes of loads in flight per SM: ~2x Little's law (H200)
FEWEST = 2                       # one block's prologue and finalize overlap another's loop
HELD_FLOOR = 128                 # the fewest registers a thread a tensor-core kernel is held to


def in_flight_bytes(plan: PhysicalPlan) -> int:
    """Bytes of global loads one block keeps in flight: the most any of its pipelines
    does (they run one after another), each issuing `stages` tiles of every staged copy
    and holding one tile of every prefetched fragment."""
    def of(pipe) -> int:
        staged = sum(pipe.stages * _bytes(c.dst.buffer) for c in pipe.issues)
        return staged + sum(_bytes(c.dst.buffer) for c in pipe.prefetched)
    return max((of(p) for p in plan.pipelines if p.active), default=0)


def plan_occupancy(plan: PhysicalPlan, res: Resources, target: Target) -> Occupancy:
    occupancy = _blocks_per_sm(plan, res, target)
    return replace(occupancy, min_blocks=_register_bound(plan, res, target, occupancy))


def _register_bound(plan: PhysicalPlan, res: Resources, target: Target,
                    occupancy: Occupancy) -> int | None:
    """The blocks per SM a tensor-core kernel's registers are held to: the blocks its
    threads and shared memory let run, where the plan's register estimate fits that
    many blocks' share of the register file with room to spare. Without the bound ptxas
    spends registers freely: the 64 × 64 causal attention took 171 a thread, 2 blocks an
    SM where its 64 KB of shared memory let 3 run (held: 168, 3 blocks, no spills).

    The estimate counts fragments, not what an instruction holds live at once, so the
    share must exceed it by a sixteenth, and be at least HELD_FLOOR registers: ptxas
    refused (C7602) the 64 × 64 × 32 GEMM held to 9 blocks (56 registers a thread, its
    estimate 56; one wgmma needed 58) and a 384-thread wgmma held to 3 blocks (56). A
    kernel without T.gemm keeps ptxas's own choice."""
    blocks = occupancy.cap or occupancy.resident
    if blocks < 2 or not any(isinstance(s, ir.Gemm) for s in ir.walk(plan.func.kernel.body)):
        return None
    warps = -(-res.threads // 32)
    # registers go to a warp 256 at a time: 8 per thread
    per_thread = min(target.registers_per_thread,
                     target.registers_per_sm // (blocks * warps * 256) * 8)
    room = per_thread >= HELD_FLOOR and res.register_words * 17 <= per_thread * 16
    return blocks if room else None


def _blocks_per_sm(plan: PhysicalPlan, res: Resources, target: Target) -> Occupancy:
    resident = target.resident_blocks(res.threads, res.shared_bytes)
    flight = in_flight_bytes(plan)
    if not flight:
        return Occupancy(resident, 0, None, res.dynamic_shared_bytes,
                         "no pipeline: as many as fit by threads and shared memory")
    if _computes(plan):
        return Occupancy(resident, flight, None, res.dynamic_shared_bytes,
                         "a pipeline that feeds T.gemm computes on every tile: as many "
                         "as fit by threads and shared memory, as TileLang runs it (the "
                         "in-flight rule is a streaming kernel's)")
    cap = max(FEWEST, -(-IN_FLIGHT_PER_SM // flight))
    need = f"{_kb(flight)} in flight per block, {_kb(IN_FLIGHT_PER_SM)} per SM suffice"
    if resident <= cap:
        return Occupancy(resident, flight, None, res.dynamic_shared_bytes,
                         f"{need}; the {resident} that fit by threads and shared memory "
                         f"are not more than {cap}")
    padded = target.shared_for(cap) - res.static_shared_bytes
    return Occupancy(resident, flight, cap, max(padded, res.dynamic_shared_bytes),
                     f"{need}: {cap} instead of the {resident} that fit by threads and "
                     f"shared memory")


def _computes(plan: PhysicalPlan) -> bool:
    """Whether an active pipeline's loop runs a T.gemm: the kernel is then bound by its
    tensor cores, not by the bytes it streams."""
    return any(isinstance(stmt, ir.Gemm) for p in plan.pipelines if p.active
               for stmt in ir.walk(p.loop.body))


def _bytes(buffer) -> int:
    return buffer.size * element_bytes(buffer.dtype)


def _kb(n: int) -> str:
    return f"{n / KIB:.1f} KB"
