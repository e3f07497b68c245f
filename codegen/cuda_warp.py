"""The warp builtins as CUDA (spec.warp): T.shfl_xor/down/up/sync as `__shfl_*_sync`
with the full-warp mask, T.warp_reduce_<op> as tl::warp_reduce's butterfly written out
(shuffles with lane masks 16, 8, 4, 2, 1, each step combined in the value's dtype, the
interpreter's order: interp.warp). Integers narrower than 32 bits travel as int (CUDA
has no 8- or 16-bit shuffle); half and __nv_bfloat16 have their own overloads."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.ops import MONOIDS, REDUCE_KINDS
from verify_reducer.spec.warp import BUTTERFLY, CUDA_NAMES, SHUFFLES, WARP, WARP_REDUCES

from .cuda_exprs import UNARY, C, ExprRenderer, cast, combine, narrow_int

MASK = "0xffffffffu"


class WarpExprRenderer(ExprRenderer):
    """ExprRenderer that also renders the warp builtins."""

    def visit_call(self, e: ir.Call) -> C:
        if e.func in SHUFFLES:
            value = self.operand(e.args[0], e.dtype)
            lane = self.operand(e.args[1], e.args[1].dtype)
            return shuffle(CUDA_NAMES[e.func], value, lane.text, int(e.args[2].value),
                           e.dtype)
        if e.func in WARP_REDUCES:
            return warp_reduce(e, self.operand(e.args[0], e.dtype))
        return super().visit_call(e)


def shuffle(name: str, value: C, lane: str, width: int, dtype) -> C:
    if narrow_int(dtype):
        wide = "unsigned" if dtype.kind == "uint" else "int"
        return cast(dtype, C(f"{name}({MASK}, ({wide}){value.at(UNARY)}, {lane}, {width})"))
    return C(f"{name}({MASK}, {value.text}, {lane}, {width})")


def warp_reduce(e: ir.Call, value: C) -> C:
    """A lambda run in place: every lane of the warp returns the same bits."""
    dtype = e.dtype
    monoid = MONOIDS[REDUCE_KINDS[WARP_REDUCES[e.func]].monoid]
    steps = " ".join(
        f"w = {combine(monoid, dtype, C('w'), shuffle('__shfl_xor_sync', C('w'), str(m), WARP, dtype)).text};"
        for m in BUTTERFLY)
    return C(f"[&]() -> {dtype.c_name} {{ {dtype.c_name} w = {value.text}; {steps} "
             f"return w; }}()")
