"""Regions of T.copy / T.fill, resolved the way TileLang resolves them:

- a bare buffer is the whole buffer;
- `A[a:b, i]` is a box: a slice gives start `a` and extent `b - a` (which must fold to a
  constant, e.g. `by*BM:(by+1)*BM`), an index gives extent 1;
- `A[i, j]` (only indices) is a *point*: the box starts there and takes the other side's
  extents. When the ranks differ, leading extents of 1 are added (TileLang's
  buffer_load_to_tile_region) or dropped (our extension: a (1, 8) fragment copied to a
  1-index point of a vector).

Both sides of a copy must then have the same extents once the 1s are left out (TileLang
iterates one loop per non-1 extent). Boxes that stick out of their buffer are R102 when
that is known statically (constant starts); with run-time starts it is the
interpreter's bounds check."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..dtypes import INT32
from ..ir import Binary, Buffer, Const, Expr, Region, Unary, Var
from ..source import Span
from .context import FuncContext
from .errors import shape_error, unsupported
from .exprs import buffer_named, index_nodes, lower_index
from .promotion import typed_const


@dataclass
class RegionArg:
    """One side of a copy before resolution: extents None means a point."""
    buffer: Buffer
    starts: tuple[Expr, ...]
    extents: tuple[int, ...] | None
    span: Span
    node: ast.AST


def zero(span: Span) -> Const:
    return Const(0, INT32, span, weak=True)


def whole(buffer: Buffer, span: Span) -> Region:
    return Region(buffer, tuple(zero(span) for _ in buffer.shape), buffer.shape, span)


def lower_region_arg(ctx: FuncContext, node: ast.AST) -> RegionArg:
    span = Span.of(node)
    if isinstance(node, ast.Name):
        buffer = buffer_named(ctx, node)
        return RegionArg(buffer, tuple(zero(span) for _ in buffer.shape), buffer.shape,
                         span, node)
    if not isinstance(node, ast.Subscript):
        buffer_named(ctx, node, "a buffer or a buffer region")     # says what it got
    buffer = buffer_named(ctx, node.value)
    items = index_nodes(node)
    if len(items) != len(buffer.shape):
        shape_error(f"`{buffer.name}` has {len(buffer.shape)} dimension(s) but the region "
                    f"gives {len(items)}", node)
    if not any(isinstance(i, ast.Slice) for i in items):
        return RegionArg(buffer, tuple(lower_index(ctx, i) for i in items), None, span, node)
    starts, extents = [], []
    for item, dim in zip(items, buffer.shape):
        if isinstance(item, ast.Slice):
            start, extent = _slice(ctx, item, dim)
        else:
            start, extent = lower_index(ctx, item), 1
        starts.append(start)
        extents.append(extent)
    return RegionArg(buffer, tuple(starts), tuple(extents), span, node)


def _slice(ctx: FuncContext, item: ast.Slice, dim: int) -> tuple[Expr, int]:
    if item.step is not None:
        unsupported("slices with a step are not supported", item)
    span = Span.of(item)
    start = lower_index(ctx, item.lower) if item.lower is not None else zero(span)
    if item.upper is None:
        stop = typed_const(dim, INT32, span)
    else:
        stop = lower_index(ctx, item.upper)
    extent = constant_difference(stop, start)
    if extent is None:
        shape_error(f"slice extent `{ast.unparse(item)}` is not a compile-time constant",
                    item)
    if extent <= 0:
        shape_error(f"slice `{ast.unparse(item)}` is empty", item)
    return start, extent


# ----------------------------------------------------------------------------- affine forms

def _key(e: Expr):
    """A structural key: two equal keys denote the same value (expressions are pure)."""
    if isinstance(e, Var):
        return ("var", id(e))
    if isinstance(e, Const):
        return ("const", e.value)
    parts = [type(e).__name__]
    for field in ("op", "func", "a", "b", "cond", "args", "indices"):
        value = getattr(e, field, None)
        if isinstance(value, tuple):
            parts.append(tuple(_key(v) for v in value))
        elif value is not None and not isinstance(value, str):
            parts.append(_key(value))
        elif value is not None:
            parts.append(value)
    if hasattr(e, "buffer"):
        parts.append(id(e.buffer))
    return tuple(parts)


def _affine(e: Expr) -> tuple[dict, int] | None:
    """e as (coefficients by term, constant) when it is integer-affine."""
    if isinstance(e, Const):
        return ({}, e.value) if isinstance(e.value, int) else None
    if isinstance(e, Unary) and e.op == "neg":
        inner = _affine(e.a)
        return None if inner is None else _scale(inner, -1)
    if isinstance(e, Binary) and e.op in ("+", "-"):
        a, b = _affine(e.a), _affine(e.b)
        if a is None or b is None:
            return None
        return _add(a, _scale(b, -1) if e.op == "-" else b)
    if isinstance(e, Binary) and e.op == "*":
        a, b = _affine(e.a), _affine(e.b)
        if a is not None and b is not None:
            if not a[0]:
                return _scale(b, a[1])
            if not b[0]:
                return _scale(a, b[1])
    return ({_key(e): 1}, 0)


def _scale(form, k: int):
    terms, const = form
    return ({t: c * k for t, c in terms.items()}, const * k)


def _add(x, y):
    terms = dict(x[0])
    for t, c in y[0].items():
        terms[t] = terms.get(t, 0) + c
    return ({t: c for t, c in terms.items() if c}, x[1] + y[1])


def constant_difference(stop: Expr, start: Expr) -> int | None:
    a, b = _affine(stop), _affine(start)
    if a is None or b is None:
        return None
    terms, const = _add(a, _scale(b, -1))
    return const if not terms else None


def constant_value(e: Expr) -> int | None:
    form = _affine(e)
    return form[1] if form is not None and not form[0] else None


# ----------------------------------------------------------------------------- resolution

def _squeeze(extents: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x for x in extents if x != 1)


def _place_point(point: RegionArg, extents: tuple[int, ...]) -> tuple[int, ...]:
    rank = len(point.starts)
    extents = tuple(extents)
    while len(extents) > rank and extents[0] == 1:
        extents = extents[1:]
    if len(extents) > rank:
        shape_error(f"cannot place a {_fmt(extents)} region at a {rank}-index point of "
                    f"`{point.buffer.name}`", point.node)
    return (1,) * (rank - len(extents)) + extents


def _fmt(extents: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(x) for x in extents) + ("," if len(extents) == 1 else "") + ")"


def to_region(arg: RegionArg, extents: tuple[int, ...] | None = None) -> Region:
    extents = arg.extents if arg.extents is not None else extents
    for dim, (start, extent, size) in enumerate(zip(arg.starts, extents, arg.buffer.shape)):
        first = constant_value(start)
        if extent > size or (first is not None and (first < 0 or first + extent > size)):
            shape_error(f"region of `{arg.buffer.name}` is out of bounds in dimension {dim}: "
                        f"[{'?' if first is None else first}, +{extent}) of {size}", arg.node)
    return Region(arg.buffer, arg.starts, tuple(extents), arg.span)


def resolve_copy(src: RegionArg, dst: RegionArg, node: ast.AST) -> tuple[Region, Region]:
    if src.extents is None and dst.extents is None:
        shape_error("cannot deduce the copy extents: both sides are single points "
                    "(give one side as a buffer or a slice region)", node)
    if src.extents is None:
        return to_region(src, _place_point(src, dst.extents)), to_region(dst)
    if dst.extents is None:
        return to_region(src), to_region(dst, _place_point(dst, src.extents))
    if _squeeze(src.extents) != _squeeze(dst.extents):
        shape_error(f"copy extents do not match: `{src.buffer.name}` {_fmt(src.extents)} vs "
                    f"`{dst.buffer.name}` {_fmt(dst.extents)}", node)
    return to_region(src), to_region(dst)


def fill_region(arg: RegionArg) -> Region:
    """T.fill's target: a point fills one element."""
    return to_region(arg, (1,) * len(arg.starts))
