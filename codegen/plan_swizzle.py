"""Swizzled shared operands for Hopper's wgmma: plan data (PhysicalPlan.swizzles).

    plan_swizzles(func, layouts, target) -> ((buffer, Swizzle), ...)

A gemm runs as wgmma (codegen.lower.wgmma) when the target has it, the gemm fits
(wgmma_refusal) and its layouts split the warps along M (LayoutMap.gemm_splits, which
codegen.layout chose for it). Its shared operands (both, or B where A is a fragment
read from registers) are then stored in the swizzled
chunks its descriptors describe. A buffer another gemm reads through mma.sync (ldmatrix
and 32-bit loads of a row-major or padded layout) is not swizzled, and a gemm whose
operand is not swizzled runs as mma.sync: the decision is repeated until it settles.
Every other access to a swizzled buffer (copies into it, T.Parallel reads, fills) goes
through the same element -> byte map (codegen.cuda_stmts.KernelBody.place); the
simulator keeps shared memory by element, and the map is a bijection of each stage.
The stages start on multiples of the swizzle's 8-row period (codegen.resources)."""
from __future__ import annotations

from verify_reducer.spec import ir

from .lower.wgmma import swizzle_of, wgmma_refusal


def plan_swizzles(func: ir.PrimFunc, layouts, target) -> tuple[tuple[ir.Buffer, object], ...]:
    gemms = [s for s in ir.walk(func.kernel.body) if isinstance(s, ir.Gemm)]
    chosen = {g for g in gemms if _fits(g, layouts, target)}
    while True:
        refused = {op for g in gemms if g not in chosen for op in (g.a, g.b)}
        settled = {g for g in chosen if g.a not in refused and g.b not in refused}
        if settled == chosen:
            break
        chosen = settled
    found: dict[ir.Buffer, object] = {}
    for g in gemms:
        if g in chosen:
            for operand in (g.a, g.b):
                if operand.scope == "shared":      # a fragment A is read from registers
                    found[operand] = swizzle_of(operand)
    return tuple(found.items())


def _fits(stmt: ir.Gemm, layouts, target) -> bool:
    participants = layouts.participants.get(stmt)
    if participants is None or wgmma_refusal(stmt, target, participants):
        return False
    return layouts.gemm_splits.get(stmt) == (participants[1] // 32, 1)
