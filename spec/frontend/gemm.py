"""T.gemm(A, B, C, transpose_A=False, transpose_B=False, policy=..., clear_accum=False,
k_pack=1, wg_wait=0), as TileLang 0.1.x spells it (tilelang/language/gemm_op.py):

- A and B are whole shared or fragment buffers (TileLang's gemm_ss, gemm_rs, gemm_sr and
  gemm_rr), C a whole fragment, each of two dimensions; A is M×K (K×M with transpose_A),
  B is K×N (N×K with transpose_B), C is M×N — a mismatch is R102 naming the sizes;
- the operand dtypes TileLang's CUDA mma path takes (src/cuda/op/gemm.cc): A and B of one
  dtype, float16 / bfloat16 / float8 into a float32 accumulator, float16 also into float16,
  int8 into int32. Another pairing is R102 naming both dtypes (float32 operands run as
  tf32 on tensor cores, a rounding we do not model);
- policy=T.GemmWarpPolicy.Square / FullRow / FullCol (or its integer 0 / 1 / 2): how warps
  split C, a layout choice, never the meaning;
- clear_accum: a constant or a bool expression (TileLang's `clear_accum=(k == 0)`);
- k_pack (ROCm only) and wg_wait=0 change nothing we model; a wg_wait other than 0 leaves
  a Hopper wgmma in flight after the statement, and `mbar=` (Blackwell) and
  `annotations=` name instruction choices we do not model: R101 by name.

T.wgmma_gemm and T.tcgen05_gemm (asynchronous issue, waited on by a separate call) stay
R101 as unknown calls."""
from __future__ import annotations

import ast

from ..dtypes import BOOL
from ..ir import GEMM_POLICIES, Buffer, Const, Gemm
from ..source import Span
from .constants import NotConstant
from .context import FuncContext
from .errors import shape_error, unknown
from .exprs import buffer_named, call_args, lower_expr
from .tile_ops import constant_bool

_PARAMS = ("A", "B", "C", "transpose_A", "transpose_B", "policy", "clear_accum", "k_pack",
           "wg_wait", "mbar", "annotations")
_OPERAND_SCOPES = ("shared", "fragment")
# (operand dtype, accumulator dtype) pairs of TileLang's CUDA mma path
_ACCUMULATE = {
    "float16": ("float32", "float16"),
    "bfloat16": ("float32",),
    "float8_e4m3fn": ("float32",),
    "float8_e5m2": ("float32",),
    "int8": ("int32",),
}


def lower_gemm(ctx: FuncContext, call: ast.Call) -> list[Gemm]:
    args = call_args(call, _PARAMS, 3, "T.gemm")
    for name in ("mbar", "annotations"):
        if name in args:
            unknown(f"T.gemm(..., {name}=...) is not supported: it picks a Blackwell "
                        f"instruction or a code-generation option we do not model",
                        args[name])
    a, b, c = (_operand(ctx, args[p], p) for p in ("A", "B", "C"))
    if c.scope != "fragment":
        shape_error(f"T.gemm accumulates into a fragment; `{c.name}` is a {c.scope} buffer",
                    args["C"])
    for buffer, p in ((a, "A"), (b, "B")):
        if buffer.scope not in _OPERAND_SCOPES:
            shape_error(f"T.gemm reads {p} from a shared or fragment buffer; `{buffer.name}` "
                        f"is a {buffer.scope} buffer (copy it into shared memory first)",
                        args[p])
    transpose_a = _flag(ctx, args.get("transpose_A"), "transpose_A")
    transpose_b = _flag(ctx, args.get("transpose_B"), "transpose_B")
    _check_shapes(a, b, c, transpose_a, transpose_b, call)
    _check_dtypes(a, b, c, call)
    _positive(ctx, args.get("k_pack"), "k_pack")
    if "wg_wait" in args and ctx.folder.fold_int(args["wg_wait"], "wg_wait") != 0:
        unknown("T.gemm(..., wg_wait=...) other than 0 leaves a Hopper wgmma in flight "
                    "after the statement, which we do not model", args["wg_wait"])
    span = Span.of(call)
    policy = _policy(ctx, args.get("policy"))
    clear = _clear_accum(ctx, args.get("clear_accum"), span)
    return [Gemm(a, b, c, transpose_a, transpose_b, policy, clear, span)]


def _operand(ctx: FuncContext, node: ast.expr, param: str) -> Buffer:
    buffer = buffer_named(ctx, node, f"a whole buffer for T.gemm's {param}")
    if buffer.is_reducer:
        shape_error(f"T.gemm's {param} `{buffer.name}` is a reducer", node)
    if len(buffer.shape) != 2:
        shape_error(f"T.gemm's {param} `{buffer.name}` has shape {buffer.shape}: a matrix "
                    f"of two dimensions is needed", node)
    return buffer


def _check_shapes(a: Buffer, b: Buffer, c: Buffer, transpose_a: bool, transpose_b: bool,
                  call: ast.Call) -> None:
    m, n = c.shape
    m_a, k_a = reversed(a.shape) if transpose_a else a.shape
    k_b, n_b = reversed(b.shape) if transpose_b else b.shape
    for what, got, want in (("M", m_a, m), ("K", k_b, k_a), ("N", n_b, n)):
        if got != want:
            shape_error(f"T.gemm {what} sizes differ: A `{a.name}` {a.shape}"
                        f"{' (transposed)' if transpose_a else ''}, B `{b.name}` {b.shape}"
                        f"{' (transposed)' if transpose_b else ''}, C `{c.name}` {c.shape}",
                        call)


def _check_dtypes(a: Buffer, b: Buffer, c: Buffer, call: ast.Call) -> None:
    accumulators = _ACCUMULATE.get(a.dtype.name, ())
    if a.dtype != b.dtype or c.dtype.name not in accumulators:
        pairs = "; ".join(f"{src} into {' or '.join(acc)}" for src, acc in _ACCUMULATE.items())
        shape_error(f"T.gemm of {a.dtype} × {b.dtype} into {c.dtype} is not supported: A "
                    f"and B share one dtype, accumulated as TileLang's mma does ({pairs})",
                    call)


def _flag(ctx: FuncContext, node: ast.expr | None, what: str) -> bool:
    return node is not None and constant_bool(ctx, node, f"T.gemm's `{what}`")


def _positive(ctx: FuncContext, node: ast.expr | None, what: str) -> None:
    if node is not None and ctx.folder.fold_int(node, what) < 1:
        shape_error(f"T.gemm's `{what}` must be at least 1", node)


def _policy(ctx: FuncContext, node: ast.expr | None) -> str:
    """GemmWarpPolicy.<name> however imported, or its integer value (TileLang's IntEnum)."""
    if node is None:
        return "Square"
    if isinstance(node, ast.Attribute) and node.attr in GEMM_POLICIES:
        base = ctx.imports.dotted(node.value) or ""
        if base.split(".")[-1] == "GemmWarpPolicy":
            return node.attr
    try:
        value = ctx.folder.fold(node)
    except NotConstant:
        value = None
    if isinstance(value, int) and not isinstance(value, bool) \
            and 0 <= value < len(GEMM_POLICIES):
        return GEMM_POLICIES[value]
    shape_error(f"T.gemm's policy must be T.GemmWarpPolicy."
                f"{'/'.join(GEMM_POLICIES)}, got `{ast.unparse(node)}`", node)


def _clear_accum(ctx: FuncContext, node: ast.expr | None, span: Span):
    if node is None:
        return Const(False, BOOL, span)
    try:
        value = ctx.folder.fold(node)
    except NotConstant:
        expr = lower_expr(ctx, node)
        if expr.dtype != BOOL:
            shape_error(f"T.gemm's `clear_accum` must be a bool, got {expr.dtype}", node)
        return expr
    if not isinstance(value, bool):
        shape_error(f"T.gemm's `clear_accum` must be True, False or a condition, got "
                    f"{value!r}", node)
    return Const(value, BOOL, Span.of(node))
