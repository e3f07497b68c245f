"""T.atomic_add / atomic_max / atomic_min in CUDA: what codegen.lower.atomics decided,
printed — the replica guard (`if (rep == 0)`, the loop's cells declare `rep`), the
fences of a memory order, and the native call on the element's address:

    if (rep == 0) atomicAdd(&B[...], value);

A 64-bit integer add goes through `unsigned long long` (the lowering's operand type:
two's complement adds alike). A destination dtype with no native instruction is
refused with the lowering's reason (docs/limits.md). Nothing is decided here."""
from __future__ import annotations

from verify_reducer.spec import ir

from .cuda_access import Frame
from .cuda_unsupported import Unsupported
from .lower.atomics import AtomicIssue


def render_atomic(body, stmt: ir.AtomicUpdate, issue: AtomicIssue, frame: Frame) -> None:
    if issue.function is None:
        raise Unsupported(f"line {stmt.span.line}: T.atomic_* into {stmt.buffer.name}: "
                          f"{issue.unsupported}")
    if not frame.loop_vars:
        body.out.comment(f"line {stmt.span.line}: an atomic into {stmt.buffer.name}[...]: "
                         f"{issue.describe()}")
    place = body.place(stmt.buffer, stmt.indices, frame)
    value = body.exprs(frame).operand(stmt.value, stmt.buffer.dtype).text
    address = f"&{place.array}[{place.index.text}]"
    if issue.operand_type != stmt.buffer.dtype.c_name:
        address = f"reinterpret_cast<{issue.operand_type}*>({address})"
        value = f"({issue.operand_type})({value})"
    body.fence(stmt, "before")
    guard = f"if (rep == {issue.guard_replica})" if issue.guard_replica is not None \
        else None
    with body.maybe_block(guard):
        if issue.fence_before:
            body.out.line("__threadfence();")
        body.out.line(f"{issue.function}({address}, {value});")
        if issue.fence_after:
            body.out.line("__threadfence();")
    body.fence(stmt, "after")
