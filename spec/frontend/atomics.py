"""T.atomic_add / T.atomic_max / T.atomic_min, as TileLang 0.1.x spells them
(tilelang/language/atomic.py):

- the element form `T.atomic_add(dst[i, j], value)`: one read-modify-write of one element
  of a global or shared buffer, by every thread (or T.Parallel iteration) that runs it;
- the tile form `T.atomic_add(dst_region, src_region)`: TileLang lowers it to a parallel
  loop of element atomics over the regions' common extents (AtomicAddNode's SIMT loop),
  and so do we: a T.Parallel of AtomicUpdate, the regions resolved as T.copy's are
  (spec.frontend.regions: a point takes the other side's extents);
- `memory_order=` one of C++'s six names (TileLang's _MEMORY_ORDER_ID_MAP), kept on the
  node; `use_tma=` and `annotations=` choose TileLang's code only and are ignored;
- `return_prev=True`: as a statement the value is dropped and the atomic means what it
  means without the flag; used as a value (`p = T.atomic_add(..., return_prev=True)`,
  exprs.py asks refuse_atomic_value) it is refused with the reason (R100): it differs
  with the order the contributions land in, and the oracle judges by one meaning for
  every order (docs/semantics.md §12); of a region, TileLang refuses it too.

A destination in a fragment, a local buffer or a reducer is R102: an atomic update of
a thread's own register orders nothing (write `+=`, or a reducer)."""
from __future__ import annotations

import ast

from ..dtypes import INT32
from ..ir import (ATOMIC_OPS, MEMORY_ORDERS, AtomicUpdate, Binary, Buffer, Const, Load,
                  ParallelFor, SerialFor, Var)
from ..source import Span
from .constants import NotConstant
from .context import FuncContext
from .errors import shape_error, unsupported
from .exprs import buffer_named, call_args, index_nodes, lower_expr, lower_point
from .promotion import fits, is_weak
from .regions import lower_region_arg, resolve_copy

_PARAMS = ("dst", "value", "memory_order", "return_prev", "use_tma", "annotations")
_SCOPES = ("global", "shared")
VECTOR_ATOMICS = {"atomic_addx2": 2, "atomic_addx4": 4}
_VECTOR_PARAMS = ("dst", "value", "return_prev")
_VECTOR_DTYPES = ("float16", "bfloat16", "float32")


def lower_atomic(ctx: FuncContext, call: ast.Call, name: str) -> list:
    what = f"T.{name}"
    args = call_args(call, _PARAMS, 2, what)
    order = _memory_order(ctx, args.get("memory_order"), what)
    dst, value = args["dst"], args["value"]
    element = _is_point(dst) and not _is_region(value, ctx)
    if "return_prev" in args and _flag(ctx, args["return_prev"], what, "return_prev") \
            and not element:
        unsupported(f"{what}(..., return_prev=True) of a region: TileLang refuses the "
                    f"previous value of a tile-form atomic too (NotImplementedError); "
                    f"write the element form", args["return_prev"])
    op = ATOMIC_OPS[name]
    if element:
        return [_element(ctx, dst, lower_expr(ctx, value), op, order, Span.of(call), what)]
    return [_tile(ctx, dst, value, op, order, Span.of(call), what)]


def refuse_atomic_value(call: ast.Call, name: str) -> None:
    """An atomic used as a value (docs/semantics.md §12). With return_prev=True it is
    the element's value when this update lands, which differs with the order the
    launch's other contributions land in: no one meaning to judge. Without it TileLang
    returns a handle, not a number. (As a statement the value is dropped, and the
    atomic means what it means without the flag: lower_atomic.)"""
    if name not in ATOMIC_OPS and name not in VECTOR_ATOMICS:
        return                      # another TileLang atomic: the caller's R101
    what = f"T.{name}"
    flag = [k.value for k in call.keywords if k.arg == "return_prev"] + call.args[3:4]
    prev = bool(flag) and not (isinstance(flag[0], ast.Constant) and flag[0].value is False)
    if not prev:
        unsupported(f"{what}(...) used as a value: without return_prev=True TileLang's "
                    f"atomic returns a handle, not a number; write it as a statement",
                    call)
    unsupported(f"{what}(..., return_prev=True) used as a value is not supported: the "
                f"previous value is the element's value when this update lands, which "
                f"depends on the order in which the other contributions to it land; "
                f"outputs are judged by one meaning for every order, and a value that "
                f"differs by order has none (docs/semantics.md §12)", call)


def _element(ctx: FuncContext, dst: ast.Subscript, value, op: str, order: str | None,
             span: Span, what: str) -> AtomicUpdate:
    buffer = buffer_named(ctx, dst.value)
    _check_destination(buffer, dst, what)
    indices = lower_point(ctx, buffer, dst)
    if is_weak(value) and not fits(value.value, buffer.dtype):
        shape_error(f"{what}: the constant {value.value} does not fit in {buffer.dtype}, "
                    f"the dtype of `{buffer.name}`", dst)
    return AtomicUpdate(buffer, indices, value, op, order, span)


def _tile(ctx: FuncContext, dst: ast.AST, value: ast.AST, op: str, order: str | None,
          span: Span, what: str) -> ParallelFor:
    """The tile form as TileLang lowers it: one element atomic per element of the
    regions' common (non-1) extents, a T.Parallel over them — over one element (every
    extent 1) a T.Parallel of extent 1 whose variable no index reads, as TileLang's
    MakeIterVars makes it (src/cuda/op/atomic_add.cc): one iteration, issued once."""
    if not _is_region(value, ctx):
        shape_error(f"{what} of a region needs a buffer or a region as its value, got "
                    f"`{ast.unparse(value)}`", value)
    src_region, dst_region = resolve_copy(lower_region_arg(ctx, value),
                                          lower_region_arg(ctx, dst), dst)
    _check_destination(dst_region.buffer, dst, what)
    loop_dims = [k for k, e in enumerate(dst_region.extents) if e != 1]
    src_dims = [k for k, e in enumerate(src_region.extents) if e != 1]
    names = [ctx.fresh_name(f"atomic_i{k}") for k in range(max(len(loop_dims), 1))]
    loop_vars = tuple(Var(n, span, INT32) for n in names)
    dst_ix = _shifted(dst_region.starts, loop_dims, loop_vars, span)
    src_ix = _shifted(src_region.starts, src_dims, loop_vars, span)
    body = AtomicUpdate(dst_region.buffer, dst_ix, Load(src_region.buffer, src_ix, span),
                        op, order, span)
    extents = tuple(dst_region.extents[k] for k in loop_dims) or (1,)
    return ParallelFor(loop_vars, extents, (body,), span)


def _shifted(starts, dims: list[int], loop_vars, span: Span) -> tuple:
    out = list(starts)
    for var, k in zip(loop_vars, dims):
        out[k] = Binary("+", out[k], var, INT32, span)
    return tuple(out)


def _check_destination(buffer, node: ast.AST, what: str) -> None:
    if buffer.is_reducer or buffer.scope not in _SCOPES:
        scope = "reducer" if buffer.is_reducer else buffer.scope
        shape_error(f"{what} into the {scope} buffer `{buffer.name}`: an atomic updates "
                    f"global or shared memory (a thread's own registers need no atomic: "
                    f"write `+=`, or use a reducer)", node)


def _is_point(node: ast.AST) -> bool:
    """`buf[i, j]` with no slice: the element form's destination."""
    return isinstance(node, ast.Subscript) and \
        not any(isinstance(n, ast.Slice) for n in index_nodes(node))


def _is_region(node: ast.AST, ctx: FuncContext) -> bool:
    """A bare buffer name or a sliced subscript: something with extents."""
    if isinstance(node, ast.Subscript):
        return any(isinstance(n, ast.Slice) for n in index_nodes(node))
    return isinstance(node, ast.Name) and isinstance(ctx.lookup(node.id), Buffer)


def _flag(ctx: FuncContext, node: ast.AST, what: str, name: str) -> bool:
    try:
        folded = ctx.folder.fold(node)
    except NotConstant:
        folded = None
    if not isinstance(folded, bool):
        shape_error(f"{what}: {name} must be True or False, got `{ast.unparse(node)}`", node)
    return folded


def _memory_order(ctx: FuncContext, node: ast.AST | None, what: str) -> str | None:
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return None
    order = node.value if isinstance(node, ast.Constant) else None
    if order not in MEMORY_ORDERS:
        shape_error(f"{what}: memory_order must be one of {', '.join(MEMORY_ORDERS)}, "
                    f"got `{ast.unparse(node)}`", node)
    return order


# ----------------------------------------------------------------------------- x2 / x4

def lower_vector_atomic(ctx: FuncContext, call: ast.Call, name: str) -> list:
    """`T.atomic_addx2/x4(dst, value)`, TileLang's pointer forms: n consecutive elements
    of the last dimension from dst's element (or a (1, .., n) region, or a bare buffer's
    origin) each add the element of value at the same lane. Lowered to an unrolled loop
    over the lanes whose one statement is an element atomic marked `vector=n`: every
    analysis reads n element atomics (each one contribution), and the thread program
    issues the loop as one vector instruction (codegen.lower.atomics)."""
    lanes = VECTOR_ATOMICS[name]
    what = f"T.{name}"
    args = call_args(call, _VECTOR_PARAMS, 2, what)
    if "return_prev" in args:          # checked; as a statement the value is dropped
        _flag(ctx, args["return_prev"], what, "return_prev")
    dst = _lanes_of(ctx, args["dst"], lanes, what)
    src = _lanes_of(ctx, args["value"], lanes, what)
    _check_vector_operands(dst, src, lanes, args["dst"], args["value"], what)
    span = Span.of(call)
    lane = Var(ctx.fresh_name("atomic_lane"), span, INT32)
    body = AtomicUpdate(dst.buffer, _lane_index(dst.starts, lane, span),
                        Load(src.buffer, _lane_index(src.starts, lane, span), span),
                        "sum", None, span, vector=lanes)
    return [SerialFor(lane, Const(0, INT32, span), Const(lanes, INT32, span), 1, "unroll",
                      (body,), span)]


def _lanes_of(ctx: FuncContext, node: ast.AST, lanes: int, what: str):
    """The region argument whose first element starts the lanes: a point, a buffer (its
    origin) or a region of extents (1, .., 1, lanes)."""
    region = lower_region_arg(ctx, node)
    extents = region.extents
    if extents is not None and (any(e != 1 for e in extents[:-1]) or extents[-1] != lanes):
        shape_error(f"{what} adds {lanes} consecutive elements of the last dimension: "
                    f"`{ast.unparse(node)}` has extents {tuple(extents)} (give an element, "
                    f"or a region of extents (1, .., {lanes}))", node)
    return region


def _check_vector_operands(dst, src, lanes: int, dst_node: ast.AST, src_node: ast.AST,
                           what: str) -> None:
    """TileLang's AtomicAddx2/x4 overloads (src/tl_templates/cuda/atomic.h): float16,
    bfloat16 and float32 lanes; the value read through a pointer, converted only from
    float32 into a 16-bit destination (__float22half2_rn), otherwise its bits taken as
    the destination's type."""
    _check_destination(dst.buffer, dst_node, what)
    dtype = dst.buffer.dtype
    if dtype.name not in _VECTOR_DTYPES:
        shape_error(f"{what} into the {dtype} buffer `{dst.buffer.name}`: TileLang's "
                    f"AtomicAddx{lanes} adds {', '.join(_VECTOR_DTYPES)} lanes only", dst_node)
    if dst.buffer.scope != "global":
        unsupported(f"{what} into the shared buffer `{dst.buffer.name}` is not supported: "
                    f"the vector instruction is printed for global memory only (CUDA's "
                    f"float2/float4 atomicAdd and the 4-lane 16-bit atom update global "
                    f"memory only); write T.atomic_add per element", dst_node)
    source = src.buffer
    if source.is_reducer or source.scope == "fragment":
        unsupported(f"{what} reading the {'reducer' if source.is_reducer else 'fragment'} "
                    f"`{source.name}`: TileLang reads the value through a pointer into "
                    f"the thread's registers, whose lanes are not elements of "
                    f"consecutive logical indices in general; copy it into shared memory "
                    f"or a local buffer first", src_node)
    converts = source.dtype.name == "float32" and dtype.bits == 16
    if source.dtype != dtype and not converts:
        shape_error(f"{what} of the {source.dtype} buffer `{source.name}` into {dtype}: "
                    f"TileLang takes the value's bits as {dtype} lanes (it converts only a "
                    f"float32 value into a 16-bit destination); cast into a {dtype} "
                    f"buffer first", src_node)


def _lane_index(starts, lane: Var, span: Span) -> tuple:
    out = list(starts)
    out[-1] = Binary("+", out[-1], lane, INT32, span)
    return tuple(out)
